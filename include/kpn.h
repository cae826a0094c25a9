/* SPDX-License-Identifier: MIT */
/* kpn: Kahn process networks in one caller-supplied arena.  The only public header. */
#ifndef KPN_H
#define KPN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Version                                                             */

/* The version of this header, MAJOR.MINOR.PATCH as semantic versioning
 * means it: while MAJOR is 0, a MINOR step may still change the API
 * (CHANGELOG.md says how); a PATCH step never does. */
#define KPN_VERSION_MAJOR 0
#define KPN_VERSION_MINOR 9
#define KPN_VERSION_PATCH 0
#define KPN_VERSION_STRING "0.9.0"

/* The version of the library that was linked, as "MAJOR.MINOR.PATCH":
 * the KPN_VERSION_STRING it was built with, which differs from this
 * header's when a program is compiled against one release and linked
 * with another.  Static storage, never NULL; callable from any thread,
 * at any time, with or without a net. */
const char *kpn_version(void);

/*
 * A Kahn process network is a set of sequential processes that share
 * nothing and talk only through 1:1 FIFO channels.  Receive blocks on an
 * empty channel and nobody may test a channel for data, so every channel
 * carries the same messages whatever the schedule.
 *
 * Life cycle, all from the host thread:
 *
 *     kpn_net_init(&net, arena, sizeof arena, NULL);
 *     kpn_spawn(net, &p, "name", fn, arg, stack_size);    (as many as needed)
 *     kpn_connect(net, &c, writer, reader, msg_size, capacity);
 *     kpn_run(net);                      returns when no process can run
 *
 * Inside a process (a plain 'void fn(void *arg)' on its own stack):
 * kpn_send, kpn_recv, kpn_close.  A process ends by returning from 'fn';
 * every channel it writes is then closed.
 *
 * Memory: every object lives in the arena given to kpn_net_init.  The
 * library never allocates, never frees and keeps no global state; two
 * nets in two arenas are independent.  Nothing here prints.
 *
 * Errors: every fallible call returns a kpn_status (KPN_OK is 0) and
 * writes results through out-parameters only on success.  A call that
 * fails leaves the net, its processes and its channels as they were.
 */

/* ------------------------------------------------------------------ */
/* Status codes                                                        */

typedef enum kpn_status {
    KPN_OK = 0,     /* success */
    KPN_EOF,        /* kpn_recv: the channel is closed and drained */
    KPN_EINVAL,     /* a NULL or malformed argument, a zero size, a size mismatch */
    KPN_ENOMEM,     /* the arena cannot hold the object; nothing was carved */
    KPN_EPERM,      /* the caller is not the channel's writer/reader, or not a
                       process; kpn_offer, kpn_input_close: not an input */
    KPN_ESTATE,     /* not allowed now: the net is running, the channel is closed,
                       the process has exited, ... */
    KPN_ERESERVE,   /* the reserve pool cannot hold a channel that must grow */
    KPN_ESTACK,     /* a process overflowed its stack; see kpn_net_fault */
    KPN_EDEADLOCK,  /* a writer waits on a full channel with cfg.resolve 0, or
                       (cfg.strict) processes wait to read from each other */
    KPN_ETHREAD,    /* the OS refused a runner thread, a semaphore or an
                       input's idle object */
    KPN_EFULL,      /* kpn_offer: the input channel is full; nothing written */
    KPN_STATUS_COUNT /* number of codes; not a status */
} kpn_status;

/* A fixed English sentence for 's'; never NULL, also for unknown values.
 * A build with KPN_REPORT 0 (docs/porting.md) keeps no sentences and
 * returns "kpn status" for every value. */
const char *kpn_strerror(kpn_status s);

/* ------------------------------------------------------------------ */
/* Opaque objects, all placed inside the user's arena                  */

typedef struct kpn_net kpn_net;
typedef struct kpn_proc kpn_proc;
typedef struct kpn_chan kpn_chan;

/* Handles.  Every call checks the handles it is given: NULL, one of
 * another kind, or a stale one (of a net released, or whose arena was
 * given to kpn_net_init again: that call says where a stale handle
 * cannot be told) gets KPN_EINVAL, or NULL or 0.  A pointer that was
 * never a handle is read to be checked: the calls but kpn_send and
 * kpn_recv first check that it is aligned as every record is; those two,
 * whose check is a few instructions of every message, read its first
 * line whatever it is (undefined for a misaligned pointer, a fault on a
 * core that traps one).  The compact layout (KPN_COMPACT, the default
 * off Unix) checks a channel by its tag alone: a stale channel whose
 * record still holds its tag passes that check, and the call goes on to
 * its others (a send or a close from the host gets KPN_EPERM, an offer
 * to a released net's input may get KPN_ESTATE, and kpn_chan_capacity
 * and kpn_chan_fill read the old record).
 * docs/errors.md lists what is checked and what cannot be. */

