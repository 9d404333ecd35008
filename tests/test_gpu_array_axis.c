/* test_gpu_array_axis - on a GPU: NumPy's broadcasting and reductions along axes, checked
 * against a reference computed here on the host.
 *  - broadcasting: pairs of shapes of the kinds CuPy's broadcast tests take (equal, a size
 *    of 1 against any, fewer dimensions, sizes of 0, the four dimensions arrays have), each
 *    through binary arithmetic with promotion, a comparison, where and a map, contiguous
 *    and as strided views, into a new output and a given one; pairs that do not broadcast
 *    are refused; a row and a column broadcast over a matrix in 16-byte chunks, for
 *    element types of 1 to 8 bytes, and from a start past 16-byte alignment (one element
 *    at a time); allclose of a matrix and a row;
 *  - reductions along axes, as CuPy's sum/prod and argmin/argmax tests take them: every
 *    axis, negative axes, pairs of axes, all axes, keepdims, each op on integer, floating
 *    and bool arrays, ties (the first index wins, also among infinities and a type's
 *    lowest value, in pieces), NaN (it wins), axes of size 0 (the
 *    identities), strided views, and arrays large enough that each way of walking runs in
 *    pieces and with 16-byte accesses; sums into bf16, each element rounded to it first. */
#include <math.h>
#include <string.h>

#include "cujit_array.h"
#include "arraytest.h"
#include "gputest.h"

#define MAXD CUJIT_ARRAY_MAX_DIMS

typedef struct shape {
  int ndim;
  int64_t s[MAXD];
} shape;

static int64_t count(const shape *s) {
  int64_t n = 1;
  int d;
  for (d = 0; d < s->ndim; d++) n *= s->s[d];
  return n;
}

/* An array of `type` of shape s holding f(i) at flat index i. */
static cujit_array *make(int type, const shape *s, double (*f)(int64_t)) {
  int64_t n = count(s), i;
  double *h = malloc((size_t)(n ? n : 1) * sizeof *h);
  cujit_array *flat, *a = NULL;
  for (i = 0; i < n; i++) h[i] = f(i);
  flat = array_from_doubles(type, n, h);
  assert_ok(cujit_array_reshape(flat, s->ndim, s->s, &a));
  cujit_array_destroy(flat);
  free(h);
  return a;
}

static double small(int64_t i) { return (double)(i * 7 % 11) - 3; }
static double other(int64_t i) { return (double)(i * 5 % 13) - 6; }
static double positive(int64_t i) { return (double)(i % 3) + 1; }

/* The flat index in an array of shape `in` of the element broadcast to position `pos` of
 * the result's shape `out`. */
static int64_t source_of(const shape *in, const shape *out, const int64_t *pos) {
  int64_t at = 0;
  int d, lead = out->ndim - in->ndim;
  for (d = 0; d < in->ndim; d++) at = at * in->s[d] + (in->s[d] == 1 ? 0 : pos[lead + d]);
  return at;
}

static void next_pos(const shape *s, int64_t *pos) {
  int d;
  for (d = s->ndim - 1; d >= 0; d--) {
    if (++pos[d] < s->s[d]) return;
    pos[d] = 0;
  }
}

static void expect_shape(const cujit_array *r, const shape *want) {
  int d;
  assert_int_equal(cujit_array_ndim(r), want->ndim);
  for (d = 0; d < want->ndim; d++) assert_int_equal(cujit_array_shape(r, d), want->s[d]);
}

typedef struct pair {
  shape a, b, out;
} pair;

