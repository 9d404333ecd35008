/* nvjitlink.h - nvJitLink, the toolkit's device linker, loaded at run time on the first
 * link that needs it (a link found in the cache never maps it). It works without a
 * driver. */
#ifndef CUJIT_DRIVER_NVJITLINK_H
#define CUJIT_DRIVER_NVJITLINK_H

#define NVJITLINK_NO_INLINE /* the header's inline wrappers name versioned symbols */
#include <nvJitLink.h>

#include "dl/loader.h"

/* The entry points cujit uses, by their plain names (each release also exports them
 * with a version suffix, which is tried when the plain name is missing). */
typedef struct cj_nvjitlink_api {
  nvJitLinkResult (*create)(nvJitLinkHandle *h, uint32_t n, const char *const *options);
  nvJitLinkResult (*destroy)(nvJitLinkHandle *h);
  nvJitLinkResult (*add_data)(nvJitLinkHandle h, nvJitLinkInputType type, const void *data,
                              size_t size, const char *name);
  nvJitLinkResult (*complete)(nvJitLinkHandle h);
  nvJitLinkResult (*cubin_size)(nvJitLinkHandle h, size_t *size);
  nvJitLinkResult (*cubin)(nvJitLinkHandle h, void *out);
  nvJitLinkResult (*ptx_size)(nvJitLinkHandle h, size_t *size);
  nvJitLinkResult (*ptx)(nvJitLinkHandle h, char *out);
  nvJitLinkResult (*error_log_size)(nvJitLinkHandle h, size_t *size);
  nvJitLinkResult (*error_log)(nvJitLinkHandle h, char *out);
  nvJitLinkResult (*info_log_size)(nvJitLinkHandle h, size_t *size);
  nvJitLinkResult (*info_log)(nvJitLinkHandle h, char *out);
  nvJitLinkResult (*version)(unsigned *major, unsigned *minor); /* may be NULL (before 12.3) */
} cj_nvjitlink_api;

/* The table; valid once cj_nvjitlink_load() returned CUJIT_OK. */
extern cj_nvjitlink_api cj_jl;

/* Loads nvJitLink, once per process (libnvjitlink.c, by the loader): env CUJIT_NVJITLINK
 * when set (a file's absolute path; a relative one is refused); else libnvJitLink.so.13,
 * then .so.12, then libnvJitLink.so, each looked for beside the NVRTC in use, then in the
 * directories NVRTC is looked for in (cj_lib_search_dirs); else the system's search for
 * those names. A file found by path that was replaced since its identity was read is
 * refused, as for NVRTC. CUJIT_OK, or CUJIT_ERROR_NO_NVJITLINK saying why (where it
 * looked), the same on every call. */
cujit_status cj_nvjitlink_load(void);

/* Which nvJitLink a link would use, found without loading it: "nvjitlink build <id>" from
 * the build ID of the library file cj_nvjitlink_load() would load, else its name and
 * size; "" when only the system's search can find it (then the version, once loaded).
 * Static storage, found once. */
const char *cj_nvjitlink_identity(void);

/* The path of that file ("" when unknown). */
const char *cj_nvjitlink_path(void);

/* 1 once nvJitLink is loaded in this process (tests check that a cache hit leaves it). */
int cj_nvjitlink_loaded(void);

/* nvJitLink's name for a result, e.g. "NVJITLINK_ERROR_INVALID_INPUT". */
const char *cj_nvjitlink_result_name(nvJitLinkResult r);

#endif
