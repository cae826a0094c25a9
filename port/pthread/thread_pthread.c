/* SPDX-License-Identifier: MIT */
/* The port's thread services on POSIX threads, for both hosted ports: runner threads on arena stacks, a sleeping semaphore, yield, the clock, the CPU count and the fence on every thread. */

/* pthread_attr_setstack and pthread_sigmask are POSIX.1-2008.  On Linux,
 * dl_iterate_phdr (used to measure static TLS, below) and
 * sched_getaffinity (kpn_port_cpus) are declared only under _GNU_SOURCE. */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <link.h>
#include <sys/syscall.h>
#endif

#include "port.h"

/*
 * A thread on a stack the caller owns
 * -----------------------------------
 * The stack is arena memory.  glibc does not keep its bookkeeping apart
 * from a stack given with pthread_attr_setstack: it carves the thread
 * descriptor ('struct pthread', 2304 bytes on glibc 2.36 x86-64) and the
 * static TLS block of every module loaded at start-up, plus a surplus
 * for modules dlopen'ed later, from the top, and 'fn' runs below them:
 *
 *     stack                                               stack + size
 *     |<-------- what 'fn' can use -------->|<- TLS ->|<- descriptor ->|
 *                                     grows down <-- first frame
 *
 * pthread_create refuses (EINVAL) only when less than 2 KiB would be
 * left, so a minimum of PTHREAD_STACK_MIN alone leaves 'fn' far less
 * than that.  Measured here (glibc 2.36, x86-64): 'fn' starts 4.4 KiB
 * below the top in a plain build, 6.3 KiB under clang's ThreadSanitizer
 * and 770 KiB under gcc's, whose runtime keeps its per-thread state in
 * static TLS.  So 'kpn_port_thread_stack_min' adds the static TLS of the
 * loaded modules, measured at run time, to glibc's own floor and keeps a
 * reserve for the descriptor and the surplus: 'fn' then gets at least
 * the floor.  The memory must stay untouched until the join returns:
 * the descriptor is still read there, and glibc keeps threads on
 * user stacks in a list until they are joined.
 *
 * Other systems: musl puts TLS on the given stack only when it is small
 * (else it maps it apart); macOS and the BSDs keep the descriptor and
 * TLS elsewhere, but macOS wants the stack's address and size to be
 * whole pages, so the region is trimmed to pages there.
 */

/* The descriptor, glibc's TLS surplus (about 1.7 KiB by default) and
 * the alignment of the TLS block, with room to spare. */
#define TOP_RESERVE (8u * 1024u)

/* ThreadSanitizer and MemorySanitizer warn, and may fail, when a
 * caller-supplied stack is smaller than 128 KiB plus their TLS (their
 * pthread_create interceptor checks it).  Only this file's own build
 * flags are visible here, which is how the test suite builds. */
#if defined(__SANITIZE_THREAD__)
#define SANITIZER_FLOOR (128u * 1024u)
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SANITIZER_FLOOR (128u * 1024u)
#endif
#endif

#define ROUND16(n) (((n) + 15u) / 16u * 16u)

struct kpn_port_thread {
    pthread_t id;
    void (*fn)(void *);
    void *arg;
    int apart; /* the CPU the thread was kept off as it started, or -1 */
};

/*
 * The semaphore is a mutex, a condition variable and a count rather than
 * an unnamed sem_t: sem_init is not implemented on macOS (it fails with
 * ENOSYS), and pthread_cond_wait never fails with EINTR, whereas sem_wait
 * returns EINTR after a signal handler runs (on Linux even with
 * SA_RESTART) and needs a retry loop.  A futex would be Linux only.  The
 * cost is a lock in 'post', which the core calls only to wake a sleeping
 * runner; it also makes 'post' unsafe in a signal handler.  'waiters'
 * lets a post skip the wake-up system call when nobody sleeps.
 */
struct kpn_port_sem {
    pthread_mutex_t lock;
    pthread_cond_t posted;
    unsigned long count;   /* posts not yet taken by a wait */
    unsigned long waiters; /* threads asleep in kpn_port_sem_wait */
};

/* The core carves both 16-aligned: neither may need more. */
struct thread_alignment { char c; struct kpn_port_thread t; };
struct sem_alignment { char c; struct kpn_port_sem s; };
typedef char thread_alignment_fits_16[offsetof(struct thread_alignment, t) <= 16 ? 1 : -1];
typedef char sem_alignment_fits_16[offsetof(struct sem_alignment, s) <= 16 ? 1 : -1];

size_t kpn_port_thread_size(void)
{
    return ROUND16(sizeof(struct kpn_port_thread));
}

size_t kpn_port_sem_size(void)
{
    return ROUND16(sizeof(struct kpn_port_sem));
}

