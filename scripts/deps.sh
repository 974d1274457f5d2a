#!/usr/bin/env bash
# Installs the system packages the suite needs when they are missing (Debian/Ubuntu).
#   scripts/deps.sh run    what `make run` needs: build (libzmq, pkg-config), PostgreSQL, tzdata,
#                          curl, openssl; no Python
#   scripts/deps.sh [test] all of that plus Python 3 with venv and pip, for the venvs of the
#                          tests and the scripts that use Python (the default)
set -euo pipefail
mode=${1:-test}
case "$mode" in run|test) ;; *) echo "usage: scripts/deps.sh [run|test]" >&2; exit 2 ;; esac
need=()
pkg-config --exists libzmq 2>/dev/null || need+=(libzmq3-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v psql >/dev/null || need+=(postgresql-client)
[ -e /usr/share/zoneinfo/America/New_York ] || need+=(tzdata)
command -v curl >/dev/null || need+=(curl)
command -v openssl >/dev/null || need+=(openssl)   # the operator's token (make run), test certificates
if [ "$mode" = test ]; then
    command -v python3 >/dev/null || need+=(python3 python3-pip)
    python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)   # venvs of the mail and contract tests
    command -v promtool >/dev/null || need+=(prometheus)   # scripts/check-prometheus.sh
fi
if [ ${#need[@]} -gt 0 ]; then
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "installing: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get -y -qq --fix-broken install
$SUDO apt-get install -y -qq "${need[@]}"
fi
