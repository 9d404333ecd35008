/* test_gpu_reduce - reductions on a GPU: sum, min and max of every element type at sizes
 * 0, 1, 31 and 1000003 against host references; dot products of floats and doubles; 2^26
 * random floats summed within 1e-6 of a double-precision host sum (a tree, not a serial
 * sum); an int8 array of 2^31+17 elements (the 64-bit index path); NaN in min and max; the
 * block combination at odd block sizes; the generator with PyCUDA's dot product and a
 * largest magnitude, to a 0-d array and to host memory; a compile error's message; the
 * pool's memory given back after each reduction; views from every offset (aligned to 16
 * bytes or not); sums and products into f16 and bf16, each element rounded to the type
 * first. */
#include <math.h>
#include <string.h>

#include "cujit_array.h"
#include "reduce/reduce.h"
#include "arraytest.h"
#include "gputest.h"

static const int kTypes[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                             CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                             CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                             CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};
static const int64_t kSizes[] = {0, 1, 31, 1000003};

static int is_complex(int t) { return t == CUJIT_TYPE_C64 || t == CUJIT_TYPE_C128; }
static int is_unsigned(int t) {
  return t == CUJIT_TYPE_U8 || t == CUJIT_TYPE_U16 || t == CUJIT_TYPE_U32 || t == CUJIT_TYPE_U64;
}
static int is_float(int t) {
  return t == CUJIT_TYPE_F16 || t == CUJIT_TYPE_BF16 || t == CUJIT_TYPE_F32 ||
         t == CUJIT_TYPE_F64 || is_complex(t);
}

/* Element i of the test data of `type` (its real part; im: the imaginary part), exact in
 * every type: integers in [-100, 100] ([0, 200] unsigned, 0 or 1 for bool), halves in
 * [-50, 50] for floats (they fit bfloat16's 8 bits). Every run of 201 signed values sums
 * to 0, so that 16-bit float sums stay small. */
static double value_of(int type, int64_t i) {
  double v = (double)((i * 7919) % 201);
  if (type == CUJIT_TYPE_BOOL) return (i * 7919) % 201 % 3 == 0;
  if (is_unsigned(type)) return v;
  return is_float(type) ? (v - 100) / 2 : v - 100;
}
static double im_of(int64_t i) { return (double)((i * 31) % 11) - 5; }

/* The array of `type` holding the test data: doubles (pairs of them for complex types)
 * uploaded and converted on the device. */
static cujit_array *test_array(int type, int64_t n) {
  int wide = is_complex(type) ? CUJIT_TYPE_C128 : CUJIT_TYPE_F64, k = is_complex(type) ? 2 : 1;
  double *host = malloc((size_t)(n ? n : 1) * (size_t)k * sizeof *host);
  cujit_array *d = NULL, *a = NULL;
  int64_t i;
  for (i = 0; i < n; i++) {
    host[i * k] = value_of(type, i);
    if (k == 2) host[i * k + 1] = im_of(i);
  }
  assert_ok(cujit_array_from_host(&d, wide, 1, &n, host));
  assert_ok(cujit_array_astype(d, type, &a));
  cujit_array_destroy(d);
  free(host);
  return a;
}

/* A 0-d result as doubles (real and imaginary parts), converted on the device. */
static void read_result(const cujit_array *r, double out[2]) {
  cujit_array *d = NULL;
  int type = cujit_array_type(r);
  assert_int_equal(cujit_array_ndim(r), 0);
  assert_int_equal(cujit_array_size(r), 1);
  out[1] = 0;
  assert_ok(cujit_array_astype(r, is_complex(type) ? CUJIT_TYPE_C128 : CUJIT_TYPE_F64, &d));
  assert_ok(cujit_array_read(d, out, cujit_array_nbytes(d)));
  cujit_array_destroy(d);
}

static int sum_type(int t) {
  if (t == CUJIT_TYPE_BOOL || t == CUJIT_TYPE_I8 || t == CUJIT_TYPE_I16 || t == CUJIT_TYPE_I32)
    return CUJIT_TYPE_I64;
  if (t == CUJIT_TYPE_U8 || t == CUJIT_TYPE_U16 || t == CUJIT_TYPE_U32) return CUJIT_TYPE_U64;
  return t;
}

static void expect_close(double got, double want, int type, const char *what, int64_t n) {
  /* sums of 16-bit floats are exact in float, then rounded once to the result */
  double tol = type == CUJIT_TYPE_F16 || type == CUJIT_TYPE_BF16 ? fabs(want) / 128 + 0.5 : 0;
  if (fabs(got - want) > tol)
    fail_msg("%s of type %d, %lld elements: %.17g, wanted %.17g", what, type, (long long)n, got,
             want);
}

