#!/bin/sh
# The tests are findable by layer (tests/README.md): in the build's CTest list
# - every test has a label beside cpu, gpu, multigpu and stress: a folder of src/ it tests,
#   or one of the others the map names (docs, headers, package, scripts, testtools, sample);
# - every such label is one of those, so a misspelt folder is caught;
# - every folder of src/ labels at least one test (`ctest -L store` finds the store's);
# - each label and test that tests/README.md's map names (its first and last columns) is
#   one of the build's.
# Usage: check_labels.sh SOURCE_DIR BUILD_DIR [CTEST]   names every fault; exits 1 on any
#        check_labels.sh --self-test                     checks that made-up faults are caught
set -eu
export LC_ALL=C
others="docs headers package scripts testtools sample"
kinds="cpu gpu multigpu stress"

# "NAME LABEL..." for each test of a `ctest -N -V` listing on stdin.
tests_and_labels() {
  awk '/^Labels:/ { labels = $0; sub(/^Labels: */, "", labels); next }
       /^ *Test +#[0-9]+: / { name = $0; sub(/^ *Test +#[0-9]+: */, "", name)
                              print name " " labels; labels = "" }'
}

# "label NAME" and "test NAME" for each backquoted name of the map's first and last columns.
map_names() {
  [ -f "$1/tests/README.md" ] || return 0
  awk '/^\| `/ { n = split($0, col, "|")
                 l = col[2]; gsub(/[ `]/, "", l); print "label " l
                 t = col[n - 1]
                 while (match(t, /`[a-z0-9_]+`/)) {
                   print "test " substr(t, RSTART + 1, RLENGTH - 2); t = substr(t, RSTART + RLENGTH) } }' \
    "$1/tests/README.md"
}

# Checks a listing (stdin) against the folders under $1/src and the map.
check_listing() {
  folders=$(cd "$1/src" && for d in */; do printf '%s ' "${d%/}"; done)
  map=$(map_names "$1" | tr '\n' ';')
  tests_and_labels | awk -v folders="$folders" -v others="$others" -v kinds="$kinds" -v map="$map" '
    BEGIN { n = split(folders, f, " "); for (i = 1; i <= n; i++) folder[f[i]] = 1
            n = split(others, o, " "); for (i = 1; i <= n; i++) other[o[i]] = 1
            n = split(kinds, k, " "); for (i = 1; i <= n; i++) kind[k[i]] = 1 }
    { found = 0
      for (i = 2; i <= NF; i++) {
        if ($i in kind) continue
        if ($i in folder) { used[$i] = 1; found = 1 }
        else if ($i in other) found = 1
        else { print "the test " $1 " has the label " $i ", which is no folder of src/ nor one of: " others; bad = 1 }
      }
      if (!found) { print "the test " $1 " has no label of what it tests: add it to a cujit_label() line of tests/CMakeLists.txt"; bad = 1 }
      count++; test[$1] = 1; for (i = 2; i <= NF; i++) label[$i] = 1 }
    END { if (!count) { print "no tests found"; exit 1 }
          n = split(map, m, ";")
          for (i = 1; i <= n; i++) {
            if (m[i] == "") continue
            split(m[i], w, " ")
            if (w[1] == "label" && !(w[2] in label)) { print "tests/README.md maps the label " w[2] ", which no test has"; bad = 1 }
            if (w[1] == "test" && !(w[2] in test)) { print "tests/README.md names the test " w[2] ", which the build does not have"; bad = 1 } }
          for (d in folder) if (!(d in used)) { print "no test is labelled " d ": label the tests of src/" d "/ (cujit_label in tests/CMakeLists.txt)"; bad = 1 }
          exit bad }'
}

self_test() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-labels-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src/store" "$tmp/src/launch"
  good='Labels: cpu store
  Test  #1: test_cache
Labels: gpu launch
  Test  #2: test_gpu_launch
Labels: cpu docs
  Test #3: manual_index'
  expect() {
    if out=$(echo "$2" | check_listing "$tmp"); then echo "self-test: $1 passed, but should not"; return 1; fi
    case $out in *"$3"*) ;; *) echo "self-test: $1 failed without '$3':"; echo "$out"; return 1 ;; esac
  }
  out=$(echo "$good" | check_listing "$tmp") || { echo "self-test: a good listing failed:"; echo "$out"; return 1; }
  expect unlabelled "$(echo "$good" | sed 's/^Labels: cpu docs$/Labels: cpu/')" \
    "the test manual_index has no label of what it tests"
  expect misspelt "$(echo "$good" | sed 's/cpu store/cpu stor/')" "has the label stor, which is no folder"
  mkdir "$tmp/tests"
  # shellcheck disable=SC2016 # the backquotes are Markdown's, not the shell's
  printf '| `store` | the disk cache | `test_cache`, `test_gone` |\n' >"$tmp/tests/README.md"
  expect map "$good" "tests/README.md names the test test_gone, which the build does not have"
  # shellcheck disable=SC2016 # the backquotes are Markdown's, not the shell's
  printf '| `stor` | the disk cache | `test_cache` |\n' >"$tmp/tests/README.md"
  expect maplabel "$good" "tests/README.md maps the label stor, which no test has"
  rm "$tmp/tests/README.md"
  mkdir "$tmp/src/remote"
  expect folder "$good" "no test is labelled remote"
  echo "check_labels: every made-up fault was caught"
}

case ${1:-} in
  --self-test) self_test ;;
  "") echo "usage: check_labels.sh SOURCE_DIR BUILD_DIR [CTEST] | --self-test" >&2; exit 2 ;;
  *) [ $# -ge 2 ] || { echo "usage: check_labels.sh SOURCE_DIR BUILD_DIR [CTEST]" >&2; exit 2; }
     listing=$(cd "$2" && "${3:-ctest}" -N -V) || { echo "ctest could not list the tests of $2"; exit 1; }
     if echo "$listing" | check_listing "$1"; then
       echo "check_labels: every test is labelled with what it tests, every folder of src/ has tests"
     else exit 1; fi ;;
esac
