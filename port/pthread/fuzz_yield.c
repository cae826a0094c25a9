/* SPDX-License-Identifier: MIT */
/* The yielding build's hook (KPN_FUZZ_YIELD): give up the CPU at random where the core touches what runners share. */

/* sched_yield is POSIX.1-2008 */
#define _POSIX_C_SOURCE 200809L

#include <sched.h>
#include <stdint.h>

/*
 * Built only with KPN_FUZZ_YIELD (make test-yield, make fuzz-yield).  The
 * core then calls this before each shared load, store and fence and at
 * each lock taken or let go (kpn_int.h), and about one call in 48 gives
 * up the CPU, so that interleavings of the runners that a loaded machine
 * makes rarely come often.  Each thread draws from a sequence of its own,
 * seeded from where its copy lies, so that the threads yield at
 * different points.  It calls sched_yield itself rather than the port's
 * kpn_port_yield, so that a test that mocks the port sees no calls it
 * did not expect.  A file of its own, apart from the thread services,
 * for the same reason: such a test links no port object.
 */
void kpni_fuzz_yield(void);
void kpni_fuzz_yield(void)
{
    static __thread unsigned s;

    if (s == 0)
        s = (unsigned)((uintptr_t)&s >> 4) | 1u;
    s = s * 1103515245u + 12345u;
    if ((s >> 16) % 48u == 0)
        (void)sched_yield();
}
