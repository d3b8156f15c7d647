#!/usr/bin/env bash
# Side by side on one machine over loopback TCP, 2 ranks as 2 processes: Open MPI's MPI_Allreduce
# (--mca btl self,tcp) and ringstar's ring over Netty, float32, at 1 KiB, 1 MiB, 16 MiB and 64 MiB.
# Needs mpicc and mpirun (Debian: openmpi-bin libopenmpi-dev); builds the jar if it is missing.
# Usage: bench/mpi/compare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "compare.sh: needs Open MPI (mpicc, mpirun); on Debian: apt-get install openmpi-bin libopenmpi-dev" >&2
  exit 2
fi
[ -f bench/target/ringstar.jar ] || ./ringstar --help > /dev/null
mkdir -p bench/target/mpi
mpicc -O2 -o bench/target/mpi/allreduce bench/mpi/allreduce.c
echo "== $(mpirun --version 2>&1 | head -1), mpirun -np 2 --mca btl self,tcp"
mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,tcp --mca btl_tcp_if_include lo \
  bench/target/mpi/allreduce
echo "== ringstar ring over Netty, 2 processes, warm-up long enough for the JIT"
port=$((30000 + RANDOM % 20000))
# size, timed calls, warm-up calls
for spec in "1K 20000 20000" "1M 1000 1000" "16M 60 100" "64M 15 30"; do
  set -- $spec
  args=(bench --world-size 2 --coordinator "127.0.0.1:$port" --algorithm ring --min-bytes "$1" --max-bytes "$1"
    --iters "$2" --warmup "$3")
  java -jar bench/target/ringstar.jar "${args[@]}" --rank 1 > /dev/null 2>&1 &
  java -jar bench/target/ringstar.jar "${args[@]}" --rank 0 2>&1 | grep -E '^ +[0-9]|FAILED|Exception'
  wait
  port=$((port + 1))
done
