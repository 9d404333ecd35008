/* test_array_ops - array operations without a device: type promotion as NumPy 2 gives it,
 * the declaration reader's errors (column and token), argument checks of the generator
 * and of the operations (where, if_positive, take, put, concatenate and stack included),
 * and that the kernel of every operation and element type compiles (only the launch
 * fails, for want of a driver). */
#include <math.h>

#include "testutil.h"
#include "cujit_array.h"

static void promotion_follows_numpy(void **state) {
  static const struct {
    int a, b, weak, want;
  } cases[] = {
      {CUJIT_TYPE_F32, CUJIT_TYPE_F32, 0, CUJIT_TYPE_F32},
      {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8, 0, CUJIT_TYPE_I8},
      {CUJIT_TYPE_I8, CUJIT_TYPE_U8, 0, CUJIT_TYPE_I16},
      {CUJIT_TYPE_I32, CUJIT_TYPE_U32, 0, CUJIT_TYPE_I64},
      {CUJIT_TYPE_I64, CUJIT_TYPE_U64, 0, CUJIT_TYPE_F64},
      {CUJIT_TYPE_U8, CUJIT_TYPE_I64, 0, CUJIT_TYPE_I64},
      {CUJIT_TYPE_I8, CUJIT_TYPE_F16, 0, CUJIT_TYPE_F16},
      {CUJIT_TYPE_I16, CUJIT_TYPE_F16, 0, CUJIT_TYPE_F32},
      {CUJIT_TYPE_I32, CUJIT_TYPE_F32, 0, CUJIT_TYPE_F64},
      {CUJIT_TYPE_I16, CUJIT_TYPE_F32, 0, CUJIT_TYPE_F32},
      {CUJIT_TYPE_F16, CUJIT_TYPE_BF16, 0, CUJIT_TYPE_F32},
      {CUJIT_TYPE_F32, CUJIT_TYPE_F64, 0, CUJIT_TYPE_F64},
      {CUJIT_TYPE_C64, CUJIT_TYPE_F64, 0, CUJIT_TYPE_C128},
      {CUJIT_TYPE_C64, CUJIT_TYPE_I32, 0, CUJIT_TYPE_C128},
      {CUJIT_TYPE_C64, CUJIT_TYPE_F16, 0, CUJIT_TYPE_C64},
      {CUJIT_TYPE_F16, CUJIT_TYPE_F64, 1, CUJIT_TYPE_F16}, /* 2.0 * f16 stays f16 */
      {CUJIT_TYPE_I8, CUJIT_TYPE_I64, 1, CUJIT_TYPE_I8},   /* 3 * i8 stays i8 */
      {CUJIT_TYPE_I8, CUJIT_TYPE_F64, 1, CUJIT_TYPE_F64},  /* 2.5 * i8 is f64 */
      {CUJIT_TYPE_BOOL, CUJIT_TYPE_I64, 1, CUJIT_TYPE_I64},
      {CUJIT_TYPE_F32, CUJIT_TYPE_C128, 1, CUJIT_TYPE_C64},
      {CUJIT_TYPE_F64, CUJIT_TYPE_C128, 1, CUJIT_TYPE_C128},
      {CUJIT_TYPE_PTR, CUJIT_TYPE_F32, 0, CUJIT_TYPE_BYTES},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    int got = cujit_type_promote(cases[i].a, cases[i].b, cases[i].weak);
    if (got != cases[i].want)
      fail_msg("promote(%d, %d, weak %d) = %d, want %d", cases[i].a, cases[i].b, cases[i].weak, got,
               cases[i].want);
    if (!cases[i].weak && (int)cujit_type_promote(cases[i].b, cases[i].a, 0) != got)
      fail_msg("promote(%d, %d) is not symmetric", cases[i].a, cases[i].b);
  }
}

