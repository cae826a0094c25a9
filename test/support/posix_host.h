/* SPDX-License-Identifier: MIT */
/* The POSIX process services a test uses on a hosted Unix (fork, waitpid, setrlimit); 'HOSTED_POSIX' says whether there are any. */
#ifndef KPN_TEST_POSIX_HOST_H
#define KPN_TEST_POSIX_HOST_H

/*
 * In a header of its own because Ceedling copies every #include of a test
 * file into its runner as '"name.h"', folders dropped and #if ignored:
 * '<sys/resource.h>' would become '"resource.h"', which no include path
 * holds.  A test that needs the POSIX declarations defines
 * _POSIX_C_SOURCE before its first include; the runner does not need
 * them, and these headers compile without it.
 */

#if defined(__unix__) || (defined(__APPLE__) && defined(__MACH__))
#define HOSTED_POSIX 1
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#else
#define HOSTED_POSIX 0
#endif

#endif /* KPN_TEST_POSIX_HOST_H */
