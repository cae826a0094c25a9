/* SPDX-License-Identifier: MIT */
/* Port conformance: what every port must do, checked against whichever port the build links. */

#include <fenv.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unity.h"
#include "port.h"
#include "support/memcheckers.h"

TEST_SOURCE_FILE("port/posix/port_posix.c")

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/*
 * Nothing here may fail an assertion while running on a context's stack:
 * Unity and cmocka report a failure by longjmp'ing back to the runner's
 * frame, which lives on the host stack.  Code inside a context records
 * what it saw in statics, and the host asserts after switching back.
 */

/* ---- Memory: one static arena, carved in 16-byte-aligned pieces. ---- */

#define RING_SIZE 1000
#define RING_STACK_SIZE (8u * 1024u)
#define STACK_SIZE (64u * 1024u)
#define ARENA_SIZE (16u * 1024u * 1024u)

/* C99 has no _Alignas: over-allocate and round the start up. */
static unsigned char arena_bytes[ARENA_SIZE + 16];
static size_t arena_used;

static void *carve(size_t size)
{
    uintptr_t base = ((uintptr_t)arena_bytes + 15u) & ~(uintptr_t)15u;
    unsigned char *start = (unsigned char *)base + arena_used;

    size = (size + 15u) & ~(size_t)15u;
    if (size > ARENA_SIZE - arena_used) {
        return NULL;
    }
    arena_used += size;
    /* A pattern, not zeros: a port must not rely on fresh memory, and
     * 'from' contexts in particular are never initialised. */
    memset(start, 0xA5, size);
    return start;
}

/*
 * Tests leave contexts suspended mid-call for ever, and AddressSanitizer
 * keeps the redzone marks of their frames in its shadow memory.  Before
 * the next test carves the same bytes, the arena's owner (this file)
 * clears those marks, as any owner of a context stack must when reusing
 * it; otherwise ASan reports a "stack-buffer-underflow" inside
 * 'arena_bytes'.
 */
#if defined(UNDER_ASAN)
static void forget_abandoned_stacks(void)
{
    ASAN_UNPOISON_MEMORY_REGION(arena_bytes, sizeof arena_bytes);
}
#elif defined(KPN_VALGRIND)
/* memcheck marks what lies below an abandoned stack pointer inaccessible */
static void forget_abandoned_stacks(void)
{
    (void)VALGRIND_MAKE_MEM_UNDEFINED(arena_bytes, sizeof arena_bytes);
}
#else
static void forget_abandoned_stacks(void)
{
}
#endif

/* A stack for a context; valgrind is told it is one, as the core does. */
static void *carve_stack(size_t size)
{
    void *stack = carve(size);
#ifdef KPN_VALGRIND
    if (stack != NULL)
        VALGRIND_STACK_REGISTER(stack, (unsigned char *)stack + size);
#endif
    return stack;
}

static kpn_port_ctx *carve_ctx(void)
{
    return (kpn_port_ctx *)carve(kpn_port_ctx_size());
}

/* The host's context, one context for a test's function, and its stack
 * of STACK_SIZE, which is returned. */
static void *carve_pair(kpn_port_ctx **host, kpn_port_ctx **ctx)
{
    void *stack;

    *host = carve_ctx();
    *ctx = carve_ctx();
    stack = carve_stack(STACK_SIZE);
    TEST_ASSERT_NOT_NULL(*host);
    TEST_ASSERT_NOT_NULL(*ctx);
    TEST_ASSERT_NOT_NULL(stack);
    return stack;
}

void setUp(void)
{
    arena_used = 0;
    forget_abandoned_stacks();
}

void tearDown(void)
{
    /* A failed floating-point test must not leak its rounding mode into
     * the next test. */
#if defined(FE_TONEAREST)
    (void)fesetround(FE_TONEAREST);
#endif
}

/* ---- The context size. ---- */

void test_ctx_size_holds_a_pointer_and_is_constant(void)
{
    size_t size = kpn_port_ctx_size();

    TEST_ASSERT_GREATER_OR_EQUAL(sizeof(void *), size);
    TEST_ASSERT_EQUAL_size_t(size, kpn_port_ctx_size());
}

/* ---- Ping-pong between the host and one context. ---- */

#define PING_PONG_ROUNDS 10000

static kpn_port_ctx *pp_host;
static kpn_port_ctx *pp_peer;
static int pp_arg_target;
static void *pp_arg_seen;
static int pp_entries;
static long pp_ping;
static long pp_pong;

static void pong_main(void *arg)
{
    pp_arg_seen = arg;
    pp_entries++;
    for (;;) {
        pp_pong = pp_ping * 3 + 1;
        kpn_port_switch(pp_peer, pp_host);
    }
}

