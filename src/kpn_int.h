/* SPDX-License-Identifier: MIT */
/* What the files of the portable core share: object layouts and kpni_ functions. */
#ifndef KPN_INT_H
#define KPN_INT_H

/* The user's options come first, then the port's measured settings
 * (KPN_STACK_MIN, layout defaults), so that either may set what kpn.h
 * and the defaults below only fill in.  A bare-metal Cortex-M or RISC-V
 * build finds its port's settings by the target alone, with no flags;
 * another port names its header with
 * -DKPN_PORT_CONFIG='"NAME/port_config.h"'. */
#ifdef KPN_CONFIG_FILE
#include KPN_CONFIG_FILE
#endif
#if defined(KPN_PORT_CONFIG)
#include KPN_PORT_CONFIG
#elif !defined(__unix__) && !defined(__APPLE__) && \
    (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || \
     defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_8M_MAIN__))
#include "cortex-m/port_config.h"
#elif !defined(__unix__) && !defined(__APPLE__) && defined(__riscv)
#include "riscv/port_config.h"
#endif

#include "kpn.h"
#include "port.h"

/* ------------------------------------------------------------------ */
/* Compile-time options (layout and code only; the rest is kpn_config) */

/* A hosted Unix-like system (where port/pthread/ supplies threads and
 * the processor has caches worth laying memory out for).  Not
 * __STDC_HOSTED__: arm-none-eabi-gcc with newlib calls itself hosted. */
#if defined(__unix__) || defined(__APPLE__)
#define KPNI_UNIX 1
#else
#define KPNI_UNIX 0
#endif

/* Bytes of guard pattern at the bottom of every stack.  An overflow that
 * writes into them is caught at the process's next switch; one that
 * jumps clean over them is not (docs/architecture.md).  Multiple of 16. */
#ifndef KPN_STACK_GUARD
#define KPN_STACK_GUARD 256
#endif
#if KPN_STACK_GUARD < 16 || KPN_STACK_GUARD % 16 != 0
#error "KPN_STACK_GUARD must be a multiple of 16, at least 16"
#endif

/* 0: the guard band lies below the stack the caller asks for, on top of
 * it.  1: it is the lowest KPN_STACK_GUARD bytes of that stack, as in
 * FreeRTOS, so the caller's figure is the whole cost (kpn_proc_stats
 * then reports the rest as usable).  Default: 1 where memory is small
 * (no Unix), 0 on Unix. */
#ifndef KPN_GUARD_INSIDE
#define KPN_GUARD_INSIDE (!KPNI_UNIX)
#endif
#if KPN_GUARD_INSIDE && KPN_STACK_MIN <= KPN_STACK_GUARD
#error "KPN_STACK_MIN must exceed KPN_STACK_GUARD when the guard is inside the stack"
#endif

/* 1: stack tops are aligned to 64-byte cache lines and staggered between
 * neighbours, or in a net of one runner laid out an odd number of lines
 * apart (proc.c), which a cached x86 or big ARM core rewards; it costs up
 * to 496 bytes a process.  0: 16-byte alignment, no stagger,
 * for microcontrollers without a data cache.  Default: 1 on Unix. */
#ifndef KPN_CACHE_STAGGER
#define KPN_CACHE_STAGGER KPNI_UNIX
#endif

/* The cache line the hosted layouts, the prefetches and the stagger are
 * laid out for: x86-64's and most ARM cores'. */
#define KPNI_LINE 64u

/* 1: kpn_spawn copies the name into the arena.  0: it keeps the
 * caller's pointer (the string must outlive the net), saving the copy's
 * bytes.  Default: 1 on Unix. */
#ifndef KPN_NAME_COPY
#define KPN_NAME_COPY KPNI_UNIX
#endif

/* 1: the layout for small memories.  A channel is one packed header,
 * without per-process list links, the cached ring size (a multiply on
 * wrap) or a cache line for each end; a process drops its channel lists
 * (an exiting process scans the net's channels instead).  48 bytes a
 * channel and 80 a process on a 32-bit target, against 208 and 96.
 * Default: 1 off Unix; the hosted layout stays as it is. */
#ifndef KPN_COMPACT
#define KPN_COMPACT (!KPNI_UNIX)
#endif

/* 1: kpn_report writes its account, and kpn_strerror its sentences.
 * 0: leaves their text out of the image (about 1 KiB of strings and
 * code): kpn_report writes an empty string and returns 0, kpn_strerror
 * gives "kpn status".  Default: 1. */
#ifndef KPN_REPORT
#define KPN_REPORT 1
#endif

/* Several runners need threads, a lock and atomics, which only the
 * hosted Unix-like ports supply (port/pthread/).  Elsewhere (bare metal,
 * however the toolchain calls itself) the code is left out and runners
 * must be 1.  Set KPN_THREADS 0 in the config file to leave it out of a
 * Unix build too, or 1 to keep it in a build whose port supplies port.h's
 * thread group. */
#ifndef KPN_THREADS
#define KPN_THREADS KPNI_UNIX
#endif

/* Guard pages (kpn_config.guard_pages) need the port's optional
 * kpn_port_page_size and kpn_port_guard (port.h).  Hosted builds have
 * them (port/pthread/); a bare-metal build leaves them out, and then
 * cfg.guard_pages 1 is refused with KPN_EINVAL. */
#ifndef KPN_GUARD_PAGES
#define KPN_GUARD_PAGES KPN_THREADS
#endif

/* Broken internal invariants (never caller mistakes) go here; the few
 * checks sit off the hot path, so they stay on in release builds.  Define
 * KPN_ASSERT(cond) in the config file to route them to your handler. */
#ifndef KPN_ASSERT
#if defined(__GNUC__) || defined(__clang__)
#define KPN_ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)
#else
#define KPN_ASSERT(c) do { if (!(c)) { volatile int *kpni_null = 0; *kpni_null = 0; } } while (0)
#endif
#endif

/* A stack overflow that reached the net's own fields leaves nothing the
 * library could trust to report it: the program stops here (fail-stop;
 * docs/architecture.md).  Not an assertion: a caller's process did it. */
#if defined(__GNUC__) || defined(__clang__)
#define kpni_fail_stop() __builtin_trap()
#else
#define kpni_fail_stop() do { volatile int *kpni_null = 0; *kpni_null = 0; } while (0)
#endif

/* ------------------------------------------------------------------ */
/* Freestanding helpers: the core includes no libc header, since bare-
 * metal toolchains may lack them; GCC and clang still require memcpy and
 * memset to exist, so the builtins are safe to emit. */

#if defined(__GNUC__) || defined(__clang__)
#define kpni_memcpy __builtin_memcpy
#define kpni_memset __builtin_memset
#define KPNI_NOINLINE __attribute__((noinline))
#ifdef KPNI_COVERAGE
/* coverage (tools/coverage.sh): each branch of the source counted once,
 * not once for each copy that forcing it in line makes */
#define KPNI_INLINE __inline__
#else
#define KPNI_INLINE __inline__ __attribute__((always_inline))
#endif
#define KPNI_LIKELY(x) __builtin_expect(!!(x), 1)
#define KPNI_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* start loading the line at integer address 'a', to read or to write;
 * a prefetch never faults, whatever 'a' is */
#define KPNI_PREFETCH(a) __builtin_prefetch((const void *)(a), 0, 3)
#define KPNI_PREFETCH_W(a) __builtin_prefetch((const void *)(a), 1, 3)
#else
#include <string.h>
#define kpni_memcpy memcpy
#define kpni_memset memset
#define KPNI_NOINLINE
#define KPNI_INLINE
#define KPNI_LIKELY(x) (x)
#define KPNI_UNLIKELY(x) (x)
#define KPNI_PREFETCH(a) ((void)(a))
#define KPNI_PREFETCH_W(a) ((void)(a))
#endif

/* Forget what the compiler knows of pointer 'x': addresses it derived
 * from 'x' before are computed again after, instead of each living in a
 * callee-saved register (and its frame) across a wait. */
#if defined(__GNUC__) || defined(__clang__)
#define KPNI_OPAQUE(x) __asm__("" : "+r"(x))
#else
#define KPNI_OPAQUE(x) ((void)0)
#endif

/* AddressSanitizer: a process that never returns leaves its frames'
 * redzones poisoned in the arena; re-initialising the arena must clear
 * them or the next net using those bytes trips false reports. */
#if defined(__SANITIZE_ADDRESS__)
#define KPNI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KPNI_ASAN 1
#endif
#endif
/* Valgrind's memcheck (a build with KPN_VALGRIND) likewise marks what
 * lies below a stack pointer inaccessible when a stack shrinks. */
#ifdef KPN_VALGRIND
#include <valgrind/memcheck.h>
#define KPNI_VG_ADDRESSABLE(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#else
#define KPNI_VG_ADDRESSABLE(p, n) ((void)0)
#endif
/* An address in the caller's current frame (GCC and Clang; kpni_frame
 * has the fallback): the stack pointer itself where it can be read, since
 * __builtin_frame_address makes every fast path set up a frame pointer
 * and a local's address would stop the slow paths' tail calls. */
#if defined(__GNUC__) || defined(__clang__)
#define KPNI_SP_READ(insn) __extension__({ uintptr_t sp_; __asm__(insn : "=r"(sp_)); sp_; })
#if defined(__x86_64__) || defined(__i386__)
#define KPNI_HERE() KPNI_SP_READ("mov %%" KPNI_SP_NAME ", %0")
#ifdef __x86_64__
#define KPNI_SP_NAME "rsp"
#else
#define KPNI_SP_NAME "esp"
#endif
#elif defined(__arm__) || defined(__aarch64__)
#define KPNI_HERE() KPNI_SP_READ("mov %0, sp")
#elif defined(__riscv)
#define KPNI_HERE() KPNI_SP_READ("mv %0, sp")
#else
#define KPNI_HERE() ((uintptr_t)__builtin_frame_address(0))
#endif
#endif

/* Where the caller's stack is now, for the checks of which stack a call
 * runs on (chan.c, is_running; kpn_net_init).  Without KPNI_HERE, a
 * local's address: in a frame of its own if this is not inlined, which
 * lies on the same stack, just below. */
static inline uintptr_t kpni_frame(void)
{
#ifdef KPNI_HERE
    return KPNI_HERE();
#else
    unsigned char here;

    return (uintptr_t)&here;
#endif
}

/* Checking a stale handle reads its old tag, which may now lie in a live
 * process's stack, where AddressSanitizer poisons frame redzones: the
 * read is the check, so the checks are not instrumented. */
#ifdef KPNI_ASAN
#define KPNI_TAG_READ __attribute__((no_sanitize_address))
#else
#define KPNI_TAG_READ
#endif
/* The high-water mark's scan reads a stack's fill wherever no frame has
 * written it, and a live frame's redzones keep their fill: so does the
 * bottom of a stack that overflowed, which a handler may inspect while
 * the frames that overflowed it are live.  Not instrumented either. */
#define KPNI_STACK_READ KPNI_TAG_READ
#ifdef KPNI_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define KPNI_UNPOISON(p, n) (__asan_unpoison_memory_region((p), (n)), KPNI_VG_ADDRESSABLE(p, n))
#else
#define KPNI_UNPOISON(p, n) KPNI_VG_ADDRESSABLE(p, n)
#endif

/* ThreadSanitizer must be told when a thread moves to another stack, or
 * its shadow call stack is corrupted: each process is a TSan fiber. */
#if defined(__SANITIZE_THREAD__)
#define KPNI_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KPNI_TSAN 1
#endif
#endif
#ifdef KPNI_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* Fields that another runner may read without holding their lock are loaded
 * and stored whole (relaxed atomics: plain moves on every target); the
 * channel counters publish messages with acquire/release.  With one
 * runner, or without threads, these compile to plain accesses. */

