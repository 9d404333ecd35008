/* libnvjitlink.c - nvJitLink's table for the loader (see nvjitlink.h and loader.h): as
 * with NVRTC, found by path and named by its build without being loaded, so that a link
 * found in the cache can be keyed by the nvJitLink that made it while leaving it
 * unmapped; loaded on the first link. Each release exports its entry points by their plain
 * names and with a version suffix, which is tried when the plain name is missing. */
#include <stddef.h>

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

CJ_DLIB_STATE(state);

static const cj_dlib nvjitlink = {
    .name = "nvJitLink",
    .file = "libnvJitLink.so",
    .install = "the CUDA toolkit's nvJitLink (it ships beside NVRTC)",
    .oldest = "nvJitLink 12.0",
    .without = "a link found in the cache needs no nvJitLink",
    .status = CUJIT_ERROR_NO_NVJITLINK,
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
    .table = &cj_jl,
    .state = &state,
};

cujit_status cj_nvjitlink_load(void) {
  cujit_status st = cj_dlib_open(&nvjitlink);
  if (CJ_UNLIKELY(st != CUJIT_OK)) return cj_fail(st, "%s", cj_dlib_why(&nvjitlink));
  return CUJIT_OK;
}

int cj_nvjitlink_loaded(void) { return cj_dlib_is_open(&nvjitlink); }

const char *cj_nvjitlink_identity(void) { return cj_dlib_found(&nvjitlink)->identity; }

const char *cj_nvjitlink_path(void) { return cj_dlib_found(&nvjitlink)->path; }

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
