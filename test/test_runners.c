/* SPDX-License-Identifier: MIT */
/* Several runners: configuration, placement, determinism against a reference, stress. */

/* On Linux, sched_setaffinity: the CPUs a run is over.  <pthread.h>
 * brings <sched.h> (Ceedling would take "sched.h" for src/sched.c). */
#if defined(__linux__)
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#endif

#include <string.h>
#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* the idle runner's look, white-box */
#include "support/helpers.h"
#include "support/bursts.h"
#include "randnet.h"

TEST_SOURCE_FILE("bench/randnet.c")
TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/input.c")
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

#define STACK 16384
static unsigned char arena[8 << 20];
static kpn_net *net;

/* Sanitizers slow every switch by an order of magnitude; the stress
 * counts shrink with them, the checks do not. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLOW 1
#endif
#endif
#if !defined(SLOW) && defined(KPN_VALGRIND)
#define SLOW 1
#endif
#ifndef SLOW
#define SLOW 0
#endif

/* Whether the two runners of a test run at once.  Where they take turns
 * (one CPU, or valgrind, which runs one thread at a time and hands the
 * CPU on at fixed counts of blocks of code), a runner can find the other
 * stalled at every turn: a sleeping one finds the busy one's process
 * and never comes back empty-handed (solo), and one that waits for the
 * other's lock can find it held at every turn. */
static int runners_run_at_once(void)
{
#ifdef KPN_VALGRIND
    return 0;
#else
    return kpn_port_cpus() >= 2;
#endif
}

static kpn_config config(unsigned runners, kpn_policy policy, kpn_wake wake)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.policy = policy;
    cfg.wake = wake;
    cfg.reserve_size = 256 * 1024;
    return cfg;
}

static void init(unsigned runners, kpn_policy policy, kpn_wake wake)
{
    kpn_config cfg = config(runners, policy, wake);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
}

void setUp(void)
{
    init(2, KPN_POLICY_WS, KPN_WAKE_LAST);
}

void tearDown(void) {}

static void idle(void *arg) { (void)arg; }

/* Spins while the int at 'p' is 'v' (or, with 'equal' 0, while it is
 * not), for at most a billion looks; whether it stopped doing so. */
static int spin_while(const int *p, int v, int equal)
{
    long spins;

    for (spins = 0; spins < 1000000000L && (__atomic_load_n(p, __ATOMIC_SEQ_CST) == v) == equal;
         ++spins)
        ;
    return (__atomic_load_n(p, __ATOMIC_SEQ_CST) == v) != equal;
}

/* Spins until 'p' waits on 'c' for 'why' (a process on another runner,
 * read as the shared words they are), or the int at 'unless' (NULL:
 * none) is set, for at most a billion looks; whether either came to. */
static int waits_on(const kpn_proc *p, kpn_proc_state why, const kpn_chan *c, const int *unless)
{
    long spins;

    for (spins = 0; spins < 1000000000L; ++spins)
        if ((__atomic_load_n(&p->state, __ATOMIC_SEQ_CST) == why &&
             __atomic_load_n(&p->wait, __ATOMIC_SEQ_CST) == c) ||
            (unless != NULL && __atomic_load_n(unless, __ATOMIC_SEQ_CST)))
            return 1;
    return 0;
}

/* A process pinned to 'runner' (under KPN_POLICY_STATIC, where it runs). */
static kpn_proc *spawn_on(const char *name, void (*fn)(void *), void *arg, unsigned runner)
{
    kpn_proc *p;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, name, fn, arg, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(p, runner));
    return p;
}

/* ------------------------------------------------------------ config */

void test_runner_configuration_is_checked(void)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    TEST_ASSERT_EQUAL_UINT(1, cfg.runners);
    TEST_ASSERT_EQUAL_INT(KPN_POLICY_WS, cfg.policy);
    TEST_ASSERT_EQUAL_INT(KPN_WAKE_WAKER, cfg.wake);
    cfg.runners = 0;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.runners = KPN_MAX_RUNNERS + 1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_net(&cfg));
    cfg.runners = 2;
    cfg.runner_stack = 16;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    /* so large that the runners' stacks together would not fit a size_t */
    cfg.runner_stack = (size_t)-1 / KPN_MAX_RUNNERS / 2 + 1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_net(&cfg));
    kpn_config_default(&cfg);
    cfg.policy = (kpn_policy)7;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    kpn_config_default(&cfg);
    cfg.wake = (kpn_wake)7;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
}

void test_size_net_covers_the_runners_and_their_stacks(void)
{
    kpn_config cfg = config(KPN_MAX_RUNNERS, KPN_POLICY_WS, KPN_WAKE_LAST);
    size_t need = kpn_size_net(&cfg);
    kpn_stats st;

    cfg.reserve_size = 0;
    need = kpn_size_net(&cfg);
    TEST_ASSERT_GREATER_THAN(31 * cfg.runner_stack, need);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena - 8, need);
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&net, arena + 8, need - 16, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena + 8, need, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net)); /* 32 runners, nothing to do */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(KPN_MAX_RUNNERS, st.runners);
}

void test_pin_checks_its_arguments(void)
{
    kpn_proc *p;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(NULL, 0));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(p, 2));
    TEST_ASSERT_EQUAL_UINT(0, p->home); /* the first process: runner 0 */
    TEST_ASSERT_EQUAL_PTR(&net->runners[0], p->runner);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(p, 1));
    TEST_ASSERT_EQUAL_UINT(1, p->home);
    TEST_ASSERT_EQUAL_PTR(&net->runners[1], p->runner);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

static kpn_proc *pin_self;
static kpn_status pin_while_running;
static unsigned pin_home_after;
static kpni_runner *pin_runner_before, *pin_runner_after;
static void pins_itself(void *arg)
{
    (void)arg;
    pin_runner_before = pin_self->runner;
    pin_while_running = kpn_proc_pin(pin_self, 1);
    pin_home_after = pin_self->home;
    pin_runner_after = pin_self->runner;
}

void test_pin_while_running_is_refused(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &pin_self, "p", pins_itself, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, pin_while_running);
    TEST_ASSERT_EQUAL_UINT(0, pin_home_after);
    TEST_ASSERT_EQUAL_PTR(pin_runner_before, pin_runner_after);
}

/* Every call that builds or runs a net, made by a process of it while it
 * runs on several runners: refused, and the run goes on.  Each process
 * makes them once from wherever it runs. */
struct builds { kpn_status got[9]; int wrote; kpn_chan *out; };
static kpn_proc *first_builder;

static void builds_during_the_run(void *arg)
{
    struct builds *b = arg;
    kpn_proc *p = NULL;
    kpn_chan *c = NULL;
    kpn_net *n = NULL;
    unsigned home[8];
    unsigned char region[256];
    int v = 1;

    b->got[0] = kpn_run(net);
    b->got[1] = kpn_spawn(net, &p, "late", idle, NULL, STACK);
    b->got[2] = kpn_connect(net, &c, first_builder, first_builder, sizeof(int), 1);
    b->got[3] = kpn_connect_input(net, &c, first_builder, sizeof(int), 1);
    b->got[4] = kpn_reserve_add(net, region, sizeof region);
    b->got[5] = kpn_place(net, 2, home, 8);
    b->got[6] = kpn_net_release(net);
    b->got[7] = kpn_net_init(&n, arena, sizeof arena, NULL);
    b->got[8] = kpn_proc_pin(first_builder, 0);
    b->wrote = p != NULL || c != NULL || n != NULL; /* a refusal writes no handle */
    if (b->out != NULL)
        kpn_send(b->out, &v);
}

static void takes_one(void *arg)
{
    int v = 0;
    (void)kpn_recv(*(kpn_chan **)arg, &v);
}

void test_building_calls_from_a_process_are_refused_on_several_runners(void)
{
    static struct builds b[4];
    static kpn_chan *links[4];
    unsigned runners, i, k;

    for (runners = 2; runners <= 4; runners += 2) {
        kpn_stats st;

        init(runners, KPN_POLICY_WS, KPN_WAKE_LAST);
        for (i = 0; i < runners; ++i) {
            kpn_proc *w, *r;

            memset(&b[i], 0, sizeof b[i]);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "builder", builds_during_the_run, &b[i], STACK));
            if (i == 0)
                first_builder = w;
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "taker", takes_one, &links[i], STACK));
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &links[i], w, r, sizeof(int), 1));
            b[i].out = links[i];
        }
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        for (i = 0; i < runners; ++i) {
            for (k = 0; k < 9; ++k)
                TEST_ASSERT_EQUAL_INT(KPN_ESTATE, b[i].got[k]);
            TEST_ASSERT_EQUAL_INT(0, b[i].wrote);
        }
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_size_t(2 * runners, st.procs);
        TEST_ASSERT_EQUAL_size_t(2 * runners, st.procs_exited);
        TEST_ASSERT_EQUAL_size_t(runners, st.chans);
        TEST_ASSERT_EQUAL_UINT64(runners, st.messages);
    }
}

/* KPN_EDEADLOCK on several runners: a writer blocked on a full channel
 * with the resolver off, and a true deadlock under cfg.strict; each with
 * its processes on different runners, messages in place. */
static kpn_chan *dl_ab, *dl_ba;

static void fills_then_waits(void *arg)
{
    int v = 0;

    (void)arg;
    for (v = 0; v < 3; ++v)
        kpn_send(dl_ab, &v); /* the third blocks: capacity 2, nobody reads */
}

static void reads_other(void *arg)
{
    int v;

    (void)kpn_recv(arg == NULL ? dl_ab : dl_ba, &v);
}

void test_a_deadlock_ends_the_run_with_edeadlock_on_several_runners(void)
{
    unsigned runners;

    for (runners = 2; runners <= 4; runners += 2) {
        kpn_config cfg = config(runners, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        kpn_proc *a, *b;
        kpn_stats st;

        /* resolve 0: a's third send waits on a full channel for good */
        cfg.resolve = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        a = spawn_on("a", fills_then_waits, NULL, 0);
        b = spawn_on("b", reads_other, &dl_ba, runners - 1); /* reads a channel nobody writes */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &dl_ab, a, b, sizeof(int), 2));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &dl_ba, a, b, sizeof(int), 1));
        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
        TEST_ASSERT_EQUAL_size_t(2, kpn_chan_fill(dl_ab));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_size_t(1, st.procs_blocked_write);
        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net)); /* and so again */

        /* strict, the resolver off and on: a and b each wait to read
         * from the other */
        for (cfg.resolve = 0; cfg.resolve <= 1; ++cfg.resolve) {
            cfg.strict = 1;
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
            a = spawn_on("a", reads_other, NULL, 0);
            b = spawn_on("b", reads_other, &dl_ba, runners - 1);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &dl_ab, b, a, sizeof(int), 1));
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &dl_ba, a, b, sizeof(int), 1));
            TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
            TEST_ASSERT_EQUAL_size_t(2, st.procs_blocked_read);
            TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
        }
    }
}

/* Under the static policy a pinned process runs only on its runner. */
static kpn_chan *pp_ab, *pp_ba;
static long pp_rounds, pp_seen_a, pp_seen_b;

static void ping(void *arg)
{
    long i, v = 0;
    (void)arg;
    for (i = 0; i < pp_rounds; ++i) {
        kpn_send(pp_ab, &i);
        if (kpn_recv(pp_ba, &v) != KPN_OK || v != i)
            return;
        pp_seen_a++;
    }
}

static void pong(void *arg)
{
    long v;
    (void)arg;
    while (kpn_recv(pp_ab, &v) == KPN_OK) {
        pp_seen_b++;
        kpn_send(pp_ba, &v);
    }
}

static void build_ping_pong(long rounds, unsigned ra, unsigned rb)
{
    kpn_proc *a, *b;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "ping", ping, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "pong", pong, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(a, ra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(b, rb));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pp_ab, a, b, sizeof(long), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pp_ba, b, a, sizeof(long), 1));
    pp_rounds = rounds;
    pp_seen_a = pp_seen_b = 0;
}

void test_static_pinning_keeps_processes_on_their_runner(void)
{
    kpn_stats st;

    init(3, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    build_ping_pong(1000, 2, 2);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1000, (int)pp_seen_a);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[0]);
    TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[1]);
    TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[2]);
    TEST_ASSERT_EQUAL_UINT64(0, st.steals);
    TEST_ASSERT_EQUAL_UINT64(0, st.steal_attempts); /* no look into another's queue */
}

/* A runner thread blocks every asynchronous signal, so that none is
 * handled on the small stack of a process it runs
 * (port/pthread/thread_pthread.c): the process it runs must see that
 * mask too, whatever the thread that spawned it allowed. */
#if defined(__linux__)
static pthread_t sig_host;
static int sig_on_host = -1, sig_blocked = -1;

static void sig_probe(void *arg)
{
    sigset_t now;

    (void)arg;
    sig_on_host = pthread_equal(pthread_self(), sig_host) != 0;
    if (pthread_sigmask(SIG_BLOCK, NULL, &now) == 0)
        sig_blocked = sigismember(&now, SIGUSR1) == 1;
}
#endif

void test_a_process_on_a_runner_thread_runs_with_its_signals_blocked(void)
{
#if defined(__linux__)
    sigset_t usr1, saved;
    kpn_proc *p;

    (void)sigemptyset(&usr1);
    (void)sigaddset(&usr1, SIGUSR1);
    TEST_ASSERT_EQUAL_INT(0, pthread_sigmask(SIG_UNBLOCK, &usr1, &saved));
    sig_host = pthread_self();
    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    p = spawn_on("probe", sig_probe, NULL, 1);
    (void)p;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    (void)pthread_sigmask(SIG_SETMASK, &saved, NULL);
    TEST_ASSERT_EQUAL_INT(0, sig_on_host);
    TEST_ASSERT_EQUAL_INT(1, sig_blocked);
#else
    TEST_IGNORE_MESSAGE("needs pthread_sigmask on Linux");
#endif
}

/* Blocks and wakes across two runners, a million round trips, counted
 * exactly. */
/* Ping on runner 0, pong on runner 1, 'rounds' round trips: run them and
 * check that every one arrived, each message counted once. */
static void run_ping_pong(long rounds, kpn_stats *st)
{
    build_ping_pong(rounds, 0, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT64(rounds, pp_seen_a);
    TEST_ASSERT_EQUAL_INT64(rounds, pp_seen_b);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, st));
    TEST_ASSERT_EQUAL_UINT64((uint64_t)rounds * 2, st->messages);
}

void test_ping_pong_across_runners_counts_exactly(void)
{
    kpn_stats st;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    run_ping_pong(SLOW ? 20000 : 1000000, &st);
    TEST_ASSERT_GREATER_THAN(0, st.runner_switches[0]);
    TEST_ASSERT_GREATER_THAN(0, st.runner_switches[1]);
    TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[0] + st.runner_switches[1]);
}

/* With the resolver off a block walks nothing and counts no waiter:
 * blocks and wakes across two runners, under either policy, still move
 * every message exactly once. */
void test_two_runners_without_the_resolver_count_exactly(void)
{
    int policy;
    kpn_stats st;

    for (policy = KPN_POLICY_WS; policy <= KPN_POLICY_STATIC; ++policy) {
        kpn_config cfg = config(2, (kpn_policy)policy, KPN_WAKE_LAST);

        cfg.resolve = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        run_ping_pong(SLOW ? 5000 : 200000, &st);
        TEST_ASSERT_EQUAL_UINT64(0, st.detections);
        TEST_ASSERT_EQUAL_UINT(2u, (unsigned)st.procs_exited);
    }
}

/* ------------------------------------------------------------ counters */

static int saw_a_sleep;

/* Runs without blocking until a runner has gone to sleep (it counts
 * net->dormancies after its 'sleeps'), for at most a billion looks. */
static void runs_until_a_runner_sleeps(void *arg)
{
    long spins;

    (void)arg;
    for (spins = 0; spins < 1000000000L; ++spins)
        if (__atomic_load_n(&net->dormancies, __ATOMIC_ACQUIRE) != 0) {
            saw_a_sleep = 1;
            return;
        }
}

/* kpn.h: steal_attempts counts the looks into another runner's queue,
 * sleeps the times a runner found no work and slept.  A net of one
 * process that never blocks leaves the other runner nothing to do but
 * look for work (it may take the process before it starts, and the
 * runner it leaves then looks), and sleep; the process runs until one
 * has.  White-box: net->dormancies. */
void test_a_runner_with_nothing_to_do_counts_its_looks_and_its_sleep(void)
{
    kpn_config cfg = config(2, KPN_POLICY_WS, KPN_WAKE_LAST);
    kpn_proc *p;
    kpn_stats st;

    cfg.cpus = 2; /* both runners, whatever the port's count */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          kpn_spawn(net, &p, "p", runs_until_a_runner_sleeps, NULL, STACK));
    saw_a_sleep = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, saw_a_sleep);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_OR_EQUAL(1, st.sleeps);
    TEST_ASSERT_GREATER_OR_EQUAL(1, st.steal_attempts);
    TEST_ASSERT_LESS_OR_EQUAL(1, st.steals);
}

/* ------------------------------------------------------------ determinism */

/* The resolver's random cyclic networks give the unbounded reference's
 * histories whatever the runner count, policy, wake rule and capacity. */
void test_random_networks_are_deterministic_across_runners(void)
{
    static const unsigned counts[] = {1, 2, 3, 4, 8};
    static rn_net n;
    static rn_run run;
    uint32_t ref[RN_MAX_PROCS];
    uint32_t seed, seeds = SLOW ? 4 : 25;
    unsigned k, policy, wake;
    size_t cap;
    int i, runs = 0;
    uint64_t steals = 0, resolutions = 0;

    for (seed = 100; seed < 100 + seeds; ++seed) {
        rn_generate(&n, seed, 10);
        rn_simulate(&n, ref);
        for (k = 0; k < sizeof counts / sizeof counts[0]; ++k)
            for (policy = 0; policy < 2; ++policy)
                for (wake = 0; wake < 2; ++wake)
                    for (cap = 1; cap <= 4; cap += 3) {
                        kpn_config cfg = config(counts[k], (kpn_policy)policy, (kpn_wake)wake);
                        kpn_stats st;

                        /* every runner, on a machine of one CPU too (there
                         * a work-stealing run would be on runner 0 alone) */
                        cfg.cpus = counts[k];
                        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
                        TEST_ASSERT_EQUAL_INT(KPN_OK, rn_build(net, &n, &run, cap, 8192));
                        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
                        for (i = 0; i < n.nprocs; ++i)
                            TEST_ASSERT_EQUAL_HEX32(ref[i], run.hash[i]);
                        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
                        /* a steal is a look that found something;
                         * a static net never looks */
                        TEST_ASSERT_LESS_OR_EQUAL(st.steal_attempts, st.steals);
                        if (policy == KPN_POLICY_STATIC)
                            TEST_ASSERT_EQUAL_UINT64(0, st.steal_attempts);
                        steals += st.steals;
                        resolutions += st.resolutions;
                        ++runs;
                    }
    }
    TEST_ASSERT_GREATER_THAN(0, (long)steals);
    TEST_ASSERT_GREATER_THAN(0, (long)resolutions);
    TEST_ASSERT_EQUAL_INT((int)seeds * 5 * 2 * 2 * 2, runs);
}

/* ------------------------------------------------------------ halts */

/* Thesis figure 3.7 on two runners: the pool runs out cleanly, nothing is
 * lost, and the net goes on after kpn_reserve_add. */
void test_an_exhausted_pool_stops_every_runner_and_nothing_is_lost(void)
{
    static unsigned char more[16 * 1024];
    static struct kt_fig37 f;
    kpn_config cfg = config(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    int first;

    cfg.reserve_size = 4096;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kt_fig37_build(net, &f, 1));
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, f.b_bad);
    TEST_ASSERT_EQUAL_INT(f.a_sent2, f.b_got2 + (int)kpn_chan_fill(f.c2));
    first = f.b_got2;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, more, sizeof more));
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, f.b_bad);
    TEST_ASSERT_GREATER_THAN(first, f.b_got2);
    TEST_ASSERT_EQUAL_INT(f.a_sent2, f.b_got2 + (int)kpn_chan_fill(f.c2));
}

/* A channel whose ends share a runner in one run and not in the next
 * (or the other way round) keeps its reader's position and count on
 * another line in each (kpn_int.h, struct kpn_chan): a run stopped by
 * KPN_ERESERVE with a message still in the ring, the reader moved, the
 * run resumed.  The writer fills 'a' (capacity 1) before it writes 'b',
 * the reader reads 'b' first: an artificial deadlock that needs 'a' to
 * grow, after two messages have already gone through it. */
static kpn_chan *mv_a, *mv_b;
static int mv_got[8];
static int mv_n;

static void mv_writer(void *arg)
{
    static const int a[] = {10, 11, 1, 2};
    int three = 3;
    int i;
    (void)arg;
    for (i = 0; i < 4; ++i)
        kpn_send(mv_a, &a[i]);
    kpn_send(mv_b, &three);
}

static void mv_reader(void *arg)
{
    kpn_chan *from[] = {mv_a, mv_a, mv_b, mv_a, mv_a};
    int i;
    (void)arg;
    for (i = 0; i < 5; ++i)
        if (kpn_recv(from[i], &mv_got[mv_n]) == KPN_OK)
            mv_n++;
}

/* The writer and the reader into 'net', nothing received yet. */
static void mv_build(kpn_proc **w, kpn_proc **r)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, w, "w", mv_writer, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, r, "r", mv_reader, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &mv_a, *w, *r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &mv_b, *w, *r, sizeof(int), 1));
    mv_n = 0;
    memset(mv_got, 0, sizeof mv_got);
}

