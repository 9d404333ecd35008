/* test_reduce - reductions without a device: the generator's declarations and every call
 * argument are checked before anything launches, each error names what is wrong, an
 * expression that does not compile gives NVRTC's log with the generated source, and every
 * generated reduction kernel compiles for every element type (only the launch then fails,
 * with CUJIT_ERROR_NO_DRIVER). Arrays wrap fake device pointers: no memory is touched. */
#include "testutil.h"
#include "cujit_array.h"

static const int kTypes[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                             CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                             CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                             CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};

/* How each element type is declared in a generator's arguments. */
static const char *decl_name(int type) {
  switch (type) {
    case CUJIT_TYPE_BOOL: return "bool";
    case CUJIT_TYPE_I8: return "int8_t";
    case CUJIT_TYPE_U8: return "uint8_t";
    case CUJIT_TYPE_I16: return "short";
    case CUJIT_TYPE_U16: return "unsigned short";
    case CUJIT_TYPE_I32: return "int";
    case CUJIT_TYPE_U32: return "unsigned";
    case CUJIT_TYPE_I64: return "long long";
    case CUJIT_TYPE_U64: return "uint64_t";
    case CUJIT_TYPE_F16: return "__half";
    case CUJIT_TYPE_BF16: return "__nv_bfloat16";
    case CUJIT_TYPE_F32: return "float";
    case CUJIT_TYPE_F64: return "double";
    case CUJIT_TYPE_C64: return "complex<float>";
    default: return "complex<double>";
  }
}

static cujit_array *fake(int type, int64_t n, CUdeviceptr at) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_wrap(&a, type, 1, &n, at));
  return a;
}

static cujit_array *fake0d(int type) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_wrap(&a, type, 0, NULL, (CUdeviceptr)0x90000));
  return a;
}

static void declaration_errors(void **state) {
  cujit_reduction *r = (cujit_reduction *)1;
  cujit_generator_options o = {0};
  (void)state;
  assert_status_detail(cujit_reduction_create(NULL, CUJIT_TYPE_F32, "0", "a+b", "x[i]", "float *x",
                                              NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_reduction_create: out is NULL");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_PTR, "0", "a+b", "x[i]", "float *x",
                                              NULL),
                       CUJIT_ERROR_INVALID_VALUE, "is not an element type");
  assert_null(r);
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, NULL, "a+b", "x[i]", "float *x",
                                              NULL),
                       CUJIT_ERROR_INVALID_VALUE, "neutral is NULL");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "", "x[i]", "float *x",
                                              NULL),
                       CUJIT_ERROR_INVALID_VALUE, "reduce_expr is empty");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", NULL, "float *x",
                                              NULL),
                       CUJIT_ERROR_INVALID_VALUE, "map_expr is NULL");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]", NULL, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "argument declarations are NULL");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x", "float x", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "\"float x\" declares no array");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]",
                                              "float *x, flaot *y", NULL),
                       CUJIT_ERROR_INVALID_VALUE,
                       "column 11: an element type cujit does not "
                       "know at 'flaot'");
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]",
                                              "float *x, int *x", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "'x' is declared twice");
  o.name = "two words";
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]", "float *x",
                                              &o),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the kernel name \"two words\" is not a C "
                       "identifier");
  assert_null(r);
  cujit_reduction_destroy(NULL);
}

/* PyCUDA's dot product: ReductionKernel(np.float32, neutral="0", reduce_expr="a+b",
 * map_expr="x[i]*y[i]", arguments="float *x, float *y"). */
static cujit_reduction *dot_kernel(void) {
  cujit_reduction *r = NULL;
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                                   "float *x, float *y", NULL));
  return r;
}

