#!/usr/bin/env bash
# Builds the native fixture plugin package: build.sh [out-dir]
# (default: <script dir>/dist). Produces <out-dir>/native-fixture and
# <out-dir>/plugin.json.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/dist}"

if ! command -v cc >/dev/null 2>&1; then
  echo "build.sh: error: C compiler 'cc' not found on PATH (install gcc or clang)" >&2
  exit 1
fi

mkdir -p "$out"
cc -std=c99 -O2 -Wall -Wextra -Werror -o "$out/native-fixture" "$here/native-fixture.c"
cp "$here/plugin.json" "$out/plugin.json"
chmod 0755 "$out/native-fixture"
chmod 0644 "$out/plugin.json"
echo "built $out/native-fixture"
