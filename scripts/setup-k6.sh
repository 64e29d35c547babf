#!/usr/bin/env bash
# k6 (pinned), the load tester most teams reach for, built from the Go module proxy into
# build/tools/k6/k6 (the version: K6_VER in scripts/pins.sh; the stamp holds it): the `k6` client of harness/runtimes.toml (clients/k6.js).
# Built with the machine's `go` (PATH, or /usr/local/go/bin/go): k6 v1.8.1's go.mod asks for
# Go 1.25. A go of 1.25 or newer builds it as it is (GOTOOLCHAIN=local); a go of 1.21 to
# 1.24 fetches k6's own toolchain (go1.25.12, a module of the same proxy) and builds with
# that; older or no go is a one-line failure (Debian bookworm's golang-go is 1.19).
# Module and build caches under build/tools/k6-build/ while it builds (`git status` stays
# clean), removed once the binary works: they hold about 950 MB that nothing else needs. Symbols are kept (no -ldflags -s): `wsbench profile -c k6` names k6's
# functions. About 3.5 minutes of 2 cores, cold (docs/setup.md).
set -euo pipefail
STEP_NAME=setup-k6
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

source "$ROOT/scripts/pins.sh"
VERSION=$K6_VER
TOOLCHAIN=$K6_TOOLCHAIN
OUT=$ROOT/build/tools/k6
BIN=$OUT/k6

key="$VERSION $TOOLCHAIN"
if stamp_is k6 "$key" && [[ -x $BIN ]]; then
    exit 0
fi

GO=$(command -v go || true)
[[ -z $GO && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
[[ -n $GO ]] || fail "find go to build k6 $VERSION (it needs Go 1.21 or newer on PATH or in /usr/local/go; Debian bookworm's golang-go 1.19 is too old)"
have=$("$GO" env GOVERSION 2>/dev/null || true)  # go1.26.8
minor=$(sed -n 's/^go1\.\([0-9]*\).*/\1/p' <<<"$have")
if [[ -z $minor || $minor -lt 21 ]]; then
    fail "build k6 $VERSION with ${have:-an unknown go} ($GO): it needs Go 1.21 or newer"
elif [[ $minor -ge 25 ]]; then
    toolchain=local
else
    toolchain=$TOOLCHAIN  # fetched by go itself from the module proxy (golang.org/toolchain)
fi

via=$have; [[ $toolchain == local ]] || via="$have, toolchain $toolchain"
say "building k6 $VERSION with $via (go install from the module proxy, about 3.5 min)"
started=$SECONDS
WORK=$ROOT/build/tools/k6-build
quietly k6 "build k6 $VERSION" env GOBIN="$OUT" GOPATH="$WORK/gopath" GOCACHE="$WORK/gocache" \
    GOFLAGS=-modcacherw GOTOOLCHAIN="$toolchain" CGO_ENABLED=0 \
    "$GO" install "go.k6.io/k6@$VERSION"
[[ -x $BIN ]] || fail "find $BIN after building it" "$LOGS/k6.log"
got=$("$BIN" version 2>/dev/null | head -n 1 || true)
[[ $got == *"k6 $VERSION"* ]] || fail "run $BIN version (it says: ${got:-nothing})" "$LOGS/k6.log"
rm -rf "$WORK"
say "k6 $VERSION built in $((SECONDS - started)) s"
stamp_set k6 "$key"
