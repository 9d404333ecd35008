/* sqrt_abs - seed 002: pycuda.cumath.sqrt(pycuda.cumath.fabs(d_gpuarray)) on a 4000 x 4000
 * float array, line for line with cujit's arrays, then as one fused kernel; checked
 * against the CPU (numpy.allclose). */
#include <math.h>

#include "sample.h"

int main(void) {
  const int64_t shape[] = {4000, 4000};
  const size_t n = 4000u * 4000u;
  float *h_array = malloc(n * sizeof(float)), *result = malloc(n * sizeof(float)),
        *want = malloc(n * sizeof(float));
  cujit_array *d_gpuarray = NULL, *d_abs = NULL, *d_result = NULL;
  size_t i;
  if (!sample_have_gpu()) return 0;
  sample_fill(h_array, n, 5); /* numpy.random.randn(4000,4000).astype(numpy.float32) */
  CHECK(cujit_array_from_host(&d_gpuarray, CUJIT_TYPE_F32, 2, shape, h_array)); /* to_gpu */
  CHECK(cujit_array_unary(CUJIT_FABS, d_gpuarray, &d_abs));   /* cumath.fabs */
  CHECK(cujit_array_unary(CUJIT_SQRT, d_abs, &d_result));     /* cumath.sqrt */
  CHECK(cujit_array_get(d_result, result, n * sizeof(float))); /* .get() */
  for (i = 0; i < n; i++) want[i] = sqrtf(fabsf(h_array[i]));
  if (!sample_allclose(result, want, n, 1e-5, 1e-8)) return 1;
  CHECK(cujit_array_map(&d_result, "sqrt(fabs(x))", 1, (const char *[]){"x"},
                        (const cujit_array *[]){d_gpuarray})); /* fused: one kernel */
  CHECK(cujit_array_get(d_result, result, n * sizeof(float)));
  if (!sample_allclose(result, want, n, 1e-5, 1e-8)) return 1;
  cujit_array_destroy(d_gpuarray);
  cujit_array_destroy(d_abs);
  cujit_array_destroy(d_result);
  free(h_array);
  free(result);
  free(want);
  printf("Success: sqrt(fabs(x)) matches the CPU for all 4000 x 4000 elements, both ways\n");
  return 0;
}
