/* SPDX-License-Identifier: MIT */
/* A bare-metal port under QEMU (Cortex-M, RISC-V): whole networks, the resolver, faults, FP state per process, input from a timer interrupt. */
#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* a record's name pointer, white-box */
#include "support/helpers.h"
#include "target.h"

TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/env.c")
TEST_SOURCE_FILE("src/input.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/report.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/cortex-m/port_cortexm.c")
TEST_SOURCE_FILE("port/cortex-m/switch_cortexm.S")

/* Unoptimised, an RV64 process peaks past 1024 bytes and the port's
 * minimum is above it (port/riscv/port_config.h). */
#if defined(__OPTIMIZE__)
#define STACK 1024
#else
#define STACK 2048
#endif
static unsigned char arena[24 * 1024];
static kpn_net *net;

void setUp(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
}

void tearDown(void) {}

static kpn_proc *spawn(const char *name, void (*fn)(void *), void *arg, size_t stack)
{
    kpn_proc *p = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, name, fn, arg, stack));
    return p;
}

static kpn_chan *connect(kpn_proc *w, kpn_proc *r, size_t cap)
{
    kpn_chan *c = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, w, r, sizeof(uint32_t), cap));
    return c;
}

/* ------------------------------------------------------------------ */
/* A pipeline: numbers 1..N, squared, summed. */

#define PIPE_N 200u

struct pipe {
    kpn_chan *a, *b;
    uint64_t sum;
    unsigned got;
    int bad;
};

static void pipe_source(void *arg)
{
    struct pipe *p = arg;
    uint32_t i;
    for (i = 1; i <= PIPE_N; ++i)
        p->bad |= kpn_send(p->a, &i) != KPN_OK;
}

static void pipe_square(void *arg)
{
    struct pipe *p = arg;
    uint32_t v;
    while (kpn_recv(p->a, &v) == KPN_OK) {
        v *= v;
        p->bad |= kpn_send(p->b, &v) != KPN_OK;
    }
}

static void pipe_sink(void *arg)
{
    struct pipe *p = arg;
    uint32_t v;
    while (kpn_recv(p->b, &v) == KPN_OK) {
        p->sum += v;
        p->got++;
    }
}

void test_pipeline_squares_and_sums(void)
{
    struct pipe p = {0};
    kpn_proc *src = spawn("source", pipe_source, &p, STACK);
    kpn_proc *sq = spawn("square", pipe_square, &p, STACK);
    kpn_proc *sink = spawn("sink", pipe_sink, &p, STACK);
    uint64_t expect = 0;
    uint32_t i;

    p.a = connect(src, sq, 2);
    p.b = connect(sq, sink, 3);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    for (i = 1; i <= PIPE_N; ++i)
        expect += (uint64_t)i * i;
    TEST_ASSERT_FALSE(p.bad);
    TEST_ASSERT_EQUAL_UINT(PIPE_N, p.got);
    TEST_ASSERT_TRUE(p.sum == expect);
}

/* ------------------------------------------------------------------ */
/* An artificial deadlock: the writer fills 'data' before it sends the
 * flag the reader waits for first. */

#define BURST 6u

struct burst {
    kpn_chan *data, *flag;
    uint32_t got[BURST];
    unsigned n;
};

static void burst_writer(void *arg)
{
    struct burst *b = arg;
    uint32_t i, one = 1;
    for (i = 0; i < BURST; ++i) {
        uint32_t v = 100 + i;
        kpn_send(b->data, &v);
    }
    kpn_send(b->flag, &one);
}

static void burst_reader(void *arg)
{
    struct burst *b = arg;
    uint32_t v;
    kpn_recv(b->flag, &v);
    while (b->n < BURST && kpn_recv(b->data, &v) == KPN_OK)
        b->got[b->n++] = v;
}

static void check_burst(const struct burst *b)
{
    unsigned i;
    TEST_ASSERT_EQUAL_UINT(BURST, b->n);
    for (i = 0; i < BURST; ++i)
        TEST_ASSERT_EQUAL_UINT(100 + i, b->got[i]);
}

void test_resolver_grows_a_cycle(void)
{
    static unsigned char big[8192];
    struct burst b = {0};
    kpn_config cfg;
    kpn_stats st;
    kpn_proc *w, *r;

    kpn_config_default(&cfg);
    cfg.reserve_size = 1024;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, big, sizeof big, &cfg));
    w = spawn("writer", burst_writer, &b, STACK);
    r = spawn("reader", burst_reader, &b, STACK);
    b.data = connect(w, r, 1);
    b.flag = connect(w, r, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    check_burst(&b);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_OR_EQUAL(1, (int)st.resolutions);
    TEST_ASSERT_GREATER_OR_EQUAL(BURST, kpn_chan_capacity(b.data));
}

