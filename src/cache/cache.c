/* cache.c - the cache's public functions: stats, clearing, pruning, listing. */
#include <string.h>

#include "cache/cache.h"
#include "remote/remote.h"

/* The remote tier's counters: this process's (c NULL) or the directory's. */
static void remote_stats(cujit_cache_stats *stats, const cj_disk_counters *c) {
  cj_disk_counters mine;
  if (!c) {
    cj_remote_counters(&mine);
    c = &mine;
  }
  stats->remote_hits = c->remote_hits;
  stats->remote_misses = c->remote_misses;
  stats->remote_invalid = c->remote_invalid;
  stats->remote_errors = c->remote_errors;
  stats->remote_time_us = c->remote_time_us;
}

/* The stats' first version ended with bytes: what a size of 0 stands for. */
#define STATS_V1 CJ_SIZE_V1(cujit_cache_stats, bytes)

/* Zeroes `own`, and the caller's fields up to its size once that size is checked. */
static cujit_status stats_begin(const char *fn, cujit_cache_stats *user, cujit_cache_stats *own) {
  memset(own, 0, sizeof *own);
  CJ_CHECK(user, CUJIT_ERROR_INVALID_VALUE, "%s: stats is NULL", fn);
  return cj_sized_out(fn, "cujit_cache_stats", user, STATS_V1, own, sizeof *own);
}

static cujit_status stats_end(const char *fn, cujit_cache_stats *user,
                              const cujit_cache_stats *own) {
  return cj_sized_out(fn, "cujit_cache_stats", user, STATS_V1, own, sizeof *own);
}

cujit_status cujit_cache_get_stats(cujit_cache_stats *user) {
  static const char fn[] = "cujit_cache_get_stats";
  cujit_cache_stats own, *stats = &own;
  cj_root root;
  CJ_TRY(stats_begin(fn, user, stats));
  stats->hits = cj_counter_get(CJ_HITS);
  stats->memory_hits = cj_counter_get(CJ_MEMORY_HITS);
  stats->misses = cj_counter_get(CJ_MISSES);
  stats->compiles = cj_counter_get(CJ_COMPILES);
  stats->evictions = cj_counter_get(CJ_EVICTIONS);
  remote_stats(stats, NULL);
  if (cj_root_open(&root, 0) == 0) cj_prune_scan_dir(&root, &stats->entries, &stats->bytes);
  cj_root_close(&root);
  return stats_end(fn, user, stats);
}

cujit_status cujit_cache_get_disk_stats(cujit_cache_stats *user) {
  static const char fn[] = "cujit_cache_get_disk_stats";
  cujit_cache_stats own, *stats = &own;
  cj_disk_counters c;
  cj_root root;
  cujit_status st = CUJIT_OK;
  CJ_TRY(stats_begin(fn, user, stats));
  CJ_TRY(cj_root_open_status(&root));
  if (cj_diskstats_read(&root, &c) != 0)
    st = cujit_last_status(); /* the detail names the file */
  else if (cj_prune_scan_dir(&root, &stats->entries, &stats->bytes) != 0)
    st = cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root.path);
  cj_root_close(&root);
  if (st != CUJIT_OK) return st;
  stats->hits = c.hits;
  stats->misses = c.misses;
  stats->compiles = c.compiles;
  stats->evictions = c.evictions;
  remote_stats(stats, &c);
  return stats_end(fn, user, stats);
}

uint64_t cujit_cache_max_size(void) { return cj_cachedir_max_size(); }

static cujit_status unreadable(const cj_root *root) {
  return cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root->path);
}

static cujit_status clear(const cj_root *root) {
  cj_prune_result res;
  if (cj_clear(root, &res) != 0) return unreadable(root);
  CJ_CHECK(!res.entries, CUJIT_ERROR_CACHE,
           "%llu entries of '%s' could not be removed (check the "
           "permissions)",
           (unsigned long long)res.entries, root->path);
  return CUJIT_OK;
}

static cujit_status prune(const cj_root *root, uint64_t max_bytes) {
  cj_prune_result res;
  if (cj_prune(root, max_bytes ? max_bytes : cj_cachedir_max_size(), &res) != 0)
    return unreadable(root);
  cj_count(CJ_EVICTIONS, res.removed);
  return CUJIT_OK;
}

/* Runs clear or prune on the root; nothing to do when the disk cache is off. */
static cujit_status on_root(cujit_status (*fn)(const cj_root *, uint64_t), uint64_t arg) {
  cj_root root;
  cujit_status st;
  if (cj_cachedir_disabled()) return CUJIT_OK;
  CJ_TRY(cj_root_open_status(&root));
  st = fn(&root, arg);
  cj_root_close(&root);
  return st;
}

static cujit_status clear_all(const cj_root *root, uint64_t unused) {
  (void)unused;
  return clear(root);
}

cujit_status cujit_cache_clear(void) {
  cj_memcache_clear();
  return on_root(clear_all, 0);
}

cujit_status cujit_cache_prune(uint64_t max_bytes) { return on_root(prune, max_bytes); }

cujit_status cujit_cache_list(cujit_cache_entry_fn fn, void *user) {
  cj_root root;
  cujit_status st = CUJIT_OK;
  CJ_CHECK(fn, CUJIT_ERROR_INVALID_VALUE, "cujit_cache_list: fn is NULL");
  CJ_TRY(cj_root_open_status(&root));
  if (cj_list(&root, fn, user) != 0) st = unreadable(&root);
  cj_root_close(&root);
  return st;
}
