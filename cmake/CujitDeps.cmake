# Finds the libraries cujit uses privately: libffi and libxxhash (Debian: libffi-dev,
# libxxhash-dev). Defines the imported targets cujit_dep::ffi and cujit_dep::xxhash.
foreach(dep IN ITEMS ffi xxhash)
  if(dep STREQUAL "ffi")
    set(_hdr ffi.h)
  else()
    set(_hdr xxhash.h)
  endif()
  find_path(CUJIT_${dep}_INCLUDE_DIR ${_hdr} PATH_SUFFIXES x86_64-linux-gnu)
  find_library(CUJIT_${dep}_LIBRARY ${dep})
  if(NOT CUJIT_${dep}_INCLUDE_DIR OR NOT CUJIT_${dep}_LIBRARY)
    message(FATAL_ERROR "cujit needs lib${dep} (header ${_hdr}); on Debian or Ubuntu: "
                        "apt-get install lib${dep}-dev")
  endif()
  add_library(cujit_dep::${dep} UNKNOWN IMPORTED)
  set_target_properties(cujit_dep::${dep} PROPERTIES
    IMPORTED_LOCATION "${CUJIT_${dep}_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUJIT_${dep}_INCLUDE_DIR}")
endforeach()

# NVRTC without the driver: FindCUDAToolkit's CUDA::nvrtc also links the driver stub
# (libcuda.so), and cujit must never depend on libcuda at link time.
if(NOT CUDA_nvrtc_LIBRARY)
  message(FATAL_ERROR "NVRTC (libnvrtc.so) was not found in the CUDA toolkit at ${CUDAToolkit_LIBRARY_DIR}")
endif()
add_library(cujit_dep::nvrtc UNKNOWN IMPORTED)
set_target_properties(cujit_dep::nvrtc PROPERTIES
  IMPORTED_LOCATION "${CUDA_nvrtc_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")

# hiredis (the remote cache's Redis client) is loaded at run time, never linked; its headers
# (Debian: libhiredis-dev) are used when present to check cujit's declarations of it.
find_path(CUJIT_HIREDIS_INCLUDE_DIR hiredis/hiredis.h)
