#!/usr/bin/env bash
# actionlint (pinned), the checker of .github/workflows/*.yml, built from the Go module
# proxy into build/tools/actionlint-<version>/actionlint. Not part of `make setup`: only
# the test that validates the workflow (and `make lint-workflows`) calls it, so machines
# that never check the workflow never need Go. Uses the machine's `go` when there is one
# (PATH, or /usr/local/go/bin/go), otherwise installs Debian's golang-go (Go 1.19, which
# this actionlint still builds with: its go.mod asks for 1.18). Prints the binary's path.
set -euo pipefail
STEP_NAME=setup-actionlint
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION=v1.7.7
OUT=$ROOT/build/tools/actionlint-$VERSION
BIN=$OUT/actionlint
if [[ -x $BIN ]]; then
    printf '%s\n' "$BIN"
    exit 0
fi

GO=$(command -v go || true)
[[ -z $GO && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
if [[ -z $GO ]]; then
    [[ $(id -u) -eq 0 ]] || fail "install golang-go: not root (run as root, or put go on PATH)"
    say "installing golang-go (Debian) to build actionlint" >&2
    export DEBIAN_FRONTEND=noninteractive
    quietly apt "update the package lists" apt-get update
    quietly apt "install golang-go" apt-get install -y --no-install-recommends golang-go
    GO=/usr/bin/go
fi

say "building actionlint $VERSION with $("$GO" version | cut -d' ' -f3)" >&2
# A private module cache and build cache under build/, so nothing outside the tree is touched;
# GOTOOLCHAIN=local: build with this go, never fetch another toolchain.
quietly actionlint "build actionlint $VERSION" env GOBIN="$OUT" GOPATH="$ROOT/build/tools/gopath" \
    GOCACHE="$ROOT/build/tools/gocache" GOFLAGS=-modcacherw GOTOOLCHAIN=local CGO_ENABLED=0 \
    "$GO" install "github.com/rhysd/actionlint/cmd/actionlint@$VERSION"
[[ -x $BIN ]] || fail "find $BIN after building it" "$LOGS/actionlint.log"
printf '%s\n' "$BIN"
