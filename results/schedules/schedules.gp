# schedules.gp, written by pipesim plot; in this folder: gnuplot schedules.gp > schedules.png
set terminal pngcairo size 1400,1040 font 'Sans,10'
set ytics ("gpipe: dev 0" 0, " dev 1" -1, " dev 2" -2, " dev 3" -3, "1f1b: dev 0" -5, " dev 1" -6, " dev 2" -7, " dev 3" -8, "eager-1f1b: dev 0" -10, " dev 1" -11, " dev 2" -12, " dev 3" -13, "interleaved:2: dev 0" -15, " dev 1" -16, " dev 2" -17, " dev 3" -18, "breadth-first:2: dev 0" -20, " dev 1" -21, " dev 2" -22, " dev 3" -23, "zb-h1: dev 0" -25, " dev 1" -26, " dev 2" -27, " dev 3" -28, "zb-h2: dev 0" -30, " dev 1" -31, " dev 2" -32, " dev 3" -33, "zb-v: dev 0" -35, " dev 1" -36, " dev 2" -37, " dev 3" -38, "zb-auto:4: dev 0" -40, " dev 1" -41, " dev 2" -42, " dev 3" -43, "dualpipe-v: dev 0" -45, " dev 1" -46, " dev 2" -47, " dev 3" -48)
set title "K=4 devices, M=8 micro-batches; per device T_F = 1, T_B = 2 (B = W = 1 when split), no communication" noenhanced
set xlabel "time, in T_F (one device's whole forward)" noenhanced
set xrange [0:33.66]
set yrange [-49:0.7]
set grid x
set key outside top center horizontal
set style fill solid 1.0 border lc rgb "#ffffff"
plot 'schedules.dat' using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, \
  '' using 1:2:(($7 != 0) ? sprintf("%d", $6) : "") with labels font ",7" tc rgb "#ffffff" notitle, \
  keyentry with boxes fc rgb "#4477aa" title "F forward", \
  keyentry with boxes fc rgb "#ee6677" title "B backward", \
  keyentry with boxes fc rgb "#228833" title "W weight grad", \
  keyentry with boxes fc rgb "#98b4d0" title "lighter: a device's later chunks"

set output
