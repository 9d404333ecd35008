#!/bin/sh
# cujit's Debian packages of several versions on one system: this tree's (THIS, a directory
# holding its three packages), the next minor version's (NEXT: this tree's packages built
# with CUJIT_PRETEND_VERSION) and the released ones before the compile worker had a
# directory of its own (stand-ins made by standins.sh: 0.1.0 and 0.2.0, those older than
# this tree). They are installed into a root directory of their own with dpkg --root (no
# privilege needed), and with --apt also into the system with apt:
# - upgrades: each released version in turn, then this tree, then next. 0.2.0 goes over
#   0.1.0 only with --force-overwrite, as it did for users (both library packages hold
#   /usr/libexec/cujit-worker: that the stand-ins are refused without it shows that they
#   are faithful); this tree and next need no force. Library packages stay side by side,
#   libcujit-dev and cujit are upgraded;
# - each released version alone, then this tree, with no force; then next's libcujit-dev
#   is refused beside this tree's cujit (its Breaks), next goes in, and this tree's
#   library removed leaves next's whole.
# After each step every library package installed has all its files, and each of this
# tree's libraries installed runs its own version's compile worker, found in its own
# directory: tests/consumer/consumer.c, built against each soname, compiles a batch with a
# worker, and the worker it ran must be LIBEXEC/cujit-SOVERSION/cujit-worker of the root,
# greeting as the library's version. The packages installed with apt are purged at the end,
# whatever happened.
# Usage: versions.sh THIS NEXT [--apt]   (--apt: as root; it changes the system's packages)
# shellcheck disable=SC2016 # dpkg-query's formats are its own, not the shell's
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
this=$(cd "$1" && pwd)
next=$(cd "$2" && pwd)
use_apt=${3:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/cujit-versions-XXXXXX")
work=$(cd "$work" && pwd -P)
apt="apt-get -o DPkg::Lock::Timeout=600"
export DEBIAN_FRONTEND=noninteractive
export CUJIT_CACHE_DIR="$work/cache" # the probes leave the user's cache alone
purge=""
cleanup() {
  # shellcheck disable=SC2086 # one package a word
  [ -z "$purge" ] || $apt purge -y -qq $purge >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "versions.sh: $*" >&2
  exit 1
}
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

# lib_deb DIR: the library's package among DIR's three
lib_deb() { ls "$1"/libcujit[0-9]*.deb; }
field() { dpkg-deb -f "$(lib_deb "$1")" "$2"; }
# soversion DIR: the soname's version (its shlibs: "libcujit 0.2 libcujit0.2 (>= ...)")
soversion() { dpkg-deb -I "$(lib_deb "$1")" shlibs | awk '{ print $2; exit }'; }
this_lib=$(field "$this" Package)
this_version=$(field "$this" Version)
this_so=$(soversion "$this")
next_lib=$(field "$next" Package)
next_version=$(field "$next" Version)
next_so=$(soversion "$next")
dpkg --compare-versions "$next_version" gt "$this_version" ||
  fail "NEXT ($next_version) is not later than THIS ($this_version)"

sh "$here/standins.sh" "$work/released"
released="" # those older than this tree, oldest first
for v in 0.1.0 0.2.0; do
  if dpkg --compare-versions "$v-1" lt "$this_version"; then released="$released $v"; fi
done
libs="$this_lib $next_lib"
for v in $released; do libs="$libs $(field "$work/released/$v" Package)"; done
echo "packages: released${released:- (none older than this tree)}, this tree $this_version" \
  "($this_lib), next $next_version ($next_lib)"

# The probes: the consumer linked with each of the two sonames (built against this tree's
# headers, which both libraries have), and cuda.h's directory as the package's cujit.pc
# names it.
dpkg-deb -x "$(lib_deb "$this")" "$work/x-this"
dpkg-deb -x "$(lib_deb "$next")" "$work/x-next"
cflags=$(dpkg-deb --fsys-tarfile "$this"/libcujit-dev_*.deb |
  tar -xOf - "./usr/lib/$triplet/pkgconfig/cujit.pc" | sed -n 's/^Cflags: //p')
cuda=""
for word in $cflags; do case $word in -I/*) cuda="$cuda $word" ;; esac; done
# shellcheck disable=SC2086 # the flags are words
cc "$src/tests/consumer/consumer.c" -I"$src/include" $cuda \
  "$work/x-this/usr/lib/$triplet/libcujit.so.$this_so" -o "$work/probe-this"
# shellcheck disable=SC2086
cc "$src/tests/consumer/consumer.c" -I"$src/include" $cuda \
  "$work/x-next/usr/lib/$triplet/libcujit.so.$next_so" -o "$work/probe-next"

# ---- one root ----

root="" # "" is the system (apt)
use_root() {
  root=$work/$1
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  : >"$root/var/lib/dpkg/status"
  # what the packages depend on, as the system has it
  for p in $(for d in "$this"/*.deb "$work"/released/*/*.deb; do dpkg-deb -f "$d" Depends; done |
    tr ',' '\n' | sed 's/[|(].*//; s/ //g' | sort -u); do
    case $p in libcujit* | cujit) continue ;; esac
    dpkg-query -s "$p" >>"$root/var/lib/dpkg/status" 2>/dev/null ||
      fail "$p, which the packages depend on, is not installed here"
    echo >>"$root/var/lib/dpkg/status"
  done
}
# The released packages' postinst and postrm run ldconfig: in a root of its own, whose
# libraries the probes find by LD_LIBRARY_PATH, it has nothing to do.
mkdir "$work/bin"
printf '#!/bin/sh\nexit 0\n' >"$work/bin/ldconfig"
chmod 755 "$work/bin/ldconfig"
in_root() {
  PATH="$work/bin:$PATH" dpkg --root="$root" --force-not-root --force-script-chrootless \
    --log="$work/dpkg.log" "$@" >"$work/out" 2>&1
}
query() {
  if [ -n "$root" ]; then dpkg-query --admindir="$root/var/lib/dpkg" "$@"; else dpkg-query "$@"; fi
}
# install [FORCE] DIR...: the packages of each DIR, together
install() {
  force=""
  case $1 in --force-*) force=$1 && shift ;; esac
  # shellcheck disable=SC2046 # one path a word
  set -- $(for d in "$@"; do ls "$d"/*.deb; done)
  if [ -n "$root" ]; then
    # shellcheck disable=SC2086 # no force: no word
    in_root $force -i "$@" || { cat "$work/out" >&2; fail "dpkg could not install $*"; }
  else
    $apt install -y -qq --no-install-recommends ${force:+-o Dpkg::Options::=$force} "$@" \
      >"$work/out" 2>&1 || { cat "$work/out" >&2; fail "apt could not install $*"; }
    for d in "$@"; do purge="$purge $(dpkg-deb -f "$d" Package)"; done
  fi
}
installed() { [ "$(query -W -f '${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }
# expect PACKAGE VERSION: installed at that version
expect() {
  got=$(query -W -f '${db:Status-Abbrev}${Version}' "$1" 2>/dev/null || true)
  [ "$got" = "ii $2" ] || fail "$1 is '$got', not installed at $2"
}
# runs_own PROBE VERSION SOVERSION: the probe's library runs its own version's worker
runs_own() {
  out=$(LD_LIBRARY_PATH="$root/usr/lib/$triplet" "$work/$1" --worker 2>&1) ||
    fail "$1 failed: $out"
  want="$root/usr/libexec/cujit-$3/cujit-worker (cujit ${2%-*})"
  [ "$(echo "$out" | sed -n 's/^worker: //p')" = "$want" ] ||
    fail "$1 did not run its own worker, $want: $out"
  echo "    ${1#probe-}'s library ran $want"
}
# check STEP: every library package installed is whole, and this tree's and next's
# libraries run their own workers
check() {
  # shellcheck disable=SC2086 # one package a word
  echo "  $1: $(query -W -f '${db:Status-Abbrev}${Package} ${Version}  ' $libs libcujit-dev cujit \
    2>/dev/null | sed 's/ii //g')"
  for p in $libs; do
    installed "$p" || continue
    query -L "$p" | while read -r f; do
      [ -e "$root$f" ] || [ -L "$root$f" ] || fail "after $1, $p's $f is gone"
    done
  done
  if installed "$this_lib"; then runs_own probe-this "$this_version" "$this_so"; fi
  if installed "$next_lib"; then runs_own probe-next "$next_version" "$next_so"; fi
}

# upgrades ROOT: each released version, this tree, next
upgrades() {
  use_root "$1"
  previous=""
  for v in $released; do
    if [ -n "$previous" ]; then
      ! in_root -i "$work"/released/"$v"/*.deb ||
        fail "released $v installed over $previous without force: the stand-ins are not faithful"
      grep -q "trying to overwrite '/usr/libexec/cujit-worker'" "$work/out" ||
        fail "released $v over $previous failed otherwise: $(cat "$work/out")"
      install --force-overwrite "$work/released/$v"
    else
      install "$work/released/$v"
    fi
    expect libcujit-dev "$v-1"
    check "released $v"
    previous=$v
  done
  install "$this"
  expect libcujit-dev "$this_version"
  expect cujit "$this_version"
  check "this tree"
  install "$next"
  expect libcujit-dev "$next_version"
  expect "$this_lib" "$this_version"
  check "next"
}

# plainly: each released version alone, then this tree, without force, in a root of its
# own; in the last one, next's libcujit-dev refused beside this tree's cujit (its Breaks),
# next, and this tree's library removed beside next's
plainly() {
  for v in ${released:-none}; do
    use_root "root-from-$v"
    if [ "$v" != none ]; then
      install "$work/released/$v"
      check "released $v"
    fi
    install "$this"
    check "this tree"
  done
  ! in_root -i "$next"/libcujit-dev_*.deb || fail "next's libcujit-dev went in beside this tree's cujit"
  grep -q "libcujit-dev breaks cujit" "$work/out" || fail "next's libcujit-dev: $(cat "$work/out")"
  install "$next"
  check "next"
  in_root -r "$this_lib" || fail "could not remove $this_lib: $(cat "$work/out")"
  [ ! -e "$root/usr/libexec/cujit-$this_so" ] || fail "$this_lib left its worker's directory"
  check "$this_lib removed"
}

start=$(date +%s)
echo "dpkg --root, upgrades:"
upgrades root-upgrades
echo "dpkg --root, from each released version alone:"
plainly
if [ "$use_apt" = --apt ]; then
  [ "$(id -u)" = 0 ] || fail "--apt installs packages into the system: run it as root"
  root=""
  for p in $libs libcujit-dev cujit; do
    if installed "$p"; then fail "$p is installed already: the test would change it"; fi
  done
  echo "apt, upgrades:"
  previous=""
  for v in $released; do
    install ${previous:+--force-overwrite} "$work/released/$v"
    check "released $v"
    previous=$v
  done
  install "$this"
  check "this tree"
  install "$next"
  expect libcujit-dev "$next_version"
  check "next"
fi
echo "package versions: upgrades and side by side checked in $(($(date +%s) - start)) s"
