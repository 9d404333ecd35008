/* reduction_kernel - PyCUDA's ReductionKernel, which the tutorial of double_array.c names as
 * the next step after gpuarray.max and gpuarray.dot: the dot product of two random arrays
 * of 50 floats from ReductionKernel(numpy.float32, neutral="0", reduce_expr="a+b",
 * map_expr="x[i]*y[i]", arguments="float *x, float *y"), once to a 0-d array on the GPU and
 * once straight to host memory. Checked against the CPU. */
#include <math.h>
#include <stdio.h>

#include "cujit_array.h"

int main(void) {
  cujit_array *x = NULL, *y = NULL, *dot_gpu = NULL;
  cujit_reduction *dot = NULL;
  float on_gpu, on_host;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_array_random(&x, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 1);
  cujit_array_random(&y, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 2);
  cujit_reduction_create(&dot, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]", "float *x, float *y", NULL);
  CUJIT_REDUCTION(dot, &dot_gpu, x, y); /* dot(x, y), a 0-d array */
  cujit_array_read(dot_gpu, &on_gpu, sizeof on_gpu);
  CUJIT_REDUCTION_HOST(dot, &on_host, x, y); /* dot(x, y).get() in one call */
  printf("dot(x, y) = %.7f\n", (double)on_host);

  /* check against the CPU */
  float a[50], b[50];
  double want = 0;
  cujit_array_read(x, a, sizeof a);
  cujit_array_read(y, b, sizeof b);
  for (int i = 0; i < 50; i++) want += (double)a[i] * b[i];
  if (fabs(on_gpu - want) > 1e-5 * fabs(want) || fabs(on_host - want) > 1e-5 * fabs(want))
    return printf("Failed: %.7f and %.7f, expected %.7f\n", on_gpu, on_host, want), 1;
  printf("Success: the generated dot product matches the CPU, on the GPU and to the host\n");

  cujit_reduction_destroy(dot);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(dot_gpu);
  return 0;
}
