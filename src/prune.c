/* prune.c - walking the cache directory: counting, listing, evicting the least recently
 * used entries (by modification time, which a hit sets to now) down to a byte budget,
 * clearing; and removing what crashed writers left behind (temporary files and lock files
 * more than an hour old). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"

#define CJ_STALE_S 3600

typedef struct item {
  char hex[33]; /* its key: the file is <root>/<hex[0..1]>/<hex>.cujit */
  uint64_t size;
  int64_t mtime_ns;
} item;

typedef struct walk {
  const char *root;
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

static void item_path(const walk *w, const item *it, char *path, size_t size) {
  snprintf(path, size, "%s/%.2s/%s.cujit", w->root, it->hex, it->hex);
}

static void add(walk *w, const char *name, const struct stat *st) {
  item *it;
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 64;
    item *v = cj_realloc(w->v, cap * sizeof *v);
    if (!v) {
      w->oom = 1;
      return;
    }
    w->v = v;
    w->cap = cap;
  }
  it = &w->v[w->n++];
  memcpy(it->hex, name, 32);
  it->hex[32] = '\0';
  it->size = (uint64_t)st->st_size;
  it->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
  w->bytes += it->size;
}

/* Leftovers of a writer or locker that died: removed once they are an hour old. */
static void tidy(const char *path, const char *name, const struct stat *st) {
  cj_lock lock;
  if (time(NULL) - st->st_mtime < CJ_STALE_S) return;
  if (name[0] == '.' && ends_with(name, ".tmp")) {
    unlink(path);
  } else if (ends_with(name, ".lock") && cj_lock_try(path, &lock) == CJ_LOCK_HELD) {
    cj_lock_release(path, &lock);
  }
}

static void walk_shard(walk *w, const char *shard, const char *prefix, int tidy_up) {
  char path[PATH_MAX];
  struct dirent *de;
  struct stat st;
  DIR *d = opendir(shard);
  if (!d) return;
  while ((de = readdir(d)) != NULL && !w->oom) {
    if ((size_t)snprintf(path, sizeof path, "%s/%s", shard, de->d_name) >= sizeof path) continue;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (is_entry_name(de->d_name) && strncmp(de->d_name, prefix, 2) == 0)
      add(w, de->d_name, &st);
    else if (tidy_up)
      tidy(path, de->d_name, &st);
  }
  closedir(d);
}

/* Collects every entry under root. -1 when root cannot be read or out of memory. */
static int walk_root(const char *root, walk *w, int tidy_up) {
  char shard[PATH_MAX];
  struct dirent *de;
  DIR *d = opendir(root);
  memset(w, 0, sizeof *w);
  w->root = root;
  if (!d) return -1;
  while ((de = readdir(d)) != NULL && !w->oom) {
    if (strlen(de->d_name) != 2 || !is_hex(de->d_name, 2)) continue;
    if ((size_t)snprintf(shard, sizeof shard, "%s/%s", root, de->d_name) >= sizeof shard) continue;
    walk_shard(w, shard, de->d_name, tidy_up);
  }
  closedir(d);
  if (!w->oom) return 0;
  cj_free(w->v);
  return -1;
}

static int older_first(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
  return strcmp(x->hex, y->hex);
}

/* Removes entries, oldest first, from w->v[0..] until the total is at most max_bytes. */
static void evict(walk *w, uint64_t max_bytes, cj_prune_result *res) {
  char path[PATH_MAX];
  size_t i;
  if (w->n) qsort(w->v, w->n, sizeof *w->v, older_first);
  for (i = 0; i < w->n && w->bytes > max_bytes; i++) {
    item_path(w, &w->v[i], path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT) continue;
    w->bytes -= w->v[i].size;
    res->removed++;
    res->removed_bytes += w->v[i].size;
  }
  res->entries = w->n - res->removed;
  res->bytes = w->bytes;
}

int cj_prune(const char *root, uint64_t max_bytes, cj_prune_result *res) {
  walk w;
  memset(res, 0, sizeof *res);
  if (walk_root(root, &w, 1) != 0) return -1;
  evict(&w, max_bytes, res);
  cj_free(w.v);
  cj_diskstats_scanned(root, res->bytes, res->removed);
  if (res->removed)
    cj_info("cache: removed %llu least recently used entries (%llu bytes) to stay within %llu "
            "bytes", (unsigned long long)res->removed, (unsigned long long)res->removed_bytes,
            (unsigned long long)max_bytes);
  return 0;
}

int cj_clear(const char *root, cj_prune_result *res) {
  char path[PATH_MAX];
  walk w;
  size_t i;
  memset(res, 0, sizeof *res);
  if (walk_root(root, &w, 1) != 0) return -1;
  for (i = 0; i < w.n; i++) {
    item_path(&w, &w.v[i], path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT) {
      res->entries++;
      res->bytes += w.v[i].size;
      continue;
    }
    res->removed++;
    res->removed_bytes += w.v[i].size;
  }
  cj_free(w.v);
  cj_diskstats_scanned(root, res->bytes, 0);
  return 0;
}

int cj_scan_dir(const char *root, uint64_t *entries, uint64_t *bytes) {
  walk w;
  *entries = *bytes = 0;
  if (walk_root(root, &w, 0) != 0) return -1;
  *entries = w.n;
  *bytes = w.bytes;
  cj_free(w.v);
  return 0;
}

void cj_prune_auto(const char *root, uint64_t max_size) {
  char path[PATH_MAX];
  cj_prune_result res;
  cj_lock lock;
  snprintf(path, sizeof path, "%s/prune.lock", root);
  if (cj_lock_try(path, &lock) != CJ_LOCK_HELD) return; /* another process is at it */
  if (cj_prune(root, max_size / 10 * 9, &res) == 0) cj_count(CJ_EVICTIONS, res.removed);
  cj_lock_release(path, &lock);
}

/* ---- listing ---- */

static void describe(const walk *w, const item *it, cujit_cache_entry *e, char *name,
                     char *arch) {
  unsigned char head[4096];
  char path[PATH_MAX];
  cj_entry_meta meta;
  cj_key k;
  FILE *f;
  size_t n;
  item_path(w, it, path, sizeof path);
  f = fopen(path, "rbe");
  n = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  strcpy(name, "?");
  strcpy(arch, "?");
  if (cj_entry_peek(head, n, &k, &meta) == 0) {
    snprintf(name, 256, "%s", meta.name);
    snprintf(arch, 32, "%s", meta.arch);
  }
  e->key = it->hex;
  e->name = name;
  e->arch = arch;
  e->bytes = it->size;
  e->last_use = it->mtime_ns / 1000000000LL;
}

int cj_list(const char *root, cujit_cache_entry_fn fn, void *user) {
  walk w;
  size_t i;
  if (walk_root(root, &w, 0) != 0) return -1;
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
