#!/usr/bin/env bash
# Benchmark of the scheduler's fire path on a real PostgreSQL: one replica (release build),
# the alarms and notifications services consuming its pushes, and `chronirctl scheduler`
# load runs: a burst of N fires due at the same second, then a steady rate for S seconds.
#   scripts/bench-scheduler.sh [burst-count] [steady-rate] [steady-seconds]
# BENCH_HOLD=1 leaves everything running afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-100000}
rate=${2:-2000}
seconds=${3:-60}
scripts/deps.sh
dir=.run/bench-scheduler
pgport=55435
mkdir -p "$dir"
pids=()
cleanup() {
    for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
    scripts/pg.sh stop "$dir/pg"
}
trap cleanup EXIT
[ -n "${BENCH_HOLD:-}" ] && trap "" EXIT
scripts/pg.sh stop "$dir/pg" || true; rm -rf "$dir/pg"
scripts/pg.sh start "$dir/pg" "$pgport"
admin=$(scripts/pg.sh url "$pgport")
scripts/provision.sh "$admin" chronir >/dev/null
echo "building (release)…" >&2
swift build -c release >/dev/null 2>&1
bin=$(swift build -c release --show-bin-path)
# The bus keys (CurveZMQ): services, gateway and chronirctl (the operator) read CHRONIR_BUS_KEYS.
"$bin/chronirctl" keys generate --dir "$dir/keys" >/dev/null
export CHRONIR_BUS_KEYS=$PWD/$dir/keys
export CHRONIR_LOG_LEVEL=${CHRONIR_LOG_LEVEL:-warning} CHRONIR_LOG_FORMAT=text CHRONIR_OPS_PORT=0
port=1
for s in accounts alarms scheduler notifications; do
    export "CHRONIR_${s^^}_RPC=tcp://127.0.0.1:1710$port" "CHRONIR_${s^^}_EVENTS=tcp://127.0.0.1:1720$port"
    port=$((port + 1))
done
db() { echo "postgres://chronir_$1:chronir_$1@127.0.0.1:$pgport/chronir"; }
start() {
    local s=$1 port=$2
    DATABASE_URL=$(db "$s") CHRONIR_RPC_BIND=tcp://127.0.0.1:1710$port CHRONIR_PUB_BIND=tcp://127.0.0.1:1720$port \
        "$bin/$s" >"$dir/$s.log" 2>&1 &
    pids+=($!)
}
start accounts 1; start alarms 2; start notifications 4; start scheduler 3
for i in $(seq 1 100); do
    "$bin/chronirctl" scheduler status >/dev/null 2>&1 && break
    sleep 0.3
done
sleep 2
export DATABASE_URL=$(db scheduler)
echo "== burst: $count fires due at the same second"
"$bin/chronirctl" scheduler burst --count "$count"
sleep 3
echo "== steady: $rate fires/s for $seconds s"
"$bin/chronirctl" scheduler steady --rate "$rate" --seconds "$seconds"
echo "== chronirctl scheduler status"
"$bin/chronirctl" scheduler status
