/* walk.c - the one walk through the cache tiers, in the order of the list below: to find
 * an image, making it when no tier has it (cj_walk_fetch: a compile, a link), to ask
 * which tier would give it without making or writing anything (cj_walk_probe: explain),
 * and to store one that came from elsewhere (cj_walk_put: an import). What each tier does
 * is its own (store/tier.h); the walk knows only the list and these rules:
 *
 *   - Tiers are asked nearest first. The request key is made (from the source's hint)
 *     before the first tier named by it, unless a tier recalls the image by where its
 *     source lies; the entry key (the caller's keys(), which scans the headers) and the
 *     disk cache's directory before the first tier named by it. A request that cannot be
 *     keyed completely is made without any tier.
 *   - A hit from a tier named by the request key is used only while its headers are as
 *     they were (their stat), since that key does not cover them.
 *   - A tier that cannot be used is passed over, and so is a tier `behind` it; a walk kept
 *     to this machine (w->local) passes over the tiers `shared` with others.
 *   - What one tier finds goes into every nearer tier in use; what no tier has is made and
 *     goes into every tier in use (unless the maker says it must not be kept), the encoded
 *     entry made once for all the tiers that keep bytes. Locks taken by the tiers' finds
 *     are held until then, so that a key is made once per machine and once per cluster.
 *   - Every tier opened is left, with how the walk ended, so that it counts and gives back
 *     its locks; this process's hits and misses are counted here.
 * None of it allocates on a hit in memory or on disk, or makes a system call a tier does
 * not make itself. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "remote/remote.h"

/* The tiers, nearest first, each with what a walk keeps while it uses it: the one list of
 * them. X(field, tier, visit type). */
#define CJ_TIERS(X)                    \
  X(memory, cj_memcache_tier, char)    \
  X(disk, cj_disk_tier, cj_disk_visit) \
  X(remote, cj_remote_tier, cj_remote_claim)

#define CJ_VISIT_FIELD(field, tier, type) type field;
typedef struct visits {
  CJ_TIERS(CJ_VISIT_FIELD)
} visits;

#define CJ_TIER_ROW(field, tier, type) {&tier, offsetof(visits, field)},
static const struct row {
  const cj_tier *tier;
  size_t visit; /* where its visit lies in `visits` */
} rows[] = {CJ_TIERS(CJ_TIER_ROW)};

enum { NTIERS = sizeof rows / sizeof rows[0] };

/* The ranges a profiler shows (common.h's CJ_TRACE): each tier's lookup, its hit, and what
 * the walk stores in it, named by the tier's field ("cujit: cache hit disk"); the entry
 * key, a miss (the compile or link inside it), and a request made without the tiers. */
