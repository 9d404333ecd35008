#!/bin/sh
# Runs difftest.py with a Python that has NumPy: $CUJIT_DIFFTEST_PYTHON, else the build's
# own environment (scripts/pyenv makes BUILD/pyenv), else python3. Without NumPy it skips
# (exit 77), saying why. Usage: run.sh BUILD_DIR [difftest.py arguments]
# With --faults it also runs the harness against each fault of the simulated cujit (as
# GPU mode checks, then as CPU mode does) and fails unless every one is caught.
set -u
here=$(dirname "$0")
build=$1
shift
py=${CUJIT_DIFFTEST_PYTHON:-}
[ -z "$py" ] && [ -x "$build/pyenv/bin/python" ] && py="$build/pyenv/bin/python"
[ -z "$py" ] && py=python3
if ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIP: $py has no NumPy (scripts/pyenv $build/pyenv makes an environment with it)"
  exit 77
fi
if [ "${1:-}" = "--faults" ]; then
  shift
  for f in value status type overlap stray crash; do
    if "$py" "$here/difftest.py" --mode self --no-shrink --max-reports 0 --fault "$f" "$@" \
      >/dev/null 2>&1; then
      echo "FAIL: the harness passed a simulated cujit with the fault '$f'"
      exit 1
    fi
    echo "the fault '$f' was caught"
  done
  # CPU mode's checks, where the simulated kernels write random bytes: a fault in what
  # the fake driver holds is caught (an overlap is a kernel's: not seen there)
  for f in value status type stray crash; do
    if "$py" "$here/difftest.py" --mode self --as-cpu --no-shrink --max-reports 0 \
      --fault "$f" "$@" >/dev/null 2>&1; then
      echo "FAIL: CPU mode's checks passed a simulated cujit with the fault '$f'"
      exit 1
    fi
    echo "the fault '$f' was caught by CPU mode's checks"
  done
  exit 0
fi
exec "$py" "$here/difftest.py" "$@"
