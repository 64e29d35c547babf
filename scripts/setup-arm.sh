#!/usr/bin/env bash
# make setup-arm (not part of make setup): the QuickJS client for 32-bit ARM (armhf), beside
# the x86-64 build, everything under build/arm/:
#   * the cross compiler and qemu-arm: Debian bookworm packages on the system
#     (scripts/setup-apt.sh arm: gcc-arm-linux-gnueabihf, libc6-dev-armhf-cross, qemu-user)
#   * build/arm/sysroot: bookworm's armhf OpenSSL 3.0 and zlib (headers, libraries) and the
#     runtime qemu-arm -L needs (loader, libc, libgcc_s), pinned in scripts/pins-arm.sh,
#     downloaded with a private apt configuration (build/arm/apt: its own sources list, state
#     and cache; APT::Architecture "armhf" in that configuration only) and unpacked with
#     dpkg-deb -x. The system's apt sources and architectures are never touched.
#   * build/arm/prefix: QuickJS 2025-04-26 (bin/qjs, lib/libquickjs.a, include/quickjs) and
#     libwebsockets 4.3.5 (lib/libwebsockets.so), cross-built from the same trixie source
#     tarballs as the x86 build (build/src, fetched by scripts/setup-native.sh; the same
#     Debian patches, the same cmake options), each in its own copy under build/arm/src;
#     libwebsockets also gets scripts/patches/lws-32bit-frame-length.patch (32-bit only)
#   * build/arm/root/build/quickjs-websocket/{lws.so,websocket.js}: the module and the
#     wsproto room, by quickjs-websocket/Makefile with CC, PREFIX and SYSROOT (-Werror);
#     build/arm/root/quickjs-websocket -> the source tree (tests/js/run.js imports the
#     module by a relative path: make test-arm sets QJSWS_TEST_ARM_ROOT=build/arm/root);
#     build/arm/root/build/clients/wsbench_check.so and build/arm/root/clients -> clients/
#     (the qjs benchmark adapter, clients/quickjs.mjs, which one test runs; built with
#     QEMU_MARK=1: check.count() marks the measured phase for the counting plugin)
#   * build/arm/qemu-count/wsbench-count.so: the QEMU TCG plugin that counts the guest
#     instructions of the measured phase (scripts/qemu-count, wsbench gate --arch armhf),
#     built against include/qemu/qemu-plugin.h of the system's qemu-user version, taken from
#     bookworm's qemu source package (a second private apt configuration, build/arm/apt-src:
#     bookworm deb-src only) into build/arm/qemu-plugin/include; pinned in pins-arm.sh
#
# Run scripts/setup-native.sh first (make setup-arm does). Idempotent: stamps in
# build/stamps/arm-*; logs in build/logs/arm-*.log.
set -euo pipefail
STEP_NAME=setup-arm
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/pins.sh"
source "$ROOT/scripts/pins-arm.sh"

BUILD=$ROOT/build
ARM=$BUILD/arm
APT_DIR=$ARM/apt
DEBS=$ARM/debs
SYSROOT=$ARM/sysroot
PREFIX=$ARM/prefix
SRC=$ARM/src
TRIPLET=arm-linux-gnueabihf
CROSS=$TRIPLET-
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
JOBS=$(nproc 2>/dev/null || echo 2)
LWS_DIR=$SRC/libwebsockets-$LWS_UPSTREAM
QJS_DIR=$SRC/quickjs-$QJS_UPSTREAM
MULTILIB=$SYSROOT/usr/lib/$TRIPLET

run() { local step=$1; shift; quietly "arm-$step" "$step" "$@"; }
sha_ok() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }

