/* test_plain - plain values end to end on the checking fake driver (tests/fakedriver, two
 * devices of compute capability 9.0): CUJIT_LAUNCH() and cujit_call() given C numbers, the
 * bytes the driver receives for each parameter (converted to the kernel's types as C
 * converts an argument to a prototyped parameter), the refusals with their messages and
 * nothing launched, an extern "C" kernel's types asked of the compiler at its first such
 * launch, a prebuilt one's refused until a signature gives them, and more parameters than a
 * launch holds on its stack. The exact messages at every scalar edge are test_args'. */
#include <limits.h>

#include "testutil.h"
#include "fakedriver/checkdriver.h"

static checkdriver_api cd;
static cujit_module *mod;

static const char kSrc[] =
    "#include <cuda_fp16.h>\n"
    "__global__ void scale(float *x, int n, float f) {}\n"
    "__global__ void mix(bool b, char c, unsigned char uc, short s, int i, unsigned u, long l,\n"
    "                    unsigned long long ull, float f, double d, __half h, int *p) {}\n"
    "extern \"C\" __global__ void cscale(float *x, int n, float f) {}\n"
    "#define P8(a) long long a##0, long long a##1, long long a##2, long long a##3, \\\n"
    "              long long a##4, long long a##5, long long a##6, long long a##7\n"
    "__global__ void wide(P8(a), P8(b), P8(c), P8(d), P8(e)) {}\n";

static int setup(void **state) {
  int n = 0;
  (void)state;
  if (cujit_device_get_count(&n) != CUJIT_OK || n != 2) return -1;
  if (checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) != 0) return -1;
  return cujit_module_from_source(&mod, kSrc, "plain.cu", NULL) == CUJIT_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cujit_module_destroy(mod);
  return cd.violations() == 0 ? 0 : -1;
}

static cujit_function *kernel(cujit_module *m, const char *name) {
  cujit_function *fn = NULL;
  assert_ok(cujit_module_get_function(m, name, &fn));
  return fn;
}

/* Asserts that parameter i of fn's last launch received the `n` bytes at v. */
static void received(cujit_function *fn, size_t i, const void *v, size_t n) {
  unsigned char params[4096];
  size_t off = 0, size = 0;
  assert_true(cd.last_params(params, sizeof params) > 0);
  assert_ok(cujit_function_get_param_info(fn, i, &off, &size));
  assert_int_equal(size, n);
  if (memcmp(params + off, v, n) != 0) fail_msg("parameter %zu received other bytes", i + 1);
}

/* PyCUDA's habit, an In/Out buffer and two numbers: each number is an argument of its own
 * (they once folded into one cujit_arg and the launch said it had 2 of 3 arguments), and
 * a number of another type is converted to its parameter's. */
static void a_launch_takes_numbers(void **state) {
  cujit_function *scale = kernel(mod, "scale");
  float h[4] = {1, 2, 3, 4}, factor = 2, two = 2, half = 0.5f;
  int n = 4;
  (void)state;
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(h, sizeof h), n, factor));
  received(scale, 1, &n, 4);
  received(scale, 2, &factor, 4);
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(h, sizeof h), 4, 2));
  received(scale, 2, &two, 4); /* the int 2 arrives as the float 2 */
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(h, sizeof h), 4.0, 0.5));
  received(scale, 1, &n, 4);
  received(scale, 2, &half, 4);
}

/* Every scalar type a kernel may take, from numbers of other types. */
static void each_parameter_receives_its_type(void **state) {
  cujit_function *mix = kernel(mod, "mix");
  CUdeviceptr d = 0;
  unsigned char one = 1, uc = 200;
  signed char c = 'x';
  short s = -3;
  int i = 7;
  unsigned u = 5;
  long long l = -9;
  unsigned long long ull = UINT_MAX;
  float f = 3;
  double dd = (double)0.1f;
  uint16_t h = 0x3800; /* 0.5 as a __half */
  (void)state;
  assert_ok(cujit_mem_alloc(&d, 64));
  assert_ok(CUJIT_LAUNCH(mix, CUJIT_DIM3(1), CUJIT_DIM3(1), 1, 'x', 200, -3, 7.0, 5, -9, UINT_MAX,
                         3, 0.1f, 0.5, d));
  received(mix, 0, &one, 1);
  received(mix, 1, &c, 1);
  received(mix, 2, &uc, 1);
  received(mix, 3, &s, 2);
  received(mix, 4, &i, 4);
  received(mix, 5, &u, 4);
  received(mix, 6, &l, 8);
  received(mix, 7, &ull, 8);
  received(mix, 8, &f, 4);
  received(mix, 9, &dd, 8);
  received(mix, 10, &h, 2);
  received(mix, 11, &d, 8);
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_free(d));
}

