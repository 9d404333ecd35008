/* sample.h - what every sample shares: checking calls and finding out whether a GPU is here. */
#ifndef CUJIT_SAMPLE_H
#define CUJIT_SAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"

/* Stops the sample with cujit's own explanation when a call fails. */
#define CHECK(call)                                                            \
  do {                                                                         \
    cujit_status st_ = (call);                                                 \
    if (st_ != CUJIT_OK) {                                                     \
      fprintf(stderr, "%s:%d: %s failed: %s\n%s\n", __FILE__, __LINE__, #call, \
              cujit_status_name(st_), cujit_last_error());                     \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* 1 when a CUDA device can run kernels; otherwise says why and returns 0. */
static inline int sample_have_gpu(void) {
  int n = 0;
  if (cujit_device_get_count(&n) == CUJIT_OK && n > 0) return 1;
  printf("No GPU here (%s)\n",
         n == 0 && !cujit_last_error()[0] ? "the driver reports no device" : cujit_last_error());
  return 0;
}

/* Without a GPU: shows what was compiled, so the sample still demonstrates something. */
static inline void sample_show_compiled(const cujit_module *m) {
  size_t n = 0;
  const char *ptx = cujit_module_ptx(m, &n);
  const char *entry = strstr(ptx, ".entry");
  const char *eol = entry ? strchr(entry, '(') : NULL;
  printf("Compiled %s for %s: %zu bytes of PTX", cujit_module_name(m), cujit_module_arch(m), n);
  if (cujit_module_cubin(m, &n)) printf(" and %zu bytes of CUBIN", n);
  printf("\n");
  if (entry && eol) printf("  first kernel: %.*s\n", (int)(eol - entry), entry);
  printf("Skipping the launch: it needs a GPU.\n");
}

/* Uniform random floats in [-1, 1). */
static inline void sample_fill(float *x, size_t n, unsigned seed) {
  size_t i;
  srand(seed);
  for (i = 0; i < n; i++) x[i] = (float)rand() / ((float)RAND_MAX + 1.0f) * 2.0f - 1.0f;
}

/* Uniform random doubles in [0, 1). */
static inline void sample_fill_double(double *x, size_t n, unsigned seed) {
  size_t i;
  srand(seed);
  for (i = 0; i < n; i++) x[i] = (double)rand() / ((double)RAND_MAX + 1.0);
}

/* numpy.allclose for floats: |got - want| <= atol + rtol * |want| everywhere; otherwise
 * prints the first element that differs and returns 0. */
static inline int sample_allclose(const float *got, const float *want, size_t n, double rtol,
                                  double atol) {
  size_t i;
  for (i = 0; i < n; i++) {
    double g = got[i], w = want[i], d = g > w ? g - w : w - g;
    if (!(d <= atol + rtol * (w < 0 ? -w : w))) {
      printf("Failed: element %zu is %.9g, expected %.9g\n", i, g, w);
      return 0;
    }
  }
  return 1;
}

/* Prints a vector as NumPy does, six values a line. */
static inline void sample_print_vector(const float *v, int n) {
  int i;
  for (i = 0; i < n; i++)
    printf("%s%11.8f%s", i % 6 ? " " : (i ? "\n " : "["), (double)v[i], i == n - 1 ? "]\n" : "");
}

/* Prints a rows x cols matrix as NumPy does. */
static inline void sample_print_matrix(const float *m, int rows, int cols) {
  int i, j;
  for (i = 0; i < rows; i++) {
    printf(i ? " [" : "[[");
    for (j = 0; j < cols; j++) printf("%s%11.8f", j ? " " : "", (double)m[i * cols + j]);
    printf(i == rows - 1 ? "]]\n" : "]\n");
  }
}

/* Compiles `source` and returns the module; without a GPU shows what was compiled and
 * returns NULL (the sample then exits 0). */
static inline cujit_module *sample_compile(const char *source, const char *name) {
  cujit_module *m = NULL;
  CHECK(cujit_module_from_source(&m, source, name, NULL));
  if (sample_have_gpu()) return m;
  sample_show_compiled(m);
  cujit_module_destroy(m);
  return NULL;
}

#endif
