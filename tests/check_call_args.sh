#!/bin/sh
# cujit_call() and cujit_call_ex() refuse a cujit_arg at compile time, in C and in C++: a
# launch's argument (cujit_in(), cujit_i32(), ...) is cujit_launch()'s, and cujit_call()
# takes C values, as a bound function does. Plain values, pointers and
# CUJIT_IN_PTR(...)/CUJIT_OUT_PTR(...)/CUJIT_INOUT_PTR(...) still compile, with every warning an error.
# Usage: check_call_args.sh CC CXX INCLUDE_DIR CUDA_INCLUDE_DIR...   (CXX "" for none)
set -eu
cc=$1
cxx=$2
include=$3
shift 3
flags="-I$include"
for dir in "$@"; do flags="$flags -I$dir"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-call-args-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

write() { # write NAME ARGUMENTS: a function calling cujit_call with these arguments
  cat >"$tmp/$1.c" <<C
#include "cujit.h"
typedef struct pair { float a, b; } pair;
int call(cujit_function *k, float *h, cujit_launch_options *o);
int call(cujit_function *k, float *h, cujit_launch_options *o) {
  pair p = {1.0f, 2.0f};
  (void)h, (void)o, (void)p;
  return (int)($2);
}
C
}
write good "(int)cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), CUJIT_OUT_PTR(h, 128), CUJIT_IN_PTR(h, 128),
                    CUJIT_INOUT_PTR(h, 128), (CUdeviceptr)0, 3, 2.5, 7LL, &p) +
             (int)cujit_call_ex(k, CUJIT_DIM3(1), CUJIT_DIM3(32), o, cujit_arg_ref(&(cujit_arg){0}), 1) +
             (int)cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(1))"
write in "cujit_call(k, CUJIT_DIM3(1), CUJIT_DIM3(32), cujit_in(h, 128), 3)"
write value "cujit_call_ex(k, CUJIT_DIM3(1), CUJIT_DIM3(32), o, CUJIT_IN_PTR(h, 128), cujit_i32(3))"
sed -i 's/cujit_arg_ref(&(cujit_arg){0})/(CUdeviceptr)0/' "$tmp/good.c" # C++ has no compound literals

check() { # check LANGUAGE COMPILER FLAGS...
  lang=$1 compiler=$2
  shift 2
  # shellcheck disable=SC2086 # the flags are words
  if ! "$compiler" -x "$lang" "$@" $flags -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
      "$tmp/good.c" 2>"$tmp/log"; then
    echo "$lang: plain values and CUJIT_IN_PTR() do not compile in cujit_call():" >&2
    cat "$tmp/log" >&2
    failed=1
  fi
  for bad in in value; do
    # shellcheck disable=SC2086
    if "$compiler" -x "$lang" "$@" $flags -fsyntax-only "$tmp/$bad.c" 2>"$tmp/log"; then
      echo "$lang: cujit_call() took a cujit_arg ($bad.c compiled):" >&2
      sed -n 's/^  return //p' "$tmp/$bad.c" >&2
      failed=1
    elif ! grep -q "cujit_call() takes" "$tmp/log"; then
      echo "$lang: $bad.c failed, but not for the cujit_arg:" >&2
      cat "$tmp/log" >&2
      failed=1
    fi
  done
}
check c "$cc" -std=c11
[ -n "$cxx" ] && check c++ "$cxx" -std=c++17
exit $failed
