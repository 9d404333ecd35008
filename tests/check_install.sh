#!/bin/sh
# Installs the build into a fresh temporary prefix, checks that the manual page is there,
# and builds consumers of cujit with nothing but what the prefix holds
# (check_consumer.sh: pkg-config and CMake's find_package, shared and static).
# Usage: check_install.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d "${TMPDIR:-/tmp}/cujit-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/usr" >/dev/null
for page in "$prefix/usr/share/man/man1/cujit.1.gz" "$prefix/usr/share/man/man1/cujit.1"; do
  [ -f "$page" ] && break
done
[ -f "$page" ] || { echo "the manual page was not installed" >&2; exit 1; }
sh "$(dirname "$0")/check_consumer.sh" "$prefix/usr"
