#!/bin/sh
# The programs of the docs, built as a user builds them: against cujit installed under a
# prefix of its own (a new temporary one, which neither pkg-config nor the loader searches),
# with every warning an error.
# - The first program of include/cujit.h (its first @code block) is built with the
#   commands the header gives for such a prefix (its @code{.sh} block, HOME standing for a
#   new directory): it runs without LD_LIBRARY_PATH. Built without their run path, it does
#   not start; with LD_LIBRARY_PATH it does.
# - Every C or C++ block of README.md, docs/*.md and docs/manual/*.md that is a whole
#   program (it holds `int main`) is built as C11 (a cpp block as C++17; a C block after a
#   line `<!-- also C++ -->` as C++17 too), with pkg-config's flags, and run. Every other C
#   or C++ block must follow a line `<!-- fragment -->`, so that no program goes unbuilt
#   for want of a main.
# - A block after a line `<!-- output of FILE.c (the toolkit in DIR) -->` is what the program
#   FILE.c (relative to the source tree) prints, stdout and stderr, once the CUDA toolkit's
#   directory (the one whose include directory NVRTC is given last) is written as DIR and
#   an -arch option (a GPU's) is taken out; blank lines at the end do not count.
# A program passes when it exits 0, or, with no GPU, when it stopped at the first call that
# needs one, naming CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE. Without pkg-config the
# test is skipped (77), saying so.
# Usage: check_programs.sh CC CXX SOURCE_DIR BUILD_DIR
#        check_programs.sh --self-test CC CXX SOURCE_DIR BUILD_DIR
#           (checks that made-up faults in made-up docs are caught)
set -eu
self_test=0
if [ "${1:-}" = --self-test ]; then self_test=1; shift; fi
[ $# -eq 4 ] || { echo "usage: check_programs.sh [--self-test] CC CXX SOURCE_DIR BUILD_DIR" >&2; exit 2; }
cc=$1
cxx=$2
src=$3
build=$4
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: pkg-config is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-programs-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
home=$tmp/home
mkdir -p "$home"
cmake --install "$build" --prefix "$home/.local" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; exit 1; }
pc=$(find "$home/.local" -name cujit.pc)
PKG_CONFIG_PATH=${pc%/cujit.pc}
export PKG_CONFIG_PATH
libdir=$(pkg-config --variable=libdir cujit)
strict="-Wall -Wextra -Wpedantic -Werror"

# Runs program $1 (named $2 in messages): passes when it exits 0 or says it found no GPU.
run() {
  rc=0
  env -u LD_LIBRARY_PATH timeout 120 "$1" >"$1.out" 2>&1 || rc=$?
  [ $rc -eq 0 ] && return 0
  grep -q 'CUJIT_ERROR_NO_DRIVER\|CUJIT_ERROR_NO_DEVICE' "$1.out" && return 0
  echo "$2 exited $rc:"
  cat "$1.out"
  return 1
}

