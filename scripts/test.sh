#!/usr/bin/env bash
# `make test`: the whole test suite against a throwaway PostgreSQL and real sockets.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
t0=$(date +%s)
took() { echo "make test: $1 done at $(( $(date +%s) - t0 )) s"; }
scripts/deps.sh
port=${CHRONIR_TEST_PG_PORT:-55432}
dir=.run/test-pg
scripts/pg.sh stop "$dir" || true
rm -rf "$dir"
trap 'scripts/pg.sh stop "$dir"; rm -rf "$dir"' EXIT
scripts/pg.sh start "$dir" "$port" fast
export CHRONIR_TEST_DATABASE_URL=$(scripts/pg.sh url "$port")
# A local SMTP server for the mail tests (aiosmtpd), an independent iCalendar parser for the
# feed tests (icalendar, python-dateutil) and a local S3-compatible server for the photo tests
# (moto, whose botocore also checks our request signatures) and the contract checker
# (jsonschema, openapi-spec-validator), in a venv of their own, never system-wide.
venv=.run/test-venv
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import aiosmtpd, icalendar, dateutil, moto.server, botocore, jsonschema, yaml, openapi_spec_validator' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q aiosmtpd==1.4.6 icalendar==6.1.0 python-dateutil==2.9.0.post0 'moto[server]==5.1.22' \
        'jsonschema>=4.23,<5' 'pyyaml>=6,<7' 'openapi-spec-validator>=0.7,<1'
fi
export CHRONIR_TEST_PYTHON=$root/$venv/bin/python
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
swift build --build-tests
took "build"
# Tests run one at a time: many start services and processes, and 2 cores are easily
# oversubscribed (timing assertions would then measure the machine, not the code).
swift test --skip-build --no-parallel "$@"
took "Swift tests"
# The web client and the operations page in headless Chromium (skipped when only some Swift
# tests were asked for with arguments).
if [ $# -eq 0 ]; then
    scripts/pg.sh stop "$dir"; rm -rf "$dir"; trap - EXIT
    scripts/browser-test.sh
    took "browser tests"
fi
