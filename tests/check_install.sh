#!/bin/sh
# Installs the build into a fresh temporary prefix, checks that the manual page is there,
# that the soname and the CMake package promise what the version does (before 1.0: the
# same minor version only; consumer/version/), and builds consumers of cujit with nothing
# but what the prefix holds (check_consumer.sh: pkg-config and CMake's find_package, shared
# and static).
# Usage: check_install.sh BUILD_DIR VERSION
set -eu
build=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d "${TMPDIR:-/tmp}/cujit-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/usr" >/dev/null
for page in "$prefix/usr/share/man/man1/cujit.1.gz" "$prefix/usr/share/man/man1/cujit.1"; do
  [ -f "$page" ] && break
done
[ -f "$page" ] || { echo "the manual page was not installed" >&2; exit 1; }
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
if [ "$major" = 0 ]; then soname=libcujit.so.$major.$minor; else soname=libcujit.so.$major; fi
lib=$(find "$prefix/usr" -name "libcujit.so.$version")
[ -n "$lib" ] || { echo "no libcujit.so.$version was installed" >&2; exit 1; }
got=$(objdump -p "$lib" | sed -n 's/^ *SONAME *//p')
[ "$got" = "$soname" ] || { echo "libcujit $version's soname is '$got', not $soname" >&2; exit 1; }
[ -e "$(dirname "$lib")/$soname" ] || { echo "no $soname link was installed" >&2; exit 1; }
cmake -S "$here/consumer/version" -B "$prefix/version" -DVERSION="$version" \
  -DPREFIX="$prefix/usr" >"$prefix/version.log" 2>&1 || { cat "$prefix/version.log" >&2; exit 1; }
sh "$here/check_consumer.sh" "$prefix/usr"
