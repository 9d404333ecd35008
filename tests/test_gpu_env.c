/* test_gpu_env - the launch path's tuning variables with values that are not what they
 * should be (CUJIT_POOL_KEEP, CUJIT_STAGING_THREADS, CUJIT_STAGING_MIN,
 * CUJIT_STAGING_CHUNK): each is reported once at warning level, naming the value and the
 * default used, and In/Out launches work with the defaults. They are read on the first
 * pooled or staged transfer, which needs a device. */
#include "gputest.h"

static char warnings[1 << 14];

static void keep_warning(cujit_log_level level, const char *message, void *user) {
  size_t n = strlen(warnings);
  (void)user;
  if (level == CUJIT_LOG_WARN) snprintf(warnings + n, sizeof warnings - n, "%s\n", message);
}

static int occurrences(const char *needle) {
  const char *p = warnings;
  int n = 0;
  while ((p = strstr(p, needle)) != NULL) {
    n++;
    p += strlen(needle);
  }
  return n;
}

static const char kSrc[] =
    "__global__ void inc(const float *in, float *out, unsigned long long n) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       i < n; i += (unsigned long long)gridDim.x * blockDim.x) out[i] = in[i] + 1.0f;\n"
    "}\n";

static void bad_tuning_values_warn_once(void **state) {
  size_t n = (9u << 20) / sizeof(float), i, round;
  float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  cujit_module *m = gpu_module(kSrc, "env.cu", NULL);
  cujit_function *inc = gpu_function(m, "inc");
  (void)state;
  assert_non_null(in);
  assert_non_null(out);
  for (i = 0; i < n; i++) in[i] = (float)(i % 1000);
  for (round = 0; round < 2; round++) {
    assert_ok(CUJIT_LAUNCH(inc, CUJIT_DIM3(1024), CUJIT_DIM3(256), cujit_in(in, n * sizeof(float)),
                           cujit_out(out, n * sizeof(float)), cujit_u64(n)));
    for (i = 0; i < n; i++)
      if (out[i] != in[i] + 1.0f) fail_msg("element %zu: %g", i, (double)out[i]);
  }
  assert_int_equal(occurrences("CUJIT_POOL_KEEP='lots' is not a size"), 1);
  assert_int_equal(occurrences("using the default unlimited"), 1);
  assert_int_equal(occurrences("CUJIT_STAGING_THREADS='many' is not a number of threads"), 1);
  assert_int_equal(occurrences("CUJIT_STAGING_MIN='small' is not a size"), 1);
  assert_int_equal(occurrences("CUJIT_STAGING_CHUNK='-1' is not a size"), 1);
  assert_int_equal(occurrences("using the default 1M"), 2);
  cujit_module_destroy(m);
  free(in);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(bad_tuning_values_warn_once)};
  setenv("CUJIT_POOL_KEEP", "lots", 1);
  setenv("CUJIT_STAGING_THREADS", "many", 1);
  setenv("CUJIT_STAGING_MIN", "small", 1);
  setenv("CUJIT_STAGING_CHUNK", "-1", 1);
  cujit_log_set_callback(keep_warning, NULL);
  cujit_log_set_level(CUJIT_LOG_WARN);
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
