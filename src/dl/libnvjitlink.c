/* libnvjitlink.c - nvJitLink's table for the loader (see nvjitlink.h and loader.h): as
 * with NVRTC, found by path and named by its build without being loaded, so that a link
 * found in the cache can be keyed by the nvJitLink that made it while leaving it
 * unmapped; loaded on the first link. Each release exports its entry points by their plain
 * names and with a version suffix, which is tried when the plain name is missing. */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dl/nvjitlink.h"
#include "dl/nvrtc.h"

cj_nvjitlink_api cj_jl;

static const char *const sonames[] = {"libnvJitLink.so.13", "libnvJitLink.so.12",
                                      "libnvJitLink.so"};
static const char *const versions[] = {"13_0", "12_0"};

static const cj_dsym syms[] = {
#define CJ_JL_(field, fn) \
  { #fn, offsetof(cj_nvjitlink_api, field), 0 }
    CJ_JL_(create, nvJitLinkCreate),
    CJ_JL_(destroy, nvJitLinkDestroy),
    CJ_JL_(add_data, nvJitLinkAddData),
    CJ_JL_(complete, nvJitLinkComplete),
    CJ_JL_(cubin_size, nvJitLinkGetLinkedCubinSize),
    CJ_JL_(cubin, nvJitLinkGetLinkedCubin),
    CJ_JL_(ptx_size, nvJitLinkGetLinkedPtxSize),
    CJ_JL_(ptx, nvJitLinkGetLinkedPtx),
    CJ_JL_(error_log_size, nvJitLinkGetErrorLogSize),
    CJ_JL_(error_log, nvJitLinkGetErrorLog),
    CJ_JL_(info_log_size, nvJitLinkGetInfoLogSize),
    CJ_JL_(info_log, nvJitLinkGetInfoLog),
#undef CJ_JL_
    {"nvJitLinkVersion", offsetof(cj_nvjitlink_api, version), 1},
};

static const cj_dlib nvjitlink = {
    .env = "CUJIT_NVJITLINK",
    .warn_relative = 1,
    .sonames = sonames,
    .n_sonames = CJ_COUNT(sonames),
    .keyed_as = "nvjitlink build ",
    .beside = cj_libnvrtc_dir, /* the NVRTC in use's directory first */
    .versions = versions,
    .n_versions = CJ_COUNT(versions),
    .syms = syms,
    .n_syms = CJ_COUNT(syms),
};

static pthread_once_t locate_once = PTHREAD_ONCE_INIT;
static CJ_LARGE cj_dlib_file file;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cujit_status load_status = CUJIT_ERROR_NO_NVJITLINK;
static CJ_LARGE char load_detail[2048];
static int loaded;

static void locate(void) { cj_dlib_locate(&nvjitlink, &file); }

/* What went wrong, in load_detail. Out of line: the message is as long as it comes. */
static CJ_NOINLINE void failed(cj_dlib_rc rc, const char *why) {
  char looked[1536];
  switch (rc) {
    case CJ_DLIB_REFUSED:
      cj_dlib_refusal(&nvjitlink, load_detail, sizeof load_detail, "libnvJitLink.so",
                      "a link found in the cache needs no nvJitLink");
      break;
    case CJ_DLIB_NOT_LOADED:
      cj_dlib_looked(&nvjitlink, &file, looked, sizeof looked);
      snprintf(load_detail, sizeof load_detail,
               "nvJitLink (libnvJitLink.so) could not be loaded%s: %s; looked in %s. Install "
               "the CUDA toolkit's nvJitLink (it ships beside NVRTC), or set CUJIT_NVJITLINK to "
               "the path of libnvJitLink.so (a link found in the cache needs no nvJitLink)",
               cj_env("CUJIT_NVJITLINK") ? " from CUJIT_NVJITLINK" : "", why[0] ? why : "not found",
               looked);
      break;
    case CJ_DLIB_NOT_KEYED:
      snprintf(load_detail, sizeof load_detail,
               "the nvJitLink loaded from %.600s is not the "
               "file this process named in its cache keys: %.699s. cujit does not link with "
               "it; run the program again to use the nvJitLink there now",
               file.path, why);
      break;
    default: /* CJ_DLIB_LACKS */
      snprintf(load_detail, sizeof load_detail,
               "nvJitLink in %.1024s lacks %s; it is too old "
               "for cujit (nvJitLink 12.0 or newer is needed)",
               file.path[0] ? file.path : "the system's search", why);
      break;
  }
}

static void load(void) {
  char why[PATH_MAX + 512];
  void *lib;
  cj_dlib_rc rc;
  pthread_once(&locate_once, locate);
  rc = cj_dlib_load(&nvjitlink, &file, &cj_jl, &lib, why, sizeof why);
  if (rc != CJ_DLIB_LOADED) {
    failed(rc, why);
    return;
  }
  __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
  load_status = CUJIT_OK;
}

cujit_status cj_nvjitlink_load(void) {
  pthread_once(&load_once, load);
  if (CJ_UNLIKELY(load_status != CUJIT_OK)) return cj_fail(load_status, "%s", load_detail);
  return CUJIT_OK;
}

int cj_nvjitlink_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

const char *cj_nvjitlink_identity(void) {
  pthread_once(&locate_once, locate);
  return file.identity;
}

const char *cj_nvjitlink_path(void) {
  pthread_once(&locate_once, locate);
  return file.path;
}

const char *cj_nvjitlink_result_name(nvJitLinkResult r) {
  static const char *const names[] = {"NVJITLINK_SUCCESS",
                                      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
                                      "NVJITLINK_ERROR_MISSING_ARCH",
                                      "NVJITLINK_ERROR_INVALID_INPUT",
                                      "NVJITLINK_ERROR_PTX_COMPILE",
                                      "NVJITLINK_ERROR_NVVM_COMPILE",
                                      "NVJITLINK_ERROR_INTERNAL",
                                      "NVJITLINK_ERROR_THREADPOOL",
                                      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
                                      "NVJITLINK_ERROR_FINALIZE",
                                      "NVJITLINK_ERROR_NULL_INPUT",
                                      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
                                      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
                                      "NVJITLINK_ERROR_ARCH_MISMATCH",
                                      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
                                      "NVJITLINK_ERROR_MISSING_FATBIN",
                                      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
                                      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
                                      "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
  if ((unsigned)r < CJ_COUNT(names)) return names[r];
  return "an unknown nvJitLink result";
}

const char *cujit_nvjitlink_path(void) { return cj_nvjitlink_path(); }
