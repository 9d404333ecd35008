/* remote.c - the remote tier (see remote.h), one of the tiers the walk asks (store/tier.h).
 *
 * After a disk miss, with the key's local lock held (so one process per machine asks):
 *   1. get the key's value; one that passes the entry checks is a hit, which the walk
 *      writes to the local disk as it came;
 *   2. otherwise take the key's lock in the tier (it expires after the cache's lock
 *      timeout, in case its holder dies) and look again, since the holder before us may
 *      have stored it meanwhile; the walk then compiles (or links), puts the entry into
 *      every tier, and leaves, which drops the lock;
 *   3. while another machine holds the lock, poll for its entry for at most the cache's
 *      lock timeout, then compile here as well. The pause between looks is an eighth of
 *      the time waited so far, from 2 ms to 50 ms: a waiter finds the entry at most about
 *      an eighth of the compile time after it was stored, and one machine (only the
 *      process holding its local lock polls) asks at most 500 times a second.
 * A failed operation (no connection, no answer in time) skips the tier for
 * CJ_REMOTE_BACKOFF_S, with one warning, and the compile goes on locally. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remote/remote.h"
#include "dl/hiredis.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_tier, mu)
static cj_remote *current;    /* the tier set now (a reference); NULL: none */
static int configured;        /* the setting was read from the environment, or set */
static double retry_at;       /* monotonic seconds before which `current` is skipped */
static cj_disk_counters mine; /* this process's remote counters */
static char shown[512];       /* the URL set now, its password masked; "" when none */

enum { GOT = 0, NONE = 1, BAD = 2, STOPPED = 3, DOWN = -1, NOMEM = -2 }; /* outcomes */

/* ---- the setting ---- */

static void unref_locked(cj_remote *t) {
  if (t && --t->refs == 0) t->ops->destroy(t);
}

static void unref(cj_remote *t) {
  if (!t) return;
  pthread_mutex_lock(&mu);
  unref_locked(t);
  pthread_mutex_unlock(&mu);
}

/* Makes `url` (NULL or "": none) the tier. CUJIT_OK, or the status with the reason in why;
 * on failure there is no tier. */
static cujit_status configure_locked(const char *url, char *why, size_t size) {
  cj_remote *t = NULL;
  unref_locked(current);
  current = NULL;
  retry_at = 0;
  configured = 1;
  shown[0] = '\0';
  if (!url || !*url) return CUJIT_OK;
  if (cj_redis_open(url, &t, why, size) != 0)
    return why[0] ? CUJIT_ERROR_INVALID_VALUE : CUJIT_ERROR_OUT_OF_MEMORY;
  if (cj_hiredis_load() != CUJIT_OK) {
    snprintf(why, size, "%s", cj_hiredis_error());
    t->ops->destroy(t);
    return CUJIT_ERROR_CACHE;
  }
  t->refs = 1;
  current = t;
  cj_redis_shown(url, shown, sizeof shown);
  return CUJIT_OK;
}

cujit_status cujit_cache_get_remote(char *url, size_t size) {
  char why[1024] = "";
  cujit_status st = CUJIT_OK;
  CJ_CHECK(url && size, CUJIT_ERROR_INVALID_VALUE, "cujit_cache_get_remote: %s",
           url ? "size is 0" : "url is NULL");
  pthread_mutex_lock(&mu);
  if (!configured) st = configure_locked(cj_env("CUJIT_CACHE_REMOTE"), why, sizeof why);
  snprintf(url, size, "%s", shown);
  pthread_mutex_unlock(&mu);
  if (st == CUJIT_ERROR_OUT_OF_MEMORY) return cj_fail_oom("reading the remote cache setting");
  CJ_CHECK(st == CUJIT_OK, st, "CUJIT_CACHE_REMOTE: %s; the remote cache is off", why);
  return CUJIT_OK;
}