static void check_one(int type, int64_t n) {
  cujit_array *a = test_array(type, n), *sum = NULL, *min = NULL, *max = NULL;
  double want[2] = {0, 0}, lo = INFINITY, hi = -INFINITY, got[2];
  int64_t i;
  for (i = 0; i < n; i++) {
    double v = value_of(type, i);
    want[0] += v;
    want[1] += is_complex(type) ? im_of(i) : 0;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, a, &sum));
  assert_int_equal(cujit_array_type(sum), sum_type(type));
  read_result(sum, got);
  expect_close(got[0], want[0], type, "sum", n);
  expect_close(got[1], want[1], type, "sum (imaginary part)", n);
  if (!is_complex(type) && n == 0) {
    assert_status_detail(cujit_array_reduce(CUJIT_REDOP_MIN, a, &min), CUJIT_ERROR_INVALID_VALUE,
                         "the min of an empty array is undefined");
  } else if (!is_complex(type)) {
    assert_ok(cujit_array_reduce(CUJIT_REDOP_MIN, a, &min));
    assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, a, &max));
    assert_int_equal(cujit_array_type(min), type);
    read_result(min, got);
    expect_close(got[0], lo, type, "min", n);
    read_result(max, got);
    expect_close(got[0], hi, type, "max", n);
  }
  cujit_array_destroy(a);
  cujit_array_destroy(sum);
  cujit_array_destroy(min);
  cujit_array_destroy(max);
}

static void every_type_and_size(void **state) {
  size_t t, s;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++)
    for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++) check_one(kTypes[t], kSizes[s]);
}

/* A given output is reused; a 2-D array and a view reduce all their elements. */
static void outputs_views_and_shapes(void **state) {
  int64_t shape[2] = {300, 7}, n = 2100;
  cujit_array *a = NULL, *m = NULL, *v = NULL, *out = NULL, *keep;
  double host[2100], got[2];
  int i;
  (void)state;
  for (i = 0; i < 2100; i++) host[i] = i;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F64, 1, &n, host));
  assert_ok(cujit_array_reshape(a, 2, shape, &m));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, m, &out));
  keep = out;
  read_result(out, got);
  assert_true(got[0] == 2099.0 * 2100 / 2);
  assert_ok(cujit_array_view(a, 100, 200, &v));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, v, &out));
  assert_ptr_equal(out, keep);
  read_result(out, got);
  assert_true(got[0] == 199);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_MIN, v, &out));
  read_result(out, got);
  assert_true(got[0] == 100);
  cujit_array_destroy(a);
  cujit_array_destroy(m);
  cujit_array_destroy(v);
  cujit_array_destroy(out);
}

/* Views from every offset 0 to 16: sum, min and max read 16 bytes at a time only where
 * the view is 16-byte aligned, and the remainder one at a time. */
static void views_at_every_offset(void **state) {
  static const int types[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U16, CUJIT_TYPE_F16,
                              CUJIT_TYPE_I32,  CUJIT_TYPE_F32, CUJIT_TYPE_F64, CUJIT_TYPE_C64};
  size_t t;
  int64_t off, i;
  (void)state;
  for (t = 0; t < sizeof types / sizeof *types; t++) {
    int type = types[t];
    cujit_array *a = test_array(type, 1100);
    for (off = 0; off <= 16; off++) {
      int64_t len = 1000 + off % 5;
      cujit_array *v = NULL, *sum = NULL, *min = NULL, *max = NULL;
      double want = 0, lo = INFINITY, hi = -INFINITY, got[2];
      for (i = off; i < off + len; i++) {
        double x = value_of(type, i);
        want += x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
      assert_ok(cujit_array_view(a, off, off + len, &v));
      assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, v, &sum));
      read_result(sum, got);
      expect_close(got[0], want, type, "sum of a view", len);
      if (!is_complex(type)) {
        assert_ok(cujit_array_reduce(CUJIT_REDOP_MIN, v, &min));
        assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, v, &max));
        read_result(min, got);
        expect_close(got[0], lo, type, "min of a view", len);
        read_result(max, got);
        expect_close(got[0], hi, type, "max of a view", len);
      }
      cujit_array_destroy(v);
      cujit_array_destroy(sum);
      cujit_array_destroy(min);
      cujit_array_destroy(max);
    }
    cujit_array_destroy(a);
  }
}

/* Uniform in [0, 1) from a 64-bit linear congruential generator. */
static double next_uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0;
}

