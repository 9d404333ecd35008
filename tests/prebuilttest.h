/* prebuilttest.h - what the prebuilt-image groups share: a kernel source with a C++ and an
 * extern "C" kernel and three variables, and building a fatbin of it with nvcc. */
#ifndef CUJIT_PREBUILTTEST_H
#define CUJIT_PREBUILTTEST_H

#include "testutil.h"

static const char kPrebuiltSrc[] = "__device__ int counter;\n"
                                   "namespace ns { __device__ float bias; }\n"
                                   "__constant__ float coef[4];\n"
                                   "__global__ void scale(float *x, float a, int n) {\n"
                                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "  if (i < n) x[i] = x[i] * a + ns::bias + coef[0];\n"
                                   "  if (i == 0) atomicAdd(&counter, 1);\n"
                                   "}\n"
                                   "extern \"C\" __global__ void add_one(int *x, int n) {\n"
                                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "  if (i < n) x[i] += 1;\n"
                                   "}\n";

/* Compiles kPrebuiltSrc for `arch` through cujit (no cache); fails the test on error. */
static inline cujit_module *prebuilt_compiled(const char *arch) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  o.arch = arch;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, kPrebuiltSrc, "prebuilt.cu", &o));
  return m;
}

/* Writes kPrebuiltSrc to dir/k.cu and runs `nvcc -fatbin <gencode>` on it into dir/k.fatbin
 * (path gets it). Returns 0, or 1 with the reason in `why` when nvcc is not on PATH or fails. */
static inline int prebuilt_nvcc_fatbin(const char *dir, const char *gencode, char *path,
                                       size_t path_size, char *why, size_t why_size) {
  char cmd[8192], out[4096];
  if (test_capture("command -v nvcc", out, sizeof out) != 0) {
    snprintf(why, why_size, "nvcc is not on PATH");
    return 1;
  }
  if (test_write_file(dir, "k.cu", kPrebuiltSrc) != 0) {
    snprintf(why, why_size, "cannot write %s/k.cu", dir);
    return 1;
  }
  snprintf(path, path_size, "%s/k.fatbin", dir);
  snprintf(cmd, sizeof cmd, "nvcc -fatbin %s -o '%s' '%s/k.cu' 2>&1", gencode, path, dir);
  if (test_capture(cmd, out, sizeof out) != 0) {
    snprintf(why, why_size, "%s failed: %s", cmd, out);
    return 1;
  }
  return 0;
}

/* The whole of a file, malloc'd; *size gets its length. NULL when it cannot be read. */
static inline unsigned char *prebuilt_slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
    *size = (size_t)n;
  } else {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

#endif
