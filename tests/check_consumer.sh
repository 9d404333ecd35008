#!/bin/sh
# Builds and runs tests/consumer/ against an installed cujit, in a directory of its own,
# with nothing but what is installed: through pkg-config (with the shared library, and
# with the static one and --static's flags) and through CMake's find_package (cujit::cujit
# and cujit::cujit_static). Each program compiles kernels; those using the shared library
# must also run their own version's compile worker, where it is installed
# (PREFIX/libexec/cujit-SOVERSION/), and so must one linked with libcujit.a where cujit is
# installed where it was built for (the system's, from the packages).
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
version=$(pkg-config --modversion cujit)
case $version in
  0.*) soversion=$(echo "$version" | cut -d. -f1-2) ;;
  *) soversion=${version%%.*} ;;
esac
worker="$(cd "$(pkg-config --variable=prefix cujit)" && pwd -P)/libexec/cujit-$soversion/cujit-worker"
# ran_own_worker OUTPUT: the program's output names the worker of this version's place
ran_own_worker() {
  ran=$(echo "$1" | sed -n 's/^worker: //p')
  [ "$ran" = "$worker (cujit $version)" ] && return
  echo "the consumer ran the worker '$ran', not $worker (cujit $version):" >&2
  echo "$1" >&2
  exit 1
}
cd "$work"
# shellcheck disable=SC2046 # the flags are words
cc consumer.c $(pkg-config --cflags --libs cujit) -o consumer-pc
out=$(LD_LIBRARY_PATH=$libdir ./consumer-pc --worker) # a failure ends the script here
ran_own_worker "$out"
static_libs=""
for word in $(pkg-config --static --libs cujit); do
  [ "$word" = -lcujit ] || static_libs="$static_libs $word"
done
# shellcheck disable=SC2046,SC2086 # the flags are words
cc consumer.c $(pkg-config --cflags cujit) "$libdir/libcujit.a" $static_libs -o consumer-pc-static
if [ -z "$prefix" ]; then
  # linked with libcujit.a, in a directory of its own: the worker is found where the
  # library's build installs it (an absolute path), as it is here
  out=$(./consumer-pc-static --worker)
  ran_own_worker "$out"
else
  ./consumer-pc-static
fi
cmake -S . -B build ${prefix:+"-DCMAKE_PREFIX_PATH=$prefix"} >/dev/null
cmake --build build >/dev/null
out=$(build/consumer --worker)
ran_own_worker "$out"
build/consumer_static
for program in consumer-pc-static build/consumer_static; do
  if ldd "$program" | grep -q libcujit; then
    echo "$program, linked with libcujit.a, loads libcujit.so:" >&2
    ldd "$program" >&2
    exit 1
  fi
done
echo "consumer built and run with pkg-config and find_package, shared and static${prefix:+, from $prefix}"
