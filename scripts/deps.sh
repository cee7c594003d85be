#!/bin/sh
# Checks the Debian packages pipesim builds against; installs the missing
# ones when run as root, else prints the exact apt-get line and fails.
PKGS="libgsl-dev libsqlite3-dev libjansson-dev libcriterion-dev libopenblas-dev gnuplot-nox pkg-config
      openmpi-bin libopenmpi-dev valgrind clang libclang-rt-14-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q --no-install-recommends $missing || exit 1
else
  echo "deps: missing packages; run as root:"
  echo "  apt-get update && apt-get install -y$missing"
  exit 1
fi
