/* libnvrtc.c - NVRTC's table for the loader (see nvrtc.h and loader.h): found by path and
 * named by its build without being loaded, so that a cache hit never maps it; the copy a
 * program already has is used when it has one; loaded on the first compile. */
#include <stddef.h>

#include "dl/nvrtc.h"

cj_nvrtc_api cj_nv;

static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

static const cj_dsym syms[] = {
#define CJ_NVRTC_REQ_(fn) {#fn, offsetof(cj_nvrtc_api, fn), 0},
#define CJ_NVRTC_OPT_(fn) {#fn, offsetof(cj_nvrtc_api, fn), 1},
    CJ_NVRTC_REQUIRED(CJ_NVRTC_REQ_) CJ_NVRTC_OPTIONAL(CJ_NVRTC_OPT_)
#undef CJ_NVRTC_REQ_
#undef CJ_NVRTC_OPT_
};

CJ_DLIB_STATE(state);

static const cj_dlib nvrtc = {
    .name = "NVRTC",
    .file = "libnvrtc.so",
    .install = "the CUDA toolkit's NVRTC",
    .oldest = "NVRTC 12.0",
    .without = "kernels found in the cache and prebuilt PTX, CUBIN and fatbins need no NVRTC",
    .status = CUJIT_ERROR_NO_NVRTC,
    .env = "CUJIT_NVRTC",
    .warn_relative = 1,
    .sonames = sonames,
    .n_sonames = CJ_COUNT(sonames),
    .keyed_as = "nvrtc build ",
    .in_process = "nvrtcVersion",
    .syms = syms,
    .n_syms = CJ_COUNT(syms),
    .table = &cj_nv,
    .state = &state,
};

cujit_status cj_libnvrtc_load(void) {
  cujit_status st = cj_dlib_open(&nvrtc);
  if (CJ_UNLIKELY(st != CUJIT_OK)) return cj_fail(st, "%s", cj_dlib_why(&nvrtc));
  return CUJIT_OK;
}

int cj_libnvrtc_loaded(void) { return cj_dlib_is_open(&nvrtc); }

const char *cj_libnvrtc_identity(void) { return cj_dlib_found(&nvrtc)->identity; }

const char *cujit_nvrtc_path(void) { return cj_dlib_found(&nvrtc)->path; }

const char *cj_libnvrtc_dir(void) { return cj_dlib_dir(&nvrtc); }