void test_reserve_exhausted_then_added_then_resumed(void)
{
    static unsigned char extra[512];
    struct burst b = {0};
    kpn_config cfg;
    kpn_proc *w, *r;
    static char text[1024];

    kpn_config_default(&cfg);
    cfg.reserve_size = 0; /* no pool: growth waits for kpn_reserve_add */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    w = spawn("writer", burst_writer, &b, STACK);
    r = spawn("reader", burst_reader, &b, STACK);

    b.data = connect(w, r, 1);
    b.flag = connect(w, r, 1);
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_UINT(0, b.n);
    TEST_ASSERT_EQUAL_UINT(1, kpn_chan_fill(b.data));
    TEST_ASSERT_GREATER_THAN(0, (int)kpn_report(net, text, sizeof text));
    TEST_ASSERT_TRUE(kt_contains(text, "reserve exhausted"));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    check_burst(&b);
}

/* ------------------------------------------------------------------ */
/* A true deadlock: each waits to read from the other. */

struct pair {
    kpn_chan *ab, *ba;
};

static void pair_a(void *arg)
{
    struct pair *p = arg;
    uint32_t v;
    if (kpn_recv(p->ba, &v) == KPN_OK)
        kpn_send(p->ab, &v);
}

static void pair_b(void *arg)
{
    struct pair *p = arg;
    uint32_t v;
    if (kpn_recv(p->ab, &v) == KPN_OK)
        kpn_send(p->ba, &v);
}

/* 'first' and 'second', each waiting to read from the other, run into
 * their true deadlock; the second returned. */
static kpn_proc *run_pair(struct pair *p, const char *first, const char *second)
{
    kpn_proc *a = spawn(first, pair_a, p, STACK);
    kpn_proc *b = spawn(second, pair_b, p, STACK);

    p->ab = connect(a, b, 1);
    p->ba = connect(b, a, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    return b;
}

void test_true_deadlock_is_reported(void)
{
    struct pair p;
    kpn_stats st;
    static char text[1024];

    run_pair(&p, "alpha", "beta");
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(1, st.true_deadlocks);
    TEST_ASSERT_EQUAL_UINT(2, st.procs_blocked_read);
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "true deadlock: \"alpha\" -> \"beta\"") ||
                     kt_contains(text, "true deadlock: \"beta\" -> \"alpha\""));
}

/* Off Unix the net keeps the caller's name strings (KPN_NAME_COPY 0),
 * wherever they lie: these are on the main stack, above the arena, where
 * the report must still find them. */
void test_names_kept_outside_the_arena_are_reported(void)
{
    struct pair p;
    char first[] = "gamma", second[] = "delta";
    static char text[1024];

    TEST_ASSERT_TRUE((uintptr_t)first > (uintptr_t)(arena + sizeof arena));
    run_pair(&p, first, second);
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "true deadlock: \"gamma\" -> \"delta\"") ||
                     kt_contains(text, "true deadlock: \"delta\" -> \"gamma\""));
}

/* An overflow that jumps past the guard band can leave a record whole
 * but for its pointer to the caller's name, which may point anywhere:
 * what the report and the stats read must not follow it. */
void test_a_name_pointer_an_overflow_changed_is_not_followed(void)
{
    struct pair p;
    kpn_proc *b = run_pair(&p, "alpha", "beta");
    kpn_proc_stats ps;
    static char text[1024];

    b->name = (const char *)(uintptr_t)0xa5a5a5a5u; /* the stack fill */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(b, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(kpn_proc_next(net, NULL), &ps));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "process \"alpha\""));
    TEST_ASSERT_TRUE(kt_contains(text, "damaged"));
}

/* ------------------------------------------------------------------ */
/* A stack overflow, caught at the next switch. */

struct deep {
    const void *base; /* the lowest usable stack byte, found before the run */
    kpn_chan *out;
};

static void overflow(void *arg)
{
    struct deep *d = arg;
    uint32_t v = 1;

    /* overrun the usable stack by 8 bytes, into the band */
    kt_recurse((const unsigned char *)d->base - 8, 0);
    kpn_send(d->out, &v); /* blocks: a switch, where the guard is checked */
    kpn_send(d->out, &v);
}

