#!/usr/bin/env bash
# `make run`: the whole suite on this machine.
# Installs missing packages, starts a local PostgreSQL under .run/pg when DATABASE_URL is not
# set, builds, starts every service and the gateway, prints the API address, and stops
# everything on Ctrl-C / SIGTERM (exit 0, "stopped").
#   CHRONIR_BUILD_CONFIG=release   build and run release binaries (load tests)
#   CHRONIR_REPLICAS=2             replicas of every service and the gateway (each on its own ports:
#                                  ServiceDirectory.swift; gateway k on CHRONIR_HTTP_PORT + 10 × (k − 1))
#   CHRONIR_SCHEDULER_REPLICAS=3   scheduler replicas (CHRONIR_<SERVICE>_REPLICAS for any one service)
#   CHRONIR_TRACE_DIR=DIR          each process writes its spans to DIR/<name>.jsonl (default .run/traces,
#                                  where `chronirctl trace <id>` looks; empty: no span files)
#   CHRONIR_BUS_KEYS=DIR           the CurveZMQ keys of the bus (default .run/keys, generated on first start)
#   CHRONIR_HTTP_PORT=8080         the gateway's HTTP port
#   CHRONIR_PG_PORT=55433          the embedded PostgreSQL's port
#   CHRONIR_PG_DIR=.run/pg         its data directory (delete it, or `make clean`, to start from an empty database)
#   CHRONIR_STOP_TIMEOUT=15        seconds the services get to stop before SIGKILL
#   CHRONIR_RUN_OUTLIVE=1          keep running when any process exits (a chaos run restarts what it kills)
#   CHRONIR_BIN_DIR=DIR            run the binaries in DIR as they are, no build (A/B runs of two
#                                  commits: copy each one's bin directory aside, then alternate)
# Services bind loopback only (CHRONIR_BIND_HOST=* to listen on every interface).
# Process ids are written to .run/pids/<name>.pid (scheduler-1, scheduler-2, …; a service with
# several replicas: alarms-1, alarms-2, …). Replica 1 of each service is the suite; the suite
# outlives any other replica (kill one to see the others take over).
# The build's output goes to .run/logs/build.log; a failed build stops here with the compiler's errors.
# Exit status: 0 when stopped by a signal; 1 when the build failed, the suite did not become
# healthy or a service exited on its own (named, with the end of its log).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

config=${CHRONIR_BUILD_CONFIG:-debug}
http_port=${CHRONIR_HTTP_PORT:-8080}
pg_port=${CHRONIR_PG_PORT:-55433}
pg_dir=${CHRONIR_PG_DIR:-.run/pg}   # the embedded PostgreSQL's data directory
stop_timeout=${CHRONIR_STOP_TIMEOUT:-15}
services="accounts alarms notifications invitations billing"
all_replicas=${CHRONIR_REPLICAS:-1}
# replicas_of SERVICE: CHRONIR_<SERVICE>_REPLICAS, else CHRONIR_REPLICAS, else 1.
replicas_of() { local v="CHRONIR_${1^^}_REPLICAS"; echo "${!v:-$all_replicas}"; }
replicas=$(replicas_of scheduler)

pids=()         # the suite: any of them exiting on its own ends the run
spare_pids=()   # replicas beyond the first of each service: the suite outlives any of them (failover)
declare -A name_of=()   # pid → service name (for the messages)
build_pid=""
own_pg=""
stop_requested=""   # set by the signal handler: services going away are then expected
cleaned=""

