/* disktier.c - the disk cache as a tier (tier.h): entries named by the entry key, in the
 * directory the walk opened.
 *
 *   find:  reads the entry; on a miss takes the key's lock (lock.c), so that one process
 *          per key compiles it, or waits for the process holding it to write the entry
 *          (or for the walk's stop, or the lock timeout). The lock is held until leave().
 *   probe: reads the entry (explain, and an import that looks before it writes).
 *   put:   writes the entry's bytes atomically (disk.c).
 *   leave: gives the lock and the shard back, then counts in the directory's statistics
 *          (diskstats.c): a hit, or a miss that wrote some bytes; a write that takes the
 *          cache past its limit prunes it (prune.c).
 * A shard that cannot be used makes the tier unusable for the walk: the compile goes on
 * without it (and without the tiers behind it). */
#define _GNU_SOURCE /* fstatat */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "store/tier.h"

static int disk_open(void *visit, const cj_want *w, int create, char *why, size_t why_size) {
  cj_disk_visit *d = visit;
  d->lock.fd = -1;
  d->path.dir = -1;
  d->written = 0;
  if (w->root.fd < 0) {
    snprintf(why, why_size, "there is no usable disk cache%s",
             cj_cachedir_disabled() ? " (env CUJIT_CACHE turns it off)" : "");
    return -1;
  }
  /* a probe of a shard not made yet finds no entry there */
  if (cj_disk_entry_open(&w->root, w->key, create, &d->path) == 0 || !create) return 0;
  snprintf(why, why_size, "the disk cache's directory for this key cannot be used");
  return -1;
}

static int same_stat(const struct stat *a, const struct stat *b) {
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* 1 once the entry was (re)written and reads as a hit, or when out of memory. */
static int entry_written(cj_disk_visit *d) {
  const cj_want *w = d->want;
  struct stat st;
  int rc;
  if (fstatat(d->path.dir, d->path.name, &st, AT_SYMLINK_NOFOLLOW) != 0 || same_stat(&st, &d->seen))
    return 0;
  d->seen = st;
  rc = cj_disk_read(&d->path, w->key, w->deps, &d->image);
  if (rc == CJ_DISK_OOM) d->oom = 1;
  return rc == CJ_DISK_HIT || rc == CJ_DISK_OOM;
}

/* Polled while another process holds the key's lock: 1 when the walk's stop says to stop
 * waiting, or the entry was written. */
static int entry_ready(void *arg) {
  cj_disk_visit *d = arg;
  const cj_want *w = d->want;
  if (w->stop && w->stop(w->stop_arg)) return d->stopped = 1;
  return entry_written(d);
}

/* After a miss: the key's lock, or the entry its holder wrote. */
static int lock_or_wait(cj_disk_visit *d, const cj_want *w, cj_found *f) {
  int rc;
  d->want = w;
  d->image = NULL;
  d->oom = d->stopped = 0;
  rc = cj_lock_acquire(d->path.dir, d->path.lock, w->name, cj_cachedir_lock_timeout(), entry_ready,
                       d, &d->lock);
  /* the entry may have been written between the first look and taking the lock */
  if (rc == CJ_LOCK_HELD && !d->oom && !d->stopped) entry_written(d);
  f->image = d->image;
  if (d->oom) return CJ_TIER_NOMEM;
  if (d->stopped) return CJ_TIER_STOPPED;
  return f->image ? CJ_TIER_FOUND : CJ_TIER_NONE;
}

static int disk_find(void *visit, const cj_want *w, cj_found *f) {
  cj_disk_visit *d = visit;
  int rc = cj_disk_read(&d->path, w->key, w->deps, &f->image);
  if (rc == CJ_DISK_OOM) return CJ_TIER_NOMEM;
  if (rc == CJ_DISK_HIT) return CJ_TIER_FOUND;
  memset(&d->seen, 0, sizeof d->seen);
  if (rc == CJ_DISK_INVALID) /* wait for it to change */
    fstatat(d->path.dir, d->path.name, &d->seen, AT_SYMLINK_NOFOLLOW);
  return lock_or_wait(d, w, f);
}

static int disk_probe(void *visit, const cj_want *w, cj_found *f, char *why, size_t why_size) {
  cj_disk_visit *d = visit;
  int rc = CJ_DISK_ABSENT;
  if (d->path.dir >= 0) rc = cj_disk_read(&d->path, w->key, w->deps, &f->image);
  if (rc == CJ_DISK_HIT) return CJ_TIER_FOUND;
  snprintf(why, why_size, "%s",
           rc == CJ_DISK_INVALID ? "the disk entry under this key is not valid (it is replaced "
                                   "by the next compile)"
                                 : "the disk cache holds no entry under this key");
  return CJ_TIER_NONE;
}

static uint64_t disk_put(void *visit, const cj_want *w, cj_image *im, const cj_buf *entry) {
  cj_disk_visit *d = visit;
  uint64_t n = cj_disk_store(&d->path, entry);
  (void)w, (void)im;
  d->written += n;
  return n;
}

static unsigned unstated_writes; /* entries written while the statistics were unusable */

/* Adds a lookup's outcome to the directory's statistics, pruning when the cache grew past
 * its limit. */
static void count(const cj_root *root, cj_tier_end end, uint64_t written) {
  cj_disk_counters d;
  uint64_t max = cj_cachedir_max_size();
  int rc;
  memset(&d, 0, sizeof d);
  d.hits = end == CJ_END_FOUND || end == CJ_END_FARTHER;
  d.misses = d.compiles = end == CJ_END_MADE;
  if (d.hits && !written) { /* the common case of a new process: counted in batches */
    cj_diskstats_hit(root);
    return;
  }
  d.size = written;
  rc = cj_diskstats_add(root, &d, max);
  if (rc == 1) cj_prune_auto(root, max);
  /* no statistics: walk the directory after every 32nd write of this process (an import's
   * writes are left out, as they were always) */
  if (rc == -1 && written && end != CJ_END_IMPORTED &&
      __atomic_add_fetch(&unstated_writes, 1, __ATOMIC_RELAXED) % 32 == 0)
    cj_prune_auto(root, max);
}

static void disk_leave(void *visit, const cj_want *w, cj_tier_end end) {
  cj_disk_visit *d = visit;
  cj_lock_release(d->path.dir, d->path.lock, &d->lock);
  cj_disk_entry_close(&d->path);
  if (end != CJ_END_NOTHING && (end != CJ_END_IMPORTED || d->written))
    count(&w->root, end, d->written);
}

const cj_tier cj_disk_tier = {
    .shown_as = CUJIT_CACHE_TIER_DISK,
    .reading = "reading a cache entry",
    .holder = "another process",
    .keeps_bytes = 1,
    .open = disk_open,
    .find = disk_find,
    .probe = disk_probe,
    .put = disk_put,
    .leave = disk_leave,
};