/* Pairs that broadcast, with their result. */
static const pair kPairs[] = {
    {{0, {0}}, {0, {0}}, {0, {0}}},
    {{1, {2}}, {0, {0}}, {1, {2}}},
    {{1, {1}}, {1, {2}}, {1, {2}}},
    {{2, {1, 1}}, {1, {3}}, {2, {1, 3}}},
    {{2, {2, 2}}, {2, {2, 2}}, {2, {2, 2}}},
    {{2, {1, 2}}, {2, {2, 1}}, {2, {2, 2}}},
    {{4, {2, 1, 3, 4}}, {3, {3, 1, 4}}, {4, {2, 3, 3, 4}}},
    {{4, {4, 3, 2, 3}}, {2, {2, 3}}, {4, {4, 3, 2, 3}}},
    {{4, {8, 1, 6, 1}}, {3, {7, 1, 5}}, {4, {8, 7, 6, 5}}},
    {{3, {15, 3, 5}}, {2, {3, 1}}, {3, {15, 3, 5}}},
    {{2, {5, 4}}, {1, {1}}, {2, {5, 4}}},
    {{2, {3, 1}}, {2, {1, 5}}, {2, {3, 5}}},
    {{4, {2, 0, 1, 3}}, {4, {2, 1, 0, 3}}, {4, {2, 0, 0, 3}}},
    {{4, {0, 0, 0, 0}}, {4, {0, 1, 0, 1}}, {4, {0, 0, 0, 0}}},
    {{2, {0, 0}}, {4, {0, 0, 0, 0}}, {4, {0, 0, 0, 0}}},
    {{2, {1000, 1}}, {1, {999}}, {2, {1000, 999}}},
    /* rows of a multiple of 16 bytes: the strided loop's chunks, a row read whole, and a
     * column's one element read once a chunk */
    {{2, {6, 16}}, {1, {16}}, {2, {6, 16}}},
    {{2, {6, 1}}, {2, {6, 32}}, {2, {6, 32}}},
    {{3, {3, 1, 8}}, {2, {5, 8}}, {3, {3, 5, 8}}},
    {{4, {2, 3, 1, 8}}, {3, {3, 4, 1}}, {4, {2, 3, 4, 8}}},
};

/* Pairs that do not. */
static const pair kRefused[] = {
    {{1, {3}}, {1, {2}}, {0, {0}}},
    {{2, {2, 3}}, {2, {3, 2}}, {0, {0}}},
    {{3, {2, 3, 4}}, {3, {4, 3, 2}}, {0, {0}}},
    {{3, {1, 3, 4}}, {3, {2, 3, 3}}, {0, {0}}},
    {{2, {0, 1}}, {1, {2}}, {2, {0, 2}}}, /* (0, 1) with (2,) is (0, 2): it broadcasts */
};

/* r's values against op(a's, b's) broadcast to the pair's result. */
static void check_pair(const pair *p, const cujit_array *r, double (*op)(double, double)) {
  int64_t n = count(&p->out), i, pos[MAXD] = {0};
  double *got = array_values(r);
  expect_shape(r, &p->out);
  for (i = 0; i < n; i++, next_pos(&p->out, pos)) {
    double want = op(small(source_of(&p->a, &p->out, pos)), other(source_of(&p->b, &p->out, pos)));
    if (got[i] != want) fail_msg("element %lld: %g, wanted %g", (long long)i, got[i], want);
  }
  free(got);
}

static double add(double x, double y) { return x + y; }
static double sub(double x, double y) { return x - y; }
static double less(double x, double y) { return x < y; }
static double pick(double x, double y) { return x > 0 ? x : y; }
static double fma1(double x, double y) { return x * y + 1; }

