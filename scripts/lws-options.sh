# libwebsockets' cmake options, one list for every build of it: scripts/setup-native.sh
# (build/prefix; its deflate build build/prefix-pmd derives from it) and
# scripts/setup-arm.sh (build/arm/prefix, adding its toolchain and OpenSSL). Sourced with
# PREFIX set to the install prefix.
# shellcheck shell=bash
# shellcheck disable=SC2034  # used by the scripts that source it
LWS_CMAKE_OPTS=(
    -G Ninja
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_INSTALL_PREFIX="$PREFIX"
    -DCMAKE_INSTALL_LIBDIR=lib
    -DCMAKE_INSTALL_RPATH="$PREFIX/lib"
    -DLWS_WITH_EXTERNAL_POLL=ON
    -DLWS_WITH_SSL=ON
    -DLWS_WITH_SHARED=ON
    -DLWS_WITH_STATIC=OFF
    -DLWS_WITHOUT_TESTAPPS=ON
    -DLWS_WITH_MINIMAL_EXAMPLES=OFF
    -DLWS_WITHOUT_EXTENSIONS=ON
    -DDISABLE_WERROR=ON
)