enum { LOOK, HIT, STORE };
#define CJ_TIER_TRACE(field, tier, type)                                             \
  {CJ_TRACE_NAME("cujit: cache " #field), CJ_TRACE_NAME("cujit: cache hit " #field), \
   CJ_TRACE_NAME("cujit: cache store " #field)},
static cj_trace_name traced[NTIERS][3] = {CJ_TIERS(CJ_TIER_TRACE)};
static cj_trace_name traced_key = CJ_TRACE_NAME("cujit: cache key");
static cj_trace_name traced_miss = CJ_TRACE_NAME("cujit: cache miss");
static cj_trace_name traced_bypass = CJ_TRACE_NAME("cujit: cache bypassed");

/* One walk. */
typedef struct walk {
  cj_want *w;
  const cj_maker *m; /* NULL for a probe or a put */
  visits v;
  cj_key request;   /* made from w->hint */
  int past_request; /* the entry key and the directory were made (or could not be) */
  int warn;         /* a directory that cannot be used is warned about */
  size_t reached;   /* tiers [0, reached) were arrived at */
  unsigned char used[NTIERS];
} walk;

static const cj_tier *tier(size_t i) { return rows[i].tier; }
static void *visit(walk *k, size_t i) { return (char *)&k->v + rows[i].visit; }

static void walk_init(walk *k, cj_want *w, const cj_maker *m, int warn) {
  k->w = w;
  k->m = m;
  k->past_request = 0;
  k->warn = warn;
  k->reached = 0;
  memset(k->used, 0, sizeof k->used);
}

/* ---- arriving at a tier, and asking it ---- */

enum { PASS = 0, USE = 1, UNKEYED = 2 };

/* Before the first tier named by the entry key: that key, when the caller left it to the
 * maker, and the disk cache's directory. */
static CJ_NOINLINE cujit_status past_request(walk *k) {
  cj_want *w = k->w;
  CJ_TRACE_NAMED(&traced_key);
  k->past_request = 1;
  if (!w->key) CJ_TRY(k->m->keys(k->m->ctx, w));
  if (w->key) cj_root_open(&w->root, k->warn);
  return CUJIT_OK;
}

/* Before tier i: what it is named by; then opens it. *use: USE, PASS (it cannot be used
 * now) or UNKEYED (the request cannot be keyed: make it without the tiers). Fails as the
 * maker's keys(). */
static inline CJ_ALWAYS_INLINE cujit_status arrive(walk *k, size_t i, int create, int *use,
                                                   char *why, size_t why_size) {
  const cj_tier *t = tier(i);
  *use = PASS;
  k->reached = i + 1;
  if (!t->by_request) {
    if (!k->past_request) CJ_TRY(past_request(k));
    if (!k->w->key) return *use = UNKEYED, CUJIT_OK;
  }
  if ((t->behind && (i == 0 || !k->used[i - 1])) || (t->shared && k->w->local)) return CUJIT_OK;
  if (t->open && t->open(visit(k, i), k->w, create, why, why_size) != 0) return CUJIT_OK;
  k->used[i] = 1;
  *use = USE;
  return CUJIT_OK;
}

/* rc, an answer of tier i, with a hit of a tier named by the request key kept only while
 * its headers are unchanged; the reference to them is dropped either way. */
static inline CJ_ALWAYS_INLINE int checked(size_t i, int rc, cj_found *f) {
  int ok;
  if (!tier(i)->by_request) return rc;
  ok = rc == CJ_TIER_FOUND && cj_deps_fresh(f->deps);
  if (f->deps) cj_deplist_destroy(f->deps);
  f->deps = NULL;
  if (rc != CJ_TIER_FOUND || ok) return rc;
  cj_image_unref(f->image); /* a header changed: look again */
  f->image = NULL;
  return CJ_TIER_NONE;
}

static void request_key(walk *k) {
  const cj_memhint *h = k->w->hint;
  if (k->w->request) return;
  cj_key_source(&h->options, h->source, h->len, &k->request);
  k->w->request = &k->request;
}

/* Asks tier i: by where the source lies, while the request key is not made and the tier
 * can, then by its key. */
static int look(walk *k, size_t i, cj_found *f) {
  const cj_tier *t = tier(i);
  cj_want *w = k->w;
  CJ_TRACE_NAMED(&traced[i][LOOK]);
  if (t->recall && !w->request && w->hint &&
      checked(i, t->recall(visit(k, i), w, f), f) == CJ_TIER_FOUND)
    return CJ_TIER_FOUND;
  if (t->by_request) request_key(k);
  return checked(i, t->find(visit(k, i), w, f), f);
}

/* Leaves every tier in use, farthest first: `hit` is the index of the tier that had the
 * image (NTIERS: none did, and `end` says how the walk ended). */
static inline CJ_ALWAYS_INLINE void leave_all(walk *k, size_t hit, cj_tier_end end) {
  size_t i = k->reached;
  while (i-- > 0) {
    if (!k->used[i]) continue;
    if (hit < NTIERS) end = i == hit ? CJ_END_FOUND : CJ_END_FARTHER;
    tier(i)->leave(visit(k, i), k->w, end);
  }
}

/* ---- finding ---- */

/* Puts `im` into the tiers in use before tier n, encoding its entry into `entry` for the
 * first that keeps bytes unless it holds the entry already. Returns the bytes written to
 * this machine's disk. */
static uint64_t put_nearer(walk *k, size_t n, cj_image *im, cj_buf *entry, const cj_buf *manifest) {
  cj_want *w = k->w;
  uint64_t written = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    if (!k->used[i]) continue;
    CJ_TRACE_NAMED(&traced[i][STORE]);
    if (tier(i)->keeps_bytes && !entry->len &&
        cj_disk_encode(w->key, im, w->deps, w->name, manifest, entry) != 0)
      continue; /* out of memory: logged; only the tiers of images get it */
    written += tier(i)->put(visit(k, i), w, im, entry);
  }
  return written;
}

/* Tier `at` had it: into the nearer tiers, then leave. */
static cujit_status found(walk *k, size_t at, cj_found *f, cj_image **out) {
  const cj_maker *m = k->m;
  cujit_status st = CUJIT_OK;
  CJ_TRACE_NAMED(&traced[at][HIT]);
  if (tier(at)->keeps_bytes && m->finish) st = m->finish(m->ctx, &f->image);
  if (st == CUJIT_OK && at > 0) put_nearer(k, at, f->image, &f->entry, NULL);
  if (f->entry.data) cj_buf_free(&f->entry);
  leave_all(k, at, CJ_END_FOUND);
  cj_count(CJ_HITS, 1);
  *out = f->image;
  return st;
}

/* No tier had it: made, and put into every tier in use unless the maker says not to. */
static cujit_status made(walk *k, cj_image **out) {
  const cj_maker *m = k->m;
  cj_buf manifest = {0}, entry = {0};
  uint64_t written = 0;
  cujit_status st;
  int keep = 0;
  CJ_TRACE_NAMED(&traced_miss);
  cj_count(CJ_MISSES, 1);
  st = m->make(m->ctx, k->w, out, &keep, &manifest);
  if (st == CUJIT_OK && keep) written = put_nearer(k, NTIERS, *out, &entry, &manifest);
  if (written) cj_toolchain_note(&k->w->root);
  cj_buf_free(&entry);
  cj_buf_free(&manifest);
  leave_all(k, NTIERS, CJ_END_MADE);
  return st;
}

/* The request cannot be keyed completely: made without any tier. */
static cujit_status unkeyed(walk *k, cj_image **out) {
  const cj_maker *m = k->m;
  cj_buf manifest = {0};
  cujit_status st;
  int keep;
  CJ_TRACE_NAMED(&traced_bypass);
  leave_all(k, NTIERS, CJ_END_NOTHING);
  st = m->make(m->ctx, k->w, out, &keep, &manifest);
  cj_buf_free(&manifest);
  return st;
}

/* A tier's find did not find and did not let the walk go on. */
static cujit_status stopped(walk *k, size_t i, int rc) {
  const cj_want *w = k->w;
  leave_all(k, NTIERS, CJ_END_NOTHING);
  if (rc == CJ_TIER_NOMEM) return cj_fail_oom(tier(i)->reading);
  return cj_fail(CUJIT_ERROR_CANCELLED,
                 "compiling '%s' was %s while %s compiled the same "
                 "source; nothing was compiled here",
                 w->name, w->stop(w->stop_arg), tier(i)->holder);
}

cujit_status cj_walk_fetch(cj_want *w, const cj_maker *m, cj_image **out) {
  cj_found f = {NULL, NULL, {NULL, 0, 0, 0}};
  cujit_status st = CUJIT_OK;
  int use, rc = CJ_TIER_NONE;
  walk k;
  size_t i;
  *out = NULL;
  walk_init(&k, w, m, 1);
  for (i = 0; i < NTIERS && rc == CJ_TIER_NONE; i++) {
    if ((st = arrive(&k, i, 1, &use, NULL, 0)) != CUJIT_OK) break;
    if (use == UNKEYED) return unkeyed(&k, out);
    if (use == USE) rc = look(&k, i, &f);
  }
  if (st != CUJIT_OK) {
    leave_all(&k, NTIERS, CJ_END_NOTHING);
    return st;
  }
  if (rc == CJ_TIER_FOUND) return found(&k, i - 1, &f, out);
  if (rc != CJ_TIER_NONE) return stopped(&k, i - 1, rc);
  return made(&k, out);
}

/* ---- probing and putting ---- */

int cj_walk_probe(cj_want *w, char *why, size_t why_size) {
  cj_found f = {NULL, NULL, {NULL, 0, 0, 0}};
  int use, rc, shown = CUJIT_CACHE_TIER_COMPILE;
  char part[400];
  size_t i, len;
  walk k;
  walk_init(&k, w, NULL, 0);
  why[0] = '\0';
  for (i = 0; i < NTIERS && shown == CUJIT_CACHE_TIER_COMPILE; i++) {
    part[0] = '\0';
    arrive(&k, i, 0, &use, part, sizeof part); /* the caller gave the keys: it cannot fail */
    if (use == USE) {
      rc = checked(i, tier(i)->probe(visit(&k, i), w, &f, part, sizeof part), &f);
      cj_image_unref(f.image);
      cj_buf_free(&f.entry);
      f.image = NULL;
      if (rc == CJ_TIER_FOUND) shown = tier(i)->shown_as;
    }
    len = strlen(why);
    if (part[0] && len + 2 < why_size)
      snprintf(why + len, why_size - len, "%s%s", len ? "; " : "", part);
  }
  if (shown != CUJIT_CACHE_TIER_COMPILE) why[0] = '\0';
  leave_all(&k, NTIERS, CJ_END_NOTHING);
  return shown;
}

void cj_walk_put(cj_want *w, cj_image *im, const void *entry, size_t len) {
  cj_found f = {NULL, NULL, {NULL, 0, 0, 0}};
  cj_buf bytes = {(char *)entry, len, len, 0}; /* only read */
  uint64_t written = 0;
  char why[400];
  int use;
  size_t i;
  walk k;
  walk_init(&k, w, NULL, 1);
  for (i = 0; i < NTIERS; i++) {
    const cj_tier *t = tier(i);
    arrive(&k, i, 1, &use, why, sizeof why); /* the caller gave the keys: it cannot fail */
    if (use != USE) continue;
    CJ_TRACE_NAMED(&traced[i][STORE]);
    /* bytes are not written again where another importer or a compile was first */
    if (!t->keeps_bytes || t->probe(visit(&k, i), w, &f, why, sizeof why) != CJ_TIER_FOUND)
      written += t->put(visit(&k, i), w, im, &bytes);
    cj_image_unref(f.image);
    cj_buf_free(&f.entry);
    f.image = NULL;
  }
  if (written) {
    cj_debug("'%s': the imported module is now in the disk cache", w->name);
    cj_toolchain_note(&w->root);
  }
  leave_all(&k, NTIERS, CJ_END_IMPORTED);
}
