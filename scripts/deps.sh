#!/bin/sh
# scripts/deps.sh [check|demo|test] — the Debian packages pipesim needs.
#   check: the build's libraries; says what is missing (with the apt-get line)
#          and fails, installs nothing (plain `make`, `make install`)
#   demo:  the build's libraries and gnuplot; installs the missing ones when
#          run as root (`make demo`, `make bench`)
#   test:  everything any test uses: Criterion, valgrind, clang with libFuzzer,
#          protoc, python3, lcov (`make test`, `make check`, `make asan`, ...)
# Runs before the build stage of the Makefile, so pkg-config sees what it installed.
mode=${1:-check}
BUILD_PKGS="pkg-config libgsl-dev libsqlite3-dev libjansson-dev libopenblas-dev
            openmpi-bin libopenmpi-dev"
DEMO_PKGS="gnuplot-nox"
TEST_PKGS="libcriterion-dev valgrind clang libclang-rt-14-dev protobuf-compiler python3 lcov"
case $mode in
  check) want=$BUILD_PKGS ;;
  demo) want="$BUILD_PKGS $DEMO_PKGS" ;;
  test) want="$BUILD_PKGS $DEMO_PKGS $TEST_PKGS" ;;
  *) echo "usage: scripts/deps.sh [check|demo|test]" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$mode" != check ] && [ "$(id -u)" = 0 ]; then
  echo "deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  # A bare system has no package lists yet: update once, then install.
  apt-get update -q >/dev/null || { echo "deps: apt-get update failed" >&2; exit 1; }
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing || exit 1
  exit 0
fi
echo "deps: missing Debian packages:$missing"
if [ "$mode" = check ]; then
  echo "  run \`make demo\` or \`make test\` as root (they install them), or:"
else
  echo "  as root:"
fi
echo "  apt-get update && apt-get install -y --no-install-recommends$missing"
exit 1
