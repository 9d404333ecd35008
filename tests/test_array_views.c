/* test_array_views - views with a step, transposes and broadcasting, without a device:
 * the strides and shapes views get, what cujit_array_view and cujit_array_reshape give or
 * refuse for a strided view, the checks of cujit_array_slice, and every public function of
 * cujit_array.h that takes an array, called with a strided view: each either takes it (its
 * kernel compiles, the call then fails only for want of a driver, CUJIT_ERROR_NO_DRIVER)
 * or refuses it saying so ("is a strided view"), never anything else; the list of them is
 * checked against the header, so that a new function must be put on one side. Arrays wrap
 * made-up device pointers: no memory is touched. */
#include <ctype.h>

#include "testutil.h"
#include "cujit_array.h"

static cujit_array *wrap(int type, int ndim, const int64_t *shape, CUdeviceptr at) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_wrap(&a, type, ndim, shape, at));
  return a;
}

static cujit_array *slice(const cujit_array *a, int dim, int64_t start, int64_t stop,
                          int64_t step) {
  cujit_array *v = NULL;
  assert_ok(cujit_array_slice(a, dim, start, stop, step, &v));
  return v;
}

static void expect_layout(const cujit_array *v, int ndim, const int64_t *shape,
                          const int64_t *strides, CUdeviceptr data, int contiguous) {
  int d;
  assert_int_equal(cujit_array_ndim(v), ndim);
  for (d = 0; d < ndim; d++) {
    if (cujit_array_shape(v, d) != shape[d] || cujit_array_stride(v, d) != strides[d])
      fail_msg("dimension %d: shape %lld stride %lld, wanted %lld and %lld", d,
               (long long)cujit_array_shape(v, d), (long long)cujit_array_stride(v, d),
               (long long)shape[d], (long long)strides[d]);
  }
  if (cujit_array_data(v) != data)
    fail_msg("data 0x%llx, wanted 0x%llx", (unsigned long long)cujit_array_data(v),
             (unsigned long long)data);
  assert_int_equal(cujit_array_contiguous(v), contiguous);
}

/* a[::2], a[::-1], rows, columns and transposes of a 6 x 8 float matrix at 0x10000. */
static void slices_and_transposes(void **state) {
  const int64_t n = 10, m[] = {6, 8};
  cujit_array *a = wrap(CUJIT_TYPE_F32, 1, &n, 0x10000), *x = wrap(CUJIT_TYPE_F32, 2, m, 0x20000);
  cujit_array *v;
  (void)state;
  v = slice(a, 0, 0, n, 2); /* a[::2] */
  expect_layout(v, 1, (const int64_t[]){5}, (const int64_t[]){2}, 0x10000, 0);
  assert_int_equal(cujit_array_nbytes(v), 20);
  cujit_array_destroy(v);
  v = slice(a, 0, n - 1, -1, -1); /* a[::-1] */
  expect_layout(v, 1, (const int64_t[]){10}, (const int64_t[]){-1}, 0x10000 + 36, 0);
  cujit_array_destroy(v);
  v = slice(a, 0, 3, 7, 1); /* a[3:7]: contiguous */
  expect_layout(v, 1, (const int64_t[]){4}, (const int64_t[]){1}, 0x10000 + 12, 1);
  cujit_array_destroy(v);
  v = slice(a, 0, 9, 0, -4); /* 9, 5, 1 */
  expect_layout(v, 1, (const int64_t[]){3}, (const int64_t[]){-4}, 0x10000 + 36, 0);
  cujit_array_destroy(v);
  v = slice(a, 0, 4, 4, 3); /* empty: contiguous */
  expect_layout(v, 1, (const int64_t[]){0}, (const int64_t[]){1}, 0x10000 + 16, 1);
  cujit_array_destroy(v);
  v = slice(a, 0, 5, 6, 1000); /* one element: its stride does not matter */
  assert_int_equal(cujit_array_size(v), 1);
  assert_int_equal(cujit_array_contiguous(v), 1);
  cujit_array_destroy(v);
  v = slice(x, 0, 1, 4, 1); /* rows 1 to 3: contiguous */
  expect_layout(v, 2, (const int64_t[]){3, 8}, (const int64_t[]){8, 1}, 0x20000 + 32, 1);
  cujit_array_destroy(v);
  v = slice(x, 1, 2, 5, 1); /* columns 2 to 4 */
  expect_layout(v, 2, (const int64_t[]){6, 3}, (const int64_t[]){8, 1}, 0x20000 + 8, 0);
  cujit_array_destroy(v);
  v = slice(x, 1, 7, -1, -2); /* columns 7, 5, 3, 1 */
  expect_layout(v, 2, (const int64_t[]){6, 4}, (const int64_t[]){8, -2}, 0x20000 + 28, 0);
  cujit_array_destroy(v);
  assert_ok(cujit_array_transpose(x, &v));
  expect_layout(v, 2, (const int64_t[]){8, 6}, (const int64_t[]){1, 8}, 0x20000, 0);
  {
    cujit_array *back = NULL;
    assert_ok(cujit_array_transpose(v, &back)); /* the transpose's transpose: x again */
    expect_layout(back, 2, m, (const int64_t[]){8, 1}, 0x20000, 1);
    cujit_array_destroy(back);
  }
  cujit_array_destroy(v);
  assert_ok(cujit_array_transpose(a, &v)); /* 1-D: itself */
  expect_layout(v, 1, &n, (const int64_t[]){1}, 0x10000, 1);
  cujit_array_destroy(v);
  cujit_array_destroy(a);
  cujit_array_destroy(x);
}

