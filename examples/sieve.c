/* SPDX-License-Identifier: MIT */
/* sieve: the primes below a limit from a chain of filter processes (Eratosthenes as a network). */
#include <stdio.h>
#include "kpn.h"
#include "args.h"

/*
 *   numbers ──► filter ──► filter ──► ... ──► filter ──► primes
 *   2,3,4,...    (2)        (3)                (37)
 *
 * Each filter keeps the first number it receives (a prime: no earlier
 * filter's prime divided it) and from then on drops its multiples.  A
 * prime that a filter has kept travels on negated, so the filters after
 * it pass it untouched.  What reaches the end, in order, is every prime
 * below the limit, as long as every prime whose square is below the limit
 * has a filter: a composite whose factors no filter keeps would get
 * through.  So the limit sets the fewest filters the program takes.
 */
#define MAX_FILTERS 100
#define MAX_PRIMES 10000

struct stage { kpn_chan *in, *out; long limit; };
struct result { kpn_chan *in; long prime[MAX_PRIMES]; int count; };

static void numbers(void *arg)
{
    struct stage *s = arg;
    for (long n = 2; n < s->limit; ++n)
        kpn_send(s->out, &n);
}

static void filter(void *arg)
{
    struct stage *s = arg;
    long prime = 0, n;

    while (kpn_recv(s->in, &n) == KPN_OK) {
        if (n > 0 && prime == 0) {
            prime = n;                       /* mine: pass it on as a known prime */
            n = -n;
        }
        if (n < 0 || n % prime != 0)
            kpn_send(s->out, &n);
    }
}

static void collect(void *arg)
{
    struct result *r = arg;
    long n;
    while (kpn_recv(r->in, &n) == KPN_OK && r->count < MAX_PRIMES)
        r->prime[r->count++] = n < 0 ? -n : n;
}

static int is_prime(long n)
{
    for (long d = 2; d * d <= n; ++d)
        if (n % d == 0)
            return 0;
    return n >= 2;
}

static unsigned char arena[2 << 20];
static struct stage stage[MAX_FILTERS + 1];
static struct result result;

int main(int argc, char **argv)
{
    kpn_proc *p[MAX_FILTERS + 2];
    kpn_net *net;
    kpn_status s;
    long limit, expect = 0;
    int filters, i, ok = 1;

    args_check(argc, argv, "limit filters", "usage: sieve [--limit=1000] [--filters=12]\n"
               "The primes below limit (3..100000) from a chain of that many filter\n"
               "processes (up to 100).  Every prime whose square is below the limit needs\n"
               "a filter, else composites get through: 11 for 1000, 65 for 100000.\n"
               "Fewer are refused; the default is 12 or as many as the limit needs.\n");
    limit = args_get(argc, argv, "limit", 1000, 3, 100000);
    for (long n = 2; n * n < limit; ++n)               /* the fewest filters that sieve it */
        expect += is_prime(n);
    filters = (int)args_get(argc, argv, "filters", expect > 12 ? expect : 12,
                            expect > 1 ? expect : 1, MAX_FILTERS);
    expect = 0;
    stage[0].limit = limit;
    s = kpn_net_init(&net, arena, sizeof arena, NULL);
    for (i = 0; i <= filters + 1 && s == KPN_OK; ++i)
        s = kpn_spawn(net, &p[i], i == 0 ? "numbers" : i > filters ? "collect" : "filter",
                      i == 0 ? numbers : i > filters ? collect : filter,
                      i > filters ? (void *)&result : (void *)&stage[i], 16384);
    for (i = 0; i <= filters && s == KPN_OK; ++i)   /* p[i] -> p[i + 1] */
        s = kpn_connect(net, &stage[i].out, p[i], p[i + 1], sizeof(long), 16);
    for (i = 1; i <= filters && s == KPN_OK; ++i)
        stage[i].in = stage[i - 1].out;
    result.in = stage[filters].out;
    if (s == KPN_OK)
        s = kpn_run(net);
    if (s != KPN_OK) {
        fprintf(stderr, "sieve: %s\n", kpn_strerror(s));
        return 1;
    }
    for (long n = 2; n < limit; ++n)                   /* check by trial division */
        expect += is_prime(n);
    for (i = 0; i < result.count; ++i) {
        ok &= is_prime(result.prime[i]) && (i == 0 || result.prime[i] > result.prime[i - 1]);
        printf("%ld%c", result.prime[i], i + 1 == result.count || i % 15 == 14 ? '\n' : ' ');
    }
    ok &= result.count == expect;
    printf("limit=%ld filters=%d primes=%d verified=%d\n", limit, filters, result.count, ok);
    return ok ? 0 : 1;
}