static void broadcasting_as_numpy(void **state) {
  size_t k;
  (void)state;
  for (k = 0; k < sizeof kPairs / sizeof *kPairs; k++) {
    const pair *p = &kPairs[k];
    cujit_array *a = make(CUJIT_TYPE_F32, &p->a, small), *b = make(CUJIT_TYPE_F64, &p->b, other);
    cujit_array *ia = make(CUJIT_TYPE_I32, &p->a, small), *ib = make(CUJIT_TYPE_I32, &p->b, other);
    cujit_array *r = NULL, *cond = NULL, *given = NULL;
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &r));
    assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F64);
    check_pair(p, r, add);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_binary(CUJIT_BINOP_SUB, ia, ib, &r));
    check_pair(p, r, sub);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_binary(CUJIT_BINOP_LT, a, ib, &r));
    assert_int_equal(cujit_array_type(r), CUJIT_TYPE_BOOL);
    check_pair(p, r, less);
    cujit_array_destroy(r), r = NULL;
    /* where(a > 0, a, b): the condition has a's shape, the values both */
    assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_GT, a, 0, CUJIT_SCALAR_INT, &cond));
    assert_ok(cujit_array_where(cond, cujit_arr(a), cujit_arr(b), &r));
    check_pair(p, r, pick);
    cujit_array_destroy(r), r = NULL;
    assert_ok(cujit_array_map(&r, "x * y + 1", 2, (const char *[]){"x", "y"},
                              (const cujit_array *[]){a, b}));
    check_pair(p, r, fma1);
    /* into a given output of the result's shape */
    given = r, r = NULL;
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &given));
    check_pair(p, given, add);
    cujit_array_destroy(given);
    cujit_array_destroy(cond);
    cujit_array_destroy(a);
    cujit_array_destroy(b);
    cujit_array_destroy(ia);
    cujit_array_destroy(ib);
  }
  for (k = 0; k < sizeof kRefused / sizeof *kRefused; k++) {
    const pair *p = &kRefused[k];
    cujit_array *a = make(CUJIT_TYPE_F32, &p->a, small), *b = make(CUJIT_TYPE_F32, &p->b, other);
    cujit_array *r = NULL;
    if (p->out.ndim) { /* the one that broadcasts after all */
      assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &r));
      expect_shape(r, &p->out);
    } else {
      assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &r), CUJIT_ERROR_INVALID_VALUE,
                           "which do not broadcast");
      assert_null(r);
    }
    cujit_array_destroy(r);
    cujit_array_destroy(a);
    cujit_array_destroy(b);
  }
}

static double lane(int64_t i) { return (double)(i % 29) - 14; }

/* A row broadcast over a matrix in chunks of 16 bytes, for element types of 1 to 8 bytes
 * (chunks of 16 to 2 elements) and mixed, a column broadcast likewise, and a matrix that
 * starts one element past 16-byte alignment (its rows still a multiple of the chunk): the
 * loop of one element at a time, chosen by the kernel. */
static void broadcasting_rows_in_chunks(void **state) {
  static const int types[][2] = {{CUJIT_TYPE_I8, CUJIT_TYPE_I8},
                                 {CUJIT_TYPE_F16, CUJIT_TYPE_F16},
                                 {CUJIT_TYPE_F16, CUJIT_TYPE_F32},
                                 {CUJIT_TYPE_I16, CUJIT_TYPE_I64},
                                 {CUJIT_TYPE_F64, CUJIT_TYPE_F64}};
  const shape m = {2, {37, 64}}, row = {1, {64}}, col = {2, {37, 1}}, flat = {1, {37 * 64 + 1}};
  size_t k;
  int shifted;
  (void)state;
  for (k = 0; k < sizeof types / sizeof *types; k++)
    for (shifted = 0; shifted < 2; shifted++) {
      cujit_array *whole = make(types[k][0], &flat, lane), *cut = NULL, *a = NULL;
      cujit_array *r = make(types[k][1], &row, small), *c = make(types[k][1], &col, other);
      cujit_array *got = NULL;
      double *av, *rv, *cv, *v;
      int64_t i, j;
      assert_ok(cujit_array_view(whole, shifted, shifted + 37 * 64, &cut));
      assert_ok(cujit_array_reshape(cut, 2, m.s, &a));
      av = array_values(a), rv = array_values(r), cv = array_values(c);
      assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, a, r, &got));
      v = array_values(got);
      for (i = 0; i < 37; i++)
        for (j = 0; j < 64; j++)
          if (v[i * 64 + j] != av[i * 64 + j] + rv[j])
            fail_msg("types %zu, shifted %d: (%lld, %lld) %g, wanted %g", k, shifted, (long long)i,
                     (long long)j, v[i * 64 + j], av[i * 64 + j] + rv[j]);
      free(v);
      cujit_array_destroy(got), got = NULL;
      assert_ok(cujit_array_binary(CUJIT_BINOP_SUB, c, a, &got));
      v = array_values(got);
      for (i = 0; i < 37; i++)
        for (j = 0; j < 64; j++)
          if (v[i * 64 + j] != cv[i] - av[i * 64 + j])
            fail_msg("types %zu, shifted %d: column (%lld, %lld) %g, wanted %g", k, shifted,
                     (long long)i, (long long)j, v[i * 64 + j], cv[i] - av[i * 64 + j]);
      free(v), free(av), free(rv), free(cv);
      cujit_array_destroy(got);
      cujit_array_destroy(a);
      cujit_array_destroy(cut);
      cujit_array_destroy(whole);
      cujit_array_destroy(r);
      cujit_array_destroy(c);
    }
}

