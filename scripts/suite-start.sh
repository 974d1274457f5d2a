# Sourced by contract-test.sh and browser-test.sh: starts a copy of the suite (scripts/run.sh) on
# a throwaway PostgreSQL in $out/pg with HTTP on $port, stops it on exit, and waits until
# /healthz answers. Extra settings come as VAR=VALUE arguments.
#   suite_start VAR=VALUE ...
suite_start() {
    scripts/pg.sh stop "$out/pg" >/dev/null 2>&1 || true   # a suite left by an interrupted run
    rm -rf "$out/pg"
    env CHRONIR_HTTP_PORT="$port" CHRONIR_PG_DIR="$out/pg" CHRONIR_LOG_LEVEL="${CHRONIR_LOG_LEVEL:-warning}" "$@" \
        scripts/run.sh >"$out/suite.log" 2>&1 &
    suite=$!
    trap 'kill -TERM "$suite" 2>/dev/null || true; wait "$suite" 2>/dev/null || true' EXIT
    for _ in $(seq 1 600); do
        curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
        kill -0 "$suite" 2>/dev/null || { cat "$out/suite.log"; echo "$0: the suite did not start" >&2; exit 1; }
        sleep 1
    done
    echo "$0: the suite is not healthy" >&2
    exit 1
}
