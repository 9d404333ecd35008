/* test_gpu_array_views - strided views and broadcasting on a GPU, against host computations:
 * views of a 257 x 1001 float matrix (transposed, columns with a step, rows reversed, both
 * at once, a column, a reshaped row range) and of a 1-D array of 1000003 floats ([::2],
 * [::-1], [7::13]) read, copied, converted, negated, added, scaled, fused, compared,
 * selected, reduced, dotted, taken from, and written in place (fill, write, put, a + 1
 * into the view) with the elements around them checked untouched; 3-D and 4-D views whose
 * dimensions do not merge; a single element broadcast (a + b[0:1], 0-d arrays, (1, 1) with
 * (4,)); and a strided view of 2^32 + 6 int8 elements (the strided loop's 64-bit
 * division). Every failure names the view, the element, the value and the wanted one. */
#include <math.h>

#include "arraytest.h"
#include "gputest.h"

enum { R = 257, C = 1001 };

/* Element i of the test data: exact in float, small, of both signs. */
static float pattern(int64_t i) { return (float)((i * 7919) % 1000) / 8.0f - 60.0f; }

static cujit_array *from_floats(const float *h, int ndim, const int64_t *shape) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_from_host(&a, CUJIT_TYPE_F32, ndim, shape, h));
  return a;
}

/* Where element k (C order) of view v lies in `base`, by v's shape and strides. */
static int64_t base_index(const cujit_array *v, const cujit_array *base, int64_t k) {
  int64_t at = (int64_t)(cujit_array_data(v) - cujit_array_data(base)) /
               (int64_t)cujit_type_size(cujit_array_type(v));
  int d;
  for (d = cujit_array_ndim(v) - 1; d >= 0; d--) {
    at += k % cujit_array_shape(v, d) * cujit_array_stride(v, d);
    k /= cujit_array_shape(v, d);
  }
  return at;
}

static void expect_values(const char *view, const char *what, const double *got, const double *want,
                          int64_t n, double tol) {
  int64_t k;
  for (k = 0; k < n; k++)
    if (!(fabs(got[k] - want[k]) <= tol) && !(isnan(got[k]) && isnan(want[k])))
      fail_msg("view %s, %s: element %lld is %.9g, want %.9g", view, what, (long long)k, got[k],
               want[k]);
}

/* One view of a base array, named for messages. */
typedef struct view_case {
  const char *name;
  cujit_array *v;
} view_case;

/* The reductions of v against the host's, w (of v's shape) for dot. */
static void check_reductions(const char *name, const cujit_array *v, const double *h, int64_t n) {
  double sum = 0, lo = INFINITY, hi = -INFINITY, got;
  int64_t argmin = 0, argmax = 0, k, idx;
  int any = 0, all = 1;
  cujit_array *r = NULL;
  for (k = 0; k < n; k++) {
    sum += h[k];
    if (h[k] < lo) lo = h[k], argmin = k;
    if (h[k] > hi) hi = h[k], argmax = k;
    any |= h[k] != 0;
    all &= h[k] != 0;
  }
  assert_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, v, CUJIT_TYPE_F64, &r));
  assert_ok(cujit_array_read(r, &got, sizeof got));
  if (fabs(got - sum) > 1e-9 * fmax(1, fabs(sum)))
    fail_msg("view %s: sum as f64 %.17g, want %.17g", name, got, sum);
  cujit_array_destroy(r), r = NULL;
  {
    float f;
    assert_ok(cujit_array_reduce(CUJIT_REDOP_MIN, v, &r));
    assert_ok(cujit_array_read(r, &f, sizeof f));
    if (f != lo) fail_msg("view %s: min %g, want %g", name, f, lo);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_reduce(CUJIT_REDOP_MAX, v, &r));
    assert_ok(cujit_array_read(r, &f, sizeof f));
    if (f != hi) fail_msg("view %s: max %g, want %g", name, f, hi);
    cujit_array_destroy(r), r = NULL;
  }
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMIN, v, &r));
  assert_ok(cujit_array_read(r, &idx, sizeof idx));
  if (idx != argmin)
    fail_msg("view %s: argmin %lld, want %lld", name, (long long)idx, (long long)argmin);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_reduce(CUJIT_REDOP_ARGMAX, v, &r));
  assert_ok(cujit_array_read(r, &idx, sizeof idx));
  if (idx != argmax)
    fail_msg("view %s: argmax %lld, want %lld", name, (long long)idx, (long long)argmax);
  cujit_array_destroy(r), r = NULL;
  {
    unsigned char b;
    assert_ok(cujit_array_reduce(CUJIT_REDOP_ANY, v, &r));
    assert_ok(cujit_array_read(r, &b, 1));
    if (b != any) fail_msg("view %s: any %d, want %d", name, b, any);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_reduce(CUJIT_REDOP_ALL, v, &r));
    assert_ok(cujit_array_read(r, &b, 1));
    if (b != all) fail_msg("view %s: all %d, want %d", name, b, all);
    cujit_array_destroy(r), r = NULL;
  }
  {
    double dot = 0;
    float f;
    for (k = 0; k < n; k++) dot += h[k] * h[k];
    assert_ok(cujit_array_dot(v, v, &r));
    assert_ok(cujit_array_read(r, &f, sizeof f));
    if (fabs(f - dot) > 1e-5 * dot) fail_msg("view %s: dot %.9g, want %.9g", name, f, dot);
    cujit_array_destroy(r);
  }
}