static void dot_products(void **state) {
  enum { N = 1000003 };
  float *xf = malloc(N * sizeof *xf), *yf = malloc(N * sizeof *yf);
  double *xd = malloc(N * sizeof *xd), *yd = malloc(N * sizeof *yd), want_f = 0, want_d = 0;
  cujit_array *af = NULL, *bf = NULL, *ad = NULL, *bd = NULL, *rf = NULL, *rd = NULL, *mix = NULL;
  int64_t n = N;
  uint64_t seed = 42;
  float got_f;
  double got_d;
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    xd[i] = next_uniform(&seed) * 2 - 1;
    yd[i] = next_uniform(&seed) * 2 - 1;
    xf[i] = (float)xd[i];
    yf[i] = (float)yd[i];
    want_f += (double)xf[i] * yf[i];
    want_d += xd[i] * yd[i];
  }
  assert_ok(cujit_array_from_host(&af, CUJIT_TYPE_F32, 1, &n, xf));
  assert_ok(cujit_array_from_host(&bf, CUJIT_TYPE_F32, 1, &n, yf));
  assert_ok(cujit_array_from_host(&ad, CUJIT_TYPE_F64, 1, &n, xd));
  assert_ok(cujit_array_from_host(&bd, CUJIT_TYPE_F64, 1, &n, yd));
  assert_ok(cujit_array_dot(af, bf, &rf));
  assert_int_equal(cujit_array_type(rf), CUJIT_TYPE_F32);
  assert_ok(cujit_array_read(rf, &got_f, sizeof got_f));
  if (fabs(got_f - want_f) > 1e-4 * fabs(want_f) + 1e-2)
    fail_msg("float dot %.9g, wanted %.9g", got_f, want_f);
  assert_ok(cujit_array_dot(ad, bd, &rd));
  assert_ok(cujit_array_read(rd, &got_d, sizeof got_d));
  if (fabs(got_d - want_d) > 1e-10 * fabs(want_d) + 1e-9)
    fail_msg("double dot %.17g, wanted %.17g", got_d, want_d);
  assert_ok(cujit_array_dot(af, bd, &mix)); /* f32 with f64 promotes to f64 */
  assert_int_equal(cujit_array_type(mix), CUJIT_TYPE_F64);
  free(xf);
  free(yf);
  free(xd);
  free(yd);
  cujit_array_destroy(af);
  cujit_array_destroy(bf);
  cujit_array_destroy(ad);
  cujit_array_destroy(bd);
  cujit_array_destroy(rf);
  cujit_array_destroy(rd);
  cujit_array_destroy(mix);
}

/* A serial float sum of 2^26 values in [0, 1) drifts by about 1e-4; a tree stays near
 * float's own precision. */
static void float_sum_is_a_tree(void **state) {
  const int64_t n = (int64_t)1 << 26;
  float *host = malloc((size_t)n * sizeof *host);
  cujit_array *a = NULL, *s = NULL;
  double want = 0;
  uint64_t seed = 7;
  float got;
  int64_t i;
  (void)state;
  for (i = 0; i < n; i++) {
    host[i] = (float)next_uniform(&seed);
    want += host[i];
  }
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, 1, &n, host));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, a, &s));
  assert_ok(cujit_array_read(s, &got, sizeof got));
  if (fabs(got - want) > 1e-6 * want)
    fail_msg("sum %.9g, wanted %.9g: relative error %.3g", got, want, fabs(got - want) / want);
  free(host);
  cujit_array_destroy(a);
  cujit_array_destroy(s);
}

/* 2^31 + 17 int8 elements: ones, with -5 first and 3 in the last 17, so that every element
 * past 2^31 counts. */
static void beyond_2_31_elements(void **state) {
  const int64_t n = ((int64_t)1 << 31) + 17;
  cujit_array *a = NULL, *head = NULL, *tail = NULL, *s = NULL, *lo = NULL, *hi = NULL;
  signed char one = 1, minus5 = -5, three = 3, got8;
  int64_t sum;
  (void)state;
  assert_ok(cujit_array_full(&a, CUJIT_TYPE_I8, 1, &n, &one));
  assert_ok(cujit_array_view(a, 0, 1, &head));
  assert_ok(cujit_array_view(a, n - 17, n, &tail));
  assert_ok(cujit_array_fill(head, &minus5));
  assert_ok(cujit_array_fill(tail, &three));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, a, &s));
  assert_int_equal(cujit_array_type(s), CUJIT_TYPE_I64);
  assert_ok(cujit_array_read(s, &sum, sizeof sum));
  assert_int_equal(sum, (n - 18) + -5 + 3 * 17);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, a, &hi));
  assert_ok(cujit_array_read(hi, &got8, 1));
  assert_int_equal(got8, 3);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_MIN, a, &lo));
  assert_ok(cujit_array_read(lo, &got8, 1));
  assert_int_equal(got8, -5);
  cujit_array_destroy(head);
  cujit_array_destroy(tail);
  cujit_array_destroy(a);
  cujit_array_destroy(s);
  cujit_array_destroy(lo);
  cujit_array_destroy(hi);
}

