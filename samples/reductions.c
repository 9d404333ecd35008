/* reductions - a PyCUDA tutorial's gpuarray.max and gpuarray.dot of two random arrays of 50 floats
 * (pycuda.curandom.rand), line for line with cujit's arrays. Checked against the CPU.
 * (reduction_kernel.c has the reduction generator, PyCUDA's ReductionKernel.) */
#include <math.h>
#include <stdio.h>

#include "cujit_array.h"

int main(void) {
  cujit_array *a_gpu, *b_gpu;
  float maximum, dot_product;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_array_random(&a_gpu, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 1);
  cujit_array_random(&b_gpu, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 2);
  cujit_array_reduce_host(CUJIT_REDOP_MAX, a_gpu, &maximum, sizeof maximum, NULL); /* max.get() */
  cujit_array_dot_host(a_gpu, b_gpu, &dot_product, sizeof dot_product, NULL);      /* dot().get() */
  printf("max(a)    =  %.7f\ndot(a, b) =  %.7f\n", (double)maximum, (double)dot_product);

  /* check against the CPU */
  float a[50], b[50];
  double want_max = -INFINITY, want_dot = 0;
  cujit_array_read(a_gpu, a, sizeof a);
  cujit_array_read(b_gpu, b, sizeof b);
  for (int i = 0; i < 50; i++) {
    want_max = a[i] > want_max ? a[i] : want_max;
    want_dot += (double)a[i] * b[i];
  }
  if (maximum != want_max || fabs(dot_product - want_dot) > 1e-5 * fabs(want_dot))
    return printf("Failed: expected max %.7f and dot %.7f\n", want_max, want_dot), 1;
  printf("Success: max and dot match the CPU\n");
}
