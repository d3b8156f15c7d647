#!/usr/bin/env bash
# An emulated cluster on this machine: star against ring where the link, not the copies, is the limit.
#
# Four hosts, each a network namespace (rs-h<i>-<pid>) with one veth link (eth0, 10.77.0.<i+1>/24)
# to a Linux bridge in a fifth namespace (rs-sw-<pid>), the switch. Every link is shaped with tc's
# token bucket (tbf) at --rate in both directions: on the host's end (what it sends) and on the
# switch's end (what it receives); --rate none leaves the links unshaped, as a control. At each
# world size n the first n hosts run one rank each, `java -jar bench/target/ringstar.jar bench
# --rank r --world-size n --coordinator 10.77.0.1:port`, timing the star's reduceGradients (ps)
# and the ring all-reduce over the sizes. It then prints
# star time ÷ ring time (p50 of the slowest rank's per call) per size and world size, and where they cross: the smallest
# size from which the ring is faster at every larger size measured.
#
# What to expect: once the links are the bottleneck, rank 0 of the star receives and sends (n-1)
# copies of the data (both at once: it streams each averaged chunk back while the next ones
# arrive) while every ring rank sends 2(n-1)/n, so star ÷ ring tends to n/2; for small
# messages the ring's 2(n-1) steps against the star's 2 make the star faster. The cores of this
# machine are shared by all ranks, so a fast --rate can make the CPU, not the link, the limit.
#
# With --mpi yes, Open MPI's MPI_Allreduce and MPI_Reduce + MPI_Bcast (bench/mpi/collectives.c,
# over TCP on eth0) run on the same hosts and links, and a second table gives ringstar's time ÷
# Open MPI's: what the emulated links cost anyone, against what ringstar adds. mpirun starts in
# host 0's namespace and reaches the others through a launch agent that enters theirs.
#
# With --servers 1,2,4 the star also runs with each number of servers above 1 (option servers, at
# most the world size; label ps-s2 and so on), a column each in the star ÷ ring table. With
# --compression none,fp16,bf16,topk:0.01 the star and the ring also run with each compression
# other than none (labels ps-fp16, ring-topk:0.01, ...). Every run of one algorithm is its own set
# of processes, and the bytes every host sent on its link during it (eth0's tx_bytes, so TCP/IP
# headers and the bench's few control messages included) go to DIR/wire.md: per call when one size
# is measured (--min-bytes = --max-bytes) with a fixed --warmup W (calls = 1 checked + W + iters).
#
# Usage: bench/cluster.sh [--world-sizes 2,3,4] [--min-bytes 1K] [--max-bytes 16M] [--rate 1gbit]
#          [--iters 20] [--warmup auto] [--type float] [--transport netty] [--mpi no|yes] [--out DIR]
#          [--servers 1] [--compression none]
#        bench/cluster.sh --table FILE.csv [--rate R|none]   (only print the table of a CSV in
#          ringstar's schema, per world size, transport and type: `ringstar report cluster`)
# Writes DIR/cluster.csv (ringstar's CSV schema, all world sizes) and DIR/cluster.md (the table);
# default DIR bench/results/cluster. Needs root, iproute2 (ip, tc) and the jar (built if missing).
# Namespaces and rank processes are removed on every exit. Exit status: 0 all right, 1 otherwise.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

world_sizes=2,3,4 min_bytes=1K max_bytes=16M rate=1gbit iters=20 warmup=auto type=float transport=netty
out=bench/results/cluster table='' mpi=no servers=1 compression=none
hosts=4
parse_flags "world-sizes min-bytes max-bytes rate iters warmup type transport mpi out table servers compression" "$@"

# The tables (star ÷ ring, where they cross, ringstar ÷ Open MPI) are `ringstar report cluster`'s.
if [ -n "$table" ]; then
  report cluster "$table" --rate "$rate"
  exit 0
