#!/usr/bin/env bash
# make compose-test: the compose stack end to end with podman on a machine without a registry.
#   1. installs podman and docker-compose 1.29.2 (Docker API over podman's socket), builds a
#      Debian base image with debootstrap and a PostgreSQL image from it;
#   2. builds every executable once on the host (CHRONIR_BUILD_CONFIG, default debug, the
#      build `make test` already made) and wraps them in the runtime image (deploy/Dockerfile.host);
#   3. brings up deploy/compose.yaml (PostgreSQL, six services, the gateway) and waits until
#      every container is healthy;
#   4. smoke test through the gateway with `chronirctl load --check` run inside the gateway's
#      container: users sign up, open the live stream, create alarms due at the next minute,
#      receive each fire once, complete it, and group members receive the completion once;
#   5. reads a traced request with `chronirctl trace` in the gateway's container (span files of
#      every replica in the shared traces volume); scales every service 1 → 2 (the scheduler
#      1 → 3) while alarms are pending; SIGKILLs replica 2 of each service in turn while alarms
#      fire over three minutes, devices spread over
#      both gateways; scales everything back to 1 while alarms are pending: each time every
#      fire and completion push arrives exactly once, no completion fails, no 5xx;
#   6. Prometheus (deploy/prometheus, rules with 10 s `for:`) scrapes every replica: each panel of
#      the Grafana dashboard (deploy/grafana) returns data, and stopping billing fires
#      ChronirServiceNoReplicaUp;
#   7. tears everything down (containers, volume, network).
# Timings are printed per step. The OTel collector, Jaeger and Grafana images cannot be fetched
# here, so the stack runs without them (CHRONIR_OTLP_ENDPOINT empty; Grafana's dashboard is
# checked through its queries).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PODMAN_WORK=${CHRONIR_PODMAN_WORK:-$ROOT/.run/podman}
CONFIG=${CHRONIR_BUILD_CONFIG:-debug}
PROJECT=${CHRONIR_COMPOSE_PROJECT:-chronirct}
START=$(date +%s)
step() { echo "compose-test [$(( $(date +%s) - START )) s] $*"; }
# Why the run failed, repeated as the last line after the teardown's logs (CI shows the tail).
REASON=""
fail() { REASON="$*"; echo "compose-test FAILED: $*" >&2; exit 1; }
trap 'rc=$?; [ -n "$REASON" ] || REASON="line $LINENO: \"$BASH_COMMAND\" exited $rc"' ERR

# shellcheck source=scripts/podman-setup.sh
source scripts/podman-setup.sh

step "podman: install, configure, base image"
podman_install
podman_configure
podman_base_image

step "host build ($CONFIG) of every executable"
scripts/deps.sh >/dev/null
swift build -c "$CONFIG" 2>&1 | grep -E "error|warning: unre|Compiling|Build complete" | tail -3
BIN=$(swift build -c "$CONFIG" --show-bin-path)

step "images: runtime (host binaries), PostgreSQL"
CTX="$PODMAN_WORK/context"
rm -rf "$CTX"
mkdir -p "$CTX/bin" "$CTX/lib"
SERVICES=(accounts alarms scheduler notifications invitations billing gateway)
for exe in "${SERVICES[@]}" chronirctl; do
    [ -x "$BIN/$exe" ] || fail "$BIN/$exe was not built"
    strip -o "$CTX/bin/$exe" "$BIN/$exe" 2>/dev/null || cp "$BIN/$exe" "$CTX/bin/$exe"
