/* cachedir.c - where the disk cache lives and whether it may be used: the directory from
 * cujit_cache_set_dir(), CUJIT_CACHE_DIR, $XDG_CACHE_HOME/cujit or $HOME/.cache/cujit,
 * created 0700; refused when another user owns it or group or others may write to it.
 * Also the cache's settings from the environment. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cache.h"

#define CJ_DEFAULT_MAX_SIZE ((uint64_t)1 << 30)
#define CJ_DEFAULT_LOCK_TIMEOUT 60.0

static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
static char *api_dir;          /* from cujit_cache_set_dir(); NULL: the default */
static char last_warning[512]; /* the last warning given, so that it is given once */

/* Logs a warning unless it is the one logged last. */
static void warn_once(const char *text) {
  int fresh;
  pthread_mutex_lock(&dir_lock);
  fresh = strncmp(last_warning, text, sizeof last_warning - 1) != 0;
  if (fresh) snprintf(last_warning, sizeof last_warning, "%s", text);
  pthread_mutex_unlock(&dir_lock);
  if (fresh) cj_warn("%s", text);
}

static int env_says_off(const char **value);

int cj_cache_disabled(void) {
  const char *value;
  return env_says_off(&value);
}

static int env_says_off(const char **value) {
  static const char *const off[] = {"0", "off", "no", "false"};
  size_t i;
  *value = cj_getenv("CUJIT_CACHE");
  for (i = 0; *value && i < CJ_COUNT(off); i++)
    if (strcasecmp(*value, off[i]) == 0) return 1;
  return 0;
}

/* The checks below explain a refusal in `why` rather than in the thread's error detail:
 * a compile that goes on without the disk cache has not failed. */
typedef struct reason {
  char text[sizeof last_warning];
} reason;

static int refuse(reason *why, const char *fmt, ...) CJ_PRINTF(2, 3);
static int refuse(reason *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why->text, sizeof why->text, fmt, ap);
  va_end(ap);
  return -1;
}

static int copy_path(char *out, size_t size, const char *a, const char *b, const char *what,
                     reason *why) {
  if ((size_t)snprintf(out, size, "%s%s", a, b) < size - 64) return 0;
  return refuse(why, "the cache directory from %s is longer than %zu bytes", what, size - 64);
}

/* The configured directory, before any check. */
static int locate(char *out, size_t size, reason *why) {
  const char *v;
  int rc = 0, have;
  pthread_mutex_lock(&dir_lock);
  have = api_dir != NULL;
  if (have) rc = copy_path(out, size, api_dir, "", "cujit_cache_set_dir()", why);
  pthread_mutex_unlock(&dir_lock);
  if (have) return rc;
  if ((v = cj_getenv("CUJIT_CACHE_DIR"))) return copy_path(out, size, v, "", "CUJIT_CACHE_DIR", why);
  if ((v = cj_getenv("XDG_CACHE_HOME")) && v[0] == '/')
    return copy_path(out, size, v, "/cujit", "XDG_CACHE_HOME", why);
  if ((v = cj_getenv("HOME"))) return copy_path(out, size, v, "/.cache/cujit", "HOME", why);
  return refuse(why, "no cache directory: neither CUJIT_CACHE_DIR, XDG_CACHE_HOME nor HOME is "
                "set; set CUJIT_CACHE_DIR to use the disk cache");
}