/* NaN wins min and max wherever it is (first, middle, last), for every float type. */
static void nan_wins(void **state) {
  static const int types[] = {CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32, CUJIT_TYPE_F64};
  static const int64_t where[] = {0, 5000, 9999};
  int64_t n = 10000, i;
  double *host = malloc((size_t)n * sizeof *host), got[2];
  size_t t, w;
  (void)state;
  for (t = 0; t < 4; t++) {
    for (w = 0; w < 3; w++) {
      cujit_array *d = NULL, *a = NULL, *lo = NULL, *hi = NULL;
      for (i = 0; i < n; i++) host[i] = (double)(i % 100) - 50;
      host[where[w]] = NAN;
      assert_ok(cujit_array_from_host(&d, CUJIT_TYPE_F64, 1, &n, host));
      assert_ok(cujit_array_astype(d, types[t], &a));
      assert_ok(cujit_array_reduce(CUJIT_REDOP_MIN, a, &lo));
      assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, a, &hi));
      read_result(lo, got);
      if (!isnan(got[0]))
        fail_msg("type %d, NaN at %lld: min is %g", types[t], (long long)where[w], got[0]);
      read_result(hi, got);
      if (!isnan(got[0]))
        fail_msg("type %d, NaN at %lld: max is %g", types[t], (long long)where[w], got[0]);
      cujit_array_destroy(d);
      cujit_array_destroy(a);
      cujit_array_destroy(lo);
      cujit_array_destroy(hi);
    }
  }
  free(host);
}

/* Element i of the product test data: mostly 1, 2 every 100000th element, -1 every third
 * for signed and float types (bool: all true); the product stays exact (at most 2^10) in
 * every type, f16 included. */
static double prod_value(int type, int64_t i) {
  if (type == CUJIT_TYPE_BOOL) return 1;
  if (i % 100000 == 7) return 2;
  if (i % 3 == 1 && !is_unsigned(type) && type != CUJIT_TYPE_BOOL) return -1;
  return 1;
}

/* An array of `type` from host doubles f(type, i) (real parts; complex ones get 0i). */
static cujit_array *array_of(int type, int64_t n, double (*f)(int, int64_t)) {
  double *host = malloc((size_t)(n ? n : 1) * sizeof *host);
  cujit_array *a;
  int64_t i;
  for (i = 0; i < n; i++) host[i] = f(type, i);
  a = array_from_doubles(type, n, host);
  free(host);
  return a;
}

/* A 0-d result as an int64 (argmin, argmax) or a bool. */
static int64_t read_i64(const cujit_array *r) {
  int64_t v = 0;
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_I64);
  assert_ok(cujit_array_read(r, &v, sizeof v));
  return v;
}
static int read_bool(const cujit_array *r) {
  unsigned char v = 0;
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_BOOL);
  assert_ok(cujit_array_read(r, &v, 1));
  return v;
}

/* PROD, ANY, ALL, ARGMIN and ARGMAX of every type at sizes around the block (0 for those
 * an empty array has), against the host's. */
static void more_reductions_of_every_type(void **state) {
  static const int64_t sizes[] = {0, 1, 255, 257, 1000003};
  size_t t, s;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    for (s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      int type = kTypes[t];
      int64_t n = sizes[s], i, argmin = 0, argmax = 0;
      cujit_array *a = test_array(type, n), *p = array_of(type, n, prod_value), *r = NULL;
      double prod = 1, lo = INFINITY, hi = -INFINITY, got[2];
      int any = 0, all = 1;
      for (i = 0; i < n; i++) {
        double v = value_of(type, i);
        prod *= prod_value(type, i);
        any |= v != 0 || (is_complex(type) && im_of(i) != 0);
        all &= v != 0 || (is_complex(type) && im_of(i) != 0);
        if (v < lo) lo = v, argmin = i;
        if (v > hi) hi = v, argmax = i;
      }
      assert_ok(cujit_array_reduce(CUJIT_REDOP_PROD, p, &r));
      assert_int_equal(cujit_array_type(r), sum_type(type));
      read_result(r, got);
      if (got[0] != prod)
        fail_msg("prod of type %d, %lld elements: %.17g, want %.17g", type, (long long)n, got[0],
                 prod);
      cujit_array_destroy(r), r = NULL;
      assert_ok(cujit_array_reduce(CUJIT_REDOP_ANY, a, &r));
      if (read_bool(r) != any)
        fail_msg("any of type %d, %lld elements: %d, want %d", type, (long long)n, !any, any);
      cujit_array_destroy(r), r = NULL;
      assert_ok(cujit_array_reduce(CUJIT_REDOP_ALL, a, &r));
      if (read_bool(r) != all)
        fail_msg("all of type %d, %lld elements: %d, want %d", type, (long long)n, !all, all);
      cujit_array_destroy(r), r = NULL;
      if (n && !is_complex(type)) {
        int64_t g;
        assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMIN, a, &r));
        if ((g = read_i64(r)) != argmin)
          fail_msg("argmin of type %d, %lld elements: %lld (value %g), want %lld (value %g)", type,
                   (long long)n, (long long)g, value_of(type, g), (long long)argmin, lo);
        cujit_array_destroy(r), r = NULL;
        assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMAX, a, &r));
        if ((g = read_i64(r)) != argmax)
          fail_msg("argmax of type %d, %lld elements: %lld (value %g), want %lld (value %g)", type,
                   (long long)n, (long long)g, value_of(type, g), (long long)argmax, hi);
        cujit_array_destroy(r), r = NULL;
      }
      cujit_array_destroy(a);
      cujit_array_destroy(p);
    }
  }
}

