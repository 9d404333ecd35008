/* nvjitlink.c - finding and loading nvJitLink at run time (see nvjitlink.h). As with
 * NVRTC, the file is found by looking at paths first, without loading it, so that a link
 * found in the cache can be keyed by the nvJitLink that made it while leaving it unmapped. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "driver/nvjitlink.h"
#include "driver/nvrtc.h"

cj_nvjitlink_api cj_jl;

static const char *const sonames[] = {"libnvJitLink.so.13", "libnvJitLink.so.12",
                                      "libnvJitLink.so"};

static pthread_once_t locate_once = PTHREAD_ONCE_INIT;
static CJ_LARGE char lib_path[PATH_MAX]; /* "" when not found by path; else absolute */
static CJ_LARGE char identity[PATH_MAX + 64];
static CJ_LARGE char looked[1536];
static cj_lib_key keyed;     /* what named the file at lib_path */
static int explicit_missing; /* CUJIT_NVJITLINK names no file (or is refused) */
static int explicit_refused; /* CUJIT_NVJITLINK is not an absolute path */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cujit_status load_status = CUJIT_ERROR_NO_NVJITLINK;
static CJ_LARGE char load_detail[2048];
static int loaded;

static void note_looked(const char *what) {
  size_t n = strlen(looked);
  if (n + strlen(what) + 3 < sizeof looked)
    snprintf(looked + n, sizeof looked - n, "%s%s", n ? ", " : "", what);
}

/* Takes `path` (made absolute) when it is a regular file, naming it by its build ID (else
 * name and size). */