cujit_status cujit_cache_set_remote(const char *url) {
  const char *from = url ? "cujit_cache_set_remote" : "CUJIT_CACHE_REMOTE";
  char why[1024] = "";
  cujit_status st;
  if (!url) url = cj_env("CUJIT_CACHE_REMOTE");
  pthread_mutex_lock(&mu);
  st = configure_locked(url, why, sizeof why);
  pthread_mutex_unlock(&mu);
  if (st == CUJIT_ERROR_OUT_OF_MEMORY) return cj_fail_oom("setting the remote cache");
  CJ_CHECK(st == CUJIT_OK, st, "%s: %s; the remote cache is off until it is set again", from, why);
  return CUJIT_OK;
}

/* A new reference to the tier, or NULL when there is none or it is backing off. The first
 * call reads env CUJIT_CACHE_REMOTE unless cujit_cache_set_remote() came first. */
static cj_remote *acquire(void) {
  char why[1024] = "";
  cj_remote *t;
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&mu);
  if (!configured) st = configure_locked(cj_env("CUJIT_CACHE_REMOTE"), why, sizeof why);
  t = current && cj_now_s() >= retry_at ? current : NULL;
  if (t) t->refs++;
  pthread_mutex_unlock(&mu);
  if (st != CUJIT_OK)
    cj_warn("CUJIT_CACHE_REMOTE: %s; compiling without the remote cache",
            why[0] ? why : "out of memory");
  return t;
}

/* 1 when t is the tier set now and not backing off. */
static int usable(const cj_remote *t) {
  int ok;
  pthread_mutex_lock(&mu);
  ok = t == current && cj_now_s() >= retry_at;
  pthread_mutex_unlock(&mu);
  return ok;
}

/* ---- counting and failing ---- */

static void add(uint64_t *to, uint64_t n) {
  if (n) __atomic_add_fetch(to, n, __ATOMIC_RELAXED);
}

/* Adds d (with the time since t0) to this process's counters and the cache directory's. */
static void tally(const cj_root *root, cj_disk_counters *d, double t0) {
  d->remote_time_us = (uint64_t)((cj_now_s() - t0) * 1e6);
  add(&mine.remote_hits, d->remote_hits);
  add(&mine.remote_misses, d->remote_misses);
  add(&mine.remote_invalid, d->remote_invalid);
  add(&mine.remote_errors, d->remote_errors);
  add(&mine.remote_time_us, d->remote_time_us);
  if (root) cj_diskstats_add(root, d, cj_cachedir_max_size());
}

void cj_remote_counters(cj_disk_counters *out) {
  out->remote_hits = __atomic_load_n(&mine.remote_hits, __ATOMIC_RELAXED);
  out->remote_misses = __atomic_load_n(&mine.remote_misses, __ATOMIC_RELAXED);
  out->remote_invalid = __atomic_load_n(&mine.remote_invalid, __ATOMIC_RELAXED);
  out->remote_errors = __atomic_load_n(&mine.remote_errors, __ATOMIC_RELAXED);
  out->remote_time_us = __atomic_load_n(&mine.remote_time_us, __ATOMIC_RELAXED);
}

/* An operation failed: counted (d may be NULL), and a tier that cannot be reached is left
 * alone for CJ_REMOTE_BACKOFF_S, with one warning; one whose server refused the command is
 * warned about once. */
static void failed(cj_remote *t, int rc, const char *op, const char *why, cj_disk_counters *d) {
  char text[1536];
  if (d) d->remote_errors++;
  if (rc == CJ_REMOTE_NOMEM) return;
  if (rc == CJ_REMOTE_REFUSED) {
    snprintf(text, sizeof text,
             "the remote cache %s refused to %s: %s; check the server's "
             "configuration (an LRU maxmemory-policy, writable, scripting allowed)",
             t->name, op, why);
    cj_warn_once(text);
    return;
  }
  pthread_mutex_lock(&mu);
  if (t == current) retry_at = cj_now_s() + CJ_REMOTE_BACKOFF_S;
  pthread_mutex_unlock(&mu);
  cj_warn("the remote cache %s failed to %s: %s; compiling without it for %.0f s", t->name, op, why,
          CJ_REMOTE_BACKOFF_S);
}

/* Gives the claim's lock back (nothing when none is held). */
static void unlist_held(const cj_remote *t, uint64_t token);

