/* SPDX-License-Identifier: MIT */
/* The scheduler against a mocked port.h: which contexts it switches, in what order, and runner threads the OS refuses. */
#include "unity.h"
#include "kpn_int.h"
#include "mock_port.h"
#include "support/helpers.h"

/* The core and no port: every kpn_port_* call lands in the mock. */
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

/*
 * A mocked switch returns at once: the process it names does not run,
 * and the core carries on as if that process had handed the CPU back.
 * So these tests see the scheduler's decisions (whom it resumes, which
 * threads it starts and joins) and never a process body.  Calls to
 * kpn_port_switch or kpn_port_thread_* that a test did not expect fail
 * it; expectations are checked in order across functions
 * (project.yml: :enforce_strict_ordering).
 */

#define STACK 4096
#define CTX_SIZE 64
#define THREAD_STACK_MIN (16 * 1024)

static unsigned char arena[256 * 1024];
static kpn_net *net;

static void body(void *arg)
{
    (void)arg;
}

/* Sizes are constants of a port; these are plausible ones. */
void setUp(void)
{
    kpn_port_ctx_size_IgnoreAndReturn(CTX_SIZE);
    kpn_port_sem_size_IgnoreAndReturn(32);
    kpn_port_thread_size_IgnoreAndReturn(64);
    kpn_port_thread_stack_min_IgnoreAndReturn(THREAD_STACK_MIN);
    kpn_port_idle_size_IgnoreAndReturn(32);
    kpn_port_idle_init_IgnoreAndReturn(0);
    kpn_port_clock_ns_IgnoreAndReturn(0);
    kpn_port_cpus_IgnoreAndReturn(0);
    kpn_port_fence_threads_IgnoreAndReturn(-1);
    net = NULL;
}

void tearDown(void) {}

static void init_net(unsigned runners)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
}

static kpn_proc *spawn(void)
{
    kpn_proc *p = NULL;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", body, NULL, STACK));
    return p;
}

/* ---- spawning: what kpn_port_init is given ---- */

static struct {
    int calls;
    kpn_port_ctx *ctx;
    void *stack;
    size_t size;
    void *arg;
} init_seen;

static void record_init(kpn_port_ctx *ctx, void *stack, size_t size, void (*fn)(void *), void *arg,
                        int cmock_num_calls)
{
    (void)fn;
    (void)cmock_num_calls;
    init_seen.calls++;
    init_seen.ctx = ctx;
    init_seen.stack = stack;
    init_seen.size = size;
    init_seen.arg = arg;
}

void test_spawn_prepares_the_context_on_the_process_own_stack(void)
{
    kpn_proc *p;

    init_net(1);
    init_seen.calls = 0;
    kpn_port_init_StubWithCallback(record_init);
    p = spawn();
    TEST_ASSERT_EQUAL_INT(1, init_seen.calls);
    TEST_ASSERT_EQUAL_PTR(kpni_proc_ctx(p), init_seen.ctx);
    TEST_ASSERT_EQUAL_PTR(p->stack_lo, init_seen.stack);
    TEST_ASSERT_EQUAL_size_t(STACK, init_seen.size);
    TEST_ASSERT_EQUAL_size_t(p->stack_size, init_seen.size);
    /* the entry gets the process, not the user's argument */
    TEST_ASSERT_EQUAL_PTR(p, init_seen.arg);
    TEST_ASSERT_EQUAL_INT(0, (int)((uintptr_t)init_seen.ctx % 16));
    TEST_ASSERT_EQUAL_INT(0, (int)((uintptr_t)init_seen.stack % 16));
}

/* ---- one runner: the host resumes every ready process in spawn order ---- */

