/* deps.c - whether the headers a key was made from are as they were: by their stat (one
 * call each) on a memory-cache hit, and by their contents where a stat cannot tell (a
 * header changed within the timestamp granularity) or after a compile. */
#include <fcntl.h>
#include <string.h>

#include "key/key.h"

static int64_t ns_of(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

/* 1 when the file's contents still hash to e->hash: still a regular file of the same
 * size, which did not grow while it was read. */
static int same_contents(const cj_dep *e) {
  unsigned char hash[16];
  cj_file f;
  int same;
  if (cj_file_read(AT_FDCWD, e->path, 0, (size_t)e->size, &f) != CJ_FILE_OK) return 0;
  same = f.len == e->size && !f.grew;
  if (same) {
    cj_hash128(f.data, f.len, hash);
    same = memcmp(hash, e->hash, sizeof hash) == 0;
  }
  cj_free(f.data);
  return same;
}

/* 1 when the path's stat matches the record: the same file, size and times, or still
 * absent for an absent candidate. */
static int same_stat(const cj_dep *e) {
  struct stat st;
  if (stat(e->path, &st) != 0 || !S_ISREG(st.st_mode)) return !e->present;
  if (!e->present) return 0;
  return (uint64_t)st.st_dev == e->dev && (uint64_t)st.st_ino == e->ino &&
         (uint64_t)st.st_size == e->size && ns_of(st.st_mtim) == e->mtime_ns &&
         ns_of(st.st_ctim) == e->ctime_ns;
}

static int dep_fresh(const cj_dep *e) {
  if (!same_stat(e)) return 0;
  return e->present && e->racy ? same_contents(e) : 1;
}

int cj_deps_fresh(const cj_deps *d) {
  size_t i;
  for (i = 0; d && i < d->n; i++)
    if (!dep_fresh(&d->v[i])) return 0;
  return 1;
}

/* Out of memory while reading a header counts as a change: nothing is cached then. */
const cj_dep *cj_deps_changed(const cj_deps *d) {
  size_t i;
  for (i = 0; d && i < d->n; i++) {
    const cj_dep *e = &d->v[i];
    if (!same_stat(e) || (e->present && !same_contents(e))) return e;
  }
  return NULL;
}
