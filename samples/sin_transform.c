/* sin_transform - seed 004: CuPy's gpu_calculation_cupy line for line with cujit's arrays
 * (random data on the GPU, data * 2 + 1, sin), then the same as one fused kernel, and the
 * Numba kernel's form as a SourceModule with a 2-D grid of 16 x 16 blocks; each checked
 * against the CPU on 4000 x 4000 floats. */
#include <math.h>

#include "cujit_array.h"
#include "sample.h"

static const char *const source =
    "__global__ void gpu_kernel(const float *data, float *output, int rows, int cols) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < rows && y < cols)\n"
    "    output[x * cols + y] = sinf(data[x * cols + y] * 2.0f + 1.0f);\n"
    "}\n";

int main(void) {
  const int64_t size = 4000, shape[] = {size, size};
  const size_t n = (size_t)(size * size), bytes = n * sizeof(float);
  float *data = malloc(bytes), *result = malloc(bytes), *want = malloc(bytes);
  cujit_array *d_data = NULL, *transformed = NULL, *d_result = NULL;
  cujit_module *mod = sample_compile(source, "sin_transform.cu");
  cujit_function *kernel;
  size_t i;
  if (!mod) return 0;
  /* data = cp.random.rand(size, size).astype(cp.float32) */
  CHECK(cujit_array_random(&d_data, CUJIT_TYPE_F32, 2, shape, CUJIT_RANDOM_UNIFORM, 2025));
  CHECK(cujit_array_binary_scalar(CUJIT_BINOP_MUL, d_data, 2, CUJIT_SCALAR_INT, &transformed));
  CHECK(cujit_array_binary_scalar(CUJIT_BINOP_ADD, transformed, 1, CUJIT_SCALAR_INT, &transformed));
  CHECK(cujit_array_unary(CUJIT_UNOP_SIN, transformed, &d_result)); /* result = cp.sin(...) */
  CHECK(cujit_array_read(d_result, result, bytes));                 /* result.get() */
  CHECK(cujit_array_read(d_data, data, bytes));
  for (i = 0; i < n; i++) want[i] = sinf(data[i] * 2.0f + 1.0f);
  if (!sample_allclose(result, want, n, 1e-5, 1e-6)) return 1;
  /* the same as one kernel with no temporaries */
  CHECK(cujit_array_map(&d_result, "sin(x * 2 + 1)", 1, (const char *[]){"x"},
                        (const cujit_array *[]){d_data}));
  CHECK(cujit_array_read(d_result, result, bytes));
  if (!sample_allclose(result, want, n, 1e-5, 1e-6)) return 1;
  /* the Numba kernel: explicit In/Out and a 2-D grid */
  CHECK(cujit_module_get_function(mod, "gpu_kernel", &kernel));
  CHECK(CUJIT_LAUNCH(kernel, CUJIT_DIM3((size + 15) / 16, (size + 15) / 16), CUJIT_DIM3(16, 16),
                     cujit_in(data, bytes), cujit_out(result, bytes), cujit_i32((int)size),
                     cujit_i32((int)size)));
  if (!sample_allclose(result, want, n, 1e-5, 1e-6)) return 1;
  cujit_array_destroy(d_data);
  cujit_array_destroy(transformed);
  cujit_array_destroy(d_result);
  cujit_module_destroy(mod);
  free(data);
  free(result);
  free(want);
  printf("Success: sin(2x + 1) matches the CPU for all 4000 x 4000 elements, three ways\n");
  return 0;
}
