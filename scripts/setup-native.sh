#!/usr/bin/env bash
# Build the native pieces of wsbench into build/prefix:
#   * QuickJS 2025-04-26   (bin/qjs, bin/qjsc, include/quickjs/*.h, lib/libquickjs.a)
#   * libwebsockets 4.3.5  (lib/libwebsockets.so, include/libwebsockets*.h)
#   * the same libwebsockets with extensions (permessage-deflate on zlib) in its own
#     prefix, build/prefix-pmd, for lws-echo-deflate alone: everything else links the
#     extension-free build/prefix
#   * the lws echo server  (build/bin/lws-echo, via servers/lws/Makefile; and
#     build/bin/lws-echo-deflate, the same sources against build/prefix-pmd), the load
#     generator, the QuickJS WebSocket module and the qjs client's echo checks
#
# Sources come from Debian trixie *source* packages, fetched with a private apt
# configuration under build/apt/ (the system's apt sources are never touched and
# no trixie binary package is installed). The orig tarballs are pinned by sha256.
#
# Idempotent: every finished step leaves a stamp in build/stamps/; a second run
# only re-checks the stamps and lets make confirm lws-echo is up to date.
# Verbose output goes to build/logs/<step>.log.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
APT_DIR=$BUILD/apt
SRC=$BUILD/src
PREFIX=$BUILD/prefix
PMD_PREFIX=$PREFIX-pmd
JOBS=$(nproc 2>/dev/null || echo 2)

SUITE=trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The pinned versions and tarball hashes (shared with the container images' build args).
source "$ROOT/scripts/pins.sh"
LWS_DIR=$SRC/libwebsockets-$LWS_UPSTREAM
QJS_DIR=$SRC/quickjs-$QJS_UPSTREAM

# ---------------------------------------------------------------- helpers

STEP_NAME=setup-native
source "$ROOT/scripts/lib.sh"

run() { # run STEP CMD...: CMD's output goes to build/logs/STEP.log; failure stops the step
    local step=$1; shift
    quietly "$step" "$step" "$@"
}

sha_ok() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }

