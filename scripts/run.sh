#!/usr/bin/env bash
# `make run`: the whole suite on this machine.
# Installs missing packages, starts a local PostgreSQL under .run/pg when DATABASE_URL is not
# set, builds, starts every service and the gateway, prints the API address, and stops
# everything on Ctrl-C / SIGTERM.
#   CHRONIR_BUILD_CONFIG=release   build and run release binaries (load tests)
#   CHRONIR_SCHEDULER_REPLICAS=3   scheduler replicas (each on its own ports: ServiceDirectory.swift)
#   CHRONIR_TRACE_DIR=DIR          each process writes its spans to DIR/<name>.jsonl
#   CHRONIR_BUS_KEYS=DIR           the CurveZMQ keys of the bus (default .run/keys, generated on first start)
# Services bind loopback only (CHRONIR_BIND_HOST=* to listen on every interface).
# Process ids are written to .run/pids/<name>.pid (scheduler-1, scheduler-2, …).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/deps.sh

config=${CHRONIR_BUILD_CONFIG:-debug}
http_port=${CHRONIR_HTTP_PORT:-8080}
pg_port=${CHRONIR_PG_PORT:-55433}
pg_dir=${CHRONIR_PG_DIR:-.run/pg}   # the embedded PostgreSQL's data directory
services="accounts alarms notifications invitations billing"
replicas=${CHRONIR_SCHEDULER_REPLICAS:-1}
mkdir -p .run/logs .run/pids
rm -f .run/pids/*.pid
pids=()
spare_pids=()   # scheduler replicas beyond one: the suite outlives any of them (failover)
own_pg=""

cleanup() {
    trap - INT TERM EXIT
    echo "stopping…" >&2
    for pid in "${pids[@]:-}" "${spare_pids[@]:-}"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]:-}" "${spare_pids[@]:-}"; do [ -n "$pid" ] && wait "$pid" 2>/dev/null || true; done
    if [ -n "$own_pg" ]; then scripts/pg.sh stop "$pg_dir"; fi
    echo "stopped" >&2
}
trap cleanup INT TERM EXIT

if [ -z "${DATABASE_URL:-}" ]; then
    scripts/pg.sh start "$pg_dir" "$pg_port"
    own_pg=1
    admin=$(scripts/pg.sh url "$pg_port")
    scripts/provision.sh "$admin" chronir
    base="postgres://%s:%s@127.0.0.1:$pg_port/chronir"
else
    base=""
fi

echo "building ($config)…" >&2
swift build -c "$config" 2>&1 | grep -E "error|warning: unre|Compiling|Build complete" | grep -v "^\[" >&2 || true
bin=$(swift build -c "$config" --show-bin-path)
[ -x "$bin/gateway" ] || { echo "build failed" >&2; exit 1; }
# The internal bus is CurveZMQ: one key pair per service, the gateway and the operator,
# generated on first start (kept across runs). chronirctl finds the operator key here too.
if [ -z "${CHRONIR_BUS_PUBLIC_KEYS:-}" ] && [ "${CHRONIR_INSECURE_BUS:-0}" != 1 ]; then
    export CHRONIR_BUS_KEYS=${CHRONIR_BUS_KEYS:-$root/.run/keys}
    "$bin/chronirctl" keys generate --dir "$CHRONIR_BUS_KEYS" >&2
fi

export CHRONIR_LOG_FORMAT=${CHRONIR_LOG_FORMAT:-text}
# The gateway's HTTP port and every ops port listen on loopback too, unless told otherwise.
listen=${CHRONIR_BIND_HOST:-127.0.0.1}; [ "$listen" = "*" ] && listen=0.0.0.0
export CHRONIR_HTTP_HOST=${CHRONIR_HTTP_HOST:-$listen} CHRONIR_OPS_HOST=${CHRONIR_OPS_HOST:-$listen}
# Every service finds the scheduler replicas by their number (the ports: ServiceDirectory.swift).
export CHRONIR_SCHEDULER_REPLICAS=$replicas
trace_env() { if [ -n "${CHRONIR_TRACE_DIR:-}" ]; then mkdir -p "$CHRONIR_TRACE_DIR"; echo "CHRONIR_TRACE_FILE=$CHRONIR_TRACE_DIR/$1.jsonl"; else echo "CHRONIR_TRACE_UNSET=1"; fi; }
# start NAME BINARY [VAR=VALUE…]: one process, logged to .run/logs/NAME.log, pid in .run/pids.
start() {
    local name=$1 binary=$2; shift 2
    env "$(trace_env "$name")" "$@" "$bin/$binary" >>".run/logs/$name.log" 2>&1 &
    if [ "$replicas" -gt 1 ] && [ "${name#scheduler-}" != "$name" ] && [ "$name" != scheduler-1 ]; then spare_pids+=($!); else pids+=($!); fi
    echo $! > ".run/pids/$name.pid"
}
db_url() { if [ -n "$base" ]; then printf "$base" "chronir_$1" "chronir_$1"; else echo "$DATABASE_URL"; fi; }
for s in $services; do start "$s" "$s" DATABASE_URL="$(db_url "$s")"; done
for k in $(seq 1 "$replicas"); do
    start "scheduler-$k" scheduler DATABASE_URL="$(db_url scheduler)" CHRONIR_INSTANCE_ID="scheduler-$k" CHRONIR_REPLICA="$k"
done
# The web client and the operations page come from web/; the operations page takes the
# operator's HTTP token, made on first start like the bus keys.
export CHRONIR_WEB_ROOT=${CHRONIR_WEB_ROOT:-$root/web}
if [ -z "${CHRONIR_OPS_TOKEN:-}" ]; then
    mkdir -p .run/keys
    [ -s .run/keys/ops-token ] || (umask 077; openssl rand -hex 32 > .run/keys/ops-token)
    CHRONIR_OPS_TOKEN=$(cat .run/keys/ops-token)
fi
export CHRONIR_OPS_TOKEN
start gateway gateway CHRONIR_HTTP_PORT="$http_port"

for i in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$http_port/healthz" >/dev/null 2>&1; then
        echo "Chronir API ready at http://127.0.0.1:$http_port  (logs in .run/logs, Ctrl-C to stop)"
        echo "  web app:         http://127.0.0.1:$http_port/app/"
        echo "  operations page: http://127.0.0.1:$http_port/ops/  (operator token in .run/keys/ops-token)"
        break
    fi
    for pid in "${pids[@]}"; do
        if ! kill -0 "$pid" 2>/dev/null; then echo "a service exited during start; see .run/logs" >&2; tail -n 20 .run/logs/*.log >&2; exit 1; fi
    done
    sleep 0.5
done
if ! curl -fsS "http://127.0.0.1:$http_port/healthz" >/dev/null 2>&1; then
    echo "the suite did not become healthy; see .run/logs" >&2
    curl -sS "http://127.0.0.1:$http_port/healthz" >&2 || true
    exit 1
fi
# Stay in the foreground until a service dies or we are told to stop.
while true; do
    for pid in "${pids[@]}"; do
        if ! kill -0 "$pid" 2>/dev/null; then echo "a service exited; see .run/logs" >&2; exit 1; fi
    done
    sleep 1 &
    wait $! || true
done
