#!/usr/bin/env bash
# NAME
#   soak.sh - many asynchronous Jacobi solves under skew, noise and load
#
# PURPOSE
#   The reliability check of issue 13: asynchronous iterations exist so that
#   a slow, descheduled or noisy process cannot hold the others back, and the
#   solve must still end correctly. Each run is one `asyncsolve solve
#   --method jacobi` with the transport and variant taken in turn (mpi, rma,
#   shmem x async, racy: every pair equally often), a random rank count
#   (2-4), one random rank slowed x1-x5 (--slow-rank/--slow-factor), and noise
#   (--noise-us 200 --noise-hz 500) on about a third of the runs, under a
#   timeout. Meanwhile another process keeps one core busy (a shell busy
#   loop; LOAD=0 leaves it out), the condition asynchrony is meant for.
#
# USAGE
#   bench/soak.sh BINARY N [OUTDIR]
#   Environment: SOAK_SEED (default 7) fixes the mix; TIMEOUT seconds per run
#   (default 60); LOCAL (default 14,14,14) and TOL (default 1e-4) the problem;
#   LOAD=1 (default) runs the busy loop; EXTRA adds asyncsolve options to
#   every run (e.g. EXTRA="--idle off" to measure without idling);
#   TRANSPORTS (default "mpi rma shmem") the transports taken in turn.
#   Example: nohup bench/soak.sh build/asyncsolve 1000 results/soak > soak.log &
#
# OUTPUT
#   One line per failure (HANG: killed by the timeout; EXIT: a non-zero exit
#   code; WRONG: exit 0 but true residual >= 10 tol, or no result document),
#   a progress line every 50 runs, and a summary line "soak: N runs: ok ...,
#   hangs ..., non-zero exits ..., true residual >= 10 tol ...; exit codes:
#   ..." with the largest true residual / tol. OUTDIR keeps every run's log
#   and result document and runs.csv (one line per run). Exit code 0 when
#   every run passed, 1 otherwise, 2 for bad arguments.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: soak.sh BINARY N [OUTDIR] (BINARY an asyncsolve executable, N a count)" >&2
  exit 2
fi
AS=$1; N=$2; OUT=${3:-$(mktemp -d /tmp/soak.XXXXXX)}
TIMEOUT=${TIMEOUT:-60}; LOCAL=${LOCAL:-14,14,14}; TOL=${TOL:-1e-4}; EXTRA=${EXTRA:-}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_rmaps_base_oversubscribe=1
RANDOM=${SOAK_SEED:-7}

load_pid=""
if [ "${LOAD:-1}" = 1 ]; then
  ( while :; do :; done ) &
  load_pid=$!
fi
stop_load() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; load_pid=""; }
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM

read -r -a transports <<< "${TRANSPORTS:-mpi rma shmem}"; variants=(async racy)
pairs=$(( ${#transports[@]} * 2 ))
hang=0; bad=0; wrong=0; ok=0; worst=0
declare -A codes
echo "run,transport,variant,ranks,slow_rank,slow_factor,noise,exit,time_s,iterations_min,iterations_max,idle_waits,true_residual" > "$OUT/runs.csv"
start=$(date +%s)
for i in $(seq "$N"); do
  pair=$(( (i - 1) % pairs ))
  tr=${transports[$((pair / 2))]}; v=${variants[$((pair % 2))]}
  np=$((2 + RANDOM % 3)); slow=$((RANDOM % np)); fac=$((1 + RANDOM % 5))
  noise=""; [ $((RANDOM % 3)) = 0 ] && noise="--noise-us 200 --noise-hz 500 --noise-seed $i"
  # OMPI_MCA_osc=ucx only under oshrun (Debian's OSHMEM crashes in shmem_finalize without
  # it); rma keeps Open MPI's own choice of one-sided component, as a user's run does.
  launcher="mpirun --oversubscribe -np"
  [ "$tr" = shmem ] && launcher="env OMPI_MCA_osc=ucx oshrun --oversubscribe -np"
  f="$OUT/r$i.json"
  # shellcheck disable=SC2086
  timeout --kill-after=5 "$TIMEOUT" $launcher $np "$AS" solve --problem plume --local "$LOCAL" \
      --method jacobi --variant $v --transport $tr --tol "$TOL" --slow-rank $slow \
      --slow-factor $fac $noise $EXTRA --json "$f" > "$OUT/r$i.log" 2>&1
  rc=$?
  codes[$rc]=$(( ${codes[$rc]:-0} + 1 ))
  what="$tr $v np=$np slow=$slow x$fac${noise:+ noise}"
  fields=$(python3 - "$f" "$TOL" <<'EOF' 2>/dev/null
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    r = d["result"]
    idle = d.get("stats", {}).get("idle_waits", {}).get("max", "")
    print(f'{r["time_s"]},{r["iterations"]["min"]},{r["iterations"]["max"]},{idle},'
          f'{r["true_residual"]},{r["true_residual"] / float(sys.argv[2])}')
except Exception:
    print(",,,,,")
EOF
)
  IFS=, read -r time_s it_min it_max idle true_res ratio <<< "$fields"
  echo "$i,$tr,$v,$np,$slow,$fac,${noise:+1},$rc,$time_s,$it_min,$it_max,$idle,$true_res" >> "$OUT/runs.csv"
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    hang=$((hang + 1)); echo "HANG run $i: $what"
  elif [ $rc != 0 ]; then
    bad=$((bad + 1)); echo "EXIT $rc run $i: $what: $(grep -v '^ *$' "$OUT/r$i.log" | tail -n 2 | tr '\n' ' ')"
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
     "largest true residual / tol $worst; exit codes: $(for k in "${!codes[@]}"; do printf '%s:%s ' "$k" "${codes[$k]}"; done)" \
     "($(( $(date +%s) - start )) s; logs in $OUT)"
[ $((hang + bad + wrong)) = 0 ]
