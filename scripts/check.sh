#!/usr/bin/env bash
# `make check`: the inner loop (docs/testing.md). Tier 0 (Core: `swift test --package-path Core`),
# then the tier 1 and 2 suites of what the change touches, in lanes (scripts/test-lanes.py):
#   Services/<S>/…          <S>ServiceTests (Scheduler: SchedulerTests; Chronirctl: ChronirctlTests)
#   Tests/<T>/…             T
#   Core/Sources/…, Shared/, Package.swift, Tests/Support, …: every suite (a change to a
#                           pure module can break any service)
#   Core/Tests, docs, scripts, web, deploy, the lanes' schedule: none beyond tier 0
# The change: what differs from CHECK_BASE (default HEAD: the uncommitted changes), untracked
# files included. CHECK_SUITES=REGEX names the suites instead.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
took() { echo "make check: $1 done at $(( $(date +%s) - t0 )) s"; }
base=${CHECK_BASE:-HEAD}
changed=$( (git diff --name-only "$base"; git ls-files --others --exclude-standard) | sort -u)
pattern=${CHECK_SUITES:-}
if [ -z "$pattern" ]; then
    targets=()
    all=0
    while IFS= read -r path; do
        [ -n "$path" ] || continue
        case "$path" in
            # Core's tests are tier 0 (run above); its modules are what every service builds on.
            Core/Tests/*|Core/Package.swift) ;;
            Core/*) all=1 ;;
            docs/*|*.md|web/*|deploy/*|proto/*|scripts/*|.ci/*|Benchmarks/*) ;;
            # The lanes' schedule and the browser tests (scripts/browser-test.sh): no Swift suite.
            Tests/suite-times.tsv|Tests/serial-suites.txt|Tests/Browser/*) ;;
            Services/Scheduler/*) targets+=(SchedulerTests) ;;
            Services/Chronirctl/*) targets+=(ChronirctlTests) ;;
            Services/*) s=${path#Services/}; targets+=("${s%%/*}ServiceTests") ;;
            Tests/Support/*|Tests/SuiteSupport/*|Tests/TestPeer/*) all=1 ;;
            Tests/*)
                t=${path#Tests/}; t=${t%%/*}
                if compgen -G "Tests/$t/*.swift" >/dev/null; then targets+=("$t"); else all=1; fi ;;
            *) all=1 ;;
        esac
    done <<<"$changed"
    if [ "$all" = 1 ]; then
        pattern="."
    elif [ ${#targets[@]} -gt 0 ]; then
        pattern="^($(printf '%s\n' "${targets[@]}" | sort -u | paste -sd '|'))\\."
    fi
fi
echo "make check: changed since $base: $(wc -w <<<"$changed") files; suites: ${pattern:-none beyond Core}"
scripts/deps.sh
CHRONIR_TEST_PYTHON=$(scripts/test-venv.sh)
export CHRONIR_TEST_PYTHON
swift test --package-path Core
took "tier 0 (Core)"
[ -n "$pattern" ] || exit 0
swift build --build-tests
took "build"
port=${CHRONIR_TEST_PG_PORT:-55432}
dir=.run/test-pg
scripts/pg.sh stop "$dir" || true
rm -rf "$dir"
trap 'scripts/pg.sh stop "$dir"; rm -rf "$dir"' EXIT
scripts/pg.sh start "$dir" "$port" fast
export CHRONIR_TEST_DATABASE_URL=$(scripts/pg.sh url "$port")
python3 scripts/test-lanes.py --filter "$pattern"
took "tiers 1 and 2"