void test_ping_pong_with_the_host(void)
{
    void *stack;
    long i;

    stack = carve_pair(&pp_host, &pp_peer);
    pp_arg_seen = NULL;
    pp_entries = 0;

    kpn_port_init(pp_peer, stack, STACK_SIZE, pong_main, &pp_arg_target);
    for (i = 0; i < PING_PONG_ROUNDS; i++) {
        pp_ping = i;
        pp_pong = -1;
        kpn_port_switch(pp_host, pp_peer);
        if (pp_pong != i * 3 + 1) {
            TEST_FAIL_MESSAGE("the context did not answer the value it was sent");
        }
    }
    TEST_ASSERT_EQUAL_PTR(&pp_arg_target, pp_arg_seen);
    TEST_ASSERT_EQUAL_INT(1, pp_entries);
}

/* ---- A ring of contexts, each switching straight to the next. ---- */

#define RING_LAPS 50

static kpn_port_ctx *ring_host;
static kpn_port_ctx *ring_ctx[RING_SIZE];
static int ring_index[RING_SIZE];
static unsigned long ring_visits[RING_SIZE];
static unsigned long ring_counter;
static unsigned long ring_out_of_turn;

static void ring_main(void *arg)
{
    int self = *(int *)arg;
    kpn_port_ctx *next = (self + 1 == RING_SIZE) ? ring_host
                                                 : ring_ctx[self + 1];

    for (;;) {
        if (ring_counter % RING_SIZE != (unsigned long)self) {
            ring_out_of_turn++;
        }
        ring_counter++;
        ring_visits[self]++;
        kpn_port_switch(ring_ctx[self], next);
    }
}

void test_ring_of_1000_contexts(void)
{
    int i;
    int lap;

    ring_host = carve_ctx();
    TEST_ASSERT_NOT_NULL(ring_host);
    for (i = 0; i < RING_SIZE; i++) {
        void *stack = carve_stack(RING_STACK_SIZE);

        ring_ctx[i] = carve_ctx();
        TEST_ASSERT_MESSAGE(stack != NULL && ring_ctx[i] != NULL,
                            "the test arena is too small for the ring");
        ring_index[i] = i;
        ring_visits[i] = 0;
        kpn_port_init(ring_ctx[i], stack, RING_STACK_SIZE, ring_main,
                      &ring_index[i]);
    }
    ring_counter = 0;
    ring_out_of_turn = 0;

    for (lap = 0; lap < RING_LAPS; lap++) {
        kpn_port_switch(ring_host, ring_ctx[0]);
        TEST_ASSERT_EQUAL_UINT64((uint64_t)(lap + 1) * RING_SIZE,
                                 (uint64_t)ring_counter);
    }
    TEST_ASSERT_EQUAL_UINT64(0, (uint64_t)ring_out_of_turn);
    for (i = 0; i < RING_SIZE; i++) {
        TEST_ASSERT_EQUAL_UINT64(RING_LAPS, (uint64_t)ring_visits[i]);
    }
}

/* ---- Stack alignment as the compiler expects it. ---- */

/*
 * The compiler lays out a function's locals at fixed offsets from a stack
 * pointer it assumes the ABI aligned at the call.  If a port enters 'fn'
 * misaligned, a local that needs 16-byte alignment (long double on
 * x86-64) lands off by 8 in every function below it.  The address goes
 * through a volatile so the compiler cannot fold the check to "aligned"
 * from what it assumes.
 */
union aligned_probe {
    long double extended;
    double real;
    void *pointer;
    unsigned char bytes[16];
};

struct alignment_of_probe {
    char first;
    union aligned_probe probe;
};

#define PROBE_ALIGNMENT offsetof(struct alignment_of_probe, probe)

static NOINLINE size_t probe_misalignment(void)
{
    union aligned_probe probe;
    volatile uintptr_t address;

    probe.extended = 1.0L;
    address = (uintptr_t)(void *)&probe;
    return (size_t)(address % PROBE_ALIGNMENT);
}

static NOINLINE size_t probe_misalignment_deeper(int depth)
{
    volatile int keep_frame = depth;

    if (keep_frame > 0) {
        return probe_misalignment_deeper(keep_frame - 1);
    }
    return probe_misalignment();
}

static kpn_port_ctx *align_host;
static kpn_port_ctx *align_ctx;
static size_t align_seen_at_entry;
static size_t align_seen_deeper;
static int align_ran;

static void alignment_main(void *arg)
{
    (void)arg;
    align_seen_at_entry = probe_misalignment();
    align_seen_deeper = probe_misalignment_deeper(3);
    align_ran = 1;
    for (;;) {
        kpn_port_switch(align_ctx, align_host);
    }
}

void test_fn_starts_on_an_aligned_stack(void)
{
    void *stack;

    TEST_ASSERT_EQUAL_size_t(0, probe_misalignment());
    stack = carve_pair(&align_host, &align_ctx);
    align_ran = 0;
    align_seen_at_entry = 99;
    align_seen_deeper = 99;

    kpn_port_init(align_ctx, stack, STACK_SIZE, alignment_main, NULL);
    kpn_port_switch(align_host, align_ctx);

    TEST_ASSERT_EQUAL_INT(1, align_ran);
    TEST_ASSERT_EQUAL_size_t(0, align_seen_at_entry);
    TEST_ASSERT_EQUAL_size_t(0, align_seen_deeper);
}

