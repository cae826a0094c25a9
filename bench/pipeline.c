/* SPDX-License-Identifier: MIT */
/* The papers' pipeline benchmark: messages carry CPU work through S stages; 1 runner vs R. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include "kpn.h"
#include "bench.h"

/*
 *     source ──► stage 1 ──► stage 2 ──► ... ──► stage S ──► sink
 *
 * The source sends 'd' messages; each stands for T/d seconds of CPU work,
 * and every stage burns that much per message before it forwards it, so
 * one run burns S*T CPU-seconds whatever 'd' is (2.5 s by default: 50
 * stages, T = 50 ms).  'd' sets only the grain: many small messages
 * stress sends, switches and runner queues; few large ones leave the
 * pipeline mostly empty.  The burn is a calibrated busy loop, not a
 * sleep, so a runner that has work really is busy.
 *
 * The same network runs on 1 runner and on R, alternating (1, R, 1, R,
 * ...) so that slow drift of the machine (clock, thermals, neighbours)
 * falls on both alike; the medians give the speedup.
 *
 * Every stage folds its number into a checksum the message carries and
 * counts itself in 'hops'; the sink recomputes the checksum from the
 * sequence number, so it knows each message passed every stage, in order,
 * and that the messages arrived in the order they were sent.
 */

enum { MAX_STAGES = 1000 };

struct msg {
    uint32_t seq;   /* 0, 1, ... in send order */
    uint32_t hops;  /* stages passed */
    uint64_t check; /* seed(seq), then step(.., k) at stage k = 1..S */
};

/* A process's channels ('in' NULL for the source, 'out' NULL for the sink),
 * filled in before kpn_run. */
struct stage_io {
    kpn_chan *in, *out;
    uint32_t number; /* 0 the source, 1..S the stages, S+1 the sink */
};

/* Set by main before each run, read-only while the net runs. */
static long long messages, stages;
static unsigned long long burn_iterations; /* per message per stage */

/* Written by the sink only, read by main after kpn_run. */
static long long sink_count, sink_bad, sink_first_bad = -1;

static uint64_t seed(uint32_t seq)
{
    return ((uint64_t)seq + 1u) * UINT64_C(0x9e3779b97f4a7c15);
}

/* Order matters: ((c ^ a) * p ^ b) * p differs from ((c ^ b) * p ^ a) * p,
 * so a stage skipped, repeated or visited out of turn changes the result. */
static uint64_t step(uint64_t check, uint32_t stage)
{
    return (check ^ stage) * UINT64_C(0x100000001b3);
}

/* Spins 'n' iterations.  The accumulator is volatile so the compiler must
 * do every load and store, and local so that runners burning at once on
 * different cores do not share a cache line. */
static void burn(unsigned long long n)
{
    volatile unsigned long long acc = 0;

    while (n-- > 0)
        acc += n;
    (void)acc; /* read once more: clang counts the stores alone as unused */
}

/* Calibration and the stages call 'burn' through this pointer, so the
 * compiler cannot inline it and both run the very same machine code.
 * Inlined copies may be placed differently: on one test machine a copy
 * whose loop straddled a 32-byte fetch boundary ran half as fast as
 * another, and every run took half the CPU time asked for. */
static void (*volatile burn_code)(unsigned long long) = burn;

/* Iterations of 'burn' per microsecond on this machine: grow a trial until
 * it takes 20 ms (which also gives the CPU clock time to settle), then time
 * 7 trials of that length and take the median, so one interrupted trial
 * does not skew it. */
static double calibrate(unsigned long long *trial_iterations)
{
    enum { TRIALS = 7 };
    double rate[TRIALS], t0, t;
    unsigned long long n = 1000;
    int i;

    for (;;) {
        t0 = ex_now();
        burn_code(n);
        t = ex_now() - t0;
        if (t >= 0.020 || n >= (1ull << 40))
            break;
        n *= 2;
    }
    for (i = 0; i < TRIALS; ++i) {
        t0 = ex_now();
        burn_code(n);
        t = ex_now() - t0;
        rate[i] = (double)n / (t > 0 ? t * 1e6 : 1e-3);
    }
    *trial_iterations = n;
    return ex_median(rate, TRIALS);
}

