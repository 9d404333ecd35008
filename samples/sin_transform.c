/* sin_transform - seed 004: sin(data * 2 + 1) on a 4000 x 4000 float array with a 2-D grid
 * of 16 x 16 blocks (the Numba cuda.grid(2) kernel), checked against the CPU. */
#include <math.h>

#include "sample.h"

static const char *const source =
    "__global__ void gpu_kernel(const float *data, float *output, int rows, int cols) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < rows && y < cols)\n"
    "    output[x * cols + y] = sinf(data[x * cols + y] * 2.0f + 1.0f);\n"
    "}\n";

int main(void) {
  const int size = 4000;
  const size_t n = (size_t)size * size;
  float *data = malloc(n * sizeof(float)), *output = malloc(n * sizeof(float)),
        *want = malloc(n * sizeof(float));
  cujit_module *mod = sample_compile(source, "sin_transform.cu");
  cujit_function *kernel;
  cujit_launch_options timed = {0};
  float ms = 0;
  size_t i;
  if (!mod) return 0;
  if (!data || !output || !want) return 1;
  CHECK(cujit_module_get_function(mod, "gpu_kernel", &kernel));
  for (i = 0; i < n; i++) data[i] = (float)rand() / ((float)RAND_MAX + 1.0f);
  timed.elapsed_ms = &ms;
  CHECK(CUJIT_LAUNCH_EX(kernel, cujit_dim3((size + 15) / 16, (size + 15) / 16), cujit_dim3(16, 16),
                        &timed, cujit_in(data, n * sizeof(float)),
                        cujit_out(output, n * sizeof(float)), cujit_i32(size), cujit_i32(size)));
  printf("GPU time: %.4f ms (kernel only)\n", (double)ms);
  for (i = 0; i < n; i++) want[i] = sinf(data[i] * 2.0f + 1.0f);
  if (!sample_allclose(output, want, n, 1e-5, 1e-6)) return 1;
  cujit_module_destroy(mod);
  free(data);
  free(output);
  free(want);
  printf("Success: sin(2x + 1) matches the CPU for all 4000 x 4000 elements\n");
  return 0;
}
