#!/usr/bin/env bash
# Builds and runs the libFuzzer harness of the option parser (issue 19):
#   tests/fuzz/build_fuzz_options.sh BUILD_DIR [SECONDS] [OUT_DIR]
# BUILD_DIR is a Release build of asyncsolve (its libraries are linked; the
# parser's own sources are recompiled with clang-14, coverage
# instrumentation, AddressSanitizer and UBSan). The dictionary holds every
# option name (from `asyncsolve --options-table`) and hostile values; the
# seeds are valid command lines. Exit 0: no crash, hang or sanitizer report.
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-60}
out=${3:-$build/fuzz-options}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/obj" "$out/corpus"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$src/include" -I"$src/src" -I"$build/include"
       -I"$build/generated" $(mpicxx --showme:compile))
objs=()
for f in app/cli app/option_table app/options_common app/solve_options app/spin_options \
         app/bench_allreduce_options app/bench_stencil2d_options app/model_hybrid_options \
         app/agreement core/parse core/triple core/error; do
  o="$out/obj/${f//\//_}.o"
  [[ "$o" -nt "$src/src/$f.cpp" ]] || clang++-14 "${flags[@]}" -c "$src/src/$f.cpp" -o "$o"
  objs+=("$o")
done
# The rest of the library as the build links the command (MPI, OpenSHMEM, BLAS, OpenMP).
libs=$(grep -A4 '^build asyncsolve:' "$build/build.ninja" | sed -n 's/^ *LINK_LIBRARIES = //p' |
       sed "s| libasyncsolve_cli.a | |; s| libasyncsolve.a | $build/libasyncsolve.a |")
# shellcheck disable=SC2086
clang++-14 "${flags[@]}" -fsanitize=fuzzer "$src/tests/fuzz/fuzz_options.cpp" "${objs[@]}" \
  $libs -o "$out/fuzz_options"

# Dictionary: option names, subcommands, values at and beyond their limits.
{
  for w in solve bench allreduce stencil2d model hybrid info --help --version; do
    printf '"%s"\n' "$w"
  done
  "$build/asyncsolve" --options-table | grep -o '`-[-a-z0-9]*' | tr -d '`' | sort -u |
    sed 's/.*/"&"/'
  for v in 0 -1 1e308 -1e308 1e-400 nan inf 0x10 1e3 +5 " 5" 99999999999999999999 \
           10,10,10 0,10,10 1,1 : :: knomial:2 twolevel:rd thread:5 poll:4 square:2x3 \
           /dev/null /dev/zero "\\x00" "\\x0a" "\\x1b[2J" = , lanczos tfim cg pipecg \
           async racy rma shmem omp funneled multiple; do
    printf '"%s"\n' "$v"
  done
} > "$out/options.dict"
seed() { printf '%s\0' "$@" | head -c -1 > "$out/corpus/seed-$RANDOM$RANDOM"; }
seed solve --local 10,10,10 --method jacobi --variant async --max-in-flight 4
seed solve --method cg --tol 1e-8 --allreduce knomial:4 --test-every 2
seed solve --method lanczos --problem tfim --lattice square:2x3 --transport rma
seed solve --transport omp --threads 2 --copy --json out.json
seed bench allreduce --algorithms mpi,rd -m 8:64 --modes latency
seed bench stencil2d --local 64,128 --radius 2 --variant all
seed model hybrid --threads 4 --f-comm 0.3 --f-comp-non 0.2
seed model hybrid --fit sweep.json --non-ratio 1/6
seed solve --hybrid funneled --threads 2 --progress thread:5 --method pcg-overlap

export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$out"
./fuzz_options -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=512 \
  -dict=options.dict -print_final_stats=1 corpus
