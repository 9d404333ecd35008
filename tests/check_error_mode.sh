#!/bin/sh
# The error mode covers every call it should (docs/manual/stability.md, "The error mode's
# macros", says why the macros are kept by hand and checked here): each
# function of include/*.h that returns a cujit_status (but cujit_last_status(), which reads
# one, and the header's own, ending in '_') is also a macro of its own name that hands its
# status to the error handler,
#     #  define NAME(...) CUJIT_CHECKED_(NAME, __VA_ARGS__)
# and no such macro names anything else.
# Usage: check_error_mode.sh SOURCE_DIR    names every function without its macro; exits 1
#        check_error_mode.sh --self-test   checks that made-up faults are caught
set -eu
export LC_ALL=C

# "fn NAME" for each covered function and "macro NAME" for each macro, one per line, from
# the headers under $1/include (a macro's line may be continued with a backslash).
inventory() {
  cat "$1"/include/*.h | awk '
    /\\$/ { sub(/\\$/, ""); held = held $0; next }
    { line = held $0; held = "" }
    line ~ /^CUJIT_API cujit_status[ \t]+cujit_[a-z0-9_]+[ \t]*\(/ {
      n = line; sub(/^CUJIT_API cujit_status[ \t]+/, "", n); sub(/[ \t]*\(.*/, "", n)
      if (n != "cujit_last_status" && n !~ /_$/) print "fn " n }
    line ~ /^#[ \t]*define[ \t]+cujit_[a-z0-9_]+\(\.\.\.\)[ \t]+CUJIT_CHECKED_\(/ {
      n = line; sub(/^#[ \t]*define[ \t]+/, "", n); sub(/\(.*/, "", n)
      m = line; sub(/.*CUJIT_CHECKED_\([ \t]*/, "", m); sub(/[ \t]*,.*/, "", m)
      print (m == n ? "macro " n : "wrong " n) }'
}

check_tree() {
  inv=$(inventory "$1")
  [ -n "$inv" ] || { echo "no status-returning functions found in $1/include"; return 1; }
  echo "$inv" | awk '
    $1 == "fn" { fn[$2] = 1 } $1 == "macro" { mac[$2] = 1 }
    $1 == "wrong" { print "the macro " $2 " hands another function'\''s status to CUJIT_CHECKED_"; bad = 1 }
    END {
      for (n in fn) if (!(n in mac)) { print n " has no error-mode macro: add #  define " n "(...) CUJIT_CHECKED_(" n ", __VA_ARGS__)"; bad = 1 }
      for (n in mac) if (!(n in fn)) { print "the error-mode macro " n " names no function returning a cujit_status"; bad = 1 }
      exit bad }'
}

self_test() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-errmode-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mk() {
    mkdir -p "$tmp/$1/include"
    cat >"$tmp/$1/include/cujit.h" <<'H'
CUJIT_API cujit_status cujit_last_status(void);
CUJIT_API cujit_status cujit_error_raise_(cujit_status status, const char *call);
CUJIT_API cujit_status cujit_make(int *out,
                                  int n);
CUJIT_API cujit_status cujit_long_name_of_a_function(int *out);
CUJIT_API const char *cujit_name(void);
#  define cujit_make(...) CUJIT_CHECKED_(cujit_make, __VA_ARGS__)
#  define cujit_long_name_of_a_function(...) \
    CUJIT_CHECKED_(cujit_long_name_of_a_function, __VA_ARGS__)
H
  }
  expect() {
    if out=$(check_tree "$tmp/$1"); then echo "self-test: $1 passed, but should not"; return 1; fi
    case $out in *"$2"*) ;; *) echo "self-test: $1 failed without '$2':"; echo "$out"; return 1 ;; esac
  }
  mk good
  out=$(check_tree "$tmp/good") || { echo "self-test: a good tree failed:"; echo "$out"; return 1; }
  mk missing; sed -i '/define cujit_make/d' "$tmp/missing/include/cujit.h"
  expect missing "cujit_make has no error-mode macro"
  mk stale; echo '#  define cujit_name(...) CUJIT_CHECKED_(cujit_name, __VA_ARGS__)' >>"$tmp/stale/include/cujit.h"
  expect stale "the error-mode macro cujit_name names no function"
  mk wrong; sed -i 's/CUJIT_CHECKED_(cujit_make,/CUJIT_CHECKED_(cujit_other,/' "$tmp/wrong/include/cujit.h"
  expect wrong "the macro cujit_make hands another function's status"
  echo "check_error_mode: every made-up fault was caught"
}

case ${1:-} in
  --self-test) self_test ;;
  "") echo "usage: check_error_mode.sh SOURCE_DIR | --self-test" >&2; exit 2 ;;
  *) if check_tree "$1"; then echo "check_error_mode: every call that returns a status has its macro"
     else exit 1; fi ;;
esac