static void slice_checks(void **state) {
  const int64_t n = 10;
  cujit_array *a = wrap(CUJIT_TYPE_F32, 1, &n, 0x10000), *v = (cujit_array *)1, *gone;
  (void)state;
  assert_status_detail(cujit_array_slice(a, 1, 0, 1, 1, &v), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_slice: dim is 1; the array has 1 dimension (0 to 0)");
  assert_null(v);
  assert_status_detail(cujit_array_slice(a, -1, 0, 1, 1, &v), CUJIT_ERROR_INVALID_VALUE,
                       "dim is -1");
  assert_status_detail(cujit_array_slice(a, 0, 0, 10, 0, &v), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_slice: the step is 0");
  assert_status_detail(cujit_array_slice(a, 0, 0, 11, 1, &v), CUJIT_ERROR_INVALID_VALUE,
                       "the range 0 to 11 (step 1) leaves dimension 0's 10 elements");
  assert_status_detail(cujit_array_slice(a, 0, 10, -1, -1, &v), CUJIT_ERROR_INVALID_VALUE,
                       "the range 10 to -1 (step -1) leaves");
  assert_status_detail(cujit_array_slice(a, 0, 11, 11, 1, &v), CUJIT_ERROR_INVALID_VALUE,
                       "the range 11 to 11 (step 1) leaves"); /* empty, but past the end */
  assert_status_detail(cujit_array_slice(a, 0, INT64_MIN, INT64_MAX, INT64_MAX, &v),
                       CUJIT_ERROR_INVALID_VALUE, "leaves");
  assert_status_detail(cujit_array_slice(a, 0, 0, 1, 1, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_slice: view is NULL");
  assert_status_detail(cujit_array_transpose(a, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_transpose: view is NULL");
  gone = wrap(CUJIT_TYPE_F32, 1, &n, 0x20000);
  cujit_array_destroy(gone);
  assert_status_detail(cujit_array_slice(gone, 0, 0, 1, 1, &v), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_slice: a is not a live array");
  assert_status_detail(cujit_array_transpose(gone, &v), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_transpose: a is not a live array");
  {
    const int64_t zero = 0;
    cujit_array *e = wrap(CUJIT_TYPE_F32, 1, &zero, 0);
    assert_ok(cujit_array_slice(e, 0, 0, 0, 1, &v)); /* an empty array's empty slice */
    assert_int_equal(cujit_array_size(v), 0);
    cujit_array_destroy(v);
    cujit_array_destroy(e);
  }
  cujit_array_destroy(a);
}

/* A strided view takes a 1-D view or another shape only where its elements are evenly
 * spaced in C order (as NumPy gives a view without a copy); elsewhere it is refused. */
static void views_of_strided_views(void **state) {
  const int64_t m[] = {6, 8}, n = 10;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 2, m, 0x20000), *a = wrap(CUJIT_TYPE_F32, 1, &n, 0x10000);
  cujit_array *col = slice(x, 1, 3, 4, 1), *t = NULL, *v = NULL, *w = NULL;
  cujit_array *even = slice(a, 0, 1, 10, 2);
  (void)state;
  /* a column (6, 1): as (6,) it steps by 8 */
  assert_ok(cujit_array_reshape(col, 1, (const int64_t[]){6}, &v));
  expect_layout(v, 1, (const int64_t[]){6}, (const int64_t[]){8}, 0x20000 + 12, 0);
  assert_ok(cujit_array_view(v, 2, 5, &w)); /* elements 2 to 4 of the column */
  expect_layout(w, 1, (const int64_t[]){3}, (const int64_t[]){8}, 0x20000 + 12 + 64, 0);
  cujit_array_destroy(w);
  assert_ok(cujit_array_reshape(v, 2, (const int64_t[]){2, 3}, &w));
  expect_layout(w, 2, (const int64_t[]){2, 3}, (const int64_t[]){24, 8}, 0x20000 + 12, 0);
  cujit_array_destroy(w);
  cujit_array_destroy(v);
  assert_ok(cujit_array_view(col, 1, 3, &v)); /* the column as 1-D, directly */
  expect_layout(v, 1, (const int64_t[]){2}, (const int64_t[]){8}, 0x20000 + 12 + 32, 0);
  cujit_array_destroy(v);
  /* a[1::2] as (5, 1) and as a 1-D range */
  assert_ok(cujit_array_reshape(even, 2, (const int64_t[]){5, 1}, &v));
  expect_layout(v, 2, (const int64_t[]){5, 1}, (const int64_t[]){2, 2}, 0x10000 + 4, 0);
  cujit_array_destroy(v);
  assert_ok(cujit_array_view(even, 1, 4, &v));
  expect_layout(v, 1, (const int64_t[]){3}, (const int64_t[]){2}, 0x10000 + 12, 0);
  cujit_array_destroy(v);
  /* a transposed matrix as 1-D, or as (4, 12): only a copy has those */
  assert_ok(cujit_array_transpose(x, &t));
  assert_status_detail(cujit_array_reshape(t, 1, (const int64_t[]){48}, &v),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reshape: a is a strided view of shape (8, 6) whose elements "
                       "no view of the new shape holds; make it contiguous with "
                       "cujit_array_copy first");
  assert_null(v);
  assert_status_detail(cujit_array_view(t, 0, 3, &v), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_view: a is a strided view whose elements are not evenly "
                       "spaced in C order");
  /* but (8, 6) -> (8, 3, 2) splits its inner dimension: a view */
  assert_ok(cujit_array_reshape(t, 3, (const int64_t[]){8, 3, 2}, &v));
  expect_layout(v, 3, (const int64_t[]){8, 3, 2}, (const int64_t[]){1, 16, 8}, 0x20000, 0);
  cujit_array_destroy(v);
  /* columns 2 to 4 (6, 3) are not evenly spaced either */
  w = slice(x, 1, 2, 5, 1);
  assert_status_detail(cujit_array_view(w, 0, 4, &v), CUJIT_ERROR_INVALID_VALUE,
                       "not evenly spaced");
  assert_status_detail(cujit_array_reshape(w, 1, (const int64_t[]){18}, &v),
                       CUJIT_ERROR_INVALID_VALUE, "no view of the new shape holds");
  cujit_array_destroy(w);
  cujit_array_destroy(t);
  cujit_array_destroy(col);
  cujit_array_destroy(even);
  cujit_array_destroy(x);
  cujit_array_destroy(a);
}

/* ---- every public function that takes an array, given a strided view ---- */

#define MAX_SEEN 96
static const char *seen[MAX_SEEN];
static size_t n_seen;

static void saw(const char *name) {
  if (n_seen < MAX_SEEN) seen[n_seen++] = name;
}

/* The call `fn` takes the strided view: only the driver is missing. */
static void takes(const char *fn, cujit_status st) {
  saw(fn);
  if (st != CUJIT_ERROR_NO_DRIVER)
    fail_msg("%s: %s (%s), wanted CUJIT_ERROR_NO_DRIVER: it should take a strided view", fn,
             cujit_status_name(st), cujit_last_error());
}

/* The call `fn` refuses the strided view, saying so. */
static void refuses(const char *fn, cujit_status st) {
  saw(fn);
  if (st != CUJIT_ERROR_INVALID_VALUE || !strstr(cujit_last_error(), "is a strided view") ||
      !strstr(cujit_last_error(), "make it contiguous with cujit_array_copy first") ||
      strncmp(cujit_last_error(), fn, strlen(fn)) != 0)
    fail_msg("%s: %s (%s), wanted a refusal of the strided view that names the function", fn,
             cujit_status_name(st), cujit_last_error());
}

/* The call `fn` needs no device and works on the view. */
static void works(const char *fn, cujit_status st) {
  saw(fn);
  if (st != CUJIT_OK) fail_msg("%s: %s (%s)", fn, cujit_status_name(st), cujit_last_error());
}

/* Functions of the header whose arrays are only made, never read: out is set, not taken. */
static const char *const makers[] = {
    "cujit_array_empty",  "cujit_array_zeros",       "cujit_array_full",
    "cujit_array_arange", "cujit_array_from_host",   "cujit_array_wrap",
    "cujit_array_random", "cujit_array_from_dlpack", "cujit_array_from_dlpack_legacy",
};

/* Every function of cujit_array.h that names cujit_array in its declaration was called. */
static void header_functions_all_seen(void) {
  char path[4096], *text, *p;
  FILE *f;
  long size;
  size_t i, missing = 0;
  snprintf(path, sizeof path, "%s/include/cujit_array.h", CUJIT_SOURCE_DIR);
  assert_non_null(f = fopen(path, "rb"));
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = calloc(1, (size_t)size + 1);
  assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  for (p = strstr(text, "CUJIT_API "); p; p = strstr(p + 1, "CUJIT_API ")) {
    char *paren = strchr(p, '('), *end = strchr(p, ';'), *q, name[64];
    size_t len;
    int found = 0;
    if (!paren || !end || paren > end) continue;
    *end = '\0';
    found = strstr(paren, "cujit_array") != NULL;
    *end = ';';
    if (!found) continue; /* takes no array */
    for (q = paren; q > p && isspace((unsigned char)q[-1]); q--) continue;
    len = 0;
    while (q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '_')) q--, len++;
    snprintf(name, sizeof name, "%.*s", (int)len, q);
    found = 0;
    for (i = 0; i < n_seen; i++) found |= strcmp(seen[i], name) == 0;
    for (i = 0; i < sizeof makers / sizeof *makers; i++) found |= strcmp(makers[i], name) == 0;
    if (!found) {
      printf("not called with a strided view: %s\n", name);
      missing++;
    }
  }
  free(text);
  if (missing)
    fail_msg("%zu function(s) of cujit_array.h take an array but are not in this test: add "
             "each, on the side it is on (takes a strided view, or refuses it)",
             missing);
}

static void every_function_takes_or_refuses_a_strided_view(void **state) {
  const int64_t m[] = {6, 8}, n = 24, n6 = 6;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 2, m, 0x20000),
              *flat = wrap(CUJIT_TYPE_F32, 1, &n, 0x30000);
  cujit_array *ints = wrap(CUJIT_TYPE_I64, 1, &n, 0x40000),
              *bools = wrap(CUJIT_TYPE_BOOL, 2, m, 0x50000);
  cujit_array *t = NULL, *s = slice(flat, 0, 0, 12, 2), *si = slice(ints, 0, 23, -1, -4);
  cujit_array *sb = NULL, *out = NULL, *c = wrap(CUJIT_TYPE_F32, 1, &n6, 0x60000);
  cujit_array *zero_d = NULL, *v = NULL;
  cujit_elementwise *k = NULL;
  cujit_reduction *r = NULL;
  cujit_scan *sc = NULL;
  float host[48], one = 1, res;
  int close = -1;
  cujit_arg arg;
  (void)state;
  assert_ok(cujit_array_transpose(x, &t)); /* (8, 6), strides (1, 8) */
  assert_ok(cujit_array_transpose(bools, &sb));
  assert_ok(cujit_array_wrap(&zero_d, CUJIT_TYPE_F32, 0, NULL, 0x70000));
  /* views, properties and streams need no device */
  works("cujit_array_set_stream", cujit_array_set_stream(t, NULL));
  works("cujit_array_slice", cujit_array_slice(t, 0, 0, 8, 3, &v));
  cujit_array_destroy(v);
  works("cujit_array_transpose", cujit_array_transpose(t, &v));
  cujit_array_destroy(v);
  works("cujit_array_view", cujit_array_view(s, 0, 3, &v)); /* refusals: views_of_strided_views */
  cujit_array_destroy(v);
  works("cujit_array_reshape", cujit_array_reshape(s, 2, (const int64_t[]){2, 3}, &v));
  cujit_array_destroy(v);
  saw("cujit_array_type"), assert_int_equal(cujit_array_type(t), CUJIT_TYPE_F32);
  saw("cujit_array_ndim"), assert_int_equal(cujit_array_ndim(t), 2);
  saw("cujit_array_shape"), assert_int_equal(cujit_array_shape(t, 0), 8);
  saw("cujit_array_stride"), assert_int_equal(cujit_array_stride(t, 1), 8);
  saw("cujit_array_size"), assert_int_equal(cujit_array_size(t), 48);
  saw("cujit_array_nbytes"), assert_int_equal(cujit_array_nbytes(t), 192);
  saw("cujit_array_data"), assert_true(cujit_array_data(si) == 0x40000 + 23 * 8);
  saw("cujit_array_stream"), assert_null(cujit_array_stream(t));
  saw("cujit_array_contiguous"), assert_int_equal(cujit_array_contiguous(t), 0);
  /* a launch gets the address of the first element; the kernel must know the strides */
  arg = cujit_array_arg(si);
  saw("cujit_array_arg");
  assert_int_equal(arg.kind, CUJIT_ARG_VALUE);
  assert_true(arg.value.ptr == 0x40000 + 23 * 8);
  /* lent as a DLPack tensor with its strides (a wrapped array's device is the driver's) */
  {
    struct DLManagedTensorVersioned *lent = NULL;
    takes("cujit_array_to_dlpack", cujit_array_to_dlpack(t, 0, &lent));
  }
  /* new arrays, copies, conversions, fills, reads and writes: through the strides */
  takes("cujit_array_empty_like", cujit_array_empty_like(&out, t)); /* contiguous, new */
  takes("cujit_array_read", cujit_array_read(t, host, sizeof host));
  takes("cujit_array_write", cujit_array_write(t, host, sizeof host));
  refuses("cujit_array_read_range", cujit_array_read_range(t, 0, 2, host));
  refuses("cujit_array_write_range", cujit_array_write_range(t, 0, 2, host));
  takes("cujit_array_fill", cujit_array_fill(t, &one));
  takes("cujit_array_copy", cujit_array_copy(t, &out));
  out = s; /* into a strided output */
  takes("cujit_array_copy", cujit_array_copy(c, &out));
  out = NULL;
  takes("cujit_array_astype", cujit_array_astype(t, CUJIT_TYPE_F64, &out));
  /* elementwise operations, strided inputs and outputs, broadcast 0-d arrays */
  takes("cujit_array_binary", cujit_array_binary(CUJIT_BINOP_ADD, t, t, &out));
  takes("cujit_array_binary", cujit_array_binary(CUJIT_BINOP_MUL, t, zero_d, &out));
  out = s;
  takes("cujit_array_binary", cujit_array_binary(CUJIT_BINOP_SUB, c, s, &out));
  out = NULL;
  takes("cujit_array_binary_scalar",
        cujit_array_binary_scalar(CUJIT_BINOP_ADD, t, 2, CUJIT_SCALAR_INT, &out));
  takes("cujit_array_unary", cujit_array_unary(CUJIT_UNOP_SQRT, t, &out));
  takes("cujit_array_map", cujit_array_map(&out, "x * y + 1", 2, (const char *[]){"x", "y"},
                                           (const cujit_array *[]){t, t}));
  takes("cujit_array_where", cujit_array_where(sb, cujit_arr(t), cujit_f32(0), &out));
  takes("cujit_array_if_positive",
        cujit_array_if_positive(t, cujit_arr(t), cujit_arr(zero_d), &out));
  /* indexing and joining */
  takes("cujit_array_take", cujit_array_take(t, si, CUJIT_INDEX_WRAP, &out));
  takes("cujit_array_put", cujit_array_put(t, si, s, CUJIT_INDEX_CLIP));
  takes("cujit_array_concatenate",
        cujit_array_concatenate(3, (const cujit_array *[]){s, c, si}, &out));
  takes("cujit_array_stack", cujit_array_stack(2, (const cujit_array *[]){s, c}, &out));
  /* reductions */
  takes("cujit_array_reduce", cujit_array_reduce(CUJIT_REDOP_SUM, t, &out));
  takes("cujit_array_reduce", cujit_array_reduce(CUJIT_REDOP_ARGMAX, si, &out));
  takes("cujit_array_reduce_as", cujit_array_reduce_as(CUJIT_REDOP_SUM, t, CUJIT_TYPE_F64, &out));
  takes("cujit_array_reduce_axis",
        cujit_array_reduce_axis(CUJIT_REDOP_MAX, t, 1, (const int[]){0}, 0, &out));
  takes("cujit_array_reduce_axis",
        cujit_array_reduce_axis(CUJIT_REDOP_ARGMIN, t, 1, (const int[]){-1}, 1, &out));
  takes("cujit_array_reduce_axis_as",
        cujit_array_reduce_axis_as(CUJIT_REDOP_SUM, t, 1, (const int[]){1}, 0, CUJIT_TYPE_F64,
                                   &out));
  takes("cujit_array_dot", cujit_array_dot(t, t, &out));
  assert_null(out);
  takes("cujit_array_reduce_host",
        cujit_array_reduce_host(CUJIT_REDOP_SUM, t, &res, sizeof res, NULL));
  takes("cujit_array_dot_host", cujit_array_dot_host(t, t, &res, sizeof res, NULL));
  takes("cujit_array_allclose", cujit_array_allclose(t, t, 1e-5, 1e-8, 0, &close));
  takes("cujit_array_allclose_host",
        cujit_array_allclose_host(t, host, sizeof host, 1e-5, 1e-8, 0, &close));
  /* printing reads the elements shown */
  takes("cujit_array_print", cujit_array_print(t, stdout));
  takes("cujit_array_format", cujit_array_format(t, NULL, 0, NULL));
  /* what indexes arrays as x[i] refuses them */
  refuses("cujit_array_cumsum", cujit_array_cumsum(s, 0, &out));
  out = s;
  refuses("cujit_array_cumsum", cujit_array_cumsum(c, 0, &out)); /* a strided output */
  out = NULL;
  assert_ok(cujit_scan_create(&sc, CUJIT_TYPE_F32, "a + b", "0", 0, NULL));
  refuses("cujit_scan_call", cujit_scan_call(sc, s, &out));
  assert_ok(cujit_elementwise_create(&k, "float *x, float *y", "y[i] = x[i]", NULL));
  saw("cujit_arr");
  refuses("cujit_elementwise_call", CUJIT_ELEMENTWISE(k, s, c));
  refuses("cujit_elementwise_call_range", CUJIT_ELEMENTWISE_RANGE(k, 0, 6, 1, c, s));
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]", "float *x", NULL));
  refuses("cujit_reduction_call", CUJIT_REDUCTION(r, &out, s));
  refuses("cujit_reduction_call_host", CUJIT_REDUCTION_HOST(r, &res, s));
  assert_null(out);
  cujit_scan_destroy(sc);
  cujit_elementwise_destroy(k);
  cujit_reduction_destroy(r);
  saw("cujit_array_destroy");
  cujit_array_destroy(t);
  cujit_array_destroy(sb);
  cujit_array_destroy(s);
  cujit_array_destroy(si);
  cujit_array_destroy(x);
  cujit_array_destroy(flat);
  cujit_array_destroy(ints);
  cujit_array_destroy(bools);
  cujit_array_destroy(c);
  cujit_array_destroy(zero_d);
  header_functions_all_seen();
}

/* Broadcasting, NumPy's rule: shapes aligned on their last dimensions, each pair of sizes
 * equal or one of them 1 (stretched); any other pair is refused naming both shapes. */
static void broadcasting(void **state) {
  const int64_t m[] = {4, 4}, n = 4, one = 1, ones[] = {1, 1}, n16 = 16, n3 = 3;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 2, m, 0x10000), *row = wrap(CUJIT_TYPE_F32, 1, &n, 0x20000);
  cujit_array *e = wrap(CUJIT_TYPE_F32, 1, &one, 0x30000),
              *ee = wrap(CUJIT_TYPE_F32, 2, ones, 0x40000);
  cujit_array *flat = wrap(CUJIT_TYPE_F32, 1, &n16, 0x50000), *out = NULL, *b = NULL;
  cujit_array *given14 = wrap(CUJIT_TYPE_F32, 2, (const int64_t[]){1, 4}, 0x60000);
  cujit_array *col = wrap(CUJIT_TYPE_F32, 2, (const int64_t[]){4, 1}, 0x70000);
  cujit_array *three = wrap(CUJIT_TYPE_F32, 1, &n3, 0x80000);
  (void)state;
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_ADD, x, e, &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_MAXIMUM, e, x, &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_MINIMUM, ee, row, &out), CUJIT_ERROR_NO_DRIVER);
  /* (4, 4) with (4,), (4, 1) with (4,) and (1, 4) with (4, 1): each is (4, 4) */
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_ADD, x, row, &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_SUB, col, row, &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_LT, given14, col, &out), CUJIT_ERROR_NO_DRIVER);
  assert_null(out);
  /* (1, 1) with (4,) is (1, 4): an output of (4,) is refused, one of (1, 4) taken */
  out = row;
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, ee, row, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (4,) differs from the result's (1, 4)");
  out = given14;
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_ADD, ee, row, &out), CUJIT_ERROR_NO_DRIVER);
  out = e; /* the single element is not the result */
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, x, e, &out), CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (1,) differs from the result's (4, 4)");
  out = given14; /* an output is not broadcast either: (4, 1) + (4,) is (4, 4) */
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, col, row, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (1, 4) differs from the result's (4, 4)");
  out = NULL;
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, x, three, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_binary: a has shape (4, 4) and b (3,), which do not "
                       "broadcast (NumPy's rule: aligned on their last dimensions, sizes must "
                       "be equal or 1; here 4 and 3)");
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, flat, x, &out),
                       CUJIT_ERROR_INVALID_VALUE, "a has shape (16,) and b (4, 4), which do not");
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_EQ, three, x, &out),
                       CUJIT_ERROR_INVALID_VALUE, "a has shape (3,) and b (4, 4)");
  assert_status_detail(cujit_array_where(e, cujit_arr(x), cujit_arr(three), &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_where: a has shape (4, 4) and b (3,), which do not");
  assert_status_detail(cujit_array_where(three, cujit_arr(x), cujit_f32(0), &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_where: cond has shape (3,) and a (4, 4), which do not");
  assert_int_equal(cujit_array_where(e, cujit_arr(x), cujit_arr(ee), &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_where(row, cujit_arr(col), cujit_f32(0), &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_where(col, cujit_arr(x), cujit_arr(row), &out),
                   CUJIT_ERROR_NO_DRIVER);
  /* allclose: a row against every row of a matrix; (3,) against (4, 4) is refused */
  {
    int close = -1;
    assert_int_equal(cujit_array_allclose(x, row, 1e-5, 1e-8, 0, &close), CUJIT_ERROR_NO_DRIVER);
    assert_status_detail(cujit_array_allclose(x, three, 1e-5, 1e-8, 0, &close),
                         CUJIT_ERROR_INVALID_VALUE, "has shape (4, 4) and b (3,), which do not");
  }
  /* the map: (3,) with (4, 1) is (4, 3); (3,) with (4, 4) is refused */
  assert_int_equal(cujit_array_map(&out, "x * y", 2, (const char *[]){"x", "y"},
                                   (const cujit_array *[]){three, col}),
                   CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(cujit_array_map(&out, "x * y", 2, (const char *[]){"x", "y"},
                                       (const cujit_array *[]){three, x}),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_map: 'x' has shape (3,) and 'y' (4, 4), which do not");
  assert_null(out);
  /* a view of one element of an array broadcasts too: x + b[0:1] */
  assert_ok(cujit_array_view(flat, 5, 6, &b));
  assert_int_equal(cujit_array_binary(CUJIT_BINOP_ADD, flat, b, &out), CUJIT_ERROR_NO_DRIVER);
  cujit_array_destroy(b);
  cujit_array_destroy(x);
  cujit_array_destroy(row);
  cujit_array_destroy(e);
  cujit_array_destroy(ee);
  cujit_array_destroy(flat);
  cujit_array_destroy(given14);
  cujit_array_destroy(col);
  cujit_array_destroy(three);
}

/* Reading, writing and copying an array over memory cujit did not allocate, with no driver
 * loaded yet: each says the driver is missing (each once called the driver's table before
 * it was loaded, and crashed). */
static void moving_without_a_driver(void **state) {
  const int64_t n = 4;
  cujit_array *a = wrap(CUJIT_TYPE_F32, 1, &n, 0x10000), *b = wrap(CUJIT_TYPE_F32, 1, &n, 0x20000);
  float host[4] = {0};
  (void)state;
  assert_int_equal(cujit_array_read(a, host, sizeof host), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_write(a, host, sizeof host), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_copy(a, &b), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_astype(a, CUJIT_TYPE_F32, &b), CUJIT_ERROR_NO_DRIVER);
  cujit_array_destroy(a);
  cujit_array_destroy(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(moving_without_a_driver),
      cmocka_unit_test(slices_and_transposes),
      cmocka_unit_test(slice_checks),
      cmocka_unit_test(views_of_strided_views),
      cmocka_unit_test(broadcasting),
      cmocka_unit_test(every_function_takes_or_refuses_a_strided_view),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1); /* the same on GPU machines */
  return cmocka_run_group_tests(tests, NULL, NULL);
}
