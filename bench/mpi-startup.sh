#!/bin/sh
# mpi-startup.sh SAMPLE [RANKS [REPEATS [HEADER]]]: the start-up of an MPI job whose ranks all
# build the same kernels with an empty cache, four ways, timed by the MPI sample
# (samples/mpi_compile_once.c, "every rank had its modules after ... s"):
#   alone      every rank has its own empty disk cache and compiles everything itself
#   shared     the ranks share one disk cache: one rank compiles each module, the rest wait
#   broadcast  rank 0 compiles without a cache and MPI_Bcast sends the export to the rest
#   redis      every rank has its own empty disk cache, all behind one Redis (a cluster
#              without a shared file system): one rank compiles, the rest read the tier
# Each way runs REPEATS times (default 3) from empty caches (Redis flushed), in a job of
# its own (so each is the ranks' first compile, which loads NVRTC); the table gives
# the fastest and the median, and the NVRTC compiles the job took per module. HEADER
# (default cub/block/block_reduce.cuh; "none" for the bare kernels) is included atop every
# source, as real kernels include heavy headers. The redis row needs redis-server and
# redis-cli on PATH and is left out, saying why, without them.
set -u
sample=${1:?usage: mpi-startup.sh SAMPLE [RANKS [REPEATS [HEADER]]]}
ranks=${2:-8}
repeats=${3:-3}
header=${4:-cub/block/block_reduce.cuh}
mpiexec=$(command -v mpirun || command -v mpiexec) || { echo "mpi-startup: no mpirun" >&2; exit 1; }
mpiargs="-np $ranks"
if "$mpiexec" --version 2>&1 | grep -qE "Open MPI|OpenRTE|open-mpi"; then
  mpiargs="$mpiargs --oversubscribe -x BASE -x CUJIT_CACHE_DIR -x CUJIT_CACHE_REMOTE"
  [ "$(id -u)" = 0 ] && mpiargs="$mpiargs --allow-run-as-root"
fi
inc=""
[ "$header" != none ] && inc="--include $header"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-mpi-startup-XXXXXX") || exit 1
redis_pid=""
trap '[ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export BASE="$tmp/caches" CUJIT_CACHE_DIR="$tmp/shared" CUJIT_CACHE_REMOTE=""

# shellcheck disable=SC2086 # $mpiargs and $inc are lists of words without spaces
# One run of way $2 (1 or 2): prints "<seconds> <NVRTC compiles per module>".
# $1 = per-rank (every rank its own cache directory under $BASE) or shared.
run_once() {
  rm -rf "$BASE" "$CUJIT_CACHE_DIR"
  mkdir -p "$BASE"
  if [ "$1" = per-rank ]; then
    # shellcheck disable=SC2016 # expanded by each rank's shell
    out=$("$mpiexec" $mpiargs sh -c 'CUJIT_CACHE_DIR="$BASE/r$OMPI_COMM_WORLD_RANK$PMI_RANK" exec "$0" "$@"' \
          "$sample" --compile-only --way "$2" $inc 2>&1)
  else
    out=$("$mpiexec" $mpiargs "$sample" --compile-only --way "$2" $inc 2>&1)
  fi || { echo "mpi-startup: the job failed:" >&2; echo "$out" >&2; return 1; }
  t=$(echo "$out" | sed -n "s/^way $2: every rank had its modules after \\([0-9.]*\\) s\$/\\1/p")
  c=$(echo "$out" | sed -n "s/^way $2 (.*: \\([0-9]*\\) NVRTC compiles* across.*/\\1/p" | paste -sd/ -)
  [ -n "$t" ] && [ -n "$c" ] || { echo "mpi-startup: no timing in the job's output:" >&2; echo "$out" >&2; return 1; }
  echo "$t $c"
}

stats() { # fastest and median of the numbers on stdin
  sort -n | awk '{ v[NR] = $1 } END { printf "%.3f %.3f", v[1], v[int((NR + 1) / 2)] }'
}

way() { # $1 label, $2 per-rank|shared, $3 the sample's way (1 or 2)
  label=$1 mode=$2 which=$3
  : >"$tmp/times"
  i=0
  while [ $i -lt "$repeats" ]; do
    [ -n "$CUJIT_CACHE_REMOTE" ] && redis-cli -p "$port" flushall >/dev/null
    r=$(run_once "$mode" "$which") || return 1
    echo "${r% *}" >>"$tmp/times"
    compiles=${r#* }
    i=$((i + 1))
  done
  s=$(stats <"$tmp/times")
  printf '%-10s %8s %8s   %s\n' "$label" "${s% *}" "${s#* }" "$compiles"
}

echo "MPI start-up, $ranks ranks, empty caches, $repeats runs each, header: $header"
printf '%-10s %8s %8s   %s\n' way "best s" "median s" "NVRTC compiles per module in the job"
way alone per-rank 1
way shared shared 1
way broadcast shared 2
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
  port=$((20000 + $$ % 20000))
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --dir "$tmp" \
    >"$tmp/redis.log" 2>&1 &
  redis_pid=$!
  n=0
  until redis-cli -p "$port" ping >/dev/null 2>&1; do
    n=$((n + 1)); [ $n -gt 50 ] && { echo "mpi-startup: redis-server did not start" >&2; exit 1; }
    sleep 0.1
  done
  export CUJIT_CACHE_REMOTE="redis://127.0.0.1:$port/0"
  way redis per-rank 1
else
  echo "redis      (left out: redis-server or redis-cli is not on PATH)"
fi
