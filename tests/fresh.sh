#!/bin/sh
# fresh.sh COMMAND [ARG...]: runs one test as if on a machine where nothing ran before, so
# that every run of the suite tests the same paths, the first as the tenth. The command
# gets, in a new private directory that is removed when it ends:
#   CUJIT_CACHE_DIR  a cache directory that does not exist yet (the library makes it);
#   HOME             an empty home: no ~/.cache/cujit, no NVRTC cache (~/.nv), no CMake
#                    package registry from an earlier run;
#   TMPDIR           an empty temporary directory: the tests' scratch directories, NVRTC's
#                    precompiled headers and its scratch files go there.
# XDG_CACHE_HOME, XDG_RUNTIME_DIR and CUDA_CACHE_PATH are unset, so that nothing is found
# or kept outside it. CTest runs every test through this script; it works the same by hand:
#   sh tests/fresh.sh build/bin/test_batch
# Exits with the command's status; a command killed by a signal is reported as killed by
# that signal, after the cleanup.
set -u
top=$(mktemp -d "${TMPDIR:-/tmp}/cujit-test-XXXXXX") || exit 1
trap 'rm -rf "$top"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir "$top/home" "$top/tmp" || exit 1
# Others may pass through (as through /tmp), not write: a test run as root hands a directory
# in TMPDIR to an unprivileged user.
chmod 755 "$top" "$top/tmp" || exit 1
CUJIT_CACHE_DIR=$top/cache
HOME=$top/home
TMPDIR=$top/tmp
export CUJIT_CACHE_DIR HOME TMPDIR
unset XDG_CACHE_HOME XDG_RUNTIME_DIR CUDA_CACHE_PATH
"$@"
rc=$?
if [ $rc -gt 128 ] && [ $rc -lt 160 ]; then
  rm -rf "$top"
  trap - EXIT HUP INT TERM
  kill -s "$(kill -l $rc)" $$
fi
exit $rc