# The first program of cujit.h, as the header says to build it.
first_program() {
  mkdir -p "$tmp/first"
  header=$home/.local/include/cujit.h
  awk '/@code/ && !done { inside = 1; next }
       /@endcode/ && inside { inside = 0; done = 1 }
       inside' "$header" | sed 's/^ \*//; s/^ //' >"$tmp/first/first.c"
  grep -q 'int main' "$tmp/first/first.c" || { echo "cujit.h has no first program"; return 1; }
  awk '/@code\{\.sh\}/ { inside = 1; next } /@endcode/ && inside { exit } inside' "$header" |
    sed 's/^ \* //' >"$tmp/first/build.sh"
  grep -q '^cc first.c .*-Wl,-rpath' "$tmp/first/build.sh" ||
    { echo "cujit.h gives no 'cc first.c ... -Wl,-rpath,...' line:"; cat "$tmp/first/build.sh"; return 1; }
  sed -i "s|^cc |$cc -std=c11 $strict |" "$tmp/first/build.sh"
  sed 's/ -Wl,-rpath,.*//; s/first.c /first.c -o first-no-rpath /' "$tmp/first/build.sh" \
    >"$tmp/first/build-no-rpath.sh"
  for script in build.sh build-no-rpath.sh; do
    (cd "$tmp/first" && HOME=$home && export HOME && unset PKG_CONFIG_PATH &&
      sh -e "$script") >"$tmp/first/log" 2>&1 ||
      { echo "the first program does not build as cujit.h says ($script):"; cat "$tmp/first/build.sh";
        cat "$tmp/first/log"; cat -n "$tmp/first/first.c"; return 1; }
  done
  # which libcujit each finds: the prefix's by the run path, or by LD_LIBRARY_PATH; none
  # without either (unless the system has one of its own, as its packages install it)
  found() { env -u LD_LIBRARY_PATH ${2:+LD_LIBRARY_PATH=$2} ldd "$1" | sed -n 's/^[[:space:]]*libcujit\.so[^ ]* => \([^ ]*\).*/\1/p'; }
  case $(found "$tmp/first/a.out") in
    "$libdir"/*) ;;
    *) echo "the first program's run path does not lead to $libdir:"; ldd "$tmp/first/a.out"; return 1 ;;
  esac
  case $(found "$tmp/first/first-no-rpath" "$libdir") in
    "$libdir"/*) ;;
    *) echo "with LD_LIBRARY_PATH the first program does not find $libdir's libcujit"; return 1 ;;
  esac
  system=$(found "$tmp/first/first-no-rpath")
  if [ "$system" = "not" ]; then
    if env -u LD_LIBRARY_PATH "$tmp/first/first-no-rpath" >"$tmp/first/log" 2>&1; then
      echo "the first program, built without a run path, started"; return 1
    fi
    grep -q 'libcujit.so' "$tmp/first/log" ||
      { echo "the first program, built without a run path, failed otherwise:"; cat "$tmp/first/log"; return 1; }
  else
    echo "note: the system has a libcujit of its own ($system): not checked that the first program needs a run path"
  fi
  run "$tmp/first/a.out" "the first program (its run path)" || return 1
  LD_LIBRARY_PATH=$libdir "$tmp/first/first-no-rpath" >"$tmp/first/log" 2>&1 ||
    grep -q 'CUJIT_ERROR_NO_DRIVER\|CUJIT_ERROR_NO_DEVICE' "$tmp/first/log" ||
    { echo "the first program, with LD_LIBRARY_PATH, failed:"; cat "$tmp/first/log"; return 1; }
  echo "first program: $(cat "$tmp/first/a.out.out")"
}

# The blocks of the docs under $1 (README.md, docs/*.md, docs/manual/*.md), each C or C++
# block and each block after an output line written to $2/N.c, $2/N.cpp or $2/N.out, and
# listed in $2/list as "N KIND FILE:LINE [ARG...]": KIND is c, cpp, c+cpp (also C++),
# fragment or output (ARG: the program and the toolkit's directory), or bad (an unmarked
# fragment, or a marker before no block of its kind).
extract() {
  for md in "$1/README.md" $(find "$1/docs" -name '*.md' 2>/dev/null | sort); do
    [ -f "$md" ] || continue
    awk -v rel="${md#"$1"/}" -v out="$2" -v base="$(wc -l <"$2/list")" '
      function emit(kind, extra) { n++; print base + n, kind, rel ":" start extra >>(out "/list") }
      /^```/ && !fence {
        fence = 1; lang = substr($0, 4); start = NR; body = ""; mark = last; next
      }
      /^```/ && fence {
        fence = 0; last = ""
        if (mark ~ /^<!-- output of /) {
          m = mark; sub(/^<!-- output of /, "", m); sub(/ -->$/, "", m)
          file = m; sub(/ .*/, "", file)
          dir = ""; if (m ~ /\(the toolkit in [^ )]+\)$/) { dir = m; sub(/.*toolkit in /, "", dir); sub(/\)$/, "", dir) }
          emit("output", " " file " " dir); printf "%s", body >(out "/" base + n ".out"); next
        }
        if (lang !~ /^(c|cpp)$/) {
          if (mark != "") emit("bad", " " mark " is before a block that is not C or C++")
          next
        }
        whole = body ~ /(^|[^A-Za-z0-9_])int[ \t]+main[ \t]*\(/
        if (mark == "<!-- fragment -->" && !whole) emit("fragment", "")
        else if (mark == "<!-- fragment -->") emit("bad", " is marked a fragment but holds int main")
        else if (!whole && mark == "") emit("bad", " is neither a whole program (int main) nor marked <!-- fragment -->")
        else if (!whole) emit("bad", " follows " mark " but holds no int main")
        else if (mark == "" && lang == "c") emit("c", "")
        else if (mark == "" && lang == "cpp") emit("cpp", "")
        else if (mark == "<!-- also C++ -->" && lang == "c") emit("c+cpp", "")
        else emit("bad", " follows " mark ", which this check does not know")
        if (lang == "cpp") ext = "cpp"; else ext = "c"
        printf "%s", body >(out "/" base + n "." ext)
        next
      }
      fence { body = body $0 "\n"; next }
      /^[ \t]*$/ { next }
      /^<!-- .* -->$/ { last = $0; next }
      { last = "" }' "$md"
  done
}

