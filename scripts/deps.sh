#!/usr/bin/env bash
# Installs the system packages the suite needs when they are missing (Debian/Ubuntu).
set -euo pipefail
need=()
pkg-config --exists libzmq 2>/dev/null || need+=(libzmq3-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v psql >/dev/null || need+=(postgresql-client)
[ -e /usr/share/zoneinfo/America/New_York ] || need+=(tzdata)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get -y -qq --fix-broken install
$SUDO apt-get install -y -qq "${need[@]}"
