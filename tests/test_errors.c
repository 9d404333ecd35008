/* test_errors - the status table, thread-local error detail, the error mode (the handler a
 * failing call of the program calls, CUJIT_ERRORS) and the log callback. */
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

/* ---- the error mode ---- */

/* What a counting handler saw. */
typedef struct raised {
  int count;
  cujit_status status;
  char call[64];
  char detail[256];
} raised;

static void on_error(cujit_status status, const char *call, const char *detail, void *user) {
  raised *r = user;
  r->count++;
  r->status = status;
  snprintf(r->call, sizeof r->call, "%s", call);
  snprintf(r->detail, sizeof r->detail, "%s", detail);
}

static void handler_called_once_per_failing_call(void **state) {
  raised r = {0};
  cujit_module *m = NULL;
  (void)state;
  cujit_error_set_handler(on_error, &r);
  assert_int_equal(cujit_module_from_source(&m, "__global__ void k( {}", "broken.cu", NULL),
                   CUJIT_ERROR_COMPILE);
  assert_int_equal(r.count, 1);
  assert_int_equal(r.status, CUJIT_ERROR_COMPILE);
  assert_string_equal(r.call, "cujit_module_from_source");
  assert_non_null(strstr(r.detail, "broken.cu")); /* the detail, as cujit_last_error() has it */
  assert_memory_equal(r.detail, cujit_last_error(), strlen(r.detail));
  assert_int_equal(cujit_module_get_function(NULL, "k", NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(r.count, 2);
  assert_string_equal(r.call, "cujit_module_get_function");
  assert_int_equal(r.status, CUJIT_ERROR_INVALID_VALUE);
  cujit_error_set_handler(NULL, NULL);
  assert_null(m);
}

static void handler_not_called_on_success_or_inside(void **state) {
  raised r = {0};
  cujit_module *m = NULL;
  char src[128];
  (void)state;
  /* a source no cache holds: a miss in the memory and disk caches, compiled; then a hit.
   * With no arch and (on a machine without a driver) no device to ask, the library's own
   * query of the device fails inside and the compile takes NVRTC's default. */
  snprintf(src, sizeof src, "__global__ void k(int *x) { x[0] = %d; }\n", (int)getpid());
  cujit_error_set_handler(on_error, &r);
  assert_ok(cujit_module_from_source(&m, src, "fine.cu", NULL));
  cujit_module_destroy(m);
  assert_ok(cujit_module_from_source(&m, src, "fine.cu", NULL));
  assert_non_null(cujit_module_ptx(m, NULL));
  cujit_module_destroy(m);
  assert_int_equal(r.count, 0);
  /* the name in parentheses (and a pointer to the function) is the function itself */
  assert_int_equal((cujit_module_from_source)(&m, NULL, "quiet.cu", NULL),
                   CUJIT_ERROR_INVALID_SOURCE);
  {
    cujit_status (*compile)(cujit_module **, const char *, const char *, const cujit_options *) =
        cujit_module_from_source;
    assert_int_equal(compile(&m, "", "quiet.cu", NULL), CUJIT_ERROR_INVALID_SOURCE);
  }
  assert_int_equal(r.count, 0);
  /* cujit_last_status() reads a status; it is never a failing call */
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_INVALID_SOURCE);
  assert_int_equal(r.count, 0);
  cujit_error_set_handler(NULL, NULL);
}

/* cujit_batch_compile() runs compile jobs through the public job functions: the failure of
 * one job reaches the handler once, as the batch's. */
static void batch_failure_raised_once(void **state) {
  raised r = {0};
  cujit_module *mods[3] = {NULL, NULL, NULL};
  cujit_status st[3];
  const char *sources[] = {"__global__ void a(int *x) { x[0] = 1; }\n", "__global__ void b( {}\n",
                           "__global__ void c(int *x) { x[0] = 3; }\n"};
  const char *names[] = {"a.cu", "b.cu", "c.cu"};
  size_t i;
  (void)state;
  cujit_error_set_handler(on_error, &r);
  assert_int_equal(cujit_batch_compile(mods, st, sources, names, 3, NULL), CUJIT_ERROR_COMPILE);
  cujit_error_set_handler(NULL, NULL);
  assert_int_equal(r.count, 1);
  assert_string_equal(r.call, "cujit_batch_compile");
  assert_int_equal(st[1], CUJIT_ERROR_COMPILE);
  assert_int_equal(st[0], CUJIT_OK);
  for (i = 0; i < 3; i++) cujit_module_destroy(mods[i]);
}

static void null_handler_restores_the_default(void **state) {
  raised r = {0};
  cujit_module *m = NULL;
  (void)state;
  cujit_error_set_handler(on_error, &r);
  assert_int_equal(cujit_module_from_source(&m, "", "a.cu", NULL), CUJIT_ERROR_INVALID_SOURCE);
  assert_int_equal(r.count, 1);
  cujit_error_set_handler(NULL, NULL);
  assert_int_equal(cujit_module_from_source(&m, "", "b.cu", NULL), CUJIT_ERROR_INVALID_SOURCE);
  assert_int_equal(r.count, 1);
  assert_string_equal(r.call, "cujit_module_from_source");
}

/* Threads that fail calls while the handler's user data changes under them: every failure
 * is counted once, in one of the two counters, with the calling thread's own call and
 * detail. */
enum { THREADS = 4, FAILS = 300 };
static int counts[2], wrong;
static __thread int thread_index;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_error_counted(cujit_status status, const char *call, const char *detail,
                             void *user) {
  char want[32];
  snprintf(want, sizeof want, "thread%d.cu", thread_index);
  pthread_mutex_lock(&count_lock);
  counts[user == &counts[1]]++;
  if (status != CUJIT_ERROR_INVALID_SOURCE || strcmp(call, "cujit_module_from_source") != 0 ||
      !strstr(detail, want))
    wrong++;
  pthread_mutex_unlock(&count_lock);
}

static void *fail_often(void *arg) {
  char name[32];
  cujit_module *m = NULL;
  int i;
  thread_index = (int)(intptr_t)arg;
  snprintf(name, sizeof name, "thread%d.cu", thread_index);
  for (i = 0; i < FAILS; i++) cujit_module_from_source(&m, "", name, NULL);
  return NULL;
}

static void handler_is_thread_safe(void **state) {
  pthread_t t[THREADS];
  int i;
  (void)state;
  cujit_error_set_handler(on_error_counted, &counts[0]);
  for (i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, fail_often, (void *)(intptr_t)i), 0);
  for (i = 0; i < 1000; i++) cujit_error_set_handler(on_error_counted, &counts[i % 2]);
  for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  cujit_error_set_handler(NULL, NULL);
  assert_int_equal(counts[0] + counts[1], THREADS * FAILS);
  assert_int_equal(wrong, 0);
}

