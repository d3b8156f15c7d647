# The prologue of the benchmark scripts (bench/*.sh), sourced right after their `set -euo pipefail`:
#   - moves to the repository's root and gives each rank one native thread;
#   - usage: the script's header comment (line 2 up to `set -euo`) on stderr, exit 2;
#   - parse_flags: --name VALUE flags into variables;
#   - at_exit: cleanup commands run once however the script ends (Ctrl-C and SIGTERM included);
#   - the jar (built when missing), `ringstar report` for every table, Open MPI's program.
# shellcheck shell=bash
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1

# Relative to the root, so that the commands the scripts print (and the report quotes) stay short.
jar=bench/target/ringstar.jar

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# parse_flags "NAME... SWITCH!..." "$@": every --NAME VALUE sets the variable NAME (dashes become
# underscores) to VALUE, every --SWITCH sets SWITCH to 1; any other argument, or a flag without its
# value, prints the usage and exits 2. The caller sets the defaults first.
parse_flags() {
  local spec=" ${1//[[:space:]]/ } " flag
  shift
  while [ $# -gt 0 ]; do
    flag=${1#--}
    if [ "--$flag" = "$1" ] && [[ $spec == *" $flag! "* ]]; then
      printf -v "${flag//-/_}" 1
      shift
    elif [ "--$flag" = "$1" ] && [[ $spec == *" $flag "* ]] && [ $# -ge 2 ]; then
      printf -v "${flag//-/_}" '%s' "$2"
      shift 2
    else
      usage
    fi
  done
}

# at_exit COMMAND: runs COMMAND (with eval) when the script ends, after any added later; a failing
# one does not stop the others. An interrupt or SIGTERM ends the script with 130, cleanups included:
# bash runs a trap only between commands, so long waits should be `wait`s on background jobs.
exit_actions=()
at_exit() {
  exit_actions+=("$1")
}
# shellcheck disable=SC2317  # called by the trap
run_exit_actions() {
  local i
  for ((i = ${#exit_actions[@]} - 1; i >= 0; i--)); do
    eval "${exit_actions[i]}" || true
  done
}
trap run_exit_actions EXIT
trap 'exit 130' INT TERM

# ensure_jar: builds bench/target/ringstar.jar when it is missing (./ringstar does, once).
ensure_jar() {
  [ -f "$jar" ] || ./ringstar --help > /dev/null
}

# report ARGS...: `ringstar report ARGS...`, which computes every table of the scripts from their CSV files.
report() {
  ensure_jar
  java -jar "$jar" report "$@"
}

# build_mpi_program: compiles Open MPI's side of the comparisons, bench/mpi/collectives.c, into
# bench/target/mpi/collectives. -O3: at -O2 gcc leaves the average's divide loop scalar, and that
# loop, not Open MPI, then dominated the time (1 MiB: about 0.5-4 ms instead of 0.15 ms on the
# 2-core machine).
build_mpi_program() {
  mkdir -p bench/target/mpi
  mpicc -O3 -o bench/target/mpi/collectives bench/mpi/collectives.c
}
