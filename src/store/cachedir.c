/* cachedir.c - where the disk cache lives and whether it may be used: the directory from
 * cujit_cache_set_dir(), CUJIT_CACHE_DIR, $XDG_CACHE_HOME/cujit or $HOME/.cache/cujit,
 * created 0700. It is opened once per use and checked on that descriptor (refused when
 * another user owns it or group or others may write to it); its shard directories are
 * opened through it without following links and checked the same way, and a shard that
 * fails is replaced. Also the cache's settings from the environment. */
#define _GNU_SOURCE /* O_NOFOLLOW, O_DIRECTORY */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"

static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_dir, dir_lock)
static char *api_dir;          /* from cujit_cache_set_dir(); NULL: the default */
static char last_warning[512]; /* the last warning given, so that it is given once */

void cj_warn_once(const char *text) {
  int fresh;
  pthread_mutex_lock(&dir_lock);
  fresh = strncmp(last_warning, text, sizeof last_warning - 1) != 0;
  if (fresh) snprintf(last_warning, sizeof last_warning, "%s", text);
  pthread_mutex_unlock(&dir_lock);
  if (fresh) cj_warn("%s", text);
}

/* 1 when CUJIT_CACHE turns the disk cache off; *value gets what it says. */
static int env_says_off(const char **value) {
  int on;
  *value = cj_env("CUJIT_CACHE");
  return cj_env_flag("CUJIT_CACHE", &on) == CJ_ENV_SET && !on;
}

int cj_cachedir_disabled(void) {
  const char *value;
  return env_says_off(&value);
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
  if (cj_join(out, size, a, b, NULL) < size - 64) return 0;
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
  if ((v = cj_env("CUJIT_CACHE_DIR"))) return copy_path(out, size, v, "", "CUJIT_CACHE_DIR", why);
  if ((v = cj_env("XDG_CACHE_HOME")) && v[0] == '/')
    return copy_path(out, size, v, "/cujit", "XDG_CACHE_HOME", why);
  if ((v = cj_env("HOME"))) return copy_path(out, size, v, "/.cache/cujit", "HOME", why);
  return refuse(why, "no cache directory: neither CUJIT_CACHE_DIR, XDG_CACHE_HOME nor HOME is "
                     "set; set CUJIT_CACHE_DIR to use the disk cache");
}