static void drain(void *arg)
{
    (void)arg;
}

void test_stack_overflow_is_caught_as_estack(void)
{
    static struct deep d;
    kpn_proc *pad = spawn("pad", drain, NULL, STACK);
    kpn_proc *self, *sink;
    kpn_proc_stats ps;
    kpn_chan *ring;
    static char text[1024];

    /* The band is inside the stack here (32 bytes), and the overrun
     * stays in it; should it not, a ring of nobody's messages lies below
     * the stack to take that, rather than another object's record. */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ring, pad, pad, 64, 2));
    self = spawn("deep", overflow, &d, kpn_stack_min());
    sink = spawn("sink", drain, NULL, STACK);
    d.out = connect(self, sink, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(self, &ps));
    d.base = ps.stack_base;
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(self, kpn_net_fault(net));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "stack overflow: process \"deep\""));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
}

/* ------------------------------------------------------------------ */
/* Floating-point control state belongs to each process. */

#if KT_FP
struct fp {
    kpn_chan *ab, *ba;
    uint32_t mode_a, mode_b;
    uint32_t start_a, start_b;    /* FP control bits each started with */
    uint32_t fpca_plain;          /* CONTROL.FPCA in a process without FP */
    int drift;
};

static void fp_a(void *arg)
{
    struct fp *f = arg;
    uint32_t i, v = 0;

    f->start_a = kt_fp_control_read();
    kt_fp_control_write(f->mode_a);
    for (i = 0; i < 20; ++i) {
        kpn_send(f->ab, &v);
        kpn_recv(f->ba, &v);
        f->drift |= kt_fp_control_read() != f->mode_a;
    }
}

static void fp_b(void *arg)
{
    struct fp *f = arg;
    uint32_t v;

    f->start_b = kt_fp_control_read();
    kt_fp_control_write(f->mode_b);
    while (kpn_recv(f->ab, &v) == KPN_OK) {
        f->drift |= kt_fp_control_read() != f->mode_b;
        kpn_send(f->ba, &v);
    }
}

static void fp_plain(void *arg)
{
    struct fp *f = arg;
#if KT_FP_LAZY
    f->fpca_plain = kt_control_read() & 4u;
#else
    (void)f;
#endif
}
#endif

/* FPSCR on Cortex-M, fcsr on RISC-V. */
void test_fpscr_is_kept_per_process_and_starts_default(void)
{
#if KT_FP
    static struct fp f;
    const uint32_t host_mode = KT_FP_MODE_HOST;
    kpn_proc *a, *b;

    f.mode_a = KT_FP_MODE_A;
    f.mode_b = KT_FP_MODE_B;
    a = spawn("a", fp_a, &f, STACK);
    b = spawn("b", fp_b, &f, STACK);
    spawn("plain", fp_plain, &f, STACK);
    f.ab = connect(a, b, 1);
    f.ba = connect(b, a, 1);
    kt_fp_control_write(host_mode);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_HEX32(host_mode, kt_fp_control_read());
    kt_fp_control_write(0);
    TEST_ASSERT_EQUAL_HEX32(0, f.start_a);
    TEST_ASSERT_EQUAL_HEX32(0, f.start_b);
    TEST_ASSERT_FALSE(f.drift);
    TEST_ASSERT_EQUAL_HEX32(0, f.fpca_plain);
#else
    TEST_IGNORE_MESSAGE("no FPU on this core");
#endif
}

/* Values the compiler keeps in callee-saved FP registers (s16-s31,
 * fs0-fs11) across kpn_send and kpn_recv: two processes compute the
 * same series from different seeds, so a switch that lost one's
 * registers to the other's shows in the results. */

#define FREG_ROUNDS 30

struct fregs {
    kpn_chan *ab, *ba;
    float out_a, out_b;
};

static float freg_series(kpn_chan *out, kpn_chan *in, float seed)
{
    float x = seed, y = seed * 0.5f, z = seed + 1.0f;
    uint32_t v = 0;
    unsigned i;

    for (i = 0; i < FREG_ROUNDS; ++i) {
        if (out != NULL)
            kpn_send(out, &v);
        if (in != NULL)
            kpn_recv(in, &v);
        x = x * 0.75f + y;
        y = y * 0.5f + z;
        z = z * 0.25f + x;
    }
    return x + y + z;
}

static void freg_a(void *arg)
{
    struct fregs *f = arg;
    f->out_a = freg_series(f->ab, f->ba, 3.0f);
}