done
# The Swift runtime libraries the executables link, from the host toolchain.
TOOLCHAIN_LIB="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift/linux"
for exe in "$CTX"/bin/*; do ldd "$exe"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$lib" in "$TOOLCHAIN_LIB"/*) cp -L "$lib" "$CTX/lib/" ;; esac
done
cp -r web "$CTX/web"   # the web client and the operations page the gateway serves
cp deploy/Dockerfile.host "$CTX/Dockerfile"
podman build -q -t localhost/chronir/runtime:latest "$CTX" >/dev/null
for s in "${SERVICES[@]}"; do podman tag localhost/chronir/runtime:latest "localhost/chronir/$s:latest"; done
podman image exists localhost/chronir-postgres:15 || podman build -q -t localhost/chronir-postgres:15 deploy/postgres >/dev/null
podman image exists localhost/chronir-prometheus:latest \
    || podman build -q -t localhost/chronir-prometheus:latest deploy/prometheus/image >/dev/null
echo "  runtime image $(podman image inspect localhost/chronir/runtime:latest --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}')"

step "Docker API and docker-compose"
podman_api
compose_install
export CHRONIR_IMAGE_PREFIX=localhost/chronir CHRONIR_POSTGRES_IMAGE=localhost/chronir-postgres:15
export CHRONIR_PROMETHEUS_IMAGE=localhost/chronir-prometheus:latest CHRONIR_PROMETHEUS_PUBLISH="127.0.0.1:"
# Prometheus with the suite's rules, scraping every 2 s and alerting after 10 s (compose-metrics.sh).
# shellcheck source=scripts/compose-metrics.sh
source scripts/compose-metrics.sh
metrics_config "$PODMAN_WORK/prometheus"
export CHRONIR_PROMETHEUS_CONFIG="$PODMAN_WORK/prometheus"
export CHRONIR_ALARM_CREATIONS_PER_MINUTE=1000   # the runs create a user's alarms at once
# Each gateway replica publishes a port of its own, chosen by the engine ("127.0.0.1::8080"; podman
# takes no port range); the test reads gateway 1's with `podman port`.
export CHRONIR_OTLP_ENDPOINT="" CHRONIR_HTTP_PUBLISH="127.0.0.1:"
export CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=100000   # the smoke runs sign every user up from one address
# The bus keys (CurveZMQ), throwaway: readable by the containers' user (uid 10001).
export CHRONIR_BUS_KEYS_DIR="$PODMAN_WORK/keys"
rm -rf "$CHRONIR_BUS_KEYS_DIR"
"$BIN/chronirctl" keys generate --dir "$CHRONIR_BUS_KEYS_DIR" >/dev/null
chown 10001 "$CHRONIR_BUS_KEYS_DIR"/secret/*.key
chmod 0755 "$CHRONIR_BUS_KEYS_DIR/secret"
# The database passwords, generated (compose secrets db_<service>, postgres_password).
export CHRONIR_SECRETS_DIR="$PODMAN_WORK/secrets"
rm -rf "$CHRONIR_SECRETS_DIR"
sh deploy/generate-secrets.sh "$CHRONIR_SECRETS_DIR" >/dev/null
dc() { "$COMPOSE" -p "$PROJECT" -f deploy/compose.yaml "$@"; }
teardown() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "--- container states and last logs ---" >&2
        podman ps -a --format '{{.Names}} {{.Status}}' >&2 || true
        podman stats --no-stream --format '{{.Name}} cpu {{.CPUPerc}} mem {{.MemUsage}}' >&2 2>&1 || true
        podman exec "${PROJECT}_postgres_1" psql -U chronir -d chronir -c \
            "SELECT usename, state, wait_event_type, wait_event, count(*) FROM pg_stat_activity GROUP BY 1, 2, 3, 4 ORDER BY 1" >&2 2>&1 || true
        for c in $(podman ps -a --format '{{.Names}}' | grep "^${PROJECT}_" || true); do
            echo "--- $c" >&2
            podman logs --tail 15 "$c" >&2 2>&1 || true
        done
    fi
    step "teardown"
    dc down -v --remove-orphans >/dev/null 2>&1 || true
    podman_stop_helpers
    step "done (exit $rc)${REASON:+: $REASON}"
}
trap teardown EXIT
trap 'exit 130' INT TERM
dc config -q
podman_healthchecks

# Waits until `count` containers of `service` are running and healthy.
await_healthy() {
    local service=$1 count=$2 deadline=$(( $(date +%s) + ${3:-180} ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        local healthy
        healthy=$(podman ps --filter "label=com.docker.compose.project=$PROJECT" \
            --filter "label=com.docker.compose.service=$service" --format '{{.Status}}' | grep -c '(healthy)' || true)
        local total
        total=$(podman ps --filter "label=com.docker.compose.project=$PROJECT" \
            --filter "label=com.docker.compose.service=$service" -q | wc -l)
        [ "$healthy" -eq "$count" ] && [ "$total" -eq "$count" ] && return 0
        sleep 1
    done
    fail "$service: wanted $count healthy containers"
}

step "compose up: PostgreSQL, six services, gateway"
dc up -d --no-build postgres accounts alarms scheduler notifications invitations billing gateway prometheus
for s in postgres "${SERVICES[@]}"; do await_healthy "$s" 1; done
# Each container's health check is its own readiness; the gateway's /healthz asks every service,
# which may take a few more seconds (the gateway can be ready before it reached them all).
GATEWAY=${PROJECT}_gateway_1
# The host port the gateway got (podman port: 127.0.0.1:41235).
HOST_PORT=$(podman port "$GATEWAY" 8080 | head -1 | sed 's/.*://')
[ -n "$HOST_PORT" ] || fail "the gateway published no port"
for i in $(seq 1 60); do curl -fsS "http://127.0.0.1:$HOST_PORT/healthz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "http://127.0.0.1:$HOST_PORT/healthz" >/dev/null || fail "gateway not reachable on 127.0.0.1:$HOST_PORT, or a service not healthy"
step "all healthy"
# The roles' passwords are the generated secrets: the role name as password (the old compose file's) is refused.
if podman exec -e PGPASSWORD=chronir_accounts "${PROJECT}_postgres_1" psql -h 127.0.0.1 -U chronir_accounts -d chronir -c 'SELECT 1' >/dev/null 2>&1; then
    fail "chronir_accounts signs in with its role name as password"
fi
podman exec -e PGPASSWORD="$(cat "$CHRONIR_SECRETS_DIR/db_accounts")" "${PROJECT}_postgres_1" \
    psql -h 127.0.0.1 -U chronir_accounts -d chronir -c 'SELECT 1' >/dev/null || fail "chronir_accounts cannot sign in with its secret"
step "database roles use the generated passwords"
PROM_URL="http://$(podman port "${PROJECT}_prometheus_1" 9090 | head -1)"
for i in $(seq 1 60); do curl -fsS "$PROM_URL/-/ready" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "$PROM_URL/-/ready" >/dev/null || fail "Prometheus not ready at $PROM_URL"

# chronirctl load inside the gateway's container: HTTP to the gateway on loopback, tiers by
# the operator's request to accounts and alarms over the compose network.
# The operator's key goes into the gateway's container for this (chronirctl runs as the operator).
podman cp "$CHRONIR_BUS_KEYS_DIR/secret/operator.key" "$GATEWAY:/tmp/operator.key"
load() {
    # Two requests at a time: signups hash passwords with scrypt, slow in a debug build.
    podman exec -u 0 -e CHRONIR_BUS_SECRET_KEY_FILE=/tmp/operator.key "$GATEWAY" chronirctl load --url http://127.0.0.1:8080 --tier premium --window 1 --spike 0 \
        --drain 20 --think 100 --concurrency 2 --check "$@"
}

step "smoke: sign up, alarms due at the next minute, fire on the live stream, complete (1 scheduler)"
load --users 4 --alarms 8 --group-share 1 --group-size 2 --lead 5 > "$PODMAN_WORK/load-1.txt" \
    || { cat "$PODMAN_WORK/load-1.txt"; fail "smoke test"; }
grep -E "^(fire|completion)" "$PODMAN_WORK/load-1.txt" || true

# Every service but the scheduler, and the scheduler (replicas scale separately).
STATELESS=(accounts alarms notifications invitations billing gateway)
# scale N S: every service to N replicas and the scheduler to S, the containers already running
# kept. `up --scale` converges on the count, so a failed call (the Docker API over podman's
# socket timing out on a loaded machine) is simply made again; its output is kept and shown
# when every try failed (a bare `set -e` exit here once left no trace in CI).
scale() {
    local n=$1 s=$2 label=$3 args=() try
    for svc in "${STATELESS[@]}"; do args+=(--scale "$svc=$n"); done
    args+=(--scale "scheduler=$s")
    for try in 1 2 3; do
        dc up -d --no-build --no-recreate "${args[@]}" "${SERVICES[@]}" > "$PODMAN_WORK/scale-$label.txt" 2>&1 && break
        echo "  scale to $n (scheduler $s): try $try failed:" >&2
        sed 's/^/    /' "$PODMAN_WORK/scale-$label.txt" >&2
        [ "$try" -lt 3 ] || return 1
        sleep 3
    done
    for svc in "${STATELESS[@]}"; do await_healthy "$svc" "$n"; done
    await_healthy scheduler "$s"
}
replicas_now() {
    local svc out=""
    for svc in "${SERVICES[@]}"; do
        out="$out $svc=$(podman ps --filter "label=com.docker.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$svc" -q | wc -l)"
    done
    echo "$out"
}
step "traces: a request's spans from every replica's file in the shared volume, by chronirctl trace in a container"
tid=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
curl -fsS -o /dev/null -X POST "http://127.0.0.1:$HOST_PORT/v1/auth/signup" -H "traceparent: 00-$tid-00f067aa0ba902b7-01" \
    -H 'Content-Type: application/json' -d "{\"email\":\"trace-$tid@example.com\",\"password\":\"a long enough password\",\"displayName\":\"Trace\"}" \
    || fail "the traced sign-up failed"
traced=""
for _ in $(seq 1 20); do
    traced=$(podman exec "$GATEWAY" chronirctl trace "$tid" 2>&1 || true)
    echo "$traced" | grep -q ' accounts accounts.signup process' && echo "$traced" | grep -q ' gateway HTTP POST' && break
    sleep 0.5
done
echo "$traced" | sed -n '1,6p'
echo "$traced" | grep -q ' accounts accounts.signup process' && echo "$traced" | grep -q ' gateway HTTP POST' \
    || fail "chronirctl trace in the gateway's container did not find the gateway's and accounts' spans of trace $tid"

# A load run in the background whose alarms are pending while the suite is scaled.
scaled_run() {
    local n=$1 s=$2 label=$3
    # 12 alarms, 6 of them shared by two groups of 3: 24 fire pushes, 12 completion pushes.
    # (Each owner creates 3: alarm creation is limited to 5 per user per minute.)
    load --users 12 --alarms 12 --group-share 0.5 --group-size 3 --lead 45 > "$PODMAN_WORK/load-$label.txt" 2>&1 &
    local pid=$!
    sleep 15
    step "scale every service to $n, the scheduler to $s, while the run's alarms are pending"
    scale "$n" "$s" "$label" || { kill "$pid" 2>/dev/null || true; fail "docker-compose could not scale to $n (scheduler $s)"; }
    step "replicas:$(replicas_now)"
    wait "$pid" || { cat "$PODMAN_WORK/load-$label.txt"; fail "fires across the scale to $n (scheduler $s)"; }
    grep -E "^(fire|completion)|load check" "$PODMAN_WORK/load-$label.txt" || true
}
step "scale 1 → 2 (scheduler 1 → 3) with fires pending"
scaled_run 2 3 up

# Replica 2 of every service SIGKILLed in turn while alarms fire over three minutes; devices are
# spread over both gateways (chronirctl runs in gateway 1 and moves a device whose gateway
# stopped answering to the other; only completions, which are idempotent, are sent again).
step "kills: one replica of each service SIGKILLed in turn during three minutes of fires"
load --url "http://127.0.0.1:8080,http://${PROJECT}_gateway_2:8080" --users 12 --alarms 36 --window 3 \
    --group-share 0.5 --group-size 3 --lead 20 > "$PODMAN_WORK/load-kills.txt" 2>&1 &
pid=$!
due=""
for _ in $(seq 1 240); do
    due=$(grep -o 'due from [^ ]*' "$PODMAN_WORK/load-kills.txt" | head -1 | cut -d' ' -f3 || true)
    [ -n "$due" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
done
[ -n "$due" ] || { cat "$PODMAN_WORK/load-kills.txt"; fail "the kill run did not create its alarms"; }
# From 3 s before the second due minute, one kill every 4 s: that minute's fires and completions
# meet the kills of the scheduler, alarms and notifications replicas, the third minute's come
# after every kill (the gateway's last).
at=$(( $(date -d "$due" +%s) + 57 ))
for svc in scheduler alarms notifications accounts invitations billing gateway; do
    while [ "$(date +%s)" -lt "$at" ]; do sleep 0.2; done
    podman kill --signal KILL "${PROJECT}_${svc}_2" >/dev/null || fail "could not SIGKILL ${PROJECT}_${svc}_2"
    step "SIGKILL ${PROJECT}_${svc}_2"
    at=$((at + 4))
done
wait "$pid" || { cat "$PODMAN_WORK/load-kills.txt"; fail "fires, completions or pushes lost or doubled across the kills"; }
grep -E "^(fire|completion)|load check|^requests" "$PODMAN_WORK/load-kills.txt" || true
# The killed containers come back (by their restart policy, or started again by `up`).
scale 2 3 back || fail "docker-compose could not bring the killed replicas back"
step "every killed replica is back:$(replicas_now)"

step "metrics: Prometheus finds every replica, and every dashboard panel's query returns data"
for _ in $(seq 1 30); do
    targets=$(prom_query 'up == 1' || echo 0)
    [ "$targets" -eq 15 ] && break
    sleep 1
done
[ "$targets" -eq 15 ] || fail "Prometheus scrapes $targets replicas up, not the 15 running (2 of each service, 3 schedulers)"
echo "  targets up: $targets"
check_dashboard deploy/grafana/dashboards/chronir-overview.json
step "alert: billing stopped (every replica), ChronirServiceNoReplicaUp fires"
dc stop billing >/dev/null 2>&1 || fail "could not stop billing"
await_alert ChronirServiceNoReplicaUp billing 90
step "ChronirServiceNoReplicaUp firing for billing (Prometheus /api/v1/alerts)"
scale 2 3 billing-back || fail "docker-compose could not start billing again"

step "scale 2 → 1 (scheduler 3 → 1) with fires pending"
scaled_run 1 1 down
step "passed"