void test_run_of_an_empty_net_switches_nothing(void)
{
    init_net(1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

void test_run_switches_from_the_host_to_each_process_in_spawn_order(void)
{
    kpn_proc *a, *b, *c;
    kpn_port_ctx *host;
    kpn_stats st;

    init_net(1);
    kpn_port_init_Ignore();
    a = spawn();
    b = spawn();
    c = spawn();
    host = net->runners[0].host;

    kpn_port_switch_Expect(host, kpni_proc_ctx(a));
    kpn_port_switch_Expect(host, kpni_proc_ctx(b));
    kpn_port_switch_Expect(host, kpni_proc_ctx(c));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(3, st.switches);
}

/* ---- several runners: a thread the OS refuses ---- */

static struct {
    int starts;
    void (*fn)(void *);
    void *arg;
    int ran;
} thread_seen;

/* The first runner thread starts (it is only recorded, not run yet); the
 * OS refuses the second. */
static int start_one_then_refuse(kpn_port_thread *t, void *stack, size_t size, void (*fn)(void *),
                                 void *arg, int cmock_num_calls)
{
    (void)t;
    (void)stack;
    (void)size;
    thread_seen.starts++;
    if (cmock_num_calls > 0)
        return 1;
    thread_seen.fn = fn;
    thread_seen.arg = arg;
    return 0;
}

/* Joining the started thread runs it to its end here, on the host's
 * stack: it must find the run over and resume no process (the mock fails
 * the test on any kpn_port_switch). */
static void run_the_started_thread(kpn_port_thread *t, int cmock_num_calls)
{
    (void)t;
    (void)cmock_num_calls;
    if (thread_seen.fn != NULL) {
        thread_seen.fn(thread_seen.arg);
        thread_seen.ran++;
    }
}

void test_a_runner_thread_that_fails_to_start_gives_ETHREAD_with_nothing_left_running(void)
{
    kpn_proc *a, *b;
    kpn_proc_stats ps;
    kpn_stats st;

    kpn_port_sem_init_IgnoreAndReturn(0);
    init_net(3);
    kpn_port_init_Ignore();
    a = spawn();
    b = spawn();

    thread_seen.starts = 0;
    thread_seen.fn = NULL;
    thread_seen.ran = 0;
    kpn_port_thread_start_StubWithCallback(start_one_then_refuse);
    kpn_port_thread_join_Expect(net->runners[1].thread);
    kpn_port_thread_join_AddCallback(run_the_started_thread);
    TEST_ASSERT_EQUAL_INT(KPN_ETHREAD, kpn_run(net));

    TEST_ASSERT_EQUAL_INT(2, thread_seen.starts);
    TEST_ASSERT_EQUAL_PTR(&net->runners[1], thread_seen.arg);
    TEST_ASSERT_EQUAL_INT(1, thread_seen.ran);
    /* nothing ran, everything is still ready, and the net can run again */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.switches);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(a, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, ps.state);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(b, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, ps.state);
    TEST_ASSERT_EQUAL_INT(KPNI_NET_IDLE, net->state);
}

/* The first runner thread starts and gets the CPU before the OS refuses
 * the second: it runs here, inside that refusal.  It must wait for the
 * others to start, and so run nothing; each time it gives up the CPU
 * the host is let to go on to the refusal (the store below stands for
 * runner 0's).  A thread that ran its queue would switch to its process,
 * which the mock fails. */
static int gate_waits;

static int start_one_that_runs_then_refuse(kpn_port_thread *t, void *stack, size_t size,
                                           void (*fn)(void *), void *arg, int cmock_num_calls)
{
    (void)t;
    (void)stack;
    (void)size;
    thread_seen.starts++;
    if (cmock_num_calls == 0) {
        thread_seen.fn = fn;
        thread_seen.arg = arg;
        return 0;
    }
    thread_seen.fn(thread_seen.arg);
    thread_seen.ran++;
    return 1;
}

static void host_goes_on(int cmock_num_calls)
{
    (void)cmock_num_calls;
    gate_waits++;
    net->done = 1;
}

void test_a_runner_thread_started_before_another_is_refused_runs_nothing(void)
{
    kpn_proc *a, *b;
    kpn_stats st;

    kpn_port_sem_init_IgnoreAndReturn(0);
    init_net(3);
    kpn_port_init_Ignore();
    a = spawn();
    b = spawn(); /* homed on runner 1: its thread would resume it first */
    (void)a;

    thread_seen.starts = 0;
    thread_seen.fn = NULL;
    thread_seen.ran = 0;
    gate_waits = 0;
    kpn_port_thread_start_StubWithCallback(start_one_that_runs_then_refuse);
    kpn_port_yield_StubWithCallback(host_goes_on);
    kpn_port_thread_join_Expect(net->runners[1].thread);
    TEST_ASSERT_EQUAL_INT(KPN_ETHREAD, kpn_run(net));

    TEST_ASSERT_EQUAL_INT(2, thread_seen.starts);
    TEST_ASSERT_EQUAL_INT(1, thread_seen.ran);
    TEST_ASSERT_EQUAL_INT(1, gate_waits);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.switches);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, b->state);
    TEST_ASSERT_EQUAL_INT(KPNI_NET_IDLE, net->state);
}

