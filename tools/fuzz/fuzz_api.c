/* SPDX-License-Identifier: MIT */
/* libFuzzer target: random sequences of API calls with hostile arguments, each result checked against docs/errors.md, and no byte written outside the arena and the reserve. */

/*
 * Each input is a program of calls, 4 bytes a call (an opcode and three
 * operands; a short input reads as zeros).  The target keeps a model of
 * what every call must return, from the table in docs/errors.md and the
 * contracts in kpn.h, and traps on a difference.  What it throws at the
 * library:
 *
 *   - configurations with sizes near SIZE_MAX (reserve_size, runner_stack,
 *     default_capacity), out-of-range flags, 0/33 runners, guard pages,
 *     CPU counts from 0 to UINT_MAX (cfg.cpus: every value is valid),
 *     arenas of odd sizes and alignments, of SIZE_MAX bytes;
 *   - stale handles: every process, channel and net of a net the arena
 *     held before stays in a list and is passed to every call;
 *   - reserve regions that repeat, overlap earlier ones or the arena, sit
 *     at odd addresses, are too small once aligned, wrap the address space;
 *   - stack sizes, message sizes and capacities near SIZE_MAX;
 *   - calls from inside a process that only the host may make, calls on
 *     a channel from the process at its other end, stale channels.
 *
 * The arena and every reserve region lie in one buffer; bytes around the
 * arena and in the reserve space that no region covers are filled with a
 * pattern that must stay intact.
 */

#define _XOPEN_SOURCE 700 /* sigaltstack, setitimer */

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "kpn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PAGE 4096u
#define ARENA_SPACE (2u * 1024u * 1024u)
#define RES_SPACE (64u * 1024u)
#define EDGE 256u /* pattern bytes before the arena, after it, after the reserve */
#define MAXP 16
#define MAXC 16
#define MAXSTALE 32
#define MAXREG 32

/* [page | arena space | EDGE | reserve space | EDGE]: the arena space
 * starts on a page, so that a net with guard pages may start there */
#define MEM_SIZE (PAGE + ARENA_SPACE + EDGE + RES_SPACE + EDGE)
static unsigned char mem[MEM_SIZE] __attribute__((aligned(4096)));
static unsigned char pattern[MEM_SIZE];
static unsigned char *const arena_space = mem + PAGE;
static unsigned char *const res_space = mem + PAGE + ARENA_SPACE + EDGE;

static const uint8_t *in;
static size_t in_len, in_pos;

static unsigned byte(void)
{
    return in_pos < in_len ? in[in_pos++] : 0;
}

static void fail(int line, const char *what, long got, long want)
{
    fprintf(stderr, "fuzz_api:%d: %s: got %ld, documented %ld\n", line, what, got, want);
    __builtin_trap();
}
#define EXPECT(what, got, want) \
    do { long g_ = (long)(got), w_ = (long)(want); if (g_ != w_) fail(__LINE__, what, g_, w_); } while (0)
#define EXPECT2(what, got, a, b) \
    do { long g_ = (long)(got); if (g_ != (long)(a) && g_ != (long)(b)) fail(__LINE__, what, g_, (long)(a)); } while (0)
#define CHECK(cond) do { if (!(cond)) fail(__LINE__, #cond, 0, 1); } while (0)

/* ------------------------------------------------------------ the model */

struct mproc {
    kpn_proc *h;
    int exited;          /* ran to its end */
};
struct mchan {
    kpn_chan *h;
    unsigned w, r;       /* model process indices */
    size_t msg;
};

static struct {
    kpn_net *net;        /* NULL: no live net */
    unsigned char *arena;
    size_t arena_size;
    kpn_config cfg;
    int ran;
    struct mproc p[MAXP];
    unsigned np;
    struct mchan c[MAXC];
    unsigned nc;
    uintptr_t reg_lo[MAXREG], reg_hi[MAXREG]; /* aligned parts given */
    unsigned nreg;
    uintptr_t given_lo[MAXREG], given_hi[MAXREG]; /* whole regions given */
    unsigned ngiven;
    /* stale handles of nets this arena held before */
    kpn_net *snet[MAXSTALE];
    kpn_proc *sproc[MAXSTALE];
    kpn_chan *schan[MAXSTALE];
    unsigned nsnet, nsproc, nschan;
    unsigned char *lo, *hi; /* every arena this input used lies in [lo, hi) */
    /* what processes saw, checked on the host */
    int bad_line;
    long bad_got, bad_want;
} m;

static const size_t hostile_sizes[] = {
    0, 1, 15, 16, 63, 64, 65, 79, 80, 100, 4095, 4096, 4097, 65536,
    (size_t)-1, (size_t)-1 - 15, (size_t)-1 - 4096, (size_t)-1 / 2, (size_t)-1 / 32,
};
#define NHOSTILE (sizeof hostile_sizes / sizeof hostile_sizes[0])

