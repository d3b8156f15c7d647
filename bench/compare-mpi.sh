#!/usr/bin/env bash
# ringstar side by side with Open MPI on this machine, ranks as processes, in one run:
#   - Open MPI (bench/mpi/collectives.c) over shared memory (btl vader, or sm on Open MPI 5) and
#     over TCP on loopback (btl tcp, interface lo): MPI_Allreduce, MPI_Reduce + MPI_Bcast, MPI_Bcast,
#     and (with --comm yes) MPI_Reduce, MPI_Allgather and MPI_Reduce_scatter_block;
#   - ringstar's sweep (`ringstar launch --nproc N -- bench ...`): the ring's reduceGradients and
#     reduceGradientsInto (reduce, reduceinto), the star's reduceGradients and broadcastParams, and
#     (with --comm yes) the Communicator's allreduce, allgather, reducescatter, broadcast and reduce
#     (`bench --algorithm comm --op all`, its all-reduce algorithm chosen by size), over Netty with
#     its default options (netty: shared memory between the ranks of this host), Netty with
#     sharedMemory=off (netty-tcp: TCP on loopback), Aeron UDP on loopback (an embedded driver per
#     rank) and Aeron IPC (every rank a client of one SharedMediaDriver), both Aeron paths with
#     sharedMemory=off so that they measure Aeron;
# at the same sizes, types and world sizes, all written in one CSV (the columns of `ringstar bench
# --output x.csv`, see its --help); then prints the busbw ratio ringstar / Open MPI per size: ring
# (both calls) vs MPI_Allreduce, star reduce vs MPI_Reduce + MPI_Bcast, star broadcast vs MPI_Bcast;
# netty and Aeron IPC vs Open MPI's shared memory, netty-tcp and Aeron UDP vs its TCP; then, in
# tables of their own, the communicator's allreduce vs MPI_Allreduce, allgather vs MPI_Allgather,
# reducescatter vs MPI_Reduce_scatter_block, broadcast vs MPI_Bcast and reduce vs MPI_Reduce; then
# issue 28's targets, met or not. A ratio above 1 means ringstar moved the bytes faster.
# All-gather's size is the gathered result, reduce-scatter's the input (nccl-tests' convention),
# both rounded down to whole elements per rank.
#
# Usage: bench/compare-mpi.sh [--world-sizes 2,3,4] [--min-bytes 4] [--max-bytes 64M] [--runs 1]
#          [--type float|double|both] [--transports netty,netty-tcp,aeron-udp,aeron-ipc] [--iters N]
#          [--warmup N] [--comm yes|no] [--out DIR]
# --iters and --warmup go to both sides; by default each picks them per size (the warm-up moves
# about 32 MiB in at most 2000 calls, or a fifth of the timed calls if more; ringstar's bench also
# warms the JIT up once, before its first row, with 20 000 small calls). --comm no leaves the
# communicator and its Open MPI counterparts out (default yes).
#        bench/compare-mpi.sh --ratios FILE.csv     (only print the ratios of an earlier run's CSV)
# Aeron options for every Aeron rank go in AERON_OPTS, e.g. AERON_OPTS='--option aeron.termLength=16M'.
# NETWORK_PATH_OPTS (default '--option sharedMemory=off') keeps netty-tcp, aeron-udp and aeron-ipc
# off the shared-memory channel; a ringstar without that option refuses it: set it empty there.
# Writes DIR/compare-run<R>.csv and DIR/ratios-run<R>.md (default DIR bench/results/compare-mpi).
# Installs Open MPI with apt-get when mpicc or mpirun is missing and this runs as root; builds
# bench/target/ringstar.jar when it is missing. Exit status: 0 every result right, 1 otherwise.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

world_sizes=2,3,4 min_bytes=4 max_bytes=64M runs=1 type=both transports=netty,netty-tcp,aeron-udp,aeron-ipc
iters='' warmup='' comm=yes out=bench/results/compare-mpi ratios=''
parse_flags "world-sizes min-bytes max-bytes runs type transports iters warmup comm out ratios" "$@"
network_path=${NETWORK_PATH_OPTS---option sharedMemory=off}
# The star's reduceGradientsInto is left out (the ring's is the one the targets name) and so is the
# ring's broadcast (no Open MPI row to compare it with).
case $comm in
  yes) mpi_ops=(--ops all) ringstar_launches=("ps reduce,broadcast" "ring reduce,reduceinto" "comm all") ;;
  no) mpi_ops=() ringstar_launches=("ps reduce,broadcast" "ring reduce,reduceinto") ;;
  *) echo "compare-mpi.sh: --comm is yes or no, was '$comm'" >&2; exit 2 ;;
