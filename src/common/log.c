/* log.c - the log callback and level. Silent unless CUJIT_LOG is set or a callback is. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int log_level; /* cujit_log_level; read without the lock on hot paths */
static cujit_log_fn log_fn;
CJ_FORK_GUARDED(guard_log, log_lock)
static void *log_user;

static const char *const level_names[] = {"off", "error", "warn", "info", "debug"};

/* A CUJIT_LOG value that is not a level (escaped: "debug\x0a"), kept until the log can say
 * so: with the level it would have set unknown, the log stays off, so the note waits for
 * the log's first message, whatever turns it on (the library never prints by default). */
static char bad_level[CJ_SHOWN_SIZE];
static int bad_level_reported;

static int log_is_ready; /* log_init has run (atomic): every message asks, so one load */

static void log_init(void) {
  int level;
  if (cj_env_level("CUJIT_LOG", &level) == CJ_ENV_BAD)
    cj_shown(bad_level, cj_env("CUJIT_LOG"));
  else
    log_level = level;
  __atomic_store_n(&log_is_ready, 1, __ATOMIC_RELEASE);
}

typedef struct shown_line {
  char text[4 * 1024 + 64]; /* a line of 1023 bytes, each escaped as \xNN at worst */
  size_t n;
} shown_line;

static void put(void *user, const char *p, size_t n) {
  shown_line *s = user;
  if (n > sizeof s->text - 1 - s->n) n = sizeof s->text - 1 - s->n;
  memcpy(s->text + s->n, p, n);
  s->n += n;
}

/* The default output: the line on stderr with control characters and bytes that are not
 * UTF-8 escaped (a file's name, NVRTC's log quoting a source line), in one write. */
static void to_stderr(cujit_log_level level, const char *line) {
  shown_line s;
  s.n = 0;
  put(&s, "cujit: ", 7);
  put(&s, level_names[level], strlen(level_names[level]));
  put(&s, ": ", 2);
  cj_escape(line, strlen(line), CJ_ESCAPE_TEXT, put, &s);
  put(&s, "\n", 1);
  s.text[s.n] = '\0';
  fputs(s.text, stderr);
}

static void deliver(cujit_log_level level, const char *line) {
  cujit_log_fn fn;
  void *user;
  pthread_mutex_lock(&log_lock);
  fn = log_fn;
  user = log_user;
  pthread_mutex_unlock(&log_lock);
  if (fn)
    fn(level, line, user);
  else
    to_stderr(level, line);
}

/* The log's first message, once it is on, says which CUJIT_LOG was ignored: a warning, or
 * an error where only errors pass. */
static void report_bad_level(void) {
  char line[CJ_SHOWN_SIZE + 200];
  cujit_log_level at = cj_log_enabled(CUJIT_LOG_WARN) ? CUJIT_LOG_WARN : CUJIT_LOG_ERROR;
  if (!bad_level[0] || !cj_log_enabled(at)) return;
  if (__atomic_exchange_n(&bad_level_reported, 1, __ATOMIC_RELAXED)) return;
  snprintf(line, sizeof line,
           "CUJIT_LOG='%s' is not a log level (off, error, warn, info or "
           "debug); it was ignored, so the level was the default off until set",
           bad_level);
  deliver(at, line);
}

/* The log's level, read once. The library's start comes first, outside the log's once: what
 * it warns about asks the log's level, and a callback it reaches may call cujit. */
static void log_ready(void) {
  if (CJ_LIKELY(__atomic_load_n(&log_is_ready, __ATOMIC_ACQUIRE))) return;
  cj_env_start();
  pthread_once(&log_once, log_init);
}

const char *cujit_log_env_ignored(void) {
  log_ready();
  return bad_level[0] ? bad_level : NULL;
}

void cujit_log_set_callback(cujit_log_fn fn, void *user) {
  pthread_mutex_lock(&log_lock);
  log_fn = fn;
  log_user = user;
  pthread_mutex_unlock(&log_lock);
  /* after the callback is set, what the library's start says (when this call is the
   * program's first) goes to it */
  log_ready();
  report_bad_level();
}

void cujit_log_set_level(cujit_log_level level) {
  log_ready();
  if ((int)level < CUJIT_LOG_OFF) level = CUJIT_LOG_OFF;
  if ((int)level > CUJIT_LOG_DEBUG) level = CUJIT_LOG_DEBUG;
  __atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
  report_bad_level();
}

cujit_log_level cujit_log_current_level(void) {
  log_ready();
  return (cujit_log_level)__atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

int cj_log_enabled(cujit_log_level level) {
  return level != CUJIT_LOG_OFF && (int)level <= (int)cujit_log_current_level();
}

void cj_log(cujit_log_level level, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  if (!cj_log_enabled(level)) return;
  report_bad_level();
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  deliver(level, line);
}

void cj_env_ignored(int *warned, const char *name, const char *value, const char *form,
                    const char *fallback) {
  char shown[CJ_SHOWN_SIZE];
  if (__atomic_exchange_n(warned, 1, __ATOMIC_RELAXED)) return;
  cj_warn("%s='%s' is not %s; using %s", name, cj_shown(shown, value), form, fallback);
}

/* Delivered without the log's level, so without reading CUJIT_LOG: it may be said while
 * the log reads it (the library's start, common/env.c). */
void cj_env_refused(int *warned, const char *name, const char *value, const char *form,
                    const char *fallback) {
  char shown[CJ_SHOWN_SIZE], line[CJ_SHOWN_SIZE + 300];
  if (cj_env_warnings_are_off() || __atomic_exchange_n(warned, 1, __ATOMIC_RELAXED)) return;
  snprintf(line, sizeof line, "%s='%s' is not %s; using %s", name, cj_shown(shown, value), form,
           fallback);
  deliver(CUJIT_LOG_WARN, line);
}