void test_a_channel_that_starts_or_stops_crossing_between_runs_loses_nothing(void)
{
    static unsigned char more[1024];
    static const int want[] = {10, 11, 3, 1, 2};
    int first;

    for (first = 0; first < 2; ++first) { /* the reader on runner 0, then 1 */
        kpn_config cfg = config(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        kpn_proc *w, *r;

        cfg.reserve_size = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        mv_build(&w, &r);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(w, 0));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(r, (unsigned)first));

        TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(2, mv_n);
        TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(mv_a));
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(mv_b));

        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(r, (unsigned)!first));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, more, sizeof more));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(5, mv_n);
        TEST_ASSERT_EQUAL_INT_ARRAY(want, mv_got, 5);
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(mv_a));
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(mv_b));
    }
}

/* An overflow on one runner stops the others too. */
static kpn_proc *deep;

static void overflows(void *arg)
{
    kpn_proc_stats ps;
    long v;
    (void)arg;
    kpn_proc_stats_get(deep, &ps);
    kt_recurse((const unsigned char *)ps.stack_base - 16, 0);
    kpn_recv(pp_ab, &v);
}

static void spins_on_messages(void *arg)
{
    long i;
    (void)arg;
    for (i = 0; i < 1000000; ++i)
        kpn_send(pp_ba, &i);
}

static void drains(void *arg)
{
    long v;
    (void)arg;
    while (kpn_recv(pp_ba, &v) == KPN_OK)
        ;
}

void test_a_stack_overflow_on_one_runner_stops_them_all(void)
{
    kpn_proc *s, *d;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &deep, "deep", overflows, NULL, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &s, "sender", spins_on_messages, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &d, "drain", drains, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(deep, 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(s, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(d, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pp_ab, s, deep, sizeof(long), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pp_ba, s, d, sizeof(long), 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(deep, kpn_net_fault(net));
}

/* A process that is not a channel's writer is refused even while the
 * writer is running at that very moment on another runner: the caller is
 * known by the stack it runs on, not by what its runner is doing. */
static kpn_chan *owned;
static int w_started, intruder_done, intruder_accepted, reader_got;

static void busy_writer(void *arg)
{
    int v = 7;
    (void)arg;
    __atomic_store_n(&w_started, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&intruder_done, __ATOMIC_SEQ_CST))
        ; /* running on runner 0 the whole time the intruder tries */
    kpn_send(owned, &v);
}

static void intruder(void *arg)
{
    int i, v = 666;
    (void)arg;
    while (!__atomic_load_n(&w_started, __ATOMIC_SEQ_CST))
        ;
    for (i = 0; i < 1000; ++i) {
        intruder_accepted += kpn_send(owned, &v) != KPN_EPERM;
        intruder_accepted += kpn_recv(owned, &v) != KPN_EPERM;
        intruder_accepted += kpn_close(owned) != KPN_EPERM;
    }
    __atomic_store_n(&intruder_done, 1, __ATOMIC_SEQ_CST);
}

static void owner_reader(void *arg)
{
    (void)arg;
    kpn_recv(owned, &reader_got);
}

void test_a_stranger_is_refused_while_the_writer_runs_on_another_runner(void)
{
    kpn_proc *w, *r;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    w = spawn_on("writer", busy_writer, NULL, 0);
    (void)spawn_on("intruder", intruder, NULL, 1);
    r = spawn_on("reader", owner_reader, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &owned, w, r, sizeof(int), 4));
    w_started = intruder_done = intruder_accepted = reader_got = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, intruder_accepted);
    TEST_ASSERT_EQUAL_INT(7, reader_got);
}

/* A stranger's refused calls touch nothing the two ends are changing:
 * while a writer and a reader on runner 0 pass messages through 'passing',
 * a process on runner 1 calls the channel from the wrong end over and
 * over.  A send or receive that read the ends' counters before it knew
 * its caller would race the ends for them, which make tsan reports;
 * every call must still be refused, and every message arrive in order. */
#define PASSING_MSGS 3000
static kpn_chan *passing;
static int passing_started, passing_done, passing_accepted, passing_in_order;

static void passing_send(void *arg)
{
    int i;
    (void)arg;
    while (!__atomic_load_n(&passing_started, __ATOMIC_SEQ_CST))
        ; /* the stranger calls all the while the messages pass */
    for (i = 0; i < PASSING_MSGS; ++i)
        kpn_send(passing, &i);
}

static void passing_recv(void *arg)
{
    int i, v;
    (void)arg;
    passing_in_order = 1;
    for (i = 0; kpn_recv(passing, &v) == KPN_OK; ++i)
        passing_in_order &= v == i;
    passing_in_order &= i == PASSING_MSGS;
    __atomic_store_n(&passing_done, 1, __ATOMIC_SEQ_CST);
}

static void passing_stranger(void *arg)
{
    int v = -1;
    (void)arg;
    __atomic_store_n(&passing_started, 1, __ATOMIC_SEQ_CST);
    do {
        passing_accepted += kpn_send(passing, &v) != KPN_EPERM;
        passing_accepted += kpn_recv(passing, &v) != KPN_EPERM;
        passing_accepted += kpn_send_sized(passing, &v, sizeof v) != KPN_EPERM;
        passing_accepted += kpn_recv_sized(passing, &v, sizeof v) != KPN_EPERM;
    } while (!__atomic_load_n(&passing_done, __ATOMIC_SEQ_CST));
}

void test_a_stranger_races_nothing_while_both_ends_pass_messages(void)
{
    kpn_proc *w, *r;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    w = spawn_on("writer", passing_send, NULL, 0);
    r = spawn_on("reader", passing_recv, NULL, 0);
    (void)spawn_on("stranger", passing_stranger, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &passing, w, r, sizeof(int), 4));
    passing_started = passing_done = passing_accepted = passing_in_order = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, passing_accepted);
    TEST_ASSERT_EQUAL_INT(1, passing_in_order);
}

/* ------------------------------------------------------------ local walks */
/* A and B each send three messages on their own channel of capacity 1,
 * then read three of the other's: an artificial deadlock (thesis figure
 * 3.5).  A third runner spins without ever blocking until both are done,
 * so the net is never at rest meanwhile: the deadlock must be found as
 * it closes, by the walk of the block that closes it.  With A and B on
 * one runner that walk starts on that runner's lock alone and must not
 * stop there; across two runners it takes every lock. */
static int pair_done;
static long spun;

struct duo { kpn_chan *out, *in; int got[3]; int sent; };

static void duo_send_then_read(void *arg)
{
    struct duo *d = arg;
    int i, v;
    for (i = 0; i < 3; ++i)
        kpn_send(d->out, &i);
    __atomic_store_n(&d->sent, 1, __ATOMIC_SEQ_CST);
    for (i = 0; i < 3 && kpn_recv(d->in, &v) == KPN_OK; ++i)
        d->got[i] = v;
    __atomic_add_fetch(&pair_done, 1, __ATOMIC_SEQ_CST);
}

static void spinner(void *arg)
{
    long limit = 1000000000L;
    (void)arg;
    for (spun = 0; spun < limit && __atomic_load_n(&pair_done, __ATOMIC_SEQ_CST) < 2; ++spun)
        ;
}

void test_a_deadlock_is_resolved_as_it_closes_on_one_runner_or_across_two(void)
{
    static struct duo a, b;
    unsigned home_b;
    kpn_proc *pa, *pb, *s;
    kpn_stats st;
    int i;

    for (home_b = 0; home_b < 2; ++home_b) {
        init(3, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &pa, "A", duo_send_then_read, &a, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &pb, "B", duo_send_then_read, &b, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &s, "spinner", spinner, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(pa, 0));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(pb, home_b));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(s, 2));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &a.out, pa, pb, sizeof(int), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &b.out, pb, pa, sizeof(int), 1));
        b.in = a.out;
        a.in = b.out;
        pair_done = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(2, pair_done);
        TEST_ASSERT_LESS_THAN(1000000000L, spun); /* done before the spinner gave up */
        for (i = 0; i < 3; ++i) {
            TEST_ASSERT_EQUAL_INT(i, a.got[i]);
            TEST_ASSERT_EQUAL_INT(i, b.got[i]);
        }
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_GREATER_THAN(0, (long)st.resolutions);
    }
}

/* A walk that leaves its runner is put off, and made within
 * KPNI_WALKS_AFTER switches of that runner even while it never runs out
 * of work.  The cycle of the test above spans runners 0 and 1, each of
 * which also runs a ping-pong pair of its own, so that neither is ever
 * idle while the pairs run and only the bound on switches can make the
 * walks A and B put off.  A notes how many round trips its runner's
 * pair had made when its sends went through: without the bound, every
 * one of them.  With B on runner 1 the pair waits until B has blocked,
 * so that the cycle is closed before the rounds start.  With A and B
 * both on runner 0 the cycle is resolved as it closes, as on one
 * runner, well before the bound.
 *
 * The pairs stop once A and B are done, and may run far more rounds
 * than the bound needs: with B on runner 1, A goes on only once runner
 * 1 has run B, and a host that runs other work may keep that runner's
 * thread off every CPU for thousands of runner 0's rounds (with a busy
 * loop on one of two CPUs, B ran after 13 000 of them, although the
 * walk that released it was made at runner 0's 260th switch). */
struct busy { kpn_chan *to, *back; long rounds, done; uint64_t oldest_note; int noted; };
static struct busy busy[2];
static long a_sent_at;

/* B, which busy[0]'s pair waits for (NULL: none), and whether it came
 * to wait on its channel, or got past its sends before the pair looked
 * (a host that kept runner 0's thread off its CPU meanwhile lets runner
 * 1 make the walk that frees it first) */
static kpn_proc *ping_waits_for;
static kpn_chan *ping_waits_on;
static const int *ping_passed;
static int ping_saw_wait;

/* The walks the ping's runner has put off, in that runner's switches:
 * the ping runs on it, and only it notes walks or counts its switches
 * (another runner, making the walks, clears the notes), so the bound
 * holds here however the host shares its CPUs between the runners. */
static void note_walks(struct busy *b)
{
    const kpni_runner *r = &net->runners[b - busy];

    if (KPNI_LOAD(&r->nwalks) != 0) {
        b->noted = 1;
        if (r->switches - r->walks_since > b->oldest_note)
            b->oldest_note = r->switches - r->walks_since;
    }
}

static void busy_ping(void *arg)
{
    struct busy *b = arg;
    long i, v;

    /* B, on the other runner, closes the cycle: until it has, runner 0's
     * rounds would only race that runner's thread to start (on a loaded
     * host it once had not run by the end of them) */
    if (b == &busy[0] && ping_waits_for != NULL)
        ping_saw_wait = waits_on(ping_waits_for, KPN_PROC_BLOCKED_WRITE, ping_waits_on, ping_passed);
    for (i = 0; i < b->rounds && __atomic_load_n(&pair_done, __ATOMIC_SEQ_CST) < 2; ++i) {
        kpn_send(b->to, &i);
        if (kpn_recv(b->back, &v) != KPN_OK || v != i)
            return;
        b->done++;
        note_walks(b);
    }
}

static void busy_pong(void *arg)
{
    struct busy *b = arg;
    long v;
    while (kpn_recv(b->to, &v) == KPN_OK)
        kpn_send(b->back, &v);
}

static void duo_noting(void *arg)
{
    struct duo *d = arg;
    int i, v;
    for (i = 0; i < 3; ++i)
        kpn_send(d->out, &i);
    a_sent_at = busy[0].done; /* A and busy[0] share runner 0: no race */
    for (i = 0; i < 3 && kpn_recv(d->in, &v) == KPN_OK; ++i)
        d->got[i] = v;
    __atomic_add_fetch(&pair_done, 1, __ATOMIC_SEQ_CST);
}

void test_a_walk_put_off_is_made_within_its_bound_while_its_runner_stays_busy(void)
{
    static struct duo a, b;
    /* far more than the bound allows; and more than a runner's pair
     * makes while the other runner's thread waits for a CPU on a loaded
     * host (at 10^6, runner 1's once ran them all, CI and another suite
     * running on the same two CPUs): the pairs stop as A and B finish */
    const long rounds = 10000000;
    kpn_proc *pa, *pb, *ping_p, *pong_p;
    kpn_stats st;
    unsigned k, home_b;
    int i;

    for (home_b = 2; home_b-- > 0;) {
        init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        pa = spawn_on("A", duo_noting, &a, 0);
        pb = spawn_on("B", duo_send_then_read, &b, home_b);
        ping_waits_for = home_b != 0 ? pb : NULL; /* on runner 0, B waits for the pair */
        ping_saw_wait = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &a.out, pa, pb, sizeof(int), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &b.out, pb, pa, sizeof(int), 1));
        b.in = a.out;
        a.in = b.out;
        ping_waits_on = b.out;
        ping_passed = &b.sent;
        for (k = 0; k < 2; ++k) {
            busy[k].rounds = rounds;
            busy[k].done = 0;
            busy[k].oldest_note = 0;
            busy[k].noted = 0;
            ping_p = spawn_on("ping", busy_ping, &busy[k], k);
            pong_p = spawn_on("pong", busy_pong, &busy[k], k);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &busy[k].to, ping_p, pong_p, sizeof(long), 1));
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &busy[k].back, pong_p, ping_p, sizeof(long), 1));
        }
        pair_done = 0;
        a_sent_at = -1;
        a.sent = b.sent = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(2, pair_done);
        TEST_ASSERT_TRUE(a_sent_at >= 0);
        TEST_ASSERT_EQUAL_INT(home_b != 0, ping_saw_wait);
        if (home_b == 0) /* as it closed */
            TEST_ASSERT_LESS_THAN(KPNI_WALKS_AFTER / 4, a_sent_at);
        /* Across runners the cycle's last block puts its walk off; each
         * runner makes its walks at its first block KPNI_WALKS_AFTER
         * switches after its first note, or another runner makes them
         * sooner.  A round is two switches of the pair, and the ping looks
         * once a round. */
        TEST_ASSERT_EQUAL_INT(home_b != 0, busy[0].noted || busy[1].noted);
        for (k = 0; k < 2; ++k)
            TEST_ASSERT_LESS_OR_EQUAL(KPNI_WALKS_AFTER + 4, (long)busy[k].oldest_note);
        /* While the pairs ran, where the two runners run at once.  Where
         * they take turns (runners_run_at_once), runner 1 may find
         * runner 0's lock held at each of its turns, for the walks and
         * for B's exit, until runner 0's pair is done: the walks are
         * made, late, and the test checks the rest. */
        if (runners_run_at_once()) {
            TEST_ASSERT_TRUE(busy[0].done < rounds); /* stopped as A and B were done */
            TEST_ASSERT_TRUE(busy[1].done < rounds);
            if (home_b != 0)
                TEST_ASSERT_LESS_THAN(rounds, a_sent_at);
        }
        for (i = 0; i < 3; ++i) {
            TEST_ASSERT_EQUAL_INT(i, a.got[i]);
            TEST_ASSERT_EQUAL_INT(i, b.got[i]);
        }
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_GREATER_THAN(0, (long)st.resolutions);
    }
}

/* Two runners that run dry at about the same moment, each with nothing
 * to do under every lock (no walks put off, no placement to learn under
 * KPN_POLICY_STATIC): each counts itself idle under its own lock alone
 * (runners.c, idle_alone), and whichever counts last must still find the
 * net at rest, or the run never ends.  A and B, one on each runner,
 * trade 50 messages and return; or each waits first to read from the
 * other, a true deadlock found at rest.  Many runs, so that the two
 * runners often run dry together. */
static struct duo trade_a, trade_b;

static void trade_ping(void *arg)
{
    struct duo *d = arg;
    long i, v;

    for (i = 0; i < 50 && kpn_send(d->out, &i) == KPN_OK && kpn_recv(d->in, &v) == KPN_OK &&
                v == i;
         ++i)
        d->got[0]++;
}

static void trade_pong(void *arg)
{
    struct duo *d = arg;
    long v;

    while (kpn_recv(d->in, &v) == KPN_OK && kpn_send(d->out, &v) == KPN_OK)
        d->got[0]++;
}

static void trade_reads_first(void *arg)
{
    struct duo *d = arg;
    long v;

    if (kpn_recv(d->in, &v) == KPN_OK)
        d->got[0]++;
}

void test_two_runners_that_run_dry_together_find_the_net_at_rest(void)
{
    kpn_proc *pa, *pb;
    kpn_stats st;
    int run, deadlock;

    for (run = 0; run < 400; ++run) {
        deadlock = run % 2;
        init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        trade_a.got[0] = trade_b.got[0] = 0;
        pa = spawn_on("A", deadlock ? trade_reads_first : trade_ping, &trade_a, 0);
        pb = spawn_on("B", deadlock ? trade_reads_first : trade_pong, &trade_b, 1);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &trade_a.out, pa, pb, sizeof(long), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &trade_b.out, pb, pa, sizeof(long), 1));
        trade_a.in = trade_b.out;
        trade_b.in = trade_a.out;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_INT(deadlock ? 0 : 50, trade_a.got[0]);
        TEST_ASSERT_EQUAL_INT(deadlock ? 0 : 50, trade_b.got[0]);
        TEST_ASSERT_EQUAL_UINT64(deadlock ? 1u : 0u, st.true_deadlocks);
    }
}

/* A runner whose process runs on without blocking does not hold up
 * another that takes every lock.  Runner 1: R blocks reading from W;
 * Q and S pass messages, so that runner 1 parks and switches while it
 * is 'own' and takes its lock at blocks with plain stores (runners.c,
 * "Biased locks").  Runner 0: W, once R waits, sends it its message,
 * waits until R spins, and ends: its exit takes every lock, runner 1's
 * among them, while R runs on without blocking.  Only after the exit
 * does G, on W's other channel, see the end and let R stop.  A taker
 * that waited for runner 1's next block would wait for R, and R for G. */
static kpn_proc *bi_r;
static kpn_chan *bi_to_r, *bi_to_g, *bi_to_s;
static int bi_spinning, bi_done, bi_r_saw;

static void bias_w(void *arg)
{
    int i = 3;
    (void)arg;
    if (!waits_on(bi_r, KPN_PROC_BLOCKED_READ, bi_to_r, NULL))
        return;
    kpn_send(bi_to_r, &i);
    (void)spin_while(&bi_spinning, 0, 1);
}

static void bias_g(void *arg)
{
    int i;
    (void)arg;
    if (kpn_recv(bi_to_g, &i) == KPN_EOF)
        __atomic_store_n(&bi_done, 1, __ATOMIC_SEQ_CST);
}

static void bias_r(void *arg)
{
    int i = 0;
    (void)arg;
    if (kpn_recv(bi_to_r, &i) != KPN_OK || i != 3)
        return;
    __atomic_store_n(&bi_spinning, 1, __ATOMIC_SEQ_CST);
    bi_r_saw = spin_while(&bi_done, 0, 1);
}

static void bias_q(void *arg)
{
    int i = 0;
    (void)arg;
    while (!__atomic_load_n(&bi_spinning, __ATOMIC_SEQ_CST))
        kpn_send(bi_to_s, &i);
}

static void bias_s(void *arg)
{
    int i;
    (void)arg;
    while (kpn_recv(bi_to_s, &i) == KPN_OK) {
    }
}

void test_a_runner_whose_process_runs_on_does_not_hold_up_one_taking_every_lock(void)
{
    kpn_proc *w, *g, *q, *s;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    w = spawn_on("W", bias_w, NULL, 0);
    g = spawn_on("G", bias_g, NULL, 0);
    bi_r = spawn_on("R", bias_r, NULL, 1);
    q = spawn_on("Q", bias_q, NULL, 1);
    s = spawn_on("S", bias_s, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &bi_to_r, w, bi_r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &bi_to_g, w, g, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &bi_to_s, q, s, sizeof(int), 1));
    bi_spinning = bi_done = bi_r_saw = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, bi_r_saw);
    TEST_ASSERT_EQUAL_INT(1, bi_done);
}

/* White-box, on the runners of a net that has not run: another thread
 * takes the lock of runner 1, which is biased and 'inside' it, as its
 * thread is between a block's plain store and its switch.  The bias
 * stays (that thread runs on without a block), so the taker has every
 * thread fenced and then waits for 'inside' to clear: it must not take
 * the lock before, and must take it after. */
static void lock_other_thread(void *arg)
{
    kpni_lock_other(NULL, (kpni_runner *)arg);
}

/* A thread of the test's own, started and joined through the port, as
 * the runners' are: on a stack of its own from a static array. */
static union {
    unsigned char bytes[256 * 1024];
    long double align;
} th_stack;
static union {
    unsigned char bytes[256];
    long double align;
} th_handle;

static kpn_port_thread *th_handle_at(void)
{
    return (kpn_port_thread *)(void *)(((uintptr_t)th_handle.bytes + 15) & ~(uintptr_t)15);
}

static void th_start(void (*fn)(void *), void *arg)
{
    size_t size = sizeof th_stack.bytes - 16;
    unsigned char *stack = (unsigned char *)(((uintptr_t)th_stack.bytes + 15) & ~(uintptr_t)15);

    TEST_ASSERT_TRUE(kpn_port_thread_size() <= sizeof th_handle.bytes - 16);
    TEST_ASSERT_TRUE(kpn_port_thread_stack_min() <= size);
    TEST_ASSERT_EQUAL_INT(0, kpn_port_thread_start(th_handle_at(), stack, size, fn, arg));
}

/* Spins until the unsigned at 'p' is 'v', for at most a billion looks;
 * whether it came to. */
static int spin_until_u(const unsigned *p, unsigned v)
{
    long spins;

    for (spins = 0; spins < 1000000000L; ++spins)
        if (__atomic_load_n(p, __ATOMIC_SEQ_CST) == v)
            return 1;
    return 0;
}

