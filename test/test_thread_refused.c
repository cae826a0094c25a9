/* SPDX-License-Identifier: MIT */
/* The pthread port when the C library refuses a thread: the start off the caller's CPU retried anywhere, a refusal reported, a net's runs. */

/* pthread_attr_getaffinity_np, sched_getaffinity and dlsym's RTLD_NEXT
 * are GNU's.  <pthread.h> brings <sched.h>: Ceedling would take an
 * include of "sched.h" for src/sched.c. */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#endif

#include <stdint.h>
#include <string.h>
#include "unity.h"
#include "kpn.h"
#include "port.h"

TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

/*
 * This program defines pthread_create, so that the port's calls reach
 * this one, which may refuse, and otherwise passes them to the C
 * library's.  A sanitizer runtime defines pthread_create too, to learn
 * of every thread: here its definition would be bypassed, so under one
 * this file defines nothing and its tests say so.  Only glibc tells a
 * thread's attributes' CPUs (pthread_attr_getaffinity_np), and only on
 * Linux with glibc does the port start a thread off its caller's CPU.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INTERPOSED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INTERPOSED 0
#endif
#endif
#if !defined(INTERPOSED) && defined(__linux__) && defined(__GLIBC__) && defined(CPU_COUNT)
#define INTERPOSED 1
#endif
#ifndef INTERPOSED
#define INTERPOSED 0
#endif

#if INTERPOSED
enum refusal { REFUSE_NONE, REFUSE_CPUS, REFUSE_ALL };

/* Set and read by the test's thread, the only one that starts threads. */
static enum refusal refuse;
static int creates;         /* calls of pthread_create */
static int creates_on_cpus; /* of those, with attributes that name CPUs */
static int refused;         /* of those, refused */

/* glibc gives attributes that name no CPUs as every CPU there is. */
static int names_cpus(const pthread_attr_t *attr)
{
    cpu_set_t set;

    return attr != NULL && pthread_attr_getaffinity_np(attr, sizeof set, &set) == 0 &&
           CPU_COUNT(&set) < CPU_SETSIZE;
}

int pthread_create(pthread_t *id, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int on_cpus = names_cpus(attr);

    ++creates;
    creates_on_cpus += on_cpus;
    /* EINVAL, as Linux gives a thread whose CPUs it has none of */
    if (refuse == REFUSE_ALL || (refuse == REFUSE_CPUS && on_cpus)) {
        ++refused;
        return refuse == REFUSE_ALL ? EAGAIN : EINVAL;
    }
    /* POSIX's way to a function pointer from dlsym */
    *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    if (real == NULL)
        return ENOSYS;
    return real(id, attr, fn, arg);
}

static void refuse_from_now(enum refusal r)
{
    refuse = r;
    creates = creates_on_cpus = refused = 0;
}

/* Whether the caller may run on two CPUs or more: only then does the
 * port start a thread off the caller's CPU. */
static int two_cpus(void)
{
    cpu_set_t set;

    TEST_ASSERT_EQUAL_INT(0, sched_getaffinity(0, sizeof set, &set));
    return CPU_COUNT(&set) >= 2;
}
#endif

/* ------------------------------------------------------------------ */
/* The port's thread start                                             */

/* Static memory, as the core carves it: 16-aligned.  2 MiB: gcc's
 * ThreadSanitizer raises the port's minimum stack to about 1 MiB. */
static unsigned char handle_pool[256 + 16];
static unsigned char stack_pool[(2u << 20) + 16];
static kpn_port_thread *thread;
static unsigned char *stack;
static size_t stack_bytes;

static unsigned char *align16(unsigned char *p)
{
    return p + ((16u - ((uintptr_t)p & 15u)) & 15u);
}

#if INTERPOSED
struct seen {
    cpu_set_t may; /* the thread's CPUs as its function starts */
    int got;       /* sched_getaffinity succeeded */
};

static void look(void *arg)
{
    struct seen *s = arg;

    s->got = sched_getaffinity(0, sizeof s->may, &s->may) == 0;
}
#endif

void setUp(void)
{
    TEST_ASSERT_LESS_OR_EQUAL(sizeof handle_pool - 16, kpn_port_thread_size());
    TEST_ASSERT_LESS_OR_EQUAL(sizeof stack_pool - 16, kpn_port_thread_stack_min());
    thread = (kpn_port_thread *)(void *)align16(handle_pool);
    stack = align16(stack_pool);
    stack_bytes = sizeof stack_pool - 16;
#if INTERPOSED
    refuse_from_now(REFUSE_NONE);
#endif
}

void tearDown(void)
{
#if INTERPOSED
    refuse = REFUSE_NONE;
#endif
}

/* thread_pthread.c, "Starting on another CPU": a thread first starts
 * on the caller's CPUs but the caller's own.  Where the system refuses
 * that (the CPUs changed meanwhile), the thread starts as any thread,
 * on every CPU the caller may use, and the caller hears nothing of it. */
void test_a_start_refused_on_the_other_cpus_starts_the_thread_anywhere(void)
{
#if INTERPOSED
    static struct seen s;
    cpu_set_t caller;

    if (!two_cpus())
        TEST_IGNORE_MESSAGE("one CPU: the port starts the thread where it may at once");
    TEST_ASSERT_EQUAL_INT(0, sched_getaffinity(0, sizeof caller, &caller));
    memset(&s, 0, sizeof s);
    refuse_from_now(REFUSE_CPUS);
    TEST_ASSERT_EQUAL_INT(0, kpn_port_thread_start(thread, stack, stack_bytes, look, &s));
    kpn_port_thread_join(thread);
    TEST_ASSERT_EQUAL_INT(2, creates);
    TEST_ASSERT_EQUAL_INT(1, creates_on_cpus); /* the first, which was refused */
    TEST_ASSERT_EQUAL_INT(1, refused);
    TEST_ASSERT_TRUE(s.got);
    TEST_ASSERT_TRUE(CPU_EQUAL(&caller, &s.may));
#else
    TEST_IGNORE_MESSAGE("pthread_create is not this program's to refuse here");
#endif
}