/* ---- several runners: a semaphore the OS refuses ---- */

static struct {
    kpn_port_sem *made[KPN_MAX_RUNNERS];
    int inits;
    kpn_port_sem *destroyed[KPN_MAX_RUNNERS];
    int destroys;
} sem_seen;

static int refuse_the_third_sem(kpn_port_sem *s, int cmock_num_calls)
{
    sem_seen.made[sem_seen.inits++] = s;
    return cmock_num_calls == 2 ? 1 : 0;
}

static void record_destroy(kpn_port_sem *s, int cmock_num_calls)
{
    (void)cmock_num_calls;
    sem_seen.destroyed[sem_seen.destroys++] = s;
}

/* kpn_net_init of 4 runners in the arena, the third semaphore refused. */
static kpn_status init_refusing_the_third_sem(kpn_net **out)
{
    kpn_config cfg;

    sem_seen.inits = 0;
    sem_seen.destroys = 0;
    kpn_port_sem_init_StubWithCallback(refuse_the_third_sem);
    kpn_port_sem_destroy_StubWithCallback(record_destroy);
    kpn_config_default(&cfg);
    cfg.runners = 4;
    return kpn_net_init(out, arena, sizeof arena, &cfg);
}

void test_a_semaphore_that_fails_gives_ETHREAD_and_destroys_those_made_newest_first(void)
{
    net = kt_unwritten();
    TEST_ASSERT_EQUAL_INT(KPN_ETHREAD, init_refusing_the_third_sem(&net));

    TEST_ASSERT_EQUAL_INT(3, sem_seen.inits);
    TEST_ASSERT_EQUAL_INT(2, sem_seen.destroys);
    TEST_ASSERT_EQUAL_PTR(sem_seen.made[1], sem_seen.destroyed[0]);
    TEST_ASSERT_EQUAL_PTR(sem_seen.made[0], sem_seen.destroyed[1]);
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), net);
    net = NULL;
}

/* The runners' records of the refused init lie over the old net's
 * processes: the old net must not be left looking whole. */
void test_a_semaphore_refused_over_a_net_leaves_its_handles_refused(void)
{
    kpn_net *old, *again = kt_unwritten();
    kpn_proc *a, *b;
    kpn_chan *c = NULL;
    kpn_stats st;
    kpn_proc_stats ps;

    init_net(1);
    old = net;
    kpn_port_init_Ignore();
    a = spawn();
    b = spawn();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(old, &c, a, b, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(old, &st));

    TEST_ASSERT_EQUAL_INT(KPN_ETHREAD, init_refusing_the_third_sem(&again));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), again);

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(old, &st));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(a, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(old));
    TEST_ASSERT_NULL(kpn_proc_next(old, NULL));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_capacity(c));

    /* and the arena takes a net again */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&again, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(again, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.procs);
}

/* ---- input: a net whose reader waits on an input sleeps in the idle hook ---- */

static kpn_proc *input_reader;
static kpn_chan *input_chan;

/* The mocked switch runs no process body: play the reader's part.  The
 * first time, it blocks in kpn_recv on the empty input; the second time
 * (after the close) it hands the CPU back without blocking again. */
static void reader_blocks_on_the_input(kpn_port_ctx *from, kpn_port_ctx *to, int cmock_num_calls)
{
    (void)from;
    TEST_ASSERT_EQUAL_PTR(kpni_proc_ctx(input_reader), to);
    if (cmock_num_calls == 0) {
        input_reader->state = KPN_PROC_BLOCKED_READ;
        input_reader->wait = input_chan;
    }
}

/* What an interrupt would do while the net sleeps: close the input. */
static void an_interrupt_closes_the_input(kpn_port_idle *idle, int cmock_num_calls)
{
    (void)cmock_num_calls;
    TEST_ASSERT_EQUAL_PTR(net->input_idle, idle);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(input_chan));
}

