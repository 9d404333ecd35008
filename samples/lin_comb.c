/* lin_comb - seed 002: PyCUDA's ElementwiseKernel("float a, float *x, float b, float *y,
 * float *z", "z[i] = a*x[i] + b*y[i]") as a CUDA C kernel with the same arguments. */
#include "sample.h"

static const char *const source =
    "__global__ void linear_combination(float a, float *x, float b, float *y, float *z,\n"
    "                                   unsigned n) {\n"
    "  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += gridDim.x * blockDim.x)\n"
    "    z[i] = a * x[i] + b * y[i];\n"
    "}\n";

int main(void) {
  enum { N = 50 };
  float x[N], y[N], z[N], want[N];
  cujit_module *mod = sample_compile(source, "lin_comb.cu");
  cujit_function *lin_comb;
  int i;
  if (!mod) return 0;
  CHECK(cujit_module_get_function(mod, "linear_combination", &lin_comb));
  for (i = 0; i < N; i++) {
    x[i] = (float)rand() / (float)RAND_MAX; /* curandom.rand: uniform in [0, 1) */
    y[i] = (float)rand() / (float)RAND_MAX;
  }
  CHECK(CUJIT_LAUNCH(lin_comb, cujit_dim3(1), cujit_dim3(64), cujit_f32(5.0f),
                     cujit_in(x, sizeof x), cujit_f32(6.0f), cujit_in(y, sizeof y),
                     cujit_out(z, sizeof z), cujit_u32(N)));
  printf("[");
  for (i = 0; i < N; i++) printf("%s%.5f", i ? (i % 8 ? " " : "\n ") : "", (double)z[i]);
  printf("]\n");
  for (i = 0; i < N; i++) want[i] = 5.0f * x[i] + 6.0f * y[i];
  if (!sample_allclose(z, want, N, 1e-6, 1e-6)) return 1;
  cujit_module_destroy(mod);
  printf("Success: z == 5*x + 6*y for all %d elements\n", N);
  return 0;
}