static void call_argument_checks(void **state) {
  cujit_reduction *r = dot_kernel();
  cujit_array *x = fake(CUJIT_TYPE_F32, 8, 0x10000), *y = fake(CUJIT_TYPE_F32, 8, 0x20000);
  cujit_array *yi = fake(CUJIT_TYPE_I32, 8, 0x30000), *y9 = fake(CUJIT_TYPE_F32, 9, 0x40000);
  cujit_array *gone = fake(CUJIT_TYPE_F32, 8, 0x50000), *out = NULL;
  cujit_array *out_i = fake0d(CUJIT_TYPE_I32), *out_1d = fake(CUJIT_TYPE_F32, 1, 0x60000);
  const cujit_arg two[] = {cujit_arr(x), cujit_arr(y)};
  float result;
  (void)state;
  cujit_array_destroy(gone);
  assert_status_detail(cujit_reduction_call(r, &out, two, 1), CUJIT_ERROR_INVALID_VALUE,
                       "1 argument given, 2 declared");
  assert_status_detail(cujit_reduction_call(r, &out, NULL, 2), CUJIT_ERROR_INVALID_VALUE,
                       "args is NULL");
  assert_status_detail(CUJIT_REDUCTION(r, &out, x, (cujit_array *)NULL), CUJIT_ERROR_INVALID_VALUE,
                       "argument 2 ('y') is NULL");
  assert_status_detail(CUJIT_REDUCTION(r, &out, x, yi), CUJIT_ERROR_INVALID_VALUE,
                       "argument 2 ('y') is an array of i32, declared as f32");
  assert_status_detail(CUJIT_REDUCTION(r, &out, x, y9), CUJIT_ERROR_INVALID_VALUE,
                       "argument 1 ('x') has shape (8,) and argument 2 ('y') (9,), which do "
                       "not broadcast");
  assert_status_detail(CUJIT_REDUCTION(r, &out, gone, y), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call: argument 1 ('x') is not a live array");
  assert_status_detail(CUJIT_REDUCTION_HOST(r, &result, x, gone), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call_host: argument 2 ('y') is not a live array");
  assert_status_detail(CUJIT_REDUCTION(r, NULL, x, y), CUJIT_ERROR_INVALID_VALUE, "out is NULL");
  assert_status_detail(CUJIT_REDUCTION_HOST(r, NULL, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "result is NULL");
  assert_status_detail(CUJIT_REDUCTION(NULL, &out, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "the reduction is NULL");
  assert_status_detail(CUJIT_REDUCTION(r, &out_i, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds i32, the result is f32");
  assert_status_detail(CUJIT_REDUCTION(r, &out_1d, x, y), CUJIT_ERROR_INVALID_VALUE,
                       "the output has 1 dimensions; a reduction's result is 0-d");
  assert_null(out);
  /* Right arguments: compiled, then refused for want of a driver. */
  assert_status_detail(CUJIT_REDUCTION(r, &out, x, y), CUJIT_ERROR_NO_DRIVER, "");
  assert_null(out);
  assert_status_detail(CUJIT_REDUCTION_HOST(r, &result, x, y), CUJIT_ERROR_NO_DRIVER, "");
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(yi);
  cujit_array_destroy(y9);
  cujit_array_destroy(out_i);
  cujit_array_destroy(out_1d);
}

/* A generated kernel takes at most 64 arguments: a call of a reduction declaring more is
 * refused before anything compiles. */
static void at_most_64_arguments(void **state) {
  cujit_reduction *r = NULL;
  cujit_array *x = fake(CUJIT_TYPE_F32, 8, 0x10000), *out = NULL;
  cujit_arg args[65];
  char decl[65 * 16] = "";
  size_t k, used = 0;
  (void)state;
  for (k = 0; k < 65; k++) {
    used += (size_t)snprintf(decl + used, sizeof decl - used, "%sfloat *x%zu", k ? ", " : "", k);
    args[k] = cujit_arr(x);
  }
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x0[i]", decl, NULL));
  assert_status_detail(cujit_reduction_call(r, &out, args, 65), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call: 65 arguments declared; a generated kernel takes at "
                       "most 64");
  assert_null(out);
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
}

/* Scalars are values, in declaration order, between the arrays, converted to their
 * declared types or refused. */
static void scalar_arguments(void **state) {
  cujit_reduction *r = NULL;
  cujit_array *x = fake(CUJIT_TYPE_F64, 100, 0x10000), *y = fake(CUJIT_TYPE_F64, 100, 0x20000);
  double a = 2.0, result;
  int k = 3;
  (void)state;
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F64, "0", "a+b", "s*x[i] + y[i]*k",
                                   "const double s, const double *x, double *y, int k", NULL));
  assert_status_detail(CUJIT_REDUCTION_HOST(r, &result, a, x, y, k), CUJIT_ERROR_NO_DRIVER, "");
  assert_status_detail(CUJIT_REDUCTION_HOST(r, &result, 2.0f, x, y, 3.0), CUJIT_ERROR_NO_DRIVER,
                       "");
  assert_status_detail(CUJIT_REDUCTION_HOST(r, &result, a, x, y, 2.5), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call_host: argument 4 ('k') "
                       "is declared int and was given a double (f64) 2.5: not an integer");
  assert_status_detail(CUJIT_REDUCTION(r, &x, x, x, y, k), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_call: argument 1 ('s') is declared double and was "
                       "given an array: an array for a scalar parameter");
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
}

static void array_reduce_checks(void **state) {
  cujit_array *a = fake(CUJIT_TYPE_F32, 8, 0x10000), *c = fake(CUJIT_TYPE_C64, 8, 0x20000);
  cujit_array *empty = fake(CUJIT_TYPE_I32, 0, 0), *b = fake(CUJIT_TYPE_F32, 9, 0x30000);
  cujit_array *gone = fake(CUJIT_TYPE_F32, 8, 0x40000), *out = NULL;
  cujit_array *out_f64 = fake0d(CUJIT_TYPE_F64), *out_1d = fake(CUJIT_TYPE_I64, 1, 0x50000);
  (void)state;
  cujit_array_destroy(gone);
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, NULL, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce: a is NULL");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, gone, &out), CUJIT_ERROR_INVALID_VALUE,
                       "a is not a live array");
  assert_status_detail(cujit_array_reduce((cujit_redop)99, a, &out), CUJIT_ERROR_INVALID_VALUE,
                       "op is 99; use CUJIT_REDOP_SUM, _MIN, _MAX, _PROD, _ANY, _ALL, _ARGMIN or "
                       "_ARGMAX");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_MIN, c, &out), CUJIT_ERROR_INVALID_VALUE,
                       "complex numbers have no order, so no min");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_MAX, empty, &out), CUJIT_ERROR_INVALID_VALUE,
                       "the max of an empty array is undefined");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, a, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "out is NULL");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, a, &out_f64), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds f64, the result is f32");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, empty, &out_1d),
                       CUJIT_ERROR_INVALID_VALUE, "the output has 1 dimensions");
  assert_status_detail(cujit_array_dot(a, b, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_dot: a has shape (8,) and b (9,)");
  assert_status_detail(cujit_array_dot(a, gone, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_dot: b is not a live array");
  assert_status_detail(cujit_array_dot(a, a, &out_f64), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds f64, the result is f32");
  assert_null(out);
  /* An empty sum is fine: it needs the device only to store its 0. */
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, empty, &out), CUJIT_ERROR_NO_DRIVER, "");
  cujit_array_destroy(a);
  cujit_array_destroy(b);
  cujit_array_destroy(c);
  cujit_array_destroy(empty);
  cujit_array_destroy(out_f64);
  cujit_array_destroy(out_1d);
}

/* The sum, min and max kernels of every type, the dot kernels of each type with itself and
 * with f32, and a generated reduction of every type compile: only the launch fails. */
static void every_kernel_compiles(void **state) {
  size_t t;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    int type = kTypes[t], complex = type == CUJIT_TYPE_C64 || type == CUJIT_TYPE_C128;
    cujit_array *a = fake(type, 1000, 0x10000), *f = fake(CUJIT_TYPE_F32, 1000, 0x20000);
    cujit_array *out = NULL;
    cujit_reduction *r = NULL;
    char args[64];
    unsigned char result[16];
    assert_status_detail(cujit_array_reduce(CUJIT_REDOP_SUM, a, &out), CUJIT_ERROR_NO_DRIVER, "");
    if (!complex) {
      assert_status_detail(cujit_array_reduce(CUJIT_REDOP_MIN, a, &out), CUJIT_ERROR_NO_DRIVER, "");
      assert_status_detail(cujit_array_reduce(CUJIT_REDOP_MAX, a, &out), CUJIT_ERROR_NO_DRIVER, "");
    }
    assert_status_detail(cujit_array_dot(a, a, &out), CUJIT_ERROR_NO_DRIVER, "");
    assert_status_detail(cujit_array_dot(a, f, &out), CUJIT_ERROR_NO_DRIVER, "");
    snprintf(args, sizeof args, "const %s *x", decl_name(type));
    assert_ok(cujit_reduction_create(&r, type, "0", "a+b", "x[i]", args, NULL));
    assert_status_detail(CUJIT_REDUCTION_HOST(r, result, a), CUJIT_ERROR_NO_DRIVER, "");
    cujit_reduction_destroy(r);
    cujit_array_destroy(a);
    cujit_array_destroy(f);
  }
}

/* The reductions added to sum, min and max, and sums with a type of their own: their
 * checks, and that every kernel compiles for every type, of contiguous arrays and of
 * strided views (a transposed matrix; a reversed view). A strided view's kernel is the same
 * source for a reversed view as for a transposed matrix but for the number of dimensions
 * of its loop (cj_lay<1, n> or cj_lay<2, n>), whatever the operation and type: so every
 * type's kernels are compiled for the transposed matrix, and a real and a complex type's
 * for the reversed view too. */
static void more_reductions(void **state) {
  const int64_t m[] = {5, 7};
  cujit_array *c = fake(CUJIT_TYPE_C64, 8, 0x10000), *empty = fake(CUJIT_TYPE_F32, 0, 0);
  cujit_array *a = fake(CUJIT_TYPE_I8, 8, 0x20000), *out = NULL, *out_i32 = fake0d(CUJIT_TYPE_I32);
  cujit_array *out_bool = fake0d(CUJIT_TYPE_BOOL);
  size_t t;
  int op;
  (void)state;
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_ARGMIN, c, &out), CUJIT_ERROR_INVALID_VALUE,
                       "complex numbers have no order, so no argmin");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_ARGMAX, empty, &out),
                       CUJIT_ERROR_INVALID_VALUE, "the argmax of an empty array is undefined");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_ARGMAX, a, &out_i32),
                       CUJIT_ERROR_INVALID_VALUE, "the output holds i32, the result is i64");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_PROD, a, &out_bool),
                       CUJIT_ERROR_INVALID_VALUE, "the output holds b8, the result is i64");
  assert_status_detail(cujit_array_reduce(CUJIT_REDOP_ANY, a, &out_i32), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds i32, the result is b8");
  assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_MAX, a, CUJIT_TYPE_I64, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce_as: op is 2; a reduction with a type of its own is "
                       "CUJIT_REDOP_SUM or CUJIT_REDOP_PROD");
  assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_SUM, a, CUJIT_TYPE_PTR, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce_as: type 12 is not an element type arrays hold");
  assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_SUM, c, CUJIT_TYPE_F64, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_reduce_as: a holds c64 and type is f64, which would drop "
                       "the imaginary parts");
  assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_SUM, a, CUJIT_TYPE_I64, &out_i32),
                       CUJIT_ERROR_INVALID_VALUE, "the output holds i32, the result is i64");
  assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_SUM, NULL, CUJIT_TYPE_I64, &out),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_reduce_as: a is NULL");
  /* empty arrays: a product of 1, ANY false, ALL true (the device stores them) */
  for (op = CUJIT_REDOP_PROD; op <= CUJIT_REDOP_ALL; op++)
    assert_status_detail(cujit_array_reduce(op, empty, &out), CUJIT_ERROR_NO_DRIVER, "");
  assert_null(out);
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    int type = kTypes[t], complex = type == CUJIT_TYPE_C64 || type == CUJIT_TYPE_C128;
    cujit_array *x = fake(type, 1000, 0x10000), *mat = NULL, *rev = NULL, *tr = NULL;
    assert_ok(cujit_array_wrap(&mat, type, 2, m, 0x40000));
    assert_ok(cujit_array_slice(x, 0, 999, -1, -1, &rev));
    assert_ok(cujit_array_transpose(mat, &tr));
    int reversed_too = type == CUJIT_TYPE_F32 || type == CUJIT_TYPE_C64;
    for (op = CUJIT_REDOP_SUM; op <= CUJIT_REDOP_ARGMAX; op++) {
      if (complex && (op == CUJIT_REDOP_MIN || op == CUJIT_REDOP_MAX || op >= CUJIT_REDOP_ARGMIN))
        continue;
      if (cujit_array_reduce(op, x, &out) != CUJIT_ERROR_NO_DRIVER ||
          cujit_array_reduce(op, tr, &out) != CUJIT_ERROR_NO_DRIVER ||
          (reversed_too && cujit_array_reduce(op, rev, &out) != CUJIT_ERROR_NO_DRIVER))
        fail_msg("reduction %d of type %d: %s", op, type, cujit_last_error());
    }
    assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_SUM, x,
                                               complex ? CUJIT_TYPE_C128 : CUJIT_TYPE_F64, &out),
                         CUJIT_ERROR_NO_DRIVER, "");
    assert_status_detail(cujit_array_reduce_as(CUJIT_REDOP_PROD, tr,
                                               complex ? CUJIT_TYPE_C64 : CUJIT_TYPE_I64, &out),
                         CUJIT_ERROR_NO_DRIVER, "");
    if (reversed_too) /* one array strided, the other contiguous */
      assert_status_detail(cujit_array_dot(rev, x, &out), CUJIT_ERROR_NO_DRIVER, "");
    assert_status_detail(cujit_array_dot(tr, tr, &out), CUJIT_ERROR_NO_DRIVER, "");
    assert_null(out);
    cujit_array_destroy(x);
    cujit_array_destroy(mat);
    cujit_array_destroy(rev);
    cujit_array_destroy(tr);
  }
  cujit_array_destroy(c);
  cujit_array_destroy(empty);
  cujit_array_destroy(a);
  cujit_array_destroy(out_i32);
  cujit_array_destroy(out_bool);
}