/* ---- Floating-point control state belongs to each context. ---- */

/* Without directed rounding modes there is no state to keep, and the
 * test passes vacuously.  (Each test is defined once, outside any #if,
 * so that runner generators that scan the source see it once.) */
#if defined(FE_DOWNWARD) && defined(FE_UPWARD) && defined(FE_TONEAREST)
#define HAVE_DIRECTED_ROUNDING 1
#else
#define HAVE_DIRECTED_ROUNDING 0
#endif

#if HAVE_DIRECTED_ROUNDING

/*
 * Which way the arithmetic rounds, observed rather than asked for:
 * 1/3 is inexact, so rounding it and -1/3 gives mirror images under
 * round-to-nearest and different magnitudes under a directed mode.
 * Returns -1 when rounding down, +1 up, 0 to nearest (or toward zero).
 * 'double' exercises SSE (MXCSR) on x86-64, 'long double' the x87
 * control word; fesetround sets both, and a port must keep both.  The
 * operands are volatile so nothing is folded at compile time (compilers
 * here do not honour '#pragma STDC FENV_ACCESS').
 */
static NOINLINE int observed_rounding_double(void)
{
    volatile double one = 1.0;
    volatile double three = 3.0;
    volatile double positive = one / three;
    volatile double negative = -one / three;

    return (positive < -negative) ? -1 : (positive > -negative) ? 1 : 0;
}

static NOINLINE int observed_rounding_long_double(void)
{
    volatile long double one = 1.0L;
    volatile long double three = 3.0L;
    volatile long double positive = one / three;
    volatile long double negative = -one / three;

    return (positive < -negative) ? -1 : (positive > -negative) ? 1 : 0;
}

struct fp_sample {
    int mode;
    int as_double;
    int as_long_double;
};

static void sample_fp(struct fp_sample *sample)
{
    sample->mode = fegetround();
    sample->as_double = observed_rounding_double();
    sample->as_long_double = observed_rounding_long_double();
}

static void check_fp(int mode, int direction, const struct fp_sample *got)
{
    TEST_ASSERT_EQUAL_INT(mode, got->mode);
    TEST_ASSERT_EQUAL_INT(direction, got->as_double);
    TEST_ASSERT_EQUAL_INT(direction, got->as_long_double);
}

static kpn_port_ctx *fp_host;
static kpn_port_ctx *fp_ctx;
static struct fp_sample fp_at_entry;
static struct fp_sample fp_after_set;
static struct fp_sample fp_after_resume[2];
static int fp_set_status;

static void fp_main(void *arg)
{
    (void)arg;
    sample_fp(&fp_at_entry);
    fp_set_status = fesetround(FE_DOWNWARD);
    sample_fp(&fp_after_set);
    kpn_port_switch(fp_ctx, fp_host);
    sample_fp(&fp_after_resume[0]);
    kpn_port_switch(fp_ctx, fp_host);
    sample_fp(&fp_after_resume[1]);
    for (;;) {
        kpn_port_switch(fp_ctx, fp_host);
    }
}

#endif

void test_rounding_mode_is_kept_per_context(void)
{
#ifdef KPN_VALGRIND
    /* valgrind emulates only round-to-nearest, whatever MXCSR says */
    TEST_IGNORE_MESSAGE("valgrind does not model floating-point rounding modes");
#endif
#if HAVE_DIRECTED_ROUNDING
    struct fp_sample host;
    void *stack;

    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_TONEAREST));
    sample_fp(&host);
    check_fp(FE_TONEAREST, 0, &host);
    /* The check can tell the modes apart at all. */
    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_DOWNWARD));
    sample_fp(&host);
    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_TONEAREST));
    check_fp(FE_DOWNWARD, -1, &host);

    stack = carve_pair(&fp_host, &fp_ctx);
    kpn_port_init(fp_ctx, stack, STACK_SIZE, fp_main, NULL);

    /* The context rounds down; the host still rounds to nearest. */
    kpn_port_switch(fp_host, fp_ctx);
    TEST_ASSERT_EQUAL_INT(0, fp_set_status);
    check_fp(FE_TONEAREST, 0, &fp_at_entry);
    check_fp(FE_DOWNWARD, -1, &fp_after_set);
    sample_fp(&host);
    check_fp(FE_TONEAREST, 0, &host);

    /* Back in the context, it still rounds down. */
    kpn_port_switch(fp_host, fp_ctx);
    check_fp(FE_DOWNWARD, -1, &fp_after_resume[0]);
    sample_fp(&host);
    check_fp(FE_TONEAREST, 0, &host);

    /* The host rounds up; the context is not disturbed, and the host
     * gets its own mode back. */
    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_UPWARD));
    kpn_port_switch(fp_host, fp_ctx);
    check_fp(FE_DOWNWARD, -1, &fp_after_resume[1]);
    sample_fp(&host);
    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_TONEAREST));
    check_fp(FE_UPWARD, 1, &host);
