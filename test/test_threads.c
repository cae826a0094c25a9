/* SPDX-License-Identifier: MIT */
/* Conformance of the port's thread services (start, join, semaphore, yield) and of the hosted ports' kpn_config_from_env. */

/* setenv and unsetenv; on Linux, sched_setaffinity.  <pthread.h>
 * brings <sched.h>: Ceedling would take an include of "sched.h" for
 * src/sched.c and link it in. */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
#define _GNU_SOURCE
#include <pthread.h>
#endif

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unity.h"
#include "kpn.h"
#include "port.h"

TEST_SOURCE_FILE("port/pthread/thread_pthread.c")
TEST_SOURCE_FILE("src/env.c")

/*
 * Nothing may fail an assertion on a thread a test started: Unity and
 * cmocka report a failure by longjmp'ing to the runner's frame on the
 * main thread.  Threads record what they saw; the test body asserts
 * after the join.
 *
 * A flag one thread sets while another polls it goes through the GNU
 * atomic builtins (C99 has none of its own), so the sanitizers see the
 * ordering.  Everything else threads share is ordered by the semaphores
 * under test and by the join.
 */
#if defined(__GNUC__)
static int flag_get(const int *flag)
{
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static void flag_set(int *flag, int value)
{
    __atomic_store_n(flag, value, __ATOMIC_RELEASE);
}
#else
static int flag_get(const int *flag)
{
    return *(const volatile int *)flag;
}

static void flag_set(int *flag, int value)
{
    *(volatile int *)flag = value;
}
#endif

/* ------------------------------------------------------------------ */
/* Static memory for threads and semaphores, as the core carves it     */

#define THREADS 8u
/* Up to 1 MiB per stack: gcc's ThreadSanitizer keeps about 0.8 MiB of
 * thread state in static TLS, which the port's minimum counts. */
#define STACK_POOL (THREADS * 1024u * 1024u)
#define SLOT 256u /* bytes per thread handle or semaphore */
#define SEMS 4u

static unsigned char stack_pool[STACK_POOL + 16];
static unsigned char handle_pool[THREADS * SLOT + 16];
static unsigned char sem_pool[SEMS * SLOT + 16];

/* Bytes of each thread's stack: exactly the port's minimum, so every
 * test also checks that the minimum is enough. */
static size_t stack_bytes;

static unsigned char *align16(unsigned char *p)
{
    return p + ((16u - ((uintptr_t)p & 15u)) & 15u);
}

static unsigned char *stack_at(unsigned i)
{
    return align16(stack_pool) + i * stack_bytes;
}

static kpn_port_thread *thread_at(unsigned i)
{
    return (kpn_port_thread *)(void *)(align16(handle_pool) + i * SLOT);
}

static kpn_port_sem *sem_at(unsigned i)
{
    return (kpn_port_sem *)(void *)(align16(sem_pool) + i * SLOT);
}

static void start(unsigned i, void (*fn)(void *), void *arg)
{
    TEST_ASSERT_EQUAL_INT(0, kpn_port_thread_start(thread_at(i), stack_at(i),
                                                   stack_bytes, fn, arg));
}

static void new_sem(unsigned i)
{
    TEST_ASSERT_EQUAL_INT(0, kpn_port_sem_init(sem_at(i)));
}

/* Makes sure no test inherits a setting from the shell that runs it. */
static void clear_env(void)
{
    (void)unsetenv("KPN_RUNNERS");
    (void)unsetenv("KPN_POLICY");
    (void)unsetenv("KPN_CAPACITY");
    (void)unsetenv("KPN_CPUS");
}

void setUp(void)
{
    clear_env();
    stack_bytes = (kpn_port_thread_stack_min() + 15u) / 16u * 16u;
    TEST_ASSERT_LESS_OR_EQUAL(STACK_POOL / THREADS, stack_bytes);
    TEST_ASSERT_LESS_OR_EQUAL(SLOT, kpn_port_thread_size());
    TEST_ASSERT_LESS_OR_EQUAL(SLOT, kpn_port_sem_size());
}

void tearDown(void)
{
    clear_env();
}

/* ------------------------------------------------------------------ */
/* Sizes and start/join                                                */

void test_thread_sizes_are_multiples_of_16(void)
{
    TEST_ASSERT_GREATER_THAN(0, kpn_port_thread_size());
    TEST_ASSERT_EQUAL_size_t(0, kpn_port_thread_size() % 16u);
    TEST_ASSERT_GREATER_THAN(0, kpn_port_sem_size());
    TEST_ASSERT_EQUAL_size_t(0, kpn_port_sem_size() % 16u);
    TEST_ASSERT_EQUAL_size_t(0, kpn_port_thread_stack_min() % 16u);
#if defined(PTHREAD_STACK_MIN)
    /* glibc carves its own state from a stack it is given, so an honest
     * minimum is more than the C library's floor. */
    TEST_ASSERT_GREATER_THAN(PTHREAD_STACK_MIN, kpn_port_thread_stack_min());
#endif
}

struct probe {
    void *arg_seen;
    uintptr_t local;
    int ran;
};

static void probe_main(void *arg)
{
    struct probe *p = arg;
    volatile char local = 1;

    p->arg_seen = arg;
    p->local = (uintptr_t)&local;
    p->ran = local;
}

void test_thread_runs_fn_with_arg_on_the_given_stack(void)
{
    static struct probe probe;
    uintptr_t low = (uintptr_t)stack_at(0);

    start(0, probe_main, &probe);
    kpn_port_thread_join(thread_at(0));

    TEST_ASSERT_EQUAL_INT(1, probe.ran);
    TEST_ASSERT_EQUAL_PTR(&probe, probe.arg_seen);
    TEST_ASSERT_GREATER_OR_EQUAL(low, probe.local);
    TEST_ASSERT_LESS_THAN(low + stack_bytes, probe.local);
    /* The C library's state sits above the first frame; the minimum
     * still leaves the thread room to work, not glibc's bare 2 KiB. */
    TEST_ASSERT_GREATER_OR_EQUAL(8192, probe.local - low);
}

void test_thread_start_refuses_a_stack_below_the_minimum(void)
{
    static struct probe probe;

    TEST_ASSERT_TRUE(kpn_port_thread_start(thread_at(0), stack_at(0),
                                           stack_bytes - 16u, probe_main, &probe) != 0);
    TEST_ASSERT_EQUAL_INT(0, probe.ran);
}

struct crowd {
    unsigned index;
    unsigned seen;
    uintptr_t local;
    int done;
};

/* Each of the eight checks in, then waits until all have: none can
 * finish before every one of them is running. */
static void crowd_main(void *arg)
{
    struct crowd *c = arg;
    volatile char local = 0;

    c->seen = c->index;
    c->local = (uintptr_t)&local;
    kpn_port_sem_post(sem_at(0));
    kpn_port_sem_wait(sem_at(1));
    c->done = 1 + local;
}

void test_thread_eight_run_at_once(void)
{
    static struct crowd crowd[THREADS];
    unsigned i;

    new_sem(0);
    new_sem(1);
    for (i = 0; i < THREADS; ++i) {
        crowd[i].index = i;
        start(i, crowd_main, &crowd[i]);
    }
    for (i = 0; i < THREADS; ++i)
        kpn_port_sem_wait(sem_at(0));
    for (i = 0; i < THREADS; ++i)
        kpn_port_sem_post(sem_at(1));
    for (i = 0; i < THREADS; ++i)
        kpn_port_thread_join(thread_at(i));
    kpn_port_sem_destroy(sem_at(0));
    kpn_port_sem_destroy(sem_at(1));

    for (i = 0; i < THREADS; ++i) {
        TEST_ASSERT_EQUAL_UINT(i, crowd[i].seen);
        TEST_ASSERT_EQUAL_INT(1, crowd[i].done);
        TEST_ASSERT_GREATER_OR_EQUAL((uintptr_t)stack_at(i), crowd[i].local);
        TEST_ASSERT_LESS_THAN((uintptr_t)stack_at(i) + stack_bytes, crowd[i].local);
    }
}

/* ------------------------------------------------------------------ */
/* The semaphore                                                       */

struct waiter {
    int started;
    int passed;
};

static void waiter_main(void *arg)
{
    struct waiter *w = arg;

    flag_set(&w->started, 1);
    kpn_port_sem_wait(sem_at(0));
    flag_set(&w->passed, 1);
}

void test_sem_post_before_wait_is_not_lost(void)
{
    static struct waiter w;

    new_sem(0);
    /* On one thread: each wait takes a post made before it. */
    kpn_port_sem_post(sem_at(0));
    kpn_port_sem_wait(sem_at(0));
    kpn_port_sem_post(sem_at(0));
    kpn_port_sem_post(sem_at(0));
    kpn_port_sem_post(sem_at(0));
    kpn_port_sem_wait(sem_at(0));
    kpn_port_sem_wait(sem_at(0));
    kpn_port_sem_wait(sem_at(0));
    /* Across threads: posted before the waiter even exists. */
    kpn_port_sem_post(sem_at(0));
    start(0, waiter_main, &w);
    kpn_port_thread_join(thread_at(0));
    kpn_port_sem_destroy(sem_at(0));
    TEST_ASSERT_EQUAL_INT(1, w.passed);
}

static unsigned count_passed(struct waiter *w, unsigned n)
{
    unsigned i, passed = 0;

    for (i = 0; i < n; ++i)
        passed += (unsigned)flag_get(&w[i].passed);
    return passed;
}

void test_sem_n_posts_release_exactly_n_waits(void)
{
    enum { WAITERS = 7, FIRST = 5 };
    static struct waiter w[WAITERS];
    unsigned i, spins;

    new_sem(0);
    for (i = 0; i < WAITERS; ++i)
        start(i, waiter_main, &w[i]);
    for (i = 0; i < FIRST; ++i)
        kpn_port_sem_post(sem_at(0));
    while (count_passed(w, WAITERS) < FIRST)
        kpn_port_yield();
    /* Give a sixth waiter every chance to slip through a lost count. */
    for (i = 0; i < WAITERS; ++i)
        while (!flag_get(&w[i].started))
            kpn_port_yield();
    for (spins = 0; spins < 1000; ++spins)
        kpn_port_yield();
    TEST_ASSERT_EQUAL_UINT(FIRST, count_passed(w, WAITERS));

    for (i = FIRST; i < WAITERS; ++i)
        kpn_port_sem_post(sem_at(0));
    for (i = 0; i < WAITERS; ++i)
        kpn_port_thread_join(thread_at(i));
    kpn_port_sem_destroy(sem_at(0));
    TEST_ASSERT_EQUAL_UINT(WAITERS, count_passed(w, WAITERS));
}

void test_sem_waiter_sleeps_until_posted(void)
{
    static struct waiter w;
    unsigned spins;

    new_sem(0);
    start(0, waiter_main, &w);
    while (!flag_get(&w.started))
        kpn_port_yield();
    for (spins = 0; spins < 1000; ++spins)
        kpn_port_yield();
    TEST_ASSERT_EQUAL_INT(0, flag_get(&w.passed));

    kpn_port_sem_post(sem_at(0));
    kpn_port_thread_join(thread_at(0));
    kpn_port_sem_destroy(sem_at(0));
    TEST_ASSERT_EQUAL_INT(1, w.passed);
}

/*
 * Two threads hand a ball back and forth through two semaphores.  The
 * ball is a plain variable: only the semaphores order its accesses, so
 * a semaphore that lets a thread through early shows up as a wrong
 * count here (and as a data race under ThreadSanitizer).
 */
#define ROUNDS 100000ul

struct rally {
    unsigned long ball;
    unsigned long rounds[2];
    unsigned long misses[2];
};

static void serve_main(void *arg)
{
    struct rally *r = arg;
    unsigned long i;

    for (i = 0; i < ROUNDS; ++i) {
        if (r->ball != 2 * i)
            r->misses[0]++;
        r->ball++;
        r->rounds[0]++;
        kpn_port_sem_post(sem_at(0));
        kpn_port_sem_wait(sem_at(1));
    }
}

static void return_main(void *arg)
{
    struct rally *r = arg;
    unsigned long i;

    for (i = 0; i < ROUNDS; ++i) {
        kpn_port_sem_wait(sem_at(0));
        if (r->ball != 2 * i + 1)
            r->misses[1]++;
        r->ball++;
        r->rounds[1]++;
        kpn_port_sem_post(sem_at(1));
    }
}

/* The clock never runs backwards, and it moves: yielding the CPU for up
 * to a million times sees 2 ms pass. */
void test_clock_is_monotonic_and_moves(void)
{
    uint64_t t0 = kpn_port_clock_ns(), prev = t0, now = t0;
    long i;

    TEST_ASSERT_NOT_EQUAL(0, t0);
    for (i = 0; i < 100000; ++i) {
        now = kpn_port_clock_ns();
        TEST_ASSERT_TRUE(now >= prev);
        prev = now;
    }
    for (i = 0; i < 1000000 && now - t0 < 2000000u; ++i) {
        kpn_port_yield();
        now = kpn_port_clock_ns();
        TEST_ASSERT_TRUE(now >= prev);
        prev = now;
    }
    TEST_ASSERT_TRUE(now - t0 >= 2000000u);
}

/* The CPUs the calling thread may run on: at least one, and on Linux
 * what its affinity allows, so that a thread bound to one CPU (as
 * taskset binds a program) counts one, and its runners learn a
 * placement onto one runner. */
void test_cpus_are_those_the_thread_may_run_on(void)
{
    unsigned n = kpn_port_cpus();
#if defined(__linux__)
    cpu_set_t was, one;
    int cpu = 0, set;

    TEST_ASSERT_EQUAL_INT(0, sched_getaffinity(0, sizeof was, &was));
    TEST_ASSERT_EQUAL_UINT((unsigned)CPU_COUNT(&was), n);
    while (!CPU_ISSET(cpu, &was))
        ++cpu;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    set = sched_setaffinity(0, sizeof one, &one);
    n = kpn_port_cpus();
    TEST_ASSERT_EQUAL_INT(0, sched_setaffinity(0, sizeof was, &was)); /* as it was */
    TEST_ASSERT_EQUAL_INT(0, set);
    TEST_ASSERT_EQUAL_UINT(1, n);
#else
    TEST_ASSERT_TRUE(n >= 1);
#endif
}

#if defined(__linux__)
struct placed {
    cpu_set_t may;  /* the thread's affinity as its function starts */
    int first;      /* the CPU it started on */
    int got;        /* sched_getaffinity succeeded */
    int ran;        /* flag_set once 'first' and 'may' are written */
};

static void placed_main(void *arg)
{
    struct placed *p = arg;

    p->first = sched_getcpu();
    p->got = sched_getaffinity(0, sizeof p->may, &p->may) == 0;
    flag_set(&p->ran, 1);
}

/* Start a thread from a starter bound to 'set', which stays busy until
 * the thread runs, as the caller of kpn_run goes on to run runner 0; 0
 * if the starter could not be bound.  'stayed': the starter was on one
 * CPU throughout, which '*cpu' then names. */
static int start_bound(const cpu_set_t *set, struct placed *p, int *cpu, int *stayed)
{
    cpu_set_t was;
    int before, after;

    TEST_ASSERT_EQUAL_INT(0, sched_getaffinity(0, sizeof was, &was));
    if (sched_setaffinity(0, sizeof *set, set) != 0)
        return 0;
    /* idle first, as a program between two runs: the other CPUs go idle,
     * where a new thread waits longest on its creator's */
    {
        struct timespec nap = {0, 10 * 1000 * 1000};

        (void)nanosleep(&nap, NULL);
    }
    before = sched_getcpu();
    start(0, placed_main, p);
    while (!flag_get(&p->ran))
        ;
    after = sched_getcpu();
    kpn_port_thread_join(thread_at(0));
    TEST_ASSERT_EQUAL_INT(0, sched_setaffinity(0, sizeof was, &was)); /* as it was */
    *cpu = before;
    *stayed = before == after;
    return 1;
}
#endif

/* A runner thread starts off its starter's CPU where the starter may
 * run on others (Linux puts a new thread on its creator's CPU, where it
 * waits for the next tick while the creator runs runner 0:
 * thread_pthread.c, "Starting on another CPU"), and then may run
 * wherever its starter may, as any thread it started would. */
void test_a_thread_starts_off_its_starters_cpu_and_then_may_run_where_it_may(void)
{
#if defined(__linux__)
    static struct placed p;
    cpu_set_t all, two, one;
    int cpu, a = -1, b = -1, stayed, i;

    TEST_ASSERT_EQUAL_INT(0, sched_getaffinity(0, sizeof all, &all));
    for (i = 0; i < CPU_SETSIZE && b < 0; ++i)
        if (CPU_ISSET(i, &all)) {
            if (a < 0)
                a = i;
            else
                b = i;
        }

    /* bound to one CPU: the thread starts there, bound to it */
    CPU_ZERO(&one);
    CPU_SET(a, &one);
    memset(&p, 0, sizeof p);
    TEST_ASSERT_TRUE(start_bound(&one, &p, &cpu, &stayed));
    TEST_ASSERT_TRUE(p.got);
    TEST_ASSERT_TRUE(CPU_EQUAL(&one, &p.may));
    TEST_ASSERT_EQUAL_INT(a, p.first);
    if (b < 0)
        TEST_IGNORE_MESSAGE("one CPU: nowhere else to start");

    /* bound to two: the other one first, then both */
    CPU_ZERO(&two);
    CPU_SET(a, &two);
    CPU_SET(b, &two);
    for (i = 0; i < 8; ++i) {
        memset(&p, 0, sizeof p);
        TEST_ASSERT_TRUE(start_bound(&two, &p, &cpu, &stayed));
        TEST_ASSERT_TRUE(p.got);
        TEST_ASSERT_TRUE(CPU_EQUAL(&two, &p.may));
        TEST_ASSERT_TRUE(p.first == a || p.first == b);
        if (stayed) /* else the port may have kept it off either */
            TEST_ASSERT_TRUE(p.first != cpu);
    }

    /* unbound: it may run wherever the starter may */
    memset(&p, 0, sizeof p);
    TEST_ASSERT_TRUE(start_bound(&all, &p, &cpu, &stayed));
    TEST_ASSERT_TRUE(p.got);
    TEST_ASSERT_TRUE(CPU_EQUAL(&all, &p.may));
#else
    TEST_IGNORE_MESSAGE("no CPU affinity to look at");
#endif
}

void test_sem_ping_pong_between_two_threads(void)
{
    static struct rally rally;

    new_sem(0);
    new_sem(1);
    start(0, serve_main, &rally);
    start(1, return_main, &rally);
    kpn_port_thread_join(thread_at(0));
    kpn_port_thread_join(thread_at(1));
    kpn_port_sem_destroy(sem_at(0));
    kpn_port_sem_destroy(sem_at(1));

    TEST_ASSERT_EQUAL_UINT64(2 * ROUNDS, rally.ball);
    TEST_ASSERT_EQUAL_UINT64(ROUNDS, rally.rounds[0]);
    TEST_ASSERT_EQUAL_UINT64(ROUNDS, rally.rounds[1]);
    TEST_ASSERT_EQUAL_UINT64(0, rally.misses[0]);
    TEST_ASSERT_EQUAL_UINT64(0, rally.misses[1]);
}

/* ------------------------------------------------------------------ */
/* kpn_config_from_env                                                 */

/* A configuration whose every byte is known, padding included, so
 * "unchanged" can be checked byte for byte. */
static void known_config(kpn_config *cfg)
{
    memset(cfg, 0x5A, sizeof *cfg);
    cfg->runners = 3;
    cfg->policy = KPN_POLICY_WS;
    cfg->default_capacity = 5;
}

/* Sets 'name' to 'value' and expects it to be refused and named, with
 * the configuration untouched, through both entry points. */
static void expect_refused(const char *name, const char *value)
{
    kpn_config cfg, before;
    const char *bad = "not written";

    known_config(&cfg);
    memcpy(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(0, setenv(name, value, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(&cfg, &bad));
    TEST_ASSERT_EQUAL_STRING(name, bad);
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env(&cfg));
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(0, unsetenv(name));
}

/* Sets 'name' to 'value', expects success, and leaves the result in
 * '*cfg' (which starts as known_config). */
static void expect_accepted(const char *name, const char *value, kpn_config *cfg)
{
    kpn_config checked;
    const char *bad = "not written";

    known_config(&checked);
    TEST_ASSERT_EQUAL_INT(0, setenv(name, value, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env_check(&checked, &bad));
    TEST_ASSERT_NULL(bad); /* kpn.h: NULL on success */
    known_config(cfg);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env(cfg));
    TEST_ASSERT_EQUAL_MEMORY(&checked, cfg, sizeof *cfg);
    TEST_ASSERT_EQUAL_INT(0, unsetenv(name));
}

/* 'value' in decimal into 'text' (at least 21 bytes for a 64-bit size_t). */
static void decimal(size_t value, char *text)
{
    char digits[3 * sizeof value + 1];
    size_t n = 0, i;

    do {
        digits[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value != 0);
    for (i = 0; i < n; ++i)
        text[i] = digits[n - 1 - i];
    text[n] = '\0';
}

/* Adds one to the decimal number in 'text', which has room for a digit more. */
static void increment(char *text)
{
    size_t n = strlen(text);

    while (n > 0 && text[n - 1] == '9')
        text[--n] = '0';
    if (n > 0) {
        text[n - 1]++;
    } else {
        memmove(text + 1, text, strlen(text) + 1);
        text[0] = '1';
    }
}

void test_env_unset_variables_leave_config_alone(void)
{
    kpn_config cfg, before;
    const char *bad = "not written";

    known_config(&cfg);
    memcpy(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env_check(&cfg, &bad));
    TEST_ASSERT_NULL(bad);
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env(&cfg));
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env_check(&cfg, NULL));
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
}

void test_env_runners_valid(void)
{
    kpn_config cfg, expected;
    char max[24];

    expect_accepted("KPN_RUNNERS", "1", &cfg);
    TEST_ASSERT_EQUAL_UINT(1, cfg.runners);
    expect_accepted("KPN_RUNNERS", "4", &cfg);
    TEST_ASSERT_EQUAL_UINT(4, cfg.runners);
    expect_accepted("KPN_RUNNERS", "04", &cfg);
    TEST_ASSERT_EQUAL_UINT(4, cfg.runners);
    decimal(KPN_MAX_RUNNERS, max);
    expect_accepted("KPN_RUNNERS", max, &cfg);
    TEST_ASSERT_EQUAL_UINT(KPN_MAX_RUNNERS, cfg.runners);
    /* only the runners changed */
    known_config(&expected);
    expected.runners = KPN_MAX_RUNNERS;
    TEST_ASSERT_EQUAL_MEMORY(&expected, &cfg, sizeof cfg);
}

void test_env_runners_invalid(void)
{
    char above[24];

    decimal(KPN_MAX_RUNNERS + 1u, above);
    expect_refused("KPN_RUNNERS", "");
    expect_refused("KPN_RUNNERS", "abc");
    expect_refused("KPN_RUNNERS", "-1");
    expect_refused("KPN_RUNNERS", "+1");
    expect_refused("KPN_RUNNERS", " 1");
    expect_refused("KPN_RUNNERS", "1 ");
    expect_refused("KPN_RUNNERS", "0");
    expect_refused("KPN_RUNNERS", "33");
    expect_refused("KPN_RUNNERS", above);
    expect_refused("KPN_RUNNERS", "1x");
    expect_refused("KPN_RUNNERS", "0x4");
    expect_refused("KPN_RUNNERS", "99999999999999999999999");
}

void test_env_policy_valid(void)
{
    kpn_config cfg, expected;

    expect_accepted("KPN_POLICY", "static", &cfg);
    TEST_ASSERT_EQUAL_INT(KPN_POLICY_STATIC, cfg.policy);
    known_config(&expected);
    expected.policy = KPN_POLICY_STATIC;
    TEST_ASSERT_EQUAL_MEMORY(&expected, &cfg, sizeof cfg);

    known_config(&cfg);
    cfg.policy = KPN_POLICY_STATIC;
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_POLICY", "ws", 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env(&cfg));
    TEST_ASSERT_EQUAL_INT(KPN_POLICY_WS, cfg.policy);
}

void test_env_policy_invalid(void)
{
    expect_refused("KPN_POLICY", "");
    expect_refused("KPN_POLICY", "WS");
    expect_refused("KPN_POLICY", "Static");
    expect_refused("KPN_POLICY", "STATIC");
    expect_refused("KPN_POLICY", "ws ");
    expect_refused("KPN_POLICY", " ws");
    expect_refused("KPN_POLICY", "w");
    expect_refused("KPN_POLICY", "statics");
    expect_refused("KPN_POLICY", "0");
    expect_refused("KPN_POLICY", "abc");
}

void test_env_capacity_valid(void)
{
    kpn_config cfg, expected;
    char max[48];

    expect_accepted("KPN_CAPACITY", "1", &cfg);
    TEST_ASSERT_EQUAL_size_t(1, cfg.default_capacity);
    expect_accepted("KPN_CAPACITY", "1000", &cfg);
    TEST_ASSERT_EQUAL_size_t(1000, cfg.default_capacity);
    decimal(SIZE_MAX, max);
    expect_accepted("KPN_CAPACITY", max, &cfg);
    TEST_ASSERT_EQUAL_size_t(SIZE_MAX, cfg.default_capacity);
    known_config(&expected);
    expected.default_capacity = SIZE_MAX;
    TEST_ASSERT_EQUAL_MEMORY(&expected, &cfg, sizeof cfg);
}

void test_env_capacity_invalid(void)
{
    char above[48];

    decimal(SIZE_MAX, above);
    increment(above);
    expect_refused("KPN_CAPACITY", "");
    expect_refused("KPN_CAPACITY", "abc");
    expect_refused("KPN_CAPACITY", "-1");
    expect_refused("KPN_CAPACITY", "+8");
    expect_refused("KPN_CAPACITY", "0");
    expect_refused("KPN_CAPACITY", "1x");
    expect_refused("KPN_CAPACITY", "8.0");
    expect_refused("KPN_CAPACITY", above);
    expect_refused("KPN_CAPACITY", "99999999999999999999999");
}

void test_env_cpus_valid(void)
{
    kpn_config cfg, expected;
    char max[48];

    expect_accepted("KPN_CPUS", "0", &cfg);
    TEST_ASSERT_EQUAL_UINT(0, cfg.cpus);
    expect_accepted("KPN_CPUS", "2", &cfg);
    TEST_ASSERT_EQUAL_UINT(2, cfg.cpus);
    decimal(UINT_MAX, max);
    expect_accepted("KPN_CPUS", max, &cfg);
    TEST_ASSERT_EQUAL_UINT(UINT_MAX, cfg.cpus);
    known_config(&expected);
    expected.cpus = UINT_MAX;
    TEST_ASSERT_EQUAL_MEMORY(&expected, &cfg, sizeof cfg);
}

void test_env_cpus_invalid(void)
{
    char above[48];

    decimal(UINT_MAX, above);
    increment(above);
    expect_refused("KPN_CPUS", "");
    expect_refused("KPN_CPUS", "two");
    expect_refused("KPN_CPUS", "-1");
    expect_refused("KPN_CPUS", "+2");
    expect_refused("KPN_CPUS", "2 ");
    expect_refused("KPN_CPUS", "1.5");
    expect_refused("KPN_CPUS", above);
    expect_refused("KPN_CPUS", "99999999999999999999999");
}

void test_env_all_four_together(void)
{
    kpn_config cfg, expected;

    known_config(&cfg);
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_RUNNERS", "2", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_POLICY", "static", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_CAPACITY", "64", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_CPUS", "4", 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_config_from_env(&cfg));
    known_config(&expected);
    expected.runners = 2;
    expected.policy = KPN_POLICY_STATIC;
    expected.default_capacity = 64;
    expected.cpus = 4;
    TEST_ASSERT_EQUAL_MEMORY(&expected, &cfg, sizeof cfg);
}