/* A preamble and a kernel name; the largest magnitude (PyCUDA's max-of-abs example). */
static void preamble_and_name(void **state) {
  cujit_generator_options o = {0};
  cujit_reduction *r = NULL;
  cujit_array *x = fake(CUJIT_TYPE_F32, 10, 0x10000);
  float result;
  (void)state;
  o.name = "max_abs";
  o.preamble = "__device__ float magnitude(float v) { return fabsf(v); }";
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "fmaxf(a, b)", "magnitude(x[i])",
                                   "float *x", &o));
  assert_status_detail(CUJIT_REDUCTION_HOST(r, &result, x), CUJIT_ERROR_NO_DRIVER, "");
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
}

static void compile_error_message(void **state) {
  cujit_reduction *r = NULL;
  cujit_array *x = fake(CUJIT_TYPE_F32, 10, 0x10000), *out = NULL;
  (void)state;
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i] * undeclared_thing",
                                   "float *x", NULL));
  assert_status_detail(CUJIT_REDUCTION(r, &out, x), CUJIT_ERROR_COMPILE,
                       "'reduction' did not compile");
  assert_non_null(strstr(cujit_last_error(), "undeclared_thing"));
  assert_non_null(strstr(cujit_last_error(), "is undefined")); /* NVRTC's own words */
  assert_non_null(strstr(cujit_last_error(), "the generated source:\n   1 | "));
  assert_non_null(strstr(cujit_last_error(), "cj_as((x[i] * undeclared_thing))"));
  assert_null(out);
  cujit_reduction_destroy(r);
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a +* b", "x[i]", "float *x", NULL));
  assert_status_detail(CUJIT_REDUCTION(r, &out, x), CUJIT_ERROR_COMPILE, "return (a +* b);");
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
}

int main(void) {
  /* the same everywhere: on a GPU machine too, no driver is loaded */
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(declaration_errors),    cmocka_unit_test(call_argument_checks),
      cmocka_unit_test(at_most_64_arguments),  cmocka_unit_test(scalar_arguments),
      cmocka_unit_test(array_reduce_checks),   cmocka_unit_test(preamble_and_name),
      cmocka_unit_test(compile_error_message), cmocka_unit_test(every_kernel_compiles),
      cmocka_unit_test(more_reductions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
