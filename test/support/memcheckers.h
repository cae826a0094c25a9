/* SPDX-License-Identifier: MIT */
/* The memory checkers' client headers (ASan, valgrind memcheck), each only in a build that runs under it. */
#ifndef KPN_TEST_MEMCHECKERS_H
#define KPN_TEST_MEMCHECKERS_H

/*
 * Why a header of its own: Ceedling copies every #include of a test file
 * into the runner it generates, ignoring #if and keeping only the file
 * name ('<valgrind/memcheck.h>' becomes '"memcheck.h"', which no include
 * path holds).  Guarded system headers with a folder in their name
 * therefore live here, and a test includes this file instead
 * (docs/testing.md, tools/check_ceedling_rules.sh).
 *
 * Defines 'UNDER_ASAN' when AddressSanitizer instruments the build.
 */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#if defined(UNDER_ASAN)
#include <sanitizer/asan_interface.h>
#endif

#ifdef KPN_VALGRIND
#include <valgrind/memcheck.h>
#endif

#endif /* KPN_TEST_MEMCHECKERS_H */
