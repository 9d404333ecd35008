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
# - each table of operations (a CUJIT_<FAMILY>_MAP of X(NAME, number, "numpy", "cuda",
#   "types", "what") rows: CUJIT_BINOP_MAP, CUJIT_UNOP_MAP, CUJIT_REDOP_MAP) is listed in
#   the manual as rows of its own, in its order: '| `CUJIT_<FAMILY>_<NAME>` | `numpy` |
#   kinds | what |', the kinds written out (b bool, i integers, f floats, c complex), and
#   no other row of that family (op_rows prints them);
# - every relative link of README.md and of the Markdown files under docs/ leads to a file
#   that exists, and an anchor (#section) to a heading of that file;
# - every name of those files' code (inline and in blocks) that looks like cujit's
#   (cujit_..., CUJIT_...) is one: a name of the headers, an environment variable cujit
#   reads or a CMake name of the build (unknown_doc_names says which where).
# Usage: check_manual.sh SOURCE_DIR      checks the tree, naming every fault; exits 1 on any
#        check_manual.sh --names DIR     prints the public names of DIR/include/*.h
#        check_manual.sh --op-rows DIR   prints the manual's rows of the operations' tables
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

# The enumerators the X-macro tables of include/*.h make, one per line: CUJIT_ and the row's
# name for CUJIT_STATUS_MAP, CUJIT_<FAMILY>_ and the row's name for CUJIT_<FAMILY>_MAP.
map_names() {
  cat "$1"/include/*.h | awk '
    /^#define CUJIT_[A-Z]+_MAP\(X\)/ { fam = $2; sub(/^CUJIT_/, "", fam); sub(/_MAP\(X\)$/, "", fam)
                                       pre = fam == "STATUS" ? "CUJIT_" : "CUJIT_" fam "_"; inmap = 1 }
    inmap { line = $0
            while (match(line, /X\([A-Z0-9_]+, [0-9]+,/)) {
              n = substr(line, RSTART + 2, RLENGTH - 2); sub(/,.*/, "", n); print pre n
              line = substr(line, RSTART + RLENGTH) } }
    inmap && !/\\$/ { inmap = 0 }'
}

# The manual's rows of the operations' tables (X(NAME, number, "numpy", "cuda", "types",
# "what") rows), in the tables' order: "FAMILY|row" lines.
op_rows() {
  cat "$1"/include/*.h | awk '
    function kinds(t,   out, i, c, w) {
      out = ""
      for (i = 1; i <= length(t); i++) {
        c = substr(t, i, 1)
        w = c == "b" ? "bool" : c == "i" ? "integers" : c == "f" ? "floats" : c == "c" ? "complex" : "?" c
        out = out (out == "" ? "" : ", ") w
      }
      return out
    }
    /^#define CUJIT_[A-Z]+_MAP\(X\)/ { fam = $2; sub(/^CUJIT_/, "", fam); sub(/_MAP\(X\)$/, "", fam); inmap = 1 }
    inmap && match($0, /X\([A-Z0-9_]+, [0-9]+, "[^"]*", "[^"]*", "[^"]*", "[^"]*"\)/) {
      item = substr($0, RSTART + 2, RLENGTH - 3)
      name = item; sub(/,.*/, "", name)
      n = split(item, q, "\"")
      printf "%s|| `CUJIT_%s_%s` | `%s` | %s | %s |\n", fam, fam, name, q[2], kinds(q[6]), q[8]
    }
    inmap && !/\\$/ { inmap = 0 }'
}

