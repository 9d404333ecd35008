#!/bin/sh
# Installs the build into a fresh temporary prefix and builds a consumer of cujit in two
# ways, with nothing but what the prefix holds: through pkg-config, and through CMake's
# find_package. Each consumer must compile, link and run (it prints the version).
# Usage: check_install.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d "${TMPDIR:-/tmp}/cujit-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/usr" >/dev/null
cat >"$prefix/consumer.c" <<'C'
#include <stdio.h>
#include <cujit.h>
int main(void) {
  unsigned v = cujit_version();
  printf("cujit %u.%u.%u\n", v / 10000, v / 100 % 100, v % 100);
  return v == CUJIT_VERSION_NUMBER ? 0 : 1;
}
C
pc=$(find "$prefix/usr" -name cujit.pc)
export PKG_CONFIG_PATH="${pc%/cujit.pc}"
flags=$(pkg-config --cflags --libs cujit)
case "$flags" in
  *"$prefix/usr"*) ;;
  *) echo "pkg-config does not point into the install prefix: $flags" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086 # the flags are words
cc "$prefix/consumer.c" $flags -o "$prefix/consumer-pc"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir cujit)" "$prefix/consumer-pc"
mkdir "$prefix/cm"
cat >"$prefix/cm/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(cujit CONFIG REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE cujit::cujit)
C
cmake -S "$prefix/cm" -B "$prefix/cm/build" -DCMAKE_PREFIX_PATH="$prefix/usr" >/dev/null
cmake --build "$prefix/cm/build" >/dev/null
"$prefix/cm/build/consumer"
echo "installed consumer built with pkg-config and with find_package"