/* Where the compiler has no lock-free atomics of a word or a pointer
 * (ARMv6-M, the M0 and M0+: no LDREX/STREX, so none of a byte either),
 * clang makes an acquire load or a release store a call to
 * __atomic_load_4 and the like, which nothing provides; GCC inlines them
 * on ARMv6-M, though not on RISC-V without the A extension.  Threads are
 * off there, and what the one runner shares it shares with an interrupt
 * handler: such a load or store is a volatile access (a naturally
 * aligned byte, word or pointer is loaded and stored whole) with a fence
 * after the load or before the store, the DMB that GCC's own atomics put
 * there, which orders them for another core too. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__GCC_ATOMIC_INT_LOCK_FREE) && \
    defined(__GCC_ATOMIC_POINTER_LOCK_FREE) &&                                   \
    (__GCC_ATOMIC_INT_LOCK_FREE < 2 || __GCC_ATOMIC_POINTER_LOCK_FREE < 2)
#define KPNI_VOLATILE_LOAD_ACQ(p)                                                 \
    __extension__({                                                               \
        __typeof__(*(p)) kpni_v_ = *(volatile __typeof__(*(p)) *)(p);             \
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                                  \
        kpni_v_;                                                                  \
    })
#define KPNI_VOLATILE_STORE_REL(p, v)                                             \
    (__atomic_thread_fence(__ATOMIC_RELEASE),                                     \
     (void)(*(volatile __typeof__(*(p)) *)(p) = (v)))
#endif

#if KPN_THREADS
/* The yielding build (make test-yield, make fuzz-yield) may give up the
 * CPU before each of these and at each lock taken or let go
 * (kpni_fuzz_yield, port/pthread/fuzz_yield.c), so that interleavings a
 * loaded machine makes rarely come more often. */
#ifdef KPN_FUZZ_YIELD
void kpni_fuzz_yield(void);
#define KPNI_FUZZ_YIELD() kpni_fuzz_yield()
#else
#define KPNI_FUZZ_YIELD() ((void)0)
#endif
#define KPNI_LOAD(p) (KPNI_FUZZ_YIELD(), __atomic_load_n((p), __ATOMIC_RELAXED))
#define KPNI_STORE(p, v) (KPNI_FUZZ_YIELD(), __atomic_store_n((p), (v), __ATOMIC_RELAXED))
#define KPNI_LOAD_ACQ(p) (KPNI_FUZZ_YIELD(), __atomic_load_n((p), __ATOMIC_ACQUIRE))
#define KPNI_STORE_REL(p, v) (KPNI_FUZZ_YIELD(), __atomic_store_n((p), (v), __ATOMIC_RELEASE))
#define KPNI_FENCE() (KPNI_FUZZ_YIELD(), __atomic_thread_fence(__ATOMIC_SEQ_CST))
#elif defined(__GNUC__) || defined(__clang__)
/* One runner, but an input channel's counters are shared with an
 * interrupt handler (kpn_offer): a message is still published with
 * release and taken with acquire (a barrier on a single core, a plain
 * move on x86). */
#define KPNI_LOAD(p) (*(p))
#define KPNI_STORE(p, v) (*(p) = (v))
#ifdef KPNI_VOLATILE_LOAD_ACQ
#define KPNI_LOAD_ACQ(p) KPNI_VOLATILE_LOAD_ACQ(p)
#define KPNI_STORE_REL(p, v) KPNI_VOLATILE_STORE_REL(p, v)
#else
#define KPNI_LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define KPNI_STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#endif
#define KPNI_FENCE() ((void)0)
#else
#define KPNI_LOAD(p) (*(p))
#define KPNI_STORE(p, v) (*(p) = (v))
#define KPNI_LOAD_ACQ(p) (*(p))
#define KPNI_STORE_REL(p, v) (*(p) = (v))
#define KPNI_FENCE() ((void)0)
#endif

/* Object tags: catch a stale or foreign handle with KPN_EINVAL instead of
 * scribbling through it. */
#define KPNI_NET_MAGIC  0x6b706e4eu /* "kpnN" */
#define KPNI_PROC_MAGIC 0x6b706e50u /* "kpnP" */
#define KPNI_CHAN_MAGIC 0x6b706e43u /* "kpnC" */
/* A net given up with kpn_net_release: its handles are stale, and its
 * serial stays readable so the next net in the arena takes another. */
#define KPNI_NET_RELEASED 0x6b706e52u /* "kpnR" */

/*
 * Stale handles.  Re-initialising an arena places the new net exactly
 * where the old one was, so an old process's 'net' pointer and tag both
 * still look right.  Every net therefore gets a serial, one more than
 * that of the net it replaces in the same place (read before it is
 * overwritten), and every process and channel records its net's serial:
 * a handle is live only when its serial is its net's and it lies in the
 * part of the arena carved so far, where every byte has been written
 * since (stacks filled, rings and runner stacks zeroed), so an old
 * record there is gone unless a new one of its kind sits exactly on it.
 * Where no net is found, the serial is a hash of the bytes there (see
 * kpn_net_init), which takes a serial the place has had before when the
 * bytes are as they were then: the old records beyond the new carve
 * then hold the live serial, and only the carve refuses them
 * (kpni_chan_ok checks a bound inside it: the end of the newest channel
 * record).  A new object carved exactly where an
 * old one was is the new object; anywhere else in the carved part the
 * old tag is overwritten by stack fill, a ring or another field.  With
 * cfg.stack_fill 0 the stacks are not written, and an old record in one
 * is refused by its serial alone, which is an earlier net's unless the
 * hash took it again (docs/errors.md).
 *
 * A stale record may also be overwritten in part (by a reserve block's
 * header, say) so that its tag survives and its 'net' does not: 'seal'
 * binds the record's address and 'net' together (its distance from the
 * net, one subtraction on the hot path), and 'net' is followed only when
 * the seal holds.  The serial is compared with the net's after that.
 */
/* The same binds a name the caller keeps (KPN_NAME_COPY 0) to its
 * record: bytes written over both (a fill pattern, zeros) do not agree
 * by chance.  The compact channel and process records carry no seal of
 * their net. */
#if !KPN_COMPACT || !KPN_NAME_COPY /* unused otherwise: clang warns */
static inline uintptr_t kpni_seal(const void *self, const void *other)
{
    return (uintptr_t)self - (uintptr_t)other;
}
#endif

#define KPNI_ALIGN 16u  /* every carve; the stack ABI wants 16 */
/* Whether 'p' is aligned as every net, process and channel record is: a
 * handle's fields are read only once it is, for a misaligned read is
 * undefined, and a fault on a core that traps one (Cortex-M0). */
#define KPNI_ALIGNED(p) (((uintptr_t)(p) & (KPNI_ALIGN - 1u)) == 0)

/* ------------------------------------------------------------------ */
/* The arena: one bump region, growing up, and (later) a reserve pool at
 * the top.
 *
 *    base                                    next             end
 *    | kpn_net | proc | chan | proc ...      |   free   ...   | reserve |
 */
typedef struct kpni_arena {
    unsigned char *base;  /* first aligned byte */
    unsigned char *next;  /* first free byte */
    unsigned char *end;   /* one past the last byte the bump may use */
} kpni_arena;

void kpni_arena_init(kpni_arena *a, void *mem, size_t size);
void *kpni_arena_carve(kpni_arena *a, size_t size);

/* 'n' rounded up to 'align', a power of two; the caller keeps the sum
 * from overflowing. */
static inline size_t kpni_round_up(size_t n, size_t align)
{
    return (n + (align - 1)) & ~(size_t)(align - 1);
}

static inline size_t kpni_align_up(size_t n)
{
    return kpni_round_up(n, KPNI_ALIGN);
}

/* ------------------------------------------------------------------ */
/* The reserve pool: memory channels grow into.  Free blocks sit on a list
 * in address order, each headed by its size, so a freed block merges
 * with its neighbours and a long run does not fragment the pool away.
 * An allocated block keeps the same 16-byte header, holding its size. */
typedef struct kpni_free {
    size_t size;                 /* bytes, header included */
    struct kpni_free *next;
} kpni_free;

typedef struct kpni_pool {
    kpni_free *free;             /* address order */
    size_t size, used, peak;     /* bytes given / in use / most in use */
} kpni_pool;

#define KPNI_POOL_HEADER 16u
#define KPNI_POOL_MIN (KPNI_POOL_HEADER + KPNI_ALIGN) /* smallest block */
#define KPNI_RESERVE_MIN 64u /* smallest reserve a caller may give (kpn.h) */

void kpni_pool_add(kpni_pool *pool, void *mem, size_t size);
void *kpni_pool_alloc(kpni_pool *pool, size_t size);
void kpni_pool_free(kpni_pool *pool, void *p);
size_t kpni_pool_tail(const kpni_pool *pool, const void *at);

/* ------------------------------------------------------------------ */
/* A runner: one thread multiplexing processes.  A ready process sits on
 * a runner's run queue (a deque: the owner takes from the front, thieves
 * from the back); the running one is 'current'; 'host' is the context of
 * the runner's own thread, resumed when it has no process to run.
 *
 * With several runners ('mt'), every change to a process's state or to a
 * run queue happens under the lock of the process's runner, but for a
 * wake that a runner that is 'own' makes on itself (kpni_sched_ready_own),
 * and the resolver's walks under every runner's (runners.c,
 * docs/runners.md).
 * The lock is held across a context switch and released by the context
 * that resumes, so no process can be resumed before its registers are
 * saved.
 * Counters are per runner, written only by the runner's own thread. */
enum { KPNI_AWAKE, KPNI_SPINNING, KPNI_ASLEEP };
/* net->trial (runners.c, "Trying a placement") */
enum { KPNI_TRIAL_NONE, KPNI_TRIAL_BASE, KPNI_TRIAL_ON, KPNI_TRIAL_HALF, KPNI_TRIAL_KEPT,
       KPNI_TRIAL_DROPPED, KPNI_TRIAL_AGAIN, KPNI_TRIAL_RECHECK };
/* The placement's windows a trial keeps the counts of: the first, and
 * each half of up to KPN_MAX_RUNNERS (32) parts down to one. */
#define KPNI_TRIAL_WINDOWS 6

/* How many of the processes that last parked on a crossing channel a
 * runner remembers, to look at again when it runs out of work. */
#define KPNI_PARKED_CROSS 4

/* How many of the resolver's walks that leave its runner a runner puts
 * off, and for how many of its switches at most (runners.c, "Walks put
 * off"): enough for a batch of several walks in a net that makes one
 * every 15 switches (RND-B), few enough for a coarse net's processes. */
#define KPNI_WALKS 16
#define KPNI_WALKS_AFTER 256u

/* How many channels a move may mark crossing while their other end runs
 * on the runner it leaves, before that end next blocks (runners.c). */
#define KPNI_FLIPS 8

/* A net of KPNI_AHEAD_PROCS processes or more is taken for one whose
 * hops reach beyond the core's caches, and a wake there asks for the
 * lines of the process KPNI_AHEAD wakes on (kpni_sched_look_ahead). */
#define KPNI_AHEAD 16u
#define KPNI_AHEAD_PROCS 4096u

/* Wakes in a row that found nothing to run, after which an idle runner
 * is woken for a process queued alone only once in KPNI_LONE_RETRY such
 * wakes, and may let another runner go solo (runners.c). */
#define KPNI_FRUITLESS 2u
#define KPNI_LONE_RETRY 1024u

/* How long an idle runner spins before it sleeps in the kernel: a wake
 * while it spins costs a store, after it a system call on each side. */
#ifndef KPNI_IDLE_SPINS
#define KPNI_IDLE_SPINS 2000
#endif

