#!/usr/bin/env bash
# NAME
#   soak.sh - many asynchronous Jacobi or Schwarz solves under skew, noise and load
#
# PURPOSE
#   The reliability check of asynchronous iterations: they exist so that a
#   slow, descheduled or noisy process cannot hold the others back, and the
#   solve must still end correctly. Each run is one `asyncsolve solve
#   --method jacobi` with the problem, transport and variant taken in turn
#   (plume stencil or --matrix x mpi, rma, shmem x async, racy: every triple
#   equally often), a random rank count (2-4), one random rank slowed x1-x5
#   (--slow-rank/--slow-factor), and noise (--noise-us 200 --noise-hz 500) on
#   about a third of the runs, under a timeout. The --matrix runs take one of
#   bench/soak_matrices.py's three systems (a symmetric file, an unsymmetric
#   grid operator, a random pattern with ghosts from every rank) and one of
#   the partitioners at random: the sparse asynchronous path (distributed
#   CSR, one channel per neighbour rank). Meanwhile another process keeps one
#   core busy (a shell busy loop; LOAD=0 leaves it out), the condition
#   asynchrony is meant for. METHOD=schwarz soaks the asynchronous Schwarz
#   iteration instead (--method schwarz, --overlap 1 or 2 at random), on
#   --matrix only: the three systems and, where scikit-fem imports, two
#   finite-element ones asynchronous Jacobi refuses (bench/fem_systems.py:
#   P2 Poisson and a 10^4 coefficient jump).
#
# USAGE
#   bench/soak.sh BINARY N [OUTDIR]
#   Environment: SOAK_SEED (default 7) fixes the mix; TIMEOUT seconds per run
#   (default 60); LOCAL (default 14,14,14) the plume's block and TOL (default
#   1e-4) every run's tolerance; LOAD=1 (default) runs the busy loop; EXTRA
#   adds asyncsolve options to every run (e.g. EXTRA="--idle off" to measure
#   without idling); TRANSPORTS (default "mpi rma shmem"), PROBLEMS (default
#   "plume matrix") and PARTITIONS (default "block metis scotch") what is
#   taken; MPIEXEC (default mpirun) the launcher of the binary's MPI, e.g.
#   mpirun.mpich for a build against Debian's MPICH (--oversubscribe is
#   added for Open MPI's; shmem runs need Open MPI's oshrun; under MPICH the
#   rma runs take at most one rank per core, since MPICH completes a
#   one-sided operation only while its target runs and spins while it
#   waits: bench/rma_flush measures a flush at a scheduler's time slice on
#   a crowded node, and `asyncsolve solve` warns of it); METHOD
#   (default jacobi) jacobi or schwarz; PYTHON the interpreter that writes
#   the matrices (default: the repository's .venv/bin/python where `make
#   test` made it, which has scikit-fem; python3 otherwise).
#   Example: nohup bench/soak.sh build/asyncsolve 1000 results/soak > soak.log &
#
# OUTPUT
#   One line per failure (HANG: killed by the timeout; EXIT: a non-zero exit
#   code; WRONG: exit 0 but true residual >= 10 tol, no result document, or
#   a document of another rank count, as when the launcher is not the
#   binary's MPI's), a progress line every 50 runs, and a summary line "soak:
#   N runs: ok ..., hangs ..., non-zero exits ..., true residual >= 10 tol
#   ...; runs repeated after a launcher fault ...; exit codes: ..." with the
#   largest true residual / tol. A run whose only fault is Open MPI's
#   launcher reporting a PID-0 process "exiting improperly" (exit 1; see
#   the loop) is run once more (a RETRY line), and counted. OUTDIR keeps
#   every run's log and result document, the matrices (matrices/) and
#   runs.csv (one line per run). Exit code 0 when every run passed, 1
#   otherwise, 2 for bad arguments.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: soak.sh BINARY N [OUTDIR] (BINARY an asyncsolve executable, N a count)" >&2
  exit 2
fi
AS=$1; N=$2; OUT=${3:-$(mktemp -d /tmp/soak.XXXXXX)}
TIMEOUT=${TIMEOUT:-60}; LOCAL=${LOCAL:-14,14,14}; TOL=${TOL:-1e-4}; EXTRA=${EXTRA:-}
here=$(dirname "$0")
venv_python="$here/../.venv/bin/python"; [ -x "$venv_python" ] || venv_python=python3
MPIEXEC=${MPIEXEC:-mpirun}; METHOD=${METHOD:-jacobi}; PYTHON=${PYTHON:-$venv_python}
case $METHOD in
  jacobi) default_problems="plume matrix" ;;
  schwarz) default_problems="matrix" ;;
  *) echo "soak.sh: METHOD '$METHOD': expected jacobi or schwarz" >&2; exit 2 ;;
