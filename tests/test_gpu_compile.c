/* test_gpu_compile - with a device present, compiles target it by default. */
#include "testutil.h"

static void default_arch_is_the_device(void **state) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  char name[256], want[32];
  int ma = 0, mi = 0, archs[64];
  size_t n = 0, i;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_device_get_info(0, name, sizeof name, &ma, &mi));
  assert_ok(cujit_nvrtc_get_archs(archs, 64, &n));
  snprintf(want, sizeof want, "sm_%d", ma * 10 + mi);
  for (i = 0; i < n && archs[i] != ma * 10 + mi; i++) {
  }
  assert_ok(cujit_module_from_source(&m, "__global__ void k(int *x) { *x = 1; }", "k.cu", &o));
  if (i < n) { /* NVRTC knows this device: CUBIN for exactly it */
    assert_string_equal(cujit_module_arch(m), want);
    assert_non_null(cujit_module_cubin(m, NULL));
  }
  assert_non_null(cujit_module_ptx(m, NULL));
  printf("device 0: %s, compiled for %s\n", name, cujit_module_arch(m));
  cujit_module_destroy(m);
}

static void driver_is_found(void **state) {
  int v = 0, count = 0;
  void *fn = NULL;
  (void)state;
  assert_ok(cujit_driver_get_version(&v));
  assert_true(v >= 12000);
  assert_ok(cujit_device_get_count(&count));
  assert_true(count >= 1);
  assert_ok(cujit_driver_get_symbol("cuMemsetD8", &fn));
  assert_non_null(fn);
  assert_status_detail(cujit_driver_get_symbol("cuNoSuchFunction", &fn), CUJIT_ERROR_NOT_FOUND,
                       "cuNoSuchFunction");
  assert_status_detail(cujit_device_get_info(count, NULL, 0, NULL, NULL), CUJIT_ERROR_NO_DEVICE,
                       "does not exist");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(driver_is_found),
      cmocka_unit_test(default_arch_is_the_device),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
