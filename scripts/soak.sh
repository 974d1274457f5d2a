#!/usr/bin/env bash
# A chaos soak with an oracle (issue 58): the suite (`make run`'s scripts/run.sh) on its embedded,
# durable PostgreSQL (fsync on) with N replicas of every service and the gateway; the load
# generator's users in groups, each device with a live stream, alarms firing across the window
# and members completing them; and a seeded schedule of faults. At the end an oracle reads the
# whole history.
#   scripts/soak.sh [--minutes M] [--seed S] [--replicas N] [--users U] [-- chronirctl load options…]
# Alarms fall due on minute boundaries (schedules have minute resolution), so each minute of the
# window gets two fault episodes: one begun 2–5 s before its fires are due (the victim is down or
# frozen while they fire and ring) and one 20–29 s after (completions and their fan-out), each's
# class and victim drawn from --seed (default 7):
#   kill  SIGKILL a replica beyond the first of a service (run.sh ends the suite when a first
#         replica exits), started again 2–5 s later with the environment it had
#   stop  SIGSTOP any replica, gateways and schedulers included, for 3–8 s, then SIGCONT (a
#         frozen VM, a stop-the-world pause: it holds its leases, locks and connections meanwhile)
#   pg    PostgreSQL restarted, fast or immediate (a crash: recovered from the WAL); every
#         connection of every service drops
# An episode has recovered when, after its end (the restart, the SIGCONT, PostgreSQL up again),
# every gateway answers /healthz 200 and the victim is alive; within 30 s or it counts unrecovered.
# The oracle: the load generator's (every planned fire pushed once to every member's device,
# every completion push once, none early, no 5xx), and the database's (every stream numbered
# densely up to its head, each consumer's checkpoint at most its producer's head, one inbox row
# per user and event, one fire per alarm occurrence).
# Last line: `soak: planned P, delivered D, lost L, duplicated U, early E, faults F, recovered R,
# recovery p99 S s`; exit 0 when lost, duplicated and early are 0, every episode recovered and
# the database checks pass. CHRONIR_BUILD_CONFIG (default release; debug reuses `make test`'s
# build). Results in .run/soak/.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=6
seed=7
replicas=2
users=200
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --replicas) replicas=$2; shift 2 ;;
        --users) users=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "unknown option $1" >&2; exit 64 ;;
    esac
done
[ "$replicas" -ge 2 ] || { echo "--replicas must be at least 2 (a fault takes one down)" >&2; exit 64; }
out=.run/soak
rm -rf "$out" && mkdir -p "$out"
export CHRONIR_BUILD_CONFIG=${CHRONIR_BUILD_CONFIG:-release} CHRONIR_REPLICAS=$replicas
export CHRONIR_TRACE_DIR="" CHRONIR_TRACE_SAMPLE=0 CHRONIR_LOG_LEVEL=${CHRONIR_LOG_LEVEL:-notice}
export CHRONIR_ALARM_CREATIONS_PER_MINUTE=${CHRONIR_ALARM_CREATIONS_PER_MINUTE:-100000}
export CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=10000000 CHRONIR_CONNECTIONS_PER_ADDRESS=0 CHRONIR_LIVE_STREAMS_PER_ACCOUNT=1000000
export CHRONIR_BUS_KEYS=${CHRONIR_BUS_KEYS:-$PWD/.run/keys}
pg_port=${CHRONIR_PG_PORT:-55433}
pg_dir=${CHRONIR_PG_DIR:-.run/pg}
http_port=${CHRONIR_HTTP_PORT:-8080}
urls=http://127.0.0.1:$http_port
for k in $(seq 2 "$replicas"); do urls="$urls,http://127.0.0.1:$((http_port + 10 * (k - 1)))"; done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
RANDOM=$seed