/* Sums in a type of one's choice: int8 into int64 (no overflow at 127 * 1000003), f16 into
 * f32 (no rounding to f16), bool into i32, i32 into f64, c64 into c128; PROD as f64. */
static void sums_as_another_type(void **state) {
  const int64_t n = 1000003;
  cujit_array *i8 = NULL, *h = NULL, *b = NULL, *r = NULL, *d = NULL, *c = NULL;
  signed char big = 127;
  uint16_t half_third; /* f16 of 1/3, 0x3555 */
  float f32;
  double f64, want;
  int32_t i32;
  int64_t i64, i;
  (void)state;
  assert_ok(cujit_array_full(&i8, CUJIT_TYPE_I8, 1, &n, &big));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, i8, CUJIT_TYPE_I64, &r));
  assert_ok(cujit_array_read(r, &i64, sizeof i64));
  if (i64 != 127 * n)
    fail_msg("sum of int8 127s as i64: %lld, want %lld", (long long)i64, (long long)(127 * n));
  cujit_array_destroy(r), r = NULL;
  half_third = 0x3555;
  assert_ok(cujit_array_full(&h, CUJIT_TYPE_F16, 1, &n, &half_third));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, h, CUJIT_TYPE_F32, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F32);
  assert_ok(cujit_array_read(r, &f32, sizeof f32));
  want = 0.333251953125 * (double)n; /* 0x3555 exactly */
  if (fabs(f32 - want) > 1e-6 * want) fail_msg("sum of f16 as f32: %.9g, want %.9g", f32, want);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_astype(i8, CUJIT_TYPE_BOOL, &b));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, b, CUJIT_TYPE_I32, &r));
  assert_ok(cujit_array_read(r, &i32, sizeof i32));
  if (i32 != n) fail_msg("sum of bool as i32: %d, want %lld", i32, (long long)n);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_arange(&d, CUJIT_TYPE_I32, 0, (double)n, 1));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, d, CUJIT_TYPE_F64, &r));
  assert_ok(cujit_array_read(r, &f64, sizeof f64));
  if (f64 != (double)n * (n - 1) / 2) fail_msg("sum of 0..n-1 as f64: %.17g", f64);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_PROD, i8, CUJIT_TYPE_F64, &r)); /* 127^n: inf */
  assert_ok(cujit_array_read(r, &f64, sizeof f64));
  if (!isinf(f64)) fail_msg("prod of 127s as f64: %g, want inf", f64);
  cujit_array_destroy(r), r = NULL;
  c = test_array(CUJIT_TYPE_C64, n);
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, c, CUJIT_TYPE_C128, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_C128);
  {
    double z[2], re = 0, im = 0;
    assert_ok(cujit_array_read(r, z, sizeof z));
    for (i = 0; i < n; i++) re += value_of(CUJIT_TYPE_C64, i), im += im_of(i);
    if (z[0] != re || z[1] != im)
      fail_msg("sum of c64 as c128: (%g, %g), want (%g, %g)", z[0], z[1], re, im);
  }
  cujit_array_destroy(r);
  cujit_array_destroy(i8);
  cujit_array_destroy(h);
  cujit_array_destroy(b);
  cujit_array_destroy(d);
  cujit_array_destroy(c);
}

