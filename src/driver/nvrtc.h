/* nvrtc.h - NVRTC, loaded at run time on the first compile that needs it: a process
 * whose kernels all come from the cache never maps it (its library alone costs a process
 * milliseconds and tens of MiB). */
#ifndef CUJIT_DRIVER_NVRTC_H
#define CUJIT_DRIVER_NVRTC_H

#include <nvrtc.h>

#include "common/common.h"

/* Every NVRTC entry point cujit uses; the optional ones (newer NVRTC) may stay NULL. */
#define CJ_NVRTC_REQUIRED(X)                                                               \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs)                      \
  X(nvrtcGetSupportedArchs) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)                   \
  X(nvrtcCompileProgram) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize)            \
  X(nvrtcGetCUBIN) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)                         \
  X(nvrtcAddNameExpression) X(nvrtcGetLoweredName)
#define CJ_NVRTC_OPTIONAL(X)                                                               \
  X(nvrtcSetFlowCallback) X(nvrtcGetPCHCreateStatus) X(nvrtcGetPCHHeapSizeRequired)         \
  X(nvrtcSetPCHHeapSize) X(nvrtcGetPCHHeapSize) X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR)

typedef struct cj_nvrtc_api {
#define CJ_NVRTC_FIELD_(fn) __typeof__(fn) *fn;
  CJ_NVRTC_REQUIRED(CJ_NVRTC_FIELD_)
  CJ_NVRTC_OPTIONAL(CJ_NVRTC_FIELD_)
#undef CJ_NVRTC_FIELD_
} cj_nvrtc_api;

/* The table; valid once cj_nvrtc_load() returned CUJIT_OK. */
extern cj_nvrtc_api cj_nv;

/* Loads NVRTC, once per process: env CUJIT_NVRTC when set (a file's absolute path; a
 * relative one is refused); else the NVRTC the program already has (linked or loaded);
 * else libnvrtc.so.13, then .so.12, then libnvrtc.so, each looked for in LD_LIBRARY_PATH's
 * directories, the toolkit cujit was built with, CUDA_PATH, CUDA_HOME and /usr/local/cuda
 * (lib64, then lib); else the system's search for those names. A file found by path that
 * was replaced since its identity was read is refused (nvrtc.c says how). CUJIT_OK, or
 * CUJIT_ERROR_NO_NVRTC saying why (where it looked), the same on every call. */
cujit_status cj_nvrtc_load(void);

/* 1 once NVRTC is loaded in this process (for tests of what a cache hit loads). */
int cj_nvrtc_loaded(void);

/* Which NVRTC a compile would use, found without loading it: "nvrtc build <id>" from the
 * build ID of the library file cj_nvrtc_load() would load (the same for one build on
 * every machine), else the file's name and size; "" when only the system's search can
 * find it. Static storage, found once. */
const char *cj_nvrtc_identity(void);

/* The directory of that library file ("" when unknown), for finding the toolkit's headers
 * beside it. */
const char *cj_nvrtc_dir(void);

/* The build ID a linker wrote into the ELF file open on `fd` (readelf -n), as hex into
 * out: 1, or 0 when it has none (also for a file that is not 64-bit ELF). */
int cj_elf_build_id(int fd, char *out, size_t out_size);

/* A toolkit library (NVRTC, nvJitLink) is found by path and named in cache keys without
 * being loaded; what named it is kept, so that the image a later dlopen of that path maps
 * can be checked to be that very file. */
typedef struct cj_lib_key {
  char build_id[129]; /* hex; "" when the file has none */
  long long size;     /* the file's size, device and inode */
  unsigned long long dev, ino;
} cj_lib_key;

/* `path` when it is absolute; else the working directory joined with it, in buf (NULL when
 * that does not fit). A path found through a relative directory is made absolute when it
 * is found, so that the file keyed is the file loaded whatever the directory is later. */
const char *cj_lib_absolute(const char *path, char *buf, size_t size);

/* Reads what names the file open on fd into k, without loading it: its build ID, and only
 * without one its size, device and inode (a cache hit spends no system call on them). 1,
 * or 0 when it is not a regular file. */
int cj_lib_identify(int fd, cj_lib_key *k);

/* After a dlopen of the file k was read from: 1 when the image `lib` mapped is that file
 * (the build ID in its memory, else the device and inode of the path it was loaded by);
 * else 0 with the reason in why. */
int cj_lib_loaded_is(void *lib, const cj_lib_key *k, char *why, size_t why_size);

/* A path from environment variable `var` (CUJIT_NVRTC, CUJIT_NVJITLINK), which must be
 * absolute: a bare name would be looked for in the working directory by cujit and by the
 * system's search by the loader, two different files. NULL when unset; when relative,
 * NULL too, with *refused set and a warning logged once naming the variable. */
const char *cj_lib_env(const char *var, int *refused);
/* The load's error detail, into out, when `var` was refused: what to set it to (the path
 * of `file`), and what still works without the library (`without`). */
void cj_lib_refusal(char *out, size_t size, const char *var, const char *file,
                    const char *without);

/* The directories a toolkit library is looked for in, in order: LD_LIBRARY_PATH's, the
 * toolkit cujit was built with, then CUDA_PATH, CUDA_HOME and /usr/local/cuda (lib64,
 * then lib of each). Each is `len` bytes of `dir` followed by `sub`; the strings are the
 * environment's or static. Returns how many were written to v (at most cap). */
typedef struct search_dir {
  const char *dir;
  size_t len;
  const char *sub;
} search_dir;
size_t cj_lib_search_dirs(search_dir *v, size_t cap);

#endif
