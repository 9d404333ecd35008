/* test_gpu_array_select - where, if_positive, take, put, concatenate and stack on a GPU,
 * against host computations at sizes 0, 1, 255, 257 and 1000003 (around the block of 256
 * and past it): comparisons' bool arrays as conditions, typed scalars and their promotion,
 * every index mode with i32 and i64 indices (strided ones too), the first bad index named
 * by CUJIT_INDEX_RAISE with nothing read or written outside the array, repeated outputs,
 * joins into strided outputs, and where, take, put and concatenate on int8 and bool arrays
 * of more than 2^31 elements. Every failure names the case, the element, the value and the wanted
 * one. */
#include <math.h>

#include "arraytest.h"
#include "gputest.h"

static const int64_t kSizes[] = {0, 1, 255, 257, 1000003};

static double pattern(int64_t i) { return (double)((i * 7919) % 1000) / 8.0 - 60.0; }

/* An array of `type` holding pattern(i + shift) (its magnitude for unsigned types, which
 * C cannot convert a negative value to). */
static cujit_array *patterned(int type, int64_t n, int64_t shift) {
  double *h = malloc((size_t)(n ? n : 1) * sizeof *h);
  cujit_array *a;
  int64_t i;
  for (i = 0; i < n; i++)
    h[i] = type == CUJIT_TYPE_U8 ? fabs(pattern(i + shift)) : pattern(i + shift);
  a = array_from_doubles(type, n, h);
  free(h);
  return a;
}

static void expect(const char *what, int64_t n, const double *got, const double *want) {
  int64_t i;
  for (i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("%s, %lld elements: element %lld is %.17g, want %.17g", what, (long long)n,
               (long long)i, got[i], want[i]);
}

static void where_and_if_positive(void **state) {
  size_t s;
  (void)state;
  for (s = 0; s < sizeof kSizes / sizeof *kSizes; s++) {
    int64_t n = kSizes[s], i;
    cujit_array *x = patterned(CUJIT_TYPE_F32, n, 0), *y = patterned(CUJIT_TYPE_F64, n, 7);
    cujit_array *i8 = patterned(CUJIT_TYPE_I8, n, 3), *u8 = patterned(CUJIT_TYPE_U8, n, 5);
    cujit_array *cond = NULL, *r = NULL;
    double *got, *want = malloc((size_t)(n ? n : 1) * sizeof *want);
    /* a comparison's bool array as the condition: where(x > y, x, y) is f64 */
    assert_ok(cujit_array_binary(CUJIT_BINOP_GT, x, y, &cond));
    assert_int_equal(cujit_array_type(cond), CUJIT_TYPE_BOOL);
    assert_ok(cujit_array_where(cond, cujit_arr(x), cujit_arr(y), &r));
    assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F64);
    got = array_values(r);
    for (i = 0; i < n; i++) want[i] = pattern(i) > pattern(i + 7) ? pattern(i) : pattern(i + 7);
    expect("where(x > y, x, y)", n, got, want);
    free(got);
    /* again into the same output (the kernel found again), with typed scalars: f32 and
     * i32 give f64 */
    assert_ok(cujit_array_where(cond, cujit_f32(1.5f), cujit_i32(-3), &r));
    got = array_values(r);
    for (i = 0; i < n; i++) want[i] = pattern(i) > pattern(i + 7) ? 1.5 : -3;
    expect("where(x > y, 1.5f, -3)", n, got, want);
    free(got);
    cujit_array_destroy(r), r = NULL;
    /* an int8 condition (nonzero is true); i8 and u8 give i16 */
    assert_ok(cujit_array_where(i8, cujit_arr(i8), cujit_arr(u8), &r));
    assert_int_equal(cujit_array_type(r), CUJIT_TYPE_I16);
    got = array_values(r);
    for (i = 0; i < n; i++) {
      double a = (double)(signed char)(int)pattern(i + 3);
      double b = (double)(unsigned char)(int)fabs(pattern(i + 5));
      want[i] = a != 0 ? a : b;
    }
    expect("where(i8, i8, u8)", n, got, want);
    free(got);
    cujit_array_destroy(r), r = NULL;
    /* if_positive(x, x, 0): a ReLU that keeps f32 */
    assert_ok(cujit_array_if_positive(x, cujit_arr(x), cujit_f32(0), &r));
    assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F32);
    got = array_values(r);
    for (i = 0; i < n; i++) want[i] = pattern(i) > 0 ? pattern(i) : 0;
    expect("if_positive(x, x, 0)", n, got, want);
    free(got);
    cujit_array_destroy(r), r = NULL;
    /* complex values, a complex scalar */
    {
      cujit_array *c = patterned(CUJIT_TYPE_C64, n, 11);
      assert_ok(cujit_array_if_positive(i8, cujit_c64(0, 1), cujit_arr(c), &r));
      assert_int_equal(cujit_array_type(r), CUJIT_TYPE_C64);
      got = array_values(r);
      for (i = 0; i < n; i++) want[i] = (signed char)(int)pattern(i + 3) > 0 ? 0 : pattern(i + 11);
      expect("if_positive(i8, 1j, c) (real parts)", n, got, want);
      free(got);
      cujit_array_destroy(r), r = NULL;
      cujit_array_destroy(c);
    }
    cujit_array_destroy(x);
    cujit_array_destroy(y);
    cujit_array_destroy(i8);
    cujit_array_destroy(u8);
    cujit_array_destroy(cond);
    free(want);
  }
}