esac

# The ratio tables are `ringstar report compare-mpi`'s: a table per world size and type, a row per
# size, a column per pair of ringstar's operation and transport and Open MPI's that the CSV has.
if [ -n "$ratios" ]; then
  report compare-mpi "$ratios"
  exit 0
fi

if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "compare-mpi.sh: installing Open MPI (openmpi-bin libopenmpi-dev) with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
  else
    echo "compare-mpi.sh: needs Open MPI's mpicc and mpirun (Debian: apt-get install openmpi-bin libopenmpi-dev)" >&2
    exit 2
  fi
fi
ensure_jar
mkdir -p "$out"
out=$(cd "$out" && pwd)
build_mpi_program
# Open MPI 5 renamed the shared-memory transport from vader to sm.
if ompi_info 2>/dev/null | grep -q 'MCA btl: vader'; then shm=vader; else shm=sm; fi
mpi_version=$(mpirun --version 2>&1 | head -1)
iter_flags=()
[ -z "$iters" ] || iter_flags=(--iters "$iters")
[ -z "$warmup" ] || iter_flags+=(--warmup "$warmup")
sweep=(--min-bytes "$min_bytes" --max-bytes "$max_bytes" --type "$type" "${iter_flags[@]}")
driver='' driver_dir=''
at_exit '[ -z "$driver" ] || kill "$driver" 2>/dev/null; [ -z "$driver_dir" ] || rm -rf "$driver_dir" "$driver_dir.log"'

# mpi LABEL N CSV BTL-FLAGS...: Open MPI's collectives at world size N, rows labelled LABEL.
mpi() {
  local label=$1 n=$2 csv=$3
  shift 3
  echo "== $label, world size $n: mpirun --bind-to none -np $n --mca pml ob1 --mca btl $* ($mpi_version)"
  # Unbound, like the JVMs it is compared with (Open MPI pins ranks to cores by default up to 2).
  # PML ob1 because only it moves bytes through the BTLs named here: a UCX PML, picked by default
  # where UCX is installed, ignores --mca btl, and mpi-shm and mpi-tcp would then measure the same.
  # The time limit is the one ringstar's launches get; --foreground keeps mpirun in this terminal's
  # process group, so Ctrl-C still reaches it, and mpirun stops its ranks when it gets SIGTERM.
  timeout --foreground -k 30 1800 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" \
    --mca pml ob1 --mca btl "$@" bench/target/mpi/collectives "${sweep[@]}" "${mpi_ops[@]}" --transport "$label" \
    --output "$csv"
}