static int mkdir_private(const char *dir) {
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
    if (mkdir_private(buf) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir_private(buf);
}

/* ---- the cache directory's tag ---- */

/* A cache directory holds this file (the Cache Directory Tagging convention, which backup
 * tools read to skip caches). cujit repairs, prunes and clears only a directory that holds
 * it, so that a cache path pointed (by a link, or a mistaken CUJIT_CACHE_DIR) at a
 * directory of other files never has anything there renamed or removed. */
#define TAG_NAME "CACHEDIR.TAG"
static const char tag_text[] =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This directory is cujit's kernel cache: its files can be made again.\n";

static int has_tag(int dir) {
  struct stat st;
  return fstatat(dir, TAG_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         cj_trusted(&st);
}

/* 1 when the directory holds nothing but what cujit puts in a cache (or nothing at all):
 * a new directory, or a cache made before the tag existed. */
static int looks_like_a_cache(int dir) {
  struct dirent *de;
  int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ok = 1;
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return 0;
  }
  while (ok && (de = readdir(d)) != NULL) {
    const char *n = de->d_name;
    ok = strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strcmp(n, "stats") == 0 ||
         strcmp(n, "nvrtc") == 0 || strcmp(n, "prune.lock") == 0 ||
         strcmp(n, TAG_NAME) == 0 || /* being written */
         (strlen(n) == 2 && isxdigit((unsigned char)n[0]) && isxdigit((unsigned char)n[1]));
  }
  closedir(d);
  return ok;
}

static void write_tag(int dir) {
  int fd = openat(dir, TAG_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (write(fd, tag_text, sizeof tag_text - 1) != (ssize_t)(sizeof tag_text - 1))
    cj_debug("cannot write the cache directory's tag: %s", strerror(errno));
  close(fd);
}

/* A directory is cujit's when it holds the tag; an empty one, or one holding only what a
 * cache holds, is tagged now. */
static int claim(int dir, const char *path, reason *why) {
  if (has_tag(dir)) return 0;
  if (!looks_like_a_cache(dir))
    return refuse(why,
                  "'%s' holds other files and is not marked as cujit's cache (no %s); "
                  "cujit does not keep its cache among other files, so the disk cache is "
                  "skipped (set CUJIT_CACHE_DIR to a new or empty directory)",
                  path, TAG_NAME);
  write_tag(dir);
  return 0;
}

/* Opens the directory (creating it first if needed) and checks the open descriptor, so
 * that what is checked is what is used: a path swapped after the check changes nothing. */
static int open_dir(const char *dir, reason *why) {
  struct stat st;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), made = 0;
  if (fd < 0 && errno == ENOENT) {
    if (make_dirs(dir) != 0)
      return refuse(why,
                    "cannot create the cache directory '%s': %s; the disk cache is "
                    "skipped (set CUJIT_CACHE_DIR to a writable place)",
                    dir, strerror(errno));
    made = 1;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (fd < 0)
    return refuse(why,
                  "cannot %s the cache directory '%s': %s; the disk cache is skipped "
                  "(set CUJIT_CACHE_DIR to a writable place)",
                  errno == ENOTDIR ? "use" : "open", dir,
                  errno == ENOTDIR ? "it is not a directory" : strerror(errno));
  if (fstat(fd, &st) != 0) {
    close(fd);
    return refuse(why, "cannot read the cache directory '%s': %s; the disk cache is skipped", dir,
                  strerror(errno));
  }
  if (cj_trusted(&st)) {
    if (made) write_tag(fd);
    return fd;
  }
  close(fd);
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return refuse(why,
                  "the cache directory '%s' belongs to uid %u, not to this user (uid %u); "
                  "cujit does not load code from a directory another user controls, so the "
                  "disk cache is skipped",
                  dir, (unsigned)st.st_uid, (unsigned)geteuid());
  return refuse(why,
                "the cache directory '%s' is writable by %s (mode %03o); cujit does not "
                "load code others could have written, so the disk cache is skipped (chmod "
                "700 '%s' to use it)",
                dir, st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 0777),
                dir);
}

static int root(cj_root *r, reason *why) {
  const char *value;
  r->fd = -1;
  if (env_says_off(&value)) return refuse(why, "the disk cache is off (CUJIT_CACHE=%s)", value);
  if (locate(r->path, sizeof r->path, why) != 0) return -1;
  r->fd = open_dir(r->path, why);
  if (r->fd >= 0 && claim(r->fd, r->path, why) != 0) {
    close(r->fd);
    r->fd = -1;
  }
  return r->fd < 0 ? -1 : 0;
}

int cj_root_open(cj_root *r, int warn) {
  reason why;
  if (root(r, &why) == 0) return 0;
  if (warn && strncmp(why.text, "the disk cache is off", 21) != 0) cj_warn_once(why.text);
  return -1;
}

cujit_status cj_root_open_status(cj_root *r) {
  reason why;
  CJ_CHECK(root(r, &why) == 0, CUJIT_ERROR_CACHE, "%s", why.text);
  return CUJIT_OK;
}

void cj_root_close(cj_root *r) {
  if (r->fd >= 0) close(r->fd);
  r->fd = -1;
}

/* ---- shard directories ---- */

/* Opens <root>/<name> as a directory without following a symbolic link; -1 with errno. */
static int open_shard(const cj_root *r, const char *name, struct stat *st) {
  int fd = openat(r->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && fstat(fd, st) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Moves something cujit may not use out of a shard's place: a symbolic link is removed
 * (never what it points to); anything else is renamed to a hidden name beside it, kept
 * for the user to look at. 0 when the place is free now. */
static int move_aside(const cj_root *r, const char *name, const char *what) {
  char aside[64], text[2 * PATH_MAX + 256];
  struct stat st;
  if (fstatat(r->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
  if (S_ISLNK(st.st_mode) && unlinkat(r->fd, name, 0) == 0) {
    snprintf(text, sizeof text,
             "cache directory '%s/%s' was a symbolic link; cujit never "
             "follows one there, so it removed the link (not what it pointed to) and makes a "
             "directory in its place",
             r->path, name);
    cj_warn_once(text);
    return 0;
  }
  snprintf(aside, sizeof aside, ".%s.%ld.%08x.untrusted", name, (long)getpid(),
           (unsigned)cj_random64());
  if (renameat(r->fd, name, r->fd, aside) != 0) {
    snprintf(text, sizeof text,
             "cache directory '%s/%s' is not used: %s, and it cannot be "
             "moved aside (%s); remove it",
             r->path, name, what, strerror(errno));
    cj_warn_once(text);
    return -1;
  }
  snprintf(text, sizeof text,
           "cache directory '%s/%s' is not used: %s; it was moved to "
           "'%s/%s' (look at it, then remove it) and a new one is made in its place",
           r->path, name, what, r->path, aside);
  cj_warn_once(text);
  return 0;
}

void cj_warn_skipped(const cj_root *r, const char *name, const char *what) {
  char text[PATH_MAX + 256];
  snprintf(text, sizeof text,
           "cache directory '%s/%s' is skipped: %s (the next compile that "
           "needs it replaces it)",
           r->path, name, what);
  cj_warn_once(text);
}

static int cannot_make(const cj_root *r, const char *name) {
  char text[PATH_MAX + 256];
  snprintf(text, sizeof text,
           "cannot create the cache directory '%s/%s': %s; modules are "
           "compiled but not cached there",
           r->path, name, strerror(errno));
  cj_warn_once(text);
  return -1;
}

/* Opens the shard and checks it: the descriptor, or -1 with *bad set when what is there is
 * not cujit's to use (a link, not a directory, another user's, writable by others) and
 * `what` says why; -1 with *bad clear for any other failure (errno). */
static int open_trusted(const cj_root *r, const char *name, int *bad, char *what, size_t size) {
  struct stat st;
  int fd = open_shard(r, name, &st);
  *bad = 0;
  if (fd >= 0 && cj_trusted(&st)) return fd;
  if (fd >= 0) {
    snprintf(what, size, "%s", cj_distrust(&st));
    close(fd);
    *bad = 1;
  } else if (errno == ELOOP || errno == ENOTDIR) {
    snprintf(what, size, "it is not a directory");
    *bad = 1;
  }
  return -1;
}

static int cannot_open(const cj_root *r, const char *name) {
  char text[PATH_MAX + 256];
  snprintf(text, sizeof text,
           "cannot open the cache directory '%s/%s': %s; modules are "
           "compiled but not cached there for now",
           r->path, name, strerror(errno));
  cj_warn_once(text);
  return -1;
}

int cj_shard_open(const cj_root *r, const char *name, int create) {
  char what[96];
  int bad, fd = open_trusted(r, name, &bad, what, sizeof what);
  if (fd >= 0) return fd;
  if (!bad && errno != ENOENT) return cannot_open(r, name); /* EMFILE, EIO...: no repair */
  if (!create) {
    if (bad) cj_warn_skipped(r, name, what);
    return -1;
  }
  if (bad && move_aside(r, name, what) != 0) return -1;
  if (mkdirat(r->fd, name, 0700) != 0 && errno != EEXIST) return cannot_make(r, name);
  fd = open_trusted(r, name, &bad, what, sizeof what);
  return fd >= 0 ? fd : cannot_open(r, name);
}

uint64_t cj_cachedir_max_size(void) {
  uint64_t n;
  cj_env_u64("CUJIT_CACHE_MAX_SIZE", &n);
  return n;
}

double cj_cachedir_lock_timeout(void) {
  double t;
  cj_env_seconds("CUJIT_CACHE_LOCK_TIMEOUT", &t);
  return t;
}

/* ---- public ---- */

cujit_status cujit_cache_set_dir(const char *dir) {
  char *copy = NULL, *old;
  reason why;
  int fd;
  CJ_CHECK(!dir || dir[0], CUJIT_ERROR_INVALID_VALUE,
           "cujit_cache_set_dir: the directory is "
           "an empty string; pass a path, or NULL for the default");
  CJ_CHECK(!dir || strlen(dir) < PATH_MAX - 64, CUJIT_ERROR_INVALID_VALUE,
           "cujit_cache_set_dir: the path is longer than %d bytes", PATH_MAX - 64);
  if (dir && !(copy = cj_strdup(dir))) return cj_fail_oom("setting the cache directory");
  pthread_mutex_lock(&dir_lock);
  old = api_dir;
  api_dir = copy;
  last_warning[0] = '\0';
  pthread_mutex_unlock(&dir_lock);
  cj_free(old);
  if (!dir) return CUJIT_OK;
  CJ_CHECK((fd = open_dir(dir, &why)) >= 0, CUJIT_ERROR_CACHE, "%s", why.text);
  close(fd);
  return CUJIT_OK;
}

const char *cujit_cache_dir(void) {
  static _Thread_local cj_root r;
  if (cj_root_open_status(&r) != CUJIT_OK) return NULL;
  cj_root_close(&r);
  return r.path;
}