static size_t hostile(unsigned b)
{
    return hostile_sizes[b % NHOSTILE];
}

/* Whether 'p' is a byte no call may change: not in any arena this input
 * has used, not in any region given to a pool. */
static int fenced(const unsigned char *p)
{
    unsigned k;
    uintptr_t a = (uintptr_t)p;

    if (m.lo != NULL && p >= m.lo && p < m.hi)
        return 0;
    for (k = 0; k < m.ngiven; ++k)
        if (a >= m.given_lo[k] && a < m.given_hi[k])
            return 0;
    return 1;
}

static void check_range(const unsigned char *from, const unsigned char *to)
{
    for (; from < to; ++from)
        if (fenced(from) && *from != pattern[from - mem])
            fail(__LINE__, "a byte outside the arena and the reserve changed",
                 (long)(from - mem), 0);
}

/* The EDGE bytes before and after every arena used, and ('all') the
 * whole reserve space but the regions given. */
static void check_edges(int all)
{
    const unsigned char *lo = m.lo != NULL ? m.lo : arena_space;
    const unsigned char *hi = m.hi != NULL ? m.hi : arena_space;

    check_range(arena_space - EDGE, lo);
    check_range(hi, hi + EDGE);
    if (all)
        check_range(res_space, mem + MEM_SIZE);
}

/* With guard pages a stale handle may point into a page the live net
 * protected: touching it faults (kpn.h: no check can read it), so stale
 * handles are passed only to nets without them. */
static int stale_usable(void)
{
    return m.net == NULL || !m.cfg.guard_pages;
}

static int live_proc(const kpn_proc *p, unsigned *index)
{
    unsigned k;
    for (k = 0; k < m.np; ++k)
        if (m.p[k].h == p) {
            *index = k;
            return 1;
        }
    return 0;
}