# Builds and runs every program of the docs under $1; checks every output block.
check_docs() {
  work=$tmp/docs-$(date +%s%N)
  mkdir -p "$work"
  : >"$work/list"
  extract "$1" "$work"
  bad=0 programs=0 fragments=0 outputs=0
  while read -r n kind where rest; do
    case $kind in
      bad) echo "$where: $rest"; bad=1; continue ;;
      fragment) fragments=$((fragments + 1)); continue ;;
      output)
        file=${rest%% *}
        dir=${rest#* }
        [ "$dir" != "$rest" ] || dir=""
        # shellcheck disable=SC2046 # the flags are words
        $cc -std=c11 $strict "$1/$file" -o "$work/$n.bin" $(pkg-config --cflags --libs cujit) \
          -Wl,-rpath,"$libdir" -lm >"$work/$n.log" 2>&1 ||
          { echo "$where: $file does not build:"; cat "$work/$n.log"; bad=1; continue; }
        (cd "$work" && env -u LD_LIBRARY_PATH timeout 120 "./$n.bin" >"$n.got" 2>&1) || true
        sed -i 's/-arch=[^ ]* //' "$work/$n.got"
        root=$(sed -n 's|.*--include-path=\([^ ]*\)/include .*|\1|p' "$work/$n.got" | head -n 1)
        [ -z "$dir" ] || [ -z "$root" ] || sed -i "s|$root|$dir|g" "$work/$n.got"
        for f in "$work/$n.out" "$work/$n.got"; do # blank lines at the end do not show
          awk '/^$/ { blank = blank "\n"; next } { printf "%s%s\n", blank, $0; blank = "" }' "$f" \
            >"$f.trimmed" && mv "$f.trimmed" "$f"
        done
        if ! cmp -s "$work/$n.out" "$work/$n.got"; then
          echo "$where: the output shown is not what $file prints (- shown, + printed):"
          diff -u "$work/$n.out" "$work/$n.got" | tail -n +3
          bad=1
        fi
        outputs=$((outputs + 1))
        continue ;;
    esac
    programs=$((programs + 1))
    case $kind in
      c) builds="c:$n.c" ;;
      cpp) builds="cpp:$n.cpp" ;;
      c+cpp) builds="c:$n.c cpp:$n.c" ;;
    esac
    for b in $builds; do
      lang=${b%%:*}
      case $lang in
        c) compiler="$cc -std=c11" ;;
        cpp) compiler="$cxx -std=c++17 -x c++" ;;
      esac
      [ "$lang:$cxx" != cpp: ] || { echo "$where: no C++ compiler to build it"; bad=1; continue; }
      # shellcheck disable=SC2046,SC2086 # the flags are words
      $compiler $strict "$work/${b#*:}" -x none -o "$work/$n-$lang.bin" \
        $(pkg-config --cflags --libs cujit) -Wl,-rpath,"$libdir" -lm >"$work/$n.log" 2>&1 ||
        { echo "$where: the program does not build as $lang:"; cat "$work/$n.log"; bad=1; continue; }
      run "$work/$n-$lang.bin" "$where (as $lang)" || bad=1
    done
  done <"$work/list"
  [ $bad -eq 0 ] || return 1
  echo "docs: $programs whole programs built and run, $outputs outputs as shown, $fragments fragments marked"
}

# Made-up docs with one fault each: each must be caught and named.
self_test() {
  mk() { # a good tree in $tmp/self/$1
    t=$tmp/self/$1
    mkdir -p "$t/docs"
    printf '#include <stdio.h>\nint main(void) { printf("hello\\n"); return 0; }\n' >"$t/hello.c"
    cat >"$t/README.md" <<'M'
# Made up

<!-- fragment -->
```c
cujit_module *mod = NULL;
```

```c
#include <stdio.h>
#include <cujit.h>

int main(void) {
  printf("cujit %u\n", cujit_version());
  return 0;
}
```

<!-- also C++ -->
```c
#include <cujit.h>
int main(void) { return cujit_version() == 0; }
```

<!-- output of hello.c -->
```
hello
```
M
  }
  expect() { # expect TREE TEXT: the check fails on TREE, saying TEXT
    if out=$(check_docs "$tmp/self/$1"); then echo "self-test: $1 passed, but should not"; return 1; fi
    case $out in *"$2"*) ;; *) echo "self-test: $1 failed without '$2':"; echo "$out"; return 1 ;; esac
  }
  mk good
  out=$(check_docs "$tmp/self/good") || { echo "self-test: good docs failed:"; echo "$out"; return 1; }
  case $out in *"2 whole programs built and run, 1 outputs as shown, 1 fragments marked"*) ;;
    *) echo "self-test: good docs: $out"; return 1 ;; esac
  mk build; sed -i 's/cujit %u\\n", cujit_version()/cujit %u\\n", cujit_versio()/' "$tmp/self/build/README.md"
  expect build "README.md:8: the program does not build as c"
  mk status; sed -i 's/  return 0;/  return 3;/' "$tmp/self/status/README.md"
  expect status "README.md:8 (as c) exited 3"
  mk cxx; sed -i 's/return cujit_version() == 0;/int *p = (int[]){0}; return *p;/' "$tmp/self/cxx/README.md"
  expect cxx "README.md:19: the program does not build as cpp"
  mk unmarked; sed -i '/<!-- fragment -->/d' "$tmp/self/unmarked/README.md"
  expect unmarked "README.md:3: is neither a whole program (int main) nor marked <!-- fragment -->"
  mk output; sed -i 's/^hello$/hullo/' "$tmp/self/output/README.md"
  expect output "README.md:25: the output shown is not what hello.c prints"
  echo "check_programs: every made-up fault was caught"
}

if [ $self_test -eq 1 ]; then
  self_test
else
  failed=0
  first_program || failed=1
  check_docs "$src" || failed=1
  exit $failed
fi