/* float x rounded to bfloat16 (to nearest, ties to even), as a float. */
static float bf16_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* SUM and PROD into f16 and bf16 round each element to the type, then combine in float
 * and round once (the header's rule; the elements were once combined unrounded): f32
 * values whose bf16 roundings sum to -0.857 (-0.871 unrounded: 3 bf16 ulp away), i32
 * values of 70000 and -70000 (in f16 infinities of both signs: NaN), twenty f64 values
 * of -7.49 (in bf16 -7.5 each: 7.5^20, not 7.49^20, 3% below). */
static void sums_into_16_bit_types(void **state) {
  const float f[6] = {-1.17f, -7.92f, 0.59f, -0.15f, 6.22f, 1.56f};
  const int32_t big[2] = {70000, -70000};
  double d[20], got[2];
  int64_t six = 6, two = 2, twenty = 20;
  float want = 0, power = 1;
  cujit_array *a = NULL, *r = NULL;
  int k;
  (void)state;
  for (k = 0; k < 6; k++) want += bf16_of(f[k]); /* exact in float in any order */
  want = bf16_of(want);
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, 1, &six, f));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, a, CUJIT_TYPE_BF16, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_BF16);
  read_result(r, got);
  if (got[0] != want) fail_msg("sum of f32 as bf16: %.9g, want %.9g", got[0], (double)want);
  cujit_array_destroy(r), r = NULL;
  cujit_array_destroy(a), a = NULL;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_I32, 1, &two, big));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, a, CUJIT_TYPE_F16, &r));
  read_result(r, got);
  if (!isnan(got[0])) fail_msg("sum of 70000 and -70000 as f16: %g, want NaN", got[0]);
  cujit_array_destroy(r), r = NULL;
  cujit_array_destroy(a), a = NULL;
  for (k = 0; k < 20; k++) {
    d[k] = -7.49;
    power *= 7.5f;
  }
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F64, 1, &twenty, d));
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_PROD, a, CUJIT_TYPE_BF16, &r));
  read_result(r, got);
  /* the float products' order may move the last bits: within one bf16 ulp (2^-7) */
  if (fabs(got[0] - bf16_of(power)) > ldexp(bf16_of(power), -7))
    fail_msg("product of twenty -7.49 as bf16: %.9g, want %.9g (7.5^20)", got[0],
             (double)bf16_of(power));
  cujit_array_destroy(r);
  cujit_array_destroy(a);
}

/* ARGMIN and ARGMAX: the first NaN wins (first, middle, last of two), else the first of
 * equal extremes, for every float type. */
static void arg_reductions_and_nan(void **state) {
  static const int types[] = {CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32, CUJIT_TYPE_F64};
  static const int64_t where[][2] = {{0, 9999}, {5000, 7000}, {9998, 9999}};
  int64_t n = 10000, i;
  double *host = malloc((size_t)n * sizeof *host);
  size_t t, w;
  (void)state;
  for (t = 0; t < 4; t++) {
    for (w = 0; w < 4; w++) {
      cujit_array *d = NULL, *a = NULL, *r = NULL;
      int64_t want_min = 50, want_max = 99, got; /* (i % 100) - 50: first -50 at 0... */
      for (i = 0; i < n; i++) host[i] = (double)((i + 50) % 100) - 50; /* -50 first at 50 */
      if (w < 3) {
        host[where[w][0]] = host[where[w][1]] = NAN;
        want_min = want_max = where[w][0];
      } else {
        want_min = 50, want_max = 49; /* 49 at i = 49, 149, ...; -50 at 50, 150, ... */
      }
      assert_ok(cujit_array_from_host(&d, CUJIT_TYPE_F64, 1, &n, host));
      assert_ok(cujit_array_astype(d, types[t], &a));
      assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMIN, a, &r));
      if ((got = read_i64(r)) != want_min)
        fail_msg("argmin of type %d, case %zu: %lld, want %lld", types[t], w, (long long)got,
                 (long long)want_min);
      assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMAX, a, &r));
      if ((got = read_i64(r)) != want_max)
        fail_msg("argmax of type %d, case %zu: %lld, want %lld", types[t], w, (long long)got,
                 (long long)want_max);
      cujit_array_destroy(d);
      cujit_array_destroy(a);
      cujit_array_destroy(r);
    }
  }
  free(host);
}

/* ARGMAX (the first of two equal maxima past 2^31), ANY, ALL and a sum as i64 of int8 and
 * bool arrays of 2^31 + 5 elements. */