require_tools() {
    local missing=() t
    for t in cc make cmake ninja tar xz gzip patch sha256sum apt-get nm; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
    [[ -f /usr/include/openssl/ssl.h ]] || missing+=("libssl-dev")
    [[ -f /usr/include/zlib.h ]] || missing+=("zlib1g-dev")
    [[ -f $KEYRING ]] || missing+=("debian-archive-keyring")
    if ((${#missing[@]})); then
        printf 'setup-native: missing: %s (install: apt-get install build-essential cmake ninja-build libssl-dev zlib1g-dev xz-utils dpkg-dev)\n' \
            "${missing[*]}" >&2
        exit 1
    fi
}

# ---------------------------------------------------------------- fetch

# Private apt configuration (lib.sh, private_apt): trixie deb-src only.
setup_private_apt() {
    private_apt "$APT_DIR" "deb-src [signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main"
}

# fetch_sources: download both source packages into build/src unless both
# pinned orig tarballs are already there.
fetch_sources() {
    if sha_ok "$SRC/$LWS_ORIG" "$LWS_SHA" && sha_ok "$SRC/$QJS_ORIG" "$QJS_SHA"; then
        return
    fi
    say "fetching $LWS_PKG $LWS_VER and $QJS_PKG $QJS_VER sources ($SUITE)"
    setup_private_apt
    run fetch apt-get "${APT_OPTS[@]}" -q update
    fetch_one "$LWS_PKG" "$LWS_VER" "$LWS_ORIG" "$LWS_SHA"
    fetch_one "$QJS_PKG" "$QJS_VER" "$QJS_ORIG" "$QJS_SHA"
}

# fetch_one PKG VERSION ORIG SHA256
# apt-get's exit status is not trusted either way: the .dsc has been seen to
# 404 while the tarballs arrive fine. What counts is the pinned orig tarball.
fetch_one() {
    local pkg=$1 ver=$2 orig=$3 sha=$4
    sha_ok "$SRC/$orig" "$sha" && return
    rm -f "$SRC/$orig"
    (cd "$SRC" && apt-get "${APT_OPTS[@]}" -q source --download-only "$pkg=$ver") \
        >>"$LOGS/fetch.log" 2>&1 || true
    if [[ ! -f $SRC/$orig ]]; then
        # The pinned Debian revision may have been superseded; any revision
        # with the same upstream tarball will do (the sha256 pin still holds).
        (cd "$SRC" && apt-get "${APT_OPTS[@]}" -q source --download-only "$pkg") \
            >>"$LOGS/fetch.log" 2>&1 || true
    fi
    if ! sha_ok "$SRC/$orig" "$sha"; then
        echo "sha256 mismatch or missing: $orig (want $sha)" >>"$LOGS/fetch.log"
        fail fetch "$LOGS/fetch.log"
    fi
}

# debian_tarball PKG VERSION: path of the Debian packaging tarball, preferring
# the pinned revision; empty if none was downloaded.
debian_tarball() {
    local f=$SRC/${1}_${2}.debian.tar.xz
    if [[ -f $f ]]; then echo "$f"; return; fi
    { ls -1 "$SRC/${1}"_*.debian.tar.xz 2>/dev/null || true; } | sort -V | tail -n1
}

# ---------------------------------------------------------------- unpack

# unpack_lws: orig tarball + the Debian security patches (debian/patches/series),
# applied with patch(1). All patches are dry-run first so the tree is either
# fully patched or left as plain orig.
unpack_lws() {
    local deb key
    deb=$(debian_tarball "$LWS_PKG" "$LWS_VER")
    key="$LWS_SHA ${deb##*/}"
    stamp_is unpack-lws "$key" && [[ -d $LWS_DIR ]] && return
    say "unpacking libwebsockets"
    rm -rf "$LWS_DIR" "$STAMPS/build-lws" "$STAMPS/build-lws-pmd"
    mkdir -p "$LWS_DIR"
    run unpack-lws tar -xzf "$SRC/$LWS_ORIG" -C "$LWS_DIR" --strip-components=1
    if [[ -n $deb ]]; then
        run unpack-lws tar -xJf "$deb" -C "$LWS_DIR"
        apply_series unpack-lws "$LWS_DIR"
    fi
    stamp_set unpack-lws "$key"
}

apply_series() { # apply_series STEP DIR
    local step=$1 dir=$2 series=$2/debian/patches/series p
    [[ -f $series ]] || return 0
    local patches=()
    while read -r p _; do
        [[ -z $p || $p == \#* ]] || patches+=("$p")
    done <"$series"
    for p in "${patches[@]}"; do
        run "$step" patch -d "$dir" -p1 --dry-run -N -i "debian/patches/$p"
    done
    for p in "${patches[@]}"; do
        run "$step" patch -d "$dir" -p1 -N -i "debian/patches/$p"
    done
}

# unpack_quickjs: orig tarball only. Debian's two quickjs patches are packaging
# tweaks (multiarch install path, -latomic for armel) and are not needed here.
unpack_quickjs() {
    stamp_is unpack-quickjs "$QJS_SHA" && [[ -d $QJS_DIR ]] && return
    say "unpacking quickjs"
    rm -rf "$QJS_DIR" "$STAMPS/build-quickjs"
    mkdir -p "$QJS_DIR"
    run unpack-quickjs tar -xJf "$SRC/$QJS_ORIG" -C "$QJS_DIR" --strip-components=1
    [[ -f $QJS_DIR/quickjs.h ]] || { echo "no $QJS_DIR/quickjs.h" >>"$LOGS/unpack-quickjs.log"; fail unpack-quickjs "$LOGS/unpack-quickjs.log"; }
    stamp_set unpack-quickjs "$QJS_SHA"
}

# ---------------------------------------------------------------- build

# build_quickjs: upstream Makefile. Only the targets we need are built (the
# full "all" also builds run-test262 and a CONFIG_CHECK_JSVALUE copy of
# quickjs.c). qjs is linked with -rdynamic by upstream (LDEXPORT), which is
# what lets it dlopen native .so modules; we check that below. Binaries are
# installed unstripped so profiles get symbols.
QJS_KEY="$QJS_VER prefix=$PREFIX"
quickjs_built() {
    stamp_is build-quickjs "$QJS_KEY" && [[ -x $PREFIX/bin/qjs && -f $PREFIX/lib/libquickjs.a ]]
}

build_quickjs() {
    quickjs_built && return
    say "building quickjs (make -j$JOBS)"
    local t0=$SECONDS
    run build-quickjs make -C "$QJS_DIR" -j"$JOBS" PREFIX="$PREFIX" qjs qjsc libquickjs.a
    run build-quickjs install -d "$PREFIX/bin" "$PREFIX/lib/quickjs" "$PREFIX/include/quickjs"
    run build-quickjs install -m755 "$QJS_DIR/qjs" "$QJS_DIR/qjsc" "$PREFIX/bin/"
    run build-quickjs install -m644 "$QJS_DIR/libquickjs.a" "$PREFIX/lib/quickjs/"
    run build-quickjs ln -sf quickjs/libquickjs.a "$PREFIX/lib/libquickjs.a"
    run build-quickjs install -m644 "$QJS_DIR/quickjs.h" "$QJS_DIR/quickjs-libc.h" \
        "$PREFIX/include/quickjs/"
    # (no grep -q in a pipe here: with pipefail, nm's SIGPIPE would fail it)
    if [[ $(nm -D "$PREFIX/bin/qjs") != *JS_NewCFunction* ]]; then
        echo "qjs does not export JS_NewCFunction* (-rdynamic missing?)" >>"$LOGS/build-quickjs.log"
        fail build-quickjs "$LOGS/build-quickjs.log"
    fi
    stamp_set build-quickjs "$QJS_KEY"
    say "quickjs done in $((SECONDS - t0)) s"
}

source "$ROOT/scripts/lws-options.sh"  # LWS_CMAKE_OPTS for $PREFIX

LWS_KEY="$LWS_VER recipe=2 ${LWS_CMAKE_OPTS[*]}"
lws_built() {
    stamp_is build-lws "$LWS_KEY" && [[ -f $PREFIX/include/lws_config.h ]]
}

build_lws() {
    lws_built && return
    say "building libwebsockets (cmake + ninja -j$JOBS)"
    local t0=$SECONDS bdir=$LWS_DIR/build
    rm -rf "$bdir"
    # lws stamps its version with `git describe` of its source dir; stop git
    # from finding the wsbench repository around build/ (else "4.3.5-<our hash>").
    run build-lws env GIT_CEILING_DIRECTORIES="$SRC" \
        cmake -S "$LWS_DIR" -B "$bdir" "${LWS_CMAKE_OPTS[@]}"
    run build-lws ninja -C "$bdir" -j"$JOBS"
    run build-lws ninja -C "$bdir" install
    if ! grep -q '^#define LWS_WITH_EXTERNAL_POLL' "$PREFIX/include/lws_config.h"; then
        echo "LWS_WITH_EXTERNAL_POLL not defined in lws_config.h" >>"$LOGS/build-lws.log"
        fail build-lws "$LOGS/build-lws.log"
    fi
    stamp_set build-lws "$LWS_KEY"
    say "libwebsockets done in $((SECONDS - t0)) s"
}

# build_lws_pmd: the same source again, with extensions (permessage-deflate; zlib, which
# LWS_WITHOUT_EXTENSIONS=OFF implies and LWS_WITH_ZLIB names), in its own build directory
# and prefix. Only lws-echo-deflate links it, so the QuickJS module, lws-echo and the
# gate's instruction counts keep the extension-free library.
LWS_PMD_CMAKE_OPTS=(
    "${LWS_CMAKE_OPTS[@]/#-DCMAKE_INSTALL_PREFIX=*/-DCMAKE_INSTALL_PREFIX=$PMD_PREFIX}"
)
LWS_PMD_CMAKE_OPTS=(
    "${LWS_PMD_CMAKE_OPTS[@]/#-DCMAKE_INSTALL_RPATH=*/-DCMAKE_INSTALL_RPATH=$PMD_PREFIX/lib}"
)
LWS_PMD_CMAKE_OPTS=(
    "${LWS_PMD_CMAKE_OPTS[@]/#-DLWS_WITHOUT_EXTENSIONS=ON/-DLWS_WITHOUT_EXTENSIONS=OFF}"
    -DLWS_WITH_ZLIB=ON
)

LWS_PMD_KEY="$LWS_VER recipe=1 ${LWS_PMD_CMAKE_OPTS[*]}"
lws_pmd_built() {
    stamp_is build-lws-pmd "$LWS_PMD_KEY" && [[ -f $PMD_PREFIX/include/lws_config.h ]]
}

build_lws_pmd() {
    lws_pmd_built && return
    say "building libwebsockets with permessage-deflate (cmake + ninja -j$JOBS)"
    local t0=$SECONDS bdir=$LWS_DIR/build-pmd
    rm -rf "$bdir" "$PMD_PREFIX"
    run build-lws-pmd env GIT_CEILING_DIRECTORIES="$SRC" \
        cmake -S "$LWS_DIR" -B "$bdir" "${LWS_PMD_CMAKE_OPTS[@]}"
    run build-lws-pmd ninja -C "$bdir" -j"$JOBS"
    run build-lws-pmd ninja -C "$bdir" install
    if grep -q '^#define LWS_WITHOUT_EXTENSIONS' "$PMD_PREFIX/include/lws_config.h" ||
        [[ $(nm -D "$PMD_PREFIX/lib/libwebsockets.so") != *lws_extension_callback_pm_deflate* ]]; then
        echo "no permessage-deflate in $PMD_PREFIX" >>"$LOGS/build-lws-pmd.log"
        fail build-lws-pmd "$LOGS/build-lws-pmd.log"
    fi
    stamp_set build-lws-pmd "$LWS_PMD_KEY"
    say "libwebsockets with permessage-deflate done in $((SECONDS - t0)) s"
}

# build_with_make STEP WHAT DIR [VAR=VALUE...]: our own native pieces, built by their
# Makefiles (make tracks the dependencies, so this is quiet when all is up to date).
build_with_make() {
    local step=$1 what=$2 dir=$3; shift 3
    : >"$LOGS/$step.log"
    run "$step" make -C "$ROOT/$dir" "$@"
    if grep -qE '^(cc|gcc)' "$LOGS/$step.log"; then
        say "built $what"
    fi
}

# build_lws_echo_deflate: build/bin/lws-echo-deflate (servers/lws/Makefile's deflate
# target), as build_with_make does it but not through it: scripts/build-tree.sh (the
# gate's build of a tree) runs every build_with_make line of this file, and the gate
# measures no deflate.
build_lws_echo_deflate() {
    local log=$LOGS/build-lws-echo-deflate.log
    : >"$log"
    run build-lws-echo-deflate make -C "$ROOT/servers/lws" deflate \
        PREFIX="$PREFIX" PMD_PREFIX="$PMD_PREFIX" BINDIR="$BUILD/bin"
    if grep -qE '^(cc|gcc)' "$log"; then
        say "built build/bin/lws-echo-deflate"
    fi
}

# ---------------------------------------------------------------- main

main() {
    mkdir -p "$SRC" "$PREFIX" "$LOGS" "$STAMPS" "$BUILD/bin"
    require_tools
    if ! quickjs_built || ! lws_built || ! lws_pmd_built; then
        fetch_sources
        unpack_quickjs
        unpack_lws
        build_quickjs
        build_lws
        build_lws_pmd
    fi
    build_with_make build-lws-echo build/bin/lws-echo servers/lws PREFIX="$PREFIX" BINDIR="$BUILD/bin"
    build_lws_echo_deflate
    build_with_make build-loadgen build/bin/wsbench-loadgen clients/loadgen BINDIR="$BUILD/bin"
    build_with_make build-quickjs-websocket build/quickjs-websocket quickjs-websocket PREFIX="$PREFIX"
    build_with_make build-quickjs-check build/clients/wsbench_check.so clients/quickjs-check PREFIX="$PREFIX"
}

main "$@"
