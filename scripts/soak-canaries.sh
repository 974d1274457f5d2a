#!/usr/bin/env bash
# The soak proves it can fail (issue 75): each canary in scripts/canaries/ is a patch that
# breaks one guarantee on purpose. For each, this script applies it to the working tree, runs
# the soak (which builds the suite with the patch in), takes the patch out again, and expects
# the soak to flag the run (exit 1). A canary the soak passes (exit 0), or a run that could not
# start (exit 2: nothing was judged), fails this script. The patches are never committed
# applied: the tree is restored on every exit.
#   scripts/soak-canaries.sh [--minutes M] [--seed S] [CANARY…]   (default: every patch, 4 minutes, seed 7)
# Each canary's soak output is in .run/canaries/<name>.log; the summary names each canary with
# the soak's verdict line and its first problem.
#   ack-before-apply       a consumer commits its checkpoint before it applies the batch
#   number-outside-lock    events numbered from a sequence (nextval) before the head's lock, not under it held to commit
#   no-resume-read         the live stream ignores Last-Event-ID on a reconnect
#   release-waiting-early  the gateway lets a waiting notification out a second before its instant
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=4
seed=7
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        -*) echo "unknown option $1" >&2; exit 64 ;;
        *) names+=("$1"); shift ;;
    esac
done
[ ${#names[@]} -gt 0 ] || for p in scripts/canaries/*.patch; do names+=("$(basename "$p" .patch)"); done
out=.run/canaries
mkdir -p "$out"
# The debug build unless told otherwise: each canary rebuilds what its patch touches.
export CHRONIR_BUILD_CONFIG=${CHRONIR_BUILD_CONFIG:-debug}
applied=""
restore() { if [ -n "$applied" ]; then git apply -R "scripts/canaries/$applied.patch" && applied=""; fi; }
trap restore EXIT
trap 'restore; exit 130' INT TERM
: > "$out/summary.txt"
failed=0
for name in "${names[@]}"; do
    patch=scripts/canaries/$name.patch
    [ -f "$patch" ] || { echo "no canary $name ($patch)" >&2; exit 64; }
    git apply --check "$patch" || { echo "canary $name does not apply to this tree" >&2; exit 1; }
    git apply "$patch" && applied=$name
    echo "canary $name: soak --minutes $minutes --seed $seed (output in $out/$name.log)" >&2
    rc=0
    scripts/soak.sh --minutes "$minutes" --seed "$seed" > "$out/$name.log" 2>&1 || rc=$?
    restore
    verdict=$(grep '^soak: planned' "$out/$name.log" | tail -1)
    problem=$(grep -m1 'problem:\|database:' "$out/$name.log" | sed 's/^ *//')
    case $rc in
        1) line="canary $name: FLAGGED — ${verdict:-no verdict line}; ${problem:-see the log}" ;;
        0) line="canary $name: NOT FLAGGED (the soak passed a build broken on purpose) — $verdict"; failed=1 ;;
        *) line="canary $name: NOT JUDGED (the soak exited $rc: $(tail -1 "$out/$name.log"))"; failed=1 ;;
    esac
    echo "$line" | tee -a "$out/summary.txt"
done
exit $failed