/* A value that would not keep its meaning launches nothing, and says why. */
static void a_refused_value_launches_nothing(void **state) {
  cujit_function *scale = kernel(mod, "scale"), *mix = kernel(mod, "mix");
  float h[4] = {0}, f = 1;
  int seven = 7;
  (void)state;
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(h, sizeof h), 7, f));
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(h, sizeof h),
                                    2.5, f),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'scale' is a double (f64) 2.5, but parameter 2 is "
                       "'int': not an integer (C would truncate it, or leave it undefined)");
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(h, sizeof h),
                                    (long long)INT_MAX + 1, f),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'scale' is a long long (i64) 2147483648, but "
                       "parameter 2 is 'int': out of the parameter type's range");
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), 0, 4, f),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'scale' is an int (i32) 0, but parameter 1 is "
                       "'float *': a pointer parameter takes a device pointer");
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(4),
                                    CUJIT_INOUT_PTR(h, sizeof h), 4, f),
                       CUJIT_ERROR_INVALID_ARGS,
                       "but parameter 1 is 'float *': CUJIT_IN_PTR(), CUJIT_OUT_PTR(), "
                       "CUJIT_INOUT_PTR() and cujit_arg_ref() are for cujit_call() and bound "
                       "functions; a launch takes cujit_in(), cujit_out() and cujit_inout()");
  received(scale, 1, &seven, 4); /* the last launch is still the first one */
  /* a constructor's argument keeps its type's strict rule */
  assert_status_detail(CUJIT_LAUNCH(mix, CUJIT_DIM3(1), CUJIT_DIM3(1), 1, 'x', 200, -3, 7,
                                    cujit_i32(5), -9, UINT_MAX, 3, 0.1f, 0.5, (CUdeviceptr)0),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 6 of kernel 'mix' is an int (i32), but parameter 6 is 'unsigned "
                       "int'; use cujit_u32()");
  assert_status_detail(CUJIT_LAUNCH(mix, CUJIT_DIM3(1), CUJIT_DIM3(1), 2, 'x', 200, -3, 7, 5, -9,
                                    UINT_MAX, 3, 0.1f, 0.5, (CUdeviceptr)0),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'mix' is an int (i32) 2, but parameter 1 is 'bool': a "
                       "bool takes 0 and 1 (false and true) only; nothing was launched");
  assert_status_detail(CUJIT_LAUNCH(mix, CUJIT_DIM3(1), CUJIT_DIM3(1), 1, 'x', 200, -3, 7, 5, -9,
                                    UINT_MAX, 1e300, 0.1f, 70000, (CUdeviceptr)0),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 9 of kernel 'mix' is a double (f64) 1.0000000000000001e+300, but "
                       "parameter 9 is 'float': beyond the parameter type's range");
  assert_ok(cujit_synchronize());
}

/* An extern "C" kernel's name spells no types: the first launch with a number it does not
 * take as it is asks the compiler for them (the probe typed calls use), and converts. */
static void extern_c_kernels_are_asked_their_types(void **state) {
  cujit_function *cscale = kernel(mod, "cscale");
  CUdeviceptr d = 0;
  float three = 3;
  int n = 4;
  (void)state;
  assert_ok(cujit_mem_alloc(&d, 16));
  assert_ok(CUJIT_LAUNCH(cscale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4, 3));
  received(cscale, 1, &n, 4);
  received(cscale, 2, &three, 4);
  assert_status_detail(CUJIT_LAUNCH(cscale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, -1.5, 3),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'cscale' is a double (f64) -1.5, but parameter 2 is "
                       "'int': not an integer");
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_free(d));
}

/* Prebuilt code keeps no source to ask: its extern "C" kernel takes numbers once an
 * explicit signature gives its types, and says so until then. */
