#!/bin/sh
# scripts/coverage.sh BUILD — line coverage per source folder from the .gcda
# files a --coverage build left after its tests (`make coverage`): one line a
# folder, then the total; the HTML report goes to BUILD/html.
set -eu
b=$1
command -v lcov >/dev/null || { echo "coverage: lcov is not installed (apt-get install lcov)"; exit 1; }
# The zero counts of every compiled file first (--initial), so a folder or
# file no test links still shows, at 0%, then what the tests ran.
lcov --quiet --capture --initial --directory "$b" --base-directory . --output-file "$b/base.info" \
  --rc lcov_branch_coverage=0 >/dev/null 2>"$b/lcov.err" || { cat "$b/lcov.err"; exit 1; }
lcov --quiet --capture --directory "$b" --base-directory . --output-file "$b/run.info" \
  --rc lcov_branch_coverage=0 >/dev/null 2>"$b/lcov.err" || { cat "$b/lcov.err"; exit 1; }
lcov --quiet --add-tracefile "$b/base.info" --add-tracefile "$b/run.info" \
  --output-file "$b/all.info" >/dev/null 2>"$b/lcov.err" || { cat "$b/lcov.err"; exit 1; }
lcov --quiet --extract "$b/all.info" "$(pwd)/*" --output-file "$b/src.info" >/dev/null 2>&1
lcov --quiet --remove "$b/src.info" "$(pwd)/tests/*" --output-file "$b/src.info" >/dev/null 2>&1
# Per folder from the tracefile's own counts (SF: file, LF: lines, LH: hit).
printf '%-12s %8s %8s %7s\n' folder lines hit cover
awk -v root="$(pwd)/" '
  /^SF:/ { f = substr($0, 4); if (index(f, root) == 1) f = substr(f, length(root) + 1)
           n = split(f, parts, "/"); d = (n > 1) ? parts[1] : "." }
  /^LF:/ { L[d] += substr($0, 4) }
  /^LH:/ { H[d] += substr($0, 4) }
  END { for (d in L) { printf "%-12s %8d %8d %6.1f%%\n", d, L[d], H[d],
                              L[d] ? 100 * H[d] / L[d] : 0; tl += L[d]; th += H[d] }
        printf "~total %d %d %.1f\n", tl, th, tl ? 100 * th / tl : 0 }' "$b/src.info" |
  LC_ALL=C sort | awk '$1 == "~total" { printf "%-12s %8d %8d %6.1f%%\n", "total", $2, $3, $4; next } 1'
genhtml --quiet "$b/src.info" --output-directory "$b/html" >/dev/null 2>&1 || true
echo "coverage: HTML report in $b/html/index.html"
