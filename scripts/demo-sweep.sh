#!/bin/sh
# make demo, part 2: partitions, a sweep into SQLite, its tables and plots.
# Writes results/partition-amoebanet.txt, results/sweep.db, results/sweep-report.txt,
# results/sweep-runs.csv, results/sweep-grid.csv and results/plots/*.png|svg.
set -e
P=${1:-build/pipesim}
R=results
mkdir -p $R/plots $R/demo
M=amoebanet:L=18,D=256
T=models/topologies/p100-pcie-8.json
echo "== partition: AmoebaNet-D (18, 256) into 4 stages on 8 P100s (PCIe), M=32"
$P partition --model $M --topology $T -K 4 -M 32 --batch 128 --top 4 \
  --out $R/partition-amoebanet.txt
head -8 $R/partition-amoebanet.txt
echo
# batch 64: at 128 (except_last) neither K = 1 nor K = 2 at M = 1 fits a 16 GB P100,
# and the report's Table 2 baseline (K = 2, M = 1) was a grid of '-' (helper-127);
# report and plot select it, as a database from an earlier demo may hold batch 128 too
echo "== sweep: K 1,2,4,8 x M 1,2,4,8,16,32, batch 64, uniform and optimal partitions -> $R/sweep.db"
$P sweep --model $M --topology $T -K 1,2,4,8 -M 1,2,4,8,16,32 --batch 64 \
  --remat except_last --strategy uniform,optimal --db $R/sweep.db
echo
echo "== report: normalized like the GPipe paper's Table 2 (baseline K=2, M=1)"
$P report --db $R/sweep.db --model $M --strategy optimal --batch 64 --baseline 2,1 \
  --metric normalized,speedup,bubble,memory --csv $R/sweep-runs.csv \
  --grid-csv $R/sweep-grid.csv --out $R/sweep-report.txt
cat $R/sweep-report.txt
echo
echo "== plot: speedup, bubble, memory (sweep) and a timeline (trace) -> $R/plots/"
PART=$($P partition --model $M --topology $T -K 4 -M 8 --batch 128 --top 1 --format csv |
  awk -F'"' 'NR == 2 { print $4 }')
echo "timeline of the best 4-stage partition at M=8: $PART"
$P predict --model $M --topology $T -K 4 -M 8 --batch 128 --partition "$PART" \
  --trace $R/demo/amoebanet-k4.json >/dev/null
$P plot --db $R/sweep.db --model $M --strategy optimal --batch 64 \
  --trace $R/demo/amoebanet-k4.json \
  --out-dir $R/plots
ls $R/plots
