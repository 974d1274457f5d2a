#!/bin/sh
# Checks the Prometheus configuration in deploy/prometheus (docs/operations.md § Alerts):
#   scripts/check-prometheus.sh              rules well formed, their unit tests pass, the scrape
#                                            configuration is valid, every alert has a severity
#                                            and a runbook section that exists
#   scripts/check-prometheus.sh --self-test  shows the check catches breakage: on a copy, a
#                                            syntax error in an alert, a changed alert threshold
#                                            and a wrong test expectation must each fail
# One line per step; exits non-zero when a step fails. Needs promtool (Debian/Ubuntu:
# apt-get install prometheus).
set -u
cd "$(dirname "$0")/.." || exit 2
dir=deploy/prometheus

if ! command -v promtool >/dev/null 2>&1; then
    echo "check-prometheus: promtool not found; install it with: apt-get install prometheus" >&2
    exit 1
fi

failed=0
log=$(mktemp)
tmp=""
trap 'rm -f "$log"; [ -n "$tmp" ] && rm -rf "$tmp"' EXIT

# step "what" command…: runs the command, prints one line; its output only when it fails.
step() {
    what=$1
    shift
    if "$@" >"$log" 2>&1; then
        echo "ok: $what"
    else
        echo "FAILED: $what"
        sed 's/^/    /' "$log"
        failed=1
    fi
}

# expect_failure "what" command…: the command must fail (a breakage caught).
expect_failure() {
    what=$1
    shift
    if "$@" >"$log" 2>&1; then
        echo "FAILED: $what was not caught"
        failed=1
    else
        # What promtool said: the first line after its FAILED.
        said=$(awk 'seen && NF { sub(/^ +/, ""); print; exit } /FAILED/ { seen = 1 }' "$log" | sed "s|$tmp/p/||" | cut -c1-200)
        echo "ok: $what caught: $said"
    fi
}

# Every alert has severity page or ticket, a summary, a description and a runbook pointing at a
# `### <AlertName>` section of docs/operations.md.
check_alert_metadata() {
    ok=0
    alerts=$(sed -n 's/^ *- alert: *\([A-Za-z0-9_]*\).*/\1/p' "$dir"/rules/*.yml)
    [ -n "$alerts" ] || { echo "no alerts found"; return 1; }
    for f in "$dir"/rules/*.yml; do
        # The lines of each alert, from `- alert:` to the next one.
        awk -v file="$f" '
            function finish() {
                if (name == "") return
                if (!sev) { print file ": " name ": no severity page or ticket"; bad = 1 }
                if (!sum) { print file ": " name ": no summary"; bad = 1 }
                if (!desc) { print file ": " name ": no description"; bad = 1 }
                if (rb != "docs/operations.md#" tolower(name)) { print file ": " name ": runbook is \"" rb "\", not docs/operations.md#" tolower(name); bad = 1 }
            }
            /^ *- (alert|record):/ { finish(); name = ""; sev = sum = desc = 0; rb = "" }
            /^ *- alert:/ { name = $3 }
            /^ *severity: *(page|ticket) *$/ { sev = 1 }
            /^ *summary:/ { sum = 1 }
            /^ *description:/ { desc = 1 }
            /^ *runbook:/ { rb = $2; gsub(/"/, "", rb) }
            END { finish(); exit bad }
        ' "$f" || ok=1
    done
    for a in $alerts; do
        grep -qix "### $a" docs/operations.md || { echo "docs/operations.md has no section \"### $a\""; ok=1; }
    done
    return $ok
}

run_checks() {
    step "promtool check rules $dir/rules/*.yml" promtool check rules "$dir"/rules/*.yml
    step "promtool test rules $dir/tests/*.test.yml" promtool test rules "$dir"/tests/*.test.yml
    step "promtool check config $dir/prometheus.yml" promtool check config "$dir/prometheus.yml"
    step "alerts have severity, summary, description and a runbook section in docs/operations.md" check_alert_metadata
}

# replace FILE OLD NEW: replaces a fixed string (which must be there) in FILE.
replace() {
    grep -qF "$2" "$1" || { echo "self-test: \"$2\" not found in $1" >&2; return 1; }
    awk -v old="$2" -v new="$3" '!done && (i = index($0, old)) { $0 = substr($0, 1, i - 1) new substr($0, i + length(old)); done = 1 } { print }' \
        "$1" >"$1.new" && mv "$1.new" "$1"
}

self_test() {
    tmp=$(mktemp -d)
    fresh() {
        rm -rf "$tmp/p"
        mkdir -p "$tmp/p"
        cp -R "$dir/rules" "$dir/tests" "$tmp/p/"
    }
    fresh
    step "self-test: the unchanged copy passes" sh -c 'promtool check rules "$1"/rules/*.yml && promtool test rules "$1"/tests/*.test.yml' sh "$tmp/p"
    # 1. A syntax error in an alert expression: check rules fails.
    replace "$tmp/p/rules/chronir.alerts.yml" "expr: chronir_consumer_blocked == 1" "expr: chronir_consumer_blocked == (1" || return 1
    expect_failure "self-test: syntax error in ChronirConsumerBlocked's expression" promtool check rules "$tmp/p/rules/chronir.alerts.yml"
    # 2. A valid but wrong expression (threshold raised so it never fires): the unit tests fail.
    fresh
    replace "$tmp/p/rules/chronir.alerts.yml" "expr: chronir_events_lag > 1000" "expr: chronir_events_lag > 100000" || return 1
    expect_failure "self-test: ChronirConsumerLagging threshold 1000 -> 100000" promtool test rules "$tmp/p/tests/streams.test.yml"
    # 3. A wrong test expectation (severity page expected as ticket): the unit tests fail.
    fresh
    replace "$tmp/p/tests/streams.test.yml" "{severity: page, job: alarms, instance: \"10.0.0.3:9100\", stream: accounts}" \
        "{severity: ticket, job: alarms, instance: \"10.0.0.3:9100\", stream: accounts}" || return 1
    expect_failure "self-test: wrong expected severity of ChronirConsumerBlocked" promtool test rules "$tmp/p/tests/streams.test.yml"
}

case "${1:-}" in
    "") run_checks ;;
    --self-test) self_test || failed=1 ;;
    *) echo "usage: scripts/check-prometheus.sh [--self-test]" >&2; exit 2 ;;
esac
if [ "$failed" -ne 0 ]; then
    echo "check-prometheus: FAILED"
    exit 1
fi
echo "check-prometheus: ok"
