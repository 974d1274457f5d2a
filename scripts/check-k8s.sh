#!/usr/bin/env bash
# Offline checks of the Kubernetes manifests (deploy/k8s; docs/operations.md § Kubernetes), in
# `make test`: renders the overlays, validates every object against the Kubernetes schemas
# (kubernetes-validate), checks the suite's own rules and runs checkov. scripts/check_k8s.py says
# what each step checks.
#   scripts/check-k8s.sh               the checks
#   scripts/check-k8s.sh --self-test   breaks copies of deploy/k8s in known ways; each must be caught
#   scripts/check-k8s.sh --prepare     only makes the venv
# The tools live in a venv of their own (scripts/.venv-k8s, gitignored), made on the first run
# (about 1.5 minutes, ~400 MB) and reused; versions pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=scripts/.venv-k8s
# From PyPI; their dependencies pinned by scripts/k8s-constraints.txt (regenerate it with pip
# freeze after a bump, then run both commands above). The venv is remade when either changes.
packages=(checkov==3.3.30 kubernetes-validate==1.37.0)
constraints=scripts/k8s-constraints.txt
stamp="$venv/.installed"
want="${packages[*]} $(cksum < "$constraints")"
if ! [ -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "check-k8s: installing ${packages[*]} into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" "${packages[@]}"
    echo "$want" > "$stamp"
fi
# --prepare: only the venv (make test makes it while the build runs).
[ "${1:-}" = --prepare ] && exit 0
exec "$venv/bin/python" scripts/check_k8s.py "$@"
