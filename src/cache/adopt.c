/* adopt.c - an image compiled in another process (an imported module) stored as if it had
 * been compiled here, through the one walk of the tiers (walk.c): in the memory cache
 * under this process's request key, and on disk under its disk key, so that a later
 * compile of the same request, here or in another process using the same cache directory,
 * finds it. The importer has already checked that the entry was written under the disk
 * key this process computes, so its bytes are written as they came: no NVRTC is loaded to
 * fill in its metadata. It is not sent to the remote tier: the cluster shares only what a
 * cujit of its own compiled. */
#include "cache/cache.h"

void cj_cache_adopt(const cj_request *r, const cj_keys *k, cj_image *im, const void *entry,
                    size_t entry_len) {
  cj_want w;
  if (r->flags & CUJIT_OPT_NO_CACHE) return;
  cj_want_init(&w, r->name);
  w.request = &k->request;
  w.key = &k->disk;
  w.deps = k->deps;
  w.local = 1; /* the cluster shares only what a cujit of its own compiled */
  cj_walk_put(&w, im, entry, entry_len);
  cj_want_end(&w);
}
