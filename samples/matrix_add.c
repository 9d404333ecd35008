/* matrix_add - seed 000: the sum of two random 4 x 4 matrices with PyCUDA's gpuarray,
 * line for line with cujit's arrays: to_gpu, a_gpu + b_gpu, get. */
#include "cujit_array.h"
#include "sample.h"

int main(void) {
  float a[16], b[16], c[16];
  cujit_array *a_gpu = NULL, *b_gpu = NULL, *c_gpu = NULL;
  int i;
  if (!sample_have_gpu()) return 0;
  sample_fill(a, 16, 11); /* a = numpy.random.randn(4,4).astype(numpy.float32) */
  sample_fill(b, 16, 12);
  CHECK(cujit_array_from_host(&a_gpu, CUJIT_TYPE_F32, 2, (int64_t[]){4, 4}, a)); /* to_gpu(a) */
  CHECK(cujit_array_from_host(&b_gpu, CUJIT_TYPE_F32, 2, (int64_t[]){4, 4}, b));
  CHECK(cujit_array_binary(CUJIT_BINOP_ADD, a_gpu, b_gpu, &c_gpu)); /* c_gpu = a_gpu + b_gpu */
  CHECK(cujit_array_read(c_gpu, c, sizeof c));                      /* c_cpu = c_gpu.get() */
  sample_print_matrix(c, 4, 4);                                     /* print(c_cpu) */

  /* check against the CPU */
  for (i = 0; i < 16; i++)
    if (c[i] != a[i] + b[i]) return printf("Failed: c[%d] = %g\n", i, (double)c[i]), 1;
  printf("Success: c == a + b for the 4 x 4 matrices\n");

  cujit_array_destroy(a_gpu);
  cujit_array_destroy(b_gpu);
  cujit_array_destroy(c_gpu);
  return 0;
}
