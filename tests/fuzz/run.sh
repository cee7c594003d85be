#!/bin/sh
# tests/fuzz/run.sh BUILD SECONDS [target...] — replays each target's
# regression inputs (tests/fuzz/regress/<target>/), then fuzzes it for
# SECONDS from its seed corpus. Fails on the first finding; prints
# executions and exec/s per target. FUZZ_RUNS=N: N runs from seed 1 instead,
# from the seed corpus alone (a fresh work folder each time: deterministic);
# FUZZ_MAX_LEN=B: inputs up to B bytes (not for fuzz_cli's argument lists).
# FUZZ_WORKERS=W (with FUZZ_RUNS): W processes on one shared corpus, seeds
# 1..W, FUZZ_RUNS/W runs each (a long campaign on W cores); the executions
# printed are their sum.
# FUZZ_TIMEOUT=S: a unit running S seconds is a finding (default 10).
# libFuzzer counts wall-clock time, so a long campaign that will be
# paused (SIGSTOP while a benchmark runs) needs S above the pause.
set -u
b=$(cd "$1" && pwd); secs=$2; shift 2
src=$(pwd)
targets=${*:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')}
mkdir -p "$b/artifacts"
fail=0
for t in $targets; do
  name=${t#fuzz_}
  seeds=$src/tests/fuzz/corpus/$name; reg=$src/tests/fuzz/regress/$name
  work=$b/corpus/$name; log=$b/$t.log
  # FUZZ_RUNS starts from the seed corpus alone: libFuzzer adds what it finds
  # to its first folder, so a kept one made the next run fuzz other inputs
  if [ -n "${FUZZ_RUNS:-}" ]; then work=$b/corpus-runs/$name; rm -rf "$work"; fi
  mkdir -p "$work" "$seeds"
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg" 2>/dev/null)" ]; then
    if ! "$b/$t" -close_fd_mask=3 "$reg"/* >"$log.regress" 2>&1; then
      echo "!! $t: a regression input fails again:"; tail -30 "$log.regress"; fail=1; continue
    fi
  fi
  maxlen=4096
  [ "$t" = fuzz_results ] && maxlen=65536 # SQLite files: 4 KiB pages
  # FUZZ_MAX_LEN: the campaign's larger inputs (1 MB reaches the size-
  # dependent code of the loaders: a 4 KB limit could not find a quadratic one)
  [ -n "${FUZZ_MAX_LEN:-}" ] && [ "$t" != fuzz_cli ] && maxlen=$FUZZ_MAX_LEN
  # FUZZ_RUNS (CI): a fixed number of runs from a fixed seed, so the same
  # tree always fuzzes the same inputs; else SECONDS of random search.
  workers=1; rm -f "$log".[0-9]*
  [ -n "${FUZZ_RUNS:-}" ] && [ "${FUZZ_WORKERS:-1}" -gt 1 ] && workers=$FUZZ_WORKERS
  pids=""
  for w in $(seq 1 "$workers"); do
    if [ -n "${FUZZ_RUNS:-}" ]; then limit="-runs=$((FUZZ_RUNS / workers)) -seed=$w"
    else limit="-max_total_time=$secs"; fi
    wlog=$log; [ "$workers" -gt 1 ] && wlog=$log.$w
    # shellcheck disable=SC2086
    "$b/$t" $limit -timeout=${FUZZ_TIMEOUT:-10} -rss_limit_mb=2048 \
      -max_len=$maxlen -close_fd_mask=3 -print_final_stats=1 \
      -artifact_prefix="$b/artifacts/$name-" "$work" "$seeds" >"$wlog" 2>&1 &
    pids="$pids $!"
  done
  # the first worker with a finding stops the others; a signal stops all
  trap 'kill $pids 2>/dev/null; exit 130' INT TERM HUP
  rc=0; live=$pids
  while [ -n "$live" ]; do
    still=""
    for p in $live; do
      if kill -0 "$p" 2>/dev/null; then still="$still $p"
      else wait "$p" || { r=$?; [ $rc -eq 0 ] && rc=$r; kill $pids 2>/dev/null; }; fi
    done
    live=$still
    [ -n "$live" ] && sleep 1
  done
  trap - INT TERM HUP
  [ "$workers" -gt 1 ] && cat "$log".[0-9]* >"$log"
  runs=0; speed=0
  for w in $(seq 1 "$workers"); do
    wlog=$log; [ "$workers" -gt 1 ] && wlog=$log.$w
    r=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$wlog" | tail -1 | grep -o '[0-9]*$')
    v=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$wlog" | tail -1 | grep -o '[0-9]*$')
    runs=$((runs + ${r:-0})); speed=$((speed + ${v:-0}))
  done
  if [ $rc -ne 0 ]; then
    echo "!! $t: finding (exit $rc), see $log and $b/artifacts/"; tail -40 "$log"; fail=1
  else
    echo "fuzz $t: ${runs:-?} executions (${speed:-?} exec/s), no finding"
  fi
done
exit $fail
