#!/usr/bin/env bash
# `make run`: the whole suite on this machine.
# Installs missing packages, starts a local PostgreSQL under .run/pg when DATABASE_URL is not
# set, builds, starts every service and the gateway, prints the API address, and stops
# everything on Ctrl-C / SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/deps.sh

config=${CHRONIR_BUILD_CONFIG:-debug}
http_port=${CHRONIR_HTTP_PORT:-8080}
pg_port=${CHRONIR_PG_PORT:-55433}
services="accounts alarms scheduler notifications invitations billing"
mkdir -p .run/logs
pids=()
own_pg=""

cleanup() {
    trap - INT TERM EXIT
    echo "stopping…" >&2
    for pid in "${pids[@]:-}"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]:-}"; do [ -n "$pid" ] && wait "$pid" 2>/dev/null || true; done
    if [ -n "$own_pg" ]; then scripts/pg.sh stop .run/pg; fi
    echo "stopped" >&2
}
trap cleanup INT TERM EXIT

if [ -z "${DATABASE_URL:-}" ]; then
    scripts/pg.sh start .run/pg "$pg_port"
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

export CHRONIR_LOG_FORMAT=${CHRONIR_LOG_FORMAT:-text}
for s in $services; do
    if [ -n "$base" ]; then url=$(printf "$base" "chronir_$s" "chronir_$s"); else url=$DATABASE_URL; fi
    DATABASE_URL="$url" "$bin/$s" >>".run/logs/$s.log" 2>&1 &
    pids+=($!)
done
CHRONIR_HTTP_PORT=$http_port "$bin/gateway" >>.run/logs/gateway.log 2>&1 &
pids+=($!)

for i in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$http_port/healthz" >/dev/null 2>&1; then
        echo "Chronir API ready at http://127.0.0.1:$http_port  (logs in .run/logs, Ctrl-C to stop)"
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
