/* explain.c - cujit_cache_explain(): why a request, made as cujit_module_from_source() or
 * cujit_module_from_file() makes it, is a hit or a miss: its keys computed as a compile
 * computes them, the tiers asked by the walk a compile takes (walk.c), without compiling
 * or writing anything, and on a miss the disk entry whose manifest is nearest to
 * the request's (fewest differences; the most recently used among equals) compared with it
 * part by part (diff.c). Only the manifests are read (format/manifest.c), never the
 * images. */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"

typedef struct relay {
  cujit_cache_difference_fn fn;
  void *user;
} relay;

static int relay_one(int part, const char *what, const char *detail, void *user) {
  relay *r = user;
  cujit_cache_difference d;
  d.size = sizeof d;
  d.part = (cujit_cache_part)part;
  d.what = what;
  d.detail = detail;
  return r->fn ? r->fn(&d, r->user) : 0;
}

/* The manifest of entry `key` into buf and m: 0, or nonzero when it has none usable. */
static int entry_manifest(const cj_root *root, const cj_key *key, cj_buf *buf, cj_manifest *m) {
  cj_entry_path p;
  int rc;
  if (cj_disk_entry_open(root, key, 0, &p) != 0) return 1;
  rc = cj_disk_read_manifest(&p, buf);
  cj_disk_entry_close(&p);
  if (rc != 0 || !buf->len) return rc ? rc : 1;
  return cj_manifest_parse(buf->data, buf->len, m);
}

/* Compares every entry's manifest with ours; the nearest is described in e and its
 * differences go to fn. -1 out of memory. */
static int nearest(const cj_root *root, const cj_manifest *ours, cujit_cache_explanation *e,
                   relay *to) {
  cj_entry_key *keys = NULL;
  cj_buf buf = {0};
  cj_manifest m;
  size_t n = 0, i, best = 0;
  unsigned fewest = ~0u, count;
  int rc = 0;
  if (cj_prune_entry_keys(root, &keys, &n) != 0) return 0; /* an unreadable directory: no nearest */
  for (i = 0; i < n; i++) {
    if ((rc = entry_manifest(root, &keys[i].key, &buf, &m)) < 0) break;
    if (rc > 0) continue;
    e->entries++;
    count = cj_cache_manifest_diff(&m, ours, NULL, NULL);
    cj_manifest_free(&m);
    if (count <= fewest) { /* oldest first: an equal count later is a more recent use */
      fewest = count;
      best = i;
    }
  }
  rc = rc < 0 ? -1 : 0;
  if (rc == 0 && e->entries && entry_manifest(root, &keys[best].key, &buf, &m) == 0) {
    e->has_nearest = 1;
    cj_hash128_hex(&keys[best].key, e->nearest_key);
    snprintf(e->nearest_name, sizeof e->nearest_name, "%.*s", (int)m.name.n, m.name.p);
    snprintf(e->nearest_arch, sizeof e->nearest_arch, "%.*s", (int)m.arch.n, m.arch.p);
    e->differences = cj_cache_manifest_diff(&m, ours, relay_one, to);
    cj_manifest_free(&m);
  }
  cj_buf_free(&buf);
  cj_free(keys);
  return rc;
}

/* Asks the tiers; on a miss with a usable disk cache, compares every entry's manifest with
 * the request's. */
static cujit_status ask(cj_request *r, const cj_keys *k, cujit_cache_explanation *e, relay *to) {
  cj_want w;
  cj_buf buf = {0};
  cj_manifest ours;
  int rc = 0;
  cj_want_init(&w, r->name);
  w.request = &k->request;
  w.key = &k->disk;
  w.deps = k->deps;
  e->tier = (cujit_cache_tier)cj_walk_probe(&w, e->reason, sizeof e->reason);
  e->hit = e->tier != CUJIT_CACHE_TIER_COMPILE;
  if (!e->hit && w.root.fd >= 0) {
    if (cj_keys_manifest(r, k, &buf) != 0)
      rc = -1;
    else if ((rc = cj_manifest_parse(buf.data, buf.len, &ours)) == 0) {
      rc = nearest(&w.root, &ours, e, to);
      cj_manifest_free(&ours);
    }
  }
  cj_buf_free(&buf);
  cj_want_end(&w);
  return rc < 0 ? cj_fail_oom("explaining a cache lookup") : CUJIT_OK;
}

static cujit_status cache_explain(cj_request *r, cujit_cache_explanation *e,
                                  cujit_cache_difference_fn fn, void *user) {
  relay to = {fn, user};
  cj_keys k;
  cujit_status st;
  if (r->flags & CUJIT_OPT_NO_CACHE) {
    snprintf(e->reason, sizeof e->reason, "CUJIT_OPT_NO_CACHE (--no-cache) bypasses the cache");
    return CUJIT_OK;
  }
  st = cj_keys_compute(r, NULL, &k, e->reason, sizeof e->reason);
  if (st != CUJIT_OK || e->reason[0]) { /* e->reason: tier UNCACHED */
    cj_keys_free(&k);
    return st;
  }
  cj_hash128_hex(&k.disk, e->key);
  st = ask(r, &k, e, &to);
  cj_keys_free(&k);
  return st;
}

/* ---- the public functions ---- */

#define EXPLANATION_V1 CJ_SIZE_V1(cujit_cache_explanation, entries)

static cujit_status explain(const char *fn, const char *source, const char *name,
                            const cujit_options *opts, const char *dir,
                            cujit_cache_explanation *user, cujit_cache_difference_fn dfn,
                            void *duser) {
  cujit_cache_explanation own;
  cj_request req;
  cujit_status st;
  memset(&own, 0, sizeof own);
  own.size = sizeof own;
  CJ_CHECK(user, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_sized_out(fn, "cujit_cache_explanation", user, EXPLANATION_V1, &own, sizeof own));
  CJ_CHECK(source && source[0], CUJIT_ERROR_INVALID_SOURCE, "%s: the source is %s", fn,
           source ? "empty" : "NULL");
  CJ_TRY(cj_request_init(&req, source, name, opts, dir));
  st = cache_explain(&req, &own, dfn, duser);
  cj_request_free(&req);
  if (st != CUJIT_OK) return st;
  return cj_sized_out(fn, "cujit_cache_explanation", user, EXPLANATION_V1, &own, sizeof own);
}

cujit_status cujit_cache_explain(const char *source, const char *name, const cujit_options *opts,
                                 cujit_cache_explanation *out, cujit_cache_difference_fn fn,
                                 void *user) {
  return explain("cujit_cache_explain", source, name ? name : "source.cu", opts, NULL, out, fn,
                 user);
}

cujit_status cujit_cache_explain_file(const char *path, const cujit_options *opts,
                                      cujit_cache_explanation *out, cujit_cache_difference_fn fn,
                                      void *user) {
  static const char fn_name[] = "cujit_cache_explain_file";
  char *text, *dir;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn_name);
  CJ_TRY(cj_source_file(fn_name, path, &text, &dir));
  st = explain(fn_name, text, path, opts, dir, out, fn, user);
  cj_free(dir);
  cj_free(text);
  return st;
}
