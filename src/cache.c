/* cache.c - the cache's public functions: counters, stats, clearing, pruning, listing. */
#include <string.h>

#include "cache.h"

static uint64_t counters[CJ_NCOUNTERS];

void cj_count(cj_counter c, uint64_t n) { __atomic_add_fetch(&counters[c], n, __ATOMIC_RELAXED); }

static uint64_t counter(cj_counter c) { return __atomic_load_n(&counters[c], __ATOMIC_RELAXED); }

static cujit_status null_stats(const char *fn) {
  return cj_fail(CUJIT_ERROR_INVALID_VALUE, "%s: stats is NULL", fn);
}

cujit_status cujit_cache_get_stats(cujit_cache_stats *stats) {
  char root[PATH_MAX];
  if (!stats) return null_stats("cujit_cache_get_stats");
  memset(stats, 0, sizeof *stats);
  stats->hits = counter(CJ_HITS);
  stats->memory_hits = counter(CJ_MEMORY_HITS);
  stats->misses = counter(CJ_MISSES);
  stats->compiles = counter(CJ_COMPILES);
  stats->evictions = counter(CJ_EVICTIONS);
  if (cj_cache_root(root, sizeof root, 0) == 0) cj_scan_dir(root, &stats->entries, &stats->bytes);
  return CUJIT_OK;
}

cujit_status cujit_cache_get_disk_stats(cujit_cache_stats *stats) {
  char root[PATH_MAX];
  cj_disk_counters c;
  cujit_status st;
  if (!stats) return null_stats("cujit_cache_get_disk_stats");
  memset(stats, 0, sizeof *stats);
  if ((st = cj_cache_root_status(root, sizeof root)) != CUJIT_OK) return st;
  cj_diskstats_read(root, &c);
  stats->hits = c.hits;
  stats->misses = c.misses;
  stats->compiles = c.compiles;
  stats->evictions = c.evictions;
  if (cj_scan_dir(root, &stats->entries, &stats->bytes) != 0)
    return cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root);
  return CUJIT_OK;
}

uint64_t cujit_cache_max_size(void) { return cj_cache_max_size(); }

/* The root for clear/prune: CUJIT_OK with *have = 0 when the disk cache is off. */
static cujit_status root_if_on(char *root, size_t size, int *have) {
  cujit_status st;
  *have = 0;
  if (cj_cache_disabled()) return CUJIT_OK;
  st = cj_cache_root_status(root, size);
  *have = st == CUJIT_OK;
  return st;
}

cujit_status cujit_cache_clear(void) {
  char root[PATH_MAX];
  cj_prune_result res;
  int have;
  cujit_status st;
  cj_memcache_clear();
  if ((st = root_if_on(root, sizeof root, &have)) != CUJIT_OK || !have) return st;
  if (cj_clear(root, &res) != 0)
    return cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root);
  if (res.entries)
    return cj_fail(CUJIT_ERROR_CACHE, "%llu entries of '%s' could not be removed (check the "
                   "permissions)", (unsigned long long)res.entries, root);
  return CUJIT_OK;
}

cujit_status cujit_cache_prune(uint64_t max_bytes) {
  char root[PATH_MAX];
  cj_prune_result res;
  int have;
  cujit_status st;
  if ((st = root_if_on(root, sizeof root, &have)) != CUJIT_OK || !have) return st;
  if (cj_prune(root, max_bytes ? max_bytes : cj_cache_max_size(), &res) != 0)
    return cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root);
  cj_count(CJ_EVICTIONS, res.removed);
  return CUJIT_OK;
}

cujit_status cujit_cache_list(cujit_cache_entry_fn fn, void *user) {
  char root[PATH_MAX];
  cujit_status st;
  if (!fn) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_cache_list: fn is NULL");
  if ((st = cj_cache_root_status(root, sizeof root)) != CUJIT_OK) return st;
  if (cj_list(root, fn, user) != 0)
    return cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root);
  return CUJIT_OK;
}
