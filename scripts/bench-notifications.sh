#!/usr/bin/env bash
# Benchmark of notifications on a real PostgreSQL (release build): pushes delivered per second
# end to end (scheduler fire → notifications inbox + delivery → webhook provider), and the memory
# the gateway needs for idle live-stream (SSE) connections.
#   scripts/bench-notifications.sh [pushes] [connections]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-20000}
connections=${2:-10000}
scripts/deps.sh
ulimit -n "$(ulimit -Hn)" || true
dir=.run/bench-notifications
pgport=55436
mkdir -p "$dir"
pids=()
cleanup() {
    for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
    scripts/pg.sh stop "$dir/pg"
}
trap cleanup EXIT
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
for s in accounts alarms scheduler notifications invitations billing; do
    export "CHRONIR_${s^^}_RPC=tcp://127.0.0.1:1730$port" "CHRONIR_${s^^}_EVENTS=tcp://127.0.0.1:1740$port"
    port=$((port + 1))
done
db() { echo "postgres://chronir_$1:chronir_$1@127.0.0.1:$pgport/chronir"; }
start() {
    local s=$1 port=$2
    DATABASE_URL=$(db "$s") CHRONIR_RPC_BIND=tcp://127.0.0.1:1730$port CHRONIR_PUB_BIND=tcp://127.0.0.1:1740$port \
        CHRONIR_WEBHOOK_SECRET=bench CHRONIR_WEBHOOK_ALLOW_HTTP=1 CHRONIR_WEBHOOK_ALLOW_PRIVATE=1 "$bin/$s" >"$dir/$s.log" 2>&1 &
    pids+=($!)
}
start accounts 1; start alarms 2; start scheduler 3; start notifications 4; start invitations 5; start billing 6
# 10 000 live streams of one account from one address: the per-account and per-address caps off.
CHRONIR_HTTP_PORT=18080 CHRONIR_HTTP_HOST=127.0.0.1 CHRONIR_LIVE_STREAMS_PER_ACCOUNT=1000000 CHRONIR_CONNECTIONS_PER_ADDRESS=0 "$bin/gateway" >"$dir/gateway.log" 2>&1 &
gateway=$!
pids+=($gateway)
for i in $(seq 1 100); do
    curl -sf localhost:18080/healthz >/dev/null 2>&1 && break
    sleep 0.3
done
sleep 2
psql -q "$(db notifications)" -c "INSERT INTO notifications.devices VALUES ('load-user', 'sink', 'web', 'webhook', NULL, 'http://127.0.0.1:18099/hook', now())"
echo "== pushes: $count fires for one user with a webhook device"
DATABASE_URL=$(db scheduler) "$bin/chronirctl" notifications load --count "$count" --user load-user --port 18099 --lead 5
echo "== where the time went (seconds after the due instant, per stage)"
psql -qAt "${admin%/*}/chronir" <<'SQL'
WITH due AS (SELECT min(due_at) AS t FROM scheduler.fires WHERE alarm_id LIKE 'push-%')
SELECT 'fires recorded (scheduler)   ' || round(extract(epoch FROM max(f.fired_at) - (SELECT t FROM due))::numeric, 2) FROM scheduler.fires f WHERE f.alarm_id LIKE 'push-%'
UNION ALL SELECT 'inbox written (notifications) ' || round(extract(epoch FROM max(created_at) - (SELECT t FROM due))::numeric, 2) FROM notifications.inbox WHERE user_id = 'load-user'
UNION ALL SELECT 'pushes recorded as sent        ' || round(extract(epoch FROM max(at) - (SELECT t FROM due))::numeric, 2) FROM notifications.attempts;
SELECT 'delivery rounds ' || count(*) || ', pushes per round ' || round(avg(n)) || ', first recorded at +'
       || round(extract(epoch FROM min(at) - (SELECT min(due_at) FROM scheduler.fires WHERE alarm_id LIKE 'push-%'))::numeric, 2) || ' s'
FROM (SELECT at, count(*) AS n FROM notifications.attempts GROUP BY at) r;
SELECT 'provider latency per push (ms) p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms)::numeric, 1)
       || ' p99 ' || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms)::numeric, 1) FROM notifications.attempts;
SQL
echo "== idle live-stream connections: $connections"
token=$(curl -sf -X POST localhost:18080/v1/auth/signup -H 'content-type: application/json' \
    -d '{"email":"bench@example.com","password":"correct horse","displayName":"Bench","timezone":"UTC"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
rss() { awk '/VmRSS/ {print $2}' "/proc/$gateway/status"; }
before=$(rss)
"$bin/chronirctl" notifications sse --connections "$connections" --url http://127.0.0.1:18080 --token "$token" --hold 8 >"$dir/sse.out" 2>&1 &
sse=$!
for i in $(seq 1 600); do grep -q "^open" "$dir/sse.out" 2>/dev/null && break; sleep 0.5; done
sleep 3
after=$(rss)
cat "$dir/sse.out"
wait $sse || true
open=$(awk '/^open/ {print $2}' "$dir/sse.out")
python3 - "$before" "$after" "$open" <<'PY'
import sys
before, after, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3] or 0)
per = (after - before) * 1024 / max(n, 1)
print(f"gateway RSS {before/1024:.1f} MiB -> {after/1024:.1f} MiB with {n} idle SSE connections: "
      f"{per/1024:.1f} KiB per connection, {int(1024**3 / max(per, 1))} connections per GiB")
PY
