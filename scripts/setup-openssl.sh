#!/usr/bin/env bash
# make setup-openssl (opt-in, not part of make setup): a newer OpenSSL, built from Debian
# trixie's openssl *source* package (OPENSSL_VER in scripts/pins.sh) with Debian's patches
# and Configure options, beside the system's (which is never replaced), and the QuickJS
# WebSocket module built against it:
#       build/prefix-openssl/lib/{libssl,libcrypto}.so.3, include/openssl/, bin/openssl
#       build/openssl/root/build/quickjs-websocket/{lws.so,websocket.js}   the module, linked
#               with -rpath build/prefix-openssl/lib first (quickjs-websocket/Makefile's
#               OPENSSL_PREFIX), so the whole qjs process loads that libssl.so.3: lws.so
#               loads it before libwebsockets.so (built against the system's 3.0) asks for
#               the same soname, which the loader then finds already loaded (OpenSSL 3.x
#               keeps its ABI)
#       build/openssl/root/{clients,quickjs-websocket} -> the source tree, and
#       build/openssl/root/build/clients -> build/clients (the echo checks: no OpenSSL), so
#               build/prefix/bin/qjs build/openssl/root/clients/quickjs.mjs runs the client
#               on it (its imports are relative)
# The step ends by running that client over wss:// against lws-echo (3 connections) and
# checking that /proc/PID/maps of the qjs process holds one libssl and one libcrypto, both
# from build/prefix-openssl (scripts/openssl_check.py).
#
# OPENSSLDIR is the system's /usr/lib/ssl (as Debian's own build): the same openssl.cnf
# and CA store. The build is niced (19) and runs OPENSSL_JOBS (default 2) jobs.
# Run make setup first (build/prefix, build/tls, lws-echo).
set -euo pipefail
STEP_NAME=setup-openssl
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/pins.sh"

BUILD=$ROOT/build
SRC=$BUILD/src
OSSL=$BUILD/openssl
APT_DIR=$OSSL/apt
PREFIX=$BUILD/prefix
OSSL_PREFIX=$BUILD/prefix-openssl
OSSL_DIR=$SRC/openssl-$OPENSSL_UPSTREAM
JOBS=${OPENSSL_JOBS:-2}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# Debian's CONFARGS (debian/rules) for amd64, less what the module does not use and would
# need more to build: enable-unit-test (its tests), enable-fips (a second build of the
# crypto as the FIPS provider), enable-zstd/enable-zlib (certificate compression; the
# servers here are on 3.0, which has none). no-tests: the test programs are not built.
CONFARGS=(
    shared --prefix="$OSSL_PREFIX" --openssldir=/usr/lib/ssl --libdir=lib
    no-idea no-mdc2 no-rc5 no-ssl3 no-ssl3-method enable-rfc3779 enable-cms no-capieng
    no-rdrand enable-tfo enable-ec_nistp_64_gcc_128 no-tests
)
# Debian's compiler flags (its rules: hardening=+all), from this system's dpkg-buildflags.
OSSL_CFLAGS=$(DEB_BUILD_MAINT_OPTIONS="hardening=+all future=+lfs" dpkg-buildflags --get CFLAGS 2>/dev/null ||
    echo "-g -O2")
OSSL_LDFLAGS=$(DEB_BUILD_MAINT_OPTIONS="hardening=+all future=+lfs" dpkg-buildflags --get LDFLAGS 2>/dev/null ||
    true)
OSSL_CFLAGS=$(sed -E 's/ ?-ffile-prefix-map=[^ ]+//' <<<"$OSSL_CFLAGS")  # (the cwd's: not a key)
OSSL_KEY="$OPENSSL_VER recipe=1 ${CONFARGS[*]} $OSSL_CFLAGS $OSSL_LDFLAGS"

sha_ok() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }

