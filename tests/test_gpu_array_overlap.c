/* test_gpu_array_overlap - an output that shares memory with an input gives NumPy's answer,
 * the one computed into a temporary: take of 2^20 floats at reversed indices into the
 * array itself, a square matrix plus its transpose into itself, a copy into the same array
 * shifted by one element (both ways), a negation into the reversed view, the two halves of
 * an array concatenated back into it in the other order, a cumsum into a shifted view
 * (many blocks), and put whose values are a reversed view of the array written. Each is
 * checked element by element against the host's answer, naming the first that differs. */
#include "arraytest.h"

enum { N = 1 << 20, SIDE = 1024 };

static float *pattern(int64_t n) {
  float *h = malloc((size_t)n * sizeof *h);
  int64_t i;
  for (i = 0; i < n; i++) h[i] = (float)(i % 9973) - 4000.0f;
  return h;
}

static cujit_array *floats(const float *h, int ndim, const int64_t *shape) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, ndim, shape, h));
  return a;
}

static void expect(const char *what, const cujit_array *a, const float *want, int64_t n) {
  float *got = malloc((size_t)n * sizeof *got);
  int64_t i;
  assert_ok(cujit_array_read(a, got, (size_t)n * sizeof *got));
  for (i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("%s: element %lld is %g, want %g", what, (long long)i, got[i], want[i]);
  free(got);
}

static void take_reversed_into_itself(void **state) {
  int64_t n = N, i;
  float *h = pattern(n), *want = malloc((size_t)n * sizeof *want);
  int64_t *rev = malloc((size_t)n * sizeof *rev);
  cujit_array *a = floats(h, 1, &n), *idx = NULL;
  (void)state;
  for (i = 0; i < n; i++) rev[i] = n - 1 - i, want[i] = h[n - 1 - i];
  assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &n, rev));
  assert_ok(cujit_array_take(a, idx, CUJIT_INDEX_RAISE, &a));
  expect("take(a, reversed, out=a)", a, want, n);
  cujit_array_destroy(idx);
  cujit_array_destroy(a);
  free(rev), free(h), free(want);
}

static void matrix_plus_transpose_into_itself(void **state) {
  int64_t shape[2] = {SIDE, SIDE}, r, c, n = (int64_t)SIDE * SIDE;
  float *h = pattern(n), *want = malloc((size_t)n * sizeof *want);
  cujit_array *a = floats(h, 2, shape), *t = NULL;
  (void)state;
  for (r = 0; r < SIDE; r++)
    for (c = 0; c < SIDE; c++) want[r * SIDE + c] = h[r * SIDE + c] + h[c * SIDE + r];
  assert_ok(cujit_array_transpose(a, &t));
  assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, t, &a));
  expect("add(a, a.T, out=a)", a, want, n);
  cujit_array_destroy(t);
  cujit_array_destroy(a);
  free(h), free(want);
}

/* copy(a[from:from + n - 1], out=a[to:to + n - 1]) of N floats. */
static void shifted_copy(int from, int to) {
  int64_t n = N, i;
  float *h = pattern(n), *want = malloc((size_t)n * sizeof *want);
  cujit_array *a = floats(h, 1, &n), *src = NULL, *dst = NULL;
  char what[64];
  for (i = 0; i < n; i++) want[i] = h[i];
  for (i = 0; i < n - 1; i++) want[to + i] = h[from + i];
  assert_ok(cujit_array_view(a, from, from + n - 1, &src));
  assert_ok(cujit_array_view(a, to, to + n - 1, &dst));
  assert_ok(cujit_array_copy(src, &dst));
  snprintf(what, sizeof what, "copy(a[%d:], out=a[%d:])", from, to);
  expect(what, a, want, n);
  cujit_array_destroy(src);
  cujit_array_destroy(dst);
  cujit_array_destroy(a);
  free(h), free(want);
}

static void copy_shifted_both_ways(void **state) {
  (void)state;
  shifted_copy(0, 1);
  shifted_copy(1, 0);
}

