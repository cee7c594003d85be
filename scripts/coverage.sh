#!/bin/sh
# scripts/coverage.sh BUILD — line coverage per source folder from the .gcda
# files a --coverage build left after its tests (`make coverage`): one line a
# folder, then the total; the HTML report goes to BUILD/html.
set -eu
b=$1
command -v lcov >/dev/null || { echo "coverage: lcov is not installed (apt-get install lcov)"; exit 1; }
lcov --quiet --capture --directory "$b" --base-directory . --output-file "$b/all.info" \
  --rc lcov_branch_coverage=0 >/dev/null 2>"$b/lcov.err" || { cat "$b/lcov.err"; exit 1; }
lcov --quiet --extract "$b/all.info" "$(pwd)/*" --output-file "$b/src.info" >/dev/null 2>&1
lcov --quiet --remove "$b/src.info" "$(pwd)/tests/*" --output-file "$b/src.info" >/dev/null 2>&1
printf '%-12s %8s %8s %7s\n' folder lines hit cover
lcov --list-full-path --list "$b/src.info" 2>/dev/null | awk -F'|' -v root="$(pwd)/" '
  /\|/ && $1 !~ /Filename|====|Total/ {
    f = $1; gsub(/^[ \t]+|[ \t]+$/, "", f); sub(root, "", f)
    n = split(f, parts, "/"); d = (n > 1) ? parts[1] : "."
    split($2, c, " "); pct = c[1]; lines = c[2] + 0; sub(/%/, "", pct)
    L[d] += lines; H[d] += lines * pct / 100 }
  END { for (d in L) { printf "%-12s %8d %8d %6.1f%%\n", d, L[d], H[d], 100 * H[d] / L[d];
                       tl += L[d]; th += H[d] }
        printf "%-12s %8d %8d %6.1f%%\n", "total", tl, th, 100 * th / tl }' | sort
genhtml --quiet "$b/src.info" --output-directory "$b/html" >/dev/null 2>&1 || true
echo "coverage: HTML report in $b/html/index.html"