/* Smallest stack, in bytes, that kpn_spawn accepts.  A port for a small
 * target sets its own in its port_config.h, which the library's build
 * takes (the Cortex-M and RISC-V ports', by the target alone), or the
 * build is given -DKPN_STACK_MIN=...; a program that includes kpn.h
 * alone sees the value below unless it is built with the same setting.
 * kpn_stack_min() says what the library was built with.  The hosted
 * default, 4096, holds what a process that
 * calls ordinary libc functions needs, measured on x86-64 glibc with
 * AVX-512 (both ports): the first call through a lazily bound symbol
 * (printf, clock_gettime, ...) runs the dynamic linker on the process's
 * stack, which saves the vector register file there with xsave: 3.3 KiB
 * deep (printf("%d") alone: 2.3 KiB).  Below that, such a call jumps
 * over the guard band into the memory below the stack, unseen.  What
 * remains is for the process's own frames; size real stacks from the
 * high-water mark in kpn_proc_stats.  Not enough for printf of huge
 * floating-point values (glibc: 27 KiB for a long double of 1e4000) nor
 * for a signal handler: on a hosted system that may deliver signals to a
 * process, give it 8 KiB or more, or use sigaltstack.  The bare-metal
 * ports measure their own (docs/porting.md): 304 bytes on a Cortex-M
 * (808 built with -O0), 240 to 656 on RISC-V (904 to 1504 built with
 * -O0). */
#ifndef KPN_STACK_MIN
#define KPN_STACK_MIN 4096u
#endif

/* The smallest stack kpn_spawn accepts in this build of the library. */
size_t kpn_stack_min(void);

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

/* Most runners (OS threads) one net may have. */
#define KPN_MAX_RUNNERS 32u

/* How processes are spread over runners. */
typedef enum kpn_policy {
    KPN_POLICY_WS = 0,     /* work stealing: an idle runner takes ready
                              processes from a random busy one (and, where
                              that churns, a placement is learnt: see
                              cfg.learn) */
    KPN_POLICY_STATIC = 1  /* each process stays on its runner (kpn_proc_pin,
                              or round-robin in spawn order) */
} kpn_policy;

/* Which runner's queue a woken process joins under work stealing (a
 * policy point, so the two rules can be compared: docs/runners.md). */
typedef enum kpn_wake {
    KPN_WAKE_LAST = 0,     /* the front of the queue of the runner that last
                              ran it (Nornir's rule: its stack is warm there) */
    KPN_WAKE_WAKER = 1     /* a process woken from a read: the front of the
                              waking runner's queue, so a chain of hand-offs
                              stays on one runner with its messages; one
                              woken from a write: as KPN_WAKE_LAST does.
                              The default. */
} kpn_wake;

/* Start from kpn_config_default and change the fields you need: a zeroed
 * config is not the defaults (a runner_stack of 0 is refused once there
 * are several runners, and learn 0 never learns a placement). */