typedef struct kpni_runner {
    kpn_net *net;
    kpn_proc *current;
    kpn_proc *head, *tail;     /* run queue through next_ready/prev_ready */
    kpn_port_ctx *host;
    size_t ctx_off;            /* a process's context lies this far below it */
    int resolve;               /* cfg.resolve, where the hot path sees it */
    int mt;                    /* more than one runner */
    /* a read-block takes block_any (sched.c): 'mt', or solo in a trial's
     * window on one part, which only a block that looks can close */
    int slow_reads;
    unsigned index;
    int sleeping;              /* KPNI_AWAKE, or idle: see runners.c */
    uint32_t rng;              /* victim choice; per runner, no shared state */
#if !KPN_COMPACT
    /* Looking ahead (kpni_sched_look_ahead): on in a net of
     * KPNI_AHEAD_PROCS processes or more; the last KPNI_AHEAD processes
     * this runner woke there, and how many it has woken. */
    int ahead;
    unsigned nwoke;
    kpn_proc *woke[KPNI_AHEAD];
#endif
#if KPN_THREADS
    /* switches left in which it drains what several runners filled
     * (sched.c, "Draining"): on the line a switch counts on */
    unsigned drain;
    /* 'own': its thread makes the wakes of processes on it with no lock
     * (kpni_sched_ready_own), and no other thread moves them; set and
     * cleared by that thread, under the lock, at a park and as it idles.
     * The processes so woken wait on a list only that thread touches, and
     * join the back of the queue at its next park. */
    int own;
    kpn_proc *own_head, *own_tail;
    /* 'bias': while r is own, its thread takes its lock at a block with
     * a plain store to 'inside' (runners.c, "Biased locks"); only that
     * thread writes either */
    int bias, inside;
#endif
    uint64_t switches, messages, drops, steals, steal_attempts, sleeps;
    uint64_t placements;       /* placements it learnt (runners.c, cfg.learn) */
    uint64_t dropped;          /* of them, dropped for work stealing again */
    uint64_t detections;       /* the resolver's walks as processes block */
#if KPN_THREADS
    kpn_port_sem *sem;
    kpn_port_thread *thread;
    unsigned char *stack;
    int lock;                  /* its queue and the processes on it */
    unsigned revoke;           /* other threads taking the lock now */
    /* The last processes that parked here on a crossing channel: an idle
     * runner looks whether their wake-up was missed (runners.c). */
    kpn_proc *parked_cross[KPNI_PARKED_CROSS];
    unsigned nparked_cross;
    /* Channels a move marked crossing while their other end ran here,
     * with the state the mover would wait in: the running end looks at
     * them again, fenced, before it next blocks (runners.c, "Moves"). */
    struct kpni_flip {
        kpn_chan *c;
        kpn_proc_state why;
    } flipped[KPNI_FLIPS];
    unsigned nflipped;
    /* Blocked processes whose walk for the resolver left this runner and
     * is put off until a runner takes every lock (runners.c, "Walks put
     * off"), and this runner's switch count when the first was put off;
     * under this runner's lock. */
    kpn_proc *walks[KPNI_WALKS];
    unsigned nwalks;
    uint64_t walks_since;
    /* 'switches' when it last looked at the clock for a trial's window
     * on one part (KPNI_WINDOW_DUE) */
    uint64_t window_at;
    /* Channels that stopped crossing as a process moved here: only this
     * runner's thread moves processes here, so a plain count (block_any). */
    unsigned unflips;
    /* A victim's only queued process that this runner, as a thief, left
     * there, and the victim's dispatch count then (runners.c, takeable). */
    kpn_proc *lone;
    uint64_t lone_switches;
    unsigned lone_looks;       /* idle looks for one since the runner last slept */
    /* 'messages' and 'steals' when this run began, and the placement it
     * last took its processes for (cfg.learn) */
    uint64_t run_messages, run_steals;
    unsigned pulled;
    unsigned pull_after;       /* on one part: blocks before it pulls again */
    /* Solo (runners.c): the others sleep and every process is here, so it
     * runs as one runner does, 'mt' clear, until it has work to share.
     * 'dormant': asleep, past its last look at anything shared.
     * 'solo_tried': net->dormancies when it last asked to go solo. */
    unsigned char solo, dormant;
    unsigned solo_tried;
    unsigned solo_after;       /* blocks before it looks again */
    uint64_t solos;            /* times it went solo */
    /* How many times in a row it woke and ran nothing before it slept
     * again ('switches' when it last woke, to tell): a runner woken that
     * often for a process queued alone finds it run before it can take
     * it, and is seldom woken for one (runners.c). */
    unsigned fruitless;
    uint64_t woke_switches;
    unsigned lone_skips;       /* its wakes of a lone process while a runner idled */
#endif
#ifdef KPNI_TSAN
    void *fiber;
#endif
#if KPN_THREADS
    /* Processes other runners woke with no lock, a stack that only this
     * runner's thread empties into its queue (runners.c, "Wakes from
     * other runners"), on a line of its own: other runners write it. */
    unsigned char pad_in[KPNI_LINE];
    kpn_proc *inbox;
#endif
#if KPNI_UNIX
    /* a line's distance between one runner's fields and the next one's:
     * each runner writes its own all the time */
    unsigned char pad[KPNI_LINE];
#endif
} kpni_runner;

typedef enum kpni_net_state {
    KPNI_NET_IDLE,        /* building, or between runs */
    KPNI_NET_RUNNING,
    KPNI_NET_FAULTED      /* a stack overflowed; no more runs */
} kpni_net_state;

/* True deadlocks remembered for kpn_report: one member of each cycle
 * (the cycle itself is stable, so the report walks it again).  Sized up
 * front: a report must not need memory it might not have. */
#define KPNI_DEADLOCK_RECORDS 8

struct kpn_net {
    /* One line every hop reads and almost nothing writes: the tag and
     * serial a handle's check compares, and what park looks at. */
    uint32_t magic;
    uint32_t serial;               /* see "Stale handles" above */
#if !KPN_COMPACT
    /* What a live channel's first 8 bytes hold: its tag and this serial
     * (zero once released), so a send checks both with one compare. */
    uint32_t chan_head[2];
    /* Beside chan_head: a send's check compares its channel with the
     * end of the newest channel record (kpni_chan_ok).  Records are made
     * only while no process runs, so a process reads this as a plain
     * word and its check folds the load into the compare; the end of
     * the carve would not do, since a ring that grows is carved in a
     * run. */
    const unsigned char *chans_end;
#endif
    /* Written only as the net is built, and as a ring is carved for a
     * channel that grows (kpni_arena_carve). */
    kpni_arena arena;
    /* Why the run must stop now (KPN_OK: it need not).  Set by a process,
     * by a runner's host loop (a resolver's verdict at rest) or by kpn_run
     * (a guard band found damaged at the end); every process that parks
     * then returns to the host. */
    kpn_status halt;
    /* Raised by kpn_offer/kpn_input_close (input.c), looked at in every
     * switch. */
    uint32_t input_signal;
    kpni_net_state state;
    kpn_config cfg;
    size_t page;                   /* guard page size (cfg.guard_pages), else 0 */
    kpni_runner *runners;          /* cfg.runners of them */
    unsigned nrunners;
#if KPN_THREADS
    unsigned idle;                 /* runners with nothing to run (mt) */
    int done;                      /* the run is over: runners return */
    /* cfg.learn (runners.c), written under every runner's lock: the
     * placements learnt in this run (none: work stealing as it was), and
     * the messages a runner must have sent in it before the next is */
    unsigned learnt;
    unsigned parts;                /* runners a learnt placement uses: cfg.cpus, at most all,
                                      fewer where the trial found fewer faster */
    unsigned parts_won;            /* the fastest parts so far in this run's trial */
    unsigned pulled_parts;         /* runners of parts that took theirs since it was learnt */
    /* Whether its runs are on runner 0 alone (runners.c, run_alone):
     * KPNI_SHARED or KPNI_ALONE, settled by the first run (0 before). */
    unsigned char sharing;
    uint64_t learn_at;
    uint64_t run_began;            /* kpn_port_clock_ns when this run began */
    uint64_t run_msgs;             /* and the messages carried by then */
    uint64_t grain_at;             /* a runner's messages before the net's grain is looked at again */
    /* The trial of the first placement learnt in a run (runners.c,
     * "Trying a placement"), under every runner's lock: where it stands
     * (KPNI_TRIAL_*), when its window began and the messages carried by
     * then, and what the window before it carried (work stealing's, or
     * the placement on more parts that a half is tried against). */
    unsigned char trial;
    uint64_t trial_ns, trial_msgs, base_ns, base_msgs;
    /* What each of the placement's windows carried, on how many parts,
     * for work stealing's second window to be judged against */
    struct kpni_tried {
        unsigned parts;
        uint64_t msgs, ns;
    } tried[KPNI_TRIAL_WINDOWS];
    unsigned ntried;
    unsigned learnt_before;        /* 'learnt' as work stealing's second window began */
#if !KPN_COMPACT
    /* A partition's weights per part (place.c), here and not in its
     * frame: a placement learnt at a block is made on that process's
     * stack.  Used under every runner's lock, or by kpn_place between
     * runs. */
    uint64_t place_load[KPN_MAX_RUNNERS], place_conn[KPN_MAX_RUNNERS];
#endif
    /* One part kept: how long it runs before two are tried again,
     * doubled for each time one has won again in this run ('agains';
     * runners.c, "Trying a placement") */
    uint64_t again_ns;
    unsigned agains;
    /* placements dropped for work stealing in this run: the trial
     * starts again after a wait that doubles with each (runners.c) */
    unsigned drops;
    unsigned parts_first;          /* the parts the trial's placement had */
    /* a runner is solo: the others wait for it to end before they look
     * at anything (runners.c); and how many times one went dormant */
    int solo;
    unsigned dormancies;
    /* the port can fence every thread (kpn_port_fence_threads): a
     * runner may take its lock with plain stores (runners.c) */
    int fence_ok;
#endif
    kpn_proc *procs, *procs_tail;  /* spawn order, through kpn_proc.next */
    kpn_chan *chans;               /* through kpn_chan.next */
    size_t nprocs, nchans;
    size_t nexited;                /* processes that have returned */
    kpn_proc *fault;               /* overflowed stack, for kpn_net_fault */
    /* the resolver */
    kpni_pool pool;
    size_t reserve_carved;         /* bytes held back at the arena's top */
    size_t reserve_grown;          /* KPN_RESERVE_ARENA: bytes the pool took
                                      from the arena while running */
    uint64_t detections;           /* at rest (the runners count the rest) */
    uint64_t resolutions, true_deadlocks;
    kpn_proc *deadlocks[KPNI_DEADLOCK_RECORDS];
    kpn_proc *pending;             /* KPN_ERESERVE: a member of the cycle */
    kpn_chan *pending_chan;        /*   the channel that could not grow */
    size_t pending_bytes;          /*   the smallest growth it asked for */
    /* input channels (input.c); all zero until kpn_connect_input */
    size_t ninputs;
    kpn_proc *outside;             /* the writer of every input channel */
    kpn_port_idle *input_idle;     /* where kpn_run waits for input */
    /* The tag and serial again, last: a net placed a few bytes after
     * this one writes over these but may leave 'magic' and 'serial'
     * standing, and this one's handle must not take its fields for its
     * own (kpni_net_valid). */
    uint32_t tail[2];
};

/* A process's block of arena, carved in one piece so that ENOMEM can
 * leave nothing behind:
 *
 *   low                                                            high
 *   | stagger | guard band | stack ... grows down <- sp | ctx | kpn_proc | name |
 *                          'stack_lo'           'stack_lo + stack_size'
 *
 * That is the Unix layout.  Off Unix (KPN_GUARD_INSIDE, no
 * KPN_CACHE_STAGGER, no KPN_NAME_COPY) the guard band is the bottom of
 * the stack the caller asked for, and there is neither stagger nor name:
 *
 *   | guard | stack ... <- sp | ctx | kpn_proc |     (stack + 96 bytes on 32 bits)
 *
 * The guard is below the stack so an overflow hits it first; the
 * process's own bookkeeping is above the stack, out of an overflow's way,
 * so the check that reports it can still trust it.  'stagger' shifts the
 * stack tops of neighbouring processes by different multiples of 64 bytes
 * so their hottest lines do not share cache sets, and the saved registers
 * at the top of the stack sit next to 'ctx' and the struct: the lines a
 * switch into the process touches are adjacent. */
