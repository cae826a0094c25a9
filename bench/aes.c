/* SPDX-License-Identifier: MIT */
/* The papers' AES benchmark: scatter a buffer to n workers that AES-128-CTR it, gather, compare. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include "kpn.h"
#include "bench.h"
#include "aes_net.h"

/*
 * A buffer of 2^b bytes is cut into n = 2^(b-k) chunks of 2^k; a source
 * hands chunk i to worker i as a pointer-length pair, the worker
 * encrypts it in place 'passes' times and replies (aes_net.h draws the
 * network).  Each timed run fills the buffer, then
 *
 *   kpn:        builds the net (spawning n+1 processes on their stacks,
 *               connecting 2n channels) and runs it;
 *   sequential: the same passes over another copy of the same plaintext
 *               with plain mbedTLS calls on this thread, no kpn;
 *
 * and compares the two buffers byte for byte: CTR makes the chunked
 * result equal to one encryption of the whole buffer per pass.  The kpn
 * time counts building and running (overdecomposition costs spawns as
 * well as switches); filling the buffers is not timed.  Runs alternate
 * kpn, sequential, kpn, ... so drift of the machine falls on both; the
 * medians are reported.  MB is 10^6 bytes; a run encrypts
 * 2^b * passes bytes.
 */

enum { MAX_B = 26, MAX_SPLIT = 14 }; /* 64 MiB; up to 16384 workers */

/* All memory is static (bss: pages are touched only as used): the kpn
 * buffer and the sequential one, the workers' records, and the arena,
 * sized for 16385 processes with their 32768 channels on up to
 * KPN_MAX_RUNNERS runners with stacks of 8 KiB, twice AES_NET_STACK, so
 * that --stack=8192 fits the largest net; main checks that the options
 * fit. */
static unsigned char data[2][(size_t)1 << MAX_B];
static aes_worker workers[1u << MAX_SPLIT];
static unsigned char arena[160u << 20];

/* The key and initial counter of NIST SP 800-38A, F.5.1 (CTR-AES128). */
static const unsigned char key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                      0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
static const unsigned char iv[16] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                                     0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};

/* --huge_pages: 16 384 workers take 94 MB of arena (amd64), some 23 000 pages
 * of 4 KiB, far past the TLB's reach.  Each worker's record, stack top
 * and channels lie on a page or two of their own, so every phase of a
 * run (build, scatter, the worker's run, gather, the check at the end)
 * meets each of them with a page walk as well as a cache miss.  On
 * 2 MiB pages the arena is 46 TLB entries.  kpn cannot ask for that (it
 * maps nothing); a program on Linux with a net this large can, before
 * it first writes the arena.  The buffers both sides encrypt stay on
 * ordinary pages.  The kernel may decline (transparent huge pages off):
 * the result line reports the huge-page memory the process has once
 * the arena is written, from /proc/self/smaps_rollup (-1 where that
 * cannot be read). */
static int ask_huge_pages(void *at, size_t len)
{
#ifdef MADV_HUGEPAGE
    uintptr_t huge = (uintptr_t)2 << 20, lo = ((uintptr_t)at + huge - 1) & ~(huge - 1),
              hi = ((uintptr_t)at + len) & ~(huge - 1);

    return hi > lo && madvise((void *)lo, hi - lo, MADV_HUGEPAGE) == 0;
#else
    (void)at;
    (void)len;
    return 0;
#endif
}

