#!/usr/bin/env bash
# Sourced by compose-test.sh: podman on a machine without a registry (see docs/operations.md,
# "Compose test"). Installs podman and its helpers, writes a private storage and engine
# configuration under $PODMAN_WORK, builds a Debian bookworm base image with debootstrap
# (tagged as debian:bookworm-slim, the name the Dockerfiles use), starts the Docker-API
# socket and installs docker-compose 1.29.2 in a venv. Exports CONTAINERS_STORAGE_CONF,
# CONTAINERS_CONF, DOCKER_HOST and COMPOSE (the docker-compose command).
set -euo pipefail
: "${PODMAN_WORK:?set PODMAN_WORK to a directory}"

podman_install() {
    local need=()
    for tool in podman debootstrap runc slirp4netns fuse-overlayfs newuidmap; do
        command -v "$tool" >/dev/null || need+=("$tool")
    done
    python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(venv)
    [ ${#need[@]} -eq 0 ] && return 0
    [ "$(id -u)" = 0 ] || { echo "compose-test: missing ${need[*]}; run as root to install them" >&2; return 1; }
    echo "compose-test: installing podman and helpers (missing: ${need[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get -y -qq --fix-broken install
    # runc, not crun: crun refuses hybrid cgroups.
    apt-get install -y -qq podman debootstrap uidmap slirp4netns fuse-overlayfs runc python3-venv >/dev/null
}

podman_configure() {
    mkdir -p "$PODMAN_WORK"/{storage,run,networks,tmp}
    cat > "$PODMAN_WORK/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$PODMAN_WORK/storage"
runroot = "$PODMAN_WORK/run"
EOF
    # podman's default rlimits cannot be set without CAP_SYS_RESOURCE: use the host's limits.
    cat > "$PODMAN_WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]
[network]
network_config_dir = "$PODMAN_WORK/networks"
[engine]
runtime = "runc"
tmp_dir = "$PODMAN_WORK/tmp"
EOF
    export CONTAINERS_STORAGE_CONF="$PODMAN_WORK/storage.conf" CONTAINERS_CONF="$PODMAN_WORK/containers.conf"
}

# The Debian mirror apt already uses (deb.debian.org when none is found).
debian_mirror() {
    local m
    m=$(grep -hoE '^(deb|URIs:) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
        | head -1 | awk '{print $2}' || true)
    echo "${m:-http://deb.debian.org/debian}"
}

podman_base_image() {
    if ! podman image exists localhost/bookworm:min; then
        echo "compose-test: building the bookworm base image with debootstrap"
        rm -rf "$PODMAN_WORK/rootfs"
        debootstrap --variant=minbase bookworm "$PODMAN_WORK/rootfs" "$(debian_mirror)" >"$PODMAN_WORK/debootstrap.log" 2>&1 \
            || { tail -20 "$PODMAN_WORK/debootstrap.log" >&2; return 1; }
        rm -rf "$PODMAN_WORK/rootfs/var/cache/apt/archives/"*.deb
        tar -C "$PODMAN_WORK/rootfs" -c . | podman import - localhost/bookworm:min >/dev/null
        rm -rf "$PODMAN_WORK/rootfs"
    fi
    # No registry: the names the Dockerfiles use resolve to the local base.
    podman tag localhost/bookworm:min docker.io/library/debian:bookworm-slim
}

podman_api() {
    local sock="$PODMAN_WORK/podman.sock"
    if ! [ -S "$sock" ] || ! curl -fsS --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
        rm -f "$sock"
        podman system service --time=0 "unix://$sock" >"$PODMAN_WORK/service.log" 2>&1 &
        echo $! > "$PODMAN_WORK/service.pid"
        for _ in $(seq 1 50); do
            curl -fsS --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 && break
            sleep 0.2
        done
    fi
    export DOCKER_HOST="unix://$sock"
}

compose_install() {
    local venv="$PODMAN_WORK/venv"
    if ! [ -x "$venv/bin/docker-compose" ]; then
        echo "compose-test: installing docker-compose 1.29.2 (Docker API over the podman socket)"
        python3 -m venv "$venv"
        printf 'cython<3\ndocker==6.1.3\nrequests<2.32\n' > "$PODMAN_WORK/constraints.txt"
        PIP_CONSTRAINT="$PODMAN_WORK/constraints.txt" "$venv/bin/pip" install -q docker-compose==1.29.2
    fi
    COMPOSE="$venv/bin/docker-compose"
    export COMPOSE
}

# Healthchecks need systemd timers, absent here: run them every 2 s for every container.
podman_healthchecks() {
    (
        while true; do
            for id in $(podman ps -q 2>/dev/null); do podman healthcheck run "$id" >/dev/null 2>&1 || true; done
            sleep 2
        done
    ) &
    echo $! > "$PODMAN_WORK/healthchecks.pid"
}

podman_stop_helpers() {
    for f in healthchecks service; do
        [ -f "$PODMAN_WORK/$f.pid" ] && kill "$(cat "$PODMAN_WORK/$f.pid")" 2>/dev/null || true
        rm -f "$PODMAN_WORK/$f.pid"
    done
}
