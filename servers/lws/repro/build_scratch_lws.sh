#!/bin/bash
# Builds libwebsockets 4.3.5 with permessage-deflate (the options of
# scripts/setup-native.sh's build-pmd), with PATCH applied, and lws-echo-deflate
# against it, all under DIR; build/prefix-pmd and build/bin are not touched.
#
#   servers/lws/repro/build_scratch_lws.sh DIR [PATCH]   # no PATCH: lws as shipped
#   .venv/bin/python servers/lws/repro/concurrent_deflate.py --binary DIR/bin/lws-echo-deflate
#
# Needs build/src/libwebsockets-4.3.5 (make setup). About 30 s on 2 cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
DIR=${1:?usage: build_scratch_lws.sh DIR [PATCH]}
PATCH=${2:-}
SRC=$ROOT/build/src/libwebsockets-4.3.5
[[ -d $SRC/lib ]] || { echo "no $SRC: run make setup" >&2; exit 2; }
[[ -z $PATCH || -f $PATCH ]] || { echo "no patch $PATCH" >&2; exit 2; }
[[ -z $PATCH ]] || PATCH=$(cd "$(dirname "$PATCH")" && pwd)/$(basename "$PATCH")
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
rm -rf "$DIR/src" "$DIR/build" "$DIR/prefix" "$DIR/obj" "$DIR/bin"
mkdir -p "$DIR/src"
(cd "$SRC" && tar cf - --exclude=./build --exclude=./build-pmd .) | tar xf - -C "$DIR/src"
[[ -z $PATCH ]] || patch -d "$DIR/src" -p1 --quiet < "$PATCH"
cmake -S "$DIR/src" -B "$DIR/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$DIR/prefix" -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_INSTALL_RPATH="$DIR/prefix/lib" -DLWS_WITH_EXTERNAL_POLL=ON -DLWS_WITH_SSL=ON \
    -DLWS_WITH_SHARED=ON -DLWS_WITH_STATIC=OFF -DLWS_WITHOUT_TESTAPPS=ON \
    -DLWS_WITH_MINIMAL_EXAMPLES=OFF -DLWS_WITHOUT_EXTENSIONS=OFF -DDISABLE_WERROR=ON \
    -DLWS_WITH_ZLIB=ON >"$DIR/cmake.log" 2>&1
ninja -C "$DIR/build" >"$DIR/ninja.log"
ninja -C "$DIR/build" install >>"$DIR/ninja.log"
make -C "$ROOT/servers/lws" deflate PMD_PREFIX="$DIR/prefix" BINDIR="$DIR/bin" \
    PMD_OBJDIR="$DIR/obj" >"$DIR/make.log"
echo "$DIR/bin/lws-echo-deflate"