typedef struct kpn_config {
    /* Messages a channel holds when kpn_connect is given capacity 0.
     * Default 8; must not be 0. */
    size_t default_capacity;
    /* The reserve pool, from which full channels grow when the resolver
     * breaks an artificial deadlock (docs/resolver.md):
     *   KPN_RESERVE_ARENA (the default): no memory is held back; a channel
     *     that must grow takes its new ring from whatever the arena has
     *     left when it grows (rings it outgrows are reused), so a network
     *     needs no sizing to run.  KPN_ERESERVE only when the arena is full.
     *   0: no pool.  An artificial deadlock ends the run with KPN_ERESERVE
     *     until kpn_reserve_add gives memory.
     *   N (at least 64): N bytes at the top of the arena, a hard bound:
     *     growth beyond them ends the run with KPN_ERESERVE, resumable.
     * Memory given with kpn_reserve_add joins the pool: under
     * KPN_RESERVE_ARENA it is used before the arena's free space; the
     * pool's own blocks go lowest address first (docs/resolver.md). */
    size_t reserve_size;
    /* 1 (default): find artificial deadlocks as they happen and resolve
     * them by growing a channel (Geilen-Basten; docs/resolver.md).
     * 0: no detection; a run that stops with a process blocked on a full
     * channel returns KPN_EDEADLOCK. */
    int resolve;
    /* 0 (default): a true deadlock (processes that each wait to read from
     * the next, round a cycle) is Kahn termination for them: the rest of
     * the net runs on, and with resolve 1 it is counted and reported by
     * kpn_report (with resolve 0 nothing looks for it).
     * 1: a true deadlock ends the run with KPN_EDEADLOCK.  With resolve 0
     * too, the cycles are found when the net comes to rest (the run ends
     * with KPN_EDEADLOCK then, counted and reported all the same). */
    int strict;
    /* Runners: OS threads multiplexing the processes.  Default 1 (the
     * calling thread only, no locks at all).  With N > 1, kpn_run starts
     * N-1 threads, whose stacks come from the arena, and runs as runner 0
     * itself; at most KPN_MAX_RUNNERS; needs a build with KPN_THREADS.
     * A net that only computes gains nothing from runners beyond its
     * CPUs; a placement learnt under 'learn' uses no more than 'cpus'. */
    unsigned runners;
    kpn_policy policy;     /* default KPN_POLICY_WS */
    kpn_wake wake;         /* default KPN_WAKE_WAKER */
    /* Bytes of arena for each extra runner's thread stack (it runs the
     * scheduler, never a process).  Default 64 KiB. */
    size_t runner_stack;
    /* 1: below every process stack, one page of the arena is made
     * inaccessible (mprotect on hosted ports), so an overflow stops the
     * program at the faulting instruction (SIGSEGV) instead of writing
     * into the memory below: fail-stop.  A handler on sigaltstack can name
     * the process: the fault address lies in the page just below its
     * 'stack_base' minus the guard band (kpn_proc_stats).  Needs an arena
     * aligned to the page size; each process then takes two pages more
     * (kpn_size_proc), and a system call at spawn.  Call kpn_net_release
     * before the arena's memory is used for anything but another net at
     * the same place (kpn_net_init there gives its pages back itself; a
     * net that starts elsewhere does not find the old one).  A stale
     * handle of an earlier net may point into a protected page: passing
     * it faults like an overflow instead of returning KPN_EINVAL.  Default 0;
     * KPN_EINVAL in a build without guard pages (KPN_GUARD_PAGES 0). */
    int guard_pages;
    /* Under KPN_POLICY_WS with several runners: how much stealing a
     * fine-grained run puts up with before it learns a placement instead.
     * Once a runner has stolen one process for every 'learn' messages it
     * has sent in this run (so a larger 'learn' learns sooner, and 1
     * almost never), and at least 16, while it sends at least one
     * message per 'learn_grain_ns' nanoseconds of it, or the net carries
     * one per 'learn_grain_ns' for each CPU the runners share ('cpus'),
     * and once it has sent at least 16 per channel of the net, the
     * runners split the processes as kpn_place
     * would from the messages counted so far, and from then on each
     * process runs on its part: nothing is stolen, and a process moves to
     * its part's runner when one from there wakes it to read, or when
     * that runner next runs out of work.  A runner that runs out of work
     * learns it again once it has sent, in this run, twice the messages
     * the runner that learnt the last one had sent then; the trial below
     * learns it again as it steps.  A net of processes that
     * block at nearly every message (channels of capacity 1, cycles)
     * otherwise keeps the runners trading processes and their cache
     * lines (docs/runners.md, "Learning a placement").  The first
     * placement of a run is on trial (learn_trial_ns).  The placement
     * replaces the runners kpn_proc_pin gave, and the next run starts
     * from it.  0: never (work stealing for the whole run).  Default
     * 65536; no effect in a build with the compact layout (KPN_COMPACT). */
    unsigned learn;
    /* The grain below which 'learn' applies: default 1000 (messages that
     * carry up to about a microsecond of work each), timed on the asking
     * runner or for the net per CPU, whichever is finer, so that runners
     * that take turns on fewer CPUs do not make the grain look coarser.  A coarser net
     * steals as often for its few messages, but a steal costs it little
     * beside its work, and its processes may do unequal work for equal
     * messages, which a placement by messages would split unevenly.
     * Trading processes stretches the time a message takes, so a runner
     * that has stolen at least 1024 processes in the run, one for every
     * 64 messages it has sent or oftener, is held to 64 times the grain.
     * 0: any grain. */
    unsigned learn_grain_ns;
    /* The CPUs the runners share.  A placement learnt under 'learn' puts
     * the processes on at most this many runners, the first ones; the
     * others then idle for the rest of the run.  Runners beyond the CPUs
     * take turns on them, and a message for a process whose runner is
     * not on a CPU waits until the OS runs it: a fine-grained net split
     * over them goes slower than on one runner (docs/runners.md, "No
     * more runners than CPUs").  0 (default): the CPUs the thread calling
     * kpn_run may use, as the port finds them when the run starts (on
     * Linux its CPU affinity, as taskset sets it; a container's CPU
     * quota is not seen, so set the quota here); every runner if the port
     * cannot tell.  Any value: above 'runners' it means all of them.
     * Over one CPU, a net under KPN_POLICY_WS runs on runner 0 alone, as
     * a net of one runner does, and starts no thread; its first run
     * settles that for the net's life. */
    unsigned cpus;
    /* The window in which the first placement learnt under 'learn' is
     * tried.  When one falls due, work stealing runs on for a window of
     * at least this many nanoseconds, then the placement for one more,
     * each timed up to a runner's first idle look after it.  Then the
     * same placement on half as many runners is tried for a window, and
     * each half after it down to one runner; the run goes on with the
     * runners on which the net carried its messages fastest, fewer
     * winning only if more than 8/7 as fast as the best with more
     * (kpn_stats.placement_runners says how many).  Work stealing is the
     * best so far where the net carried its messages more than 1/8
     * slower under the placement; if no half beats it either, the
     * placement is dropped (kpn_stats.placements_dropped) and the run
     * steals; the trial starts again after 16 windows, and after twice
     * as long for each drop before in the run.  A run kept on one runner
     * tries two again, for a window, after 16 windows for each time over
     * that one carried its messages as fast, and after twice as long
     * each time one wins again.  So a slow spell of the machine in the
     * trial keeps a run neither on one runner nor under work stealing to
     * its end.
     * Which wins depends on the CPUs' cost of moving a cache line
     * between them as much as on the net (docs/runners.md, "Trying a
     * placement").
     * 0: no trial, the placement is learnt at once and kept.  Default
     * 5 000 000 (5 ms). */
    unsigned learn_trial_ns;
    /* 1 (default): kpn_spawn fills each process's stack with a known byte,
     * so that kpn_proc_stats can report how deep it has ever reached
     * (stack_peak), as FreeRTOS does for uxTaskGetStackHighWaterMark.
     * 0: the stack, and the few lines of stagger below its guard band,
     * are left as the arena holds them, and stack_peak is 0 (not
     * measured).  The fill writes every byte of every stack, which
     * for many short-lived processes is most of what building the net
     * costs: 16 384 processes of 8 KiB are 128 MiB to write.  The guard
     * band below each stack is written and checked either way.  A stale
     * handle that points into an unfilled stack is still refused, by its
     * serial (docs/errors.md). */
    int stack_fill;
} kpn_config;

