#!/bin/sh
# scripts/valgrind.sh [build/pipesim] — the end-to-end commands, good and bad
# input, under valgrind memcheck. Each must exit with its expected status and
# valgrind must report no error and no definite or indirect leak
# (--error-exitcode 99). About a minute on two cores; `make valgrind`, and
# part of `make test`.
set -u
bin=$(cd "$(dirname "${1:-build/pipesim}")" && pwd)/$(basename "${1:-build/pipesim}")
src=$(pwd)
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)"; exit 1; }
work=$(mktemp -d /tmp/pipesim-vg-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$src/models/profiles/transformer-small.csv" "$work/tr.csv"
cp "$src/models/topologies/pcie-8gpu.json" "$work/pcie.json"
cp "$src/models/topologies/v100-nvlink-8.json" "$work/nvlink.json"
cp "$src/tests/fixtures/torch/tinyformer.json" "$src/tests/fixtures/torch/tinyformer.layers.csv" \
  "$work/"
cd "$work" || exit 1
printf 'name,kind,fwd_ms,bwd_ms,at_batch,params,out_bytes,stash_bytes\n' > ms.csv
printf 'in,input,0,0,8,0,256,0\na,dense,1.5,,8,100,256,512\nb,dense,2,4.5,8,100,256,512\n' >> ms.csv
printf 'name,fwd_flops,params,out_bytes,stash_bytes\na,1e6,-1,64,128\n' > neg.csv
printf 'name,fwd_flops,params,out_bytes,stash_bytes\na,1e6,1,64\n' > short.csv
printf '{"devices":[{"name":"d","count":2,\n"flops":1e12,"memory":"big"}]}' > badtype.json
printf '{"devices":[{"name":"d","count":2,"flops":1e12,"memory":1e9}],"colour":1}' > unk.json
printf '{"devices":[{"name":"d",' > trunc.json
mkdir ro && chmod 555 ro

fail=0 n=0
# expect STATUS ARGS...: runs pipesim ARGS under valgrind
expect() {
  want=$1; shift
  n=$((n + 1))
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --log-file=vg.log "$bin" "$@" >out.txt 2>err.txt
  st=$?
  if [ "$st" -ne "$want" ] || [ -s vg.log ]; then
    echo "!! valgrind: 'pipesim $*' exited $st, expected $want"
    sed 's/^/   /' err.txt vg.log | head -40
    fail=1
  fi
  rm -f vg.log
}

expect 0 predict --model tr.csv --topology pcie.json -K 4 -M 8 --batch 32 \
  --trace t.json --trace-csv t.csv --format json --out o.json
expect 0 predict --model tr.csv --topology nvlink.json -K 8 -M 8 --batch 64 --remat never --format csv
expect 0 predict --model ms.csv --topology pcie.json -K 3 -M 4 --batch 8 --remat always --partition 1,1,1
expect 0 predict --model mlp:layers=16,width=64,norm=4 --topology pcie.json -K 2 -M 16 --batch 64
expect 0 predict --model transformer:L=2,d_model=8,ff=16,heads=2,seq=4,vocab=16 \
  --topology pcie.json -K 2 -M 2 --batch 2
expect 0 predict --model amoebanet:L=3,D=8 --topology pcie.json -K 2 -M 2 --batch 2 --sensitivity
expect 0 predict --model vgg:depth=11,image=32 --topology "$src/models/topologies/titan-x-pascal-1.json" \
  -K 1 -M 2 --batch 4
expect 0 gen model mlp:layers=4,width=8 -o g.csv
expect 0 gen chain -n 4 -o c.json
expect 0 predict --model g.csv --topology c.json -K 4 -M 4 --batch 4
expect 0 gen-paper --format csv
expect 0 reproduce torchgpipe --out-dir tg --topologies "$src/models/topologies" \
  --data "$src/studies/torchgpipe" --quiet
cp -r "$src/studies/torchgpipe" tgbad
sed -i 's/^n2m4,2,4,256,9 15/n2m4,2,4,3,9 15/' tgbad/reference/speed.csv # batch < m
expect 3 reproduce torchgpipe --out-dir tgbad-out --topologies "$src/models/topologies" --data tgbad
expect 2 reproduce nosuch
expect 0 import-torch tinyformer.json -o imp.csv
expect 0 predict --model imp.csv --topology pcie.json -K 2 -M 2 --batch 16 --trace imp.json
expect 0 compare imp.json imp.json
expect 0 sweep --model mlp:layers=8,width=16 --topology pcie.json -K 1,2,4 -M 1,4 --batch 8 \
  --strategy uniform,optimal --jobs 2 --quiet --db s.db
expect 0 report --db s.db --csv r.csv
expect 8 report --db tinyformer.layers.csv
expect 3 compare imp.json trunc.json
expect 0 help errors
expect 0 predict --help
expect 3 predict --model short.csv --topology pcie.json -K 1 -M 1 --batch 1
expect 4 predict --model neg.csv --topology pcie.json -K 1 -M 1 --batch 1
expect 5 predict --model missing.csv --topology pcie.json -K 1 -M 1 --batch 1
expect 3 predict --model tr.csv --topology badtype.json -K 2 -M 2 --batch 2
expect 3 predict --model tr.csv --topology unk.json -K 2 -M 2 --batch 2
expect 3 predict --model tr.csv --topology trunc.json -K 2 -M 2 --batch 2
expect 7 predict --model tr.csv --topology pcie.json -K 9 -M 2 --batch 2
expect 2 predict --model tr.csv --topology pcie.json -K 2 -M 3 --batch 4
expect 2 predict --model tr.csv --topology pcie.json -K 2 -M 2 --batch 4 --frobnicate
expect 2 predict --model mlp:layers=4 --topology pcie.json -K 1 -M 1 --batch 1
expect 2 frobnicate
if [ "$(id -u)" != 0 ]; then # root writes through chmod
  expect 5 predict --model tr.csv --topology pcie.json -K 2 -M 2 --batch 2 --out ro/o.txt
fi
expect 5 predict --model tr.csv --topology pcie.json -K 2 -M 2 --batch 2 --trace nodir/t.json

chmod 755 ro
if [ $fail -eq 0 ]; then
  echo "valgrind: $n commands, no error, no leak"
fi
exit $fail
