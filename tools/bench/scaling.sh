#!/bin/sh
# make scaling: how the benchmarks scale with runners, from 1 to the
# CPUs this machine has (at most 16).  Each point is one invocation of a
# driver, which alternates 1 runner and R in the same process and
# reports the median of its runs; a point is repeated --reps times and
# the table gives the median.  Rows go to OUT/scaling.csv as they come,
# so a sweep cut short keeps what it measured.  --quick: a tenth of the
# messages, for a check that it all runs (not for figures).  --append:
# add this sweep's rows to those already in OUT (a sweep of the same
# parameters on the same machine), so that sweeps made at different
# times, at other runner counts say, make one table.
#
# Usage: tools/bench/scaling.sh [--bin=DIR] [--out=DIR] [--runners="1 2 4 ..."]
#            [--reps=N] [--quick] [--append]
#        tools/bench/scaling.sh --report [--out=DIR] [--plot=FILE]   (table
#            and plot only, from OUT/scaling.csv)
# Writes OUT/scaling.md (the table) and the plot, OUT/scaling.png unless
# --plot names another file (gnuplot).
set -eu
bin=build/amd64/bench
out=build/bench
reps=1
runners=""
report=0
quick=0
append=0
plot=""
for a in "$@"; do
    case $a in
    --bin=*) bin=${a#*=} ;;
    --out=*) out=${a#*=} ;;
    --runners=*) runners=${a#*=} ;;
    --reps=*) reps=${a#*=} ;;
    --quick) quick=1 ;;
    --append) append=1 ;;
    --plot=*) plot=${a#*=} ;;
    --report) report=1 ;;
    --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling: unknown option $a (--help lists them)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
csv=$out/scaling.csv

value() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }

# point NAME KEY R DRIVER ARGS...: run the driver once and append
# NAME,R,KEY's value,steals,placements,placement_runners to the CSV.
point() {
    name=$1 key=$2 r=$3; shift 3
    line=$("$@" 2>>"$out/scaling.log" | tail -n 1) || { echo "scaling: $* failed" >&2; exit 1; }
    v=$(printf '%s\n' "$line" | value "$key")
    [ -n "$v" ] || { echo "scaling: no $key from $*" >&2; exit 1; }
    s=$(printf '%s\n' "$line" | value steals); p=$(printf '%s\n' "$line" | value placements)
    q=$(printf '%s\n' "$line" | value placement_runners)
    echo "$name,$r,$v,${s:-0},${p:-0},${q:-0}" >> "$csv"
    printf '%s\n' "$line" >> "$csv.lines"
    echo "  $name runners=$r $key=$v" >&2
}

if [ $report = 0 ]; then
    cpus=$(nproc)
    if [ -z "$runners" ]; then
        # powers of two first, so that a sweep cut short still spans the range
        for r in 1 2 4 8 16 3 6 12; do [ $r -le $cpus ] && runners="$runners $r"; done
    fi
    for d in ring pipeline random aes pingpong; do
        [ -x "$bin/$d" ] || { echo "scaling: $bin/$d missing (make bench-bins)" >&2; exit 1; }
    done
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
    machine="$(uname -m), $cpus CPUs, ${cpu:-unknown CPU}"
    w=1000000 rd=50000 ad=26 pt=50
    [ $quick = 1 ] && { w=100000 rd=5000 ad=22 pt=5; }
    params="w=$w rd=$rd ad=$ad pt=$pt"
    if [ $append = 1 ] && [ -f "$csv" ]; then
        # rows of other messages or another machine would make no table
        [ "$(cat "$out/scaling.params" 2>/dev/null)" = "$params" ] ||
            { echo "scaling: --append: $out holds a sweep of other parameters (--quick differs)" >&2; exit 2; }
        [ "$(cat "$out/scaling.machine" 2>/dev/null)" = "$machine" ] ||
            { echo "scaling: --append: $out holds a sweep of another machine" >&2; exit 2; }
    else
        echo "$machine" > "$out/scaling.machine"
        echo "$params" > "$out/scaling.params"
        echo "bench,runners,value,steals,placements,placement_runners" > "$csv"
        : > "$csv.lines"
    fi
    echo "scaling: $machine; runners:$runners; $reps rep(s)" >&2
    # the cross-core round trip this machine gives two threads
    [ "$cpus" -ge 2 ] && point pingpong_ns ns_per_round_trip 2 "$bin/pingpong"
    rep=0
    while [ $rep -lt "$reps" ]; do
        rep=$((rep + 1))
        for r in $runners; do
            echo "scaling: rep $rep, $r runner(s)" >&2
            point ring1 ns_per_hop "$r" "$bin/ring" --runners="$r" --trips=$((w / 1000)) --runs=3
            point ring100 ns_per_hop "$r" "$bin/ring" --runners="$r" --tokens=100 --trips=$((w / 100000 + 1)) --runs=3
            [ "$r" = 1 ] && continue
            point pipe_fine speedup "$r" "$bin/pipeline" --stages=50 --d=$w --t_ms=1 --capacity=64 --runners="$r"
            point pipe_fine_auto speedup "$r" "$bin/pipeline" --stages=50 --d=$w --t_ms=1 --capacity=64 --runners="$r" --policy=auto
            point pipe_coarse speedup "$r" "$bin/pipeline" --stages=50 --d=1000 --t_ms=$pt --runners="$r"
            point rnd_a speedup "$r" "$bin/random" --preset=RND-A --d=$rd --runners="$r" --replay=0
            point rnd_b speedup "$r" "$bin/random" --preset=RND-B --d=$rd --runners="$r" --replay=0
            point rnd_b_auto speedup "$r" "$bin/random" --preset=RND-B --d=$rd --runners="$r" --replay=0 --policy=auto
            point rnd_a_coarse speedup "$r" "$bin/random" --preset=RND-A --d=100 --runners="$r" --replay=0
            point aes ratio "$r" "$bin/aes" --b=$ad --k=16 --passes=4 --runners="$r"
        done
    done