#endif
}

/* A fresh context starts with the floating-point state its port defines
 * (port.h, kpn_port_init), whatever the thread that first switches into
 * it has: the ABI's default, or for the POSIX port, which getcontext
 * gives the state of the thread that made it, that thread's
 * (docs/porting.md, "Initial floating-point state"). */
#ifdef KPN_TEST_PORT_POSIX
#define FRESH_MODE FE_UPWARD, 1
#else
#define FRESH_MODE FE_TONEAREST, 0
#endif
#if HAVE_DIRECTED_ROUNDING
static struct fp_sample fp_fresh;

static void fp_fresh_main(void *arg)
{
    (void)arg;
    sample_fp(&fp_fresh);
    for (;;)
        kpn_port_switch(fp_ctx, fp_host);
}

#endif

void test_a_fresh_context_starts_with_its_ports_rounding_whatever_the_host_has(void)
{
#ifdef KPN_VALGRIND
    TEST_IGNORE_MESSAGE("valgrind does not model floating-point rounding modes");
#endif
#if HAVE_DIRECTED_ROUNDING
    struct fp_sample host;
    void *stack = carve_pair(&fp_host, &fp_ctx);

    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_UPWARD));
    kpn_port_init(fp_ctx, stack, STACK_SIZE, fp_fresh_main, NULL);
    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_DOWNWARD));
    kpn_port_switch(fp_host, fp_ctx);
    sample_fp(&host);
    TEST_ASSERT_EQUAL_INT(0, fesetround(FE_TONEAREST));
    check_fp(FRESH_MODE, &fp_fresh);
    /* the host's own mode is its own */
    check_fp(FE_DOWNWARD, -1, &host);
#endif
}

/* ---- Callee-saved registers survive a switch. ---- */

/*
 * Fourteen 64-bit integers and eight doubles live across each switch:
 * more than the callee-saved registers of any ABI kpn targets (AArch64
 * also saves d8-d15, which the doubles reach; x86-64 saves no vector
 * register), so at -O2 the compiler keeps as many as it can in them and
 * spills the rest.  Host and
 * context run the same code on different seeds, so each side's switch
 * overwrites the other's registers.  The values come from volatile seeds
 * and are mixed with multiplications, so the compiler cannot recompute
 * them instead of keeping them.  The reference run does not switch.
 */
#define LIVE_VALUES 14

static NOINLINE uint64_t churn(const volatile uint64_t *seed,
                               kpn_port_ctx *self, kpn_port_ctx *other)
{
    uint64_t a = seed[0], b = seed[1], c = seed[2], d = seed[3];
    uint64_t e = seed[4], f = seed[5], g = seed[6], h = seed[7];
    uint64_t i = seed[8], j = seed[9], k = seed[10], l = seed[11];
    uint64_t m = seed[12], n = seed[13];
    double p = (double)(seed[0] & 0xFFFFu), q = (double)(seed[1] & 0xFFFFu);
    double r = (double)(seed[2] & 0xFFFFu), s = (double)(seed[3] & 0xFFFFu);
    double t = (double)(seed[4] & 0xFFFFu), u = (double)(seed[5] & 0xFFFFu);
    double v = (double)(seed[6] & 0xFFFFu), w = (double)(seed[7] & 0xFFFFu);

    a = a * 0x9E3779B97F4A7C15u + n;
    b = b * 0xBF58476D1CE4E5B9u + a;
    c = c * 0x94D049BB133111EBu + b;
    d = d * 0xD6E8FEB86659FD93u + c;
    e = e * 0x9E3779B97F4A7C15u + d;
    f = f * 0xBF58476D1CE4E5B9u + e;
    g = g * 0x94D049BB133111EBu + f;
    h = h * 0xD6E8FEB86659FD93u + g;
    i = i * 0x9E3779B97F4A7C15u + h;
    j = j * 0xBF58476D1CE4E5B9u + i;
    k = k * 0x94D049BB133111EBu + j;
    l = l * 0xD6E8FEB86659FD93u + k;
    m = m * 0x9E3779B97F4A7C15u + l;
    n = n * 0xBF58476D1CE4E5B9u + m;
    p = p * 1.5 + w; q = q * 1.25 + p; r = r * 0.75 + q; s = s * 1.125 + r;
    t = t * 0.625 + s; u = u * 1.375 + t; v = v * 0.875 + u; w = w * 1.0625 + v;
    if (self != NULL) {
        kpn_port_switch(self, other);
    }
    a ^= n >> 29; b ^= a >> 31; c ^= b >> 27; d ^= c >> 33;
    e ^= d >> 29; f ^= e >> 31; g ^= f >> 27; h ^= g >> 33;
    i ^= h >> 29; j ^= i >> 31; k ^= j >> 27; l ^= k >> 33;
    m ^= l >> 29; n ^= m >> 31;
    p += w * 0.5; q += p * 0.5; r += q * 0.5; s += r * 0.5;
    t += s * 0.5; u += t * 0.5; v += u * 0.5; w += v * 0.5;
    if (self != NULL) {
        kpn_port_switch(self, other);
    }
    return a * 3 + b * 5 + c * 7 + d * 11 + e * 13 + f * 17 + g * 19
           + h * 23 + i * 29 + j * 31 + k * 37 + l * 41 + m * 43 + n * 47
           + (uint64_t)(p + q * 3 + r * 5 + s * 7 + t * 11 + u * 13 + v * 17
                        + w * 19);
}