static void source(void *arg)
{
    struct stage_io *io = arg;
    struct msg m;
    long long i;

    for (i = 0; i < messages; ++i) {
        m.seq = (uint32_t)i;
        m.hops = 0;
        m.check = seed(m.seq);
        EX_CHECK(KPN_SEND(io->out, &m));
    }
}

static void stage(void *arg)
{
    struct stage_io *io = arg;
    struct msg m;
    kpn_status s;

    while ((s = KPN_RECV(io->in, &m)) == KPN_OK) {
        burn_code(burn_iterations);
        m.check = step(m.check, io->number);
        ++m.hops;
        EX_CHECK(KPN_SEND(io->out, &m));
    }
    if (s != KPN_EOF)
        EX_CHECK(s);
}

/* Counts and checks: the n-th message must be seq n, have passed S stages,
 * and carry the checksum computed here from its formula. */
static void sink(void *arg)
{
    struct stage_io *io = arg;
    struct msg m;
    kpn_status s;
    uint64_t want;
    uint32_t k;

    while ((s = KPN_RECV(io->in, &m)) == KPN_OK) {
        want = seed((uint32_t)sink_count);
        for (k = 1; k <= (uint32_t)stages; ++k)
            want = step(want, k);
        if (m.seq != (uint32_t)sink_count || m.hops != (uint32_t)stages || m.check != want) {
            if (sink_bad++ == 0)
                sink_first_bad = sink_count;
        }
        ++sink_count;
    }
    if (s != KPN_EOF)
        EX_CHECK(s);
}

/* The arena every run's net is carved from, again for each run.  At the
 * defaults (52 stacks of 16 KiB, 51 channels of 8, one extra runner
 * stack) a net needs about 1 MiB; main checks the options fit. */
static unsigned char arena[64u << 20];

static const size_t stack_size = 16u << 10;
static struct stage_io io[MAX_STAGES + 2]; /* source, stages 1..S, sink */

static void proc_name(char *buf, size_t len, long long i)
{
    if (i == 0)
        snprintf(buf, len, "source");
    else if (i == stages + 1)
        snprintf(buf, len, "sink");
    else
        snprintf(buf, len, "stage%lld", i);
}

/* Bytes a net of these options needs with 'cfg', checked against the arena. */
static size_t arena_need(const kpn_config *cfg, size_t capacity)
{
    char name[32];
    size_t need = kpn_size_net(cfg);
    long long i;

    for (i = 0; i < stages + 2; ++i) {
        proc_name(name, sizeof name, i);
        need += kpn_size_proc(stack_size, strlen(name));
    }
    return need + (size_t)(stages + 1) * kpn_size_chan(sizeof(struct msg), capacity);
}

static void fail(const char *what, kpn_status s, unsigned runners, const kpn_net *net)
{
    fprintf(stderr, "pipeline: %s with runners=%u: %s\n", what, runners, kpn_strerror(s));
    if (s == KPN_EINVAL && runners > 1 && net == NULL)
        fprintf(stderr, "pipeline: (a library built without KPN_THREADS accepts only "
                        "runners=1: try --runners=1)\n");
    if (net != NULL) {
        char text[4096];
        size_t need = kpn_report(net, text, sizeof text);
        fprintf(stderr, "%s", text);
        if (need >= sizeof text)
            fprintf(stderr, "(report truncated: %zu bytes)\n", need);
    }
    exit(1);
}

/* Builds a fresh net on 'cfg->runners' runners, runs it, and returns the
 * wall time of kpn_run alone (runner threads start inside it, so their
 * start-up is counted; building the net is not).  '*verified' says
 * whether the sink saw every message right. */