/* where on int8 and bool arrays of 2^31 + 5 elements: the ends set by hand, the middle 1. */
static void where_past_two_to_the_31(void **state) {
  const int64_t n = ((int64_t)1 << 31) + 5;
  const signed char head[8] = {-2, 3, 0, 5, -1, 7, 0, 1}, tail[8] = {4, -4, 0, 9, 1, -7, 2, 0};
  cujit_array *x = NULL, *v = NULL, *cond = NULL, *r = NULL, *sum = NULL;
  signed char one = 1, back[8];
  int64_t got, want = n - 16;
  int k;
  (void)state;
  assert_ok(cujit_array_full(&x, CUJIT_TYPE_I8, 1, &n, &one));
  assert_ok(cujit_array_view(x, 0, 8, &v));
  assert_ok(cujit_array_write(v, head, 8));
  cujit_array_destroy(v);
  assert_ok(cujit_array_view(x, n - 8, n, &v));
  assert_ok(cujit_array_write(v, tail, 8));
  cujit_array_destroy(v);
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_GT, x, 0, CUJIT_SCALAR_INT, &cond));
  assert_ok(cujit_array_where(cond, cujit_arr(x), cujit_i8(-1), &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_I8);
  for (k = 0; k < 8; k++) want += (head[k] > 0 ? head[k] : -1) + (tail[k] > 0 ? tail[k] : -1);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, r, &sum));
  assert_ok(cujit_array_read(sum, &got, sizeof got));
  if (got != want)
    fail_msg("sum of where(x > 0, x, -1): %lld, want %lld", (long long)got, (long long)want);
  assert_ok(cujit_array_view(r, n - 8, n, &v));
  assert_ok(cujit_array_read(v, back, 8));
  for (k = 0; k < 8; k++)
    if (back[k] != (tail[k] > 0 ? tail[k] : -1))
      fail_msg("element %lld: %d, want %d", (long long)(n - 8 + k), back[k],
               tail[k] > 0 ? tail[k] : -1);
  cujit_array_destroy(v);
  cujit_array_destroy(x);
  cujit_array_destroy(cond);
  cujit_array_destroy(r);
  cujit_array_destroy(sum);
}

/* Index j of an array of n elements as each mode brings it inside (RAISE: -1 outside). */
static int64_t host_index(int mode, int64_t j, int64_t n) {
  if (mode == CUJIT_INDEX_WRAP) return ((j % n) + n) % n;
  if (mode == CUJIT_INDEX_CLIP) return j < 0 ? 0 : j >= n ? n - 1 : j;
  return j < -n || j >= n ? -1 : j < 0 ? j + n : j;
}