# ringstar LABEL TRANSPORT N CSV: ringstar's sweep as N processes, in two launches: the star's
# reduce and broadcast, then the ring's reduce and reduceinto; with --comm yes a third, the
# communicator's five operations.
# Rank 0 writes the rows, whose transport column is then set to LABEL (netty and netty-tcp are both
# `netty` to ringstar, aeron-udp and aeron-ipc both `aeron`). Returns 1 when a launch failed; the
# rows a failed launch still wrote (rank 0 writes them before it exits 1 on wrong elements) are kept,
# so their `wrong` shows.
# Called on the left of `||`, where set -e does not act: every failure is checked by hand.
ringstar() {
  local label=$1 transport=$2 n=$3 csv=$4 pair algorithm op raw launch result=0
  local raws=() extra=()
  # Options for this launch's bench (RINGSTAR_ARGS, set by the callers below), split into words.
  read -r -a extra <<< "${RINGSTAR_ARGS:-}"
  for pair in "${ringstar_launches[@]}"; do
    read -r algorithm op <<< "$pair"
    raw=${csv%.csv}-$algorithm.csv
    # A file left by an interrupted run must not pass for this launch's.
    rm -f "$raw"
    echo "== $label, world size $n: ringstar launch --nproc $n -- bench --transport $transport --algorithm $algorithm" \
      "--op $op ${RINGSTAR_ARGS:-}"
    launch=0
    ./ringstar launch --nproc "$n" --max-time 1800 -- bench --transport "$transport" --algorithm "$algorithm" \
      --op "$op" "${sweep[@]}" "${extra[@]}" --output "$raw" > "$csv.log" 2>&1 || launch=$?
    grep -E '^\[rank 0\] +[0-9]' "$csv.log" || true
    if [ "$launch" != 0 ] || [ ! -s "$raw" ]; then
      echo "compare-mpi.sh: ringstar over $label at world size $n, $algorithm $op, failed (status $launch);" \
        "its last lines:" >&2
      tail -20 "$csv.log" >&2
      result=1
      # No rows: it crashed or timed out, and so would the next launch, most likely.
      [ -s "$raw" ] || break
    fi
    raws+=("$raw")
  done
  rm -f "$csv.log"
  if [ ${#raws[@]} -gt 0 ]; then
    report merge --transport "$label" --out "$csv" "${raws[@]}" || { rm -f "$csv"; result=1; }
    rm -f "${raws[@]}"
  fi
  return "$result"
}

# aeron_ipc N CSV: ringstar over Aeron IPC, every rank a client of one shared media driver.
# Called on the left of `||` like ringstar(): returns ringstar's status after stopping the driver.
aeron_ipc() {
  local result=0
  driver_dir=/dev/shm/ringstar-compare-$$
  java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp "$jar" \
    io.ringstar.transport.aeron.SharedMediaDriver --dir "$driver_dir" > "$driver_dir.log" 2>&1 &
  driver=$!
  for _ in $(seq 1 200); do grep -q ready "$driver_dir.log" 2>/dev/null && break; sleep 0.1; done
  if ! grep -q ready "$driver_dir.log"; then
    echo "compare-mpi.sh: the shared media driver did not start within 20 s:" >&2
    cat "$driver_dir.log" >&2
    result=1
  else
    RINGSTAR_ARGS="--option aeron.dir=$driver_dir $network_path ${AERON_OPTS:-}" ringstar aeron-ipc aeron "$1" \
      "$2" || result=$?
  fi
  # SIGTERM, then SIGKILL after 10 s: a driver that ignores the first must not hold the run.
  kill "$driver" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$driver" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$driver" 2>/dev/null || true
  wait "$driver" 2>/dev/null || true
  driver=
  rm -rf "$driver_dir" "$driver_dir.log"
  return "$result"
}

status=0
for run in $(seq 1 "$runs"); do
  echo "== run $run of $runs, $(date -u +%FT%TZ)"
  parts=()
  for n in ${world_sizes//,/ }; do
    for what in mpi-shm mpi-tcp ${transports//,/ }; do
      csv=$out/part-$run-$n-$what.csv
      # A part left by an interrupted run must not be merged as this run's.
      rm -f "$csv"
      case $what in
        mpi-shm) mpi mpi-shm "$n" "$csv" "self,$shm" ;;
        mpi-tcp) mpi mpi-tcp "$n" "$csv" self,tcp --mca btl_tcp_if_include lo ;;
        netty) ringstar netty netty "$n" "$csv" ;;
        netty-tcp) RINGSTAR_ARGS=$network_path ringstar netty-tcp netty "$n" "$csv" ;;
        aeron-udp) RINGSTAR_ARGS="$network_path ${AERON_OPTS:-}" ringstar aeron-udp aeron "$n" "$csv" ;;
        aeron-ipc) aeron_ipc "$n" "$csv" ;;
        *) echo "compare-mpi.sh: unknown transport $what (netty, netty-tcp, aeron-udp, aeron-ipc)" >&2; exit 2 ;;
      esac || status=1
      [ ! -s "$csv" ] || parts+=("$csv")
    done
  done
  if [ ${#parts[@]} = 0 ]; then
    echo "compare-mpi.sh: run $run produced no results" >&2
    exit 1
  fi
  # One header for all: ringstar's columns begin with those of Open MPI's program, in the same order,
  # and add the per-call accounting at the end, which Open MPI's rows leave empty (merge refuses a
  # part whose columns differ otherwise, naming both headers).
  all=$out/compare-run$run.csv
  report merge --out "$all" "${parts[@]}"
  rm -f "${parts[@]}"
  if ! report wrong "$all" >&2; then
    echo "compare-mpi.sh: some rows of $all have wrong elements (column wrong)" >&2
    status=1
  fi
  report compare-mpi "$all" | tee "$out/ratios-run$run.md"
  echo "== wrote $all and $out/ratios-run$run.md"
done
exit "$status"
