/* test_array_shapes - every shape an array may have, and the ones it may not, swept from
 * sizes at the edges (0, 1, 2, 3, 7, 2^31 - 1, 2^31, 2^32 + 1, 2^40, 2^61, 2^62, 2^62 + 1,
 * 2^63 - 1) in 0 to 4 dimensions: 30,941 shapes. An array is made of a shape when its
 * sizes other than 0 multiply to at most 2^62, an empty one too (NumPy's rule: an empty
 * array's other sizes count); its strides are C order's (a size of 0 counting as 1), and
 * its transpose, reshapes, slices (negative steps among them) and 1-D view have the
 * strides NumPy gives them. The layout functions behind them (strides, C order, reshape
 * without a copy, offsets, the loop over several arrays) are called for every shape
 * directly too. Each sum and product is checked in 128 bits here; the group runs under
 * UndefinedBehaviorSanitizer in scripts/check, so a signed overflow inside fails it.
 * Arrays are made on the checking fake driver (tests/fakedriver): empty ones of every
 * shape, and ones of small sizes only (memory is host memory there). */
#include "testutil.h"
#include "array/array.h"
#include "cujit_array.h"

typedef __int128 wide;

static const int64_t kSizes[] = {0,
                                 1,
                                 2,
                                 3,
                                 7,
                                 ((int64_t)1 << 31) - 1,
                                 (int64_t)1 << 31,
                                 ((int64_t)1 << 32) + 1,
                                 (int64_t)1 << 40,
                                 (int64_t)1 << 61,
                                 (int64_t)1 << 62,
                                 ((int64_t)1 << 62) + 1,
                                 INT64_MAX};
enum { N_SIZES = sizeof kSizes / sizeof *kSizes };
#define LIMIT ((wide)1 << 62)

/* Calls fn for every shape of 0 to 4 dimensions drawn from kSizes. */
static void each_shape(void (*fn)(int ndim, const int64_t *shape, void *user), void *user) {
  int64_t shape[CUJIT_ARRAY_MAX_DIMS];
  int ndim, d, at[CUJIT_ARRAY_MAX_DIMS];
  for (ndim = 0; ndim <= CUJIT_ARRAY_MAX_DIMS; ndim++) {
    for (d = 0; d < ndim; d++) at[d] = 0;
    for (;;) {
      for (d = 0; d < ndim; d++) shape[d] = kSizes[at[d]];
      fn(ndim, shape, user);
      for (d = ndim - 1; d >= 0 && ++at[d] == N_SIZES; d--) at[d] = 0;
      if (d < 0) break;
    }
  }
}

/* ---- the reference, in 128 bits ---- */

/* The product of the sizes other than 0, or -1 past 2^62 (so never an overflow). */
static wide nonzero_product(int ndim, const int64_t *shape) {
  wide p = 1;
  int d;
  for (d = 0; d < ndim; d++) {
    if (shape[d]) p *= shape[d];
    if (p > LIMIT) return -1;
  }
  return p;
}

static int allowed(int ndim, const int64_t *shape) { return nonzero_product(ndim, shape) >= 0; }

static int empty(int ndim, const int64_t *shape) {
  int d;
  for (d = 0; d < ndim; d++)
    if (!shape[d]) return 1;
  return 0;
}

/* C order's strides, a size of 0 counting as 1 (NumPy's). */
static void c_strides(int ndim, const int64_t *shape, int64_t *strides) {
  wide s = 1;
  int d;
  for (d = ndim - 1; d >= 0; d--) {
    assert_true(s <= INT64_MAX);
    strides[d] = (int64_t)s;
    s *= shape[d] ? shape[d] : 1;
  }
}

static void shape_text(int ndim, const int64_t *shape, char *out, size_t size) {
  int d, n = snprintf(out, size, "(");
  for (d = 0; d < ndim; d++)
    n += snprintf(out + n, size - (size_t)n, "%s%lld", d ? ", " : "", (long long)shape[d]);
  snprintf(out + n, size - (size_t)n, ")");
}

/* ---- arrays of every shape ---- */

typedef struct counts {
  long made, refused, views;
} counts;