esac
read -r -a transports <<< "${TRANSPORTS:-mpi rma shmem}"; variants=(async racy)
read -r -a problems <<< "${PROBLEMS:-$default_problems}"
if [ "$METHOD" = schwarz ] && [[ " ${problems[*]} " == *" plume "* ]]; then
  echo "soak.sh: PROBLEMS has plume, but the Schwarz iteration solves a matrix; expected matrix" >&2
  exit 2
fi
read -r -a partitions <<< "${PARTITIONS:-block metis scotch}"
mkdir -p "$OUT/matrices"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_rmaps_base_oversubscribe=1
RANDOM=${SOAK_SEED:-7}

# Open MPI's launcher needs --oversubscribe past the cores; MPICH's Hydra
# takes any -np. The shmem transport is Open MPI's OSHMEM, through oshrun.
oversubscribe=""; rma_ranks=4  # the most ranks a run draws: no cap
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  oversubscribe="--oversubscribe"
else
  rma_ranks=$(nproc)
  if [[ " ${transports[*]} " == *" shmem "* ]]; then
    echo "soak.sh: TRANSPORTS has shmem, which needs Open MPI's oshrun, but MPIEXEC $MPIEXEC" \
         "is not Open MPI's launcher; expected TRANSPORTS without shmem" >&2
    exit 2
  fi
