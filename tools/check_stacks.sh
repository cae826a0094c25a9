#!/bin/sh
# Stack sizes kpn_spawn accepts must never let a process that calls
# ordinary libc functions corrupt memory silently, crash or hang.
#
# For the host's ports (amd64 or aarch64, and posix), without
# LD_BIND_NOW (the first call through a lazily bound symbol runs the
# dynamic linker on the process's stack), and on 1
# and 2 runners, for every stack size S from KPN_STACK_MIN to 8192 in
# steps of 512:
#   - the ring benchmark (its first process calls clock_gettime);
#   - README's producer/consumer, the consumer printing every value.
# Each run must complete, or end with KPN_ESTACK ("overflowed its stack"
# on stderr); a signal, a timeout or any other failure fails the check.
# Prints one line per port and program: the sizes that completed and
# those that gave KPN_ESTACK.  About half a minute.
set -eu
cd "$(dirname "$0")/.."
unset LD_BIND_NOW

tmp=build/check_stacks
mkdir -p "$tmp"
cat > "$tmp/readme_printf.c" <<'PROG'
/* README's example, the consumer printing each value; argv[1] the stack. */
#include <stdio.h>
#include <stdlib.h>
#include "kpn.h"

static unsigned char arena[256 * 1024];
struct ports { kpn_chan *in, *out; };

static void producer(void *arg) {
    struct ports *io = arg;
    for (int i = 0; i < 100; ++i) kpn_send(io->out, &i);
}

static void consumer(void *arg) {
    struct ports *io = arg;
    int v;
    while (kpn_recv(io->in, &v) == KPN_OK) printf("%d\n", v);
}

int main(int argc, char **argv) {
    kpn_net *net; kpn_proc *p, *c; struct ports pio = {0}, cio = {0};
    kpn_config cfg;
    size_t stack = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    kpn_status s;
    kpn_config_default(&cfg);
    if (kpn_config_from_env(&cfg) != KPN_OK) return 2;
    if (kpn_net_init(&net, arena, sizeof arena, &cfg) != KPN_OK ||
        kpn_spawn(net, &p, "producer", producer, &pio, stack) != KPN_OK ||
        kpn_spawn(net, &c, "consumer", consumer, &cio, stack) != KPN_OK ||
        kpn_connect(net, &pio.out, p, c, sizeof(int), 8) != KPN_OK) return 2;
    cio.in = pio.out;
    s = kpn_run(net);
    if (s != KPN_OK) fprintf(stderr, "readme: %s\n", kpn_strerror(s));
    return s == KPN_OK ? 0 : 1;
}
PROG

min=$(printf '#include "kpn.h"\nKPN_STACK_MIN\n' | ${CC:-cc} -E -P -Iinclude - | tail -n 1 | tr -dc 0-9)
status=0
for port in amd64 aarch64 posix; do
    [ "$port" = amd64 ] && [ "$(uname -m)" != x86_64 ] && continue
    [ "$port" = aarch64 ] && [ "$(uname -m)" != aarch64 ] && continue
    make --no-print-directory lib PORT=$port >/dev/null
    make --no-print-directory bench-bins PORT=$port >/dev/null 2>&1 ||
        make --no-print-directory examples PORT=$port >/dev/null 2>&1 || true
    ring=""
    for r in build/$port/examples/ring build/$port/bench/ring; do [ -x "$r" ] && ring=$r; done
    [ -n "$ring" ] || { echo "check_stacks: no ring binary for port $port"; exit 1; }
    ${CC:-cc} -std=c99 -O2 -Iinclude "$tmp/readme_printf.c" build/$port/libkpn.a -lpthread \
        -o "$tmp/readme_printf_$port"
    for prog in ring readme; do
        done_sizes="" estack=""
        s=$min
        while [ "$s" -le 8192 ]; do
            for runners in 1 2; do
                if [ $prog = ring ]; then
                    set -- "$ring" --procs=50 --trips=20 --runs=1 --runners=$runners --stack=$s
                    env=""
                else
                    set -- "$tmp/readme_printf_$port" "$s"
                    env="KPN_RUNNERS=$runners"
                fi
                rc=0
                env $env timeout 20 "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
                if [ $rc -eq 0 ]; then
                    case " $done_sizes " in *" $s "*) ;; *) done_sizes="$done_sizes $s" ;; esac
                elif [ $rc -eq 1 ] && grep -q "overflowed its stack" "$tmp/err"; then
                    estack="$estack $s/$runners"
                else
                    echo "check_stacks: $port $prog stack=$s runners=$runners: exit $rc (signal, hang or error)"
                    sed -n 1,3p "$tmp/err"
                    status=1
                fi
            done
            s=$((s + 512))
        done
        echo "check_stacks: $port $prog: complete at${done_sizes:- none}; KPN_ESTACK at${estack:- none}"
    done
done
[ $status = 0 ] && echo "check_stacks: no size from $min to 8192 corrupted, crashed or hung"
exit $status