/* Strided views broadcast as their elements say: a transposed matrix with a row, and a
 * column cut with a step, with an overlapping given output. */
static void broadcasting_strided_views(void **state) {
  const shape s43 = {2, {4, 3}}, s4 = {1, {4}}, s9 = {2, {9, 1}};
  cujit_array *m = make(CUJIT_TYPE_F32, &s43, small), *row = make(CUJIT_TYPE_F32, &s4, other);
  cujit_array *col = make(CUJIT_TYPE_F32, &s9, other);
  cujit_array *t = NULL, *cut = NULL, *r = NULL;
  double *mv, *rv, *cv, *got;
  int i, j;
  (void)state;
  assert_ok(cujit_array_transpose(m, &t));             /* (3, 4) */
  assert_ok(cujit_array_slice(col, 0, 1, 9, 3, &cut)); /* (3, 1): rows 1, 4, 7 */
  assert_ok(cujit_array_binary(CUJIT_BINOP_MUL, t, row, &r));
  mv = array_values(m), rv = array_values(row), cv = array_values(col);
  got = array_values(r);
  for (i = 0; i < 3; i++)
    for (j = 0; j < 4; j++) assert_true(got[i * 4 + j] == mv[j * 3 + i] * rv[j]);
  free(got);
  cujit_array_destroy(r), r = NULL;
  assert_ok(cujit_array_binary(CUJIT_BINOP_SUB, cut, t, &r));
  got = array_values(r);
  for (i = 0; i < 3; i++)
    for (j = 0; j < 4; j++) assert_true(got[i * 4 + j] == cv[1 + 3 * i] - mv[j * 3 + i]);
  free(got);
  cujit_array_destroy(r), r = NULL;
  free(mv), free(rv), free(cv);
  cujit_array_destroy(t);
  cujit_array_destroy(cut);
  cujit_array_destroy(m);
  cujit_array_destroy(row);
  cujit_array_destroy(col);
}

static double row_of_3(int64_t i) { return (double)(i % 3) + 0.5; }

/* allclose of a matrix and a row: every row compared with the row, each of its elements
 * changed in turn found. */
static void allclose_of_a_row(void **state) {
  const shape m = {2, {4, 3}}, r = {1, {3}}, c = {2, {4, 1}};
  cujit_array *a = make(CUJIT_TYPE_F32, &m, row_of_3), *row = make(CUJIT_TYPE_F64, &r, row_of_3);
  cujit_array *col = make(CUJIT_TYPE_F32, &c, row_of_3);
  int close = -1, i;
  (void)state;
  assert_ok(cujit_array_allclose(a, row, 1e-5, 1e-8, 0, &close));
  assert_int_equal(close, 1);
  assert_ok(cujit_array_allclose(row, a, 1e-5, 1e-8, 0, &close));
  assert_int_equal(close, 1);
  assert_ok(cujit_array_allclose(a, col, 1e-5, 1e-8, 0, &close)); /* (4, 1): not the rows */
  assert_int_equal(close, 0);
  for (i = 0; i < 12; i++) {
    float v = 9;
    cujit_array *one = NULL, *copy = NULL, *flat = NULL;
    assert_ok(cujit_array_copy(a, &copy));
    assert_ok(cujit_array_reshape(copy, 1, (const int64_t[]){12}, &flat));
    assert_ok(cujit_array_view(flat, i, i + 1, &one));
    assert_ok(cujit_array_fill(one, &v));
    assert_ok(cujit_array_allclose(copy, row, 1e-5, 1e-8, 0, &close));
    if (close != 0) fail_msg("element %d changed, and still close", i);
    cujit_array_destroy(one);
    cujit_array_destroy(flat);
    cujit_array_destroy(copy);
  }
  cujit_array_destroy(a);
  cujit_array_destroy(row);
  cujit_array_destroy(col);
}

