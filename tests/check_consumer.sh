#!/bin/sh
# Builds and runs tests/consumer/ against an installed cujit, in a directory of its own,
# with nothing but what is installed: through pkg-config (with the shared library, and
# with the static one and --static's flags) and through CMake's find_package (cujit::cujit
# and cujit::cujit_static). Each program compiles kernels; those using the shared library
# must also find its compile worker where it is installed.
# Usage: check_consumer.sh [PREFIX]   (without PREFIX: the system's, as packages install it)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/cujit-consumer-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/consumer/consumer.c" "$here/consumer/CMakeLists.txt" "$work/"
if [ -n "$prefix" ]; then
  pc=$(find "$prefix" -name cujit.pc)
  PKG_CONFIG_PATH=${pc%/cujit.pc}
  export PKG_CONFIG_PATH
fi
libdir=$(pkg-config --variable=libdir cujit)
case $libdir in
  "$prefix"/*) ;;
  *) echo "pkg-config's cujit is not in '$prefix': its libdir is $libdir" >&2; exit 1 ;;
esac
cd "$work"
# shellcheck disable=SC2046 # the flags are words
cc consumer.c $(pkg-config --cflags --libs cujit) -o consumer-pc
LD_LIBRARY_PATH=$libdir ./consumer-pc --worker
static_libs=""
for word in $(pkg-config --static --libs cujit); do
  [ "$word" = -lcujit ] || static_libs="$static_libs $word"
done
# shellcheck disable=SC2046,SC2086 # the flags are words
cc consumer.c $(pkg-config --cflags cujit) "$libdir/libcujit.a" $static_libs -o consumer-pc-static
./consumer-pc-static
cmake -S . -B build ${prefix:+"-DCMAKE_PREFIX_PATH=$prefix"} >/dev/null
cmake --build build >/dev/null
build/consumer --worker
build/consumer_static
for program in consumer-pc-static build/consumer_static; do
  if ldd "$program" | grep -q libcujit; then
    echo "$program, linked with libcujit.a, loads libcujit.so:" >&2
    ldd "$program" >&2
    exit 1
  fi
done
echo "consumer built and run with pkg-config and find_package, shared and static${prefix:+, from $prefix}"
