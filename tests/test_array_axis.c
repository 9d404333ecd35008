/* test_array_axis.c - reductions along axes on the checking fake driver (no GPU): the
 * result's shape and type for each op, axes, negative axes and keepdims as NumPy gives
 * them, every kernel's way of walking compiled (to PTX) and launched past the driver's
 * checks, and each refusal NumPy makes, with its message. The values are
 * test_gpu_array_axis's. */
#include "testutil.h"
#include "cujit_array.h"

static cujit_array *zeros(int type, int ndim, const int64_t *shape) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_zeros(&a, (cujit_type)type, ndim, shape));
  return a;
}

/* op of a along axes; the result's shape must be want (want_ndim dimensions), its type
 * want_type. */
static void expect_shape(cujit_redop op, const cujit_array *a, int naxes, const int *axes,
                         int keepdims, int want_type, int want_ndim, const int64_t *want) {
  cujit_array *r = NULL;
  int d;
  assert_ok(cujit_array_reduce_axis(op, a, naxes, axes, keepdims, &r));
  assert_int_equal(cujit_array_type(r), want_type);
  assert_int_equal(cujit_array_ndim(r), want_ndim);
  for (d = 0; d < want_ndim; d++) assert_int_equal(cujit_array_shape(r, d), want[d]);
  cujit_array_destroy(r);
}

static void shapes_follow_numpy(void **state) {
  const int64_t s234[] = {2, 3, 4};
  cujit_array *a = zeros(CUJIT_TYPE_F32, 3, s234), *i = zeros(CUJIT_TYPE_I8, 3, s234);
  cujit_array *b = zeros(CUJIT_TYPE_BOOL, 3, s234);
  (void)state;
  expect_shape(CUJIT_REDOP_SUM, a, 1, (const int[]){0}, 0, CUJIT_TYPE_F32, 2,
               (const int64_t[]){3, 4});
  expect_shape(CUJIT_REDOP_SUM, a, 1, (const int[]){1}, 0, CUJIT_TYPE_F32, 2,
               (const int64_t[]){2, 4});
  expect_shape(CUJIT_REDOP_MAX, a, 1, (const int[]){-1}, 0, CUJIT_TYPE_F32, 2,
               (const int64_t[]){2, 3});
  expect_shape(CUJIT_REDOP_MIN, a, 1, (const int[]){-3}, 1, CUJIT_TYPE_F32, 3,
               (const int64_t[]){1, 3, 4});
  expect_shape(CUJIT_REDOP_PROD, a, 2, (const int[]){2, 0}, 0, CUJIT_TYPE_F32, 1,
               (const int64_t[]){3});
  expect_shape(CUJIT_REDOP_PROD, a, 2, (const int[]){0, -1}, 1, CUJIT_TYPE_F32, 3,
               (const int64_t[]){1, 3, 1});
  expect_shape(CUJIT_REDOP_SUM, a, 3, (const int[]){0, 1, 2}, 0, CUJIT_TYPE_F32, 0, NULL);
  expect_shape(CUJIT_REDOP_SUM, a, 3, (const int[]){2, 1, 0}, 1, CUJIT_TYPE_F32, 3,
               (const int64_t[]){1, 1, 1});
  expect_shape(CUJIT_REDOP_SUM, a, 0, NULL, 0, CUJIT_TYPE_F32, 3, s234); /* axis=() */
  expect_shape(CUJIT_REDOP_ARGMAX, a, 1, (const int[]){1}, 0, CUJIT_TYPE_I64, 2,
               (const int64_t[]){2, 4});
  expect_shape(CUJIT_REDOP_ARGMIN, a, 1, (const int[]){-1}, 1, CUJIT_TYPE_I64, 3,
               (const int64_t[]){2, 3, 1});
  /* the result types of cujit_array_reduce: small integers sum as i64, any/all are bool */
  expect_shape(CUJIT_REDOP_SUM, i, 1, (const int[]){0}, 0, CUJIT_TYPE_I64, 2,
               (const int64_t[]){3, 4});
  expect_shape(CUJIT_REDOP_MAX, i, 1, (const int[]){0}, 0, CUJIT_TYPE_I8, 2,
               (const int64_t[]){3, 4});
  expect_shape(CUJIT_REDOP_ANY, a, 1, (const int[]){2}, 0, CUJIT_TYPE_BOOL, 2,
               (const int64_t[]){2, 3});
  expect_shape(CUJIT_REDOP_ALL, b, 2, (const int[]){0, 1}, 0, CUJIT_TYPE_BOOL, 1,
               (const int64_t[]){4});
  {
    cujit_array *r = NULL;
    assert_ok(
        cujit_array_reduce_axis_as(CUJIT_REDOP_SUM, i, 1, (const int[]){1}, 0, CUJIT_TYPE_F64, &r));
    assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F64);
    assert_int_equal(cujit_array_ndim(r), 2);
    cujit_array_destroy(r);
  }
  cujit_array_destroy(a);
  cujit_array_destroy(i);
  cujit_array_destroy(b);
}

