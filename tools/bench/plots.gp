# The papers' figures from make bench's CSV files: gnuplot -e "dir='build/bench';
# outdir='docs/bench'; machine='...'" tools/bench/plots.gp
set datafile separator ','
# a row sel() leaves out (another port, preset or runner count) is a gap
# to step over, not the end of a line: aes.csv alternates 1 and 2 runners
set datafile missing NaN
set terminal pngcairo size 760,460 font 'sans,10' noenhanced
set key top left
set grid
have_file(f) = system('test -f '.f.' && echo 1') eq "1"
sel(col, want, v) = strcol(col) eq want ? v : NaN

f = dir.'/ring.csv'
if (have_file(f)) {
    set output outdir.'/ring.png'
    set title "Ring: one token round N processes (".machine.")"
    # both axes logarithmic: the ports differ tenfold or more (ucontext's
    # system call costs more on some hosts than others), and the step
    # where a ring's lines leave the core's own caches must show on both
    set logscale xy; set xlabel 'processes in the ring'; set ylabel 'ns per hop (send, switch, receive)'
    set yrange [3:*]
    g = dir.'/coro_ring.csv'
    if (have_file(g)) {
        plot f using 2:(sel(1, 'amd64', $3)) skip 1 with linespoints title 'amd64 port (assembly switch)', \
             f using 2:(sel(1, 'posix', $3)) skip 1 with linespoints title 'posix port (ucontext)', \
             g using 1:2 skip 1 with linespoints dt 2 title 'bare coroutines on the amd64 switch (bench/coro_ring)'
    } else {
        plot f using 2:(sel(1, 'amd64', $3)) skip 1 with linespoints title 'amd64 port (assembly switch)', \
             f using 2:(sel(1, 'posix', $3)) skip 1 with linespoints title 'posix port (ucontext)'
    }
    unset logscale xy
    set yrange [*:*]
}

f = dir.'/pipeline.csv'
if (have_file(f)) {
    set output outdir.'/pipeline.png'
    set title "Pipeline: 50 stages, 2.5 CPU-s, 2 runners against 1 (".machine.")"
    set logscale x; set xlabel 'work division d (messages)'; set ylabel 'speedup over 1 runner'
    set yrange [0:2.2]
    plot f using 1:4 skip 1 with linespoints title 'speedup, 2 runners', 2 with lines dt 2 title 'ideal'
    unset logscale x
}

f = dir.'/aes.csv'
if (have_file(f)) {
    set output outdir.'/aes.png'
    set title "AES-128-CTR, 64 MiB, 4 passes: scatter/gather over n workers (".machine.")"
    set logscale x 2; set xlabel 'workers n'; set ylabel 'MB/s'
    set yrange [0:*]
    plot f using 1:(sel(2, '1', $3)) skip 1 with linespoints title '1 runner', \
         f using 1:(sel(2, '2', $3)) skip 1 with linespoints title '2 runners', \
         f using 1:(sel(2, '1', $4)) skip 1 with lines dt 2 title 'sequential, no kpn'
    unset logscale x
}

f = dir.'/random.csv'
if (have_file(f)) {
    set output outdir.'/random.png'
    set title "Random networks: 2 runners against 1 (".machine.")"
    set logscale x; set xlabel 'work division d'; set ylabel 'speedup over 1 runner'
    set y2label 'deadlock detections per second'; set y2tics; set ytics nomirror
    set logscale y2
    set yrange [0:2.2]; set y2range [*:*]
    plot f using 2:(sel(1, 'RND-A', $3)) skip 1 with linespoints title 'RND-A speedup', \
         f using 2:(sel(1, 'RND-B', $3)) skip 1 with linespoints title 'RND-B speedup', \
         f using 2:(sel(1, 'RND-B', $4)) skip 1 axes x1y2 with lines dt 2 title 'RND-B detections/s'
}
