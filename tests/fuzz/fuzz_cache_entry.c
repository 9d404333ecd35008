/* fuzz_cache_entry - the cache entry reader on arbitrary bytes: as they are (mostly
 * rejected by the header checks) and resealed with a matching size and checksum, so that
 * the section parser and the manifest parser see them. It must never crash, read out of bounds or
 * allocate what a length merely claims. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/entry.h"

static void decode(const uint8_t *data, size_t size) {
  cj_image *im = NULL;
  cj_deps deps = {0};
  cj_entry_meta meta;
  cj_key key;
  char why[160];
  if (cj_entry_decode(NULL, data, size, &im, &deps, &meta, why, sizeof why) == 0) {
    cj_image_unref(im);
    cj_deplist_clear(&deps);
  }
  cj_entry_peek(data, size, &key, &meta);
}

/* The manifest, where the header says it lies. */
static void manifest(const uint8_t *data, size_t size) {
  uint64_t at, n;
  cj_manifest m;
  if (size < CJ_ENTRY_HEADER_SIZE || cj_entry_manifest_span(data, size, &at, &n) != 0) return;
  cj_entry_manifest_check(data, data + at, (size_t)n);
  if (cj_manifest_parse(data + at, (size_t)n, &m) == 0) cj_manifest_free(&m);
}

static void put64(uint8_t *p, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy;
  uint64_t rest, msize, psize;
  decode(data, size);
  manifest(data, size);
  if (size < CJ_ENTRY_HEADER_SIZE || !(copy = malloc(size))) return 0;
  memcpy(copy, data, size);
  rest = size - CJ_ENTRY_HEADER_SIZE;
  msize = get64(copy + 48);
  if (msize > rest) msize = rest / 2;
  psize = rest - msize;
  put64(copy + 32, psize);
  put64(copy + 40, cj_checksum(copy, 40, copy + CJ_ENTRY_HEADER_SIZE, (size_t)psize));
  put64(copy + 48, msize);
  put64(copy + 56, cj_checksum(copy + 48, 8, copy + CJ_ENTRY_HEADER_SIZE + psize, (size_t)msize));
  decode(copy, size);
  manifest(copy, size);
  free(copy);
  return 0;
}