static void declarations_are_read_or_refused(void **state) {
  cujit_elementwise *k = NULL;
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "float a, float *x, float b, float *y, float *z",
                                     "z[i] = a*x[i] + b*y[i]", NULL));
  cujit_elementwise_destroy(k);
  assert_ok(cujit_elementwise_create(&k,
                                     " const unsigned long long *n ,double*d, "
                                     "cuda::std::complex<float> *c, __half h",
                                     "n[i] = 1", NULL));
  cujit_elementwise_destroy(k);
  k = NULL;
  assert_status_detail(cujit_elementwise_create(&k, "float a, flaot *x", "x[i] = a", NULL),
                       CUJIT_ERROR_INVALID_VALUE,
                       "column 10: an element type cujit does not know at 'flaot'");
  assert_status_detail(cujit_elementwise_create(&k, "float *x, float", "x[i] = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "a name without a type");
  assert_status_detail(cujit_elementwise_create(&k, "float **x", "x[i] = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "column 8: a pointer to a pointer");
  assert_status_detail(cujit_elementwise_create(&k, "float *x, int x", "x[i] = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "'x' is declared twice");
  assert_status_detail(cujit_elementwise_create(&k, "float a", "a = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "declares no array");
  assert_status_detail(cujit_elementwise_create(&k, "float *x; int y", "x[i] = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "column 9: an unexpected character");
  assert_status_detail(cujit_elementwise_create(&k, "float *x y", "x[i] = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "a word after the name");
  assert_status_detail(cujit_elementwise_create(&k, "", "x[i] = 0", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "argument declarations are empty");
  assert_status_detail(cujit_elementwise_create(&k, "float *x", "", NULL),
                       CUJIT_ERROR_INVALID_VALUE, "the operation is empty");
  assert_status_detail(cujit_elementwise_create(&k, "float *x", "x[i] = 0",
                                                &(cujit_generator_options){.name = "2bad"}),
                       CUJIT_ERROR_INVALID_VALUE, "'2bad' is not a C identifier");
  assert_null(k);
}

static const int64_t kN = 8;

static cujit_array *wrap(int type, CUdeviceptr p) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_wrap(&a, type, 1, &kN, p));
  return a;
}

static void generator_arguments_are_checked(void **state) {
  cujit_elementwise *k = NULL;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 0x1000), *y = wrap(CUJIT_TYPE_F32, 0x2000);
  cujit_array *d = wrap(CUJIT_TYPE_F64, 0x3000), *z = NULL;
  int64_t n9 = 9;
  float a = 2, b = 3;
  (void)state;
  assert_ok(cujit_array_wrap(&z, CUJIT_TYPE_F32, 1, &n9, 0x4000));
  assert_ok(cujit_elementwise_create(&k, "float a, float *x, float b, float *y, float *z",
                                     "z[i] = a*x[i] + b*y[i]",
                                     &(cujit_generator_options){.name = "lin_comb"}));
  assert_status_detail(CUJIT_ELEMENTWISE(k, a, x, b, y), CUJIT_ERROR_INVALID_VALUE,
                       "4 arguments given, 5 declared");
  assert_status_detail(CUJIT_ELEMENTWISE(k, a, x, b, d, y), CUJIT_ERROR_INVALID_VALUE,
                       "argument 4 ('y') is an array of f64, declared as f32");
  assert_status_detail(CUJIT_ELEMENTWISE(k, a, x, b, y, z), CUJIT_ERROR_INVALID_VALUE,
                       "argument 2 ('x') has shape (8,) and argument 5 ('z') (9,), which do "
                       "not broadcast");
  assert_status_detail(CUJIT_ELEMENTWISE_RANGE(k, 2, 10, 1, a, x, b, y, y),
                       CUJIT_ERROR_INVALID_VALUE, "the range 2 to 10 (step 1) leaves");
  assert_status_detail(cujit_elementwise_call(k, NULL, 5), CUJIT_ERROR_INVALID_VALUE,
                       "args is NULL");
  /* right arguments: the kernel compiles, only the launch needs a driver */
  assert_int_equal(CUJIT_ELEMENTWISE(k, a, x, b, y, y), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE_RANGE(k, 7, -1, -2, a, x, b, y, y), CUJIT_ERROR_NO_DRIVER);
  /* the same as an array of arguments */
  assert_int_equal(cujit_elementwise_call(k,
                                          (const cujit_arg[]){cujit_f32(a), cujit_arr(x),
                                                              cujit_f32(b), cujit_arr(y),
                                                              cujit_arr(y)},
                                          5),
                   CUJIT_ERROR_NO_DRIVER);
  /* ranges at the ends of int64: one index (0), counted without overflow, so it launches */
  assert_int_equal(CUJIT_ELEMENTWISE_RANGE(k, 0, INT64_MAX, INT64_MAX, a, x, b, y, y),
                   CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(CUJIT_ELEMENTWISE_RANGE(k, 7, INT64_MIN, INT64_MIN, a, x, b, y, y),
                       CUJIT_ERROR_INVALID_VALUE,
                       "leaves the arrays' 8 elements"); /* 7, then 7 - 2^63 */
  cujit_array_destroy(z);
  assert_status_detail(CUJIT_ELEMENTWISE(k, a, x, b, y, z), CUJIT_ERROR_INVALID_VALUE,
                       "argument 5 ('z') is not a live array");
  cujit_elementwise_destroy(k);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(d);
}

/* Runs one elementwise call of a kernel declared "<decl> s, float *x" with argument `s`:
 * CUJIT_ERROR_NO_DRIVER means it was taken (converted), anything else is the refusal. */
static cujit_status call_with(const char *decl, cujit_arg s) {
  char decls[64];
  cujit_elementwise *k = NULL;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 0x1000);
  cujit_status st;
  snprintf(decls, sizeof decls, "%s s, float *x", decl);
  assert_ok(cujit_elementwise_create(&k, decls, "x[i] = 0", NULL));
  st = CUJIT_ELEMENTWISE(k, s, x);
  cujit_elementwise_destroy(k);
  cujit_array_destroy(x);
  return st;
}

static void taken(const char *decl, cujit_arg s) {
  cujit_status st = call_with(decl, s);
  if (st != CUJIT_ERROR_NO_DRIVER)
    fail_msg("%s refused a value of type %d: %s", decl, s.type, cujit_last_error());
}

/* What a scalar of each type is converted to, and what is refused with a message that
 * names the argument, both types and the value. */
static void scalars_are_converted_or_refused(void **state) {
  (void)state;
  /* exact or rounded to nearest, as C converts to a prototyped parameter */
  taken("float", cujit_f64(0.1));
  taken("float", cujit_i32(5));
  taken("float", cujit_u64(UINT64_MAX));
  taken("float", cujit_f64(INFINITY));
  taken("float", cujit_f64(NAN));
  taken("float", cujit_f64(3.4028235e38)); /* rounds to FLT_MAX */
  taken("double", cujit_f32(1.5f));
  taken("double", cujit_i64(INT64_MIN));
  taken("int", cujit_f64(-7.0));
  taken("int", cujit_i64(INT32_MIN));
  taken("unsigned char", cujit_i32(255));
  taken("long long", cujit_f64(-0x1p63));
  taken("unsigned long long", cujit_f64(0x1.fffffffffffffp63));
  taken("bool", cujit_i32(1));
  taken("bool", cujit_bool(0));
  taken("__half", cujit_f64(65504));
  taken("__half", cujit_i64(-2048));
  taken("__nv_bfloat16", cujit_u64(UINT64_MAX));
  taken("complex<float>", cujit_f64(2.5));
  taken("complex<double>", cujit_c64(1, -1));
  taken("complex<float>", cujit_c128(1e30, 1e-30));
  taken("__half", cujit_value((const uint16_t[]){0x3c00}, 2)); /* a __half's bits */
  /* refused, naming the argument, both types and the value */
  assert_status_detail(call_with("float", cujit_f64(1e300)), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_call: argument 1 ('s') is declared float and was "
                       "given a double (f64) 1.0000000000000001e+300: beyond the parameter "
                       "type's range");
  assert_status_detail(call_with("float", cujit_f64(0x1.ffffffp127)), /* rounds up past it */
                       CUJIT_ERROR_INVALID_VALUE, "beyond the parameter type's range");
  assert_status_detail(call_with("unsigned char", cujit_i32(300)), CUJIT_ERROR_INVALID_VALUE,
                       "declared unsigned char and was given an int (i32) 300: out of the "
                       "parameter type's range");
  assert_status_detail(call_with("unsigned int", cujit_i32(-1)), CUJIT_ERROR_INVALID_VALUE,
                       "given an int (i32) -1: out of the parameter type's range");
  assert_status_detail(call_with("long long", cujit_u64(UINT64_MAX)), CUJIT_ERROR_INVALID_VALUE,
                       "18446744073709551615: out of the parameter type's range");
  assert_status_detail(call_with("long long", cujit_f64(0x1p63)), CUJIT_ERROR_INVALID_VALUE,
                       "out of the parameter type's range");
  assert_status_detail(call_with("int", cujit_f32(2.5f)), CUJIT_ERROR_INVALID_VALUE,
                       "declared int and was given a float (f32) 2.5: not an integer");
  assert_status_detail(call_with("int", cujit_f64(NAN)), CUJIT_ERROR_INVALID_VALUE,
                       "not an integer");
  assert_status_detail(call_with("bool", cujit_i32(2)), CUJIT_ERROR_INVALID_VALUE,
                       "a bool takes 0 and 1");
  assert_status_detail(call_with("__half", cujit_f64(65520)), CUJIT_ERROR_INVALID_VALUE,
                       "declared __half and was given a double (f64) 65520: beyond");
  assert_status_detail(call_with("__half", cujit_i32(70000)), CUJIT_ERROR_INVALID_VALUE,
                       "beyond the parameter type's range");
  assert_status_detail(call_with("float", cujit_c64(1, 2)), CUJIT_ERROR_INVALID_VALUE,
                       "was given a complex float (c64) (1, 2): a complex value for a real "
                       "parameter");
  assert_status_detail(call_with("int", cujit_c128(1, 0)), CUJIT_ERROR_INVALID_VALUE,
                       "a complex value for a real parameter");
  assert_status_detail(call_with("float", cujit_ptr(0x1000)), CUJIT_ERROR_INVALID_VALUE,
                       "was given a device pointer (ptr): a device pointer is not a scalar");
  assert_status_detail(call_with("float", cujit_in(&(float){1}, 4)), CUJIT_ERROR_INVALID_VALUE,
                       "an In/Out buffer for a scalar parameter");
  assert_status_detail(call_with("double", cujit_value((const float[]){1}, 4)),
                       CUJIT_ERROR_INVALID_VALUE, "a value of another size");
  assert_status_detail(call_with("float", cujit_arr(NULL)), CUJIT_ERROR_INVALID_VALUE,
                       "argument 1 ('s') is declared float and was given an array: an array "
                       "for a scalar parameter");
}

/* An array for an array parameter, nothing else; and kinds no constructor makes. */
static void arrays_are_arrays(void **state) {
  cujit_elementwise *k = NULL;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 0x1000);
  cujit_arg odd = cujit_f32(1);
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "float s, float *x", "x[i] = s", NULL));
  assert_status_detail(CUJIT_ELEMENTWISE(k, 1.0f, 2.0f), CUJIT_ERROR_INVALID_VALUE,
                       "argument 2 ('x') is declared float * and was given a float (f32): "
                       "pass the array");
  assert_status_detail(CUJIT_ELEMENTWISE(k, 1.0f, cujit_ptr(0x1000)), CUJIT_ERROR_INVALID_VALUE,
                       "argument 2 ('x') is declared float * and was given a device pointer");
  assert_status_detail(CUJIT_ELEMENTWISE(k, 1.0f, cujit_out(&odd, 4)), CUJIT_ERROR_INVALID_VALUE,
                       "In/Out buffers are for launches");
  assert_status_detail(CUJIT_ELEMENTWISE(k, 1.0f, cujit_arr(NULL)), CUJIT_ERROR_INVALID_VALUE,
                       "argument 2 ('x') is NULL");
  odd.kind = 9;
  assert_status_detail(CUJIT_ELEMENTWISE(k, odd, x), CUJIT_ERROR_INVALID_VALUE,
                       "argument 1 ('s') has the unknown kind 9");
  odd = cujit_f32(1);
  odd.type = 99;
  assert_status_detail(CUJIT_ELEMENTWISE(k, odd, x), CUJIT_ERROR_INVALID_VALUE,
                       "cujit converts only bool, integers");
  /* C values of every kind the macros know, each made the argument of its type */
  assert_int_equal(CUJIT_ELEMENTWISE(k, (char)1, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, (signed char)-1, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, (unsigned char)1, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, (short)-1, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, (unsigned short)1, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, 1u, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, -1L, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, 1UL, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, -1LL, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, 1ULL, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, (_Bool)1, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, 0.5, x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(CUJIT_ELEMENTWISE(k, (const cujit_array *)x == x ? 3 : 4, x),
                   CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(CUJIT_ELEMENTWISE(k, (float _Complex)1.0f, x), CUJIT_ERROR_INVALID_VALUE,
                       "a complex float (c64) (1, 0): a complex value for a real parameter");
  cujit_elementwise_destroy(k);
  cujit_array_destroy(x);
}

/* Ranges of any int64 values are counted and checked without signed overflow (the
 * ASan+UBSan build aborts on one): those leaving the 8 elements are refused, those inside
 * them run (here: refused only for want of a driver). */
static void ranges_at_the_ends_of_int64(void **state) {
  static const struct {
    int64_t start, stop, step;
    int inside;
  } cases[] = {
      {INT64_MIN, INT64_MAX, 1, 0},
      {INT64_MAX, INT64_MIN, -1, 0},
      {INT64_MIN, INT64_MAX, INT64_MAX, 0},
      {INT64_MAX, INT64_MIN, INT64_MIN, 0},
      {0, INT64_MAX, 1, 0},
      {7, INT64_MIN, -1, 0},
      {INT64_MIN, 0, 1, 0},
      {-1, INT64_MIN, -1, 0},
      {INT64_MAX - 1, INT64_MAX, 1, 0},
      {INT64_MIN + 1, INT64_MIN, -1, 0},
      {0, INT64_MAX, INT64_MAX, 1},
      {7, INT64_MIN, INT64_MIN, 0},
      {7, -1, INT64_MIN, 1},
      {0, 8, INT64_MAX, 1},
      {0, 9, 1, 0},
      {7, -2, -1, 0},
      {0, 8, 1, 1},
      {7, -1, -1, 1},
      {3, 3, 1, 1},
      {3, 3, INT64_MIN, 1}, /* empty */
      {INT64_MAX, INT64_MAX, 1, 1},
      {INT64_MIN, INT64_MIN, -1, 1},
  };
  cujit_elementwise *k = NULL;
  cujit_array *x = wrap(CUJIT_TYPE_F32, 0x1000);
  size_t i;
  (void)state;
  assert_ok(cujit_elementwise_create(&k, "float *x", "x[i] = 0", NULL));
  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    cujit_status st = CUJIT_ELEMENTWISE_RANGE(k, cases[i].start, cases[i].stop, cases[i].step, x);
    if (cases[i].inside ? st == CUJIT_ERROR_INVALID_VALUE : st != CUJIT_ERROR_INVALID_VALUE)
      fail_msg("range %lld to %lld step %lld: %s (%s)", (long long)cases[i].start,
               (long long)cases[i].stop, (long long)cases[i].step, cujit_status_name(st),
               cujit_last_error());
    if (!cases[i].inside && !strstr(cujit_last_error(), "leaves the arrays' 8 elements"))
      fail_msg("range case %zu: %s", i, cujit_last_error());
  }
  assert_status_detail(CUJIT_ELEMENTWISE_RANGE(k, 0, 8, 0, x), CUJIT_ERROR_INVALID_VALUE,
                       "the step is 0");
  cujit_elementwise_destroy(k);
  cujit_array_destroy(x);
}

static const int kTypes[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                             CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                             CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                             CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};

static int is_complex(int t) { return t == CUJIT_TYPE_C64 || t == CUJIT_TYPE_C128; }

/* Each op's kernel compiles: the call fails only at the launch. */
static void expect_no_driver(cujit_status st, const char *what, int t) {
  if (st != CUJIT_ERROR_NO_DRIVER) fail_msg("%s on type %d: %s", what, t, cujit_last_error());
}

static void every_operation_compiles(void **state) {
  size_t t;
  int op;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    int ty = kTypes[t];
    cujit_array *a = wrap(ty, 0x1000), *b = wrap(ty, 0x2000), *f = wrap(CUJIT_TYPE_F64, 0x3000);
    cujit_array *out = NULL;
    expect_no_driver(cujit_array_binary(CUJIT_BINOP_ADD, a, b, &out), "add", ty);
    expect_no_driver(cujit_array_binary(CUJIT_BINOP_MUL, a, f, &out), "mul f64", ty);
    expect_no_driver(cujit_array_binary(CUJIT_BINOP_EQ, a, b, &out), "eq", ty);
    expect_no_driver(cujit_array_binary(is_complex(ty) ? CUJIT_BINOP_DIV : CUJIT_BINOP_MAXIMUM, a,
                                        b, &out),
                     "max", ty);
    expect_no_driver(cujit_array_binary(CUJIT_BINOP_POW, a, b, &out), "pow", ty);
    expect_no_driver(cujit_array_binary_scalar(CUJIT_BINOP_MUL, a, 2, CUJIT_SCALAR_INT, &out),
                     "2*a", ty);
    expect_no_driver(cujit_array_binary_scalar(CUJIT_BINOP_DIV, a, 0.5, CUJIT_SCALAR_FIRST, &out),
                     "0.5/a", ty);
    expect_no_driver(cujit_array_unary(CUJIT_UNOP_FABS, a, &out), "fabs", ty);
    expect_no_driver(cujit_array_unary(CUJIT_UNOP_SQRT, a, &out), "sqrt", ty);
    if (ty != CUJIT_TYPE_BOOL)
      expect_no_driver(cujit_array_unary(CUJIT_UNOP_NEG, a, &out), "neg", ty);
    assert_null(out);
    cujit_array_destroy(a);
    cujit_array_destroy(b);
    cujit_array_destroy(f);
  }
  {
    cujit_array *x = wrap(CUJIT_TYPE_F32, 0x1000), *out = NULL;
    for (op = CUJIT_UNOP_NEG; op <= CUJIT_UNOP_CEIL; op++)
      expect_no_driver(cujit_array_unary(op, x, &out), "unary", op);
    for (op = CUJIT_BINOP_ADD; op <= CUJIT_BINOP_GE; op++)
      expect_no_driver(cujit_array_binary(op, x, x, &out), "binary", op);
    cujit_array_destroy(x);
  }
}

/* ---- the operations' tables ---- */

typedef struct op_row {
  const char *name, *numpy, *cuda, *types;
  int op;
} op_row;
#define OP_ROW_(name, num, numpy, cuda, types, what) {#name, numpy, cuda, types, num},
static const op_row kBinops[] = {CUJIT_BINOP_MAP(OP_ROW_)};
static const op_row kUnops[] = {CUJIT_UNOP_MAP(OP_ROW_)};
static const op_row kRedops[] = {CUJIT_REDOP_MAP(OP_ROW_)};
#define OP_ENUM_CHECK_(family, name, num) \
  _Static_assert(CUJIT_##family##_##name == num, "CUJIT_" #family "_" #name " is its row's");
#define BINOP_ENUM_CHECK_(name, num, ...) OP_ENUM_CHECK_(BINOP, name, num)
#define UNOP_ENUM_CHECK_(name, num, ...) OP_ENUM_CHECK_(UNOP, name, num)
#define REDOP_ENUM_CHECK_(name, num, ...) OP_ENUM_CHECK_(REDOP, name, num)
CUJIT_BINOP_MAP(BINOP_ENUM_CHECK_)
CUJIT_UNOP_MAP(UNOP_ENUM_CHECK_)
CUJIT_REDOP_MAP(REDOP_ENUM_CHECK_)

/* The kind letter the tables give type t. */
static char kind_of(int t) {
  if (t == CUJIT_TYPE_BOOL) return 'b';
  if (t == CUJIT_TYPE_F16 || t == CUJIT_TYPE_BF16 || t == CUJIT_TYPE_F32 || t == CUJIT_TYPE_F64)
    return 'f';
  return is_complex(t) ? 'c' : 'i';
}

/* Each table's rows are numbered 0, 1, ... in order, with names of their own, NumPy names,
 * CUDA forms and kinds of b, i, f and c only. */
static void table_is_whole(const op_row *rows, size_t n) {
  size_t i, j;
  for (i = 0; i < n; i++) {
    assert_int_equal(rows[i].op, (int)i);
    assert_true(rows[i].numpy[0] && rows[i].cuda[0] && rows[i].types[0]);
    assert_int_equal(strspn(rows[i].types, "bifc"), strlen(rows[i].types));
    for (j = 0; j < i; j++) {
      assert_string_not_equal(rows[i].name, rows[j].name);
      assert_string_not_equal(rows[i].numpy, rows[j].numpy);
    }
  }
}

/* Every operation of every table, on every element type: refused, naming the operation,
 * where its row does not take the type's kind, else past the kinds to the output (given of
 * a wrong shape, so that nothing is compiled). */
static void operations_take_the_kinds_their_tables_say(void **state) {
  size_t t, i;
  int64_t three = 3;
  (void)state;
  table_is_whole(kBinops, sizeof kBinops / sizeof *kBinops);
  table_is_whole(kUnops, sizeof kUnops / sizeof *kUnops);
  table_is_whole(kRedops, sizeof kRedops / sizeof *kRedops);
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    int ty = kTypes[t];
    cujit_array *a = wrap(ty, 0x1000), *wrong = NULL, *out;
    assert_ok(cujit_array_wrap(&wrong, ty, 1, &three, 0x2000));
    for (i = 0; i < sizeof kBinops / sizeof *kBinops; i++) {
      char want[96];
      int takes = strchr(kBinops[i].types, kind_of(ty)) != NULL;
      snprintf(want, sizeof want, "%s (CUJIT_BINOP_%s) is not defined for", kBinops[i].numpy,
               kBinops[i].name);
      out = wrong;
      assert_status_detail(cujit_array_binary(kBinops[i].op, a, a, &out), CUJIT_ERROR_INVALID_VALUE,
                           takes ? "the output" : want);
    }
    for (i = 0; i < sizeof kUnops / sizeof *kUnops; i++) {
      char want[96];
      int takes = strchr(kUnops[i].types, kind_of(ty)) != NULL;
      snprintf(want, sizeof want, "%s (CUJIT_UNOP_%s) is not defined for", kUnops[i].numpy,
               kUnops[i].name);
      out = wrong;
      assert_status_detail(cujit_array_unary(kUnops[i].op, a, &out), CUJIT_ERROR_INVALID_VALUE,
                           takes ? "the output" : want);
    }
    for (i = 0; i < sizeof kRedops / sizeof *kRedops; i++) {
      char want[96];
      int takes = strchr(kRedops[i].types, kind_of(ty)) != NULL;
      snprintf(want, sizeof want, "no order, so no %s", kRedops[i].numpy);
      out = wrong;
      assert_status_detail(cujit_array_reduce(kRedops[i].op, a, &out), CUJIT_ERROR_INVALID_VALUE,
                           takes ? "the output" : want);
    }
    cujit_array_destroy(a);
    cujit_array_destroy(wrong);
  }
}

static void operations_refuse_what_is_not_defined(void **state) {
  cujit_array *c = wrap(CUJIT_TYPE_C64, 0x1000), *b = wrap(CUJIT_TYPE_BOOL, 0x2000);
  cujit_array *f = wrap(CUJIT_TYPE_F32, 0x3000), *i = wrap(CUJIT_TYPE_I32, 0x4000), *out = NULL;
  int64_t n3 = 3;
  cujit_array *short_one = NULL;
  (void)state;
  assert_ok(cujit_array_wrap(&short_one, CUJIT_TYPE_F32, 1, &n3, 0x5000));
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_LT, c, c, &out), CUJIT_ERROR_INVALID_VALUE,
                       "less (CUJIT_BINOP_LT) is not defined for c64 (complex numbers have no "
                       "order)");
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_SUB, b, b, &out), CUJIT_ERROR_INVALID_VALUE,
                       "subtract (CUJIT_BINOP_SUB) is not defined for b8 (use CUJIT_BINOP_NE");
  assert_status_detail(cujit_array_unary(CUJIT_UNOP_FLOOR, c, &out), CUJIT_ERROR_INVALID_VALUE,
                       "floor (CUJIT_UNOP_FLOOR) is not defined for c64");
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, f, short_one, &out),
                       CUJIT_ERROR_INVALID_VALUE, "a has shape (8,) and b (3,)");
  {
    /* as many elements in another shape: the shapes say what differs */
    int64_t n16 = 16, four_by_four[] = {4, 4}, none = 0;
    cujit_array *flat = NULL, *square = NULL, *scalar = NULL;
    assert_ok(cujit_array_wrap(&flat, CUJIT_TYPE_F32, 1, &n16, 0x8000));
    assert_ok(cujit_array_wrap(&square, CUJIT_TYPE_F32, 2, four_by_four, 0x9000));
    assert_ok(cujit_array_wrap(&scalar, CUJIT_TYPE_F32, 0, &none, 0xa000));
    assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, square, flat, &out),
                         CUJIT_ERROR_INVALID_VALUE,
                         "cujit_array_binary: a has shape (4, 4) and b (16,), which do not "
                         "broadcast");
    /* a 0-d array is broadcast: the kernel compiles, only the launch needs a driver */
    assert_int_equal(cujit_array_binary(CUJIT_BINOP_MUL, scalar, square, &out),
                     CUJIT_ERROR_NO_DRIVER);
    assert_status_detail(cujit_array_map(&out, "x * y", 2, (const char *[]){"x", "y"},
                                         (const cujit_array *[]){flat, square}),
                         CUJIT_ERROR_INVALID_VALUE,
                         "cujit_array_map: 'x' has shape (16,) and 'y' (4, 4), which do not");
    cujit_array_destroy(flat);
    cujit_array_destroy(square);
    cujit_array_destroy(scalar);
  }
  out = i; /* an output of the wrong type */
  assert_status_detail(cujit_array_binary(CUJIT_BINOP_ADD, f, f, &out), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds i32, the result is f32");
  out = NULL;
  assert_status_detail(cujit_array_binary(99, f, f, &out), CUJIT_ERROR_INVALID_VALUE,
                       "99 is not a cujit_binop");
  assert_status_detail(cujit_array_binary_scalar(CUJIT_BINOP_ADD, f, 1, 8, &out),
                       CUJIT_ERROR_INVALID_VALUE, "unknown flags 0x8");
  {
    cujit_array *i8 = wrap(CUJIT_TYPE_I8, 0x6000), *u64 = wrap(CUJIT_TYPE_U64, 0x7000);
    assert_status_detail(cujit_array_binary_scalar(CUJIT_BINOP_ADD, i8, 300, CUJIT_SCALAR_INT,
                                                   &out),
                         CUJIT_ERROR_INVALID_VALUE, "the integer 300 does not fit i8");
    assert_status_detail(cujit_array_binary_scalar(CUJIT_BINOP_ADD, u64, -1, CUJIT_SCALAR_INT,
                                                   &out),
                         CUJIT_ERROR_INVALID_VALUE, "the integer -1 does not fit u64");
    assert_status_detail(cujit_array_binary_scalar(CUJIT_BINOP_MUL, i8, 2.5, CUJIT_SCALAR_INT,
                                                   &out),
                         CUJIT_ERROR_INVALID_VALUE, "2.5 is not an integer");
    /* a float scalar with an i8 array computes in f64: no range to fit */
    assert_int_equal(cujit_array_binary_scalar(CUJIT_BINOP_ADD, i8, 300, 0, &out),
                     CUJIT_ERROR_NO_DRIVER);
    cujit_array_destroy(i8);
    cujit_array_destroy(u64);
  }
  assert_status_detail(cujit_array_map(&out, "x + 1", 1, (const char *[]){"i"},
                                       (const cujit_array *[]){f}),
                       CUJIT_ERROR_INVALID_VALUE, "name 1 ('i') is not a C identifier");
  assert_status_detail(cujit_array_map(&out, "x + y", 2, (const char *[]){"x", "y"},
                                       (const cujit_array *[]){f, short_one}),
                       CUJIT_ERROR_INVALID_VALUE, "'x' has shape (8,) and 'y' (3,), which do not");
  assert_int_equal(cujit_array_map(&out, "sin(2*x + 1)", 1, (const char *[]){"x"},
                                   (const cujit_array *[]){f}),
                   CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(cujit_array_map(&out, "x +* 1", 1, (const char *[]){"x"},
                                       (const cujit_array *[]){f}),
                       CUJIT_ERROR_COMPILE, "did not compile");
  assert_non_null(strstr(cujit_last_error(), "the generated source:"));
  assert_non_null(strstr(cujit_last_error(), "cj_out[i] = static_cast<float>(x +* 1)"));
  assert_null(out);
  cujit_array_destroy(c);
  cujit_array_destroy(b);
  cujit_array_destroy(f);
  cujit_array_destroy(i);
  cujit_array_destroy(short_one);
}

/* where and if_positive: the condition, arrays or typed scalars for the values, the result's
 * type (strong promotion of the values' types), and what is refused. */
static void where_is_checked(void **state) {
  cujit_array *cond = wrap(CUJIT_TYPE_BOOL, 0x1000), *f = wrap(CUJIT_TYPE_F32, 0x2000);
  cujit_array *i8 = wrap(CUJIT_TYPE_I8, 0x3000), *c = wrap(CUJIT_TYPE_C64, 0x4000), *out = NULL;
  cujit_array *f64 = wrap(CUJIT_TYPE_F64, 0x5000), *gone = wrap(CUJIT_TYPE_F32, 0x6000);
  float v = 1;
  (void)state;
  cujit_array_destroy(gone);
  assert_status_detail(cujit_array_where(cond, cujit_arr(f), cujit_f32(0), NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_where: out is NULL");
  assert_status_detail(cujit_array_where(NULL, cujit_arr(f), cujit_f32(0), &out),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_where: cond is NULL");
  assert_status_detail(cujit_array_where(cond, cujit_arr(gone), cujit_f32(0), &out),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_where: a is not a live array");
  assert_status_detail(cujit_array_where(cond, cujit_arr(f), cujit_ptr(0x1000), &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_where: b is a device pointer; pass an array (cujit_arr(x)) "
                       "or a typed scalar");
  assert_status_detail(cujit_array_where(cond, CUJIT_VALUE(v), cujit_arr(f), &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "a is a value given by its bytes, which has no type");
  assert_status_detail(cujit_array_where(cond, cujit_in(&v, 4), cujit_arr(f), &out),
                       CUJIT_ERROR_INVALID_VALUE, "a is an In/Out buffer");
  assert_status_detail(cujit_array_if_positive(c, cujit_arr(f), cujit_arr(f), &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_if_positive: if_positive is not defined for c64 (complex "
                       "numbers have no order)");
  assert_status_detail(cujit_array_if_positive(NULL, cujit_arr(f), cujit_arr(f), &out),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_if_positive: crit is NULL");
  out = i8; /* f32 and f64 give f64 */
  assert_status_detail(cujit_array_where(cond, cujit_arr(f), cujit_f64(0), &out),
                       CUJIT_ERROR_INVALID_VALUE, "the output holds i8, the result is f64");
  out = f64;
  assert_int_equal(cujit_array_where(cond, cujit_arr(f), cujit_f64(0), &out),
                   CUJIT_ERROR_NO_DRIVER);
  out = f; /* a scalar's type counts: f32 with an f32 scalar stays f32, in place */
  assert_int_equal(cujit_array_where(cond, cujit_arr(f), cujit_f32(0), &out),
                   CUJIT_ERROR_NO_DRIVER);
  out = i8; /* i8 with an i8 scalar */
  assert_int_equal(cujit_array_where(cond, cujit_i8(-1), cujit_arr(i8), &out),
                   CUJIT_ERROR_NO_DRIVER);
  out = NULL;
  /* both scalars; conditions of every kind (a complex one is true when nonzero) */
  assert_int_equal(cujit_array_where(c, cujit_c128(1, 2), cujit_bool(1), &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_where(f, cujit_i64(1), cujit_u8(2), &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_if_positive(i8, cujit_arr(c), cujit_f64(2), &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_if_positive(cond, cujit_arr(f), cujit_arr(f64), &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_null(out);
  cujit_array_destroy(cond);
  cujit_array_destroy(f);
  cujit_array_destroy(i8);
  cujit_array_destroy(c);
  cujit_array_destroy(f64);
}

/* take and put: index types, modes, shapes of values, empty arrays; concatenate and stack:
 * counts, shapes and outputs. */
static void selections_are_checked(void **state) {
  const int64_t n3 = 3, zero = 0, m[] = {2, 4};
  cujit_array *a = wrap(CUJIT_TYPE_F32, 0x1000), *i32 = wrap(CUJIT_TYPE_I32, 0x2000);
  cujit_array *i64 = wrap(CUJIT_TYPE_I64, 0x3000), *f = wrap(CUJIT_TYPE_F64, 0x4000);
  cujit_array *u32 = wrap(CUJIT_TYPE_U32, 0x5000), *out = NULL, *three = NULL, *empty = NULL;
  cujit_array *one = NULL, *mat = NULL, *gone = wrap(CUJIT_TYPE_F32, 0x6000);
  (void)state;
  cujit_array_destroy(gone);
  assert_ok(cujit_array_wrap(&three, CUJIT_TYPE_F32, 1, &n3, 0x7000));
  assert_ok(cujit_array_wrap(&empty, CUJIT_TYPE_F32, 1, &zero, 0));
  assert_ok(cujit_array_wrap(&one, CUJIT_TYPE_F64, 0, NULL, 0x8000));
  assert_ok(cujit_array_wrap(&mat, CUJIT_TYPE_F32, 2, m, 0x9000));
  assert_status_detail(cujit_array_take(a, f, CUJIT_INDEX_RAISE, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_take: indices hold f64; pass i32 or i64 indices");
  assert_status_detail(cujit_array_take(a, u32, CUJIT_INDEX_RAISE, &out), CUJIT_ERROR_INVALID_VALUE,
                       "indices hold u32");
  assert_status_detail(cujit_array_take(a, i32, (cujit_index_mode)3, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_take: mode is 3; use CUJIT_INDEX_RAISE, CUJIT_INDEX_WRAP or "
                       "CUJIT_INDEX_CLIP");
  assert_status_detail(cujit_array_take(empty, i32, CUJIT_INDEX_WRAP, &out),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_array_take: a is empty");
  assert_status_detail(cujit_array_take(a, gone, CUJIT_INDEX_WRAP, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_take: indices is not a live array");
  assert_status_detail(cujit_array_take(a, i32, CUJIT_INDEX_WRAP, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_take: out is NULL");
  out = f; /* the result is a's type, f32 */
  assert_status_detail(cujit_array_take(a, i32, CUJIT_INDEX_WRAP, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_take: the output holds f64, the result is f32");
  out = three; /* and the indices' shape */
  assert_status_detail(cujit_array_take(a, i32, CUJIT_INDEX_WRAP, &out), CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (3,) differs from the result's (8,)");
  out = NULL;
  assert_int_equal(cujit_array_take(mat, i64, CUJIT_INDEX_CLIP, &out), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_take(a, i32, CUJIT_INDEX_RAISE, &out), CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(cujit_array_put(a, i32, three, CUJIT_INDEX_RAISE), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_put: values has shape (3,) and indices (8,); pass values of "
                       "the indices' shape, or a single value");
  assert_status_detail(cujit_array_put(a, f, a, CUJIT_INDEX_RAISE), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_put: indices hold f64");
  assert_status_detail(cujit_array_put(a, i32, gone, CUJIT_INDEX_RAISE), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_put: values is not a live array");
  assert_status_detail(cujit_array_put(empty, i32, a, CUJIT_INDEX_CLIP), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_put: a is empty");
  assert_int_equal(cujit_array_put(a, i64, f, CUJIT_INDEX_RAISE), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_put(mat, i32, one, CUJIT_INDEX_WRAP), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_put(a, i32, empty, CUJIT_INDEX_WRAP) == CUJIT_ERROR_INVALID_VALUE,
                   1); /* no single value in an empty array */
  /* concatenate and stack */
  assert_status_detail(cujit_array_concatenate(0, (const cujit_array *[]){a}, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_concatenate: n is 0; give at least one array");
  assert_status_detail(cujit_array_concatenate(2, NULL, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_concatenate: arrays is NULL");
  assert_status_detail(cujit_array_concatenate(2, (const cujit_array *[]){a, mat}, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_concatenate: arrays[1] has shape (2, 4); "
                       "cujit_array_concatenate joins 1-D arrays");
  assert_status_detail(cujit_array_concatenate(2, (const cujit_array *[]){a, one}, &out),
                       CUJIT_ERROR_INVALID_VALUE, "arrays[1] has shape ()");
  assert_status_detail(cujit_array_concatenate(2, (const cujit_array *[]){a, gone}, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_concatenate: arrays[1] is not a live array");
  assert_status_detail(cujit_array_stack(2, (const cujit_array *[]){a, three}, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_stack: arrays[0] has shape (8,) and arrays[1] (3,); stack "
                       "needs arrays of one shape");
  out = a; /* a concatenation of 11 f64 */
  assert_status_detail(cujit_array_concatenate(2, (const cujit_array *[]){f, three}, &out),
                       CUJIT_ERROR_INVALID_VALUE, "the output holds f32, the result is f64");
  out = mat; /* a stack of two (4,) in (2, 4) */
  assert_status_detail(cujit_array_stack(2, (const cujit_array *[]){a, a}, &out),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (2, 4) differs from the result's (2, 8)");
  out = NULL;
  assert_int_equal(cujit_array_concatenate(3, (const cujit_array *[]){a, three, empty}, &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_concatenate(2, (const cujit_array *[]){i32, f}, &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_array_stack(3, (const cujit_array *[]){a, i32, u32}, &out),
                   CUJIT_ERROR_NO_DRIVER);
  assert_null(out);
  cujit_array_destroy(a);
  cujit_array_destroy(i32);
  cujit_array_destroy(i64);
  cujit_array_destroy(f);
  cujit_array_destroy(u32);
  cujit_array_destroy(three);
  cujit_array_destroy(empty);
  cujit_array_destroy(one);
  cujit_array_destroy(mat);
}

/* The lookups of compiled code this process made (hits and misses: compiled or not). */
static int lookups(void) {
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  assert_ok(cujit_cache_get_stats(&st));
  return (int)(st.hits + st.misses);
}

/* where, take and put of every element type, with each mode, compile (take's kernel before
 * its output is made: it once failed for want of a driver first, compiling nothing). Take's
 * kernels with i32 indices are one source for CUJIT_INDEX_RAISE and _CLIP but for the
 * function that maps an index (cj_index), which does not depend on the element type: so
 * raise is compiled for a real and a complex type, clip for every type. */
static void selections_compile(void **state) {
  size_t t;
  int mode, before = lookups();
  (void)state;
  {
    cujit_array *a = wrap(CUJIT_TYPE_C128, 0x1000), *i64 = wrap(CUJIT_TYPE_I64, 0x4000), *o = NULL;
    expect_no_driver(cujit_array_take(a, i64, CUJIT_INDEX_CLIP, &o), "take", CUJIT_TYPE_C128);
    assert_int_equal(lookups(), before + 1);
    cujit_array_destroy(a);
    cujit_array_destroy(i64);
  }
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++) {
    int ty = kTypes[t];
    cujit_array *a = wrap(ty, 0x1000), *c = wrap(CUJIT_TYPE_BOOL, 0x2000), *out = NULL;
    cujit_array *i32 = wrap(CUJIT_TYPE_I32, 0x3000), *i64 = wrap(CUJIT_TYPE_I64, 0x4000);
    expect_no_driver(cujit_array_where(c, cujit_arr(a), cujit_arr(a), &out), "where", ty);
    expect_no_driver(cujit_array_where(a, cujit_i32(1), cujit_arr(a), &out), "where on it", ty);
    if (!is_complex(ty))
      expect_no_driver(cujit_array_if_positive(a, cujit_arr(a), cujit_f32(2), &out), "if_positive",
                       ty);
    for (mode = CUJIT_INDEX_RAISE; mode <= CUJIT_INDEX_CLIP; mode++) {
      if (mode != CUJIT_INDEX_RAISE || ty == CUJIT_TYPE_F32 || ty == CUJIT_TYPE_C64)
        expect_no_driver(cujit_array_take(a, mode == 1 ? i64 : i32, mode, &out), "take", ty);
      expect_no_driver(cujit_array_put(a, mode == 1 ? i32 : i64, a, mode), "put", ty);
    }
    expect_no_driver(cujit_array_put(i32, i64, a, CUJIT_INDEX_WRAP), "put as i32", ty);
    expect_no_driver(cujit_array_concatenate(2, (const cujit_array *[]){a, i32}, &out),
                     "concatenate", ty);
    assert_null(out);
    cujit_array_destroy(a);
    cujit_array_destroy(c);
    cujit_array_destroy(i32);
    cujit_array_destroy(i64);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(promotion_follows_numpy),
      cmocka_unit_test(declarations_are_read_or_refused),
      cmocka_unit_test(generator_arguments_are_checked),
      cmocka_unit_test(scalars_are_converted_or_refused),
      cmocka_unit_test(arrays_are_arrays),
      cmocka_unit_test(ranges_at_the_ends_of_int64),
      cmocka_unit_test(operations_refuse_what_is_not_defined),
      cmocka_unit_test(every_operation_compiles),
      cmocka_unit_test(operations_take_the_kinds_their_tables_say),
      cmocka_unit_test(where_is_checked),
      cmocka_unit_test(selections_are_checked),
      cmocka_unit_test(selections_compile),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1); /* the same on GPU machines */
  return cmocka_run_group_tests(tests, NULL, NULL);
}
