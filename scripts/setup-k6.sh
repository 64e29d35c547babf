#!/usr/bin/env bash
# k6 (pinned), the load tester most teams reach for, built from the Go module proxy into
# build/tools/k6/k6: the `k6` client of harness/runtimes.toml (clients/k6.mjs). The version
# and the Go toolchain it is built with are pinned (K6_VER, K6_TOOLCHAIN in scripts/pins.sh)
# and the stamp holds both. Reproducible: always the pinned toolchain, CGO_ENABLED=0,
# -trimpath, so every machine builds the same bytes (docs/k6.md has the sha256).
# The toolchain is the module golang.org/toolchain of the same proxy, downloaded by whatever
# go there is: $K6_GO if set, else find_go's (lib.sh: the machine's, else Debian's
# golang-go, 1.19 on bookworm, enough to download a module). The pinned go then builds k6
# (GOTOOLCHAIN=local).
# Module and build caches and the toolchain live under build/tools/k6-build/ while it
# builds (`git status` stays clean) and are removed once the binary runs: about 1.3 GB (the
# toolchain about 350 MB of it) that nothing else needs; a failed build keeps them, so a
# retry reuses its downloads. Symbols are kept (no -ldflags -s): `wsbench profile -c k6`
# names k6's functions. 2 to 3.5 minutes of 2 cores, cold (docs/k6.md).
set -euo pipefail
STEP_NAME=setup-k6
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/pins.sh"

VERSION=$K6_VER
TOOLCHAIN=$K6_TOOLCHAIN
OUT=$ROOT/build/tools/k6
BIN=$OUT/k6
WORK=$ROOT/build/tools/k6-build
case $(uname -m) in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac

key="$VERSION $TOOLCHAIN linux-$arch trimpath"
if stamp_is k6 "$key" && [[ -x $BIN ]]; then
    exit 0
fi

GO=${K6_GO:-$(find_go "fetch the Go toolchain k6 is built with")}
have=$("$GO" version 2>/dev/null | cut -d' ' -f3 || true)  # go1.26.8
[[ $have == go* ]] || fail "run $GO version (to build k6 $VERSION)"

mkdir -p "$WORK"
export GOPATH=$WORK/gopath GOCACHE=$WORK/gocache GOFLAGS=-modcacherw CGO_ENABLED=0 \
    GOTOOLCHAIN=local
unset GOROOT GOOS GOARCH GOAMD64 GOEXPERIMENT
started=$SECONDS
if [[ $have != "$TOOLCHAIN" ]]; then
    # The toolchain as a module (what go's own GOTOOLCHAIN switch fetches, but any go
    # since 1.17 can download it): a GOROOT whose files lost their modes in the zip.
    module="golang.org/toolchain@v0.0.1-$TOOLCHAIN.linux-$arch"
    say "fetching $TOOLCHAIN ($module) with $have"
    quietly k6 "download $module" "$GO" mod download "$module"
    dir=$GOPATH/pkg/mod/$module
    [[ -f $dir/bin/go ]] || fail "find $dir/bin/go after downloading $module" "$LOGS/k6.log"
    chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/*
    GO=$dir/bin/go
fi

say "building k6 $VERSION with $TOOLCHAIN (go install from the module proxy, about 3.5 min)"
quietly k6 "build k6 $VERSION" env GOBIN="$OUT" "$GO" install -trimpath "go.k6.io/k6@$VERSION"
[[ -x $BIN ]] || fail "find $BIN after building it" "$LOGS/k6.log"
got=$("$BIN" version 2>/dev/null | head -n 1 || true)
[[ $got == *"k6 $VERSION"* && $got == *"$TOOLCHAIN"* ]] ||
    fail "run $BIN version (it says: ${got:-nothing})" "$LOGS/k6.log"
sha256sum "$BIN" >>"$LOGS/k6.log"
rm -rf "$WORK"
say "k6 $VERSION built in $((SECONDS - started)) s"
stamp_set k6 "$key"
