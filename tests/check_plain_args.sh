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

write() { # write NAME EXPRESSION: a function returning the expression as an int
  cat >"$tmp/$1.c" <<C
#include <stdbool.h>
#include "cujit_array.h"
typedef struct pair { float a, b; } pair;
int use(cujit_function *k, float *h, CUdeviceptr d, cujit_elementwise *e, cujit_array *x);
int use(cujit_function *k, float *h, CUdeviceptr d, cujit_elementwise *e, cujit_array *x) {
  pair p = {1.0f, 2.0f};
  float f = 2.0f, hs[4] = {0};
  int n = 4;
  long double q = 1.0L;
  (void)k, (void)h, (void)d, (void)e, (void)x, (void)p, (void)f, (void)hs, (void)n, (void)q;
  return (int)($2);
}
C
}
write good "CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_inout(h, 16), n, f) +
  CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), (bool)1, (char)1, (signed char)-1,
               (unsigned char)1, (short)-1, (unsigned short)1, -1, 1u, -1L, 1UL, -1LL, 1ULL,
               0.5f, 0.5, d, cujit_i32(1), CUJIT_VALUE(p)) +
  CUJIT_LAUNCH_EX(k, CUJIT_DIM3(1), CUJIT_DIM3(32), NULL, n) +
  cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), CUJIT_IN_PTR(h, 16), n, f, 2.5, 7LL, &p, d) +
  cujit_call_ex(k, CUJIT_DIM3(1), CUJIT_DIM3(32), NULL, (bool)0, 'c', (unsigned short)3) +
  cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(1)) +
  CUJIT_ELEMENTWISE(e, 5.0f, x, 6, x, (const cujit_array *)x, cujit_f64(1))"
write launch_pointer "CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), &n)"
write launch_array "CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), n, hs)"
write launch_struct "CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(32), p, n)"
write launch_long_double "CUJIT_LAUNCH_EX(k, CUJIT_DIM3(1), CUJIT_DIM3(32), NULL, q)"
write call_struct "cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), n, p)"
write call_long_double "cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), q)"
write generator_pointer "CUJIT_ELEMENTWISE(e, &f, x)"
cat >>"$tmp/good.c" <<'C'
#ifndef __cplusplus /* C's complex numbers are plain values too */
int use_complex(cujit_function *k);
int use_complex(cujit_function *k) {
  float _Complex z = 1.0f;
  return (int)CUJIT_LAUNCH(k, CUJIT_DIM3(1), CUJIT_DIM3(1), z, (double _Complex)2.0);
}
#endif
C

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
  for bad in launch_pointer launch_array launch_struct launch_long_double call_struct \
      call_long_double generator_pointer; do
    # shellcheck disable=SC2086
    if "$compiler" -x "$lang" "$@" $flags -fsyntax-only "$tmp/$bad.c" 2>"$tmp/log"; then
      echo "$lang: $bad.c compiled, but its argument is neither a cujit_arg nor a number:" >&2
      sed -n 's/^  return //p' "$tmp/$bad.c" >&2
      failed=1
    elif ! grep -q "_Generic\|generic association\|cujit_arg_of_\|cujit_plain_addr_\|CUJIT_LAUNCH() takes" \
        "$tmp/log"; then
      echo "$lang: $bad.c failed, but not on the argument:" >&2
      cat "$tmp/log" >&2
      failed=1
    fi
  done
}
check c "$cc" -std=c11
[ -n "$cxx" ] && check c++ "$cxx" -std=c++17
exit $failed
