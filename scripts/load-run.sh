#!/usr/bin/env bash
# A load run against `make run` (release, unless CHRONIR_BUILD_CONFIG says debug): starts the suite, runs `chronirctl load`, optionally
# SIGKILLs one replica of every service in turn during the run, prints one sampled trace, stops
# the suite.
#   scripts/load-run.sh [--replicas N] [--scheduler-only] [--kill-at SECONDS] [--kill-every SECONDS] [--cpu] [--perf]
#                       [-- chronirctl load options…]
# --replicas N: N replicas of every service and the gateway (CHRONIR_REPLICAS; the generator
# spreads its devices over the gateways); --scheduler-only: of the scheduler alone, as before.
# --kill-at: seconds after the window's first due minute at which the first replica is killed
# (default with --replicas > 1: 2 s before the spike minute); then replica 2 of scheduler,
# alarms, notifications, accounts, invitations, billing and the gateway, one every --kill-every
# seconds (default 5; with --scheduler-only, scheduler-2 alone). --cpu: CPU seconds per process
# from 1 s before the spike minute to 10 s after it (scripts/cpu-window.py), in .run/load/cpu.txt.
# --perf: a system-wide `perf record -g` from 1 s before the spike minute for 8 s, summarised per
# process (scripts/perf-summary.py) in .run/load/perf.txt (needs `perf`, apt linux-perf).
# Results in .run/load/.
set -euo pipefail
cd "$(dirname "$0")/.."
replicas=1
kill_at=""
kill_every=5
scheduler_only=""
cpu=""
perf=""
while [ $# -gt 0 ]; do
    case "$1" in
        --replicas) replicas=$2; shift 2 ;;
        --kill-at) kill_at=$2; shift 2 ;;
        --kill-every) kill_every=$2; shift 2 ;;
        --scheduler-only) scheduler_only=1; shift ;;
        --cpu) cpu=1; shift ;;
        --perf) perf=1; shift ;;
        --) shift; break ;;
        *) break ;;
    esac
done
out=.run/load
rm -rf "$out" && mkdir -p "$out/traces"
export CHRONIR_BUILD_CONFIG=${CHRONIR_BUILD_CONFIG:-release} CHRONIR_SCHEDULER_REPLICAS=$replicas CHRONIR_TRACE_DIR=$PWD/$out/traces
victims="scheduler-2"
urls=http://127.0.0.1:${CHRONIR_HTTP_PORT:-8080}
unset CHRONIR_REPLICAS   # --replicas decides (a value left in the environment would replicate what is not killed)
if [ "$replicas" -gt 1 ] && [ -z "$scheduler_only" ]; then
    export CHRONIR_REPLICAS=$replicas
    victims="scheduler-2 alarms-2 notifications-2 accounts-2 invitations-2 billing-2 gateway-2"
    for k in $(seq 2 "$replicas"); do urls="$urls,http://127.0.0.1:$(( ${CHRONIR_HTTP_PORT:-8080} + 10 * (k - 1) ))"; done
fi
export CHRONIR_TRACE_SAMPLE=${CHRONIR_TRACE_SAMPLE:-0} CHRONIR_ALARM_CREATIONS_PER_MINUTE=${CHRONIR_ALARM_CREATIONS_PER_MINUTE:-2000}
export CHRONIR_LOG_LEVEL=${CHRONIR_LOG_LEVEL:-warning}
# The gateway at notice: each live-stream buffer overflow, resync and skip is logged (.run/logs/gateway*.log).
export CHRONIR_GATEWAY_LOG_LEVEL=${CHRONIR_GATEWAY_LOG_LEVEL:-notice}
export CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=${CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR:-10000000}   # every user signs up from 127.0.0.1
# The generator is one address with thousands of connections and live streams.
export CHRONIR_CONNECTIONS_PER_ADDRESS=${CHRONIR_CONNECTIONS_PER_ADDRESS:-0} CHRONIR_LIVE_STREAMS_PER_ACCOUNT=${CHRONIR_LIVE_STREAMS_PER_ACCOUNT:-1000000}
export CHRONIR_BUS_KEYS=${CHRONIR_BUS_KEYS:-$PWD/.run/keys}   # make run generates them; chronirctl load uses the operator key
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# Handshakes the kernel dropped because a listen queue was full (the gateway's backlog), over the run.
overflows() { awk '/^TcpExt:/ { if (!h) { split($0, n); h = 1 } else { for (i = 2; i <= NF; i++) if (n[i] == "ListenOverflows") print $i } }' /proc/net/netstat; }
overflows_before=$(overflows)
scripts/run.sh > "$out/suite.log" 2>&1 &
suite=$!
trap 'kill -TERM $suite 2>/dev/null; wait $suite 2>/dev/null || true' EXIT
until grep -q "API ready" "$out/suite.log"; do
    kill -0 $suite 2>/dev/null || { cat "$out/suite.log"; exit 1; }
    sleep 1