static void print_log_line(cujit_log_level level, const char *line, void *user) {
  (void)user;
  (void)cujit_log_current_level(); /* a callback may call cujit, also from the library's start */
  printf("callback %d: %s\n", (int)level, line);
}

/* In a child: "exit": sets cujit_error_exit and fails a call; "env": fails a call with the
 * handler CUJIT_ERRORS chose; "env-null": sets no handler (NULL) first; "env-callback": as
 * "env", with a log callback that prints its lines; "no-failure": compiles a kernel, which
 * succeeds, and fails nothing. Prints a line without flushing first, which the end of the
 * process must flush. Returns 0 when the call returned. */
static int error_mode_child(const char *how) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  if (strcmp(how, "no-failure") == 0) { /* a program whose calls all succeed */
    o.arch = "compute_80";              /* no device needed */
    if (cujit_module_from_source(&m, "__global__ void k(int *p) { *p = 1; }\n", "ok.cu", &o) !=
        CUJIT_OK)
      return 3;
    cujit_module_destroy(m);
    printf("no call failed\n");
    return 0;
  }
  if (strcmp(how, "exit") == 0) cujit_error_set_handler(cujit_error_exit, NULL);
  if (strcmp(how, "env-null") == 0) cujit_error_set_handler(NULL, NULL);
  if (strcmp(how, "env-callback") == 0) cujit_log_set_callback(print_log_line, NULL);
  printf("before the failure\n");
  if (cujit_module_from_source(&m, "", "child.cu", NULL) != CUJIT_ERROR_INVALID_SOURCE) return 3;
  printf("the call returned\n");
  return 0;
}

