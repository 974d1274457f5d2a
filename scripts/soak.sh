#!/usr/bin/env bash
# A chaos soak with an oracle per receiver and per id (issues 58, 75): the suite (`make run`'s
# scripts/run.sh) on its embedded, durable PostgreSQL (fsync on) with N replicas of every
# service and the gateway; `chronirctl load --check` drives users in groups, each device with a
# live stream that also drops and resumes at random; and a schedule of faults drawn from the
# seed alone (scripts/soak_plan.py: classes, victims, and instants aligned to the stages of the
# fire and completion paths). docs/reliability.md describes it; the acceptance is its last line.
#   scripts/soak.sh [--minutes M] [--seed S] [--replicas N] [--users U] [--late-bound SECONDS]
#                   [--no-faults] [-- chronirctl load options…]
# The oracle:
#   - chronirctl load's audit: every fire and completion push reaches exactly its members once
#     (each receiver and id, against the suite's record and each client's inbox), every inbox
#     row reaches its client's stream, ids strictly increase, nothing misrouted or early, every
#     alarm creation and completion succeeded, no 5xx or transport error left unrecovered;
#   - fire lateness under --late-bound (default 60 s);
#   - the database: every stream numbered densely and committed in its numbers' order
#     (track_commit_timestamp); after the drain, every consumer checkpoint
#     equal to its producer's head; no dead letter; heads and checkpoints sampled each second
#     never went back;
#   - every episode recovered within 60 s, by work: the victim answers its readiness probe and
#     every consumer checkpoint has reached the heads its producers had when the fault ended.
# Last line: `soak: planned P, delivered D, lost L, duplicated U, early E, misrouted M, late T,
# faults F (C classes), recovered R, recovery p50 X s, p99 Y s`. Exit 0 when every check
# passes, 1 when one fails (with the command that replays the run), 2 when the run could not
# start (the suite or the load's set-up failed: nothing was judged). CHRONIR_BUILD_CONFIG
# (default release; debug reuses `make test`'s build). Results in .run/soak/.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=6
seed=7
replicas=2
users=200
late_bound=60
faults_on=1
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --replicas) replicas=$2; shift 2 ;;
        --users) users=$2; shift 2 ;;
        --late-bound) late_bound=$2; shift 2 ;;
        --no-faults) faults_on=""; shift ;;
        --) shift; break ;;
        *) echo "unknown option $1" >&2; exit 64 ;;
    esac
