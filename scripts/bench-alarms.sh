#!/usr/bin/env bash
# Benchmark of the alarms API through the whole path (HTTP → gateway → ZeroMQ → alarms →
# PostgreSQL): GET /v1/alarms (first page of 50) and POST /v1/alarms, measured with wrk, against
# PostgreSQL's own read-only pgbench (-S) on the same server in the same run as the ceiling.
#   scripts/bench-alarms.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
scripts/deps.sh
command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null; }
dir=.run/bench
pgport=55434
http=18080
mkdir -p "$dir"
pids=()
cleanup() {
    for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
    scripts/pg.sh stop "$dir/pg"
}
trap cleanup EXIT
[ -n "${BENCH_HOLD:-}" ] && trap "" EXIT
scripts/pg.sh stop "$dir/pg"; rm -rf "$dir/pg"
scripts/pg.sh start "$dir/pg" "$pgport"
admin=$(scripts/pg.sh url "$pgport")
scripts/provision.sh "$admin" chronir
echo "building (release)…" >&2
swift build -c release >/dev/null 2>&1
bin=$(swift build -c release --show-bin-path)
# The bus keys (CurveZMQ): services, gateway and chronirctl (the operator) read CHRONIR_BUS_KEYS.
"$bin/chronirctl" keys generate --dir "$dir/keys" >/dev/null
export CHRONIR_BUS_KEYS=$PWD/$dir/keys
export CHRONIR_LOG_LEVEL=warning CHRONIR_LOG_FORMAT=text CHRONIR_OPS_PORT=0
export CHRONIR_ACCOUNTS_RPC=tcp://127.0.0.1:17101 CHRONIR_ACCOUNTS_EVENTS=tcp://127.0.0.1:17201
export CHRONIR_ALARMS_RPC=tcp://127.0.0.1:17102 CHRONIR_ALARMS_EVENTS=tcp://127.0.0.1:17202
db() { echo "postgres://chronir_$1:chronir_$1@127.0.0.1:$pgport/chronir"; }
DATABASE_URL=$(db accounts) CHRONIR_RPC_BIND=tcp://127.0.0.1:17101 CHRONIR_PUB_BIND=tcp://127.0.0.1:17201 \
    "$bin/accounts" >"$dir/accounts.log" 2>&1 & pids+=($!)
DATABASE_URL=$(db alarms) CHRONIR_RPC_BIND=tcp://127.0.0.1:17102 CHRONIR_PUB_BIND=tcp://127.0.0.1:17202 \
    CHRONIR_ALARM_CREATIONS_PER_MINUTE=100000 "$bin/alarms" >"$dir/alarms.log" 2>&1 & pids+=($!)
CHRONIR_HTTP_PORT=$http "$bin/gateway" >"$dir/gateway.log" 2>&1 & pids+=($!)
for i in $(seq 1 100); do
    out=$(curl -s -X POST "localhost:$http/v1/auth/signup" -d '{"email":"bench@example.com","password":"benchmark!","displayName":"Bench"}' || true)
    if echo "$out" | grep -q accessToken; then break; fi
    sleep 0.3
done
token=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
uid=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["user"]["uid"])')
"$bin/chronirctl" tier set --user "$uid" --tier plus >/dev/null
for k in $(seq 1 60); do
    curl -fs -o /dev/null -X POST "localhost:$http/v1/alarms" -H "Authorization: Bearer $token" \
        -d "{\"title\":\"Alarm $k\",\"schedule\":{\"type\":\"monthly\",\"dayOfMonth\":$((k % 28 + 1)),\"timeOfDay\":\"09:00\",\"timezone\":\"Europe/London\",\"startDate\":\"2026-01-01T00:00:00Z\"}}"
done

psql -q "$admin" -c "DROP DATABASE IF EXISTS pgbench" -c "CREATE DATABASE pgbench"
pgbench -q -i -s 10 "${admin%/*}/pgbench" >/dev/null 2>&1
pg_tps=$(pgbench -S -n -c 32 -j 2 -T "$seconds" "${admin%/*}/pgbench" 2>/dev/null | awk '/^tps/ {print int($3)}')

cat > "$dir/create.lua" <<LUA
counter = 0
math.randomseed(os.time())
prefix = tostring(math.random(1, 1000000000))
request = function()
  counter = counter + 1
  local body = '{"id":"bench-' .. prefix .. '-' .. counter .. '","title":"Bench ' .. counter .. '","isActive":false,' ..
    '"schedule":{"type":"weekly","daysOfWeek":[1,4],"timeOfDay":"07:30","timezone":"America/New_York","startDate":"2026-01-01T00:00:00Z"}}'
  return wrk.format("POST", "/v1/alarms", {["Content-Type"]="application/json", ["Authorization"]="Bearer $token"}, body)
end
LUA
get=$(wrk -t2 -c32 -d"${seconds}s" --latency -H "Authorization: Bearer $token" "http://127.0.0.1:$http/v1/alarms?limit=50")
post=$(wrk -t2 -c32 -d"${seconds}s" --latency -s "$dir/create.lua" "http://127.0.0.1:$http")
rps() { echo "$1" | awk '/^Requests\/sec/ {print int($2)}'; }
p99() { echo "$1" | awk '$1 == "99%" {print $2}'; }
non2xx() { echo "$1" | awk '/Non-2xx/ {print $4}'; }
get_rps=$(rps "$get"); post_rps=$(rps "$post")
echo "PostgreSQL pgbench -S (32 clients, ${seconds}s):   $pg_tps transactions/s"
echo "GET /v1/alarms (50 alarms, 32 connections):  $get_rps requests/s, p99 $(p99 "$get"), non-2xx $(non2xx "$get")"
echo "POST /v1/alarms (32 connections):            $post_rps requests/s, p99 $(p99 "$post"), non-2xx $(non2xx "$post")"
python3 -c "print(f'GET / pgbench -S: {$get_rps/$pg_tps*100:.1f} %   POST / pgbench -S: {$post_rps/$pg_tps*100:.1f} %')"
