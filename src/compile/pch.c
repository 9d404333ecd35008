/* pch.c - NVRTC's precompiled headers, for sources that share a header prefix.
 *
 * Kernels that include CUB, libcu++ or cuda_fp16.h spend most of a compile parsing the
 * same headers. NVRTC (12.8 and newer) can keep what it parsed as a precompiled header and
 * reuse it for a later source that starts with the same includes, but only inside the
 * process that made it, and making one costs about half a compile more. So a prefix seen
 * for the first time compiles plainly; from its second compile on, NVRTC is asked to make
 * (then to use) the precompiled header, in a private directory of this process (below).
 * A prefix whose header could not be made is not tried again; one that needed a larger
 * heap grows NVRTC's heap for the next attempt. Output and log are those of a plain
 * compile (NVRTC's messages about it are turned off), so the cache key does not change. A
 * compile that fails with a precompiled header is done again without (nvrtc.c); when that
 * succeeds, the header was to blame and the process makes no more of them (a warning says
 * why), so that a valid source never fails because of one.
 *
 * Whose files. While it precompiles, NVRTC writes the header into the directory it is
 * given and keeps scratch files in TMPDIR (else /tmp) under names anyone can guess
 * (edgN_<pid>). So TMPDIR must be out of other users' reach: an absolute path to a
 * directory of this user's or root's that others cannot write to, or a sticky one (as /tmp
 * is: others can neither remove nor rename what this user makes there); otherwise a
 * warning names it and compiles are plain. The directory is made by mkdtemp (a fresh name,
 * 0700, so nothing made beforehand can be it) in XDG_RUNTIME_DIR when that is this user's
 * (checked as the cache's root is, on an open descriptor), else in TMPDIR, and checked
 * through the place's descriptor once made. It belongs to the process that made it (its
 * pid is kept): only that one uses it and removes it at exit; a forked child makes its own
 * when it first needs one and leaves its parent's alone, and a directory removed under
 * the process is made again when next needed. Nothing at exit calls CUDA.
 *
 * NVRTC does not notice that a header changed on disk after it was precompiled, so a
 * prefix qualifies only when every header it includes comes from where nothing changes
 * during a process: <...> includes, with no include directory of the caller's in front of
 * the toolkit's (in-memory headers are part of the prefix's identity). Project headers
 * (#include "...") are compiled plainly, as they must be re-read when edited.
 * Env CUJIT_PCH=0 turns this off. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/compile.h"
#include "dl/nvrtc.h"

enum { SLOTS = 512, PLAIN_SEEN = 1, TRY = 2, FAILED = 3 };

typedef struct slot {
  uint64_t prefix; /* 0: empty */
  int state;
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CJ_LARGE slot table[SLOTS];
static char dir[512];     /* this process's directory; "" until made */
static pid_t dir_pid;     /* the process that made `dir`: only it uses and removes it */
static pid_t no_dir_pid;  /* a process that could not make one compiles plainly */
static int exit_set;      /* remove_dir() is registered to run at the end (cj_at_end) */
static int disabled = -1; /* CUJIT_PCH, read once; 1 after a compile fell back */
static int created_count;

/* The directive's include operand starts at p ("#  include <x>"): 1 for <...>, 0 for a
 * quoted or macro operand. */
static int angle_include(const char *p) {
  p++;
  while (*p == ' ' || *p == '\t') p++;
  if (strncmp(p, "include", 7) != 0) return -1; /* not an include */
  p += 7;
  while (*p == ' ' || *p == '\t') p++;
  return *p == '<';
}

/* Where the leading preprocessor lines (directives, blank lines, comments) of `src` end;
 * *includes is 1 when they include something and every include is <...>, else 0. */
static size_t prefix_end(const char *src, int *includes) {
  const char *p = src, *line;
  int any = 0, other = 0, kind;
  *includes = 0;
  for (;;) {
    line = p;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '#') {
      kind = angle_include(p);
      any |= kind >= 0;
      other |= kind == 0;
      *includes = any && !other;
    } else if (p[0] == '/' && p[1] == '/') {
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      if (!end) return (size_t)(line - src);
      p = end + 2;
      continue;
    } else if (*p != '\n' && *p != '\r') {
      return (size_t)(line - src);
    }
    while (*p && *p != '\n') p++;
    if (!*p) return (size_t)(p - src);
    p++;
  }
}