/* The array's shape and strides are these. */
static void assert_layout(const cujit_array *a, int ndim, const int64_t *shape,
                          const int64_t *strides, const char *what) {
  char text[200];
  int d;
  shape_text(ndim, shape, text, sizeof text);
  if (cujit_array_ndim(a) != ndim) fail_msg("%s of %s: ndim %d", what, text, cujit_array_ndim(a));
  for (d = 0; d < ndim; d++)
    if (cujit_array_shape(a, d) != shape[d] || cujit_array_stride(a, d) != strides[d])
      fail_msg("%s of %s: dimension %d is %lld with stride %lld, not %lld with stride %lld", what,
               text, d, (long long)cujit_array_shape(a, d), (long long)cujit_array_stride(a, d),
               (long long)shape[d], (long long)strides[d]);
}

/* Slices of dimension d: forward, reversed, reversed by a large step, taking one index and
 * taking none, each with NumPy's strides (a slice of no index is C-ordered anew). */
static void slices_of(const cujit_array *a, int ndim, const int64_t *shape, const int64_t *strides,
                      int d, counts *c) {
  int64_t n = shape[d];
  const int64_t cases[][3] = {{0, n, 1},
                              {n - 1, -1, -1},
                              {n - 1, -1, n > 1 ? -(n - 1) : -1},
                              {n - 1, -1, INT64_MIN},
                              {n / 2, n / 2 + 1, 1},
                              {n, n, 1},
                              {0, n, INT64_MAX}};
  size_t i;
  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t start = cases[i][0], stop = cases[i][1], step = cases[i][2];
    int64_t want_shape[CUJIT_ARRAY_MAX_DIMS], want_strides[CUJIT_ARRAY_MAX_DIMS];
    cujit_array *v = NULL;
    wide count;
    count = step > 0 ? (stop > start ? ((wide)stop - start - 1) / step + 1 : 0)
                     : (stop < start ? ((wide)start - stop - 1) / -(wide)step + 1 : 0);
    if (n == 0 && (count || start < 0)) continue; /* no index of it to take */
    memcpy(want_shape, shape, sizeof want_shape);
    memcpy(want_strides, strides, sizeof want_strides);
    want_shape[d] = (int64_t)count;
    if (count == 0)
      c_strides(ndim, want_shape, want_strides);
    else if (count > 1)
      want_strides[d] = (int64_t)((wide)strides[d] * step);
    assert_ok(cujit_array_slice(a, d, start, stop, step, &v));
    assert_layout(v, ndim, want_shape, want_strides, "a slice");
    cujit_array_destroy(v);
    c->views++;
  }
}

static void views_of(const cujit_array *a, int ndim, const int64_t *shape, counts *c) {
  int64_t strides[CUJIT_ARRAY_MAX_DIMS] = {0}, rshape[CUJIT_ARRAY_MAX_DIMS] = {0};
  int64_t rstrides[CUJIT_ARRAY_MAX_DIMS] = {0};
  int64_t size = cujit_array_size(a), one = 1;
  cujit_array *v = NULL;
  int d;
  c_strides(ndim, shape, strides);
  assert_layout(a, ndim, shape, strides, "an array");
  for (d = 0; d < ndim; d++) {
    rshape[d] = shape[ndim - 1 - d];
    rstrides[d] = strides[ndim - 1 - d];
  }
  assert_ok(cujit_array_transpose(a, &v));
  assert_layout(v, ndim, rshape, rstrides, "the transpose");
  for (d = 0; d < ndim; d++) slices_of(v, ndim, rshape, rstrides, d, c);
  cujit_array_destroy(v);
  for (d = 0; d < ndim; d++) slices_of(a, ndim, shape, strides, d, c);
  /* reshaped to 1-D, and to the reversed shape (C order anew) */
  assert_ok(cujit_array_reshape(a, 1, &size, &v));
  assert_layout(v, 1, &size, &one, "a 1-D reshape");
  cujit_array_destroy(v);
  c_strides(ndim, rshape, rstrides);
  assert_ok(cujit_array_reshape(a, ndim, rshape, &v));
  assert_layout(v, ndim, rshape, rstrides, "the reversed reshape");
  cujit_array_destroy(v);
  assert_ok(cujit_array_view(a, 0, size, &v));
  assert_layout(v, 1, &size, &one, "the 1-D view");
  cujit_array_destroy(v);
  c->views += 4 + 2 * ndim;
}

