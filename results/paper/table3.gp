# Table 3: predicted normalized throughput on 8 P100s over PCIe (M = 32).
#   gnuplot table3.gp > table3.png
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 640,460 font ",10"
} else {
    set terminal png size 640,460 font ",10"
}
set datafile missing "?"
set logscale x 2
set xtics (2, 4, 8)
set xrange [1.8:8.8]
set yrange [0:*]
set xlabel "K (partitions)"
set ylabel "throughput / throughput at K=2"
set key top left
set title "P100 x 8, PCIe host bus, M=32"

plot 'table3.dat' using 1:2 with linespoints lw 2 lc 1 pt 7 title "AmoebaNet-D (18,128)", \
     'table3.dat' using 1:4 with linespoints lw 2 lc 2 pt 7 title "Transformer-24", \
     'table3.dat' using 1:3 with linespoints dt 2 lc 1 pt 6 title "AmoebaNet paper", \
     'table3.dat' using 1:5 with linespoints dt 2 lc 2 pt 6 title "Transformer paper"
