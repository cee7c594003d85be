# The gnuplot script table2.gp, written by `pipesim paper` from --data/text/
# (studies/README.md: the format). Nothing above the first section is output.
@@ script
# Table 2: predicted (solid) vs the paper (dashed). Run in this folder:
#   gnuplot table2.gp > table2.png
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1100,460 font ",10"
} else {
    set terminal png size 1100,460 font ",10"
}
set datafile missing "?"
set multiplot layout 1,2
set logscale x 2
set xtics (2, 4, 8)
set xrange [1.8:8.8]
set yrange [0:*]
set xlabel "K (partitions)"
set ylabel "throughput / throughput at K=2, M=1"
set key top left
set title "AmoebaNet-D (18,256), TPUv2"
plot for [j=0:2] 'table2.dat' using 1:(column(2+2*j)) with linespoints lw 2 lc j+1 pt 7 title sprintf("M=%s predicted", word("1 4 32", j+1)), \
     for [j=0:2] 'table2.dat' using 1:(column(3+2*j)) with linespoints dt 2 lc j+1 pt 6 title sprintf("M=%s paper", word("1 4 32", j+1))
set title "Transformer-48, TPUv3"
plot for [j=0:2] 'table2.dat' using 1:(column(8+2*j)) with linespoints lw 2 lc j+1 pt 7 title sprintf("M=%s predicted", word("1 4 32", j+1)), \
     for [j=0:2] 'table2.dat' using 1:(column(9+2*j)) with linespoints dt 2 lc j+1 pt 6 title sprintf("M=%s paper", word("1 4 32", j+1))
unset multiplot