static void release(cj_remote_claim *claim) {
  char why[512] = "";
  int rc;
  if (!claim->tier) return;
  unlist_held(claim->tier, claim->token);
  if (usable(claim->tier)) { /* otherwise the lock expires by itself */
    rc = claim->tier->ops->unlock(claim->tier, &claim->key, claim->token, why, sizeof why);
    if (rc != CJ_REMOTE_OK) failed(claim->tier, rc, "drop a lock", why, NULL);
  }
  unref(claim->tier);
  claim->tier = NULL;
}

/* ---- looking up ---- */

/* Checks a value as an entry for key recorded with these headers: 0 with a new image, 1
 * with the reason in why, -1 out of memory. */
static int check(const cj_key *key, const cj_deps *deps, const cj_buf *b, cj_image **out, char *why,
                 size_t size) {
  cj_deps recorded = {0};
  cj_entry_meta meta;
  int rc = cj_entry_decode(key, b->data, b->len, out, &recorded, &meta, why, size);
  if (rc == 0 && !cj_deplist_same_files(&recorded, deps)) {
    cj_image_unref(*out);
    *out = NULL;
    snprintf(why, size, "records other headers than the source includes now");
    rc = 1;
  }
  cj_deplist_clear(&recorded);
  return rc;
}

static const cj_root *root_of(const cj_want *w) { return w->root.fd >= 0 ? &w->root : NULL; }

/* Gets the key's value and checks it: GOT (a new image in f->image, the value in f->entry),
 * NONE, BAD (warned and counted when `first`), DOWN or NOMEM. */
static int lookup(cj_remote *t, const cj_want *w, int first, cj_found *f, cj_disk_counters *d) {
  char why[512] = "";
  cj_buf b = {0};
  int rc = t->ops->get(t, w->key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why), ok;
  if (rc == CJ_REMOTE_OK) {
    ok = check(w->key, w->deps, &b, &f->image, why, sizeof why);
    rc = ok == 0 ? GOT : ok > 0 ? BAD : NOMEM;
    if (rc == GOT) { /* the walk stores it on disk as it came */
      f->entry = b;
      memset(&b, 0, sizeof b);
    }
  } else if (rc == CJ_REMOTE_ABSENT) {
    rc = NONE;
  } else if (rc == CJ_REMOTE_TOO_LARGE) {
    rc = BAD;
  } else if (rc == CJ_REMOTE_REFUSED) { /* not even a string */
    char answer[sizeof why];
    snprintf(answer, sizeof answer, "%s", why);
    snprintf(why, sizeof why, "cannot be read (%.400s)", answer);
    rc = BAD;
  } else {
    failed(t, rc, "read an entry", why, d);
    rc = rc == CJ_REMOTE_NOMEM ? NOMEM : DOWN;
  }
  cj_buf_free(&b);
  if (rc == BAD && first) {
    d->remote_invalid++;
    cj_warn("the value for '%s' in the remote cache %s %s; compiling it again and replacing "
            "it",
            w->name, t->name, why);
  }
  return rc;
}

/* ---- the locks this process holds in the tier ----
 *
 * A process that ends while one of its threads holds a key's lock in the tier (the error
 * mode's end, or an exit() during a compile) gives the lock back as it ends (cj_at_end),
 * so that no other machine waits for it to expire: one command each, as a compile drops
 * its lock, bounded by the tier's timeout. Each lock is listed with the process that took
 * it: a forked child never gives back its parent's. A lock is listed from hold() until
 * release() takes it off, before its claim's reference to the tier is dropped,
 * so the tier of every listed lock is alive while the list's lock is held. */

enum { MAX_HELD = 64 };
typedef struct held_lock {
  cj_remote *tier; /* NULL: a free slot */
  cj_key key;
  uint64_t token;
  pid_t pid;
} held_lock;

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_held, held_mu)
static held_lock held[MAX_HELD];
static pthread_once_t held_once = PTHREAD_ONCE_INIT;

static void give_back_at_end(void) {
  pid_t me = getpid();
  size_t i;
  pthread_mutex_lock(&held_mu);
  for (i = 0; i < MAX_HELD; i++) {
    char why[256];
    held_lock *h = &held[i];
    if (!h->tier || h->pid != me) continue;
    h->tier->ops->unlock(h->tier, &h->key, h->token, why, sizeof why);
    h->tier = NULL;
  }
  pthread_mutex_unlock(&held_mu);
}

