/* sin_transform - sin(2x + 1) on a 4000 x 4000 array of floats: CuPy's version
 * (gpu_calculation_cupy) line for line with cujit's arrays (random data on the GPU,
 * data * 2 + 1, sin), then the same as one fused kernel, and the Numba kernel's form as a
 * SourceModule with a 2-D grid of 16 x 16 blocks, from random data on the host; each timed
 * on the GPU and checked against the CPU. */
#include <math.h>
#include <stdio.h>

#include "cujit_array.h"

static const char *const source =
    "__global__ void gpu_kernel(const float *data, float *output, int rows, int cols) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < rows && y < cols)\n"
    "    output[x * cols + y] = sinf(data[x * cols + y] * 2.0f + 1.0f);\n"
    "}\n";

enum { SIZE = 4000 };

/* check: numpy.allclose(result, numpy.sin(data * 2 + 1)) */
static int check(const char *how, const cujit_array *result, const float *data) {
  static float want[SIZE * SIZE];
  int close;
  for (int i = 0; i < SIZE * SIZE; i++) want[i] = sinf(data[i] * 2.0f + 1.0f);
  cujit_array_allclose_host(result, want, sizeof want, 1e-5, 1e-6, 0, &close);
  if (!close) printf("Failed: sin(2x + 1) differs from the CPU's (%s)\n", how);
  return close;
}

int main(void) {
  static float data[SIZE * SIZE], result[SIZE * SIZE];
  cujit_array *d_data, *transformed = NULL, *d_result = NULL;
  cujit_module *mod;
  cujit_function *gpu_kernel;
  cujit_timer *timer = NULL;
  double ms;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_module_from_source(&mod, source, "sin_transform.cu", NULL);
  cujit_module_get_function(mod, "gpu_kernel", &gpu_kernel);

  /* gpu_calculation_cupy: data = cp.random.rand(size, size).astype(cp.float32), ... */
  cujit_timer_start(&timer, NULL);
  cujit_array_random(&d_data, CUJIT_TYPE_F32, 2, (int64_t[]){SIZE, SIZE}, CUJIT_RANDOM_UNIFORM, 1);
  cujit_array_binary_scalar(CUJIT_BINOP_MUL, d_data, 2, CUJIT_SCALAR_INT, &transformed);
  cujit_array_binary_scalar(CUJIT_BINOP_ADD, transformed, 1, CUJIT_SCALAR_INT, &transformed);
  cujit_array_unary(CUJIT_UNOP_SIN, transformed, &d_result); /* result = cp.sin(...) */
  cujit_timer_stop(timer, &ms);
  printf("GPU (arrays) Time: %.4f seconds\n", ms / 1e3);

  /* check */
  cujit_array_read(d_data, data, sizeof data);
  if (!check("arrays", d_result, data)) return 1;

  /* the same as one kernel with no temporaries */
  cujit_array_map(&d_result, "sin(x * 2 + 1)", 1, (const char *[]){"x"},
                  (const cujit_array *[]){d_data});

  /* check */
  if (!check("one fused kernel", d_result, data)) return 1;

  /* gpu_calculation_numba: host data in, the kernel on a 2-D grid, the output back */
  cujit_timer_start(&timer, NULL);
  cujit_array_random_host(data, CUJIT_TYPE_F32, SIZE * SIZE, CUJIT_RANDOM_UNIFORM, 2);
  CUJIT_LAUNCH(gpu_kernel, CUJIT_DIM3((SIZE + 15) / 16, (SIZE + 15) / 16), CUJIT_DIM3(16, 16),
               cujit_in(data, sizeof data), cujit_out(result, sizeof result), cujit_i32(SIZE),
               cujit_i32(SIZE));
  cujit_timer_stop(timer, &ms);
  printf("GPU (kernel) Time: %.4f seconds\n", ms / 1e3);

  /* check */
  cujit_array_write(d_result, result, sizeof result);
  if (!check("kernel", d_result, data)) return 1;
  printf("Success: sin(2x + 1) matches the CPU for all 4000 x 4000 elements, three ways\n");
}
