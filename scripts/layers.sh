#!/bin/sh
# scripts/layers.sh [ROOT] — the layering of the source folders, checked on
# the #include lines: a file may include headers of its own folder and of
# the folders listed after it below, nothing else. Prints one line per
# include that breaks it ("file:line: folder -> folder (header)") and exits 1;
# exits 0 and prints a summary when none does. Run by `make check`; the
# folders' README.md files say the same in words.
set -u
root=${1:-.}
# folder: the folders it may include (lower layers only, no cycles)
allowed='
base:
models: base
sched: models base
traces: sched models base
sim: traces sched models base
runtime: traces sched models base
analysis: sim traces sched models base
measure: analysis runtime sim traces sched models base
studies: analysis sim traces sched models base
cli: studies measure analysis runtime sim traces sched models base
'
folders=$(printf '%s\n' "$allowed" | sed -n 's/^\([a-z]*\):.*/\1/p')
bad=0; files=0
for d in $folders; do
  [ -d "$root/$d" ] || continue
  ok=" $d $(printf '%s\n' "$allowed" | sed -n "s/^$d://p") "
  for f in "$root/$d"/*.c "$root/$d"/*.h; do
    [ -f "$f" ] || continue
    files=$((files + 1))
    out=$(awk -v ok="$ok" -v d="$d" -v name="${f#"$root"/}" '
      /^[ \t]*#[ \t]*include[ \t]*"/ {
        h = $0; sub(/^[^"]*"/, "", h); sub(/".*/, "", h)
        n = split(h, part, "/")
        if (n < 2) next                      # a header beside the file
        if (index(ok, " " part[1] " ") == 0)
          printf "%s:%d: %s -> %s (%s)\n", name, FNR, d, part[1], h
      }' "$f")
    if [ -n "$out" ]; then printf '%s\n' "$out"; bad=1; fi
  done
done
if [ $bad -ne 0 ]; then
  echo "layers: includes that break the layering above (scripts/layers.sh lists the allowed edges)" >&2
  exit 1
fi
echo "layers: $files files, every include within the allowed edges"