/* The prefix's identity: its text and every option (a header depends on them all). */
static uint64_t prefix_hash(const cj_request *r, size_t len) {
  XXH3_state_t st;
  size_t i;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, r->source, len);
  for (i = 0; i < r->argc; i++) XXH3_64bits_update(&st, r->argv[i], strlen(r->argv[i]) + 1);
  for (i = 0; i < r->n_nvrtc_headers; i++) {
    XXH3_64bits_update(&st, r->header_names[i], strlen(r->header_names[i]) + 1);
    XXH3_64bits_update(&st, r->header_sources[i], strlen(r->header_sources[i]) + 1);
  }
  return XXH3_64bits_digest(&st) | 1; /* never 0 */
}

static slot *find(uint64_t h) {
  size_t i, at = (size_t)(h % SLOTS);
  for (i = 0; i < SLOTS; i++) {
    slot *s = &table[(at + i) % SLOTS];
    if (s->prefix == h || s->prefix == 0) return s;
  }
  return &table[at]; /* full: forget an older prefix */
}

/* Removes the directory `name` in `place` and the files in it (NVRTC's: no folders). */
static void remove_at(int place, const char *name) {
  struct dirent *e;
  DIR *d;
  int fd = openat(place, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (!(d = fdopendir(fd))) {
    close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(fd, e->d_name, 0);
  closedir(d);
  unlinkat(place, name, AT_REMOVEDIR);
}

/* At exit: the directory and NVRTC's files in it, only in the process that made it (a
 * forked child that exits leaves its parent's alone). No CUDA call is made here. */
static void remove_dir(void) {
  pthread_mutex_lock(&lock);
  if (dir[0] && dir_pid == getpid()) remove_at(AT_FDCWD, dir);
  dir[0] = '\0';
  pthread_mutex_unlock(&lock);
}

/* The directories a process of this user left in `place` when it was killed (a compile
 * worker ended for its time limit runs no exit handler): each name carries its maker's
 * pid, and one whose maker is gone is removed. */
static void sweep(int place) {
  struct dirent *e;
  struct stat st;
  DIR *d;
  int fd = openat(place, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  if (!(d = fdopendir(fd))) {
    close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL) {
    char *end;
    long pid;
    if (strncmp(e->d_name, "cujit-pch-", 10) != 0) continue;
    pid = strtol(e->d_name + 10, &end, 10);
    if (end == e->d_name + 10 || *end != '-' || pid <= 0 || pid == (long)getpid() ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    if (fstatat(place, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid())
      remove_at(place, e->d_name);
  }
  closedir(d);
}

/* Says in `why` why a place cannot hold the directory; -1. */
static int refuse(char *why, size_t size, const char *fmt, ...) CJ_PRINTF(3, 4);
static int refuse(char *why, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
  return -1;
}

/* Opens the place at `path` and checks it on the descriptor: a directory of this user or
 * root that others cannot write to or, when `shared`, a sticky one (as /tmp is: others
 * can neither remove nor rename what this user makes there). -1 with `why` set. */
static int open_place(const char *path, int shared, char *why, size_t size) {
  struct stat st;
  int fd, own;
  if (path[0] != '/') return refuse(why, size, "is not an absolute path");
  if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return refuse(why, size, "cannot be opened as a directory (%s)", strerror(errno));
  }
  own = st.st_uid == geteuid() || st.st_uid == 0;
  if (cj_trusted(&st) || (shared && own && (st.st_mode & S_ISVTX))) return fd;
  close(fd);
  if (own && shared) return refuse(why, size, "is not sticky and %s", cj_distrust(&st));
  return refuse(why, size, "is refused: %s", cj_distrust(&st));
}

/* Makes `dir`: a fresh name (mkdtemp) that carries this process's pid, 0700, in the place
 * open as `place` at `path`, and checks it through that descriptor (so that it is where
 * the place was checked). What killed processes left there goes first. */
static int make_in(int place, const char *path, char *why, size_t size) {
  char made[sizeof dir], pid[24];
  struct stat st;
  int fd, ok;
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  if (cj_join(made, sizeof made, path, "/cujit-pch-", pid, "-XXXXXX", NULL) >= sizeof made)
    return refuse(why, size, "is longer than %zu bytes", sizeof made - 20 - strlen(pid));
  sweep(place);
  if (!mkdtemp(made)) return refuse(why, size, "cannot hold a new directory (%s)", strerror(errno));
  fd = openat(place, strrchr(made, '/') + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 077);
  if (fd >= 0) close(fd);
  if (!ok) return refuse(why, size, "changed while a directory was made in it");
  memcpy(dir, made, sizeof dir);
  return 0;
}

/* How a warning names the temporary directory: the variable, and its value cut short. */
static const char *tmp_named(char *out, size_t size) {
  const char *tmp = cj_env("TMPDIR");
  if (!tmp) return "/tmp (TMPDIR is unset)";
  snprintf(out, size, "TMPDIR ('%.64s%s')", tmp, strlen(tmp) > 64 ? "..." : "");
  return out;
}

/* Makes this process's directory (lock held): in XDG_RUNTIME_DIR when that is this user's,
 * else in the temporary directory, which must be fit for NVRTC's scratch files whichever
 * holds it. 0, or -1 with `warning` (to log once the lock is let go) naming the variable
 * to fix. */
static int make_dir(char *warning, size_t size) {
  const char *tmp = cj_env("TMPDIR"), *run = cj_env("XDG_RUNTIME_DIR");
  const char *tmp_path = tmp ? tmp : "/tmp";
  char why[160], name[96];
  int tmp_fd, run_fd, rc = -1;
  if ((tmp_fd = open_place(tmp_path, 1, why, sizeof why)) < 0) goto refused;
  if (run && (run_fd = open_place(run, 0, why, sizeof why)) >= 0) {
    rc = make_in(run_fd, run, why, sizeof why);
    close(run_fd);
  }
  if (rc != 0 && run)
    cj_debug("XDG_RUNTIME_DIR '%s' does not hold precompiled headers: it %s", run, why);
  if (rc != 0) rc = make_in(tmp_fd, tmp_path, why, sizeof why);
  close(tmp_fd);
  if (rc == 0) return 0;
refused:
  snprintf(warning, size,
           "precompiled headers are off in this process: %s %s; NVRTC keeps "
           "scratch files there while it precompiles a header (set TMPDIR to a short "
           "directory of your own, or CUJIT_PCH=0 to compile without them)",
           tmp_named(name, sizeof name), why);
  return -1;
}

/* This process's directory, made when first needed and again when it is gone (lock held);
 * NULL when there is none: compiles are plain (and `warning` may say why). */
static const char *private_dir(char *warning, size_t size) {
  struct stat st;
  pid_t me = getpid();
  if (dir_pid == me && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
    return dir;
  if (no_dir_pid == me) return NULL;
  if (dir_pid == me)
    cj_debug("the directory of precompiled headers '%s' is gone: making another", dir);
  dir[0] = '\0'; /* a parent's is forgotten: never used or removed here */
  dir_pid = 0;
  if (make_dir(warning, size) != 0) {
    no_dir_pid = me;
    return NULL;
  }
  dir_pid = me;
  if (!exit_set) {
    exit_set = 1;
    cj_at_end(remove_dir);
  }
  return dir;
}

/* The caller chose PCH options, or put include directories before the toolkit's (which
 * may hold a <...> header that changes). */
static int not_for_us(const cj_request *r) {
  size_t i;
  if (r->n_include_dirs) return 1;
  for (i = 0; i < r->n_user_options; i++)
    if (strstr(r->user_options[i], "pch") || strncmp(r->user_options[i], "-I", 2) == 0 ||
        strncmp(r->user_options[i], "--include-path", 14) == 0 ||
        strncmp(r->user_options[i], "-isystem", 8) == 0 ||
        strncmp(r->user_options[i], "-include", 8) == 0 ||
        strncmp(r->user_options[i], "--pre-include", 13) == 0)
      return 1;
  return 0;
}

static int available(void) {
  int on = 1;
  if (disabled < 0) {
    cj_env_flag("CUJIT_PCH", &on);
    disabled = !on;
  }
  return !disabled && cj_nv.nvrtcGetPCHCreateStatus && cj_nv.nvrtcGetPCHHeapSizeRequired &&
         cj_nv.nvrtcSetPCHHeapSize && cj_nv.nvrtcGetPCHHeapSize;
}

int cj_pch_begin(const cj_request *r, char *args, size_t args_size, uint64_t *prefix) {
  int includes, use = 0;
  char warning[512] = "";
  size_t len;
  const char *d;
  slot *s;
  *prefix = 0;
  if (not_for_us(r)) return 0;
  len = prefix_end(r->source, &includes);
  if (!includes) return 0;
  pthread_mutex_lock(&lock);
  if (available() && (d = private_dir(warning, sizeof warning)) != NULL) {
    *prefix = prefix_hash(r, len);
    s = find(*prefix);
    if (s->prefix != *prefix) { /* first sight: plain, remembered */
      s->prefix = *prefix;
      s->state = PLAIN_SEEN;
    } else if (s->state != FAILED) {
      s->state = TRY;
      use = 1;
      snprintf(args, args_size, "--pch-dir=%s", d);
    }
  }
  pthread_mutex_unlock(&lock);
  if (warning[0]) cj_warn("%s", warning);
  return use;
}

void cj_pch_end(uint64_t prefix, nvrtcProgram p) {
  nvrtcResult st;
  size_t need = 0, heap = 0;
  slot *s;
  if (!prefix) return;
  st = cj_nv.nvrtcGetPCHCreateStatus(p);
  pthread_mutex_lock(&lock);
  s = find(prefix);
  if (st == NVRTC_SUCCESS) {
    created_count++;
  } else if (st == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED && s->prefix == prefix &&
             cj_nv.nvrtcGetPCHHeapSizeRequired(p, &need) == NVRTC_SUCCESS &&
             cj_nv.nvrtcGetPCHHeapSize(&heap) == NVRTC_SUCCESS && need > heap) {
    /* the next compile of this prefix tries again with room for it, once */
    if (cj_nv.nvrtcSetPCHHeapSize(need + need / 8) != NVRTC_SUCCESS) s->state = FAILED;
    cj_debug("precompiled header heap grown to %zu bytes", need + need / 8);
  } else if (st != NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED && s->prefix == prefix) {
    s->state = FAILED; /* it cannot be made: do not pay for trying again */
  }
  pthread_mutex_unlock(&lock);
}

int cj_pch_created(void) {
  int n;
  pthread_mutex_lock(&lock);
  n = created_count;
  pthread_mutex_unlock(&lock);
  return n;
}

void cj_pch_fell_back(uint64_t prefix, const char *log) {
  size_t line = strcspn(log, "\n");
  char name[96];
  int was;
  slot *s;
  pthread_mutex_lock(&lock);
  was = disabled;
  disabled = 1;
  s = find(prefix);
  if (s->prefix == prefix) s->state = FAILED;
  pthread_mutex_unlock(&lock);
  if (was != 1)
    cj_warn("a compile with a precompiled header failed where the same compile without one "
            "succeeded, so precompiled headers are off in this process; NVRTC said \"%.*s%s\". "
            "While it precompiles, NVRTC keeps scratch files in %s: a path there longer "
            "than about 100 bytes, or one it cannot write to, makes it fail (set TMPDIR to a "
            "short directory of your own)",
            (int)(line < 160 ? line : 160), log, line > 160 ? "..." : "",
            tmp_named(name, sizeof name));
}

void cj_pch_dir(char *out, size_t size) {
  pthread_mutex_lock(&lock);
  cj_join(out, size, dir_pid == getpid() ? dir : "", NULL);
  pthread_mutex_unlock(&lock);
}

/* Through nvrtc.c's fork hooks, once no compile is in flight: the thread that forks holds
 * the lock across the fork, so that the child never starts with it held by a thread it
 * does not have. */
void cj_pch_fork_prepare(void) { pthread_mutex_lock(&lock); }
void cj_pch_fork_done(void) { pthread_mutex_unlock(&lock); }
