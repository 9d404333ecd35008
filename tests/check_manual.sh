#!/bin/sh
# The manual (docs/manual/) against the public headers and itself:
# - its index, docs/manual/README.md, names every public name of include/*.h: each
#   CUJIT_API function, each public inline function, macro and type (a name ending in '_',
#   or in '_' and digits, is private; include guards are not names); and it names nothing
#   that no header holds (a renamed function, say);
# - the index lists names under '## [Title](page.md)' headings, one per table row
#   ('| `name` | ...'): each page exists and mentions each name listed under it;
# - docs/manual/errors.md has a row for every status of CUJIT_STATUS_MAP, as the header
#   gives its number and message;
# - every relative link of README.md and of the Markdown files under docs/ leads to a file
#   that exists, and an anchor (#section) to a heading of that file.
# Usage: check_manual.sh SOURCE_DIR      checks the tree, naming every fault; exits 1 on any
#        check_manual.sh --names DIR     prints the public names of DIR/include/*.h
#        check_manual.sh --self-test     checks that made-up faults are caught
set -eu
export LC_ALL=C # sort and compare names byte by byte, whatever the locale

# The public names of the headers under $1/include, one per line.
public_names() {
  cat "$1"/include/*.h | awk '
    function keep(n) { if (n !~ /_[0-9]*$/ && n !~ /_H(_INCLUDED)?$/ && n != "CUJIT_API") print n }
    # CUJIT_API declarations: the name before the first "(", which may be on a later line
    /^CUJIT_API/ { decl = "" ; indecl = 1 }
    indecl { decl = decl " " $0
             if (index(decl, "(")) { sub(/\(.*/, "", decl); n = split(decl, w, /[ *]+/)
                                     keep(w[n]); indecl = 0 } }
    /^static inline / { line = $0; sub(/\(.*/, "", line); n = split(line, w, /[ *]+/)
                        if (w[n] ~ /^cujit_/) keep(w[n]) }
    /^#[ \t]*define[ \t]+(CUJIT_|cujit_)/ { line = $0; sub(/^#[ \t]*define[ \t]+/, "", line)
                                            sub(/[( \t].*/, "", line); keep(line) }
    /^typedef[^;(]*;/ { line = $0; sub(/;.*/, "", line); n = split(line, w, /[ *]+/)
                        if (w[n] ~ /^cujit_/) keep(w[n]) }
    /^typedef[^;]*\(\*cujit_/ { line = $0; sub(/^[^(]*\(\*/, "", line); sub(/\).*/, "", line)
                                keep(line) }
    /^} *cujit_[a-z0-9_]* *;/ { line = $0; sub(/^} */, "", line); sub(/ *;.*/, "", line)
                                keep(line) }' | sort -u
}

# The index's entries as "page name" lines.
index_entries() {
  awk '/^## \[[^]]*\]\([^)]*\)/ { page = $0; sub(/^[^(]*\(/, "", page); sub(/\).*/, "", page); next }
       /^## / { page = "" }
       /^\| `/ && page != "" { name = $0; sub(/^\| `/, "", name); sub(/`.*/, "", name)
                               print page, name }' "$1"
}

# GitHub's anchors of a Markdown file's headings, one per line: the heading's text with
# links and code marks taken as their text, lower case, punctuation dropped, spaces made
# hyphens, and -1, -2, ... after a repeated one.
anchors() {
  awk '/^```/ { fence = !fence; next }
       !fence && /^#+ / { h = $0; sub(/^#+ +/, "", h)
                          gsub(/\]\([^)]*\)/, "", h); h = tolower(h)
                          gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
                          if (h in seen) { seen[h]++; h = h "-" seen[h] } else seen[h] = 0
                          print h }' "$1"
}