/* cfg.reserve_size: grow channels from the arena's free remainder. */
#define KPN_RESERVE_ARENA SIZE_MAX

/* Fill 'cfg' with the defaults.  NULL is ignored. */
void kpn_config_default(kpn_config *cfg);

/* Override 'cfg' from the environment, so a built program can be re-run
 * with other settings (where there is no environment, on bare metal,
 * every variable reads as unset):
 *   KPN_RUNNERS   runners, 1..KPN_MAX_RUNNERS
 *   KPN_POLICY    "ws" or "static"
 *   KPN_CAPACITY  default channel capacity, 1 or more
 *   KPN_CPUS      cfg.cpus, 0 or more (0: the port's count)
 * Unset variables leave their field alone.  KPN_EINVAL if 'cfg' is NULL
 * or a value is malformed or out of range; then 'cfg' is unchanged and,
 * if 'bad' is not NULL, '*bad' names the variable (NULL where 'cfg' is
 * NULL, and on success). */
kpn_status kpn_config_from_env(kpn_config *cfg);
kpn_status kpn_config_from_env_check(kpn_config *cfg, const char **bad);

/* ------------------------------------------------------------------ */
/* Sizing an arena statically                                          */

/* Upper bound on the bytes kpn_net_init carves for the net itself with
 * this configuration (NULL: the defaults), its reserve pool and runner
 * stacks included, whatever the arena's alignment; 0
 * for a configuration kpn_net_init refuses, or one whose size does not
 * fit in a size_t (a reserve_size near SIZE_MAX). */
size_t kpn_size_net(const kpn_config *cfg);
/* Upper bound on the bytes kpn_spawn carves for one process with this
 * stack and a name of 'name_len' characters, alignment included; 0 if
 * that does not fit in a size_t.  With cfg.guard_pages add two pages. */
size_t kpn_size_proc(size_t stack_size, size_t name_len);
/* Upper bound on the bytes kpn_connect carves for one channel; 0 for a
 * 'msg_size' or 'capacity' of 0, or if that does not fit in a size_t.
 * For a channel connected with capacity 0, pass the capacity it gets:
 * cfg.default_capacity. */
size_t kpn_size_chan(size_t msg_size, size_t capacity);

/* ------------------------------------------------------------------ */
/* Building and running a net (host thread only, never from a process;
 * kpn_offer and kpn_input_close say who may call them).  The calls that
 * build and run a net are refused from a process of the same net; a net
 * of its own that a process builds and runs is not (kpn keeps no global
 * state to tell), and if that net's arena lies on the process's stack,
 * its processes pass for that process in the caller checks of the outer
 * net's channels.  A process that runs a net of several runners needs
 * more than kpn_stack_min() for it: kpn_run starts the runner threads
 * from its stack (one that does little else peaks at 4.3 KiB on x86-64
 * glibc).  Calls on one net from two threads at once are not supported. */

