#!/bin/sh
# The BuildVersion plugin's prebuild step: writes $2/BuildVersion.swift with the build version
# ($CHRONIR_BUILD_VERSION, else `git describe` of the package in $1, else "unknown"), only when it
# changed (an unchanged file keeps the build incremental).
set -eu
pkg=$1 out=$2
mkdir -p "$out"
version=${CHRONIR_BUILD_VERSION:-}
if [ -z "$version" ]; then
    version=$(git -C "$pkg" describe --tags --always --dirty 2>/dev/null || true)
fi
[ -n "$version" ] || version=unknown
version=$(printf '%s' "$version" | tr -cd 'A-Za-z0-9._+-')
file="$out/BuildVersion.swift"
new="extension BuildInfo { public static let version = \"$version\" }"
if [ ! -f "$file" ] || [ "$(cat "$file")" != "$new" ]; then
    printf '%s\n' "$new" > "$file"
fi