static double run_once(const kpn_config *cfg, size_t capacity, kpn_stats *st, int *verified)
{
    static kpn_proc *proc[MAX_STAGES + 2];
    char name[32];
    kpn_net *net = NULL;
    kpn_status s;
    long long i, n = stages + 2;
    double t0, t;

    sink_count = 0;
    sink_bad = 0;
    sink_first_bad = -1;
    s = kpn_net_init(&net, arena, sizeof arena, cfg);
    if (s != KPN_OK)
        fail("kpn_net_init", s, cfg->runners, NULL);
    for (i = 0; i < n; ++i) {
        void (*fn)(void *) = i == 0 ? source : i == n - 1 ? sink : stage;
        proc_name(name, sizeof name, i);
        io[i].number = (uint32_t)i;
        EX_CHECK(kpn_spawn(net, &proc[i], name, fn, &io[i], stack_size));
    }
    for (i = 0; i + 1 < n; ++i) {
        EX_CHECK(kpn_connect(net, &io[i].out, proc[i], proc[i + 1], sizeof(struct msg),
                             capacity));
        io[i + 1].in = io[i].out;
    }
    /* Static: contiguous blocks, stage k (1..S) on runner (k-1)*R/S, so
     * only R-1 channels cross runners; the source shares the first
     * stage's runner and the sink the last one's.  Work stealing: no pins,
     * the scheduler spreads the work itself. */
    if (cfg->policy == KPN_POLICY_STATIC) {
        for (i = 0; i < n; ++i) {
            long long k = i == 0 ? 0 : i == n - 1 ? stages - 1 : i - 1;
            EX_CHECK(kpn_proc_pin(proc[i], (unsigned)(k * (long long)cfg->runners / stages)));
        }
    }

    t0 = ex_now();
    s = kpn_run(net);
    t = ex_now() - t0;
    if (s != KPN_OK)
        fail("kpn_run", s, cfg->runners, net);
    EX_CHECK(kpn_net_stats(net, st));
    *verified = sink_count == messages && sink_bad == 0;
    if (!*verified)
        fprintf(stderr,
                "pipeline: runners=%u: the sink got %lld of %lld messages, %lld wrong "
                "(first at position %lld)\n",
                cfg->runners, sink_count, messages, sink_bad, sink_first_bad);
    return t;
}

