/* test_gpu_bundle - bundles and nvcc fatbins on a device: the entry chosen for the device
 * is the one loaded, said in the log and by cujit_module_loaded_as(), and its kernels run
 * with the right results: a bundle holding this device's CUBIN loads it; a bundle whose
 * CUBINs are all for other GPUs falls back to its (older) PTX through the driver's JIT;
 * nvcc fatbins (plain and compressed) load their CUBIN for this device, or their PTX. */
#include <pthread.h>

#include "prebuilttest.h"

enum { N = 256 };

static char *tmp;
static int cc; /* this device's compute capability, 90 for sm_90 */

/* ---- the log, kept ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[1 << 15];

static void keep_log(cujit_log_level level, const char *message, void *user) {
  size_t n;
  (void)level;
  (void)user;
  pthread_mutex_lock(&log_mu);
  n = strlen(log_text);
  snprintf(log_text + n, sizeof log_text - n, "%s\n", message);
  pthread_mutex_unlock(&log_mu);
}

static int group_setup(void **state) {
  int major = 0, minor = 0;
  (void)state;
  if (cujit_device_get_info(0, NULL, 0, &major, &minor) != CUJIT_OK) return -1;
  cc = major * 10 + minor;
  tmp = test_tempdir("gpu-bundle");
  cujit_log_set_callback(keep_log, NULL);
  cujit_log_set_level(CUJIT_LOG_INFO);
  return tmp ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  cujit_log_set_callback(NULL, NULL);
  cujit_log_set_level(CUJIT_LOG_OFF);
  if (tmp) test_rmtree(tmp);
  free(tmp);
  return 0;
}

/* Runs scale (x * 3 + bias + coef[0]) and add_one from the module and checks them, and
 * that what was loaded on device 0 is `want`, in the query and in the log. `bias_name`
 * names ns::bias: "bias" where the module's variables can be listed, its symbol where
 * they cannot (compressed fatbin entries). */
static void runs_with(cujit_module *m, const char *want, const char *bias_name) {
  cujit_function *scale = NULL, *add_one = NULL;
  float x[N], bias = 0.5f, coef[4] = {0.25f, 0, 0, 0};
  int v[N], i;
  char line[256];
  pthread_mutex_lock(&log_mu);
  log_text[0] = '\0';
  pthread_mutex_unlock(&log_mu);
  assert_ok(cujit_module_get_function(m, "scale", &scale));
  assert_ok(cujit_module_get_function(m, "add_one", &add_one));
  assert_ok(cujit_module_write_global(m, bias_name, &bias, sizeof bias));
  assert_ok(cujit_module_write_global(m, "coef", coef, sizeof coef));
  for (i = 0; i < N; i++) x[i] = (float)i, v[i] = 2 * i;
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3(2), CUJIT_DIM3(128), cujit_inout(x, sizeof x),
                         cujit_f32(3.0f), cujit_i32(N)));
  assert_ok(CUJIT_LAUNCH(add_one, CUJIT_DIM3(2), CUJIT_DIM3(128), cujit_inout(v, sizeof v),
                         cujit_i32(N)));
  for (i = 0; i < N; i++) {
    if (x[i] != 3.0f * (float)i + 0.75f || v[i] != 2 * i + 1)
      fail_msg("element %d: %g and %d (expected %g and %d)", i, (double)x[i], v[i], 3.0 * i + 0.75,
               2 * i + 1);
  }
  assert_non_null(cujit_module_loaded_as(m, 0));
  assert_string_equal(cujit_module_loaded_as(m, 0), want);
  snprintf(line, sizeof line, "on device 0 (sm_%d): loaded %s", cc, want);
  if (!strstr(log_text, line)) fail_msg("log lacks \"%s\":\n%s", line, log_text);
  /* a C++ kernel's parameter types come from its mangled name, as for other modules */
  assert_status_detail(CUJIT_LAUNCH(scale, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_inout(x, sizeof x),
                                    cujit_i32(N), cujit_f32(1.0f)),
                       CUJIT_ERROR_INVALID_ARGS, "parameter 2 is 'float'");
}

static void runs_as(cujit_module *m, const char *want) { runs_with(m, want, "bias"); }

/* The supported targets older than this device's major version: CUBINs none of which
 * runs here. Returns how many (at most max). */