static void negate_into_reversed_view(void **state) {
  int64_t n = N, i;
  float *h = pattern(n), *want = malloc((size_t)n * sizeof *want);
  cujit_array *a = floats(h, 1, &n), *rev = NULL;
  (void)state;
  for (i = 0; i < n; i++) want[n - 1 - i] = -h[i];
  assert_ok(cujit_array_slice(a, 0, n - 1, -1, -1, &rev));
  assert_ok(cujit_array_unary(CUJIT_UNOP_NEG, a, &rev));
  expect("neg(a, out=a[::-1])", a, want, n);
  cujit_array_destroy(rev);
  cujit_array_destroy(a);
  free(h), free(want);
}

static void halves_swapped_by_concatenate(void **state) {
  int64_t n = N, i, half = N / 2;
  float *h = pattern(n), *want = malloc((size_t)n * sizeof *want);
  cujit_array *a = floats(h, 1, &n), *lo = NULL, *hi = NULL;
  (void)state;
  for (i = 0; i < n; i++) want[i] = h[(i + half) % n];
  assert_ok(cujit_array_view(a, 0, half, &lo));
  assert_ok(cujit_array_view(a, half, n, &hi));
  assert_ok(cujit_array_concatenate(2, (const cujit_array *const[]){hi, lo}, &a));
  expect("concatenate([a[n/2:], a[:n/2]], out=a)", a, want, n);
  cujit_array_destroy(lo);
  cujit_array_destroy(hi);
  cujit_array_destroy(a);
  free(h), free(want);
}

static void cumsum_into_shifted_view(void **state) {
  int64_t n = N + 1, i, m = N;
  int64_t *h = malloc((size_t)n * sizeof *h), *want = malloc((size_t)n * sizeof *want);
  cujit_array *a = NULL, *in = NULL, *out = NULL;
  int64_t *got = malloc((size_t)n * sizeof *got), sum = 0;
  (void)state;
  for (i = 0; i < n; i++) h[i] = want[i] = i % 7 - 3;
  for (i = 0; i < m; i++) sum += h[1 + i], want[i] = sum; /* out = a[0:m] from a[1:] */
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_I64, 1, &n, h));
  assert_ok(cujit_array_view(a, 1, n, &in));
  assert_ok(cujit_array_view(a, 0, m, &out));
  assert_ok(cujit_array_cumsum(in, 0, &out));
  assert_ok(cujit_array_read(a, got, (size_t)n * sizeof *got));
  for (i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("cumsum(a[1:], out=a[:-1]): element %lld is %lld, want %lld", (long long)i,
               (long long)got[i], (long long)want[i]);
  cujit_array_destroy(in);
  cujit_array_destroy(out);
  cujit_array_destroy(a);
  free(h), free(want), free(got);
}

static void put_values_from_reversed_self(void **state) {
  int64_t n = N, i;
  float *h = pattern(n), *want = malloc((size_t)n * sizeof *want);
  int64_t *all = malloc((size_t)n * sizeof *all);
  cujit_array *a = floats(h, 1, &n), *idx = NULL, *rev = NULL;
  (void)state;
  for (i = 0; i < n; i++) all[i] = i, want[i] = h[n - 1 - i];
  assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &n, all));
  assert_ok(cujit_array_slice(a, 0, n - 1, -1, -1, &rev));
  assert_ok(cujit_array_put(a, idx, rev, CUJIT_INDEX_RAISE));
  expect("put(a, arange(n), a[::-1])", a, want, n);
  cujit_array_destroy(rev);
  cujit_array_destroy(idx);
  cujit_array_destroy(a);
  free(all), free(h), free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(take_reversed_into_itself),
      cmocka_unit_test(matrix_plus_transpose_into_itself),
      cmocka_unit_test(copy_shifted_both_ways),
      cmocka_unit_test(negate_into_reversed_view),
      cmocka_unit_test(halves_swapped_by_concatenate),
      cmocka_unit_test(cumsum_into_shifted_view),
      cmocka_unit_test(put_values_from_reversed_self),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