void test_a_net_waiting_for_input_sleeps_in_the_idle_hook_until_the_input_closes(void)
{
    kpn_port_ctx *host;

    init_net(1);
    kpn_port_init_Ignore();
    input_reader = spawn();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &input_chan, input_reader, sizeof(int), 4));
    host = net->runners[0].host;
    kpn_port_idle_wake_Ignore();

    /* the reader runs and blocks on the empty input; nothing else can
     * run, so the host sleeps in the hook, not in a loop and not by
     * returning; the close makes the reader ready, and it runs again */
    kpn_port_switch_StubWithCallback(reader_blocks_on_the_input);
    kpn_port_switch_Expect(host, kpni_proc_ctx(input_reader));
    kpn_port_idle_wait_StubWithCallback(an_interrupt_closes_the_input);
    kpn_port_idle_wait_Expect(net->input_idle);
    kpn_port_switch_Expect(host, kpni_proc_ctx(input_reader));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, kpn_port_idle_wait_CallCount());
}

/* ---- what the system refuses: an input's idle object, a guard page ---- */

static int refuse_idle(kpn_port_idle *idle, int cmock_num_calls)
{
    (void)idle;
    (void)cmock_num_calls;
    return -1;
}

void test_an_idle_object_the_system_refuses_gives_ETHREAD_and_carves_nothing(void)
{
    kpn_proc *reader;
    kpn_chan *in = kt_unwritten();
    kpn_stats before, after;

    init_net(1);
    kpn_port_init_Ignore();
    reader = spawn();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    kpn_port_idle_init_StubWithCallback(refuse_idle);
    TEST_ASSERT_EQUAL_INT(KPN_ETHREAD, kpn_connect_input(net, &in, reader, sizeof(int), 4));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), in);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(before.chans, after.chans);
    /* the next try, which the system allows, succeeds */
    kpn_port_idle_init_IgnoreAndReturn(0);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, reader, sizeof(int), 4));
    TEST_ASSERT_NOT_NULL(in);
}

#define PAGE 4096
static unsigned char paged[8 * PAGE + PAGE]; /* an arena of its own: see the release */

static int refuse_guard(void *page, int protect, int cmock_num_calls)
{
    (void)cmock_num_calls;
    TEST_ASSERT_EQUAL_INT(0, (int)((uintptr_t)page % PAGE));
    TEST_ASSERT_EQUAL_INT(1, protect);
    return -1;
}

void test_a_guard_page_the_system_refuses_gives_ENOMEM_and_carves_nothing(void)
{
    unsigned char *mem = paged + (PAGE - (uintptr_t)paged % PAGE) % PAGE;
    kpn_config cfg;
    kpn_proc *p = kt_unwritten();
    kpn_stats before, after;

    /* a port whose page is smaller than a carve's alignment is refused */
    kpn_port_page_size_IgnoreAndReturn(8);
    kpn_config_default(&cfg);
    cfg.guard_pages = 1;
    net = kt_unwritten();
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, mem, 8 * PAGE, &cfg));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), net);
    kpn_port_page_size_IgnoreAndReturn(PAGE);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, mem, 8 * PAGE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    kpn_port_guard_StubWithCallback(refuse_guard);
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_spawn(net, &p, "p", body, NULL, STACK));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), p);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(0, after.procs);
    /* allowed, the same spawn succeeds; the release gives the page back */
    kpn_port_guard_IgnoreAndReturn(0);
    kpn_port_init_Ignore();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", body, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
}

/* ---- several runners: a block whose own wake stops its channel crossing ---- */

/* Two runners under work stealing (a woken reader joins the waker's
 * runner) and two processes, b on runner 0 and w on runner 1, taken off
 * their queues as if each ran there: 'on' from w to b and 'back' from b
 * to w, both crossing. */
