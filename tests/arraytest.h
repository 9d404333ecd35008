/* arraytest.h - what the array test groups share: arrays made from host doubles and read
 * back as doubles, converted on the device (so that every element type is made and read
 * the same way). */
#ifndef CUJIT_ARRAYTEST_H
#define CUJIT_ARRAYTEST_H

#include "testutil.h"
#include "cujit_array.h"

/* A 1-D array of `type` holding host[0 .. n), uploaded as doubles and converted. */
static inline cujit_array *array_from_doubles(int type, int64_t n, const double *host) {
  cujit_array *d = NULL, *a = NULL;
  assert_ok(cujit_array_from_host(&d, CUJIT_TYPE_F64, 1, &n, host));
  assert_ok(cujit_array_astype(d, type, &a));
  cujit_array_destroy(d);
  return a;
}

/* The array's elements, C order, as doubles (the real parts of complex numbers); the
 * caller frees them. */
static inline double *array_values(const cujit_array *a) {
  int64_t n = cujit_array_size(a), i;
  int type = cujit_array_type(a), k = type == CUJIT_TYPE_C64 || type == CUJIT_TYPE_C128 ? 2 : 1;
  cujit_array *d = NULL;
  double *h = (double *)malloc((size_t)(n ? n : 1) * 2 * sizeof *h);
  double *re = (double *)malloc((size_t)(n ? n : 1) * sizeof *re);
  assert_ok(cujit_array_astype(a, k == 2 ? CUJIT_TYPE_C128 : CUJIT_TYPE_F64, &d));
  assert_ok(cujit_array_read(d, h, cujit_array_nbytes(d)));
  for (i = 0; i < n; i++) re[i] = h[i * k];
  cujit_array_destroy(d);
  free(h);
  return re;
}

#endif
