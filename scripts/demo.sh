#!/bin/sh
# make demo: the main job on the bundled defaults. Writes into results/.
set -e
P=${1:-build/pipesim}
R=results
mkdir -p $R/demo
echo "== predict: 16-layer MLP, 2 stages on this 2-core machine (cpu-2core), M=8"
$P predict --model models/profiles/mlp-uniform.csv --topology models/topologies/cpu-2core.json \
  -K 2 -M 8 --batch 256 --trace $R/demo/mlp-cpu.json
echo
echo "== predict: small Transformer, 4 stages on the idealized 8-device chain, M=16"
$P predict --model models/profiles/transformer-small.csv \
  --topology models/topologies/chain-8-ideal.json -K 4 -M 16 --batch 64 \
  --trace $R/demo/transformer-chain.json
echo
echo "== predict: small Transformer, 8 GPUs sharing one PCIe bus, M=32"
$P predict --model models/profiles/transformer-small.csv \
  --topology models/topologies/pcie-8gpu.json -K 8 -M 32 --batch 128 \
  --trace $R/demo/transformer-pcie.json
echo

echo
echo "== compare-schedules: the same model under every schedule, 8 stages on a TPUv2-8's ring"
echo "   of 8 cores (K = 8: the two-chunk schedules' last stage talks to core0 over the wrap)"
$P compare-schedules --model models/profiles/mlp-uniform.csv \
  --topology models/topologies/tpu-v2.json -K 8 -M 16 --batch 256
echo
echo "== validate --check (short): calibrate on this machine, then predict, run and compare"
echo "   K=1,2 x M=1,4,16 (results/validation.db, results/validation.md and its plots)."
echo "   A short check: 6 points, 2 rounds. Other jobs' memory traffic on a shared machine can"
echo "   push a point past a target (the accuracy figures of docs/validation.md come from"
echo "   make bench: every schedule, 222 points, 4 rounds, a quiet machine)"
$P validate --check --net mlp:layers=8,width=512 --quick --realtime \
  --db $R/validation.db --report $R/validation.md
echo
echo "== validate: one K=2, M=4 run for real on this machine's cores, with its trace"
$P validate --net mlp:layers=8,width=512 -K 2 -M 4 --batch 256 --steps 3 --realtime \
  --trace $R/demo/validate-measured.json
# predicted with the profile and link validate --check just calibrated for K=2
# (at the grid's micro-batch sizes: M = 4 is one of its points)
C=$R/calib/mlp-layers8-width512-K2
$P predict --model $C.csv --topology $C.json \
  -K 2 -M 4 --batch 256 --trace $R/demo/validate-simulated.json >/dev/null
echo
echo "== compare: simulated (calibrated above) vs that one measured step, op by op"
echo "   (one step, not the accuracy protocol's rounds: a few percent either way is noise;"
echo "   if validate noted that the machine was busy, the step includes waiting for a CPU)"
$P compare $R/demo/validate-simulated.json $R/demo/validate-measured.json
echo; echo "Traces in $R/demo/*.json: open them at https://ui.perfetto.dev (Open trace file)."
echo; echo "== paper: the GPipe paper's Tables 1-3 and partitions -> results/paper/*.md"
$P reproduce gpipe --out-dir results/paper
echo; echo "== reproduce torchgpipe: the AmoebaNet-D (18, 256) speed benchmark on 8 x P40 -> results/torchgpipe/"
$P reproduce torchgpipe --out-dir results/torchgpipe
echo; sh scripts/demo-sweep.sh $P   # partitions, sweep, report, plots (scripts/demo-sweep.sh)