int main(int argc, char **argv)
{
    ex_opt opt[] = {
        {"stages", "stages between the source and the sink", 50, NULL, 1, MAX_STAGES},
        {"d", "messages the source sends (work division)", 1000, NULL, 1, 100000000},
        {"t_ms", "ms of CPU each stage burns, summed over all messages", 50, NULL, 1,
         1000000},
        {"capacity", "messages each channel holds", 8, NULL, 1, 1 << 20},
        {"runners", "runners of the run compared with 1 runner", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"policy", "ws (work stealing) or static (stage k on runner (k-1)*R/S)", 0, "ws", 0,
         0},
        {"wake", "queue a woken process joins: last (its last runner's) or waker", 0, "last",
         0, 0},
        {"runs", "timed runs of each runner count; medians are reported", 3, NULL, 1, 100},
    };
    enum { STAGES, D, T_MS, CAPACITY, RUNNERS, POLICY, WAKE, RUNS };
    double wall[2][100], med[2], iterations_per_us, work_us;
    unsigned long long trial;
    unsigned runners;
    size_t capacity, need, need_r;
    kpn_config cfg;
    kpn_stats st, st_r;
    int run, runs, which, verified, all_verified = 1;
    unsigned r;

    ex_parse(argc, argv,
             "The papers' pipeline: a source sends d messages of T/d CPU-seconds each\n"
             "through S stages that each burn that and forward; a sink checks them.\n"
             "Runs on 1 runner and on R, alternating, and reports the speedup.",
             opt, (int)(sizeof opt / sizeof opt[0]));
    stages = opt[STAGES].value;
    messages = opt[D].value;
    capacity = (size_t)opt[CAPACITY].value;
    runners = (unsigned)opt[RUNNERS].value;
    runs = (int)opt[RUNS].value;

    kpn_config_default(&cfg);
    cfg.policy = ex_policy(argv[0], opt[POLICY].text);
    cfg.wake = ex_wake(argv[0], opt[WAKE].text);

    /* The R-runner net is the larger (its runner stacks come from the
     * arena), but check both. */
    cfg.runners = 1;
    need = arena_need(&cfg, capacity);
    cfg.runners = runners;
    need_r = arena_need(&cfg, capacity);
    if (need_r > need)
        need = need_r;
    if (need > sizeof arena) {
        fprintf(stderr,
                "pipeline: the net needs %zu bytes of arena (%lld stacks of %zu, %lld "
                "channels of %zu messages, %u runners) but the arena has %zu; use fewer "
                "--stages or a smaller --capacity\n",
                need, stages + 2, stack_size, stages + 1, capacity, runners, sizeof arena);
        return 1;
    }

    iterations_per_us = calibrate(&trial);
    work_us = (double)opt[T_MS].value * 1000.0 / (double)messages;
    burn_iterations = (unsigned long long)(iterations_per_us * work_us + 0.5);
    fprintf(stderr,
            "pipeline: burn calibrated at %.1f iterations/us (median of 7 trials of %llu); "
            "%.3f us = %llu iterations per message per stage\n",
            iterations_per_us, trial, work_us, burn_iterations);
    fprintf(stderr, "pipeline: %lld stages, d=%lld, %.3f CPU-s per run, arena %zu of %zu bytes\n",
            stages, messages, (double)stages * (double)opt[T_MS].value / 1000.0, need,
            sizeof arena);

    memset(&st_r, 0, sizeof st_r);
    for (run = 0; run < runs; ++run) {
        for (which = 0; which < 2; ++which) {
            cfg.runners = which == 0 ? 1 : runners;
            wall[which][run] = run_once(&cfg, capacity, &st, &verified);
            all_verified &= verified;
            if (which == 1)
                st_r = st; /* the stats reported are the last R-runner run's */
            fprintf(stderr, "pipeline: runners=%u run %d/%d: %.3f s\n", cfg.runners, run + 1,
                    runs, wall[which][run]);
        }
    }
    med[0] = ex_median(wall[0], runs);
    med[1] = ex_median(wall[1], runs);

    printf("pipeline: stages=%lld d=%lld runners=%u policy=%s wake=%s wall_1=%.3f wall_R=%.3f "
           "msgs_per_s=%.0f msgs_per_s_1=%.0f speedup=%.3f verified=%d port=%s capacity=%zu "
           "t_ms=%lld runs=%d work_us=%.3f iterations_per_us=%.1f steals=%llu "
           "steal_attempts=%llu sleeps=%llu switches=%llu detections=%llu runner_switches=",
           stages, messages, runners, opt[POLICY].text, opt[WAKE].text, med[0], med[1],
           (double)(messages * stages) / med[1], (double)(messages * stages) / med[0],
           med[0] / med[1], all_verified, KPN_BENCH_PORT, capacity, opt[T_MS].value, runs,
           work_us, iterations_per_us, (unsigned long long)st_r.steals,
           (unsigned long long)st_r.steal_attempts, (unsigned long long)st_r.sleeps,
           (unsigned long long)st_r.switches, (unsigned long long)st_r.detections);
    for (r = 0; r < runners; ++r)
        printf("%s%llu", r ? "," : "", (unsigned long long)st_r.runner_switches[r]);
    printf("\n");
    if (!all_verified) {
        fprintf(stderr, "pipeline: verification failed\n");
        return 1;
    }
    return 0;
}