fi
for n in ${world_sizes//,/ }; do
  if ! [ "$n" -ge 2 ] 2>/dev/null || [ "$n" -gt "$hosts" ]; then
    echo "cluster.sh: world sizes are 2..$hosts (the emulated cluster has $hosts hosts), got $n" >&2
    exit 2
  fi
done
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "cluster.sh: needs root and iproute2 (ip, tc) to build network namespaces" >&2
  exit 2
fi
ensure_jar
mkdir -p "$out"
out=$(cd "$out" && pwd)

switch=rs-sw-$$
namespaces=("$switch")
for i in $(seq 0 $((hosts - 1))); do namespaces+=("rs-h$i-$$"); done
ranks=()

# shellcheck disable=SC2317  # called at exit
cleanup() {
  local pid ns
  for pid in "${ranks[@]}"; do kill "$pid" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do
    # Anything still running in a namespace would keep it alive after `ip netns del`.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -f "$out"/.cluster-part-*.csv "$out"/.rank-*.log "$out/.netns-agent" "$out/.hostfile" "$out/.mpi.log" \
    "$out/.wire.tsv"
}
at_exit cleanup

# tbf lets through at most `burst` bytes above the rate. 128 KiB holds two 64 KiB segments (veth
# passes TCP's large segments unsplit) and is about 1 ms of traffic at 1 Gbit/s, small against the
# tens of milliseconds a bandwidth-bound message of a few MiB takes.
shape() {
  [ "$rate" != none ] || return 0
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst 128kb latency 50ms
}

ip netns add "$switch"
ip -n "$switch" link add name br0 type bridge
ip -n "$switch" link set br0 up
for i in $(seq 0 $((hosts - 1))); do
  host=rs-h$i-$$
  ip netns add "$host"
  ip -n "$switch" link add name "h$i" type veth peer name eth0 netns "$host"
  ip -n "$switch" link set "h$i" master br0
  ip -n "$switch" link set "h$i" up
  ip -n "$host" addr add "10.77.0.$((i + 1))/24" dev eth0
  ip -n "$host" link set eth0 up
  ip -n "$host" link set lo up
  shape "$switch" "h$i"
  shape "$host" eth0
done
echo "== emulated cluster: $hosts hosts on a bridge, every link $rate each way (tc tbf), transport $transport"

# host_tx_bytes N: the bytes the first N hosts have sent on their links so far, summed.
host_tx_bytes() {
  local i total=0
  for i in $(seq 0 $(($1 - 1))); do
    total=$((total + $(ip netns exec "rs-h$i-$$" cat /sys/class/net/eth0/statistics/tx_bytes)))
  done
  echo "$total"
}

# switch_drops N: packets the switch's shaped ports towards the first N hosts have dropped so far
# (tbf drops what exceeds its queue: the many-to-one traffic into one host's link, say), summed.
switch_drops() {
  local i total=0 dropped
  for i in $(seq 0 $(($1 - 1))); do
    dropped=$(ip netns exec "$switch" tc -s qdisc show dev "h$i" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1)
    total=$((total + ${dropped:-0}))
  done
  echo "$total"
}

# The runs at each world size: the star and the ring as they are, then the star with each number of
# servers and both with each compression. Each is "NAME|ALGORITHM|OPTION" (OPTION empty for none).
variants=("ps|ps|" "ring|ring|")
for s in ${servers//,/ }; do
  [ "$s" = 1 ] || variants+=("ps-s$s|ps|servers=$s")
done
for c in ${compression//,/ }; do
  [ "$c" = none ] || variants+=("ps-$c|ps|compression=$c" "ring-$c|ring|compression=$c")
done
calls_per_run=''
if [ "$min_bytes" = "$max_bytes" ] && [ "$warmup" != auto ]; then
  calls_per_run=$((1 + warmup + iters))
fi
wire=$out/.wire.tsv
: > "$wire"

status=0
port=29500
parts=()
for n in ${world_sizes//,/ }; do
  for variant in "${variants[@]}"; do
    IFS='|' read -r name algorithm option <<< "$variant"
    if [[ $name == ps-s* ]] && [ "${option#servers=}" -gt "$n" ]; then
      continue
    fi
    port=$((port + 1))
    csv=$out/.cluster-part-$n-$name.csv
    # A part left by a run that was killed before its cleanup must not pass for this run's.
    rm -f "$csv"
    warmup_flags=()
    [ "$warmup" = auto ] || warmup_flags=(--warmup "$warmup")
    option_flags=()
    [ -z "$option" ] || option_flags=(--option "$option")
    args=(bench --world-size "$n" --coordinator "10.77.0.1:$port" --transport "$transport" --algorithm "$algorithm"
      --op reduce --type "$type" --min-bytes "$min_bytes" --max-bytes "$max_bytes" --iters "$iters"
      "${warmup_flags[@]}" "${option_flags[@]}" --timeout 120)
    echo "== world size $n, $name: ranks 0..$((n - 1)) on hosts 10.77.0.1..$n: ${args[*]}"
    sent_before=$(host_tx_bytes "$n")
    drops_before=$(switch_drops "$n")
    ranks=()
    for r in $(seq 1 $((n - 1))); do
      timeout 1200 ip netns exec "rs-h$r-$$" java -jar "$jar" "${args[@]}" --rank "$r" >"$out/.rank-$r.log" 2>&1 &
      ranks+=($!)
    done
    # Rank 0 runs in the background too: bash runs a trap only between commands, and `wait` is one
    # that a signal interrupts, so Ctrl-C or SIGTERM cleans up at once instead of after the run.
    timeout 1200 ip netns exec rs-h0-$$ java -jar "$jar" "${args[@]}" --rank 0 --output "$csv" &
    ranks+=($!)
    rank0=0
    wait "${ranks[-1]}" || rank0=$?
    for r in $(seq 1 $((n - 1))); do
      if ! wait "${ranks[$((r - 1))]}"; then
        echo "cluster.sh: rank $r at world size $n ($name) failed; its last lines:" >&2
        tail -5 "$out/.rank-$r.log" >&2
        status=1
      fi
      rm -f "$out/.rank-$r.log"
    done
    ranks=()
    printf '%s\t%s\t%s\t%s\n' "$n" "$name" "$(( $(host_tx_bytes "$n") - sent_before ))" \
      "$(( $(switch_drops "$n") - drops_before ))" >> "$wire"
    if [ "$rank0" != 0 ] || [ ! -s "$csv" ]; then
      echo "cluster.sh: rank 0 at world size $n ($name) failed (status $rank0)" >&2
      status=1
    fi
    # Rank 0 writes its rows before it exits 1 on wrong elements: kept, so the check below names them.
    [ ! -s "$csv" ] || parts+=("$csv")
  done
done
{
  echo "Bytes all hosts sent on their links during each run (eth0 tx_bytes: TCP/IP headers and the bench's"
  echo "control messages included), size $min_bytes..$max_bytes, $type, rate $rate."
  echo
  echo "Packets dropped: by the switch's shaped ports towards the hosts (queue full), during the run."
  echo
  echo "| n | run | bytes sent | bytes per call | ÷ the same algorithm uncompressed | packets dropped |"
  echo "|---:|---|---:|---:|---:|---:|"
  awk -F'\t' -v calls="$calls_per_run" '
    { n[NR] = $1; name[NR] = $2; bytes[NR] = $3; drops[NR] = $4; base = $2; sub(/-(fp16|bf16|topk:.*)$/, "", base); key[NR] = $1 " " base
      if (base == $2) plain[$1 " " base] = $3 }
    END { for (i = 1; i <= NR; i++) {
      per = calls == "" ? "n/a" : sprintf("%.0f", bytes[i] / calls)
      ratio = (key[i] in plain) && plain[key[i]] > 0 ? sprintf("%.3f", bytes[i] / plain[key[i]]) : ""
      printf "| %s | %s | %.0f | %s | %s | %s |\n", n[i], name[i], bytes[i], per, ratio, drops[i] } }' "$wire"
} > "$out/wire.md"
rm -f "$wire"
if [ "$mpi" = yes ]; then
  command -v mpicc >/dev/null && command -v mpirun >/dev/null || {
    echo "cluster.sh: --mpi yes needs Open MPI's mpicc and mpirun (apt-get install openmpi-bin libopenmpi-dev)" >&2
    exit 2
  }
  build_mpi_program
  # The launch agent: Open MPI calls it as `agent HOST COMMAND...` for a remote shell to run.
  agent=$out/.netns-agent
  printf '#!/bin/sh\nhost=$1\nshift\nexec ip netns exec "rs-h$(( ${host##*.} - 1 ))-%s" sh -c "$*"\n' "$$" > "$agent"
  chmod +x "$agent"
  for i in $(seq 1 "$hosts"); do echo "10.77.0.$i slots=1"; done > "$out/.hostfile"
  mpi_flags=(--min-bytes "$min_bytes" --max-bytes "$max_bytes" --iters "$iters" --type "$type" --transport mpi-tcp)
  [ "$warmup" = auto ] || mpi_flags+=(--warmup "$warmup")
  for n in ${world_sizes//,/ }; do
    csv=$out/.cluster-part-mpi-$n.csv
    rm -f "$csv"
    echo "== world size $n: Open MPI over the same links (mpirun -np $n from host 0, btl tcp on eth0)"
    if timeout --foreground -k 30 1200 ip netns exec "rs-h0-$$" mpirun --allow-run-as-root --hostfile "$out/.hostfile" \
        -np "$n" --bind-to none --mca plm_rsh_agent "$agent" --mca pml ob1 --mca btl self,tcp \
        --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
        "$PWD/bench/target/mpi/collectives" "${mpi_flags[@]}" --output "$csv" > "$out/.mpi.log" 2>&1; then
      parts+=("$csv")
    else
      echo "cluster.sh: Open MPI at world size $n failed; its last lines:" >&2
      tail -20 "$out/.mpi.log" >&2
      status=1
    fi
  done
  rm -f "$agent" "$out/.hostfile" "$out/.mpi.log"
fi
[ ${#parts[@]} -gt 0 ] || exit 1
report merge --out "$out/cluster.csv" "${parts[@]}"

versus_mpi=()
[ "$mpi" != yes ] || versus_mpi=(--versus-mpi "$transport")
report cluster "$out/cluster.csv" --rate "$rate" "${versus_mpi[@]}" > "$out/cluster.md"
echo
cat "$out/cluster.md"
echo
cat "$out/wire.md"
echo "== wrote $out/cluster.csv, $out/cluster.md and $out/wire.md"
if ! report wrong "$out/cluster.csv" >&2; then
  echo "cluster.sh: some rows have wrong elements (column wrong)" >&2
  status=1
fi
exit "$status"