/* The boundary a caller's stack is trimmed to (see the picture above). */
static size_t stack_alignment(void)
{
#if defined(__APPLE__)
    long page = sysconf(_SC_PAGESIZE);

    if (page > 16)
        return (size_t)page;
#endif
    return 16;
}

#if defined(__linux__)
/* dl_iterate_phdr callback: adds each module's TLS segment, with the
 * padding its alignment may cost, to the size_t at 'data'.  Modules
 * dlopen'ed later are counted too: that errs on the safe side, but a
 * dlopen of a module with TLS raises the minimum from then on. */
static int add_tls(struct dl_phdr_info *info, size_t info_size, void *data)
{
    size_t *total = data;
    size_t i;

    (void)info_size;
    for (i = 0; i < (size_t)info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type == PT_TLS)
            *total += (size_t)info->dlpi_phdr[i].p_memsz +
                      (size_t)info->dlpi_phdr[i].p_align;
    }
    return 0;
}
#endif

/* Bytes of a caller's stack the C library keeps for its own use. */
static size_t library_reserve(void)
{
    size_t tls = 0;

#if defined(__linux__)
    (void)dl_iterate_phdr(add_tls, &tls);
#endif
    return tls + TOP_RESERVE;
}

/* Computed on every call rather than cached: a cache would be global
 * state shared by threads, and the core asks only when it checks a
 * configuration or starts a runner. */
size_t kpn_port_thread_stack_min(void)
{
    size_t least = 16u * 1024u; /* for a C library that states none */
    size_t min;

#if defined(PTHREAD_STACK_MIN)
    least = (size_t)PTHREAD_STACK_MIN; /* glibc: 16 KiB on x86-64 */
#endif
#if defined(_SC_THREAD_STACK_MIN)
    {
        /* glibc 2.34 and later raise it on CPUs whose signal frame is
         * large (AVX-512). */
        long dynamic = sysconf(_SC_THREAD_STACK_MIN);

        if (dynamic > 0 && (size_t)dynamic > least)
            least = (size_t)dynamic;
    }
#endif
#if defined(SANITIZER_FLOOR)
    if (least < SANITIZER_FLOOR)
        least = SANITIZER_FLOOR;
#endif
    /* Trimming to the alignment may cost one boundary at each end. */
    min = least + library_reserve() + 2 * (stack_alignment() - 16);
    return ROUND16(min);
}

/*
 * Starting on another CPU
 * -----------------------
 * Linux puts a new thread on its creator's CPU, and where the other CPUs
 * are idle it runs there only once the creator is preempted, at the next
 * scheduler tick (4 ms at 250 Hz), then shares that CPU with it until a
 * balancing pass moves one of them, 3 to 20 ms more on a 2-CPU guest.
 * The caller of kpn_run runs runner 0 at once, so for the first
 * milliseconds of a run the other runners either do not run or take
 * turns with it (a net that goes solo, such as a ring with one token,
 * waits that long for the other runner to run and sleep:
 * docs/runners.md).  So a runner thread starts with the caller's CPU
 * taken out of its affinity, so that the kernel starts it on another,
 * idle, CPU (in about 0.1 ms), and its first act puts the CPU back:
 * from then on it may run anywhere the caller may, as it would have
 * with no hint.  Where the caller may run on one CPU only, or the
 * C library has no affinity in its thread attributes, it starts as any
 * thread does.
 */
#if defined(__linux__) && defined(__GLIBC__) && defined(CPU_COUNT)
#define START_APART 1
#else
#define START_APART 0
#endif

static void *thread_main(void *self)
{
    struct kpn_port_thread *t = self;

#if START_APART
    if (t->apart >= 0) {
        cpu_set_t set;

        /* what the caller's own affinity was; a failure leaves the
         * thread where it may start, which is only slower */
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            CPU_SET((size_t)t->apart, &set);
            (void)sched_setaffinity(0, sizeof set, &set);
        }
    }
#endif
    t->fn(t->arg);
    return NULL;
}

/* Keep the thread 'attr' starts off the caller's CPU ("Starting on
 * another CPU", above); 1 if 'attr' now says so. */
static int start_apart(struct kpn_port_thread *t, pthread_attr_t *attr)
{
    t->apart = -1;
#if START_APART
    {
        cpu_set_t set;
        int cpu = sched_getcpu();

        if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0 ||
            !CPU_ISSET((size_t)cpu, &set) || CPU_COUNT(&set) < 2)
            return 0;
        CPU_CLR((size_t)cpu, &set);
        if (pthread_attr_setaffinity_np(attr, sizeof set, &set) != 0)
            return 0;
        t->apart = cpu;
        return 1;
    }
#else
    (void)attr;
    return 0;
#endif
}

/* Take back what start_apart said on 'attr': the kernel refused it (the
 * CPUs changed meanwhile, an emulator), so start the thread as any
 * thread.  1 if 'attr' now says nothing of CPUs. */
