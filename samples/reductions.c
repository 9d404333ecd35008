/* reductions - seed 002: gpuarray.max and gpuarray.dot of two random arrays of 50 floats
 * (pycuda.curandom.rand), line for line with cujit's arrays; the dot product again through
 * the reduction generator (PyCUDA's ReductionKernel). Checked against the CPU. */
#include <math.h>

#include "sample.h"

int main(void) {
  const int64_t n = 50;
  cujit_array *a_gpu = NULL, *b_gpu = NULL, *max_gpu = NULL, *dot_gpu = NULL;
  cujit_reduction *dot = NULL;
  float maximum, dot_product, gen_dot, a[50], b[50], want_max = -INFINITY;
  double want_dot = 0;
  int i;
  if (!sample_have_gpu()) return 0;
  CHECK(cujit_array_random(&a_gpu, CUJIT_TYPE_F32, 1, &n, CUJIT_UNIFORM, 1)); /* curandom.rand */
  CHECK(cujit_array_random(&b_gpu, CUJIT_TYPE_F32, 1, &n, CUJIT_UNIFORM, 2));
  CHECK(cujit_array_reduce(CUJIT_MAX, a_gpu, &max_gpu)); /* gpuarray.max(a_gpu) */
  CHECK(cujit_array_get(max_gpu, &maximum, sizeof maximum));
  CHECK(cujit_array_dot(a_gpu, b_gpu, &dot_gpu)); /* gpuarray.dot(a_gpu, b_gpu) */
  CHECK(cujit_array_get(dot_gpu, &dot_product, sizeof dot_product));
  printf("max(a)    =  %.7f\ndot(a, b) =  %.7f\n", (double)maximum, (double)dot_product);
  /* ReductionKernel(numpy.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
   *                 arguments="float *x, float *y") */
  CHECK(cujit_reduction_create(&dot, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                               "float *x, float *y", NULL));
  CHECK(CUJIT_REDUCTION_HOST(dot, &gen_dot, a_gpu, b_gpu));
  CHECK(cujit_array_get(a_gpu, a, sizeof a));
  CHECK(cujit_array_get(b_gpu, b, sizeof b));
  for (i = 0; i < n; i++) {
    if (a[i] > want_max) want_max = a[i];
    want_dot += (double)a[i] * b[i];
  }
  if (maximum != want_max || fabs(dot_product - want_dot) > 1e-5 * fabs(want_dot) ||
      fabs(gen_dot - want_dot) > 1e-5 * fabs(want_dot)) {
    printf("Failed: expected max %.7f and dot %.7f\n", (double)want_max, want_dot);
    return 1;
  }
  cujit_reduction_destroy(dot);
  cujit_array_destroy(a_gpu);
  cujit_array_destroy(b_gpu);
  cujit_array_destroy(max_gpu);
  cujit_array_destroy(dot_gpu);
  printf("Success: max and dot match the CPU (built in and through the generator)\n");
  return 0;
}