static void take_every_mode(void **state) {
  size_t s;
  int mode, wide;
  (void)state;
  for (s = 1; s < sizeof kSizes / sizeof *kSizes; s++) {
    int64_t n = kSizes[s], m = 1000, i;
    cujit_array *a = patterned(CUJIT_TYPE_F64, n, 0), *idx = NULL, *r = NULL, *rev = NULL;
    int64_t *ix = malloc((size_t)m * sizeof *ix);
    int32_t *ix32 = malloc((size_t)m * sizeof *ix32);
    double want[1000], *got;
    for (mode = CUJIT_INDEX_RAISE; mode <= CUJIT_INDEX_CLIP; mode++) {
      for (wide = 0; wide < 2; wide++) {
        int64_t span = mode == CUJIT_INDEX_RAISE ? n : 3 * n; /* RAISE: all inside */
        for (i = 0; i < m; i++)
          ix[i] = (i * 7919 + 13) % (2 * span) - span, ix32[i] = (int32_t)ix[i];
        assert_ok(cujit_array_from_host(&idx, wide ? CUJIT_TYPE_I64 : CUJIT_TYPE_I32, 1, &m,
                                        wide ? (void *)ix : (void *)ix32));
        assert_ok(cujit_array_take(a, idx, mode, &r));
        got = array_values(r);
        for (i = 0; i < m; i++) want[i] = pattern(host_index(mode, ix[i], n));
        expect(mode == 0 ? "take, raise" : mode == 1 ? "take, wrap" : "take, clip", m, got, want);
        free(got);
        /* the indices reversed: a strided view of them */
        assert_ok(cujit_array_slice(idx, 0, m - 1, -1, -1, &rev));
        assert_ok(cujit_array_take(a, rev, mode, &r));
        got = array_values(r);
        for (i = 0; i < m; i++) want[i] = pattern(host_index(mode, ix[m - 1 - i], n));
        expect("take with reversed indices", m, got, want);
        free(got);
        cujit_array_destroy(rev);
        cujit_array_destroy(idx);
        cujit_array_destroy(r), r = NULL;
      }
    }
    /* RAISE: the first position of a bad index is named, no output is left */
    for (i = 0; i < m; i++) ix[i] = i % n;
    ix[700] = -n - 1;
    ix[5] = n;
    ix[900] = INT64_MAX;
    assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &m, ix));
    {
      char needle[128];
      snprintf(needle, sizeof needle,
               "cujit_array_take: indices[5] (C order) is %lld, outside [-%lld, %lld)",
               (long long)n, (long long)n, (long long)n);
      assert_status_detail(cujit_array_take(a, idx, CUJIT_INDEX_RAISE, &r),
                           CUJIT_ERROR_INVALID_VALUE, needle);
      assert_null(r);
    }
    cujit_array_destroy(idx);
    cujit_array_destroy(a);
    free(ix);
    free(ix32);
  }
  {
    /* a matrix is taken from in C order; the result has the indices' shape */
    const int64_t shape[] = {3, 4}, ishape[] = {2, 2};
    const int32_t ix[] = {11, 0, -1, 5};
    double h[12], got[4];
    cujit_array *a = NULL, *idx = NULL, *r = NULL;
    int k;
    for (k = 0; k < 12; k++) h[k] = k * 1.5;
    assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F64, 2, shape, h));
    assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I32, 2, ishape, ix));
    assert_ok(cujit_array_take(a, idx, CUJIT_INDEX_RAISE, &r));
    assert_int_equal(cujit_array_ndim(r), 2);
    assert_ok(cujit_array_read(r, got, sizeof got));
    for (k = 0; k < 4; k++)
      if (got[k] != h[ix[k] < 0 ? ix[k] + 12 : ix[k]])
        fail_msg("take from a matrix: element %d is %g", k, got[k]);
    cujit_array_destroy(a);
    cujit_array_destroy(idx);
    cujit_array_destroy(r);
  }
}