/* Every operation that reads a view, against the host's gather of it. */
static void check_reads(const char *name, const cujit_array *v, const cujit_array *base,
                        const float *hbase) {
  int64_t n = cujit_array_size(v), k, shape[4];
  int ndim = cujit_array_ndim(v), d;
  double *h = malloc((size_t)n * sizeof *h), *want = malloc((size_t)n * sizeof *want), *got;
  float *raw = malloc((size_t)n * sizeof *raw), *other = malloc((size_t)n * sizeof *other);
  cujit_array *w, *r = NULL, *idx = NULL;
  int64_t *ix = malloc((size_t)n * sizeof *ix);
  for (d = 0; d < ndim; d++) shape[d] = cujit_array_shape(v, d);
  for (k = 0; k < n; k++) {
    h[k] = hbase[base_index(v, base, k)];
    other[k] = pattern(k + 5);
    ix[k] = (k * 7 + 3) % n;
  }
  /* read, as it is */
  assert_ok(cujit_array_read(v, raw, (size_t)n * sizeof *raw));
  for (k = 0; k < n; k++)
    if (raw[k] != h[k])
      fail_msg("view %s, read: element %lld is %g, want %g", name, (long long)k, raw[k], h[k]);
  /* copy, conversion (array_values() converts) */
  assert_ok(cujit_array_copy(v, &r));
  assert_int_equal(cujit_array_contiguous(r), 1);
  got = array_values(r);
  expect_values(name, "copy", got, h, n, 0);
  free(got);
  cujit_array_destroy(r), r = NULL;
  /* -v, v + w, v + v, 2 * v, v * w + 1 fused, v > 0 */
  w = from_floats(other, ndim, shape);
  assert_ok(cujit_array_unary(CUJIT_UNOP_NEG, v, &r));
  got = array_values(r);
  for (k = 0; k < n; k++) want[k] = -h[k];
  expect_values(name, "-v", got, want, n, 0);
  free(got);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, v, w, &r));
  got = array_values(r);
  for (k = 0; k < n; k++) want[k] = (float)(h[k] + other[k]);
  expect_values(name, "v + w", got, want, n, 0);
  free(got);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_binary(CUJIT_BINOP_SUB, w, v, &r));
  got = array_values(r);
  for (k = 0; k < n; k++) want[k] = (float)(other[k] - h[k]);
  expect_values(name, "w - v", got, want, n, 0);
  free(got);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, v, 2, CUJIT_SCALAR_INT, &r));
  got = array_values(r);
  for (k = 0; k < n; k++) want[k] = 2 * h[k];
  expect_values(name, "2 * v", got, want, n, 0);
  free(got);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_map(&r, "x * y + 1", 2, (const char *[]){"x", "y"},
                            (const cujit_array *[]){v, w}));
  got = array_values(r);
  for (k = 0; k < n; k++) want[k] = (float)(h[k] * other[k] + 1);
  expect_values(name, "v * w + 1", got, want, n, 1e-4);
  free(got);
  cujit_array_destroy(r), r = NULL;
  {
    cujit_array *pos = NULL;
    assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_GT, v, 0, CUJIT_SCALAR_INT, &pos));
    assert_ok(cujit_array_where(pos, cujit_arr(v), cujit_f32(-1), &r));
    got = array_values(r);
    for (k = 0; k < n; k++) want[k] = h[k] > 0 ? h[k] : -1;
    expect_values(name, "where(v > 0, v, -1)", got, want, n, 0);
    free(got);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_if_positive(v, cujit_arr(w), cujit_arr(v), &r));
    got = array_values(r);
    for (k = 0; k < n; k++) want[k] = h[k] > 0 ? other[k] : h[k];
    expect_values(name, "if_positive(v, w, v)", got, want, n, 0);
    free(got);
    cujit_array_destroy(r), r = NULL;
    cujit_array_destroy(pos);
  }
  /* take from the view (its elements in C order) */
  assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &n, ix));
  assert_ok(cujit_array_take(v, idx, CUJIT_INDEX_RAISE, &r));
  got = array_values(r);
  for (k = 0; k < n; k++) want[k] = h[ix[k]];
  expect_values(name, "take", got, want, n, 0);
  free(got);
  cujit_array_destroy(r), r = NULL;
  cujit_array_destroy(idx);
  check_reductions(name, v, h, n);
  cujit_array_destroy(w);
  free(h);
  free(want);
  free(raw);
  free(other);
  free(ix);
}

