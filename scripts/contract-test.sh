#!/usr/bin/env bash
# `make contract-test`: schemathesis against the running suite, every phase (examples,
# coverage, fuzzing, stateful), every check, as a signed-in Premium user. Passes only when
# schemathesis finds nothing: no 5xx, every status documented, every response conforming.
#   CONTRACT_SEED=N            schemathesis seed (default fixed, so CI is repeatable)
#   CONTRACT_MAX_EXAMPLES=N    examples per operation (default 10: the fuzzing phase takes about 300 s of CI time; 12 took 360)
#   CONTRACT_WORKERS=N         schemathesis workers (default 2: the suite answers while the next request is made)
# Starts its own copy of the suite (`make run` on a throwaway PostgreSQL, HTTP on 18180) and
# stops it afterwards; the report lands in .run/contract/. `--prepare` only makes the venv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=.run/contract
mkdir -p "$out"
scripts/deps.sh

# schemathesis in a venv of its own (pinned).
venv=.run/contract-venv
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    SUDO=""; [ "$(id -u)" != 0 ] && SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq python3-venv >/dev/null
fi
if ! [ -x "$venv/bin/st" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q schemathesis==4.32.5
fi
# --prepare: only the venv (.ci/run makes it while the build runs).
[ "${1:-}" = --prepare ] && exit 0

port=${CONTRACT_HTTP_PORT:-18180}
. scripts/suite-start.sh
# Sign-ups: schemathesis creates many accounts from one address; it edits one alarm thousands of
# times (the edit limits stay documented as 429 and are tested in CostlyPathLimitTests; raised here so
# the fuzzing reaches the validation behind them).
suite_start CHRONIR_PG_PORT="${CONTRACT_PG_PORT:-55435}" CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=1000000 CHRONIR_ALARM_CREATIONS_PER_MINUTE=100000 \
    CHRONIR_ALARM_EDITS_PER_HOUR=1000000 CHRONIR_ALARM_EDITS_PER_ALARM_PER_HOUR=1000000

# A signed-in Premium user (the operator sets the tier, as billing would).
email="contract-$(date +%s)@example.com"
auth=$(curl -fsS -X POST "http://127.0.0.1:$port/v1/auth/signup" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$email\",\"password\":\"correct horse battery\",\"displayName\":\"Contract\",\"timezone\":\"UTC\"}")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])' <<<"$auth")
uid=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["user"]["uid"])' <<<"$auth")
bin=$(swift build --show-bin-path)
CHRONIR_BUS_KEYS=$root/.run/keys "$bin/chronirctl" tier set --user "$uid" --tier premium >/dev/null

echo "contract-test: schemathesis against http://127.0.0.1:$port as $email" >&2
# Signing out, ending sessions (one, which may be this one, or all) or deleting the account would
# end the session the run uses: those operations are exercised by the integration tests instead.
set +e
"$venv/bin/st" --config-file proto/schemathesis.toml run proto/openapi.yaml --url "http://127.0.0.1:$port" \
    -H "Authorization: Bearer $token" \
    --phases examples,coverage,fuzzing,stateful --checks all \
    --max-examples "${CONTRACT_MAX_EXAMPLES:-10}" --seed "${CONTRACT_SEED:-20261124}" --workers "${CONTRACT_WORKERS:-2}" \
    --exclude-operation-id logout --exclude-operation-id deleteMe \
    --exclude-operation-id endSession --exclude-operation-id endAllSessions \
    --request-timeout 20 --report junit,ndjson --report-dir "$out" --output-truncate true \
    --warnings off | tee "$out/summary.txt"
rc=${PIPESTATUS[0]}
set -e
echo "contract-test: schemathesis exited $rc (report in $out)" >&2
exit "$rc"