static void put_every_mode(void **state) {
  size_t s;
  int mode;
  (void)state;
  for (s = 1; s < sizeof kSizes / sizeof *kSizes; s++) {
    int64_t n = kSizes[s], i;
    for (mode = CUJIT_INDEX_RAISE; mode <= CUJIT_INDEX_CLIP; mode++) {
      /* m distinct targets inside the ends (each index lands once), given through indices
       * outside the array for WRAP and negative ones for RAISE; CLIP adds two beyond the
       * ends, which land on them. i32 values converted to f32. */
      int64_t m = n < 3 ? n : n - 2 < 300 ? n - 2 : 300, extra = mode == CUJIT_INDEX_CLIP && n >= 3;
      int64_t *ix = malloc((size_t)(m + 2) * sizeof *ix), count = m + 2 * extra;
      int32_t *vals = malloc((size_t)(m + 2) * sizeof *vals);
      double *want = malloc((size_t)n * sizeof *want), *got;
      cujit_array *a = patterned(CUJIT_TYPE_F32, n, 0), *idx = NULL, *v = NULL;
      for (i = 0; i < n; i++) want[i] = (float)pattern(i);
      for (i = 0; i < m; i++) {
        int64_t target = n < 3 ? i : 1 + (i * 37) % (n - 2); /* 37 is prime to every n - 2 */
        ix[i] = mode == CUJIT_INDEX_WRAP    ? target + 2 * n
                : mode == CUJIT_INDEX_RAISE ? target - n
                                            : target;
        vals[i] = (int32_t)(i * 3 - 100);
        want[target] = vals[i];
      }
      if (extra) {
        ix[m] = n + 1000, vals[m] = 777, want[n - 1] = 777;
        ix[m + 1] = -5, vals[m + 1] = -777, want[0] = -777;
      }
      assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &count, ix));
      assert_ok(cujit_array_from_host(&v, CUJIT_TYPE_I32, 1, &count, vals));
      assert_ok(cujit_array_put(a, idx, v, mode));
      got = array_values(a);
      expect(mode == 0 ? "put, raise" : mode == 1 ? "put, wrap" : "put, clip", n, got, want);
      free(got);
      cujit_array_destroy(idx);
      cujit_array_destroy(v);
      cujit_array_destroy(a);
      free(ix);
      free(vals);
      free(want);
    }
    {
      /* RAISE with bad indices: named; the valid ones written, nothing outside */
      int64_t ix[4] = {0, n, n - 1, -n - 3};
      int64_t four = 4;
      float val = 42;
      cujit_array *big = NULL, *a = NULL, *idx = NULL, *v = NULL;
      int64_t total = n + 2;
      double *got;
      char needle[128];
      assert_ok(cujit_array_zeros(&big, CUJIT_TYPE_F32, 1, &total));
      assert_ok(cujit_array_view(big, 1, n + 1, &a)); /* one guard element each side */
      assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &four, ix));
      assert_ok(cujit_array_from_host(&v, CUJIT_TYPE_F32, 0, NULL, &val)); /* one value */
      snprintf(needle, sizeof needle,
               "cujit_array_put: indices[1] (C order) is %lld, outside [-%lld, %lld) for an "
               "array of %lld elements; nothing was written there",
               (long long)n, (long long)n, (long long)n, (long long)n);
      assert_status_detail(cujit_array_put(a, idx, v, CUJIT_INDEX_RAISE), CUJIT_ERROR_INVALID_VALUE,
                           needle);
      got = array_values(big);
      for (i = 0; i < total; i++)
        if (got[i] != (i == 1 || i == n ? 42 : 0))
          fail_msg("put with bad indices, %lld elements: element %lld of the array with "
                   "guards is %g",
                   (long long)n, (long long)i - 1, got[i]);
      free(got);
      cujit_array_destroy(big);
      cujit_array_destroy(a);
      cujit_array_destroy(idx);
      cujit_array_destroy(v);
    }
  }
}

/* take and put at positions past 2^31 of an int8 array of 2^31 + 5 elements. */
static void take_and_put_past_two_to_the_31(void **state) {
  const int64_t n = ((int64_t)1 << 31) + 5, four = 4;
  const int64_t at[4] = {n - 1, n - 3, ((int64_t)1 << 31) + 1, 5};
  const int64_t probe[4] = {-1, n + 2, (int64_t)1 << 40, -n + 5}; /* raise, wrap, clip, raise */
  const signed char vals[4] = {1, 2, 3, 4};
  cujit_array *a = NULL, *idx = NULL, *v = NULL, *r = NULL;
  signed char got[4];
  int k;
  (void)state;
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_I8, 1, &n));
  assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &four, at));
  assert_ok(cujit_array_from_host(&v, CUJIT_TYPE_I8, 1, &four, vals));
  assert_ok(cujit_array_put(a, idx, v, CUJIT_INDEX_RAISE));
  assert_ok(cujit_array_take(a, idx, CUJIT_INDEX_RAISE, &r));
  assert_ok(cujit_array_read(r, got, 4));
  for (k = 0; k < 4; k++)
    if (got[k] != vals[k]) fail_msg("a[%lld] is %d, want %d", (long long)at[k], got[k], vals[k]);
  for (k = 0; k < 4; k++) {
    static const int modes[] = {CUJIT_INDEX_RAISE, CUJIT_INDEX_WRAP, CUJIT_INDEX_CLIP,
                                CUJIT_INDEX_RAISE};
    static const signed char want[] = {1, 0, 1, 4}; /* a[n-1], a[2], a[n-1], a[5] */
    cujit_array *one = NULL, *t = NULL;
    int64_t n1 = 1;
    signed char b;
    assert_ok(cujit_array_from_host(&one, CUJIT_TYPE_I64, 1, &n1, &probe[k]));
    assert_ok(cujit_array_take(a, one, modes[k], &t));
    assert_ok(cujit_array_read(t, &b, 1));
    if (b != want[k])
      fail_msg("take of index %lld (mode %d): %d, want %d", (long long)probe[k], modes[k], b,
               want[k]);
    cujit_array_destroy(one);
    cujit_array_destroy(t);
  }
  cujit_array_destroy(a);
  cujit_array_destroy(idx);
  cujit_array_destroy(v);
  cujit_array_destroy(r);
}

