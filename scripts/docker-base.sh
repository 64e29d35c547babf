#!/usr/bin/env bash
# Build the default base image of the containers, wsbench/base:bookworm, from Debian's own
# packages: `debootstrap --variant=minbase bookworm` from the Debian mirror, then
# `docker import` (no image registry is needed). Run with DOCKER_HOST set to an engine
# (make docker-base starts one). A second run is a no-op while the image exists.
#   scripts/docker-base.sh [--force]
set -euo pipefail
STEP_NAME=docker-base
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGE=${WSBENCH_BASE_IMAGE:-wsbench/base:bookworm}
MIRROR=http://deb.debian.org/debian
DOCKER=/usr/bin/docker

[[ ${1:-} == --force ]] || ! "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1 || exit 0
command -v debootstrap >/dev/null || fail "find debootstrap (apt-get install debootstrap)"
[[ $(id -u) -eq 0 ]] || fail "run debootstrap: not root"

dir=$(mktemp -d "${TMPDIR:-/tmp}/wsbench-base.XXXXXX")
trap 'rm -rf "$dir"' EXIT
say "debootstrap --variant=minbase bookworm ($MIRROR)"
t0=$SECONDS
quietly docker-base "debootstrap bookworm" debootstrap --variant=minbase bookworm "$dir/root" "$MIRROR"
# Keep the image small: no package cache or lists (images run apt-get update themselves).
rm -rf "$dir/root/var/cache/apt/archives/"*.deb "$dir/root/var/lib/apt/lists/"*
say "docker import $IMAGE"
quietly docker-base "pack the root" tar -C "$dir/root" --numeric-owner -cf "$dir/root.tar" .
quietly docker-base "docker import $IMAGE" "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' "$dir/root.tar" "$IMAGE"
say "$IMAGE built in $((SECONDS - t0)) s"