struct kpn_proc {
    /* What a switch, a send, a receive, a block and a wake touch, first:
     * with the stack top 64-byte aligned, these share one line with the
     * port's context just below them (which is why there is no pointer
     * to it: it lies a fixed distance below, see KPNI_CTX). */
    unsigned char state;       /* a kpn_proc_state */
    unsigned char watched;     /* a write-blocked chain may end here */
    unsigned char dead;        /* on a true deadlock cycle: never runs again */
#if KPN_THREADS
    /* its runner under KPN_POLICY_STATIC (KPN_MAX_RUNNERS is 32): in a
     * byte the line has spare, which a wake reads anyway */
    unsigned char home;
#endif
    uint32_t nwaiters;         /* blocked processes waiting on this one */
    kpn_chan *wait;            /* channel it is blocked on (wait-for edge) */
    kpn_proc *next_ready;      /* run queue link; see KPNI_PARKED_AT */
#if KPN_COMPACT
    uint64_t switches;
#else
    kpn_proc *after;           /* the process it last woke (KPNI_PREFETCH_AFTER) */
#endif
    kpni_runner *runner;       /* running it, or last ran it, or queued on */
    unsigned char *stack_lo;   /* lowest usable byte; guard band below */
    /* the rest */
    kpn_proc *prev_ready;      /* the other link; kept with several runners only */
    uint32_t magic;
#if !KPN_COMPACT
    uint32_t serial;           /* its net's (see "Stale handles") */
    uintptr_t seal;            /* kpni_seal(this, net) */
#endif
#if KPN_THREADS
    /* The crossing channels this process has sent on ([KPNI_WRITES]) and
     * received from ([KPNI_READS]) since it last blocked, their partners
     * looked at without a fence (chan.c, release_cross); the block looks
     * again, after one.  One of each, so that a stage of a pipeline,
     * which takes a message from one channel and puts one on another,
     * pays no fence between its blocks. */
    kpn_chan *unfenced[2];
#endif
#ifdef KPNI_TSAN
    void *fiber;
#endif
    kpn_net *net;
    kpn_proc *next;            /* all processes, spawn order */
#if !KPN_COMPACT
    kpn_proc *prev;            /* spawn order backwards (kpn_net_fault's blame) */
    /* Counted at every dispatch, on the line of 'outs', which a wake of
     * the process reads anyway (KPNI_PREFETCH_OUT), so that the first
     * line keeps room for 'after'. */
    uint64_t switches;
    kpn_chan *outs, *ins;      /* channels it writes / reads */
    /* whom 'after' woke when this one last woke it (KPNI_PREFETCH_AFTER),
     * or, in a net that looks ahead, whom its runner woke KPNI_AHEAD
     * wakes after it the last time (kpni_sched_look_ahead); on the
     * line the wake reads 'outs' from; in a 64-bit build without
     * ThreadSanitizer's fiber it fills what the record was rounded up by */
    kpn_proc *beyond;
#endif
    void (*fn)(void *);        /* NULL once it has started (proc.c, proc_entry) */
    void *arg;
    const char *name;          /* the copy, or the caller's (KPN_NAME_COPY) */
    size_t stack_size;         /* the stack is [stack_lo, stack_lo + stack_size) */
#if !KPN_NAME_COPY
    /* kpni_seal(this, name): the caller's string may lie anywhere,
     * so a report after an overflow follows 'name' only where this word
     * still agrees with it (kpni_proc_live), as a copy's address is
     * checked against the record's own.  In the bare-metal layouts it
     * takes bytes the record's carve rounds up to anyway. */
    uintptr_t name_seal;
#endif
    /* Scratch for the scan at rest and for placements (never more than
     * the net's processes): 32 bits, so that it and the fields below
     * share one word. */
    uint32_t seen;
#if !KPN_COMPACT
    /* The channels it writes that are still open, saturating at
     * KPNI_OPEN_OUTS_MANY (then no longer counted): its exit walks 'outs'
     * only while one may be open (proc.c, kpni_proc_finish). */
    uint16_t open_outs;
#endif
#if KPN_THREADS
    /* KPNI_PF_UNLOCKS: parked by a runner that shares its processes, it
     * lets go of its runner's lock as it resumes (sched.c, park): a
     * runner that shares may hand it that lock.  Clear for one that
     * parked while its runner was solo (runners.c, "Solo"), which a
     * sharing runner resumes from its host with the lock let go.
     * KPNI_PF_WOKE_WRITE: released from a write-block while its runner
     * drains (sched.c), which only one thread does, with the others
     * dormant; so the two never change at once on two threads. */
    unsigned char flags;
#if !KPN_COMPACT
    /* Its channels that cross, with several runners, saturating at
     * KPNI_NCROSS_MANY (then no longer counted): only these can bring it
     * a waiter from another runner, which 'nwaiters' does not count
     * (KPNI_NWAITERS_ADD_ON). */
    unsigned char ncross;
#endif
#endif
#if KPN_GUARD_PAGES
    unsigned char *guard;      /* its protected page (cfg.guard_pages), or NULL */
#endif
};

#define KPNI_OPEN_OUTS_MANY 0xffffu
#define KPNI_NCROSS_MANY 0xffu
#define KPNI_PF_UNLOCKS 1u
#define KPNI_PF_WOKE_WRITE 2u

/* A channel and its ring, carved in one piece:
 *
 *   | kpn_chan | ring: cap * msg_size bytes ................. |
 *                ^rpos (next to read)     ^wpos (next to write)
 *
 * 'sent' and 'received' count messages since creation; their difference
 * is the fill, so the writer only ever moves 'wpos'/'sent' and the reader
 * 'rpos'/'received'.
 *
 * The hosted layout (KPNI_CHAN_LINES) gives each end a cache line of its
 * own, after a line both only read, as in Lamport's and FastForward's
 * queues: the writer's line holds what it writes and a copy of
 * 'received' as it last saw it, the reader's the reverse.  A send looks
 * at 'received' itself only when its copy says the ring is full, a
 * receive at 'sent' only when its copy says it is empty, so two runners
 * streaming through a channel do not pull one line back and forth for
 * every message.
 *
 * That is for a channel whose ends may run at once ('cross', or an
 * input).  Where they never do (one runner, or both ends homed on one),
 * the reader keeps its position and count on the writer's line instead,
 * and the third line is never touched: a hop through a ring of processes
 * misses one line fewer.  The reader finds its four words through
 * 'rd_off' (KPNI_RD), in the same order on either line:
 *
 *   reader's line:  rpos       received       seen_sent  rring_bytes
 *   writer's line:  near_rpos  seen_received  sent       ring_bytes
 *
 * On the writer's line the reader's count is the writer's copy of it, and
 * its copy of 'sent' is 'sent' itself.  kpni_chan_set_cross moves the
 * four between runs.  The compact layout (bare metal: one core, no
 * threads) packs everything into 48 bytes on a 32-bit target instead. */
#if !KPN_COMPACT
#define KPNI_CHAN_LINES 1
#else
#define KPNI_CHAN_LINES 0
#endif

struct kpn_chan {
#if KPNI_CHAN_LINES
    /* line 0: set up before a run, read by both ends */
    uint32_t magic;
    uint32_t serial;           /* its net's (see "Stale handles") */
    kpn_net *net;
    uintptr_t seal;            /* kpni_seal(this, net) */
    kpn_proc *writer, *reader; /* an input's writer is net->outside */
    unsigned char *ring;
    size_t msg_size;
    unsigned char closed;      /* written once, by the writer */
    /* Its two ends may run at once on different runners: set by kpn_run
     * under KPN_POLICY_STATIC (not both ends homed on one runner), and
     * under work stealing while the ends are on different runners
     * (runners.c, "Moves"). */
    unsigned char cross;
    unsigned char input;       /* set by kpn_connect_input; kpn_offer checks it */
    unsigned char ring_pooled; /* 'ring' came from the reserve pool */
    unsigned char rd_off;      /* where the reader's words start (above) */
    unsigned char always_cross; /* 'cross' for the whole run, wherever its ends are */
    unsigned char pad0[KPNI_LINE - 14 - 6 * sizeof(void *)];
    /* line 1: the writer's */
    size_t wpos;
    size_t cap;                /* messages */
    size_t near_rpos;          /* the reader's position, ends never at once */
    size_t seen_received;      /* 'received' when the writer last looked */
    size_t sent;
    size_t ring_bytes;         /* cap * msg_size */
    /* A ring this small lives here (KPNI_RING_INLINE): the reader reads
     * this line anyway whenever the ring is empty, which a ring of a
     * message or two nearly always is, so the data rides along. */
    unsigned char wring[KPNI_LINE - 6 * sizeof(size_t)];
    /* line 2: the reader's, where the ends may run at once */
    size_t rpos, received;
    size_t seen_sent;          /* 'sent' when the reader last looked */
    size_t rring_bytes;        /* the same as 'ring_bytes', on this line */
    size_t wr_waiting;         /* KPNI_WAITING: the writer may wait */
    unsigned char pad2[KPNI_LINE - 5 * sizeof(size_t)];
    /* cold: lists */
    kpn_chan *next_out, *next_in;
    kpn_chan *next;
#else
    /* what every send and receive touches, first */
    uint32_t magic;
    unsigned char closed;
    unsigned char ring_pooled; /* 'ring' came from the reserve pool */
    unsigned char input;       /* set by kpn_connect_input; kpn_offer checks it */
    unsigned char cross;       /* as above; never set without threads */
    kpn_proc *writer, *reader; /* an input's writer is net->outside */
    unsigned char *ring;
    size_t msg_size;
    /* byte offsets into 'ring', and counts that wrap freely (only the
     * difference counts); the reader's two side by side (KPNI_RD) */
    size_t rpos, received;
    size_t wpos, sent;
    size_t cap;                /* messages */
    kpn_chan *next;
#endif
};

/* Whether a ring of 'bytes' is kept inside the struct (the bytes after it
 * are carved all the same: kpn_size_chan says why). */
#if KPNI_CHAN_LINES
#define KPNI_RING_INLINE(bytes) ((bytes) <= sizeof(((kpn_chan *)0)->wring))
#else
#define KPNI_RING_INLINE(bytes) 0
#endif

/* The ring's length in bytes, as the writer reads it: kept on its line
 * in the hosted layout, computed in the compact one (a multiply, where a
 * send wraps).  The reader's is among its words, below. */
#if KPNI_CHAN_LINES
#define KPNI_WRING_BYTES(c) ((c)->ring_bytes)
#else
#define KPNI_WRING_BYTES(c) ((c)->cap * (c)->msg_size)
#endif

/* The reader's words, wherever 'rd_off' puts them (see the struct); the
 * compact layout has one place for its position and count, and no copy
 * of 'sent' or of the ring's length. */
enum { KPNI_RD_POS, KPNI_RD_RECEIVED, KPNI_RD_SENT, KPNI_RD_BYTES };
#if KPNI_CHAN_LINES
#define KPNI_RD_OFF(c) ((c)->rd_off)
#define KPNI_RD_RING_BYTES(c, rd) ((rd)[KPNI_RD_BYTES])
#else
#define KPNI_RD_OFF(c) offsetof(kpn_chan, rpos)
#define KPNI_RD_RING_BYTES(c, rd) ((c)->cap * (c)->msg_size)
#endif
#define KPNI_RD(c) ((size_t *)(uintptr_t)((const unsigned char *)(c) + KPNI_RD_OFF(c)))
#define KPNI_RECEIVED(c) (KPNI_RD(c)[KPNI_RD_RECEIVED])

/* Where the ends may run at once, the word that says an end may wait on
 * 'c' for 'why', on the line of the end that would release it: set by
 * the blocker (sched.c, block_any), cleared only as that end runs again
 * (chan.c, kpni_chan_woken), so that an end parked on 'c' and not yet
 * woken always has it set.  On the writer's line it is the word that
 * holds the reader's position where the ends never run at once; where
 * they may ('cross', which only a channel with the reader's words on its
 * own line ever has: kpni_chan_set_cross), that word is free.  The
 * compact layout has no room for either: its messages always look. */
#if KPNI_CHAN_LINES
#define KPNI_WAITING(c, why) (*((why) == KPN_PROC_BLOCKED_READ ? &(c)->near_rpos : &(c)->wr_waiting))
#endif

/* Input channels are shared with an interrupt handler or another thread
 * whatever KPN_THREADS says, so their counters and flags always go
 * through the compiler's atomics (plain word loads and stores and a
 * barrier on a single core), or, where the compiler has no lock-free
 * atomics of a word (ARMv6-M), through a volatile access and a fence
 * (KPNI_VOLATILE_LOAD_ACQ above): no library call on any target. */
