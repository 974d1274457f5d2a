#!/usr/bin/env bash
# The web client and the operations page in a real browser: Playwright (Python) drives the
# distribution's Chromium, headless, against its own copy of the suite (`scripts/run.sh` on a
# throwaway PostgreSQL, HTTP on 18280). Called by `make test` after the Swift tests; screenshots
# of each screen land in docs/screenshots/.
#   BROWSER_TEST_ARGS="-x"           pass arguments to pytest
#   BROWSER_TEST_K="paywall or ops"   run the tests whose names match (pytest -k, spaces kept)
#   BROWSER_TEST_WORKERS=N           browsers side by side (pytest-xdist; default 2, 0 for one process):
#                                    each takes whole groups of tests (conftest.py puts the two that
#                                    wait for a whole minute in different groups, so they wait together)
#   scripts/browser-test.sh --prepare   only the venv (make test makes it while the build runs)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=.run/browser
mkdir -p "$out" .run
venv=.run/browser-venv
# One maker at a time (make test starts one in the background; a second run may start before
# an interrupted one's has ended).
make_venv() {
    (
        flock 9
        if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import playwright, pytest, xdist, axe_playwright_python, cryptography" 2>/dev/null; then
            python3 -m venv "$venv"
            "$venv/bin/pip" install -q playwright==1.65.2 pytest==8.4.2 pytest-xdist==3.8.0 axe-playwright-python==0.1.8 cryptography==46.0.3
        fi
    ) 9>.run/browser-venv.lock
}
if [ "${1:-}" = --prepare ]; then make_venv; exit 0; fi
scripts/deps.sh
if ! command -v chromium >/dev/null; then
    SUDO=""; [ "$(id -u)" != 0 ] && SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi
make_venv

port=${BROWSER_HTTP_PORT:-18280}
export CHRONIR_OPS_TOKEN=${CHRONIR_OPS_TOKEN:-$(openssl rand -hex 16)}
. scripts/suite-start.sh
# Sign in with Apple and Google against the local stand-in (Tests/Browser/fake_identity.py),
# which the tests start on this port.
idp="http://127.0.0.1:${CHRONIR_FAKE_IDP_PORT:=18291}"
export CHRONIR_FAKE_IDP_PORT
# Password hashes at the Swift tests' cost (Harness.swift): no test here measures hashing.
suite_start CHRONIR_PG_PORT="${BROWSER_PG_PORT:-55436}" CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=100000 CHRONIR_SCRYPT_LOG_N=10 \
    CHRONIR_APPLE_JWKS_URL="$idp/apple/keys" CHRONIR_APPLE_AUDIENCES=com.chronir.web CHRONIR_WEB_APPLE_CLIENT_ID=com.chronir.web \
    CHRONIR_APPLE_AUTHORIZE_URL="$idp/apple/authorize" \
    CHRONIR_GOOGLE_JWKS_URL="$idp/google/keys" CHRONIR_GOOGLE_AUDIENCES=chronir-web.apps.googleusercontent.com \
    CHRONIR_WEB_GOOGLE_CLIENT_ID=chronir-web.apps.googleusercontent.com CHRONIR_GOOGLE_AUTHORIZE_URL="$idp/google/authorize"

export CHRONIR_WEB_URL="http://127.0.0.1:$port" CHRONIR_CHROMIUM=$(command -v chromium)
export CHRONIR_CTL="${CHRONIR_BIN_DIR:-$(swift build --show-bin-path)}/chronirctl" CHRONIR_BUS_KEYS=$root/.run/keys
export CHRONIR_SCREENSHOTS=$root/docs/screenshots
workers=${BROWSER_TEST_WORKERS:-2}
parallel=()
[ "$workers" = 0 ] || parallel=(-n "$workers" --dist loadgroup)
# --durations: each test's time, so a slow one shows (docs/testing.md).
"$venv/bin/python" -m pytest -p no:cacheprovider -q --durations=8 ${parallel[@]+"${parallel[@]}"} Tests/Browser ${BROWSER_TEST_ARGS:-} ${BROWSER_TEST_K:+-k "$BROWSER_TEST_K"}
