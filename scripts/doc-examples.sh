#!/bin/sh
# scripts/doc-examples.sh [--update] [--bin PIPESIM] [FILE.md ...]
#
# The example outputs in the documentation, regenerated and compared, so none
# drifts from what the program prints. An example is a fenced block whose info
# string is `console`:
#
#     ```console
#     $ pipesim predict --model mlp:layers=8,width=256 \
#         --topology models/topologies/chain-8-ideal.json -K 2 -M 4 --batch 32
#     ...the output, stdout and stderr together...
#     ```
#
# A line starting with "$ " is a command (a line ending in a backslash goes
# on to the next); the lines after it up to the next command are its output.
# Each block runs in a fresh scratch directory holding a symlink to every
# top-level entry of the repository, so paths read as from the repository
# root and files a command writes stay out of the tree; the commands of one
# block share that directory (a sweep, then a report on its database).
# `pipesim` is PIPESIM (default build/pipesim); LC_ALL=C, TZ=UTC, no
# PIPESIM_* variables, stdin /dev/null, 60 s per command (timeout(1)).
#
# A command must exit 0: an example that shows an error says so itself
# (`$ pipesim predict ... || echo "exit status $?"`), so an option renamed
# later is a failure, not a new error message pasted into the docs. Output
# that depends on the machine (timings: validate, calibrate, --version) is not
# compared: put it in another block (```text) with an
# `<!-- illustrative: why -->` line right above the fence. A line starting
# with "$ " in any other fenced block without that marker is an error, so an
# example cannot escape the check by its fence alone.
#
# Default files: README.md, docs/*.md, docs/*/*.md and the folders'
# README.md. Without --update: prints a unified diff (documented -> actual)
# for every block that differs and exits 1. With --update: rewrites those
# blocks in place (each file written to a temporary beside it and renamed;
# only files that change are touched) and exits 0, or 1 if a command failed
# (its block is left as it was). Exit 2: bad usage or a malformed block.
set -u

usage() {
  echo "usage: sh scripts/doc-examples.sh [--update] [--bin PIPESIM] [FILE.md ...]" >&2
  exit 2
}

update=0
bin=build/pipesim
while [ $# -gt 0 ]; do
  case $1 in
    --update) update=1; shift ;;
    --bin) [ $# -ge 2 ] || usage; bin=$2; shift 2 ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
if [ ! -x "$bin" ]; then
  echo "doc-examples: $bin: not an executable (run make first, or pass --bin)" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  cd "$root" || exit 2
  set --
  for f in README.md docs/*.md docs/*/*.md */README.md; do
    [ -f "$f" ] && set -- "$@" "$f"
  done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/doc-examples.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir "$work/bin"
ln -s "$bin" "$work/bin/pipesim"

# Splits one markdown file into blocks: for block i, $work/<n>/<i>.old (the
# block's lines between the fences), <i>.c<j> (command j, as written) and
# the line "i fence-line command-count" in $work/<n>/list. Malformed blocks
# and unmarked "$ " lines elsewhere are reported as FILE:LINE: ... on stdout.
split_md() {
  awk -v dir="$2" -v file="$1" '
    function flush() {
      if (cmd != "") { printf "%s", cmd > (dir "/" nb ".c" nc); close(dir "/" nb ".c" nc) }
      cmd = ""
    }
    BEGIN { infence = 0; nb = 0; marked = 0 }
    {
      line = $0
      if (!infence && line ~ /^```/) {
        match(line, /^`+/); fence = substr(line, 1, RLENGTH)
        info = substr(line, RLENGTH + 1); sub(/^[ \t]*/, "", info); sub(/[ \t].*$/, "", info)
        infence = 1; fence_line = NR; kind = (info == "console") ? "c" : "o"
        block_marked = marked
        if (kind == "c") { nb++; nc = 0; cmd = ""; cont = 0 }
        next
      }
      if (infence && line ~ ("^" fence "[ \t]*$")) {
        if (kind == "c") {
          flush()
          if (nc == 0) { printf "%s:%d: console block without a \"$ \" command\n", file, fence_line; bad = 1 }
          close(dir "/" nb ".old")
          print nb, fence_line, nc > (dir "/list")
        }
        infence = 0; marked = 0
        next
      }
      if (!infence) {
        if (line ~ /^<!-- *illustrative/) marked = 1
        else if (line !~ /^[ \t]*$/) marked = 0
        next
      }
      if (kind == "o") {
        if (line ~ /^\$ / && !block_marked) {
          printf "%s:%d: a \"$ \" example outside a ```console block: make it ```console, or mark it with <!-- illustrative: why --> above the fence\n", file, NR
          bad = 1; block_marked = 1
        }
        next
      }
      print line > (dir "/" nb ".old")
      if (cont) { cmd = cmd "\n" line; cont = (line ~ /\\$/); next }
      if (line ~ /^\$ /) {
        flush(); nc++; cmd = line; cont = (line ~ /\\$/); next
      }
      if (nc == 0) { printf "%s:%d: console block must start with a \"$ \" command\n", file, NR; bad = 1 }
    }
    END {
      if (infence) { printf "%s:%d: unclosed fence\n", file, fence_line; bad = 1 }
      exit bad ? 3 : 0
    }' "$1"
}