done
[ "$replicas" -ge 2 ] || { echo "--replicas must be at least 2 (a fault takes one down)" >&2; exit 64; }
case "$seed" in ''|*[!0-9]*) echo "--seed is a number" >&2; exit 64 ;; esac
out=.run/soak
rm -rf "$out" && mkdir -p "$out"
# Where the run's time goes (printed at the end, and in $out/timeline.txt): each phase's end, in
# seconds after the start.
soak_t0=$(date +%s)
phase() { echo "$1 $(( $(date +%s) - soak_t0 ))" >> "$out/timeline.txt"; }
export CHRONIR_BUILD_CONFIG=${CHRONIR_BUILD_CONFIG:-release} CHRONIR_REPLICAS=$replicas CHRONIR_RUN_OUTLIVE=1
export CHRONIR_TRACE_DIR="" CHRONIR_TRACE_SAMPLE=0 CHRONIR_LOG_LEVEL=${CHRONIR_LOG_LEVEL:-notice}
export CHRONIR_ALARM_CREATIONS_PER_MINUTE=${CHRONIR_ALARM_CREATIONS_PER_MINUTE:-100000}
export CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=10000000 CHRONIR_CONNECTIONS_PER_ADDRESS=0 CHRONIR_LIVE_STREAMS_PER_ACCOUNT=1000000
export CHRONIR_BUS_KEYS=${CHRONIR_BUS_KEYS:-$PWD/.run/keys}
# The set-up's 200 sign-ups at the Swift tests' hash cost: the soak judges fires, not hashing.
export CHRONIR_SCRYPT_LOG_N=${CHRONIR_SCRYPT_LOG_N:-10}
# A PostgreSQL of its own, empty at every start: the database checks read everything in it.
export CHRONIR_PG_PORT=${CHRONIR_PG_PORT:-55434} CHRONIR_PG_DIR=${CHRONIR_PG_DIR:-.run/soak-pg}
# Each row's commit time, so the database checks can see the order streams were committed in.
export CHRONIR_PG_OPTS="${CHRONIR_PG_OPTS:-} -c track_commit_timestamp=on"
pg_port=$CHRONIR_PG_PORT
pg_dir=$CHRONIR_PG_DIR
scripts/pg.sh stop "$pg_dir" >/dev/null 2>&1 || true
rm -rf "$pg_dir"
http_port=${CHRONIR_HTTP_PORT:-8080}
lead=10   # CHRONIR_FIRE_LEAD's default: the fire path runs this long before each instant
urls=http://127.0.0.1:$http_port
for k in $(seq 2 "$replicas"); do urls="$urls,http://127.0.0.1:$((http_port + 10 * (k - 1)))"; done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
replay="scripts/soak.sh --minutes $minutes --seed $seed --replicas $replicas --users $users --late-bound $late_bound"
[ -n "$faults_on" ] || replay="$replay --no-faults"
[ $# -eq 0 ] || replay="$replay -- $*"

# The fault schedule, from the seed alone: printed first, so two runs can be compared.
if [ -n "$faults_on" ]; then
    python3 scripts/soak_plan.py --seed "$seed" --minutes "$minutes" --replicas "$replicas" --lead "$lead" > "$out/schedule.txt"
else
    : > "$out/schedule.txt"
fi
echo "soak: seed $seed, $(wc -l < "$out/schedule.txt") episodes (seconds after the first due instant, class, victim, parameter, pick, stage):" >&2
sed 's/^/  /' "$out/schedule.txt" >&2
if [ -n "$faults_on" ] && ! command -v iptables >/dev/null && grep -q ' blackhole ' "$out/schedule.txt"; then
    echo "soak: the schedule blackholes bus links and iptables is missing (apt-get install iptables)" >&2
    exit 2
fi

# cannot_start WHY: the run never reached its window; nothing was judged.
cannot_start() {
    echo "$1" >&2
    echo "soak: could not start (nothing was judged); replay with: $replay" >&2
    exit 2
}

scripts/run.sh > "$out/suite.log" 2>&1 &
suite=$!
cleanup() {
    # Whatever fails here (a process already gone) must not change the verdict's exit status.
    set +e
    # Episodes still running, the processes they started, bus links still cut, frozen victims.
    for pid in $(jobs -p); do [ "$pid" = "$suite" ] || kill -TERM "$pid" 2>/dev/null || true; done
    if [ -f "$out/restarted.pids" ]; then
        while read -r pid; do kill -CONT "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; done < "$out/restarted.pids"
        # Gone before the next run takes their ports (15 s, then SIGKILL).
        for _ in $(seq 1 150); do
            left=0
            while read -r pid; do [ -d "/proc/$pid" ] && left=1; done < "$out/restarted.pids"
            [ $left = 1 ] || break
            sleep 0.1
        done
        while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done < "$out/restarted.pids"
    fi
    if [ -f "$out/blackholes" ]; then
        while read -r rule; do iptables -w -D INPUT $rule 2>/dev/null || true; done < "$out/blackholes"
    fi
    for f in .run/pids/*.pid; do [ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null || true; done
    kill -TERM $suite 2>/dev/null || true
    wait $suite 2>/dev/null || true
}
trap cleanup EXIT
until grep -q "API ready" "$out/suite.log"; do
    kill -0 $suite 2>/dev/null || { tail -50 "$out/suite.log" >&2; cannot_start "soak: the suite did not start"; }
    sleep 1
done
phase "suite-ready"
bin=${CHRONIR_BIN_DIR:-$(swift build -c "$CHRONIR_BUILD_CONFIG" --show-bin-path)}
alarms=$((minutes * 60))
"$bin/chronirctl" load --url "$urls" --users "$users" --alarms "$alarms" --window "$minutes" --seed "$seed" --check \
    --reconnect-every 20 --spike $((alarms / minutes)) --lead 45 --drain 45 --json-file "$out/report.json" "$@" \
    2> >(tee "$out/progress.log" >&2) > "$out/report.txt" &
load=$!
until grep -q "due from" "$out/progress.log" 2>/dev/null; do
    if ! kill -0 $load 2>/dev/null; then
        wait $load || true
        cannot_start "soak: the load did not reach its window ($(grep -h 'could not start\|failed' "$out/progress.log" | tail -1))"
    fi
    sleep 1
done
start=$(date -d "$(grep -o 'due from [^ ]*' "$out/progress.log" | head -1 | cut -d' ' -f3)" +%s)
phase "load-set-up"

psql=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)
db="postgres://postgres@127.0.0.1:$pg_port/chronir"
q() { "$psql" -X -A -t -q -v ON_ERROR_STOP=1 "$db" -c "$1"; }
schemas=(accounts alarms scheduler notifications invitations billing)
consumers=()
for s in "${schemas[@]}"; do
    [ "$(q "SELECT to_regclass('$s.consumer_checkpoints') IS NOT NULL")" = t ] && consumers+=("$s")
done
# One statement for every producer's head and every consumer's checkpoint:
#   head <producer schema> <stream> <last_seq>  /  checkpoint <consumer schema> <stream> <seq>
positions_sql=""
for s in "${schemas[@]}"; do positions_sql+="SELECT 'head', '$s', stream, last_seq FROM $s.outbox_streams UNION ALL "; done
for s in "${consumers[@]}"; do positions_sql+="SELECT 'checkpoint', '$s', stream, seq FROM $s.consumer_checkpoints UNION ALL "; done
positions_sql=${positions_sql% UNION ALL }
positions() { "$psql" -X -A -t -q -F ' ' -v ON_ERROR_STOP=1 "$db" -c "$positions_sql" 2>/dev/null; }
# caught_up HEADS: every checkpoint at or past the head its stream had in HEADS (`positions` output).
caught_up() {
    local now_positions
    now_positions=$(positions) || return 1
    awk 'NR == FNR { if ($1 == "head") head[$3] = $4; next }
         $1 == "checkpoint" && ($3 in head) && $4 < head[$3] { behind = 1 }
         END { exit behind }' <(echo "$1") <(echo "$now_positions")
}

log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/faults.log" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
sleep_until() { local d; d=$(awk -v t="$1" -v n="$(now)" 'BEGIN { d = t - n; print (d > 0 ? d : 0) }'); sleep "$d"; }
rpc_port() {   # NAME-K → its request port (ServiceDirectory.swift)
    local svc=${1%-*} k=${1##*-} base
    case "$svc" in accounts) base=7101 ;; alarms) base=7102 ;; scheduler) base=7103 ;; notifications) base=7104 ;;
        invitations) base=7105 ;; billing) base=7106 ;; esac
    echo $((base + 10 * (k - 1)))
}
# serves NAME: its readiness answers 200 (a gateway's /healthz, a service's ops /readyz); empty
# NAME: every gateway's.
serves() {
    local k
    if [ -z "$1" ]; then
        for k in $(seq 1 "$replicas"); do
            curl -fsS -m 2 "http://127.0.0.1:$((http_port + 10 * (k - 1)))/healthz" >/dev/null 2>&1 || return 1
        done
    elif [[ $1 == gateway-* ]]; then
        curl -fsS -m 2 "http://127.0.0.1:$((http_port + 10 * (${1##*-} - 1)))/healthz" >/dev/null 2>&1
    else
        curl -fsS -m 2 "http://127.0.0.1:$(($(rpc_port "$1") + 2000))/readyz" >/dev/null 2>&1
    fi
}
# relaunch NAME VARS_FILE [VAR=VALUE…]: starts NAME again with the environment it had.
relaunch() {
    local name=$1 vars_file=$2; shift 2
    local -a vars
    readarray -d '' vars < "$vars_file"
    env -i "${vars[@]}" "$@" "$(cat "$out/exe.$name")" >> ".run/logs/$name.log" 2>&1 &
    echo $! > ".run/pids/$name.pid"
    echo $! >> "$out/restarted.pids"
    echo $!
}
remember() {   # NAME PID: keep its environment and binary for relaunch
    cat "/proc/$2/environ" > "$out/env.$1"
    readlink "/proc/$2/exe" > "$out/exe.$1"
}

# episode N AT CLASS VICTIM PARAM PICK STAGE: waits for AT (seconds after the first due
# instant), injects the fault, ends it, and measures recovery by work.
episode() {
    local n=$1 at=$2 class=$3 victim=$4 param=$5 pick=$6 stage=$7 pid newpid serve="" t0 heads r
    # Its own subshell: a step that fails (a victim already gone) must not end the episode
    # before its recovery is measured.
    set +e
    sleep_until "$(awk -v s="$start" -v a="$at" 'BEGIN { printf "%.3f", s + a }')"
    case "$class" in
    kill)
        pid=$(cat ".run/pids/$victim.pid"); remember "$victim" "$pid"
        kill -KILL "$pid"
        log "#$n $stage: kill $victim (pid $pid), down ${param}s"
        sleep "$param"
        relaunch "$victim" "$out/env.$victim" > /dev/null
        serve=$victim ;;
    stop)
        pid=$(cat ".run/pids/$victim.pid")
        log "#$n $stage: stop $victim (pid $pid) for ${param}s"
        kill -STOP "$pid"; sleep "$param"; kill -CONT "$pid"
        serve=$victim ;;
    pg)
        log "#$n $stage: PostgreSQL restart ($param)"
        scripts/pg.sh restart "$pg_dir" "$param" ;;
    failpoint)
        local svc=${victim%-*} streams stream
        # The streams of the fire and completion paths first (a quiet one may never reach the failpoint).
        mapfile -t streams < <(q "SELECT stream FROM $svc.consumer_checkpoints WHERE stream IN ('alarms', 'scheduler')
                                  UNION ALL SELECT stream FROM $svc.consumer_checkpoints
                                  WHERE NOT EXISTS (SELECT 1 FROM $svc.consumer_checkpoints WHERE stream IN ('alarms', 'scheduler'))
                                  ORDER BY 1" 2>/dev/null || true)
        if [ ${#streams[@]} -eq 0 ]; then
            log "#$n $stage: failpoint: $svc consumes no stream yet; a kill instead"
            streams=("")
        fi
        stream=${streams[pick % ${#streams[@]}]}
        pid=$(cat ".run/pids/$victim.pid"); remember "$victim" "$pid"
        kill -KILL "$pid"
        if [ -n "$stream" ]; then
            newpid=$(relaunch "$victim" "$out/env.$victim" CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT="$stream:$param")
            log "#$n $stage: failpoint $victim: SIGKILL before the checkpoint of its ${param}th application of $stream"
            # It kills itself inside a consumer transaction; a stream that stays quiet for 30 s
            # does not reach it: killed then all the same.
            local t=0
            while [ -d "/proc/$newpid" ] && ! grep -q '^State:.*[XZ]' "/proc/$newpid/status" 2>/dev/null && [ $t -lt 300 ]; do
                sleep 0.1; t=$((t + 1))
            done
            if [ $t -ge 300 ]; then log "  #$n: the failpoint was not reached in 30 s; SIGKILL"; kill -KILL "$newpid" 2>/dev/null || true; fi
        fi
        sleep 1
        relaunch "$victim" "$out/env.$victim" > /dev/null
        serve=$victim ;;
    blackhole)
        local p=$(rpc_port "$victim") rule rules=()
        if ! iptables -w -L INPUT -n >/dev/null 2>&1; then
            # A machine that denies this process the netfilter rights (no CAP_NET_ADMIN).
            log "#$n $stage: blackhole $victim SKIPPED: iptables is not usable here"
            echo "$class skipped $victim $stage" >> "$out/recovery.txt"
            return
        fi
        rules=("-i lo -p tcp --dport $p -j DROP" "-i lo -p tcp --sport $p -j DROP"
               "-i lo -p tcp --dport $((p + 100)) -j DROP" "-i lo -p tcp --sport $((p + 100)) -j DROP")
        for rule in "${rules[@]}"; do echo "$rule" >> "$out/blackholes"; iptables -w -I INPUT $rule; done
        log "#$n $stage: blackhole $victim's bus ports $p and $((p + 100)) for ${param}s"
        sleep "$param"
        for rule in "${rules[@]}"; do iptables -w -D INPUT $rule || true; done
        serve=$victim ;;
    clock)
        # libfaketime steps the wall clock only (CLOCK_REALTIME; the monotonic clock, which the
        # services carry their database-clock readings by, is left alone).
        local lib
        lib=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1)
        if [ -z "$lib" ]; then
            log "#$n $stage: clock $victim SKIPPED: libfaketime is not installed"
            echo "$class skipped $victim $stage" >> "$out/recovery.txt"
            return
        fi
        pid=$(cat ".run/pids/$victim.pid"); remember "$victim" "$pid"
        kill -KILL "$pid"
        newpid=$(relaunch "$victim" "$out/env.$victim" LD_PRELOAD="$lib" FAKETIME="$( [ "$param" -ge 0 ] && echo +)${param}s" \
                 FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_RESET=1)
        log "#$n $stage: clock of $victim stepped ${param}s (libfaketime) for 20s"
        sleep 20
        kill -KILL "$newpid" 2>/dev/null || true
        relaunch "$victim" "$out/env.$victim" > /dev/null
        serve=$victim ;;
    conns)
        log "#$n $stage: every database connection of $victim terminated"
        q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'chronir_$victim'" > /dev/null || true ;;
    esac
    t0=$(now)
    heads=""
    while [ -z "$heads" ] && awk -v a="$(now)" -v b="$t0" 'BEGIN { exit !(a - b < 60) }'; do heads=$(positions) || sleep 0.2; done
    r=""
    while awk -v a="$(now)" -v b="$t0" 'BEGIN { exit !(a - b < 60) }'; do
        if serves "$serve" && [ -n "$heads" ] && caught_up "$heads"; then r=$(since "$t0"); break; fi
        sleep 0.2
    done
    if [ -n "$r" ]; then
        echo "$class $r $victim $stage" >> "$out/recovery.txt"
        log "  #$n recovered in ${r}s (serving, consumers at their producers' heads)"
    else
        echo "$class unrecovered $victim $stage" >> "$out/recovery.txt"
        log "  #$n NOT recovered within 60 s"
    fi
}

: > "$out/recovery.txt"
# Heads and checkpoints each second, to see any go back.
( while kill -0 $load 2>/dev/null; do positions | sed "s/^/$(date +%s) /" >> "$out/positions.txt" || true; sleep 1; done ) &
sampler=$!
n=0
episode_pids=()
while read -r at class victim param pick stage; do
    n=$((n + 1))
    episode "$n" "$at" "$class" "$victim" "$param" "$pick" "$stage" &
    episode_pids+=($!)
done < "$out/schedule.txt"
for pid in ${episode_pids[@]+"${episode_pids[@]}"}; do wait "$pid" || true; done
log "faults done: $n episodes"
load_status=0
wait $load || load_status=$?
phase "load-done"
kill $sampler 2>/dev/null || true
# 3: the load's set-up failed (after its window was announced): nothing was judged.
[ "$load_status" != 3 ] || cannot_start "soak: the load's set-up failed ($(grep -h 'could not start' "$out/progress.log" | tail -1))"

# The database's side of the oracle, as the superuser, on the suite's database.
db_problems=()
for s in "${schemas[@]}"; do
    # A fresh database, and heads move with their rows: numbers 1…head, each once.
    row=$(q "SELECT count(*), count(DISTINCT seq), coalesce(min(seq), 0), coalesce(max(seq), 0),
                    (SELECT coalesce(max(last_seq), 0) FROM $s.outbox_streams)
             FROM $s.outbox WHERE seq IS NOT NULL") || { db_problems+=("stream $s: unreadable"); continue; }
    IFS='|' read -r cnt distinct lo hi head <<< "$row"
    if [ "$cnt" != "$distinct" ] || [ "$hi" != "$head" ] || { [ "$cnt" -gt 0 ] && { [ "$lo" != 1 ] || [ $((hi - lo + 1)) != "$cnt" ]; }; }; then
        db_problems+=("stream $s: $cnt rows, $distinct numbers, $lo…$hi, head $head (not 1…head once each)")
    fi
    # Committed in their numbers' order: a number is taken under the stream's lock, held until
    # COMMIT, so a row never commits after a higher one. A reader of "after my checkpoint" (the
    # relay, a consumer's replay) would otherwise pass over a row that commits later below it;
    # the consumers' gap replay heals that, so the lost rows would not show in the load's audit.
    # (Each row's last writer: the transaction that numbered it, at commit or in the relay.)
    row=$(q "SELECT count(*), coalesce(min(seq), 0) FROM (
                 SELECT seq, pg_xact_commit_timestamp(xmin) AS at,
                        max(pg_xact_commit_timestamp(xmin)) OVER (PARTITION BY stream ORDER BY seq
                                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
                 FROM $s.outbox WHERE seq IS NOT NULL) r WHERE at < before") || { db_problems+=("stream $s: commit order unreadable"); continue; }
    IFS='|' read -r late first <<< "$row"
    [ "$late" = 0 ] || db_problems+=("stream $s: $late rows committed before a lower number (the first: $first): numbered outside the stream's lock")
done
# After the drain every consumer reaches its producer's head (a minute at most; nothing is
# written now): one read in which every checkpoint equals its head, or the last read's differences.
final=""
for _ in $(seq 1 60); do
    final=$(positions) || { final=""; sleep 1; continue; }
    behind=$(echo "$final" | awk '$1 == "head" { head[$3] = $4 } $1 == "checkpoint" { cp[$2 " " $3] = $4 }
        END { for (k in cp) { split(k, p, " "); if ((p[2] in head) && cp[k] != head[p[2]]) print p[1] "'"'"'s checkpoint of " p[2] " is " cp[k] " after the drain, its head " head[p[2]] } }')
    [ -n "$behind" ] || break
    sleep 1
done
if [ -z "$final" ]; then
    db_problems+=("heads and checkpoints unreadable after the drain")
elif [ -n "$behind" ]; then
    while read -r line; do db_problems+=("$line"); done <<< "$behind"
fi
echo "$final" > "$out/final-positions.txt"
for s in "${consumers[@]}"; do
    d=$(q "SELECT count(*) FROM $s.consumer_dead_letters") || { db_problems+=("$s's dead letters unreadable"); continue; }
    [ "$d" = 0 ] || db_problems+=("$s holds $d dead letters ($(q "SELECT string_agg(DISTINCT stream || ': ' || left(reason, 80), '; ') FROM $s.consumer_dead_letters" || true))")
done
printf '%s\n' ${db_problems[@]+"${db_problems[@]}"} > "$out/db-problems.txt"

phase "database-checked"
cat "$out/report.txt" >&2
echo "soak: timeline (seconds after the start): $(awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }' "$out/timeline.txt"); first due instant at $(( start - soak_t0 ))" >&2
rc=0
python3 scripts/soak_verdict.py "$out" "$load_status" "$late_bound" || rc=$?
[ $rc -eq 0 ] || echo "soak: a check failed; replay with: $replay" >&2
exit $rc