void test_a_thread_taking_a_biased_runners_lock_waits_until_its_owner_is_out(void)
{
    kpni_runner *r = &net->runners[1];
    long i;
    int saw_taken = 0;

    r->bias = 1;
    r->inside = 1;
    th_start(lock_other_thread, r);
    TEST_ASSERT_TRUE(spin_until_u(&r->revoke, 1));
    /* the taker spins, fences, then waits on 'inside': a long while */
    for (i = 0; i < 20000000L; ++i)
        saw_taken |= __atomic_load_n(&r->lock, __ATOMIC_SEQ_CST);
    TEST_ASSERT_EQUAL_INT(0, saw_taken);
    TEST_ASSERT_EQUAL_UINT(1, __atomic_load_n(&r->revoke, __ATOMIC_SEQ_CST));
    __atomic_store_n(&r->inside, 0, __ATOMIC_SEQ_CST); /* the owner's unlock */
    kpn_port_thread_join(th_handle_at());
    TEST_ASSERT_EQUAL_INT(1, r->lock);
    TEST_ASSERT_EQUAL_UINT(0, r->revoke);
    r->lock = 0;
    r->bias = 0;
}

/* White-box: a thread that tries every lock at once, holding runner 0's
 * (input delivered at a park, kpni_lock_up_try), never takes a biased
 * runner's lock, whose thread would not see it taken, and lets go of
 * what it took; with the bias given up it takes every lock. */
void test_a_try_for_every_lock_passes_a_biased_runner_by(void)
{
    kpni_runner *r0 = &net->runners[0], *r1 = &net->runners[1];

    r0->lock = 1;
    r1->bias = 1;
    TEST_ASSERT_EQUAL_INT(0, kpni_lock_up_try(r0));
    TEST_ASSERT_EQUAL_INT(0, r1->lock);
    TEST_ASSERT_EQUAL_UINT(0, r1->revoke);
    TEST_ASSERT_EQUAL_INT(1, r0->lock);
    r1->bias = 0;
    TEST_ASSERT_EQUAL_INT(1, kpni_lock_up_try(r0));
    TEST_ASSERT_EQUAL_INT(1, r1->lock);
    TEST_ASSERT_EQUAL_INT(1, r0->lock);
    kpni_lock_down(r0);
    TEST_ASSERT_EQUAL_INT(0, r1->lock);
    r0->lock = 0;
}

/* White-box: a wake from another runner that finds the process being
 * moved (its 'wait' KPNI_MOVING, pull_home) waits for the move to end,
 * then claims it: READY, on its runner's inbox, which that runner's
 * thread empties into its queue, the process's mark taken from the
 * waker's.  Nothing happens to the process while the move lasts. */
static kpn_proc *mv_by, *mv_p;
static kpn_chan *mv_c;

static void inbox_wake_thread(void *arg)
{
    (void)arg;
    kpni_inbox_wake(mv_by, mv_p, mv_c, KPN_PROC_BLOCKED_READ);
}

void test_a_wake_from_another_runner_waits_for_a_move_to_end(void)
{
    kpni_runner *r1;
    long i;
    int changed = 0;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    mv_by = spawn_on("by", idle, NULL, 0);
    mv_p = spawn_on("p", idle, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &mv_c, mv_by, mv_p, sizeof(int), 1));
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE(mv_p->runner == r1 && r1->head == mv_p && r1->tail == mv_p);
    kpni_queue_unlink(r1, mv_p); /* blocked, below: on no queue */
    mv_by->watched = 1; /* its mark travels with the claim */
    r1->sleeping = KPNI_AWAKE;
    mv_p->state = KPN_PROC_BLOCKED_READ;
    mv_p->wait = KPNI_MOVING;
    th_start(inbox_wake_thread, NULL);
    for (i = 0; i < 20000000L; ++i)
        changed |= __atomic_load_n(&mv_p->state, __ATOMIC_SEQ_CST) != KPN_PROC_BLOCKED_READ ||
                   __atomic_load_n(&r1->inbox, __ATOMIC_SEQ_CST) != NULL;
    TEST_ASSERT_EQUAL_INT(0, changed);
    TEST_ASSERT_TRUE(__atomic_load_n(&mv_p->wait, __ATOMIC_SEQ_CST) == KPNI_MOVING);
    __atomic_store_n(&mv_p->wait, mv_c, __ATOMIC_SEQ_CST); /* the move ends */
    kpn_port_thread_join(th_handle_at());
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, mv_p->state);
    TEST_ASSERT_TRUE(mv_p->wait == KPNI_CLAIMED_MARK);
    TEST_ASSERT_TRUE(r1->inbox == mv_p);
    TEST_ASSERT_TRUE(r1->head == NULL);
    mv_p->watched = 0;
    kpni_inbox_take(r1);
    TEST_ASSERT_TRUE(r1->inbox == NULL);
    TEST_ASSERT_TRUE(r1->head == mv_p);
    TEST_ASSERT_TRUE(mv_p->wait == NULL);
    TEST_ASSERT_EQUAL_INT(1, mv_p->watched);
    /* a second wake finds it woken already, and does nothing */
    kpni_inbox_wake(mv_by, mv_p, mv_c, KPN_PROC_BLOCKED_READ);
    TEST_ASSERT_TRUE(r1->inbox == NULL);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, mv_p->state);
}

/* An idle runner's look at the processes parked on crossing channels
 * (kpni_runners_wake_missed), white-box: p, blocked reading a crossing
 * channel that holds a message its writer's look missed, is claimed and
 * pushed on its runner's inbox.  The idle runner takes its own
 * processes whether it is own or not (rounds 0 and 1: under
 * KPN_POLICY_STATIC it stays own as it idles, and its thread runs none
 * of them then), and one that has moved to another runner only where
 * that runner is not own (round 3): an own runner's thread may be waking
 * it with no lock, and its partner's flush finds it (round 2). */
void test_an_idle_runner_wakes_its_own_parked_process_own_or_not(void)
{
    kpn_proc *p, *q;
    kpn_chan *c;
    kpni_runner *r0, *r1, *home;
    int round;

    for (round = 0; round < 4; ++round) {
        init(2, round < 2 ? KPN_POLICY_STATIC : KPN_POLICY_WS, KPN_WAKE_LAST);
        q = spawn_on("q", idle, NULL, round < 2 ? 1 : 0);
        p = spawn_on("p", idle, NULL, round < 2 ? 0 : 1);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, q, p, sizeof(int), 1));
        r0 = &net->runners[0];
        r1 = &net->runners[1];
        home = round < 2 ? r0 : r1;
        TEST_ASSERT_TRUE(p->runner == home);
        kpni_queue_unlink(home, p); /* blocked, below: on no queue */
        kpni_chan_set_cross(c, 1);
        r0->sleeping = r1->sleeping = KPNI_AWAKE;
        p->state = KPN_PROC_BLOCKED_READ;
        p->wait = c;
        q->watched = 0;
#if !KPN_COMPACT /* the compact layout has no word: its messages always look */
        KPNI_WAITING(c, KPN_PROC_BLOCKED_READ) = 1;
#endif
        c->sent = 1; /* q's message, whose look at p came too soon */
        r0->parked_cross[0] = p;
        r0->own = round == 0;
        r1->own = round == 2;

        kpni_runners_wake_missed(r0);
        r0->own = r1->own = 0;
        if (round == 2) {
            TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, p->state);
            TEST_ASSERT_TRUE(p->wait == c);
            TEST_ASSERT_NULL(r0->inbox);
            TEST_ASSERT_NULL(r1->inbox);
            continue;
        }
        TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, p->state);
        TEST_ASSERT_TRUE(p->wait == KPNI_CLAIMED);
        TEST_ASSERT_TRUE(home->inbox == p);
        TEST_ASSERT_NULL((home == r0 ? r1 : r0)->inbox);
#if !KPN_COMPACT
        TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(c, KPN_PROC_BLOCKED_READ));
#endif
        TEST_ASSERT_EQUAL_INT(0, r0->lock);
        TEST_ASSERT_EQUAL_INT(0, r1->lock);
        kpni_inbox_take(home);
        TEST_ASSERT_TRUE(home->head == p && p->wait == NULL);
    }
}

/* A walk put off that has gone stale, its process woken since, is made
 * when that process blocks again: here on a read from its own channel,
 * a true deadlock of one process, whose walk takes every lock and makes
 * the walks put off first.  The stale walk then finds the cycle and
 * records it, and the block's own walk must not record it again.
 *
 * Runner 0: P, then a spinner.  Runner 1: W, then Q.  W blocks writing
 * to Q (its walk stays on runner 1 and marks Q).  P blocks writing its
 * second message to Q across the runners: its walk is put off, and the
 * spinner keeps runner 0 from running dry, which would make it.  Q,
 * once P waits, takes one message (waking P, who inherits Q's mark) and
 * lets the spinner end; P then finishes its send and reads its own empty
 * channel.  Q spins meanwhile, so that runner 1 does not run dry either
 * and make P's stale walk before P blocks again. */
static kpn_proc *st_p;
static kpn_chan *st_x, *st_z, *st_self;
static int st_go, st_q_got[3];

static void stale_p(void *arg)
{
    int i = 7;
    (void)arg;
    kpn_send(st_x, &i);
    kpn_send(st_x, &i);
    (void)kpn_recv(st_self, &i); /* waits on itself for ever */
}

static void stale_spinner(void *arg)
{
    (void)arg;
    (void)spin_while(&st_go, 0, 1);
}

static void stale_w(void *arg)
{
    int i = 5;
    (void)arg;
    kpn_send(st_z, &i);
    kpn_send(st_z, &i);
}

static void stale_q(void *arg)
{
    (void)arg;
    if (!waits_on(st_p, KPN_PROC_BLOCKED_WRITE, st_x, NULL))
        return;
    (void)kpn_recv(st_x, &st_q_got[0]);
    __atomic_store_n(&st_go, 1, __ATOMIC_SEQ_CST);
    if (!waits_on(st_p, KPN_PROC_BLOCKED_READ, st_self, NULL))
        return;
    (void)kpn_recv(st_x, &st_q_got[1]);
    (void)kpn_recv(st_z, &st_q_got[2]);
    (void)kpn_recv(st_z, &st_q_got[2]);
}

void test_a_stale_walk_put_off_and_the_block_that_closes_its_cycle_record_it_once(void)
{
    kpn_proc *w, *q;
    kpn_stats st;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    st_p = spawn_on("P", stale_p, NULL, 0);
    (void)spawn_on("spinner", stale_spinner, NULL, 0);
    w = spawn_on("W", stale_w, NULL, 1);
    q = spawn_on("Q", stale_q, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &st_x, st_p, q, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &st_z, w, q, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &st_self, st_p, st_p, sizeof(int), 1));
    st_go = 0;
    st_q_got[0] = st_q_got[1] = st_q_got[2] = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(7, st_q_got[0]);
    TEST_ASSERT_EQUAL_INT(7, st_q_got[1]); /* P's second send went through */
    TEST_ASSERT_EQUAL_INT(5, st_q_got[2]);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, st_p->state);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
}

/* The same with the cycle closed by a read.  A sends two messages on a
 * channel of capacity 1 and blocks writing the second; only then does B
 * read from A's other channel, which is empty: B's read-block closes
 * the cycle, and B must walk it there.  A read-block walks only if its
 * process is marked and some process waits on it (resolve.c); with
 * several runners nothing counts the waiters, and the look at the other
 * ends of B's channels must find A.  The spinner keeps the net from rest
 * meanwhile, as above. */
static kpn_chan *rd_full, *rd_empty;
static kpn_proc *rd_writer;
static int rd_got[3];

static void rd_a(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 2; ++i)
        kpn_send(rd_full, &i);
    kpn_send(rd_empty, &i);
    __atomic_add_fetch(&pair_done, 1, __ATOMIC_SEQ_CST);
}

static void rd_b(void *arg)
{
    (void)arg;
    /* on A's runner A has run first; on another, wait for its block */
    (void)waits_on(rd_writer, KPN_PROC_BLOCKED_WRITE, rd_full, NULL);
    if (kpn_recv(rd_empty, &rd_got[2]) == KPN_OK && kpn_recv(rd_full, &rd_got[0]) == KPN_OK)
        kpn_recv(rd_full, &rd_got[1]);
    __atomic_add_fetch(&pair_done, 1, __ATOMIC_SEQ_CST);
}

void test_a_deadlock_closed_by_a_read_is_resolved_as_it_closes(void)
{
    unsigned home_b;
    kpn_proc *pb, *s;
    kpn_stats st;

    for (home_b = 0; home_b < 2; ++home_b) {
        init(3, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &rd_writer, "A", rd_a, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &pb, "B", rd_b, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &s, "spinner", spinner, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(rd_writer, 0));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(pb, home_b));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(s, 2));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rd_full, rd_writer, pb, sizeof(int), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rd_empty, rd_writer, pb, sizeof(int), 1));
        pair_done = 0;
        rd_got[0] = rd_got[1] = rd_got[2] = -1;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(2, pair_done);
        TEST_ASSERT_LESS_THAN(1000000000L, spun); /* done before the spinner gave up */
        TEST_ASSERT_EQUAL_INT(0, rd_got[0]);
        TEST_ASSERT_EQUAL_INT(1, rd_got[1]);
        TEST_ASSERT_EQUAL_INT(2, rd_got[2]);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_INT(1, (int)st.resolutions);
    }
}

/* ------------------------------------------------------------ stale marks */
/* A marked process that read-blocks while nobody waits on it lets go of
 * its mark (resolve.c, "Stale marks"), on a runner that shares as on
 * one runner, where its count of waiters is whole: none of its channels
 * crosses (kpn_int.h, KPNI_NWAITERS_ADD_ON).  One with a channel that
 * crosses keeps it: a process on another runner may be blocking on that
 * channel as it looks.  sm_w and sm_r share runner 0: sm_w's second
 * send finds the channel full and walks, which marks sm_r, the chain's
 * end; sm_r takes the first message, releasing sm_w, and read-blocks
 * on the empty channel, sm_w only ready; sm_w, back from its send,
 * notes sm_r's mark before it sends again.  sm_t, on runner 1 where
 * there is one, sends sm_r one message on a channel that crosses
 * ('cross') and never waits on it. */
static kpn_proc *sm_w, *sm_r;
static kpn_chan *sm_wr, *sm_tr;
static int sm_mark;

/* What went wrong in the processes, which may run on a runner's thread,
 * where an assertion cannot unwind to the test, and at once on two:
 * counted atomically, asserted after the run. */
static int sm_bad;
#define SM_BAD(cond) ((void)__atomic_add_fetch(&sm_bad, (cond) ? 1 : 0, __ATOMIC_RELAXED))

static void sm_writer(void *arg)
{
    int i;

    (void)arg;
    for (i = 0; i < 3; ++i) {
        SM_BAD(kpn_send(sm_wr, &i) != KPN_OK);
        if (i == 1)
            sm_mark = __atomic_load_n(&sm_r->watched, __ATOMIC_RELAXED);
    }
}

static void sm_reader(void *arg)
{
    int v, n = 0;

    (void)arg;
    while (kpn_recv(sm_wr, &v) == KPN_OK)
        SM_BAD(v != n++);
    SM_BAD(n != 3);
    if (sm_tr != NULL)
        SM_BAD(kpn_recv(sm_tr, &v) != KPN_OK);
}

static void sm_sender(void *arg)
{
    int v = 7;

    (void)arg;
    SM_BAD(kpn_send(sm_tr, &v) != KPN_OK);
}

void test_a_marked_read_block_that_nobody_waits_on_lets_go_of_its_mark(void)
{
    unsigned runners;
    int cross;
    kpn_proc *t;

    for (runners = 1; runners <= 2; ++runners) {
        for (cross = 0; cross <= 1; ++cross) {
            init(runners, KPN_POLICY_STATIC, KPN_WAKE_LAST);
            sm_w = spawn_on("w", sm_writer, NULL, 0);
            sm_r = spawn_on("r", sm_reader, NULL, 0);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &sm_wr, sm_w, sm_r, sizeof(int), 1));
            sm_tr = NULL;
            if (cross) {
                t = spawn_on("t", sm_sender, NULL, runners - 1);
                TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &sm_tr, t, sm_r, sizeof(int), 1));
            }
            sm_mark = -1;
            sm_bad = 0;
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
            TEST_ASSERT_EQUAL_INT(0, sm_bad);
            /* kept only where sm_r's channel from sm_t crosses; in the
             * compact layout every channel crosses on two runners */
            TEST_ASSERT_EQUAL_INT(runners == 2 && (cross || KPN_COMPACT), sm_mark);
        }
    }
}

/* ------------------------------------------------------------ missed looks */
/* Two tests of who wakes a reader on another runner: a writer on runner
 * 0 sends one message a round to a reader pinned to runner 1, once the
 * reader has parked and its runner has gone idle, and waits for it to
 * arrive without blocking, so that the writer's own block makes no look.
 * A round that does not arrive is late: the test stops there and fails. */
static struct rounds {
    kpn_proc *writer, *reader;
    kpn_chan *chan;
    int rounds, got, bad, late;
} rd;

/* The start of the writer's round: the reader has parked, and its runner
 * is idle (asleep, if 'asleep_only'; else spinning or asleep). */
static void round_start(int asleep_only)
{
    kpni_runner *other = &net->runners[1];

    while (__atomic_load_n(&rd.reader->state, __ATOMIC_SEQ_CST) != KPN_PROC_BLOCKED_READ)
        ;
    if (asleep_only)
        (void)spin_while(&other->sleeping, KPNI_ASLEEP, 0);
    else
        (void)spin_while(&other->sleeping, KPNI_AWAKE, 1);
}

/* The end of round k: whether its message arrived (one a round: the
 * count goes from k to k + 1). */
static int round_done(int k)
{
    if (spin_while(&rd.got, k, 1))
        return 1;
    rd.late = 1;
    return 0;
}

static void rounds_receiver(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(rd.chan, &v) == KPN_OK) {
        rd.bad += v != __atomic_load_n(&rd.got, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&rd.got, 1, __ATOMIC_SEQ_CST);
    }
}

