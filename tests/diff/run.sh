#!/bin/sh
# Runs difftest.py with a Python that has NumPy: $CUJIT_DIFFTEST_PYTHON, else the build's
# own environment (scripts/pyenv makes BUILD/pyenv), else python3. Without NumPy it skips
# (exit 77), saying why. Usage: run.sh BUILD_DIR [difftest.py arguments]
# With --faults it runs the harness against the simulated cujit, as GPU mode checks and as
# CPU mode does: it fails unless the correct one passes and each fault is caught.
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
exec "$py" "$here/difftest.py" "$@"