#ifdef KPNI_VOLATILE_LOAD_ACQ
#define KPNI_SHARED_LOAD(p) KPNI_VOLATILE_LOAD_ACQ(p)
#define KPNI_SHARED_STORE(p, v) KPNI_VOLATILE_STORE_REL(p, v)
#define KPNI_SHARED_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#elif defined(__GNUC__) || defined(__clang__)
#define KPNI_SHARED_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define KPNI_SHARED_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define KPNI_SHARED_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#else
/* elsewhere plain accesses: such a compiler needs its own barriers here */
#define KPNI_SHARED_LOAD(p) (*(p))
#define KPNI_SHARED_STORE(p, v) (*(p) = (v))
#define KPNI_SHARED_FENCE() ((void)0)
#endif

/* ------------------------------------------------------------------ */
/* Cross-file functions */

static inline int kpni_proc_blocked(const kpn_proc *p)
{
    unsigned s = KPNI_LOAD(&p->state);
    return s == KPN_PROC_BLOCKED_READ || s == KPN_PROC_BLOCKED_WRITE;
}

/* The wait-for edge of a blocked process: the other end of the channel it
 * waits on, the only process that can release it (channels are 1:1).
 * Read under a runner's lock with several runners, where a runner whose
 * look at 'p' has gone stale may still try to claim it (runners.c,
 * kpni_inbox_wake): its compare-and-swap meets 'wait', so both words
 * are loaded as the shared words they are. */
static inline kpn_proc *kpni_proc_waits_for(const kpn_proc *p)
{
    const kpn_chan *c = KPNI_LOAD(&p->wait);

    return KPNI_LOAD(&p->state) == KPN_PROC_BLOCKED_READ ? c->writer : c->reader;
}

/* Whether a process woken from 'why' joins the waker's runner: the rule
 * kpni_sched_ready_mt follows and the lock set a wake takes for it (the
 * waker's too), in one place so that the two cannot part. */
static inline int kpni_wake_follows(const kpn_net *net, unsigned why)
{
    return why == KPN_PROC_BLOCKED_READ && net->cfg.wake == KPN_WAKE_WAKER &&
           net->cfg.policy == KPN_POLICY_WS;
}

/* A process's two notes of a crossing channel (kpn_proc.unfenced). */
enum { KPNI_WRITES, KPNI_READS };

/* ------------------------------------------------------------------ */
/* Several runners (runners.c).  Without KPN_THREADS 'mt' is never set,
 * KPNI_MT is a constant 0 and the calls below are empty, so the
 * scheduler reads straight through with no #if of its own (Lua's
 * lua_lock does the same). */
#if KPN_THREADS
#define KPNI_MT(r) ((r)->mt)
#define KPNI_OWN(r) ((r)->own)
#define KPNI_OWN_CLEAR(r) kpni_own_set((r), 0)
#define KPNI_SLOW_READS(r) ((r)->slow_reads)
/* A move may change the mark while the other end runs (runners.c,
 * "Moves"): read once per use, as the shared byte it is. */
#define KPNI_CROSS(c) KPNI_LOAD(&(c)->cross)
#define KPNI_FLIPPED(r) ((r)->nflipped)
#define KPNI_FORGET_FLIPS(r) ((r)->nflipped = 0)
#define KPNI_UNFLIPS(r) ((r)->unflips)
/* A process's 'nwaiters', with several runners, counts only the
 * processes waiting on it along channels that do not cross, whose two
 * ends share a runner, so that one thread changes it: that runner's,
 * under its lock or as the runner's 'own' thread, or a move holding the
 * runner's lock as the channel starts or stops crossing (runners.c,
 * "Moves").  Along every channel it would change under the lock of the
 * waiter's runner and of the waker's, which differ where a channel
 * crosses, and take an atomic add at every block and every wake: two
 * locked instructions a hop, with which a hop of the 1 000-process ring
 * on one of two runners took 45 ns, against 34 without.  A process with
 * no channel that crosses ('ncross' 0) has all its waiters counted; one
 * with one may have a waiter on another runner, which
 * kpni_proc_waited_on looks for along those channels.  A count may be
 * too high, never too low: too high, it keeps a mark that could go
 * (resolve.c, "Stale marks").  One thread running the net (a solo
 * runner, mt clear) counts along every channel, having counted afresh
 * as it went solo.  The compact layout, where every channel crosses,
 * keeps the whole count, atomically. */
#if KPN_COMPACT
#define KPNI_NWAITERS_ADD_AS(mt, p, d)                                                  \
    ((mt) ? (void)__atomic_fetch_add(&(p)->nwaiters, (uint32_t)(d), __ATOMIC_RELAXED) \
          : (void)((p)->nwaiters += (uint32_t)(d)))
#define KPNI_NWAITERS_ADD_ON(mt, c, p, d) ((void)(c), KPNI_NWAITERS_ADD_AS(mt, p, d))
#define KPNI_NCROSS(p) 1u
#else
/* a waiter on 'c' changes the count of 'p', the other end of 'c', by d;
 * 'mt' as read from the runner's KPNI_MT */
#define KPNI_NWAITERS_ADD_ON(mt, c, p, d)                                                \
    ((mt) && KPNI_CROSS(c) ? (void)0 : (void)((p)->nwaiters += (uint32_t)(d)))
#define KPNI_NCROSS(p) ((unsigned)KPNI_LOAD(&(p)->ncross))
#endif
/* Whether someone may wait on 'p', by its count: where its count is
 * whole (one thread), or p has no channel that crosses. */
#define KPNI_WAITED_COUNT(mt, p) ((p)->nwaiters != 0 || ((mt) && KPNI_NCROSS(p) != 0))
#define KPNI_UNFENCED(p, end) ((p)->unfenced[end])
#define KPNI_SET_UNFENCED(p, end, c) ((p)->unfenced[end] = (c))
#define KPNI_SOLO(r) ((r)->solo)
/* a runner went dormant since r last asked to go solo */
#define KPNI_SOLO_DUE(r) ((r)->solo_tried != KPNI_LOAD(&(r)->net->dormancies))
#define KPNI_UNLOCKS(p) (((p)->flags & KPNI_PF_UNLOCKS) != 0)
#define KPNI_SET_UNLOCKS(p, v)                                                                 \
    ((p)->flags = (unsigned char)(((p)->flags & ~KPNI_PF_UNLOCKS) | ((v) ? KPNI_PF_UNLOCKS : 0u)))
#define KPNI_WOKE_WRITE(p) (((p)->flags & KPNI_PF_WOKE_WRITE) != 0)
#define KPNI_SET_WOKE_WRITE(p, v)                                                              \
    ((p)->flags =                                                                              \
         (unsigned char)(((p)->flags & ~KPNI_PF_WOKE_WRITE) | ((v) ? KPNI_PF_WOKE_WRITE : 0u)))
int kpni_runners_solo(kpni_runner *r);
void kpni_runners_unsolo(kpni_runner *r, int share);
void kpni_runners_parked_cross(kpni_runner *r, kpn_proc *p);
int kpni_runners_put_off(kpni_runner *r, kpn_proc *self);
void kpni_runners_walk_put_off(kpni_runner *r);
void kpni_runners_walk_due(kpni_runner *r);
/* r has walks put off KPNI_WALKS_AFTER switches ago or more */
#define KPNI_WALKS_DUE(r) ((r)->nwalks != 0 && (r)->switches - (r)->walks_since >= KPNI_WALKS_AFTER)
/* A placement learnt on one part is in force (runners.c, "Trying a
 * placement"); read under a runner's lock, or by a solo runner */
#define KPNI_ONE_PART(net) ((net)->learnt != 0 && (net)->parts == 1)
/* r has yet to take the processes such a placement homes on it */
#define KPNI_PULL_DUE(r) (KPNI_ONE_PART((r)->net) && (r)->pulled != (r)->net->learnt)
/* r has yet to take its part of the placement learnt last */
#define KPNI_PULL_PENDING(r) ((r)->pulled != (r)->net->learnt)
/* The trial is over for the run: a placement kept on more than one
 * part, or on the one part that is all the runners' CPUs allow (a net
 * whose runners share its first run, run later over one CPU), which two
 * parts are never tried against */
#define KPNI_TRIAL_SETTLED(net)                                                                \
    ((net)->trial == KPNI_TRIAL_KEPT && ((net)->parts != 1 || (net)->parts_first < 2))
/* one part holds the net and its runner looks at the clock: a trial's
 * window on it is open, or it is kept (and two may be tried again) */
#define KPNI_ONE_PART_TIMED(net)                                                               \
    (((net)->trial == KPNI_TRIAL_HALF || (net)->trial == KPNI_TRIAL_KEPT) && (net)->parts == 1 && \
     !KPNI_TRIAL_SETTLED(net))
/* A window its runners close by the clock, not only at an idle look:
 * one part's, or two parts' tried again against one part kept, whose
 * runners may both stay busy (left to idle looks, such a window stayed
 * open to the end of bench/soak's run, and two parts were kept
 * untested); and r has switched KPNI_WINDOW_LOOK times since it last
 * looked */
#define KPNI_WINDOW_TIMED(net) (KPNI_ONE_PART_TIMED(net) || (net)->trial == KPNI_TRIAL_AGAIN)
#define KPNI_WINDOW_LOOK 256u
#define KPNI_WINDOW_DUE(r)                                                                     \
    (KPNI_WINDOW_TIMED((r)->net) && (r)->switches - (r)->window_at >= KPNI_WINDOW_LOOK)
void kpni_runners_window(kpni_runner *r);
/* Draining (sched.c): a runner that goes solo drains for this many
 * switches a process, at most KPNI_DRAIN_MAX */
#define KPNI_DRAIN_PER_PROC 256u
#define KPNI_DRAIN_MAX (1u << 24)
#define KPNI_DRAINING(r) ((r)->drain != 0)
void kpni_sched_drain(kpni_runner *r);
void kpni_sched_ready_front(kpni_runner *r, kpn_proc *p, kpn_proc *by);
void kpni_runners_one_part(kpni_runner *r);
void kpni_runners_pull_due(kpni_runner *r);
void kpni_lock_spin(kpni_runner *r);

/* The lock of runner 'r': its queue and the processes on it (runners.c,
 * "Locks").  Inline where it is taken, with the spin out of line: two
 * calls deep, the exchange cost a hop on one of two runners about forty
 * instructions more. */
static inline void kpni_lock(kpni_runner *r)
{
    KPNI_FUZZ_YIELD();
    if (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE) != 0)
        kpni_lock_spin(r);
}

/* r's own thread: r's lock, taken either way (kpni_lock_block).  The
 * lock word first: held by 'inside', the lock is not in it, and a
 * thread that waits for 'inside' to clear takes it with the exchange as
 * soon as it does; the other order would then clear the lock under that
 * thread, and r's next block would take it by 'inside' a second time. */
static inline void kpni_unlock(kpni_runner *r)
{
    __atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&r->inside, 0, __ATOMIC_RELEASE);
    KPNI_FUZZ_YIELD();
}

/* Another thread: r's lock, taken with kpni_lock_other. */
static inline void kpni_unlock_other(kpni_runner *r)
{
    __atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
    KPNI_FUZZ_YIELD();
}

static inline void kpni_unlock_by(kpni_runner *me, kpni_runner *r)
{
    if (r == me)
        kpni_unlock(r);
    else
        kpni_unlock_other(r);
}

/* What kpni_lock_proc took. */
static inline void kpni_unlock_proc(kpni_runner *r, kpni_runner *me, kpni_runner *also)
{
    kpni_unlock_by(me, r);
    if (also != NULL && also != r)
        kpni_unlock_by(me, also);
}

void kpni_lock_other(kpni_runner *me, kpni_runner *r);

/* The lock of 'r' taken by the thread of runner 'me': its own, or
 * another's (runners.c, "Biased locks"). */
static inline void kpni_lock_by(kpni_runner *me, kpni_runner *r)
{
    if (r == me)
        kpni_lock(r);
    else
        kpni_lock_other(me, r);
}

/* The lock of the runner 'p' is on, and of 'also' if that is another
 * one (NULL: none), holding none, by the thread of runner 'me'; returns
 * p's runner.  'p' may move until its runner's lock is held, so look
 * again once it is; two locks are taken in index order. */