require_tools() {
    local missing=() t
    for t in cc make perl tar gzip xz patch sha256sum apt-get; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
    [[ -f $KEYRING ]] || missing+=("debian-archive-keyring")
    ((${#missing[@]} == 0)) || fail "find ${missing[*]} (install them)"
    [[ -x $PREFIX/bin/qjs && -f $PREFIX/lib/libwebsockets.so ]] || fail "find build/prefix (run: make setup)"
}

# fetch: the pinned orig tarball and Debian's packaging, through a private apt configuration
# of its own (lib.sh, private_apt: trixie deb-src only; the system's apt is not touched).
fetch() {
    local deb=$SRC/openssl_$OPENSSL_VER.debian.tar.xz
    sha_ok "$SRC/$OPENSSL_ORIG" "$OPENSSL_SHA" && sha_ok "$deb" "$OPENSSL_DEB_SHA" && return
    say "fetching openssl $OPENSSL_VER sources (trixie)"
    mkdir -p "$SRC"
    private_apt "$APT_DIR" "deb-src [signed-by=$KEYRING] http://deb.debian.org/debian trixie main"
    quietly openssl-fetch "update the package lists" apt-get "${APT_OPTS[@]}" -q update
    rm -f "$SRC/$OPENSSL_ORIG" "$deb"
    # apt-get's status is not trusted either way (a signature file may 404): the hashes are
    (cd "$SRC" && apt-get "${APT_OPTS[@]}" -q source --download-only "openssl=$OPENSSL_VER") \
        >>"$LOGS/openssl-fetch.log" 2>&1 || true
    if ! sha_ok "$SRC/$OPENSSL_ORIG" "$OPENSSL_SHA" || ! sha_ok "$deb" "$OPENSSL_DEB_SHA"; then
        echo "sha256 mismatch or missing: $OPENSSL_ORIG or ${deb##*/}" >>"$LOGS/openssl-fetch.log"
        fail "fetch openssl $OPENSSL_VER (pinned; trixie may have moved on: scripts/pins.sh)" \
            "$LOGS/openssl-fetch.log"
    fi
}

# unpack: the orig tarball and Debian's patches (debian/patches/series; all dry-run first)
unpack() {
    local key="$OPENSSL_SHA $OPENSSL_DEB_SHA" p patches=()
    stamp_is unpack-openssl "$key" && [[ -f $OSSL_DIR/Configure ]] && return
    say "unpacking openssl $OPENSSL_UPSTREAM"
    rm -rf "$OSSL_DIR" "$STAMPS/build-openssl"
    mkdir -p "$OSSL_DIR"
    quietly unpack-openssl "unpack openssl" tar -xzf "$SRC/$OPENSSL_ORIG" -C "$OSSL_DIR" --strip-components=1
    quietly unpack-openssl "unpack Debian's openssl packaging" \
        tar -xJf "$SRC/openssl_$OPENSSL_VER.debian.tar.xz" -C "$OSSL_DIR"
    while read -r p _; do
        [[ -z $p || $p == \#* ]] || patches+=("$p")
    done <"$OSSL_DIR/debian/patches/series"
    for p in "${patches[@]}"; do
        quietly unpack-openssl "apply $p" patch -d "$OSSL_DIR" -p1 --dry-run -N -i "debian/patches/$p"
    done
    for p in "${patches[@]}"; do
        quietly unpack-openssl "apply $p" patch -d "$OSSL_DIR" -p1 -N -i "debian/patches/$p"
    done
    stamp_set unpack-openssl "$key"
}

# build: Debian's target (debian-amd64, from its debian-targets patch) out of tree, then
# the libraries, headers and the openssl program (for s_client) installed into the prefix
build() {
    stamp_is build-openssl "$OSSL_KEY" && [[ -f $OSSL_PREFIX/lib/libssl.so.3 ]] && return
    local t0=$SECONDS bdir=$OSSL_DIR/build_shared target
    case $(uname -m) in
        x86_64) target=debian-amd64 ;;
        *) fail "build openssl: only x86-64 (debian-amd64) is set up here" ;;
    esac
    say "building openssl $OPENSSL_UPSTREAM (nice 19, make -j$JOBS: 6 min of CPU; 18 min on 2 busy cores)"
    rm -rf "$bdir" "$OSSL_PREFIX"
    mkdir -p "$bdir"
    : >"$LOGS/build-openssl.log"
    quietly build-openssl "configure openssl" env -C "$bdir" CFLAGS="$OSSL_CFLAGS" LDFLAGS="$OSSL_LDFLAGS" \
        HASHBANGPERL=/usr/bin/perl ../Configure "${CONFARGS[@]}" "$target"
    quietly build-openssl "build openssl" nice -n 19 make -C "$bdir" -j"$JOBS" build_libs apps/openssl
    quietly build-openssl "install openssl" make -C "$bdir" install_dev install_runtime_libs
    quietly build-openssl "install the openssl program" install -D -m755 "$bdir/apps/openssl" \
        "$OSSL_PREFIX/bin/openssl"
    rm -f "$OSSL_PREFIX/lib/libssl.a" "$OSSL_PREFIX/lib/libcrypto.a" # (48 MB nothing here links)
    [[ -f $OSSL_PREFIX/lib/libssl.so.3 && -f $OSSL_PREFIX/include/openssl/ssl.h ]] ||
        fail "install openssl (no libssl.so.3 or ssl.h in build/prefix-openssl)" "$LOGS/build-openssl.log"
    stamp_set build-openssl "$OSSL_KEY"
    say "openssl $OPENSSL_UPSTREAM built in $((SECONDS - t0)) s"
}

# the module against it (its own objects and output; the normal build is not touched)
build_module() {
    mkdir -p "$OSSL/root/build"
    ln -sfn ../../../quickjs-websocket "$OSSL/root/quickjs-websocket"
    ln -sfn ../../../clients "$OSSL/root/clients"
    ln -sfn ../../../../build/clients "$OSSL/root/build/clients"
    : >"$LOGS/openssl-module.log"
    quietly openssl-module "build quickjs-websocket against build/prefix-openssl" \
        make -C "$ROOT/quickjs-websocket" PREFIX="$PREFIX" OPENSSL_PREFIX="$OSSL_PREFIX" \
        OUT="$OSSL/root/build/quickjs-websocket" OBJDIR="$OSSL/obj/quickjs-websocket"
}

# check: one wss:// connection of the client on it (its library as the connection reports
# it), and the qjs process' maps: one libssl.so.3 and one libcrypto.so.3, both ours
check() {
    local log=$LOGS/openssl-check.log
    "$ROOT/.venv/bin/python" "$ROOT/scripts/openssl_check.py" "$OSSL_PREFIX" \
        "$OSSL/root/clients/quickjs.mjs" >"$log" 2>&1 || fail "check the client on it" "$log"
    say "$(tail -n 1 "$log")"
}

require_tools
fetch
unpack
build
build_module
check
