/* SPDX-License-Identifier: MIT */
/* The AES example's network, its CTR helper and its sequential reference (see aes_net.h). */
#include <limits.h>
#include <string.h>
#include "aes_net.h"

/* ------------------------------------------------------------------ */
/* CTR with a counter offset                                            */

void aes_ctr_counter(const unsigned char iv[16], uint64_t blocks, unsigned char out[16])
{
    unsigned carry = 0, sum;
    int i;

    /* Big-endian: the low byte is the last; once 'blocks' runs out only
     * the carry travels on, and what leaves byte 0 is dropped (mod 2^128). */
    for (i = 15; i >= 0; --i) {
        sum = (unsigned)iv[i] + (unsigned)(blocks & 0xffu) + carry;
        out[i] = (unsigned char)sum;
        carry = sum >> 8;
        blocks >>= 8;
    }
}

void aes_pass_iv(const unsigned char base[16], unsigned pass, unsigned char out[16])
{
    unsigned carry = 0, sum;
    uint64_t add = pass;
    int i;

    memmove(out, base, 16);
    for (i = 7; i >= 0; --i) { /* the high 64 bits */
        sum = (unsigned)out[i] + (unsigned)(add & 0xffu) + carry;
        out[i] = (unsigned char)sum;
        carry = sum >> 8;
        add >>= 8;
    }
}

int aes_ctr_at(mbedtls_aes_context *aes, const unsigned char iv[16], uint64_t block,
               unsigned char *buf, size_t len)
{
    unsigned char counter[16], stream[16];
    size_t offset = 0; /* bytes of 'stream' used: none, the chunk starts on a block */

    aes_ctr_counter(iv, block, counter);
    return mbedtls_aes_crypt_ctr(aes, len, &offset, counter, stream, buf, buf);
}