# Every relative link of a Markdown file as "target" lines, outside code.
links() {
  awk '/^```/ { fence = !fence; next }
       fence { next }
       { line = $0; gsub(/`[^`]*`/, "", line)
         while (match(line, /\]\([^) ]+\)/)) {
           t = substr(line, RSTART + 2, RLENGTH - 3); line = substr(line, RSTART + RLENGTH)
           if (t !~ /^[a-z]+:/) print t } }' "$1"
}

check_tree() {
  src=$1
  bad=0
  manual=$src/docs/manual
  index=$manual/README.md
  [ -f "$index" ] || { echo "docs/manual/README.md (the manual's index) is missing"; return 1; }
  names=$(public_names "$src")
  [ -n "$names" ] || { echo "no public names found in include/*.h"; return 1; }
  entries=$(index_entries "$index")
  for n in $names; do
    echo "$entries" | awk -v n="$n" '$2 == n { found = 1 } END { exit !found }' ||
      { echo "docs/manual/README.md does not list $n"; bad=1; }
  done
  echo "$entries" | {
    fail=0
    while read -r page name; do
      grep -qw -- "$name" "$src"/include/*.h ||
        { echo "docs/manual/README.md lists $name, which no header in include/ holds"; fail=1; }
      if [ ! -f "$manual/$page" ]; then
        echo "docs/manual/README.md links $page, which does not exist"; fail=1
      elif ! grep -qw -- "$name" "$manual/$page"; then
        echo "docs/manual/README.md lists $name under $page, which does not mention it"; fail=1
      fi
    done
    exit $fail
  } || bad=1
  grep -ho 'X([A-Z_]*, [0-9]*, "[^"]*")' "$src"/include/*.h | {
    fail=0
    while read -r x; do
      row=$(echo "$x" | sed 's/^X(\([A-Z_]*\), \([0-9]*\), "\(.*\)")$/| `CUJIT_\1` | \2 | \3 |/')
      grep -qxF -- "$row" "$manual/errors.md" ||
        { echo "docs/manual/errors.md has no row '$row'"; fail=1; }
    done
    exit $fail
  } || bad=1
  for md in "$src/README.md" $(find "$src/docs" -name '*.md' | sort); do
    dir=$(dirname "$md")
    rel=${md#"$src"/}
    for t in $(links "$md"); do
      file=${t%%#*}
      anchor=""
      case $t in *"#"*) anchor=${t#*#} ;; esac
      if [ -z "$file" ]; then target=$md; else target=$dir/$file; fi
      if [ ! -e "$target" ]; then
        echo "$rel links $t: no such file"; bad=1; continue
      fi
      if [ -n "$anchor" ]; then
        case $target in
          *.md) anchors "$target" | grep -qxF -- "$anchor" ||
                  { echo "$rel links $t: no such heading"; bad=1; } ;;
        esac
      fi
    done
  done
  return $bad
}

# Made-up trees with one fault each: every fault must be caught and named.
self_test() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-manual-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mk() { # a good tree in $tmp/$1
    t=$tmp/$1
    mkdir -p "$t/include" "$t/docs/manual"
    cat >"$t/include/cujit.h" <<'H'
#define CUJIT_API __attribute__((visibility("default")))
#define CUJIT_STATUS_MAP(X) X(OK, 0, "success") X(ERROR_FILE, 4, "a file could not be read")
typedef struct cujit_thing cujit_thing;
typedef void (*cujit_thing_fn)(int level);
typedef struct cujit_opts {
  int size;
} cujit_opts;
#define CUJIT_OPTS_INIT {0}
#define CUJIT_PRIVATE_ 1
CUJIT_API int cujit_make(cujit_thing **out,
                         int n);
static inline int cujit_helper(int v) { return v; }
static inline int cujit_private_(int v) { return v; }
H
    printf '# Things\n\n`cujit_make` `cujit_helper` `cujit_thing` `cujit_thing_fn` `cujit_opts` `CUJIT_OPTS_INIT` `CUJIT_STATUS_MAP`; [errors](errors.md#status-codes).\n' >"$t/docs/manual/things.md"
    printf '# Errors\n\n## Status codes\n\n| `CUJIT_OK` | 0 | success |\n| `CUJIT_ERROR_FILE` | 4 | a file could not be read |\n' >"$t/docs/manual/errors.md"
    printf '# Index\n\n## [Things](things.md)\n\n| Name | What |\n|---|---|\n' >"$t/docs/manual/README.md"
    for n in cujit_make cujit_helper cujit_thing cujit_thing_fn cujit_opts CUJIT_OPTS_INIT CUJIT_STATUS_MAP; do
      printf '| `%s` | a thing |\n' "$n" >>"$t/docs/manual/README.md"
    done
    printf '# Project\n\nRead [the manual](docs/manual/README.md#things).\n\n```\n[not a link](nowhere.md)\n```\n' >"$t/README.md"
  }
  expect() { # expect TREE TEXT: the check fails on TREE, saying TEXT
    if out=$(check_tree "$tmp/$1"); then echo "self-test: $1 passed, but should not"; return 1; fi
    case $out in *"$2"*) ;; *) echo "self-test: $1 failed without '$2':"; echo "$out"; return 1 ;; esac
  }
  mk good
  out=$(check_tree "$tmp/good") || { echo "self-test: a good tree failed:"; echo "$out"; return 1; }
  [ "$(public_names "$tmp/good" | tr '\n' ' ')" = \
    "CUJIT_OPTS_INIT CUJIT_STATUS_MAP cujit_helper cujit_make cujit_opts cujit_thing cujit_thing_fn " ] ||
    { echo "self-test: public names: $(public_names "$tmp/good" | tr '\n' ' ')"; return 1; }
  mk missing; sed -i '/cujit_make/d' "$tmp/missing/docs/manual/README.md"
  expect missing "docs/manual/README.md does not list cujit_make"
  mk stale; printf '| `cujit_unmade` | gone |\n' >>"$tmp/stale/docs/manual/README.md"
  expect stale "lists cujit_unmade, which no header in include/ holds"
  mk unmentioned; sed -i 's/`cujit_helper` //' "$tmp/unmentioned/docs/manual/things.md"
  expect unmentioned "lists cujit_helper under things.md, which does not mention it"
  mk nopage; sed -i 's/(things.md)/(thing.md)/' "$tmp/nopage/docs/manual/README.md"
  expect nopage "links thing.md, which does not exist"
  mk status; sed -i '/ERROR_FILE/d' "$tmp/status/docs/manual/errors.md"
  expect status "has no row '| \`CUJIT_ERROR_FILE\` | 4 | a file could not be read |'"
  mk link; printf 'See [gone](../gone.md).\n' >>"$tmp/link/docs/manual/things.md"
  expect link "docs/manual/things.md links ../gone.md: no such file"
  mk anchor; sed -i 's/#things/#thing/' "$tmp/anchor/README.md"
  expect anchor "README.md links docs/manual/README.md#thing: no such heading"
  echo "check_manual: every made-up fault was caught"
}

case ${1:-} in
  --names) public_names "$2" ;;
  --self-test) self_test ;;
  "") echo "usage: check_manual.sh SOURCE_DIR | --names SOURCE_DIR | --self-test" >&2; exit 2 ;;
  *) if check_tree "$1"; then echo "check_manual: the index names every public name; every link resolves"
     else exit 1; fi ;;
esac