/* ---- reductions along axes ---- */

/* The host's reduction of op over the values v (shape s, C order) along the axes marked
 * in red[] into want[] (the kept positions, C order). */
static void reference(cujit_redop op, const double *v, const shape *s, const int *red, double *want,
                      int64_t n_out) {
  int64_t n = count(s), i, pos[MAXD] = {0}, o, *at = calloc((size_t)(n_out ? n_out : 1), 8);
  char *seen = calloc((size_t)(n_out ? n_out : 1), 1);
  for (o = 0; o < n_out; o++) want[o] = op == CUJIT_REDOP_PROD || op == CUJIT_REDOP_ALL ? 1 : 0;
  for (i = 0; i < n; i++, next_pos(s, pos)) {
    int64_t along = 0;
    double x = v[i];
    int d;
    o = 0;
    for (d = 0; d < s->ndim; d++)
      if (red[d])
        along = along * s->s[d] + pos[d];
      else
        o = o * s->s[d] + pos[d];
    switch (op) {
      case CUJIT_REDOP_SUM: want[o] += x; break;
      case CUJIT_REDOP_PROD: want[o] *= x; break;
      case CUJIT_REDOP_ANY: want[o] = want[o] || x != 0; break;
      case CUJIT_REDOP_ALL: want[o] = want[o] && x != 0; break;
      default: {
        int max = op == CUJIT_REDOP_MAX || op == CUJIT_REDOP_ARGMAX;
        double cur = seen[o] ? want[o] : 0;
        int take = !seen[o] || (!isnan(cur) && (isnan(x) || (max ? x > cur : x < cur)));
        if (take) want[o] = x, at[o] = along;
        seen[o] = 1;
      }
    }
  }
  if (op == CUJIT_REDOP_ARGMIN || op == CUJIT_REDOP_ARGMAX)
    for (o = 0; o < n_out; o++) want[o] = (double)at[o];
  free(at);
  free(seen);
}

/* op of a (values v, shape s) along axes, checked against the reference within a relative
 * tolerance tol of the sum of magnitudes (0: exactly). */
static void check_axes(cujit_redop op, const cujit_array *a, const double *v, const shape *s,
                       int naxes, const int *axes, int keepdims, double tol) {
  int red[MAXD] = {0}, d, k;
  shape out = {0, {0}};
  int64_t n_out = 1, o;
  cujit_array *r = NULL;
  double *want, *got, *mag;
  for (k = 0; k < naxes; k++) red[axes[k] < 0 ? axes[k] + s->ndim : axes[k]] = 1;
  for (d = 0; d < s->ndim; d++) {
    if (!red[d]) n_out *= s->s[d];
    if (!red[d] || keepdims) out.s[out.ndim++] = red[d] ? 1 : s->s[d];
  }
  want = calloc((size_t)(n_out ? n_out : 1), sizeof *want);
  mag = calloc((size_t)(n_out ? n_out : 1), sizeof *mag);
  reference(op, v, s, red, want, n_out);
  if (tol > 0) {
    double *av = malloc((size_t)(count(s) ? count(s) : 1) * sizeof *av);
    int64_t i;
    for (i = 0; i < count(s); i++) av[i] = fabs(v[i]);
    reference(CUJIT_REDOP_SUM, av, s, red, mag, n_out);
    free(av);
  }
  if (cujit_array_reduce_axis(op, a, naxes, axes, keepdims, &r) != CUJIT_OK)
    fail_msg("op %d, %d axes: %s", (int)op, naxes, cujit_last_error());
  expect_shape(r, &out);
  got = array_values(r);
  for (o = 0; o < n_out; o++) {
    int same = isnan(want[o]) ? isnan(got[o]) : fabs(got[o] - want[o]) <= tol * mag[o];
    if (!same)
      fail_msg("op %d, %d axes (first %d), keepdims %d: result %lld is %.17g, wanted %.17g",
               (int)op, naxes, naxes ? axes[0] : -99, keepdims, (long long)o, got[o], want[o]);
  }
  free(got);
  free(want);
  free(mag);
  cujit_array_destroy(r);
}