require_tools() {
    local missing=() t
    for t in ${CROSS}gcc ${CROSS}nm qemu-arm cmake ninja apt-get dpkg-deb; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
    [[ -f /usr/$TRIPLET/include/stdio.h ]] || missing+=("libc6-dev-armhf-cross")
    ((${#missing[@]} == 0)) || fail "find ${missing[*]} (run: scripts/setup-apt.sh arm)"
    sha_ok "$BUILD/src/$LWS_ORIG" "$LWS_SHA" && sha_ok "$BUILD/src/$QJS_ORIG" "$QJS_SHA" ||
        fail "find the pinned QuickJS and libwebsockets tarballs in build/src (run: make setup)"
}

# ---------------------------------------------------------------- the sysroot

# Private apt configuration (lib.sh, private_apt): bookworm's armhf binary packages only;
# the architecture is set here and nowhere else.
setup_private_apt() {
    private_apt "$APT_DIR" "deb [arch=armhf signed-by=$KEYRING] http://deb.debian.org/debian $ARM_SUITE main" \
        "APT::Architecture=armhf" "APT::Architectures::=armhf"
}

# fetch_deb NAME=VERSION: the pinned .deb into build/arm/debs (apt checks it against the
# signed index); if bookworm has moved on, the newest revision of the same upstream version.
fetch_deb() {
    local name=${1%%=*} ver=${1#*=} have cand
    have=$(ls "$DEBS/${name}_"*"_armhf.deb" 2>/dev/null | head -n1 || true)
    [[ -n $have ]] && return
    if ! (cd "$DEBS" && apt-get "${APT_OPTS[@]}" -q download "$name=$ver") >>"$LOGS/arm-fetch.log" 2>&1; then
        cand=$(apt-cache "${APT_OPTS[@]}" policy "$name" | awk '/Candidate:/ {print $2}')
        if [[ -z $cand || $cand == "(none)" || ${cand%-*} != "${ver%-*}" ]]; then
            echo "$name=$ver: not in $ARM_SUITE, and no revision of the same upstream version (candidate: $cand)" \
                >>"$LOGS/arm-fetch.log"
            fail "download $name=$ver" "$LOGS/arm-fetch.log"
        fi
        echo "$name=$ver: superseded in $ARM_SUITE, taking $cand" | tee -a "$LOGS/arm-fetch.log" >&2
        (cd "$DEBS" && apt-get "${APT_OPTS[@]}" -q download "$name=$cand") >>"$LOGS/arm-fetch.log" 2>&1 ||
            fail "download $name=$cand" "$LOGS/arm-fetch.log"
    fi
}

# relink_absolute: packages hold absolute symbolic links (libz.so -> /lib/...); inside the
# sysroot they must point into it, not at the host's files.
relink_absolute() {
    local link target rel
    while IFS= read -r -d '' link; do
        target=$(readlink "$link")
        [[ $target == /* ]] || continue
        rel=$(realpath -m --relative-to="$(dirname "$link")" "$SYSROOT$target")
        ln -sfn "$rel" "$link"
    done < <(find "$SYSROOT" -type l -print0)
}

SYSROOT_KEY="$ARM_SUITE ${ARM_DEBS[*]}"
build_sysroot() {
    stamp_is arm-sysroot "$SYSROOT_KEY" && [[ -f $SYSROOT/usr/include/openssl/ssl.h ]] && return
    say "armhf sysroot: ${ARM_DEBS[*]} ($ARM_SUITE)"
    setup_private_apt
    rm -rf "$DEBS" "$SYSROOT"
    mkdir -p "$DEBS" "$SYSROOT"
    : >"$LOGS/arm-fetch.log"
    run fetch apt-get "${APT_OPTS[@]}" -q update
    local d
    for d in "${ARM_DEBS[@]}"; do fetch_deb "$d"; done
    for d in "$DEBS"/*.deb; do run sysroot dpkg-deb -x "$d" "$SYSROOT"; done
    relink_absolute
    [[ -f $SYSROOT/usr/include/openssl/ssl.h && -e $SYSROOT/lib/ld-linux-armhf.so.3 && -e $MULTILIB/libz.so ]] ||
        fail "unpack the sysroot (no ssl.h, loader or libz.so)" "$LOGS/arm-sysroot.log"
    stamp_set arm-sysroot "$SYSROOT_KEY"
}

# ---------------------------------------------------------------- QuickJS

# The upstream Makefile cross-compiles with CROSS_PREFIX: it builds a host qjsc (host-qjsc,
# gcc) for repl.c and the target's qjs with arm-linux-gnueabihf-gcc, linked -rdynamic as on
# x86 (what lets qjs dlopen lws.so). Debian's two patches are packaging only (as on x86).
QJS_KEY="$QJS_VER $QJS_SHA cross=$CROSS prefix=$PREFIX"
build_quickjs() {
    stamp_is arm-quickjs "$QJS_KEY" && [[ -x $PREFIX/bin/qjs && -f $PREFIX/lib/libquickjs.a ]] && return
    say "cross-building quickjs (make -j$JOBS CROSS_PREFIX=$CROSS)"
    local t0=$SECONDS
    rm -rf "$QJS_DIR"
    mkdir -p "$QJS_DIR"
    run quickjs tar -xJf "$BUILD/src/$QJS_ORIG" -C "$QJS_DIR" --strip-components=1
    run quickjs make -C "$QJS_DIR" -j"$JOBS" CROSS_PREFIX="$CROSS" PREFIX="$PREFIX" qjs libquickjs.a
    run quickjs install -d "$PREFIX/bin" "$PREFIX/lib/quickjs" "$PREFIX/include/quickjs"
    run quickjs install -m755 "$QJS_DIR/qjs" "$PREFIX/bin/"
    run quickjs install -m644 "$QJS_DIR/libquickjs.a" "$PREFIX/lib/quickjs/"
    run quickjs ln -sf quickjs/libquickjs.a "$PREFIX/lib/libquickjs.a"
    run quickjs install -m644 "$QJS_DIR/quickjs.h" "$QJS_DIR/quickjs-libc.h" "$PREFIX/include/quickjs/"
    if [[ $(${CROSS}nm -D "$PREFIX/bin/qjs") != *JS_NewCFunction* ]]; then
        echo "qjs does not export JS_NewCFunction* (-rdynamic missing?)" >>"$LOGS/arm-quickjs.log"
        fail "export qjs' symbols" "$LOGS/arm-quickjs.log"
    fi
    stamp_set arm-quickjs "$QJS_KEY"
    say "quickjs done in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- libwebsockets

# The x86 build's cmake options (scripts/lws-options.sh, LWS_CMAKE_OPTS) with this prefix,
# and a toolchain file: the cross compiler, OpenSSL from the sysroot.
TOOLCHAIN=$ARM/toolchain.cmake
write_toolchain() {
    cat >"$TOOLCHAIN" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER ${CROSS}gcc)
set(CMAKE_CXX_COMPILER ${CROSS}g++)
set(CMAKE_FIND_ROOT_PATH $SYSROOT /usr/$TRIPLET)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_C_FLAGS_INIT "-isystem $SYSROOT/usr/include -isystem $SYSROOT/usr/include/$TRIPLET")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-L$MULTILIB -Wl,-rpath-link,$MULTILIB")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-L$MULTILIB -Wl,-rpath-link,$MULTILIB")
EOF
}

source "$ROOT/scripts/lws-options.sh"  # the x86 build's LWS_CMAKE_OPTS, for this PREFIX
LWS_CMAKE_OPTS+=(
    -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN"
    -DOPENSSL_ROOT_DIR="$SYSROOT/usr"
    -DOPENSSL_INCLUDE_DIR="$SYSROOT/usr/include"
    -DOPENSSL_SSL_LIBRARY="$MULTILIB/libssl.so"
    -DOPENSSL_CRYPTO_LIBRARY="$MULTILIB/libcrypto.so"
)

# the Debian packaging tarball beside the orig (as setup-native.sh picks it), if any
debian_tarball() {
    local f=$BUILD/src/${LWS_PKG}_${LWS_VER}.debian.tar.xz
    if [[ -f $f ]]; then echo "$f"; return; fi
    { ls -1 "$BUILD/src/${LWS_PKG}"_*.debian.tar.xz 2>/dev/null || true; } | sort -V | tail -n1
}

# Ours, for 32-bit targets only (compiled out where size_t has 64 bits, so the x86 build
# does not need it): lws kept the low 32 bits of a 64-bit frame length (the patch says more).
LWS_ARM_PATCHES=("$ROOT/scripts/patches/lws-32bit-frame-length.patch")

unpack_lws() { # orig tarball + debian/patches/series, as scripts/setup-native.sh does it, + ours
    local deb=$1 p patches=()
    rm -rf "$LWS_DIR"
    mkdir -p "$LWS_DIR"
    run lws tar -xzf "$BUILD/src/$LWS_ORIG" -C "$LWS_DIR" --strip-components=1
    if [[ -n $deb ]]; then
        run lws tar -xJf "$deb" -C "$LWS_DIR"
        if [[ -f $LWS_DIR/debian/patches/series ]]; then
            while read -r p _; do
                [[ -z $p || $p == \#* ]] || patches+=("$p")
            done <"$LWS_DIR/debian/patches/series"
        fi
    fi
    for p in "${patches[@]}"; do run lws patch -d "$LWS_DIR" -p1 -N -i "debian/patches/$p"; done
    for p in "${LWS_ARM_PATCHES[@]}"; do run lws patch -d "$LWS_DIR" -p1 -N -i "$p"; done
}

build_lws() {
    local deb key
    deb=$(debian_tarball)
    key="$LWS_VER $LWS_SHA ${deb##*/} ours=$(hash_of "${LWS_ARM_PATCHES[@]}") ${ARM_DEBS[*]} ${LWS_CMAKE_OPTS[*]}"
    stamp_is arm-lws "$key" && [[ -f $PREFIX/lib/libwebsockets.so && -f $PREFIX/include/lws_config.h ]] && return
    say "cross-building libwebsockets (cmake + ninja -j$JOBS)"
    local t0=$SECONDS
    write_toolchain
    unpack_lws "$deb"
    run lws env GIT_CEILING_DIRECTORIES="$SRC" cmake -S "$LWS_DIR" -B "$LWS_DIR/build" "${LWS_CMAKE_OPTS[@]}"
    run lws ninja -C "$LWS_DIR/build" -j"$JOBS"
    run lws ninja -C "$LWS_DIR/build" install
    grep -q '^#define LWS_WITH_EXTERNAL_POLL' "$PREFIX/include/lws_config.h" ||
        fail "configure libwebsockets with LWS_WITH_EXTERNAL_POLL" "$LOGS/arm-lws.log"
    stamp_set arm-lws "$key"
    say "libwebsockets done in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- the module

build_module() {
    mkdir -p "$ARM/root/build"
    ln -sfn ../../../quickjs-websocket "$ARM/root/quickjs-websocket"
    ln -sfn ../../../clients "$ARM/root/clients"
    : >"$LOGS/arm-module.log"
    run module make -C "$ROOT/quickjs-websocket" CC="${CROSS}gcc" PREFIX="$PREFIX" SYSROOT="$SYSROOT" \
        OUT="$ARM/root/build/quickjs-websocket" OBJDIR="$ARM/obj/quickjs-websocket"
    # the qjs adapter's echo checks (clients/quickjs.mjs imports them; a test runs it)
    run module make -C "$ROOT/clients/quickjs-check" CC="${CROSS}gcc" PREFIX="$PREFIX" \
        OUT="$ARM/root/build/clients" QEMU_MARK=1
    if grep -qE "^${CROSS}gcc" "$LOGS/arm-module.log"; then
        say "built build/arm/root/build/quickjs-websocket/lws.so"
    fi
}

# ---------------------------------------------------------------- the counting plugin

# The plugin header is in no binary package: it comes from the qemu source package of the
# version qemu-user has here (its source version, through a private deb-src configuration,
# bookworm only), and only that one file is kept. The Debian patches must not touch it (checked).
QEMU_INC=$ARM/qemu-plugin/include
QEMU_SRC=$ARM/qemu-src
COUNT_OUT=$ARM/qemu-count
COUNT_SO=$COUNT_OUT/wsbench-count.so

fetch_plugin_header() {
    local have upstream key orig deb
    have=$(dpkg-query -W -f='${source:Version}' qemu-user 2>/dev/null || true)
    [[ -n $have ]] || fail "find qemu-user's version (run: scripts/setup-apt.sh arm)"
    upstream=${have#*:}
    upstream=${upstream%-*}
    [[ $upstream == "$(q=${QEMU_SRC_VER#*:}; echo "${q%-*}")" ]] ||
        fail "match qemu-user $have with the pinned QEMU_SRC_VER=$QEMU_SRC_VER (another upstream version: update scripts/pins-arm.sh)"
    key="qemu $have $QEMU_PLUGIN_H_SHA"
    stamp_is arm-qemu-header "$key" && sha_ok "$QEMU_INC/qemu-plugin.h" "$QEMU_PLUGIN_H_SHA" && return
    [[ $have == "$QEMU_SRC_VER" ]] || say "qemu-user is $have, the pin $QEMU_SRC_VER: taking $have's header (its sha256 must be the pinned one)"
    say "the QEMU plugin header: qemu $have source package ($ARM_SUITE deb-src)"
    private_apt "$ARM/apt-src" "deb-src [signed-by=$KEYRING] http://deb.debian.org/debian $ARM_SUITE main"
    rm -rf "$QEMU_SRC" "$QEMU_INC"
    mkdir -p "$QEMU_SRC" "$QEMU_INC"
    : >"$LOGS/arm-qemu-header.log"
    run qemu-header apt-get "${APT_OPTS[@]}" -q update
    (cd "$QEMU_SRC" && apt-get "${APT_OPTS[@]}" -q source --download-only "qemu=$have") \
        >>"$LOGS/arm-qemu-header.log" 2>&1 || fail "download the qemu $have source package" "$LOGS/arm-qemu-header.log"
    orig=$(ls "$QEMU_SRC"/qemu_*.orig.tar.* 2>/dev/null | head -n1 || true)
    deb=$(ls "$QEMU_SRC"/qemu_*.debian.tar.* 2>/dev/null | head -n1 || true)
    [[ -n $orig && -n $deb ]] || fail "find the qemu source tarballs" "$LOGS/arm-qemu-header.log"
    if tar -xf "$deb" -O --wildcards 'debian/patches/*' 2>>"$LOGS/arm-qemu-header.log" |
        grep -q '^+++ .*include/qemu/qemu-plugin\.h'; then
        echo "a Debian patch of qemu $have changes include/qemu/qemu-plugin.h" >>"$LOGS/arm-qemu-header.log"
        fail "take the plugin header as the orig tarball has it" "$LOGS/arm-qemu-header.log"
    fi
    run qemu-header tar -xf "$orig" -C "$QEMU_INC" --wildcards --strip-components=3 '*/include/qemu/qemu-plugin.h'
    if ! sha_ok "$QEMU_INC/qemu-plugin.h" "$QEMU_PLUGIN_H_SHA"; then
        echo "qemu-plugin.h of qemu $have: sha256 $(sha256sum "$QEMU_INC/qemu-plugin.h" | cut -d' ' -f1), pinned $QEMU_PLUGIN_H_SHA" \
            >>"$LOGS/arm-qemu-header.log"
        fail "check the plugin header's sha256 (scripts/pins-arm.sh)" "$LOGS/arm-qemu-header.log"
    fi
    rm -rf "$QEMU_SRC"  # 23 MB of sources for one header
    stamp_set arm-qemu-header "$key"
}

# The plugin (make decides whether to rebuild), and a check that qemu-arm loads it and that it
# counts: qjs run once with it, the file must say how many instructions ran.
build_count_plugin() {
    fetch_plugin_header
    run qemu-count make -C "$ROOT/scripts/qemu-count" QEMU_INC="$QEMU_INC" OUT="$COUNT_OUT"
    local key check=$COUNT_OUT/load-check.txt
    key="$(hash_of "$COUNT_SO" "$PREFIX/bin/qjs") $(qemu-arm --version | head -n1)"
    stamp_is arm-qemu-count "$key" && return
    rm -f "$check"
    run qemu-count qemu-arm -L "$SYSROOT" -plugin "$COUNT_SO,out=$check" "$PREFIX/bin/qjs" -e ''
    grep -qE '^wsbench-qemu-count instructions=0 phases=0 open=0 all=[1-9][0-9]*$' "$check" 2>/dev/null || {
        echo "qemu-arm with the plugin wrote: $(cat "$check" 2>/dev/null || echo nothing)" >>"$LOGS/arm-qemu-count.log"
        fail "load the counting plugin in qemu-arm" "$LOGS/arm-qemu-count.log"
    }
    say "built build/arm/qemu-count/wsbench-count.so (qemu-arm loads it: $(cut -d' ' -f5 "$check"))"
    stamp_set arm-qemu-count "$key"
}

main() {
    mkdir -p "$ARM"
    require_tools
    build_sysroot
    build_quickjs
    build_lws
    build_module
    build_count_plugin
}

main "$@"
