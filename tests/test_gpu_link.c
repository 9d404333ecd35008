/* test_gpu_link - programs of several parts linked with nvJitLink and launched: a kernel
 * calling a __device__ function of another source and sharing an extern __device__
 * variable with it (with and without link-time optimisation, and with the other source
 * given as a prebuilt CUBIN), and a kernel launching a child kernel through
 * libcudadevrt. Each result is checked element by element. Links for the device's
 * architecture (cujit_options.arch NULL). */
#include "testutil.h"
#include "linktest.h"

enum { N = 1000 };

static cujit_module *link_parts(const cujit_link_part *parts, size_t n, unsigned flags) {
  cujit_module *m = NULL;
  cujit_link_options l = CUJIT_LINK_OPTIONS_INIT;
  l.flags = flags;
  assert_ok(cujit_module_link(&m, parts, n, NULL, &l));
  assert_non_null(m);
  return m;
}

/* Launches apply() over N floats and checks p[i] = (2 x + 1) * 3 and the shared counter. */
static void run_apply(cujit_module *m) {
  cujit_function *fn = NULL;
  float x[N], want;
  int i, zero = 0, calls = -1;
  float scale = 0.0f;
  for (i = 0; i < N; i++) x[i] = (float)i * 0.25f - 10.0f;
  assert_ok(cujit_module_get_function(m, "apply", &fn));
  assert_ok(cujit_module_write_global(m, "calls", &zero, sizeof zero));
  assert_ok(cujit_module_read_global(m, "scale", &scale, sizeof scale));
  assert_true(scale == 3.0f);
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3((N + 127) / 128), CUJIT_DIM3(128), cujit_inout(x, sizeof x),
                         cujit_i32(N)));
  for (i = 0; i < N; i++) {
    want = (2.0f * ((float)i * 0.25f - 10.0f) + 1.0f) * 3.0f;
    if (x[i] != want) fail_msg("x[%d] = %g, wanted %g", i, (double)x[i], (double)want);
  }
  assert_ok(cujit_module_read_global(m, "calls", &calls, sizeof calls));
  assert_int_equal(calls, N);
}

static void calls_across_sources(void **state) {
  cujit_link_part parts[2];
  cujit_module *m;
  (void)state;
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_source(kLinkLib, "lib.cu");
  m = link_parts(parts, 2, 0);
  run_apply(m);
  cujit_module_destroy(m);
}

static void lto_across_sources(void **state) {
  cujit_link_part parts[2];
  cujit_module *m;
  (void)state;
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_source(kLinkLib, "lib.cu");
  m = link_parts(parts, 2, CUJIT_LINK_OPT_LTO);
  {
    size_t size = 0;
    const void *cubin = cujit_module_cubin(m, &size);
    assert_false(bytes_hold(cubin, size, "_Z5twicef")); /* inlined */
  }
  run_apply(m);
  cujit_module_destroy(m);
}

static void prebuilt_cubin_part(void **state) {
  const char *const rdc[] = {"-rdc=true", NULL};
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_link_part parts[2];
  cujit_module *lib = NULL, *m;
  size_t size = 0;
  const void *cubin;
  (void)state;
  o.nvrtc_options = rdc;
  assert_ok(cujit_module_from_source(&lib, kLinkLib, "lib.cu", &o));
  cubin = cujit_module_cubin(lib, &size);
  assert_non_null(cubin);
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_bytes(CUJIT_LINK_CUBIN, cubin, size, "lib.cubin");
  m = link_parts(parts, 2, 0);
  run_apply(m);
  cujit_module_destroy(m);
  cujit_module_destroy(lib);
}

/* The library's code made by nvcc for this device, as a static library, a host object,
 * a fatbin, and LTO-IR in a fatbin (linked with link-time optimisation). */
static void nvcc_parts(void **state) {
  static const struct {
    int kind;
    const char *file;
    unsigned flags;
  } cases[] = {{CUJIT_LINK_LIBRARY, "liblib.a", 0},
               {CUJIT_LINK_OBJECT, "lib.o", 0},
               {CUJIT_LINK_FATBIN, "lib.fatbin", 0},
               {CUJIT_LINK_FATBIN, "lib_lto.fatbin", CUJIT_LINK_OPT_LTO}};
  char *dir = test_tempdir("gpu-link"), why[8192], path[4200];
  cujit_link_part parts[2];
  cujit_module *m;
  int major = 0, minor = 0;
  size_t i;
  (void)state;
  assert_ok(cujit_device_get_info(0, NULL, 0, &major, &minor));
  if (link_nvcc_parts(dir, major * 10 + minor, why, sizeof why)) {
    test_rmtree(dir);
    free(dir);
    test_skip_part("%s", why);
    skip();
  }
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    parts[0] = link_source(kLinkMain, "main.cu");
    parts[1] = link_file(cases[i].kind, dir, cases[i].file, path, sizeof path);
    m = link_parts(parts, 2, cases[i].flags);
    run_apply(m);
    cujit_module_destroy(m);
  }
  test_rmtree(dir);
  free(dir);
}

static void dynamic_parallelism(void **state) {
  cujit_link_part parts[2];
  cujit_function *fn = NULL;
  cujit_module *m;
  int out[128], i;
  (void)state;
  parts[0] = link_source(kLinkParent, "parent.cu");
  parts[1] = link_bytes(CUJIT_LINK_CUDADEVRT, NULL, 0, NULL);
  m = link_parts(parts, 2, 0);
  memset(out, 0xff, sizeof out);
  assert_ok(cujit_module_get_function(m, "parent", &fn));
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(4), cujit_inout(out, sizeof out)));
  assert_ok(cujit_synchronize());
  for (i = 0; i < 128; i++)
    if (out[i] != 7 * i) fail_msg("out[%d] = %d, wanted %d", i, out[i], 7 * i);
  cujit_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(calls_across_sources), cmocka_unit_test(lto_across_sources),
      cmocka_unit_test(prebuilt_cubin_part),  cmocka_unit_test(nvcc_parts),
      cmocka_unit_test(dynamic_parallelism),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}
