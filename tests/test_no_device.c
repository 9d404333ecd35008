/* test_no_device - a driver is installed but no device is visible (CUDA_VISIBLE_DEVICES is
 * empty): device calls return CUJIT_ERROR_NO_DEVICE and say so, and compiling still works,
 * for NVRTC's default target. Needs a driver, so it skips where there is none. */
#include <dlfcn.h>

#include "testutil.h"

static void device_calls_report_no_device(void **state) {
  int n = -1;
  CUdeviceptr p = 0;
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  (void)state;
  assert_status_detail(cujit_device_get_count(&n), CUJIT_ERROR_NO_DEVICE, "found no device");
  assert_non_null(strstr(cujit_last_error(), "CUDA_VISIBLE_DEVICES"));
  assert_int_equal(cujit_mem_alloc(&p, 64), CUJIT_ERROR_NO_DEVICE);
  assert_ok(cujit_module_from_source(&m, "__global__ void k(int *x) { *x = 1; }", "k.cu", NULL));
  assert_memory_equal(cujit_module_arch(m), "compute_", 8); /* no device to target */
  assert_status_detail(cujit_module_get_function(m, "k", &f), CUJIT_ERROR_NO_DEVICE, "no device");
  assert_null(f);
  cujit_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(device_calls_report_no_device)};
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("SKIP: needs an installed CUDA driver (libcuda.so.1 not found)\n");
    return TEST_SKIP_CODE;
  }
  dlclose(lib);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
