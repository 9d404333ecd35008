/* test_driver - behaviour without a CUDA driver: every device call fails with
 * CUJIT_ERROR_NO_DRIVER and says so, while compiling still works. The driver path is forced
 * to a missing file, so this runs the same on machines with and without a GPU. */
#include "testutil.h"

static void device_calls_report_no_driver(void **state) {
  int v = -1;
  CUdeviceptr p = 0;
  void *fn = NULL;
  (void)state;
  assert_status_detail(cujit_driver_version(&v), CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  assert_non_null(strstr(cujit_last_error(), "/nonexistent/libcuda.so.1"));
  assert_status_detail(cujit_device_count(&v), CUJIT_ERROR_NO_DRIVER, "install the NVIDIA driver");
  assert_int_equal(v, 0);
  assert_int_equal(cujit_driver_symbol("cuMemAlloc", &fn), CUJIT_ERROR_NO_DRIVER);
  assert_null(fn);
  assert_int_equal(cujit_device_info(0, NULL, 0, NULL, NULL), CUJIT_ERROR_NO_DRIVER);
  (void)p;
}

static void compile_works_without_driver(void **state) {
  cujit_module *m = NULL;
  size_t n = 0;
  (void)state;
  assert_ok(cujit_module_from_source(&m, "__global__ void k(int *x) { *x = 1; }", "k.cu", NULL));
  /* no device to choose an arch: NVRTC's default virtual target, PTX only */
  assert_non_null(strstr(cujit_module_ptx(m, &n), ".entry"));
  assert_true(n > 0);
  assert_null(cujit_module_cubin(m, &n));
  assert_int_equal(n, 0);
  assert_memory_equal(cujit_module_arch(m), "compute_", 8);
  cujit_module_destroy(m);
}

static void null_arguments(void **state) {
  (void)state;
  assert_int_equal(cujit_driver_version(NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(cujit_device_count(NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(cujit_driver_symbol(NULL, NULL), CUJIT_ERROR_INVALID_VALUE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(device_calls_report_no_driver),
      cmocka_unit_test(compile_works_without_driver),
      cmocka_unit_test(null_arguments),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
