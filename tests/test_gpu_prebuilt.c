/* test_gpu_prebuilt - modules from prebuilt PTX, CUBIN and fatbin on a device: each kind's
 * kernels found by plain name (C++ and extern "C"), launched with In/Out buffers and
 * checked arguments, its variables written and read by name, a missing kernel named with
 * the module's kernels, attributes and parameter layout from the driver, types from a C++
 * kernel's symbol, and cujit_call with an explicit signature for an extern "C" kernel.
 * The PTX and the CUBIN come from NVRTC for this device; the fatbin from nvcc when it is
 * on PATH (its tests are skipped, saying why, otherwise). */
#include "prebuilttest.h"

enum { K_PTX, K_CUBIN, K_FATBIN, N_KINDS, N = 100 };

static cujit_module *mods[N_KINDS];
static char *tmp;
static char fatbin_why[8192];
static const int kinds[N_KINDS] = {K_PTX, K_CUBIN, K_FATBIN};

static cujit_status fatbin_module(cujit_module **out) {
  char path[4096], gencode[128];
  int major = 0, minor = 0;
  assert_ok(cujit_device_get_info(0, NULL, 0, &major, &minor));
  snprintf(gencode, sizeof gencode, "-gencode arch=compute_%d%d,code=[sm_%d%d,compute_%d%d]", major,
           minor, major, minor, major, minor);
  if (prebuilt_nvcc_fatbin(tmp, gencode, path, sizeof path, fatbin_why, sizeof fatbin_why))
    return CUJIT_OK;
  return cujit_module_from_image_file(out, path);
}

static int group_setup(void **state) {
  cujit_module *c = prebuilt_compiled(NULL); /* this device's sm_XX: CUBIN and PTX */
  size_t n = 0;
  const void *bytes;
  (void)state;
  tmp = test_tempdir("gpu-prebuilt");
  assert_non_null(tmp);
  bytes = cujit_module_ptx(c, &n);
  assert_ok(cujit_module_from_image(&mods[K_PTX], bytes, n, "k.ptx"));
  bytes = cujit_module_cubin(c, &n);
  assert_non_null(bytes);
  assert_ok(cujit_module_from_image(&mods[K_CUBIN], bytes, n, "k.cubin"));
  assert_ok(fatbin_module(&mods[K_FATBIN]));
  cujit_module_destroy(c);
  return 0;
}

static int group_teardown(void **state) {
  int i;
  (void)state;
  for (i = 0; i < N_KINDS; i++) cujit_module_destroy(mods[i]);
  test_rmtree(tmp);
  free(tmp);
  return 0;
}

/* The module a test runs on; skips the fatbin's tests when there is none. */
static cujit_module *module_of(void **state) {
  int k = *(const int *)*state;
  if (!mods[k]) {
    test_skip_part("an nvcc fatbin: %s", fatbin_why);
    skip();
  }
  return mods[k];
}

static cujit_function *function_of(cujit_module *m, const char *name) {
  cujit_function *fn = NULL;
  assert_ok(cujit_module_get_function(m, name, &fn));
  assert_non_null(fn);
  return fn;
}

static void kernels_by_plain_name(void **state) {
  cujit_module *m = module_of(state);
  cujit_function *scale = function_of(m, "scale"), *add_one = function_of(m, "add_one");
  float x[N];
  int v[N], i;
  float zero = 0.0f;
  assert_ok(cujit_module_write_global(m, "bias", &zero, sizeof zero));
  assert_ok(cujit_module_write_global(m, "coef", (float[4]){0}, 4 * sizeof(float)));
  for (i = 0; i < N; i++) x[i] = (float)i, v[i] = -i;
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(128), cujit_inout(x, sizeof x),
                         cujit_f32(3.0f), cujit_i32(N)));
  assert_ok(
      CUJIT_LAUNCH(add_one, CUJIT_DIM3(2), CUJIT_DIM3(64), cujit_inout(v, sizeof v), cujit_i32(N)));
  for (i = 0; i < N; i++) assert_true(x[i] == 3.0f * (float)i && v[i] == 1 - i);
  assert_string_equal(cujit_function_name(scale), "scale");
  assert_ptr_equal(function_of(m, "_Z5scalePffi"), scale); /* by symbol: the same handle */
}

