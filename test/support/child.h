/* SPDX-License-Identifier: MIT */
/* Running a test step in a child process that may die of a signal, and naming the process whose guard page it hit. */
#ifndef KPN_TEST_CHILD_H
#define KPN_TEST_CHILD_H

/* The system headers a test file may not include itself (Ceedling copies
 * a test file's includes into its runner).  The test file defines
 * _XOPEN_SOURCE 700 before its first include. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kpn.h"

/* Ceedling's runner includes this header too, without the test file's
 * _XOPEN_SOURCE: it needs none of it, and without the feature macro the
 * declarations below would not compile there. */
#ifdef _XOPEN_SOURCE

/* The net whose processes a SIGSEGV is matched against, and the exit
 * code the handler uses for process number i: KT_NAMED + i. */
#define KT_NAMED 40
static const kpn_net *kt_guarded_net;
static size_t kt_guard_below; /* bytes from a guard page's start to its stack_base */

/* On its own stack (sigaltstack): the fault address lies in the page
 * below some process's stack, so that process overflowed.  Reads only. */
static void kt_on_segv(int sig, siginfo_t *info, void *ctx)
{
    const kpn_proc *p = NULL;
    int i = 0;
    uintptr_t at = (uintptr_t)info->si_addr;

    (void)sig;
    (void)ctx;
    while ((p = kpn_proc_next(kt_guarded_net, p)) != NULL) {
        kpn_proc_stats ps;
        if (kpn_proc_stats_get(p, &ps) == KPN_OK && at < (uintptr_t)ps.stack_base &&
            at + kt_guard_below >= (uintptr_t)ps.stack_base)
            _exit(KT_NAMED + i);
        ++i;
    }
    _exit(KT_NAMED - 1);
}

/* Run 'step' in a child.  Returns the child's exit code, or 1000 plus
 * the signal that killed it. */
static inline int kt_in_child(void (*step)(void))
{
    pid_t pid = fork();
    int status = 0;

    if (pid == 0) {
        static char alt[64 * 1024];
        stack_t ss;
        struct sigaction sa;
        ss.ss_sp = alt;
        ss.ss_size = sizeof alt;
        ss.ss_flags = 0;
        sigaltstack(&ss, NULL);
        sa.sa_sigaction = kt_on_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
        step();
        _exit(0);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    if (WIFSIGNALED(status))
        return 1000 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static inline size_t kt_page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

#endif /* _XOPEN_SOURCE */

#endif /* KPN_TEST_CHILD_H */
