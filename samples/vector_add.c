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
  static double a[N], b[N], c[N]; /* c = np.zeros_like(a) */
  cujit_module *mod = sample_compile(source, "vector_add.cu");
  cujit_function *gpu_add;
  if (!mod) return 0;
  CHECK(cujit_module_get_function(mod, "gpu_add", &gpu_add));
  sample_fill_double(a, N, 41); /* np.random.rand(array_size) */
  sample_fill_double(b, N, 42);
  CHECK(CUJIT_LAUNCH(gpu_add, CUJIT_DIM3((N + THREADS - 1) / THREADS), CUJIT_DIM3(THREADS),
                     cujit_in(a, sizeof a), cujit_in(b, sizeof b), cujit_out(c, sizeof c),
                     cujit_u32(N)));
  printf("First element of sum: %.17g\n", c[0]);

  /* check against the CPU */
  for (int i = 0; i < N; i++)
    if (c[i] != a[i] + b[i])
      return printf("Failed: c[%d] = %.17g, expected %.17g\n", i, c[i], a[i] + b[i]), 1;
  printf("Success: out == x + y for all 10^6 elements\n");

  cujit_module_destroy(mod);
  return 0;
}
