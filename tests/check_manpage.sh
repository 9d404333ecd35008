#!/bin/sh
# The manual page (docs/cujit.1, mdoc) says what the command's help says:
# - the same commands: each one 'cujit --help' lists has a '.Ss' under COMMANDS, and no
#   other;
# - for each command, the options 'cujit COMMAND --help' lists (but -h, --help, which
#   OPTIONS covers) are the options of that subsection's '.It' items, and cache's words
#   (dir, stats, ...) its '.It Cm' items;
# - the options 'cujit --help' lists are OPTIONS' items;
# - every option any help names is somewhere in the page, and every option of the page
#   (each 'Fl') is named by some help;
# - the exit statuses the helps give are EXIT STATUS's items.
# (Its ENVIRONMENT list is checked against src/common/env.c's table by test_common.)
# With --render, the page is rendered by groff as man does, at 78 columns, and must give
# no warning (exit 77, skipped, where groff is not installed).
# Usage: check_manpage.sh CUJIT MANPAGE [--render]
set -eu
cli=$1
page=$2
if [ "${3:-}" = --render ]; then
  if ! command -v groff >/dev/null 2>&1; then
    echo "SKIP: groff is not installed (apt-get install groff-base)"
    exit 77
  fi
  warnings=$(groff -mandoc -Tutf8 -ww -rLL=78n "$page" 2>&1 >/dev/null)
  if [ -n "$warnings" ]; then
    echo "groff warns about $page:"
    echo "$warnings"
    exit 1
  fi
  echo "$page renders with no warning"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-man-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# The options named in a text, one a line, sorted.
options() {
  grep -oE -- '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[^-]+//' | sort -u
}

# The lines of a help's block (usage:, options:, commands:, exit status:) up to a blank line.
block() {
  awk -v name="$1" 'index($0, name) == 1 { f = 1; if ($0 == name) next } f && /^$/ { exit } f'
}

# The options of a help's option list: the left column of each line that starts with one.
listed() {
  grep -E '^  -' | sed -E 's/^  (.*[^ ])  +.*/\1/' | options
}

# The page's lines of a section (.Sh NAME) or of one command's subsection (.Ss NAME).
section() {
  awk -v sh="$1" -v ss="${2:-}" '
    /^\.Sh / { in_sh = (substr($0, 5) == sh); in_ss = 0; next }
    /^\.Ss / { in_ss = (substr($0, 5) == ss); if (ss != "") next }
    in_sh && (ss == "" || in_ss)' "$page"
}

# The options of mdoc lines: each 'Fl X' is -X.
fl_options() {
  grep -oE '(^|[ .])Fl -?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[ .]?Fl /-/' | sort -u
}

# Reports a difference between two sorted lists ($1, $2 files) named $3 and $4.
compare() {
  only_a=$(comm -23 "$1" "$2" | tr '\n' ' ')
  only_b=$(comm -13 "$1" "$2" | tr '\n' ' ')
  if [ -n "$only_a" ]; then
    echo "in $3, not in $4: $only_a"
    failed=1
  fi
  if [ -n "$only_b" ]; then
    echo "in $4, not in $3: $only_b"
    failed=1
  fi
}

"$cli" --help >"$tmp/help"
block "commands:" <"$tmp/help" | sed -nE 's/^  ([a-z]+)( .*)?$/\1/p' | sort -u >"$tmp/commands"
section COMMANDS | sed -nE 's/^\.Ss ([a-z]+)$/\1/p' | sort -u >"$tmp/man-commands"
[ -s "$tmp/commands" ] || { echo "cujit --help lists no command"; exit 1; }
compare "$tmp/commands" "$tmp/man-commands" "cujit --help's commands" "the page's COMMANDS"

block "options:" <"$tmp/help" | listed >"$tmp/top"
section OPTIONS | grep '^\.It ' | fl_options >"$tmp/man-top"
compare "$tmp/top" "$tmp/man-top" "cujit --help's options" "the page's OPTIONS"

cp "$tmp/help" "$tmp/all-help"
: >"$tmp/statuses"
while read -r c; do
  "$cli" "$c" --help >"$tmp/help-$c" || { echo "cujit $c --help failed"; failed=1; }
  cat "$tmp/help-$c" >>"$tmp/all-help"
  block "options:" <"$tmp/help-$c" | listed | grep -vxE -- '-h|--help' >"$tmp/opts-$c" || true
  section COMMANDS "$c" | grep '^\.It ' | fl_options >"$tmp/man-opts-$c"
  compare "$tmp/opts-$c" "$tmp/man-opts-$c" "cujit $c --help's options" "the page's $c items"
  block "exit status:" <"$tmp/help-$c" | sed -nE 's/^  ([0-9]+)  .*/\1/p' >>"$tmp/statuses"
done <"$tmp/commands"

# cache's words, from its usage line: "cache dir | stats | ... [--max-size N]"
block "usage:" <"$tmp/help-cache" | sed -E 's/^usage: cujit cache //; s/\[[^]]*\]//g' |
  tr '|' '\n' | tr -d ' ' | grep . | sort -u >"$tmp/cache-words"
section COMMANDS cache | sed -nE 's/^\.It Cm ([a-z]+).*/\1/p' | sort -u >"$tmp/man-cache-words"
compare "$tmp/cache-words" "$tmp/man-cache-words" "cujit cache --help's words" \
  "the page's cache items"

options <"$tmp/all-help" >"$tmp/all"
fl_options <"$page" >"$tmp/man-all"
compare "$tmp/all" "$tmp/man-all" "the helps" "the page"

sort -u "$tmp/statuses" >"$tmp/statuses-sorted"
section "EXIT STATUS" | sed -nE 's/^\.It ([0-9]+)$/\1/p' | sort -u >"$tmp/man-statuses"
compare "$tmp/statuses-sorted" "$tmp/man-statuses" "the helps' exit statuses" \
  "the page's EXIT STATUS"

[ "$failed" = 0 ] || exit 1
echo "$(wc -l <"$tmp/commands") commands, $(wc -l <"$tmp/all") options and" \
  "$(wc -l <"$tmp/man-statuses") exit statuses: the help and the manual page agree"
