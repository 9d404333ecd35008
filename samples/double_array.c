/* double_array - a PyCUDA tutorial's tour: multiply 2^20 floats by a random factor four
 * ways: explicit device memory and copies, then InOut, then In and Out with a kernel that
 * keeps input and output apart, then gpuarray's factor * d_gpuarray. */
#include <stdio.h>
#include <string.h>

#include "cujit_array.h"

static const char *const source =
    "__global__ void double_array(float *d_a, unsigned int n_elements, float factor) {\n"
    "  unsigned int idx = threadIdx.x + blockIdx.x * blockDim.x;\n"
    "  if (idx < n_elements)\n"
    "    d_a[idx] *= factor;\n"
    "}\n"
    "__global__ void double_array_io(float *input, float *output, unsigned int n_elements,\n"
    "                                float factor) {\n"
    "  unsigned int idx = threadIdx.x + blockIdx.x * blockDim.x;\n"
    "  if (idx < n_elements)\n"
    "    output[idx] = input[idx] * factor;\n"
    "}\n";

enum { N = 1 << 20, BLOCK = 128 };

/* check: numpy.allclose(results, h_array * factor), the results taken to the GPU */
static int check(const char *how, const float *results, const float *h_array, float factor) {
  static float want[N];
  cujit_array *got = NULL;
  int close;
  for (int i = 0; i < N; i++) want[i] = h_array[i] * factor;
  cujit_array_from_host(&got, CUJIT_TYPE_F32, 1, (int64_t[]){N}, results);
  cujit_array_allclose_host(got, want, sizeof want, 1e-5, 1e-8, 0, &close);
  cujit_array_destroy(got);
  return printf("%s: %s\n", how, close ? "ok" : "Failed"), close;
}

int main(void) {
  static float h_array[N], h_copy[N], results[N];
  const cujit_dim3 grid = CUJIT_DIM3((N + BLOCK - 1) / BLOCK), block = CUJIT_DIM3(BLOCK);
  cujit_module *mod;
  cujit_function *kernel, *kernel_io;
  CUdeviceptr d_array;
  float factor;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_module_from_source(&mod, source, "double_array.cu", NULL);
  cujit_module_get_function(mod, "double_array", &kernel);
  cujit_module_get_function(mod, "double_array_io", &kernel_io);
  cujit_array_random_host(&factor, CUJIT_TYPE_F32, 1, CUJIT_RANDOM_UNIFORM, 1);
  factor *= 10; /* factor = 10 * numpy.random.random() */
  cujit_array_random_host(h_array, CUJIT_TYPE_F32, N, CUJIT_RANDOM_UNIFORM, 2);
  for (int i = 0; i < N; i++) h_array[i] *= 50; /* numpy.random.uniform(0, 50, size=N) */

  /* 1: allocate, copy in, launch on the device pointer, copy back, free */
  cujit_mem_alloc(&d_array, sizeof h_array);
  cujit_mem_copy_htod(d_array, h_array, sizeof h_array);
  CUJIT_LAUNCH(kernel, grid, block, cujit_ptr(d_array), cujit_u32(N), cujit_f32(factor));
  cujit_mem_copy_dtoh(results, d_array, sizeof results);
  cujit_mem_free(d_array);

  /* check */
  if (!check("explicit alloc and copies", results, h_array, factor)) return 1;

  /* 2: InOut overwrites the host array in place */
  memcpy(h_copy, h_array, sizeof h_array);
  CUJIT_LAUNCH(kernel, grid, block, cujit_inout(h_copy, sizeof h_copy), cujit_u32(N),
               cujit_f32(factor));

  /* check */
  if (!check("InOut", h_copy, h_array, factor)) return 1;

  /* 3: In and Out */
  memset(results, 0, sizeof results); /* results = numpy.empty_like(h_array) */
  CUJIT_LAUNCH(kernel_io, grid, block, cujit_in(h_array, sizeof h_array),
               cujit_out(results, sizeof results), cujit_u32(N), cujit_f32(factor));

  /* check */
  if (!check("In and Out", results, h_array, factor)) return 1;

  /* 4: gpuarray: d_results = factor * d_gpuarray; results = d_results.get() */
  cujit_array *d_gpuarray, *d_results = NULL;
  cujit_array_from_host(&d_gpuarray, CUJIT_TYPE_F32, 1, (int64_t[]){N}, h_array);
  cujit_array_binary_scalar(CUJIT_BINOP_MUL, d_gpuarray, factor, CUJIT_SCALAR_FIRST, &d_results);
  cujit_array_read(d_results, results, sizeof results);

  /* check */
  if (!check("gpuarray", results, h_array, factor)) return 1;
  printf("Success: all four ways multiplied %d floats by %g\n", N, (double)factor);
}
