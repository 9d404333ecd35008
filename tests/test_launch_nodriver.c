/* test_launch_nodriver - the lookup, launch, memory and stream calls without a CUDA driver:
 * names are still resolved (a missing or ambiguous kernel is reported as such, since the
 * kernels are read from the PTX), and whatever needs the device fails with
 * CUJIT_ERROR_NO_DRIVER and says so. The driver path is forced to a missing file, so this
 * runs the same on machines with and without a GPU. */
#include "testutil.h"

static const char kSrc[] = "__global__ void multiply_them(float *d, float *a, float *b) { "
                           "d[threadIdx.x] = a[threadIdx.x] * b[threadIdx.x]; }\n"
                           "__global__ void over(int *x) {}\n"
                           "__global__ void over(float *x) {}\n"
                           "template <typename T> __global__ void scale(T *x) { x[0] *= 2; }\n"
                           "__constant__ float coef[4];\n";

static cujit_module *mod;

static int setup(void **state) {
  const char *names[] = {"scale<float>", NULL};
  cujit_options o = {0};
  (void)state;
  o.name_expressions = names;
  o.flags = CUJIT_OPT_NO_CACHE;
  return cujit_module_from_source(&mod, kSrc, "nodriver.cu", &o) == CUJIT_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  cujit_module_destroy(mod);
  return 0;
}

static void names_resolve_without_a_driver(void **state) {
  cujit_function *fn = (cujit_function *)1;
  (void)state;
  assert_status_detail(cujit_module_get_function(mod, "nope", &fn), CUJIT_ERROR_NOT_FOUND,
                       "module 'nodriver.cu' has no kernel 'nope'; its kernels: ");
  assert_null(fn);
  assert_non_null(strstr(cujit_last_error(), "multiply_them (_Z13multiply_themPfS_S_)"));
  assert_non_null(strstr(cujit_last_error(), "scale<...> (_Z5scaleIfEvPT_)"));
  assert_status_detail(cujit_module_get_function(mod, "over", &fn), CUJIT_ERROR_AMBIGUOUS,
                       "'over' matches 2 kernels of module 'nodriver.cu': over (_Z4overPi), over "
                       "(_Z4overPf)");
  assert_non_null(strstr(cujit_last_error(), "name expression"));
  assert_status_detail(cujit_module_get_function(mod, "scale<int>", &fn), CUJIT_ERROR_NOT_FOUND,
                       "add \"scale<int>\" to cujit_options.name_expressions");
  assert_status_detail(cujit_module_get_global(mod, "coeff", &(CUdeviceptr){0}, NULL),
                       CUJIT_ERROR_NOT_FOUND, "has no variable 'coeff'; its variables: coef");
}

