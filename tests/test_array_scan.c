/* test_array_scan - scans and cumsum without a device: arguments and types are checked
 * before anything runs, a bad expression fails with NVRTC's log, and every kernel cumsum
 * and the scan generator make compiles (NVRTC needs no device: only loading the kernel
 * fails, with CUJIT_ERROR_NO_DRIVER, where a bad one fails to compile; an exclusive
 * cumsum's kernel is its inclusive one's source but for a constant, compiled for two
 * types). Arrays are wrapped fake device pointers: nothing is ever read through them. */
#include "testutil.h"
#include "cujit_array.h"

static const int kTypes[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                             CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                             CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                             CUJIT_TYPE_F64,  CUJIT_TYPE_C64, CUJIT_TYPE_C128};

static cujit_array *wrap(cujit_type type, int64_t n, CUdeviceptr at) {
  cujit_array *a = NULL;
  assert_ok(cujit_array_wrap(&a, type, 1, &n, at));
  return a;
}

/* What cumsum gives for each type, as the header documents. */
static cujit_type cumsum_type(int t) {
  switch (t) {
    case CUJIT_TYPE_BOOL:
    case CUJIT_TYPE_I8:
    case CUJIT_TYPE_I16:
    case CUJIT_TYPE_I32: return CUJIT_TYPE_I64;
    case CUJIT_TYPE_U8:
    case CUJIT_TYPE_U16:
    case CUJIT_TYPE_U32: return CUJIT_TYPE_U64;
    default: return (cujit_type)t;
  }
}

static void cumsum_arguments(void **state) {
  cujit_array *a = wrap(CUJIT_TYPE_I32, 10, 0x10000), *out = NULL;
  cujit_array *same = wrap(CUJIT_TYPE_I32, 10, 0x20000),
              *short_out = wrap(CUJIT_TYPE_I64, 9, 0x30000);
  cujit_array *flat = NULL, *square = NULL;
  int64_t shape[] = {2, 5};
  (void)state;
  assert_status_detail(cujit_array_cumsum(NULL, 0, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_cumsum: a is NULL");
  assert_status_detail(cujit_array_cumsum(a, 0, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_cumsum: out is NULL");
  assert_status_detail(cujit_array_cumsum(a, 0, &same), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds i32, the result is i64");
  assert_status_detail(cujit_array_cumsum(a, 1, &short_out), CUJIT_ERROR_INVALID_VALUE,
                       "the output's shape (9,) differs from the result's (10,)");
  assert_ok(cujit_array_reshape(a, 2, shape, &square));
  assert_ok(cujit_array_wrap(&flat, CUJIT_TYPE_I64, 2, shape, 0x40000));
  assert_status_detail(cujit_array_cumsum(square, 0, &flat), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_array_cumsum: the output has 2 dimensions; the result is 1-D");
  cujit_array_destroy(flat);
  cujit_array_destroy(same);
  assert_status_detail(cujit_array_cumsum(same, 0, &out), CUJIT_ERROR_INVALID_VALUE,
                       "a is not a live array");
  cujit_array_destroy(a);
  cujit_array_destroy(square);
  cujit_array_destroy(short_out);
  assert_null(out);
}

static void scan_create_arguments(void **state) {
  cujit_scan *s = (cujit_scan *)1;
  cujit_generator_options o = {0};
  (void)state;
  assert_status_detail(cujit_scan_create(NULL, CUJIT_TYPE_F32, "a+b", "0", 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_scan_create: out is NULL");
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_PTR, "a+b", "0", 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "is not an element type arrays hold");
  assert_null(s);
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_BYTES, "a+b", "0", 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "is not an element type arrays hold");
  assert_status_detail(cujit_scan_create(&s, (cujit_type)99, "a+b", "0", 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "type 99 is not an element type");
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_F32, NULL, "0", 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "scan_expr is NULL");
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_F32, "", "0", 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "scan_expr is empty");
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_F32, "a+b", NULL, 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "neutral is NULL");
  o.name = "9lives";
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_F32, "a+b", "0", 0, &o),
                       CUJIT_ERROR_INVALID_VALUE,
                       "the kernel name \"9lives\" is not a C "
                       "identifier");
  o.name = "a-b";
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_F32, "a+b", "0", 0, &o),
                       CUJIT_ERROR_INVALID_VALUE, "\"a-b\" is not a C identifier");
  assert_null(s);
  cujit_scan_destroy(NULL);
}