static void make_one(int ndim, const int64_t *shape, void *user) {
  counts *c = user;
  cujit_array *a = NULL;
  char text[200];
  cujit_status st;
  int d, small = 1;
  for (d = 0; d < ndim; d++) small &= shape[d] <= 7;
  if (!empty(ndim, shape) && !small) return; /* its memory would be host memory here */
  st = cujit_array_empty(&a, CUJIT_TYPE_C128, ndim, shape);
  shape_text(ndim, shape, text, sizeof text);
  if (allowed(ndim, shape) != (st == CUJIT_OK))
    fail_msg("shape %s: %s, where NumPy's rule says %s (%s)", text, cujit_status_name(st),
             allowed(ndim, shape) ? "made" : "refused", cujit_last_error());
  if (st != CUJIT_OK) {
    if (!strstr(cujit_last_error(), "2^62")) fail_msg("shape %s: %s", text, cujit_last_error());
    c->refused++;
    return;
  }
  c->made++;
  views_of(a, ndim, shape, c);
  cujit_array_destroy(a);
}

static void arrays_of_every_shape(void **state) {
  counts c = {0, 0, 0};
  int n = 0;
  (void)state;
  if (cujit_device_get_count(&n) != CUJIT_OK || n == 0) {
    test_skip_part("no device and no fake driver (CUJIT_LIBCUDA): %s", cujit_last_error());
    skip();
  }
  each_shape(make_one, &c);
  printf("%ld arrays made (their %ld views checked), %ld shapes refused\n", c.made, c.views,
         c.refused);
  assert_true(c.made > 2000 && c.refused > 6000); /* the sweep ran */
}

/* ---- the layout functions, for every shape ---- */

static void layout_one(int ndim, const int64_t *shape, void *user) {
  int64_t strides[CUJIT_ARRAY_MAX_DIMS] = {0}, want[CUJIT_ARRAY_MAX_DIMS] = {0};
  int64_t flat[CUJIT_ARRAY_MAX_DIMS] = {0};
  int64_t size = 1;
  cj_array a, t;
  cj_plan p;
  const cj_array *arrays[3];
  char text[200];
  int d, meets, across;
  long *seen = user;
  /* C order's strides: for a shape no array has, they are at least never an overflow */
  cj_layout_contiguous(ndim, shape, strides);
  if (!allowed(ndim, shape)) return;
  (*seen)++;
  shape_text(ndim, shape, text, sizeof text);
  c_strides(ndim, shape, want);
  for (d = 0; d < ndim; d++) {
    if (strides[d] != want[d])
      fail_msg("%s: stride %d is %lld, not %lld", text, d, (long long)strides[d],
               (long long)want[d]);
    size *= shape[d];
  }
  assert_true(cj_layout_is_contiguous(ndim, shape, strides));
  assert_int_equal(cj_layout_reshape(ndim, shape, strides, 1, &size, flat), 1);
  assert_int_equal(cj_layout_offset(ndim, shape, strides, 0), 0);
  if (size) assert_int_equal(cj_layout_offset(ndim, shape, strides, size - 1), size - 1);
  /* the loop over it and its transpose (strides reversed), one of them broadcast */
  memset(&a, 0, sizeof a);
  a.ndim = ndim;
  a.size = size;
  memcpy(a.shape, shape, sizeof a.shape);
  memcpy(a.strides, strides, sizeof a.strides);
  t = a;
  for (d = 0; d < ndim; d++) {
    t.shape[d] = shape[ndim - 1 - d];
    t.strides[d] = strides[ndim - 1 - d];
  }
  arrays[0] = NULL;
  arrays[1] = &a;
  arrays[2] = &a;
  cj_plan_make(&p, ndim, shape, 3, arrays, 4u);
  arrays[1] = &t;
  arrays[2] = &t;
  cj_plan_make(&p, ndim, t.shape, 3, arrays, 0u);
  cj_plan_chunks(&p); /* its modulos, for every shape, under the sanitizer */
  cj_layout_reshape(ndim, t.shape, t.strides, 1, &size, flat);
  cj_layout_reshape(ndim, shape, strides, ndim, t.shape, flat);
  /* whether it meets itself and its transpose: the bytes each spans, of 16-byte elements
   * (an answer only where they fit in the address space, as an array's do) */
  a.type = t.type = CUJIT_TYPE_C128;
  a.data = t.data = (CUdeviceptr)1 << 40;
  meets = cj_layout_meet(&a, &a);
  across = cj_layout_meet(&a, &t);
  if (size <= (int64_t)1 << 58) {
    assert_int_equal(meets, size ? CJ_SAME : CJ_APART);
    if (size) assert_int_not_equal(across, CJ_APART);
  }
}