fi
matrices=()
if [[ " ${problems[*]} " == *" matrix "* ]]; then
  mapfile -t matrices < <("$PYTHON" "$here/soak_matrices.py" "$OUT/matrices") || exit 2
  [ ${#matrices[@]} -gt 0 ] || exit 2
  if [ "$METHOD" = schwarz ] && "$PYTHON" -c "import skfem" 2>/dev/null; then
    for kind in "poisson-p2 5" "jump 9"; do
      set -- $kind
      "$PYTHON" "$here/fem_systems.py" "$1" --n "$2" --out "$OUT/matrices/$1" > /dev/null || exit 2
      matrices+=("$OUT/matrices/$1/$1.mtx")
    done
  fi
fi

load_pid=""
if [ "${LOAD:-1}" = 1 ]; then
  ( while :; do :; done ) &
  load_pid=$!
fi
stop_load() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; load_pid=""; }
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM

triples=$(( ${#problems[@]} * ${#transports[@]} * 2 ))
hang=0; bad=0; wrong=0; ok=0; worst=0; launcher_retries=0
declare -A codes
echo "run,transport,variant,ranks,slow_rank,slow_factor,noise,exit,time_s,iterations_min,iterations_max,idle_waits,true_residual,problem,partition" > "$OUT/runs.csv"
start=$(date +%s)
for i in $(seq "$N"); do
  k=$(( (i - 1) % triples ))
  v=${variants[$((k % 2))]}; k=$((k / 2))
  tr=${transports[$((k % ${#transports[@]}))]}; problem=${problems[$((k / ${#transports[@]}))]}
  np=$((2 + RANDOM % 3))
  [ "$tr" = rma ] && [ "$np" -gt "$rma_ranks" ] && np=$(( rma_ranks < 2 ? 2 : rma_ranks ))
  slow=$((RANDOM % np)); fac=$((1 + RANDOM % 5))
  noise=""; [ $((RANDOM % 3)) = 0 ] && noise="--noise-us 200 --noise-hz 500 --noise-seed $i"
  if [ "$problem" = matrix ]; then
    mtx=${matrices[$((RANDOM % ${#matrices[@]}))]}; part=${partitions[$((RANDOM % ${#partitions[@]}))]}
    system="--matrix $mtx --partition $part"; problem="matrix:$(basename "$mtx" .mtx)"
  else
    part=""; system="--problem $problem --local $LOCAL"
  fi
  # OMPI_MCA_osc=ucx only under oshrun (Debian's OSHMEM crashes in shmem_finalize without
  # it); rma keeps Open MPI's own choice of one-sided component, as a user's run does.
  schwarz=""; [ "$METHOD" = schwarz ] && schwarz="--overlap $((1 + RANDOM % 2))"
  launcher="$MPIEXEC $oversubscribe -np"
  [ "$tr" = shmem ] && launcher="env OMPI_MCA_osc=ucx oshrun --oversubscribe -np"
  f="$OUT/r$i.json"
  for attempt in 1 2; do
    # shellcheck disable=SC2086
    timeout --kill-after=5 "$TIMEOUT" $launcher $np "$AS" solve $system \
        --method $METHOD $schwarz --variant $v --transport $tr --tol "$TOL" --slow-rank $slow \
        --slow-factor $fac $noise $EXTRA --json "$f" > "$OUT/r$i.log" 2>&1
    rc=$?
    # Open MPI's launcher sometimes reports a process that exited normally as
    # "rank N with PID 0 ... exiting improperly" and exits 1 (its PID was
    # never recorded: open-mpi/ompi#7833). The run is repeated once, and
    # counted; a second failure counts as any other.
    if [ "$attempt" = 1 ] && [ $rc = 1 ] && grep -q "with PID 0 on" "$OUT/r$i.log" &&
       grep -q "exiting improperly" "$OUT/r$i.log"; then
      launcher_retries=$((launcher_retries + 1))
      mv "$OUT/r$i.log" "$OUT/r$i.launcher-fault.log"; rm -f "$f"
      echo "RETRY run $i: the launcher reported a PID-0 process exiting improperly (open-mpi/ompi#7833); run again"
      continue
    fi
    break
  done
  codes[$rc]=$(( ${codes[$rc]:-0} + 1 ))
  what="$METHOD${schwarz:+ $schwarz} $problem${part:+ $part} $tr $v np=$np slow=$slow x$fac${noise:+ noise}"
  fields=$(python3 - "$f" "$TOL" "$np" <<'EOF' 2>/dev/null
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    r = d["result"]
    idle = d.get("stats", {}).get("idle_waits", {}).get("max", "")
    ranks = d["environment"]["ranks"]
    ratio = r["true_residual"] / float(sys.argv[2]) if ranks == int(sys.argv[3]) else ""
    print(f'{r["time_s"]},{r["iterations"]["min"]},{r["iterations"]["max"]},{idle},'
          f'{r["true_residual"]},{ratio},{ranks}')
except Exception:
    print(",,,,,,")
EOF
)
  IFS=, read -r time_s it_min it_max idle true_res ratio ranks <<< "$fields"
  echo "$i,$tr,$v,$np,$slow,$fac,${noise:+1},$rc,$time_s,$it_min,$it_max,$idle,$true_res,$problem,$part" >> "$OUT/runs.csv"
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    hang=$((hang + 1)); echo "HANG run $i: $what"
  elif [ $rc != 0 ]; then
    bad=$((bad + 1)); echo "EXIT $rc run $i: $what: $(grep -v '^ *$' "$OUT/r$i.log" | tail -n 2 | tr '\n' ' ')"
  elif [ -n "$ranks" ] && [ "$ranks" != "$np" ]; then
    wrong=$((wrong + 1)); echo "WRONG run $i: the document says $ranks ranks (is $MPIEXEC the binary's MPI's launcher?): $what"
  elif [ -z "$ratio" ] || ! python3 -c "import sys; sys.exit(0 if float('$ratio') < 10 else 1)"; then
    wrong=$((wrong + 1)); echo "WRONG run $i: true residual ${true_res:-missing}: $what"
  else
    ok=$((ok + 1))
  fi
  if [ -n "$ratio" ]; then
    worst=$(python3 -c "print(max(float('$worst'), float('$ratio')))")
  fi
  if [ $((i % 50)) = 0 ]; then
    echo "soak: $i/$N runs done, $((hang + bad + wrong)) failures, $(( $(date +%s) - start )) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  fi
done
stop_load
echo "soak: $N runs: ok $ok, hangs $hang, non-zero exits $bad, true residual >= 10 tol $wrong;" \
     "runs repeated after a launcher fault $launcher_retries;" \
     "largest true residual / tol $worst; exit codes: $(for k in "${!codes[@]}"; do printf '%s:%s ' "$k" "${codes[$k]}"; done)" \
     "($(( $(date +%s) - start )) s; logs in $OUT)"
[ $((hang + bad + wrong)) = 0 ]
