#!/usr/bin/env bash
# Installs asyncsolve from BUILD_DIR into a scratch prefix, then builds and
# runs a consumer with find_package and, separately, with pkg-config.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR MPIEXEC...
set -euo pipefail
build=$1 src=$2; shift 2
prefix=$(mktemp -d); work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
test -x "$prefix/bin/asyncsolve"
test -f "$prefix/include/asyncsolve/version.hpp"

cmake -S "$src/tests/install/consumer" -B "$work/cmake" -G Ninja \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/cmake" > /dev/null
"$@" -n 2 "$work/cmake/consumer" | grep -q ": ok"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}"
# shellcheck disable=SC2046
mpicxx -std=c++20 -O1 "$src/tests/install/consumer/main.cpp" -o "$work/pc_consumer" \
       $(pkg-config --cflags --libs --static asyncsolve)
"$@" -n 1 "$work/pc_consumer" | grep -q ": ok"

# The Fortran module, where the build has it: a Fortran consumer through
# find_package, and one compiled with mpifort and pkg-config (the library is
# C++, so the link adds the C++ runtime).
fortran=""
if [ -f "$build/fortran/modules/asyncsolve_channel.mod" ]; then
  test -f "$prefix/include/asyncsolve/fortran/asyncsolve_channel.mod"
  pkg-config --cflags-only-I asyncsolve | grep -q "include/asyncsolve/fortran"
  cmake -S "$src/tests/install/consumer_fortran" -B "$work/fcmake" -G Ninja \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$work/fcmake" > /dev/null
  "$@" -n 2 "$work/fcmake/consumer_fortran" | grep -q "asyncsolve fortran: ok"
  # shellcheck disable=SC2046
  mpifort -c "$src/tests/install/consumer_fortran/main.f90" -o "$work/consumer_fortran.o" \
          -J "$work" $(pkg-config --cflags-only-I asyncsolve)
  # shellcheck disable=SC2046
  mpifort "$work/consumer_fortran.o" -o "$work/pc_consumer_fortran" \
          $(pkg-config --static --libs asyncsolve) -lstdc++
  "$@" -n 2 "$work/pc_consumer_fortran" | grep -q "asyncsolve fortran: ok"
  fortran=", Fortran module (find_package and pkg-config)"
fi
if [ -f "$build/asyncsolve-stencil2d-caf" ]; then
  test -x "$prefix/bin/asyncsolve-stencil2d-caf"
  fortran="$fortran, asyncsolve-stencil2d-caf"
fi
echo "install: find_package and pkg-config consumers passed$fortran"