static inline kpni_runner *kpni_lock_proc(kpn_proc *p, kpni_runner *me, kpni_runner *also)
{
    for (;;) {
        kpni_runner *r = KPNI_LOAD(&p->runner);

        if (also == NULL || also == r) {
            kpni_lock_by(me, r);
        } else {
            kpni_lock_by(me, also->index < r->index ? also : r);
            kpni_lock_by(me, also->index < r->index ? r : also);
        }
        if (KPNI_LOAD(&p->runner) == r)
            return r;
        kpni_unlock_proc(r, me, also);
    }
}
void kpni_lock_all(kpni_runner *r);
void kpni_lock_up(kpni_runner *r);
int kpni_lock_up_try(kpni_runner *r);
void kpni_lock_down(kpni_runner *r);
void kpni_unlock_all(kpni_runner *r);
void kpni_sched_ready_mt(kpni_runner *waker, kpn_proc *p);
kpn_proc *kpni_runners_steal(kpni_runner *r);
int kpni_runners_idle(kpni_runner *r);
/* runners.c, "Trying a placement": every runner's lock held, 'now' the
 * port's clock (or a test's) */
void kpni_trial_step(kpni_runner *r, uint64_t now);
int kpni_trial_kept(uint64_t msgs, uint64_t ns, uint64_t base_msgs, uint64_t base_ns);
/* runners.c, learn_due: the messages a grain asks of a run so far */
uint64_t kpni_learn_want(uint64_t ns, unsigned grain_ns, uint64_t sent, uint64_t stolen);
int kpni_runners_done(const kpni_runner *r);
void kpni_runners_finish(kpni_runner *r);
void kpni_runners_wake_all(kpn_net *net);
void kpni_inbox_wake(kpn_proc *by, kpn_proc *p, kpn_chan *c, kpn_proc_state why);
void kpni_bias(kpni_runner *r);
void kpni_unbias(kpni_runner *r);
void kpni_inbox_take(kpni_runner *r);
void kpni_runners_mark(kpn_net *net);
void kpni_runners_count(kpn_net *net);
void kpni_runners_look_flipped(kpni_runner *r, kpn_proc *self);
void kpni_runners_wake_missed(kpni_runner *r);
void kpni_place_live(kpn_net *net);
kpn_status kpni_runners_run(kpn_net *net);
/* The runners the placement in force uses (cfg.learn); 0: none in force */
static inline unsigned kpni_runners_placed(const kpn_net *net)
{
    return net->learnt != 0 ? net->parts : 0u;
}
#else
#define KPNI_MT(r) ((void)(r), 0) /* 'r' used: a caller may have no other use for it */
#define KPNI_SLOW_READS(r) 0
#define KPNI_CROSS(c) ((void)(c), 0)
#define KPNI_FLIPPED(r) 0
#define KPNI_FORGET_FLIPS(r) ((void)(r))
#define KPNI_UNFLIPS(r) 0u
#define KPNI_NWAITERS_ADD_AS(mt, p, d) ((void)(mt), (void)((p)->nwaiters += (uint32_t)(d)))
#define KPNI_NWAITERS_ADD_ON(mt, c, p, d) ((void)(c), KPNI_NWAITERS_ADD_AS(mt, p, d))
#define KPNI_NCROSS(p) 0u
#define KPNI_WAITED_COUNT(mt, p) ((void)(mt), (p)->nwaiters != 0)
#define KPNI_UNFENCED(p, end) ((void)(p), (void)(end), (kpn_chan *)NULL)
#define KPNI_SET_UNFENCED(p, end, c) ((void)(p), (void)(end), (void)(c))
#define KPNI_SOLO(r) 0
#define KPNI_SOLO_DUE(r) 0
#define KPNI_UNLOCKS(p) 1
#define KPNI_SET_UNLOCKS(p, v) ((void)(p), (void)(v))
static inline int kpni_runners_solo(kpni_runner *r) { (void)r; return 0; }
static inline void kpni_runners_unsolo(kpni_runner *r, int share) { (void)r; (void)share; }
static inline void kpni_runners_parked_cross(kpni_runner *r, kpn_proc *p) { (void)r; (void)p; }
static inline int kpni_runners_put_off(kpni_runner *r, kpn_proc *self) { (void)r; (void)self; return 0; }
static inline void kpni_runners_walk_put_off(kpni_runner *r) { (void)r; }
static inline void kpni_runners_walk_due(kpni_runner *r) { (void)r; }
#define KPNI_WALKS_DUE(r) 0
#define KPNI_ONE_PART(net) 0
#define KPNI_PULL_DUE(r) 0
#define KPNI_PULL_PENDING(r) 0
#define KPNI_WINDOW_DUE(r) 0
static inline void kpni_runners_window(kpni_runner *r) { (void)r; }
#define KPNI_DRAINING(r) 0
static inline void kpni_sched_ready_front(kpni_runner *r, kpn_proc *p, kpn_proc *by) { (void)r; (void)p; (void)by; }
static inline void kpni_runners_one_part(kpni_runner *r) { (void)r; }
static inline void kpni_runners_pull_due(kpni_runner *r) { (void)r; }
#define KPNI_OWN(r) ((void)(r), 0)
#define KPNI_OWN_CLEAR(r) ((void)(r))
static inline void kpni_own_park(kpni_runner *r) { (void)r; }
static inline void kpni_unbias(kpni_runner *r) { (void)r; }
static inline void kpni_lock_block(kpni_runner *r) { (void)r; }
static inline int kpni_inbox_try(kpn_proc *self, kpn_proc *other, kpn_chan *c, kpn_proc_state why)
{
    (void)self;
    (void)other;
    (void)c;
    (void)why;
    return 0;
}
static inline void kpni_inbox_drain(kpni_runner *r) { (void)r; }
static inline int kpni_unclaim(kpn_proc *self, kpn_chan *on)
{
    (void)on;
    KPNI_STORE(&self->wait, (kpn_chan *)NULL);
    return 1;
}
static inline void kpni_lock(kpni_runner *r) { (void)r; }
static inline void kpni_unlock(kpni_runner *r) { (void)r; }
static inline kpni_runner *kpni_lock_proc(kpn_proc *p, kpni_runner *me, kpni_runner *also)
{
    (void)me;
    (void)also;
    return p->runner;
}
static inline void kpni_unlock_proc(kpni_runner *r, kpni_runner *me, kpni_runner *also)
{
    (void)r;
    (void)me;
    (void)also;
}
static inline void kpni_lock_all(kpni_runner *r) { (void)r; }
static inline void kpni_lock_up(kpni_runner *r) { (void)r; }
static inline int kpni_lock_up_try(kpni_runner *r) { (void)r; return 1; }
static inline void kpni_lock_down(kpni_runner *r) { (void)r; }
static inline void kpni_unlock_all(kpni_runner *r) { (void)r; }
static inline void kpni_sched_ready_mt(kpni_runner *waker, kpn_proc *p) { (void)waker; (void)p; }
static inline kpn_proc *kpni_runners_steal(kpni_runner *r) { (void)r; return NULL; }
static inline int kpni_runners_idle(kpni_runner *r) { (void)r; return 0; }
static inline int kpni_runners_done(const kpni_runner *r) { (void)r; return 0; }
static inline void kpni_runners_finish(kpni_runner *r) { (void)r; }
static inline void kpni_runners_look_flipped(kpni_runner *r, kpn_proc *self) { (void)r; (void)self; }
static inline void kpni_runners_wake_all(kpn_net *net) { (void)net; }
static inline kpn_status kpni_runners_run(kpn_net *net) { (void)net; return KPN_EINVAL; }
static inline unsigned kpni_runners_placed(const kpn_net *net) { (void)net; return 0u; }
#endif

/* Run queues: deques through next_ready/prev_ready.  The owner works at
 * the front, thieves take from the back.  With several runners, only
 * under the runner's lock.  With one, nothing takes from the back, so the
 * hot path (kpni_sched_ready) leaves 'prev_ready' alone and it lives off
 * the struct's first line; nor is the head's 'prev_ready' ever read, so
 * popping leaves it too. */
static inline void kpni_list_push_back(kpn_proc **head, kpn_proc **tail, kpn_proc *p)
{
    p->next_ready = NULL;
    p->prev_ready = *tail;
    if (*tail != NULL)
        (*tail)->next_ready = p;
    else
        *head = p;
    *tail = p;
}

static inline void kpni_queue_push_back(kpni_runner *r, kpn_proc *p)
{
    KPNI_STORE(&p->runner, r);
    kpni_list_push_back(&r->head, &r->tail, p);
}

static inline void kpni_queue_push_front(kpni_runner *r, kpn_proc *p)
{
    KPNI_STORE(&p->runner, r);
    p->prev_ready = NULL;
    p->next_ready = r->head;
    if (r->head != NULL)
        r->head->prev_ready = p;
    else
        r->tail = p;
    r->head = p;
}

static inline void kpni_queue_unlink(kpni_runner *r, kpn_proc *p)
{
    kpn_proc *prev = p->prev_ready;

    if (r->head == p) {
        prev = NULL;
        r->head = p->next_ready;
    } else {
        if (!KPNI_MT(r)) /* one runner: 'prev_ready' is not kept; find it */
            for (prev = r->head; prev->next_ready != p; prev = prev->next_ready) {
            }
        prev->next_ready = p->next_ready;
    }
    if (r->tail == p)
        r->tail = prev;
    else
        p->next_ready->prev_ready = prev;
}

static inline kpn_proc *kpni_queue_pop_front(kpni_runner *r)
{
    kpn_proc *p = r->head;

    if (p != NULL) {
        r->head = p->next_ready;
        if (r->head == NULL)
            r->tail = NULL;
    }
    return p;
}

/* Where a process that is on no queue parked (a blocked one, or one that
 * has never run, whose start-up frame the port put at the stack top):
 * its saved registers lie just below, so a waker prefetches those lines.
 * The queue link is free while it is off every queue; any value is safe,
 * a prefetch never faults. */
#ifdef KPNI_HERE
#define KPNI_MARK_PARKED(p) ((p)->next_ready = (kpn_proc *)(void *)KPNI_HERE())
#else
#define KPNI_MARK_PARKED(p) ((void)(p))
#endif
#define KPNI_PARKED_AT(p) ((uintptr_t)(p)->next_ready) /* an integer: it may be NULL */

/* A blocked process's 'wait' once a runner woke it through another's
 * inbox, until that runner queues it (runners.c, "Wakes from other
 * runners"): no channel, never followed.  KPNI_CLAIMED_MARK hands it
 * the mark of the process that released it, which the runner that
 * queues it sets: the process may be blocking still, and only its own
 * runner's thread writes its mark then. */
#if KPN_THREADS
extern int kpni_claimed_words[3];
#define KPNI_CLAIMED ((kpn_chan *)(void *)&kpni_claimed_words[0])
#define KPNI_CLAIMED_MARK ((kpn_chan *)(void *)&kpni_claimed_words[1])
/* 'wait' while a runner takes a blocked process over (runners.c,
 * pull_home), under every lock: a claim waits for its channel back */
#define KPNI_MOVING ((kpn_chan *)(void *)&kpni_claimed_words[2])
#define KPNI_IS_CLAIMED(c) ((c) == KPNI_CLAIMED || (c) == KPNI_CLAIMED_MARK)
#else
#define KPNI_IS_CLAIMED(c) ((void)(c), 0)
#define KPNI_MOVING ((kpn_chan *)NULL)
#endif

/* The port's context of process 'p', which kpn_spawn puts right below
 * the struct; 'r' is any runner of its net. */
#define KPNI_CTX(r, p) ((kpn_port_ctx *)(void *)((unsigned char *)(p) - (r)->ctx_off))

/* The bytes between a process's stack and its record: the port's
 * context and, in the hosted layout, the mailbox, a word of the core's
 * own right below the record, rounded up to KPNI_ALIGN.  With the amd64
 * port's 8-byte context that is the 16 bytes the context alone took, so
 * the mailbox costs no byte and lies on the record's first line. */
#define KPNI_CTX_ROOM() kpni_align_up(kpn_port_ctx_size() + (KPN_COMPACT ? 0 : sizeof(void *)))

/* A read-blocked process's mailbox: where its receive wants the message
 * (chan.c, recv_whole), and NULL once a writer on its runner has put one
 * there and woken it (chan.c, hand_over), so that it returns at once
 * instead of looking at the channel again and taking the message out of
 * the ring.  A write-blocked process's: where its send's message is
 * (chan.c, wait_room).  Either way the address waits here, not in a
 * register the wait's frame would save. */
