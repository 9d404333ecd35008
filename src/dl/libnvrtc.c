/* libnvrtc.c - NVRTC's table for the loader (see nvrtc.h and loader.h): found by path and
 * named by its build without being loaded, so that a cache hit never maps it; the copy a
 * program already has is used when it has one; loaded on the first compile. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const cj_dlib nvrtc = {
    .env = "CUJIT_NVRTC",
    .warn_relative = 1,
    .sonames = sonames,
    .n_sonames = CJ_COUNT(sonames),
    .keyed_as = "nvrtc build ",
    .in_process = "nvrtcVersion",
    .syms = syms,
    .n_syms = CJ_COUNT(syms),
};

static pthread_once_t locate_once = PTHREAD_ONCE_INIT;
static CJ_LARGE cj_dlib_file file;
static CJ_LARGE char
    loaded_dir[PATH_MAX]; /* set before `loaded` when found by the system's search */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cujit_status load_status = CUJIT_ERROR_NO_NVRTC;
static CJ_LARGE char load_detail[1536];
static int loaded;

static void locate(void) { cj_dlib_locate(&nvrtc, &file); }

/* After loading through the system's search: the library's directory, from a symbol. */
static void locate_loaded(void *sym) {
  Dl_info info;
  char real[PATH_MAX], *slash;
  if (file.path[0] || !dladdr(sym, &info) || !info.dli_fname) return;
  if (!realpath(info.dli_fname, real) || !(slash = strrchr(real, '/'))) return;
  *slash = '\0';
  snprintf(loaded_dir, sizeof loaded_dir, "%s", real);
}

/* What went wrong, in load_detail. Out of line: the message is as long as it comes. */
static CJ_NOINLINE void failed(cj_dlib_rc rc, const char *why) {
  char looked[1024];
  switch (rc) {
    case CJ_DLIB_REFUSED:
      cj_dlib_refusal(&nvrtc, load_detail, sizeof load_detail, "libnvrtc.so",
                      "kernels found "
                      "in the cache and prebuilt PTX, CUBIN and fatbins need no NVRTC");
      break;
    case CJ_DLIB_NOT_LOADED:
      cj_dlib_looked(&nvrtc, &file, looked, sizeof looked);
      snprintf(load_detail, sizeof load_detail,
               "NVRTC (libnvrtc.so) could not be loaded%s: %s; looked in %s. Install the CUDA "
               "toolkit's NVRTC, or set CUJIT_NVRTC to the path of libnvrtc.so (kernels found "
               "in the cache and prebuilt PTX, CUBIN and fatbins need no NVRTC)",
               cj_env("CUJIT_NVRTC") ? " from CUJIT_NVRTC" : "", why[0] ? why : "not found",
               looked);
      break;
    case CJ_DLIB_NOT_KEYED:
      snprintf(load_detail, sizeof load_detail,
               "the NVRTC loaded from %.600s is not the file "
               "this process named in its cache keys: %.700s. cujit does not compile with it; "
               "run the program again to use the NVRTC there now",
               file.path, why);
      break;
    default: /* CJ_DLIB_LACKS */
      snprintf(load_detail, sizeof load_detail,
               "NVRTC in %.1024s lacks %s; it is too old for "
               "cujit (NVRTC 12.0 or newer is needed)",
               file.path[0] ? file.path : "?", why);
      break;
  }
}

static void load(void) {
  char why[PATH_MAX + 512];
  void *lib;
  cj_dlib_rc rc;
  pthread_once(&locate_once, locate);
  rc = cj_dlib_load(&nvrtc, &file, &cj_nv, &lib, why, sizeof why);
  if (rc != CJ_DLIB_LOADED) {
    failed(rc, why);
    return;
  }
  if (!file.in_process) locate_loaded(*(void **)&cj_nv.nvrtcVersion);
  __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
  load_status = CUJIT_OK;
}

cujit_status cj_libnvrtc_load(void) {
  pthread_once(&load_once, load);
  if (CJ_UNLIKELY(load_status != CUJIT_OK)) return cj_fail(load_status, "%s", load_detail);
  return CUJIT_OK;
}

int cj_libnvrtc_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

const char *cj_libnvrtc_identity(void) {
  pthread_once(&locate_once, locate);
  return file.identity;
}

const char *cujit_nvrtc_path(void) {
  pthread_once(&locate_once, locate);
  return file.path;
}

const char *cj_libnvrtc_dir(void) {
  pthread_once(&locate_once, locate);
  if (file.dir[0]) return file.dir;
  return cj_libnvrtc_loaded() ? loaded_dir : "";
}
