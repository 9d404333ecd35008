#!/bin/sh
# check_mpi.sh SAMPLE [MPIEXEC [launch]]: runs the MPI sample (samples/mpi_compile_once.c) on
# 8 ranks in compile-only mode with a fresh cache directory, and checks that each way (shared
# disk cache; rank 0 compiles, broadcasts and the others import) compiled each module
# exactly once in the whole job. With "launch" (on a GPU machine) the ranks also launch the
# kernels, and every rank's results must check. Exits 77 (skipped) saying why when the
# sample was not built or mpirun is not installed.
set -u
sample=${1:-}
mpiexec=${2:-}
mode=--compile-only
[ "${3:-}" = launch ] && mode=""
ranks=8
if [ -z "$sample" ] || [ ! -x "$sample" ]; then
  echo "SKIP: the MPI sample was not built: CMake found no MPI for C (on Debian or Ubuntu:" \
       "apt-get install libopenmpi-dev openmpi-bin, then configure again)"
  exit 77
fi
[ -n "$mpiexec" ] && [ -x "$mpiexec" ] || mpiexec=$(command -v mpirun || command -v mpiexec || true)
if [ -z "$mpiexec" ]; then
  echo "SKIP: mpirun is not installed (on Debian or Ubuntu: apt-get install openmpi-bin)"
  exit 77
fi
set -- -np "$ranks"
if "$mpiexec" --version 2>&1 | grep -qE "Open MPI|OpenRTE|open-mpi"; then
  # more ranks than cores; as root only when running as root; the cache directory passed on
  set -- "$@" --oversubscribe -x CUJIT_CACHE_DIR
  [ "$(id -u)" = 0 ] && set -- "$@" --allow-run-as-root
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/cujit-mpi-XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
export CUJIT_CACHE_DIR="$dir/cache"
out=$("$mpiexec" "$@" "$sample" $mode 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
  echo "FAIL: $mpiexec $* $sample $mode exited with $rc"
  exit 1
fi
if [ -z "$mode" ] && ! echo "$out" | grep -q "^Success: $ranks ranks launched"; then
  echo "FAIL: the ranks did not all launch and check their kernels"
  exit 1
fi
lines=$(echo "$out" | grep -c "^way [12] (.*NVRTC compile")
once=$(echo "$out" | grep -c "^way [12] (.*: 1 NVRTC compile across $ranks ranks$")
if [ "$lines" -lt 2 ] || [ "$once" -ne "$lines" ]; then
  echo "FAIL: every module of each way should take 1 NVRTC compile in the job ($once of $lines did)"
  exit 1
fi
for way in 1 2; do
  echo "$out" | grep -q "^way $way (" || { echo "FAIL: no report of way $way"; exit 1; }
done
echo "PASS: $lines modules, each compiled once by $ranks ranks"
