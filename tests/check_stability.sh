#!/bin/sh
# The stability decision (docs/manual/stability.md) and include/cujit.h agree:
# - every numbered section banner of cujit.h ends with `stable` or `experimental`;
# - a function of cujit.h is experimental when its section's banner says so or its
#   comment begins with "Experimental";
# - the functions the page's "## Experimental" table names (its Functions column) are
#   exactly the experimental functions of cujit.h, and each is declared there.
# Usage: check_stability.sh SOURCE_DIR     names every disagreement; exits 1 on any
#        check_stability.sh --self-test    checks that made-up faults are caught
set -eu
export LC_ALL=C

# "experimental NAME" or "stable NAME" for each CUJIT_API function of $1/include/cujit.h,
# and "unmarked LINE" for a numbered banner without its word.
header_marks() {
  awk '
    /^\/\* =+$/ { banner = 1; numbered = 0; word = ""; comment = ""; next }
    banner && /^ \* =+ \*\/$/ { banner = 0
                                if (numbered && word == "") print "unmarked " NR
                                if (word != "") section = word; next }
    banner { if ($0 ~ /^ \* [0-9]+\. /) numbered = 1
             if ($NF == "stable" || $NF == "experimental") word = $NF; next }
    /^\/\*\*/ { comment = $0 }
    /^CUJIT_API/ { decl = ""; indecl = 1 }
    indecl { decl = decl " " $0
             if (index(decl, "(")) {
               sub(/\(.*/, "", decl); n = split(decl, w, /[ *]+/)
               isx = section == "experimental" || comment ~ /^\/\*\* Experimental/
               print (isx ? "experimental " : "stable ") w[n]
               indecl = 0; comment = "" } }' "$1/include/cujit.h"
}

# The cujit_ names of the Functions column of the page's "## Experimental" table.
page_experimental() {
  awk '/^## / { inexp = ($0 == "## Experimental"); next }
       inexp && /^\| / { n = split($0, col, "|"); f = col[3]
                        while (match(f, /`cujit_[a-z0-9_]+`/)) {
                          print substr(f, RSTART + 1, RLENGTH - 2); f = substr(f, RSTART + RLENGTH) } }' \
    "$1/docs/manual/stability.md" | sort -u
}

check_tree() {
  marks=$(header_marks "$1")
  [ -n "$marks" ] || { echo "no functions found in $1/include/cujit.h"; return 1; }
  page=$(page_experimental "$1")
  [ -n "$page" ] || { echo "docs/manual/stability.md names no experimental function"; return 1; }
  { echo "$marks"; echo "$page" | sed 's/^/page /'; } | awk '
    $1 == "unmarked" { print "cujit.h:" $2 ": a section banner says neither stable nor experimental"; bad = 1 }
    $1 == "experimental" { ex[$2] = 1; decl[$2] = 1 }
    $1 == "stable" { decl[$2] = 1 }
    $1 == "page" { page[$2] = 1 }
    END {
      for (n in page)
        if (!(n in decl)) { print "stability.md calls " n " experimental, but cujit.h declares no such function"; bad = 1 }
        else if (!(n in ex)) { print "stability.md calls " n " experimental, but cujit.h marks it stable (begin its comment with \"Experimental\", or mark its section)"; bad = 1 }
      for (n in ex) if (!(n in page)) { print "cujit.h marks " n " experimental, but stability.md does not list it"; bad = 1 }
      exit bad }'
}

self_test() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-stability-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mk() {
    mkdir -p "$tmp/$1/include" "$tmp/$1/docs/manual"
    cat >"$tmp/$1/include/cujit.h" <<'H'
/* ==========
 * 1. Basics                    stable
 * ========== */
/** Does it. */
CUJIT_API cujit_status cujit_do(int x);
/** Experimental (see the page). Tries it. */
CUJIT_API cujit_status cujit_try(int x,
                                 int y);
/* ==========
 * 2. New things
 *                              experimental
 * ========== */
/** Makes it. */
CUJIT_API cujit_status cujit_make(int *out);
H
    cat >"$tmp/$1/docs/manual/stability.md" <<'M'
## Stable
| a | `cujit_do` | b |
## Experimental
| Surface | Functions | Why |
|---|---|---|
| New | `cujit_make`, `cujit_try` | young (see `cujit_do`) |
M
  }
  expect() {
    if out=$(check_tree "$tmp/$1"); then echo "self-test: $1 passed, but should not"; return 1; fi
    case $out in *"$2"*) ;; *) echo "self-test: $1 failed without '$2':"; echo "$out"; return 1 ;; esac
  }
  mk good
  out=$(check_tree "$tmp/good") || { echo "self-test: a good tree failed:"; echo "$out"; return 1; }
  mk unlisted
  # shellcheck disable=SC2016 # the backquotes are Markdown's, not the shell's
  sed -i 's/`cujit_make`, //' "$tmp/unlisted/docs/manual/stability.md"
  expect unlisted "cujit.h marks cujit_make experimental, but stability.md does not list it"
  mk unmarked; sed -i 's/Experimental (see the page). //' "$tmp/unmarked/include/cujit.h"
  expect unmarked "stability.md calls cujit_try experimental, but cujit.h marks it stable"
  mk gone
  # shellcheck disable=SC2016 # the backquotes are Markdown's, not the shell's
  sed -i 's/`cujit_try`/`cujit_gone`/' "$tmp/gone/docs/manual/stability.md"
  expect gone "cujit.h declares no such function"
  mk bare; sed -i 's/ *experimental$/ */' "$tmp/bare/include/cujit.h"
  expect bare "a section banner says neither stable nor experimental"
  echo "check_stability: every made-up fault was caught"
}

case ${1:-} in
  --self-test) self_test ;;
  "") echo "usage: check_stability.sh SOURCE_DIR | --self-test" >&2; exit 2 ;;
  *) if check_tree "$1"; then echo "check_stability: stability.md and cujit.h agree on what is experimental"
     else exit 1; fi ;;
esac
