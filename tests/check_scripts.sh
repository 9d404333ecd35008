#!/bin/sh
# The quick-start scripts' own behaviour, without touching the machine's packages:
# - scripts/deps asks apt to wait for another apt's lock (DPkg::Lock::Timeout) instead of
#   failing at once: run with a dpkg-query that reports a package missing and an apt-get
#   that records its arguments; README.md names exactly the packages it installs;
# - scripts/skip-reasons prints each skipped group's reason from a ctest log;
# - scripts/check-layers refuses an include from a layer above or from a sibling, a circle of
#   layers, a folder it does not know, a folder of more than 4,000 lines, a call to a layer
#   above, a circle between files, a file name used twice, an internal name with another
#   folder's word and a word listed for two folders, each on a tree made for it;
# - scripts/sample-lines counts a made-up Python text and samples as docs/samples.md says (error
#   handling, declarations and frees count; checks, preprocessor lines and braces do not),
#   and refuses a sample over the limit;
# - scripts/plot-bench --history writes a benchmark CSV's rows as the history's rows.
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
# README.md's quick start names exactly the packages scripts/deps installs, with and
# without --tests
APT_LOG="$tmp/apt-base.log" PATH="$tmp/bin:$PATH" sh "$src/scripts/deps" >/dev/null
base=$(sed -n 's/.* install -y -qq //p' "$tmp/apt-base.log")
all=$(sed -n 's/.* install -y -qq //p' "$tmp/apt.log")
for list in "$base" "${all#"$base "}"; do
  tr '\n' ' ' <"$src/README.md" | grep -qF "(\`$list\`" ||
    { echo "README.md's quick start does not name the packages scripts/deps installs: $list"; exit 1; }
done
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
printf -- "- \`low/\` on nothing\\n- \`high/\` on \`low/\`\\n\\n\`low.c\` \`high.c\`\\n" >"$tmp/tree/src/README.md"
printf '#include "low/low.h"\n' >"$tmp/tree/src/high/high.c"
printf '#include "low/other.h"\n' >"$tmp/tree/src/low/low.c"
sh "$tmp/tree/scripts/check-layers" >/dev/null || { echo "check-layers refused a good tree"; exit 1; }
printf '#include "high/high.h"\n' >"$tmp/tree/src/low/low.c"
out=$(sh "$tmp/tree/scripts/check-layers" || true)
case $out in *"low/low.c:1: low/ includes high/high.h, but low/ does not stand on high/"*) ;; *)
  echo "check-layers let an upward include pass: $out"; exit 1;; esac
# Siblings: side/ stands on low/ as high/ does; high/ including side/ is refused, as is a
# circle of layer lines.
mkdir "$tmp/tree/src/side"
printf '#include "low/other.h"\n' >"$tmp/tree/src/low/low.c"
printf '#include "low/low.h"\n' >"$tmp/tree/src/side/side.c"
cp "$tmp/tree/src/README.md" "$tmp/README.two"
cat >"$tmp/tree/src/README.md" <<'MD'
- `low/` on nothing
- `high/` on `low/`
- `side/` on `low/`

`low.c` `high.c` `side.c`
MD
sh "$tmp/tree/scripts/check-layers" >/dev/null || { echo "check-layers refused a tree with siblings"; exit 1; }
printf '#include "low/low.h"\n#include "side/side.h"\n' >"$tmp/tree/src/high/high.c"
out=$(sh "$tmp/tree/scripts/check-layers" || true)
case $out in *"high/high.c:2: high/ includes side/side.h, but high/ does not stand on side/"*) ;; *)
  echo "check-layers let a sibling's include pass: $out"; exit 1;; esac
sed -i 's|^- `low/` on nothing|- `low/` on `side/`|' "$tmp/tree/src/README.md"
out=$(sh "$tmp/tree/scripts/check-layers" 2>&1 || true)
case $out in *"has low/ stand on itself, round a circle of layers"*) ;; *)
  echo "check-layers let a circle of layers pass: $out"; exit 1;; esac
rm -r "$tmp/tree/src/side"
printf '#include "low/low.h"\n' >"$tmp/tree/src/high/high.c"
cp "$tmp/README.two" "$tmp/tree/src/README.md"
printf '#include "high/high.h"\n' >"$tmp/tree/src/low/low.c"
mkdir "$tmp/tree/src/stray"
out=$(sh "$tmp/tree/scripts/check-layers" 2>&1 || true)
case $out in *"src/stray is not in src/README.md's layer lines"*) ;; *)
  echo "check-layers let a folder without a layer line pass: $out"; exit 1;; esac