static void more_reductions_beyond_2_31(void **state) {
  const int64_t n = ((int64_t)1 << 31) + 5, top = ((int64_t)1 << 31) + 3;
  cujit_array *a = NULL, *b = NULL, *v = NULL, *r = NULL;
  signed char zero = 0, nine = 9, back;
  unsigned char yes = 1, no = 0;
  int64_t got;
  (void)state;
  assert_ok(cujit_array_full(&a, CUJIT_TYPE_I8, 1, &n, &zero));
  assert_ok(cujit_array_view(a, top, n, &v)); /* a[top] = a[top + 1] = 9 */
  assert_ok(cujit_array_fill(v, &nine));
  cujit_array_destroy(v);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMAX, a, &r));
  if ((got = read_i64(r)) != top)
    fail_msg("argmax: %lld, want %lld", (long long)got, (long long)top);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, a, CUJIT_TYPE_I64, &r));
  assert_ok(cujit_array_read(r, &got, sizeof got));
  if (got != 18) fail_msg("sum as i64: %lld, want 18", (long long)got);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_full(&b, CUJIT_TYPE_BOOL, 1, &n, &yes));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ALL, b, &r));
  if (!read_bool(r)) fail_msg("all of trues: false");
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_view(b, n - 3, n - 2, &v)); /* one false, past 2^31 */
  assert_ok(cujit_array_fill(v, &no));
  cujit_array_destroy(v);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ALL, b, &r));
  if (read_bool(r)) fail_msg("all with a false at %lld: true", (long long)(n - 3));
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMIN, b, &r));
  if ((got = read_i64(r)) != n - 3)
    fail_msg("argmin of bools: %lld, want %lld", (long long)got, (long long)(n - 3));
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_fill(b, &no));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ANY, b, &r));
  if (read_bool(r)) fail_msg("any of falses: true");
  cujit_array_destroy(r), r = NULL;
  (void)back;
  cujit_array_destroy(a);
  cujit_array_destroy(b);
}

/* The engine's kernel launched by hand at block sizes that are not multiples of a warp:
 * one block folds every element, whatever its size. */
static void odd_block_sizes(void **state) {
  static const unsigned blocks[] = {1, 7, 32, 33, 100, 255, 1000, 1024};
  cj_reduce_spec s;
  cujit_function *fn = NULL;
  cujit_array *x = NULL, *r = NULL;
  int64_t n = 5003, sum;
  size_t b;
  (void)state;
  memset(&s, 0, sizeof s);
  s.name = "odd_blocks";
  s.acc = s.result = CUJIT_TYPE_I64;
  s.neutral = "0";
  s.reduce = "a + b";
  s.map = "x[i]";
  s.params = "const long long *x";
  assert_ok(cj_reduce_kernel(&s, &fn));
  assert_ok(cujit_array_arange(&x, CUJIT_TYPE_I64, 0, (double)n, 1));
  assert_ok(cujit_array_empty(&r, CUJIT_TYPE_I64, 0, NULL));
  for (b = 0; b < sizeof blocks / sizeof *blocks; b++) {
    assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(blocks[b]), cujit_array_arg(x),
                           cujit_i64(n), cujit_ptr(0), cujit_ptr(0), cujit_array_arg(r)));
    assert_ok(cujit_array_read(r, &sum, sizeof sum));
    if (sum != n * (n - 1) / 2) fail_msg("block of %u threads: %lld", blocks[b], (long long)sum);
  }
  cujit_array_destroy(x);
  cujit_array_destroy(r);
}

/* PyCUDA's example: ReductionKernel(np.float32, neutral="0", reduce_expr="a+b",
 * map_expr="x[i]*y[i]", arguments="float *x, float *y"), and the largest magnitude. */