static kpn_port_ctx *regs_host;
static kpn_port_ctx *regs_ctx;
static volatile uint64_t regs_seed_host[LIVE_VALUES];
static volatile uint64_t regs_seed_ctx[LIVE_VALUES];
static uint64_t regs_result_ctx;
static int regs_ctx_done;

static void registers_main(void *arg)
{
    (void)arg;
    regs_result_ctx = churn(regs_seed_ctx, regs_ctx, regs_host);
    regs_ctx_done = 1;
    for (;;) {
        kpn_port_switch(regs_ctx, regs_host);
    }
}

void test_callee_saved_registers_survive_a_switch(void)
{
    uint64_t expect_host;
    uint64_t expect_ctx;
    uint64_t got_host;
    void *stack;
    int v;

    for (v = 0; v < LIVE_VALUES; v++) {
        regs_seed_host[v] = 0x0123456789ABCDEFu * (uint64_t)(v + 1);
        regs_seed_ctx[v] = 0xFEDCBA9876543210u ^ (uint64_t)(v * 7919);
    }
    expect_host = churn(regs_seed_host, NULL, NULL);
    expect_ctx = churn(regs_seed_ctx, NULL, NULL);
    TEST_ASSERT_FALSE(expect_host == expect_ctx);

    stack = carve_pair(&regs_host, &regs_ctx);
    regs_ctx_done = 0;
    regs_result_ctx = 0;
    kpn_port_init(regs_ctx, stack, STACK_SIZE, registers_main, NULL);

    /* Host and context interleave: each 'churn' switches twice, and the
     * last switch below lets the context's 'churn' return. */
    got_host = churn(regs_seed_host, regs_host, regs_ctx);
    TEST_ASSERT_EQUAL_INT(0, regs_ctx_done);
    kpn_port_switch(regs_host, regs_ctx);
    TEST_ASSERT_EQUAL_INT(1, regs_ctx_done);

    TEST_ASSERT_EQUAL_UINT64(expect_host, got_host);
    TEST_ASSERT_EQUAL_UINT64(expect_ctx, regs_result_ctx);
}

/* ---- Every callee-saved register, set by hand. ---- */

/*
 * The compiler fills only the registers its code happens to want, so
 * the test above may leave one unchecked (on AArch64 at -O2 it never
 * touches x29).  kt_callee_saved_check(fn, arg, seed) loads every
 * register the ABI has a callee keep with a pattern made from 'seed',
 * calls fn(arg), and returns a mask of those fn did not give back:
 *
 *   x86-64:  bit i for rbx, rbp, r12, r13, r14, r15 (i = 0..5),
 *            pattern seed + i
 *   AArch64: bit i for x19 ... x29 (i = 0..10), pattern seed + i;
 *            bit 16 + i for d8 ... d15 (i = 0..7), pattern
 *            (double)(seed + 100 + i)
 *
 * 'seed' waits in the probe's own frame, as no callee-saved register
 * can be trusted after fn; the probe saves what it loads for its own
 * caller.  Top-level assembly in this file rather than a header, so
 * that Ceedling's runner, which includes the test's headers, does not
 * define it twice.
 */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__)