/* In a child with CUJIT_LIBCUDA missing (so that device calls fail everywhere): the names
 * the handler gets for calls made through the header's macros and for a call with no
 * arguments. 0 when each is right. */
static int macro_names_child(void) {
  raised r = {0};
  cujit_dim3 one = CUJIT_DIM3(1);
  cujit_error_set_handler(on_error, &r);
  if (CUJIT_LAUNCH(NULL, one, one, cujit_i32(1)) != CUJIT_ERROR_INVALID_VALUE ||
      strcmp(r.call, "cujit_launch") != 0)
    return printf("CUJIT_LAUNCH: %s\n", r.call), 1;
  if (cujit_call(NULL, one, one, 1) != CUJIT_ERROR_INVALID_VALUE || strcmp(r.call, "cujit_call"))
    return printf("cujit_call: %s\n", r.call), 1;
  if (cujit_call_ex(NULL, one, one, NULL, 1) != CUJIT_ERROR_INVALID_VALUE ||
      strcmp(r.call, "cujit_call_ex"))
    return printf("cujit_call_ex: %s\n", r.call), 1;
  if (cujit_synchronize() != CUJIT_ERROR_NO_DRIVER || strcmp(r.call, "cujit_synchronize"))
    return printf("cujit_synchronize: %s\n", r.call), 1;
  if (r.count != 4) return printf("%d calls of the handler\n", r.count), 1;
  return 0;
}

/* Runs this program as `test_errors MODE ARG` with `env` (NAME=VALUE, or NULL) added;
 * out gets its stdout and stderr. Returns its exit status. */
static int run_child(const char *env, const char *mode, const char *arg, char *out, size_t size) {
  char self[1024], cmd[2300];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  assert_true(n > 0);
  self[n] = '\0';
  snprintf(cmd, sizeof cmd, "env %s '%s' %s %s 2>&1", env ? env : "", self, mode, arg);
  return test_capture(cmd, out, size);
}

static void exit_handler_prints_and_exits(void **state) {
  char out[4096];
  (void)state;
  assert_int_equal(run_child(NULL, "--error-mode", "exit", out, sizeof out), 1);
  assert_non_null(strstr(out, "before the failure\n"));
  assert_non_null(strstr(out, "cujit: cujit_module_from_source: CUJIT_ERROR_INVALID_SOURCE: "));
  assert_non_null(strstr(out, "child.cu"));
  assert_null(strstr(out, "the call returned"));
}

/* ---- text from outside, on stderr ---- */

/* A file name with ESC, CR, BEL and a byte that is not UTF-8, and a source whose bad line
 * NVRTC quotes in its log with the same. */
#define HOSTILE_NAME "evil\x1b[31m\r\a\xff.cu"
#define HOSTILE_SHOWN "evil\\x1b[31m\\x0d\\x07\\xff.cu"
static const char kHostile[] = "__global__ void k(int *p) {\n"
                               "  p[0] = not_declared; /* \x1b]0;owned\x07\x1b[2J \x9b"
                               "2J \xff */\n"
                               "}\n";

/* In a child: compiles kHostile as HOSTILE_NAME, with cujit_error_exit as the handler when
 * `how` is "exit" (else with the log on, CUJIT_LOG=debug). */
static int hostile_child(const char *how) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  o.arch = "compute_80";
  if (strcmp(how, "exit") == 0) cujit_error_set_handler(cujit_error_exit, NULL);
  cujit_module_from_source(&m, kHostile, HOSTILE_NAME, &o);
  return 0;
}

/* Nothing a terminal acts on: no control character but the newline and the tab, no byte
 * that is not valid UTF-8. */
static void assert_terminal_safe(const char *out) {
  const unsigned char *p;
  for (p = (const unsigned char *)out; *p; p++)
    if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || *p >= 0xf5 ||
        (*p >= 0x80 && *p < 0xc2))
      fail_msg("byte 0x%02x at offset %d reached stderr raw:\n%s", *p,
               (int)(p - (const unsigned char *)out), out);
}

/* The log's default output (stderr) escapes a file's name and NVRTC's quote of its lines;
 * the callback gets them as they are. */
static void default_log_escapes_what_it_quotes(void **state) {
  char out[32768];
  (void)state;
  assert_int_equal(run_child("CUJIT_LOG=debug", "--hostile", "log", out, sizeof out), 0);
  assert_non_null(strstr(out, "cujit: debug: "));
  assert_non_null(strstr(out, HOSTILE_SHOWN));
  assert_terminal_safe(out);
}

