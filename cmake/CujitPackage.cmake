# Debian packages made by CPack from a build (`cpack -G DEB` in the build directory, or
# scripts/package), one for each install component:
#   libcujitN     runtime  libcujit.so.N (N: the SOVERSION, 0.MINOR before 1.0, as Debian
#                          names a library's package after its soname) and its
#                          cujit-worker, in LIBEXECDIR/cujit-N/: the packages of two
#                          sonames share no file, and install side by side
#   libcujit-dev  dev      cujit.h, cujit_array.h, libcujit.a, the libcujit.so link,
#                          cujit.pc, the CMake package
#   cujit         cli      the command and its manual page
# Their version is the project's with CUJIT_DEB_RELEASE after a dash, and
# cmake/debian/changelog must begin with an entry for it (cpack refuses otherwise); its
# signature names the maintainer. Each package carries that changelog and the copyright
# in /usr/share/doc/PACKAGE, installed only into the packages (EXCLUDE_FROM_ALL:
# `cmake --install` leaves them out).
#
# Depends are computed by dpkg-shlibdeps from what the binaries link (libc, libffi,
# libxxhash); the development and command packages depend on the library of the same
# version. They are one version at a time each (their names carry none), and libcujit-dev
# breaks an earlier cujit: its cujitConfig.cmake includes the command's targets (in
# cujit), so find_package must not give an older command than its library. (Only that
# way: with Breaks both ways, `dpkg -i` of a new version's packages fails in any order,
# the old one of each being there when the other is unpacked; apt copes either way.) The CUDA driver, NVRTC, nvJitLink, hiredis and libzstd are loaded at run time, never
# linked, so they are only recommended or suggested: a program using cujit installs and
# starts without them.

set(CUJIT_DEB_RELEASE 1 CACHE STRING "Debian revision of the packages (their version is VERSION-RELEASE)")
set(_cuda "${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
set(CUJIT_DEB_RECOMMENDS
  "libnvrtc${CUDAToolkit_VERSION_MAJOR} | cuda-nvrtc-${_cuda}, libcuda1 | libnvidia-compute-580"
  CACHE STRING "Recommends of the library's package: NVRTC and the CUDA driver (Debian's names, then NVIDIA's)")
set(CUJIT_DEB_SUGGESTS
  "libnvjitlink${CUDAToolkit_VERSION_MAJOR} | libnvjitlink-${_cuda}, libhiredis1.1.0 | libhiredis0.14, libzstd1"
  CACHE STRING "Suggests of the library's package: nvJitLink (linking), hiredis (the remote cache tier) and libzstd (compressed fatbin entries)")
set(CUJIT_DEB_DEV_RECOMMENDS "nvidia-cuda-dev | cuda-driver-dev-${_cuda}"
  CACHE STRING "Recommends of the development package: cuda.h, which cujit.h includes")

set(_changelog "${CMAKE_CURRENT_LIST_DIR}/debian/changelog")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_changelog}")
if(CUJIT_PRETEND_VERSION) # a test build's changelog begins with an entry of its own
  string(TIMESTAMP _now "%a, %d %b %Y %H:%M:%S +0000" UTC)
  file(READ "${_changelog}" _entries)
  string(REGEX MATCH "\n -- [^\n]*>  " _signed "${_entries}")
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/debian/changelog"
       "cujit (${PROJECT_VERSION}-${CUJIT_DEB_RELEASE}) UNRELEASED; urgency=medium\n\n"
       "  * A test build that calls itself ${PROJECT_VERSION} (CUJIT_PRETEND_VERSION).\n"
       "${_signed}${_now}\n\n${_entries}")
  set(_changelog "${CMAKE_CURRENT_BINARY_DIR}/debian/changelog")
endif()
file(STRINGS "${_changelog}" _top LIMIT_COUNT 1)
file(STRINGS "${_changelog}" _signature REGEX "^ -- " LIMIT_COUNT 1)
string(REGEX REPLACE "^[^(]*\\(([^)]*)\\).*" "\\1" CUJIT_DEB_CHANGELOG_VERSION "${_top}")
string(REGEX REPLACE "^ -- (.*>)  .*" "\\1" _maintainer "${_signature}")

get_target_property(_soversion cujit SOVERSION)
set(_lib "libcujit${_soversion}")
set(_version "${PROJECT_VERSION}-${CUJIT_DEB_RELEASE}")

