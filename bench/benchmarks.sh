#!/usr/bin/env bash
# The one command that regenerates BENCHMARKS.md from a fresh run on this machine:
#   (a) ringstar's sweep, ranks as threads of one JVM, over inproc, Netty and Aeron, star and
#       ring, reduce and broadcast, float then double, with a chart per type
#       (bench/results/sweep.csv, sweep-float.png, sweep-double.png);
#   (b) bench/compare-mpi.sh: Open MPI side by side, ranks as processes (bench/results/compare-mpi/);
#   (c) bench/cluster.sh: star against ring on an emulated cluster of 4 namespaces with 1 Gbit/s
#       links (bench/results/cluster/);
#   (d) a short JMH run: reduction kernels against a copy, message header, ping-pong (jmh.csv);
# then writes BENCHMARKS.md from those files. Every judgement in it (crossings, ratios, shares) is
# computed from this run's numbers. Meant to take at most 15 minutes on a quiet 2-core machine with
# the defaults; the step table in BENCHMARKS.md gives each step's time.
#
# Usage: bench/benchmarks.sh [--quick] [--max-bytes 16M] [--world-size 4] [--compare-max-bytes 16M]
#          [--compare-world-sizes 2,3,4] [--compare-type float] [--cluster-max-bytes 16M]
#          [--rate 1gbit] [--jmh "JMH options"]
#   --max-bytes is the sweep's largest size, --compare-max-bytes Open MPI's and ringstar's in (b).
#   --quick   small sizes and few iterations, to check that everything works (2-4 minutes);
#             writes under bench/target/benchmarks-quick/ and leaves BENCHMARKS.md alone.
#   --report-only   write the report again from the last run's files (with --quick: the quick
#             run's), without running anything.
#   To go bigger: --max-bytes 256M --compare-max-bytes 256M --compare-type both
#   --cluster-max-bytes 64M --jmh "-f 1 -wi 3 -i 5".
# Needs root for the emulated cluster (the step is reported as skipped otherwise), Open MPI
# (installed by compare-mpi.sh when missing), JDK 17 and Maven (the jar is rebuilt first).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1

quick=0 report_only=0 max_bytes=16M compare_max_bytes=16M world_size=4 compare_world_sizes=2,3,4
compare_type=float cluster_max_bytes=16M rate=1gbit jmh_options="-f 1 -wi 1 -w 1s -i 2 -r 1s"
args_given="$*"
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1; shift; continue ;;
    --report-only) report_only=1; shift; continue ;;
  esac
  [ $# -ge 2 ] || usage
  case $1 in
    --max-bytes) max_bytes=$2 ;;
    --compare-max-bytes) compare_max_bytes=$2 ;;
    --world-size) world_size=$2 ;;
    --compare-world-sizes) compare_world_sizes=$2 ;;
    --compare-type) compare_type=$2 ;;
    --cluster-max-bytes) cluster_max_bytes=$2 ;;
    --rate) rate=$2 ;;
    --jmh) jmh_options=$2 ;;
    *) usage ;;
  esac
  shift 2
done
sweep_extra=() compare_extra=() cluster_extra=() jmh_java=()
if [ "$quick" = 1 ]; then
  results=bench/target/benchmarks-quick/results
  report=bench/target/benchmarks-quick/BENCHMARKS.md
  log=bench/target/benchmarks-quick/benchmarks.log
  max_bytes=256K compare_max_bytes=256K compare_world_sizes=2,3 cluster_max_bytes=1M
  sweep_extra=(--iters 20 --warmup 5) compare_extra=(--iters 10) cluster_extra=(--world-sizes "2,4" --iters 5 --warmup 1)
  # A smoke run must not fail because another JMH run holds JMH's lock; a real run waits for none.
  jmh_options="-f 1 -wi 0 -i 1 -r 200ms -p bytes=1024"
  jmh_java=(-Djmh.ignoreLock=true)