static void scan_call_arguments(void **state) {
  cujit_scan *s = NULL;
  cujit_array *f = wrap(CUJIT_TYPE_F32, 12, 0x10000), *d = wrap(CUJIT_TYPE_F64, 12, 0x20000);
  cujit_array *square = NULL, *out = NULL;
  int64_t shape[] = {3, 4};
  (void)state;
  assert_ok(cujit_scan_create(&s, CUJIT_TYPE_F32, "a + b", "0", 1, NULL));
  assert_status_detail(cujit_scan_call(NULL, f, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_scan_call: the scan is NULL");
  assert_status_detail(cujit_scan_call(s, NULL, &out), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_scan_call: in is NULL");
  assert_status_detail(cujit_scan_call(s, d, &out), CUJIT_ERROR_INVALID_VALUE,
                       "in holds f64, the scan was made for f32");
  assert_status_detail(cujit_scan_call(s, f, &d), CUJIT_ERROR_INVALID_VALUE,
                       "the output holds f64, the result is f32");
  assert_status_detail(cujit_scan_call(s, f, NULL), CUJIT_ERROR_INVALID_VALUE, "out is NULL");
  assert_ok(cujit_array_reshape(f, 2, shape, &square));
  assert_status_detail(cujit_scan_call(s, square, &out), CUJIT_ERROR_INVALID_VALUE,
                       "in has 2 dimensions; scans take 1-D arrays");
  assert_null(out);
  cujit_array_destroy(square);
  cujit_array_destroy(f);
  cujit_array_destroy(d);
  cujit_scan_destroy(s);
}

/* A bad operator fails when the kernel is compiled, at the first call, with NVRTC's log. */
static void bad_expression_is_a_compile_error(void **state) {
  cujit_scan *s = NULL;
  cujit_array *x = wrap(CUJIT_TYPE_I32, 4, 0x10000);
  (void)state;
  assert_ok(cujit_scan_create(&s, CUJIT_TYPE_I32, "a +* b", "0", 0, NULL));
  assert_status_detail(cujit_scan_call(s, x, &x), CUJIT_ERROR_COMPILE, "error");
  cujit_scan_destroy(s);
  assert_ok(cujit_scan_create(&s, CUJIT_TYPE_I32, "a + b", "no_such_thing", 0, NULL));
  assert_status_detail(cujit_scan_call(s, x, &x), CUJIT_ERROR_COMPILE, "no_such_thing");
  cujit_scan_destroy(s);
  cujit_array_destroy(x);
}

/* Every type, inclusive and exclusive, one block (n = 8) and several (n = 2^20): the
 * kernels compile and only the launch or the temporary memory needs the driver. An
 * exclusive and an inclusive kernel are one source but for the value of CJ_EXCLUSIVE, a
 * constant that picks one of a conditional's two arms, both compiled either way, whatever
 * the type: every type's inclusive kernel is compiled, and a real and a complex type's
 * exclusive one too. */
static void cumsum_kernels_compile(void **state) {
  size_t t;
  int exclusive, big;
  (void)state;
  for (t = 0; t < sizeof kTypes / sizeof *kTypes; t++)
    for (exclusive = 0; exclusive < 2; exclusive++)
      for (big = 0; big < 2; big++) {
        if (exclusive && kTypes[t] != CUJIT_TYPE_F32 && kTypes[t] != CUJIT_TYPE_C64) continue;
        int64_t n = big ? (int64_t)1 << 20 : 8;
        cujit_array *a = wrap(kTypes[t], n, 0x10000),
                    *out = wrap(cumsum_type(kTypes[t]), n, 0x20000);
        assert_status_detail(cujit_array_cumsum(a, exclusive, &out), CUJIT_ERROR_NO_DRIVER, "");
        cujit_array_destroy(a);
        cujit_array_destroy(out);
      }
}

/* Scans of many types with their own operators, names and preambles, into given and new
 * outputs and over empty arrays. */
static void generated_scans_compile(void **state) {
  static const struct {
    cujit_type type;
    const char *op, *neutral;
  } scans[] = {
      {CUJIT_TYPE_I32, "a > b ? a : b", "(-2147483647 - 1)"},
      {CUJIT_TYPE_U8, "a | b", "0"},
      {CUJIT_TYPE_BOOL, "a && b", "true"},
      {CUJIT_TYPE_F16, "__hmax(a, b)", "-65504.0f"},
      {CUJIT_TYPE_BF16, "a * b", "1.0f"},
      {CUJIT_TYPE_F64, "fmin(a, b)", "1.0 / 0.0"},
      {CUJIT_TYPE_C64, "a * b", "1"},
      {CUJIT_TYPE_C128, "a + b", "0"},
      {CUJIT_TYPE_U64, "compose(a, b)", "1ull << 32"},
  };
  cujit_generator_options o = {0};
  size_t k;
  (void)state;
  o.preamble = "__device__ unsigned long long compose(unsigned long long f, unsigned long "
               "long g) {\n  unsigned m = (unsigned)(g >> 32) * (unsigned)(f >> 32);\n"
               "  unsigned c = (unsigned)(g >> 32) * (unsigned)f + (unsigned)g;\n"
               "  return (unsigned long long)m << 32 | c;\n}\n";
  o.name = "my_scan";
  for (k = 0; k < sizeof scans / sizeof *scans; k++) {
    cujit_scan *s = NULL;
    cujit_array *x = wrap(scans[k].type, 100, 0x10000), *empty = wrap(scans[k].type, 0, 0);
    cujit_array *made = NULL;
    assert_ok(cujit_scan_create(&s, scans[k].type, scans[k].op, scans[k].neutral, (int)k & 1, &o));
    assert_status_detail(cujit_scan_call(s, x, &x), CUJIT_ERROR_NO_DRIVER, "");
    /* compiled even for no elements, so that a bad expression shows at once */
    assert_status_detail(cujit_scan_call(s, empty, &empty), CUJIT_ERROR_NO_DRIVER, "");
    assert_status_detail(cujit_scan_call(s, x, &made), CUJIT_ERROR_NO_DRIVER, "");
    assert_null(made);
    cujit_scan_destroy(s);
    cujit_array_destroy(x);
    cujit_array_destroy(empty);
  }
}

int main(void) {
  /* the same everywhere: on a GPU machine too, no driver is loaded */
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cumsum_arguments),       cmocka_unit_test(scan_create_arguments),
      cmocka_unit_test(scan_call_arguments),    cmocka_unit_test(bad_expression_is_a_compile_error),
      cmocka_unit_test(cumsum_kernels_compile), cmocka_unit_test(generated_scans_compile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
