/* fetch.c - request to image: memory cache, disk cache, remote tier, then NVRTC.
 *
 *   1. The memory cache: the options key (no file reads) and the source's address find
 *      an image holding the same text, compared byte for byte; failing that, the request
 *      key (options and source, hashed) finds it. Its headers are revalidated by stat. A
 *      hit takes one lock and allocates nothing.
 *   2. Otherwise the source's headers are scanned and hashed into the disk key, and the
 *      entry is read. Neither step creates an NVRTC program.
 *   3. On a miss, the key's lock makes one process compile while the others wait for the
 *      entry; the process holding the lock asks the remote tier first, if one is set
 *      (remote.c); the result is written atomically (and to the remote tier) and counted
 *      in the directory's stats, and a write that takes the cache past its limit prunes it.
 * Cache trouble of any kind costs the cache, never the compile. */
#define _GNU_SOURCE /* fstatat */
#include <fcntl.h>
#include <string.h>

#include "cache/cache.h"
#include "remote/remote.h"

/* Gives a new image (not yet shared) its own copy of the source, which every module made
 * from it borrows: a memory hit then copies nothing. */
static cujit_status attach_source(const cj_request *r, cj_image **im) {
  if ((*im)->source) return CUJIT_OK;
  (*im)->source = cj_memdup(r->source, r->source_len);
  (*im)->source_len = r->source_len;
  if ((*im)->source) return CUJIT_OK;
  cj_image_unref(*im);
  *im = NULL;
  return cj_fail_oom("keeping the source of a module");
}

/* After a compile: a header changed since it was hashed into the key may have been read
 * by NVRTC in its new version, so the result is not cached (r->headers_changed). */
static void check_headers(const cj_request *r, const cj_deps *deps, int *changed) {
  const cj_dep *e = cj_deps_changed(deps);
  if (!e) return;
  *changed = 1;
  cj_warn("header '%s' changed while '%s' was compiled; the result is used but not cached "
          "(it may hold either version); the next compile caches it once the header is "
          "left alone",
          e->path, r->name);
}

/* Compiles with NVRTC, here or where r->compiler sends it. `deps` (may be NULL) are the headers the
 * key was made from: one that changed meanwhile sets *changed, and the result is then not cached.
 */
static cujit_status compile_now(cj_request *r, const cj_deps *deps, int *changed, cj_image **out) {
  cujit_status st;
  if (r->compiler) {
    cj_count(CJ_COMPILES, 1);
    st = r->compiler(r, out);
  } else {
    CJ_TRY(cj_request_prepare(r));
    cj_count(CJ_COMPILES, 1);
    st = cj_nvrtc_compile(r, out);
  }
  if (st == CUJIT_OK && deps) check_headers(r, deps, changed);
  if (st == CUJIT_OK) cj_image_index(*out); /* for its entry and its lookups */
  return st == CUJIT_OK ? attach_source(r, out) : st;
}

/* An image from the memory cache whose headers are unchanged, else NULL. Drops the
 * reference to its headers either way. */
static cj_image *fresh(cj_image *im, cj_deps *deps) {
  int ok = im && cj_deps_fresh(deps);
  cj_deps_destroy(deps);
  if (ok || !im) return im;
  cj_image_unref(im); /* a header changed: look again */
  return NULL;
}

/* What waiting for another process's compile needs to look at the entry. */
typedef struct waiter {
  const cj_entry_path *path;
  const cj_keys *k;    /* the disk key and the headers it was made from */
  const cj_request *r; /* its time limit and cancel hook hold while it waits too */
  double start;
  struct stat seen; /* the entry as last looked at (st_ino 0: absent) */
  cj_image *image;
  int oom;
  int stopped; /* 1: the cancel hook asked; 2: the time limit passed */
} waiter;

