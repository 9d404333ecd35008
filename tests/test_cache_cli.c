/* test_cache_cli - 'cujit cache dir|stats|list|clear|prune' and the cache line of
 * 'cujit info': outputs and exit codes (0 success, 1 failure, 2 bad usage), with the
 * cache in a fresh directory; 'cujit compile' goes through the cache too. */
#include <sys/stat.h>
#include <sys/wait.h>

#include "testutil.h"

static char *tmp, env[4400];

/* Runs the CLI with `args` in the temp dir and CUJIT_CACHE_DIR=<tmp>/cache (plus `extra`
 * environment, may be ""); captures stdout and stderr. Returns the exit status. */
static int cli(const char *extra, const char *args, char *out, size_t size) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s %s '%s' %s 2>&1", tmp, env, extra, CUJIT_CLI_PATH, args);
  return test_capture(cmd, out, size);
}

#define assert_has(out, needle)                                                          \
  do {                                                                                   \
    if (!strstr((out), (needle))) fail_msg("output lacks \"%s\":\n%s", (needle), (out)); \
  } while (0)

static int setup(void **state) {
  (void)state;
  if (!(tmp = test_tempdir("cachecli"))) return -1;
  snprintf(env, sizeof env, "CUJIT_CACHE_DIR='%s/cache' CUJIT_LIBCUDA=/nonexistent", tmp);
  test_write_file(tmp, "one.cu", "__global__ void one(int *x) { x[0] = 1; }\n");
  test_write_file(tmp, "two.cu", "__global__ void two(int *x) { x[0] = 2; }\n");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(tmp);
  free(tmp);
  return 0;
}

static void dir_and_empty_stats(void **state) {
  char out[8192], want[4400];
  (void)state;
  snprintf(want, sizeof want, "%s/cache\n", tmp);
  assert_int_equal(cli("", "cache dir", out, sizeof out), 0);
  assert_string_equal(out, want);
  assert_int_equal(cli("", "cache stats", out, sizeof out), 0);
  assert_has(out, "entries           0");
  assert_has(out, "hits              0");
  assert_has(out, "hit rate          -");
  assert_has(out, "limit 1.0 GiB");
  assert_int_equal(cli("CUJIT_CACHE_MAX_SIZE=200M", "cache stats", out, sizeof out), 0);
  assert_has(out, "limit 200.0 MiB");
  assert_int_equal(cli("", "cache list", out, sizeof out), 0);
  assert_has(out, "the cache is empty");
}

static void compile_fills_the_cache(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("", "compile one.cu --arch compute_80 -o -", out, sizeof out), 0);
  assert_int_equal(cli("", "compile one.cu --arch compute_80 -o -", out, sizeof out), 0);
  assert_has(out, ".target sm_80");
  assert_int_equal(cli("", "compile two.cu --arch compute_80 -o /dev/null", out, sizeof out), 0);
  assert_int_equal(cli("", "compile two.cu --arch compute_80 --no-cache -o /dev/null", out,
                       sizeof out),
                   0);
  assert_int_equal(cli("", "cache stats", out, sizeof out), 0);
  assert_has(out, "entries           2");
  assert_has(out, "hits              1");
  assert_has(out, "misses            2");
  assert_has(out, "hit rate          33.3 %");
  assert_has(out, "compiles          2");
  assert_int_equal(cli("", "cache list", out, sizeof out), 0);
  assert_has(out, "last use");
  assert_has(out, "one.cu");
  assert_has(out, "two.cu");
  assert_has(out, "compute_80");
  assert_int_equal(cli("", "info", out, sizeof out), 0);
  assert_has(out, "/cache (2 entries, ");
}

static void prune_and_clear(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("", "compile one.cu --arch compute_80 -o /dev/null", out, sizeof out), 0);
  assert_int_equal(cli("", "compile two.cu --arch compute_80 -o /dev/null", out, sizeof out), 0);
  assert_int_equal(cli("", "cache prune", out, sizeof out), 0);
  assert_has(out, "removed 0 entries (0 bytes); the cache holds 2 entries");
  assert_int_equal(cli("", "cache prune --max-size 1", out, sizeof out), 0);
  assert_has(out, "removed 2 entries");
  assert_has(out, "the cache holds 0 entries (0 bytes)");
  assert_int_equal(cli("", "compile one.cu --arch compute_80 -o /dev/null", out, sizeof out), 0);
  assert_int_equal(cli("", "cache prune --max-size=1G", out, sizeof out), 0);
  assert_has(out, "removed 0 entries");
  assert_int_equal(cli("", "cache clear", out, sizeof out), 0);
  assert_has(out, "removed 1 entries");
  assert_int_equal(cli("", "cache stats", out, sizeof out), 0);
  assert_has(out, "entries           0");
  assert_has(out, "evictions         2");
}

static void bad_usage(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("", "cache", out, sizeof out), 2);
  assert_has(out, "cache needs one of: dir, stats, list, clear, prune");
  assert_int_equal(cli("", "cache frobnicate", out, sizeof out), 2);
  assert_has(out, "(got 'frobnicate')");
  assert_int_equal(cli("", "cache stats now", out, sizeof out), 2);
  assert_has(out, "cache stats takes no arguments");
  assert_int_equal(cli("", "cache prune --max-size lots", out, sizeof out), 2);
  assert_has(out, "--max-size needs a size above 0, like 500M or 2G (got 'lots')");
  assert_int_equal(cli("", "cache prune --max-size 0", out, sizeof out), 2);
  assert_int_equal(cli("", "cache prune --max-size", out, sizeof out), 2);
  assert_has(out, "prune takes only --max-size N");
  assert_int_equal(cli("", "cache prune --fast", out, sizeof out), 2);
}

/* No usable cache: the commands fail with the reason; compiling still works. */
static void no_usable_cache(void **state) {
  char out[8192], shared[4400];
  (void)state;
  assert_int_equal(cli("CUJIT_CACHE=0", "cache dir", out, sizeof out), 1);
  assert_has(out, "the disk cache is off (CUJIT_CACHE=0)");
  assert_int_equal(cli("CUJIT_CACHE=0", "cache stats", out, sizeof out), 1);
  assert_int_equal(cli("CUJIT_CACHE=0", "cache list", out, sizeof out), 1);
  assert_int_equal(cli("CUJIT_CACHE=0", "cache clear", out, sizeof out), 1);
  assert_int_equal(cli("CUJIT_CACHE=0", "info", out, sizeof out), 0);
  assert_has(out, "cache: none (the disk cache is off (CUJIT_CACHE=0))");
  snprintf(shared, sizeof shared, "%s/shared", tmp);
  assert_int_equal(mkdir(shared, 0775), 0);
  assert_int_equal(chmod(shared, 0775), 0);
  snprintf(shared, sizeof shared, "CUJIT_LOG=warn CUJIT_CACHE_DIR='%s/shared'", tmp);
  assert_int_equal(cli(shared, "cache stats", out, sizeof out), 1);
  assert_has(out, "is writable by its group (mode 775)");
  assert_int_equal(cli(shared, "compile one.cu --arch compute_80 -o -", out, sizeof out), 0);
  assert_has(out, "cujit: warn: the cache directory");
  assert_has(out, ".target sm_80");
  assert_int_equal(cli(shared, "cache prune", out, sizeof out), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(dir_and_empty_stats, setup, teardown),
      cmocka_unit_test_setup_teardown(compile_fills_the_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(prune_and_clear, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_usage, setup, teardown),
      cmocka_unit_test_setup_teardown(no_usable_cache, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