#define HAVE_CALLEE_SAVED_CHECK 1
__asm__(
    "\t.text\n"
    "\t.p2align 4\n"
    "\t.globl kt_callee_saved_check\n"
    "\t.hidden kt_callee_saved_check\n"
    "\t.type kt_callee_saved_check, @function\n"
    "kt_callee_saved_check:\n"
    /* rdi = fn, rsi = arg, rdx = seed; seven pushes leave rsp 16-aligned */
    "\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
    "\tpushq %rdx\n"
    "\tleaq 0(%rdx), %rbx\n\tleaq 1(%rdx), %rbp\n\tleaq 2(%rdx), %r12\n"
    "\tleaq 3(%rdx), %r13\n\tleaq 4(%rdx), %r14\n\tleaq 5(%rdx), %r15\n"
    "\tmovq %rdi, %rax\n\tmovq %rsi, %rdi\n\tcall *%rax\n"
    "\tmovq (%rsp), %rdx\n\txorl %eax, %eax\n"
    "\tleaq 0(%rdx), %rcx\n\tcmpq %rcx, %rbx\n\tje 1f\n\torl $1, %eax\n1:\n"
    "\tleaq 1(%rdx), %rcx\n\tcmpq %rcx, %rbp\n\tje 1f\n\torl $2, %eax\n1:\n"
    "\tleaq 2(%rdx), %rcx\n\tcmpq %rcx, %r12\n\tje 1f\n\torl $4, %eax\n1:\n"
    "\tleaq 3(%rdx), %rcx\n\tcmpq %rcx, %r13\n\tje 1f\n\torl $8, %eax\n1:\n"
    "\tleaq 4(%rdx), %rcx\n\tcmpq %rcx, %r14\n\tje 1f\n\torl $16, %eax\n1:\n"
    "\tleaq 5(%rdx), %rcx\n\tcmpq %rcx, %r15\n\tje 1f\n\torl $32, %eax\n1:\n"
    "\taddq $8, %rsp\n"
    "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
    "\tret\n"
    "\t.size kt_callee_saved_check, .-kt_callee_saved_check\n"
    "\t.p2align 4\n"
    "\t.globl kt_clobber_first\n"
    "\t.hidden kt_clobber_first\n"
    "\t.type kt_clobber_first, @function\n"
    "kt_clobber_first:\n"
    "\txorl %ebx, %ebx\n"
    "\tret\n"
    "\t.size kt_clobber_first, .-kt_clobber_first\n");
#elif defined(__GNUC__) && defined(__aarch64__) && defined(__ELF__)
#define HAVE_CALLEE_SAVED_CHECK 1
__asm__(
    "\t.text\n"
    "\t.p2align 4\n"
    "\t.globl kt_callee_saved_check\n"
    "\t.hidden kt_callee_saved_check\n"
    "\t.type kt_callee_saved_check, %function\n"
    "kt_callee_saved_check:\n"
    "\thint 34\n" /* bti c */
    /* x0 = fn, x1 = arg, x2 = seed */
    "\tstp x29, x30, [sp, #-176]!\n"
    "\tstp x19, x20, [sp, #16]\n\tstp x21, x22, [sp, #32]\n\tstp x23, x24, [sp, #48]\n"
    "\tstp x25, x26, [sp, #64]\n\tstp x27, x28, [sp, #80]\n"
    "\tstp d8, d9, [sp, #96]\n\tstp d10, d11, [sp, #112]\n"
    "\tstp d12, d13, [sp, #128]\n\tstp d14, d15, [sp, #144]\n"
    "\tstr x2, [sp, #160]\n"
    "\tadd x19, x2, #0\n\tadd x20, x2, #1\n\tadd x21, x2, #2\n\tadd x22, x2, #3\n"
    "\tadd x23, x2, #4\n\tadd x24, x2, #5\n\tadd x25, x2, #6\n\tadd x26, x2, #7\n"
    "\tadd x27, x2, #8\n\tadd x28, x2, #9\n\tadd x29, x2, #10\n"
    "\tadd x9, x2, #100\n\tucvtf d8, x9\n\tadd x9, x2, #101\n\tucvtf d9, x9\n"
    "\tadd x9, x2, #102\n\tucvtf d10, x9\n\tadd x9, x2, #103\n\tucvtf d11, x9\n"
    "\tadd x9, x2, #104\n\tucvtf d12, x9\n\tadd x9, x2, #105\n\tucvtf d13, x9\n"
    "\tadd x9, x2, #106\n\tucvtf d14, x9\n\tadd x9, x2, #107\n\tucvtf d15, x9\n"
    "\tmov x9, x0\n\tmov x0, x1\n\tblr x9\n"
    "\tldr x2, [sp, #160]\n\tmov x0, #0\n"
    "\tadd x9, x2, #0\n\tcmp x19, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #0\n"
    "\tadd x9, x2, #1\n\tcmp x20, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #1\n"
    "\tadd x9, x2, #2\n\tcmp x21, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #2\n"
    "\tadd x9, x2, #3\n\tcmp x22, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #3\n"
    "\tadd x9, x2, #4\n\tcmp x23, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #4\n"
    "\tadd x9, x2, #5\n\tcmp x24, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #5\n"
    "\tadd x9, x2, #6\n\tcmp x25, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #6\n"
    "\tadd x9, x2, #7\n\tcmp x26, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #7\n"
    "\tadd x9, x2, #8\n\tcmp x27, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #8\n"
    "\tadd x9, x2, #9\n\tcmp x28, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #9\n"
    "\tadd x9, x2, #10\n\tcmp x29, x9\n\tcset x10, ne\n\torr x0, x0, x10, lsl #10\n"
    "\tadd x9, x2, #100\n\tucvtf d16, x9\n\tfcmp d8, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #16\n"
    "\tadd x9, x2, #101\n\tucvtf d16, x9\n\tfcmp d9, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #17\n"
    "\tadd x9, x2, #102\n\tucvtf d16, x9\n\tfcmp d10, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #18\n"
    "\tadd x9, x2, #103\n\tucvtf d16, x9\n\tfcmp d11, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #19\n"
    "\tadd x9, x2, #104\n\tucvtf d16, x9\n\tfcmp d12, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #20\n"
    "\tadd x9, x2, #105\n\tucvtf d16, x9\n\tfcmp d13, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #21\n"
    "\tadd x9, x2, #106\n\tucvtf d16, x9\n\tfcmp d14, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #22\n"
    "\tadd x9, x2, #107\n\tucvtf d16, x9\n\tfcmp d15, d16\n\tcset x10, ne\n\torr x0, x0, x10, lsl #23\n"
    "\tldp x19, x20, [sp, #16]\n\tldp x21, x22, [sp, #32]\n\tldp x23, x24, [sp, #48]\n"
    "\tldp x25, x26, [sp, #64]\n\tldp x27, x28, [sp, #80]\n"
    "\tldp d8, d9, [sp, #96]\n\tldp d10, d11, [sp, #112]\n"
    "\tldp d12, d13, [sp, #128]\n\tldp d14, d15, [sp, #144]\n"
    "\tldp x29, x30, [sp], #176\n"
    "\tret\n"
    "\t.size kt_callee_saved_check, .-kt_callee_saved_check\n"
    "\t.p2align 4\n"
    "\t.globl kt_clobber_first\n"
    "\t.hidden kt_clobber_first\n"
    "\t.type kt_clobber_first, %function\n"
    "kt_clobber_first:\n"
    "\thint 34\n"
    "\tmov x19, #0\n"
    "\tret\n"
    "\t.size kt_clobber_first, .-kt_clobber_first\n");
