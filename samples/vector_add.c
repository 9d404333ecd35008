/* vector_add - seed 003: element-wise addition of two arrays of 10^6 random doubles (the
 * Numba gpu_add kernel), 256 threads per block. */
#include "sample.h"

static const char *const source =
    "__global__ void gpu_add(const double *x, const double *y, double *out, unsigned n) {\n"
    "  unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (idx < n) out[idx] = x[idx] + y[idx];\n"
    "}\n";

int main(void) {
  enum { N = 1000000, THREADS = 256 };
  double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double)),
         *c = calloc(N, sizeof(double));
  cujit_module *mod = sample_compile(source, "vector_add.cu");
  cujit_function *gpu_add;
  int i;
  if (!mod) return 0;
  if (!a || !b || !c) return 1;
  CHECK(cujit_module_get_function(mod, "gpu_add", &gpu_add));
  sample_fill_double(a, N, 41);
  sample_fill_double(b, N, 42);
  CHECK(CUJIT_LAUNCH(gpu_add, CUJIT_DIM3((N + THREADS - 1) / THREADS), CUJIT_DIM3(THREADS),
                     cujit_in(a, N * sizeof(double)), cujit_in(b, N * sizeof(double)),
                     cujit_out(c, N * sizeof(double)), cujit_u32(N)));
  printf("First element of sum: %.17g\n", c[0]);
  for (i = 0; i < N; i++) {
    if (c[i] != a[i] + b[i]) {
      printf("Failed: c[%d] = %.17g, expected %.17g\n", i, c[i], a[i] + b[i]);
      return 1;
    }
  }
  cujit_module_destroy(mod);
  free(a);
  free(b);
  free(c);
  printf("Success: out == x + y for all 10^6 elements\n");
  return 0;
}