done
ctl=${CHRONIR_BIN_DIR:-$(swift build -c "$CHRONIR_BUILD_CONFIG" --show-bin-path)}/chronirctl
# --check: the run fails (after its report) on any push lost, duplicated or misrouted against the
# clients' inboxes, any failed completion, 5xx or unrecovered transport error.
"$ctl" load --check --url "$urls" --trace-sample 0.01 --json-file "$out/report.json" "$@" 2> >(tee "$out/progress.log" >&2) > "$out/report.txt" &
load=$!
if [ "$replicas" -gt 1 ] || [ -n "$cpu" ] || [ -n "$perf" ]; then
    until grep -q "spike at" "$out/progress.log" 2>/dev/null; do kill -0 $load 2>/dev/null || break; sleep 1; done
    start=$(date -d "$(grep -o 'due from [^ ]*' "$out/progress.log" | head -1 | cut -d' ' -f3)" +%s)
    spike=$(date -d "$(grep -o 'spike at [^)]*' "$out/progress.log" | head -1 | cut -d' ' -f3)" +%s)
fi
if [ -n "$cpu" ]; then
    python3 scripts/cpu-window.py "$spike" 10 > "$out/cpu.txt" &
    sampler=$!
fi
if [ -n "$perf" ]; then
    ( while [ "$(date +%s)" -lt "$((spike - 1))" ]; do sleep 0.2; done
      perf record -a -g -F 499 -o "$out/perf.data" -- sleep 8 > "$out/perf-record.log" 2>&1 ) &
    profiler=$!
fi
if [ "$replicas" -gt 1 ]; then
    if [ -n "$kill_at" ]; then at=$((start + kill_at)); else at=$((spike - 2)); fi
    for victim in $victims; do
        while [ "$(date +%s)" -lt "$at" ]; do sleep 0.2; done
        pid=$(cat ".run/pids/$victim.pid")
        kill -KILL "$pid"
        echo "[$(date -u +%H:%M:%S)] SIGKILL $victim (pid $pid)" | tee -a "$out/progress.log" >&2
        at=$((at + kill_every))
    done
fi
status=0
wait $load || status=$?
[ -z "$cpu" ] || wait $sampler
# The gateways' live-stream counters (drops, resyncs, replays and gaps of their notifications
# consumer), from each one's ops port, into the run's results. A counter not yet incremented is
# absent (0). A replica killed during the run has lost its counters.
{
    echo "gateway live-stream counters at the end of the run:"
    for k in $(seq 1 "${CHRONIR_REPLICAS:-1}"); do
        ops=$((9100 + 10 * (k - 1)))
        if metrics=$(curl -fsS --max-time 5 "http://127.0.0.1:$ops/metrics" 2>/dev/null); then
            live=$(echo "$metrics" | grep -E '^chronir_gateway_live_|^chronir_(events|consumer)_[a-z_]+\{[^}]*stream="notifications"' || true)
            if [ -n "$live" ]; then echo "$live" | sed "s/^/  gateway $k: /"
            else echo "  gateway $k: no live-stream counter incremented (no drop, resync, replay or gap)"; fi
        else
            echo "  gateway $k: metrics unreachable on :$ops"
        fi
    done
} > "$out/gateway-metrics.txt"
if [ -n "$perf" ]; then
    wait $profiler
    # Summarised after the run (perf script is heavy), while the pid files still name the suite.
    perf script -i "$out/perf.data" -F comm,pid,tid,ip,sym 2>/dev/null | python3 scripts/perf-summary.py .run/pids 25 > "$out/perf.txt"
fi
cat "$out/report.txt"
echo "listen queue overflows during the run (TcpExtListenOverflows): $(( $(overflows) - overflows_before ))" | tee -a "$out/report.txt"
tee -a "$out/report.txt" < "$out/gateway-metrics.txt"
[ -z "$cpu" ] || cat "$out/cpu.txt"
trace=$(python3 -c "import json; t=json.load(open('$out/report.json'))['sampledTraces']; print(next((x['traceId'] for x in t if x['operation']=='POST /v1/alarms'), t[0]['traceId'] if t else ''))")
if [ -n "$trace" ]; then
    sleep 1
    echo "chronirctl trace $trace"
    "$ctl" trace "$trace" --files "$out"/traces/*.jsonl | tee "$out/trace.txt" | head -40
fi
if [ "$status" -ne 0 ]; then
    echo "load-run: the load's check failed (exit $status): $(grep 'load check failed' "$out/progress.log" | tail -1)" >&2
    exit "$status"
fi
