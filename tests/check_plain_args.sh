#!/bin/sh
# Plain values at compile time, in C and in C++: CUJIT_LAUNCH(), cujit_call() and the
# generators' macros take numbers of every C type they know beside their own arguments,
# with every warning an error (PyCUDA's habit, `cujit_inout(h, n * 4), n, factor`, among
# them); and a value that is neither a cujit_arg nor such a number (a pointer, a host
# array, a struct, a long double) does not compile, failing on the argument itself.
# Usage: check_plain_args.sh CC CXX INCLUDE_DIR CUDA_INCLUDE_DIR...   (CXX "" for none)
set -eu
cc=$1
cxx=$2
include=$3
shift 3
flags="-I$include"
for dir in "$@"; do flags="$flags -I$dir"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-plain-args-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# The prelude of both files: the types and variables the expressions use.
prelude() {
  cat <<'C'
#include <stdbool.h>
#include "cujit_array.h"
typedef struct pair { float a, b; } pair;
static cujit_function *k;
static float *h, f = 2.0f, hs[4];
static CUdeviceptr d;
static cujit_elementwise *e;
static cujit_array *x;
static pair p = {1.0f, 2.0f};
static int n = 4;
static long double q = 1.0L;
C
}
{
  prelude
  cat <<'C'
int use(void);
int use(void) {
  (void)hs, (void)q;
  return (int)(CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_inout(h, 16), n, f) +
    CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), (bool)1, (char)1, (signed char)-1,
                 (unsigned char)1, (short)-1, (unsigned short)1, -1, 1u, -1L, 1UL, -1LL, 1ULL,
                 0.5f, 0.5, d, cujit_i32(1), CUJIT_VALUE(p)) +
    CUJIT_LAUNCH_EX(k, CUJIT_DIM3(1), CUJIT_DIM3(32), NULL, n) +
    cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), CUJIT_IN_PTR(h, 16), n, f, 2.5, 7LL, &p, d) +
    cujit_call_ex(k, CUJIT_DIM3(1), CUJIT_DIM3(32), NULL, (bool)0, 'c', (unsigned short)3) +
    cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(1)) +
    CUJIT_ELEMENTWISE(e, 5.0f, x, 6, x, (const cujit_array *)x, cujit_f64(1)));
}
#ifndef __cplusplus /* C's complex numbers are numbers too */
int use_complex(void);
int use_complex(void) {
  float _Complex z = 1.0f;
  return (int)CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(1), z, (double _Complex)2.0);
}
#endif
C
} >"$tmp/good.c"
# One function per argument that must not compile, each on a line of its own; the compiler
# must fail on every one of those lines.
bad="launch_pointer:CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), &n)
launch_array:CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), n, hs)
launch_struct:CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), p, n)
launch_long_double:CUJIT_LAUNCH_EX(k, CUJIT_DIM3(1), CUJIT_DIM3(32), NULL, q)
call_struct:cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), n, p)
call_long_double:cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), q)
generator_pointer:CUJIT_ELEMENTWISE(e, &p, x)"
prelude >"$tmp/bad.c"
echo "$bad" | while IFS=: read -r name expr; do
  printf 'int %s(void);\nint %s(void) {\n  return (int)(%s);\n}\n' "$name" "$name" "$expr"
done >>"$tmp/bad.c"

check() { # check LANGUAGE COMPILER FLAGS...
  lang=$1 compiler=$2
  shift 2
  # shellcheck disable=SC2086 # the flags are words
  if ! "$compiler" -x "$lang" "$@" $flags -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
      "$tmp/good.c" 2>"$tmp/log"; then
    echo "$lang: plain values do not compile:" >&2
    cat "$tmp/log" >&2
    failed=1
  fi
  # shellcheck disable=SC2086
  if "$compiler" -x "$lang" "$@" $flags -fsyntax-only -fmax-errors=0 "$tmp/bad.c" \
      2>"$tmp/log"; then
    echo "$lang: bad.c compiled, but its arguments are neither cujit_arg values nor numbers" >&2
    failed=1
    return
  fi
  echo "$bad" | while IFS=: read -r name expr; do
    line=$(grep -n "^int $name(void) {" "$tmp/bad.c" | cut -d: -f1)
    line=$((line + 1))
    if ! grep -q "bad.c:$line:" "$tmp/log"; then
      echo "$lang: $expr compiled, but it is neither a cujit_arg nor a number" >&2
      echo 1 >"$tmp/failed"
    fi
  done
  if ! grep -q "_Generic\|generic association\|cujit_arg_of_\|cujit_plain_addr_\|CUJIT_LAUNCH() takes" \
      "$tmp/log"; then
    echo "$lang: bad.c failed, but not on the arguments:" >&2
    cat "$tmp/log" >&2
    failed=1
  fi
}
check c "$cc" -std=c11
[ -n "$cxx" ] && check c++ "$cxx" -std=c++17
[ -f "$tmp/failed" ] && failed=1
exit $failed