/* Every operation that writes a view: the view's elements change, the others do not. */
static void check_writes(const char *name, cujit_array *base, cujit_array *v, const float *hbase) {
  int64_t n = cujit_array_size(v), total = cujit_array_size(base), k;
  double *expect = malloc((size_t)total * sizeof *expect), *got;
  float *host = malloc((size_t)n * sizeof *host), seven = 7;
  int64_t *ix = malloc((size_t)n * sizeof *ix);
  cujit_array *out = v, *idx = NULL, *vals = NULL;
  int round;
  for (round = 0; round < 4; round++) {
    const char *what[] = {"v += 1 in place", "fill", "write", "put"};
    assert_ok(cujit_array_write(base, hbase, (size_t)total * sizeof *hbase)); /* afresh */
    for (k = 0; k < total; k++) expect[k] = hbase[k];
    if (round == 0) {
      assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, v, 1, CUJIT_SCALAR_INT, &out));
      assert_ptr_equal(out, v);
      for (k = 0; k < n; k++) expect[base_index(v, base, k)] = hbase[base_index(v, base, k)] + 1;
    } else if (round == 1) {
      assert_ok(cujit_array_fill(v, &seven));
      for (k = 0; k < n; k++) expect[base_index(v, base, k)] = 7;
    } else if (round == 2) {
      for (k = 0; k < n; k++) host[k] = (float)k;
      assert_ok(cujit_array_write(v, host, (size_t)n * sizeof *host));
      for (k = 0; k < n; k++) expect[base_index(v, base, k)] = (double)k;
    } else {
      /* every third element of the view, counted from its end, gets -k */
      int64_t m = 0;
      for (k = n - 1; k >= 0; k -= 3) ix[m] = k - n, host[m] = (float)-k, m++; /* negative */
      assert_ok(cujit_array_from_host(&idx, CUJIT_TYPE_I64, 1, &m, ix));
      assert_ok(cujit_array_from_host(&vals, CUJIT_TYPE_F32, 1, &m, host));
      assert_ok(cujit_array_put(v, idx, vals, CUJIT_INDEX_RAISE));
      for (k = n - 1; k >= 0; k -= 3) expect[base_index(v, base, k)] = (double)-k;
      cujit_array_destroy(idx);
      cujit_array_destroy(vals);
    }
    got = array_values(base);
    for (k = 0; k < total; k++)
      if (got[k] != expect[k])
        fail_msg("view %s, %s: base element %lld is %g, want %g", name, what[round], (long long)k,
                 got[k], expect[k]);
    free(got);
  }
  assert_ok(cujit_array_write(base, hbase, (size_t)total * sizeof *hbase));
  free(expect);
  free(host);
  free(ix);
}

static cujit_array *sliced(const cujit_array *a, int dim, int64_t start, int64_t stop,
                           int64_t step) {
  cujit_array *v = NULL;
  assert_ok(cujit_array_slice(a, dim, start, stop, step, &v));
  return v;
}