/* Place a net at the start of 'arena' (any alignment; up to 15 bytes are
 * skipped to align it).  'cfg' NULL means kpn_config_default.  The arena
 * must stay valid and untouched by the caller while the net is used;
 * re-initialising the arena discards the old net.
 * KPN_EINVAL: 'net' or 'arena' NULL, an arena that wraps past the end
 *             of the address space, or a config value out of range
 *             (default_capacity 0, resolve, strict, guard_pages or
 *             stack_fill not 0 or 1, guard_pages in a build without
 *             them, on a port whose page is smaller than 16 bytes, or
 *             with an arena not aligned to the page size, a
 *             reserve_size from 1 to 63 or, but for KPN_RESERVE_ARENA,
 *             above SIZE_MAX - 16,
 *             runners 0 or above KPN_MAX_RUNNERS or above 1 in a build
 *             without KPN_THREADS, with several runners a runner_stack
 *             below the port's minimum or above
 *             SIZE_MAX / KPN_MAX_RUNNERS / 2, an unknown policy or wake
 *             rule).
 * KPN_ETHREAD: the system refused a runner's semaphore; those made are
 *             destroyed, and a net this arena held is discarded all the
 *             same (the runners' records were written over it).
 * KPN_ENOMEM: the arena cannot hold the net and its reserve pool (also
 *             when their size overflows a size_t).
 * KPN_ESTATE: a run of the net at the same place is under way (an init
 *             from one of its processes), or the arena holds the
 *             caller's own stack (an init from a process over the memory
 *             its net runs in, at any offset).
 * On failure '*net' is not written; KPN_EINVAL, KPN_ENOMEM and
 * KPN_ESTATE leave the arena, and any net in it, as they were.  Once a
 * call succeeds, or fails with KPN_ETHREAD, every handle of a net this
 * arena held before is stale: calls given one return KPN_EINVAL (or
 * NULL, 0).  That holds for a net that starts where the old one did or
 * over its fields; one that starts further in leaves the old net's
 * fields standing over records it overwrote, so release a net
 * (kpn_net_release) before its memory is used for anything but a net
 * at the same place.  The exception is a handle at whose address the new
 * net has put a record of the same kind: that pointer is the new record
 * (the old net's own handle where the new net starts at the same
 * address, or a process or channel of a net built again in the same
 * order). */
kpn_status kpn_net_init(kpn_net **net, void *arena, size_t arena_size,
                        const kpn_config *cfg);

/* Create a process that will run 'fn(arg)' on a stack of 'stack_size'
 * bytes carved from the arena.  'name' (may be NULL) is copied; a build
 * with KPN_NAME_COPY 0 (the bare-metal default) keeps the pointer
 * instead, and the string must then outlive the net.
 * KPN_EINVAL: 'net', 'proc' or 'fn' NULL, or 'stack_size' < kpn_stack_min().
 * KPN_ESTATE: the net is running, or faulted.
 * KPN_ENOMEM: the arena is full (or the block's size overflows); with
 *             cfg.guard_pages also when the system refuses to protect
 *             the page (on Linux: the process's vm.max_map_count
 *             mappings are used up).  Nothing is carved then. */
kpn_status kpn_spawn(kpn_net *net, kpn_proc **proc, const char *name,
                     void (*fn)(void *arg), void *arg, size_t stack_size);

/* Create a channel from 'writer' to 'reader' carrying messages of exactly
 * 'msg_size' bytes, holding 'capacity' of them (0: cfg.default_capacity).
 * 'writer' and 'reader' may be the same process.
 * KPN_EINVAL: a NULL argument, 'msg_size' 0, a process of another net, or
 *             a ring that would not fit in a size_t.
 * KPN_ESTATE: the net is running or faulted, or an endpoint has already
 *             exited.
 * KPN_ENOMEM: the arena is full. */
kpn_status kpn_connect(kpn_net *net, kpn_chan **chan, kpn_proc *writer,
                       kpn_proc *reader, size_t msg_size, size_t capacity);

/* ------------------------------------------------------------------ */
/* Input from outside the net: interrupt handlers and other threads     */

/* Create an input channel: 'reader' receives with kpn_recv, as from any
 * channel, messages of 'msg_size' bytes that code outside the net hands
 * over with kpn_offer; it holds 'capacity' of them (0: the default) and
 * never grows (the resolver leaves it alone).  Host thread, before a run
 * or between runs.
 * KPN_EINVAL: a NULL argument, 'msg_size' 0, a reader of another net, or
 *             a ring that would not fit in a size_t.
 * KPN_ESTATE: the net is running or faulted, or 'reader' has exited.
 * KPN_ENOMEM: the arena is full (the first input also takes the port's
 *             idle object and a small record: kpn_size_proc(0, 0) covers
 *             both).
 * KPN_ETHREAD: the system refused the idle object (hosted ports). */
kpn_status kpn_connect_input(kpn_net *net, kpn_chan **out, kpn_proc *reader,
                             size_t msg_size, size_t capacity);

