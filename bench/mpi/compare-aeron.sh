#!/usr/bin/env bash
# Side by side on one machine, 2 ranks as 2 processes, float32 all-reduce (ringstar's ring) at
# 1 KiB, 1 MiB, 16 MiB and 64 MiB, back to back in one run:
#   - Open MPI's MPI_Allreduce with its defaults on one host (shared memory),
#   - ringstar over Aeron IPC, both ranks clients of one external media driver (SharedMediaDriver),
#   - ringstar over Aeron UDP on loopback, each rank with its own embedded driver,
#   - ringstar over Netty (TCP on loopback).
# Needs mpicc and mpirun (Debian: openmpi-bin libopenmpi-dev); builds the jar if it is missing.
# Usage: bench/mpi/compare-aeron.sh [runs]        (default 2; every run measures all four)
# Extra Aeron options for both ranks: AERON_OPTS="-Dringstar.aeron.termLength=4194304" bench/mpi/compare-aeron.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
runs=${1:-2}
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "compare-aeron.sh: needs Open MPI (mpicc, mpirun); on Debian: apt-get install openmpi-bin libopenmpi-dev" >&2
  exit 2
fi
[ -f bench/target/ringstar.jar ] || ./ringstar --help > /dev/null
jar=bench/target/ringstar.jar
mkdir -p bench/target/mpi
mpicc -O2 -o bench/target/mpi/allreduce bench/mpi/allreduce.c
read -r -a aeron_opts <<< "${AERON_OPTS:-}"
jvm=()
flags=(--add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.nio=ALL-UNNAMED)
dir=/dev/shm/ringstar-compare-$$
port=$((30000 + RANDOM % 20000))
driver=
trap '[ -n "$driver" ] && kill "$driver" 2>/dev/null; wait 2>/dev/null' EXIT

# ring LABEL TRANSPORT: both ranks as processes (java options in the array jvm), one size per pair of processes.
ring() {
  local label=$1 transport=$2 size iters warmup
  # size, timed calls, warm-up calls (long enough for the JIT)
  for spec in "1K 5000 5000" "1M 1000 1000" "16M 60 100" "64M 15 30"; do
    read -r size iters warmup <<< "$spec"
    local args=(bench --world-size 2 --coordinator "127.0.0.1:$port" --algorithm ring --transport "$transport"
      --min-bytes "$size" --max-bytes "$size" --iters "$iters" --warmup "$warmup")
    java "${jvm[@]}" -jar "$jar" "${args[@]}" --rank 1 > /dev/null 2>&1 &
    local other=$!
    java "${jvm[@]}" -jar "$jar" "${args[@]}" --rank 0 2>&1 | grep -E '^ +[0-9]|FAILED|Exception' | sed "s/^/$label /"
    wait "$other"
    port=$((port + 1))
  done
}

for run in $(seq 1 "$runs"); do
  echo "== run $run of $runs, $(date -u +%FT%TZ)"
  echo "== $(mpirun --version 2>&1 | head -1), mpirun -np 2 (shared memory)"
  mpirun --allow-run-as-root --oversubscribe -np 2 bench/target/mpi/allreduce
  echo "== ringstar ring over Aeron IPC, one shared driver (SharedMediaDriver) ${AERON_OPTS:-}"
  java "${flags[@]}" -cp "$jar" io.ringstar.transport.aeron.SharedMediaDriver --dir "$dir" > "$dir.log" 2>&1 &
  driver=$!
  for _ in $(seq 1 100); do grep -q "ready" "$dir.log" 2>/dev/null && break; sleep 0.1; done
  jvm=("-Dringstar.aeron.dir=$dir" "${aeron_opts[@]}")
  ring aeron-ipc aeron
  kill "$driver"; wait "$driver" 2>/dev/null || true; driver=; rm -f "$dir.log"
  echo "== ringstar ring over Aeron UDP on loopback, an embedded driver per rank ${AERON_OPTS:-}"
  jvm=("${aeron_opts[@]}")
  ring aeron-udp aeron
  echo "== ringstar ring over Netty (TCP on loopback)"
  jvm=()
  ring netty netty
done