/* Each way of walking (a warp a row, a block a run of columns, with and without 16-byte
 * accesses, in pieces and whole): every op on f32, sum on a type of each kind, argmax on the
 * 1- and 2-byte types too (16 bytes of them, 16 accumulators of 16 bytes a lane: the
 * smallest blocks, whose second launch must fit the kernel's own limit); compiled and
 * launched past the fake driver's checks, which hold each kernel to its
 * __launch_bounds__. */
static void every_walk_compiles(void **state) {
  static const int64_t shapes[][2] = {{8, 4096},    {4096, 8}, {3, 1 << 20},
                                      {1 << 20, 3}, {7, 33},   {4096, 16}};
  static const int types[] = {CUJIT_TYPE_F32, CUJIT_TYPE_F64, CUJIT_TYPE_I32,
                              CUJIT_TYPE_U8,  CUJIT_TYPE_F16, CUJIT_TYPE_BOOL};
  size_t s, t;
  int op, ax;
  (void)state;
  for (s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (t = 0; t < sizeof types / sizeof *types; t++) {
      cujit_array *a = zeros(types[t], 2, shapes[s]);
      for (op = CUJIT_REDOP_SUM; op <= CUJIT_REDOP_ARGMAX; op++)
        for (ax = 0; ax < 2 && (t == 0 || op == CUJIT_REDOP_SUM ||
                                (op == CUJIT_REDOP_ARGMAX &&
                                 (types[t] == CUJIT_TYPE_U8 || types[t] == CUJIT_TYPE_F16)));
             ax++) {
          cujit_array *r = NULL;
          if (cujit_array_reduce_axis((cujit_redop)op, a, 1, &ax, 0, &r) != CUJIT_OK)
            fail_msg("shape (%lld, %lld) type %d op %d axis %d: %s", (long long)shapes[s][0],
                     (long long)shapes[s][1], types[t], op, ax, cujit_last_error());
          assert_int_equal(cujit_array_shape(r, 0), shapes[s][1 - ax]);
          cujit_array_destroy(r);
        }
      cujit_array_destroy(a);
    }
}

static void numpy_refusals(void **state) {
  const int64_t s23[] = {2, 3}, s30[] = {3, 0}, s03[] = {0, 3};
  cujit_array *a = zeros(CUJIT_TYPE_F32, 2, s23), *e = zeros(CUJIT_TYPE_F32, 2, s30);
  cujit_array *e0 = zeros(CUJIT_TYPE_F32, 2, s03), *c = zeros(CUJIT_TYPE_C64, 2, s23);
  cujit_array *z = NULL, *out = NULL, *wrong = zeros(CUJIT_TYPE_F32, 1, (const int64_t[]){2});
  cujit_array *r = NULL;
  (void)state;
  assert_ok(cujit_array_zeros(&z, CUJIT_TYPE_F32, 0, NULL));
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 1, (const int[]){2}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce_axis: axis 2 is outside the array's 2 dimensions "
                       "(-2 to 1");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 1, (const int[]){-3}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "axis -3 is outside");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 2, (const int[]){1, -1}, 0,
                                               &out),
                       CUJIT_ERROR_INVALID_VALUE, "axis -1 is given twice");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, z, 1, (const int[]){0}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "the array is 0-d, it has no axis");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_ARGMAX, a, 2, (const int[]){0, 1}, 0,
                                               &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "argmax takes one axis, as NumPy's does (2 given)");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_ARGMIN, a, 0, NULL, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "argmin takes one axis");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, -1, NULL, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "naxes is -1");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 1, NULL, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "axes is NULL, with naxes 1");
  assert_status_detail(cujit_array_reduce_axis((cujit_redop)99, a, 1, (const int[]){0}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "op is 99, not a cujit_redop");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_MAX, c, 1, (const int[]){0}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "complex numbers have no order");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 1, (const int[]){0}, 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "out is NULL");
  /* NumPy: no identity, no reduction along an axis of size 0, even into no element */
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_MAX, e, 1, (const int[]){1}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "the max along an axis of no element");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_ARGMIN, e0, 1, (const int[]){0}, 0,
                                               &out),
                       CUJIT_ERROR_INVALID_VALUE, "the argmin along an axis of no element");
  assert_null(out);
  /* ... and the result is empty where the reduced axes are not: (0, 3) along 1 is (0,) */
  assert_ok(cujit_array_reduce_axis(CUJIT_REDOP_MAX, e0, 1, (const int[]){1}, 0, &r));
  assert_int_equal(cujit_array_size(r), 0);
  cujit_array_destroy(r);
  r = NULL;
  /* sums, products, any and all of nothing are their identities: (3, 0) along 1 is (3,) */
  assert_ok(cujit_array_reduce_axis(CUJIT_REDOP_SUM, e, 1, (const int[]){1}, 0, &r));
  assert_int_equal(cujit_array_shape(r, 0), 3);
  cujit_array_destroy(r);
  r = NULL;
  /* a given output has the result's shape and type */
  out = wrong;
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 1, (const int[]){0}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (2,) differs from the result's (3,)");
  assert_status_detail(cujit_array_reduce_axis(CUJIT_REDOP_ARGMAX, a, 1, (const int[]){1}, 0, &out),
                       CUJIT_ERROR_INVALID_VALUE, "the output holds f32, the result is i64");
  assert_ok(cujit_array_reduce_axis(CUJIT_REDOP_SUM, a, 1, (const int[]){1}, 0, &out));
  assert_ptr_equal(out, wrong);
  out = NULL;
  assert_status_detail(cujit_array_reduce_axis_as(CUJIT_REDOP_MAX, a, 1, (const int[]){0}, 0,
                                                  CUJIT_TYPE_F64, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce_axis_as: op is 2; a reduction with a type");
  assert_status_detail(cujit_array_reduce_axis_as(CUJIT_REDOP_SUM, c, 1, (const int[]){0}, 0,
                                                  CUJIT_TYPE_F64, &out),
                       CUJIT_ERROR_INVALID_VALUE, "would drop the imaginary parts");
  cujit_array_destroy(a);
  cujit_array_destroy(e);
  cujit_array_destroy(e0);
  cujit_array_destroy(c);
  cujit_array_destroy(z);
  cujit_array_destroy(wrong);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shapes_follow_numpy),
      cmocka_unit_test(numpy_refusals),
      cmocka_unit_test(every_walk_compiles),
  };
  /* PTX for the fake driver's device, which it loads and checks launches against as it
   * does a CUBIN: the walks are in the source, and ptxas would double the time. */
  setenv("CUJIT_ARCH", "compute_90", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
