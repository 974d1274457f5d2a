#!/usr/bin/env bash
# Installs the system packages the suite needs when they are missing (Debian/Ubuntu).
set -euo pipefail
need=()
pkg-config --exists libzmq 2>/dev/null || need+=(libzmq3-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v psql >/dev/null || need+=(postgresql-client)
[ -e /usr/share/zoneinfo/America/New_York ] || need+=(tzdata)
command -v python3 >/dev/null || need+=(python3 python3-pip)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)   # venvs of the mail and contract tests
command -v curl >/dev/null || need+=(curl)
command -v openssl >/dev/null || need+=(openssl)   # test certificates for the local push servers
if [ ${#need[@]} -gt 0 ]; then
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "installing: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get -y -qq --fix-broken install
$SUDO apt-get install -y -qq "${need[@]}"
fi