static int live_chan(const kpn_chan *c)
{
    unsigned k;
    for (k = 0; k < m.nc; ++k)
        if (m.c[k].h == c)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ processes */

static void note(int line, long got, long want)
{
    if (m.bad_line == 0) {
        m.bad_line = line;
        m.bad_got = got;
        m.bad_want = want;
    }
}
#define PEXPECT(got, want) do { long g_ = (long)(got), w_ = (long)(want); if (g_ != w_) note(__LINE__, g_, w_); } while (0)

/* A process: host-only calls must be refused, calls on channels it is
 * not the right end of must be refused, stale channels refused, then one
 * message on each channel it writes (never blocks: capacity >= 1). */
static void body(void *arg)
{
    unsigned self = (unsigned)(uintptr_t)arg, k;
    kpn_proc *p;
    kpn_chan *c;
    unsigned char buf[16] = {0};

    PEXPECT(kpn_run(m.net), KPN_ESTATE);
    PEXPECT(kpn_spawn(m.net, &p, "x", body, NULL, 65536), KPN_ESTATE);
    if (m.np > 0) {
        PEXPECT(kpn_connect(m.net, &c, m.p[0].h, m.p[0].h, 4, 1), KPN_ESTATE);
        PEXPECT(kpn_proc_pin(m.p[0].h, 0), KPN_ESTATE);
    }
    PEXPECT(kpn_reserve_add(m.net, res_space, 4096), KPN_ESTATE);
    PEXPECT(kpn_net_release(m.net), KPN_ESTATE);
    for (k = 0; k < m.nschan && stale_usable(); ++k) {
        if (live_chan(m.schan[k]))
            continue; /* carved where a stale one was: it is the new one */
        PEXPECT(kpn_send(m.schan[k], buf), KPN_EINVAL);
        PEXPECT(kpn_recv(m.schan[k], buf), KPN_EINVAL);
        PEXPECT(kpn_close(m.schan[k]), KPN_EINVAL);
    }
    for (k = 0; k < m.nc; ++k) {
        if (m.c[k].w != self) {
            PEXPECT(kpn_send(m.c[k].h, buf), KPN_EPERM);
            PEXPECT(kpn_close(m.c[k].h), KPN_EPERM);
        }
        if (m.c[k].r != self)
            PEXPECT(kpn_recv(m.c[k].h, buf), KPN_EPERM);
        if (m.c[k].msg <= sizeof buf)
            PEXPECT(kpn_send_sized(m.c[k].h, buf, m.c[k].msg + 1), KPN_EINVAL);
    }
    for (k = 0; k < m.nc; ++k)
        if (m.c[k].w == self && m.c[k].msg <= sizeof buf)
            PEXPECT(kpn_send(m.c[k].h, buf), KPN_OK);
}

/* ------------------------------------------------------------ the calls */

static void retire_net(void)
{
    unsigned k;

    if (m.net == NULL)
        return;
    if (m.nsnet < MAXSTALE)
        m.snet[m.nsnet++] = m.net;
    for (k = 0; k < m.np && m.nsproc < MAXSTALE; ++k)
        m.sproc[m.nsproc++] = m.p[k].h;
    for (k = 0; k < m.nc && m.nschan < MAXSTALE; ++k)
        m.schan[m.nschan++] = m.c[k].h;
    m.net = NULL;
    m.np = m.nc = 0;
    m.nreg = 0;
    m.ran = 0;
}

static int config_valid(const kpn_config *c)
{
    return c->default_capacity != 0 && (c->resolve == 0 || c->resolve == 1) &&
           (c->strict == 0 || c->strict == 1) && (c->reserve_size == 0 || c->reserve_size >= 64) &&
           (c->reserve_size == KPN_RESERVE_ARENA || c->reserve_size <= (size_t)-1 - 16) &&
           c->runners >= 1 && c->runners <= KPN_MAX_RUNNERS &&
           (c->policy == KPN_POLICY_WS || c->policy == KPN_POLICY_STATIC) &&
           (c->wake == KPN_WAKE_LAST || c->wake == KPN_WAKE_WAKER) &&
           (c->guard_pages == 0 || c->guard_pages == 1) &&
           (c->stack_fill == 0 || c->stack_fill == 1);
}

static void op_init(unsigned a, unsigned b, unsigned c)
{
    kpn_config cfg;
    kpn_net *n = (kpn_net *)(uintptr_t)1;
    unsigned char *arena;
    size_t size, need;
    int got, same_place;
    kpn_config def;

    kpn_config_default(&cfg);
    kpn_config_default(&def);
    switch (a % 8) {
    case 1: cfg.reserve_size = hostile(b); break;
    case 2: cfg.runners = b % 6 == 5 ? 33 : b % 6; cfg.policy = (kpn_policy)(c % 3); break;
    case 3: cfg.default_capacity = hostile(b); cfg.wake = (kpn_wake)(c % 3); break;
    case 4: cfg.resolve = (int)(b % 3); cfg.strict = (int)(c % 3); break;
    case 5: cfg.guard_pages = (int)(b % 3); cfg.stack_fill = (int)(c % 3); break;
    case 6: cfg.runners = 2; cfg.runner_stack = b % 2 ? hostile(c) : cfg.runner_stack; break;
    case 7:
        cfg.reserve_size = hostile(b);
        cfg.runners = 1 + c % 4;
        cfg.cpus = (c >> 2) % 8 == 7 ? UINT_MAX : (c >> 2) % 8 / 2; /* any value is valid */
        break;
    default: break;
    }
    /* the arena: where (the same place keeps stale handles interesting) and how big */
    arena = arena_space + ((a >> 3) % 4 == 3 ? (c % 64) : 0);
    size = ARENA_SPACE - (size_t)(arena - arena_space);
    switch ((a >> 5) % 8) {
    case 1: size = (size_t)-1; break;
    case 2: size = (size_t)-1 - (uintptr_t)arena + 1; break;
    case 3: size = kpn_size_net(&cfg) + (b % 32) * 16; break;
    case 4: size = b * 64u; break;
    default: break;
    }
    /* a size past the memory is a lie the library cannot catch, unless
     * the arena would wrap round the address space */
    if (size > ARENA_SPACE - (size_t)(arena - arena_space) && size <= UINTPTR_MAX - (uintptr_t)arena)
        size = ARENA_SPACE - (size_t)(arena - arena_space);
    same_place = m.net != NULL && arena == m.arena;
    if (m.net != NULL && !same_place) {
        /* another place in the same memory: kpn.h asks for a release first */
        EXPECT("kpn_net_release", kpn_net_release(m.net), KPN_OK);
        retire_net();
    }

    got = kpn_net_init(&n, arena, size, (a >> 3) % 4 == 2 ? NULL : &cfg);
    if ((a >> 3) % 4 == 2)
        cfg = def;
    need = kpn_size_net(&cfg);
    if (!config_valid(&cfg) || size > UINTPTR_MAX - (uintptr_t)arena ||
        (cfg.guard_pages && (uintptr_t)arena % PAGE != 0)) {
        /* runner_stack too small or huge is also a config mistake */
        EXPECT2("kpn_net_init, bad config", got, KPN_EINVAL, KPN_EINVAL);
    } else if (cfg.runners > 1 && got == KPN_EINVAL) {
        CHECK(need == 0); /* the runner_stack bounds: kpn_size_net agrees */
    } else if (need == 0) {
        EXPECT("kpn_net_init, a size that overflows", got, KPN_ENOMEM);
    } else if (size >= need) {
        EXPECT("kpn_net_init, arena big enough", got, KPN_OK);
    } else if (size + 15 < need) {
        EXPECT("kpn_net_init, arena too small", got, KPN_ENOMEM);
    } else {
        EXPECT2("kpn_net_init, arena at the edge", got, KPN_OK, KPN_ENOMEM);
    }
    if (got != KPN_OK) {
        CHECK(n == (kpn_net *)(uintptr_t)1); /* not written */
        return;
    }
    retire_net(); /* the old net in this place is discarded */
    m.net = n;
    m.arena = arena;
    m.arena_size = size;
    if (m.lo == NULL || arena < m.lo)
        m.lo = arena;
    if (m.hi == NULL || arena + size > m.hi)
        m.hi = arena + size;
    m.cfg = cfg;
    m.nreg = 0;
    {
        kpn_stats st;
        EXPECT("kpn_net_stats, fresh", kpn_net_stats(n, &st), KPN_OK);
        CHECK(st.procs == 0 && st.chans == 0);
        size_t skip = (16 - (uintptr_t)arena % 16) % 16;
        CHECK(st.reserve_size ==
              (cfg.reserve_size == KPN_RESERVE_ARENA ? 0 : (cfg.reserve_size + 15) / 16 * 16));
        CHECK(st.arena_size == st.arena_used + st.arena_free + st.reserve_size);
        CHECK(st.arena_size == ((size - skip) & ~(size_t)15));
    }
}

static kpn_proc *pick_proc(unsigned b, int *live, unsigned *index)
{
    *live = 0;
    switch (b % 4) {
    case 0: case 1:
        if (m.np > 0) {
            *index = (b >> 2) % m.np;
            *live = 1;
            return m.p[*index].h;
        }
        return NULL;
    case 2:
        if (m.nsproc == 0 || !stale_usable())
            return NULL;
        *live = live_proc(m.sproc[(b >> 2) % m.nsproc], index);
        return m.sproc[(b >> 2) % m.nsproc];
    default:
        return NULL;
    }
}

static kpn_net *pick_net(unsigned b, int *live)
{
    *live = 0;
    switch (b % 8) {
    case 5:
        if (m.nsnet == 0)
            return NULL;
        *live = m.snet[(b >> 3) % m.nsnet] == m.net && m.net != NULL;
        return m.snet[(b >> 3) % m.nsnet];
    case 6: return NULL;
    case 7: return (kpn_net *)(void *)(res_space + 512); /* not a net */
    default: *live = m.net != NULL; return m.net;
    }
}

static const size_t stacks[] = {0, 1, 4095, 4096, 4097, 8192, 16384, 65536,
                                (size_t)-1, (size_t)-1 - 15, (size_t)-1 / 2};

static void op_spawn(unsigned a, unsigned b, unsigned c)
{
    int live, got;
    kpn_net *n = pick_net(a, &live);
    size_t stack = stacks[b % (sizeof stacks / sizeof stacks[0])];
    kpn_proc *p = (kpn_proc *)(uintptr_t)1;
    const char *names[] = {NULL, "p", "a longer process name, 40 characters"};
    const char *name = names[c % 3];
    int nofn = (c >> 2) % 16 == 0;
    kpn_stats st;
    size_t need;

    if (m.np >= MAXP)
        return; /* the model's room */
    if (stack < kpn_stack_min() && stack != 0 && b % 3 == 0)
        stack = kpn_stack_min();
    if (m.net != NULL)
        EXPECT("kpn_net_stats", kpn_net_stats(m.net, &st), KPN_OK);
    got = kpn_spawn(n, &p, name, nofn ? NULL : body, (void *)(uintptr_t)m.np, stack);
    if (!live || nofn || stack < KPN_STACK_MIN) {
        EXPECT("kpn_spawn, invalid", got, KPN_EINVAL);
        CHECK(p == (kpn_proc *)(uintptr_t)1);
        return;
    }
    need = kpn_size_proc(stack, name != NULL ? strlen(name) : 0);
    if (need != 0 && m.cfg.guard_pages)
        need = need > (size_t)-1 - 2 * PAGE ? 0 : need + 2 * PAGE;
    if (need == 0)
        EXPECT("kpn_spawn, a size that overflows", got, KPN_ENOMEM);
    else if (st.arena_free >= need)
        EXPECT("kpn_spawn, room enough", got, KPN_OK);
    else /* kpn_size_proc is an upper bound (the worst stagger and slack) */
        EXPECT2("kpn_spawn, little room", got, KPN_OK, KPN_ENOMEM);
    if (got == KPN_OK) {
        CHECK(m.np < MAXP);
        m.p[m.np].h = p;
        m.p[m.np].exited = 0;
        m.np++;
    } else {
        CHECK(p == (kpn_proc *)(uintptr_t)1);
    }
}

static const size_t msgs[] = {0, 1, 4, 16, 17, (size_t)-1, (size_t)-1 / 2, 4096};
static const size_t caps[] = {0, 1, 2, 7, (size_t)-1, (size_t)-1 / 16, 100000};

static void op_connect(unsigned a, unsigned b, unsigned c)
{
    int lw, lr, ln, got;
    unsigned iw = 0, ir = 0;
    kpn_proc *w = pick_proc(a, &lw, &iw), *r = pick_proc(b, &lr, &ir);
    kpn_net *n = pick_net(c >> 5, &ln);
    size_t msg = msgs[c % 8], cap = caps[(c >> 3) % 7], need;
    kpn_chan *ch = (kpn_chan *)(uintptr_t)1;
    kpn_stats st;

    if (m.np >= MAXP - 2 || m.nc >= MAXC) /* keep room in the model */
        return;
    if (m.net != NULL)
        EXPECT("kpn_net_stats", kpn_net_stats(m.net, &st), KPN_OK);
    got = kpn_connect(n, &ch, w, r, msg, cap);
    if (!ln || !lw || !lr || msg == 0) {
        EXPECT("kpn_connect, invalid", got, KPN_EINVAL);
        return;
    }
    if (m.p[iw].exited || m.p[ir].exited) {
        EXPECT("kpn_connect, an endpoint exited", got, KPN_ESTATE);
        return;
    }
    need = kpn_size_chan(msg, cap == 0 ? m.cfg.default_capacity : cap);
    if (need == 0)
        EXPECT("kpn_connect, a ring that overflows", got, KPN_EINVAL);
    else if (st.arena_free >= need)
        EXPECT("kpn_connect, room enough", got, KPN_OK);
    else
        EXPECT("kpn_connect, no room", got, KPN_ENOMEM);
    if (got == KPN_OK) {
        m.c[m.nc].h = ch;
        m.c[m.nc].w = iw;
        m.c[m.nc].r = ir;
        m.c[m.nc].msg = msg;
        m.nc++;
        CHECK(kpn_chan_capacity(ch) == (cap == 0 ? m.cfg.default_capacity : cap));
        CHECK(kpn_chan_fill(ch) == 0);
    }
}

static void op_reserve(unsigned a, unsigned b, unsigned c)
{
    int live, got;
    kpn_net *n = pick_net(a >> 5, &live);
    unsigned char *p;
    size_t size;
    uintptr_t lo, hi, alo, ahi, top;
    unsigned k;
    int overlap = 0, wraps;

    switch (a % 8) {
    case 0: /* a region given before, again */
        if (m.ngiven > 0) {
            k = b % m.ngiven;
            p = (unsigned char *)m.given_lo[k];
            size = (size_t)(m.given_hi[k] - m.given_lo[k]);
            break;
        }
        /* fall through */
    case 1: case 2: case 3:
        p = res_space + (b * 61u) % (RES_SPACE - 2048);
        size = 32 + (c * 7u) % 1024;
        break;
    case 4: /* into the arena */
        p = m.arena != NULL ? m.arena + (b * 97u) % (m.arena_size + 64) : res_space;
        size = 64 + c;
        break;
    case 5: /* sizes near SIZE_MAX */
        p = res_space + b;
        size = hostile(c);
        break;
    case 6: /* NULL */
        p = NULL;
        size = 4096;
        break;
    default: /* at the very end of the reserve space, odd */
        p = res_space + RES_SPACE - 64 - (b % 32);
        size = 64;
        break;
    }
    if (p != NULL && size <= (size_t)(res_space + RES_SPACE - p) && p >= res_space) {
        /* fine: inside the reserve space */
    } else if (p != NULL && p >= res_space) {
        size = (size_t)-1 - (uintptr_t)p + 1 + (c % 2); /* only hostile sizes go past it */
        if (c % 4 >= 2)
            size = (size_t)-1;
    }
    got = kpn_reserve_add(n, p, size);
    if (!live || p == NULL) {
        EXPECT("kpn_reserve_add, invalid", got, KPN_EINVAL);
        return;
    }
    lo = (uintptr_t)p;
    wraps = size > UINTPTR_MAX - lo;
    alo = (lo + 15) & ~(uintptr_t)15;
    ahi = wraps ? 0 : (lo + size) & ~(uintptr_t)15;
    hi = wraps ? UINTPTR_MAX : lo + size;
    if (ahi < alo)
        ahi = alo;
    {
        uintptr_t base = ((uintptr_t)m.arena + 15) & ~(uintptr_t)15;
        top = base + ((m.arena_size - (base - (uintptr_t)m.arena)) & ~(size_t)15);
        if (lo < top && hi > base)
            overlap = 1;
    }
    for (k = 0; k < m.nreg; ++k)
        if (alo < m.reg_hi[k] && m.reg_lo[k] < ahi)
            overlap = 1;
    if (wraps || ahi - alo < 64 || overlap) {
        EXPECT("kpn_reserve_add, invalid", got, KPN_EINVAL);
        return;
    }
    EXPECT("kpn_reserve_add", got, KPN_OK);
    CHECK(m.nreg < MAXREG && m.ngiven < MAXREG);
    m.reg_lo[m.nreg] = alo;
    m.reg_hi[m.nreg++] = ahi;
    m.given_lo[m.ngiven] = lo;
    m.given_hi[m.ngiven++] = hi;
}

static void op_pin(unsigned a, unsigned b)
{
    int live;
    unsigned i = 0;
    kpn_proc *p = pick_proc(a, &live, &i);
    unsigned runner = b % 6;
    int got = kpn_proc_pin(p, runner);

    if (!live || runner >= m.cfg.runners)
        EXPECT("kpn_proc_pin, invalid", got, KPN_EINVAL);
    else
        EXPECT("kpn_proc_pin", got, KPN_OK);
}

static void op_run(unsigned a)
{
    int live, got;
    kpn_net *n = pick_net(a, &live);
    unsigned k;

    m.bad_line = 0;
    got = kpn_run(n);
    if (!live) {
        EXPECT("kpn_run, invalid", got, KPN_EINVAL);
        return;
    }
    /* every process exits after at most one message a channel */
    EXPECT("kpn_run", got, KPN_OK);
    if (m.bad_line != 0)
        fail(m.bad_line, "a call from inside a process", m.bad_got, m.bad_want);
    for (k = 0; k < m.np; ++k)
        m.p[k].exited = 1;
    m.ran = 1;
}

/* Every inspection call with every handle it might get. */
static void op_inspect(void)
{
    unsigned k;
    kpn_stats st;
    kpn_proc_stats ps;
    char buf[256];

    for (k = 0; k < m.nsnet; ++k) {
        if (m.snet[k] == m.net)
            continue; /* a net placed where a stale one was is the new one */
        EXPECT("kpn_net_stats, stale", kpn_net_stats(m.snet[k], &st), KPN_EINVAL);
        EXPECT("kpn_report, stale", kpn_report(m.snet[k], buf, sizeof buf), 0);
        CHECK(kpn_proc_next(m.snet[k], NULL) == NULL);
        CHECK(kpn_net_fault(m.snet[k]) == NULL);
        EXPECT("kpn_run, stale", kpn_run(m.snet[k]), KPN_EINVAL);
        EXPECT("kpn_net_release, stale", kpn_net_release(m.snet[k]), KPN_EINVAL);
    }
    for (k = 0; k < m.nsproc && stale_usable(); ++k) {
        unsigned i;
        if (live_proc(m.sproc[k], &i))
            continue;
        EXPECT("kpn_proc_stats_get, stale", kpn_proc_stats_get(m.sproc[k], &ps), KPN_EINVAL);
        EXPECT("kpn_proc_pin, stale", kpn_proc_pin(m.sproc[k], 0), KPN_EINVAL);
        if (m.net != NULL) {
            kpn_chan *c;
            CHECK(kpn_proc_next(m.net, m.sproc[k]) == NULL);
            EXPECT("kpn_connect, stale", kpn_connect(m.net, &c, m.sproc[k], m.sproc[k], 4, 1),
                   KPN_EINVAL);
        }
    }
    for (k = 0; k < m.nschan && stale_usable(); ++k) {
        unsigned char msg[16];
        if (live_chan(m.schan[k]))
            continue;
        CHECK(kpn_chan_capacity(m.schan[k]) == 0);
        CHECK(kpn_chan_fill(m.schan[k]) == 0);
        EXPECT("kpn_send from the host, stale", kpn_send(m.schan[k], msg), KPN_EINVAL);
    }
    if (m.net != NULL) {
        const kpn_proc *p = NULL;
        size_t n = 0, whole;
        EXPECT("kpn_net_stats", kpn_net_stats(m.net, &st), KPN_OK);
        CHECK(st.procs == m.np && st.chans == m.nc);
        for (k = 0, n = 0; k < m.np; ++k)
            n += (size_t)m.p[k].exited;
        CHECK(st.procs_exited == n);
        n = 0;
        while ((p = kpn_proc_next(m.net, p)) != NULL) {
            EXPECT("kpn_proc_stats_get", kpn_proc_stats_get(p, &ps), KPN_OK);
            CHECK(p == m.p[n].h);
            ++n;
        }
        CHECK(n == m.np);
        whole = kpn_report(m.net, NULL, 0);
        CHECK(kpn_report(m.net, buf, sizeof buf) == whole);
        CHECK(kpn_net_fault(m.net) == NULL);
        for (k = 0; k < m.nc; ++k) {
            unsigned char msg[16];
            EXPECT("kpn_send from the host", kpn_send(m.c[k].h, msg), KPN_EPERM);
            EXPECT("kpn_recv from the host", kpn_recv(m.c[k].h, msg), KPN_EPERM);
        }
    }
}

static void op_sizes(unsigned a, unsigned b)
{
    size_t s = hostile(a), t = hostile(b), r;
    kpn_config cfg;

    r = kpn_size_proc(s, t);
    CHECK(r == 0 || (r > s && r > t));
    r = kpn_size_chan(s, t);
    CHECK(r == 0 || (s != 0 && t != 0 && r / s >= t));
    kpn_config_default(&cfg);
    cfg.reserve_size = s;
    r = kpn_size_net(&cfg);
    CHECK(r == 0 || r >= s || s == KPN_RESERVE_ARENA); /* that one carves nothing */
    cfg.runners = 1 + b % 4;
    r = kpn_size_net(&cfg);
    CHECK(r == 0 || r >= s || s == KPN_RESERVE_ARENA);
}

static void op_release(unsigned a)
{
    int live;
    kpn_net *n = pick_net(a, &live);
    int got = kpn_net_release(n);

    if (!live) {
        EXPECT("kpn_net_release, invalid", got, KPN_EINVAL);
        return;
    }
    EXPECT("kpn_net_release", got, KPN_OK);
    retire_net();
}

/*
 * Signals.  libFuzzer's handlers (SIGALRM every 16 s for -timeout, and
 * those that stop a run) run on whatever stack the signal finds, and
 * this thread runs processes on stacks as small as 4 KiB, which a signal
 * frame with AVX-512's state (over 3 KiB) and the handler overrun: below
 * the first process's stack lie the net's own records and then the bytes
 * before the arena, and check_edges or kpn_run's scan found them
 * changed.  kpn.h (KPN_STACK_MIN) asks a program that spawns such stacks
 * and takes signals for sigaltstack, and so does this one: the handlers
 * move onto an alternate stack (ASan's, where it made one).  The
 * runners' own threads block asynchronous signals.
 * KPN_FUZZ_ALARM_US=N also sends SIGALRM every N microseconds (1 to
 * 999 999), for the replay in .ci/run that checks this.
 */
static void signals_off_process_stacks(void)
{
    static unsigned char alt[64 * 1024];
    static const int sigs[] = {SIGALRM, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
    static int done;
    const char *us = getenv("KPN_FUZZ_ALARM_US");
    long every = us != NULL ? atol(us) : 0;
    struct sigaction sa;
    stack_t ss;
    size_t i;

    if (done)
        return;
    done = 1;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE)) {
        ss.ss_sp = alt;
        ss.ss_size = sizeof alt;
        ss.ss_flags = 0;
        if (sigaltstack(&ss, NULL) != 0) {
            perror("fuzz_api: sigaltstack");
            abort();
        }
    }
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; ++i)
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            sa.sa_handler != SIG_IGN && !(sa.sa_flags & SA_ONSTACK)) {
            sa.sa_flags |= SA_ONSTACK;
            (void)sigaction(sigs[i], &sa, NULL);
        }
    if (every > 0 && every < 1000000) {
        struct itimerval t;

        t.it_interval.tv_sec = 0;
        t.it_interval.tv_usec = (suseconds_t)every;
        t.it_value = t.it_interval;
        if (sigaction(SIGALRM, NULL, &sa) != 0 || sa.sa_handler == SIG_DFL ||
            setitimer(ITIMER_REAL, &t, NULL) != 0) {
            fprintf(stderr, "fuzz_api: KPN_FUZZ_ALARM_US needs libFuzzer's SIGALRM handler "
                            "(-timeout) and setitimer\n");
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned steps = 0;

    signals_off_process_stacks();

    in = data;
    in_len = size;
    in_pos = 0;
    memset(&m, 0, sizeof m);
    if (pattern[0] == 0) {
        size_t i;
        for (i = 0; i < MEM_SIZE; ++i)
            pattern[i] = (unsigned char)(0xc3 ^ (i * 7));
        memcpy(mem, pattern, MEM_SIZE);
    }
    op_init(0, 0, 0); /* a net to start from: the defaults */
    while (in_pos < in_len && steps++ < 64) {
        unsigned op = byte(), a = byte(), b = byte(), c = byte();
        switch (op % 10) {
        case 0: op_init(a, b, c); break;
        case 1: case 2: op_spawn(a, b, c); break;
        case 3: op_connect(a, b, c); break;
        case 4: op_reserve(a, b, c); break;
        case 5: op_pin(a, b); break;
        case 6: op_run(a); break;
        case 7: op_inspect(); break;
        case 8: op_sizes(a, b); break;
        default: op_release(a); break;
        }
        check_edges(op % 10 == 6);
    }
    op_inspect();
    if (m.net != NULL)
        kpn_net_release(m.net); /* guard pages back before the next input */
    check_edges(1);
    /* what this input may have written, back to the pattern */
    memcpy(arena_space - EDGE, pattern + PAGE - EDGE,
           (size_t)((m.hi != NULL ? m.hi : arena_space) + EDGE - (arena_space - EDGE)));
    memcpy(res_space, pattern + (res_space - mem), RES_SPACE + EDGE);
    return 0;
}

/* The seed corpus and the reproducers: 'cc -DKPN_FUZZ_SEEDS' builds this
 * main (run.sh --target=api --seeds), which writes each program and runs
 * it through the checks.  A program is a list of (op, a, b, c). */
#ifdef KPN_FUZZ_SEEDS
static void emit(const char *dir, const char *name, const uint8_t *ops, size_t n)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(ops, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fprintf(stderr, "%s\n", path);
    LLVMFuzzerTestOneInput(ops, n);
}
#define EMIT(dir, name, ...) \
    do { static const uint8_t ops_[] = {__VA_ARGS__}; emit(dir, name, ops_, sizeof ops_); } while (0)

int main(int argc, char **argv)
{
    const char *seeds = argc > 1 ? argv[1] : ".", *crashes = argc > 2 ? argv[2] : ".";

    EMIT(seeds, "build-run-inspect", 1,0,3,1, 1,0,3,1, 3,0,4,2, 3,4,0,9, 6,0,0,0, 7,0,0,0);
    EMIT(seeds, "two-runners", 0,6,0,0, 1,0,3,1, 1,0,3,1, 5,0,1,0, 3,0,4,2, 6,0,0,0, 7,0,0,0);
    EMIT(seeds, "four-runners-static", 0,2,4,1, 1,0,3,1, 1,0,3,1, 1,0,3,1, 5,4,3,0, 3,0,4,1, 6,0,0,0);
    EMIT(seeds, "guard-pages", 0,5,1,0, 1,0,3,1, 1,0,3,1, 3,0,4,2, 6,0,0,0, 0,5,1,0, 7,0,0,0, 9,0,0,0);
    EMIT(seeds, "reserve-regions", 4,1,0,32, 4,1,9,40, 4,4,3,0, 4,5,1,3, 4,6,0,0, 7,0,0,0);
    EMIT(seeds, "sizes", 8,14,14, 0, 8,15,3,0, 8,16,17,0, 8,17,1,0, 8,18,2,0);
    EMIT(seeds, "hostile-config", 0,2,5,0, 0,3,0,0, 0,4,2,2, 0,6,1,14, 0,1,3,0, 0,32,0,0, 0,64,0,0);
    EMIT(seeds, "release-and-reuse", 1,0,3,1, 9,0,0,0, 7,0,0,0, 0,0,0,0, 1,0,3,1, 7,0,0,0);
    EMIT(seeds, "odd-place", 0,24,0,5, 1,0,3,1, 3,0,0,2, 0,24,0,9, 7,0,0,0);
    /* the defects of issue 12, each found by these checks before its fix */
    EMIT(crashes, "api-reserve-size-near-size-max", 0,1,15,0, 1,0,3,1, 7,0,0,0);
    EMIT(crashes, "api-reserve-size-near-size-max-2-runners", 0,7,16,1, 7,0,0,0);
    EMIT(crashes, "api-reserve-region-given-twice", 4,1,0,32, 4,0,0,0);
    EMIT(crashes, "api-stale-process-after-re-init", 1,0,3,1, 1,0,3,1, 0,0,0,0, 7,0,0,0);
    EMIT(crashes, "api-stale-process-connected", 1,0,3,1, 1,0,3,1, 0,0,0,0, 1,0,4,1, 3,2,2,2);
    EMIT(crashes, "api-reserve-64-bytes-at-an-odd-address", 4,7,1,0);
    EMIT(crashes, "api-arena-of-size-max-bytes", 0,32,0,0);
    EMIT(crashes, "api-arena-size-with-a-reserve-of-100", 0,1,9,0);
    return 0;
}
#endif /* KPN_FUZZ_SEEDS */
