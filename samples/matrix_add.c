/* matrix_add - the sum of two random 4 x 4 matrices with PyCUDA's gpuarray,
 * line for line with cujit's arrays: to_gpu, a_gpu + b_gpu, print. */
#include <stdio.h>

#include "cujit_array.h"

int main(void) {
  float a[16], b[16];
  cujit_array *a_gpu, *b_gpu, *c_gpu = NULL;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_array_random_host(a, CUJIT_TYPE_F32, 16, CUJIT_RANDOM_NORMAL, 11); /* numpy.random.randn */
  cujit_array_random_host(b, CUJIT_TYPE_F32, 16, CUJIT_RANDOM_NORMAL, 12);
  cujit_array_from_host(&a_gpu, CUJIT_TYPE_F32, 2, (int64_t[]){4, 4}, a); /* gpuarray.to_gpu(a) */
  cujit_array_from_host(&b_gpu, CUJIT_TYPE_F32, 2, (int64_t[]){4, 4}, b);
  cujit_array_binary(CUJIT_BINOP_ADD, a_gpu, b_gpu, &c_gpu); /* c_gpu = a_gpu + b_gpu */
  cujit_array_print(c_gpu, stdout);                          /* print(c_gpu.get()) */

  /* check against the CPU */
  float c_cpu[16];
  cujit_array_read(c_gpu, c_cpu, sizeof c_cpu);
  for (int i = 0; i < 16; i++)
    if (c_cpu[i] != a[i] + b[i]) return printf("Failed: c[%d] = %g\n", i, (double)c_cpu[i]), 1;
  printf("Success: c == a + b for the 4 x 4 matrices\n");
}