int cj_mkdir_private(const char *dir) {
  return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* mkdir -p, each directory it creates 0700. */
static int make_dirs(const char *path) {
  char buf[PATH_MAX];
  char *p;
  snprintf(buf, sizeof buf, "%s", path);
  for (p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (cj_mkdir_private(buf) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return cj_mkdir_private(buf);
}

/* Creates the directory if needed and checks that it is private to this user. */
static int check_dir(const char *dir, reason *why) {
  struct stat st;
  if (stat(dir, &st) != 0 && make_dirs(dir) != 0)
    return refuse(why, "cannot create the cache directory '%s': %s; the disk cache is skipped "
                  "(set CUJIT_CACHE_DIR to a writable place)", dir, strerror(errno));
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return refuse(why, "the cache directory '%s' is not a directory; the disk cache is skipped",
                  dir);
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return refuse(why, "the cache directory '%s' belongs to uid %u, not to this user (uid %u); "
                  "cujit does not load code from a directory another user controls, so the "
                  "disk cache is skipped", dir, (unsigned)st.st_uid, (unsigned)geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return refuse(why, "the cache directory '%s' is writable by %s (mode %03o); cujit does not "
                  "load code others could have written, so the disk cache is skipped (chmod "
                  "700 '%s' to use it)", dir, st.st_mode & S_IWOTH ? "others" : "its group",
                  (unsigned)(st.st_mode & 0777), dir);
  return 0;
}

static int root(char *out, size_t size, reason *why) {
  const char *value;
  if (env_says_off(&value)) return refuse(why, "the disk cache is off (CUJIT_CACHE=%s)", value);
  if (locate(out, size, why) != 0) return -1;
  return check_dir(out, why);
}

int cj_cache_root(char *out, size_t size, int warn) {
  reason why;
  if (root(out, size, &why) == 0) return 0;
  if (warn && strncmp(why.text, "the disk cache is off", 21) != 0) warn_once(why.text);
  return -1;
}

cujit_status cj_cache_root_status(char *out, size_t size) {
  reason why;
  if (root(out, size, &why) == 0) return CUJIT_OK;
  return cj_fail(CUJIT_ERROR_CACHE, "%s", why.text);
}

uint64_t cj_cache_max_size(void) {
  const char *v = cj_getenv("CUJIT_CACHE_MAX_SIZE");
  uint64_t n = 0;
  char text[256];
  if (!v) return CJ_DEFAULT_MAX_SIZE;
  if (cj_parse_size(v, &n) == 0 && n > 0) return n;
  snprintf(text, sizeof text, "CUJIT_CACHE_MAX_SIZE='%.64s' is not a size (bytes, or a number "
           "with K, M or G); using 1G", v);
  warn_once(text);
  return CJ_DEFAULT_MAX_SIZE;
}

double cj_cache_lock_timeout(void) {
  const char *v = cj_getenv("CUJIT_CACHE_LOCK_TIMEOUT");
  char *end, text[256];
  double t;
  if (!v) return CJ_DEFAULT_LOCK_TIMEOUT;
  t = strtod(v, &end);
  if (end != v && *end == '\0' && t >= 0 && t < 1e7) return t;
  snprintf(text, sizeof text, "CUJIT_CACHE_LOCK_TIMEOUT='%.64s' is not a number of seconds; "
           "using %.0f", v, CJ_DEFAULT_LOCK_TIMEOUT);
  warn_once(text);
  return CJ_DEFAULT_LOCK_TIMEOUT;
}

/* ---- public ---- */

cujit_status cujit_cache_set_dir(const char *dir) {
  char *copy = NULL, *old;
  reason why;
  if (dir && !dir[0])
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_cache_set_dir: the directory is an empty "
                   "string; pass a path, or NULL for the default");
  if (dir && strlen(dir) >= PATH_MAX - 64)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_cache_set_dir: the path is longer than %d "
                   "bytes", PATH_MAX - 64);
  if (dir && !(copy = cj_strdup(dir))) return cj_fail_oom("setting the cache directory");
  pthread_mutex_lock(&dir_lock);
  old = api_dir;
  api_dir = copy;
  last_warning[0] = '\0';
  pthread_mutex_unlock(&dir_lock);
  cj_free(old);
  if (dir && check_dir(dir, &why) != 0) return cj_fail(CUJIT_ERROR_CACHE, "%s", why.text);
  return CUJIT_OK;
}

const char *cujit_cache_dir(void) {
  static _Thread_local char dir[PATH_MAX];
  return cj_cache_root_status(dir, sizeof dir) == CUJIT_OK ? dir : NULL;
}