/* The net of both tests, run; 'writer' the writer's body. */
static void run_rounds(void (*writer)(void *), int rounds)
{
    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    memset(&rd, 0, sizeof rd);
    rd.rounds = rounds;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &rd.writer, "writer", writer, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          kpn_spawn(net, &rd.reader, "reader", rounds_receiver, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(rd.writer, 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(rd.reader, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rd.chan, rd.writer, rd.reader, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, rd.late);
    TEST_ASSERT_EQUAL_INT(0, rd.bad);
    TEST_ASSERT_EQUAL_INT(rounds, rd.got);
}

/* A send on a crossing channel looks at the reader without a fence, and
 * may miss one that is parking at that very instant; the reader's runner,
 * idle, must find it.  Here the writer puts each message in the ring
 * itself and makes no look at all, once the reader has parked and its
 * runner spins idle: only that runner's look can wake it.  If
 * the runner was already asleep (the writer was held up), the round
 * falls back to the writer's fenced look, as its next block would. */
static int blind_found_idle;

static void put_without_look(kpn_chan *c, int v)
{
    memcpy(c->ring + c->wpos, &v, sizeof v);
    c->wpos += sizeof v;
    if (c->wpos == KPNI_WRING_BYTES(c))
        c->wpos = 0;
    __atomic_store_n(&c->sent, c->sent + 1, __ATOMIC_RELEASE);
}

static void blind_writer(void *arg)
{
    kpni_runner *other = &net->runners[1];
    int k;

    (void)arg;
    for (k = 0; k < rd.rounds; ++k) {
        round_start(0); /* parked, and its runner has nothing else to do */
        put_without_look(rd.chan, k);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the put, then the look at 'other' */
        if (__atomic_load_n(&other->sleeping, __ATOMIC_SEQ_CST) == KPNI_SPINNING) {
            blind_found_idle++;
        } else {
            /* asleep already: the look a block makes */
            rd.writer->unfenced[KPNI_WRITES] = rd.chan;
            kpni_chan_flush(rd.writer, KPNI_WRITES);
        }
        if (!round_done(k))
            break;
    }
    kpn_close(rd.chan);
}

void test_an_idle_runner_wakes_a_reader_whose_writer_never_looked(void)
{
    blind_found_idle = 0;
    run_rounds(blind_writer, SLOW ? 20 : 200);
    TEST_ASSERT_GREATER_THAN(0, blind_found_idle);
}

/* A send on a crossing channel looks at its reader only if the reader
 * has blocked on the channel since the last look (KPNI_WAITING).  Here
 * the reader parks each time and its runner goes to sleep, so only the
 * send's own look can wake it before the writer blocks.  A block that
 * did not ask for the look, or a send that did not make it, leaves the
 * reader asleep and the round late. */
static int asked_word;

static void asking_writer(void *arg)
{
    int k;

    (void)arg;
    for (k = 0; k < rd.rounds; ++k) {
        round_start(1);
#if !KPN_COMPACT
        /* the reader's block asked for the look */
        asked_word += __atomic_load_n(&KPNI_WAITING(rd.chan, KPN_PROC_BLOCKED_READ),
                                      __ATOMIC_SEQ_CST) == 1;
#endif
        kpn_send(rd.chan, &k);
        if (!round_done(k))
            break;
    }
    kpn_close(rd.chan);
}

void test_a_send_wakes_a_reader_that_blocked_on_its_crossing_channel(void)
{
    asked_word = 0;
    run_rounds(asking_writer, SLOW ? 5 : 20);
    if (!KPN_COMPACT) /* the compact layout has no word: every message looks */
        TEST_ASSERT_EQUAL_INT(rd.rounds, asked_word);
}

/* ------------------------------------------------------------ half a ring */
/* Under a placement a message on a crossing channel whose other end
 * waits on it looks at that end only once half the ring is ready for it,
 * or at the sender's next block, or at once where that end's runner is
 * dormant (chan.c, looks_later).  Runner 0: the writer W, and a helper
 * H that lets W park once first (runners are own from a park on).
 * Runner 1: the reader R, and a spinner that keeps runner 1 busy, so
 * that nothing but W's look changes R's state: woken, R is ready, and
 * waits in runner 1's inbox until the spinner ends.  The channel holds
 * 8. */
static struct half {
    int how;            /* 0: a fourth message; 1: W blocks; 2: runner 1 dormant */
    kpn_proc *w, *r;
    kpn_chan *x, *start, *turn;
    int spinning, go, got, bad;
    int arrived;        /* how 2: R took the message before W blocked or closed */
    unsigned state[4];  /* R's state after each look that could wake it */
} hf;

static void half_helper(void *arg)
{
    int v = 0;

    (void)arg;
    kpn_send(hf.start, &v);
    (void)kpn_recv(hf.turn, &v);
    if (hf.how == 1) {
        /* W has blocked: its block made the look its sends left */
        hf.state[3] = __atomic_load_n(&hf.r->state, __ATOMIC_SEQ_CST);
        __atomic_store_n(&hf.go, 1, __ATOMIC_SEQ_CST);
        kpn_send(hf.start, &v);
    }
}

static void half_spinner(void *arg)
{
    (void)arg;
    __atomic_store_n(&hf.spinning, 1, __ATOMIC_SEQ_CST);
    (void)spin_while(&hf.go, 0, 1);
}

static void half_writer(void *arg)
{
    kpni_runner *other = &net->runners[1];
    int k, v;

    (void)arg;
    (void)kpn_recv(hf.start, &v); /* parks: runner 0 own */
    while (__atomic_load_n(&hf.r->state, __ATOMIC_SEQ_CST) != KPN_PROC_BLOCKED_READ)
        ;
    if (hf.how == 2) {
        while (!__atomic_load_n(&other->dormant, __ATOMIC_SEQ_CST))
            ;
        kpn_send(hf.x, &v);
        hf.arrived = spin_while(&hf.got, 0, 1); /* no block: only the send's look wakes R */
    } else {
        (void)spin_while(&hf.spinning, 0, 1);
        for (k = 0; k < 3; ++k) {
            kpn_send(hf.x, &k);
            hf.state[k] = __atomic_load_n(&hf.r->state, __ATOMIC_SEQ_CST);
        }
        if (hf.how == 0) {
            kpn_send(hf.x, &k);
            hf.state[3] = __atomic_load_n(&hf.r->state, __ATOMIC_SEQ_CST);
            __atomic_store_n(&hf.go, 1, __ATOMIC_SEQ_CST);
        } else {
            kpn_send(hf.turn, &v);
            (void)kpn_recv(hf.start, &v); /* blocks */
        }
    }
    kpn_close(hf.x);
    if (hf.how != 1)
        kpn_send(hf.turn, &v);
}

static void half_reader(void *arg)
{
    int v;

    (void)arg;
    while (kpn_recv(hf.x, &v) == KPN_OK) {
        hf.bad += v != hf.got;
        __atomic_add_fetch(&hf.got, 1, __ATOMIC_SEQ_CST);
    }
}

static void run_half(int how)
{
    kpn_proc *h;

    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    memset(&hf, 0, sizeof hf);
    hf.how = how;
    hf.w = spawn_on("w", half_writer, NULL, 0);
    h = spawn_on("h", half_helper, NULL, 0);
    hf.r = spawn_on("r", half_reader, NULL, 1);
    if (how != 2)
        (void)spawn_on("spinner", half_spinner, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &hf.x, hf.w, hf.r, sizeof(int), 8));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &hf.start, h, hf.w, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &hf.turn, hf.w, h, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, hf.bad);
}

/* R parked through W's first three messages, and woken by the look that
 * 'how' names (the fourth message, or W's block); 'got' messages in all. */
static void check_half(int how, int got)
{
    int k;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout looks at every message");
    run_half(how);
    for (k = 0; k < 3; ++k)
        TEST_ASSERT_EQUAL_UINT(KPN_PROC_BLOCKED_READ, hf.state[k]);
    TEST_ASSERT_EQUAL_UINT(KPN_PROC_READY, hf.state[3]);
    TEST_ASSERT_EQUAL_INT(got, hf.got);
}

void test_a_crossing_send_under_a_placement_wakes_its_reader_at_half_a_ring(void)
{
    check_half(0, 4);
}

void test_a_crossing_send_under_a_placement_wakes_its_reader_at_the_writers_block(void)
{
    check_half(1, 3);
}

void test_a_crossing_send_wakes_at_once_a_reader_whose_runner_is_dormant(void)
{
    run_half(2);
    TEST_ASSERT_TRUE(hf.arrived);
    TEST_ASSERT_EQUAL_INT(1, hf.got);
}

/* The same the other way: under a placement a receive from a crossing
 * channel whose writer waits on it wakes the writer once half the ring
 * is free.  Runner 0: W, which fills the ring and blocks on its ninth
 * message, and a helper that lets it park once first and then spins,
 * so that nothing but R's look changes W's state.  Runner 1: R, and a
 * helper that lets it park once first and start once W waits. */
static struct room {
    kpn_proc *w;
    kpn_chan *x, *start0, *turn0, *start1;
    int spinning, go, got, bad;
    unsigned state[4]; /* W's state after each of R's first four receives */
} rm;

static void room_writer(void *arg)
{
    int k, v = 0;

    (void)arg;
    (void)kpn_recv(rm.start0, &v); /* parks: runner 0 own */
    for (k = 0; k < 8; ++k)
        kpn_send(rm.x, &k);
    kpn_send(rm.turn0, &v);
    kpn_send(rm.x, &k); /* full: blocks */
    kpn_close(rm.x);
}

static void room_helper0(void *arg)
{
    int v = 0;

    (void)arg;
    kpn_send(rm.start0, &v);
    (void)kpn_recv(rm.turn0, &v);
    __atomic_store_n(&rm.spinning, 1, __ATOMIC_SEQ_CST);
    (void)spin_while(&rm.go, 0, 1);
}

static void room_helper1(void *arg)
{
    int v = 0;

    (void)arg;
    while (__atomic_load_n(&rm.w->state, __ATOMIC_SEQ_CST) != KPN_PROC_BLOCKED_WRITE)
        ;
    (void)spin_while(&rm.spinning, 0, 1);
    kpn_send(rm.start1, &v);
}

static void room_reader(void *arg)
{
    int v;

    (void)arg;
    (void)kpn_recv(rm.start1, &v); /* parks: runner 1 own */
    while (kpn_recv(rm.x, &v) == KPN_OK) {
        rm.bad += v != rm.got;
        if (rm.got < 4)
            rm.state[rm.got] = __atomic_load_n(&rm.w->state, __ATOMIC_SEQ_CST);
        if (++rm.got == 4)
            __atomic_store_n(&rm.go, 1, __ATOMIC_SEQ_CST);
    }
}

void test_a_crossing_receive_under_a_placement_wakes_its_writer_at_half_a_ring(void)
{
    kpn_proc *h0, *h1, *r;
    int k;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout looks at every message");
    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    memset(&rm, 0, sizeof rm);
    rm.w = spawn_on("w", room_writer, NULL, 0);
    h0 = spawn_on("h0", room_helper0, NULL, 0);
    r = spawn_on("r", room_reader, NULL, 1);
    h1 = spawn_on("h1", room_helper1, NULL, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rm.x, rm.w, r, sizeof(int), 8));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rm.start0, h0, rm.w, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rm.turn0, rm.w, h0, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &rm.start1, h1, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, rm.bad);
    TEST_ASSERT_EQUAL_INT(9, rm.got);
    for (k = 0; k < 3; ++k)
        TEST_ASSERT_EQUAL_UINT(KPN_PROC_BLOCKED_WRITE, rm.state[k]);
    TEST_ASSERT_EQUAL_UINT(KPN_PROC_READY, rm.state[3]);
}

/* Under work stealing a process that blocks and must walk lets go of its
 * runner's lock to take every lock, and may be woken in that moment
 * while it still runs there (docs/runners.md).  Until it parks, neither
 * a wake by a process on another runner (KPN_WAKE_WAKER) nor a thief
 * may move it: its registers are live on that runner.  White-box: the
 * moment is set up by hand, since no schedule hits it on purpose. */
void test_a_process_still_running_is_neither_moved_by_a_wake_nor_stolen(void)
{
    kpn_proc *p, *q;
    kpni_runner *r0, *r1;

    init(2, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", idle, NULL, STACK));
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE(p->runner == r0 && q->runner == r1); /* spawn order, i mod 2 */

    /* p runs on runner 0 and has marked itself blocked */
    kpni_queue_unlink(r0, p);
    r0->current = p;
    p->state = KPN_PROC_BLOCKED_READ;
    kpni_sched_ready_mt(r1, p); /* woken by a process on runner 1 */
    TEST_ASSERT_TRUE(p->runner == r0);
    TEST_ASSERT_TRUE(r0->head == p && r0->tail == p);
    TEST_ASSERT_TRUE(r1->head == q && r1->tail == q);
    TEST_ASSERT_NULL(kpni_runners_steal(r1));
    TEST_ASSERT_TRUE(p->runner == r0 && r0->head == p);

    /* once it has parked, a thief may take it, and a wake move it */
    r0->current = NULL;
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == p);
    TEST_ASSERT_TRUE(p->runner == r1 && r0->head == NULL);
    p->state = KPN_PROC_BLOCKED_READ; /* it ran on runner 1 and parked there */
    kpni_sched_ready_mt(r0, p);      /* woken by a process on runner 0 */
    TEST_ASSERT_TRUE(p->runner == r0 && r0->head == p);
}

/* Under work stealing a process queued alone behind one that runs is
 * left to its runner until it has waited: on a thief's earlier look it
 * was already there, and its runner has dispatched nothing since (in a
 * fine-grained net the running process has just woken it and is about
 * to block).  Two queued processes, or one behind none, are taken at
 * once.  A wake that leaves a process queued alone does not stop a
 * runner that spins (it looks for itself); any other wake does.
 * White-box, as above. */
void test_a_thief_leaves_a_process_queued_alone_until_it_has_waited(void)
{
    kpn_proc *p, *q, *x, *y;
    kpni_runner *r0, *r1;

    init(2, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &x, "x", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &y, "y", idle, NULL, STACK));
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE(x->runner == r0 && p->runner == r0 && q->runner == r1 && y->runner == r1);
    kpni_queue_unlink(r1, q);
    kpni_queue_unlink(r1, y);

    /* x runs on runner 0, p is queued there alone */
    kpni_queue_unlink(r0, x);
    r0->current = x;
    TEST_ASSERT_TRUE(r0->head == p && r0->tail == p);
    TEST_ASSERT_NULL(kpni_runners_steal(r1)); /* first look */
    r0->switches++;                            /* runner 0 moved on meanwhile */
    TEST_ASSERT_NULL(kpni_runners_steal(r1));
    TEST_ASSERT_TRUE(p->runner == r0 && r0->head == p);
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == p); /* it waited */
    TEST_ASSERT_TRUE(p->runner == r1 && r0->head == NULL);
    /* one look a call, with one other runner; a steal only when it took */
    TEST_ASSERT_EQUAL_UINT64(3, r1->steal_attempts);
    TEST_ASSERT_EQUAL_UINT64(1, r1->steals);

    /* two queued: the back one at once */
    kpni_queue_push_back(r0, p);
    kpni_queue_push_back(r0, y);
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == y);
    /* one queued behind none: at once */
    r0->current = NULL;
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == p);

    /* runner 1 spins, idle: p woken alone on runner 0 (the waker's)
     * leaves it be, y woken behind p stops it */
    r0->current = x;
    r1->sleeping = KPNI_SPINNING;
    net->idle = 1;
    p->state = KPN_PROC_BLOCKED_READ;
    kpni_sched_ready_mt(r0, p);
    TEST_ASSERT_TRUE(r0->head == p && r0->tail == p);
    TEST_ASSERT_EQUAL_INT(KPNI_SPINNING, r1->sleeping);
    TEST_ASSERT_EQUAL_UINT(1, net->idle);
    y->state = KPN_PROC_BLOCKED_READ;
    kpni_sched_ready_mt(r0, y);
    TEST_ASSERT_EQUAL_INT(KPNI_AWAKE, r1->sleeping);
    TEST_ASSERT_EQUAL_UINT(0, net->idle);
}

/* A runner asleep that came back empty-handed from its last wakes is
 * woken for a process queued alone once in KPNI_LONE_RETRY such wakes,
 * however many such runners there are: counted per runner looked at, 15
 * of them were woken one every 68 wakes, and a one-token ring on 16
 * runners could not go solo (docs/benchmarks.md, "Up to 16 runners"). */
void test_fruitless_sleepers_are_woken_once_in_the_retry_count_of_lone_wakes(void)
{
    enum { RUNNERS = 16 };
    kpn_proc *x, *p;
    kpni_runner *r0;
    unsigned i, k, awake = 0;

    init(RUNNERS, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &x, "x", idle, NULL, STACK));
    for (i = 1; i < RUNNERS; ++i) {
        kpn_proc *filler;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &filler, "filler", idle, NULL, STACK));
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    r0 = &net->runners[0];
    TEST_ASSERT_TRUE(x->runner == r0 && p->runner == r0);
    for (i = 0; i < RUNNERS; ++i)
        while (kpni_queue_pop_front(&net->runners[i]) != NULL)
            ;
    r0->current = x; /* x runs on runner 0; the others sleep, fruitless */
    for (i = 1; i < RUNNERS; ++i) {
        net->runners[i].sleeping = KPNI_ASLEEP;
        net->runners[i].fruitless = KPNI_FRUITLESS;
    }
    net->idle = RUNNERS - 1;
    for (k = 1; k <= KPNI_LONE_RETRY; ++k) {
        p->state = KPN_PROC_BLOCKED_READ;
        kpni_sched_ready_mt(r0, p); /* x wakes p, which queues alone */
        TEST_ASSERT_TRUE(r0->head == p && r0->tail == p);
        kpni_queue_unlink(r0, p);
        for (awake = 0, i = 1; i < RUNNERS; ++i)
            awake += net->runners[i].sleeping == KPNI_AWAKE;
        if (k < KPNI_LONE_RETRY && awake != 0)
            TEST_FAIL_MESSAGE("a fruitless runner was woken before the retry count");
    }
    TEST_ASSERT_EQUAL_UINT(1, awake);
    TEST_ASSERT_EQUAL_UINT(RUNNERS - 2, net->idle);
}

/* ------------------------------------------------------------ learning */

/* The messages a run must have carried by now to count as finer than
 * the grain: one per grain of the time it has taken, or one per 64
 * grains for a runner that is trading, having stolen at least 1 024
 * processes, one per 64 messages it sent or oftener (runners.c,
 * kpni_learn_want). */
void test_a_trading_runner_is_held_to_a_grain_64_times_as_coarse(void)
{
    const uint64_t ms = 1000000, hour = (uint64_t)3600 * 1000000000;

    /* 2 ms at a grain of 1 us: 2 000 messages, however few the steals */
    TEST_ASSERT_EQUAL_UINT64(2000, kpni_learn_want(2 * ms, 1000, 1000, 0));
    TEST_ASSERT_EQUAL_UINT64(2000, kpni_learn_want(2 * ms, 1000, 1000, 1023));
    TEST_ASSERT_EQUAL_UINT64(2000 / 64, kpni_learn_want(2 * ms, 1000, 1000, 1024));
    /* one steal per 64 messages is trading; one per 64 and a bit is not */
    TEST_ASSERT_EQUAL_UINT64(200000 / 64, kpni_learn_want(200 * ms, 1000, 65536, 1024));
    TEST_ASSERT_EQUAL_UINT64(200000, kpni_learn_want(200 * ms, 1000, 65600, 1024));
    TEST_ASSERT_EQUAL_UINT64(200000 / 64, kpni_learn_want(200 * ms, 1000, 65600, 1025));
    /* a grain of 1 ns: a trading runner must still send one message
     * per 64 ns, which no run does */
    TEST_ASSERT_EQUAL_UINT64(hour / 64, kpni_learn_want(hour, 1, 1u << 20, 1u << 20));
    TEST_ASSERT_EQUAL_UINT64(0, kpni_learn_want(63, 1, 0, 1024));
}

/* ------------------------------------------------------------ trials */

/* A placement on trial stays if the net keeps its pace within 1/8 of
 * work stealing's in the window before; the counts and times may be any
 * size a run reaches without the products overflowing. */
void test_a_placement_on_trial_is_kept_within_an_eighth_of_the_pace(void)
{
    const uint64_t big = (uint64_t)1 << 40, long_ns = (uint64_t)1 << 50;

    TEST_ASSERT_TRUE(kpni_trial_kept(1000, 20000000, 1000, 20000000));
    TEST_ASSERT_TRUE(kpni_trial_kept(2000, 20000000, 1000, 20000000));
    TEST_ASSERT_TRUE(kpni_trial_kept(1400, 20000000, 1600, 20000000));  /* 7/8 */
    TEST_ASSERT_FALSE(kpni_trial_kept(1399, 20000000, 1600, 20000000));
    TEST_ASSERT_FALSE(kpni_trial_kept(1000, 40000000, 1000, 20000000)); /* half the pace */
    TEST_ASSERT_TRUE(kpni_trial_kept(0, 20000000, 0, 30000000));        /* nothing carried */
    TEST_ASSERT_FALSE(kpni_trial_kept(0, 20000000, 1, 30000000));
    TEST_ASSERT_TRUE(kpni_trial_kept(2 * big, 2 * long_ns, big, long_ns));
    TEST_ASSERT_TRUE(kpni_trial_kept(14 * big, long_ns, 16 * big, long_ns));
    TEST_ASSERT_FALSE(kpni_trial_kept(13 * big, long_ns, 16 * big, long_ns));
    TEST_ASSERT_FALSE(kpni_trial_kept(big, long_ns, big, long_ns / 2));
}

/* A net of two processes and a channel between them on 'runners'
 * runners, placements to be learnt on 'parts' of them: the trial tests'
 * starting point.  Returns the channel, whose 'sent' the tests set. */
static kpn_chan *on_trial(unsigned runners, unsigned parts)
{
    kpn_proc *a, *b;
    kpn_chan *c;

    init(runners, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, a, b, 4, 1));
    net->parts = parts;
    return c;
}

/* The trial's windows, stepped by hand with the net not running (every
 * lock is then free to skip): work stealing's window, then the
 * placement's, then one part's.  Where the placement keeps the pace and
 * one part is no faster, the run goes back to it; where the net slows
 * under it, work stealing's window stays the best, and one part is
 * tried against that: it wins only if more than 8/7 as fast.  Where
 * work stealing is still the best, it runs a second window, and the
 * placement's two windows are judged again against that one: the
 * placement is dropped only where work stealing is the best again
 * (and tried again later: below).  Learnt at once and kept with
 * no trial (cfg.learn_trial_ns 0).  White-box: the channel's counter
 * stands for the messages carried. */
void test_a_placement_on_trial_is_dropped_when_the_net_slows_under_it(void)
{
    /* what the placement's window carries, what one part's does, what
     * work stealing's second window does (0: none), and where the run
     * ends: parts (0: work stealing), 'learnt', placements learnt */
    static const struct {
        uint64_t placed, on1, ws2;
        unsigned ends, learnt, placements;
    } cases[] = {
        {1400, 1400, 0, 2, 3, 3}, /* 7/8 of the pace: kept; one part no faster */
        {1399, 1829, 0, 1, 2, 2}, /* slower, but one part more than 8/7 as fast */
        /* slower, and one part not more than 8/7 as fast: work
         * stealing's second window */
        {1399, 1828, 1600, 0, 0, 2}, /* as fast as its first: dropped */
        {100, 1600, 1600, 0, 0, 2},
        {1399, 1000, 1599, 0, 0, 2},
        {1399, 1828, 1599, 1, 3, 3}, /* one part now more than 8/7 as fast */
        {1399, 1000, 1598, 2, 3, 3}, /* the placement now within 1/8 */
    };
    const uint64_t t = 1000000000u, window = 5000000u;
    kpn_chan *c;
    kpni_runner *r0;
    kpn_stats st;
    uint64_t at;
    unsigned k;

    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        c = on_trial(2, 2);
        TEST_ASSERT_EQUAL_UINT(window, net->cfg.learn_trial_ns); /* the default */
        r0 = &net->runners[0];
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_NONE, net->trial);

        kpni_trial_step(r0, t); /* due: work stealing's window opens */
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_BASE, net->trial);
        c->sent = 1600;
        kpni_trial_step(r0, t + window - 1); /* too soon */
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_BASE, net->trial);
        TEST_ASSERT_EQUAL_UINT(0, net->learnt);
        kpni_trial_step(r0, t + window); /* 1600 in a window: learnt */
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_ON, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->learnt);
        c->sent += cases[k].placed; /* in a window */
        kpni_trial_step(r0, t + 2 * window);
        /* kept or not, tried on one part */
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
        TEST_ASSERT_EQUAL_UINT(2, net->learnt);
        c->sent += cases[k].on1;
        at = t + 3 * window;
        kpni_trial_step(r0, at);
        if (cases[k].ws2 != 0) { /* the runners steal again for a window */
            TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
            TEST_ASSERT_EQUAL_UINT(0, net->learnt);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
            TEST_ASSERT_EQUAL_UINT(0, st.placement_runners);
            TEST_ASSERT_EQUAL_UINT64(0, st.placements_dropped);
            c->sent += cases[k].ws2;
            kpni_trial_step(r0, at + window - 1); /* too soon */
            TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
            at += window;
            kpni_trial_step(r0, at);
        }
        TEST_ASSERT_EQUAL_INT(cases[k].ends != 0 ? KPNI_TRIAL_KEPT : KPNI_TRIAL_DROPPED,
                              net->trial);
        TEST_ASSERT_EQUAL_UINT(cases[k].learnt, net->learnt);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT(cases[k].ends, st.placement_runners);
        TEST_ASSERT_EQUAL_UINT64(cases[k].placements, st.placements);
        TEST_ASSERT_EQUAL_UINT64(cases[k].ends == 0, st.placements_dropped);
        if (cases[k].ends != 0)
            TEST_ASSERT_EQUAL_UINT(cases[k].ends, net->parts);
        c->sent += 5000;
        /* settled: on one part, until two are tried again, at the
         * earliest 2.25 windows after it was kept (one part 1829/1600 as
         * fast, or 1828/1599: below); dropped, until the trial starts
         * again, 16 windows after */
        kpni_trial_step(r0, at + 2 * window);
        TEST_ASSERT_EQUAL_INT(cases[k].ends != 0 ? KPNI_TRIAL_KEPT : KPNI_TRIAL_DROPPED,
                              net->trial);
        TEST_ASSERT_EQUAL_UINT(cases[k].learnt, net->learnt);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(cases[k].ends == 0, st.placements_dropped);
    }

    (void)on_trial(2, 2);
    net->cfg.learn_trial_ns = 0;
    kpni_trial_step(&net->runners[0], t);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->learnt);
}