fi

# ------------------------------------------------------------- report
[ -f "$csv" ] || { echo "scaling: no $csv" >&2; exit 1; }
machine=$(cat "$out/scaling.machine" 2>/dev/null || echo unknown)
w=1000000 rd=50000 ad=26 pt=50
[ -f "$out/scaling.params" ] && eval "$(cat "$out/scaling.params")"
# medians: one row per bench and runner count
awk -F, 'NR > 1 { k = $1 "," $2; n[k]++; v[k, n[k]] = $3 }
    END { for (k in n) { m = n[k]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                if (v[k, j] < v[k, i]) { t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
            med = m % 2 ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
            print k "," med } }' "$csv" | sort -t, -k1,1 -k2,2n > "$out/scaling.med"
rs=$(cut -d, -f2 "$out/scaling.med" | sort -un | tr '\n' ' ')
{
    # sweeps joined by --append may repeat some points more than others:
    # say the fewest and the most invocations a point has, and every
    # round trip measured
    rtt=$(awk -F, '$1 == "pingpong_ns" { printf "%s%s", n++ ? ", " : "", $3 }' "$csv")
    inv=$(awk -F, 'NR > 1 && $1 != "pingpong_ns" { c[$1 "," $2]++ }
        END { for (k in c) { if (!lo || c[k] < lo) lo = c[k]; if (c[k] > hi) hi = c[k] }
              print lo == hi ? lo : lo " to " hi }' "$csv")
    echo "Scaling on $machine; medians of $inv invocation(s) per point; a cache line's round trip between CPUs 0 and 1: ${rtt:-?} ns (bench/pingpong)."
    echo
    printf '| benchmark | figure |'; for r in $rs; do printf ' %s |' "$r"; done; echo
    printf '| --- | --- |'; for r in $rs; do printf ' --- |'; done; echo
    for b in ring1:"ring, 1 000 processes, 1 token:ns per hop" \
             ring100:"ring, 1 000 processes, 100 tokens:ns per hop" \
             pipe_fine:"pipeline, no work (50 stages, d = $w, capacity 64):speedup" \
             pipe_fine_auto:"the same, kpn_place:speedup" \
             pipe_coarse:"pipeline, 50 stages, $pt ms of CPU each, d = 1000:speedup" \
             rnd_a:"RND-A, d = $rd:speedup" \
             rnd_b:"RND-B, d = $rd:speedup" \
             rnd_b_auto:"RND-B, d = $rd, kpn_place:speedup" \
             rnd_a_coarse:"RND-A, d = 100:speedup" \
             aes:"AES, 2^$ad bytes, 2^16-byte chunks, against sequential:ratio"; do
        key=${b%%:*} rest=${b#*:}
        printf '| %s | %s |' "${rest%%:*}" "${rest#*:}"
        for r in $rs; do
            printf ' %s |' "$(awk -F, -v k="$key" -v r="$r" '$1 == k && $2 == r { printf "%.3g", $3 }' "$out/scaling.med")"
        done
        echo
    done
} > "$out/scaling.md"
cat "$out/scaling.md"
plot=${plot:-$out/scaling.png}
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "med='$out/scaling.med'; png='$plot'; machine='$machine'" "$(dirname "$0")/scaling.gp" &&
        echo "scaling: $plot" >&2
else
    echo "scaling: gnuplot missing: no plot" >&2
fi