static void two_crossing_ends(kpn_proc **b, kpn_proc **w, kpn_chan **on, kpn_chan **back)
{
    kpni_runner *r0, *r1;

    kpn_port_sem_init_IgnoreAndReturn(0);
    init_net(2);
    kpn_port_init_Ignore();
    *b = spawn();
    *w = spawn();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, on, *w, *b, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, back, *b, *w, sizeof(int), 1));
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE((*b)->runner == r0 && (*w)->runner == r1); /* spawn order, i mod 2 */
    TEST_ASSERT_TRUE(kpni_queue_pop_front(r0) == *b && kpni_queue_pop_front(r1) == *w);
    kpni_runners_mark(net);
    TEST_ASSERT_TRUE((*on)->cross && (*back)->cross);
}

/*
 * b, on runner 0, found its input 'on' empty while w, the writer, ran on
 * runner 1.  Meanwhile w sent on 'on', looked at b without a fence (b was
 * not blocked yet) and blocked reading 'x', whose message b had sent with
 * the same unfenced look.  Now b blocks: its fenced look at 'x' wakes w,
 * which joins b's runner, so 'on' stops crossing before b has fenced.  b
 * must look at 'on' again (runners.c, "Moves": 'unflips') and go on
 * instead of parking beside the message: the mock fails the test on any
 * switch.  No thread runs; the test is runner 0's thread.
 */
void test_a_block_whose_own_wake_stops_its_channel_crossing_looks_at_it_again(void)
{
    kpn_proc *b, *w;
    kpn_chan *on, *x;
    kpni_runner *r0, *r1;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout has no channel that does not cross");
    two_crossing_ends(&b, &w, &on, &x);
    r0 = &net->runners[0];
    r1 = &net->runners[1];

    b->state = KPN_PROC_RUNNING;
    r0->current = b;
    x->sent = 1;
    KPNI_SET_UNFENCED(b, KPNI_WRITES, x);
    w->state = KPN_PROC_BLOCKED_READ;
    w->wait = x;
    on->sent = 1;

    kpni_sched_block(b, KPN_PROC_BLOCKED_READ, on);

    TEST_ASSERT_EQUAL_INT(KPN_PROC_RUNNING, b->state);
    TEST_ASSERT_NULL(b->wait);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, w->state);
    TEST_ASSERT_TRUE(w->runner == r0 && r0->head == w);
    TEST_ASSERT_TRUE(!on->cross && !x->cross);
    TEST_ASSERT_EQUAL_INT(0, r0->lock);
    TEST_ASSERT_EQUAL_INT(0, r1->lock);
}

/* ---- several runners: the word that asks a message to look ---- */

/*
 * A message on a crossing channel looks at the other end's record only
 * if that end waits on the channel: the blocker sets a word on the line
 * of the end that would release it (KPNI_WAITING) before its fenced look
 * at the channel, and the word is cleared as the blocker runs again,
 * going on because the channel changed meanwhile or made ready.  So the
 * flush a process makes as it blocks leaves its look out where it finds
 * the word clear after its fence.  A run starts with every crossing
 * channel's words set.  No thread runs; the test is runner 0's thread,
 * and stands in for w's on runner 1 too.
 */
void test_a_block_on_a_crossing_channel_asks_the_other_ends_next_message_to_look(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact layout has no word to ask with: its messages always look");
#else
    kpn_proc *b, *w;
    kpn_chan *on, *back;
    kpni_runner *r0, *r1;

    two_crossing_ends(&b, &w, &on, &back);
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_EQUAL_size_t(1, KPNI_WAITING(on, KPN_PROC_BLOCKED_READ));
    TEST_ASSERT_EQUAL_size_t(1, KPNI_WAITING(back, KPN_PROC_BLOCKED_WRITE));
    KPNI_WAITING(on, KPN_PROC_BLOCKED_WRITE) = 0;
    KPNI_WAITING(back, KPN_PROC_BLOCKED_READ) = 0;
    b->state = KPN_PROC_RUNNING;
    r0->current = b;
    w->state = KPN_PROC_RUNNING;
    r1->current = w;

    /* b found 'on' empty; w's message lands as b blocks: b goes on,
     * waiting for nothing */
    on->sent = 1;
    kpni_sched_block(b, KPN_PROC_BLOCKED_READ, on);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_RUNNING, b->state);
    TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(on, KPN_PROC_BLOCKED_READ));
    TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(on, KPN_PROC_BLOCKED_WRITE));

    /* b found 'back' full; w takes the message as b blocks: the same */
    back->sent = 1;
    KPNI_RECEIVED(back) = 1;
    kpni_sched_block(b, KPN_PROC_BLOCKED_WRITE, back);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_RUNNING, b->state);
    TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(back, KPN_PROC_BLOCKED_WRITE));
    TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(back, KPN_PROC_BLOCKED_READ));

    /* b takes the message, finds 'on' empty and parks: its word is set */
    KPNI_RECEIVED(on) = 1;
    kpn_port_switch_Expect(kpni_proc_ctx(b), r0->host);
