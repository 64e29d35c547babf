# Shared by the scripts/setup-*.sh steps: one-line progress, one-line failures with the
# log to read and how to retry, and stamps keyed by what a step was done with.
# The caller sets STEP_NAME before sourcing.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGS=$ROOT/build/logs
STAMPS=$ROOT/build/stamps
mkdir -p "$LOGS" "$STAMPS"

say() { printf '%s: %s\n' "$STEP_NAME" "$*"; }

fail() { # fail WHAT [LOG]
    printf '%s: failed to %s%s; retry with: make setup\n' "$STEP_NAME" "$1" \
        "${2:+ (see ${2#"$ROOT"/})}" >&2
    # In an image build the log dies with the build container: show its end.
    [[ -z ${WSBENCH_SHOW_LOG_ON_FAIL:-} || -z ${2:-} || ! -f ${2:-} ]] || tail -n 30 "$2" >&2
    exit 1
}

# quietly LOGNAME WHAT CMD...: run CMD with its output in build/logs/LOGNAME.log.
quietly() {
    local log=$LOGS/$1.log what=$2; shift 2
    printf '+ %s\n' "$*" >>"$log"
    "$@" >>"$log" 2>&1 </dev/null || fail "$what" "$log"
}

# A stamp holds the key (versions, file hashes) a step was done with.
stamp_is() { [[ -f $STAMPS/$1 && $(<"$STAMPS/$1") == "$2" ]]; }
stamp_set() { printf '%s\n' "$2" >"$STAMPS/$1"; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# qjs_copy SRC DIR CC FLAGS: a clean copy of the QuickJS source SRC in DIR/src/quickjs, and
# DIR/cc-wrap, a compiler that carries FLAGS. The upstream Makefile builds its CFLAGS itself
# (defines included) and bakes CC into qjsc as a C string, so the flags travel in a one-word
# CC. Used for the instrumented qjs builds (setup-profile.sh, setup-asan.sh).
qjs_copy() {
    local src=$1 dir=$2 cc=$3 flags=$4
    rm -rf "$dir/src/quickjs"
    mkdir -p "$dir/src"
    cp -a "$src" "$dir/src/quickjs"
    rm -rf "$dir/src/quickjs/.obj" "$dir/src/quickjs/qjs" "$dir/src/quickjs/qjsc"
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$cc" "$flags" >"$dir/cc-wrap"
    chmod +x "$dir/cc-wrap"
}

# find_go WHAT: print the go to use: the machine's (PATH, or /usr/local/go/bin/go), else
# Debian's golang-go, installed for it (1.19 on bookworm; needs root). WHAT says what for.
find_go() {
    local go
    go=$(command -v go || true)
    [[ -z $go && -x /usr/local/go/bin/go ]] && go=/usr/local/go/bin/go
    if [[ -z $go ]]; then
        [[ $(id -u) -eq 0 ]] || fail "install golang-go: not root (run as root, or put go on PATH)"
        say "installing golang-go (Debian) to $1" >&2
        export DEBIAN_FRONTEND=noninteractive
        quietly apt "update the package lists" apt-get update
        quietly apt "install golang-go" apt-get install -y --no-install-recommends golang-go
        go=/usr/bin/go
    fi
    printf '%s\n' "$go"
}

# go_install LOGNAME WHAT OUT MODULE@VERSION: build a Go program from the Go module proxy into
# OUT (GOBIN), with the go find_go gives.
# A private module and build cache under build/tools/, so nothing outside the tree is touched;
# GOTOOLCHAIN=local: build with this go, never fetch another toolchain.
go_install() {
    local log=$1 what=$2 out=$3 module=$4 go
    go=$(find_go "build $what")
    say "building $what with $("$go" version | cut -d' ' -f3)" >&2
    quietly "$log" "build $what" env GOBIN="$out" GOPATH="$ROOT/build/tools/gopath" \
        GOCACHE="$ROOT/build/tools/gocache" GOFLAGS=-modcacherw GOTOOLCHAIN=local CGO_ENABLED=0 \
        "$go" install "$module"
}

# private_apt DIR SOURCES_LINE [SETTING ...]: an apt configuration of its own under DIR (the
# one sources line, its own state, cache, empty preferences and status), so nothing of the
# system's apt setup is used or changed; sets APT_OPTS for apt-get and apt-cache, with each
# SETTING (an apt -o NAME=VALUE) added. setup-native.sh (trixie deb-src) and setup-arm.sh
# (bookworm armhf) use it.
APT_OPTS=()
private_apt() {
    local dir=$1 line=$2 setting
    shift 2
    mkdir -p "$dir"/etc/sources.list.d "$dir"/etc/preferences.d "$dir"/state/lists/partial \
        "$dir"/cache/archives/partial
    printf '%s\n' "$line" >"$dir/etc/sources.list"
    : >"$dir/etc/preferences"
    : >"$dir/state/status"
    APT_OPTS=(
        -o "Dir::Etc::SourceList=$dir/etc/sources.list"
        -o "Dir::Etc::SourceParts=$dir/etc/sources.list.d"
        -o "Dir::Etc::Preferences=$dir/etc/preferences"
        -o "Dir::Etc::PreferencesParts=$dir/etc/preferences.d"
        -o "Dir::State=$dir/state"
        -o "Dir::State::status=$dir/state/status"
        -o "Dir::Cache=$dir/cache"
        # build/ is root-owned: download as the invoking user, not _apt.
        -o "APT::Sandbox::User=$(id -un)"
    )
    for setting in "$@"; do APT_OPTS+=(-o "$setting"); done
}
