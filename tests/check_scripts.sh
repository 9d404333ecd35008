#!/bin/sh
# The quick-start scripts' own behaviour, without touching the machine's packages:
# - scripts/deps asks apt to wait for another apt's lock (DPkg::Lock::Timeout) instead of
#   failing at once: run with a dpkg-query that reports a package missing and an apt-get
#   that records its arguments;
# - scripts/skip-reasons prints each skipped group's reason from a ctest log.
# Usage: check_scripts.sh SOURCE_DIR
set -eu
src=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-scripts-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'SH'
#!/bin/sh
echo "unknown ok not-installed"
SH
cat >"$tmp/bin/apt-get" <<'SH'
#!/bin/sh
echo "$*" >>"$APT_LOG"
SH
cat >"$tmp/bin/id" <<'SH'
#!/bin/sh
echo 0
SH
chmod +x "$tmp/bin/"*
APT_LOG="$tmp/apt.log" PATH="$tmp/bin:$PATH" sh "$src/scripts/deps" --tests >/dev/null
grep -q -- "-o DPkg::Lock::Timeout=600 update" "$tmp/apt.log" ||
  { echo "scripts/deps: apt-get update does not wait for the lock:"; cat "$tmp/apt.log"; exit 1; }
grep -q -- "-o DPkg::Lock::Timeout=600 install -y -qq .*libcmocka-dev" "$tmp/apt.log" ||
  { echo "scripts/deps: apt-get install does not wait for the lock:"; cat "$tmp/apt.log"; exit 1; }
cat >"$tmp/LastTest.log" <<'LOG'
5/41 Testing: test_gpu_compile
SKIP: no usable CUDA device: no CUDA driver found
6/41 Testing: test_errors
all fine
LOG
out=$(sh "$src/scripts/skip-reasons" "$tmp/LastTest.log")
[ "$out" = "skipped test_gpu_compile: no usable CUDA device: no CUDA driver found" ] ||
  { echo "scripts/skip-reasons printed: $out"; exit 1; }
echo "scripts: deps waits for apt's lock; skip reasons are shown"