# A folder of 4,000 lines of .c and .h files passes; one line more is refused, and the
# message names the folder and its count.
rmdir "$tmp/tree/src/stray"
printf -- "- \`low/\` on nothing\\n- \`high/\` on \`low/\`\\n\\n\`low.c\` \`low.h\` \`high.c\`\\n" >"$tmp/tree/src/README.md"
printf '#include "low/low.h"\n' >"$tmp/tree/src/low/low.c"
seq 2 2000 | sed 's|.*|int v&;|' >>"$tmp/tree/src/low/low.c"
seq 1 2000 | sed 's|.*|extern int v&;|' >"$tmp/tree/src/low/low.h"
sh "$tmp/tree/scripts/check-layers" >/dev/null ||
  { echo "check-layers refused a folder of 4,000 lines"; exit 1; }
echo "extern int w;" >>"$tmp/tree/src/low/low.h"
out=$(sh "$tmp/tree/scripts/check-layers" 2>&1 || true)
case $out in *"src/low holds 4001 lines of .c and .h files, more than the 4000 a folder may hold"*) ;; *)
  echo "check-layers let a folder over 4,000 lines pass: $out"; exit 1;; esac
# The rules on built objects and names, on a tree made for each: a good tree passes; a call
# to a layer above, a circle between two files of one folder and a file name used twice
# are refused.
t=$tmp/tree2
objs=$t/build/src/CMakeFiles/cujit_objs.dir
mkdir -p "$t/scripts" "$t/src/low" "$t/src/high" "$objs/low" "$objs/high"
cp "$src/scripts/check-layers" "$t/scripts/"
printf -- "- \`low/\` on nothing\n- \`high/\` on \`low/\`\n\n\`a.c\` \`b.c\` \`high.c\`\n" >"$t/src/README.md"
build_objs() { # compiles every source of the made tree where a build would put its object
  for c in "$t"/src/*/*.c; do
    rel=${c#"$t/src/"}; ${CC:-cc} -c "$c" -o "$objs/$rel.o" || exit 1
  done
}
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$t/src/low/a.c"
printf 'int b(int x) { return x + 1; }\n' >"$t/src/low/b.c"
printf 'int a(int);\nint h(int x) { return a(x); }\n' >"$t/src/high/high.c"
build_objs
sh "$t/scripts/check-layers" "$t/build" >/dev/null ||
  { echo "check-layers refused a good tree with objects"; exit 1; }
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' >"$t/src/low/b.c"
build_objs
out=$(sh "$t/scripts/check-layers" "$t/build" || true)
case $out in *"a circle between files: src/low/"*"src/low/a.c (a)"*|\
             *"a circle between files: src/low/"*"src/low/b.c (b)"*) ;; *)
  echo "check-layers let a circle between two files pass: $out"; exit 1;; esac
printf 'int h(int);\nint b(int x) { return h(x); }\n' >"$t/src/low/b.c"
build_objs
out=$(sh "$t/scripts/check-layers" "$t/build" || true)
case $out in *"src/low/b.c: low/ calls h of high/, which low/ does not stand on"*) ;; *)
  echo "check-layers let a call to the layer above pass: $out"; exit 1;; esac
# An internal name's word belongs to its folder: a cj_ name of high/ with low/'s word is
# refused, and so is a word listed for two folders.
printf 'int b(int x) { return x + 1; }\nint cj_lo_one(void) { return 1; }\n' >"$t/src/low/b.c"
printf 'int a(int);\nint h(int x) { return a(x); }\nint cj_hi_two(void) { return 2; }\n' \
  >"$t/src/high/high.c"
printf -- '- `low/`: `lo`\n- `high/`: `hi`\n' >>"$t/src/README.md"
build_objs
sh "$t/scripts/check-layers" "$t/build" >/dev/null ||
  { echo "check-layers refused names with their folders' words"; exit 1; }
printf 'int a(int);\nint h(int x) { return a(x); }\nint cj_lo_two(void) { return 2; }\n' \
  >"$t/src/high/high.c"
build_objs
out=$(sh "$t/scripts/check-layers" "$t/build" || true)
case $out in *"src/high/high.c: high defines cj_lo_two, but cj_lo_ is a word of low/"*) ;; *)
  echo "check-layers let a name with another folder's word pass: $out"; exit 1;; esac
printf -- '- `high/`: `lo`\n' >>"$t/src/README.md"
out=$(sh "$t/scripts/check-layers" 2>&1 || true)
case $out in *"the word cj_lo_ is listed for more than one folder"*"low high"*) ;; *)
  echo "check-layers let a word listed for two folders pass: $out"; exit 1;; esac
printf 'int c(void) { return 0; }\n' >"$t/src/high/a.c"
out=$(sh "$t/scripts/check-layers" 2>&1 || true)
case $out in *"more than one file is named a.c: $t/src/high/a.c $t/src/low/a.c"*|\
             *"more than one file is named a.c: src/high/a.c src/low/a.c"*) ;; *)
  echo "check-layers let two files of the same name pass: $out"; exit 1;; esac
mkdir "$tmp/originals" "$tmp/samples"
cat >"$tmp/originals/007_x.txt" <<'TEXT'
Some prose before the code.

```python
import numpy
# a comment
x = numpy.ones(4)

x = x + 1
y = x * 2
assert (y == 4).all()
print(y)
print("Success")
```

In [None]:
import numpy
z = numpy.zeros(3)
v = z + 1

This line of prose ends the cell, it has many words in it.
w = 1
TEXT
printf 'one 007 1
two 007 2
' >"$tmp/samples/originals.txt"
cat >"$tmp/samples/one.c" <<'C'
/* one: five lines of Python, six here */
#include "cujit_array.h"
#define SIZE \
  4

/* check: a function that compares, in the check's paragraph */
static int differs(const float *x, const float *y) {
  return x[0] != y[0];
}

int main(void)
{
  float x[SIZE], y[SIZE];
  cujit_array *a;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a comment after code */
  cujit_array_from_host(&a, CUJIT_TYPE_F32, 1, (int64_t[]){SIZE}, x);
  /* a comment
     on two lines */
  cujit_array_read(a, y, sizeof y);

  /* check: y against the host */
  if (differs(x, y)) return 1;
  printf("Success\n");
}
C
printf 'int main(void) {
  int k = 1;
  return k;
}
' >"$tmp/samples/two.c"
out=$(sh "$src/scripts/sample-lines" "$tmp/originals" "$tmp/samples") ||
  { echo "sample-lines refused samples within the limit:"; echo "$out"; exit 1; }