# The manual against op_rows: each family's rows, in order, and no other row of the family.
check_op_rows() {
  src=$1
  rows=$(op_rows "$src")
  [ -n "$rows" ] || return 0
  fail=0
  for fam in $(echo "$rows" | cut -d'|' -f1 | uniq); do
    want=$(echo "$rows" | sed -n "s/^$fam|//p")
    got=$(cat "$src"/docs/manual/*.md | grep "^| \`CUJIT_${fam}_" | grep -v "^| \`CUJIT_${fam}_MAP\`" ||
      true)
    if [ "$want" != "$got" ]; then
      echo "docs/manual: the rows of CUJIT_${fam}_MAP are not the table's (check_manual.sh --op-rows prints them):"
      printf '%s\n' "$want" >"${TMPDIR:-/tmp}/cujit-oprows-want.$$"
      printf '%s\n' "$got" >"${TMPDIR:-/tmp}/cujit-oprows-got.$$"
      diff "${TMPDIR:-/tmp}/cujit-oprows-want.$$" "${TMPDIR:-/tmp}/cujit-oprows-got.$$" |
        sed -n 's/^< /  missing: /p; s/^> /  not in the table: /p'
      rm -f "${TMPDIR:-/tmp}/cujit-oprows-want.$$" "${TMPDIR:-/tmp}/cujit-oprows-got.$$"
      fail=1
    fi
  done
  return $fail
}

# Every name the docs may give as cujit's, as "kind name" lines:
#   c      a name of include/*.h's code (comments and strings left out), and each status
#          CUJIT_STATUS_MAP makes (CUJIT_ + its first column);
#   env    a variable of the table in src/common/env.c;
#   cmake  a CMake variable (set or option) or target of the build (CMakeLists.txt, cmake/);
known_names() {
  cat "$1"/include/*.h | awk '
    { line = $0; code = ""
      while (line != "") {
        if (comment) {
          e = index(line, "*/"); if (!e) break
          line = substr(line, e + 2); comment = 0; continue
        }
        b = index(line, "/*"); d = index(line, "//")
        if (d && (!b || d < b)) { code = code substr(line, 1, d - 1); break }
        if (!b) { code = code line; break }
        code = code substr(line, 1, b - 1); line = substr(line, b + 2); comment = 1
      }
      gsub(/"([^"\\]|\\.)*"/, "", code)
      while (match(code, /[A-Za-z0-9_]*(cujit|CUJIT)_[A-Za-z0-9_]*/)) {
        n = substr(code, RSTART, RLENGTH); code = substr(code, RSTART + RLENGTH)
        if (n ~ /^(cujit|CUJIT)_/) print "c", n
      } }'
  map_names "$1" | sed 's/^/c /'
  sed -n 's/^ *{*\.name = "\([A-Za-z0-9_]*\)".*/env \1/p' "$1/src/common/env.c"
  cat "$1"/CMakeLists.txt "$1"/*/CMakeLists.txt "$1"/cmake/*.cmake 2>/dev/null |
    grep -o '\(set\|option\|add_library\|add_executable\)( *[A-Za-z0-9_]*' |
    sed 's/^.*( */cmake /'
}