/* A placement dropped for work stealing may have been dropped for a
 * window the host slowed: the trial starts again, from as many parts as
 * it first had, after AGAIN_SHARE (16) windows, and twice as long after
 * each drop before in the run; stepped by hand as above, dropped twice,
 * then kept. */
void test_a_dropped_placement_is_tried_again_after_a_wait_that_doubles(void)
{
    const uint64_t window = 5000000u;
    uint64_t at = 1000000000u;
    kpni_runner *r0;
    kpn_chan *c;
    kpn_stats st;
    unsigned drop;

    c = on_trial(2, 2);
    r0 = &net->runners[0];
    kpni_trial_step(r0, at); /* due: work stealing's window opens */
    for (drop = 1; drop <= 3; ++drop) {
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_BASE, net->trial);
        TEST_ASSERT_EQUAL_UINT(2, net->parts);
        TEST_ASSERT_EQUAL_UINT(0, net->learnt);
        c->sent += 1600;
        kpni_trial_step(r0, at += window); /* learnt on two parts */
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_ON, net->trial);
        TEST_ASSERT_EQUAL_UINT(2, net->parts);
        c->sent += 1399; /* more than 1/8 slower */
        kpni_trial_step(r0, at += window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
        c->sent += drop == 3 ? 1829 : 1600; /* one part: the third time faster */
        kpni_trial_step(r0, at += window);
        if (drop == 3)
            break;
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
        c->sent += 1600; /* work stealing as fast again */
        kpni_trial_step(r0, at += window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_DROPPED, net->trial);
        TEST_ASSERT_EQUAL_UINT(0, net->learnt);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(drop, st.placements_dropped);
        TEST_ASSERT_EQUAL_UINT(0, st.placement_runners);
        c->sent += 100000;
        kpni_trial_step(r0, at + (16u << (drop - 1)) * window - 1); /* too soon */
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_DROPPED, net->trial);
        TEST_ASSERT_EQUAL_UINT(0, net->learnt);
        kpni_trial_step(r0, at += (16u << (drop - 1)) * window); /* the trial again */
    }
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(2, st.placements_dropped);
    TEST_ASSERT_EQUAL_UINT(1, st.placement_runners);
}

/* From 't', in windows of 'window': work stealing's window carrying
 * 'ws' messages, then the first placement's carrying 'placed'. */
static void first_windows(kpn_chan *c, uint64_t t, uint64_t window, uint64_t ws,
                          uint64_t placed)
{
    kpni_runner *r0 = &net->runners[0];

    kpni_trial_step(r0, t);
    c->sent = ws;
    kpni_trial_step(r0, t + window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_ON, net->trial);
    c->sent += placed;
    kpni_trial_step(r0, t + 2 * window);
}

/* From 't' + 3 windows, the windows of the halves of 8 parts: on 4,
 * carrying 'on4' messages, on 2 and on 1; each half's window opens as
 * the one before closes. */
static void halves(kpn_chan *c, uint64_t t, uint64_t window, uint64_t on4, uint64_t on2,
                   uint64_t on1)
{
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
    TEST_ASSERT_EQUAL_UINT(4, net->parts);
    c->sent += on4;
    kpni_trial_step(&net->runners[0], t + 3 * window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
    TEST_ASSERT_EQUAL_UINT(2, net->parts);
    c->sent += on2;
    kpni_trial_step(&net->runners[0], t + 4 * window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    c->sent += on1;
    kpni_trial_step(&net->runners[0], t + 5 * window);
}

/* Each half of a placement's runners is tried down to one, a window
 * each, against the best so far: the placement where it kept work
 * stealing's pace within 1/8, else work stealing.  The run goes on with
 * the fastest, fewer parts winning only if more than 8/7 as fast as the
 * best with more, or under work stealing, the placement dropped, where
 * it stayed the best in a second window of its own too.  Stepped by
 * hand as above, from 8 parts: work stealing's windows carried 1600
 * messages, the placement's 'placed', then the windows on 4, on 2 and
 * on 1 part theirs; where the run ends (0: work stealing), and the
 * placements learnt. */
void test_each_half_of_a_placement_is_tried_down_to_one_part(void)
{
    static const struct {
        uint64_t placed, on4, on2, on1;
        unsigned ends, placements;
    } cases[] = {
        {1600, 1828, 1600, 1600, 8, 5}, /* none more than 8/7 as fast as 8: back to 8 */
        {1600, 1829, 1600, 1600, 4, 5}, /* 4 faster; 2 and 1 not faster than 4: back to 4 */
        {1600, 1829, 2090, 2090, 4, 5},
        {1600, 1829, 2091, 1600, 2, 5}, /* 2 faster than 4, 1 not: back to 2 */
        {1600, 1829, 2091, 2389, 2, 5},
        {1600, 1829, 2091, 2390, 1, 4}, /* faster each time: 1 */
        {1600, 1600, 1829, 1600, 2, 5}, /* 4 no faster, 2 faster than 8 */
        {1600, 1600, 1600, 1829, 1, 4}, /* only 1 faster than 8 */
        /* slower than work stealing: the halves against its 1600 */
        {1399, 1828, 1828, 1828, 0, 4}, /* none more than 8/7 as fast: dropped */
        {1399, 1829, 1600, 1600, 4, 5}, /* 4; 2 and 1 not faster than 4 */
        {1399, 1600, 1600, 1829, 1, 4}, /* only one part: a short pipeline */
        {1399, 100, 1829, 2090, 2, 5},  /* 2; 1 not more than 8/7 as fast as 2 */
    };
    const uint64_t t = 1000000000u, window = 5000000u;
    kpn_chan *c;
    kpn_stats st;
    unsigned k;
    int ends;

    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        ends = cases[k].ends != 0 ? KPNI_TRIAL_KEPT : KPNI_TRIAL_DROPPED;
        c = on_trial(8, 8);
        first_windows(c, t, window, 1600, cases[k].placed);
        TEST_ASSERT_EQUAL_UINT(cases[k].placed == 1600 ? 8 : 0, net->parts_won);
        halves(c, t, window, cases[k].on4, cases[k].on2, cases[k].on1);
        if (cases[k].ends == 0) { /* work stealing's second window, as fast */
            TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
            c->sent += 1600;
            kpni_trial_step(&net->runners[0], t + 6 * window);
        }
        TEST_ASSERT_EQUAL_INT(ends, net->trial);
        TEST_ASSERT_EQUAL_UINT(cases[k].ends != 0 ? cases[k].placements : 0, net->learnt);
        if (cases[k].ends != 0)
            TEST_ASSERT_EQUAL_UINT(cases[k].ends, net->parts);
        c->sent += 100000;
        /* settled for the run; on one part, until two are tried again,
         * at the earliest 2.25 windows after it was kept (below) */
        kpni_trial_step(&net->runners[0], t + 7 * window);
        TEST_ASSERT_EQUAL_INT(ends, net->trial);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT(cases[k].ends, st.placement_runners);
        TEST_ASSERT_EQUAL_UINT64(cases[k].placements, st.placements);
        TEST_ASSERT_EQUAL_UINT64(cases[k].ends == 0, st.placements_dropped);
    }

    /* work stealing's second window slower: every window judged again
     * against it, the halves in order, from 8 parts (1399 within 1/8
     * of 1400) to 4 (1828 more than 8/7 of 1399), where they end */
    c = on_trial(8, 8);
    first_windows(c, t, window, 1600, 1399);
    halves(c, t, window, 1828, 1828, 1828);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
    c->sent += 1400;
    kpni_trial_step(&net->runners[0], t + 6 * window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(4, net->parts);
    TEST_ASSERT_EQUAL_UINT(5, net->learnt);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(4, st.placement_runners);
    TEST_ASSERT_EQUAL_UINT64(5, st.placements);
    TEST_ASSERT_EQUAL_UINT64(0, st.placements_dropped);

    /* no half below one part: a first placement on one part is kept,
     * or dropped after work stealing's second window */
    first_windows(on_trial(8, 1), t, window, 1600, 1600);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(1, st.placement_runners);
    c = on_trial(8, 1);
    first_windows(c, t, window, 1600, 1399);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
    c->sent += 1600;
    kpni_trial_step(&net->runners[0], t + 3 * window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_DROPPED, net->trial);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(0, st.placement_runners);
    TEST_ASSERT_EQUAL_UINT64(1, st.placements_dropped);
}

/* From 't', in windows of 'window', a 2-runner trial stepped by hand to
 * one part kept: work stealing's window and the placement's carry 1600
 * messages each, one part's twice as many; returns when it was kept. */
static uint64_t kept_on_one_part(kpn_chan *c, uint64_t t, uint64_t window)
{
    first_windows(c, t, window, 1600, 1600);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
    c->sent += 3200;
    kpni_trial_step(&net->runners[0], t + 3 * window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    TEST_ASSERT_EQUAL_UINT(2, net->learnt);
    return t + 3 * window;
}

/* One part kept is tried against two again, for a window, after 16
 * windows for each time over that one part carried its messages as fast
 * as the best with more, and after twice as long each time one part wins
 * again: two parts are kept if they keep one part's pace within 1/8 (as
 * in the trial), and then tried no more.  A slow spell of the host in
 * two parts' window of the trial does not keep a run on one part to its
 * end.  Stepped by hand as above: work stealing's window and the
 * placement's carry 1600 messages each, one part's twice as many (so
 * 16 windows), then 6 250 a window on one part. */
void test_one_part_kept_is_tried_against_two_again(void)
{
    const uint64_t t = 1000000000u, window = 5000000u;
    /* two parts' window: 7/8 of one part's pace, or half */
    static const uint64_t on2[] = {5469, 3125};
    kpn_chan *c;
    kpni_runner *r0;
    kpn_stats st;
    uint64_t at;
    unsigned k;

    for (k = 0; k < 2; ++k) {
        c = on_trial(2, 2);
        r0 = &net->runners[0];
        at = kept_on_one_part(c, t, window);

        c->sent += 100000; /* 16 windows on one part */
        kpni_trial_step(r0, at + 16 * window - 1);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_UINT(2, net->learnt);
        at += 16 * window;
        kpni_trial_step(r0, at);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_AGAIN, net->trial);
        TEST_ASSERT_EQUAL_UINT(2, net->parts);
        TEST_ASSERT_EQUAL_UINT(3, net->learnt);

        c->sent += on2[k];
        at += window;
        kpni_trial_step(r0, at);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        if (k == 0) { /* two parts kept, for good */
            TEST_ASSERT_EQUAL_UINT(2, net->parts);
            TEST_ASSERT_EQUAL_UINT(3, net->learnt);
            TEST_ASSERT_EQUAL_UINT(2, st.placement_runners);
            c->sent += 1000000;
            kpni_trial_step(r0, at + 1000 * window);
            TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
            TEST_ASSERT_EQUAL_UINT(3, net->learnt);
            continue;
        }
        /* one part again, twice as fast as two: tried again after twice
         * 16 windows */
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
        TEST_ASSERT_EQUAL_UINT(4, net->learnt);
        TEST_ASSERT_EQUAL_UINT(1, st.placement_runners);
        TEST_ASSERT_EQUAL_UINT64(4, st.placements);
        c->sent += 200000;
        kpni_trial_step(r0, at + 32 * window - 1);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        kpni_trial_step(r0, at + 32 * window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_AGAIN, net->trial);
        TEST_ASSERT_EQUAL_UINT(2, net->parts);
        TEST_ASSERT_EQUAL_UINT(5, net->learnt);
        /* two parts that carry nothing: one part again, with the
         * longest wait, 16 384 windows, doubled for each of one part's
         * two wins since the trial */
        at += 32 * window;
        kpni_trial_step(r0, at + window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
        at += window;
        kpni_trial_step(r0, at + 4 * 16384 * window - 1);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        kpni_trial_step(r0, at + 4 * 16384 * window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_AGAIN, net->trial);
    }

    /* counts and windows beyond what the products hold unhalved (2^31
     * messages and more, windows of 2^30 ns): the same wait */
    {
        const uint64_t big = (uint64_t)1 << 20, long_window = (uint64_t)1 << 30;

        c = on_trial(2, 2);
        r0 = &net->runners[0];
        net->cfg.learn_trial_ns = 1u << 30;
        first_windows(c, t, long_window, 1600 * big, 1600 * big);
        c->sent += 3200 * big;
        at = t + 3 * long_window;
        kpni_trial_step(r0, at);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
        c->sent += 100000 * big;
        kpni_trial_step(r0, at + 16 * long_window - 1);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        kpni_trial_step(r0, at + 16 * long_window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_AGAIN, net->trial);
    }
}

/* 'step' (kpni_runners_window, kpni_runners_one_part) as block_any
 * calls it on a runner that shares: holding r's lock. */
static void as_block_any(kpni_runner *r, void (*step)(kpni_runner *))
{
    kpni_lock(r);
    step(r);
    kpni_unlock(r);
}

/* The window on one part: the runner holding every process may never
 * run dry to close it at an idle look, so it looks at the clock itself,
 * once per KPNI_WINDOW_LOOK switches, from a block (kpni_runners_window,
 * block_any), and closes it once its time is up.  Stepped by hand as
 * above, the window timed by the port's clock. */
void test_the_window_on_one_part_is_closed_by_the_runner_that_holds_it(void)
{
    const uint64_t t = 1000000000u, window = 5000000u;
    kpni_runner *r0;
    kpn_chan *c;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout learns no placement");
    c = on_trial(2, 2);
    r0 = &net->runners[0];
    first_windows(c, t, window, 1600, 1600);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    TEST_ASSERT_TRUE(KPNI_ONE_PART(net));
    /* the placement homes both processes on runner 0, which takes them
     * at its next block */
    TEST_ASSERT_EQUAL_UINT(0, c->writer->home);
    TEST_ASSERT_EQUAL_UINT(0, c->reader->home);
    TEST_ASSERT_TRUE(KPNI_PULL_DUE(r0));

    /* due only once r0 has switched KPNI_WINDOW_LOOK times since it last
     * looked */
    r0->window_at = r0->switches = 5000;
    TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r0));
    r0->switches += KPNI_WINDOW_LOOK - 1;
    TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r0));
    r0->switches++;
    TEST_ASSERT_TRUE(KPNI_WINDOW_DUE(r0));

    /* looked at too soon: still open, and not due again for a while */
    net->trial_ns = kpn_port_clock_ns();
    c->sent += 100000;
    as_block_any(r0, kpni_runners_window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_HALF, net->trial);
    TEST_ASSERT_EQUAL_UINT64(r0->switches, r0->window_at);
    TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r0));

    /* its time up, r0 closes it: one part carried the messages more
     * than 8/7 as fast as two (100 000 in at most the time the host
     * takes here, against 1 600 in a window), so the run keeps it */
    r0->switches += KPNI_WINDOW_LOOK;
    TEST_ASSERT_TRUE(KPNI_WINDOW_DUE(r0));
    net->trial_ns = kpn_port_clock_ns() - window;
    net->trial_msgs = c->sent - 100000;
    as_block_any(r0, kpni_runners_window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r0));

    /* a half on two parts in the trial is closed at idle looks only */
    c = on_trial(4, 4);
    r0 = &net->runners[0];
    first_windows(c, t, window, 1600, 1600);
    TEST_ASSERT_EQUAL_UINT(2, net->parts);
    r0->switches = r0->window_at + KPNI_WINDOW_LOOK;
    TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r0));
    TEST_ASSERT_FALSE(KPNI_PULL_DUE(r0));
}

/* A run whose placements may use one runner (a net that shares its
 * runners, run later over one CPU: "One CPU", docs/runners.md) keeps its
 * one part: no two are tried against it, with a trial or with none
 * (cfg.learn_trial_ns 0), however long it runs.  Stepped by hand as
 * above. */
void test_one_part_over_one_cpu_is_never_tried_against_two(void)
{
    const uint64_t t = 1000000000u, window = 5000000u;
    kpni_runner *r0;
    kpn_chan *c;
    unsigned k;

    c = on_trial(2, 1);
    r0 = &net->runners[0];
    first_windows(c, t, window, 1600, 1600);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    TEST_ASSERT_EQUAL_UINT(1, net->parts);
    for (k = 1; k <= 64; ++k) {
        c->sent += 100000;
        kpni_trial_step(r0, t + (2 + 1000 * (uint64_t)k) * window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
    }

    c = on_trial(2, 1);
    r0 = &net->runners[0];
    net->cfg.learn_trial_ns = 0;
    kpni_trial_step(r0, t);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
    for (k = 1; k <= 64; ++k) {
        c->sent += 100000;
        kpni_trial_step(r0, t + k);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_UINT(1, net->parts);
        TEST_ASSERT_EQUAL_UINT(1, net->learnt);
    }
}

/* Two parts tried again against one part kept: both runners may stay
 * busy, so either closes the window by the clock as the runner on one
 * part does (kpni_runners_window), and the window is timed against one
 * part's pace.  Stepped by hand to the try as in the test above (one
 * part carried 6 250 messages a window since it was kept), then closed
 * by runner 1, which holds neither part alone: two parts kept where
 * they carried a window's 6 250, one part again where they carried 100. */
void test_two_parts_tried_again_are_closed_by_either_runner(void)
{
    const uint64_t t = 1000000000u, window = 5000000u;
    static const uint64_t on2[] = {6250, 100};
    static const unsigned ends[] = {2, 1};
    unsigned k;

    for (k = 0; k < 2; ++k) {
        kpn_chan *c = on_trial(2, 2);
        uint64_t at = kept_on_one_part(c, t, window);
        kpni_runner *r1 = &net->runners[1];

        c->sent += 100000;
        kpni_trial_step(&net->runners[0], at + 16 * window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_AGAIN, net->trial);
        TEST_ASSERT_EQUAL_UINT(2, net->parts);

        /* due once r1 has switched KPNI_WINDOW_LOOK times since it looked */
        r1->window_at = r1->switches = 7000;
        r1->switches += KPNI_WINDOW_LOOK - 1;
        TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r1));
        r1->switches++;
        TEST_ASSERT_TRUE(KPNI_WINDOW_DUE(r1));
        /* looked at too soon: still open */
        net->trial_ns = kpn_port_clock_ns();
        net->trial_msgs = c->sent;
        as_block_any(r1, kpni_runners_window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_AGAIN, net->trial);
        TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r1));
        /* its time up, r1 closes it */
        r1->switches += KPNI_WINDOW_LOOK;
        net->trial_ns = kpn_port_clock_ns() - window;
        c->sent += on2[k];
        as_block_any(r1, kpni_runners_window);
        TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_KEPT, net->trial);
        TEST_ASSERT_EQUAL_UINT(ends[k], net->parts);
        /* two parts kept are settled for the run: no more looks */
        r1->switches += KPNI_WINDOW_LOOK;
        if (k == 0)
            TEST_ASSERT_FALSE(KPNI_WINDOW_DUE(r1));
    }
}

/* Every queue emptied, then 'r' given just the processes listed (up to
 * a NULL), front to back: a white-box test's starting point. */
static void queues(kpni_runner *r, kpn_proc *a, kpn_proc *b)
{
    kpn_proc *p;
    unsigned i;

    for (i = 0; i < net->nrunners; ++i)
        while ((p = kpni_queue_pop_front(&net->runners[i])) != NULL)
            p->state = KPN_PROC_BLOCKED_READ;
    if (a != NULL)
        kpni_sched_enqueue(r, a);
    if (b != NULL)
        kpni_sched_enqueue(r, b);
}

/* 'self' about to block on 'r' makes the looks r's move notes ask for,
 * as block_any does under r's lock; none is left noted after. */
static void look_flipped(kpni_runner *r, kpn_proc *self)
{
    kpni_lock(r);
    kpni_runners_look_flipped(r, self);
    kpni_unlock(r);
    TEST_ASSERT_EQUAL_UINT(0, r->nflipped);
}