static void prebuilt_extern_c_kernels_need_a_signature(void **state) {
  cujit_module *pre = NULL;
  cujit_function *cscale;
  CUdeviceptr d = 0;
  size_t size = 0;
  const void *cubin = cujit_module_cubin(mod, &size);
  float three = 3;
  (void)state;
  assert_non_null(cubin);
  assert_ok(cujit_module_from_image(&pre, cubin, size, "plain.cubin"));
  cscale = kernel(pre, "cscale");
  assert_ok(cujit_mem_alloc(&d, 16));
  assert_status_detail(CUJIT_LAUNCH(cscale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4, 3),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 1 of kernel 'cscale' is a plain value (an unsigned long long "
                       "(u64)), which is converted to its parameter's type, but the kernel's "
                       "parameter types cannot be known: ");
  assert_non_null(strstr(cujit_last_error(), "cujit_function_set_signature()"));
  assert_non_null(strstr(cujit_last_error(), "or make each argument with the constructor of its "
                                             "parameter's type"));
  assert_ok(CUJIT_LAUNCH(cscale, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_ptr(d), cujit_i32(4),
                         cujit_f32(3))); /* the constructors' arguments: sizes checked */
  assert_ok(cujit_function_set_signature(cscale, "ptr i32 f32"));
  assert_ok(CUJIT_LAUNCH(cscale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4, 3));
  received(cscale, 2, &three, 4);
  assert_status_detail(CUJIT_LAUNCH(cscale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4u, 1e39),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 3 of kernel 'cscale' is a double (f64) 9.9999999999999994e+38, "
                       "but parameter 3 is 'float' (by its signature): beyond");
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_free(d));
  cujit_module_destroy(pre);
}

/* More parameters than a launch keeps on its stack: the conversions go to the heap. */
static void many_numbers_are_converted(void **state) {
  cujit_function *wide = kernel(mod, "wide");
  long long v;
  size_t i;
  (void)state;
  assert_ok(CUJIT_LAUNCH(wide, CUJIT_DIM3(1), CUJIT_DIM3(1), 0, -1, 2, -3, 4, -5, 6, -7, 8, -9, 10,
                         -11, 12, -13, 14, -15, 16, -17, 18, -19, 20, -21, 22, -23, 24, -25, 26,
                         -27, 28, -29, 30, -31, 32, -33, 34, -35, 36, -37, 38, -39));
  for (i = 0; i < 40; i++) {
    v = (i & 1) ? -(long long)i : (long long)i;
    received(wide, i, &v, 8);
  }
  assert_ok(cujit_synchronize());
}

/* cujit_call() converts by the kernel's signature as a launch does, straight to the driver
 * when nothing needs staging, and through a launch with In/Out buffers. */
static void a_typed_call_converts(void **state) {
  cujit_function *scale = kernel(mod, "scale");
  CUdeviceptr d = 0;
  float h[4] = {0}, two = 2, f = 0.25f;
  int n = 4;
  (void)state;
  assert_ok(cujit_mem_alloc(&d, 16));
  assert_ok(cujit_call(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4, f)); /* each as it is */
  received(scale, 2, &f, 4);
  assert_ok(cujit_call(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4.0, 2));
  received(scale, 0, &d, 8);
  received(scale, 1, &n, 4);
  received(scale, 2, &two, 4);
  assert_ok(cujit_call(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), CUJIT_INOUT_PTR(h, sizeof h), 4LL, f));
  received(scale, 1, &n, 4);
  received(scale, 2, &f, 4);
  assert_status_detail(cujit_call(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), d, 4, 1e300),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'scale', parameter 3 (f32): given a double (f64) "
                       "1.0000000000000001e+300: beyond the parameter type's range (C leaves "
                       "that undefined); nothing was launched");
  assert_status_detail(cujit_call(scale, CUJIT_DIM3(1), CUJIT_DIM3(4), 0, 4, 1),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'scale', parameter 1 (ptr): given an int (i32), but a pointer "
                       "parameter takes a CUdeviceptr");
  received(scale, 2, &f, 4);
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_free(d));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_launch_takes_numbers),
      cmocka_unit_test(each_parameter_receives_its_type),
      cmocka_unit_test(a_refused_value_launches_nothing),
      cmocka_unit_test(extern_c_kernels_are_asked_their_types),
      cmocka_unit_test(prebuilt_extern_c_kernels_need_a_signature),
      cmocka_unit_test(many_numbers_are_converted),
      cmocka_unit_test(a_typed_call_converts),
  };
  return test_group_result(cmocka_run_group_tests(tests, setup, teardown));
}
