/* fetch.c - a compile's request to image, through the one walk of the tiers (walk.c):
 *
 *   1. The memory cache: the options key (no file reads) and the source's address find
 *      an image holding the same text, compared byte for byte; failing that, the request
 *      key (options and source, hashed) finds it. Its headers are revalidated by stat. A
 *      hit takes one lock and allocates nothing.
 *   2. Otherwise the source's headers are scanned and hashed into the disk key (keys()
 *      below), and the entry is read. Neither step creates an NVRTC program.
 *   3. On a miss, the key's lock makes one process compile while the others wait for the
 *      entry; the process holding the lock asks the remote tier, if one is set; the result
 *      (make() below) is stored in every tier and counted in the directory's stats, and a
 *      write that takes the cache past its limit prunes it.
 * Cache trouble of any kind costs the cache, never the compile. */
#include "cache/cache.h"

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

/* What the walk needs of a compile beyond its keys. */
typedef struct fetch {
  cj_request *r;
  cj_keys k;    /* made by keys() */
  double start; /* when the keys were made: a wait's time limit counts from there */
  int stopped;  /* 1: the cancel hook asked; 2: the time limit passed */
} fetch;

static cujit_status keys(void *ctx, cj_want *w) {
  fetch *c = ctx;
  char bypass[512];
  CJ_TRY(cj_keys_compute(c->r, w->request, &c->k, bypass, sizeof bypass));
  if (bypass[0]) {
    cj_info("'%s' is compiled without the cache: %s", c->r->name, bypass);
    return CUJIT_OK;
  }
  w->key = &c->k.disk;
  w->deps = c->k.deps;
  c->start = cj_now_s();
  return CUJIT_OK;
}

static cujit_status make(void *ctx, const cj_want *w, cj_image **out, int *keep, cj_buf *manifest) {
  fetch *c = ctx;
  int changed = 0;
  CJ_TRY(compile_now(c->r, w->deps, &changed, out));
  *keep = !changed;
  if (*keep && w->key && cj_keys_manifest(c->r, &c->k, manifest) != 0) cj_buf_free(manifest);
  return CUJIT_OK;
}

static cujit_status finish(void *ctx, cj_image **im) {
  fetch *c = ctx;
  return attach_source(c->r, im);
}

/* Asked while the key is locked elsewhere: whether the request's cancel hook or time limit
 * says to stop waiting (the hook is not asked again once it said so). */
static const char *stop(void *arg) {
  fetch *c = arg;
  const cj_request *r = c->r;
  if (!c->stopped && r->cancel && r->cancel(r->cancel_user)) c->stopped = 1;
  if (!c->stopped && r->time_limit_s > 0 && cj_now_s() - c->start > r->time_limit_s) c->stopped = 2;
  return c->stopped == 1   ? "cancelled by its cancel hook"
         : c->stopped == 2 ? "stopped by its time limit"
                           : NULL;
}

cujit_status cj_cache_compile(cj_request *r, cj_image **out) {
  fetch c;
  const cj_maker m = {&c, keys, make, finish};
  cj_memhint hint;
  cj_want w;
  int changed = 0;
  cujit_status st;
  CJ_TRACE("cujit: compile %s", r->name);
  *out = NULL;
  if (r->flags & CUJIT_OPT_NO_CACHE) return compile_now(r, NULL, &changed, out);
  CJ_TRY(cj_key_options(r, &hint.options));
  hint.source = r->source;
  hint.len = r->source_len;
  c.r = r;
  c.k.deps = NULL;
  c.start = 0;
  c.stopped = 0;
  cj_want_init(&w, r->name);
  w.hint = &hint;
  w.stop = stop;
  w.stop_arg = &c;
  st = cj_walk_fetch(&w, &m, out);
  cj_want_end(&w);
  cj_keys_free(&c.k); /* the memory cache holds its own reference to the headers */
  return st;
}
