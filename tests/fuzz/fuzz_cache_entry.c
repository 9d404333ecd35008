/* fuzz_cache_entry - the cache entry reader on arbitrary bytes: as they are (mostly
 * rejected by the header checks) and resealed with a matching size and checksum, so that
 * the section parser sees them. It must never crash, read out of bounds or allocate what
 * a length merely claims. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

static void decode(const uint8_t *data, size_t size) {
  cj_image *im = NULL;
  cj_deps deps = {0};
  cj_entry_meta meta;
  cj_key key;
  char why[160];
  if (cj_entry_decode(NULL, data, size, &im, &deps, &meta, why, sizeof why) == 0) {
    cj_image_unref(im);
    cj_deps_clear(&deps);
  }
  cj_entry_peek(data, size, &key, &meta);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy;
  uint64_t v;
  int i;
  decode(data, size);
  if (size < CJ_ENTRY_HEADER_SIZE || !(copy = malloc(size))) return 0;
  memcpy(copy, data, size);
  v = size - CJ_ENTRY_HEADER_SIZE;
  for (i = 0; i < 8; i++) copy[32 + i] = (uint8_t)(v >> (8 * i));
  v = cj_checksum(copy, 40, copy + CJ_ENTRY_HEADER_SIZE, size - CJ_ENTRY_HEADER_SIZE);
  for (i = 0; i < 8; i++) copy[40 + i] = (uint8_t)(v >> (8 * i));
  decode(copy, size);
  free(copy);
  return 0;
}
