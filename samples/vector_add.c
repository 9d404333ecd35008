/* vector_add - element-wise addition of two arrays of 10^6 random doubles (the Numba
 * gpu_add kernel of the comparison dot_product.c comes from), 256 threads per block, timed
 * on the GPU with its copies. */
#include <stdio.h>

#include "cujit_array.h"

static const char *const source =
    "__global__ void gpu_add(const double *x, const double *y, double *out, unsigned n) {\n"
    "  unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (idx < n) out[idx] = x[idx] + y[idx];\n"
    "}\n";

int main(void) {
  enum { N = 1000000, THREADS = 256 };
  static double a[N], b[N], c[N];
  cujit_module *mod;
  cujit_function *gpu_add;
  cujit_timer *timer = NULL;
  double ms;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_module_from_source(&mod, source, "vector_add.cu", NULL);
  cujit_module_get_function(mod, "gpu_add", &gpu_add);
  cujit_array_random_host(a, CUJIT_TYPE_F64, N, CUJIT_RANDOM_UNIFORM, 41); /* np.random.rand */
  cujit_array_random_host(b, CUJIT_TYPE_F64, N, CUJIT_RANDOM_UNIFORM, 42);
  cujit_timer_start(&timer, NULL);
  CUJIT_LAUNCH(gpu_add, CUJIT_DIM3((N + THREADS - 1) / THREADS), CUJIT_DIM3(THREADS),
               cujit_in(a, sizeof a), cujit_in(b, sizeof b), cujit_out(c, sizeof c), cujit_u32(N));
  cujit_timer_stop(timer, &ms);
  printf("First element of sum: %.17g\n", c[0]);
  printf("Calculation time: %g seconds\n", ms / 1e3);

  /* check against the CPU */
  for (int i = 0; i < N; i++)
    if (c[i] != a[i] + b[i])
      return printf("Failed: c[%d] = %.17g, expected %.17g\n", i, c[i], a[i] + b[i]), 1;
  printf("Success: out == x + y for all 10^6 elements\n");
}