int aes_sequential(mbedtls_aes_context *aes, const unsigned char base[16], unsigned passes,
                   unsigned char *buf, size_t len)
{
    unsigned char iv[16];
    unsigned p;
    int err;

    for (p = 0; p < passes; ++p) {
        aes_pass_iv(base, p, iv);
        err = aes_ctr_at(aes, iv, 0, buf, len);
        if (err != 0)
            return err;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The processes                                                        */

/*
 * Stacks.  A worker's deepest own path is mbedtls_aes_crypt_ctr ->
 * mbedtls_aes_crypt_ecb -> the AES-NI block function, or kpn_send /
 * kpn_recv into the switch.  kpn_proc_stats' high-water mark, x86-64,
 * gcc -O2, mbedTLS 2.28 (libmbedcrypto.so), AVX-512 CPU:
 *
 *                                     amd64 port   posix port
 *   worker, 1 or 2 runners               360          392
 *   source, 2 runners                    208      184 to 216
 *
 * A shared library's first call goes through the dynamic linker's lazy
 * binding, which saves the whole vector register file on the caller's
 * stack (about 2.7 KB with AVX-512).  kpn's POSIX thread services bind
 * their own functions on the host's stack when the net is made, and
 * 'warm_up' below does the same for mbedTLS's, so none of that lands on
 * a worker's stack.  AES_NET_STACK, 4 KiB (the hosted KPN_STACK_MIN),
 * is over 11 times the peak, sized from the high-water mark as the
 * library advises.  Builds that grow frames stay well inside it: the
 * worker peaks at 664 to 768 bytes with ASan and UBSan at -O1 (both
 * ports), and at 1 680 to 1 900 bytes at -O0 with ASan and coverage
 * (amd64).  The example prints the peak of every run, and a process
 * that overflows stops the run with KPN_ESTACK.  No signal handler runs
 * on these stacks (the example installs none; see KPN_STACK_MIN).
 */

/* Worker: encrypt every chunk sent 'passes' times in place, reply with
 * the same pair.  It gets one job, then EOF. */
static void worker(void *arg)
{
    aes_worker *w = arg;
    aes_net *an = w->an;
    unsigned char iv[16];
    aes_msg m;
    uintptr_t at;
    kpn_status s;
    unsigned p;

    while ((s = KPN_RECV(w->job, &m)) == KPN_OK) {
        /* Only chunks of the buffer, on block boundaries. */
        at = (uintptr_t)m.data - (uintptr_t)an->buf;
        if ((uintptr_t)m.data < (uintptr_t)an->buf || at > an->len || m.len > an->len - at ||
            at % AES_NET_BLOCK != 0 || m.len % AES_NET_BLOCK != 0) {
            w->failed = 1;
            return;
        }
        for (p = 0; p < an->params.passes; ++p) {
            aes_pass_iv(an->iv, p, iv);
            if (aes_ctr_at(an->aes, iv, at / AES_NET_BLOCK, m.data, m.len) != 0) {
                w->failed = 1;
                return;
            }
        }
        w->jobs++;
        if (KPN_SEND(w->reply, &m) != KPN_OK) {
            w->failed = 1;
            return;
        }
    }
    if (s != KPN_EOF)
        w->failed = 1;
}

/* Source: scatter chunk i to worker i, then gather the replies in
 * worker order (a Kahn process cannot ask which reply came first). */
static void source(void *arg)
{
    aes_net *an = arg;
    aes_msg m;
    size_t i;

    for (i = 0; i < an->n; ++i) {
        m.data = an->buf + i * an->chunk;
        m.len = an->chunk;
        if (KPN_SEND(an->workers[i].job, &m) != KPN_OK || kpn_close(an->workers[i].job) != KPN_OK)
            an->source_failed = 1;
    }
    for (i = 0; i < an->n; ++i) {
        if (KPN_RECV(an->workers[i].reply, &m) != KPN_OK || m.data != an->buf + i * an->chunk ||
            m.len != an->chunk)
            an->source_failed = 1;
        else
            an->gathered++;
    }
}

/* ------------------------------------------------------------------ */
/* Building                                                             */

static const char source_name[] = "source";

/* With a shared libmbedcrypto, the first call of each of its functions
 * goes through the dynamic linker's lazy binding, which saves the whole
 * vector register file on the caller's stack (see "Stacks" above).  One
 * encryption here, on the host's stack, binds every mbedTLS function a
 * worker calls. */
static void warm_up(mbedtls_aes_context *aes)
{
    unsigned char block[AES_NET_BLOCK] = {0}, iv[16] = {0};

    (void)aes_ctr_at(aes, iv, 0, block, sizeof block);
}

static int params_valid(const aes_params *p)
{
    return p != NULL && p->b <= AES_NET_MAX_B && p->k >= AES_NET_MIN_K && p->k <= p->b &&
           p->b - p->k <= AES_NET_MAX_SPLIT && p->passes >= 1 && p->runners >= 1 &&
           p->runners <= KPN_MAX_RUNNERS &&
           (p->policy == KPN_POLICY_WS || p->policy == KPN_POLICY_STATIC) &&
           (p->stack == 0 || p->stack >= KPN_STACK_MIN) && p->b < sizeof(size_t) * CHAR_BIT;
}

static size_t stack_of(const aes_params *p)
{
    return p->stack != 0 ? p->stack : AES_NET_STACK;
}

static void config_of(const aes_params *p, kpn_config *cfg)
{
    kpn_config_default(cfg);
    cfg->runners = p->runners;
    cfg->policy = p->policy;
    cfg->cpus = p->cpus;
    cfg->stack_fill = !p->no_fill;
}

/* "worker<i>" into 'buf' of 'len' bytes: its length, for sizing, and the
 * name itself; 0 if it does not fit.  By hand, not snprintf: with 16 384
 * workers snprintf took about 0.5 ms of the timed build. */
static size_t worker_name(char *buf, size_t len, size_t i)
{
    static const char prefix[] = "worker";
    char digits[3 * sizeof i];
    size_t n = 0, k, at = sizeof prefix - 1;

    do
        digits[n++] = (char)('0' + i % 10);
    while ((i /= 10) != 0);
    if (len < at + n + 1)
        return 0;
    memcpy(buf, prefix, at);
    for (k = 0; k < n; ++k)
        buf[at + k] = digits[n - 1 - k];
    buf[at + n] = '\0';
    return at + n;
}

size_t aes_net_workers(const aes_params *p)
{
    return params_valid(p) ? (size_t)1 << (p->b - p->k) : 0;
}

size_t aes_net_arena_size(const aes_params *p)
{
    kpn_config cfg;
    char name[32];
    size_t need, n, i, one, chan;

    if (!params_valid(p))
        return 0;
    config_of(p, &cfg);
    n = aes_net_workers(p);
    need = kpn_size_net(&cfg);
    one = kpn_size_proc(stack_of(p), strlen(source_name));
    chan = kpn_size_chan(sizeof(aes_msg), 1);
    if (need == 0 || one == 0 || chan == 0)
        return 0;
    need += one;
    for (i = 0; i < n; ++i) {
        one = kpn_size_proc(stack_of(p), worker_name(name, sizeof name, i));
        if (one == 0 || one > (size_t)-1 - need || 2 * chan > (size_t)-1 - need - one)
            return 0;
        need += one + 2 * chan;
    }
    return need;
}

kpn_status aes_net_build(aes_net *an, void *arena, size_t arena_size, const aes_params *p,
                         mbedtls_aes_context *aes, const unsigned char iv[16], unsigned char *buf,
                         aes_worker *workers, size_t nworkers)
{
    kpn_config cfg;
    char name[32];
    kpn_status s;
    size_t i;

    if (an == NULL || arena == NULL || aes == NULL || iv == NULL || buf == NULL ||
        workers == NULL || !params_valid(p) || nworkers < aes_net_workers(p))
        return KPN_EINVAL;
    memset(an, 0, sizeof *an);
    an->aes = aes;
    memcpy(an->iv, iv, sizeof an->iv);
    an->buf = buf;
    an->len = (size_t)1 << p->b;
    an->chunk = (size_t)1 << p->k;
    an->n = aes_net_workers(p);
    an->params = *p;
    an->params.stack = stack_of(p);
    an->workers = workers;

    warm_up(aes);

    config_of(p, &cfg);
    s = kpn_net_init(&an->net, arena, arena_size, &cfg);
    if (s != KPN_OK)
        return s;
    s = kpn_spawn(an->net, &an->source, source_name, source, an, an->params.stack);
    for (i = 0; i < an->n && s == KPN_OK; ++i) {
        aes_worker *w = &workers[i];

        memset(w, 0, sizeof *w);
        w->an = an;
        worker_name(name, sizeof name, i);
        s = kpn_spawn(an->net, &w->proc, name, worker, w, an->params.stack);
        if (s == KPN_OK)
            s = kpn_connect(an->net, &w->job, an->source, w->proc, sizeof(aes_msg), 1);
        if (s == KPN_OK)
            s = kpn_connect(an->net, &w->reply, w->proc, an->source, sizeof(aes_msg), 1);
    }
    /* Static: the papers' round-robin placement (the source is idle
     * once its jobs are out, so it shares runner 0).  Work stealing:
     * spawn order already deals the processes round-robin; the
     * scheduler moves them as it likes. */
    if (s == KPN_OK && p->policy == KPN_POLICY_STATIC) {
        s = kpn_proc_pin(an->source, 0);
        for (i = 0; i < an->n && s == KPN_OK; ++i)
            s = kpn_proc_pin(workers[i].proc, (unsigned)(i % p->runners));
    }
    return s;
}

int aes_net_done(const aes_net *an)
{
    size_t i;

    if (an == NULL || an->source_failed || an->gathered != an->n)
        return 0;
    for (i = 0; i < an->n; ++i)
        if (an->workers[i].failed || an->workers[i].jobs != 1)
            return 0;
    return 1;
}

void aes_net_stack_peaks(const aes_net *an, size_t *worker_peak, size_t *source_peak)
{
    kpn_proc_stats st;
    size_t i, peak = 0;

    for (i = 0; i < an->n; ++i)
        if (kpn_proc_stats_get(an->workers[i].proc, &st) == KPN_OK && st.stack_peak > peak)
            peak = st.stack_peak;
    if (worker_peak != NULL)
        *worker_peak = peak;
    if (source_peak != NULL)
        *source_peak = kpn_proc_stats_get(an->source, &st) == KPN_OK ? st.stack_peak : 0;
}
