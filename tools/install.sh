#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs a built kpn: the header, the static library, a pkg-config file
# and a CMake package, the same files `cmake --install` writes.
#
#   sh tools/install.sh LIBRARY PREFIX [DESTDIR]
#
# LIBRARY is a built libkpn.a (make lib); files go under DESTDIR/PREFIX:
#   include/kpn.h
#   lib/libkpn.a
#   lib/pkgconfig/kpn.pc
#   lib/cmake/kpn/{kpnConfig,kpnConfigVersion,kpnTargets}.cmake
# CC (default cc) is asked for the pointer size the CMake version file
# records.
set -eu

[ $# -ge 2 ] || { echo "usage: sh tools/install.sh LIBRARY PREFIX [DESTDIR]" >&2; exit 2; }
lib=$1
prefix=$2
destdir=${3:-}
cd "$(dirname "$0")/.."
[ -f "$lib" ] || { echo "install: $lib is not built (make lib)" >&2; exit 1; }
case $prefix in
/*) ;;
*) echo "install: PREFIX must be an absolute path, not '$prefix'" >&2; exit 1 ;;
esac

version=$(sed -n 's/^#define KPN_VERSION_STRING "\(.*\)"$/\1/p' include/kpn.h)
major=${version%%.*}
minor=${version#*.}; minor=${minor%%.*}
pointer=$(${CC:-cc} -dM -E - </dev/null | sed -n 's/^#define __SIZEOF_POINTER__ //p')

root=$destdir$prefix
mkdir -p "$root/include" "$root/lib/pkgconfig" "$root/lib/cmake/kpn"
cp include/kpn.h "$root/include/kpn.h"
cp "$lib" "$root/lib/libkpn.a"
sed -e "s|@KPN_PREFIX@|$prefix|" -e "s|@KPN_VERSION@|$version|" \
    tools/cmake/kpn.pc.in > "$root/lib/pkgconfig/kpn.pc"
cp tools/cmake/kpnConfig.cmake "$root/lib/cmake/kpn/kpnConfig.cmake"
cp tools/cmake/kpnTargets-make.cmake "$root/lib/cmake/kpn/kpnTargets.cmake"
sed -e "s|@KPN_VERSION@|$version|" -e "s|@KPN_VERSION_MAJOR@|$major|g" \
    -e "s|@KPN_VERSION_MINOR@|$minor|g" -e "s|@KPN_SIZEOF_VOID_P@|$pointer|g" \
    tools/cmake/kpnConfigVersion.cmake.in > "$root/lib/cmake/kpn/kpnConfigVersion.cmake"
echo "install: kpn $version in $root (include/kpn.h, lib/libkpn.a, lib/pkgconfig/kpn.pc, lib/cmake/kpn/)"
