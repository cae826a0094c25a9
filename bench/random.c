/* SPDX-License-Identifier: MIT */
/* The papers' random networks (RND-A, RND-B): work through a layered net with cycles; 1 runner vs R. */
#include <stdint.h>
#include "kpn.h"
#include "bench.h"
#include "randnet.h"
#include "replay.h"

/*
 * A random layered network (randnet.c draws it from a seed) carries CPU
 * work from a source to a sink: the source emits the work as d messages
 * per output, and every process reads one message from each input, burns
 * the sum and splits it over its outputs.  Back-edges close cycles and
 * carry work back one round (the protocol is in randnet.c and
 * docs/example-random.md); the sink checks that it received exactly what
 * the source emitted.
 *
 * --work_ms is the CPU time one run burns in all processes together.  The
 * source's total is that divided by the network's flow factor (how many
 * times a unit is burned on its way through), so a run costs about the
 * same whatever the network and d; d sets only the grain.  Large d means
 * many small messages, so channels of small capacity fill and empty all
 * the time: every write that blocks starts a deadlock detection, the
 * figure Nornir's central lock could not sustain beyond ~50 000 per
 * second (Vrba's thesis, 5.2.3).
 *
 * The same network runs on 1 runner and on R, alternating (1, R, 1, R,
 * ...) so that drift of the machine falls on both alike; medians give the
 * speedup.
 */

/* Stacks: a process calls only kpn_send/kpn_recv and the burn loop. */
static const size_t stack_size = 16u << 10;

/* The reserve pool, generous: a channel grows only when an artificial
 * deadlock closes, and then from here. */
static const size_t reserve_size = 16u << 20;

static unsigned char arena[96u << 20];
static rnet_graph graph;
static rnet_run run;
/* --policy=auto: the placement learnt from the 1-runner run, by node */
static int automatic;
static unsigned place_runners, home[RNET_MAX_NODES];
static int placed = 1; /* home[] holds kpn_place's partition of a 1-runner run */
static int replay = 1; /* --replay: play the net out in time (net_limits) */

/* What the last R-runner run's placement gave, where the program knows
 * it (auto: kpn_place's; static: the layers in blocks, as rnet_build pins
 * them): the channels it cut into '*cut', and each runner's share of the
 * work burned into 'split' ("0.474,0.526").  Both are left as they are
 * under work stealing. */
static void placement_figures(const kpn_config *cfg, int *cut, char *split, size_t size)
{
    static unsigned where[RNET_MAX_NODES];
    uint64_t all = rnet_burned(&run), part[KPN_MAX_RUNNERS] = {0};
    size_t used = 0;
    unsigned r;
    int v, e;

    if (cfg->policy != KPN_POLICY_STATIC || cfg->runners < 2)
        return;
    for (v = 0; v < graph.nodes; ++v) {
        where[v] = automatic ? home[v] : rnet_block_runner(&graph, v, cfg->runners);
        part[where[v]] += run.burned[v];
    }
    for (*cut = 0, e = 0; e < graph.edges; ++e)
        *cut += where[graph.from[e]] != where[graph.to[e]];
    for (r = 0; r < cfg->runners && used < size; ++r)
        used += (size_t)snprintf(split + used, size - used, "%s%.3f", r ? "," : "",
                                 all == 0 ? 0.0 : (double)part[r] / (double)all);
}

/* What the net itself allows on 'runners' CPUs (rnet_schedule): the
 * 1-runner run's time taken apart into the work burned and an even cost
 * per message, then the net played out at those costs:
 *  - 'parallel': the 1-runner time over that of the earliest schedule on
 *    unlimited CPUs, the net's parallelism;
 *  - 'bound': the lesser of that and 'runners', which no runtime passes
 *    while a message costs what it costs on one runner;
 *  - 'greedy': the speedup of a list schedule on 'runners' CPUs, where
 *    any CPU runs any process and a step that takes a message or a slot
 *    another CPU left takes 'cross_ns' longer;
 *  - 'placed': the same, each process kept on the CPU that kpn_place's
 *    partition of the last 1-runner run (home[]) gives it.
 * Each "-" under --replay=0 or where the net cannot be played out (a
 * channel the resolver would grow, or too many message slots), and
 * 'placed' where kpn_place gave no partition. */