static void views_of_a_matrix(void **state) {
  const int64_t shape[] = {R, C}, n = (int64_t)R * C;
  float *h = malloc((size_t)n * sizeof *h);
  cujit_array *x, *t = NULL, *col = NULL, *flat = NULL, *rows = NULL;
  view_case cases[8];
  size_t i, nc = 0;
  int64_t k;
  (void)state;
  for (k = 0; k < n; k++) h[k] = pattern(k);
  x = from_floats(h, 2, shape);
  assert_ok(cujit_array_transpose(x, &t));
  cases[nc++] = (view_case){"x.T", t};
  cases[nc++] = (view_case){"x[:, 3:1000:2]", sliced(x, 1, 3, 1000, 2)};
  cases[nc++] = (view_case){"x[::-1, :]", sliced(x, 0, R - 1, -1, -1)};
  {
    cujit_array *a = sliced(x, 0, 5, 200, 3);
    cases[nc++] = (view_case){"x[5:200:3, ::-1]", sliced(a, 1, C - 1, -1, -1)};
    cujit_array_destroy(a);
  }
  {
    cujit_array *a = sliced(x, 1, 17, 18, 1);
    assert_ok(cujit_array_reshape(a, 1, (const int64_t[]){R}, &col));
    cases[nc++] = (view_case){"x[:, 17] (1-D)", col};
    cujit_array_destroy(a);
  }
  {
    cujit_array *a = sliced(t, 1, 10, 12, 1); /* two columns of x.T: rows 10, 11 of x */
    cases[nc++] = (view_case){"x.T[:, 10:12]", a};
  }
  assert_ok(cujit_array_reshape(x, 1, &n, &flat));
  rows = sliced(flat, 0, n - 1, 99, -13);
  cases[nc++] = (view_case){"flat[n-1:99:-13]", rows};
  for (i = 0; i < nc; i++) {
    assert_int_equal(cujit_array_contiguous(cases[i].v), 0);
    check_reads(cases[i].name, cases[i].v, x, h);
    check_writes(cases[i].name, x, cases[i].v, h);
  }
  for (i = 0; i < nc; i++) cujit_array_destroy(cases[i].v);
  cujit_array_destroy(flat);
  cujit_array_destroy(x);
  free(h);
}

static void views_of_a_vector(void **state) {
  const int64_t n = 1000003;
  float *h = malloc((size_t)n * sizeof *h);
  cujit_array *x;
  view_case cases[4];
  size_t i, nc = 0;
  int64_t k;
  (void)state;
  for (k = 0; k < n; k++) h[k] = pattern(k);
  x = from_floats(h, 1, &n);
  cases[nc++] = (view_case){"x[::2]", sliced(x, 0, 0, n, 2)};
  cases[nc++] = (view_case){"x[::-1]", sliced(x, 0, n - 1, -1, -1)};
  cases[nc++] = (view_case){"x[7::13]", sliced(x, 0, 7, n, 13)};
  cases[nc++] = (view_case){"x[254:-1:-1]", sliced(x, 0, 254, -1, -1)}; /* 255 elements */
  for (i = 0; i < nc; i++) {
    check_reads(cases[i].name, cases[i].v, x, h);
    check_writes(cases[i].name, x, cases[i].v, h);
  }
  for (i = 0; i < nc; i++) cujit_array_destroy(cases[i].v);
  cujit_array_destroy(x);
  free(h);
}

/* Views of 3 and 4 dimensions that no two dimensions of merge: the strided loop at its
 * widest, read, added to and summed. */
