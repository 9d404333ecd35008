/* lin_comb - seed 002: PyCUDA's ElementwiseKernel("float a, float *x, float b, float *y,
 * float *z", "z[i] = a*x[i] + b*y[i]", "linear_combination") on two random arrays of 50
 * floats (pycuda.curandom.rand), line for line with cujit's elementwise generator.
 * Checked against the CPU. */
#include <math.h>

#include "cujit_array.h"
#include "sample.h"

int main(void) {
  cujit_array *a_gpu = NULL, *b_gpu = NULL, *c_gpu = NULL;
  cujit_elementwise *lin_comb = NULL;
  float a[50], b[50], c[50];
  if (!sample_have_gpu()) return 0;
  CHECK(cujit_array_random(&a_gpu, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 3));
  CHECK(cujit_array_random(&b_gpu, CUJIT_TYPE_F32, 1, (int64_t[]){50}, CUJIT_RANDOM_UNIFORM, 4));
  CHECK(cujit_elementwise_create(&lin_comb, "float a, float *x, float b, float *y, float *z",
                                 "z[i] = a*x[i] + b*y[i]",
                                 &(cujit_generator_options){.name = "linear_combination"}));
  CHECK(cujit_array_empty_like(&c_gpu, a_gpu)); /* gpuarray.empty_like(a_gpu) */
  CHECK(CUJIT_ELEMENTWISE(lin_comb, 5.0f, a_gpu, 6.0f, b_gpu, c_gpu));
  CHECK(cujit_array_read(c_gpu, c, sizeof c)); /* print(c_gpu.get()) */
  sample_print_vector(c, 50);

  /* check against the CPU */
  CHECK(cujit_array_read(a_gpu, a, sizeof a));
  CHECK(cujit_array_read(b_gpu, b, sizeof b));
  for (int i = 0; i < 50; i++)
    if (fabsf(c[i] - (5 * a[i] + 6 * b[i])) > 1e-5f) return printf("Failed at %d\n", i), 1;
  printf("Success: z == 5*x + 6*y for all 50 elements\n");

  cujit_elementwise_destroy(lin_comb);
  cujit_array_destroy(a_gpu);
  cujit_array_destroy(b_gpu);
  cujit_array_destroy(c_gpu);
  return 0;
}