/* Every op along each axis set CuPy's tests take, on (2, 3, 4) arrays of each kind. */
static void reductions_along_axes(void **state) {
  static const int types[] = {CUJIT_TYPE_F32, CUJIT_TYPE_F64, CUJIT_TYPE_I32,
                              CUJIT_TYPE_U8,  CUJIT_TYPE_I64, CUJIT_TYPE_BOOL};
  static const struct {
    int n, axes[3];
  } sets[] = {{1, {0}},    {1, {1}},     {1, {2}},       {1, {-1}}, {1, {-3}},
              {2, {0, 2}}, {2, {-1, 1}}, {3, {0, 1, 2}}, {0, {0}}};
  const shape s = {3, {2, 3, 4}};
  size_t t, k;
  int op, keep;
  (void)state;
  for (t = 0; t < sizeof types / sizeof *types; t++) {
    double (*f)(int64_t) = types[t] == CUJIT_TYPE_U8 ? positive : small;
    cujit_array *a = make(types[t], &s, f), *pa = make(types[t], &s, positive);
    double *v = array_values(a), *pv = array_values(pa);
    for (op = CUJIT_REDOP_SUM; op <= CUJIT_REDOP_ARGMAX; op++)
      for (k = 0; k < sizeof sets / sizeof *sets; k++)
        for (keep = 0; keep < 2; keep++) {
          int arg = op == CUJIT_REDOP_ARGMIN || op == CUJIT_REDOP_ARGMAX;
          if (arg && sets[k].n != 1) continue;
          if (op == CUJIT_REDOP_PROD)
            check_axes((cujit_redop)op, pa, pv, &s, sets[k].n, sets[k].axes, keep, 0);
          else
            check_axes((cujit_redop)op, a, v, &s, sets[k].n, sets[k].axes, keep, 0);
        }
    free(v), free(pv);
    cujit_array_destroy(a);
    cujit_array_destroy(pa);
  }
}

static double nan_at_5(int64_t i) { return i % 12 == 5 ? NAN : small(i); }

/* NaN wins max, min, argmax and argmin (the first NaN's index); a sum as another type;
 * axes of size 0 give the identities; a strided view is reduced as its elements say. */