/* Copy 'msg' (msg_size bytes) into input channel 'in'.  Callable from an
 * interrupt handler or from another thread while the net runs, or from
 * the host between runs; never blocks.  On a hosted port the wake of an
 * idle net takes a mutex (port/pthread/), so not from a signal handler:
 * POSIX does not allow one there, and one that interrupts kpn_run while
 * it holds that mutex never returns.  One producer per channel at a
 * time: two handlers or threads offering to the same input must not
 * overlap (different inputs are independent).  If the reader has exited
 * the message is dropped and KPN_OK returned.  Stop offering (mask the
 * interrupt, join the thread) before kpn_net_release or a new
 * kpn_net_init over the arena: the compact layout checks an input's tag
 * alone, and may take a handle of the old net for one of the new.
 *   KPN_OK      queued; a running net that idles for input wakes.
 *   KPN_EFULL   the channel holds 'capacity' messages; nothing written.
 *   KPN_EINVAL  'in' or 'msg' NULL, or not a channel.
 *   KPN_EPERM   'in' is a channel but not an input.
 *   KPN_ESTATE  the input was closed.
 *
 * Determinism: each process still sees a function of its inputs.  What
 * the net outputs depends only on the sequence of messages offered to
 * each input (and where it was closed), never on when they came or how
 * they interleave with the net's own work; only the timing of outputs
 * does. */
kpn_status kpn_offer(kpn_chan *in, const void *msg);

/* Close input 'in': the reader drains what is queued, then gets KPN_EOF.
 * Same callers as kpn_offer, and the close counts as one of its
 * producer's calls: it must not overlap an offer to the same input (one
 * under way when the close comes may have its message lost behind the
 * end).  KPN_EINVAL: NULL or not a channel.  KPN_EPERM: not an input.
 * KPN_ESTATE: already closed. */
kpn_status kpn_input_close(kpn_chan *in);

/* Run the network until no process can run.  Processes are scheduled
 * cooperatively: one runs until it blocks or returns.  With cfg.resolve
 * (the default) an artificial deadlock is resolved the moment it closes,
 * by growing the smallest full channel on its cycle from the reserve pool
 * (with several runners, one whose cycle spans runners as soon as any
 * runner runs out of work, or within 256 process switches of a runner).
 * With input channels: while a process waits on an open input and
 * nothing else can run, kpn_run does not return but sleeps in the port's
 * idle hook (WFI on Cortex-M and RISC-V, a condition variable on POSIX)
 * until an offer or a close comes; it returns once every awaited input
 * is closed and the net is at rest, or, with cfg.strict, as soon as the
 * net is at rest with a true deadlock that closed in this run (a later
 * run goes on with the rest of the net).
 *   KPN_OK        every process has exited or waits on a read that no
 *                 process can ever satisfy (Kahn termination).
 *   KPN_ERESERVE  an artificial deadlock needs a channel to grow and the
 *                 reserve pool has no free block that big.  The run stops
 *                 at once and nothing is lost: every message stays in its
 *                 channel, every process where it was (those that were
 *                 ready stay ready); kpn_report names the cycle and the
 *                 block size asked for.  Give memory with kpn_reserve_add
 *                 and call kpn_run again to go on.
 *   KPN_EDEADLOCK with cfg.resolve 0: a process waits to write a full
 *                 channel and nothing can run.  With cfg.strict 1: the net
 *                 holds a true deadlock, closed in this run or an earlier
 *                 one (its processes stay blocked, so every later run ends
 *                 so too, once the rest of the net is at rest).  Messages
 *                 stay in place either way.
 *   KPN_ESTACK    a process overflowed its stack (kpn_net_fault names it);
 *                 the net cannot run again: every later kpn_run of it
 *                 returns KPN_ESTACK.
 *   KPN_ETHREAD   the system refused to start a runner thread; nothing ran.
 *   KPN_EINVAL    'net' NULL, not a net, or stale (released, or its arena
 *                 given to kpn_net_init again).
 *   KPN_ESTATE    called from inside a process of this net.
 * With several runners, every runner thread has returned when kpn_run
 * does, and everything the processes wrote is visible to the caller.
 * Calling it again after it returned resumes where the net stopped. */
kpn_status kpn_run(kpn_net *net);

/* Give the reserve pool 'size' bytes at 'mem' (any alignment: the pool
 * uses the part of it aligned to 16 bytes; must stay valid while the net
 * is used).  Allowed before a run and between runs, typically after
 * KPN_ERESERVE.
 * KPN_EINVAL: NULL; fewer than 64 bytes in the 16-aligned part; a
 *             region that wraps past the end of the address space,
 *             overlaps the 16-aligned part of the arena that the net
 *             uses (arena_size bytes from the net's start, as kpn_stats
 *             gives it, the reserve held at its top included), or whose
 *             16-aligned part overlaps that of a region given before.
 * KPN_ESTATE: the net is running, or faulted (a stack overflow). */
kpn_status kpn_reserve_add(kpn_net *net, void *mem, size_t size);

/* Place 'p' on runner 'runner' (0 .. cfg.runners-1); without a pin,
 * process number i (in spawn order, pinned ones counted) starts on
 * runner i mod runners.  Under KPN_POLICY_STATIC the process runs only
 * there; under KPN_POLICY_WS it starts there and may be stolen, or moved
 * where a learnt placement puts it (cfg.learn), and after a first run
 * over one CPU it runs on runner 0 (cfg.cpus).  A pin of a process that
 * has returned is kept and changes nothing.  Host thread, not while
 * running.
 * KPN_EINVAL: NULL, a stale process, or no such runner.
 * KPN_ESTATE: the net is running, or faulted (a stack overflow). */
