#!/bin/sh
# The quick-start scripts' own behaviour, without touching the machine's packages:
# - scripts/deps asks apt to wait for another apt's lock (DPkg::Lock::Timeout) instead of
#   failing at once: run with a dpkg-query that reports a package missing and an apt-get
#   that records its arguments;
# - scripts/skip-reasons prints each skipped group's reason from a ctest log;
# - scripts/check-layers refuses an include from a layer above, on a tree made for it.
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
mkdir -p "$tmp/tree/scripts" "$tmp/tree/src/low" "$tmp/tree/src/high"
cp "$src/scripts/check-layers" "$tmp/tree/scripts/"
echo "Layers, bottom first: low high" >"$tmp/tree/src/README.md"
printf '#include "low/low.h"\n' >"$tmp/tree/src/high/high.c"
printf '#include "low/other.h"\n' >"$tmp/tree/src/low/low.c"
sh "$tmp/tree/scripts/check-layers" >/dev/null || { echo "check-layers refused a good tree"; exit 1; }
printf '#include "high/high.h"\n' >"$tmp/tree/src/low/low.c"
out=$(sh "$tmp/tree/scripts/check-layers" || true)
case $out in *"low/low.c:1: low (layer low) includes high/high.h"*) ;; *)
  echo "check-layers let an upward include pass: $out"; exit 1;; esac
mkdir "$tmp/tree/src/stray"
out=$(sh "$tmp/tree/scripts/check-layers" 2>&1 || true)
case $out in *"src/stray is not in src/README.md"*) ;; *)
  echo "check-layers let a folder outside the layer list pass: $out"; exit 1;; esac
echo "scripts: deps waits for apt's lock; skip reasons are shown; layers are checked"
