/* toolkit.c - the CUDA toolkit's headers, so that kernels include <cuda_fp16.h>,
 * <curand_kernel.h>, <cub/...> and <cuda/std/...> with no options, and the C library
 * headers NVRTC lacks (<stdint.h>, <stddef.h>, <limits.h>, <float.h>) as small built-in
 * versions.
 *
 * The toolkit is looked for, once per process, where the NVRTC in use was loaded from
 * (its lib directory's ../include, or ../../include for a distribution's multiarch
 * layout), then under $CUDA_PATH and $CUDA_HOME, then where cujit was built against,
 * then /usr/local/cuda. A directory counts when it holds cuda_fp16.h. Its include
 * directory and, when present, CCCL's (include/cccl, which CUDA 13 needs for CUB,
 * Thrust and libcu++) are searched after everything the caller puts on the include path.
 * Their files are covered by the cache key through NVRTC's version (and CUDA_PATH and
 * CUDA_HOME); they are neither scanned nor hashed. The search runs at the first compile
 * that needs it, never on a cache hit. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/compile.h"
#include "dl/nvrtc.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CJ_LARGE char include_dir[PATH_MAX]; /* canonical; "" when no toolkit was found */
static CJ_LARGE char cccl_dir[PATH_MAX + 8];
static CJ_LARGE char build_dir[PATH_MAX]; /* the toolkit cujit was built against; "" when gone */
static const char *dirs[2];
static size_t n_dirs;

/* 1 when dir (made canonical into `real`) holds the toolkit's headers. */
static int is_toolkit_include(const char *dir, char real[PATH_MAX]) {
  char probe[PATH_MAX + 16];
  if (!realpath(dir, real)) return 0;
  snprintf(probe, sizeof probe, "%s/cuda_fp16.h", real);
  return access(probe, R_OK) == 0;
}

/* Tries "<base><tail>". */
static int try_dir(const char *base, const char *tail) {
  char dir[PATH_MAX + 32], real[PATH_MAX];
  if (!base || !base[0] || strlen(base) >= PATH_MAX) return 0;
  snprintf(dir, sizeof dir, "%s%s", base, tail);
  if (!is_toolkit_include(dir, real)) return 0;
  memcpy(include_dir, real, sizeof real);
  return 1;
}

static void find(void) {
  const char *lib = cj_libnvrtc_dir(); /* the library file that is or would be loaded */
#ifdef CUJIT_CUDA_INCLUDE_DIR
  if (!realpath(CUJIT_CUDA_INCLUDE_DIR, build_dir)) build_dir[0] = '\0';
#endif
  if (try_dir(lib, "/../include") || try_dir(lib, "/../../include") ||
      try_dir(cj_env("CUDA_PATH"), "/include") || try_dir(cj_env("CUDA_HOME"), "/include") ||
#ifdef CUJIT_CUDA_INCLUDE_DIR
      try_dir(CUJIT_CUDA_INCLUDE_DIR, "") ||
#endif
      try_dir("/usr/local/cuda", "/include")) {
    snprintf(cccl_dir, sizeof cccl_dir, "%s/cccl", include_dir);
    if (access(cccl_dir, R_OK | X_OK) == 0) dirs[n_dirs++] = cccl_dir;
    dirs[n_dirs++] = include_dir;
  }
}

const char *const *cj_toolkit_include_dirs(size_t *n) {
  pthread_once(&once, find);
  *n = n_dirs;
  return dirs;
}

static int inside(const char *dir, const char *top) {
  size_t n = strlen(top);
  return n && strncmp(dir, top, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

int cj_toolkit_owns(const char *real_dir) {
  pthread_once(&once, find);
  return inside(real_dir, include_dir) || inside(real_dir, build_dir);
}

/* ---- C library headers NVRTC does not have ---- */

static const char float_h[] = "#pragma once\n"
                              "/* cujit's <float.h> for NVRTC: IEEE 754 binary32 and binary64 */\n"
                              "#define FLT_RADIX 2\n"
                              "#define FLT_MANT_DIG 24\n"
                              "#define DBL_MANT_DIG 53\n"
                              "#define FLT_DIG 6\n"
                              "#define DBL_DIG 15\n"
                              "#define FLT_DECIMAL_DIG 9\n"
                              "#define DBL_DECIMAL_DIG 17\n"
                              "#define DECIMAL_DIG 17\n"
                              "#define FLT_EVAL_METHOD 0\n"
                              "#define FLT_MIN_EXP (-125)\n"
                              "#define DBL_MIN_EXP (-1021)\n"
                              "#define FLT_MIN_10_EXP (-37)\n"
                              "#define DBL_MIN_10_EXP (-307)\n"
                              "#define FLT_MAX_EXP 128\n"
                              "#define DBL_MAX_EXP 1024\n"
                              "#define FLT_MAX_10_EXP 38\n"
                              "#define DBL_MAX_10_EXP 308\n"
                              "#define FLT_MAX 3.40282346638528859812e+38F\n"
                              "#define DBL_MAX 1.79769313486231570815e+308\n"
                              "#define FLT_EPSILON 1.1920928955078125e-07F\n"
                              "#define DBL_EPSILON 2.2204460492503130808e-16\n"
                              "#define FLT_MIN 1.17549435082228750797e-38F\n"
                              "#define DBL_MIN 2.22507385850720138309e-308\n"
                              "#define FLT_TRUE_MIN 1.40129846432481707092e-45F\n"
                              "#define DBL_TRUE_MIN 4.94065645841246544177e-324\n";

static const cujit_header builtins[] = {
    {"stdint.h", "#pragma once\n#include <cuda/std/cstdint>\n"},
    {"stddef.h", "#pragma once\n#include <cuda/std/cstddef>\n"},
    {"limits.h", "#pragma once\n#include <cuda/std/climits>\n"},
    {"float.h", float_h},
};

const cujit_header *cj_toolkit_builtin_headers(size_t *n) {
  *n = CJ_COUNT(builtins);
  return builtins;
}
