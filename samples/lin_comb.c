/* lin_comb - PyCUDA's ElementwiseKernel("float a, float *x, float b, float *y,
 * float *z", "z[i] = a*x[i] + b*y[i]", "linear_combination") on two random arrays of 50
 * floats (pycuda.curandom.rand), line for line with cujit's elementwise generator.
 * Checked against the CPU. */
#include <stdio.h>

#include "cujit_array.h"

int main(void) {
  cujit_array *a_gpu, *b_gpu, *c_gpu = NULL;
  cujit_elementwise *lin_comb;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_array_random(&a_gpu, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 3);
  cujit_array_random(&b_gpu, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 4);
  cujit_elementwise_create(&lin_comb, "float a, float *x, float b, float *y, float *z",
                           "z[i] = a*x[i] + b*y[i]",
                           &(cujit_generator_options){.name = "linear_combination"});
  cujit_array_empty_like(&c_gpu, a_gpu); /* gpuarray.empty_like(a_gpu) */
  CUJIT_ELEMENTWISE(lin_comb, 5.0f, a_gpu, 6.0f, b_gpu, c_gpu);
  cujit_array_print(c_gpu, stdout); /* print(c_gpu.get()) */

  /* check against the CPU: numpy.allclose(c, 5*a + 6*b) */
  float a[50], b[50], want[50];
  int close;
  cujit_array_read(a_gpu, a, sizeof a);
  cujit_array_read(b_gpu, b, sizeof b);
  for (int i = 0; i < 50; i++) want[i] = 5 * a[i] + 6 * b[i];
  cujit_array_allclose_host(c_gpu, want, sizeof want, 1e-5, 1e-8, 0, &close);
  if (!close) return printf("Failed: z differs from 5*x + 6*y\n"), 1;
  printf("Success: z == 5*x + 6*y for all 50 elements\n");
}
