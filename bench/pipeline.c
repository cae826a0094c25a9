/* SPDX-License-Identifier: MIT */
/* The papers' pipeline benchmark: messages carry CPU work through S stages; 1 runner vs R. */
#include <stdint.h>
#include "kpn.h"
#include "bench.h"
#include "pipeline.h"

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

enum { MAX_STAGES = 1000, MAX_COPIES = 32 };

/* A process's channels ('in' NULL for the source, 'out' NULL for the sink),
 * filled in before kpn_run. */
struct stage_io {
    kpn_chan *in, *out;
    uint32_t number; /* 0 the source, 1..S the stages, S+1 the sink */
    int copy;        /* which of the --copies independent pipelines */
};

/* Set by main before each run, read-only while the net runs. */
static long long messages, stages, copies;
static uint64_t burn_iterations; /* per message per stage */

/* Written by each copy's sink only, read by main after kpn_run. */
static long long sink_count[MAX_COPIES], sink_bad[MAX_COPIES], sink_first_bad[MAX_COPIES];

static void source(void *arg)
{
    struct stage_io *io = arg;
    struct msg m;
    long long i;

    for (i = 0; i < messages; ++i) {
        msg_first(&m, (uint32_t)i);
        BENCH_CHECK(KPN_SEND(io->out, &m));
    }
}

static void stage(void *arg)
{
    struct stage_io *io = arg;
    struct msg m;
    kpn_status s;

    while ((s = KPN_RECV(io->in, &m)) == KPN_OK) {
        bench_burn(burn_iterations);
        msg_stage(&m, io->number);
        BENCH_CHECK(KPN_SEND(io->out, &m));
    }
    if (s != KPN_EOF)
        BENCH_CHECK(s);
}

/* Counts and checks: the n-th message must be seq n, have passed S stages,
 * and carry the checksum computed here from its formula.  The count is
 * kept in a local and published at the end: the copies' sinks run on
 * different runners, and counters side by side in one array would share
 * a cache line between them. */
static void sink(void *arg)
{
    struct stage_io *io = arg;
    struct msg m;
    kpn_status s;
    uint64_t mul, add;
    long long count = 0, bad = 0, first_bad = -1;

    whole_pipeline((uint32_t)stages, &mul, &add);
    while ((s = KPN_RECV(io->in, &m)) == KPN_OK) {
        if (!msg_right(&m, (uint32_t)count, (uint32_t)stages, mul, add)) {
            if (bad++ == 0)
                first_bad = count;
        }
        ++count;
    }
    sink_count[io->copy] = count;
    sink_bad[io->copy] = bad;
    sink_first_bad[io->copy] = first_bad;
    if (s != KPN_EOF)
        BENCH_CHECK(s);
}

/* The arena every run's net is carved from, again for each run.  At the
 * defaults (52 stacks of 16 KiB, 51 channels of 8, one extra runner
 * stack) a net needs about 1 MiB; main checks the options fit. */
static unsigned char arena[64u << 20];
/* --policy=auto: the placement learnt from the 1-runner run, by spawn order */
static int automatic;
static unsigned place_runners, home[MAX_COPIES * (MAX_STAGES + 2)];

static const size_t stack_size = 16u << 10;
/* --gap_kb in bytes (0: none), at least the smallest stack */
static size_t gap;
static struct stage_io io[MAX_COPIES * (MAX_STAGES + 2)]; /* per copy: source, 1..S, sink */

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
        need += (size_t)copies * kpn_size_proc(stack_size, strlen(name));
    }
    need += (size_t)(copies * (stages + 1)) * kpn_size_chan(sizeof(struct msg), capacity);
    /* --gap_kb: at most one spacer before each channel */
    if (gap && cfg->runners > 1)
        need += (size_t)(copies * (stages + 1)) * kpn_size_proc(gap, strlen("gap"));
    return need;
}

/* The runner process i is pinned to in a run on several runners, by
 * spawn order; -1 under work stealing. */
static long proc_home(const kpn_config *cfg, long long i)
{
    long long n = stages + 2, k = i % n, block = k == 0 ? 0 : k == n - 1 ? stages - 1 : k - 1;

    if (automatic)
        return (long)home[i];
    if (cfg->policy != KPN_POLICY_STATIC)
        return -1;
    return copies > 1 ? (long)(i / n % cfg->runners)
                      : (long)(block * (long long)cfg->runners / stages);
}

/* --gap_kb's spacer: a process that returns at once, so that its stack,
 * written once as it is carved, lies unused between the channels of two
 * runners (docs/benchmarks.md, "Two runners: where runners meet in
 * memory") */
static void spacer(void *arg)
{
    (void)arg;
}

/* Builds a fresh net on 'cfg->runners' runners, runs it, and returns the
 * wall time of kpn_run alone (runner threads start inside it, so their
 * start-up is counted; building the net is not).  '*verified' says
 * whether the sink saw every message right. */