static void freg_b(void *arg)
{
    struct fregs *f = arg;
    f->out_b = freg_series(f->ba, f->ab, 7.0f);
}

void test_fp_registers_survive_a_switch(void)
{
    static struct fregs f;
    kpn_proc *a = spawn("a", freg_a, &f, STACK);
    kpn_proc *b = spawn("b", freg_b, &f, STACK);

    f.ab = connect(a, b, 1);
    f.ba = connect(b, a, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_TRUE(f.out_a == freg_series(NULL, NULL, 3.0f));
    TEST_ASSERT_TRUE(f.out_b == freg_series(NULL, NULL, 7.0f));
}

/* Every register the ABI has a callee keep, integer and FP, given a
 * pattern across a send and a receive that switch to another process,
 * whose registers hold patterns of its own (kt_callee_saved_check:
 * target.h).  The compiler alone fills only some of them. */

#define CSAVED_ROUNDS 8

struct csaved {
    kpn_chan *ab, *ba;
    uintptr_t mask_a, mask_b;
};

static void csaved_step_a(void *arg)
{
    struct csaved *c = arg;
    uint32_t v = 1;

    kpn_send(c->ab, &v);
    kpn_recv(c->ba, &v);
}

static void csaved_step_b(void *arg)
{
    struct csaved *c = arg;
    uint32_t v;

    kpn_recv(c->ab, &v);
    kpn_send(c->ba, &v);
}

static void csaved_a(void *arg)
{
    struct csaved *c = arg;
    unsigned r;

    for (r = 0; r < CSAVED_ROUNDS; ++r)
        c->mask_a |= kt_callee_saved_check(csaved_step_a, c, 1000u + r);
}

static void csaved_b(void *arg)
{
    struct csaved *c = arg;
    unsigned r;

    for (r = 0; r < CSAVED_ROUNDS; ++r)
        c->mask_b |= kt_callee_saved_check(csaved_step_b, c, 5000u + r);
}

void test_every_callee_saved_register_survives_a_switch(void)
{
    static struct csaved c;
    kpn_proc *a = spawn("a", csaved_a, &c, STACK);
    kpn_proc *b = spawn("b", csaved_b, &c, STACK);
    kpn_stats st;

    c.mask_a = c.mask_b = 0;
    c.ab = connect(a, b, 1);
    c.ba = connect(b, a, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(2u * CSAVED_ROUNDS, (unsigned)st.messages);
    TEST_ASSERT_EQUAL_HEX32(0, (uint32_t)c.mask_a);
    TEST_ASSERT_EQUAL_HEX32(0, (uint32_t)c.mask_b);
}

/* ------------------------------------------------------------------ */
/* The host thread is not a process. */

static void nop(void *arg)
{
    (void)arg;
}

void test_host_calling_a_process_operation_gets_eperm(void)
{
    kpn_proc *a = spawn("a", nop, NULL, STACK);
    kpn_proc *b = spawn("b", nop, NULL, STACK);
    kpn_chan *c = connect(a, b, 1);
    uint32_t v = 7;

    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_send(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_recv(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_close(c));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_offer(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

/* A build without threads (the bare-metal default) has one runner and
 * no guard pages: asking for more is a clear error, and the arena the
 * refused net was offered is not written. */
void test_a_build_without_threads_refuses_runners_and_guard_pages(void)
{
    static unsigned char other[2048];
    kpn_config cfg;
    kpn_net *refused = NULL;
    unsigned home[2] = {7, 7};
    size_t i;

    spawn("a", nop, NULL, STACK);
    spawn("b", nop, NULL, STACK);
    for (i = 0; i < sizeof other; ++i)
        other[i] = (unsigned char)(i * 7 + 1);
    kpn_config_default(&cfg);
    cfg.runners = 2;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&refused, other, sizeof other, &cfg));
    kpn_config_default(&cfg);
    cfg.guard_pages = 1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&refused, other, sizeof other, &cfg));
    TEST_ASSERT_NULL(refused);
    for (i = 0; i < sizeof other; ++i)
        TEST_ASSERT_EQUAL_UINT((unsigned char)(i * 7 + 1), other[i]);

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, 2, home, 2));
    TEST_ASSERT_EQUAL_UINT(7, home[0]);
    TEST_ASSERT_EQUAL_UINT(7, home[1]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 1, home, 2));
    TEST_ASSERT_EQUAL_UINT(0, home[0]);
    TEST_ASSERT_EQUAL_UINT(0, home[1]);
}