#else
#define HAVE_CALLEE_SAVED_CHECK 0
#endif

#if HAVE_CALLEE_SAVED_CHECK
/* Hidden, so that the compiler takes their addresses directly, not
 * through a GOT entry the link would have to fill for a PIE. */
__attribute__((visibility("hidden"))) uintptr_t kt_callee_saved_check(void (*fn)(void *), void *arg,
                                                                      uintptr_t seed);
/* Breaks the ABI on purpose: zeroes the first register of the mask. */
__attribute__((visibility("hidden"))) void kt_clobber_first(void *arg);

#define CSAVED_ROUNDS 4

static kpn_port_ctx *csaved_host;
static kpn_port_ctx *csaved_ctx;
static uintptr_t csaved_mask_ctx;
static unsigned csaved_ctx_rounds;

static void csaved_to_ctx(void *arg)
{
    (void)arg;
    kpn_port_switch(csaved_host, csaved_ctx);
}

static void csaved_to_host(void *arg)
{
    (void)arg;
    kpn_port_switch(csaved_ctx, csaved_host);
}

/* Each round holds its patterns across a switch to the host, which
 * holds its own across the switch here. */
static void csaved_main(void *arg)
{
    (void)arg;
    for (;;) {
        csaved_mask_ctx |= kt_callee_saved_check(csaved_to_host, NULL, 5000u + csaved_ctx_rounds);
        csaved_ctx_rounds++;
    }
}
#endif

void test_every_callee_saved_register_survives_a_switch(void)
{
#if HAVE_CALLEE_SAVED_CHECK
    uintptr_t mask_host = 0;
    void *stack;
    unsigned r;

    /* the probe sees a register that is not given back */
    TEST_ASSERT_EQUAL_HEX32(1, (uint32_t)kt_callee_saved_check(kt_clobber_first, NULL, 77));
    stack = carve_pair(&csaved_host, &csaved_ctx);
    csaved_mask_ctx = 0;
    csaved_ctx_rounds = 0;
    kpn_port_init(csaved_ctx, stack, STACK_SIZE, csaved_main, NULL);
    for (r = 0; r < CSAVED_ROUNDS; r++)
        mask_host |= kt_callee_saved_check(csaved_to_ctx, NULL, 1000u + r);
    TEST_ASSERT_EQUAL_UINT(CSAVED_ROUNDS - 1, csaved_ctx_rounds);
    TEST_ASSERT_EQUAL_HEX32(0, (uint32_t)mask_host);
    TEST_ASSERT_EQUAL_HEX32(0, (uint32_t)csaved_mask_ctx);
#else
    TEST_IGNORE_MESSAGE("no register probe for this architecture");
#endif
}

/* ---- A context writes nothing outside its stack. ---- */

#define GUARD_SIZE 256u
#define GUARD_DEPTH 8

static kpn_port_ctx *guard_host;
static kpn_port_ctx *guard_ctx;
static unsigned long guard_result;

static NOINLINE unsigned long guard_recurse(int depth)
{
    volatile unsigned char scratch[64];
    unsigned long sum;
    int k;

    for (k = 0; k < 64; k++) {
        scratch[k] = (unsigned char)depth;
    }
    if (depth == 0) {
        kpn_port_switch(guard_ctx, guard_host);
        return scratch[0];
    }
    sum = guard_recurse(depth - 1);
    return sum + scratch[depth % 64];
}