#define KPNI_MAILBOX(p) (((void **)(void *)(p))[-1])

/* A process woken to run on the waker's runner: start loading the first
 * channel it writes (the head of 'outs').  A process that waited to read
 * usually sends next, and unless the net is small that channel's line is
 * the first the process waits for once it runs: with the prefetch a hop
 * of the 1 000-process ring takes about a quarter less on one runner and
 * a sixth less on two (docs/benchmarks.md).  It is a guess, since a
 * process with several outputs may send on another, and a wrong guess
 * costs a line.  One runner asks for the line to write it.  Several ask
 * only to read it (KPNI_PREFETCH_OUT_SHARED): the channel's reader may
 * run on another core, and taking the line from it early made the
 * two-runner pipeline no faster, where a shared copy leaves the pipeline
 * as it was.
 *
 * On one runner, or a solo one, the wake also starts loading the first
 * line of the process 'p' woke the last time it ran ('after'), and the
 * line of that one's 'outs'.  'p' most likely wakes the same one again,
 * a hop from now, and that wake reads both (the state, and the channel
 * to prefetch); loaded only then, they were about two fifths of what a
 * hop of the 10 000-process ring, whose lines lie beyond the core's own
 * caches, waited on.  And it starts loading the first line of the one
 * 'after' woke when 'p' last woke it ('beyond'), a hop before that wake
 * asks for it as 'after': asked for only then, that record held the hop
 * up at the prefetch instruction itself, for about a third of the
 * 10 000-process ring's hop; asked for a hop earlier, the hop takes 0.60
 * of the time (docs/benchmarks.md, "Large nets").  The wake notes whom
 * it woke, for the next time, in 'by' (the other end of the channel
 * that releases 'p': the waker, or a process that the resolver or an
 * exit stands in for, a wrong guess that costs a line), and whom that
 * one woke in turn.  Several runners sharing the net neither ask nor
 * note: the process woken next may be on another core.  In a net of
 * KPNI_AHEAD_PROCS processes or more the wake asks further ahead instead
 * (kpni_sched_look_ahead).  The compact build keeps none of 'outs',
 * 'after' and 'beyond'. */
#if KPN_COMPACT
#define KPNI_LOOKS_AHEAD(r) ((void)(r), 0)
#define kpni_sched_look_ahead(r, p) ((void)(r), (void)(p))
#define KPNI_PREFETCH_OUT(p) ((void)(p))
#define KPNI_PREFETCH_OUT_SHARED(p) ((void)(p))
#define KPNI_PREFETCH_AFTER(p) ((void)(p))
#define KPNI_NOTE_AFTER(by, p) ((void)(by), (void)(p))
#else
#define KPNI_LOOKS_AHEAD(r) ((r)->ahead)
#define KPNI_PREFETCH_OUT(p) KPNI_PREFETCH_W((p)->outs)
#define KPNI_PREFETCH_OUT_SHARED(p) KPNI_PREFETCH((p)->outs)
#define KPNI_PREFETCH_AFTER(p)                                                                 \
    (KPNI_PREFETCH_W((p)->after),                                                              \
     KPNI_PREFETCH_W((uintptr_t)(p)->after + offsetof(kpn_proc, outs)),                        \
     KPNI_PREFETCH_W((p)->beyond))
#define KPNI_NOTE_AFTER(by, p) ((by)->after = (p), (by)->beyond = (p)->after)
#endif

/* The resolver's half of a wake: 'by' releases 'p', which waited on it,
 * so the count of processes waiting on 'by' drops, and chains of waiting
 * processes that ended at 'by' through 'p' now end at 'p', which
 * inherits the watch (docs/resolver.md, "A wake passes the mark on").
 * Where the counts are kept they say whether a chain runs through 'p' at
 * all (resolve.c, "Stale marks"). */
static inline void kpni_wake_rule_as(kpni_runner *waker, kpn_proc *p, kpn_proc *by, int mt)
{
    if (waker->resolve) {
        KPNI_NWAITERS_ADD_ON(mt, KPNI_LOAD(&p->wait), by, -1);
        if (by->watched && KPNI_WAITED_COUNT(mt, p))
            p->watched = 1;
    }
}

#if !KPN_COMPACT
/* Looking ahead.  In a net whose hops touch more lines than the core's
 * own caches hold, a wake that asks for the woken process's lines and
 * for those of the one or two it will wake next (KPNI_PREFETCH_AFTER)
 * asks too late: each line is still on its way when the hop needs it,
 * and the 10 000-process ring took 5 times as long a hop as the
 * 1 000-process one.  Asked for about 16 hops ahead, a line has time to
 * come.  Which process runs 16 wakes from now only the last pass through
 * the net can say.  So a runner notes the last KPNI_AHEAD processes it
 * woke, and each wake tells the one woken KPNI_AHEAD wakes before that
 * 'p' came that far after it ('beyond').  Where the net wakes its
 * processes in the order it woke them the last time, as a ring or a
 * pipeline does, 'p''s own 'beyond' is then the process this runner
 * wakes KPNI_AHEAD wakes from now: the wake asks for that one's record
 * and for the two lines below its context, where it saved its registers,
 * all from the pointer alone, so that nothing waits on a load.  The
 * process woken half as many wakes ago names, the same way, the one half
 * as far ahead, whose record was asked for that many wakes ago and has
 * come: the wake asks for what that record points at, its first output
 * channel's two lines and its guard words.  A wrong guess costs lines,
 * never a fault.
 *
 * Where a hop's lines stay in the core's caches this only costs: asking
 * at every wake, the 1 000-process hop took 1.12 times as long; at 2 500
 * and 3 000 processes, part-way up the step from the core's caches to
 * what lies beyond, some invocations took up to 1.8 times as long and
 * others under two thirds of the time.  So only a net of
 * KPNI_AHEAD_PROCS processes or more looks ahead (kpn_spawn turns it
 * on), past the step (docs/benchmarks.md, "Large nets"); a smaller net's
 * wake pays one test.  One thread runs the net where this is called (not
 * 'mt'); the words it writes in other records are written as shared
 * words all the same, since a process it noted may have moved to another
 * runner since. */
static KPNI_INLINE void kpni_sched_look_ahead(kpni_runner *r, kpn_proc *p)
{
    unsigned i = r->nwoke++;
    kpn_proc *back = r->woke[i % KPNI_AHEAD];
    kpn_proc *half = r->woke[(i - KPNI_AHEAD / 2) % KPNI_AHEAD];
    uintptr_t far = (uintptr_t)KPNI_LOAD(&p->beyond);

    r->woke[i % KPNI_AHEAD] = p;
    if (back != NULL)
        KPNI_STORE(&back->beyond, p);
    KPNI_PREFETCH_W(far - r->ctx_off - 2 * KPNI_LINE);
    KPNI_PREFETCH_W(far - r->ctx_off - KPNI_LINE);
    KPNI_PREFETCH_W(far);
    /* the same line where the context is small (amd64); the next where
     * a larger one (ucontext) puts the record's start late in a line */
    KPNI_PREFETCH_W(far + offsetof(kpn_proc, stack_lo));
    KPNI_PREFETCH_W(far + offsetof(kpn_proc, outs));
    if (half != NULL && (half = KPNI_LOAD(&half->beyond)) != NULL) {
        KPNI_PREFETCH_W(half->outs);
        KPNI_PREFETCH_W((uintptr_t)half->outs + KPNI_LINE);
        KPNI_PREFETCH(half->stack_lo - 2 * sizeof(uintptr_t));
    }
}
#endif

/* Make 'p' ready; 'waker' is the runner doing it.  Inline, and forced
 * to be: every send that wakes a reader calls it (left to itself, with
 * the look-ahead in it, the compiler made it a call, and the ring's hop
 * took 11 instructions more).  The prefetch starts loading the line
 * below 'ctx', the top of 'p''s stack, while the waker finishes its hop.
 * Before 'p' first runs, that line is the start-up frame the switch pops.
 * After, the registers 'p' saved lie deeper, at the stack pointer it
 * parked with, which only the port knows; the top line then holds the
 * frame of 'p''s own function, which it touches as soon as the call it
 * blocked in returns.
 *
 * When 'p' was blocked, the process it waited on is the one waking it
 * (or the resolver, which does the same bookkeeping): kpni_wake_rule_as.
 *
 * One runner: the back of the queue, so processes run in the order they
 * became ready.  Several: kpni_sched_ready_mt, under the lock of p's runner.
 * 'p' is blocked (every caller has checked), and waits for 'by', the
 * other end of the channel releasing it; 'mt' is KPNI_MT(waker), for a
 * caller that has read it already (a send's hand-over, in chan.c).
 * kpni_sched_ready_by reads it; kpni_sched_ready also finds 'by'. */
static KPNI_INLINE void kpni_sched_ready_as(kpni_runner *waker, kpn_proc *p, kpn_proc *by, int mt)
{
    KPNI_PREFETCH(KPNI_PARKED_AT(p) - KPNI_LINE);
    KPNI_PREFETCH(KPNI_PARKED_AT(p));
    kpni_wake_rule_as(waker, p, by, mt);
    if (mt) { /* it reads what p waited for first */
        kpni_sched_ready_mt(waker, p);
        return;
    }
    KPNI_PREFETCH_OUT(p);
    if (KPNI_UNLIKELY(KPNI_LOOKS_AHEAD(waker))) {
        kpni_sched_look_ahead(waker, p);
    } else {
        KPNI_PREFETCH_AFTER(p);
        KPNI_NOTE_AFTER(by, p);
    }
    KPNI_STORE(&p->state, KPN_PROC_READY);
    KPNI_STORE(&p->wait, (kpn_chan *)NULL);
    p->next_ready = NULL;
    if (waker->tail != NULL)
        waker->tail->next_ready = p;
    else
        waker->head = p;
    waker->tail = p;
}

static inline void kpni_sched_ready_by(kpni_runner *waker, kpn_proc *p, kpn_proc *by)
{
    kpni_sched_ready_as(waker, p, by, KPNI_MT(waker));
}

static inline void kpni_sched_ready(kpni_runner *waker, kpn_proc *p)
{
    kpni_sched_ready_by(waker, p, kpni_proc_waits_for(p));
}

/* A guard band word: every byte 0x5a (proc.c's GUARD_FILL). */
#define KPNI_GUARD_WORD ((uintptr_t)0x5a5a5a5a5a5a5a5aull)

/* Start loading p's whole guard band, which kpni_proc_guard_intact reads
 * a word at a time (a process's exit, and the check at the end of a
 * run).  The compact build, for memories with no caches to fill, asks
 * for nothing. */
static inline void kpni_proc_band_ahead(const kpn_proc *p)
{
    size_t i;

    for (i = 0; !KPN_COMPACT && i < KPN_STACK_GUARD; i += KPNI_LINE)
        KPNI_PREFETCH(p->stack_lo - KPN_STACK_GUARD + i);
}

/* The cheap check made at every switch: the two guard words nearest the
 * stack, the first an overflow growing down writes. */
static inline int kpni_proc_guard_ok(const kpn_proc *p)
{
    const uintptr_t pattern = KPNI_GUARD_WORD;
    const uintptr_t *w = (const uintptr_t *)(const void *)p->stack_lo;

    /* after an overflow memcheck calls the band stack it has left */
    KPNI_VG_ADDRESSABLE(w - 2, 2 * sizeof *w);
    return w[-1] == pattern && w[-2] == pattern;
}

/* The check every send and receive makes: a channel of a live net, not
 * a stale handle.  The tag, the seal, the net's serial and the end of
 * its newest channel record: the channel's first line and the net's
 * first line, which every hop reads anyway (kpni_chan_valid checks the whole
 * record against the arena, for the calls off the hot path).  The seal
 * is checked before 'net' is followed.  The serial alone would let
 * through an old record beyond the carve that holds the live serial
 * ("Stale handles", above; test_trust:
 * test_a_stale_channel_whose_serial_a_net_took_again_is_refused). */
