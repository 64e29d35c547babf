#!/usr/bin/env bash
# What `wsbench profile` needs beyond the normal build (run after setup-native.sh):
#   * inferno 0.12.3 (crates.io; inferno-collapse-perf, inferno-flamegraph,
#     inferno-diff-folded) installed with cargo into build/tools/inferno;
#   * a profiling build of every native piece, with frame pointers and symbols
#     (-fno-omit-frame-pointer -g), so perf's frame-pointer unwinding sees whole C stacks:
#       build/profile/prefix/bin/qjs            QuickJS 2025-04-26 (same source as build/prefix)
#       build/profile/prefix/lib/libwebsockets.so  libwebsockets 4.3.5 (same source and options)
#       build/profile/root/build/quickjs-websocket/{lws.so,websocket.js}  our module
#       build/profile/root/build/clients/wsbench_check.so                 the qjs echo checks
#       build/profile/bin/{lws-echo,wsbench-loadgen}
#     build/profile/root/clients is a symlink to clients/, so the unchanged adapter
#     clients/quickjs.mjs, run as build/profile/root/clients/quickjs.mjs, imports the
#     profiling module through its relative path ('../build/quickjs-websocket/...').
# The normal build in build/prefix and build/bin is not touched. Idempotent (stamps).
set -euo pipefail
STEP_NAME=setup-profile
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INFERNO_VERSION=0.12.3
TOOLS=$ROOT/build/tools
PROF=$ROOT/build/profile
PREFIX=$PROF/prefix
SRC=$ROOT/build/src
QJS_SRC=$SRC/quickjs-2025.04.26
LWS_SRC=$SRC/libwebsockets-4.3.5
JOBS=$(nproc 2>/dev/null || echo 2)
FP_FLAGS="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -g"

install_inferno() {
    local key="inferno $INFERNO_VERSION"
    stamp_is inferno "$key" && [[ -x $TOOLS/inferno/bin/inferno-flamegraph ]] && return
    command -v cargo >/dev/null || fail "find cargo (install Rust's cargo; it installs inferno from crates.io)"
    say "cargo install inferno $INFERNO_VERSION (into build/tools/inferno)"
    quietly inferno "install inferno $INFERNO_VERSION" \
        cargo install inferno --version "$INFERNO_VERSION" --locked --root "$TOOLS/inferno"
    for bin in inferno-collapse-perf inferno-flamegraph inferno-diff-folded; do
        [[ -x $TOOLS/inferno/bin/$bin ]] || fail "find $bin after cargo install" "$LOGS/inferno.log"
    done
    stamp_set inferno "$key"
}

build_quickjs() {
    local key="quickjs 2025.04.26 cc-wrap $FP_FLAGS prefix=$PREFIX"
    stamp_is profile-quickjs "$key" && [[ -x $PREFIX/bin/qjs ]] && return
    [[ -f $QJS_SRC/quickjs.h ]] || fail "find the QuickJS source in build/src (run: scripts/setup-native.sh)"
    say "building qjs with frame pointers"
    mkdir -p "$PREFIX/bin" "$PREFIX/include/quickjs" "$PREFIX/lib/quickjs"
    qjs_copy "$QJS_SRC" "$PROF" cc "$FP_FLAGS"
    quietly profile-quickjs "build qjs" make -C "$PROF/src/quickjs" -j"$JOBS" \
        CC="$PROF/cc-wrap" PREFIX="$PREFIX" qjs libquickjs.a
    quietly profile-quickjs "install qjs" install -m755 "$PROF/src/quickjs/qjs" "$PREFIX/bin/"
    quietly profile-quickjs "install libquickjs.a" install -m644 "$PROF/src/quickjs/libquickjs.a" "$PREFIX/lib/quickjs/"
    quietly profile-quickjs "install headers" install -m644 "$PROF/src/quickjs/quickjs.h" \
        "$PROF/src/quickjs/quickjs-libc.h" "$PREFIX/include/quickjs/"
    stamp_set profile-quickjs "$key"
}

build_lws() {
    local key="lws 4.3.5 $FP_FLAGS prefix=$PREFIX"
    stamp_is profile-lws "$key" && [[ -f $PREFIX/lib/libwebsockets.so ]] && return
    [[ -f $LWS_SRC/CMakeLists.txt ]] || fail "find the libwebsockets source in build/src (run: scripts/setup-native.sh)"
    say "building libwebsockets with frame pointers"
    rm -rf "$PROF/lws-build"
    quietly profile-lws "configure libwebsockets" env GIT_CEILING_DIRECTORIES="$SRC" \
        cmake -S "$LWS_SRC" -B "$PROF/lws-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS="$FP_FLAGS" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib \
        -DCMAKE_INSTALL_RPATH="$PREFIX/lib" -DLWS_WITH_EXTERNAL_POLL=ON -DLWS_WITH_SSL=ON \
        -DLWS_WITH_SHARED=ON -DLWS_WITH_STATIC=OFF -DLWS_WITHOUT_TESTAPPS=ON \
        -DLWS_WITH_MINIMAL_EXAMPLES=OFF -DLWS_WITHOUT_EXTENSIONS=ON -DDISABLE_WERROR=ON
    quietly profile-lws "build libwebsockets" ninja -C "$PROF/lws-build" -j"$JOBS"
    quietly profile-lws "install libwebsockets" ninja -C "$PROF/lws-build" install
    stamp_set profile-lws "$key"
}

# Our own pieces: their Makefiles track dependencies, so this is quiet when up to date.
build_ours() {
    : >"$LOGS/profile-ours.log"
    local cflags="-O2 $FP_FLAGS"
    mkdir -p "$PROF/root/build" "$PROF/bin"
    ln -sfn ../../../clients "$PROF/root/clients"
    quietly profile-ours "build lws-echo (profiling)" make -C "$ROOT/servers/lws" PREFIX="$PREFIX" \
        BINDIR="$PROF/bin" OBJDIR="$PROF/obj/lws-echo" CFLAGS="$FP_FLAGS"
    quietly profile-ours "build wsbench-loadgen (profiling)" make -C "$ROOT/clients/loadgen" \
        BINDIR="$PROF/bin" OBJDIR="$PROF/obj/loadgen" CFLAGS="$cflags"
    # (its Makefile appends to CFLAGS: given in the environment, not on the command line)
    quietly profile-ours "build quickjs-websocket (profiling)" env CFLAGS="$cflags" \
        make -C "$ROOT/quickjs-websocket" PREFIX="$PREFIX" OUT="$PROF/root/build/quickjs-websocket" \
        OBJDIR="$PROF/obj/quickjs-websocket"
    quietly profile-ours "build wsbench_check.so (profiling)" make -C "$ROOT/clients/quickjs-check" \
        PREFIX="$PREFIX" OUT="$PROF/root/build/clients" CFLAGS="$cflags"
}

install_inferno
build_quickjs
build_lws
build_ours
