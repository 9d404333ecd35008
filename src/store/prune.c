/* prune.c - walking the cache directory: counting, listing, evicting the least recently
 * used entries (by modification time, which a hit sets to now) down to a byte budget,
 * clearing; and removing what writers and lockers that are gone left behind.
 *
 * The walk never leaves the cache: shards are opened through the root's descriptor
 * without following links and checked (cj_shard_open), files are looked at with
 * fstatat() without following links, and only cujit's own names are removed, with
 * unlinkat() in their shard: entries (<32 hex>.cujit), temporary files
 * (.<32 hex>.<pid>.<16 hex>.tmp) whose writer no longer holds their lock, and lock files
 * (<32 hex>.lock) nobody holds. Anything else is left alone. */
#define _GNU_SOURCE /* O_NOFOLLOW */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

/* A temporary or lock file younger than this may belong to a writer that has created it
 * and not yet locked it. */
#define CJ_GRACE_S 10

typedef struct item {
  char hex[33]; /* its key: the file is <root>/<hex[0..1]>/<hex>.cujit */
  uint64_t size;
  int64_t mtime_ns;
} item;

typedef struct walk {
  const cj_root *root;
  item *v;
  size_t n, cap;
  uint64_t bytes;
  int oom;
} walk;

static int is_hex(const char *s, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

static int is_entry_name(const char *name) {
  return strlen(name) == 32 + 6 && is_hex(name, 32) && strcmp(name + 32, ".cujit") == 0;
}

/* .<32 hex>.<digits>.<16 hex>.tmp */
static int is_temp_name(const char *name) {
  const char *p = name + 34, *dot;
  if (strlen(name) < 34 + 1 + 1 + 16 + 4 || name[0] != '.' || !is_hex(name + 1, 32) ||
      name[33] != '.' || !ends_with(name, ".tmp"))
    return 0;
  dot = strchr(p, '.');
  if (!dot || dot == p || strspn(p, "0123456789") != (size_t)(dot - p)) return 0;
  return strlen(dot + 1) == 16 + 4 && is_hex(dot + 1, 16);
}

static int is_lock_name(const char *name) {
  return strlen(name) == 32 + 5 && is_hex(name, 32) && strcmp(name + 32, ".lock") == 0;
}

static void add(walk *w, const char *name, const struct stat *st) {
  item *it;
  if (CJ_VEC_RESERVE(w->v, w->cap, w->n + 1) != 0) {
    w->oom = 1;
    return;
  }
  it = &w->v[w->n++];
  memcpy(it->hex, name, 32);
  it->hex[32] = '\0';
  it->size = (uint64_t)st->st_size;
  it->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
  w->bytes += it->size;
}

/* Leftovers of a writer or locker that is gone: a temporary file whose writer no longer
 * holds its lock, a lock file nobody holds. */
static void tidy(int dir, const char *name, const struct stat *st) {
  cj_lock lock;
  int fd;
  if (time(NULL) - st->st_mtime < CJ_GRACE_S) return;
  if (is_temp_name(name)) {
    fd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    if (cj_lock_fd(fd) == 0 ||
        (errno != EAGAIN && errno != EACCES && time(NULL) - st->st_mtime > 3600))
      unlinkat(dir, name, 0); /* no locks on this file system: an hour old is gone */
    close(fd);
  } else if (is_lock_name(name) && cj_lock_try(dir, name, &lock) == CJ_LOCK_HELD) {
    cj_lock_release(dir, name, &lock);
  }
}

static void walk_shard(walk *w, const char *shard, int tidy_up) {
  struct dirent *de;
  struct stat st;
  DIR *d;
  int fd = cj_shard_open(w->root, shard, 0);
  if (fd < 0) return; /* missing, or not cujit's: left alone */
  if (!(d = fdopendir(fd))) {
    close(fd);
    return;
  }
  while ((de = readdir(d)) != NULL && !w->oom) {
    if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (is_entry_name(de->d_name) && strncmp(de->d_name, shard, 2) == 0)
      add(w, de->d_name, &st);
    else if (tidy_up)
      tidy(fd, de->d_name, &st);
  }
  closedir(d); /* closes fd */
}

/* Collects every entry under the root. -1 when it cannot be read or out of memory. */
static int walk_root(const cj_root *r, walk *w, int tidy_up) {
  struct dirent *de;
  DIR *d;
  int fd = openat(r->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  memset(w, 0, sizeof *w);
  w->root = r;
  if (fd < 0) return -1;
  if (!(d = fdopendir(fd))) {
    close(fd);
    return -1;
  }
  while ((de = readdir(d)) != NULL && !w->oom)
    if (strlen(de->d_name) == 2 && is_hex(de->d_name, 2)) walk_shard(w, de->d_name, tidy_up);
  closedir(d);
  if (!w->oom) return 0;
  cj_free(w->v);
  return -1;
}

/* Removes one entry, in its shard (opened again and checked). 0, or -1 with errno. */
static int remove_item(const walk *w, const item *it) {
  char shard[3], name[40];
  int fd, rc;
  memcpy(shard, it->hex, 2);
  shard[2] = '\0';
  snprintf(name, sizeof name, "%s.cujit", it->hex);
  if ((fd = cj_shard_open(w->root, shard, 0)) < 0) return -1;
  rc = unlinkat(fd, name, 0);
  close(fd);
  return rc == 0 || errno == ENOENT ? 0 : -1;
}

static int older_first(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
  return strcmp(x->hex, y->hex);
}

/* Removes entries, oldest first, from w->v[0..] until the total is at most max_bytes. */
static void evict(walk *w, uint64_t max_bytes, cj_prune_result *res) {
  size_t i;
  if (w->n) qsort(w->v, w->n, sizeof *w->v, older_first);
  for (i = 0; i < w->n && w->bytes > max_bytes; i++) {
    if (remove_item(w, &w->v[i]) != 0) continue;
    w->bytes -= w->v[i].size;
    res->removed++;
    res->removed_bytes += w->v[i].size;
  }
  res->entries = w->n - res->removed;
  res->bytes = w->bytes;
}

int cj_prune(const cj_root *r, uint64_t max_bytes, cj_prune_result *res) {
  walk w;
  memset(res, 0, sizeof *res);
  if (walk_root(r, &w, 1) != 0) return -1;
  evict(&w, max_bytes, res);
  cj_free(w.v);
  cj_diskstats_scanned(r, res->bytes, res->removed);
  if (res->removed)
    cj_info("cache: removed %llu least recently used entries (%llu bytes) to stay within %llu "
            "bytes",
            (unsigned long long)res->removed, (unsigned long long)res->removed_bytes,
            (unsigned long long)max_bytes);
  return 0;
}

int cj_clear(const cj_root *r, cj_prune_result *res) {
  walk w;
  size_t i;
  memset(res, 0, sizeof *res);
  if (walk_root(r, &w, 1) != 0) return -1;
  for (i = 0; i < w.n; i++) {
    if (remove_item(&w, &w.v[i]) != 0) {
      res->entries++;
      res->bytes += w.v[i].size;
      continue;
    }
    res->removed++;
    res->removed_bytes += w.v[i].size;
  }
  cj_free(w.v);
  cj_diskstats_scanned(r, res->bytes, 0);
  return 0;
}

int cj_prune_scan_dir(const cj_root *r, uint64_t *entries, uint64_t *bytes) {
  walk w;
  *entries = *bytes = 0;
  if (walk_root(r, &w, 0) != 0) return -1;
  *entries = w.n;
  *bytes = w.bytes;
  cj_free(w.v);
  return 0;
}

void cj_prune_auto(const cj_root *r, uint64_t max_size) {
  cj_prune_result res;
  cj_lock lock;
  if (cj_lock_try(r->fd, "prune.lock", &lock) == CJ_LOCK_BUSY) return; /* another is at it */
  if (cj_prune(r, max_size / 10 * 9, &res) == 0) cj_count(CJ_EVICTIONS, res.removed);
  cj_lock_release(r->fd, "prune.lock", &lock);
}

/* ---- listing ---- */

/* Reads the start of an entry (for its name and target). */
static size_t read_head(const walk *w, const item *it, unsigned char *head, size_t size) {
  char shard[3], name[40];
  ssize_t n = -1;
  int dir, fd;
  memcpy(shard, it->hex, 2);
  shard[2] = '\0';
  snprintf(name, sizeof name, "%s.cujit", it->hex);
  if ((dir = cj_shard_open(w->root, shard, 0)) < 0) return 0;
  fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) n = read(fd, head, size);
  if (fd >= 0) close(fd);
  close(dir);
  return n > 0 ? (size_t)n : 0;
}

static void describe(const walk *w, const item *it, cujit_cache_entry *e, char *name, char *arch) {
  unsigned char head[4096];
  cj_entry_meta meta;
  cj_key k;
  size_t n = read_head(w, it, head, sizeof head);
  strcpy(name, "?");
  strcpy(arch, "?");
  if (cj_entry_peek(head, n, &k, &meta) == 0) {
    snprintf(name, 256, "%s", meta.name);
    snprintf(arch, 32, "%s", meta.arch);
  }
  e->size = sizeof *e;
  e->key = it->hex;
  e->name = name;
  e->arch = arch;
  e->bytes = it->size;
  e->last_use = it->mtime_ns / 1000000000LL;
}

int cj_list(const cj_root *r, cujit_cache_entry_fn fn, void *user) {
  walk w;
  size_t i;
  if (walk_root(r, &w, 0) != 0) return -1;
  if (w.n) qsort(w.v, w.n, sizeof *w.v, older_first);
  for (i = 0; i < w.n; i++) {
    cujit_cache_entry e;
    char name[256], arch[32];
    describe(&w, &w.v[i], &e, name, arch);
    if (fn(&e, user) != 0) break;
  }
  cj_free(w.v);
  return 0;
}

int cj_prune_entry_keys(const cj_root *r, cj_entry_key **keys, size_t *n) {
  walk w;
  size_t i, j;
  *keys = NULL;
  *n = 0;
  if (walk_root(r, &w, 0) != 0) return -1;
  if (w.n) qsort(w.v, w.n, sizeof *w.v, older_first);
  if (w.n && !(*keys = cj_calloc(w.n, sizeof **keys))) {
    cj_free(w.v);
    return -2;
  }
  for (i = 0; i < w.n; i++) {
    for (j = 0; j < 16; j++) {
      int hi = w.v[i].hex[2 * j], lo = w.v[i].hex[2 * j + 1];
      hi = hi <= '9' ? hi - '0' : hi - 'a' + 10;
      lo = lo <= '9' ? lo - '0' : lo - 'a' + 10;
      (*keys)[i].key.b[j] = (unsigned char)(hi << 4 | lo);
    }
    (*keys)[i].mtime_ns = w.v[i].mtime_ns;
  }
  *n = w.n;
  cj_free(w.v);
  return 0;
}
