/* SPDX-License-Identifier: MIT */
/* AES-128-CTR by scatter/gather: a buffer encrypted by n workers, checked against one sequential encryption. */
#include <stdlib.h>
#include <string.h>
#include "kpn.h"
#include "aes_net.h"
#include "../args.h"

/*
 * The network is in aes_net.c: a source cuts a 2^b-byte buffer into
 * 2^(b-k) chunks, one worker encrypts each, the source gathers them.
 * CTR mode makes the chunks independent, so the result must equal one
 * sequential encryption of the whole buffer, byte for byte, whatever the
 * number of workers or runners.  bench/aes times it.
 */

int main(int argc, char **argv)
{
    static const unsigned char key[16] = "kpn example key";
    static const unsigned char iv[16] = "counter block 0";
    aes_params p = { 0, 0, 1, 1, KPN_POLICY_WS, 0, 0, 0 };
    mbedtls_aes_context aes;
    unsigned char *buf, *want, *arena;
    aes_worker *workers;
    aes_net an;
    size_t len, need;
    unsigned lo;
    kpn_status s;
    int same;

    args_check(argc, argv, "b k runners",
               "usage: aes [--b=20] [--k=12] [--runners=2]\n"
               "Encrypts 2^b bytes (b 4..30) in chunks of 2^k (k up to b, and at most\n"
               "2^20 chunks), one worker process each, on that many runners, and checks\n"
               "the result against one sequential AES-128-CTR encryption.  The last line\n"
               "is name=value pairs.\n");
    p.b = (unsigned)args_get(argc, argv, "b", 20, AES_NET_MIN_K, 30);
    /* k from b - 20 (at most 2^20 workers) or 4 up to b; default 12 or the nearest of those */
    lo = p.b > AES_NET_MIN_K + AES_NET_MAX_SPLIT ? p.b - AES_NET_MAX_SPLIT : AES_NET_MIN_K;
    p.k = (unsigned)args_get(argc, argv, "k", 12 < lo ? lo : 12 > p.b ? p.b : 12, lo, p.b);
    p.runners = (unsigned)args_get(argc, argv, "runners", 2, 1, KPN_MAX_RUNNERS);
    len = (size_t)1 << p.b;
    need = aes_net_arena_size(&p);
    buf = malloc(len);
    want = malloc(len);
    arena = malloc(need);
    workers = malloc(aes_net_workers(&p) * sizeof *workers);
    if (need == 0 || !buf || !want || !arena || !workers) {
        fprintf(stderr, "aes: out of memory for b=%u k=%u\n", p.b, p.k);
        return 1;
    }
    for (size_t i = 0; i < len; ++i)
        buf[i] = want[i] = (unsigned char)(i * 7 + (i >> 8));

    mbedtls_aes_init(&aes);
    mbedtls_aes_setkey_enc(&aes, key, 128);
    s = aes_net_build(&an, arena, need, &p, &aes, iv, buf, workers, aes_net_workers(&p));
    if (s == KPN_OK)
        s = kpn_run(an.net);
    if (s != KPN_OK || !aes_net_done(&an)) {
        fprintf(stderr, "aes: the network failed: %s\n", kpn_strerror(s));
        return 1;
    }
    aes_sequential(&aes, iv, 1, want, len);
    same = memcmp(buf, want, len) == 0;
    printf("bytes=%zu workers=%zu runners=%u verified=%d\n", len, aes_net_workers(&p),
           p.runners, same);
    mbedtls_aes_free(&aes);
    free(workers);
    free(arena);
    free(want);
    free(buf);
    return same ? 0 : 1;
}