static void net_limits(uint64_t total, uint64_t d, size_t capacity, double iterations_per_us,
                       double wall_1, unsigned runners, double cross_ns, char out[4][32])
{
    rnet_timing tm;
    uint64_t messages = 0;
    double units = (double)rnet_burned(&run), t[4] = {-1, -1, -1, -1},
           floor_r = wall_1 * 1e9 / runners;
    int e, k;

    if (replay) {
        for (e = 0; e < graph.edges; ++e)
            messages += graph.back[e] ? d - 1 : d;
        tm.unit_ns = 1000.0 / iterations_per_us;
        tm.msg_ns = (wall_1 * 1e9 - units * tm.unit_ns) / (double)messages;
        if (tm.msg_ns < 0)
            tm.msg_ns = 0;
        tm.cross_ns = 0;
        bench_note("playing the net out at %.3f ns a work unit and %.1f ns a message, %.0f ns "
                   "more for one that crosses",
                   tm.unit_ns, tm.msg_ns, cross_ns);
        t[0] = rnet_schedule(&graph, total, d, capacity, &tm, 0, NULL);
        t[1] = t[0] > 0 && t[0] < floor_r ? floor_r : t[0];
        tm.cross_ns = cross_ns;
        t[2] = rnet_schedule(&graph, total, d, capacity, &tm, runners, NULL);
        t[3] = placed ? rnet_schedule(&graph, total, d, capacity, &tm, runners, home) : -1;
    }
    for (k = 0; k < 4; ++k) {
        if (t[k] > 0)
            sprintf(out[k], k == 0 ? "%.1f" : "%.3f", wall_1 * 1e9 / t[k]);
        else
            strcpy(out[k], "-");
    }
}

/* Build the net afresh on 'cfg', run it, and return the wall time of
 * kpn_run alone (runner start-up included, building not). */