/* cujit_error_exit's message escapes them too. */
static void exit_message_escapes_what_it_quotes(void **state) {
  char out[32768];
  (void)state;
  assert_int_equal(run_child(NULL, "--hostile", "exit", out, sizeof out), 1);
  assert_non_null(
      strstr(out, "cujit: cujit_module_from_source: CUJIT_ERROR_COMPILE: '" HOSTILE_SHOWN));
  assert_non_null(strstr(out, "\\x1b]0;owned\\x07\\x1b[2J"));
  assert_terminal_safe(out);
}

static void errors_env_chooses_the_handler(void **state) {
  char out[4096];
  (void)state;
  assert_int_equal(run_child("CUJIT_ERRORS=exit", "--error-mode", "env", out, sizeof out), 1);
  assert_non_null(strstr(out, "cujit: cujit_module_from_source: CUJIT_ERROR_INVALID_SOURCE: "));
  assert_null(strstr(out, "the call returned"));
  assert_int_equal(run_child("CUJIT_ERRORS=EXIT", "--error-mode", "env", out, sizeof out), 1);
  /* return, unset, and a program that chose no handler itself: the call returns */
  assert_int_equal(run_child("CUJIT_ERRORS=return", "--error-mode", "env", out, sizeof out), 0);
  assert_non_null(strstr(out, "the call returned"));
  assert_int_equal(run_child(NULL, "--error-mode", "env", out, sizeof out), 0);
  assert_non_null(strstr(out, "the call returned"));
  assert_int_equal(run_child("CUJIT_ERRORS=exit", "--error-mode", "env-null", out, sizeof out), 0);
  assert_null(strstr(out, "cujit:"));
  /* a bad value: warned about on stderr whatever the log's level, once, and every call
   * returns its status */
  assert_int_equal(run_child("CUJIT_ERRORS=abort CUJIT_LOG=off", "--error-mode", "env", out,
                             sizeof out),
                   0);
  assert_non_null(strstr(out, "cujit: warn: CUJIT_ERRORS='abort' is not `return` or `exit`; "
                              "using `return` (every call returns its status)\n"));
  assert_null(strstr(strstr(out, "CUJIT_ERRORS='abort'") + 1, "CUJIT_ERRORS='abort'"));
  assert_non_null(strstr(out, "the call returned"));
  assert_int_equal(run_child("CUJIT_ERRORS=abort", "--error-mode", "env", out, sizeof out), 0);
  assert_non_null(strstr(out, "cujit: warn: CUJIT_ERRORS='abort' is not `return` or `exit`"));
  /* in a program that never fails: warned about all the same, once, when the library
   * first sets something up (reading its environment) */
  assert_int_equal(run_child("CUJIT_ERRORS=abort CUJIT_LOG=off", "--error-mode", "no-failure", out,
                             sizeof out),
                   0);
  if (!strstr(out, "cujit: warn: CUJIT_ERRORS='abort' is not `return` or `exit`; using `return` "
                   "(every call returns its status)\n") ||
      strstr(strstr(out, "CUJIT_ERRORS='abort'") + 1, "CUJIT_ERRORS='abort'") ||
      !strstr(out, "no call failed"))
    fail_msg("%s", out);
  assert_int_equal(run_child("CUJIT_ERRORS=exit", "--error-mode", "no-failure", out, sizeof out),
                   0);
  assert_null(strstr(out, "cujit:"));
  /* so is a tuning variable's bad value where the log shows warnings, though the program
   * never reaches its use (a compile stages no copy) */
  assert_int_equal(run_child("CUJIT_LOG=warn CUJIT_STAGING_MIN=lots", "--error-mode", "no-failure",
                             out, sizeof out),
                   0);
  if (!strstr(out, "cujit: warn: CUJIT_STAGING_MIN='lots' is not a size") ||
      strstr(strstr(out, "CUJIT_STAGING_MIN='lots'") + 1, "CUJIT_STAGING_MIN='lots'"))
    fail_msg("%s", out);
  /* to the log callback, where the program set one */
  assert_int_equal(run_child("CUJIT_ERRORS=abort", "--error-mode", "env-callback", out, sizeof out),
                   0);
  assert_non_null(strstr(out, "callback 2: CUJIT_ERRORS='abort' is not `return` or `exit`"));
  assert_null(strstr(out, "cujit: warn:"));
}