static void views_of_three_and_four_dimensions(void **state) {
  const int64_t s3[] = {7, 9, 11}, s4[] = {5, 6, 7, 8};
  const int64_t n3 = 7 * 9 * 11, n4 = 5 * 6 * 7 * 8;
  float *h = malloc((size_t)n4 * sizeof *h);
  cujit_array *x3, *x4, *v3, *v4, *a, *b;
  int64_t k;
  (void)state;
  for (k = 0; k < n4; k++) h[k] = pattern(k);
  x3 = from_floats(h, 3, s3);
  x4 = from_floats(h, 4, s4);
  a = sliced(x3, 0, 0, 7, 2), b = sliced(a, 1, 8, -1, -2);
  v3 = sliced(b, 2, 1, 11, 3); /* x3[::2, ::-2, 1::3] */
  cujit_array_destroy(a), cujit_array_destroy(b);
  a = sliced(x4, 0, 4, -1, -2), b = sliced(a, 1, 0, 6, 2);
  cujit_array_destroy(a);
  a = sliced(b, 2, 1, 7, 2);
  cujit_array_destroy(b);
  v4 = sliced(a, 3, 7, 0, -3); /* x4[::-2, ::2, 1::2, 7:0:-3] */
  cujit_array_destroy(a);
  check_reads("x3[::2, ::-2, 1::3]", v3, x3, h);
  check_writes("x3[::2, ::-2, 1::3]", x3, v3, h);
  check_reads("x4[::-2, ::2, 1::2, 7:0:-3]", v4, x4, h);
  check_writes("x4[::-2, ::2, 1::2, 7:0:-3]", x4, v4, h);
  (void)n3;
  cujit_array_destroy(v3);
  cujit_array_destroy(v4);
  cujit_array_destroy(x3);
  cujit_array_destroy(x4);
  free(h);
}

/* A single element broadcast: a + b[0:1], 0-d arrays with arrays, (1, 1) with (4,), a
 * transposed view with a 0-d array, maximum with one, at sizes around the block. */
static void single_elements_broadcast(void **state) {
  static const int64_t sizes[] = {1, 255, 257, 1000003};
  size_t s;
  (void)state;
  for (s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    int64_t n = sizes[s], k;
    float *h = malloc((size_t)n * sizeof *h), b0 = 2.5f;
    double *got, *want = malloc((size_t)n * sizeof *want);
    cujit_array *x, *b = NULL, *zero_d = NULL, *r = NULL;
    for (k = 0; k < n; k++) h[k] = pattern(k);
    x = from_floats(h, 1, &n);
    assert_ok(cujit_array_view(x, n / 2, n / 2 + 1, &b)); /* b = x[n/2 : n/2 + 1] */
    assert_ok(cujit_array_from_host(&zero_d, CUJIT_TYPE_F32, 0, NULL, &b0));
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, x, b, &r));
    assert_int_equal(cujit_array_ndim(r), 1);
    got = array_values(r);
    for (k = 0; k < n; k++) want[k] = (float)(h[k] + h[n / 2]);
    expect_values("x + x[n/2:n/2+1]", "sizes", got, want, n, 0);
    free(got);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_binary(CUJIT_BINOP_SUB, zero_d, x, &r)); /* 0-d first */
    got = array_values(r);
    for (k = 0; k < n; k++) want[k] = (float)(2.5 - h[k]);
    expect_values("2.5 (0-d) - x", "sizes", got, want, n, 0);
    free(got);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_binary(CUJIT_BINOP_MAXIMUM, x, zero_d, &r));
    got = array_values(r);
    for (k = 0; k < n; k++) want[k] = h[k] > 2.5f ? h[k] : 2.5f;
    expect_values("maximum(x, 2.5 (0-d))", "sizes", got, want, n, 0);
    free(got);
    cujit_array_destroy(r), r = NULL;
    {
      cujit_array *c = NULL;
      assert_ok(cujit_array_binary(CUJIT_BINOP_LT, x, zero_d, &c)); /* a bool condition */
      assert_ok(cujit_array_where(c, cujit_arr(zero_d), cujit_arr(x), &r));
      got = array_values(r);
      for (k = 0; k < n; k++) want[k] = h[k] < 2.5f ? 2.5f : h[k];
      expect_values("where(x < 2.5, 2.5 (0-d), x)", "sizes", got, want, n, 0);
      free(got);
      cujit_array_destroy(r), r = NULL;
      cujit_array_destroy(c);
    }
    /* in place, with the single element on the right */
    r = x;
    assert_ok(cujit_array_binary(CUJIT_BINOP_MUL, x, zero_d, &r));
    got = array_values(x);
    for (k = 0; k < n; k++) want[k] = h[k] * 2.5f;
    expect_values("x *= 2.5 (0-d)", "sizes", got, want, n, 0);
    free(got);
    cujit_array_destroy(b);
    cujit_array_destroy(zero_d);
    cujit_array_destroy(x);
    free(h);
    free(want);
  }
  {
    /* (1, 1) + (4,) is (1, 4); x.T + a 0-d array */
    const int64_t ones[] = {1, 1}, four = 4, m[] = {3, 5};
    float one = 10, v4[4] = {1, 2, 3, 4}, hm[15], back[15];
    cujit_array *e = NULL, *row = NULL, *r = NULL, *x = NULL, *t = NULL, *z = NULL;
    int k;
    assert_ok(cujit_array_from_host(&e, CUJIT_TYPE_F32, 2, ones, &one));
    assert_ok(cujit_array_from_host(&row, CUJIT_TYPE_F32, 1, &four, v4));
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, e, row, &r));
    assert_int_equal(cujit_array_ndim(r), 2);
    assert_int_equal(cujit_array_shape(r, 0), 1);
    assert_int_equal(cujit_array_shape(r, 1), 4);
    assert_ok(cujit_array_read(r, back, 16));
    for (k = 0; k < 4; k++)
      if (back[k] != 10 + v4[k])
        fail_msg("(1, 1) + (4,): element %d is %g, want %g", k, back[k], 10 + v4[k]);
    cujit_array_destroy(r), r = NULL;
    for (k = 0; k < 15; k++) hm[k] = (float)k;
    assert_ok(cujit_array_from_host(&x, CUJIT_TYPE_F32, 2, m, hm));
    assert_ok(cujit_array_transpose(x, &t));
    assert_ok(cujit_array_from_host(&z, CUJIT_TYPE_F32, 0, NULL, &one));
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, t, z, &r));
    assert_ok(cujit_array_read(r, back, sizeof back));
    for (k = 0; k < 15; k++) { /* r is (5, 3): r[i][j] = x[j][i] + 10 */
      float want = hm[(k % 3) * 5 + k / 3] + 10;
      if (back[k] != want) fail_msg("x.T + 10 (0-d): element %d is %g, want %g", k, back[k], want);
    }
    cujit_array_destroy(r);
    cujit_array_destroy(e);
    cujit_array_destroy(row);
    cujit_array_destroy(x);
    cujit_array_destroy(t);
    cujit_array_destroy(z);
  }
}