static double run_once(const kpn_config *cfg, size_t capacity, kpn_stats *st, int *verified)
{
    static kpn_proc *proc[MAX_COPIES * (MAX_STAGES + 2)];
    char name[32];
    kpn_net *net = NULL;
    kpn_status s;
    long long i, c, n = stages + 2;
    long last;
    double t;

    for (c = 0; c < copies; ++c) {
        sink_count[c] = 0;
        sink_bad[c] = 0;
        sink_first_bad[c] = -1;
    }
    s = kpn_net_init(&net, arena, sizeof arena, cfg);
    if (s != KPN_OK)
        bench_fail(NULL, s, "kpn_net_init with runners=%u (a library built without "
                   "KPN_THREADS accepts only runners=1)", cfg->runners);
    /* copy c holds processes c*n .. c*n+n-1, spawned in that order */
    for (i = 0; i < copies * n; ++i) {
        long long k = i % n;
        void (*fn)(void *) = k == 0 ? source : k == n - 1 ? sink : stage;
        proc_name(name, sizeof name, k);
        io[i].number = (uint32_t)k;
        io[i].copy = (int)(i / n);
        BENCH_CHECK(kpn_spawn(net, &proc[i], name, fn, &io[i], stack_size));
    }
    for (i = 0, last = -1; i + 1 < copies * n; ++i) {
        if (i % n == n - 1)
            continue; /* a sink: the next process starts another copy */
        /* a channel whose writer is on another runner than the last
         * channel's: the spacer first */
        if (gap && cfg->runners > 1) {
            long h = proc_home(cfg, i);

            if (last >= 0 && h >= 0 && h != last) {
                kpn_proc *g;

                BENCH_CHECK(kpn_spawn(net, &g, "gap", spacer, NULL, gap));
            }
            last = h;
        }
        BENCH_CHECK(kpn_connect(net, &io[i].out, proc[i], proc[i + 1], sizeof(struct msg),
                             capacity));
        io[i + 1].in = io[i].out;
    }
    /* Auto: the placement kpn_place learnt from the last 1-runner run.
     * Static, one copy: contiguous blocks, stage k (1..S) on runner
     * (k-1)*R/S, so only R-1 channels cross runners; the source shares
     * the first stage's runner and the sink the last one's.  Static,
     * several copies: copy c whole on runner c mod R.  Work stealing: no
     * pins, the scheduler spreads the work itself. */
    if ((automatic && cfg->runners > 1) || (!automatic && cfg->policy == KPN_POLICY_STATIC)) {
        for (i = 0; i < copies * n; ++i)
            BENCH_CHECK(kpn_proc_pin(proc[i], (unsigned)proc_home(cfg, i)));
    }

    t = bench_run(net);
    BENCH_CHECK(kpn_net_stats(net, st));
    if (automatic && cfg->runners == 1)
        bench_place(net, place_runners, home, (size_t)(copies * n));
    *verified = 1;
    for (c = 0; c < copies; ++c) {
        if (sink_count[c] == messages && sink_bad[c] == 0)
            continue;
        *verified = 0;
        bench_note("runners=%u: the sink of copy %lld got %lld of %lld messages, %lld wrong "
                   "(first at position %lld)",
                   cfg->runners, c, sink_count[c], messages, sink_bad[c], sink_first_bad[c]);
    }
    return t;
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"stages", "stages between the source and the sink", 50, NULL, 1, MAX_STAGES},
        {"copies", "independent pipelines in the net (static: copy c on runner c mod R)", 1,
         NULL, 1, MAX_COPIES},
        {"d", "messages the source sends (work division)", 1000, NULL, 1, 100000000},
        {"t_ms", "ms of CPU each stage burns, summed over all messages", 50, NULL, 1,
         1000000},
        {"capacity", "messages each channel holds", 8, NULL, 1, 1 << 20},
        {"runners", "runners of the run compared with 1 runner", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"policy", "ws (work stealing), static (stage k on runner (k-1)*R/S) or auto "
                   "(kpn_place from the 1-runner run)", 0, "ws", 0, 0},
        {"wake", "queue a woken process joins: waker (a reader the waking runner's, a writer "
                 "its last runner's) or last (its last runner's)", 0, "waker", 0, 0},
        {"learn", "under ws: try a placement once a runner steals one process per this "
                  "many messages (cfg.learn; 0: never)", 65536, NULL, 0, 1 << 30},
        {"learn_grain_ns", "under ws: the grain, ns of wall time a message, below which "
                           "--learn applies (cfg.learn_grain_ns; 0: any grain)", 1000, NULL, 0,
         1 << 30},
        {"cpus", "CPUs the runners share: a learnt placement uses at most this many runners, "
                 "and with 1 a ws run is on runner 0 alone (cfg.cpus; 0: those this program "
                 "may run on)", 0, NULL, 0, 1 << 20},
        {"runs", "timed runs of each runner count; medians are reported", 3, NULL, 1, 100},
        {"gap_kb", "under static or auto, in the R-runner runs: KiB of arena left unused "
                   "before each channel whose writer is on another runner than the last "
                   "channel's (a process that returns at once; 0: none)", 0, NULL, 0, 1024},
    };
    enum { STAGES, COPIES, D, T_MS, CAPACITY, RUNNERS, POLICY, WAKE, LEARN, GRAIN, CPUS, RUNS,
           GAP_KB };
    double wall[2][100], med[2], iterations_per_us, work_us;
    uint64_t trial;
    unsigned runners;
    size_t capacity, need;
    kpn_config cfg;
    kpn_stats st, st_r;
    int run, runs, which, verified, all_verified = 1;

    bench_parse(argc, argv,
             "The papers' pipeline: a source sends d messages of T/d CPU-seconds each\n"
             "through S stages that each burn that and forward; a sink checks them.\n"
             "Runs on 1 runner and on R, alternating, and reports the speedup.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    stages = opt[STAGES].value;
    copies = opt[COPIES].value;
    messages = opt[D].value;
    capacity = (size_t)opt[CAPACITY].value;
    runners = (unsigned)opt[RUNNERS].value;
    runs = (int)opt[RUNS].value;
    gap = (size_t)opt[GAP_KB].value << 10;
    if (gap && gap < kpn_stack_min())
        gap = kpn_stack_min();

    kpn_config_default(&cfg);
    cfg.policy = bench_placement(opt[POLICY].text, &automatic);
    place_runners = runners;
    cfg.wake = bench_wake(opt[WAKE].text);
    cfg.learn = (unsigned)opt[LEARN].value;
    cfg.learn_grain_ns = (unsigned)opt[GRAIN].value;
    cfg.cpus = (unsigned)opt[CPUS].value;

    /* The R-runner net is the larger (its runner stacks come from the
     * arena): it must fit. */
    cfg.runners = runners;
    need = arena_need(&cfg, capacity);
    if (need > sizeof arena) {
        bench_note("the net needs %zu bytes of arena (%lld stacks of %zu, %lld channels of "
                   "%zu messages, %u runners) but the arena has %zu; use fewer --stages or "
                   "--copies, or a smaller --capacity",
                   need, copies * (stages + 2), stack_size, copies * (stages + 1), capacity, runners,
                   sizeof arena);
        return 1;
    }

    iterations_per_us = bench_calibrate(&trial);
    work_us = (double)opt[T_MS].value * 1000.0 / (double)messages;
    burn_iterations = (uint64_t)(iterations_per_us * work_us + 0.5);
    bench_note("burn calibrated at %.1f iterations/us (median of 7 trials of %llu); "
               "%.3f us = %llu iterations per message per stage",
               iterations_per_us, (unsigned long long)trial, work_us,
               (unsigned long long)burn_iterations);
    bench_note("%lld stages, d=%lld, %.3f CPU-s per run, arena %zu of %zu bytes",
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
            bench_note("runners=%u run %d/%d: %.3f s", cfg.runners, run + 1, runs,
                       wall[which][run]);
        }
    }
    med[0] = bench_median(wall[0], runs);
    med[1] = bench_median(wall[1], runs);

    bench_result("stages=%lld d=%lld copies=%lld runners=%u policy=%s wake=%s learn=%u "
                 "learn_grain_ns=%u cpus=%u wall_1=%.3f "
                 "wall_R=%.3f ns_per_stage_1=%.2f ns_per_stage_R=%.2f "
                 "msgs_per_s=%.0f msgs_per_s_1=%.0f speedup=%.3f verified=%d port=%s "
                 "capacity=%zu t_ms=%lld runs=%d work_us=%.3f iterations_per_us=%.1f "
                 "steals=%llu steal_attempts=%llu placements=%llu placements_dropped=%llu placement_runners=%u sleeps=%llu switches=%llu "
                 "detections=%llu "
                 "runner_switches=%s gap_kb=%lld",
                 stages, messages, copies, runners, opt[POLICY].text, opt[WAKE].text, cfg.learn,
                 cfg.learn_grain_ns, cfg.cpus, med[0],
                 med[1], med[0] * 1e9 / (double)(copies * messages * stages),
                 med[1] * 1e9 / (double)(copies * messages * stages),
                 (double)(copies * messages * stages) / med[1],
                 (double)(copies * messages * stages) / med[0],
                 med[0] / med[1], all_verified, KPN_BENCH_PORT, capacity, opt[T_MS].value,
                 runs, work_us, iterations_per_us, (unsigned long long)st_r.steals,
                 (unsigned long long)st_r.steal_attempts, (unsigned long long)st_r.placements,
                 (unsigned long long)st_r.placements_dropped, st_r.placement_runners,
                 (unsigned long long)st_r.sleeps,
                 (unsigned long long)st_r.switches, (unsigned long long)st_r.detections,
                 bench_list(st_r.runner_switches, runners), opt[GAP_KB].value);
    if (!all_verified) {
        bench_note("verification failed");
        return 1;
    }
    return 0;
}