/* ------------------------------------------------------------------ */
/* Input: EFULL, and a timer interrupt (SysTick, the CLINT's) feeding a
 * running net that idles in WFI. */

struct filter {
    kpn_chan *in, *out;
    uint64_t sum;
    unsigned got;
};

static void filter_proc(void *arg)
{
    struct filter *f = arg;
    uint32_t v;
    while (kpn_recv(f->in, &v) == KPN_OK)
        if (v % 3u != 0)
            kpn_send(f->out, (v *= 2, &v));
}

static void sum_proc(void *arg)
{
    struct filter *f = arg;
    uint32_t v;
    while (kpn_recv(f->out, &v) == KPN_OK) {
        f->sum += v;
        f->got++;
    }
}

void test_offer_to_a_full_input_fails_with_efull(void)
{
    static struct filter f;
    kpn_proc *filter = spawn("filter", filter_proc, &f, STACK);
    kpn_proc *sum = spawn("sum", sum_proc, &f, STACK);
    uint32_t one = 1, two = 2, four = 4;

    f.sum = 0;
    f.got = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &f.in, filter, sizeof(uint32_t), 2));
    f.out = connect(filter, sum, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &one));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &two));
    TEST_ASSERT_EQUAL_INT(KPN_EFULL, kpn_offer(f.in, &four));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_offer(f.in, &four));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_UINT(2, f.got);
    TEST_ASSERT_TRUE(f.sum == 2u * 1u + 2u * 2u);
}

#define TICKS 40u

static struct tick {
    kpn_chan *in;
    uint32_t next;           /* the next number to offer, from 1 */
    unsigned efull, idle_hits, interrupts;
    int spin;                /* test_an_interrupt_lands_on_a_process_stack */
    volatile int busy;       /* set by a process while it spins */
    volatile unsigned busy_hits;
    volatile float junk;     /* FP work in the handler */
} tick;

/* Offers 1..TICKS, one per tick, then closes the input.  Also counts
 * the ticks that found the CPU asleep in the port's idle hook. */
KT_ISR_WITH_PC(on_tick)

void on_tick(uintptr_t pc)
{
    uintptr_t idle = (uintptr_t)kpn_port_idle_wait & ~(uintptr_t)1;

    tick.interrupts++;
    if (tick.spin) {
        /* uses the FP temporaries the interrupted process has live */
        tick.junk = tick.junk * 3.0f + 1.0f;
        if (tick.busy)
            tick.busy_hits++;
        return;
    }
    if (pc >= idle && pc < idle + 64u)
        tick.idle_hits++;
    if (tick.next <= TICKS) {
        kpn_status s = kpn_offer(tick.in, &tick.next);
        if (s == KPN_OK)
            tick.next++;
        else if (s == KPN_EFULL)
            tick.efull++;
    } else {
        kpn_input_close(tick.in);
        kt_tick_stop();
    }
}

void test_systick_feeds_a_running_net_that_idles_between(void)
{
    static struct filter f;
    /* at the measured minimum (the ticks land in the idle hook, on the
     * host's stack: test_an_interrupt_lands_on_a_process_stack below
     * has them land on a process's) */
    kpn_proc *filter = spawn("filter", filter_proc, &f, kpn_stack_min());
    kpn_proc *sum = spawn("sum", sum_proc, &f, kpn_stack_min());
    uint64_t expect = 0;
    uint32_t i;

    f.sum = 0;
    f.got = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &f.in, filter, sizeof(uint32_t), 4));
    f.out = connect(filter, sum, 2);
    tick.in = f.in;
    tick.next = 1;
    tick.efull = tick.idle_hits = tick.interrupts = 0;
    tick.spin = 0;
    kt_tick_start(KT_TICK_PERIOD);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kt_tick_stop();
    for (i = 1; i <= TICKS; ++i)
        if (i % 3u != 0)
            expect += 2u * i;
    TEST_ASSERT_EQUAL_UINT(TICKS - TICKS / 3u, f.got);
    TEST_ASSERT_TRUE(f.sum == expect);
    TEST_ASSERT_EQUAL_UINT(0, tick.efull);
    /* most ticks found the net asleep in WFI, waiting for the next one */
    TEST_ASSERT_GREATER_THAN(TICKS / 2u, tick.idle_hits);
}

/* A process busy when the tick comes: the interrupt's frame lands on its
 * stack, of the measured minimum, while FP temporaries are live in the
 * loop and the handler computes in FP too.  Counting in floats is exact
 * here (below 2^24), so a register the trap entry lost shows. */

