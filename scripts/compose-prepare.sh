#!/usr/bin/env bash
# What `make compose-test` needs before it starts and that waits on the network or the disk,
# not the CPU: podman's configuration, the debootstrap base image, the PostgreSQL and
# Prometheus images (apt inside the build) and docker-compose in its venv. `.ci/run` runs it in
# the background while the first Swift build keeps both cores busy; compose-test then finds it
# all in place (each step is skipped when its result exists) and only builds the runtime image.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PODMAN_WORK=${CHRONIR_PODMAN_WORK:-$ROOT/.run/podman}
# shellcheck source=scripts/podman-setup.sh
source scripts/podman-setup.sh
start=$(date +%s)
podman_install
podman_configure
podman_base_image
podman image exists localhost/chronir-postgres:15 || podman build -q -t localhost/chronir-postgres:15 deploy/postgres >/dev/null
podman image exists localhost/chronir-prometheus:latest \
    || podman build -q -t localhost/chronir-prometheus:latest deploy/prometheus/image >/dev/null
compose_install
echo "compose-prepare: podman, base, PostgreSQL and Prometheus images and docker-compose ready in $(( $(date +%s) - start )) s"
