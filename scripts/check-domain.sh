#!/bin/sh
# Domain files hold each service's rules as pure functions: they import no I/O module (no
# database, bus, network, thread pool or logging), only Foundation, the contracts, Wire (for
# ServiceError), Schedules and Crypto. Called by `make test`; `--self-test` shows it catches one.
set -eu
cd "$(dirname "$0")/.."
allowed=':import (Foundation|Contracts|Wire|Schedules|Crypto|CryptoExtras|_CryptoExtras)$'
check() {
    bad=$(grep -H '^import ' "$@" | grep -Ev "$allowed" || true)
    if [ -n "$bad" ]; then
        echo "domain: these Domain files import an I/O module (move the I/O to Store/ or the service's wiring):" >&2
        echo "$bad" >&2
        return 1
    fi
}
if [ "${1:-}" = "--self-test" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    printf 'import Foundation\nimport PostgresNIO\n' > "$tmp/Bad.swift"
    if check "$tmp/Bad.swift" 2>/dev/null; then echo "domain self-test: an I/O import was not caught" >&2; exit 1; fi
    printf 'import Foundation\nimport Wire\n' > "$tmp/Good.swift"
    check "$tmp/Good.swift"
    echo "domain self-test: ok"
    exit 0
fi
# The services' rules move into Core/Sources/<Service>Core (issue 60), where the compiler keeps
# them pure (Core's package has no I/O module to import); what is still in a Domain folder is
# checked here.
files=$(ls Services/*/Sources/Domain/*.swift 2>/dev/null || true)
[ -z "$files" ] || check $files
echo "domain: $(printf '%s' "$files" | grep -c . || true) files left in Domain folders import no I/O module; $(ls -d Core/Sources/*Core | wc -l) service cores in Core/"