# A hung example fails instead of hanging the check (examples take well under 2 s).
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 60"

# Runs command file $1 in directory $2; its output (stdout and stderr) into
# $3, a final newline added when missing. Returns the command's status.
run_cmd() {
  text=$(sed '1s/^\$ //' "$1")
  ( cd "$2" && env -i HOME="$2" PATH="$work/bin:/usr/local/bin:/usr/bin:/bin" \
      LC_ALL=C TZ=UTC TMPDIR="$2" $limit sh -c "$text" </dev/null >"$3" 2>&1 )
  st=$?
  if [ -s "$3" ] && [ "$(tail -c 1 "$3" | od -An -c | tr -d ' ')" != '\n' ]; then
    echo >>"$3"
  fi
  return $st
}

total=0; differ=0; failed=0; malformed=0; n=0
for md in "$@"; do
  if [ ! -f "$md" ]; then echo "doc-examples: $md: no such file" >&2; exit 2; fi
  n=$((n + 1)); d="$work/$n"; mkdir "$d"; : >"$d/list"
  if ! split_md "$md" "$d"; then malformed=1; continue; fi
  changed=0
  while read -r i fence nc; do
    total=$((total + 1))
    scratch="$d/run$i"; mkdir "$scratch"
    for e in "$root"/* "$root"/.[!.]*; do
      [ -e "$e" ] || continue
      case ${e##*/} in .git) continue ;; esac
      ln -s "$e" "$scratch/${e##*/}"
    done
    : >"$d/$i.new"; ok=1; j=1
    while [ "$j" -le "$nc" ]; do
      cat "$d/$i.c$j" >>"$d/$i.new"; echo >>"$d/$i.new"
      if ! run_cmd "$d/$i.c$j" "$scratch" "$d/$i.out"; then
        echo "$md:$fence: example command failed (exit $st): $(head -1 "$d/$i.c$j")"
        sed 's/^/    /' "$d/$i.out" | head -20
        echo "    (an example that shows an error must say so: append || echo \"exit status \$?\")"
        ok=0; failed=$((failed + 1)); break
      fi
      if grep -q '^\$ ' "$d/$i.out"; then
        echo "$md:$fence: the output of $(head -1 "$d/$i.c$j") has a line starting with \"\$ \", which would read as a command"
        ok=0; failed=$((failed + 1)); break
      fi
      cat "$d/$i.out" >>"$d/$i.new"
      j=$((j + 1))
    done
    [ $ok -eq 1 ] || continue
    if ! cmp -s "$d/$i.old" "$d/$i.new"; then
      differ=$((differ + 1)); changed=1
      echo "$i" >>"$d/changed"
      if [ $update -eq 0 ]; then
        echo "$md:$fence: the example's output differs from what \`$(head -1 "$d/$i.c1" | cut -c3- | sed 's/ *\\$/ .../')\` prints now:"
        diff -u --label "$md:$fence (documented)" --label "actual" "$d/$i.old" "$d/$i.new"
      else
        echo "$md:$fence: updated"
      fi
    fi
  done <"$d/list"
  if [ $update -eq 1 ] && [ $changed -eq 1 ]; then
    tmp=$(mktemp "$(dirname "$md")/.doc-examples.XXXXXX") || exit 2
    awk -v dir="$d" '
      BEGIN { while ((getline c < (dir "/changed")) > 0) ch[c] = 1; nb = 0; infence = 0; skip = 0 }
      {
        if (!infence && $0 ~ /^```/) {
          match($0, /^`+/); fence = substr($0, 1, RLENGTH)
          info = substr($0, RLENGTH + 1); sub(/^[ \t]*/, "", info); sub(/[ \t].*$/, "", info)
          infence = 1; print
          if (info == "console") {
            nb++
            if (nb in ch) { while ((getline l < (dir "/" nb ".new")) > 0) print l; skip = 1 }
          }
          next
        }
        if (infence && $0 ~ ("^" fence "[ \t]*$")) { infence = 0; skip = 0; print; next }
        if (!skip) print
      }' "$md" >"$tmp" && chmod --reference="$md" "$tmp" 2>/dev/null
    if [ -s "$tmp" ]; then mv "$tmp" "$md"; else rm -f "$tmp"; echo "doc-examples: could not rewrite $md" >&2; exit 2; fi
  fi
done

[ $malformed -eq 0 ] || exit 2
if [ $update -eq 1 ]; then
  echo "doc-examples: $total examples, $differ updated, $failed failed"
  [ $failed -eq 0 ] || exit 1
  exit 0
fi
if [ $differ -gt 0 ] || [ $failed -gt 0 ]; then
  echo "doc-examples: $differ of $total examples differ, $failed failed."
  [ $differ -eq 0 ] || echo "If the new output is right, update the documents with: sh scripts/doc-examples.sh --update (or make doc-examples-update)"
  exit 1
fi
echo "doc-examples: $total examples match"
