/* dot_product - seed 003: cp.dot of two arrays of 10^6 random doubles (cp.random.rand),
 * line for line with cujit's arrays; checked against the CPU. */
#include <math.h>

#include "cujit_array.h"
#include "sample.h"

int main(void) {
  const int64_t array_size = 1000000;
  static double ha[1000000], hb[1000000];
  cujit_array *a = NULL, *b = NULL, *c = NULL;
  double result;
  if (!sample_have_gpu()) return 0;
  CHECK(cujit_array_random(&a, CUJIT_TYPE_F64, 1, &array_size, CUJIT_RANDOM_UNIFORM, 7)); /* rand */
  CHECK(cujit_array_random(&b, CUJIT_TYPE_F64, 1, &array_size, CUJIT_RANDOM_UNIFORM, 8));
  CHECK(cujit_array_dot(a, b, &c));                   /* c = cp.dot(a, b) */
  CHECK(cujit_array_read(c, &result, sizeof result)); /* cp.asnumpy(c) */
  printf("Dot product result: %.6f\n", result);

  /* check against the CPU */
  double want = 0;
  CHECK(cujit_array_read(a, ha, sizeof ha));
  CHECK(cujit_array_read(b, hb, sizeof hb));
  for (int64_t i = 0; i < array_size; i++) want += ha[i] * hb[i];
  if (fabs(result - want) > 1e-9 * fabs(want)) return printf("Failed: expected %.6f\n", want), 1;
  printf("Success: the dot product of 10^6 doubles matches the CPU\n");

  cujit_array_destroy(a);
  cujit_array_destroy(b);
  cujit_array_destroy(c);
  return 0;
}
