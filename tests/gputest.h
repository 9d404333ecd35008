/* gputest.h - what the GPU test groups share: compiling a module and looking up a kernel
 * with a failure that shows cujit's detail, and running a group only when a device is
 * usable. */
#ifndef CUJIT_GPUTEST_H
#define CUJIT_GPUTEST_H

#include "testutil.h"

/* Compiles `src` (name expressions optional, NULL-terminated); fails the test on error. */
static inline cujit_module *gpu_module(const char *src, const char *name,
                                       const char *const *name_expressions) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  o.name_expressions = name_expressions;
  assert_ok(cujit_module_from_source(&m, src, name, &o));
  return m;
}

static inline cujit_function *gpu_function(cujit_module *m, const char *name) {
  cujit_function *fn = NULL;
  assert_ok(cujit_module_get_function(m, name, &fn));
  assert_non_null(fn);
  return fn;
}

/* Bytes of In/Out staging memory handed out now on the current device. */
static inline size_t gpu_pool_in_use(void) {
  size_t used = 0;
  assert_ok(cujit_mem_pool_get_usage(&used, NULL));
  return used;
}

/* A context of the test's own on device 0, made by cuCtxCreate (and so current), through
 * the driver's own entry points; gpu_destroy_context() ends it. */
typedef CUresult (*gpu_ctx_create4_fn)(CUcontext *, void *, unsigned, CUdevice);
typedef CUresult (*gpu_ctx_create2_fn)(CUcontext *, unsigned, CUdevice);
typedef CUresult (*gpu_ctx_destroy_fn)(CUcontext);
typedef CUresult (*gpu_device_get_fn)(CUdevice *, int);

static inline CUcontext gpu_own_context(void) {
  void *create = NULL, *device_get = NULL;
  CUcontext c = NULL;
  CUdevice dev = 0;
  int version = 0;
  assert_ok(cujit_driver_get_version(&version));
  assert_ok(cujit_driver_get_symbol("cuCtxCreate", &create));
  assert_ok(cujit_driver_get_symbol("cuDeviceGet", &device_get));
  assert_int_equal(((gpu_device_get_fn)device_get)(&dev, 0), CUDA_SUCCESS);
  if (version >= 12050) /* cuCtxCreate_v4, with a parameter block (NULL: none) */
    assert_int_equal(((gpu_ctx_create4_fn)create)(&c, NULL, 0, dev), CUDA_SUCCESS);
  else
    assert_int_equal(((gpu_ctx_create2_fn)create)(&c, 0, dev), CUDA_SUCCESS);
  return c;
}

static inline void gpu_destroy_context(CUcontext c) {
  void *destroy = NULL;
  assert_ok(cujit_driver_get_symbol("cuCtxDestroy", &destroy));
  assert_int_equal(((gpu_ctx_destroy_fn)destroy)(c), CUDA_SUCCESS);
}

/* For groups that need `want` devices (at least one): 1 when that many are usable, else
 * prints why ("SKIP: needs two CUDA devices, found 1") and returns 0. */
static inline int gpu_have_devices(int want) {
  static const char *const words[] = {"no", "one", "two", "three", "four"};
  int n = 0;
  if (!test_have_gpu()) return 0;
  if (cujit_device_get_count(&n) == CUJIT_OK && n >= want) return 1;
  if (want < (int)(sizeof words / sizeof *words))
    printf("SKIP: needs %s CUDA devices, found %d\n", words[want], n);
  else
    printf("SKIP: needs %d CUDA devices, found %d\n", want, n);
  return 0;
}

/* The module a group's tests share, compiled by GPU_GROUP_MAIN's setup. */
static cujit_module *mod __attribute__((unused));

/* main() of a GPU group whose tests share `mod`, compiled from `src` (name expressions
 * `names`, may be NULL): the group is skipped (exit 77, with the reason) without a device,
 * or when a test skipped a part (test_skip_part). */
#define GPU_GROUP_MAIN(src, name, names, ...)                                             \
  static int group_setup(void **state) {                                                  \
    (void)state;                                                                          \
    mod = gpu_module((src), (name), (names));                                             \
    return 0;                                                                             \
  }                                                                                       \
  static int group_teardown(void **state) {                                               \
    (void)state;                                                                          \
    cujit_module_destroy(mod);                                                            \
    return 0;                                                                             \
  }                                                                                       \
  int main(void) {                                                                        \
    const struct CMUnitTest tests[] = {__VA_ARGS__};                                      \
    if (!test_have_gpu()) return TEST_SKIP_CODE;                                          \
    return test_group_result(cmocka_run_group_tests(tests, group_setup, group_teardown)); \
  }

#endif