#define SPIN_ROUNDS 4u
#define SPIN_LIMIT 3000000ul

struct spin {
    kpn_chan *out;
    float x, y;
    unsigned long n;
};

static __attribute__((noinline)) void spin_until_tick(struct spin *s)
{
    float x = s->x, y = s->y;
    unsigned seen = tick.busy_hits;
    unsigned long n;

    tick.busy = 1;
    for (n = 0; n < SPIN_LIMIT && tick.busy_hits == seen; ++n) {
        x += 1.0f;
        y -= 2.0f;
    }
    tick.busy = 0;
    s->x = x;
    s->y = y;
    s->n += n;
}

static void spin_proc(void *arg)
{
    struct spin *s = arg;
    uint32_t v = 0;
    unsigned r;

    for (r = 0; r < SPIN_ROUNDS; ++r) {
        spin_until_tick(s);
        kpn_send(s->out, &v);
    }
}

static void spin_sink(void *arg)
{
    struct spin *s = arg;
    uint32_t v;

    while (kpn_recv(s->out, &v) == KPN_OK)
        ;
}

void test_an_interrupt_lands_on_a_process_stack(void)
{
    static struct spin s;
    kpn_proc *a = spawn("spin", spin_proc, &s, kpn_stack_min());
    kpn_proc *b = spawn("sink", spin_sink, &s, kpn_stack_min());

    s.x = 0.0f;
    s.y = 0.0f;
    s.n = 0;
    s.out = connect(a, b, 1);
    tick.spin = 1;
    tick.busy = 0;
    tick.busy_hits = 0;
    tick.interrupts = 0;
    kt_tick_start(KT_TICK_PERIOD);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kt_tick_stop();
    tick.spin = 0;
    TEST_ASSERT_GREATER_OR_EQUAL(SPIN_ROUNDS, tick.busy_hits);
    TEST_ASSERT_TRUE(s.x == (float)s.n);
    TEST_ASSERT_TRUE(s.y == -2.0f * (float)s.n);
}

/* ------------------------------------------------------------------ */
/* KPN_STACK_MIN for this port, from a measurement. */

struct fpipe {
    kpn_chan *a, *b;
    float acc;
};

static void fsource(void *arg)
{
    struct fpipe *p = arg;
    uint32_t i;
    for (i = 0; i < 50; ++i)
        kpn_send(p->a, &i);
}

/* Two FP values live across every send and receive: kept in callee-saved
 * registers, which the process's own frame saves, and live FP state
 * where the switch and an interrupt's frame save it too. */
static void fscale(void *arg)
{
    struct fpipe *p = arg;
    float acc = 0.0f, gain = p->acc;
    uint32_t v;
    while (kpn_recv(p->a, &v) == KPN_OK) {
        acc = acc * gain + (float)v;
        kpn_send(p->b, &v);
    }
    p->acc = acc;
}

static void fsink(void *arg)
{
    struct fpipe *p = arg;
    uint32_t v;
    while (kpn_recv(p->b, &v) == KPN_OK)
        ;
}

void test_stack_min_covers_a_process_and_an_exception_frame(void)
{
    static struct fpipe p;
    kpn_proc *procs[3];
    kpn_proc_stats ps;
    size_t peak = 0, guard, i;
    const size_t frame = KT_IRQ_FRAME; /* target.h */

    p.acc = 0.5f; /* the gain, from memory: no constant to fold */
    procs[0] = spawn("source", fsource, &p, STACK);
    procs[1] = spawn("scale", fscale, &p, STACK);
    procs[2] = spawn("sink", fsink, &p, STACK);
    p.a = connect(procs[0], procs[1], 1);
    p.b = connect(procs[1], procs[2], 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    for (i = 0; i < 3; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(procs[i], &ps));
        if (ps.stack_peak > peak)
            peak = ps.stack_peak;
    }
    guard = STACK - ps.stack_size; /* the band inside the stack */
    kt_print("stack: process peak ");
    kt_print_uint(peak);
    kt_print(" B + exception frame ");
    kt_print_uint(frame);
    kt_print(" B + guard ");
    kt_print_uint(guard);
    kt_print(" B <= KPN_STACK_MIN ");
    kt_print_uint(kpn_stack_min());
    kt_print(" B\n");
    TEST_ASSERT_LESS_OR_EQUAL(kpn_stack_min(), peak + frame + guard);
}
