#!/bin/sh
# Makes stand-ins of the Debian packages cujit released before the compile worker had a
# directory of its own, with dpkg-deb, into OUT/0.1.0/ and OUT/0.2.0/: for each, the
# library's package (libcujit0 with libcujit.so.0; libcujit0.2 with libcujit.so.0.2),
# libcujit-dev and cujit, with the names, versions, relations, control files (shlibs, the
# ldconfig trigger, and the postinst and postrm that ran ldconfig) and the files, at their
# paths, that those packages held: above all /usr/libexec/cujit-worker, which both
# library packages held. The files are small: the library a shared object with the
# soname that says its version (released_lib.c), the worker one that exits at a greeting
# as those did (released_worker.c), the rest placeholders. versions.sh installs them.
# Usage: standins.sh OUT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
arch=$(dpkg --print-architecture)
maintainer="The cujit authors <maintainers@cujit.invalid>"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cujit-standins-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/cujit-worker" "$here/released_worker.c"

# put TREE PATH [CONTENT]: a file of the package (a placeholder unless CONTENT is given)
put() {
  mkdir -p "$(dirname "$1/$2")"
  printf '%s\n' "${3:-a stand-in of $2}" >"$1/$2"
}

# finish TREE PACKAGE VERSION SECTION DEPENDS DESCRIPTION: its documentation, md5sums and
# control file, and the package, into $dir
finish() {
  tree=$1
  mkdir -p "$tree/usr/share/doc/$2" "$tree/DEBIAN"
  printf 'cujit (%s) unstable; urgency=medium\n\n  * A stand-in.\n\n -- %s  Fri, 27 Nov 2026 03:00:00 +0000\n' \
    "$3" "$maintainer" | gzip -9n >"$tree/usr/share/doc/$2/changelog.Debian.gz"
  put "$tree" "usr/share/doc/$2/copyright"
  (cd "$tree" && find usr -type f -exec md5sum {} + >DEBIAN/md5sums)
  cat >"$tree/DEBIAN/control" <<CONTROL
Package: $2
Version: $3
Architecture: $arch
Maintainer: $maintainer
Installed-Size: 100
Depends: $5
Section: $4
Priority: optional
Description: $6
 A stand-in of the package cujit released as $3, for the package tests.
CONTROL
  dpkg-deb --root-owner-group -Zgzip --build "$tree" "$dir/${2}_${3}_$arch.deb" >/dev/null
}

# released VERSION LIBRARY_PACKAGE SOVERSION HEADERS...
released() {
  version=$1 lib=$2 so=$3
  shift 3
  deb=$version-1
  dir=$out/$version
  libdir=usr/lib/$triplet
  mkdir -p "$dir"
  number=$(echo "$version" | awk -F. '{ print $1 * 10000 + $2 * 100 + $3 }')

  tree=$tmp/$lib
  mkdir -p "$tree/$libdir" "$tree/usr/libexec" "$tree/DEBIAN"
  cc -O2 -shared -fPIC "-Wl,-soname,libcujit.so.$so" -DRELEASED_NUMBER="$number" \
    -DRELEASED_STRING="\"$version\"" -o "$tree/$libdir/libcujit.so.$version" "$here/released_lib.c"
  ln -s "libcujit.so.$version" "$tree/$libdir/libcujit.so.$so"
  chmod 644 "$tree/$libdir/libcujit.so.$version"
  cp "$tmp/cujit-worker" "$tree/usr/libexec/cujit-worker"
  put "$tree" "usr/share/lintian/overrides/$lib" "$lib: no-manual-page [usr/libexec/cujit-worker]"
  echo "libcujit $so $lib (>= $deb)" >"$tree/DEBIAN/shlibs"
  echo "activate-noawait ldconfig" >"$tree/DEBIAN/triggers"
  # shellcheck disable=SC2016 # $1 is the script's
  for script in postinst:configure postrm:remove; do
    printf '#!/bin/sh\n\nset -e\n\nif [ "$1" = "%s" ]; then\n\tldconfig\nfi\n' "${script#*:}" \
      >"$tree/DEBIAN/${script%:*}"
    chmod 755 "$tree/DEBIAN/${script%:*}"
  done
  finish "$tree" "$lib" "$deb" libs "libc6 (>= 2.34), libffi8 (>= 3.4), libxxhash0 (>= 0.7.0)" \
    "run-time CUDA C compilation, caching and launching for C"

  tree=$tmp/dev-$version
  for header in "$@"; do put "$tree" "usr/include/$header"; done
  for f in cujitConfig.cmake cujitConfigVersion.cmake cujitTargets.cmake \
    cujitTargets-relwithdebinfo.cmake; do
    put "$tree" "$libdir/cmake/cujit/$f"
  done
  put "$tree" "$libdir/libcujit.a"
  ln -s "libcujit.so.$so" "$tree/$libdir/libcujit.so"
  put "$tree" "$libdir/pkgconfig/cujit.pc" "Name: cujit
Version: $version"
  put "$tree" usr/share/lintian/overrides/libcujit-dev
  finish "$tree" libcujit-dev "$deb" libdevel "$lib (= $deb), libffi-dev, libxxhash-dev" \
    "run-time CUDA C compilation for C - development files"

  tree=$tmp/cli-$version
  put "$tree" usr/bin/cujit "#!/bin/sh
echo 'cujit $version'"
  chmod 755 "$tree/usr/bin/cujit"
  for f in cujitCommandTargets.cmake cujitCommandTargets-relwithdebinfo.cmake; do
    put "$tree" "$libdir/cmake/cujit/$f"
  done
  mkdir -p "$tree/usr/share/man/man1"
  echo '.TH CUJIT 1' | gzip -9n >"$tree/usr/share/man/man1/cujit.1.gz"
  finish "$tree" cujit "$deb" devel "$lib (= $deb), libc6 (>= 2.34)" \
    "compile CUDA C ahead of time and manage cujit's kernel cache"
}

released 0.1.0 libcujit0 0 cujit.h
released 0.2.0 libcujit0.2 0.2 cujit.h cujit_array.h
