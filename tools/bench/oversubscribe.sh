#!/bin/sh
# The table of docs/runners.md, "No more runners than CPUs": speedups on
# 2, 4 and 8 runners against one, measured in the same invocation, for
# the fine-grained nets with the default cfg.cpus (a learnt placement on
# no more runners than the CPUs) and with --cpus set to the runner count
# (one on every runner), alternating the two; and for the coarse nets,
# which learn no placement, with the default alone.
#
# With CPU given, the table of "One CPU" instead: every benchmark bound
# to that CPU (taskset), on 2 and 8 runners, the default (on runner 0
# alone) against --cpus set to the runner count (the processes shared
# among every runner), fine-grained and coarse nets alike.
#
# Prints a Markdown table of medians (with the range) on stdout, with
# the placements learnt in each invocation in brackets; progress on
# stderr.  On a machine with at least 8 CPUs both settings are the same.
#
# Usage: tools/bench/oversubscribe.sh [ROUNDS [CPU]]     (ROUNDS default 3)
set -eu
rounds=${1:-3}
cpu=${2:-}
bench=build/amd64/bench
if [ -n "$cpu" ]; then
    counts="2 8"
    bind="taskset -c $cpu"
else
    counts="2 4 8"
    bind=
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
make -j2 bench-bins >/dev/null

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

round=1
while [ "$round" -le "$rounds" ]; do
    for r in $counts; do
        echo "oversubscribe: round $round of $rounds, $r runners" >&2
        for net in pipe rnda rndb; do
            case $net in
                pipe) cmd="$bench/pipeline --stages=50 --d=1000000 --t_ms=1 --capacity=64" ;;
                rnda) cmd="$bench/random --preset=RND-A --d=50000 --replay=0" ;;
                rndb) cmd="$bench/random --preset=RND-B --d=50000 --replay=0" ;;
            esac
            for cpus in 0 "$r"; do
                # the same run on two CPUs
                [ -z "$cpu" ] && [ "$r" = 2 ] && [ "$cpus" != 0 ] && continue
                line=$($bind $cmd --runners="$r" --cpus="$cpus" --runs=3 2>/dev/null | tail -n 1)
                v=$([ "$cpus" = 0 ] && echo default || echo every)
                echo "$net $r $v $(echo "$line" | field speedup) $(echo "$line" | field placements)" >>"$out"
            done
        done
        for cpus in 0 "$r"; do
            # with every CPU, the coarse nets learn nothing: --cpus changes nothing
            [ -z "$cpu" ] && [ "$cpus" != 0 ] && continue
            v=$([ "$cpus" = 0 ] && echo default || echo every)
            line=$($bind $bench/pipeline --stages=50 --d=1000 --runners="$r" --cpus="$cpus" --runs=3 2>/dev/null |
                tail -n 1)
            echo "pipe1000 $r $v $(echo "$line" | field speedup) -" >>"$out"
            line=$($bind $bench/aes --b=26 --k=16 --passes=4 --runners="$r" --cpus="$cpus" --runs=3 2>/dev/null |
                tail -n 1)
            echo "aes $r $v $(echo "$line" | field ratio) -" >>"$out"
        done
    done
    round=$((round + 1))
done

awk -v one="$cpu" '
{ key = $1 " " $2 " " $3; n[key]++; v[key, n[key]] = $4; p[key] = p[key] (p[key] == "" ? "" : ",") $5 }
function cell(key,    i, j, t, m, k) {
    k = n[key]
    if (k == 0) return ""
    for (i = 1; i <= k; i++) s[i] = v[key, i] + 0
    for (i = 2; i <= k; i++) { t = s[i]; for (j = i - 1; j >= 1 && s[j] > t; j--) s[j + 1] = s[j]; s[j + 1] = t }
    m = (k % 2) ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2
    return sprintf("%.2f (%.2f to %.2f)%s", m, s[1], s[k], p[key] ~ /^[-,]*$/ ? "" : " [" p[key] "]")
}
END {
    name["pipe"] = "50-stage pipeline, no work (`--d=1000000 --t_ms=1 --capacity=64`)"
    name["rnda"] = "RND-A, d = 50 000"
    name["rndb"] = "RND-B, d = 50 000"
    name["pipe1000"] = "50-stage pipeline, d = 1 000"
    name["aes"] = "AES, 1 024 workers (against the sequential loop)"
    if (one != "") {
        print "| net, one CPU | 2 runners | 2, every runner | 8 runners | 8, every runner |"
        print "| --- | --- | --- | --- | --- |"
    } else {
        print "| net | 2 runners | 4 runners | 4, every runner | 8 runners | 8, every runner |"
        print "| --- | --- | --- | --- | --- | --- |"
    }
    split("pipe rnda rndb pipe1000 aes", order, " ")
    for (i = 1; i <= 5; i++) {
        k = order[i]
        if (one != "")
            printf "| %s | %s | %s | %s | %s |\n", name[k], cell(k " 2 default"),
                   cell(k " 2 every"), cell(k " 8 default"), cell(k " 8 every")
        else
            printf "| %s | %s | %s | %s | %s | %s |\n", name[k], cell(k " 2 default"),
                   cell(k " 4 default"), cell(k " 4 every"), cell(k " 8 default"), cell(k " 8 every")
    }
}' "$out"
