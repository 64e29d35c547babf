# The Debian bookworm armhf packages `make setup-arm` (scripts/setup-arm.sh) unpacks into the
# armhf sysroot, build/arm/sysroot, pinned by version: the target's OpenSSL 3.0 and zlib
# (headers and libraries, what the module and libwebsockets link), and what qjs needs to run
# under qemu-arm -L build/arm/sysroot (the dynamic loader, libc, libgcc_s). The cross
# compiler's own libc headers and libraries (libc6-dev-armhf-cross, from the system's bookworm
# packages: scripts/setup-apt.sh arm) are what everything is compiled and linked against.
# A pinned revision that bookworm no longer has is replaced by the newest revision of the same
# upstream version (setup-arm says so in build/logs/arm-fetch.log); another upstream version
# fails the step.
ARM_SUITE=bookworm
ARM_DEBS=(
    libc6=2.36-9+deb12u14
    libgcc-s1=12.2.0-14+deb12u1
    libssl3=3.0.20-1~deb12u2
    libssl-dev=3.0.20-1~deb12u2
    zlib1g=1:1.2.13.dfsg-1
    zlib1g-dev=1:1.2.13.dfsg-1
)
# The QEMU TCG plugin header (include/qemu/qemu-plugin.h) the instruction-counting plugin
# (scripts/qemu-count) is built against: from bookworm's qemu source package of the system's
# qemu-user version (setup-arm.sh downloads the source of the installed version; this pin is
# the version it was checked with), the header's sha256 pinned. Another Debian revision of
# the same upstream version is taken if its header has this sha256; anything else fails.
QEMU_SRC_VER=1:7.2+dfsg-7+deb12u18
QEMU_PLUGIN_H_SHA=19f277b037d05a8bcb5069f2f81a465d177208e5903048a915c56627d4c3748e