/* On one part the runner that holds every process takes them at its
 * next block (KPNI_PULL_DUE); one that runs elsewhere then, it takes at
 * a later block, once it has stopped, looking again after as many
 * blocks as the net has processes.  A process that only writes (a
 * pipeline's source) is never woken from a read by its home runner, and
 * would otherwise stay away, its channel crossing.  Stepped by hand. */
void test_on_one_part_a_process_running_elsewhere_is_taken_at_a_later_block(void)
{
    const uint64_t t = 1000000000u, window = 5000000u;
    kpni_runner *r0, *r1;
    kpn_chan *c;
    kpn_proc *a, *b;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout learns no placement");
    c = on_trial(2, 2);
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    a = c->writer;
    b = c->reader;
    queues(r1, NULL, NULL);
    a->runner = b->runner = r1;
    a->state = KPN_PROC_RUNNING; /* r1 runs the writer */
    r1->current = a;
    b->wait = c; /* the reader waits for it */
    kpni_runners_mark(net);
    first_windows(c, t, window, 1600, 1600);
    TEST_ASSERT_TRUE(KPNI_ONE_PART(net));
    TEST_ASSERT_TRUE(KPNI_PULL_DUE(r0));

    as_block_any(r0, kpni_runners_one_part); /* takes the reader, not the writer */
    TEST_ASSERT_TRUE(b->runner == r0);
    TEST_ASSERT_TRUE(a->runner == r1);
    TEST_ASSERT_TRUE(KPNI_PULL_DUE(r0));
    TEST_ASSERT_EQUAL_UINT(1, c->cross);
    /* it looks again after as many blocks as the net has processes */
    TEST_ASSERT_EQUAL_UINT(2, r0->pull_after);
    r1->current = NULL; /* the writer blocks on the full channel */
    a->state = KPN_PROC_BLOCKED_WRITE;
    a->wait = c;
    as_block_any(r0, kpni_runners_one_part);
    TEST_ASSERT_TRUE(a->runner == r1);
    TEST_ASSERT_TRUE(KPNI_PULL_DUE(r0));
    as_block_any(r0, kpni_runners_one_part);
    TEST_ASSERT_TRUE(a->runner == r0);
    TEST_ASSERT_FALSE(KPNI_PULL_DUE(r0));
    TEST_ASSERT_EQUAL_UINT(0, c->cross);
}

/* A placement dropped and tried again is taken as the first was: each
 * runner takes what it homes, though the trial starts again from work
 * stealing (no placement) and counts its placements from there.  Stepped
 * by hand as above, on two runners: runner 0 takes the first trial's one
 * part at its block, the placement is dropped, work stealing moves the
 * reader to runner 1, and runner 0 must take it again at its first block
 * on the second trial's one part. */
void test_a_placement_tried_again_after_a_drop_is_taken_by_its_runner(void)
{
    const uint64_t window = 5000000u;
    uint64_t at = 1000000000u;
    kpni_runner *r0, *r1;
    kpn_chan *c;
    kpn_proc *a, *b;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout learns no placement");
    c = on_trial(2, 2);
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    a = c->writer;
    b = c->reader;
    queues(r0, NULL, NULL);
    a->runner = b->runner = r0;
    a->wait = b->wait = c;
    kpni_runners_mark(net);
    first_windows(c, at, window, 1600, 1399); /* slower: tried on one part */
    TEST_ASSERT_TRUE(KPNI_ONE_PART(net));
    as_block_any(r0, kpni_runners_one_part);
    TEST_ASSERT_FALSE(KPNI_PULL_DUE(r0));
    c->sent += 1600; /* one part no faster: work stealing's second window */
    kpni_trial_step(r0, at += 3 * window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_RECHECK, net->trial);
    c->sent += 1600;
    kpni_trial_step(r0, at += window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_DROPPED, net->trial);

    b->runner = r1; /* stolen meanwhile */
    kpni_runners_mark(net);
    TEST_ASSERT_EQUAL_UINT(1, c->cross);
    kpni_trial_step(r0, at += 16 * window); /* the trial again */
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_BASE, net->trial);
    c->sent += 1600;
    kpni_trial_step(r0, at += window);
    TEST_ASSERT_EQUAL_INT(KPNI_TRIAL_ON, net->trial);
    c->sent += 1399;
    kpni_trial_step(r0, at += window);
    TEST_ASSERT_TRUE(KPNI_ONE_PART(net));
    TEST_ASSERT_TRUE(KPNI_PULL_DUE(r0));
    as_block_any(r0, kpni_runners_one_part);
    TEST_ASSERT_TRUE(b->runner == r0);
    TEST_ASSERT_EQUAL_UINT(0, c->cross);
}

/* Under work stealing a channel crosses while its ends are on different
 * runners (runners.c, "Moves"): kpn_run marks them where they start, and
 * a process that moves marks its channels for where it goes.  A channel
 * that starts to cross while its other end runs is noted on that end's
 * runner, which looks at it again, fenced, before that end blocks; a
 * process whose move would need more notes than there is room for stays.
 * A process with more channels than a move may walk (16) keeps all of
 * them crossing.  White-box, as above. */
void test_a_channel_crosses_while_its_ends_are_on_different_runners(void)
{
    kpn_proc *x, *q, *p, *hub, *leaf[17];
    kpn_chan *xp, *qp, *hc[17];
    kpni_runner *r0, *r1;
    unsigned unflips;
    int i;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout has no channel that does not cross");
    init(2, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &x, "x", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &xp, x, p, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &qp, q, p, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &hub, "hub", idle, NULL, 4096));
    for (i = 0; i < 17; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &leaf[i], "leaf", idle, NULL, 4096));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &hc[i], hub, leaf[i], sizeof(int), 1));
    }
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    /* spawn order, i mod 2 */
    TEST_ASSERT_TRUE(x->runner == r0 && q->runner == r1 && p->runner == r0);
    TEST_ASSERT_TRUE(hub->runner == r1 && leaf[1]->runner == r1);

    kpni_runners_mark(net);
    TEST_ASSERT_EQUAL_INT(0, xp->cross);
    TEST_ASSERT_EQUAL_INT(1, qp->cross);
    TEST_ASSERT_EQUAL_INT(1, hc[1]->cross); /* on one runner, but the hub's */

    /* q, on runner 1, wakes p while x, p's partner, runs on runner 0: p
     * moves to q's runner, x's channel starts to cross and runner 0
     * notes it, for a look at p as a reader; q's stops crossing */
    queues(r0, NULL, NULL);
    r0->current = x;
    unflips = r1->unflips;
    kpni_sched_ready_mt(r1, p);
    TEST_ASSERT_TRUE(p->runner == r1 && r1->head == p);
    TEST_ASSERT_TRUE(xp->cross == 1 && qp->cross == 0);
    TEST_ASSERT_EQUAL_UINT(1, r0->nflipped);
    TEST_ASSERT_TRUE(r0->flipped[0].c == xp);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, r0->flipped[0].why);
    TEST_ASSERT_EQUAL_UINT(unflips + 1, r1->unflips);

    /* x, about to block, makes the look: p waits on x's channel and is
     * woken onto x's runner; nothing is left noted */
    queues(r0, NULL, NULL);
    r1->current = NULL;
    p->wait = xp;
    x->nwaiters = 1;
    look_flipped(r0, x);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, p->state);
    TEST_ASSERT_TRUE(p->runner == r0 && r0->head == p && xp->cross == 0);

    /* a note on a channel that is not the blocker's (left while an
     * earlier process's walk had let go of the lock) is dropped unlooked */
    queues(r0, NULL, NULL);
    p->wait = qp;
    r0->flipped[0].c = qp;
    r0->flipped[0].why = KPN_PROC_BLOCKED_READ;
    r0->nflipped = 1;
    look_flipped(r0, x);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, p->state);

    /* a thief takes x, behind leaf 0, while p runs on x's runner, as long
     * as the runner has room left to note x's channel... */
    queues(r0, leaf[0], x);
    r0->current = p;
    r0->nflipped = KPNI_FLIPS;
    TEST_ASSERT_NULL(kpni_runners_steal(r1));
    TEST_ASSERT_TRUE(x->runner == r0 && xp->cross == 0);
    r0->nflipped = KPNI_FLIPS - 1;
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == x);
    TEST_ASSERT_TRUE(x->runner == r1 && xp->cross == 1);
    TEST_ASSERT_EQUAL_UINT(KPNI_FLIPS, r0->nflipped);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, r0->flipped[KPNI_FLIPS - 1].why);
    r0->nflipped = 0;
    r0->current = NULL;

    /* the hub's channels cross wherever it goes, leaf 1's with it */
    queues(r0, leaf[0], hub);
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == hub);
    TEST_ASSERT_TRUE(hub->runner == r1 && leaf[1]->runner == r1);
    TEST_ASSERT_EQUAL_INT(1, hc[1]->cross);
    r0->current = NULL;
}

#if !KPN_COMPACT
/* A process of 'net' that returns at once, spawned. */
static kpn_proc *idle_proc(const char *name)
{
    kpn_proc *p;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, name, idle, NULL, STACK));
    return p;
}

/* 'p' blocked on 'c' for 'why', as a block leaves it. */
static void as_blocked(kpn_proc *p, kpn_proc_state why, kpn_chan *c)
{
    p->state = (unsigned char)why;
    p->wait = c;
}

/* Each of four processes' count of its channels that cross. */
static void channels_crossing(const kpn_proc *a, unsigned na, const kpn_proc *b, unsigned nb,
                              const kpn_proc *c, unsigned nc, const kpn_proc *d, unsigned nd)
{
    TEST_ASSERT_EQUAL_UINT(na, a->ncross);
    TEST_ASSERT_EQUAL_UINT(nb, b->ncross);
    TEST_ASSERT_EQUAL_UINT(nc, c->ncross);
    TEST_ASSERT_EQUAL_UINT(nd, d->ncross);
}
#endif

/* With several runners a process's count of waiters counts those
 * blocked on its channels that do not cross, and 'ncross' its channels
 * that cross (kpn_int.h, KPNI_NWAITERS_ADD_ON): kpni_runners_count sets
 * both before a run, and a move that starts a channel crossing takes a
 * waiter on it out of the other end's count, one that stops a channel
 * crossing puts it back in.  White-box, as above: p, on runner 0,
 * waits to read from q on runner 1, while x waits to write to p and z
 * to read from it, both on runner 0. */
void test_a_move_keeps_the_counts_of_waiters_along_channels_that_do_not_cross(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact layout has no channel that does not cross");
#else
    kpn_proc *x, *q, *p, *y, *z;
    kpn_chan *xp, *qp, *pz;
    kpni_runner *r0, *r1;

    init(2, KPN_POLICY_WS, KPN_WAKE_WAKER);
    x = idle_proc("x"); /* spawn order: runners 0, 1, 0, 1, 0 */
    q = idle_proc("q");
    p = idle_proc("p");
    y = idle_proc("y");
    z = idle_proc("z");
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &xp, x, p, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &qp, q, p, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pz, p, z, sizeof(int), 1));
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE(x->runner == r0 && q->runner == r1 && p->runner == r0 && z->runner == r0);
    queues(r0, NULL, NULL);
    as_blocked(p, KPN_PROC_BLOCKED_READ, qp);
    as_blocked(x, KPN_PROC_BLOCKED_WRITE, xp);
    as_blocked(z, KPN_PROC_BLOCKED_READ, pz);
    q->state = KPN_PROC_RUNNING; /* on runner 1 */
    y->state = KPN_PROC_READY;
    p->nwaiters = q->nwaiters = 7; /* counted afresh below */

    kpni_runners_mark(net);
    kpni_runners_count(net);
    TEST_ASSERT_TRUE(xp->cross == 0 && qp->cross == 1 && pz->cross == 0);
    TEST_ASSERT_EQUAL_UINT32(2, p->nwaiters); /* x and z; p's wait on q crosses */
    TEST_ASSERT_EQUAL_UINT32(0, q->nwaiters);
    channels_crossing(p, 1, q, 1, x, 0, z, 0);

    /* q wakes p, which follows it to runner 1: x's and z's channels
     * start to cross, taking x and z out of p's count, and q's stops */
    kpni_sched_ready_mt(r1, p);
    TEST_ASSERT_TRUE(p->runner == r1 && xp->cross == 1 && qp->cross == 0 && pz->cross == 1);
    TEST_ASSERT_EQUAL_UINT32(0, p->nwaiters);
    channels_crossing(p, 2, q, 0, x, 1, z, 1);
    r0->nflipped = 0;

    /* p waits on x now, which wakes it back to runner 0: z, still
     * waiting on p, is counted again; x, running, is not */
    queues(r0, NULL, NULL);
    as_blocked(p, KPN_PROC_BLOCKED_READ, xp);
    x->state = KPN_PROC_RUNNING;
    x->wait = NULL;
    kpni_sched_ready_mt(r0, p);
    TEST_ASSERT_TRUE(p->runner == r0 && xp->cross == 0 && qp->cross == 1 && pz->cross == 0);
    TEST_ASSERT_EQUAL_UINT32(1, p->nwaiters);
    TEST_ASSERT_EQUAL_UINT32(0, x->nwaiters);
    channels_crossing(p, 1, q, 1, x, 0, z, 0);
    r1->nflipped = 0;
#endif
}

/* Under KPN_WAKE_WAKER a process woken from a read joins the waker's
 * runner, where what it will read has just been written; one woken from
 * a write stays on its own, where what it will write is (runners.c,
 * kpni_sched_ready_mt).  Under KPN_WAKE_LAST neither moves.  White-box,
 * as above. */
void test_a_woken_reader_joins_the_wakers_runner_and_a_woken_writer_stays(void)
{
    kpn_proc *p, *q;
    kpni_runner *r0, *r1;
    int rule;

    for (rule = 0; rule < 2; ++rule) {
        init(2, KPN_POLICY_WS, rule ? KPN_WAKE_WAKER : KPN_WAKE_LAST);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", idle, NULL, STACK));
        r0 = &net->runners[0];
        r1 = &net->runners[1];
        TEST_ASSERT_TRUE(p->runner == r0 && q->runner == r1); /* spawn order, i mod 2 */

        /* p last ran on runner 0; q, on runner 1, makes room for it */
        queues(r0, NULL, NULL);
        p->state = KPN_PROC_BLOCKED_WRITE;
        p->wait = (kpn_chan *)(void *)q; /* any non-NULL: cleared by the wake */
        kpni_sched_ready_mt(r1, p);
        TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, p->state);
        TEST_ASSERT_NULL(p->wait);
        TEST_ASSERT_TRUE(p->runner == r0 && r0->head == p && r1->head == NULL);

        /* q sends to it */
        queues(r0, NULL, NULL);
        TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, p->state);
        kpni_sched_ready_mt(r1, p);
        TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, p->state);
        if (rule)
            TEST_ASSERT_TRUE(p->runner == r1 && r1->head == p && r0->head == NULL);
        else
            TEST_ASSERT_TRUE(p->runner == r0 && r0->head == p && r1->head == NULL);
    }
}

#if !KPN_COMPACT
/* A fresh net of two runners under 'policy': x queued on runner 0, and p
 * waiting there to write to s, which runs there and is marked, on the
 * channel returned, which does not cross, whose word says p waits, and
 * which s's count of waiters counts (kpn_int.h, KPNI_NWAITERS_ADD_ON);
 * p's own count says a process waits on it if 'waited'. */
static kpn_chan *writer_waits(kpn_policy policy, int waited, kpn_proc **p, kpn_proc **s,
                              kpn_proc **x)
{
    kpn_proc *y;
    kpn_chan *c;
    kpni_runner *r0;

    init(2, policy, KPN_WAKE_WAKER);
    r0 = &net->runners[0];
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &y, "y", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, s, "s", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, x, "x", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, *p, *s, sizeof(int), 1));
    TEST_ASSERT_TRUE((*p)->runner == r0 && (*s)->runner == r0 && (*p)->home == 0 && r0->resolve);
    queues(r0, *x, NULL);
    (*p)->state = KPN_PROC_BLOCKED_WRITE;
    (*p)->wait = c;
    (*p)->watched = 0;
    (*s)->watched = 1;
    (*s)->nwaiters = 1;
    (*p)->nwaiters = (uint32_t)waited;
    TEST_ASSERT_EQUAL_INT(0, c->cross);
    KPNI_WAITING(c, KPN_PROC_BLOCKED_WRITE) = 1;
    return c;
}
#endif

/* The short wake (kpni_sched_ready_here), white-box: under a placement,
 * learnt (round 1) or given by KPN_POLICY_STATIC with the process homed
 * where it waits (round 2), a process woken by the other end of its
 * channel on its own runner joins the back of that runner's queue,
 * ready, with the channel's word for it cleared and the waker's count
 * of waiters one less, and takes the waker's watch if a process waits
 * on it ('waited', each round both ways).  Under work stealing with no
 * placement in force (round 0), and under KPN_POLICY_STATIC with the
 * process homed on the other runner (round 3), it changes nothing and
 * leaves the choice to kpni_sched_ready_mt. */
void test_a_wake_on_the_wakers_own_runner_under_a_placement_joins_its_back(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact layout has no word to ask with");
#else
    kpn_proc *p, *s, *x;
    kpn_chan *c;
    kpni_runner *r0;
    int round, done, waited;

    for (round = 0; round < 8; ++round) {
        waited = round % 2;
        c = writer_waits(round / 2 >= 2 ? KPN_POLICY_STATIC : KPN_POLICY_WS, waited, &p, &s, &x);
        r0 = &net->runners[0];
        net->learnt = round / 2 == 1;
        if (round / 2 == 3)
            p->home = 1; /* pinned to runner 1, not yet moved there */

        kpni_lock(r0);
        done = kpni_sched_ready_here(r0, p, s);
        kpni_unlock(r0);
        net->learnt = 0;
        if (round / 2 == 1 || round / 2 == 2) {
            TEST_ASSERT_EQUAL_INT(1, done);
            TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, p->state);
            TEST_ASSERT_NULL(p->wait);
            TEST_ASSERT_EQUAL_INT(waited, p->watched);
            TEST_ASSERT_EQUAL_UINT32(0, s->nwaiters);
            TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(c, KPN_PROC_BLOCKED_WRITE));
            TEST_ASSERT_TRUE(r0->head == x && x->next_ready == p && r0->tail == p);
        } else {
            TEST_ASSERT_EQUAL_INT(0, done);
            TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, p->state);
            TEST_ASSERT_TRUE(p->wait == c);
            TEST_ASSERT_EQUAL_INT(0, p->watched);
            TEST_ASSERT_EQUAL_UINT32(1, s->nwaiters);
            TEST_ASSERT_EQUAL_size_t(1, KPNI_WAITING(c, KPN_PROC_BLOCKED_WRITE));
            TEST_ASSERT_TRUE(r0->head == x && r0->tail == x);
        }
        TEST_ASSERT_TRUE(p->runner == r0);
    }
#endif
}

/* A wake with no lock (kpni_sched_ready_own), white-box: on a runner
 * that is 'own', a process woken by the other end of its channel there
 * is made ready, with the channel's word for it cleared and the
 * waker's count of waiters one less, onto the runner's own list, taking
 * the waker's watch if a process waits on it ('waited', both ways): the
 * queue, which other runners reach under the lock (held elsewhere here),
 * is left alone until the runner's next park (kpni_own_park) joins the
 * list to its back.  That park makes the runner 'own' under
 * KPN_POLICY_STATIC (rounds 2 and 3), and not under work stealing with
 * no placement in force (rounds 0 and 1). */
void test_a_wake_with_no_lock_joins_the_queue_at_the_runners_next_park(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact layout has no word to ask with");
#else
    kpn_proc *p, *s, *x;
    kpn_chan *c;
    kpni_runner *r0;
    int round, waited;

    for (round = 0; round < 4; ++round) {
        waited = round % 2;
        c = writer_waits(round / 2 ? KPN_POLICY_STATIC : KPN_POLICY_WS, waited, &p, &s, &x);
        r0 = &net->runners[0];
        r0->own = 1;
        r0->lock = 1; /* as if another runner held it */

        kpni_sched_ready_own(r0, p, s);
        TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, p->state);
        TEST_ASSERT_NULL(p->wait);
        TEST_ASSERT_EQUAL_INT(waited, p->watched);
        TEST_ASSERT_EQUAL_UINT32(0, s->nwaiters);
        TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(c, KPN_PROC_BLOCKED_WRITE));
        TEST_ASSERT_TRUE(r0->head == x && r0->tail == x); /* the queue as it was */
        TEST_ASSERT_TRUE(r0->own_head == p && r0->own_tail == p && p->runner == r0);

        /* the park, holding the lock */
        kpni_own_park(r0);
        TEST_ASSERT_TRUE(r0->head == x && x->next_ready == p && r0->tail == p);
        TEST_ASSERT_TRUE(p->prev_ready == x && p->next_ready == NULL);
        TEST_ASSERT_NULL(r0->own_head);
        TEST_ASSERT_NULL(r0->own_tail);
        TEST_ASSERT_EQUAL_INT(round / 2, r0->own);
        r0->own = 0;
        r0->lock = 0;
    }
#endif
}

/* While a runner is 'own', only its thread moves its processes: a thief
 * takes none of its queue, and a runner that pulls its part of a
 * placement leaves them for a later block, counting its part not taken
 * until it has, so that no runner is 'own' (KPNI_OWN_OK) before every
 * part's runner has taken its part.  A reader woken from another
 * runner still follows its waker there: nothing but that waker can
 * release it.  White-box, stepped by hand. */