restarted=()   # processes this script started again: run.sh does not know them
scripts/run.sh > "$out/suite.log" 2>&1 &
suite=$!
cleanup() {
    for pid in ${restarted[@]+"${restarted[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
    # A victim left stopped would keep the suite from stopping.
    for f in .run/pids/*.pid; do [ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null || true; done
    kill -TERM $suite 2>/dev/null || true
    wait $suite 2>/dev/null || true
}
trap cleanup EXIT
until grep -q "API ready" "$out/suite.log"; do
    kill -0 $suite 2>/dev/null || { tail -50 "$out/suite.log"; exit 1; }
    sleep 1
done
bin=${CHRONIR_BIN_DIR:-$(swift build -c "$CHRONIR_BUILD_CONFIG" --show-bin-path)}
alarms=$((minutes * 60))
"$bin/chronirctl" load --url "$urls" --users "$users" --alarms "$alarms" --window "$minutes" \
    --spike $((alarms / minutes)) --lead 45 --drain 45 --json-file "$out/report.json" "$@" 2> >(tee "$out/progress.log" >&2) > "$out/report.txt" &
load=$!
until grep -q "due from" "$out/progress.log" 2>/dev/null; do
    kill -0 $load 2>/dev/null || { cat "$out/progress.log"; exit 1; }
    sleep 1
done
start=$(date -d "$(grep -o 'due from [^ ]*' "$out/progress.log" | head -1 | cut -d' ' -f3)" +%s)

log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/faults.log" >&2; }
now() { date +%s.%N; }
pick() { local -a a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
every_gateway_healthy() {
    local k
    for k in $(seq 1 "$replicas"); do
        curl -fsS -m 2 "http://127.0.0.1:$((http_port + 10 * (k - 1)))/healthz" >/dev/null 2>&1 || return 1
    done
}
# recovered VICTIM_PID: seconds from now until every gateway is healthy and the victim alive
# (empty when not within 30 s).
recovered() {
    local t0 t
    t0=$(now)
    while :; do
        if { [ -z "$1" ] || kill -0 "$1" 2>/dev/null; } && every_gateway_healthy; then
            t=$(now); awk -v a="$t" -v b="$t0" 'BEGIN { printf "%.2f", a - b }'; return
        fi
        if awk -v a="$(now)" -v b="$t0" 'BEGIN { exit !(a - b > 30) }'; then return; fi
        sleep 0.1
    done
}
names() { for f in .run/pids/*.pid; do basename "$f" .pid; done; }

faults=0
unrecovered=0
: > "$out/recovery.txt"
episodes=()
for m in $(seq 0 $((minutes - 1))); do
    episodes+=($((start + 60 * m - 2 - RANDOM % 4)) $((start + 60 * m + 20 + RANDOM % 10)))
done
for at in "${episodes[@]}"; do
    while [ "$(date +%s)" -lt "$at" ]; do sleep 0.2; done
    class=$(pick kill stop pg)
    victim_pid=""
    case "$class" in
    kill)
        victim=$(pick $(names | grep -E -- '-[2-9]$'))
        pid=$(cat ".run/pids/$victim.pid")
        readarray -d '' vars < "/proc/$pid/environ"
        exe=$(readlink "/proc/$pid/exe")
        kill -KILL "$pid"
        down=$((2 + RANDOM % 4))
        log "kill $victim (pid $pid), down ${down}s"
        sleep "$down"
        env -i "${vars[@]}" "$exe" >> ".run/logs/$victim.log" 2>&1 &
        victim_pid=$!
        restarted+=("$victim_pid")
        echo "$victim_pid" > ".run/pids/$victim.pid"
        ;;
    stop)
        victim=$(pick $(names))
        pid=$(cat ".run/pids/$victim.pid")
        paused=$((3 + RANDOM % 6))
        log "stop $victim (pid $pid) for ${paused}s"
        kill -STOP "$pid"
        sleep "$paused"
        kill -CONT "$pid"
        victim_pid=$pid
        ;;
    pg)
        how=$(pick fast immediate)
        log "PostgreSQL restart ($how)"
        scripts/pg.sh restart "$pg_dir" "$how"
        ;;
    esac
    faults=$((faults + 1))
    r=$(recovered "$victim_pid")
    if [ -n "$r" ]; then
        echo "$class $r" >> "$out/recovery.txt"
        log "  recovered in ${r}s"
    else
        unrecovered=$((unrecovered + 1))
        echo "$class unrecovered" >> "$out/recovery.txt"
        log "  NOT recovered within 30 s"
    fi
done
log "faults done: $faults episodes"
load_status=0
wait $load || load_status=$?

# The database's side of the oracle, as the superuser, on the suite's database.
psql=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)
db="postgres://postgres@127.0.0.1:$pg_port/chronir"
q() { "$psql" -X -A -t -q -v ON_ERROR_STOP=1 "$db" -c "$1"; }
db_problems=()
for schema in accounts alarms scheduler notifications invitations billing; do
    row=$(q "SELECT count(*), count(DISTINCT seq), coalesce(min(seq), 0), coalesce(max(seq), 0),
                    (SELECT coalesce(max(last_seq), 0) FROM $schema.outbox_streams)
             FROM $schema.outbox WHERE seq IS NOT NULL")
    IFS='|' read -r n distinct lo hi head <<< "$row"
    if [ "$n" -gt 0 ] && { [ "$n" != "$distinct" ] || [ $((hi - lo + 1)) != "$n" ] || [ "$hi" -gt "$head" ]; }; then
        db_problems+=("stream $schema: $n rows, $distinct numbers, $lo…$hi, head $head")
    fi
    echo "$schema $head" >> "$out/heads.txt"
done
for schema in accounts alarms scheduler notifications invitations billing; do
    exists=$(q "SELECT to_regclass('$schema.consumer_checkpoints') IS NOT NULL")
    [ "$exists" = t ] || continue
    while IFS='|' read -r stream seq; do
        [ -n "$stream" ] || continue
        head=$(awk -v s="$stream" '$1 == s { print $2 }' "$out/heads.txt")
        if [ -n "$head" ] && [ "$seq" -gt "$head" ]; then db_problems+=("$schema's checkpoint of $stream is $seq, past its head $head"); fi
    done <<< "$(q "SELECT stream, seq FROM $schema.consumer_checkpoints")"
done
dup_inbox=$(q "SELECT count(*) FROM (SELECT 1 FROM notifications.inbox GROUP BY user_id, event_id HAVING count(*) > 1) d")
[ "$dup_inbox" = 0 ] || db_problems+=("$dup_inbox inbox rows repeated for one user and event")
dup_fires=$(q "SELECT count(*) FROM (SELECT 1 FROM scheduler.fires GROUP BY alarm_id, kind, occurrence_at, offset_minutes, snooze_count HAVING count(*) > 1) d")
[ "$dup_fires" = 0 ] || db_problems+=("$dup_fires fires recorded twice")
printf '%s\n' ${db_problems[@]+"${db_problems[@]}"} > "$out/db-problems.txt"

cat "$out/report.txt" >&2
python3 - "$out" "$faults" "$unrecovered" "${#db_problems[@]}" "$load_status" <<'EOF'
import json, sys
out, faults, unrecovered, db_problems, load_status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
r = json.load(open(f"{out}/report.json"))
p = r["pushes"]
planned = p["expectedFirePushes"] + p["expectedCompletionPushes"]
delivered = p["receivedFirePushes"] + p["receivedCompletionPushes"]
lost = p["lostFirePushes"] + p["lostCompletionPushes"]
dup = p["duplicateFirePushes"] + p["duplicateCompletionPushes"]
early = p.get("earlyFirePushes", 0)
times = sorted(float(l.split()[1]) for l in open(f"{out}/recovery.txt") if l.split()[1] != "unrecovered")
p99 = times[min(len(times) - 1, int(0.99 * len(times)))] if times else 0.0
by_class = {}
for l in open(f"{out}/recovery.txt"):
    c, t = l.split()
    by_class.setdefault(c, []).append(t)
for c, ts in sorted(by_class.items()):
    ok = sorted(float(t) for t in ts if t != "unrecovered")
    med = ok[len(ok) // 2] if ok else 0.0
    print(f"  {c:5} episodes {len(ts):3}  recovered {len(ok):3}  recovery p50 {med:5.1f} s  max {max(ok) if ok else 0:5.1f} s", file=sys.stderr)
for line in open(f"{out}/db-problems.txt"):
    if line.strip(): print(f"  database: {line.strip()}", file=sys.stderr)
if r.get("serverErrors"): print(f"  {r['serverErrors']} responses were 5xx", file=sys.stderr)
print(f"soak: planned {planned}, delivered {delivered}, lost {lost}, duplicated {dup}, early {early}, "
      f"faults {faults}, recovered {faults - unrecovered}, recovery p99 {p99:.1f} s")
ok = lost == 0 and dup == 0 and early == 0 and unrecovered == 0 and db_problems == 0 and faults > 0
sys.exit(0 if ok else 1)
EOF