#ifdef KPNI_TSAN
    r0->fiber = __tsan_get_current_fiber(); /* the host's, as a run sets it */
#endif
    kpni_sched_block(b, KPN_PROC_BLOCKED_READ, on);
#ifdef KPNI_TSAN
    __tsan_switch_to_fiber(r0->fiber, 0); /* the mock came back here, not to b */
#endif
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, b->state); /* the mock switched back */
    TEST_ASSERT_EQUAL_size_t(1, KPNI_WAITING(on, KPN_PROC_BLOCKED_READ));
    TEST_ASSERT_EQUAL_INT(0, r0->lock);

    /* w sends, then blocks.  With the word clear, a state no block leaves
     * b in, the flush makes no look: b stays parked */
    on->sent = 2;
    KPNI_WAITING(on, KPN_PROC_BLOCKED_READ) = 0;
    KPNI_SET_UNFENCED(w, KPNI_WRITES, on);
    kpni_chan_flush(w, KPNI_WRITES);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, b->state);
    TEST_ASSERT_NULL(KPNI_UNFENCED(w, KPNI_WRITES));
    /* with the word set, as b's block left it, the flush wakes b, which
     * clears it */
    KPNI_WAITING(on, KPN_PROC_BLOCKED_READ) = 1;
    KPNI_SET_UNFENCED(w, KPNI_WRITES, on);
    kpni_chan_flush(w, KPNI_WRITES);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, b->state);
    TEST_ASSERT_EQUAL_size_t(0, KPNI_WAITING(on, KPN_PROC_BLOCKED_READ));
    TEST_ASSERT_EQUAL_INT(0, r0->lock);
    TEST_ASSERT_EQUAL_INT(0, r1->lock);
#endif
}

/* A runner that goes solo blocks as one runner does, setting no word, and
 * its messages look whatever the words say; so the words of every
 * crossing channel (while solo, only those that cross for the whole run,
 * such as an input) are set as it goes solo, for the first message after
 * it shares again. */
void test_a_runner_going_solo_asks_every_crossing_channel_to_look(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact layout has no word to ask with, and never goes solo");
#else
    kpn_proc *b;
    kpn_chan *in;
    kpni_runner *r0, *r1;

    kpn_port_sem_init_IgnoreAndReturn(0);
    init_net(2);
    kpn_port_init_Ignore();
    b = spawn();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, b, sizeof(int), 1));
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE(b->runner == r0 && kpni_queue_pop_front(r0) == b);
    kpni_runners_mark(net);
    TEST_ASSERT_TRUE(in->cross);
    KPNI_WAITING(in, KPN_PROC_BLOCKED_READ) = 0;
    KPNI_WAITING(in, KPN_PROC_BLOCKED_WRITE) = 0;
    /* runner 1 has slept through several wakes that found nothing */
    r1->dormant = 1;
    r1->sleeping = KPNI_ASLEEP;
    r1->fruitless = KPNI_FRUITLESS;
    b->state = KPN_PROC_RUNNING;
    r0->current = b;
    kpni_lock(r0);
    TEST_ASSERT_EQUAL_INT(1, kpni_runners_solo(r0));
    TEST_ASSERT_EQUAL_INT(0, r0->mt);
    TEST_ASSERT_EQUAL_INT(0, r0->lock);
    TEST_ASSERT_EQUAL_size_t(1, KPNI_WAITING(in, KPN_PROC_BLOCKED_READ));
    TEST_ASSERT_EQUAL_size_t(1, KPNI_WAITING(in, KPN_PROC_BLOCKED_WRITE));
#endif
}

/* A runner about to go solo says so (net->solo) before it asks the
 * others whether they are dormant, so that one woken after it was asked
 * waits (runners.c, kpni_runners_solo); where it does not go solo, it
 * takes that back, or a runner woken later would wait for good.  Asked
 * here with runner 1 awake, then dormant with a process still on it,
 * then dormant with none. */
