/* sqrt_abs - a PyCUDA tutorial's pycuda.cumath.sqrt(pycuda.cumath.fabs(d_gpuarray)).get()
 * on a 4000 x 4000 float array of normally distributed values, made on the GPU (the
 * tutorial makes them with numpy.random.randn and copies them with to_gpu). The two math
 * calls are one fused kernel here, with no temporary array;
 * cujit_array_unary(CUJIT_UNOP_FABS, ...) and (CUJIT_UNOP_SQRT, ...) are the tutorial's
 * calls one by one. Checked against the CPU. */
#include <math.h>
#include <stdio.h>

#include "cujit_array.h"

int main(void) {
  static float result[4000 * 4000];
  cujit_array *x, *y = NULL;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_array_random(&x, CUJIT_TYPE_F32, 2, (int64_t[]){4000, 4000}, CUJIT_RANDOM_NORMAL, 5);
  cujit_array_map(&y, "sqrt(fabs(x))", 1, (const char *[]){"x"}, (const cujit_array *[]){x});
  cujit_array_read(y, result, sizeof result);

  /* check: numpy.allclose(result, numpy.sqrt(numpy.abs(h_array))) */
  static float h_array[4000 * 4000], want[4000 * 4000];
  int close;
  cujit_array_read(x, h_array, sizeof h_array);
  for (size_t i = 0; i < 4000 * 4000; i++) want[i] = sqrtf(fabsf(h_array[i]));
  cujit_array_allclose_host(y, want, sizeof want, 1e-5, 1e-8, 0, &close);
  if (!close) return printf("Failed: sqrt(fabs(x)) differs from the CPU's\n"), 1;
  printf("Success: sqrt(fabs(x)) matches the CPU for all 4000 x 4000 elements\n");
}
