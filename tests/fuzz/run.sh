#!/usr/bin/env bash
# Builds the Matrix Market reader's libFuzzer target with clang (address and
# undefined-behaviour sanitizers) and runs it on the seed corpus.
#   tests/fuzz/run.sh [--seconds N] [--build DIR] [--jobs J]
# Exits 0 if the run found nothing, 1 on a finding (the crashing input is
# left in DIR/findings/), 77 if no clang with libFuzzer is installed
# (Debian: clang-14 libclang-rt-14-dev). The corpus grows in DIR/corpus.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
seconds=60 build="$src/build-fuzz" jobs=1
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
cxx=""
for c in clang++-14 clang++; do
  if command -v "$c" > /dev/null; then cxx=$c; break; fi
done
if [ -z "$cxx" ] || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     "$cxx" -x c++ -fsanitize=fuzzer - -o /dev/null 2> /dev/null; then
  echo "fuzz: no clang with libFuzzer (apt-get install clang-14 libclang-rt-14-dev): skipped"
  exit 77
fi
mkdir -p "$build/corpus" "$build/findings"
build=$(cd "$build" && pwd)  # the run below changes directory
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$src/include" \
  "$here/fuzz_matrix_market.cpp" "$src/src/sparse/matrix_market.cpp" "$src/src/sparse/csr.cpp" \
  "$src/src/core/error.cpp" "$src/src/core/json_file.cpp" "$src/src/core/parse.cpp" -lfmt \
  -o "$build/fuzz_matrix_market"
cd "$build/findings"
parallel=()
if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
"$build/fuzz_matrix_market" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 "${parallel[@]}" -print_final_stats=1 \
  -dict="$here/matrix_market.dict" "$build/corpus" "$here/corpus"