void test_a_runner_that_does_not_go_solo_takes_back_its_word(void)
{
    kpn_proc *a, *b;
    kpni_runner *r0, *r1;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout never goes solo");
    kpn_port_sem_init_IgnoreAndReturn(0);
    init_net(2);
    kpn_port_init_Ignore();
    a = spawn();
    b = spawn();
    r0 = &net->runners[0];
    r1 = &net->runners[1];
    TEST_ASSERT_TRUE(kpni_queue_pop_front(a->runner) == a);
    TEST_ASSERT_TRUE(kpni_queue_pop_front(b->runner) == b);
    a->runner = r0;
    a->state = KPN_PROC_RUNNING;
    r0->current = a;
    b->runner = r1; /* as if queued there */
    kpni_lock(r0);

    r1->fruitless = KPNI_FRUITLESS; /* awake: not dormant */
    TEST_ASSERT_EQUAL_INT(0, kpni_runners_solo(r0));
    TEST_ASSERT_EQUAL_INT(0, net->solo);
    TEST_ASSERT_EQUAL_INT(1, r0->mt);
    TEST_ASSERT_EQUAL_INT(1, r0->lock); /* still the caller's */

    r1->dormant = 1; /* asleep, but b is on it */
    r1->sleeping = KPNI_ASLEEP;
    TEST_ASSERT_EQUAL_INT(0, kpni_runners_solo(r0));
    TEST_ASSERT_EQUAL_INT(0, net->solo);
    TEST_ASSERT_EQUAL_INT(1, r0->mt);
    TEST_ASSERT_NOT_EQUAL(0, r0->solo_after); /* looks again later */

    r0->solo_after = 0;
    b->runner = r0; /* b home: r0 goes solo, and says so */
    TEST_ASSERT_EQUAL_INT(1, kpni_runners_solo(r0));
    TEST_ASSERT_EQUAL_INT(1, net->solo);
    TEST_ASSERT_EQUAL_INT(0, r0->mt);
    TEST_ASSERT_EQUAL_INT(0, r0->lock);
}

/* ---- the CPUs a learnt placement may use ---- */

/* cfg.cpus when set, and then the port is not asked; else the port's
 * count; every runner when that is 0 (the port cannot tell) or more than
 * the runners.  Settled as the run starts, before any thread: here the
 * OS refuses the first, so nothing runs; except that over one CPU a
 * work-stealing run starts no thread (runners.c, run_alone), and with
 * no process it is over at once, while a static placement still starts
 * the threads it names. */
void test_the_runners_a_placement_may_use_come_from_cfg_cpus_or_the_port(void)
{
    static const struct { unsigned cpus, port, parts; int asks; kpn_policy policy; } cases[] = {
        {0, 2, 2, 1, KPN_POLICY_WS}, {0, 1, 1, 1, KPN_POLICY_WS}, {0, 0, 3, 1, KPN_POLICY_WS},
        {0, 64, 3, 1, KPN_POLICY_WS}, {1, 0, 1, 0, KPN_POLICY_WS}, {5, 0, 3, 0, KPN_POLICY_WS},
        {1, 0, 1, 0, KPN_POLICY_STATIC}, {0, 1, 1, 1, KPN_POLICY_STATIC},
    };
    unsigned i;

    kpn_port_sem_init_IgnoreAndReturn(0);
    kpn_port_sem_destroy_Ignore();
    kpn_port_thread_start_IgnoreAndReturn(1);
    kpn_port_cpus_StopIgnore();
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        kpn_config cfg;

        kpn_config_default(&cfg);
        cfg.runners = 3;
        cfg.cpus = cases[i].cpus;
        cfg.policy = cases[i].policy;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        if (cases[i].asks)
            kpn_port_cpus_ExpectAndReturn(cases[i].port);
        TEST_ASSERT_EQUAL_INT(cases[i].parts == 1 && cases[i].policy == KPN_POLICY_WS ? KPN_OK
                                                                                    : KPN_ETHREAD,
                              kpn_run(net));
        TEST_ASSERT_EQUAL_UINT(cases[i].parts, net->parts);
    }
}