# alive PID: the process exists and is not a zombie (kill -0 succeeds on an unreaped child).
alive() {
    kill -0 "$1" 2>/dev/null || return 1
    [ -r "/proc/$1/status" ] || return 0
    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# Stops everything this script started, once, whatever interrupts it: INT and TERM are ignored
# from here on (a second Ctrl-C or SIGTERM cannot leave PostgreSQL running), every process gets
# SIGTERM (the build SIGINT, which SwiftPM turns into a cancelled build, and SIGTERM 5 s later),
# up to CHRONIR_STOP_TIMEOUT seconds, then SIGKILL; then PostgreSQL if this script started it.
cleanup() {
    [ -z "$cleaned" ] || return 0
    cleaned=1
    trap '' INT TERM
    set +e
    local all=() left=() pid names
    if [ -n "$build_pid" ]; then all+=("$build_pid"); kill -INT "$build_pid" 2>/dev/null; fi
    for pid in ${pids[@]+"${pids[@]}"} ${spare_pids[@]+"${spare_pids[@]}"}; do
        all+=("$pid")
        kill -TERM "$pid" 2>/dev/null
    done
    if [ ${#all[@]} -gt 0 ] || [ -n "$own_pg" ]; then echo "stopping…" >&2; fi
    local deadline=$((SECONDS + stop_timeout)) build_term=$((SECONDS + 5))
    while [ ${#all[@]} -gt 0 ]; do
        left=()
        for pid in "${all[@]}"; do alive "$pid" && left+=("$pid"); done
        [ ${#left[@]} -gt 0 ] || break
        # A build that did not take the SIGINT (an ignored SIGINT is inherited) gets SIGTERM.
        if [ -n "$build_pid" ] && [ "$SECONDS" -ge "$build_term" ] && alive "$build_pid"; then
            kill -TERM "$build_pid" 2>/dev/null
            build_term=$((deadline + 1))
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            names=""
            for pid in "${left[@]}"; do names="$names ${name_of[$pid]:-$pid}"; done
            echo "still running after ${stop_timeout} s, killed:$names" >&2
            kill -KILL "${left[@]}" 2>/dev/null
            break
        fi
        sleep 0.2
    done
    for pid in ${all[@]+"${all[@]}"}; do wait "$pid" 2>/dev/null; done
    if [ -n "$own_pg" ]; then
        scripts/pg.sh stop "$pg_dir" || echo "could not stop PostgreSQL in $pg_dir" >&2
    fi
    echo "stopped" >&2
}
# Ctrl-C (make and the terminal send SIGINT to the whole process group) or SIGTERM: a requested
# stop, exit 0.
on_signal() {
    stop_requested=1
    trap '' INT TERM
    trap - EXIT
    cleanup
    exit 0
}
# Any other exit (a failed build, a service that died, set -e): clean up, keep the status.
on_exit() {
    local rc=$?
    trap '' INT TERM
    cleanup
    exit "$rc"
}
trap on_signal INT TERM
trap on_exit EXIT

scripts/deps.sh run
mkdir -p .run/logs .run/pids
rm -f .run/pids/*.pid

if [ -z "${DATABASE_URL:-}" ]; then
    own_pg=1   # before starting it: a signal during the start still stops it
    scripts/pg.sh start "$pg_dir" "$pg_port"
    admin=$(scripts/pg.sh url "$pg_port")
    scripts/provision.sh "$admin" chronir
    base="postgres://%s:%s@127.0.0.1:$pg_port/chronir"
else
    base=""
fi

# The build runs in the background so that a signal is handled at once (the trap stops it);
# its exit status, not the presence of an old binary, decides whether the suite starts.
build_log=.run/logs/build.log
if [ -n "${CHRONIR_BIN_DIR:-}" ]; then
    echo "running the binaries in $CHRONIR_BIN_DIR (CHRONIR_BIN_DIR: no build)" >&2
else
echo "building ($config)… (output in $build_log)" >&2
build_started=$SECONDS
swift build -c "$config" >"$build_log" 2>&1 &
build_pid=$!
name_of[$build_pid]="swift build"
build_rc=0
wait "$build_pid" || build_rc=$?
build_pid=""
if [ "$build_rc" -ne 0 ]; then
    echo "build failed (swift build exited $build_rc); the compiler's errors (full output in $build_log):" >&2
    if grep -q 'error:' "$build_log"; then
        grep 'error:' "$build_log" | awk '!seen[$0]++' | head -n 100 >&2
    else
        tail -n 30 "$build_log" >&2
    fi
    exit 1
fi
grep -E '^Build complete' "$build_log" | tail -n 1 >&2 || echo "built in $((SECONDS - build_started)) s" >&2
fi
bin=${CHRONIR_BIN_DIR:-$(swift build -c "$config" --show-bin-path)}
[ -x "$bin/gateway" ] || { echo "build failed: $bin/gateway is missing (see $build_log)" >&2; exit 1; }
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
# Every service finds the replicas of the others by their number (the ports: ServiceDirectory.swift).
for s in $services scheduler gateway; do
    n=$(replicas_of "$s")
    case "$n" in ''|*[!0-9]*|0) echo "CHRONIR_${s^^}_REPLICAS / CHRONIR_REPLICAS=$n: expected a number ≥ 1" >&2; exit 2 ;; esac
    # Replica k takes ports + 10 × (k − 1): an 11th would take the next service's (ServiceDirectory.swift).
    [ "$n" -le 10 ] || { echo "CHRONIR_${s^^}_REPLICAS / CHRONIR_REPLICAS=$n: at most 10 replicas on one machine" >&2; exit 2; }
    export "CHRONIR_${s^^}_REPLICAS=$n"
done
# Spans go to .run/traces/<name>.jsonl unless CHRONIR_TRACE_DIR says elsewhere (empty: nowhere).
CHRONIR_TRACE_DIR=${CHRONIR_TRACE_DIR-$PWD/.run/traces}
trace_env() { if [ -n "${CHRONIR_TRACE_DIR:-}" ]; then mkdir -p "$CHRONIR_TRACE_DIR"; echo "CHRONIR_TRACE_FILE=$CHRONIR_TRACE_DIR/$1.jsonl"; else echo "CHRONIR_TRACE_UNSET=1"; fi; }
# start NAME BINARY [VAR=VALUE…]: one process, logged to .run/logs/NAME.log, pid in .run/pids.
start() {
    local name=$1 binary=$2; shift 2
    env "$(trace_env "$name")" "$@" "$bin/$binary" >>".run/logs/$name.log" 2>&1 &
    # CHRONIR_RUN_OUTLIVE=1 (scripts/soak.sh): the suite outlives any of its processes, first
    # replicas and gateways included; whoever kills one starts it again.
    if [ -n "${CHRONIR_RUN_OUTLIVE:-}" ]; then spare_pids+=($!); else
        case "$name" in *-1|*[!0-9]) pids+=($!) ;; *) spare_pids+=($!) ;; esac
    fi
    name_of[$!]=$name
    echo $! > ".run/pids/$name.pid"
}
# died: the first process of the suite that is gone, with its name, exit status and the end of
# its log on stderr (status 1 when none is).
died() {
    local pid name status=0
    for pid in ${pids[@]+"${pids[@]}"}; do
        alive "$pid" && continue
        [ -z "$stop_requested" ] || return 1   # stopping: going away is expected
        name=${name_of[$pid]}
        wait "$pid" 2>/dev/null || status=$?
        echo "$name exited on its own (pid $pid, status $status)$1; the end of .run/logs/$name.log:" >&2
        tail -n 30 ".run/logs/$name.log" >&2 || true
        return 0
    done
    return 1
}
db_url() { if [ -n "$base" ]; then printf "$base" "chronir_$1" "chronir_$1"; else echo "$DATABASE_URL"; fi; }
for s in $services; do
    n=$(replicas_of "$s")
    if [ "$n" -eq 1 ]; then start "$s" "$s" DATABASE_URL="$(db_url "$s")"; continue; fi
    for k in $(seq 1 "$n"); do
        start "$s-$k" "$s" DATABASE_URL="$(db_url "$s")" CHRONIR_INSTANCE_ID="$s-$k" CHRONIR_REPLICA="$k"
    done
done
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
gateways=$(replicas_of gateway)
# CHRONIR_GATEWAY_LOG_LEVEL: the gateway's own level (load runs keep the rest at warning but want
# the live stream's notices: buffer overflows, resyncs, skips).
gateway_level=${CHRONIR_GATEWAY_LOG_LEVEL:+CHRONIR_LOG_LEVEL=$CHRONIR_GATEWAY_LOG_LEVEL}
if [ "$gateways" -eq 1 ]; then
    start gateway gateway CHRONIR_HTTP_PORT="$http_port" ${gateway_level}
else
    for k in $(seq 1 "$gateways"); do
        start "gateway-$k" gateway CHRONIR_HTTP_PORT=$((http_port + 10 * (k - 1))) CHRONIR_OPS_PORT=$((9100 + 10 * (k - 1))) \
            CHRONIR_INSTANCE_ID="gateway-$k" CHRONIR_REPLICA="$k" ${gateway_level}
    done
fi

healthy=""
# every_gateway_healthy: GET /healthz answers 200 on each gateway replica.
every_gateway_healthy() {
    local k
    for k in $(seq 1 "$gateways"); do
        curl -fsS "http://127.0.0.1:$((http_port + 10 * (k - 1)))/healthz" >/dev/null 2>&1 || return 1
    done
}
for i in $(seq 1 120); do
    if every_gateway_healthy; then
        echo "Chronir API ready at http://127.0.0.1:$http_port  (logs in .run/logs, Ctrl-C to stop)"
        echo "  web app:         http://127.0.0.1:$http_port/app/"
        echo "  operations page: http://127.0.0.1:$http_port/ops/  (operator token in .run/keys/ops-token)"
        for k in $(seq 2 "$gateways"); do
            echo "  gateway $k:       http://127.0.0.1:$((http_port + 10 * (k - 1)))"
        done
        healthy=1
        break
    fi
    if died " during start"; then exit 1; fi
    sleep 0.5
done
if [ -z "$healthy" ]; then
    echo "the suite did not become healthy; see .run/logs" >&2
    curl -sS "http://127.0.0.1:$http_port/healthz" >&2 || true
    exit 1
fi
# Stay in the foreground until a service dies or we are told to stop. A signal runs on_signal
# at once (the sleep is waited for with `wait`, which a trapped signal interrupts).
while true; do
    if died ""; then exit 1; fi
    sleep 1 &
    wait $! || true
done