static int start_anywhere(struct kpn_port_thread *t, pthread_attr_t *attr)
{
    t->apart = -1;
#if START_APART
    {
        cpu_set_t none;

        /* glibc: a size of 0 clears the attribute's affinity (the set
         * is not read, but declared not null) */
        CPU_ZERO(&none);
        return pthread_attr_setaffinity_np(attr, 0, &none) == 0;
    }
#else
    (void)attr;
    return 0;
#endif
}

/*
 * The new thread starts with every asynchronous signal blocked (it
 * inherits the mask in force at pthread_create).  A runner may be on a
 * process's 1 KiB stack when a signal arrives, and a handler there would
 * overflow it; blocked here, a signal sent to the process goes to a
 * thread that does not block it (the one that called kpn_run), as it
 * does with one runner.  Faults stay unblocked: blocking one that the
 * thread itself raises would kill the program without running the
 * handler (a sanitizer's report, say).
 */
int kpn_port_thread_start(kpn_port_thread *t, void *stack, size_t size,
                          void (*fn)(void *), void *arg)
{
    size_t align = stack_alignment();
    uintptr_t low, high;
    pthread_attr_t attr;
    sigset_t blocked, saved;
    int status;

    if (t == NULL || stack == NULL || fn == NULL ||
        size < kpn_port_thread_stack_min() ||
        size > UINTPTR_MAX - (uintptr_t)stack)
        return -1;
    /* Use only the aligned part of [stack, stack + size): the minimum
     * allows for what trimming costs. */
    low = ((uintptr_t)stack + (align - 1)) / align * align;
    high = ((uintptr_t)stack + size) / align * align;

    t->fn = fn;
    t->arg = arg;

    status = pthread_attr_init(&attr);
    if (status != 0)
        return status;
    status = pthread_attr_setstack(&attr, (void *)low, (size_t)(high - low));
    if (status == 0) {
        (void)sigfillset(&blocked);
        (void)sigdelset(&blocked, SIGSEGV);
        (void)sigdelset(&blocked, SIGBUS);
        (void)sigdelset(&blocked, SIGFPE);
        (void)sigdelset(&blocked, SIGILL);
#if defined(SIGTRAP)
        (void)sigdelset(&blocked, SIGTRAP);
#endif
#if defined(SIGSYS)
        (void)sigdelset(&blocked, SIGSYS);
#endif
        status = pthread_sigmask(SIG_SETMASK, &blocked, &saved);
        if (status == 0) {
            int apart = start_apart(t, &attr);

            status = pthread_create(&t->id, &attr, thread_main, t);
            if (status != 0 && apart && start_anywhere(t, &attr))
                status = pthread_create(&t->id, &attr, thread_main, t);
            (void)pthread_sigmask(SIG_SETMASK, &saved, NULL);
        }
    }
    (void)pthread_attr_destroy(&attr);
    return status;
}

void kpn_port_thread_join(kpn_port_thread *t)
{
    /* Fails only for a thread that was never started or already joined:
     * a core bug, and there is nothing to report it to. */
    (void)pthread_join(t->id, NULL);
}

int kpn_port_sem_init(kpn_port_sem *s)
{
    int status = pthread_mutex_init(&s->lock, NULL);

    if (status != 0)
        return status;
    status = pthread_cond_init(&s->posted, NULL);
    if (status != 0) {
        (void)pthread_mutex_destroy(&s->lock);
        return status;
    }
    s->count = 0;
    s->waiters = 0;
    /* A process can be the first to call these: a post wakes a runner
     * from whichever process made work ready, and a runner's lock yields
     * while it spins.  In a program linked for lazy binding, the first
     * call of a shared-library function goes through the dynamic linker,
     * which saves the whole vector register file on the caller's stack
     * (about 2.7 KB with AVX-512): on a process's 4 KiB stack that is an
     * overflow, and only in the runs where a runner happened to be
     * asleep.  Calling each once here, on the host's stack, binds them
     * first (a signal with no waiter does nothing). */
    (void)pthread_mutex_lock(&s->lock);
    (void)pthread_cond_signal(&s->posted);
    (void)pthread_mutex_unlock(&s->lock);
    (void)sched_yield();
    return 0;
}

void kpn_port_sem_wait(kpn_port_sem *s)
{
    (void)pthread_mutex_lock(&s->lock);
    /* A loop, because a condition variable may wake spuriously. */
    while (s->count == 0) {
        s->waiters++;
        (void)pthread_cond_wait(&s->posted, &s->lock);
        s->waiters--;
    }
    s->count--;
    (void)pthread_mutex_unlock(&s->lock);
}

