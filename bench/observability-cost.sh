#!/usr/bin/env bash
# What the default observability costs a collective (issue 27): ObservabilityCostBenchmark (JMH,
# one Communicator.allReduce of 2 ranks in one JVM, rank 0 sampled per call) with the flight
# recorder and stall warning as by default, turned off (traceEntries=0, stallWarning=off), and by
# default under a JFR recording of ringstar.Collective. The three run in turn, each in a fork of its
# own, REPS times per transport and size (this machine is noisy: alternating spreads the noise over
# all three); then the medians of each one's p50, and the median of the per-round ratios to "off".
#
# Usage: bench/observability-cost.sh   (environment: REPS=3, TRANSPORTS="inproc netty",
#        SIZES="1024 1048576", OUT=observability-cost.txt)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reps=${REPS:-3}
out=${OUT:-observability-cost.txt}
: > "$out"
for transport in ${TRANSPORTS:-inproc netty}; do
  for bytes in ${SIZES:-1024 1048576}; do
    for rep in $(seq 1 "$reps"); do
      for variant in "default false" "off false" "default true"; do
        set -- $variant
        p50=$("$here/ringstar" jmh ObservabilityCostBenchmark -p transport="$transport" -p bytes="$bytes" \
            -p trace="$1" -p jfr="$2" -wi 3 -i 5 -w 1 -r 1 -f 1 2>&1 | awk '/allReduce:p0.50/ {print $(NF-1)}')
        if [ -z "$p50" ]; then
          echo "observability-cost: no p50 from the run of $transport $bytes trace=$1 jfr=$2" >&2
          exit 1
        fi
        echo "$transport $bytes trace=$1 jfr=$2 rep=$rep p50=$p50" | tee -a "$out"
      done
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    transport, size, trace, jfr, _rep, p50 = line.split()
    runs[(transport, size, trace, jfr)].append(float(p50.split('=')[1]))
for key, values in sorted(runs.items()):
    print(f"{key[0]:6} {key[1]:>8} {key[2]:14} {key[3]:9} p50 median {statistics.median(values):9.3f} us  {values}")
for transport, size in sorted({(key[0], key[1]) for key in runs}):
    off = runs[(transport, size, 'trace=off', 'jfr=false')]
    default = runs[(transport, size, 'trace=default', 'jfr=false')]
    jfr = runs[(transport, size, 'trace=default', 'jfr=true')]
    print(f"{transport:6} {size:>8}: default/off {statistics.median(d / o for d, o in zip(default, off)):.3f}, "
          f"default with JFR/off {statistics.median(j / o for j, o in zip(jfr, off)):.3f} (medians of per-round ratios)")
PY
