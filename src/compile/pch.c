/* pch.c - NVRTC's precompiled headers, for sources that share a header prefix.
 *
 * Kernels that include CUB, libcu++ or cuda_fp16.h spend most of a compile parsing the
 * same headers. NVRTC (12.8 and newer) can keep what it parsed as a precompiled header and
 * reuse it for a later source that starts with the same includes, but only inside the
 * process that made it, and making one costs about half a compile more. So a prefix seen
 * for the first time compiles plainly; from its second compile on, NVRTC is asked to make
 * (then to use) the precompiled header, in a private directory of this process removed at
 * exit. A prefix whose header could not be made is not tried again; one that needed a
 * larger heap grows NVRTC's heap for the next attempt. Output and log are those of a plain
 * compile (NVRTC's messages about it are turned off), so the cache key does not change.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/compile.h"
#include "driver/nvrtc.h"

enum { SLOTS = 512, PLAIN_SEEN = 1, TRY = 2, FAILED = 3 };

typedef struct slot {
  uint64_t prefix; /* 0: empty */
  int state;
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CJ_LARGE slot table[SLOTS];
static char dir[512];     /* the private directory; "" until made */
static int dir_failed;
static int disabled = -1; /* CUJIT_PCH, read once */
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

/* At exit: the directory and NVRTC's files in it (no CUDA call is made here). */
static void remove_dir(void) {
  struct dirent *e;
  DIR *d;
  int fd;
  if (!dir[0] || (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) return;
  if (!(d = fdopendir(fd))) {
    close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      unlinkat(fd, e->d_name, 0);
  closedir(d);
  rmdir(dir);
}

/* The private directory, made on first use (lock held); NULL when it cannot be. */
static const char *private_dir(void) {
  const char *tmp;
  if (dir[0] || dir_failed) return dir_failed ? NULL : dir;
  tmp = cj_env("TMPDIR");
  snprintf(dir, sizeof dir, "%s/cujit-pch-XXXXXX", tmp && strlen(tmp) < 400 ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    cj_debug("no directory for precompiled headers (%s): compiling without them",
             strerror(errno));
    dir[0] = '\0';
    dir_failed = 1;
    return NULL;
  }
  atexit(remove_dir);
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
  size_t len;
  const char *d;
  slot *s;
  *prefix = 0;
  if (not_for_us(r)) return 0;
  len = prefix_end(r->source, &includes);
  if (!includes) return 0;
  pthread_mutex_lock(&lock);
  if (available() && (d = private_dir()) != NULL) {
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