# The backquoted names of the docs (README.md, docs/*.md, docs/manual/*.md) that look like
# cujit's (cujit_..., CUJIT_...) and are none of known_names, as "file:line: message"
# lines. Inline code may give any kind; a C or C++ block only names of the headers (outside
# its strings and comments). A name followed by '*' stands for those it begins; one
# followed by a file's extension (cujit_array.h) is a file. In a list of inline names
# ("`A`, `B` and `C`"), two or more of one family (CUJIT_UNOP_...) make every other
# upper-case name of the list a C name too: `CUJIT_LOG` among the CUJIT_UNOP_ names is
# refused, though it is an environment variable.
unknown_doc_names() {
  src=$1
  names_file=$(mktemp "${TMPDIR:-/tmp}/cujit-names-XXXXXX")
  known_names "$src" | sort -u >"$names_file"
  for md in "$src/README.md" $(find "$src/docs" -name '*.md' | sort); do
    awk -v rel="${md#"$src"/}" -v names="$names_file" '
      BEGIN { while ((getline l < names) > 0) { split(l, w, " "); kind[w[2]] = kind[w[2]] w[1] " " } }
      function is_c(n) { return index(kind[n], "c ") > 0 }
      function known(n, c_only) {
        if (c_only) return is_c(n)
        return n in kind
      }
      function known_prefix(p, c_only,   k) {
        for (k in kind) if (index(k, p) == 1 && (!c_only || is_c(k))) return 1
        return 0
      }
      function bad(line, msg) { print rel ":" line ": " msg; }
      # Checks the names of text, found on line ln; c_only: a C or C++ block.
      function names_of(text, ln, c_only,   n, rest, before) {
        while (match(text, /[A-Za-z0-9_]*(cujit|CUJIT)_[A-Za-z0-9_]*/)) {
          n = substr(text, RSTART, RLENGTH); rest = substr(text, RSTART + RLENGTH)
          before = RSTART > 1 ? substr(text, RSTART - 1, 1) : ""
          text = rest
          if (n !~ /^(cujit|CUJIT)_/ || before ~ /[-.\/]/) continue
          if (rest ~ /^\.(h|c|md|txt|sh|so|a|pc|cmake|cu)([^A-Za-z0-9_]|$)/) continue
          if (rest ~ /^\*/) {
            if (!known_prefix(n, c_only)) bad(ln, "`" n "*` names nothing: no name begins with " n)
          } else if (!known(n, c_only))
            bad(ln, "`" n "` is not declared in include/*.h" (c_only ? "" : \
                    ", nor an environment variable of src/common/env.c or a CMake name"))
        }
      }
      # The inline code of a paragraph (lines joined), its lists checked for families.
      function spans(par, first,   text, ln, sep, s, code, m) {
        text = par; ln = first; m = 0
        while (match(text, /`[^`]+`/)) {
          sep = substr(text, 1, RSTART - 1)
          ln += gsub(/\n/, " ", sep)
          s = substr(text, RSTART + 1, RLENGTH - 2); text = substr(text, RSTART + RLENGTH)
          code = s; gsub(/"([^"\\]|\\.)*"/, "", code) # a string names nothing
          names_of(code, ln, 0)
          if (m && sep !~ /^ *(,|\/)? *((and|or) )? *$/) { family(m); m = 0 }
          m++; item[m] = s; item_line[m] = ln
        }
        if (m) family(m)
      }
      function family(m,   i, f) {
        delete count
        for (i = 1; i <= m; i++)
          if (item[i] ~ /^CUJIT_[A-Z0-9]+_[A-Z0-9_]+$/ && is_c(item[i])) {
            f = item[i]; sub(/^CUJIT_[A-Z0-9]+_/, "", f); f = substr(item[i], 1, length(item[i]) - length(f))
            count[f]++
          }
        for (f in count) if (count[f] >= 2)
          for (i = 1; i <= m; i++)
            if (item[i] ~ /^CUJIT_[A-Z0-9_]+$/ && !is_c(item[i]))
              bad(item_line[i], "`" item[i] "` is listed among " f "* names, but is not declared in include/*.h")
      }
      /^```/ {
        if (fence) { fence = 0; next }
        if (par != "") { spans(par, first); par = "" }
        fence = 1; lang = substr($0, 4); next
      }
      fence {
        line = $0
        if (lang ~ /^(c|cpp|c\+\+)$/) {
          gsub(/"([^"\\]|\\.)*"/, "", line); sub(/\/\/.*/, "", line)
          gsub(/\/\*([^*]|\*[^\/])*\*\//, "", line)
          names_of(line, NR, 1)
        } else names_of(line, NR, 0)
        next
      }
      /^[ \t]*$/ { if (par != "") spans(par, first); par = ""; next }
      { if (par == "") { par = $0; first = NR } else par = par "\n" $0 }
      END { if (par != "") spans(par, first) }' "$md"
  done
  rm -f "$names_file"
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
  check_op_rows "$src" || bad=1
  unknown=$(unknown_doc_names "$src")
  [ -z "$unknown" ] || { echo "$unknown"; bad=1; }
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
typedef enum cujit_kind { CUJIT_KIND_A = 0, CUJIT_KIND_B = 1 } cujit_kind;
#define CUJIT_OPTS_INIT {0}
#define CUJIT_OP_MAP(X) \
  X(ONE, 0, "one", "+", "bf", "the first") \
  X(TWO, 1, "two", "(a || b)", "c", "the second")
#define CUJIT_PRIVATE_ 1
CUJIT_API int cujit_make(cujit_thing **out,
                         int n);
static inline int cujit_helper(int v) { return v; }
static inline int cujit_private_(int v) { return v; }
H
    printf '# Things\n\n`cujit_make` `cujit_helper` `cujit_thing` `cujit_thing_fn` `cujit_opts` `cujit_kind` `CUJIT_OPTS_INIT` `CUJIT_STATUS_MAP` `CUJIT_OP_MAP`; [errors](errors.md#status-codes).\n' >"$t/docs/manual/things.md"
    printf '\n| Op | NumPy | Types | What |\n|---|---|---|---|\n| `CUJIT_OP_ONE` | `one` | bool, floats | the first |\n| `CUJIT_OP_TWO` | `two` | complex | the second |\n' >>"$t/docs/manual/things.md"
    printf '# Errors\n\n## Status codes\n\n| `CUJIT_OK` | 0 | success |\n| `CUJIT_ERROR_FILE` | 4 | a file could not be read |\n' >"$t/docs/manual/errors.md"
    printf '# Index\n\n## [Things](things.md)\n\n| Name | What |\n|---|---|\n' >"$t/docs/manual/README.md"
    for n in cujit_make cujit_helper cujit_thing cujit_thing_fn cujit_opts cujit_kind CUJIT_OPTS_INIT \
             CUJIT_STATUS_MAP CUJIT_OP_MAP; do
      printf '| `%s` | a thing |\n' "$n" >>"$t/docs/manual/README.md"
    done
    printf '# Project\n\nRead [the manual](docs/manual/README.md#things).\n\n```\n[not a link](nowhere.md)\n```\n' >"$t/README.md"
    mkdir -p "$t/src/common"
    printf '    {.name = "CUJIT_THING_LOG",\n' >"$t/src/common/env.c"
    printf 'option(CUJIT_BUILD_THINGS "things" ON)\nadd_library(cujit_things x.c)\n' >"$t/CMakeLists.txt"
    cat >>"$t/README.md" <<'M'
Set `CUJIT_THING_LOG=1` or `CUJIT_BUILD_THINGS`; link `cujit_things`; read `cujit.h`;
call `cujit_make(&t, 2)` or `cujit_helper(1)`, any `cujit_*`, and check `CUJIT_OK`,
`CUJIT_ERROR_FILE` or `"CUJIT_NOT_A_NAME"`; a kind, `CUJIT_KIND_A` or `CUJIT_KIND_B`.

```c
cujit_thing *t = NULL;
cujit_make(&t, 2); /* not cujit_unmade */
setenv("CUJIT_THING_LOG", "1", 1);
```
M
  }
  expect() { # expect TREE TEXT: the check fails on TREE, saying TEXT
    if out=$(check_tree "$tmp/$1"); then echo "self-test: $1 passed, but should not"; return 1; fi
    case $out in *"$2"*) ;; *) echo "self-test: $1 failed without '$2':"; echo "$out"; return 1 ;; esac
  }
  mk good
  out=$(check_tree "$tmp/good") || { echo "self-test: a good tree failed:"; echo "$out"; return 1; }
  [ "$(public_names "$tmp/good" | tr '\n' ' ')" = \
    "CUJIT_OPTS_INIT CUJIT_OP_MAP CUJIT_STATUS_MAP cujit_helper cujit_kind cujit_make cujit_opts cujit_thing cujit_thing_fn " ] ||
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
  mk name; sed -i 's/`cujit_helper(1)`/`cujit_helpr(1)`/' "$tmp/name/README.md"
  expect name "README.md:9: \`cujit_helpr\` is not declared in include/*.h, nor an environment"
  mk prefix; sed -i 's/`cujit_\*`/`cujit_thang_*`/' "$tmp/prefix/README.md"
  expect prefix "README.md:9: \`cujit_thang_*\` names nothing"
  mk block; sed -i 's/^cujit_make(&t, 2);/CUJIT_THING_LOG; &/' "$tmp/block/README.md"
  expect block "README.md:14: \`CUJIT_THING_LOG\` is not declared in include/*.h"
  mk family; sed -i 's/`CUJIT_KIND_A` or/`CUJIT_KIND_A`, `CUJIT_THING_LOG` or/' "$tmp/family/README.md"
  expect family "README.md:10: \`CUJIT_THING_LOG\` is listed among CUJIT_KIND_* names"
  mk oprow; sed -i '/CUJIT_OP_TWO/d' "$tmp/oprow/docs/manual/things.md"
  expect oprow "  missing: | \`CUJIT_OP_TWO\` | \`two\` | complex | the second |"
  mk opkinds; sed -i 's/| bool, floats |/| floats |/' "$tmp/opkinds/docs/manual/things.md"
  expect opkinds "  not in the table: | \`CUJIT_OP_ONE\` | \`one\` | floats | the first |"
  mk opname; sed -i 's/`CUJIT_OP_ONE`/`CUJIT_OP_UNO`/' "$tmp/opname/docs/manual/things.md"
  expect opname "\`CUJIT_OP_UNO\` is not declared in include/*.h"
  echo "check_manual: every made-up fault was caught"
}

case ${1:-} in
  --names) public_names "$2" ;;
  --op-rows) op_rows "$2" | cut -d'|' -f2- ;;
  --self-test) self_test ;;
  "") echo "usage: check_manual.sh SOURCE_DIR | --names SOURCE_DIR | --self-test" >&2; exit 2 ;;
  *) if check_tree "$1"; then
       echo "check_manual: the index names every public name; every link resolves; every name is cujit's"
     else exit 1; fi ;;
esac
