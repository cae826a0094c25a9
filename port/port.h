/* SPDX-License-Identifier: MIT */
/* The seam between kpn's portable core and an architecture: everything a port supplies. */
#ifndef KPN_PORT_H
#define KPN_PORT_H

#include <stddef.h>
#include <stdint.h>

/*
 * A port supplies user-mode context switching and nothing else the core
 * cannot do in portable C.  The contract is libco's: a context of known
 * size, a way to start 'fn(arg)' on a stack, and a switch, with an idle
 * hook beside them.  Adding a port means copying port/template/ and
 * filling in the three context functions and the four idle ones (the
 * thread services too, for a build with KPN_THREADS); docs/porting.md
 * walks through it.
 *
 * Every function here is called by the core only; none is public API.
 */

/* Opaque to the core.  The core carves 'kpn_port_ctx_size()' bytes for
 * each context from the user's arena, aligned to 16 bytes, and never
 * looks inside (a process's context is rounded up to 16 bytes, in the
 * hosted layout with a word of the core's own after it). */
typedef struct kpn_port_ctx kpn_port_ctx;

/* Bytes one context needs: at least a pointer's.  Constant for a build;
 * the core asks once per carve. */
size_t kpn_port_ctx_size(void);

/* Prepare 'ctx' so that the first 'kpn_port_switch(x, ctx)' calls
 * 'fn(arg)' on the stack [stack, stack + size).  'stack' and 'size' are
 * multiples of 16; the stack grows down from 'stack + size' and the port
 * may keep its start-up frame at the top.  Each time 'fn' returns, the
 * context calls 'fn(arg)' again on the same stack: the entry is a loop,
 * never a fall-through into random memory.  (The core's entry function
 * ends by tail-calling the process function, so that a process's frames
 * start right below the port's start-up frame; when the process function
 * returns, the loop calls the core's entry a second time, and that ends
 * the process.)
 *
 * A port writes nothing outside [stack, stack + size) and 'ctx', and
 * nothing in the stack until the first switch except its start-up frame
 * (amd64: the top 64 bytes; aarch64: the top 176; posix on glibc
 * x86-64: the top 24).  'ctx' may hold a context whose 'fn' is
 * suspended for ever: init forgets it.  'fn' starts with the ABI's
 * default floating-point control state on amd64 and aarch64; the posix
 * port starts it with the state of the thread that called
 * kpn_port_init (getcontext captures it). */
void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg);

/* Save the running context into 'from' and resume 'to'.  Returns when
 * another switch resumes 'from'.  'from' may be a context that was never
 * initialised (a runner's own, on the thread that calls kpn_run or a
 * runner thread): the core zeroes such a context before its first
 * switch, and the switch fills it.
 * Preserves everything the platform ABI makes callee-saved, including
 * floating-point control state (on AMD64: rbx, rbp, r12-r15, rsp, MXCSR
 * and the x87 control word; on AArch64: x19-x29, lr, sp, d8-d15 and
 * FPCR). */
void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to);

/* ------------------------------------------------------------------ */
/* Threads: only for a build with KPN_THREADS (several runners).  A port
 * for a single-core target leaves these out and builds the core with
 * KPN_THREADS 0; the core then never calls them.  port/pthread/
 * thread_pthread.c implements them on POSIX threads, for every hosted port.
 *
 * Every object lives in memory the core carves from the user's arena:
 * the port says how much, and never allocates. */

typedef struct kpn_port_thread kpn_port_thread;
typedef struct kpn_port_sem kpn_port_sem;

/* Bytes of a thread handle / a semaphore: multiples of 16. */
size_t kpn_port_thread_size(void);
size_t kpn_port_sem_size(void);

/* Smallest thread stack kpn_port_thread_start accepts. */
size_t kpn_port_thread_stack_min(void);

/* Start 'fn(arg)' on a new OS thread running on the stack [stack, stack +
 * size) (16-aligned, at least kpn_port_thread_stack_min bytes).  Returns
 * 0, or nonzero if the OS refused (the thread does not exist then).  The
 * caller goes on to run runner 0: where the OS would leave the thread
 * waiting for the caller's CPU, the port may start it on another, as
 * long as 'fn' may then run wherever the caller may (the pthread port
 * does so on Linux). */
int kpn_port_thread_start(kpn_port_thread *t, void *stack, size_t size,
                          void (*fn)(void *), void *arg);