/* A strided view of 2^32 + 6 int8 elements (columns 0 and 1 of a (2^31 + 3, 3) matrix):
 * the strided loop's coordinates past 32 bits. Filled with 1, summed, incremented in
 * place and summed again; the last rows read back with column 2 untouched. */
static void a_strided_view_past_two_to_the_32(void **state) {
  const int64_t rows = ((int64_t)1 << 31) + 3, shape[] = {rows, 3};
  const int64_t n = 2 * rows;
  cujit_array *x = NULL, *v = NULL, *sum = NULL, *tail = NULL, *out;
  signed char one = 1, t[9];
  int64_t got;
  int k;
  (void)state;
  assert_ok(cujit_array_zeros(&x, CUJIT_TYPE_I8, 2, shape));
  assert_ok(cujit_array_slice(x, 1, 0, 2, 1, &v));
  assert_int_equal(cujit_array_size(v), n);
  assert_ok(cujit_array_fill(v, &one));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, v, &sum));
  assert_ok(cujit_array_read(sum, &got, sizeof got));
  if (got != n) fail_msg("sum of the view: %lld, want %lld", (long long)got, (long long)n);
  out = v;
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, v, 1, CUJIT_SCALAR_INT, &out));
  assert_ok(cujit_array_reduce(CUJIT_REDOP_SUM, v, &sum));
  assert_ok(cujit_array_read(sum, &got, sizeof got));
  if (got != 2 * n) fail_msg("sum after += 1: %lld, want %lld", (long long)got, (long long)(2 * n));
  assert_ok(cujit_array_slice(x, 0, rows - 3, rows, 1, &tail));
  assert_ok(cujit_array_read(tail, t, sizeof t));
  for (k = 0; k < 9; k++)
    if (t[k] != (k % 3 == 2 ? 0 : 2))
      fail_msg("row %lld, column %d: %d, want %d", (long long)(rows - 3 + k / 3), k % 3, t[k],
               k % 3 == 2 ? 0 : 2);
  cujit_array_destroy(tail);
  cujit_array_destroy(sum);
  cujit_array_destroy(v);
  cujit_array_destroy(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(views_of_a_matrix),
      cmocka_unit_test(views_of_a_vector),
      cmocka_unit_test(views_of_three_and_four_dimensions),
      cmocka_unit_test(single_elements_broadcast),
      cmocka_unit_test(a_strided_view_past_two_to_the_32),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
