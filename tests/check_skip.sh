#!/bin/sh
# A group that skips part of its tests exits 77, which CTest reports as skipped, and says
# why on a "SKIP: " line (scripts/skip-reasons prints it): test_prebuilt run where nvcc is
# out of reach (a PATH that holds only rm, which the group uses to clean up); a GPU group
# with no driver, test_gpu_bundle, whose every test would skip.
# Usage: check_skip.sh TEST_PREBUILT TEST_GPU_BUNDLE
set -u
bin=$(mktemp -d "${TMPDIR:-/tmp}/cujit-skip-XXXXXX") || exit 1
ln -s "$(command -v rm)" "$bin/rm"
out=$(PATH=$bin "$1" 2>&1)
rc=$?
rm -rf "$bin"
if [ $rc -ne 77 ]; then
  echo "test_prebuilt without nvcc exited $rc, not 77 (skipped):"
  echo "$out" | tail -20
  exit 1
fi
case $out in
  *"SKIP: fatbin_from_nvcc: nvcc is not on PATH"*) ;;
  *) echo "test_prebuilt without nvcc printed no SKIP line with its reason:"; echo "$out"; exit 1 ;;
esac
CUJIT_LIBCUDA=/nonexistent/libcuda.so.1 "$2" >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] || { echo "test_gpu_bundle without a driver exited $rc, not 77 (skipped)"; exit 1; }