static void generator_examples(void **state) {
  enum { N = 100003 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), got, top = 0;
  cujit_array *ax = NULL, *ay = NULL, *out = NULL;
  cujit_reduction *dot = NULL, *maxabs = NULL;
  double want = 0;
  int64_t n = N;
  uint64_t seed = 3;
  int i;
  (void)state;
  for (i = 0; i < N; i++) {
    x[i] = (float)(next_uniform(&seed) * 2 - 1);
    y[i] = (float)(next_uniform(&seed) * 2 - 1);
  }
  x[777] = -3.5f; /* the largest magnitude is negative */
  for (i = 0; i < N; i++) {
    want += (double)x[i] * y[i];
    top = fabsf(x[i]) > top ? fabsf(x[i]) : top;
  }
  assert_ok(cujit_array_from_host(&ax, CUJIT_TYPE_F32, 1, &n, x));
  assert_ok(cujit_array_from_host(&ay, CUJIT_TYPE_F32, 1, &n, y));
  assert_ok(cujit_reduction_create(&dot, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                                   "float *x, float *y", NULL));
  assert_ok(CUJIT_REDUCTION(dot, &out, ax, ay));
  assert_int_equal(cujit_array_ndim(out), 0);
  assert_ok(cujit_array_read(out, &got, sizeof got));
  if (fabs(got - want) > 1e-4 * fabs(want) + 1e-3) fail_msg("dot %.9g, wanted %.9g", got, want);
  got = 0;
  assert_ok(CUJIT_REDUCTION_HOST(dot, &got, ax, ay));
  if (fabs(got - want) > 1e-4 * fabs(want) + 1e-3) fail_msg("dot %.9g, wanted %.9g", got, want);
  assert_ok(cujit_reduction_create(&maxabs, CUJIT_TYPE_F32, "0", "max(a,b)", "fabs(x[i])",
                                   "float *x", NULL));
  assert_ok(CUJIT_REDUCTION(maxabs, &out, ax)); /* into the same 0-d array */
  assert_ok(cujit_array_read(out, &got, sizeof got));
  assert_true(got == top);
  got = 0;
  assert_ok(CUJIT_REDUCTION_HOST(maxabs, &got, ax));
  assert_true(got == top);
  /* Empty arrays reduce to the neutral value. */
  cujit_array_destroy(ax);
  ax = NULL;
  n = 0;
  assert_ok(cujit_array_empty(&ax, CUJIT_TYPE_F32, 1, &n));
  got = 1;
  assert_ok(CUJIT_REDUCTION_HOST(maxabs, &got, ax));
  assert_true(got == 0);
  cujit_reduction_destroy(dot);
  cujit_reduction_destroy(maxabs);
  cujit_array_destroy(ax);
  cujit_array_destroy(ay);
  cujit_array_destroy(out);
  free(x);
  free(y);
}

/* A scalar argument between arrays, and a result type other than the arrays' own. */
static void generator_scalars(void **state) {
  int64_t n = 1000;
  cujit_array *x = NULL;
  cujit_reduction *r = NULL;
  double scale = 0.5, got;
  int bias = 2;
  (void)state;
  assert_ok(cujit_array_arange(&x, CUJIT_TYPE_I32, 0, (double)n, 1));
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F64, "0", "a+b", "s * x[i] + k",
                                   "double s, const int *x, int k", NULL));
  assert_ok(CUJIT_REDUCTION_HOST(r, &got, scale, x, bias));
  assert_true(got == 0.5 * 999 * 1000 / 2 + 2 * 1000);
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
}

static void compile_error_message(void **state) {
  int64_t n = 10;
  cujit_array *x = NULL, *out = NULL;
  cujit_reduction *r = NULL;
  (void)state;
  assert_ok(cujit_array_zeros(&x, CUJIT_TYPE_F32, 1, &n));
  assert_ok(
      cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i] * nowhere", "float *x", NULL));
  assert_status_detail(CUJIT_REDUCTION(r, &out, x), CUJIT_ERROR_COMPILE,
                       "'reduction' did not compile");
  assert_non_null(strstr(cujit_last_error(), "\"nowhere\" is undefined"));
  assert_non_null(strstr(cujit_last_error(), "the generated source:\n   1 | "));
  assert_null(out);
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
}

/* The block values of every pass come from the pool and go back to it. */
static void pool_is_given_back(void **state) {
  int64_t n = 3000000;
  cujit_array *a = NULL, *s = NULL;
  size_t before;
  float got;
  int k;
  (void)state;
  assert_ok(cujit_array_arange(&a, CUJIT_TYPE_F32, 0, (double)n, 1));
  assert_ok(cujit_array_empty(&s, CUJIT_TYPE_F32, 0, NULL)); /* the output, made first */
  before = gpu_pool_in_use();
  for (k = 0; k < 3; k++) {
    assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, a, &s));
    assert_ok(cujit_array_read(s, &got, sizeof got));
    assert_true(got == 2999999.0f);
  }
  assert_ok(cujit_synchronize());
  assert_int_equal(gpu_pool_in_use(), before);
  cujit_array_destroy(a);
  cujit_array_destroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_type_and_size),
      cmocka_unit_test(outputs_views_and_shapes),
      cmocka_unit_test(dot_products),
      cmocka_unit_test(float_sum_is_a_tree),
      cmocka_unit_test(beyond_2_31_elements),
      cmocka_unit_test(nan_wins),
      cmocka_unit_test(odd_block_sizes),
      cmocka_unit_test(generator_examples),
      cmocka_unit_test(generator_scalars),
      cmocka_unit_test(compile_error_message),
      cmocka_unit_test(pool_is_given_back),
      cmocka_unit_test(views_at_every_offset),
      cmocka_unit_test(more_reductions_of_every_type),
      cmocka_unit_test(sums_as_another_type),
      cmocka_unit_test(sums_into_16_bit_types),
      cmocka_unit_test(arg_reductions_and_nan),
      cmocka_unit_test(more_reductions_beyond_2_31),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
