/* test_errors - the status table, thread-local error detail and the log callback. */
#include <pthread.h>

#include "testutil.h"

static void status_names_and_strings(void **state) {
  (void)state;
#define CHECK_(name, num, msg)                                               \
  assert_int_equal(CUJIT_##name, num);                                       \
  assert_string_equal(cujit_status_name(CUJIT_##name), "CUJIT_" #name);      \
  assert_string_equal(cujit_status_string(CUJIT_##name), msg);
  CUJIT_STATUS_MAP(CHECK_)
#undef CHECK_
  assert_int_equal(CUJIT_OK, 0);
  assert_string_equal(cujit_status_name((cujit_status)999), "CUJIT_UNKNOWN_STATUS");
  assert_string_equal(cujit_status_string((cujit_status)-1), "unknown status");
}

static void version_matches_header(void **state) {
  (void)state;
  assert_int_equal(cujit_version(), CUJIT_VERSION_NUMBER);
  assert_string_equal(cujit_version_string(), CUJIT_VERSION_STRING);
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
  assert_int_equal(cujit_get_log_level(), CUJIT_LOG_WARN);
  cujit_set_log_callback(on_log, &s);
  cujit_set_log_level(CUJIT_LOG_OFF);
  cujit_module_from_source(&m, "", "quiet.cu", NULL);
  assert_int_equal(s.count, 0);
  cujit_set_log_level(CUJIT_LOG_DEBUG);
  cujit_module_from_source(&m, "", "loud.cu", NULL);
  assert_true(s.count >= 1);
  assert_int_equal(s.level, CUJIT_LOG_DEBUG);
  assert_non_null(strstr(s.last, "loud.cu"));
  /* out-of-range levels are clamped */
  cujit_set_log_level((cujit_log_level)42);
  assert_int_equal(cujit_get_log_level(), CUJIT_LOG_DEBUG);
  cujit_set_log_level(CUJIT_LOG_OFF);
  cujit_set_log_callback(NULL, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(status_names_and_strings),
      cmocka_unit_test(version_matches_header),
      cmocka_unit_test(last_error_is_per_thread),
      cmocka_unit_test(log_callback_and_level),
  };
  setenv("CUJIT_LOG", "warn", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