void test_no_runner_moves_a_process_off_a_runner_that_is_own_but_its_waker(void)
{
    kpn_proc *p, *x, *y;
    kpni_runner *r0, *r1;

    init(2, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &x, "x", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &y, "y", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    r0 = &net->runners[0];
    r1 = &net->runners[1];

    /* steals */
    queues(r0, x, y);
    r0->own = 1;
    TEST_ASSERT_NULL(kpni_runners_steal(r1));
    TEST_ASSERT_TRUE(x->runner == r0 && y->runner == r0 && r0->tail == y);
    r0->own = 0;
    TEST_ASSERT_TRUE(kpni_runners_steal(r1) == y);
    TEST_ASSERT_TRUE(y->runner == r1);
    y->state = KPN_PROC_BLOCKED_READ; /* taken, not queued: say it ran and blocked */

    /* a reader's wake from the other runner */
    queues(r0, NULL, NULL);
    p->runner = r0;
    p->state = KPN_PROC_BLOCKED_READ;
    p->wait = (kpn_chan *)(void *)x; /* any non-NULL: cleared by the wake */
    r0->own = 1;
    kpni_sched_ready_mt(r1, p);
    TEST_ASSERT_TRUE(p->runner == r1 && r1->head == p && r0->head == NULL);

    /* pulls: a placement kept for the run on two parts, which homes p on
     * runner 1 and x on runner 0, where both are now */
    queues(r0, NULL, NULL);
    p->runner = r0;
    x->runner = r0;
    p->home = y->home = 1;
    x->home = 0;
    net->learnt = 1;
    net->parts = net->parts_first = 2;
    net->trial = KPNI_TRIAL_KEPT;
    net->pulled_parts = 0;
    r0->pulled = r1->pulled = 0;
    r1->pull_after = 0;
    TEST_ASSERT_TRUE(KPNI_PULL_PENDING(r1));
    as_block_any(r1, kpni_runners_pull_due);
    TEST_ASSERT_TRUE(p->runner == r0);
    TEST_ASSERT_TRUE(KPNI_PULL_PENDING(r1));
    TEST_ASSERT_EQUAL_UINT(0, net->pulled_parts);
    TEST_ASSERT_NOT_EQUAL(0, r1->pull_after); /* a later block looks again */
    r0->own = 0; /* runner 0 has parked since, with no part taken */
    TEST_ASSERT_FALSE(KPNI_OWN_OK(net));
    r1->pull_after = 1;
    as_block_any(r1, kpni_runners_pull_due);
    TEST_ASSERT_TRUE(p->runner == r1);
    TEST_ASSERT_FALSE(KPNI_PULL_PENDING(r1));
    TEST_ASSERT_EQUAL_UINT(1, net->pulled_parts);
    TEST_ASSERT_FALSE(KPNI_OWN_OK(net));
    as_block_any(r0, kpni_runners_pull_due);
    TEST_ASSERT_EQUAL_UINT(2, net->pulled_parts);
    TEST_ASSERT_TRUE(KPNI_OWN_OK(net));
    net->learnt = 0;
    net->trial = KPNI_TRIAL_NONE;
}

/* The resolver's walk made for a process that parked (white-box, under
 * KPN_POLICY_STATIC on two runners): a's chain runs a -> b -> c, where
 * c runs on the other runner.  If that runner is 'own', c may be waking
 * b at this moment with no lock, having read its mark before the walk
 * set it, so b is marked too; else only c.  A process whose wake with
 * no lock the walk meets half-way (its state read before the wake
 * stores it, its 'wait' after the wake clears it) ends the chain there;
 * and a walk for a process already woken so keeps its mark. */
void test_a_walk_across_runners_allows_for_wakes_with_no_lock(void)
{
    kpn_proc *a, *b, *c;
    kpn_chan *ab, *cb;
    kpni_runner *r0, *r1;
    int round;

    for (round = 0; round < 3; ++round) {
        init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
        a = spawn_on("a", idle, NULL, 1);
        b = spawn_on("b", idle, NULL, 0);
        c = spawn_on("c", idle, NULL, 0);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ab, a, b, sizeof(int), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &cb, c, b, sizeof(int), 1));
        r0 = &net->runners[0];
        r1 = &net->runners[1];
        queues(r0, NULL, NULL);
        a->runner = r1;
        b->runner = c->runner = r0;
        a->state = KPN_PROC_BLOCKED_WRITE;
        a->wait = ab;
        b->state = KPN_PROC_BLOCKED_READ;
        b->wait = cb;
        c->state = KPN_PROC_RUNNING;
        r0->current = c;
        a->watched = 1;
        b->watched = c->watched = 0;
        r0->own = round != 1;
        if (round == 2)
            b->wait = NULL; /* met half-way through its wake */

        kpni_lock_all(r1);
        kpni_resolve_parked(r1, a);
        kpni_unlock_all(r1);
        TEST_ASSERT_EQUAL_INT(round == 2, a->watched); /* 'before' b, on a runner that is 'own' */
        TEST_ASSERT_EQUAL_INT(round != 1, b->watched);
        TEST_ASSERT_EQUAL_INT(round != 2, c->watched);
        TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, a->state);
        TEST_ASSERT_EQUAL_UINT(0, net->resolutions);

        /* a itself woken so: its walk changes nothing */
        a->wait = NULL;
        a->watched = 1;
        b->watched = c->watched = 0;
        kpni_lock_all(r1);
        kpni_resolve_parked(r1, a);
        kpni_unlock_all(r1);
        TEST_ASSERT_EQUAL_INT(1, a->watched);
        TEST_ASSERT_EQUAL_INT(0, b->watched);
        TEST_ASSERT_EQUAL_INT(0, c->watched);
        r0->own = 0;
        r0->current = NULL;
    }
}

/* ------------------------------------------------------------ CPUs */

/* RND-B sending 'rounds' messages on each of the source's outputs
 * (13 307 messages in all at 40, 39 947 at 120), into a fresh net on
 * 'runners' runners over 'cpus' CPUs, learning a placement as soon as
 * steals count (runners.c, learn_due) at any grain; returns the stats. */
static kpn_stats run_learning(const rnet_graph *g, rnet_run *run, unsigned runners,
                              unsigned cpus, uint64_t rounds)
{
    kpn_config cfg = config(runners, KPN_POLICY_WS, KPN_WAKE_WAKER);
    kpn_stats st;

    cfg.learn = 1u << 30;
    cfg.learn_grain_ns = 0;
    cfg.learn_trial_ns = 0;
    cfg.cpus = cpus;
    cfg.reserve_size = 1 << 20;
    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena, rnet_arena_size(g, &cfg, 1, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, rnet_build(net, g, run, 1000000, rounds, 1, STACK, 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_TRUE(rnet_work_ok(run));
    return st;
}

/* A placement learnt mid-run puts the processes on no more runners than
 * the CPUs they share (cfg.cpus; 0: the port's count), the first ones,
 * and changes no message: RND-B on 3 runners over 2 and 5 CPUs and the
 * port's count, against one runner (one CPU is the next test's).  A
 * runner learns only once it has sent 16 messages per channel (kpn.h,
 * cfg.learn), so the run carries enough for each of the 3 runners to
 * send that many on an even split: on a loaded machine the runners take
 * turns and share the messages about evenly, and at 40 rounds (13 307
 * messages, 5 328 a runner needed) most runs then learnt nothing.  A
 * run learns only if a runner has stolen, too: up to 20 runs at each
 * setting, and a setting at which none learnt would test nothing, and
 * fails.
 * White-box: the homes the placement gave. */
void test_a_learnt_placement_uses_no_more_runners_than_the_cpus(void)
{
    static const unsigned cpus[] = {2, 5, 0};
    const uint64_t rounds = 120;
    static rnet_graph g;
    static rnet_run run;
    static uint64_t reference[RNET_MAX_NODES];
    unsigned k, parts, port = kpn_port_cpus();
    uint64_t messages;
    const kpn_proc *p;
    int v, round;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout learns no placement");
    TEST_ASSERT_EQUAL_INT(RNET_OK, rnet_generate(&g, &rnet_preset_find("RND-B")->params));
    messages = run_learning(&g, &run, 1, 0, rounds).messages;
    TEST_ASSERT_GREATER_OR_EQUAL(3 * 16 * net->nchans, messages);
    for (v = 0; v < g.nodes; ++v)
        reference[v] = run.burned[v];
    for (k = 0; k < sizeof cpus / sizeof cpus[0]; ++k) {
        uint64_t placements = 0;

        parts = cpus[k] != 0 ? cpus[k] : port != 0 ? port : 3;
        parts = parts < 3 ? parts : 3;
        if (parts == 1)
            continue; /* a one-CPU machine: the run learns nothing (below) */
        for (round = 0; round < 20 && placements == 0; ++round) {
            kpn_stats st = run_learning(&g, &run, 3, cpus[k], rounds);

            for (v = 0; v < g.nodes; ++v)
                TEST_ASSERT_EQUAL_UINT64(reference[v], run.burned[v]);
            TEST_ASSERT_EQUAL_UINT(parts, net->parts);
            if (st.placements != 0)
                for (p = kpn_proc_next(net, NULL); p != NULL; p = kpn_proc_next(net, p))
                    TEST_ASSERT_TRUE(p->home < parts);
            placements += st.placements;
        }
        TEST_ASSERT_MESSAGE(placements > 0, "no run learnt a placement");
    }
}

/* Over one CPU a work-stealing run is on runner 0 alone, and every
 * message is what it is on one runner: RND-B on 3 runners with cfg.cpus
 * 1.  The other runners dispatch nothing (their threads are not even
 * started: test_sched_port) and nothing is learnt.  A static placement
 * is the user's, and is kept: the reader pinned to runner 1 runs there. */
void test_one_cpu_runs_a_work_stealing_net_on_runner_0_alone(void)
{
    static rnet_graph g;
    static rnet_run run;
    static uint64_t reference[RNET_MAX_NODES];
    kpn_config cfg = config(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    kpn_stats st;
    kpn_proc *w, *r;
    int v;

    TEST_ASSERT_EQUAL_INT(RNET_OK, rnet_generate(&g, &rnet_preset_find("RND-B")->params));
    run_learning(&g, &run, 1, 0, 40);
    for (v = 0; v < g.nodes; ++v)
        reference[v] = run.burned[v];
    st = run_learning(&g, &run, 3, 1, 40);
    for (v = 0; v < g.nodes; ++v)
        TEST_ASSERT_EQUAL_UINT64(reference[v], run.burned[v]);
    TEST_ASSERT_EQUAL_UINT(3, st.runners);
    TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[0]);
    TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[1]);
    TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[2]);
    TEST_ASSERT_EQUAL_UINT64(0, st.steals);
    TEST_ASSERT_EQUAL_UINT64(0, st.placements);

    cfg.cpus = 1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    mv_build(&w, &r);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(w, 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(r, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(5, mv_n);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_THAN(0, st.runner_switches[1]);
}

/* The order in which the processes of the test below first ran. */
static int first_ran[16], first_n;

static void note_first(void *arg)
{
    if (first_n < 16)
        first_ran[first_n++] = (int)(intptr_t)arg;
}

/* Over one CPU runner 0 starts the processes in spawn order, as one
 * runner does: spawn queues process i on runner i mod 3, and taken a
 * runner's queue at a time they would start 0, 3, 1, 4, 2, 5.  Five
 * processes spawned between runs (on runners 0, 1, 2, 0, 1) start in
 * spawn order too, after none of the first six, which have returned. */
void test_one_cpu_starts_the_processes_in_spawn_order(void)
{
    kpn_config cfg = config(3, KPN_POLICY_WS, KPN_WAKE_LAST);
    kpn_proc *p;
    kpn_stats st;
    int i;

    cfg.cpus = 1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    first_n = 0;
    for (i = 0; i < 6; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK,
                              kpn_spawn(net, &p, "p", note_first, (void *)(intptr_t)i, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(6, first_n);
    for (i = 6; i < 11; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK,
                              kpn_spawn(net, &p, "p", note_first, (void *)(intptr_t)i, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(11, first_n);
    for (i = 0; i < 11; ++i)
        TEST_ASSERT_EQUAL_INT(i, first_ran[i]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(11, st.runner_switches[0]);
    TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[1] + st.runner_switches[2]);
}

#if defined(__linux__)
/* Bind the calling thread to the first CPU it may run on, keeping what
 * it had in 'was'; 0 if the OS refused. */
static int bind_one_cpu(cpu_set_t *was)
{
    cpu_set_t one;
    int cpu = 0;

    TEST_ASSERT_EQUAL_INT(0, sched_getaffinity(0, sizeof *was, was));
    while (!CPU_ISSET(cpu, was))
        ++cpu;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
}
#endif

/* The first run settles whether a net runs on runner 0 alone, and a net
 * stopped in one mode goes on in it, losing nothing, whatever the CPUs
 * are by then: the test above's writer and reader under work stealing,
 * stopped by KPN_ERESERVE with a message in a ring, then resumed; once
 * with the first run over one CPU (the thread bound to one, cfg.cpus 0:
 * the port's count) and the second over all the thread may use, once
 * the other way round.  Where the OS cannot bind a thread, both runs are
 * over the same CPUs and the checks of where they ran are left out. */
void test_the_first_run_settles_whether_a_net_runs_on_runner_0_alone(void)
{
    static unsigned char more[1024];
    static const int want[] = {10, 11, 3, 1, 2};
    int alone_first;

    for (alone_first = 1; alone_first >= 0; --alone_first) {
        kpn_config cfg = config(3, KPN_POLICY_WS, KPN_WAKE_WAKER);
        kpn_proc *w, *r;
        kpn_stats st;
        kpn_status s;
#if defined(__linux__)
        cpu_set_t was;
        int bound = 0;
#endif

        cfg.reserve_size = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        mv_build(&w, &r);

#if defined(__linux__)
        if (alone_first)
            bound = bind_one_cpu(&was);
#endif
        s = kpn_run(net);
#if defined(__linux__)
        if (bound)
            TEST_ASSERT_EQUAL_INT(0, sched_setaffinity(0, sizeof was, &was));
#endif
        TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, s);
        TEST_ASSERT_EQUAL_INT(2, mv_n);
        TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(mv_a));
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(mv_b));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
#if defined(__linux__)
        if (bound) /* the run over one CPU: on runner 0 alone */
            TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[0]);
#endif

        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, more, sizeof more));
#if defined(__linux__)
        if (!alone_first)
            bound = bind_one_cpu(&was);
#endif
        s = kpn_run(net);
#if defined(__linux__)
        if (bound && !alone_first)
            TEST_ASSERT_EQUAL_INT(0, sched_setaffinity(0, sizeof was, &was));
#endif
        TEST_ASSERT_EQUAL_INT(KPN_OK, s);
        TEST_ASSERT_EQUAL_INT(5, mv_n);
        TEST_ASSERT_EQUAL_INT_ARRAY(want, mv_got, 5);
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(mv_a));
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(mv_b));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT(2, st.procs_exited);
#if defined(__linux__)
        if (bound && alone_first) /* still alone, though every CPU is back */
            TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[0]);
#endif
    }
}

/* A net stopped on runner 0 alone may leave processes queued there, and
 * kpn_proc_pin between runs takes one out of the middle of that queue:
 * the queue must come back from the run as several runners keep it,
 * linked both ways, or the unlink loses the processes around it.  The
 * writer wakes three readers just before it blocks into the deadlock
 * that stops the run (the writer and reader of mv_build, with no
 * reserve), so they are still queued when it stops. */
static kpn_chan *qz[3];
static int qz_got[3];

static void qz_writer(void *arg)
{
    static const int a[] = {10, 11, 1, 2};
    int i, three = 3, z;
    (void)arg;
    for (i = 0; i < 3; ++i)
        kpn_send(mv_a, &a[i]);
    for (z = 0; z < 3; ++z) {
        int v = 20 + z;
        kpn_send(qz[z], &v);
    }
    kpn_send(mv_a, &a[3]);
    kpn_send(mv_b, &three);
}

static void qz_reader(void *arg)
{
    int z = (int)(intptr_t)arg;
    (void)kpn_recv(qz[z], &qz_got[z]);
}

void test_a_net_stopped_alone_leaves_its_queue_for_kpn_proc_pin(void)
{
    static unsigned char more[1024];
    static const int want[] = {10, 11, 3, 1, 2};
    kpn_config cfg = config(3, KPN_POLICY_WS, KPN_WAKE_WAKER);
    kpn_proc *w, *r, *zp[3];
    kpn_proc_stats ps;
    kpn_stats st;
    int z;

    cfg.cpus = 1;
    cfg.reserve_size = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", qz_writer, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", mv_reader, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &mv_a, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &mv_b, w, r, sizeof(int), 1));
    for (z = 0; z < 3; ++z) {
        TEST_ASSERT_EQUAL_INT(KPN_OK,
                              kpn_spawn(net, &zp[z], "z", qz_reader, (void *)(intptr_t)z, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &qz[z], w, zp[z], sizeof(int), 1));
        qz_got[z] = 0;
    }
    mv_n = 0;
    memset(mv_got, 0, sizeof mv_got);

    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    for (z = 0; z < 3; ++z) { /* woken, not yet run: the message counts as in the channel */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(zp[z], &ps));
        TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, ps.state);
        TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(qz[z]));
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(zp[1], 2));

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, more, sizeof more));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    for (z = 0; z < 3; ++z)
        TEST_ASSERT_EQUAL_INT(20 + z, qz_got[z]);
    TEST_ASSERT_EQUAL_INT(5, mv_n);
    TEST_ASSERT_EQUAL_INT_ARRAY(want, mv_got, 5);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(5, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[0]); /* alone throughout */
}

/* ------------------------------------------------------------ solo */

/* A ring that one token runs round has nothing for a second runner: it
 * sleeps, and the runner with the token goes solo (runners.c, "Solo"),
 * runs as one runner does, and shares again when there is work to share
 * or the run stops.  The head runs laps until a runner is solo (bounded:
 * a runner that never went solo fails the test), then puts SOLO_TOKENS
 * tokens in at once, which leaves several processes ready at a block and
 * ends the solo; every forwarder must see every token exactly once a lap. */
#define SOLO_RING 16
#define SOLO_TOKENS 4
#define SOLO_LAPS_MAX (SLOW ? 200000 : 2000000)
#define SOLO_COUNT_LAPS 100
static kpn_chan *solo_ch[SOLO_RING];
static long solo_got[SOLO_RING];
static long solo_laps, solo_shared_laps;
static int solo_seen, solo_overflow, solo_count, solo_counts_checked, solo_counts_wrong;
static int solo_blocked_seen, solo_far;
static kpn_proc *solo_head, *solo_procs[SOLO_RING];

static int net_is_solo(void)
{
    return __atomic_load_n(&net->solo, __ATOMIC_ACQUIRE) != 0;
}

/* From a process: whether its own runner is solo.  Not net->solo, which
 * another runner also sets for the moment it asks whether it may go solo
 * (runners.c, kpni_runners_solo). */
static int running_solo(const kpn_proc *self)
{
    return self->runner->solo != 0;
}

/* From the head, while its runner is solo (nothing else runs): does each
 * process's count of the processes waiting on it match the processes
 * blocked on one of its channels, and are the reader's words of each
 * channel on its writer's line? */
static void check_solo_counts(void)
{
    int i, j, blocked = 0;

    for (i = 0; i < SOLO_RING; ++i) {
        unsigned want = 0;

        for (j = 0; j < SOLO_RING; ++j) {
            const kpn_proc *q = solo_procs[j];

            if ((q->state == KPN_PROC_BLOCKED_READ || q->state == KPN_PROC_BLOCKED_WRITE) &&
                kpni_proc_waits_for(q) == solo_procs[i])
                want++;
        }
        if (solo_procs[i]->state == KPN_PROC_BLOCKED_READ)
            blocked++;
        if (solo_procs[i]->nwaiters != want)
            solo_counts_wrong++;
#if !KPN_COMPACT
        if (solo_ch[i]->rd_off != offsetof(kpn_chan, near_rpos))
            solo_far++;
#endif
    }
    if (blocked > solo_blocked_seen)
        solo_blocked_seen = blocked;
    solo_counts_checked++;
}

static void solo_head_fn(void *arg)
{
    long t = 0, i;
    (void)arg;
    for (solo_laps = 0; solo_laps < SOLO_LAPS_MAX && !solo_seen; ++solo_laps) {
        kpn_send(solo_ch[0], &t);
        kpn_recv(solo_ch[SOLO_RING - 1], &t);
        solo_got[0]++;
        solo_seen = running_solo(solo_head);
    }
    if (solo_count && solo_seen) {
        /* as the runner went solo, and after laps of blocks and wakes */
        check_solo_counts();
        for (i = 0; i < SOLO_COUNT_LAPS; ++i, ++solo_laps) {
            kpn_send(solo_ch[0], &t);
            kpn_recv(solo_ch[SOLO_RING - 1], &t);
            solo_got[0]++;
        }
        if (running_solo(solo_head))
            check_solo_counts();
    }
    if (solo_overflow) {
        kpn_proc_stats ps;
        kpn_proc_stats_get(solo_head, &ps);
        kt_recurse((const unsigned char *)ps.stack_base - 16, 0);
        kpn_recv(solo_ch[SOLO_RING - 1], &t); /* parks: the guard is checked */
        return;
    }
    for (i = 0; i < SOLO_TOKENS; ++i)
        kpn_send(solo_ch[0], &t);
    for (i = 0; i < SOLO_TOKENS * solo_shared_laps; ++i) {
        kpn_recv(solo_ch[SOLO_RING - 1], &t);
        solo_got[0]++;
        if (i < SOLO_TOKENS * (solo_shared_laps - 1))
            kpn_send(solo_ch[0], &t);
    }
    kpn_close(solo_ch[0]);
}

static void solo_forward(void *arg)
{
    long i = (long)(intptr_t)arg, t;
    while (kpn_recv(solo_ch[i - 1], &t) == KPN_OK) {
        solo_got[i]++;
        kpn_send(solo_ch[i], &t);
    }
    kpn_close(solo_ch[i]);
}

