/* test_errors - the status table, thread-local error detail and the log callback. */
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"

static void status_names_and_strings(void **state) {
  (void)state;
#define CHECK_(name, num, msg)                                          \
  assert_int_equal(CUJIT_##name, num);                                  \
  assert_string_equal(cujit_status_name(CUJIT_##name), "CUJIT_" #name); \
  assert_string_equal(cujit_status_string(CUJIT_##name), msg);
  CUJIT_STATUS_MAP(CHECK_)
#undef CHECK_
  assert_int_equal(CUJIT_OK, 0);
  assert_string_equal(cujit_status_name((cujit_status)999), "CUJIT_UNKNOWN_STATUS");
  assert_string_equal(cujit_status_string((cujit_status)-1), "unknown status");
}

static void version_matches_header(void **state) {
  char numbers[32];
  (void)state;
  assert_int_equal(cujit_version(), CUJIT_VERSION_NUMBER);
  assert_string_equal(cujit_version_string(), CUJIT_VERSION_STRING);
  /* the header's numbers, its string and the build's version (the soname, the packages
   * and the CMake package's) are one version */
  snprintf(numbers, sizeof numbers, "%d.%d.%d", CUJIT_VERSION_MAJOR, CUJIT_VERSION_MINOR,
           CUJIT_VERSION_PATCH);
  assert_string_equal(numbers, CUJIT_VERSION_STRING);
  assert_string_equal(CUJIT_VERSION_STRING, CUJIT_PROJECT_VERSION);
}

static void last_error_is_per_thread(void **state);

static void *fail_in_thread(void *arg) {
  cujit_module *m = NULL;
  (void)arg;
  cujit_module_from_source(&m, "", "other.cu", NULL);
  return strstr(cujit_last_error(), "other.cu") ? (void *)1 : NULL;
}

static void last_error_is_per_thread(void **state) {
  cujit_module *m = NULL;
  pthread_t t;
  void *ok = NULL;
  (void)state;
  assert_int_equal(cujit_module_from_source(&m, NULL, "mine.cu", NULL), CUJIT_ERROR_INVALID_SOURCE);
  assert_non_null(strstr(cujit_last_error(), "mine.cu"));
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_INVALID_SOURCE);
  assert_int_equal(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
  pthread_join(t, &ok);
  assert_non_null(ok);
  /* the other thread's failure did not touch this thread's detail */
  assert_non_null(strstr(cujit_last_error(), "mine.cu"));
  assert_null(m);
}

typedef struct seen {
  int count;
  cujit_log_level level;
  char last[512];
} seen;

static void on_log(cujit_log_level level, const char *msg, void *user) {
  seen *s = user;
  s->count++;
  s->level = level;
  snprintf(s->last, sizeof s->last, "%s", msg);
}

static void log_callback_and_level(void **state) {
  seen s = {0};
  cujit_module *m = NULL;
  (void)state;
  /* CUJIT_LOG=warn was set before the first call (see main) */
  assert_int_equal(cujit_log_current_level(), CUJIT_LOG_WARN);
  cujit_log_set_callback(on_log, &s);
  cujit_log_set_level(CUJIT_LOG_OFF);
  cujit_module_from_source(&m, "", "quiet.cu", NULL);
  assert_int_equal(s.count, 0);
  cujit_log_set_level(CUJIT_LOG_DEBUG);
  cujit_module_from_source(&m, "", "loud.cu", NULL);
  assert_true(s.count >= 1);
  assert_int_equal(s.level, CUJIT_LOG_DEBUG);
  assert_non_null(strstr(s.last, "loud.cu"));
  /* out-of-range levels are clamped */
  cujit_log_set_level((cujit_log_level)42);
  assert_int_equal(cujit_log_current_level(), CUJIT_LOG_DEBUG);
  cujit_log_set_level(CUJIT_LOG_OFF);
  cujit_log_set_callback(NULL, NULL);
}

/* ---- a CUJIT_LOG that is not a level: said once the log is on (read once per process,
 * so each value is tried in a child) ---- */

/* In a child with CUJIT_LOG=value: 0 when the log's first message, once `level` turns it
 * on, names the value as `shown` (escaped) at `level` (a warning, or an error where only
 * errors pass), and cujit_log_env_ignored() gives it; with `warns` 0, when nothing is said. */
static int log_env_child(const char *shown, int warns, cujit_log_level level) {
  seen s = {0};
  char needle[128];
  const char *ignored = cujit_log_env_ignored();
  snprintf(needle, sizeof needle, "CUJIT_LOG='%s' is not a log level", shown);
  cujit_log_set_callback(on_log, &s);
  if (s.count != 0) return 1; /* nothing while the level is off */
  cujit_log_set_level(level);
  cujit_log_set_level(CUJIT_LOG_INFO); /* once only */
  if (!warns) return s.count != 0 || ignored != NULL;
  if (s.count != 1 || s.level != level || !strstr(s.last, needle) ||
      !strstr(s.last, "off, error, warn, info or debug") || !strstr(s.last, "default off") ||
      !ignored || strcmp(ignored, shown) != 0) {
    printf("%d message(s), last: %s; ignored: %s\n", s.count, s.last, ignored ? ignored : "NULL");
    return 1;
  }
  return 0;
}

/* Runs this program with CUJIT_LOG=value and `mode`, `shown` its expected escaped form. */
static int run_log_child(const char *value, const char *mode, const char *shown) {
  int st = 0;
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CUJIT_LOG", value, 1);
    execl("/proc/self/exe", "test_errors", mode, shown, (char *)NULL);
    _exit(120);
  }
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* In a child with CUJIT_MEMORY_CACHE_MAX_SIZE=value: 0 when a compile warns once that it
 * is not a size and the default is used. */
static int memcache_env_child(const char *value) {
  seen s = {0};
  char needle[128];
  cujit_module *m = NULL;
  cujit_options o = {0};
  int i;
  snprintf(needle, sizeof needle, "CUJIT_MEMORY_CACHE_MAX_SIZE='%s' is not a size", value);
  o.arch = "compute_80";
  cujit_log_set_callback(on_log, &s);
  cujit_log_set_level(CUJIT_LOG_WARN);
  for (i = 0; i < 2; i++) {
    if (cujit_module_from_source(&m, "__global__ void k() {}", "k.cu", &o) != CUJIT_OK) return 1;
    cujit_module_destroy(m);
  }
  if (s.count == 1 && strstr(s.last, needle) && strstr(s.last, "256M")) return 0;
  printf("%d message(s), last: %s\n", s.count, s.last);
  return 1;
}

static void bad_log_env_is_reported(void **state) {
  (void)state;
  assert_int_equal(run_log_child("loud", "--log-warns", "loud"), 0);
  assert_int_equal(run_log_child("3", "--log-warns", "3"), 0);
  assert_int_equal(run_log_child("OFF", "--log-quiet", ""), 0);
  assert_int_equal(run_log_child("Warning", "--log-quiet", ""), 0);
  /* a format directive is text; a newline or an escape sequence is shown escaped, so the
   * message stays one line that a terminal acts on no part of */
  assert_int_equal(run_log_child("verbose%n", "--log-warns", "verbose%n"), 0);
  assert_int_equal(run_log_child("debug\n", "--log-warns", "debug\\x0a"), 0);
  assert_int_equal(run_log_child("\x1b[2Jinfo", "--log-warns", "\\x1b[2Jinfo"), 0);
  /* where only errors pass, the note comes as the log's first error */
  assert_int_equal(run_log_child("debug\n", "--log-errors", "debug\\x0a"), 0);
}

static void bad_memory_cache_size_warns(void **state) {
  (void)state;
  unsetenv("CUJIT_LOG");
  setenv("CUJIT_MEMORY_CACHE_MAX_SIZE", "lots", 1);
  assert_int_equal(run_log_child("off", "--memcache-warns", ""), 0);
  setenv("CUJIT_MEMORY_CACHE_MAX_SIZE", "-5M", 1);
  assert_int_equal(run_log_child("off", "--memcache-warns", ""), 0);
  unsetenv("CUJIT_MEMORY_CACHE_MAX_SIZE");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(status_names_and_strings), cmocka_unit_test(version_matches_header),
      cmocka_unit_test(last_error_is_per_thread), cmocka_unit_test(log_callback_and_level),
      cmocka_unit_test(bad_log_env_is_reported),  cmocka_unit_test(bad_memory_cache_size_warns),
  };
  if (argc == 3 && strcmp(argv[1], "--log-warns") == 0)
    return log_env_child(argv[2], 1, CUJIT_LOG_WARN);
  if (argc == 3 && strcmp(argv[1], "--log-errors") == 0)
    return log_env_child(argv[2], 1, CUJIT_LOG_ERROR);
  if (argc == 3 && strcmp(argv[1], "--log-quiet") == 0)
    return log_env_child(argv[2], 0, CUJIT_LOG_WARN);
  if (argc == 3 && strcmp(argv[1], "--memcache-warns") == 0)
    return memcache_env_child(getenv("CUJIT_MEMORY_CACHE_MAX_SIZE"));
  setenv("CUJIT_LOG", "warn", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