static void concatenate_and_stack(void **state) {
  const int64_t n = sizeof kSizes / sizeof *kSizes;
  cujit_array *parts[5], *whole, *r = NULL;
  int64_t total = 0, i, k, at = 0;
  double *got, *want;
  (void)state;
  for (i = 0; i < n; i++) { /* f32 and i32 in turn: the result is f64 */
    parts[i] = patterned(i % 2 ? CUJIT_TYPE_I32 : CUJIT_TYPE_F32, kSizes[i], 100 * i);
    total += kSizes[i];
  }
  whole = parts[4];
  assert_ok(cujit_array_slice(whole, 0, kSizes[4] - 1, -1, -1, &parts[4])); /* reversed */
  cujit_array_destroy(whole); /* the view keeps the memory */
  assert_ok(cujit_array_concatenate((size_t)n, (const cujit_array *const *)parts, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F64);
  assert_int_equal(cujit_array_size(r), total);
  want = malloc((size_t)total * sizeof *want);
  for (i = 0; i < n; i++)
    for (k = 0; k < kSizes[i]; k++) {
      int64_t j = i == 4 ? kSizes[4] - 1 - k : k;
      double v = pattern(j + 100 * i);
      want[at++] = i % 2 ? (double)(int32_t)v : (float)v;
    }
  got = array_values(r);
  expect("concatenate", total, got, want);
  free(got);
  free(want);
  cujit_array_destroy(r), r = NULL;
  {
    /* three arrays of 257 as the rows of a transposed (257, 3) output */
    const int64_t shape[] = {257, 3};
    cujit_array *rows[3], *y = NULL, *t = NULL, *out;
    for (i = 0; i < 3; i++)
      rows[i] = patterned(i == 1 ? CUJIT_TYPE_I8 : CUJIT_TYPE_F32, 257, 7 * i);
    assert_ok(cujit_array_zeros(&y, CUJIT_TYPE_F32, 2, shape));
    assert_ok(cujit_array_transpose(y, &t));
    out = t;
    assert_ok(cujit_array_stack(3, (const cujit_array *const *)rows, &out));
    got = array_values(y);
    for (k = 0; k < 257 * 3; k++) {
      double v = pattern(k / 3 + 7 * (k % 3));
      double w = k % 3 == 1 ? (double)(signed char)(int)v : (float)v;
      if (got[k] != w)
        fail_msg("stack into a transposed output: y[%lld][%lld] is %g, want %g", (long long)(k / 3),
                 (long long)(k % 3), got[k], w);
    }
    free(got);
    for (i = 0; i < 3; i++) cujit_array_destroy(rows[i]);
    cujit_array_destroy(y);
    cujit_array_destroy(t);
  }
  for (i = 0; i < n; i++) cujit_array_destroy(parts[i]);
}

/* concatenate past 2^31 elements: int8 ones then bools (converted by a kernel, whose
 * indices go past 2^31 in the output), summed and the last ones read back. */
static void concatenate_past_two_to_the_31(void **state) {
  const int64_t half = ((int64_t)1 << 30) + 3;
  cujit_array *a = NULL, *b = NULL, *r = NULL, *sum = NULL, *tail = NULL;
  signed char one = 1, back[4];
  unsigned char yes = 1;
  int64_t got;
  int k;
  (void)state;
  assert_ok(cujit_array_full(&a, CUJIT_TYPE_I8, 1, &half, &one));
  assert_ok(cujit_array_full(&b, CUJIT_TYPE_BOOL, 1, &half, &yes));
  assert_ok(cujit_array_concatenate(2, (const cujit_array *[]){a, b}, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_I8);
  assert_int_equal(cujit_array_size(r), 2 * half);
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, r, &sum));
  assert_ok(cujit_array_read(sum, &got, sizeof got));
  if (got != 2 * half)
    fail_msg("sum of the concatenation: %lld, want %lld", (long long)got, (long long)(2 * half));
  assert_ok(cujit_array_view(r, 2 * half - 4, 2 * half, &tail));
  assert_ok(cujit_array_read(tail, back, 4));
  for (k = 0; k < 4; k++)
    if (back[k] != 1) fail_msg("element %lld: %d, want 1", (long long)(2 * half - 4 + k), back[k]);
  cujit_array_destroy(a);
  cujit_array_destroy(b);
  cujit_array_destroy(r);
  cujit_array_destroy(sum);
  cujit_array_destroy(tail);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(where_and_if_positive),
      cmocka_unit_test(where_past_two_to_the_31),
      cmocka_unit_test(take_every_mode),
      cmocka_unit_test(put_every_mode),
      cmocka_unit_test(take_and_put_past_two_to_the_31),
      cmocka_unit_test(concatenate_and_stack),
      cmocka_unit_test(concatenate_past_two_to_the_31),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
