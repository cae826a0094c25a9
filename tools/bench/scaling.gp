# make scaling's plot: speedup against runners, from the medians that
# tools/bench/scaling.sh writes (bench,runners,median).
# gnuplot -e "med='build/bench/scaling.med'; png='build/bench/scaling.png'; machine='...'" tools/bench/scaling.gp
set datafile separator ','
set terminal pngcairo size 760,460 font 'sans,10' noenhanced
set key top left
set grid
sel(col, want, v) = strcol(col) eq want ? v : NaN
set output png
set title "Speedup over 1 runner against runners (".machine.")"
set xlabel 'runners'; set ylabel 'speedup over 1 runner (AES: over sequential)'
set xrange [1:*]; set yrange [0:*]
# The coarse pipeline's row is left out: its work is calibrated once per
# invocation, and a machine whose speed drifts within one shows as a
# speedup over the runner count (docs/benchmarks.md, "Up to 16 runners").
plot med using 2:(sel(1, 'rnd_a_coarse', $3)) with linespoints title 'RND-A, d = 100', \
     med using 2:(sel(1, 'aes', $3)) with linespoints title 'AES, 2^16-byte chunks', \
     med using 2:(sel(1, 'rnd_a', $3)) with linespoints title 'RND-A, fine (d = 50 000)', \
     med using 2:(sel(1, 'rnd_b', $3)) with linespoints title 'RND-B, fine', \
     med using 2:(sel(1, 'rnd_b_auto', $3)) with linespoints dt 2 title 'RND-B, fine, kpn_place', \
     med using 2:(sel(1, 'pipe_fine', $3)) with linespoints title 'pipeline, no work', \
     med using 2:(sel(1, 'pipe_fine_auto', $3)) with linespoints dt 2 title 'pipeline, no work, kpn_place', \
     x with lines lc rgb 'gray' dt 3 title 'ideal'