/* Without the refusal the same start names CPUs once and is not
 * retried: the test above saw the retry, not a second try it always
 * makes. */
void test_a_start_the_system_takes_is_made_once(void)
{
#if INTERPOSED
    static struct seen s;

    memset(&s, 0, sizeof s);
    TEST_ASSERT_EQUAL_INT(0, kpn_port_thread_start(thread, stack, stack_bytes, look, &s));
    kpn_port_thread_join(thread);
    TEST_ASSERT_EQUAL_INT(1, creates);
    TEST_ASSERT_EQUAL_INT(two_cpus() ? 1 : 0, creates_on_cpus);
    TEST_ASSERT_TRUE(s.got);
#else
    TEST_IGNORE_MESSAGE("pthread_create is not this program's to refuse here");
#endif
}

/* A refusal that is not about CPUs reaches the caller as the C
 * library's error, with the caller's signal mask as it was, and the
 * same thread object starts a thread once the system takes it. */
void test_a_start_refused_everywhere_returns_the_refusal_and_changes_nothing(void)
{
#if INTERPOSED
    static struct seen s;
    sigset_t before, after;
    int sig;

    TEST_ASSERT_EQUAL_INT(0, pthread_sigmask(SIG_SETMASK, NULL, &before));
    refuse_from_now(REFUSE_ALL);
    TEST_ASSERT_EQUAL_INT(EAGAIN, kpn_port_thread_start(thread, stack, stack_bytes, look, &s));
    TEST_ASSERT_EQUAL_INT(two_cpus() ? 2 : 1, creates);
    TEST_ASSERT_EQUAL_INT(creates, refused);
    TEST_ASSERT_EQUAL_INT(0, pthread_sigmask(SIG_SETMASK, NULL, &after));
    for (sig = 1; sig < 32; ++sig) /* the port blocks them all while it creates */
        TEST_ASSERT_EQUAL_INT(sigismember(&before, sig), sigismember(&after, sig));

    memset(&s, 0, sizeof s);
    refuse_from_now(REFUSE_NONE);
    TEST_ASSERT_EQUAL_INT(0, kpn_port_thread_start(thread, stack, stack_bytes, look, &s));
    kpn_port_thread_join(thread);
    TEST_ASSERT_TRUE(s.got);
#else
    TEST_IGNORE_MESSAGE("pthread_create is not this program's to refuse here");
#endif
}

/* ------------------------------------------------------------------ */
/* A net on two runners                                                */

#if INTERPOSED
#define MESSAGES 20000
#define PSTACK 16384
static unsigned char arena[1 << 20];
static kpn_net *net;

struct pair {
    kpn_chan *c;
    long long sum; /* the reader's */
    int received;  /* the reader's */
};

static void writer(void *arg)
{
    struct pair *p = arg;
    int i;

    for (i = 1; i <= MESSAGES; ++i)
        if (kpn_send(p->c, &i) != KPN_OK)
            return;
    (void)kpn_close(p->c);
}

static void reader(void *arg)
{
    struct pair *p = arg;
    int v;

    while (kpn_recv(p->c, &v) == KPN_OK) {
        p->sum += v;
        ++p->received;
    }
}

/* A writer and a reader of a channel of capacity 1, one on each runner, so
 * that the second runner's thread has work to do. */
static void build(struct pair *p)
{
    kpn_config cfg;
    kpn_proc *w, *r;

    kpn_config_default(&cfg);
    cfg.runners = 2;
    cfg.policy = KPN_POLICY_STATIC;
    memset(p, 0, sizeof *p);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "writer", writer, p, PSTACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "reader", reader, p, PSTACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &p->c, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(w, 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(r, 1));
}

static void check_whole(const struct pair *p)
{
    TEST_ASSERT_EQUAL_INT(MESSAGES, p->received);
    TEST_ASSERT_TRUE(p->sum == (long long)MESSAGES * (MESSAGES + 1) / 2);
}
#endif

/* The runner thread's start off the caller's CPU refused: the run goes
 * on as one that was never refused. */
void test_a_net_whose_runner_is_refused_the_other_cpus_runs_whole(void)
{
#if INTERPOSED
    static struct pair p;

    if (!two_cpus())
        TEST_IGNORE_MESSAGE("one CPU: the port starts the runner where it may at once");
    build(&p);
    refuse_from_now(REFUSE_CPUS);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, refused);
    TEST_ASSERT_EQUAL_INT(2, creates);
    check_whole(&p);
#else
    TEST_IGNORE_MESSAGE("pthread_create is not this program's to refuse here");
#endif
}

/* kpn.h, kpn_run: KPN_ETHREAD, nothing ran.  Through the real port: no
 * message moved, and the same net then runs whole once the system
 * takes its thread. */
void test_a_net_whose_runner_is_refused_runs_nothing_then_whole(void)
{
#if INTERPOSED
    static struct pair p;

    build(&p);
    refuse_from_now(REFUSE_ALL);
    TEST_ASSERT_EQUAL_INT(KPN_ETHREAD, kpn_run(net));
    TEST_ASSERT_TRUE(refused >= 1);
    TEST_ASSERT_EQUAL_INT(0, p.received);
    refuse_from_now(REFUSE_NONE);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    check_whole(&p);
#else
    TEST_IGNORE_MESSAGE("pthread_create is not this program's to refuse here");
#endif
}