kpn_status kpn_proc_pin(kpn_proc *p, unsigned runner);

/* A placement learnt from a run (Vrba's thesis, 4.2.3): after 'net' has
 * run, split its processes into 'runners' parts of about equal traffic
 * that cut as few of the messages its channels carried as it can, and
 * write the part of the i-th spawned process to home[i].  No part holds
 * more than its share by more than the heaviest process's traffic; a
 * part may hold less, down to one process (none where the net has
 * fewer processes than parts, or a few that carry most of the traffic).
 * Pin each process of a net built the same way to home[i] and run it under
 * KPN_POLICY_STATIC: processes that talk most then share a runner, and a
 * channel whose ends share one needs no cross-runner ordering.  'net'
 * itself is not changed; it may have run on any number of runners.  A
 * net that has not run carries no messages: it is split by process
 * count, in spawn order.  Host thread, not while running.
 * KPN_EINVAL: 'net' or 'home' NULL, or a stale net; runners 0 or above
 *             KPN_MAX_RUNNERS, or above 1 in a build without KPN_THREADS
 *             or with KPN_COMPACT;
 *             n below the number of processes.  'home' is written only
 *             on success.
 * KPN_ESTATE: the net is running or faulted. */
kpn_status kpn_place(kpn_net *net, unsigned runners, unsigned *home, size_t n);

/* ------------------------------------------------------------------ */
/* Inside a process                                                     */

/* Copy 'msg' (the channel's msg_size bytes) into channel 'c'; blocks the
 * calling process while the channel is full.  If the reader has exited,
 * the message is dropped, counted in kpn_stats.discarded, and KPN_OK
 * returned: what every live process sees stays the Kahn history.
 * KPN_EINVAL: 'c' or 'msg' NULL, or 'c' stale.  KPN_EPERM: the caller is
 * not the channel's writer (or not a process; an input channel has no
 * writer in the net).  KPN_ESTATE: the writer closed it. */
kpn_status kpn_send(kpn_chan *c, const void *msg);

/* Copy the oldest message of 'c' into 'msg'; blocks the calling process
 * while the channel is empty and open.  A send to a process waiting here
 * may put the message into 'msg' before this call returns; until the
 * process runs, the message still counts as in the channel (kpn_chan_fill,
 * and a run that stops meanwhile).  KPN_EOF once the channel is closed
 * and drained, and on every later call; 'msg' is untouched then.
 * KPN_EINVAL: 'c' or 'msg' NULL, or 'c' stale.  KPN_EPERM: the caller is
 * not the channel's reader (or not a process). */
kpn_status kpn_recv(kpn_chan *c, void *msg);

/* The same, checking that the caller's buffer is the channel's message
 * size: KPN_EINVAL (channel untouched) if 'size' differs. */
kpn_status kpn_send_sized(kpn_chan *c, const void *msg, size_t size);
kpn_status kpn_recv_sized(kpn_chan *c, void *msg, size_t size);

/* Typed forms: 'p' points to the message object. */
#define KPN_SEND(c, p) kpn_send_sized((c), (p), sizeof *(p))
#define KPN_RECV(c, p) kpn_recv_sized((c), (p), sizeof *(p))

/* Close 'c' for writing: the reader drains what is queued, then gets
 * KPN_EOF.  Returning from a process function closes all it writes.
 * KPN_EINVAL: NULL or stale.  KPN_EPERM: the caller is not the writer (the
 * channel stays open).  KPN_ESTATE: already closed. */
kpn_status kpn_close(kpn_chan *c);

/* ------------------------------------------------------------------ */
/* Inspection (host thread, while the net is not running)              */
/* Nothing refuses a call from a process while the net runs: on one
 * runner it sees the net as it stands, but with several it reads what the
 * other runners are changing, and its counts may be torn. */