else
  results=bench/results
  report=BENCHMARKS.md
  # The log is long and not worth committing; the results and the report are.
  log=bench/target/benchmarks.log
fi
mkdir -p "$results" "$(dirname "$log")"
jar=bench/target/ringstar.jar
# What the report needs to know about the run, kept with its results so --report-only can reuse it.
run_file=$results/run.txt
steps_file=$results/steps.txt

# step NAME COMMAND...: runs the command, echoing it, its output to the terminal and the log,
# records in steps.txt how long it took and whether it passed, and returns the command's status.
# Called on the left of `||`, where set -e does not act inside it.
step() {
  local name=$1 begin status=0
  shift
  echo "== $name: $*" | tee -a "$log"
  begin=$(date +%s)
  # With pipefail the pipeline's status is the command's unless tee itself fails.
  "$@" 2>&1 | tee -a "$log" || status=$?
  # Tab-separated: commands hold '|' (JMH's regular expression), never a tab.
  printf '%s\t%s\t%s\t%s\n' "$name" "$*" "$(( $(date +%s) - begin ))" "$status" >> "$steps_file"
  return "$status"
}

if [ "$report_only" = 0 ]; then
  started=$(date +%s)
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  : > "$log"
  : > "$steps_file"
  # This run's steps.txt must not be reported with the previous run's run.txt (--report-only).
  rm -f "$run_file"
  # `mvn package` without clean leaves the last jar when it fails: with it gone, a failed build
  # cannot be followed by benchmarks of old code. Nothing is measured or written after a failed build.
  rm -f "$jar"
  if ! step build mvn -B -q -DskipTests package || [ ! -f "$jar" ]; then
    echo "benchmarks.sh: the build failed or made no $jar (see $log); nothing measured, $report left as it was" >&2
    exit 1
  fi
  # A step that fails must not leave the previous run's files to be reported as this run's.
  rm -rf "$results"/sweep*.csv "$results"/sweep*.png "$results/compare-mpi" "$results/cluster" "$results/jmh.csv"

  # From here a failed step (`|| true`) is recorded in steps.txt and shown in the report, the run
  # goes on to the next step, and the script exits 1 after writing the report.
  # One run and one chart per type: 12 lines on a chart can be told apart, 24 hardly.
  for type in float double; do
    step "sweep-$type" java -jar "$jar" bench --world-size "$world_size" --transport inproc,netty,aeron --type "$type" \
      --op all --algorithm both --max-bytes "$max_bytes" "${sweep_extra[@]}" --output "$results/sweep-$type.csv" \
      --plot "$results/sweep-$type.png" || true
  done
  parts=()
  for type in float double; do [ ! -s "$results/sweep-$type.csv" ] || parts+=("$results/sweep-$type.csv"); done
  if [ ${#parts[@]} -gt 0 ]; then
    awk 'FNR > 1 || NR == 1' "${parts[@]}" > "$results/sweep.csv"
    rm -f "${parts[@]}"
  fi

  step compare-mpi bench/compare-mpi.sh --world-sizes "$compare_world_sizes" --max-bytes "$compare_max_bytes" --runs 1 \
    --type "$compare_type" "${compare_extra[@]}" --out "$results/compare-mpi" || true

  if [ "$(id -u)" = 0 ]; then
    step cluster bench/cluster.sh --max-bytes "$cluster_max_bytes" --rate "$rate" "${cluster_extra[@]}" \
      --out "$results/cluster" || true
  fi

  # JMH: whichever of the reduction, message-header and ping-pong benchmarks this jar has.
  jmh_classes=$(java -jar "$jar" jmh -l 2>/dev/null | grep -oE '[A-Za-z]*(Reduction|Header|PingPong)[A-Za-z]*Benchmark' \
    | sort -u | paste -sd'|' || true)
  if [ -n "$jmh_classes" ]; then
    read -r -a jmh_flags <<< "$jmh_options"
    step jmh java "${jmh_java[@]}" -jar "$jar" jmh "${jmh_flags[@]}" -rf csv -rff "$results/jmh.csv" "($jmh_classes)" \
      || true
  fi
  finished=$(date +%s)
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  printf '%s\n' "$started" "$finished" "$load_before" "$load_after" "$args_given" "$world_size" \
    "$compare_world_sizes" "$compare_type" "$rate" > "$run_file"
fi
[ -s "$run_file" ] || { echo "benchmarks.sh: no earlier run in $results to report on" >&2; exit 1; }
{ read -r started; read -r finished; read -r load_before; read -r load_after; read -r args_given; read -r world_size
  read -r compare_world_sizes; read -r compare_type; read -r rate; } < "$run_file"
mapfile -t steps < "$steps_file"

# ---- BENCHMARKS.md, from the files above -------------------------------------------------------

# busbw_table CSV TYPE: busbw (GB/s) per size (powers of 4, and the largest) and per transport,
# algorithm and op, for one type.
busbw_table() {
  awk -F, -v type="$2" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["type"] == type {
      c = $col["transport"] " " $col["algorithm"] " " $col["op"]
      if (!(c in seen)) { seen[c] = 1; cols[++k] = c }
      s = $col["size_bytes"] + 0; sizes[s] = 1; if (s > largest) largest = s
      cell[s, c] = $col["wrong"] != 0 ? "wrong" : sprintf("%.3g", $col["busbw_gbps"])
    }
    function label(bytes) {
      return bytes >= 1048576 ? bytes / 1048576 " MiB" : bytes >= 1024 ? bytes / 1024 " KiB" : bytes " B"
    }
    END {
      if (!k) exit
      printf "| size |"; for (i = 1; i <= k; i++) printf " %s |", cols[i]
      printf "\n|---:|"; for (i = 1; i <= k; i++) printf "---:|"; printf "\n"
      for (s = 1; s <= largest; s *= 2) {
        if (!(s in sizes)) continue
        for (p = s; p > 1 && p % 4 == 0; p /= 4) ;
        if (p != 1 && s != largest) continue
        printf "| %s |", label(s); for (i = 1; i <= k; i++) printf " %s |", cell[s, cols[i]]; printf "\n"
      }
    }' "$1"
}

# jmh_table CSV: JMH's CSV as a table; of a sample-time benchmark only the mean, p50 and p99;
# the secondary score ":bytes" (bytes per second) in GB/s.
jmh_table() {
  awk -F, '
    # JMH writes CSV with CRLF line ends and every text quoted.
    { gsub(/["\r]/, "") }
    NR == 1 {
      print "| benchmark | parameters | score | ± (99.9%) | unit |"; print "|---|---|---:|---:|---|"
      for (i = 1; i <= NF; i++) { col[$i] = i; if ($i ~ /^Param: /) { params[++np] = i; pname[i] = substr($i, 8) } }
      next
    }
    {
      # From the class on: io.ringstar.transport.netty.FrameHeaderBenchmark.write -> FrameHeaderBenchmark.write
      name = $col["Benchmark"]; if (match(name, /[A-Za-z0-9]+Benchmark\./)) name = substr(name, RSTART)
      if (name ~ /:p/ && name !~ /:p0\.50$/ && name !~ /:p0\.99$/) next
      p = ""; for (i = 1; i <= np; i++) if ($params[i] != "") p = p (p == "" ? "" : ", ") pname[params[i]] "=" $params[i]
      score = $col["Score"]; error = $col["Score Error (99.9%)"]; unit = $col["Unit"]
      if (name ~ /:bytes$/) { score /= 1e9; if (error != "NaN") error /= 1e9; unit = "GB/s" }
      printf "| %s | %s | %.4g | %s | %s |\n", name, p, score, error == "NaN" ? "" : sprintf("%.2g", error), unit
    }' "$1"
}

# pick CSV CONDITION FIELD: FIELD of the row with the largest size among the rows for which
# CONDITION holds, an awk expression over v("column name"); empty when no row does.
pick() {
  awk -F, -v field="$3" '
    function v(name) { return $col[name] }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    ('"$2"') && v("size_bytes") + 0 >= best { best = v("size_bytes") + 0; found = v(field) }
    END { if (best) print found }' "$1"
}

# jmh_bytes CSV REGEX: "GB/s bytes" of the JMH benchmark matching REGEX at its largest parameter
# bytes (its secondary score :bytes is bytes per second); empty when there is none.
jmh_bytes() {
  [ -s "$1" ] || return 0
  awk -F, -v want="$2" '
    # JMH writes CSV with CRLF line ends and every text quoted.
    { gsub(/["\r]/, "") }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    ($col["Benchmark"] ~ want) && $col["Param: bytes"] + 0 >= best { best = $col["Param: bytes"] + 0; score = $col["Score"] }
    END { if (best) printf "%.2f %d\n", score / 1e9, best }' "$1"
}

# bytes_label N: 64 MiB, 4 KiB, 8 B.
bytes_label() {
  awk -v b="$1" 'BEGIN { print (b >= 1048576 ? b / 1048576 " MiB" : b >= 1024 ? b / 1024 " KiB" : b " B") }'
}

# outcome NAME: "passed in 12 s" or "FAILED (status 1) after 12 s" for a step run above, or "not run".
outcome() {
  local entry name command seconds status
  for entry in "${steps[@]}"; do
    IFS=$'\t' read -r name command seconds status <<< "$entry"
    if [ "$name" = "$1" ]; then
      [ "$status" = 0 ] && echo "passed in $seconds s" || echo "FAILED (status $status) after $seconds s; see $log"
      return
    fi
  done
  echo "not run"
}

# command_of NAME: the exact command a step ran.
command_of() {
  local entry name command seconds status
  for entry in "${steps[@]}"; do
    IFS=$'\t' read -r name command seconds status <<< "$entry"
    [ "$name" != "$1" ] || echo "$command"
  done
}

sweep=$results/sweep.csv
compare=$results/compare-mpi/compare-run1.csv
jmh=$results/jmh.csv
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //' || true)
{
  echo "# ringstar benchmarks"
  echo
  echo "Generated by \`bench/benchmarks.sh${args_given:+ $args_given}\` on $(date -u -d "@$started" '+%Y-%m-%d %H:%M UTC'),"
  echo "in $(( (finished - started) / 60 )) min $(( (finished - started) % 60 )) s. Regenerate with the same command; every table and"
  echo "every sentence that judges a number below is computed from this run's files in \`$results/\`."
  echo
  echo "## Machine"
  echo
  echo "- $(env -u OMP_NUM_THREADS nproc) cores (${cpu:-model unknown}), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory, Linux $(uname -r)"
  echo "- $(java -version 2>&1 | sed -n 2p)"
  echo "- $(mpirun --version 2>/dev/null | head -1 || echo 'Open MPI: not installed')"
  echo "- load average (1, 5, 15 min) before the run: $load_before; after: $load_after"
  echo
  echo "| step | command | outcome |"
  echo "|---|---|---|"
  for entry in "${steps[@]}"; do
    IFS=$'\t' read -r name command seconds status <<< "$entry"
    # A '|' inside a table cell ends the cell unless escaped, even in code.
    echo "| $name | \`${command//|/\\|}\` | $(outcome "$name") |"
  done
  [ "$(id -u)" = 0 ] || echo "| cluster | (needs root) | not run |"

  echo
  echo "## Sweep: star and ring over every transport, ranks as threads"
  echo
  for type in float double; do
    echo "- \`$(command_of "sweep-$type")\` ($(outcome "sweep-$type"))"
  done
  echo
  echo "$world_size ranks are threads of one JVM; a call's time is the slowest rank's; busbw = size ÷ p50"
  echo "time × 2(n−1)/n for reduce, × 1 for broadcast (GB = 10⁹ B)."
  if [ -s "$sweep" ]; then
    for type in float double; do
      table=$(busbw_table "$sweep" "$type")
      [ -n "$table" ] || continue
      echo
      [ ! -s "$results/sweep-$type.png" ] || { echo "![busbw against size, $type]($results/sweep-$type.png)"; echo; }
      echo "busbw in GB/s, $type (every size is in \`$sweep\`):"
      echo
      echo "$table"
    done
    echo
    echo "Star ÷ ring, p50 time of reduce (above 1: the ring is faster):"
    echo
    bench/cluster.sh --table "$sweep" --rate none
  else
    echo
    echo "No results: the sweep wrote no CSV."
  fi

  echo
  echo "## Side by side with Open MPI, ranks as processes"
  echo
  echo "\`$(command_of compare-mpi)\` ($(outcome compare-mpi)). Open MPI runs \`bench/mpi/collectives.c\`:"
  echo "MPI_Allreduce then ÷ n (against the ring), MPI_Reduce to rank 0, ÷ n, MPI_Bcast (against the"
  echo "star's reduceGradients) and MPI_Bcast (against broadcastParams), over shared memory (\`mpi-shm\`)"
  echo "and TCP on loopback (\`mpi-tcp\`). Its time per call is the slowest rank's; ringstar's, in"
  echo "processes, is rank 0's. Each cell is ringstar's busbw ÷ Open MPI's at the same size, type and"
  echo "world size (above 1: ringstar is faster). All rows: \`$compare\`."
  if [ -s "$compare" ]; then
    bench/compare-mpi.sh --ratios "$compare"
  else
    echo
    echo "No results: compare-mpi.sh wrote no CSV."
  fi

  echo
  echo "## Emulated cluster: star against ring on shaped links"
  echo
  echo "\`$(command_of cluster)\` ($(outcome cluster)). Four network namespaces on a"
  echo "bridge, each link shaped to $rate in both directions with tc's tbf, one rank (one JVM) per"
  echo "namespace over Netty; rank 0's p50 time. Above 1: the ring is faster. Once the links are the"
  echo "limit, star ÷ ring tends to n/2: rank 0 of the star receives and sends n−1 copies of the data"
  echo "(it streams each averaged chunk back while the next ones arrive, so both directions of its link"
  echo "are busy at once), each ring rank 2(n−1)/n of one."
  echo
  if [ -s "$results/cluster/cluster.md" ]; then
    cat "$results/cluster/cluster.md"
  else
    echo "No results: the cluster step did not run or wrote no table."
  fi

  echo
  echo "## JMH"
  echo
  echo "\`$(command_of jmh)\` ($(outcome jmh)). Short runs: scores with one fork and few iterations are"
  echo "indications, not precise values."
  echo
  if [ -s "$jmh" ]; then
    jmh_table "$jmh"
  else
    echo "No results: JMH wrote no CSV."
  fi

  echo
  echo "## What limits each number"
  echo
  copy=$(jmh_bytes "$jmh" 'ReductionBenchmark\.copy:bytes')
  add=$(jmh_bytes "$jmh" 'ReductionBenchmark\.addFloat:bytes')
  inproc_size='' inproc_busbw=''
  if [ -s "$sweep" ]; then
    inproc='v("transport") == "inproc" && v("algorithm") == "ring" && v("op") == "reduce" && v("type") == "float"'
    inproc_size=$(pick "$sweep" "$inproc" size_bytes)
    inproc_busbw=$(pick "$sweep" "$inproc" busbw_gbps)
  fi
  if [ -n "$copy" ] && [ -n "$inproc_busbw" ]; then
    read -r copy_gbps copy_size <<< "$copy"
    read -r add_gbps _ <<< "${add:-? 0}"
    share=$(awk -v a="$inproc_busbw" -v c="$copy_gbps" 'BEGIN { printf "%.2g", a / c }')
    echo "- **Copies and memory bandwidth.** One thread copied a $(bytes_label "$copy_size") buffer at $copy_gbps GB/s"
    echo "  and added floats into one at $add_gbps GB/s (JMH, ReductionBenchmark). The ring in one JVM"
    echo "  (inproc, no network) reached a busbw of $(printf '%.2f' "$inproc_busbw") GB/s at $(bytes_label "$inproc_size"),"
    echo "  ${share}× that copy speed. In-process ranks share no wire, so that time is their own work on"
    echo "  shared cores: packing into and out of buckets, the transport's copies, the additions, and"
    echo "  waiting for one another."
  fi
  cores=$(env -u OMP_NUM_THREADS nproc)
  echo "- **Cores.** This machine has $cores cores. The sweep runs $world_size ranks, compare-mpi.sh up to"
  echo "  ${compare_world_sizes##*,} processes (plus a media driver for Aeron IPC), all on those cores; load"
  echo "  before the run: $load_before."
  if [ -s "$compare" ]; then
    shm=$(for n in ${compare_world_sizes//,/ }; do
      b=$(pick "$compare" "v(\"transport\") == \"mpi-shm\" && v(\"algorithm\") == \"mpi\" && v(\"op\") == \"reduce\" \
        && v(\"type\") == \"$compare_type\" && v(\"world_size\") == $n" busbw_gbps)
      [ -z "$b" ] || printf '%s %.2f GB/s at n=%s' "${sep:-}" "$b" "$n"
      sep=','
    done)
    size=$(pick "$compare" 'v("transport") == "mpi-shm"' size_bytes)
    echo "  Open MPI's shared-memory MPI_Allreduce at $(bytes_label "$size") ($compare_type), busbw:$shm."
  fi
  if [ -s "$results/cluster/cluster.csv" ]; then
    echo "- **The emulated link.** Every link was shaped to $rate each way. At the largest size the"
    echo "  ring's busbw (what each rank sent per second, ×8 for bits) was:"
    awk -F, '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $col["algorithm"] == "ring" && $col["size_bytes"] + 0 >= largest[$col["world_size"]] {
        largest[$col["world_size"]] = $col["size_bytes"] + 0; gbit[$col["world_size"]] = $col["busbw_gbps"] * 8
      }
      END { for (w = 2; w <= 64; w++) if (w in gbit) { printf "%s%.2f Gbit/s at n=%d", sep, gbit[w], w; sep = ", " }
        print "." }
    ' "$results/cluster/cluster.csv" | sed 's/^/  /'
  fi
  if [ -s "$sweep" ]; then
    awk -F, '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $col["time_p50_us"] > 0 { r = $col["time_p99_us"] / $col["time_p50_us"]; ratio[++n] = r
        if (r > worst) { worst = r; at = $col["transport"] " " $col["algorithm"] " " $col["op"] " " $col["type"] " at " $col["size_bytes"] " B" } }
      END {
        if (!n) exit
        for (i = 2; i <= n; i++) for (j = i; j > 1 && ratio[j - 1] > ratio[j]; j--) { t = ratio[j]; ratio[j] = ratio[j - 1]; ratio[j - 1] = t }
        printf "- **JIT, garbage collection and scheduling.** Timed calls follow untimed warm-up calls, but\n"
        printf "  a call that waits for a compilation, a collection or a core shows in p99. Over the sweep'"'"'s\n"
        printf "  %d rows, p99 ÷ p50 has median %.2f and maximum %.2f (%s).\n", n, ratio[int((n + 1) / 2)], worst, at
      }' "$sweep"
  fi
} > "$report.tmp"
mv "$report.tmp" "$report"
echo "== wrote $report ($(( (finished - started) / 60 )) min $(( (finished - started) % 60 )) s of benchmarks)"
for entry in "${steps[@]}"; do
  IFS=$'\t' read -r name command seconds status <<< "$entry"
  [ "$status" = 0 ] || { echo "benchmarks.sh: step $name failed; see $log" >&2; exit 1; }
done