static void arguments_checked_before_launch(void **state) {
  cujit_module *m = module_of(state);
  cujit_function *scale = function_of(m, "scale");
  float x[N] = {0};
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_inout(x, sizeof x),
                                    cujit_f32(1.0f)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'scale' takes 3 arguments but 2 were given");
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_inout(x, sizeof x),
                                    cujit_f64(1.0), cujit_i32(N)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'scale' has the wrong size: parameter 2 expects 4 "
                       "bytes, but 8 bytes were given");
  /* the symbol spells a C++ kernel's types, prebuilt or not: a swapped int and float fail */
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_inout(x, sizeof x),
                                    cujit_i32(N), cujit_f32(1.0f)),
                       CUJIT_ERROR_INVALID_ARGS,
                       "argument 2 of kernel 'scale' is an int (i32), but parameter 2 is 'float'");
}

static void variables_by_name(void **state) {
  cujit_module *m = module_of(state);
  cujit_function *scale = function_of(m, "scale");
  float x[N], bias = 0.5f, coef[4] = {0.25f, 0, 0, 0};
  int zero = 0, count = -1, i;
  CUdeviceptr d = 0;
  size_t bytes = 0;
  assert_ok(cujit_module_get_global(m, "coef", &d, &bytes));
  assert_true(d != 0);
  assert_int_equal(bytes, sizeof coef);
  assert_ok(cujit_module_write_global(m, "counter", &zero, sizeof zero));
  assert_ok(cujit_module_write_global(m, "bias", &bias, sizeof bias)); /* ns::bias, plain */
  assert_ok(cujit_module_write_global(m, "coef", coef, sizeof coef));
  for (i = 0; i < N; i++) x[i] = (float)i;
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(128), cujit_inout(x, sizeof x),
                         cujit_f32(2.0f), cujit_i32(N)));
  for (i = 0; i < N; i++) assert_true(x[i] == 2.0f * (float)i + 0.75f);
  assert_ok(cujit_module_read_global(m, "counter", &count, sizeof count));
  assert_int_equal(count, 1);
  assert_ok(cujit_module_get_global(m, "ns::bias", &d, &bytes));
  assert_int_equal(bytes, sizeof(float));
  assert_ok(cujit_module_get_global(m, "_ZN2ns4biasE", &d, &bytes));
  assert_status_detail(cujit_module_get_global(m, "nope", &d, NULL), CUJIT_ERROR_NOT_FOUND,
                       "has no variable 'nope'");
}

static void missing_kernel_lists_the_kernels(void **state) {
  cujit_module *m = module_of(state);
  cujit_function *fn = (cujit_function *)1;
  char want[256];
  snprintf(want, sizeof want,
           "module '%s' has no kernel 'nope'; its kernels: ", cujit_module_name(m));
  assert_status_detail(cujit_module_get_function(m, "nope", &fn), CUJIT_ERROR_NOT_FOUND, want);
  assert_null(fn);
  assert_non_null(strstr(cujit_last_error(), "scale (_Z5scalePffi)"));
  assert_non_null(strstr(cujit_last_error(), "add_one"));
}

static void attributes_layout_and_signatures(void **state) {
  cujit_module *m = module_of(state);
  cujit_function *scale = function_of(m, "scale"), *add_one = function_of(m, "add_one");
  cujit_function_attrs a = CUJIT_FUNCTION_ATTRS_INIT;
  size_t off = 0, size = 0;
  float x[N], zero = 0.0f;
  int v[N], i;
  assert_ok(cujit_function_get_attrs(scale, &a));
  assert_int_equal(a.num_params, 3);
  assert_true(a.max_threads_per_block > 0);
  assert_ok(cujit_function_get_param_info(scale, 1, &off, &size));
  assert_int_equal(off, 8);
  assert_int_equal(size, 4);
  /* a C++ kernel's symbol spells its types; an extern "C" kernel of prebuilt code has no
   * source to ask the compiler about, so its signature must be given */
  assert_string_equal(cujit_function_signature(scale), "ptr f32 i32");
  assert_null(cujit_function_signature(add_one));
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_SIGNATURE);
  assert_non_null(strstr(cujit_last_error(), "prebuilt code"));
  assert_non_null(strstr(cujit_last_error(), "cujit_function_set_signature"));
  assert_ok(cujit_function_set_signature(add_one, "ptr i32"));
  assert_ok(cujit_module_write_global(m, "bias", &zero, sizeof zero));
  assert_ok(cujit_module_write_global(m, "coef", (float[4]){0}, 4 * sizeof(float)));
  for (i = 0; i < N; i++) x[i] = (float)i, v[i] = i;
  assert_ok(
      cujit_call(scale, CUJIT_DIM3(1), CUJIT_DIM3(128), CUJIT_INOUT_PTR(x, sizeof x), 4.0, N));
  assert_ok(cujit_call(add_one, CUJIT_DIM3(1), CUJIT_DIM3(128), CUJIT_INOUT_PTR(v, sizeof v), N));
  for (i = 0; i < N; i++) assert_true(x[i] == 4.0f * (float)i && v[i] == i + 1);
}