typedef struct kpn_stats {
    size_t procs;               /* processes spawned */
    size_t procs_exited;        /* returned from their function */
    size_t procs_blocked_read;  /* waiting on an empty channel */
    size_t procs_blocked_write; /* waiting on a full channel */
    size_t chans;               /* channels connected */
    uint64_t switches;          /* dispatches of a process */
    uint64_t messages;          /* messages a process copied into a
                                   channel (not those offered to an
                                   input) */
    uint64_t discarded;         /* messages no process will ever receive:
                                   sent by a process after the reader
                                   exited, or queued when it exited (an
                                   offer after the reader exited is
                                   dropped uncounted) */
    size_t arena_size;          /* bytes of the arena after alignment */
    size_t arena_used;          /* bytes carved so far (not the reserve) */
    size_t arena_free;          /* bytes left for processes and channels
                                   (the reserve pool is not among them) */
    /* the deadlock resolver */
    uint64_t detections;        /* wait-for chain walks started */
    uint64_t resolutions;       /* channels grown to break a deadlock */
    uint64_t true_deadlocks;    /* cycles of processes all waiting to read */
    size_t reserve_size;        /* bytes the reserve pool has been given */
    size_t reserve_used;        /* bytes of it in use now (with headers) */
    size_t reserve_peak;        /* most bytes of it ever in use */
    /* runners */
    unsigned runners;           /* cfg.runners */
    uint64_t steals;            /* processes taken from another runner */
    uint64_t steal_attempts;    /* looks into another runner's queue */
    uint64_t sleeps;            /* times a runner found no work and slept */
    uint64_t placements;        /* placements learnt while running (cfg.learn) */
    uint64_t placements_dropped; /* of them, dropped because the run carried
                                   its messages slower under them, and
                                   under each half of their runners, than
                                   under work stealing just before
                                   (cfg.learn) */
    unsigned placement_runners; /* runners the placement the last run ended
                                   with uses: at most cfg.cpus, fewer where
                                   its trial found fewer faster; 0 if it
                                   ended under work stealing (cfg.learn) */
    uint64_t runner_switches[KPN_MAX_RUNNERS]; /* dispatches per runner;
                                   entries from 'runners' on are 0 */
} kpn_stats;

/* KPN_EINVAL: a NULL argument, a stale net, or one whose own fields a
 * stack overflow damaged.  After an overflow, processes and channels
 * whose records were damaged are not counted. */
kpn_status kpn_net_stats(const kpn_net *net, kpn_stats *out);

typedef enum kpn_proc_state {
    KPN_PROC_READY,         /* can run (also: spawned, not yet started) */
    KPN_PROC_RUNNING,       /* running now */
    KPN_PROC_BLOCKED_READ,  /* waiting on an empty channel */
    KPN_PROC_BLOCKED_WRITE, /* waiting on a full channel */
    KPN_PROC_EXITED,        /* its function returned */
    KPN_PROC_FAULTED        /* overflowed its stack; never runs again */
} kpn_proc_state;

typedef struct kpn_proc_stats {
    const char *name;        /* as given to kpn_spawn (its copy); "" if none */
    kpn_proc_state state;
    const kpn_chan *waiting_on; /* the channel it is blocked on, or NULL */
    const void *stack_base;  /* lowest usable stack address (e.g. for an
                                MPU region or a stack-limit register) */
    size_t stack_size;       /* usable bytes: the request rounded up to 16,
                                less the guard band in a build that keeps
                                it inside the stack (bare metal) */
    size_t stack_peak;       /* high-water mark: most bytes ever used;
                                0 in a net with cfg.stack_fill 0 */
    uint64_t switches;       /* times it was dispatched */
} kpn_proc_stats;

/* KPN_EINVAL: a NULL argument, a stale handle, or a process whose record
 * a stack overflow damaged. */
kpn_status kpn_proc_stats_get(const kpn_proc *p, kpn_proc_stats *out);

/* Iterate over a net's processes in spawn order: NULL gives the first,
 * the last gives NULL.  NULL 'net' gives NULL.  After a stack overflow
 * the walk stops before a damaged record. */
const kpn_proc *kpn_proc_next(const kpn_net *net, const kpn_proc *prev);

/* The process that overflowed its stack after kpn_run returned
 * KPN_ESTACK; NULL otherwise. */
const kpn_proc *kpn_net_fault(const kpn_net *net);

/* Messages a channel holds now (its capacity, which grows when the
 * resolver enlarges it) and queued now; 0 for NULL.  Messages left queued
 * when the reader exited stay in the fill, and count in
 * kpn_stats.discarded too. */
size_t kpn_chan_capacity(const kpn_chan *c);
size_t kpn_chan_fill(const kpn_chan *c);

/* Write a human-readable account of the net into 'buf' (at most 'len'
 * bytes, always NUL-terminated when len > 0), as snprintf does: every
 * process that has not exited (name, state, the channel it waits on and
 * that channel's fill), the true deadlock cycles (the first 8, then how
 * many more), the process that overflowed its stack, and after
 * KPN_ERESERVE the cycle that needed a channel to grow and how many
 * bytes it asked for.  After a stack overflow it reports the records it
 * can trust and says where the damage starts.  Returns the length the whole account needs, without the NUL;
 * 0 for a NULL or stale net.  Uses no memory but 'buf'.  A build with
 * KPN_REPORT 0 (docs/porting.md) keeps no text: it writes an empty
 * string and returns 0. */
size_t kpn_report(const kpn_net *net, char *buf, size_t len);

/* Give up a net: its guard pages become ordinary memory again, and its
 * handles are stale.  Call it before the arena is freed or used for
 * anything but another net (needed only with cfg.guard_pages; harmless
 * otherwise).  KPN_EINVAL: not a live net.  KPN_ESTATE: it is running. */
kpn_status kpn_net_release(kpn_net *net);

#ifdef __cplusplus
}
#endif

#endif /* KPN_H */