static double run_once(const kpn_config *cfg, uint64_t total, uint64_t d, size_t capacity,
                       kpn_stats *st, int *ok)
{
    kpn_net *net = NULL;
    kpn_status s;
    double t;
    int bad, v;

    s = kpn_net_init(&net, arena, sizeof arena, cfg);
    if (s != KPN_OK)
        bench_fail(NULL, s, "kpn_net_init with runners=%u", cfg->runners);
    run.burn = bench_burn;
    s = rnet_build(net, &graph, &run, total, d, capacity, stack_size,
                   cfg->policy == KPN_POLICY_STATIC && !automatic ? cfg->runners : 0);
    if (s != KPN_OK)
        bench_fail(net, s, "building the network with runners=%u", cfg->runners);
    /* auto: the placement kpn_place learnt from the last 1-runner run */
    for (v = 0; automatic && cfg->runners > 1 && v < graph.nodes; ++v)
        BENCH_CHECK(kpn_proc_pin(run.proc[v], home[v]));
    t = bench_run(net);
    BENCH_CHECK(kpn_net_stats(net, st));
    if (automatic && cfg->runners == 1)
        bench_place(net, place_runners, home, (size_t)graph.nodes);
    else if (cfg->runners == 1 && replay) /* for net_limits alone */
        placed = kpn_place(net, place_runners, home, (size_t)graph.nodes) == KPN_OK;
    *ok = rnet_work_ok(&run);
    if (!*ok) {
        int errors = rnet_errors(&run, &bad);
        bench_note("runners=%u: the source emitted %llu units, the sink received %llu in %llu "
                   "messages; %d processes broke the protocol (first: node %d, error %d)",
                   cfg->runners, (unsigned long long)run.total,
                   (unsigned long long)run.sink_total, (unsigned long long)run.sink_messages,
                   errors, bad, bad >= 0 ? run.error[bad] : 0);
    }
    return t;
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"preset", "RND-A (238 nodes, 364 edges, 50 layers, no cycles) or RND-B (212, 333, "
                   "50, 13 cycles)", 0, "RND-B", 0, 0},
        {"seed", "custom network: generator seed (-1: the preset's)", -1, NULL, -1,
         INT64_MAX},
        {"nodes", "custom network: processes, source and sink included (-1: the preset's)",
         -1, NULL, -1, RNET_MAX_NODES},
        {"layers", "custom network: layers between source and sink (-1: the preset's)", -1,
         NULL, -1, RNET_MAX_NODES - 2},
        {"back_edges", "custom network: back-edges, each closing a cycle (-1: the preset's)",
         -1, NULL, -1, RNET_MAX_NODES / 2},
        {"d", "work division: messages the source sends on each output", 1000, NULL, 1,
         100000000},
        {"work_ms", "CPU ms one run burns in all processes together", 1000, NULL, 1,
         10000000},
        {"capacity", "messages each channel holds", 1, NULL, 1, 1 << 20},
        {"runners", "runners of the run compared with 1 runner", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"policy", "ws (work stealing), static (layers in blocks, one block per runner) or "
                   "auto (kpn_place from the 1-runner run)", 0,
         "ws", 0, 0},
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
        {"dot", "also write the network as Graphviz to this file (empty: no file)", 0, "", 0, 0},
        {"cross_ns", "the net played out on R CPUs (speedup_greedy, speedup_placed): ns "
                     "more a step takes that takes a message or a slot another CPU left",
         0, NULL, 0, 1000000},
        {"replay", "play the net out in time after the runs (parallelism, speedup_bound, "
                   "speedup_greedy, speedup_placed; 0: not, and those say -), which takes "
                   "about twice a 1-runner run",
         1, NULL, 0, 1},
    };
    enum { PRESET, SEED, NODES, LAYERS, BACK, D, WORK_MS, CAPACITY, RUNNERS, POLICY, WAKE, LEARN,
           GRAIN, CPUS, RUNS, DOT, CROSS, REPLAY };
    double wall[2][100], det[2][100], res[2][100], med_wall[2], med_det[2], med_res[2];
    double iterations_per_us, flow, burned_ms = 0;
    const rnet_preset *preset;
    const char *preset_name;
    rnet_params params;
    rnet_error ge;
    uint64_t total, d;
    unsigned runners;
    size_t capacity, need;
    kpn_config cfg;
    kpn_stats st, st_r;
    int run_i, runs, which, ok, all_ok = 1, cut = -1;
    /* placement_work: a share of 0.000 to 1.000 per runner, or '-' */
    char split[KPN_MAX_RUNNERS * 8 + 1] = "-";
    char limits[4][32];

    bench_parse(argc, argv,
             "The papers' random networks (Vrba's thesis, 5.2.1.4): a source, layers of processes\n"
             "with random forward edges and cycle-closing back-edges, and a sink.  The source\n"
             "emits the work as d messages per output; each process reads one message from\n"
             "every input, burns the sum and splits it over its outputs; the sink checks the\n"
             "total.  Runs on 1 runner and on R, alternating, and reports the speedup and the\n"
             "deadlock detections per second.",
                opt, (int)(sizeof opt / sizeof opt[0]));

    preset = rnet_preset_find(opt[PRESET].text);
    if (preset == NULL) {
        bench_note("--preset wants RND-A or RND-B, not '%s'", opt[PRESET].text);
        return 2;
    }
    params = preset->params;
    preset_name = preset->name;
    if (opt[SEED].value >= 0 || opt[NODES].value >= 0 || opt[LAYERS].value >= 0 ||
        opt[BACK].value >= 0) {
        preset_name = "custom";
        if (opt[SEED].value >= 0)
            params.seed = (uint64_t)opt[SEED].value;
        if (opt[NODES].value >= 0)
            params.nodes = (int)opt[NODES].value;
        if (opt[LAYERS].value >= 0)
            params.layers = (int)opt[LAYERS].value;
        if (opt[BACK].value >= 0)
            params.back_edges = (int)opt[BACK].value;
    }
    d = (uint64_t)opt[D].value;
    capacity = (size_t)opt[CAPACITY].value;
    runners = (unsigned)opt[RUNNERS].value;
    runs = (int)opt[RUNS].value;
    replay = (int)opt[REPLAY].value;

    kpn_config_default(&cfg);
    cfg.reserve_size = reserve_size;
    cfg.policy = bench_placement(opt[POLICY].text, &automatic);
    place_runners = runners;
    cfg.wake = bench_wake(opt[WAKE].text);
    cfg.learn = (unsigned)opt[LEARN].value;
    cfg.learn_grain_ns = (unsigned)opt[GRAIN].value;
    cfg.cpus = (unsigned)opt[CPUS].value;

    ge = rnet_generate(&graph, &params);
    if (ge != RNET_OK) {
        bench_note("--nodes=%d, --layers=%d, --back_edges=%d: %s", params.nodes,
                   params.layers, params.back_edges,
                   ge == RNET_EINVAL ? "--layers wants 1..nodes-2 (--nodes 3..2048)"
                                     : "the forward edges drawn are more than 8192");
        return 2;
    }
    if (graph.back_edges < params.back_edges)
        bench_note("only %d of the %d back-edges found a free pair of processes",
                   graph.back_edges, params.back_edges);
    if (opt[DOT].text[0] != '\0') {
        FILE *f = fopen(opt[DOT].text, "w");
        if (f == NULL || rnet_write_dot(&graph, f) != 0 || fclose(f) != 0) {
            bench_note("cannot write %s", opt[DOT].text);
            return 1;
        }
        bench_note("wrote %s", opt[DOT].text);
    }

    /* the R-runner net is the larger (runner stacks): it must fit */
    cfg.runners = runners;
    need = rnet_arena_size(&graph, &cfg, capacity, stack_size);
    if (need > sizeof arena) {
        bench_note("the net needs %zu bytes of arena (%d stacks of %zu, %d channels of %zu "
                   "messages, a %zu-byte reserve, %u runners) but the arena has %zu; use "
                   "fewer --nodes or a smaller --capacity",
                   need, graph.nodes, stack_size, graph.edges, capacity, reserve_size, runners,
                sizeof arena);
        return 1;
    }

    iterations_per_us = bench_calibrate(NULL);
    flow = rnet_flow_factor(&graph);
    total = (uint64_t)((double)opt[WORK_MS].value * 1000.0 * iterations_per_us / flow + 0.5);
    bench_note("%s: %d nodes, %d edges (%d back-edges), %d layers, widths 1..%d, seed %llu",
               preset_name, graph.nodes, graph.edges, graph.back_edges, graph.layers,
            graph.max_width, (unsigned long long)graph.params.seed);
    bench_note("burn calibrated at %.1f iterations/us; flow factor %.2f, so the source emits "
               "%llu iterations (%.3f ms) for %lld ms of work, %.3f us per source message",
               iterations_per_us, flow, (unsigned long long)total,
            (double)total / iterations_per_us / 1000.0, opt[WORK_MS].value,
            (double)total / iterations_per_us / (double)d);

    memset(&st_r, 0, sizeof st_r);
    for (run_i = 0; run_i < runs; ++run_i) {
        for (which = 0; which < 2; ++which) {
            cfg.runners = which == 0 ? 1 : runners;
            wall[which][run_i] = run_once(&cfg, total, d, capacity, &st, &ok);
            det[which][run_i] = (double)st.detections / wall[which][run_i];
            res[which][run_i] = (double)st.resolutions / wall[which][run_i];
            all_ok &= ok;
            if (which == 1) {
                st_r = st; /* the stats reported are the last R-runner run's */
                burned_ms = (double)rnet_burned(&run) / iterations_per_us / 1000.0;
            }
            bench_note("runners=%u run %d/%d: %.3f s, %.0f detections/s, %llu resolutions, "
                       "work %s",
                       cfg.runners, run_i + 1, runs, wall[which][run_i], det[which][run_i],
                    (unsigned long long)st.resolutions, ok ? "ok" : "WRONG");
        }
    }
    placement_figures(&cfg, &cut, split, sizeof split); /* cfg: the last run's, on R */
    for (which = 0; which < 2; ++which) {
        med_wall[which] = bench_median(wall[which], runs);
        med_det[which] = bench_median(det[which], runs);
        med_res[which] = bench_median(res[which], runs);
    }
    net_limits(total, d, capacity, iterations_per_us, med_wall[0], runners,
               (double)opt[CROSS].value, limits);

    bench_result("preset=%s nodes=%d edges=%d cycles=%d d=%llu runners=%u layers=%d "
                 "seed=%llu capacity=%zu policy=%s wake=%s learn=%u learn_grain_ns=%u cpus=%u runs=%d port=%s work_ms=%lld "
                 "work_units=%llu flow=%.2f burned_ms=%.1f iterations_per_us=%.1f "
                 "messages=%llu msgs_per_s=%.0f detections=%llu resolutions=%llu "
                 "detections_per_s_1=%.0f resolutions_per_s_1=%.0f resolutions_per_s=%.0f "
                 "reserve_peak=%zu steals=%llu placements=%llu placements_dropped=%llu placement_runners=%u sleeps=%llu switches=%llu "
                 "runner_switches=%s placement_cut=%d placement_work=%s "
                 "wall_1=%.3f wall_R=%.3f speedup=%.3f parallelism=%s speedup_bound=%s "
                 "speedup_greedy=%s speedup_placed=%s cross_ns=%lld replay=%d detections_per_s=%.0f work_ok=%d",
                 preset_name, graph.nodes, graph.edges, graph.back_edges,
                 (unsigned long long)d, runners, graph.layers,
                 (unsigned long long)graph.params.seed, capacity, opt[POLICY].text,
                 opt[WAKE].text, cfg.learn, cfg.learn_grain_ns, cfg.cpus, runs, KPN_BENCH_PORT, opt[WORK_MS].value,
                 (unsigned long long)total, flow, burned_ms, iterations_per_us,
                 (unsigned long long)st_r.messages, (double)st_r.messages / med_wall[1],
                 (unsigned long long)st_r.detections, (unsigned long long)st_r.resolutions,
                 med_det[0], med_res[0], med_res[1], st_r.reserve_peak,
                 (unsigned long long)st_r.steals, (unsigned long long)st_r.placements,
                 (unsigned long long)st_r.placements_dropped, st_r.placement_runners,
                 (unsigned long long)st_r.sleeps,
                 (unsigned long long)st_r.switches, bench_list(st_r.runner_switches, runners),
                 cut, split,
                 med_wall[0], med_wall[1], med_wall[0] / med_wall[1], limits[0], limits[1], limits[2],
                 limits[3], opt[CROSS].value, replay,
                 med_det[1],
                 all_ok);
    if (!all_ok) {
        bench_note("the work was not conserved");
        return 1;
    }
    return 0;
}