static KPNI_TAG_READ inline int kpni_chan_ok(const kpn_chan *c)
{
#if KPN_COMPACT
    return c != NULL && c->magic == KPNI_CHAN_MAGIC;
#else
    uint64_t head, live;
    const kpn_net *net;

    if (c == NULL || c->seal != kpni_seal(c, c->net))
        return 0;
    net = c->net;
    if ((const unsigned char *)c >= net->chans_end)
        return 0;
    /* tag and serial at once: a released net's chan_head is zero */
    kpni_memcpy(&head, c, sizeof head);
    kpni_memcpy(&live, net->chan_head, sizeof live);
    return head == live;
#endif
}

/* sched.c */
void kpni_sched_block_read(kpn_proc *self, kpn_chan *on);
void kpni_sched_block_write(kpn_proc *self, kpn_chan *on);
/* Block 'self' on 'on' for 'why' (sched.c); 'why' is a constant at every
 * call, so this folds to one of the two. */
static inline void kpni_sched_block(kpn_proc *self, kpn_proc_state why, kpn_chan *on)
{
    if (why == KPN_PROC_BLOCKED_READ)
        kpni_sched_block_read(self, on);
    else
        kpni_sched_block_write(self, on);
}
void kpni_sched_exit(kpn_proc *self);
void kpni_sched_halt(kpn_net *net, kpn_status why);
void kpni_sched_enqueue(kpni_runner *r, kpn_proc *p);
void kpni_sched_loop(kpni_runner *r);

/* proc.c */
kpn_port_ctx *kpni_proc_ctx(const kpn_proc *p);
int kpni_proc_guard_intact(const kpn_proc *p);
int kpni_proc_live(const kpn_net *net, const kpn_proc *p);
int kpni_proc_waited_on(const kpn_proc *p);
int kpni_proc_sane(const kpn_net *net, const kpn_proc *p);
void kpni_proc_unguard_all(kpn_net *net);
void kpni_proc_finish(kpn_proc *p);

/* chan.c */
int kpni_chan_valid(const kpn_chan *c);
int kpni_chan_sane(const kpn_net *net, const kpn_chan *c);
kpn_status kpni_chan_grow(kpn_chan *c);
int kpni_chan_must_block(const kpn_chan *c, kpn_proc_state why);
void kpni_chan_set_cross(kpn_chan *c, int cross);
void kpni_chan_lay(kpn_chan *c, int own);
void kpni_chan_flush(kpn_proc *self, int end);
void kpni_chan_look(kpn_proc *self, kpn_chan *c, kpn_proc_state why);
void kpni_chan_waiting(kpn_chan *c, kpn_proc_state why);
void kpni_chan_woken(kpn_chan *c, kpn_proc_state why);
void kpni_chan_ask_looks(kpn_chan *c);
kpn_status kpni_chan_make(kpn_net *net, kpn_chan **out, kpn_proc *writer,
                          kpn_proc *reader, size_t msg_size, size_t capacity);

/* resolve.c */
int kpni_resolve_block(kpn_proc *self);
enum { KPNI_WALK_ALL, KPNI_WALK_ENDED, KPNI_WALK_LEFT }; /* kpni_resolve_block_local */
int kpni_resolve_block_local(kpn_proc *self);
void kpni_resolve_parked(kpni_runner *r, kpn_proc *p);
kpn_status kpni_resolve_quiet(kpn_net *net);
kpn_status kpni_resolve_pending(kpn_net *net);
void kpni_resolve_record(kpn_net *net);

/* net.c.  The first two are in line: spawning, connecting, each exit
 * and the check at the end of a run make them for every process and
 * channel, and a call cost more than the compares it makes. */
static KPNI_TAG_READ inline int kpni_net_valid(const kpn_net *net)
{
    return net != NULL && KPNI_ALIGNED(net) && net->magic == KPNI_NET_MAGIC &&
           net->tail[0] == KPNI_NET_MAGIC &&
           net->tail[1] == net->serial;
}

/* Whether the net lays its processes and channels out at one stride
 * (proc.c, block_size, says why): a net of one runner. */
static inline int kpni_one_stride(const kpn_net *net)
{
    return net->nrunners == 1;
}

/* Whether [p, p + size) lies in the part of the arena carved so far
 * (where every live process and channel is): a pointer read from
 * damaged memory is checked with this before it is followed. */
static KPNI_TAG_READ inline int kpni_in_arena(const kpn_net *net, const void *p, size_t size)
{
    uintptr_t a = (uintptr_t)p;
    /* a runner may be carving meanwhile (kpni_arena_carve): kpn_offer
     * checks its channel from outside the net */
    uintptr_t next = (uintptr_t)KPNI_LOAD(&net->arena.next);

    return a % sizeof(void *) == 0 && a >= (uintptr_t)net->arena.base && a < next &&
           size <= next - a;
}

int kpni_net_sane(const kpn_net *net);

/* stats.c: the totals kpn_net_stats and kpn_report share, without a
 * kpn_stats (384 bytes) on the caller's stack. */
typedef struct kpni_counts {
    size_t exited, blocked_read, blocked_write;
    uint64_t messages, discarded, detections;
} kpni_counts;
void kpni_stats_count(const kpn_net *net, kpni_counts *out);

/* sched.c: input channels, the scheduler's side */
int kpni_input_deliver(kpni_runner *r);
int kpni_input_awaited(const kpn_net *net);

/* Several runners, holding the lock of r, the runner of both 'p' and
 * 'by': 'by' releases 'p', which waits on the channel between them.
 * Under a placement, learnt or given (KPN_POLICY_STATIC, with 'p' homed
 * on r), nearly every wake is such a one (a placement cuts few
 * channels), and what kpni_sched_ready_mt decides for it comes to
 * little: 'p' joins the back of r's queue, where it already is (its own
 * runner and the waker's), and r, which runs 'by', needs no wake-up.
 * Here without those choices (docs/benchmarks.md, "a wake on the
 * waker's runner").  Returns 0, having changed nothing, where the
 * general path must choose. */
#if KPN_THREADS
static inline int kpni_sched_ready_here(kpni_runner *r, kpn_proc *p, kpn_proc *by)
{
    if (r->net->cfg.policy == KPN_POLICY_STATIC ? p->home != r->index : r->net->learnt == 0)
        return 0;
    kpni_wake_rule_as(r, p, by, KPNI_MT(r));
    kpni_chan_woken(KPNI_LOAD(&p->wait), (kpn_proc_state)KPNI_LOAD(&p->state));
    KPNI_PREFETCH_OUT_SHARED(p);
    KPNI_STORE(&p->state, KPN_PROC_READY);
    KPNI_STORE(&p->wait, (kpn_chan *)NULL);
    kpni_queue_push_back(r, p);
    return 1;
}

/* Whether a runner's thread may make the wakes of processes on it with
 * no lock ('own'): where no process moves but by a wake from another
 * runner, under KPN_POLICY_STATIC or a placement kept for the run on
 * several parts (docs/runners.md, "Wakes with no lock"). */
#define KPNI_OWN_OK(net)                                                                       \
    ((net)->cfg.policy == KPN_POLICY_STATIC ||                                                 \
     (KPNI_TRIAL_SETTLED(net) && (net)->parts >= 2 && (net)->pulled_parts >= (net)->parts))

/* Several runners, r 'own', holding no lock: 'by', running on r,
 * releases 'p', blocked on r on the channel between them.  Nobody but
 * 'by' can release 'p' now (docs/runners.md, "Wakes with no lock"), and
 * only r's thread touches r's own list. */
static inline void kpni_sched_ready_own(kpni_runner *r, kpn_proc *p, kpn_proc *by)
{
    if (r->resolve) {
        KPNI_NWAITERS_ADD_ON(1, KPNI_LOAD(&p->wait), by, -1);
        if (KPNI_LOAD(&by->watched) && KPNI_WAITED_COUNT(1, p))
            KPNI_STORE(&p->watched, (unsigned char)1);
    }
    kpni_chan_woken(KPNI_LOAD(&p->wait), (kpn_proc_state)KPNI_LOAD(&p->state));
    KPNI_PREFETCH_OUT_SHARED(p);
    KPNI_STORE(&p->state, KPN_PROC_READY);
    KPNI_STORE(&p->wait, (kpn_chan *)NULL);
    kpni_list_push_back(&r->own_head, &r->own_tail, p);
}

/* Holding r's lock, on r's thread: r's own list to the back of its queue. */
static inline void kpni_queue_take_own(kpni_runner *r)
{
    r->own_head->prev_ready = r->tail;
    if (r->tail != NULL)
        r->tail->next_ready = r->own_head;
    else
        r->head = r->own_head;
    r->tail = r->own_tail;
    r->own_head = r->own_tail = NULL;
}

/* r's thread, r's lock held: whether r is 'own'; other runners read it
 * to choose how they wake r's processes. */
static inline void kpni_own_set(kpni_runner *r, int own)
{
    __atomic_store_n(&r->own, own, __ATOMIC_RELEASE);
}

/* A wake of 'other', blocked on 'c' on another runner, by 'self': with
 * no lock, through the other runner's inbox, where both runners are
 * 'own' (runners.c, "Wakes from other runners"); 'self''s own, so that
 * a walk that ends at self allows for the mark the wake hands on
 * (resolve.c, mark_end).  0 if the caller is to wake it under the lock. */
static inline int kpni_inbox_try(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                 kpn_proc_state why)
{
    kpni_runner *here = self->runner, *t;

    if (!here->own)
        return 0;
    t = KPNI_LOAD(&other->runner);
    if (t == here || !__atomic_load_n(&t->own, __ATOMIC_ACQUIRE))
        return 0;
    kpni_inbox_wake(self, other, c, why);
    return 1;
}

/* r's thread, at a block: r's lock.  Biased, it says it is 'inside'
 * with a plain store and goes on if nobody takes the lock or asks for
 * it; another thread that asks has had every thread fenced, or waited
 * for this one to clear 'bias', before it looks at 'inside' (runners.c,
 * "Biased locks").  Else, or if someone asks, the exchange. */
static inline void kpni_lock_block(kpni_runner *r)
{
    if (r->bias) {
        __atomic_store_n(&r->inside, 1, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the store, then the loads */
        KPNI_FUZZ_YIELD();
        if (__atomic_load_n(&r->revoke, __ATOMIC_ACQUIRE) == 0 &&
            __atomic_load_n(&r->lock, __ATOMIC_ACQUIRE) == 0)
            return;
        __atomic_store_n(&r->inside, 0, __ATOMIC_RELEASE);
        kpni_unbias(r);
    }
    kpni_lock(r);
}

/* r's thread, r's lock held: what other runners woke, to r's queue. */
static inline void kpni_inbox_drain(kpni_runner *r)
{
    if (__atomic_load_n(&r->inbox, __ATOMIC_ACQUIRE) != NULL)
        kpni_inbox_take(r);
}

/* 'self', blocked on 'on' and holding its runner's lock, goes on after
 * all: 1 if it takes back its 'wait', 0 if a waker on another runner
 * claimed it first (runners.c, "Wakes from other runners"). */
static inline int kpni_unclaim(kpn_proc *self, kpn_chan *on)
{
    kpn_chan *expect = on;

    return __atomic_compare_exchange_n(&self->wait, &expect, (kpn_chan *)NULL, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* A park with several runners, r's lock held: the processes other
 * runners woke and r's own list to its queue, and whether r is 'own'
 * until it next parks or idles; if so and nobody waits for r's lock, r
 * takes it with plain stores from now on.  Taking the bias is fenced
 * against a thread that asks for the lock ('revoke', then 'bias'), so
 * that one of the two sees the other. */
static inline void kpni_own_park(kpni_runner *r)
{
    kpni_own_set(r, KPNI_OWN_OK(r->net));
    kpni_inbox_drain(r);
    if (r->own_head != NULL)
        kpni_queue_take_own(r);
    if (r->own && !r->bias)
        kpni_bias(r);
}
#else
static inline void kpni_sched_ready_own(kpni_runner *r, kpn_proc *p, kpn_proc *by)
{
    (void)r;
    (void)p;
    (void)by;
}

static inline int kpni_sched_ready_here(kpni_runner *r, kpn_proc *p, kpn_proc *by)
{
    (void)r;
    (void)p;
    (void)by;
    return 0;
}
#endif

#endif /* KPN_INT_H */
