#!/usr/bin/env bash
# Build one source tree's own native pieces — the lws echo server, the load generator, the
# QuickJS WebSocket module and the qjs client's echo checks — with that tree's own build
# steps, against the QuickJS and libwebsockets this checkout built (build/prefix):
#
#   scripts/build-tree.sh TREE [PREFIX]
#
# The steps are the tree's own: the `build_with_make` lines of TREE/scripts/setup-native.sh
# (its Makefiles, its flags), run with ROOT=TREE, BUILD=TREE/build and PREFIX. So a base
# commit of `wsbench gate --base REF` (extracted into build/base/<sha>/) is built as that
# commit built itself, into TREE/build/, with the same compiler and the same QuickJS and
# libwebsockets (same pins: the gate checks scripts/pins.sh of both first).
#
# Output: one line per piece built; on failure one line naming the step and its log
# (TREE/build/logs/<step>.log), exit 1.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TREE=$(cd "${1:?usage: scripts/build-tree.sh TREE [PREFIX]}" && pwd)
PREFIX=${2:-$HERE/build/prefix}
ROOT=$TREE
BUILD=$TREE/build
LOGS=$BUILD/logs
SETUP=$TREE/scripts/setup-native.sh

[[ -f $SETUP ]] || { echo "build-tree: $SETUP is missing: no native build steps to run" >&2; exit 1; }
[[ -x $PREFIX/bin/qjs && -f $PREFIX/lib/libwebsockets.so ]] ||
    { echo "build-tree: $PREFIX has no qjs or libwebsockets (run: make setup)" >&2; exit 1; }
mkdir -p "$LOGS" "$BUILD/bin"

build_with_make() { # the same signature as setup-native.sh's: STEP WHAT DIR [VAR=VALUE...]
    local step=$1 what=$2 dir=$3; shift 3
    local log=$LOGS/$step.log
    printf '+ make -C %s %s\n' "$ROOT/$dir" "$*" >"$log"
    if ! make -C "$ROOT/$dir" "$@" >>"$log" 2>&1 </dev/null; then
        local last
        last=$(grep -m1 -E ': (fatal )?error|undefined reference|No rule to make' "$log" | cut -c1-200 || true)
        echo "build-tree: $what does not build (log: $log${last:+: $last})" >&2
        exit 1
    fi
    echo "build-tree: $what"
}

steps=$(grep -E '^[[:space:]]*build_with_make[[:space:]]' "$SETUP" || true)
[[ -n $steps ]] || { echo "build-tree: $SETUP has no build_with_make step" >&2; exit 1; }
eval "$steps"