static int same_stat(const struct stat *a, const struct stat *b) {
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* 1 once the entry was (re)written and reads as a hit, or when out of memory. */
static int entry_written(waiter *w) {
  struct stat st;
  int rc;
  if (fstatat(w->path->dir, w->path->name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      same_stat(&st, &w->seen))
    return 0;
  w->seen = st;
  rc = cj_disk_read(w->path, &w->k->disk, w->k->deps, &w->image);
  if (rc == CJ_DISK_OOM) w->oom = 1;
  return rc == CJ_DISK_HIT || rc == CJ_DISK_OOM;
}

/* Polled while the key is locked elsewhere: as entry_written, or 1 when the request's
 * cancel hook or time limit says to stop waiting. */
static int wait_stopped(void *arg) {
  waiter *w = arg;
  if (w->r->cancel && w->r->cancel(w->r->cancel_user)) return w->stopped = 1;
  if (w->r->time_limit_s > 0 && cj_now_s() - w->start > w->r->time_limit_s) return w->stopped = 2;
  return 0;
}

static int entry_ready(void *arg) { return wait_stopped(arg) || entry_written(arg); }

static cujit_status stopped_waiting(const waiter *w, const char *where) {
  return cj_fail(CUJIT_ERROR_CANCELLED,
                 "compiling '%s' was %s while %s compiled the same "
                 "source; nothing was compiled here",
                 w->r->name,
                 w->stopped == 1 ? "cancelled by its cancel hook" : "stopped by its time limit",
                 where);
}

static unsigned unstated_writes; /* entries written while the statistics were unusable */

void cj_count_disk(const cj_root *root, uint64_t hits, uint64_t misses, uint64_t written) {
  cj_disk_counters d;
  uint64_t max = cj_cache_max_size();
  memset(&d, 0, sizeof d);
  d.hits = hits;
  d.misses = misses;
  d.compiles = misses;
  d.size = written;
  cj_count(hits ? CJ_HITS : CJ_MISSES, 1);
  if (hits && !written) { /* the common case of a new process: counted in batches */
    cj_diskstats_hit(root);
    return;
  }
  switch (cj_diskstats_add(root, &d, max)) {
    case 1: cj_prune_auto(root, max); break;
    case -1: /* no statistics: walk the directory after every 32nd write of this process */
      if (written && __atomic_add_fetch(&unstated_writes, 1, __ATOMIC_RELAXED) % 32 == 0)
        cj_prune_auto(root, max);
      break;
    default: break;
  }
}

/* With the key locked (when the lock could be had): the remote tier's entry, or a compile
 * whose entry is stored on disk and in the remote tier. */
static cujit_status compile_and_store(cj_request *r, const cj_root *root, waiter *w, int *changed,
                                      cj_lock *lock, cj_image **out) {
  const cj_entry_path *p = w->path;
  const cj_key *key = &w->k->disk;
  const cj_deps *deps = w->k->deps;
  cj_remote_claim claim;
  uint64_t written = 0;
  cujit_status st;
  int rc = cj_remote_fetch(root, p, key, deps, r->name, wait_stopped, w, &claim, out, &written);
  if (rc != CJ_REMOTE_MISS) {
    cj_lock_release(p->dir, p->lock, lock);
    if (rc < 0) return cj_fail_oom("reading a remote cache entry");
    if (rc == CJ_REMOTE_STOPPED) return stopped_waiting(w, "another machine");
    return cj_count_disk(root, 1, 0, written), CUJIT_OK;
  }
  st = compile_now(r, deps, changed, out);
  if (st == CUJIT_OK && !*changed) {
    cj_buf manifest = {0};
    int have = cj_keys_manifest(r, w->k, &manifest) == 0;
    written = cj_remote_write(root, p, key, *out, deps, r->name, have ? &manifest : NULL, &claim);
    cj_buf_free(&manifest);
  }
  cj_remote_release(&claim);
  if (written) cj_toolchain_note(root);
  cj_lock_release(p->dir, p->lock, lock);
  cj_count_disk(root, 0, 1, written);
  return st;
}

/* Looks the key up with its shard open: the entry, or the lock that makes one process
 * compile it, or the entry that process wrote. */
static cujit_status from_shard(cj_request *r, const cj_root *root, const cj_entry_path *p,
                               const cj_keys *k, int *changed, cj_image **out) {
  cj_lock lock = {-1};
  waiter w;
  int rc;
  memset(&w, 0, sizeof w);
  w.path = p;
  w.k = k;
  w.r = r;
  w.start = cj_now_s();
  rc = cj_disk_read(p, &k->disk, k->deps, out);
  if (rc == CJ_DISK_OOM) return cj_fail_oom("reading a cache entry");
  if (rc == CJ_DISK_HIT) return cj_count_disk(root, 1, 0, 0), CUJIT_OK;
  if (rc == CJ_DISK_INVALID) /* wait for it to change */
    fstatat(p->dir, p->name, &w.seen, AT_SYMLINK_NOFOLLOW);
  rc = cj_lock_acquire(p->dir, p->lock, r->name, cj_cache_lock_timeout(), entry_ready, &w, &lock);
  if (w.oom) return cj_fail_oom("reading a cache entry");
  if (w.stopped) return stopped_waiting(&w, "another process");
  if (rc == CJ_LOCK_ENTRY_READY) {
    *out = w.image;
    return cj_count_disk(root, 1, 0, 0), CUJIT_OK;
  }
  /* The entry may have been written between the first look and taking the lock. */
  if (rc == CJ_LOCK_HELD && entry_written(&w)) {
    cj_lock_release(p->dir, p->lock, &lock);
    if (w.oom) return cj_fail_oom("reading a cache entry");
    *out = w.image;
    return cj_count_disk(root, 1, 0, 0), CUJIT_OK;
  }
  return compile_and_store(r, root, &w, changed, &lock, out);
}

static cujit_status from_disk(cj_request *r, const cj_root *root, const cj_keys *k, int *changed,
                              cj_image **out) {
  cj_entry_path p;
  cujit_status st;
  if (cj_entry_open(root, &k->disk, 1, &p) != 0) { /* an unusable shard: compile uncached */
    cj_count(CJ_MISSES, 1);
    return compile_now(r, k->deps, changed, out);
  }
  st = from_shard(r, root, &p, k, changed, out);
  cj_entry_close(&p);
  return st;
}

static cujit_status lookup(cj_request *r, const cj_key *rkey, const cj_memhint *hint,
                           cj_image **out) {
  char bypass[512];
  cj_root root;
  cj_keys k;
  int changed = 0;
  cujit_status st = cj_keys_compute(r, rkey, &k, bypass, sizeof bypass);
  if (st != CUJIT_OK) {
    cj_keys_free(&k);
    return st;
  }
  if (bypass[0]) {
    cj_info("'%s' is compiled without the cache: %s", r->name, bypass);
    return compile_now(r, NULL, &changed, out);
  }
  if (cj_root_open(&root, 1) == 0) {
    st = from_disk(r, &root, &k, &changed, out);
    cj_root_close(&root);
  } else {
    cj_count(CJ_MISSES, 1);
    st = compile_now(r, k.deps, &changed, out);
  }
  if (st == CUJIT_OK) st = attach_source(r, out);
  if (st == CUJIT_OK && !changed) cj_memcache_put(&k.request, *out, k.deps, hint);
  cj_keys_free(&k); /* the memory cache holds its own reference to the headers */
  return st;
}

cujit_status cj_compile(cj_request *r, cj_image **out) {
  cj_memhint hint;
  cj_deps *deps = NULL;
  cj_key rkey;
  int changed = 0;
  *out = NULL;
  if (r->flags & CUJIT_OPT_NO_CACHE) return compile_now(r, NULL, &changed, out);
  CJ_TRY(cj_key_options(r, &hint.options));
  hint.source = r->source;
  hint.len = r->source_len;
  *out = cj_memcache_get_source(&hint, &deps);
  if ((*out = fresh(*out, deps)) == NULL) {
    cj_key_source(&hint.options, r->source, r->source_len, &rkey);
    *out = cj_memcache_get(&rkey, &hint, &deps);
    if ((*out = fresh(*out, deps)) == NULL) return lookup(r, &rkey, &hint, out);
  }
  cj_count(CJ_HITS, 1);
  cj_count(CJ_MEMORY_HITS, 1);
  return CUJIT_OK;
}