static void guard_main(void *arg)
{
    (void)arg;
    for (;;) {
        guard_result = guard_recurse(GUARD_DEPTH);
    }
}

void test_context_stays_inside_its_stack(void)
{
    unsigned char pattern[GUARD_SIZE];
    unsigned char *below;
    unsigned char *stack;
    unsigned char *above;
    int i;

    /* Carved back to back: a guard, the stack, a guard. */
    guard_host = carve_ctx();
    guard_ctx = carve_ctx();
    below = (unsigned char *)carve(GUARD_SIZE);
    stack = (unsigned char *)carve_stack(STACK_SIZE);
    above = (unsigned char *)carve(GUARD_SIZE);
    TEST_ASSERT_NOT_NULL(guard_host);
    TEST_ASSERT_NOT_NULL(guard_ctx);
    TEST_ASSERT_NOT_NULL(below);
    TEST_ASSERT_NOT_NULL(stack);
    TEST_ASSERT_NOT_NULL(above);
    TEST_ASSERT_EQUAL_PTR(below + GUARD_SIZE, stack);
    TEST_ASSERT_EQUAL_PTR(stack + STACK_SIZE, above);
    memset(pattern, 0xA5, sizeof pattern);
    guard_result = 0;

    kpn_port_init(guard_ctx, stack, STACK_SIZE, guard_main, NULL);
    TEST_ASSERT_EQUAL_MEMORY(pattern, above, GUARD_SIZE);
    for (i = 0; i < 3; i++) {
        kpn_port_switch(guard_host, guard_ctx);
    }
    /* Unwound at least once: 0 + 1 + ... + 8. */
    TEST_ASSERT_EQUAL_UINT(36, guard_result);
    TEST_ASSERT_EQUAL_MEMORY(pattern, below, GUARD_SIZE);
    TEST_ASSERT_EQUAL_MEMORY(pattern, above, GUARD_SIZE);
}

/* ---- A context can be started again on the same stack. ---- */

static kpn_port_ctx *again_host;
static kpn_port_ctx *again_ctx;
static int again_seen;

static void again_main(void *arg)
{
    for (;;) {
        again_seen = *(int *)arg;
        kpn_port_switch(again_ctx, again_host);
    }
}

void test_init_restarts_an_abandoned_context(void)
{
    static int first = 1;
    static int second = 2;
    void *stack;

    stack = carve_pair(&again_host, &again_ctx);

    kpn_port_init(again_ctx, stack, STACK_SIZE, again_main, &first);
    kpn_port_switch(again_host, again_ctx);
    TEST_ASSERT_EQUAL_INT(1, again_seen);
    /* The first 'again_main' is suspended mid-loop; forget it. */
    kpn_port_init(again_ctx, stack, STACK_SIZE, again_main, &second);
    kpn_port_switch(again_host, again_ctx);
    TEST_ASSERT_EQUAL_INT(2, again_seen);
}

/* ---- 'fn' returning is called again, on the same stack. ---- */

static kpn_port_ctx *returning_host;
static kpn_port_ctx *returning_ctx;
static int returning_calls;
static void *returning_args[2];
static uintptr_t returning_frames[2];

/* Returns from its first call; its second records the same and switches
 * back to the host for good. */
static NOINLINE void returning_main(void *arg)
{
#if defined(__GNUC__)
    /* the frame itself: a sanitizer may move locals to a heap of its own */
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
#else
    volatile char here = 0;
    uintptr_t frame = (uintptr_t)&here;
#endif

    if (returning_calls < 2) {
        returning_args[returning_calls] = arg;
        returning_frames[returning_calls] = frame;
    }
    if (++returning_calls >= 2) {
        kpn_port_switch(returning_ctx, returning_host);
    }
}

void test_returning_fn_is_called_again_on_the_same_stack(void)
{
    static int marker;
    unsigned char *stack;

    stack = carve_pair(&returning_host, &returning_ctx);

    returning_calls = 0;
    kpn_port_init(returning_ctx, stack, STACK_SIZE, returning_main, &marker);
    kpn_port_switch(returning_host, returning_ctx);
    TEST_ASSERT_EQUAL_INT(2, returning_calls);
    TEST_ASSERT_EQUAL_PTR(&marker, returning_args[0]);
    TEST_ASSERT_EQUAL_PTR(&marker, returning_args[1]);
    /* on the context's stack both times, and no deeper the second time:
     * the entry calls again from where it called first */
    TEST_ASSERT_TRUE(returning_frames[0] > (uintptr_t)stack &&
                     returning_frames[0] < (uintptr_t)(stack + STACK_SIZE));
    TEST_ASSERT_EQUAL_UINT64(returning_frames[0], returning_frames[1]);
}