static void reductions_edges(void **state) {
  const shape s = {2, {4, 12}}, e = {2, {3, 0}}, m = {2, {30, 20}};
  cujit_array *a = make(CUJIT_TYPE_F32, &s, nan_at_5), *z = make(CUJIT_TYPE_F32, &e, small);
  cujit_array *big = make(CUJIT_TYPE_I8, &m, small), *t = NULL, *r = NULL;
  double *v = array_values(a), *got;
  int op, ax;
  (void)state;
  for (op = CUJIT_REDOP_MIN; op <= CUJIT_REDOP_ARGMAX; op++)
    for (ax = -2; ax < 2; ax++)
      if (op != CUJIT_REDOP_PROD && op != CUJIT_REDOP_ANY && op != CUJIT_REDOP_ALL)
        check_axes((cujit_redop)op, a, v, &s, 1, &ax, 0, 0);
  free(v);
  /* (3, 0) along 1: sum 0, prod 1, any false, all true */
  for (op = CUJIT_REDOP_SUM; op <= CUJIT_REDOP_ALL; op++) {
    ax = 1;
    if (op == CUJIT_REDOP_MIN || op == CUJIT_REDOP_MAX) continue;
    assert_ok(cujit_array_reduce_axis((cujit_redop)op, z, 1, &ax, 0, &r));
    got = array_values(r);
    assert_int_equal(cujit_array_size(r), 3);
    assert_true(got[2] == (op == CUJIT_REDOP_PROD || op == CUJIT_REDOP_ALL ? 1 : 0));
    free(got);
    cujit_array_destroy(r), r = NULL;
  }
  /* i8 summed as f64 (NumPy's a.sum(axis=0, dtype=float64)) */
  ax = 0;
  assert_ok(cujit_array_reduce_axis_as(CUJIT_REDOP_SUM, big, 1, &ax, 0, CUJIT_TYPE_F64, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_F64);
  v = array_values(big);
  got = array_values(r);
  {
    double want = 0;
    int i;
    for (i = 0; i < 30; i++) want += v[i * 20 + 7];
    assert_true(got[7] == want);
  }
  free(got);
  cujit_array_destroy(r), r = NULL;
  /* the transpose (20, 30), along each axis */
  assert_ok(cujit_array_transpose(big, &t));
  {
    const shape ts = {2, {20, 30}};
    double *tv = malloc(600 * sizeof *tv);
    int i, j;
    for (i = 0; i < 20; i++)
      for (j = 0; j < 30; j++) tv[i * 30 + j] = v[j * 20 + i];
    for (ax = 0; ax < 2; ax++) {
      check_axes(CUJIT_REDOP_SUM, t, tv, &ts, 1, &ax, 0, 0);
      check_axes(CUJIT_REDOP_ARGMAX, t, tv, &ts, 1, &ax, 1, 0);
    }
    free(tv);
  }
  free(v);
  cujit_array_destroy(t);
  cujit_array_destroy(a);
  cujit_array_destroy(z);
  cujit_array_destroy(big);
}

static double wave(int64_t i) { return (double)((i * 2654435761u) % 2001) / 1000.0 - 1.0; }

/* Arrays large enough that each walk runs in pieces, with and without 16-byte accesses:
 * rows of many elements and few results, columns likewise, a square, odd sizes, and a
 * view that starts one element in (no longer 16-byte aligned). */
static void reductions_of_large_arrays(void **state) {
  static const shape shapes[] = {{2, {3, 1 << 20}}, {2, {1 << 20, 3}},  {2, {2048, 2048}},
                                 {2, {1001, 999}},  {3, {5, 300, 301}}, {2, {64, 1 << 16}}};
  static const int ops[] = {CUJIT_REDOP_SUM, CUJIT_REDOP_MAX, CUJIT_REDOP_ARGMAX,
                            CUJIT_REDOP_ARGMIN};
  size_t k, o;
  int ax;
  (void)state;
  for (k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    cujit_array *a = make(CUJIT_TYPE_F32, &shapes[k], wave);
    double *v = array_values(a);
    for (o = 0; o < sizeof ops / sizeof *ops; o++)
      for (ax = 0; ax < shapes[k].ndim; ax++)
        check_axes((cujit_redop)ops[o], a, v, &shapes[k], 1, &ax, 0,
                   ops[o] == CUJIT_REDOP_SUM ? 1e-5 : 0);
    free(v);
    cujit_array_destroy(a);
  }
  {
    /* (4096, 1025) less its first column: rows that start 4 bytes past 16-byte alignment */
    const shape s = {2, {4096, 1025}}, cut = {2, {4096, 1024}};
    cujit_array *a = make(CUJIT_TYPE_F32, &s, wave), *view = NULL;
    double *v = array_values(a), *cv = malloc((size_t)count(&cut) * sizeof *cv);
    int64_t i, j;
    assert_ok(cujit_array_slice(a, 1, 1, 1025, 1, &view));
    for (i = 0; i < 4096; i++)
      for (j = 0; j < 1024; j++) cv[i * 1024 + j] = v[i * 1025 + j + 1];
    for (ax = 0; ax < 2; ax++) {
      check_axes(CUJIT_REDOP_SUM, view, cv, &cut, 1, &ax, 0, 1e-5);
      check_axes(CUJIT_REDOP_MAX, view, cv, &cut, 1, &ax, 0, 0);
    }
    free(v), free(cv);
    cujit_array_destroy(view);
    cujit_array_destroy(a);
  }
}

static double minus_inf(int64_t i) { return (void)i, -INFINITY; }
static double plus_inf(int64_t i) { return (void)i, INFINITY; }
static double lowest_i8(int64_t i) { return (void)i, -128; }
/* infinities of both signs, and a NaN now and then (twice in some pieces, never in others) */
static double inf_and_nan(int64_t i) {
  return i % 5003 == 4001 || i % 5003 == 4500 ? NAN : (i * 7 % 3 ? -INFINITY : INFINITY);
}

/* argmax and argmin where every element of a piece, or of the whole axis, equals the
 * extreme the walk starts from (-inf for argmax): the first index still wins; and NaNs
 * scattered through pieces: the first NaN's index. Sizes that walk in pieces both ways. */
static void arg_reductions_of_extremes(void **state) {
  static const shape shapes[] = {{2, {3, 1 << 16}},
                                 {2, {1 << 16, 3}},
                                 {2, {1024, 1024}},
                                 {2, {1001, 999}}};
  size_t k;
  int ax;
  (void)state;
  for (k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    cujit_array *lo = make(CUJIT_TYPE_F32, &shapes[k], minus_inf);
    cujit_array *hi = make(CUJIT_TYPE_F32, &shapes[k], plus_inf);
    cujit_array *mixed = make(CUJIT_TYPE_F32, &shapes[k], inf_and_nan);
    cujit_array *i8 = make(CUJIT_TYPE_I8, &shapes[k], lowest_i8);
    double *lv = array_values(lo), *hv = array_values(hi), *mv = array_values(mixed);
    double *iv = array_values(i8);
    for (ax = 0; ax < 2; ax++) {
      check_axes(CUJIT_REDOP_ARGMAX, lo, lv, &shapes[k], 1, &ax, 0, 0);
      check_axes(CUJIT_REDOP_ARGMIN, hi, hv, &shapes[k], 1, &ax, 0, 0);
      check_axes(CUJIT_REDOP_ARGMAX, mixed, mv, &shapes[k], 1, &ax, 0, 0);
      check_axes(CUJIT_REDOP_ARGMIN, mixed, mv, &shapes[k], 1, &ax, 0, 0);
      check_axes(CUJIT_REDOP_ARGMAX, i8, iv, &shapes[k], 1, &ax, 0, 0);
    }
    free(lv), free(hv), free(mv), free(iv);
    cujit_array_destroy(lo);
    cujit_array_destroy(hi);
    cujit_array_destroy(mixed);
    cujit_array_destroy(i8);
  }
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

static const float kSixF32[6] = {-1.17f, -7.92f, 0.59f, -0.15f, 6.22f, 1.56f};
static double six_f32(int64_t i) { return kSixF32[i % 6]; }

/* SUM along an axis into bf16 rounds each element to bf16 first, as cujit_array_reduce_as()
 * does (NumPy's dtype=): rows whose bf16 roundings sum to -0.857 (-0.871 unrounded, 3 bf16
 * ulp away). */
static void sums_into_16_bit_types_along_axes(void **state) {
  const shape s = {2, {3, 6}};
  cujit_array *a = make(CUJIT_TYPE_F32, &s, six_f32), *r = NULL;
  int ax = 1, k;
  float want = 0;
  double *got;
  (void)state;
  for (k = 0; k < 6; k++) want += bf16_of(kSixF32[k]); /* exact in float in any order */
  want = bf16_of(want);
  assert_ok(cujit_array_reduce_axis_as(CUJIT_REDOP_SUM, a, 1, &ax, 0, CUJIT_TYPE_BF16, &r));
  assert_int_equal(cujit_array_type(r), CUJIT_TYPE_BF16);
  got = array_values(r);
  for (k = 0; k < 3; k++)
    if (got[k] != want) fail_msg("row %d summed as bf16: %.9g, want %.9g", k, got[k], (double)want);
  free(got);
  cujit_array_destroy(r);
  cujit_array_destroy(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(broadcasting_as_numpy),
      cmocka_unit_test(broadcasting_strided_views),
      cmocka_unit_test(broadcasting_rows_in_chunks),
      cmocka_unit_test(reductions_along_axes),
      cmocka_unit_test(reductions_edges),
      cmocka_unit_test(reductions_of_large_arrays),
      cmocka_unit_test(arg_reductions_of_extremes),
      cmocka_unit_test(allclose_of_a_row),
      cmocka_unit_test(sums_into_16_bit_types_along_axes),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}
