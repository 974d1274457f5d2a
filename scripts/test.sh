#!/usr/bin/env bash
# `make test`: the whole test suite against a throwaway PostgreSQL and real sockets
# (docs/testing.md: the tiers, what to run when, their measured times).
#   scripts/test.sh                  everything: Core (tier 0), the build, the checks, the Swift
#                                    tests in lanes (scripts/test-lanes.py), the browser tests
#   scripts/test.sh ARGS…            build, then `swift test --no-parallel ARGS…` alone (say
#                                    --filter REGEX), one process, no checks, no browser tests
#   CHRONIR_TEST_LANES=N             lanes of the Swift tests (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
t0=$(date +%s)
took() { echo "make test: $1 done at $(( $(date +%s) - t0 )) s"; }
scripts/deps.sh
mkdir -p .run
# The Python venvs wait on the network and the disk, not the CPU: made while the build runs.
( scripts/test-venv.sh >/dev/null && scripts/check-k8s.sh --prepare ) >.run/test-venvs.log 2>&1 &
venvs=$!
# The browser tests' venv too (a failure here is not one: browser-test.sh makes it again).
browser_venv=""
if [ $# -eq 0 ]; then
    scripts/browser-test.sh --prepare >.run/browser-venv.log 2>&1 &
    browser_venv=$!
fi
# Core (the pure modules) first: it builds in its own package in seconds, so a compile error
# there ends the run early; then the root package, a compile error ending the run before any
# check. The venvs are made meanwhile.
if ! swift build --package-path Core --build-tests || ! swift build --build-tests; then
    wait "$venvs" ${browser_venv:+"$browser_venv"} || true
    exit 1
fi
took "build (Core, then the root package)"
if ! wait "$venvs"; then
    cat .run/test-venvs.log >&2
    echo "make test: the Python venvs could not be made (.run/test-venvs.log)" >&2
    exit 1
fi
CHRONIR_TEST_PYTHON=$(scripts/test-venv.sh)
export CHRONIR_TEST_PYTHON
took "venvs"
if [ $# -eq 0 ]; then
    # Tier 0: Core's tests (xunit beside the lanes' for scripts/test-times).
    mkdir -p .run/test-core
    swift test --package-path Core --skip-build --xunit-output .run/test-core/xunit.xml
    took "tier 0 (Core)"
fi
port=${CHRONIR_TEST_PG_PORT:-55432}
dir=.run/test-pg
scripts/pg.sh stop "$dir" || true
rm -rf "$dir"
trap 'scripts/pg.sh stop "$dir"; rm -rf "$dir"' EXIT
scripts/pg.sh start "$dir" "$port" fast
export CHRONIR_TEST_DATABASE_URL=$(scripts/pg.sh url "$port")
if [ $# -gt 0 ]; then
    # Some tests, as asked: one process, one test at a time.
    swift test --skip-build --no-parallel "$@"
    took "Swift tests"
    exit 0
fi
# The contracts in proto/ against the last release (docs/operations.md, the compatibility rule).
"$CHRONIR_TEST_PYTHON" scripts/check_compat.py
"$CHRONIR_TEST_PYTHON" scripts/check_compat.py --self-test
# The Prometheus rules, alerts and scrape configuration, and their unit tests (promtool).
sh scripts/check-prometheus.sh
sh scripts/check-prometheus.sh --self-test
# The Kubernetes manifests (deploy/k8s), offline: rendered, schema-checked, the suite's rules, checkov.
scripts/check-k8s.sh
scripts/check-k8s.sh --self-test
took "checks"
# Tier 1 in lanes beside each other, then tier 2 (time and faults) one at a time; the slowest
# suites and each tier's total after (scripts/test-times).
rc=0
python3 scripts/test-lanes.py || rc=$?
python3 scripts/test-times --top 10 || true
took "Swift tests"
[ "$rc" = 0 ] || exit "$rc"
# The web client and the operations page in headless Chromium.
scripts/pg.sh stop "$dir"; rm -rf "$dir"; trap - EXIT
[ -z "$browser_venv" ] || wait "$browser_venv" || echo "make test: the browser venv was not made in the background (.run/browser-venv.log); browser-test.sh makes it" >&2
# The binaries just built: run.sh starts them without asking SwiftPM again.
CHRONIR_BIN_DIR=$(swift build --show-bin-path) scripts/browser-test.sh
took "browser tests"
