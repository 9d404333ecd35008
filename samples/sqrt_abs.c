/* sqrt_abs - seed 002: sqrt(fabs(x)) element by element on a 4000 x 4000 float array
 * (pycuda.cumath.sqrt(pycuda.cumath.fabs(x))), checked against the CPU. */
#include <math.h>

#include "sample.h"

static const char *const source =
    "__global__ void sqrt_abs(const float *x, float *y, unsigned n) {\n"
    "  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "       i += gridDim.x * blockDim.x)\n"
    "    y[i] = sqrtf(fabsf(x[i]));\n"
    "}\n";

int main(void) {
  const size_t n = 4000u * 4000u;
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)),
        *want = malloc(n * sizeof(float));
  cujit_module *mod = sample_compile(source, "sqrt_abs.cu");
  cujit_function *f;
  int block = 0, min_grid = 0;
  size_t i;
  if (!mod) return 0;
  if (!x || !y || !want) return 1;
  CHECK(cujit_module_get_function(mod, "sqrt_abs", &f));
  CHECK(cujit_function_suggest_block(f, 0, &block, &min_grid));
  sample_fill(x, n, 3);
  for (i = 0; i < n; i++) x[i] *= 3.0f; /* like randn: negative and positive values */
  CHECK(CUJIT_LAUNCH(f, cujit_dim3((unsigned)min_grid), cujit_dim3((unsigned)block),
                     cujit_in(x, n * sizeof(float)), cujit_out(y, n * sizeof(float)),
                     cujit_u32((unsigned)n)));
  for (i = 0; i < n; i++) want[i] = sqrtf(fabsf(x[i]));
  if (!sample_allclose(y, want, n, 1e-5, 1e-8)) return 1;
  cujit_module_destroy(mod);
  free(x);
  free(y);
  free(want);
  printf("Success: sqrt(fabs(x)) matches the CPU for all 4000 x 4000 elements "
         "(grid %d x block %d)\n", min_grid, block);
  return 0;
}