/* In a child: "exit" sets cujit_error_exit, "env" leaves the choice to CUJIT_ERRORS; then
 * a call that needs a GPU (the caller's environment gives no driver, or no such device).
 * Returns 0 when the call returned. */
static int no_gpu_child(const char *how) {
  if (strcmp(how, "exit") == 0) cujit_error_set_handler(cujit_error_exit, NULL);
  printf("before the failure\n");
  cujit_synchronize();
  printf("the call returned\n");
  return 0;
}

#define NO_DRIVER_ENV "CUJIT_LIBCUDA=/nonexistent/libcuda.so.1"
#define NO_DEVICE_ENV \
  "CUJIT_LIBCUDA=" CUJIT_CHECKDRIVER_PATH " CHECKDRIVER_DEVICES=1 CUJIT_DEVICE=3"

/* No GPU ends the error mode with CUJIT_EXIT_NO_GPU (77), not 1, both for the handler set
 * in C and for CUJIT_ERRORS=exit; the message and the flush are as for any failure. */
static void no_gpu_ends_with_its_own_status(void **state) {
  static const char *const envs[][2] = {{NO_DRIVER_ENV, "CUJIT_ERROR_NO_DRIVER"},
                                        {NO_DEVICE_ENV, "CUJIT_ERROR_NO_DEVICE"}};
  char out[4096], env[1024];
  size_t i;
  (void)state;
  assert_int_equal(CUJIT_EXIT_NO_GPU, 77);
  for (i = 0; i < 2; i++) {
    assert_int_equal(run_child(envs[i][0], "--no-gpu", "exit", out, sizeof out), 77);
    assert_non_null(strstr(out, "before the failure\n"));
    assert_non_null(strstr(out, "cujit: cujit_synchronize: "));
    assert_non_null(strstr(out, envs[i][1]));
    assert_null(strstr(out, "the call returned"));
    snprintf(env, sizeof env, "%s CUJIT_ERRORS=exit", envs[i][0]);
    assert_int_equal(run_child(env, "--no-gpu", "env", out, sizeof out), 77);
    assert_non_null(strstr(out, envs[i][1]));
    /* without the error mode the call returns its status, and the program its own */
    assert_int_equal(run_child(envs[i][0], "--no-gpu", "env", out, sizeof out), 0);
    assert_non_null(strstr(out, "the call returned"));
  }
}

static void macros_name_the_call(void **state) {
  char out[4096];
  (void)state;
  if (run_child("CUJIT_LIBCUDA=/nonexistent/libcuda.so.1", "--macro-names", "", out, sizeof out) !=
      0)
    fail_msg("%s", out);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(status_names_and_strings),
      cmocka_unit_test(version_matches_header),
      cmocka_unit_test(last_error_is_per_thread),
      cmocka_unit_test(log_callback_and_level),
      cmocka_unit_test(bad_log_env_is_reported),
      cmocka_unit_test(bad_memory_cache_size_warns),
      cmocka_unit_test(handler_called_once_per_failing_call),
      cmocka_unit_test(handler_not_called_on_success_or_inside),
      cmocka_unit_test(batch_failure_raised_once),
      cmocka_unit_test(null_handler_restores_the_default),
      cmocka_unit_test(handler_is_thread_safe),
      cmocka_unit_test(exit_handler_prints_and_exits),
      cmocka_unit_test(errors_env_chooses_the_handler),
      cmocka_unit_test(no_gpu_ends_with_its_own_status),
      cmocka_unit_test(default_log_escapes_what_it_quotes),
      cmocka_unit_test(exit_message_escapes_what_it_quotes),
      cmocka_unit_test(macros_name_the_call),
  };
  if (argc == 3 && strcmp(argv[1], "--error-mode") == 0) return error_mode_child(argv[2]);
  if (argc == 2 && strcmp(argv[1], "--macro-names") == 0) return macro_names_child();
  if (argc == 3 && strcmp(argv[1], "--no-gpu") == 0) return no_gpu_child(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--hostile") == 0) return hostile_child(argv[2]);
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
