/* dot_product - CuPy's cp.dot of two arrays of 10^6 random doubles (cp.random.rand), from a
 * comparison of NumPy, CuPy and Numba, line for line with cujit's arrays, timed on the GPU;
 * checked against the CPU. */
#include <math.h>
#include <stdio.h>

#include "cujit_array.h"

int main(void) {
  const int64_t array_size = 1000000;
  cujit_array *a, *b;
  cujit_timer *timer = NULL;
  double result, ms;
  cujit_error_set_handler(cujit_error_exit, NULL); /* a failing call says why and exits */
  cujit_array_random(&a, CUJIT_TYPE_F64, 1, &array_size, CUJIT_RANDOM_UNIFORM, 7); /* rand */
  cujit_array_random(&b, CUJIT_TYPE_F64, 1, &array_size, CUJIT_RANDOM_UNIFORM, 8);
  cujit_timer_start(&timer, NULL);
  cujit_array_dot_host(a, b, &result, sizeof result, NULL); /* cp.asnumpy(cp.dot(a, b)) */
  cujit_timer_stop(timer, &ms);
  printf("Dot product result: %.6f\nCalculation time: %g seconds\n", result, ms / 1e3);

  /* check against the CPU */
  static double ha[1000000], hb[1000000];
  double want = 0;
  cujit_array_read(a, ha, sizeof ha);
  cujit_array_read(b, hb, sizeof hb);
  for (int64_t i = 0; i < array_size; i++) want += ha[i] * hb[i];
  if (fabs(result - want) > 1e-9 * fabs(want)) return printf("Failed: expected %.6f\n", want), 1;
  printf("Success: the dot product of 10^6 doubles matches the CPU\n");
}
