#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes kpn's one-file distribution from the source tree: OUT/kpn.c (the
# core and every port, the port picked by the compiler's predefined
# macros) and OUT/kpn.h (include/kpn.h with a version line).
#
#   sh tools/amalgamate.sh [OUT]        OUT defaults to build/amalgamation
#                                       in the kpn tree; a relative OUT is
#                                       taken from the current directory
#
# The tree stays the source of truth; tools/amalgamate.awk does the work.
set -eu

# The ports, tried top to bottom when KPN_PORT is not defined.  A new
# port is one line:
#   name ; condition on predefined macros ; port files ; thread-service files
# 'name' is a C identifier (-DKPN_PORT=name picks the port).  Thread
# files are compiled with their port, KPN_THREADS or not (a hosted one
# also idles a net that waits for input); for a port that lists none,
# the amalgamation turns threads off (KPN_THREADS 0) unless KPN_THREADS
# or KPN_CONFIG_FILE is given.  'none' compiles no port: the
# firmware links its own.  amd64 steps aside for shadow stacks
# (-fcf-protection=full or =return), and aarch64 for a guarded control
# stack: the assembly switch cannot keep one, and in one object file the
# compiler's marking would cover it too (the split build's .S object
# carries no such marking, so the link is not marked).
PORT_TABLE='
amd64 ; defined(__x86_64__) && defined(__ELF__) && defined(__unix__) && __STDC_HOSTED__ == 1 && !(defined(__CET__) && (__CET__ & 2)) ; port/amd64/port_amd64.c port/amd64/switch_amd64.S ; port/pthread/thread_pthread.c
aarch64 ; defined(__aarch64__) && !defined(__ILP32__) && defined(__ELF__) && defined(__unix__) && __STDC_HOSTED__ == 1 && !(defined(__ARM_FEATURE_GCS_DEFAULT) && __ARM_FEATURE_GCS_DEFAULT) ; port/aarch64/port_aarch64.c port/aarch64/switch_aarch64.S ; port/pthread/thread_pthread.c
posix ; (defined(__unix__) || defined(__APPLE__)) && __STDC_HOSTED__ == 1 ; port/posix/port_posix.c ; port/pthread/thread_pthread.c
cortex_m ; !defined(__unix__) && !defined(__APPLE__) && (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_8M_MAIN__)) ; port/cortex-m/port_cortexm.c port/cortex-m/switch_cortexm.S ;
riscv ; !defined(__unix__) && !defined(__APPLE__) && defined(__riscv) ; port/riscv/port_riscv.c port/riscv/switch_riscv.S ;
none  ; 1 ; ;
'

# A relative OUT is the caller's: resolved here, before the cd.
root=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
    '') out=$root/build/amalgamation ;;
    /*) out=$1 ;;
    *) out=$(pwd)/$1 ;;
esac
shown=${1:-$out}
cd "$root"

version=$(sed -n 's/^#define KPN_VERSION_STRING "\(.*\)"$/\1/p' include/kpn.h)
[ -n "$version" ] || { echo "amalgamate: include/kpn.h defines no KPN_VERSION_STRING" >&2; exit 1; }
# The revision only when kpn's root is the top of its own git work tree:
# a kpn copied without its .git into another repository would otherwise
# be described by that repository.
revision="no git"
if top=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null) &&
   [ "$(cd "$top" && pwd -P)" = "$(cd "$root" && pwd -P)" ]; then
    revision=$(git -C "$root" describe --always --dirty 2>/dev/null || echo "no git")
fi
core=$(ls src/*.c | LC_ALL=C sort | tr '\n' ' ')

mkdir -p "$out"
awk -v table="$PORT_TABLE" -v core="$core" -v version="$version" -v revision="$revision" \
    -f tools/amalgamate.awk > "$out/kpn.c.tmp"
mv "$out/kpn.c.tmp" "$out/kpn.c"

{
    echo "/* kpn $version, the header of the amalgamation (kpn.c); include/kpn.h of $revision. */"
    cat include/kpn.h
} > "$out/kpn.h.tmp"
mv "$out/kpn.h.tmp" "$out/kpn.h"

echo "amalgamate: $shown/kpn.c ($(wc -l < "$out/kpn.c") lines) and $shown/kpn.h, kpn $version"