static long huge_kb(void)
{
    char line[128];
    long kb = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* A plaintext that differs from run to run (xorshift64). */
static void fill(unsigned char *buf, size_t len, unsigned run)
{
    uint64_t x = UINT64_C(0x9e3779b97f4a7c15) * (run + 1u);
    size_t i;

    for (i = 0; i + 8 <= len; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(buf + i, &x, 8);
    }
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"b", "log2 of the buffer's bytes", 26, NULL, AES_NET_MIN_K, MAX_B},
        {"k", "log2 of a chunk's bytes (n = 2^(b-k) workers, at most 2^14: k >= b-14; b if below 16 and --k is not given)", 16, NULL, AES_NET_MIN_K, MAX_B},
        {"passes", "encryptions of every chunk", 4, NULL, 1, 10000},
        {"runners", "runners (threads) of the kpn runs", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"policy", "ws (work stealing) or static (worker i on runner i mod R)", 0, "ws", 0, 0},
        {"runs", "timed runs of each; medians are reported", 3, NULL, 1, 100},
        {"stack", "stack bytes per process", AES_NET_STACK, NULL, KPN_STACK_MIN, 1 << 20},
        {"cpus", "CPUs the runners share: with 1 a ws run is on runner 0 alone "
                 "(cfg.cpus; 0: those this program may run on)", 0, NULL, 0, 1 << 20},
        {"stack_fill", "1: fill every stack at spawn, for its high-water mark; 0: leave "
                       "them unfilled (cfg.stack_fill; the peaks are then 0)", 1, NULL, 0, 1},
        {"huge_pages", "1: ask Linux for 2 MiB pages under the arena (madvise); 0: the "
                       "kernel's default pages", 1, NULL, 0, 1},
    };
    enum { B, K, PASSES, RUNNERS, POLICY, RUNS, STACK, CPUS, STACK_FILL, HUGE_PAGES };
    static double wall[100], build[100], seq[100];
    mbedtls_aes_context aes;
    aes_params p;
    aes_net an;
    kpn_stats st;
    kpn_status s;
    size_t need, len, worker_peak = 0, source_peak = 0, wp, sp;
    double t0, bytes, mbps, seq_mbps;
    int run, runs, verified = 1, same, done, huge = 0;
    long arena_huge_kb;

    bench_parse(argc, argv,
             "The papers' AES benchmark: a source hands each of n = 2^(b-k) workers a\n"
             "2^k-byte chunk of a 2^b-byte buffer; each encrypts it in place 'passes'\n"
             "times with AES-128-CTR (mbedTLS) and replies.  Compared, in the same\n"
             "run, with the same encryption done sequentially, byte for byte.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    memset(&p, 0, sizeof p);
    p.b = (unsigned)opt[B].value;
    p.k = (unsigned)opt[K].value;
    for (run = 1; run < argc && strncmp(argv[run], "--k=", 4) != 0; ++run)
        ;
    if (run == argc && p.k > p.b) /* no --k: the default, 16, brought within b */
        p.k = p.b;
    p.passes = (unsigned)opt[PASSES].value;
    p.runners = (unsigned)opt[RUNNERS].value;
    p.stack = (size_t)opt[STACK].value;
    p.cpus = (unsigned)opt[CPUS].value;
    p.no_fill = opt[STACK_FILL].value == 0;
    runs = (int)opt[RUNS].value;
    p.policy = bench_policy(opt[POLICY].text);
    if (p.k > p.b || p.b - p.k > MAX_SPLIT) {
        bench_note("--k wants %u..%u for b=%u (at most 2^%d workers)",
                   p.b > MAX_SPLIT ? p.b - MAX_SPLIT : AES_NET_MIN_K, p.b, p.b, MAX_SPLIT);
        return 2;
    }
    need = aes_net_arena_size(&p);
    if (need == 0 || need > sizeof arena) {
        bench_note("the net needs %zu bytes of arena (%zu workers, stacks of %zu, %u runners) "
                   "but the arena has %zu; use a larger --k or a smaller --stack",
                   need, aes_net_workers(&p), p.stack, p.runners, sizeof arena);
        return 1;
    }
    len = (size_t)1 << p.b;
    bytes = (double)len * (double)p.passes;
    /* The kernel backs bss with pages only as they are first written.
     * fill() writes both buffers before either side's timer starts; the
     * arena's pages would otherwise be faulted in by the first timed
     * build alone (about 25 ms for 1024 workers), which a median of
     * three runs still feels. */
    if (opt[HUGE_PAGES].value != 0)
        huge = ask_huge_pages(arena, sizeof arena);
    memset(arena, 0, need);
    arena_huge_kb = huge_kb();

    mbedtls_aes_init(&aes);
    if (mbedtls_aes_setkey_enc(&aes, key, 128) != 0) {
        bench_note("mbedtls_aes_setkey_enc failed");
        return 1;
    }
    bench_note("%zu bytes, %zu workers of %zu bytes, %u passes, arena %zu of %zu",
               len, aes_net_workers(&p), (size_t)1 << p.k, p.passes, need, sizeof arena);

    memset(&st, 0, sizeof st);
    for (run = 0; run < runs; ++run) {
        fill(data[0], len, (unsigned)run);
        t0 = bench_now();
        s = aes_net_build(&an, arena, sizeof arena, &p, &aes, iv, data[0], workers,
                          sizeof workers / sizeof workers[0]);
        if (s != KPN_OK)
            bench_fail(NULL, s, "building the net");
        build[run] = bench_now() - t0;
        wall[run] = build[run] + bench_run(an.net);
        done = aes_net_done(&an);
        BENCH_CHECK(kpn_net_stats(an.net, &st)); /* the last run's are reported */
        aes_net_stack_peaks(&an, &wp, &sp);
        worker_peak = wp > worker_peak ? wp : worker_peak;
        source_peak = sp > source_peak ? sp : source_peak;

        fill(data[1], len, (unsigned)run);
        t0 = bench_now();
        if (aes_sequential(&aes, iv, p.passes, data[1], len) != 0) {
            bench_note("the sequential encryption failed");
            return 1;
        }
        seq[run] = bench_now() - t0;

        same = memcmp(data[0], data[1], len) == 0;
        verified &= done && same;
        bench_note("run %d/%d: kpn %.1f MB/s (%.3f s, build %.2f ms), sequential %.1f MB/s "
                   "(%.3f s), steals %llu, sleeps %llu, switches %s, %s",
                   run + 1, runs, bytes / wall[run] / 1e6, wall[run], build[run] * 1e3,
                   bytes / seq[run] / 1e6, seq[run], (unsigned long long)st.steals,
                   (unsigned long long)st.sleeps, bench_list(st.runner_switches, p.runners),
                   !done  ? "a worker or the source saw an error"
                   : same ? "identical"
                          : "the buffers DIFFER");
    }
    mbps = bytes / bench_median(wall, runs) / 1e6;
    seq_mbps = bytes / bench_median(seq, runs) / 1e6;
    bench_result("b=%u k=%u passes=%u n=%zu runners=%u cpus=%u policy=%s port=%s runs=%d stack=%zu "
                 "stack_fill=%d huge_pages=%d arena_huge_kb=%ld worker_stack_peak=%zu "
                 "source_stack_peak=%zu build_ms=%.3f wall=%.4f "
                 "seq_wall=%.4f switches=%llu steals=%llu detections=%llu mbps=%.1f "
                 "seq_mbps=%.1f ratio=%.3f verified=%d",
                 p.b, p.k, p.passes, aes_net_workers(&p), p.runners, p.cpus, opt[POLICY].text,
                 KPN_BENCH_PORT, runs, p.stack, !p.no_fill, huge, arena_huge_kb, worker_peak,
                 source_peak,
                 bench_median(build, runs) * 1e3, bench_median(wall, runs),
                 bench_median(seq, runs), (unsigned long long)st.switches,
                 (unsigned long long)st.steals, (unsigned long long)st.detections, mbps, seq_mbps,
                 mbps / seq_mbps, verified);
    mbedtls_aes_free(&aes);
    if (!verified) {
        bench_note("verification failed");
        return 1;
    }
    return 0;
}
