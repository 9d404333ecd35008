/* test_array - array handles without a device: shapes and types are checked before the
 * driver is needed, wrapped memory gives views and reshapes that share it, and a
 * destroyed array is refused by every function instead of being read after it was freed
 * or taken for a newer array. */
#include "testutil.h"
#include "cujit_array.h"

static const int64_t kShape[] = {4, 6};

static void bad_shapes_and_types(void **state) {
  cujit_array *a = NULL;
  int64_t neg[] = {3, -1}, big[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  int64_t empty_big[] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
  (void)state;
  assert_status_detail(cujit_array_empty(&a, CUJIT_TYPE_PTR, 1, kShape), CUJIT_ERROR_INVALID_VALUE,
                       "is not an element type arrays hold");
  assert_status_detail(cujit_array_empty(&a, CUJIT_TYPE_F32, -1, kShape), CUJIT_ERROR_INVALID_VALUE,
                       "ndim is -1; arrays have 0 to 4 dimensions");
  assert_status_detail(cujit_array_zeros(&a, CUJIT_TYPE_F32, 5, kShape), CUJIT_ERROR_INVALID_VALUE,
                       "ndim is 5");
  assert_status_detail(cujit_array_empty(&a, CUJIT_TYPE_F32, 2, neg), CUJIT_ERROR_INVALID_VALUE,
                       "dimension 2 has the negative size -1");
  assert_status_detail(cujit_array_empty(&a, CUJIT_TYPE_F32, 2, big), CUJIT_ERROR_INVALID_VALUE,
                       "sizes other than 0 multiply to more than 2^62");
  /* an empty array's other sizes count too, as in NumPy (test_array_shapes: every shape) */
  assert_status_detail(cujit_array_empty(&a, CUJIT_TYPE_F32, 3, empty_big),
                       CUJIT_ERROR_INVALID_VALUE, "sizes other than 0 multiply to more than 2^62");
  assert_status_detail(cujit_array_empty(&a, CUJIT_TYPE_F32, 1, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "shape is NULL");
  assert_status_detail(cujit_array_empty(NULL, CUJIT_TYPE_F32, 1, kShape),
                       CUJIT_ERROR_INVALID_VALUE, "out is NULL");
  assert_status_detail(cujit_array_arange(&a, CUJIT_TYPE_F32, 0, 10, 0), CUJIT_ERROR_INVALID_VALUE,
                       "step is 0");
  assert_null(a);
}

static void device_needed_says_so(void **state) {
  cujit_array *a = NULL;
  float v = 1.0f;
  (void)state;
  assert_int_equal(cujit_array_empty(&a, CUJIT_TYPE_F32, 2, kShape), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_full(&a, CUJIT_TYPE_F32, 2, kShape, &v), CUJIT_ERROR_NO_DRIVER);
  assert_null(a);
}

static void wrapped_views_and_destroyed_arrays(void **state) {
  cujit_array *a = NULL, *v = NULL, *r = NULL, *out = NULL;
  int64_t flat[] = {24}, wrong[] = {5, 5};
  float host[24];
  (void)state;
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 2, kShape, (CUdeviceptr)0x10000));
  assert_int_equal(cujit_array_ndim(a), 2);
  assert_int_equal(cujit_array_shape(a, 1), 6);
  assert_int_equal(cujit_array_size(a), 24);
  assert_int_equal(cujit_array_nbytes(a), 96);
  assert_int_equal(cujit_array_type(a), CUJIT_TYPE_F32);
  assert_ok(cujit_array_view(a, 4, 10, &v));
  assert_int_equal(cujit_array_size(v), 6);
  assert_true(cujit_array_data(v) == 0x10000 + 16);
  assert_status_detail(cujit_array_view(a, 10, 30, &r), CUJIT_ERROR_INVALID_VALUE,
                       "[10, 30) is not a range of the array's 24 elements");
  assert_ok(cujit_array_reshape(a, 1, flat, &r));
  assert_true(cujit_array_data(r) == 0x10000);
  assert_status_detail(cujit_array_reshape(a, 2, wrong, &out), CUJIT_ERROR_INVALID_VALUE,
                       "the new shape holds 25 elements, the array 24");
  assert_status_detail(cujit_array_read(a, host, 4), CUJIT_ERROR_INVALID_VALUE,
                       "bytes is 4, but the array holds 96 bytes");
  /* the right size needs the driver, and says so (a copy once called the driver's entry
   * point without it loaded, and crashed) */
  assert_status_detail(cujit_array_read(a, host, sizeof host), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_array_write(a, host, sizeof host), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  cujit_array_destroy(a); /* the views keep working */
  assert_int_equal(cujit_array_size(v), 6);
  assert_status_detail(cujit_array_read(a, host, sizeof host), CUJIT_ERROR_INVALID_VALUE,
                       "a is not a live array (destroyed already");
  assert_status_detail(cujit_array_copy(a, &out), CUJIT_ERROR_INVALID_VALUE, "not a live array");
  assert_status_detail(cujit_array_view(a, 0, 1, &out), CUJIT_ERROR_INVALID_VALUE,
                       "not a live array");
  assert_int_equal(cujit_array_size(a), 0);
  assert_true(cujit_array_data(a) == 0);
  cujit_array_destroy(a); /* twice: ignored */
  cujit_array_destroy(v);
  cujit_array_destroy(r);
  cujit_array_destroy(NULL);
  assert_int_equal(cujit_type_size(CUJIT_TYPE_C128), 16);
  assert_int_equal(cujit_type_size(CUJIT_TYPE_BF16), 2);
  assert_int_equal(cujit_type_size(CUJIT_TYPE_PTR), 8);
  assert_int_equal(cujit_type_size(CUJIT_TYPE_BYTES), 0);
}

/* Many live handles at once (the set of live arrays grows), then all destroyed. */
static void many_handles(void **state) {
  enum { N = 5000 };
  static cujit_array *v[N];
  int i;
  (void)state;
  for (i = 0; i < N; i++)
    assert_ok(cujit_array_wrap(&v[i], CUJIT_TYPE_U8, 1, (int64_t[]){1}, (CUdeviceptr)(i + 1)));
  for (i = 0; i < N; i++) assert_true(cujit_array_data(v[i]) == (CUdeviceptr)(i + 1));
  for (i = 0; i < N; i += 2) cujit_array_destroy(v[i]);
  for (i = 1; i < N; i += 2) assert_int_equal(cujit_array_size(v[i]), 1);
  for (i = 0; i < N; i += 2) assert_int_equal(cujit_array_size(v[i]), 0);
  for (i = 1; i < N; i += 2) cujit_array_destroy(v[i]);
}

/* Reads and writes of part of an array: the range is checked, without overflow, before
 * the driver is needed. */
static void ranges_are_checked(void **state) {
  cujit_array *a = NULL, *v = NULL;
  float host[24];
  (void)state;
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 2, kShape, (CUdeviceptr)0x10000));
  assert_status_detail(cujit_array_read_range(a, 20, 5, host), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_read_range: offset 20 and count 5 are not a range of the "
                       "array's 24 elements (0 <= offset, 0 <= count, offset + count <= 24)");
  assert_status_detail(cujit_array_write_range(a, -1, 2, host), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_write_range: offset -1 and count 2 are not a range");
  assert_status_detail(cujit_array_read_range(a, 0, -1, host), CUJIT_ERROR_INVALID_VALUE,
                       "offset 0 and count -1 are not a range");
  assert_status_detail(cujit_array_read_range(a, 25, 0, host), CUJIT_ERROR_INVALID_VALUE,
                       "offset 25 and count 0 are not a range");
  /* offset + count would overflow */
  assert_status_detail(cujit_array_read_range(a, 1, INT64_MAX, host), CUJIT_ERROR_INVALID_VALUE,
                       "count 9223372036854775807 are not a range");
  assert_status_detail(cujit_array_write_range(a, INT64_MAX, INT64_MAX, host),
                       CUJIT_ERROR_INVALID_VALUE, "are not a range");
  assert_status_detail(cujit_array_read_range(a, 0, 4, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_read_range: host is NULL");
  assert_status_detail(cujit_array_read_range(NULL, 0, 4, host), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_read_range: a is NULL");
  /* nothing to copy: no driver needed, and a NULL host is fine */
  assert_ok(cujit_array_read_range(a, 24, 0, NULL));
  assert_ok(cujit_array_write_range(a, 3, 0, NULL));
  /* a good range needs the driver, and says so */
  assert_status_detail(cujit_array_read_range(a, 20, 4, host), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_array_write_range(a, 0, 24, host), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  /* a view's range is of the view */
  assert_ok(cujit_array_view(a, 4, 10, &v));
  assert_status_detail(cujit_array_read_range(v, 4, 3, host), CUJIT_ERROR_INVALID_VALUE,
                       "offset 4 and count 3 are not a range of the array's 6 elements");
  cujit_array_destroy(v);
  cujit_array_destroy(a);
  assert_status_detail(cujit_array_write_range(a, 0, 1, host), CUJIT_ERROR_INVALID_VALUE,
                       "a is not a live array");
}

/* A destroyed handle stays refused when new arrays take its place: no call through it
 * reaches another array, and destroying it again frees nothing. */
static void stale_handles_never_alias(void **state) {
  enum { N = 200 };
  static cujit_array *v[N];
  cujit_array *a = NULL;
  float one = 1.0f;
  int i;
  (void)state;
  assert_ok(cujit_array_wrap(&a, CUJIT_TYPE_F32, 1, (int64_t[]){4}, (CUdeviceptr)0x1000));
  cujit_array_destroy(a);
  /* enough new arrays that any memory the old handle had is taken again */
  for (i = 0; i < N; i++)
    assert_ok(
        cujit_array_wrap(&v[i], CUJIT_TYPE_U8, 1, (int64_t[]){i + 1}, (CUdeviceptr)(0x100000 + i)));
  for (i = 0; i < N; i++) assert_true(v[i] != a);
  assert_true(cujit_array_data(a) == 0);
  assert_int_equal(cujit_array_size(a), 0);
  assert_int_equal(cujit_array_type(a), CUJIT_TYPE_BYTES);
  assert_int_equal(cujit_array_arg(a).kind, CUJIT_ARG_ARRAY); /* refused by a launch */
  assert_int_equal(cujit_array_arg(v[0]).kind, CUJIT_ARG_VALUE);
  assert_true(cujit_array_arg(v[0]).value.ptr == 0x100000);
  assert_status_detail(cujit_array_fill(a, &one), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_fill: a is not a live array (destroyed already");
  assert_status_detail(cujit_array_set_stream(a, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_set_stream: a is not a live array");
  cujit_array_destroy(a); /* a second time: nothing of the new arrays is freed */
  assert_status_detail(cujit_array_view(a, 0, 1, &v[0]), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_view: a is not a live array");
  for (i = 0; i < N; i++) {
    assert_int_equal(cujit_array_size(v[i]), i + 1);
    assert_true(cujit_array_data(v[i]) == (CUdeviceptr)(0x100000 + i));
  }
  for (i = 0; i < N; i++) cujit_array_destroy(v[i]);
}

/* What was never an array is refused too (and, destroyed, ignored). */
static void made_up_handles_are_refused(void **state) {
  static int not_an_array[64];
  cujit_array *fake = (cujit_array *)(void *)not_an_array, *out = NULL;
  (void)state;
  assert_status_detail(cujit_array_copy(fake, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_copy: a is not a live array");
  assert_int_equal(cujit_array_size(fake), 0);
  cujit_array_destroy(fake);
  assert_null(out);
  /* an empty array's pointer may be 0: a launch takes it as it is */
  assert_ok(cujit_array_wrap(&out, CUJIT_TYPE_F32, 1, (int64_t[]){0}, 0));
  assert_int_equal(cujit_array_arg(out).kind, CUJIT_ARG_VALUE);
  assert_true(cujit_array_arg(out).value.ptr == 0);
  cujit_array_destroy(out);
}

/* Without a device the generated kernels still compile (NVRTC needs none): only the
 * launch fails, with CUJIT_ERROR_NO_DRIVER, never with a compile error. */
static void generated_kernels_compile(void **state) {
  static const int types[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                              CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                              CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                              CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};
  unsigned char value[16] = {1};
  int64_t n = 8;
  size_t t;
  (void)state;
  for (t = 0; t < sizeof types / sizeof *types; t++) {
    cujit_array *a = NULL, *d = NULL;
    assert_ok(cujit_array_wrap(&a, types[t], 1, &n, (CUdeviceptr)0x10000));
    assert_ok(cujit_array_wrap(&d, CUJIT_TYPE_F64, 1, &n, (CUdeviceptr)0x20000));
    assert_status_detail(cujit_array_fill(a, value), CUJIT_ERROR_NO_DRIVER, "");
    assert_status_detail(cujit_array_astype(a, CUJIT_TYPE_F64, &d), CUJIT_ERROR_NO_DRIVER, "");
    assert_status_detail(cujit_array_astype(d, types[t], &a), CUJIT_ERROR_NO_DRIVER, "");
    cujit_array_destroy(a);
    cujit_array_destroy(d);
  }
}

int main(void) {
  /* the same everywhere: on a GPU machine too, no driver is loaded */
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_shapes_and_types),
      cmocka_unit_test(wrapped_views_and_destroyed_arrays),
      cmocka_unit_test(many_handles),
      cmocka_unit_test(ranges_are_checked),
      cmocka_unit_test(stale_handles_never_alias),
      cmocka_unit_test(made_up_handles_are_refused),
      cmocka_unit_test(device_needed_says_so),
      cmocka_unit_test(generated_kernels_compile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