static int take_file(const char *path) {
  char abs[PATH_MAX];
  int fd, ok;
  if (!(path = cj_lib_absolute(path, abs, sizeof abs)) ||
      (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
    return 0;
  ok = cj_lib_identify(fd, &keyed);
  close(fd);
  if (!ok) return 0;
  if (keyed.build_id[0])
    snprintf(identity, sizeof identity, "nvjitlink build %s", keyed.build_id);
  else
    snprintf(identity, sizeof identity, "%s %lld", strrchr(path, '/') + 1, keyed.size);
  snprintf(lib_path, sizeof lib_path, "%s", path);
  return 1;
}

/* Each name beside the NVRTC in use, then in the directories NVRTC is looked for in,
 * before the next name. */
static void search(void) {
  search_dir v[64];
  char path[PATH_MAX];
  const char *nvrtc = cj_nvrtc_dir();
  size_t n = 0, d, i;
  if (nvrtc[0]) {
    v[0].dir = nvrtc;
    v[0].len = strlen(nvrtc);
    v[0].sub = "";
    n = 1;
  }
  n += cj_lib_search_dirs(v + n, CJ_COUNT(v) - n);
  for (d = 0; d < n; d++) {
    snprintf(path, sizeof path, "%.*s%s", (int)v[d].len, v[d].dir, v[d].sub);
    note_looked(path);
  }
  for (i = 0; i < CJ_COUNT(sonames); i++)
    for (d = 0; d < n; d++) {
      snprintf(path, sizeof path, "%.*s%s/%s", (int)v[d].len, v[d].dir, v[d].sub, sonames[i]);
      if (take_file(path)) return;
    }
}

static void locate(void) {
  const char *v = cj_lib_env("CUJIT_NVJITLINK", &explicit_refused);
  if (v || explicit_refused) { /* the user's choice is final */
    if (v) note_looked(v);
    explicit_missing = !v || !take_file(v);
    return;
  }
  search();
}

static void *open_library(void) {
  void *lib;
  size_t i;
  if (lib_path[0]) return dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (explicit_missing) return NULL;
  note_looked("the system's library path");
  for (i = 0; i < CJ_COUNT(sonames); i++)
    if ((lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL)) != NULL) return lib;
  return NULL;
}

/* The entry point `name`, by its plain name or a versioned one. */
static void *entry(void *lib, const char *name) {
  static const char *const versions[] = {"13_0", "12_0"};
  char versioned[96];
  void *p = dlsym(lib, name);
  size_t i;
  for (i = 0; !p && i < CJ_COUNT(versions); i++) {
    snprintf(versioned, sizeof versioned, "__%s_%s", name, versions[i]);
    p = dlsym(lib, versioned);
  }
  return p;
}

static int resolve(void *lib) {
  static const struct {
    const char *name;
    size_t at;
  } fns[] = {
#define CJ_JL_(field, fn) {#fn, offsetof(cj_nvjitlink_api, field)}
      CJ_JL_(create, nvJitLinkCreate),           CJ_JL_(destroy, nvJitLinkDestroy),
      CJ_JL_(add_data, nvJitLinkAddData),        CJ_JL_(complete, nvJitLinkComplete),
      CJ_JL_(cubin_size, nvJitLinkGetLinkedCubinSize),
      CJ_JL_(cubin, nvJitLinkGetLinkedCubin),    CJ_JL_(ptx_size, nvJitLinkGetLinkedPtxSize),
      CJ_JL_(ptx, nvJitLinkGetLinkedPtx),        CJ_JL_(error_log_size, nvJitLinkGetErrorLogSize),
      CJ_JL_(error_log, nvJitLinkGetErrorLog),   CJ_JL_(info_log_size, nvJitLinkGetInfoLogSize),
      CJ_JL_(info_log, nvJitLinkGetInfoLog),
#undef CJ_JL_
  };
  size_t i;
  void *p;
  for (i = 0; i < CJ_COUNT(fns); i++) {
    if (!(p = entry(lib, fns[i].name))) {
      snprintf(load_detail, sizeof load_detail, "nvJitLink in %.1024s lacks %s; it is too old "
               "for cujit (nvJitLink 12.0 or newer is needed)",
               lib_path[0] ? lib_path : "the system's search", fns[i].name);
      return 0;
    }
    memcpy((char *)&cj_jl + fns[i].at, &p, sizeof p);
  }
  p = entry(lib, "nvJitLinkVersion");
  memcpy(&cj_jl.version, &p, sizeof p);
  return 1;
}

/* The library just loaded from lib_path is the file its identity was read from (see
 * nvrtc.c's is_keyed). */
static int is_keyed(void *lib) {
  char why[700];
  if (cj_lib_loaded_is(lib, &keyed, why, sizeof why)) return 1;
  snprintf(load_detail, sizeof load_detail, "the nvJitLink loaded from %.600s is not the file "
           "this process named in its cache keys: %s. cujit does not link with it; run the "
           "program again to use the nvJitLink there now", lib_path, why);
  return 0;
}

static void load(void) {
  const char *why;
  void *lib;
  pthread_once(&locate_once, locate);
  if (explicit_refused) {
    cj_lib_refusal(load_detail, sizeof load_detail, "CUJIT_NVJITLINK", "libnvJitLink.so",
                   "a link found in the cache needs no nvJitLink");
    return;
  }
  if (!(lib = open_library())) {
    why = explicit_missing ? "it is not a file" : dlerror();
    snprintf(load_detail, sizeof load_detail,
             "nvJitLink (libnvJitLink.so) could not be loaded%s: %s; looked in %s. Install the "
             "CUDA toolkit's nvJitLink (it ships beside NVRTC), or set CUJIT_NVJITLINK to the "
             "path of libnvJitLink.so (a link found in the cache needs no nvJitLink)",
             cj_env("CUJIT_NVJITLINK") ? " from CUJIT_NVJITLINK" : "", why ? why : "not found",
             looked);
    return;
  }
  if ((lib_path[0] && !is_keyed(lib)) || !resolve(lib)) {
    dlclose(lib);
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
  return identity;
}

const char *cj_nvjitlink_path(void) {
  pthread_once(&locate_once, locate);
  return lib_path;
}

const char *cj_nvjitlink_result_name(nvJitLinkResult r) {
  static const char *const names[] = {
      "NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION", "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT", "NVJITLINK_ERROR_PTX_COMPILE",
      "NVJITLINK_ERROR_NVVM_COMPILE", "NVJITLINK_ERROR_INTERNAL", "NVJITLINK_ERROR_THREADPOOL",
      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT", "NVJITLINK_ERROR_FINALIZE",
      "NVJITLINK_ERROR_NULL_INPUT", "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH",
      "NVJITLINK_ERROR_OUTDATED_LIBRARY", "NVJITLINK_ERROR_MISSING_FATBIN",
      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
  if ((unsigned)r < CJ_COUNT(names)) return names[r];
  return "an unknown nvJitLink result";
}

const char *cujit_nvjitlink_path(void) { return cj_nvjitlink_path(); }
