/* deplist.c - the user headers a compile depends on: each with its path, size and content
 * hash (what the disk key and the entry's manifest hold), plus its stat identity, so that
 * a memory-cache hit can revalidate it with one stat call (key/deps.c). */
#include <string.h>
#include <time.h>

#include "format/entry.h"

/* A file modified less than this long before it was hashed may change again within the
 * file system's timestamp granularity without its stat changing; such files are hashed
 * again on every revalidation (git calls them "racily clean"). */
#define CJ_RACY_NS 2000000000LL

static int64_t ns_of(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

static cj_dep *push(cj_deps *d, const char *path) {
  cj_dep *e;
  if (CJ_VEC_RESERVE(d->v, d->cap, d->n + 1) != 0) return NULL;
  e = &d->v[d->n];
  memset(e, 0, sizeof *e);
  if (!(e->path = cj_strdup(path))) return NULL;
  d->n++;
  return e;
}

int cj_deplist_add_file(cj_deps *d, const char *path, const struct stat *st, const void *text,
                        size_t len) {
  cj_dep *e = push(d, path);
  if (!e) return -1;
  e->present = 1;
  e->size = len;
  cj_hash128(text, len, e->hash);
  e->dev = (uint64_t)st->st_dev;
  e->ino = (uint64_t)st->st_ino;
  e->mtime_ns = ns_of(st->st_mtim);
  e->ctime_ns = ns_of(st->st_ctim);
  e->racy = e->mtime_ns > now_ns() - CJ_RACY_NS || e->ctime_ns > now_ns() - CJ_RACY_NS;
  return 0;
}

int cj_deplist_add_absent(cj_deps *d, const char *path) { return push(d, path) ? 0 : -1; }

const cj_dep *cj_deplist_find(const cj_deps *d, const char *path) {
  size_t i;
  for (i = 0; i < d->n; i++)
    if (strcmp(d->v[i].path, path) == 0) return &d->v[i];
  return NULL;
}

/* The next present dep at or after *i, or NULL. */
static const cj_dep *next_present(const cj_deps *d, size_t *i) {
  for (; d && *i < d->n; ++*i)
    if (d->v[*i].present) return &d->v[(*i)++];
  return NULL;
}

int cj_deplist_same_files(const cj_deps *a, const cj_deps *b) {
  size_t i = 0, j = 0;
  const cj_dep *x, *y;
  for (;;) {
    x = next_present(a, &i);
    y = next_present(b, &j);
    if (!x || !y) return !x && !y;
    if (strcmp(x->path, y->path) != 0 || x->size != y->size ||
        memcmp(x->hash, y->hash, sizeof x->hash) != 0)
      return 0;
  }
}

size_t cj_deplist_count_present(const cj_deps *d) {
  size_t i, n = 0;
  for (i = 0; d && i < d->n; i++) n += d->v[i].present != 0;
  return n;
}

void cj_deplist_clear(cj_deps *d) {
  size_t i;
  for (i = 0; i < d->n; i++) cj_free(d->v[i].path);
  cj_free(d->v);
  memset(d, 0, sizeof *d);
}

cj_deps *cj_deplist_ref(cj_deps *d) {
  if (d) __atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
  return d;
}

void cj_deplist_destroy(cj_deps *d) {
  if (!d || __atomic_fetch_sub(&d->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
  cj_deplist_clear(d);
  cj_free(d);
}
