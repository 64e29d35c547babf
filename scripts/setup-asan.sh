#!/usr/bin/env bash
# make test-asan: QuickJS (qjs) and the quickjs-websocket module built with AddressSanitizer
# and UndefinedBehaviorSanitizer (gcc), beside the normal build:
#       build/asan/prefix/bin/qjs                              qjs, ASan + UBSan
#       build/asan/root/build/quickjs-websocket/{lws.so,websocket.js}   the module, ASan + UBSan
#       build/asan/root/quickjs-websocket -> the source tree   (tests/js/run.js imports the
#                                                              module by a relative path)
# libwebsockets stays the normal build (build/prefix). Run scripts/setup-native.sh first.
set -euo pipefail
STEP_NAME=setup-asan
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SRC=$ROOT/build/src
QJS_SRC=$SRC/quickjs-2025.04.26
ASAN=$ROOT/build/asan
PREFIX=$ASAN/prefix
JOBS=$(nproc 2>/dev/null || echo 2)
# QuickJS' own code may report UB and go on (recover); ours stops at the first report
SAN_QJS="-fsanitize=address,undefined -fno-omit-frame-pointer -g -O1"
SAN_OURS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"

build_quickjs() {
    local key="quickjs 2025.04.26 $SAN_QJS"
    stamp_is asan-quickjs "$key" && [[ -x $PREFIX/bin/qjs ]] && return
    [[ -f $QJS_SRC/quickjs.h ]] || fail "find the QuickJS source in build/src (run: make setup)"
    say "building qjs with ASan + UBSan"
    mkdir -p "$PREFIX/bin"
    qjs_copy "$QJS_SRC" "$ASAN" gcc "$SAN_QJS"
    quietly asan-quickjs "build qjs" make -C "$ASAN/src/quickjs" -j"$JOBS" CC="$ASAN/cc-wrap" qjs
    quietly asan-quickjs "install qjs" install -m755 "$ASAN/src/quickjs/qjs" "$PREFIX/bin/"
    stamp_set asan-quickjs "$key"
}

build_module() {
    mkdir -p "$ASAN/root/build"
    ln -sfn ../../../quickjs-websocket "$ASAN/root/quickjs-websocket"
    # (its Makefile appends to CFLAGS: given in the environment)
    quietly asan-module "build quickjs-websocket (ASan + UBSan)" env CFLAGS="$SAN_OURS" \
        make -C "$ROOT/quickjs-websocket" PREFIX="$ROOT/build/prefix" \
        OUT="$ASAN/root/build/quickjs-websocket" OBJDIR="$ASAN/obj/quickjs-websocket"
}

build_quickjs
build_module