void test_env_one_bad_value_applies_none(void)
{
    kpn_config cfg, before;
    const char *bad = NULL;

    known_config(&cfg);
    memcpy(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_RUNNERS", "2", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_POLICY", "static", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_CAPACITY", "0", 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(&cfg, &bad));
    TEST_ASSERT_EQUAL_STRING("KPN_CAPACITY", bad);
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);

    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_CAPACITY", "16", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_POLICY", "fifo", 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(&cfg, &bad));
    TEST_ASSERT_EQUAL_STRING("KPN_POLICY", bad);
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);

    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_POLICY", "ws", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_CPUS", "-2", 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(&cfg, &bad));
    TEST_ASSERT_EQUAL_STRING("KPN_CPUS", bad);
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
    TEST_ASSERT_EQUAL_INT(0, unsetenv("KPN_CPUS"));

    /* Two bad ones: either may be named, and nothing is applied. */
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_POLICY", "ws", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_RUNNERS", "0", 1));
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_CAPACITY", "x", 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(&cfg, &bad));
    TEST_ASSERT_NOT_NULL(bad);
    TEST_ASSERT_TRUE(strcmp(bad, "KPN_RUNNERS") == 0 || strcmp(bad, "KPN_CAPACITY") == 0);
    TEST_ASSERT_EQUAL_MEMORY(&before, &cfg, sizeof cfg);
}

void test_env_null_config(void)
{
    const char *bad = "stale";

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env(NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(NULL, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(NULL, &bad));
    TEST_ASSERT_NULL(bad); /* no variable to blame */
    TEST_ASSERT_EQUAL_INT(0, setenv("KPN_RUNNERS", "2", 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env(NULL));
    bad = "stale";
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_config_from_env_check(NULL, &bad));
    TEST_ASSERT_NULL(bad);
}
