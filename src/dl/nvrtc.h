/* nvrtc.h - NVRTC, loaded at run time on the first compile that needs it: a process
 * whose kernels all come from the cache never maps it (its library alone costs a process
 * milliseconds and tens of MiB). */
#ifndef CUJIT_DRIVER_NVRTC_H
#define CUJIT_DRIVER_NVRTC_H

#include <nvrtc.h>

#include "dl/loader.h"

/* Every NVRTC entry point cujit uses; the optional ones (newer NVRTC) may stay NULL. */
/* clang-format off */
#define CJ_NVRTC_REQUIRED(X)                                                                       \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)    \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetPTXSize)           \
  X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetProgramLogSize)                   \
  X(nvrtcGetProgramLog) X(nvrtcAddNameExpression) X(nvrtcGetLoweredName)
/* clang-format on */
/* clang-format off */
#define CJ_NVRTC_OPTIONAL(X)                                                                       \
  X(nvrtcSetFlowCallback) X(nvrtcGetPCHCreateStatus) X(nvrtcGetPCHHeapSizeRequired)                \
  X(nvrtcSetPCHHeapSize) X(nvrtcGetPCHHeapSize) X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR)
/* clang-format on */

typedef struct cj_nvrtc_api {
#define CJ_NVRTC_FIELD_(fn) __typeof__(fn) *fn;
  CJ_NVRTC_REQUIRED(CJ_NVRTC_FIELD_)
  CJ_NVRTC_OPTIONAL(CJ_NVRTC_FIELD_)
#undef CJ_NVRTC_FIELD_
} cj_nvrtc_api;

/* The table; valid once cj_libnvrtc_load() returned CUJIT_OK. */
extern cj_nvrtc_api cj_nv;

/* Loads NVRTC, once per process (libnvrtc.c, by the loader): env CUJIT_NVRTC when set (a
 * file's absolute path; a relative one is refused); else the NVRTC the program already has
 * (linked or loaded); else libnvrtc.so.13, then .so.12, then libnvrtc.so, each looked for
 * in LD_LIBRARY_PATH's directories, the toolkit cujit was built with, CUDA_PATH, CUDA_HOME
 * and /usr/local/cuda (lib64, then lib); else the system's search for those names. A file
 * found by path that was replaced since its identity was read is refused (loader.c says
 * how). CUJIT_OK, or CUJIT_ERROR_NO_NVRTC saying why (where it looked), the same on every
 * call. */
cujit_status cj_libnvrtc_load(void);

/* 1 once NVRTC is loaded in this process (for tests of what a cache hit loads). */
int cj_libnvrtc_loaded(void);

/* Which NVRTC a compile would use, found without loading it: "nvrtc build <id>" from the
 * build ID of the library file cj_libnvrtc_load() would load (the same for one build on
 * every machine), else the file's name and size; "" when only the system's search can
 * find it. Static storage, found once. */
const char *cj_libnvrtc_identity(void);

/* The directory of that library file ("" when unknown), for finding the toolkit's headers
 * beside it. */
const char *cj_libnvrtc_dir(void);

#endif
