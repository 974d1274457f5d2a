#!/usr/bin/env bash
# The tests' Python tools, in a venv of their own (.run/test-venv, never system-wide): a local
# SMTP server for the mail tests (aiosmtpd), an independent iCalendar parser for the feed tests
# (icalendar, python-dateutil), a local S3-compatible server for the photo tests (moto, whose
# botocore also checks our request signatures) and the contract checker (jsonschema,
# openapi-spec-validator). Made when missing or incomplete; prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.run/test-venv
if ! [ -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import aiosmtpd, icalendar, dateutil, moto.server, botocore, jsonschema, yaml, openapi_spec_validator' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q aiosmtpd==1.4.6 icalendar==6.1.0 python-dateutil==2.9.0.post0 'moto[server]==5.1.22' \
        'jsonschema>=4.23,<5' 'pyyaml>=6,<7' 'openapi-spec-validator>=0.7,<1' >&2
fi
echo "$(pwd)/$venv/bin/python"
