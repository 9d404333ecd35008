/* fuzz_manifest - the manifest parser (format/manifest.c) on arbitrary bytes, as an entry
 * from another process or machine may hold them, and what reads a parsed manifest: its
 * items part by part, and the comparison of two manifests in words (cache/diff.c), which
 * tells each difference it counts. It must never crash, read out of bounds or allocate
 * what a length merely claims. */
#include <assert.h>
#include <stdint.h>

#include "cache/cache.h"

static int count(int part, const char *what, const char *detail, void *user) {
  (void)part;
  (void)what;
  (void)detail;
  ++*(unsigned *)user;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_manifest m;
  cj_text item;
  unsigned told = 0;
  size_t pos;
  int p;
  if (cj_manifest_parse(data, size, &m) != 0) return 0;
  for (p = 0; p < CJ_NPARTS; p++)
    for (pos = 0; cj_manifest_item(m.part[p], &pos, &item);) assert(pos <= m.part[p].n);
  assert(cj_cache_manifest_diff(&m, &m, count, &told) == told);
  cj_manifest_free(&m);
  return 0;
}