static void solo_ring(int overflow, long shared_laps)
{
    kpn_config cfg = config(2, KPN_POLICY_WS, KPN_WAKE_WAKER);
    kpn_proc *p[SOLO_RING];
    long i;

    cfg.cpus = 2; /* not one CPU, where runner 0 would run alone */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    for (i = 0; i < SOLO_RING; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p[i], "ring", i == 0 ? solo_head_fn : solo_forward,
                                                (void *)(intptr_t)i, i == 0 ? 4096 : STACK));
    for (i = 0; i < SOLO_RING; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &solo_ch[i], p[i], p[(i + 1) % SOLO_RING],
                                                  sizeof(long), 1));
    solo_head = p[0];
    memcpy(solo_procs, p, sizeof solo_procs);
    solo_count = 0;
    solo_counts_checked = solo_counts_wrong = solo_blocked_seen = solo_far = 0;
    solo_overflow = overflow;
    solo_shared_laps = shared_laps;
    solo_seen = 0;
    memset(solo_got, 0, sizeof solo_got);
}

/* A receive finds the ring empty and open while the writer runs on the
 * other runner; before the reader's block publishes its state, the
 * writer sends, returns (closing the channel, with the reader not yet
 * blocked to wake) and its runner goes to sleep.  The block may then
 * make the reader's runner solo (every other runner dormant, every live
 * process on it), and must still look at the channel again, as a block
 * on a crossing channel does (sched.c, block_any): else the reader parks
 * for good beside its message, and the run ends with the net not at
 * rest.  The same for a send that finds the ring full while the reader
 * takes a message and returns.  White-box: the process spins until all
 * that has happened, then makes the block its call would have made
 * (kpni_sched_block), with the other runner made to look as if it had
 * come back empty-handed from its wakes (KPNI_FRUITLESS), so that the
 * block goes solo.  The other end must run on the other runner: where a
 * steal has put both on one runner all the same, the late end does not
 * wait for it, and the net is run again. */
static kpn_chan *late_ch;
static kpn_proc *late_writer, *late_reader;
static int late_setup, late_solo, late_got, late_end;

/* From the process that blocks late: wait until 'gone' has returned on
 * the other runner and that runner sleeps, then block on late_ch for
 * 'why'; 0 at once where 'gone' shares self's runner. */
static int late_block(kpn_proc *self, kpn_proc *gone, kpn_proc_state why)
{
    kpni_runner *other = &net->runners[self->runner == &net->runners[0] ? 1 : 0];
    long spins;

    /* the look self's send left out, which its next block would make
     * (chan.c, release_cross): 'gone' may have parked reading */
    if (self->unfenced[KPNI_WRITES] != NULL)
        kpni_chan_flush(self, KPNI_WRITES);
    for (spins = 0; __atomic_load_n(&gone->state, __ATOMIC_SEQ_CST) != KPN_PROC_EXITED; ++spins)
        if (__atomic_load_n(&gone->runner, __ATOMIC_SEQ_CST) == self->runner || spins == 1000000000L)
            return 0;
    for (spins = 0; spins < 1000000000L && !(__atomic_load_n(&other->dormant, __ATOMIC_SEQ_CST) &&
                                             __atomic_load_n(&other->sleeping, __ATOMIC_SEQ_CST) == KPNI_ASLEEP);
         ++spins)
        ;
    if (!__atomic_load_n(&other->dormant, __ATOMIC_SEQ_CST))
        return 0;
    late_setup = 1;
    __atomic_store_n(&other->fruitless, KPNI_FRUITLESS, __ATOMIC_SEQ_CST);
    kpni_sched_block(self, why, late_ch);
    late_solo = running_solo(self);
    return 1;
}

static void late_writer_fn(void *arg)
{
    int v = 7;

    kpn_send(late_ch, &v);
    /* found the ring (capacity 1) full: the reader has yet to take it */
    if (arg == NULL || !late_block(late_writer, late_reader, KPN_PROC_BLOCKED_WRITE))
        return;
    late_got = 1;
    late_end = kpn_send(late_ch, &v) == KPN_OK; /* the reader has gone: dropped */
}

static void late_reader_fn(void *arg)
{
    int v = 0;

    if (arg == NULL) {
        /* takes the message the late writer sent, waiting for it
         * without a block, so that its runner does not run dry and
         * steal the writer meanwhile */
        long spins;

        for (spins = 0; spins < 1000000000L && __atomic_load_n(&late_ch->sent, __ATOMIC_SEQ_CST) == 0;
             ++spins)
            ;
        (void)kpn_recv(late_ch, &v);
        return;
    }
    /* found the ring empty: the writer has yet to send */
    if (!late_block(late_reader, late_writer, KPN_PROC_BLOCKED_READ)) {
        while (kpn_recv(late_ch, &v) == KPN_OK)
            ;
        return;
    }
    late_got = kpn_recv(late_ch, &v) == KPN_OK && v == 7;
    late_end = kpn_recv(late_ch, &v) == KPN_EOF;
}

/* 'reader_late': the reader's block comes late, else the writer's. */
static void late_block_run(int reader_late)
{
    kpn_config cfg = config(2, KPN_POLICY_WS, KPN_WAKE_LAST);
    void *late = (void *)&late_setup;
    kpn_stats st;
    int tries;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact build keeps one runner");
    cfg.cpus = 2;  /* not one CPU, where runner 0 would run alone */
    cfg.learn = 0; /* work stealing throughout: no placement */
    /* a writer parked for good beside room ends the run with
     * KPN_EDEADLOCK, not with the resolver growing its channel */
    cfg.resolve = reader_late;
    for (tries = 0; tries < 50; ++tries) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &late_reader, "reader", late_reader_fn,
                                                reader_late ? late : NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &late_writer, "writer", late_writer_fn,
                                                reader_late ? NULL : late, STACK));
        /* the late end on runner 1, whose thread may start before
         * runner 0's loop: runner 0 cannot steal it while it spins, nor
         * runner 1 the other end while it runs the late one */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(reader_late ? late_reader : late_writer, 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(reader_late ? late_writer : late_reader, 0));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &late_ch, late_writer, late_reader,
                                                  sizeof(int), reader_late ? 4 : 1));
        late_setup = late_solo = late_got = late_end = 0;
        TEST_ASSERT_EQUAL_INT_MESSAGE(KPN_OK, kpn_run(net), "the late block parked for good");
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT_MESSAGE(2u, (unsigned)st.procs_exited, "the late block parked for good");
        if (late_setup)
            break;
    }
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, late_setup, "the other end never ran on the other runner");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, late_got, "the late block parked for good");
    TEST_ASSERT_EQUAL_INT(1, late_end);
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, late_solo, "the block did not go solo: the test tests nothing");
    TEST_ASSERT_EQUAL_UINT(reader_late ? 0u : 1u, (unsigned)st.discarded);
}

void test_a_read_block_that_goes_solo_looks_again_at_what_the_writer_left(void)
{
    late_block_run(1);
}

void test_a_write_block_that_goes_solo_looks_again_at_what_the_reader_left(void)
{
    late_block_run(0);
}

/* An idle runner looks without a lock at the processes it remembers
 * parked on a crossing channel (runners.c, wake_missed), and one that
 * need not wait any more it wakes under every lock.  Meanwhile that
 * process may have been woken, taken its message and parked on the same
 * channel again (and the net come to rest, and the run end): under the
 * locks the runner must ask the channel again, not only whether the
 * process still waits on it, or it wakes a process that must wait (left
 * ready after the run, where the net fuzzer found it).  White-box, under
 * KPN_POLICY_STATIC: the writer on runner 0 holds runner 1's lock,
 * puts a message in with no look, and waits until runner 1, idle, has
 * taken runner 0's lock on its way to every lock, so has seen the
 * message; then it takes the message out as the reader would have,
 * leaving the reader parked, and lets go.  A round whose runner 1 was
 * asleep by then, and so never looked, proves nothing and is run again. */
static struct {
    kpn_proc *writer, *reader;
    kpn_chan *chan;
    int caught, spurious, tries;
} aba;

static void aba_reader(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(aba.chan, &v) == KPN_OK)
        ;
}

/* The reader's dispatches, read under its runner's lock, which its
 * runner holds as it dispatches it. */
static uint64_t aba_reader_switches(kpni_runner *r1)
{
    uint64_t n;

    kpni_lock(r1);
    n = aba.reader->switches;
    kpni_unlock(r1);
    return n;
}

#define ABA_LOOKS (SLOW ? 10000000L : 100000000L)

static void aba_writer(void *arg)
{
    kpni_runner *r0 = &net->runners[0], *r1 = &net->runners[1];
    int k = 0;
    (void)arg;
    for (aba.tries = 0; aba.tries < 200 && aba.caught < 3; ++aba.tries) {
        uint64_t switches;
        long spins;

        /* a message the reader takes: it parks again, and runner 1
         * runs dry and spins */
        kpn_send(aba.chan, &k);
        for (spins = 0; spins < ABA_LOOKS &&
                        !(__atomic_load_n(&aba.reader->state, __ATOMIC_SEQ_CST) == KPN_PROC_BLOCKED_READ &&
                          __atomic_load_n(&KPNI_RECEIVED(aba.chan), __ATOMIC_SEQ_CST) ==
                              __atomic_load_n(&aba.chan->sent, __ATOMIC_SEQ_CST));
             ++spins)
            ;
        (void)spin_while(&r1->sleeping, KPNI_AWAKE, 1);
        kpni_lock(r1);
        switches = aba.reader->switches;
        put_without_look(aba.chan, k);
        for (spins = 0; spins < ABA_LOOKS && __atomic_load_n(&r0->lock, __ATOMIC_SEQ_CST) == 0; ++spins)
            ;
        if (__atomic_load_n(&r0->lock, __ATOMIC_SEQ_CST) == 0) {
            /* runner 1 slept first: the look the writer's block makes */
            kpni_unlock(r1);
            aba.writer->unfenced[KPNI_WRITES] = aba.chan;
            kpni_chan_flush(aba.writer, KPNI_WRITES);
            continue;
        }
        aba.caught++;
        /* the reader "took" it and parked again on the same channel */
        __atomic_store_n(&KPNI_RECEIVED(aba.chan), __atomic_load_n(&aba.chan->sent, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        kpni_unlock(r1);
        /* a wake would make runner 1 dispatch the reader soon: let it
         * have its lock between the looks */
        for (spins = 0; spins < 10000 && aba_reader_switches(r1) == switches; ++spins)
            kpn_port_yield();
        aba.spurious += aba_reader_switches(r1) != switches;
    }
    kpn_close(aba.chan);
}

void test_an_idle_runner_asks_the_channel_again_before_it_wakes_a_reader(void)
{
    if (!runners_run_at_once())
        TEST_IGNORE_MESSAGE("the two runners take turns here");
    init(2, KPN_POLICY_STATIC, KPN_WAKE_LAST);
    memset(&aba, 0, sizeof aba);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &aba.writer, "writer", aba_writer, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &aba.reader, "reader", aba_reader, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(aba.writer, 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(aba.reader, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &aba.chan, aba.writer, aba.reader, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_TRUE_MESSAGE(aba.caught > 0, "runner 1 never looked while the writer held its lock");
    TEST_ASSERT_EQUAL_INT(0, aba.spurious);
}

/* One runner: a wake notes in the waker whom it woke (kpn_proc.after),
 * so that the waker's own next wake starts loading that one's lines
 * (KPNI_PREFETCH_AFTER).  After laps of a ring with one token each
 * process names the one after it, checked from the head with every
 * other process blocked. */
#define AFTER_RING 6
static kpn_chan *after_ch[AFTER_RING];
static kpn_proc *after_procs[AFTER_RING];
static int after_wrong, after_checked;

static void after_head(void *arg)
{
    long t = 0, lap, i;
    (void)arg;
    for (lap = 0; lap < 3; ++lap) {
        kpn_send(after_ch[0], &t);
        kpn_recv(after_ch[AFTER_RING - 1], &t);
    }
#if !KPN_COMPACT
    for (i = 0; i < AFTER_RING; ++i)
        after_wrong += after_procs[i]->after != after_procs[(i + 1) % AFTER_RING];
#else
    (void)i;
#endif
    after_checked = 1;
    kpn_close(after_ch[0]);
}

static void after_forward(void *arg)
{
    long i = (long)(intptr_t)arg, t;
    while (kpn_recv(after_ch[i - 1], &t) == KPN_OK)
        kpn_send(after_ch[i], &t);
    kpn_close(after_ch[i]);
}

void test_on_one_runner_a_wake_notes_whom_the_waker_woke(void)
{
    long i;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout keeps no note");
    init(1, KPN_POLICY_WS, KPN_WAKE_WAKER);
    for (i = 0; i < AFTER_RING; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &after_procs[i], "ring",
                                                i == 0 ? after_head : after_forward,
                                                (void *)(intptr_t)i, STACK));
    for (i = 0; i < AFTER_RING; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &after_ch[i], after_procs[i],
                                                  after_procs[(i + 1) % AFTER_RING],
                                                  sizeof(long), 1));
    after_wrong = after_checked = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, after_checked);
    TEST_ASSERT_EQUAL_INT(0, after_wrong);
}

void test_a_ring_with_one_token_goes_solo_and_shares_again_losing_nothing(void)
{
    kpn_stats st;
    long i;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout never goes solo");
    if (!runners_run_at_once())
        TEST_IGNORE_MESSAGE("the two runners take turns here");
    solo_ring(0, 50);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_TRUE_MESSAGE(solo_seen, "no runner went solo");
    TEST_ASSERT_FALSE(net_is_solo());
    TEST_ASSERT_EQUAL_INT(0, net->runners[0].solo | net->runners[1].solo);
    TEST_ASSERT_EQUAL_INT(1, net->runners[0].mt & net->runners[1].mt);
    TEST_ASSERT_TRUE(net->runners[0].solos + net->runners[1].solos >= 1);
    for (i = 0; i < SOLO_RING; ++i)
        TEST_ASSERT_EQUAL_INT64(solo_laps + SOLO_TOKENS * 50, solo_got[i]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(SOLO_RING, st.procs_exited);
}

/* The ring run with the head's checks while solo (check_solo_counts). */
static void run_checked_solo_ring(void)
{
    long i;

    solo_ring(0, 5);
    solo_count = 1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_TRUE_MESSAGE(solo_seen, "no runner went solo");
    TEST_ASSERT_EQUAL_INT(2, solo_counts_checked);
    for (i = 0; i < SOLO_RING; ++i)
        TEST_ASSERT_EQUAL_INT64(solo_laps + SOLO_TOKENS * 5, solo_got[i]);
}

/* Blocks and wakes on several runners keep no count of the processes
 * waiting on each (KPNI_NWAITERS_ADD), so the counts a runner finds as it
 * goes solo are stale; it counts afresh, and keeps them as one runner
 * does from then on.  A marked process that read-blocks while solo
 * walks only if its count says someone waits on it: a count too low
 * would let a read-block that closes a cycle skip its walk.  Checked
 * from the head as soon as it sees the runner solo, every other process
 * blocked reading, and again after laps of blocks and wakes. */
void test_a_runner_that_goes_solo_counts_the_waiters_afresh(void)
{
    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout never goes solo");
    if (!runners_run_at_once())
        TEST_IGNORE_MESSAGE("the two runners take turns here");
    run_checked_solo_ring();
    TEST_ASSERT_EQUAL_INT(SOLO_RING - 1, solo_blocked_seen);
    TEST_ASSERT_EQUAL_INT(0, solo_counts_wrong);
}

/* A solo runner runs both ends of every channel that does not cross, so
 * each keeps its reader's words on its writer's line, as on one runner;
 * they go back to the reader's own line before another runner runs
 * anything, since a move may then start the channel crossing while its
 * other end runs.  Checked from the head while solo (with the counts
 * above, in the same ring), and after the run, which ends shared. */
void test_a_solo_runner_keeps_the_readers_words_on_the_writers_line_until_it_shares(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact layout never goes solo");
#else
    long i;

    if (!runners_run_at_once())
        TEST_IGNORE_MESSAGE("the two runners take turns here");
    run_checked_solo_ring();
    TEST_ASSERT_EQUAL_INT(0, solo_far);
    for (i = 0; i < SOLO_RING; ++i)
        TEST_ASSERT_EQUAL_UINT(offsetof(kpn_chan, rpos), solo_ch[i]->rd_off);
#endif
}

/* ------------------------------------------------------------ draining */

/* A pipeline of capacity 1 whose stages each send a message of their
 * own (-k from stage k) before they forward, so that after one round
 * every channel holds a message and every process blocks writing: the
 * state a runner going solo inherits from two runners that filled it
 * (sched.c, "Draining"). */
#define DRAIN_STAGES 10
#define DRAIN_MSGS 20000L
static kpn_chan *drain_ch[DRAIN_STAGES + 1];
static long drain_got[DRAIN_MSGS + DRAIN_STAGES];
static long drain_n;

static void drain_source(void *arg)
{
    long i;

    (void)arg;
    for (i = 0; i < DRAIN_MSGS; ++i)
        (void)kpn_send(drain_ch[0], &i);
    (void)kpn_close(drain_ch[0]);
}

static void drain_stage(void *arg)
{
    long k = (long)(intptr_t)arg, v = -k;

    (void)kpn_send(drain_ch[k], &v);
    while (kpn_recv(drain_ch[k - 1], &v) == KPN_OK)
        (void)kpn_send(drain_ch[k], &v);
    (void)kpn_close(drain_ch[k]);
}

static void drain_sink(void *arg)
{
    long v;

    (void)arg;
    while (kpn_recv(drain_ch[DRAIN_STAGES], &v) == KPN_OK) {
        if (drain_n < (long)(sizeof drain_got / sizeof *drain_got))
            drain_got[drain_n] = v;
        drain_n++;
    }
}

/* Runs the filled pipeline on one runner, draining from the start or
 * not; checks every message and returns the resolver's walks, one for
 * each write-block. */
static uint64_t run_filled_pipeline(int drain)
{
    kpn_proc *procs[DRAIN_STAGES + 2];
    kpn_stats st;
    long k;

    init(1, KPN_POLICY_WS, KPN_WAKE_WAKER);
    drain_n = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &procs[0], "source", drain_source, NULL, STACK));
    for (k = 1; k <= DRAIN_STAGES; ++k)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &procs[k], "stage", drain_stage,
                                                (void *)(intptr_t)k, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &procs[DRAIN_STAGES + 1], "sink", drain_sink,
                                            NULL, STACK));
    for (k = 0; k <= DRAIN_STAGES; ++k)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &drain_ch[k], procs[k], procs[k + 1],
                                                  sizeof(long), 1));
    if (drain)
        kpni_sched_drain(&net->runners[0]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT64(DRAIN_MSGS + DRAIN_STAGES, drain_n);
    for (k = 0; k < DRAIN_STAGES; ++k)
        TEST_ASSERT_EQUAL_INT64(k - DRAIN_STAGES, drain_got[k]);
    for (k = 0; k < DRAIN_MSGS; ++k)
        TEST_ASSERT_EQUAL_INT64(k, drain_got[DRAIN_STAGES + k]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    return st.detections;
}

/* First in, first out keeps the filled pipeline filled, every process
 * write-blocking once a message; a runner that drains takes it to the
 * orbit of one that started empty, where the source alone write-blocks,
 * and first in, first out keeps that once the window is spent. */
void test_a_draining_runner_takes_a_filled_pipeline_to_one_write_block_a_message(void)
{
    uint64_t kept = run_filled_pipeline(0), drained;

    TEST_ASSERT_EQUAL_UINT(0, net->runners[0].drain);
    TEST_ASSERT_TRUE_MESSAGE(kept > (uint64_t)DRAIN_MSGS * DRAIN_STAGES / 2,
                             "the pipeline did not stay filled without draining");
    drained = run_filled_pipeline(1);
    TEST_ASSERT_EQUAL_UINT(0, net->runners[0].drain); /* the window was spent */
    TEST_ASSERT_TRUE(drained < (uint64_t)DRAIN_MSGS * 2);
}

/* A runner drains for KPNI_DRAIN_PER_PROC switches a process, and not
 * past KPNI_DRAIN_MAX however many the net has. */
void test_a_drain_lasts_a_bounded_number_of_switches(void)
{
    kpn_proc *p;

    init(1, KPN_POLICY_WS, KPN_WAKE_WAKER);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "a", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "b", idle, NULL, STACK));
    kpni_sched_drain(&net->runners[0]);
    TEST_ASSERT_EQUAL_UINT(2 * KPNI_DRAIN_PER_PROC, net->runners[0].drain);
    net->nprocs = (size_t)KPNI_DRAIN_MAX; /* as if it had that many */
    kpni_sched_drain(&net->runners[0]);
    TEST_ASSERT_EQUAL_UINT(KPNI_DRAIN_MAX, net->runners[0].drain);
    net->nprocs = 2;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_UINT(KPNI_DRAIN_MAX - 2, net->runners[0].drain);
}

/* A halt while a runner is solo wakes the sleeping one, which waits for
 * the solo to end before it looks at anything; both stop. */
void test_a_stack_overflow_while_solo_stops_both_runners(void)
{
    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout never goes solo");
    if (!runners_run_at_once())
        TEST_IGNORE_MESSAGE("the two runners take turns here");
    solo_ring(1, 0);
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_TRUE_MESSAGE(solo_seen, "no runner went solo");
    TEST_ASSERT_EQUAL_PTR(solo_head, kpn_net_fault(net));
    TEST_ASSERT_FALSE(net_is_solo());
}