void kpn_port_sem_post(kpn_port_sem *s)
{
    (void)pthread_mutex_lock(&s->lock);
    s->count++;
    /* Signalled under the lock: the woken thread cannot return from its
     * wait, and perhaps destroy the semaphore, while this call still
     * uses the condition variable. */
    if (s->waiters > 0)
        (void)pthread_cond_signal(&s->posted);
    (void)pthread_mutex_unlock(&s->lock);
}

void kpn_port_sem_destroy(kpn_port_sem *s)
{
    (void)pthread_cond_destroy(&s->posted);
    (void)pthread_mutex_destroy(&s->lock);
}

void kpn_port_yield(void)
{
    (void)sched_yield();
}

uint64_t kpn_port_clock_ns(void)
{
    struct timespec t;

    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
        return 0; /* no clock: no time passes, so steals alone decide, as with learn_grain_ns 0 */
    return (uint64_t)t.tv_sec * UINT64_C(1000000000) + (uint64_t)t.tv_nsec;
}

/* sched_getaffinity sees what taskset and cpusets allow this thread,
 * which the count of online CPUs does not; neither sees a container's
 * CPU quota (kpn_config.cpus says so). */
unsigned kpn_port_cpus(void)
{
    long n = 0;
#if defined(__linux__) && defined(CPU_COUNT)
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
#endif
#ifdef _SC_NPROCESSORS_ONLN
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN); /* beyond 1024 CPUs, or no affinity call */
#endif
    return n <= 0 ? 0u : n >= (long)UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* membarrier(2), private expedited (Linux 4.14), which the process
 * registers for once: an interrupt to each CPU that runs one of its
 * threads, a few microseconds, where a fence in every lock of those
 * threads would cost each of them far more.  The numbers are the
 * kernel's ABI (linux/membarrier.h), which not every libc's headers
 * carry. */
#define MEMBARRIER_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_REGISTER_PRIVATE_EXPEDITED (1 << 4)

int kpn_port_fence_threads(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
    static int registered; /* 0: not yet, 1: yes, -1: refused */
    int reg = __atomic_load_n(&registered, __ATOMIC_ACQUIRE);

    if (reg == 0) {
        reg = syscall(SYS_membarrier, MEMBARRIER_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1 : -1;
        __atomic_store_n(&registered, reg, __ATOMIC_RELEASE);
    }
    if (reg < 0)
        return -1;
    return syscall(SYS_membarrier, MEMBARRIER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
#else
    return -1;
#endif
}

/*
 * Idling while a net waits for input: a flag under a mutex and a
 * condition variable.  'wake' comes from another thread (kpn_offer); it
 * takes the mutex, so it is not for signal handlers.  The flag makes a
 * wake that comes before the wait count: the wait then returns at once.
 */
struct kpn_port_idle {
    pthread_mutex_t lock;
    pthread_cond_t woken_cond;
    int woken;
};

struct idle_alignment { char c; struct kpn_port_idle i; };
typedef char idle_alignment_fits_16[offsetof(struct idle_alignment, i) <= 16 ? 1 : -1];

size_t kpn_port_idle_size(void)
{
    return ROUND16(sizeof(struct kpn_port_idle));
}

int kpn_port_idle_init(kpn_port_idle *idle)
{
    int status = pthread_mutex_init(&idle->lock, NULL);

    if (status != 0)
        return status;
    status = pthread_cond_init(&idle->woken_cond, NULL);
    if (status != 0) {
        (void)pthread_mutex_destroy(&idle->lock);
        return status;
    }
    idle->woken = 0;
    return 0;
}

void kpn_port_idle_wait(kpn_port_idle *idle)
{
    (void)pthread_mutex_lock(&idle->lock);
    while (!idle->woken)
        (void)pthread_cond_wait(&idle->woken_cond, &idle->lock);
    idle->woken = 0;
    (void)pthread_mutex_unlock(&idle->lock);
}

void kpn_port_idle_wake(kpn_port_idle *idle)
{
    (void)pthread_mutex_lock(&idle->lock);
    idle->woken = 1;
    (void)pthread_cond_signal(&idle->woken_cond);
    (void)pthread_mutex_unlock(&idle->lock);
}

/*
 * Guard pages
 * -----------
 * A page of the arena at the low end of a stack, made inaccessible, so an
 * overflow faults at the instruction that crosses it instead of writing
 * into the arena below.  The arena is ordinary memory (static, heap or
 * mmap'ed): mprotect splits its mapping around each page, so every guard
 * costs the process up to two more mappings (vm.max_map_count, 65530 by
 * default on Linux, bounds them: docs/architecture.md has the figures).
 */
size_t kpn_port_page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);

    return n > 0 ? (size_t)n : 0;
}

int kpn_port_guard(void *page, int protect)
{
    return mprotect(page, kpn_port_page_size(), protect ? PROT_NONE : PROT_READ | PROT_WRITE);
}
