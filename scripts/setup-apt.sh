#!/usr/bin/env bash
# Install the Debian (bookworm) packages wsbench needs, only those that are missing.
set -euo pipefail
STEP_NAME=setup-apt
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(
    build-essential pkg-config cmake ninja-build    # C toolchain for the native pieces
    libssl-dev zlib1g-dev                           # libwebsockets (TLS for wss://)
    xz-utils dpkg-dev debian-archive-keyring ca-certificates  # fetching Debian source packages
    hyperfine linux-perf valgrind                   # timing, profiling, leak checks
    clang libclang-rt-14-dev                        # libFuzzer + ASan/UBSan (make fuzz, make test)
    nodejs                                          # Node 20: a runtime under test
    chromium                                        # headless check of the HTML report
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]})) || exit 0

[[ $(id -u) -eq 0 ]] || fail "install ${missing[*]}: not root (run: sudo make setup)"
say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
quietly apt "update the package lists" apt-get update
quietly apt "install ${missing[*]}" apt-get install -y --no-install-recommends "${missing[@]}"
