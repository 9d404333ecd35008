/* counters.c - this process's cache counters (hits, misses, compiles, evictions), counted
 * where they happen and read by cujit_cache_get_stats() (cache/cache.c). */
#include "store/store.h"

static uint64_t counters[CJ_NCOUNTERS];

void cj_count(cj_counter c, uint64_t n) { __atomic_add_fetch(&counters[c], n, __ATOMIC_RELAXED); }

uint64_t cj_counter_get(cj_counter c) { return __atomic_load_n(&counters[c], __ATOMIC_RELAXED); }
