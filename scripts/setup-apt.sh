#!/usr/bin/env bash
# Install the Debian (bookworm) packages wsbench needs, only those that are missing.
#   scripts/setup-apt.sh              every group `make setup` needs: build tools npm python report fuzz
#   scripts/setup-apt.sh GROUP ...    only these groups (the container images use this; make
#                                     setup-arm: arm)
set -euo pipefail
STEP_NAME=setup-apt
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

declare -A GROUPS_OF=(
    [build]="build-essential pkg-config cmake ninja-build libssl-dev zlib1g-dev
             xz-utils dpkg-dev debian-archive-keyring ca-certificates openssl"  # C toolchain, Debian sources,
                                                    # the openssl CLI (setup-tls.sh)
    [tools]="hyperfine linux-perf valgrind"         # timing, profiling, leak checks
    [npm]="nodejs npm"                              # only to run `npm ci` (setup-js.sh): the Nodes
                                                    # under test (20 and 22) come from npm, pinned
    [report]="chromium"                             # headless check of the HTML report
    [fuzz]="clang libclang-rt-14-dev"               # libFuzzer + ASan/UBSan (make fuzz, make test)
    [python]="python3 python3-venv"                 # the harness's .venv (setup-python.sh)
    [lws-runtime]="libssl3"                         # images: what lws-echo links besides libc and zlib
    [docker]="docker.io docker-compose debootstrap" # make bench-docker (never started as a service)
    [arm]="gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user"  # make setup-arm: the armhf cross
                                                    # compiler and its libc, qemu-arm (make test-arm)
)
DEFAULT_GROUPS=(build tools npm python report fuzz)
# Packages not needed when their command is already there: a nodejs from elsewhere
# (NodeSource's) bundles npm, and Debian's npm package would conflict with it.
declare -A COMMAND_OF=([npm]=npm)

groups=("$@")
((${#groups[@]})) || groups=("${DEFAULT_GROUPS[@]}")
PACKAGES=()
for group in "${groups[@]}"; do
    [[ -n ${GROUPS_OF[$group]+set} ]] || fail "install group '$group': unknown (known: ${!GROUPS_OF[*]})"
    read -r -a pkgs <<<"$(echo ${GROUPS_OF[$group]})"
    PACKAGES+=("${pkgs[@]}")
done

missing=()
for pkg in "${PACKAGES[@]}"; do
    [[ -z ${COMMAND_OF[$pkg]+set} ]] || ! command -v "${COMMAND_OF[$pkg]}" >/dev/null || continue
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]})) || exit 0

[[ $(id -u) -eq 0 ]] || fail "install ${missing[*]}: not root (run: sudo make setup)"
say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# docker.io would start the system's dockerd, with a bridge network, as a service: forbid
# every service start during the install (wsbench starts its own engine, host network only).
if [[ " ${missing[*]} " == *" docker.io "* && ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
quietly apt "update the package lists" apt-get update
quietly apt "install ${missing[*]}" apt-get install -y --no-install-recommends "${missing[@]}"