static void layout_functions_of_every_shape(void **state) {
  long seen = 0;
  (void)state;
  each_shape(layout_one, &seen);
  printf("%ld shapes an array may have, of %d\n", seen, 1 + 13 + 169 + 2197 + 28561);
  assert_true(seen > 3000); /* the sweep ran */
}

/* An array of `ndim` dimensions with the given shape and strides, for plans. */
static cj_array strided(int ndim, const int64_t *shape, const int64_t *strides) {
  cj_array a;
  int d;
  memset(&a, 0, sizeof a);
  a.ndim = ndim;
  a.size = 1;
  for (d = 0; d < ndim; d++) {
    a.shape[d] = shape[d];
    a.strides[d] = strides[d];
    a.size *= shape[d];
  }
  return a;
}

/* The chunks a strided loop may move its innermost dimension in: the most elements (a
 * power of two up to 16) that divide the row and every array's step between rows; none
 * where an array steps along the row by other than 1, or the output by 0; an input
 * broadcast along the row (a column) read once a chunk. */
static void chunks_of_strided_plans(void **state) {
  static const struct {
    int64_t shape[2], a_shape[2], a_strides[2], b_shape[2], b_strides[2];
    int a_ndim, b_ndim;
    unsigned chunk, zinner;
  } cases[] = {
      /* (8, 8) + (8,): a row down a matrix */
      {{8, 8}, {8, 8}, {8, 1}, {8}, {1}, 2, 1, 8, 0},
      /* (6, 1) + (6, 32): a column across a matrix */
      {{6, 32}, {6, 1}, {1, 1}, {6, 32}, {32, 1}, 2, 2, 16, 1},
      /* (4, 12) + (12,): rows of 12 */
      {{4, 12}, {4, 12}, {12, 1}, {12}, {1}, 2, 1, 4, 0},
      /* rows of 3 */
      {{5, 3}, {5, 3}, {3, 1}, {3}, {1}, 2, 1, 1, 0},
      /* a row of 16 out of a matrix whose rows are 18 apart */
      {{4, 16}, {4, 16}, {18, 1}, {16}, {1}, 2, 1, 2, 0},
      /* a transposed matrix (steps of 8 along the row) */
      {{8, 8}, {8, 8}, {1, 8}, {8}, {1}, 2, 1, 1, 0},
  };
  size_t k;
  (void)state;
  for (k = 0; k < sizeof cases / sizeof *cases; k++) {
    cj_array a = strided(cases[k].a_ndim, cases[k].a_shape, cases[k].a_strides);
    cj_array b = strided(cases[k].b_ndim, cases[k].b_shape, cases[k].b_strides);
    const cj_array *arrays[3] = {&a, &b, NULL};
    cj_plan p;
    cj_plan_make(&p, 2, cases[k].shape, 3, arrays, 0u);
    assert_int_equal(p.dims, 2);
    cj_plan_chunks(&p);
    if (p.chunk != cases[k].chunk || p.zinner != cases[k].zinner)
      fail_msg("case %zu: chunk %u zinner %u, wanted %u and %u", k, p.chunk, p.zinner,
               cases[k].chunk, cases[k].zinner);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(arrays_of_every_shape),
      cmocka_unit_test(layout_functions_of_every_shape),
      cmocka_unit_test(chunks_of_strided_plans),
  };
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}
