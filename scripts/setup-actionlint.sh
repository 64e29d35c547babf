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

go_install actionlint "actionlint $VERSION" "$OUT" "github.com/rhysd/actionlint/cmd/actionlint@$VERSION"
[[ -x $BIN ]] || fail "find $BIN after building it" "$LOGS/actionlint.log"
printf '%s\n' "$BIN"