static void found_names_need_the_driver(void **state) {
  cujit_function *fn = NULL;
  CUdeviceptr d = 1;
  size_t n = 1;
  float x[4] = {0};
  (void)state;
  assert_status_detail(cujit_module_get_function(mod, "multiply_them", &fn), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_module_get_function(mod, "scale<float>", &fn), CUJIT_ERROR_NO_DRIVER,
                       "/nonexistent/libcuda.so.1");
  assert_status_detail(cujit_module_get_function(mod, "_Z4overPf", &fn), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_null(fn);
  assert_status_detail(cujit_module_get_global(mod, "coef", &d, &n), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_int_equal(d, 0);
  assert_int_equal(n, 0);
  assert_int_equal(cujit_module_write_global(mod, "coef", x, sizeof x), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_module_read_global(mod, "coef", x, sizeof x), CUJIT_ERROR_NO_DRIVER);
}

static void memory_and_streams_need_the_driver(void **state) {
  CUdeviceptr d = 1;
  void *h = (void *)1;
  CUstream s = (CUstream)1;
  size_t used = 1, kept = 1;
  char buf[8];
  (void)state;
  assert_status_detail(cujit_mem_alloc(&d, 64), CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  assert_int_equal(d, 0);
  assert_int_equal(cujit_mem_free((CUdeviceptr)0x1000), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_mem_copy_htod((CUdeviceptr)0x1000, buf, sizeof buf),
                   CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_mem_copy_dtoh(buf, (CUdeviceptr)0x1000, sizeof buf),
                   CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(cujit_mem_copy_dtod(0x1000, 0x2000, 64), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_mem_copy_dtod_async(0x1000, 0x2000, 64, NULL), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
  assert_status_detail(cujit_host_alloc(&h, 64), CUJIT_ERROR_NO_DRIVER,
                       "install the NVIDIA driver");
  assert_null(h);
  assert_int_equal(cujit_host_free(buf), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_stream_create(&s), CUJIT_ERROR_NO_DRIVER);
  assert_null(s);
  assert_int_equal(cujit_stream_destroy((CUstream)1), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_stream_synchronize(NULL), CUJIT_ERROR_NO_DRIVER);
  assert_status_detail(cujit_synchronize(), CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  assert_int_equal(cujit_mem_pool_get_usage(&used, &kept), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_mem_pool_trim(), CUJIT_ERROR_NO_DRIVER);
}

static void null_and_empty_arguments(void **state) {
  cujit_function *fn = NULL;
  CUdeviceptr d = 0;
  cujit_function_attrs attrs = CUJIT_FUNCTION_ATTRS_INIT;
  int block = 0;
  size_t off, size;
  (void)state;
  assert_status_detail(cujit_module_get_function(NULL, "k", &fn), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_module_get_function: mod is NULL");
  assert_status_detail(cujit_module_get_function(mod, "", &fn), CUJIT_ERROR_INVALID_VALUE,
                       "name is NULL or empty");
  assert_status_detail(cujit_module_get_function(mod, "k", NULL), CUJIT_ERROR_INVALID_VALUE,
                       "fn is NULL");
  assert_status_detail(cujit_module_get_global(mod, "coef", NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "dptr is NULL");
  assert_status_detail(cujit_module_write_global(mod, "coef", NULL, 4), CUJIT_ERROR_INVALID_VALUE,
                       "the host pointer is NULL");
  assert_status_detail(cujit_launch(NULL, CUJIT_DIM3(1), CUJIT_DIM3(1), NULL, 0, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "fn is NULL");
  assert_status_detail(cujit_function_get_attrs(NULL, &attrs), CUJIT_ERROR_INVALID_VALUE,
                       "fn is NULL");
  assert_status_detail(cujit_function_suggest_block(NULL, 0, &block, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "fn is NULL");
  assert_status_detail(cujit_function_get_param_info(NULL, 0, &off, &size),
                       CUJIT_ERROR_INVALID_VALUE, "fn is NULL");
  assert_null(cujit_function_name(NULL));
  assert_status_detail(cujit_mem_alloc(NULL, 4), CUJIT_ERROR_INVALID_VALUE, "dptr is NULL");
  assert_status_detail(cujit_mem_alloc(&d, 0), CUJIT_ERROR_INVALID_VALUE, "bytes is 0");
  assert_status_detail(cujit_host_alloc(NULL, 4), CUJIT_ERROR_INVALID_VALUE, "ptr is NULL");
  assert_status_detail(cujit_stream_create(NULL), CUJIT_ERROR_INVALID_VALUE, "stream is NULL");
  assert_status_detail(cujit_mem_copy_htod(0, &d, 4), CUJIT_ERROR_INVALID_VALUE, "dst is NULL");
  assert_status_detail(cujit_mem_copy_dtoh(NULL, 0x1000, 4), CUJIT_ERROR_INVALID_VALUE,
                       "dst is NULL");
  /* device-to-device copies: both ends set, inside the address space, apart */
  assert_status_detail(cujit_mem_copy_dtod(0, 0x1000, 4), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_mem_copy_dtod: dst is NULL");
  assert_status_detail(cujit_mem_copy_dtod_async(0x1000, 0, 4, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_mem_copy_dtod_async: src is NULL");
  assert_status_detail(cujit_mem_copy_dtod(0x1000, 0x1800, 4096), CUJIT_ERROR_INVALID_VALUE,
                       "the 4096 bytes at dst and at src overlap (they are 2048 bytes apart)");
  assert_status_detail(cujit_mem_copy_dtod(0x1800, 0x1000, 4096), CUJIT_ERROR_INVALID_VALUE,
                       "overlap (they are 2048 bytes apart)");
  assert_status_detail(cujit_mem_copy_dtod_async(0x1000, 0x1000, 1, NULL),
                       CUJIT_ERROR_INVALID_VALUE, "overlap (they are 0 bytes apart)");
  assert_status_detail(cujit_mem_copy_dtod(UINT64_MAX - 15, 0x1000, 17), CUJIT_ERROR_INVALID_VALUE,
                       "17 bytes from dst run past the end of the address space");
  assert_status_detail(cujit_mem_copy_dtod(0x1000, UINT64_MAX, 2), CUJIT_ERROR_INVALID_VALUE,
                       "2 bytes from src run past the end of the address space");
  assert_status_detail(cujit_mem_copy_dtod(0x1000, 0x2000, SIZE_MAX), CUJIT_ERROR_INVALID_VALUE,
                       "run past the end of the address space");
  /* the last byte of the address space, and two ranges that touch, are fine */
  assert_int_equal(cujit_mem_copy_dtod(UINT64_MAX - 15, 0x1000, 16), CUJIT_ERROR_NO_DRIVER);
  assert_int_equal(cujit_mem_copy_dtod(0x1000, 0x1800, 2048), CUJIT_ERROR_NO_DRIVER);
  /* nothing to do is not an error, and needs no driver */
  assert_ok(cujit_mem_copy_dtod(0, 0, 0));
  assert_ok(cujit_mem_copy_dtod_async(0x1000, 0x1000, 0, NULL));
  assert_ok(cujit_mem_free(0));
  assert_ok(cujit_host_free(NULL));
  assert_ok(cujit_stream_destroy(NULL));
  assert_ok(cujit_mem_copy_htod(0, NULL, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_resolve_without_a_driver),
      cmocka_unit_test(found_names_need_the_driver),
      cmocka_unit_test(memory_and_streams_need_the_driver),
      cmocka_unit_test(null_and_empty_arguments),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, setup, teardown);
}