# /usr/share/doc/PACKAGE/{changelog.Debian.gz,copyright} for each package.
file(READ "${PROJECT_SOURCE_DIR}/LICENSE" _license)
string(REGEX MATCH "Copyright \\(c\\) ([^\n]*)" _ "${_license}")
set(CUJIT_COPYRIGHT "${CMAKE_MATCH_1}")
string(REGEX REPLACE "^.*Copyright \\(c\\) [^\n]*\n\n" "" _license "${_license}")
string(REGEX REPLACE "\n+$" "" _license "${_license}")
string(REGEX REPLACE "\n\n" "\n.\n" _license "${_license}") # an empty line is " ."
string(REPLACE "\n" "\n " CUJIT_LICENSE_TEXT " ${_license}") # each line indented
configure_file("${CMAKE_CURRENT_LIST_DIR}/debian/copyright.in" debian/copyright @ONLY)
if(CUJIT_GZIP)
  add_custom_command(OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz"
    COMMAND ${CMAKE_COMMAND} -E copy "${_changelog}" debian/changelog.Debian
    COMMAND ${CUJIT_GZIP} -9nf debian/changelog.Debian
    DEPENDS "${_changelog}" WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" VERBATIM)
  add_custom_target(cujit_deb_changelog ALL
    DEPENDS "${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz")
endif()
set(_components runtime dev cli)
set(_packages ${_lib} libcujit-dev cujit)
foreach(_component _package IN ZIP_LISTS _components _packages)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/debian/copyright"
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_package}
          COMPONENT ${_component} EXCLUDE_FROM_ALL)
  if(CUJIT_GZIP)
    install(FILES "${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz"
            DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_package}
            COMPONENT ${_component} EXCLUDE_FROM_ALL)
  endif()
endforeach()

# lintian's overrides, where its rule does not fit (each file says why).
configure_file("${CMAKE_CURRENT_LIST_DIR}/debian/runtime.lintian-overrides.in"
               "lintian/${_lib}" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/lintian/${_lib}"
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides COMPONENT runtime EXCLUDE_FROM_ALL)
install(FILES "${CMAKE_CURRENT_LIST_DIR}/debian/libcujit-dev.lintian-overrides"
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides COMPONENT dev EXCLUDE_FROM_ALL
        RENAME libcujit-dev)

set(CPACK_PACKAGE_NAME cujit)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_VENDOR "The cujit authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_COMPONENTS_ALL runtime dev cli)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE "${CUJIT_DEB_RELEASE}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${_maintainer}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The command links libcujit, which lies in the runtime package: dpkg-shlibdeps runs in each
# package's staging directory, beside the runtime one (the Depends on it are given below).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "../runtime${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# CPack writes a postinst and a postrm that run ldconfig into a package with a shared
# library; the ldconfig trigger (below) does that work, as Debian asks, so the packages
# are made again without them once CPack has made them.
set(CPACK_POST_BUILD_SCRIPTS "${CMAKE_CURRENT_LIST_DIR}/debian/no-ldconfig-scripts.cmake")

set(_about
  "cujit compiles CUDA C at run time with NVRTC, caches what it compiled in\n"
  "memory and on disk, and launches kernels with arguments checked against\n"
  "their parameters. The CUDA driver and NVRTC are loaded when they are\n"
  "needed, never linked: a program using cujit starts, and compiles, on a\n"
  "machine with no GPU.\n\n")
string(CONCAT CPACK_DEBIAN_RUNTIME_DESCRIPTION
  "run-time CUDA C compilation, caching and launching for C\n" ${_about}
  "This package holds the shared library and the compile worker it starts.")
string(CONCAT CPACK_DEBIAN_DEV_DESCRIPTION
  "run-time CUDA C compilation for C - development files\n" ${_about}
  "This package holds the header, the static library, and the files that\n"
  "pkg-config and CMake's find_package(cujit) read.")
string(CONCAT CPACK_DEBIAN_CLI_DESCRIPTION
  "compile CUDA C ahead of time and manage cujit's kernel cache\n" ${_about}
  "This package holds the cujit command (compile, warm, info, cache, explain\n"
  "and verify) and its manual page.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "${_lib}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "${CUJIT_DEB_RECOMMENDS}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "${CUJIT_DEB_SUGGESTS}")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The loader's cache is updated by dpkg's ldconfig trigger.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA "${CMAKE_CURRENT_LIST_DIR}/debian/triggers")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libcujit-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_lib} (= ${_version}), libffi-dev, libxxhash-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "${CUJIT_DEB_DEV_RECOMMENDS}")
set(CPACK_DEBIAN_DEV_PACKAGE_BREAKS "cujit (<< ${_version})")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME cujit)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "${_lib} (= ${_version})")

# cpack checks that the changelog has an entry for the version it packages.
set(CUJIT_DEB_VERSION "${_version}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/debian/CPackOptions.cmake.in" debian/CPackOptions.cmake
               @ONLY)
set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_CURRENT_BINARY_DIR}/debian/CPackOptions.cmake")
include(CPack)