counts=$(echo "$out" | awk 'NR > 1 { printf "%s %s %s %s;", $1, $3, $4, $5 }')
[ "$counts" = "one.c 5 6 1.20;two.c 3 3 1.00;" ] ||
  { echo "sample-lines counted wrong:"; echo "$out"; exit 1; }
echo "  cujit_array_destroy(a);" >"$tmp/line.c"
sed '/cujit_array_read(a/r '"$tmp/line.c" "$tmp/samples/one.c" >"$tmp/one.c"
mv "$tmp/one.c" "$tmp/samples/one.c" # a seventh line: freeing counts
printf 'one 007 1
' >"$tmp/samples/originals.txt"
out=$(sh "$src/scripts/sample-lines" "$tmp/originals" "$tmp/samples" || true)
case $out in *"one.c"*"7   1.40  over 1.3"*"1 sample(s) with more than 1.3"*) ;; *)
  echo "sample-lines let a sample over the limit pass:"; echo "$out"; exit 1;; esac
sh "$src/scripts/sample-lines" "$tmp/no-originals" "$tmp/samples" >/dev/null && exit 1
[ $? = 77 ] || { echo "sample-lines without the Python texts did not skip"; exit 1; }
# scripts/plot-bench --history turns a benchmark CSV into rows of the history
# (docs/benchmarks.md says how): the run's date, commit, device and host first (the host's
# comma made a semicolon), then the CSV's own row; skipped rows are left out.
cat >"$tmp/bench.csv" <<'CSV'
# cujit-bench 
# date: 2026-11-26 22:09:39 UTC
# device: NVIDIA H100 80GB HBM3 (sm_90)
# driver: CUDA 13.0
# NVRTC: 13.0
# cujit: 0.1.0 commit 220e383
# host: x86_64, 16 CPUs
# target: sm_90
# repetitions: full
group,metric,param,unit,cujit,baseline,ratio,allowed,goal,result
memcache,memory-cache hit: 4 KiB source,4096,ns,384.353,,,1000,<= 1000 ns,PASS
multigpu,several devices,0,,,,,,needs two CUDA devices; found 1,SKIP
CSV
out=$(sh "$src/scripts/plot-bench" --history "$tmp/bench.csv")
[ "$out" = "2026-11-26 22:09:39 UTC,220e383,NVIDIA H100 80GB HBM3 (sm_90),x86_64; 16 CPUs,groups: memcache multigpu,memcache,memory-cache hit: 4 KiB source,4096,ns,384.353,,,1000,<= 1000 ns,PASS" ] ||
  { echo "plot-bench --history printed:"; echo "$out"; exit 1; }
out=$(sh "$src/scripts/plot-bench" --history "$tmp/bench.csv" "all groups" | cut -d, -f5)
[ "$out" = "all groups" ] || { echo "plot-bench --history did not take the run: $out"; exit 1; }
head -1 "$src/docs/benchmarks-history.csv" |
  grep -qx "date,commit,device,host,run,$(grep '^group,' "$tmp/bench.csv")" ||
  { echo "docs/benchmarks-history.csv's header is not the history's columns"; exit 1; }
echo "scripts: deps waits for apt's lock, README.md names its packages; skip reasons are shown;"
echo "layers, folders' sizes, circles and names are checked; sample line counts are counted as"
echo "docs/samples.md says; the benchmark's CSV becomes rows of its history"
