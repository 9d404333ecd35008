/* adopt.c - an image compiled in another process (an imported module) stored as if it had
 * been compiled here: in the memory cache under this process's request key, and on disk
 * under its disk key, so that a later compile of the same request, here or in another
 * process using the same cache directory, finds it. The importer has already checked that
 * the entry was written under the disk key this process computes, so its bytes are
 * written as they came: no NVRTC is loaded to fill in its metadata. */
#include <string.h>

#include "cache/cache.h"

/* Counts the written bytes in the directory's statistics, pruning when they take the cache
 * past its limit (as a compile's write does). */
static void count_written(const cj_root *root, uint64_t written) {
  cj_disk_counters d;
  uint64_t max = cj_cache_max_size();
  memset(&d, 0, sizeof d);
  d.size = written;
  if (cj_diskstats_add(root, &d, max) == 1) cj_prune_auto(root, max);
}

/* Writes the entry unless a valid one is there (another importer on this node, or a
 * process that compiled it, was first). */
static void store(const cj_root *root, const cj_key *dkey, const cj_deps *deps, const char *name,
                  const void *entry, size_t entry_len) {
  cj_entry_path p;
  cj_image *old = NULL;
  uint64_t written;
  if (cj_entry_open(root, dkey, 1, &p) != 0) return;
  if (cj_disk_read(&p, dkey, deps, &old) == CJ_DISK_HIT) {
    cj_image_unref(old);
    cj_entry_close(&p);
    return;
  }
  written = cj_disk_write_bytes(&p, entry, entry_len);
  cj_entry_close(&p);
  if (!written) return;
  cj_debug("'%s': the imported module is now in the disk cache", name);
  cj_toolchain_note(root);
  count_written(root, written);
}

void cj_cache_adopt(const cj_request *r, const cj_keys *k, cj_image *im, const void *entry,
                    size_t entry_len) {
  cj_root root;
  if (r->flags & CUJIT_OPT_NO_CACHE) return;
  cj_memcache_put(&k->request, im, k->deps, NULL);
  if (cj_root_open(&root, 1) != 0) return;
  store(&root, &k->disk, k->deps, r->name, entry, entry_len);
  cj_root_close(&root);
}