static size_t other_major_archs(char (*out)[16], size_t max) {
  int archs[64];
  size_t n = 0, i, k = 0;
  assert_ok(cujit_nvrtc_get_archs(archs, 64, &n));
  for (i = 0; i < n && i < 64 && k < max; i++)
    if (archs[i] / 10 < cc / 10) snprintf(out[k++], 16, "sm_%d", archs[i]);
  return k;
}

static cujit_module *bundle_module(const char *const *archs, size_t n) {
  void *b = NULL;
  size_t size = 0;
  cujit_module *m = NULL;
  assert_ok(cujit_bundle_from_source(&b, &size, kPrebuiltSrc, "b.cu", NULL, archs, n));
  assert_ok(cujit_module_from_image(&m, b, size, "b.bundle"));
  cujit_free(b);
  return m;
}

static void bundle_loads_the_device_cubin(void **state) {
  char mine[16], others[4][16], want[32];
  const char *archs[5];
  size_t n, i;
  cujit_module *m;
  (void)state;
  snprintf(mine, sizeof mine, "sm_%d", cc);
  n = other_major_archs(others, 4);
  for (i = 0; i < n; i++) archs[i] = others[i];
  archs[n++] = mine; /* the newest: its PTX is there too, but the CUBIN wins */
  m = bundle_module(archs, n);
  snprintf(want, sizeof want, "CUBIN sm_%d", cc);
  runs_as(m, want);
  cujit_module_destroy(m);
}

static void bundle_falls_back_to_ptx(void **state) {
  char others[4][16], want[48];
  const char *archs[4];
  size_t n, i;
  cujit_module *m;
  (void)state;
  n = other_major_archs(others, 4);
  if (n == 0) {
    test_skip_part("NVRTC supports no target of an older major version than sm_%d", cc);
    skip();
  }
  for (i = 0; i < n; i++) archs[i] = others[i];
  m = bundle_module(archs, n);
  /* the PTX of the newest of them: older than this device, compiled by the JIT */
  snprintf(want, sizeof want, "PTX compute_%s (JIT)", others[n - 1] + 3);
  runs_as(m, want);
  cujit_module_destroy(m);
}

/* A module of nvcc's fatbin for `gencode`; NULL (the test skipped) without nvcc. */
static cujit_module *fatbin_module(const char *gencode) {
  char path[4096], why[8192];
  cujit_module *m = NULL;
  if (prebuilt_nvcc_fatbin(tmp, gencode, path, sizeof path, why, sizeof why)) {
    test_skip_part("an nvcc fatbin: %s", why);
    skip();
  }
  assert_ok(cujit_module_from_image_file(&m, path));
  return m;
}

static void fatbin_loads_the_device_cubin(void **state) {
  char gencode[256], want[32];
  float one = 1.0f;
  cujit_module *m;
  (void)state;
  snprintf(gencode, sizeof gencode,
           "-gencode arch=compute_75,code=sm_75 "
           "-gencode arch=compute_%d,code=[sm_%d,compute_%d]",
           cc, cc, cc);
  m = fatbin_module(gencode);
  snprintf(want, sizeof want, "CUBIN sm_%d", cc);
  runs_as(m, want);
  cujit_module_destroy(m);
  /* compressed entries: given to the driver as a fatbin of that entry alone */
  snprintf(gencode, sizeof gencode,
           "-Xfatbin=-compress-all "
           "-gencode arch=compute_%d,code=[sm_%d,compute_%d]",
           cc, cc, cc);
  m = fatbin_module(gencode);
  runs_with(m, want, "_ZN2ns4biasE");
  /* its variables cannot be listed, so a short name is not found, saying why */
  assert_status_detail(cujit_module_write_global(m, "bias", &one, sizeof one),
                       CUJIT_ERROR_NOT_FOUND, "its fatbin's entries are compressed");
  cujit_module_destroy(m);
}

static void fatbin_falls_back_to_ptx(void **state) {
  char gencode[256];
  cujit_module *m;
  (void)state;
  if (cc < 80) {
    test_skip_part("a fatbin's older PTX needs a device newer than sm_75");
    skip();
  }
  strcpy(gencode, "-gencode arch=compute_75,code=[sm_75,compute_75]");
  m = fatbin_module(gencode);
  runs_as(m, "PTX compute_75 (JIT)");
  cujit_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bundle_loads_the_device_cubin),
      cmocka_unit_test(bundle_falls_back_to_ptx),
      cmocka_unit_test(fatbin_loads_the_device_cubin),
      cmocka_unit_test(fatbin_falls_back_to_ptx),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return test_group_result(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
