#!/usr/bin/env bash
# make test-arm-sanitize (not part of make setup or make setup-arm): the armhf qjs and module
# built with UndefinedBehaviorSanitizer (scripts/setup-arm-sanitize.sh undefined, the
# default: build/arm/ubsan/) or with AddressSanitizer and UBSan (address,undefined:
# build/arm/asan/) by the cross compiler, beside the plain armhf build (scripts/setup-arm.sh);
# in build/arm/<san>/:
#       prefix/bin/qjs                qjs with the sanitizers (armhf)
#       prefix/lib/                   the cross toolchain's armhf sanitizer
#                                                   runtimes (libasan.so.8, libubsan.so.1 and
#                                                   libstdc++.so.6, which both need), found
#                                                   through qjs' RPATH $ORIGIN/../lib (an RPATH,
#                                                   not a RUNPATH: it also serves the runtimes'
#                                                   own dependencies)
#       root/build/quickjs-websocket/{lws.so,websocket.js}   the module with the sanitizers
#       root/build/clients/wsbench_check.so                  the adapter's checks
#       root/{quickjs-websocket,clients} -> the source tree
# The runtimes come from Debian's libasan8-armhf-cross and libubsan1-armhf-cross, which
# gcc-arm-linux-gnueabihf depends on (scripts/setup-apt.sh arm). libwebsockets, OpenSSL and
# zlib stay the plain armhf build's (build/arm/prefix, build/arm/sysroot). As for make
# test-asan: QuickJS' own code may report UB and go on (the tests fail on any report); ours
# stops at the first (-fno-sanitize-recover=undefined). Run scripts/setup-arm.sh first.
# Logs: build/logs/arm-{ubsan,asan}-*.log; stamps: build/stamps/arm-{ubsan,asan}-*.
set -euo pipefail
STEP_NAME=setup-arm-sanitize
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/pins.sh"

ARM=$ROOT/build/arm
SANITIZERS=${1:-undefined}
case $SANITIZERS in
    undefined) SAN=$ARM/ubsan ;;
    address,undefined) SAN=$ARM/asan ;;
    *) fail "build with sanitizers '$SANITIZERS' (undefined or address,undefined)" ;;
esac
PREFIX=$SAN/prefix
TRIPLET=arm-linux-gnueabihf
CROSS=$TRIPLET-
CROSS_LIB=/usr/$TRIPLET/lib
QJS_SRC=$ARM/src/quickjs-$QJS_UPSTREAM
JOBS=$(nproc 2>/dev/null || echo 2)
# QuickJS' own code without UBSan's alignment check: on 32-bit its NaN-boxed JSValue (a
# uint64_t) sits at 4-byte offsets in its own blocks (a bytecode's cpool: quickjs.c's
# OP_push_const8, free_function_bytecode, mark_children report "load of misaligned address
# ... requires 8 byte alignment" at start-up), which ARMv7's LDRD accepts; ours keeps it.
SAN_QJS="-fsanitize=$SANITIZERS -fno-sanitize=alignment -fno-omit-frame-pointer -g -O1"
SAN_OURS="-fsanitize=$SANITIZERS -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
# where qjs finds the runtimes (cc-wrap's sh turns \$ into $)
SAN_LINK='-Wl,--disable-new-dtags,-rpath,\$ORIGIN/../lib'
RUNTIMES=(libasan.so.8 libubsan.so.1 libstdc++.so.6)

require() {
    [[ -x $ARM/prefix/bin/qjs && -f $ARM/prefix/lib/libwebsockets.so && -f $QJS_SRC/quickjs.h ]] ||
        fail "find the armhf build in build/arm (run: make setup-arm)"
    local lib
    for lib in "${RUNTIMES[@]}"; do
        [[ -e $CROSS_LIB/$lib ]] ||
            fail "find $CROSS_LIB/$lib (libasan8-armhf-cross, libubsan1-armhf-cross, libstdc++6-armhf-cross; run: scripts/setup-apt.sh arm)"
    done
}

STAMP=arm-${SAN##*/}
QJS_KEY="quickjs $QJS_UPSTREAM $(hash_of "$QJS_SRC/quickjs.c") $SAN_QJS $SAN_LINK $(${CROSS}gcc -dumpfullversion)"
build_quickjs() {
    stamp_is "$STAMP-quickjs" "$QJS_KEY" && [[ -x $PREFIX/bin/qjs ]] && return
    say "cross-building qjs with -fsanitize=$SANITIZERS"
    mkdir -p "$PREFIX/bin" "$PREFIX/lib"
    qjs_copy "$QJS_SRC" "$SAN" "${CROSS}gcc" "$SAN_QJS $SAN_LINK"
    quietly "$STAMP-quickjs" "build qjs" make -C "$SAN/src/quickjs" -j"$JOBS" CROSS_PREFIX="$CROSS" \
        CC="$SAN/cc-wrap" qjs
    quietly "$STAMP-quickjs" "install qjs" install -m755 "$SAN/src/quickjs/qjs" "$PREFIX/bin/"
    stamp_set "$STAMP-quickjs" "$QJS_KEY"
}

install_runtimes() {
    local lib
    for lib in "${RUNTIMES[@]}"; do
        install -m644 "$(realpath "$CROSS_LIB/$lib")" "$PREFIX/lib/$lib"
    done
}

build_module() {
    mkdir -p "$SAN/root/build"
    ln -sfn ../../../../quickjs-websocket "$SAN/root/quickjs-websocket"
    ln -sfn ../../../../clients "$SAN/root/clients"
    # (its Makefile appends to CFLAGS: given in the environment)
    quietly "$STAMP-module" "build quickjs-websocket (armhf, -fsanitize=$SANITIZERS)" env CFLAGS="$SAN_OURS" \
        make -C "$ROOT/quickjs-websocket" CC="${CROSS}gcc" PREFIX="$ARM/prefix" SYSROOT="$ARM/sysroot" \
        OUT="$SAN/root/build/quickjs-websocket" OBJDIR="$SAN/obj/quickjs-websocket"
    quietly "$STAMP-module" "build wsbench_check.so (armhf, -fsanitize=$SANITIZERS)" env CFLAGS="$SAN_OURS" \
        make -C "$ROOT/clients/quickjs-check" CC="${CROSS}gcc" PREFIX="$ARM/prefix" OUT="$SAN/root/build/clients"
}

require
build_quickjs
install_runtimes
build_module