static void held_init(void) { cj_at_end(give_back_at_end); }

/* Lists a lock taken (a full list leaves it to expire, as before). */
static void list_held(cj_remote *t, const cj_key *key, uint64_t token) {
  size_t i;
  pthread_once(&held_once, held_init);
  pthread_mutex_lock(&held_mu);
  for (i = 0; i < MAX_HELD && held[i].tier; i++) continue;
  if (i < MAX_HELD) held[i] = (held_lock){t, *key, token, getpid()};
  pthread_mutex_unlock(&held_mu);
}

static void unlist_held(const cj_remote *t, uint64_t token) {
  size_t i;
  pthread_mutex_lock(&held_mu);
  for (i = 0; i < MAX_HELD; i++)
    if (held[i].tier == t && held[i].token == token) held[i].tier = NULL;
  pthread_mutex_unlock(&held_mu);
}

static void hold(cj_remote_claim *claim, cj_remote *t, const cj_key *key, uint64_t token) {
  pthread_mutex_lock(&mu);
  t->refs++;
  pthread_mutex_unlock(&mu);
  claim->tier = t;
  claim->key = *key;
  claim->token = token;
  list_held(t, key, token);
}

/* No entry yet: takes the key's lock in the tier, or waits for the entry of the machine
 * that holds it. GOT, NONE (compile; *claim may hold the lock), STOPPED, DOWN or NOMEM. */
static int claim_or_wait(cj_remote *t, const cj_want *w, cj_remote_claim *claim, cj_found *f,
                         cj_disk_counters *d) {
  double start = cj_now_s(), timeout = cj_cachedir_lock_timeout(), waited;
  uint64_t token = cj_random64() | 1, ttl_ms = (uint64_t)(timeout * 1000);
  char why[512] = "";
  int rc;
  if (ttl_ms < 1000) ttl_ms = 1000;
  for (;;) {
    rc = t->ops->lock(t, w->key, token, ttl_ms, why, sizeof why);
    if (rc == CJ_REMOTE_OK) {
      hold(claim, t, w->key, token);
      /* the holder before us may have stored it between our look and the lock */
      rc = lookup(t, w, 0, f, d);
      if (rc == GOT || rc == DOWN) release(claim);
      return rc == BAD ? NONE : rc;
    }
    if (rc != CJ_REMOTE_ABSENT) {
      failed(t, rc, "take a lock", why, d);
      return rc == CJ_REMOTE_NOMEM ? NOMEM : DOWN;
    }
    if (cj_now_s() - start >= timeout) {
      cj_warn("waited %.1f s for another machine to finish compiling '%s' (its lock in the "
              "remote cache %s is held); compiling it here as well (CUJIT_CACHE_LOCK_TIMEOUT "
              "sets the wait)",
              cj_now_s() - start, w->name, t->name);
      return NONE;
    }
    if (w->stop && w->stop(w->stop_arg)) return STOPPED;
    waited = cj_now_s() - start;
    cj_nap(waited / 8 < 0.002 ? 0.002 : waited / 8 > 0.05 ? 0.05 : waited / 8);
    rc = lookup(t, w, 0, f, d);
    if (rc != NONE && rc != BAD) return rc;
  }
}

/* ---- the tier (tier.h) ---- */

/* Why no tier can be asked now: none is set, or the one set is backing off. */
static void unavailable(char *why, size_t why_size) {
  if (!why) return;
  pthread_mutex_lock(&mu);
  snprintf(why, why_size,
           current ? "the remote tier %s is left alone after a failure" : "no remote tier is set",
           current ? current->name : "");
  pthread_mutex_unlock(&mu);
}

/* With no tier set, or one backing off, the walk passes the tier over (and a profiler shows
 * no lookup in it). */
static int remote_open(void *visit, const cj_want *w, int create, char *why, size_t why_size) {
  cj_remote *t = acquire();
  (void)w, (void)create;
  memset(visit, 0, sizeof(cj_remote_claim));
  if (!t) {
    unavailable(why, why_size);
    return -1;
  }
  unref(t);
  return 0;
}

