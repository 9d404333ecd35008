#!/bin/sh
# The first program that opens include/cujit.h (its first @code block) builds as C11 with
# every warning an error, against the built library, and runs: on a GPU it prints the sum
# it computed; without one it has compiled its kernel when it stops at the kernel's lookup
# with CUJIT_ERROR_NO_DRIVER or CUJIT_ERROR_NO_DEVICE, which it reports as it should.
# Usage: check_first_program.sh CC INCLUDE_DIR LIBRARY CUDA_INCLUDE_DIR...
set -eu
cc=$1
include=$2
library=$3
shift 3
cuda_flags=""
for dir in "$@"; do cuda_flags="$cuda_flags -I$dir"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-first-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk '/@code/ && !done { inside = 1; next }
     /@endcode/ && inside { inside = 0; done = 1 }
     inside' "$include/cujit.h" | sed 's/^ \*//; s/^ //' >"$tmp/first.c"
grep -q 'int main' "$tmp/first.c" || { echo "cujit.h has no first program" >&2; exit 1; }
# shellcheck disable=SC2086 # the flags are words
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$include" $cuda_flags \
  "$tmp/first.c" "$library" -Wl,-rpath,"$(dirname "$library")" -o "$tmp/first" ||
  { echo "the first program does not build:" >&2; cat -n "$tmp/first.c" >&2; exit 1; }
status=0
"$tmp/first" >"$tmp/out" 2>&1 || status=$?
out=$(cat "$tmp/out")
case "$status:$out" in
  "0:out[999] = 2997") echo "first program: $out" ;;
  1:CUJIT_ERROR_NO_DRIVER:* | 1:CUJIT_ERROR_NO_DEVICE:*)
    echo "first program built, compiled its kernel and, with no GPU, said: $out" ;;
  *) echo "the first program exited $status:" >&2; echo "$out" >&2; exit 1 ;;
esac
