/* test_gpu_export - a module exported and imported (as an MPI rank gets it from rank 0)
 * launches on the device: its kernels are found by plain name and by name expression,
 * and compute what the compiled module's do, with no NVRTC compile in the importer; a blob
 * compiled for another target than the device's is refused naming both. */
#include "gputest.h"

static const char kSrc[] = "template <typename T> __global__ void scale(T *x, T f, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) x[i] *= f;\n"
                           "}\n"
                           "extern \"C\" __global__ void add_offset(int *x, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) x[i] += OFFSET;\n"
                           "}\n";
static const char *const kDefines[] = {"OFFSET=7", NULL};
static const char *const kNames[] = {"scale<float>", NULL};

enum { N = 1000 };

static cujit_options options(void) {
  cujit_options o = {0}; /* the device's target */
  o.defines = kDefines;
  o.name_expressions = kNames;
  return o;
}

/* Compiles and exports; the module is destroyed and the caches emptied, so that the import
 * has only the blob to go by. */
static void *compile_and_export(const cujit_options *o, size_t *size) {
  cujit_module *m = NULL;
  void *blob = NULL;
  assert_ok(cujit_module_from_source(&m, kSrc, "export.cu", o));
  assert_ok(cujit_module_export(m, &blob, size));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_clear());
  return blob;
}

/* Runs both kernels of m on N elements and checks every result. */
static void run_kernels(cujit_module *m) {
  cujit_function *add = gpu_function(m, "add_offset"), *scale = gpu_function(m, "scale<float>");
  int x[N], i;
  float y[N];
  for (i = 0; i < N; i++) {
    x[i] = i * 3 - 500;
    y[i] = (float)i * 0.25f - 100.0f;
  }
  assert_ok(CUJIT_LAUNCH(add, CUJIT_DIM3((N + 127) / 128), CUJIT_DIM3(128),
                         cujit_inout(x, sizeof x), cujit_i32(N)));
  assert_ok(CUJIT_LAUNCH(scale, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256),
                         cujit_inout(y, sizeof y), cujit_f32(-2.0f), cujit_i32(N)));
  for (i = 0; i < N; i++) {
    if (x[i] != i * 3 - 500 + 7)
      fail_msg("add_offset: x[%d] = %d, expected %d", i, x[i], i * 3 - 500 + 7);
    if (y[i] != ((float)i * 0.25f - 100.0f) * -2.0f)
      fail_msg("scale<float>: y[%d] = %g, expected %g", i, (double)y[i],
               (double)(((float)i * 0.25f - 100.0f) * -2.0f));
  }
}

static void imported_module_launches(void **state) {
  cujit_options o = options();
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  cujit_module *m = NULL;
  size_t size = 0;
  void *blob = compile_and_export(&o, &size);
  (void)state;
  assert_ok(cujit_cache_get_stats(&before));
  assert_ok(cujit_module_import(&m, blob, size, kSrc, "export.cu", &o));
  cujit_free(blob); /* the module needs nothing of it */
  assert_ok(cujit_cache_get_stats(&after));
  assert_int_equal(after.compiles, before.compiles);
  run_kernels(m);
  cujit_module_destroy(m);
}

static void imported_without_cache_launches(void **state) {
  cujit_options o = options();
  cujit_module *m = NULL;
  size_t size = 0;
  void *blob;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  blob = compile_and_export(&o, &size);
  assert_ok(cujit_module_import(&m, blob, size, kSrc, "export.cu", &o));
  cujit_free(blob);
  run_kernels(m);
  cujit_module_destroy(m);
}

static void other_target_refused(void **state) {
  cujit_options o = options();
  cujit_module *m = NULL;
  char name[256], want[160];
  int major = 0, minor = 0;
  size_t size = 0;
  void *blob;
  (void)state;
  o.arch = "compute_75";
  blob = compile_and_export(&o, &size);
  o.arch = NULL;
  assert_ok(cujit_device_get_info(0, name, sizeof name, &major, &minor));
  snprintf(want, sizeof want,
           "the target architecture differs (the blob's: 'compute_75'; here: "
           "'sm_%d')",
           major * 10 + minor);
  assert_status_detail(cujit_module_import(&m, blob, size, kSrc, "export.cu", &o),
                       CUJIT_ERROR_INVALID_VALUE, want);
  assert_null(m);
  /* the blob is still good where the target matches */
  o.arch = "compute_75";
  assert_ok(cujit_module_import(&m, blob, size, kSrc, "export.cu", &o));
  run_kernels(m); /* PTX, compiled for the device by the driver */
  cujit_module_destroy(m);
  cujit_free(blob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(imported_module_launches),
      cmocka_unit_test(imported_without_cache_launches),
      cmocka_unit_test(other_target_refused),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