/* After a disk miss, with the key's local lock held when it could be had (so one process
 * per machine asks): the tier's entry, or its lock (the visit's claim), or the entry the
 * machine that held the lock stored. No tier set, or one in its back-off, is a miss at
 * once. */
static int remote_find(void *visit, const cj_want *w, cj_found *f) {
  cj_remote_claim *claim = visit;
  cj_disk_counters d;
  double t0 = cj_now_s();
  cj_remote *t;
  int rc;
  if (!(t = acquire())) return CJ_TIER_NONE;
  memset(&d, 0, sizeof d);
  rc = lookup(t, w, 1, f, &d);
  if (rc == NONE || rc == BAD) rc = claim_or_wait(t, w, claim, f, &d);
  if (rc == GOT)
    d.remote_hits = 1;
  else if (rc == NONE)
    d.remote_misses = 1;
  if (rc != NONE) release(claim); /* only a compile needs the lock */
  tally(root_of(w), &d, t0);
  unref(t);
  return rc == GOT       ? CJ_TIER_FOUND
         : rc == NOMEM   ? CJ_TIER_NOMEM
         : rc == STOPPED ? CJ_TIER_STOPPED
                         : CJ_TIER_NONE;
}

static void put(cj_remote *t, const cj_root *root, const cj_key *key, const cj_buf *b) {
  cj_disk_counters d;
  double t0 = cj_now_s();
  char why[512] = "";
  int rc;
  if (b->len > CJ_REMOTE_MAX_ENTRY) {
    cj_debug("not storing a %zu-byte entry in the remote cache %s (at most %zu bytes)", b->len,
             t->name, CJ_REMOTE_MAX_ENTRY);
    return;
  }
  memset(&d, 0, sizeof d);
  rc = t->ops->put(t, key, b->data, b->len, why, sizeof why);
  if (rc != CJ_REMOTE_OK) failed(t, rc, "store an entry", why, &d);
  tally(root, &d, t0);
}

/* Stores an entry compiled here in the tier set now. */
static uint64_t remote_put(void *visit, const cj_want *w, cj_image *im, const cj_buf *entry) {
  cj_remote *t = acquire();
  (void)visit, (void)im;
  if (t) put(t, root_of(w), w->key, entry);
  unref(t);
  return 0;
}

/* Whether the tier holds a valid entry for the key, recorded with these headers, without
 * writing anything; why says what it found, or that no tier is set or it is backing off. */
static int remote_probe(void *visit, const cj_want *w, cj_found *f, char *why, size_t why_size) {
  cj_remote *t = acquire();
  char reason[256];
  cj_buf b = {0};
  int rc;
  (void)visit;
  if (!t) {
    unavailable(why, why_size);
    return CJ_TIER_NONE;
  }
  rc = t->ops->get(t, w->key, CJ_REMOTE_MAX_ENTRY, &b, why, why_size);
  snprintf(reason, sizeof reason, "%s", why);
  if (rc == CJ_REMOTE_OK) {
    rc = check(w->key, w->deps, &b, &f->image, reason, sizeof reason) == 0 ? CJ_TIER_FOUND
                                                                           : CJ_TIER_NONE;
    if (rc == CJ_TIER_NONE)
      snprintf(why, why_size, "the remote tier %s holds a value that %s", t->name, reason);
  } else {
    if (rc == CJ_REMOTE_ABSENT)
      snprintf(why, why_size, "the remote tier %s holds no entry for it", t->name);
    else
      snprintf(why, why_size, "the remote tier %s could not be asked: %s", t->name, reason);
    rc = CJ_TIER_NONE;
  }
  cj_buf_free(&b);
  unref(t);
  return rc;
}

static void remote_leave(void *visit, const cj_want *w, cj_tier_end end) {
  (void)w, (void)end;
  release(visit);
}

const cj_tier cj_remote_tier = {
    .shown_as = CUJIT_CACHE_TIER_REMOTE,
    .reading = "reading a remote cache entry",
    .holder = "another machine",
    .keeps_bytes = 1,
    .behind = 1,
    .shared = 1,
    .open = remote_open,
    .find = remote_find,
    .probe = remote_probe,
    .put = remote_put,
    .leave = remote_leave,
};