typedef CUresult (*load_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
                            CUlibraryOption *, void **, unsigned);
typedef CUresult (*get_kernel_fn)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*param_info_fn)(CUkernel, size_t, size_t *, size_t *);
typedef CUresult (*unload_fn)(CUlibrary);

/* The layout cujit reads from a CUBIN's own description of its kernels is the one the
 * driver reports for each parameter (asked only for those: the count is cujit's), for
 * parameters of every size and a struct past 4 KiB. */
static void cubin_layout_is_the_drivers(void **state) {
  static const char src[] =
      "struct S { double a; char b; float c[3]; };\n"
      "struct __align__(16) V { float x, y, z, w; };\n"
      "struct Huge { int v[8000]; };\n"
      "extern \"C\" __global__ void none() {}\n"
      "extern \"C\" __global__ void mixed(float *a, int b, char c, double d, S s, V v,\n"
      "    short e, bool f, float4 g, long long h, unsigned char i) {}\n"
      "extern \"C\" __global__ void huge(int x, Huge b, char y) {}\n";
  static const char *const kernels[] = {"none", "mixed", "huge"};
  static const size_t counts[] = {0, 11, 3};
  void *load = NULL, *get = NULL, *info = NULL, *unload = NULL;
  cujit_module *c = NULL, *m = NULL;
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_function *fn;
  cujit_function_attrs a = CUJIT_FUNCTION_ATTRS_INIT;
  CUlibrary lib;
  CUkernel k;
  const void *cubin;
  size_t n, i, j, off, size, doff, dsize;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&c, src, "layout.cu", &o));
  assert_non_null(cubin = cujit_module_cubin(c, &n));
  assert_ok(cujit_module_from_image(&m, cubin, n, "layout.cubin"));
  assert_ok(cujit_driver_get_symbol("cuLibraryLoadData", &load));
  assert_ok(cujit_driver_get_symbol("cuLibraryGetKernel", &get));
  assert_ok(cujit_driver_get_symbol("cuKernelGetParamInfo", &info));
  assert_ok(cujit_driver_get_symbol("cuLibraryUnload", &unload));
  assert_int_equal(((load_fn)load)(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
  for (i = 0; i < 3; i++) {
    assert_ok(cujit_module_get_function(m, kernels[i], &fn));
    assert_ok(cujit_function_get_attrs(fn, &a));
    assert_int_equal(a.num_params, counts[i]);
    assert_int_equal(((get_kernel_fn)get)(&k, lib, kernels[i]), CUDA_SUCCESS);
    for (j = 0; j < counts[i]; j++) {
      assert_ok(cujit_function_get_param_info(fn, j, &off, &size));
      assert_int_equal(((param_info_fn)info)(k, j, &doff, &dsize), CUDA_SUCCESS);
      assert_int_equal(off, doff);
      assert_int_equal(size, dsize);
    }
  }
  ((unload_fn)unload)(lib);
  cujit_module_destroy(m);
  cujit_module_destroy(c);
}

#define FOR_EACH_KIND(fn)                                         \
  {"ptx: " #fn, fn, NULL, NULL, (void *)&kinds[K_PTX]},           \
      {"cubin: " #fn, fn, NULL, NULL, (void *)&kinds[K_CUBIN]}, { \
    "fatbin: " #fn, fn, NULL, NULL, (void *)&kinds[K_FATBIN]      \
  }

int main(void) {
  const struct CMUnitTest tests[] = {
      FOR_EACH_KIND(kernels_by_plain_name),
      FOR_EACH_KIND(arguments_checked_before_launch),
      FOR_EACH_KIND(variables_by_name),
      FOR_EACH_KIND(missing_kernel_lists_the_kernels),
      FOR_EACH_KIND(attributes_layout_and_signatures),
      cmocka_unit_test(cubin_layout_is_the_drivers),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return test_group_result(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
