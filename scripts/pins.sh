# The versions `make setup` pins for the native pieces and k6, and the sha256 of their orig
# tarballs: sourced by scripts/setup-native.sh, and read by the container build
# (harness/wsbench/docker/images.py) for its build args, so images and host agree.
# (npm and Python packages are pinned by package-lock.json and requirements.txt.)
LWS_PKG=libwebsockets
LWS_VER=4.3.5-1+deb13u2
LWS_UPSTREAM=4.3.5
LWS_ORIG=libwebsockets_4.3.5.orig.tar.gz
LWS_SHA=87f99ad32803ed325fceac5327aae1f5c1b417d54ee61ad36cffc8df5f5ab276

QJS_PKG=quickjs
QJS_VER=2025.04.26-1
QJS_UPSTREAM=2025.04.26
QJS_ORIG=quickjs_2025.04.26.orig.tar.xz
QJS_SHA=ec81da5b3249ed648dbc7df4a1654988910e66a118d9b71cb63534216efcfbbe

# k6, built from the Go module proxy by scripts/setup-k6.sh (go install go.k6.io/k6@K6_VER);
# K6_TOOLCHAIN is the Go it is always built with (golang.org/toolchain, from the same proxy),
# whatever go the machine has: the same bytes everywhere.
K6_VER=v1.8.1
K6_TOOLCHAIN=go1.25.12

# OpenSSL from trixie's source package, for make setup-openssl alone (scripts/setup-openssl.sh:
# opt-in, build/prefix-openssl; the system's OpenSSL stays what everything else links).
# 3.5.9-1~deb13u1 is listed too, but the mirror serves no files for it (404).
OPENSSL_VER=3.5.7-1~deb13u2
OPENSSL_UPSTREAM=3.5.7
OPENSSL_ORIG=openssl_3.5.7.orig.tar.gz
OPENSSL_SHA=a8c0d28a529ca480f9f36cf5792e2cd21984552a3c8e4aa11a24aa31aeac98e8
OPENSSL_DEB_SHA=593a47654ead460a3b609503733f80bef552ff0802799d3b47784faacc50809f