/* Wait for a started thread to return from 'fn'. */
void kpn_port_thread_join(kpn_port_thread *t);

/* A counting semaphore that puts an idle runner to sleep: init to 0
 * (returns 0, or nonzero on failure), wait (sleeps while the count is 0,
 * then takes one), post (adds one, waking a waiter), destroy. */
int kpn_port_sem_init(kpn_port_sem *s);
void kpn_port_sem_wait(kpn_port_sem *s);
void kpn_port_sem_post(kpn_port_sem *s);
void kpn_port_sem_destroy(kpn_port_sem *s);

/* Give the CPU to another thread (a spinning runner that lost a race). */
void kpn_port_yield(void);

/* A monotonic clock, in nanoseconds from any origin: how many messages a
 * runner passes per microsecond, which decides whether work stealing
 * gives way to a learnt placement (runners.c).  Read only with several
 * runners: as a run starts, where it may learn a placement; by an idle
 * runner that has stolen often, has a placement's trial to step or a
 * dropped placement to learn again; by a runner once every 256 switches
 * (KPNI_WINDOW_LOOK) while a trial's window is open or a placement on
 * one part is kept for a while (KPNI_WINDOW_TIMED); and by a thread that
 * waits for a biased runner's lock (runners.c, "Biased locks"). */
uint64_t kpn_port_clock_ns(void);

/* The CPUs the calling thread may run on, or 0 if the port cannot tell.
 * Read when a run with several runners starts, unless kpn_config.cpus
 * says: a placement learnt in it (runners.c) uses no more runners. */
unsigned kpn_port_cpus(void);

/* Make every other running thread of this process pass a full memory
 * barrier before this returns (Linux: membarrier, private expedited).
 * Returns 0, or nonzero where the port cannot; asked once as a run with
 * several runners starts, and then only by a runner that has waited long
 * for another runner's lock (runners.c, "Biased locks").  Where it
 * returns nonzero every runner takes its lock with an exchange. */
int kpn_port_fence_threads(void);

/* ------------------------------------------------------------------ */
/* Idling: only for a net with input channels (kpn_connect_input).  When
 * a process waits on an open input and nothing else can run, kpn_run
 * sleeps here until kpn_offer or kpn_input_close, called from an
 * interrupt handler or another thread, wakes it.  The object is carved
 * from the arena at the first kpn_connect_input.
 *
 *   size     bytes of the object: a multiple of 16.
 *   init     returns 0, or nonzero if the system refused (the call that
 *            asked then fails with KPN_ETHREAD).
 *   wait     returns once 'wake' has been called since the last return,
 *            at once if it already was; it may also return early (the
 *            core then looks again).  Must not lose a wake that comes
 *            between the core's last look and the sleep: on Cortex-M,
 *            mask interrupts, test the flag 'wake' sets, WFI, unmask;
 *            on POSIX, a flag under a mutex and a condition variable.
 *   wake     callable from an interrupt handler (bare metal) or from any
 *            thread (hosted); never blocks for long, never fails.
 *
 * A port that cannot sleep makes 'wait' return at once: kpn_run then
 * polls its inputs, correct but busy. */

typedef struct kpn_port_idle kpn_port_idle;

size_t kpn_port_idle_size(void);
int kpn_port_idle_init(kpn_port_idle *idle);
void kpn_port_idle_wait(kpn_port_idle *idle);
void kpn_port_idle_wake(kpn_port_idle *idle);

/* ------------------------------------------------------------------ */
/* Guard pages: optional.  Only for a build with KPN_GUARD_PAGES (every
 * hosted build by default; port/pthread/thread_pthread.c implements them
 * with mprotect).  A bare-metal port leaves them out and builds with
 * KPN_GUARD_PAGES 0; the core then never calls them and refuses
 * cfg.guard_pages.  An MPU port could implement them with a region. */

/* Bytes of a page: a power of two, at least 16; 0 if the system has no
 * page protection to offer. */
size_t kpn_port_page_size(void);

/* Make the page at 'page' (page-aligned, kpn_port_page_size bytes, inside
 * memory the core owns) inaccessible ('protect' 1) or readable and
 * writable again ('protect' 0).  Returns 0, or nonzero if the system
 * refused (then nothing changed). */
int kpn_port_guard(void *page, int protect);

#endif /* KPN_PORT_H */
