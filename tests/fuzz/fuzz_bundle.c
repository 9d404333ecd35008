/* fuzz_bundle - reading cujit bundles and nvcc fatbins on arbitrary bytes: telling them
 * apart, listing their entries, describing them, and the options entry, as they are and
 * with a bundle's magic, size and header checksum made to match, so that the entry checks
 * behind them are reached. It must never crash or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/bundle.h"
#include "format/prebuilt.h"

static void read_all(const uint8_t *data, size_t size) {
  cj_prebuilt_kind kind;
  cj_bundle_part *parts = NULL;
  cj_bundle_opts opts;
  cj_code *codes = NULL;
  char arch[32], why[256], *text = NULL;
  size_t n = 0, i;
  if (cj_prebuilt_inspect(data, size, "fuzz", &kind, arch, sizeof arch) == CUJIT_OK &&
      (kind == CJ_PREBUILT_FATBIN || kind == CJ_PREBUILT_BUNDLE) &&
      cj_prebuilt_codes(data, size, kind, &codes, &n) == CUJIT_OK) {
    for (i = 0; i < n; i++) cj_code_name(&codes[i], arch, sizeof arch);
    cj_free(codes);
  }
  if (cujit_image_describe(data, size, "fuzz", &text) == CUJIT_OK) cujit_free(text);
  if (cj_bundle_parse(data, size, &parts, &n, why, sizeof why) == 0) {
    for (i = 0; i < n; i++)
      if (parts[i].kind == CJ_BE_OPTIONS &&
          cj_bundle_opts_decode(parts[i].data, parts[i].size, &opts, why, sizeof why) >= 0)
        cj_bundle_opts_free(&opts);
    cj_free(parts);
  }
  if (cj_bundle_opts_decode(data, size, &opts, why, sizeof why) >= 0) cj_bundle_opts_free(&opts);
}

static void put(uint8_t *p, size_t at, uint64_t v, int bytes) {
  int i;
  for (i = 0; i < bytes; i++) p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint8_t magic[8] = {'C', 'U', 'J', 'I', 'T', 'B', 'N', 0x1a};
  uint8_t *copy;
  uint64_t count, i;
  read_all(data, size);
  if (size < CJ_BUNDLE_HEADER_SIZE || !(copy = malloc(size))) return 0;
  memcpy(copy, data, size);
  memcpy(copy, magic, sizeof magic);
  put(copy, 8, CJ_BUNDLE_FORMAT, 4);
  put(copy, 12, CJ_BUNDLE_HEADER_SIZE, 4);
  put(copy, 16, size, 8);
  count = (copy[24] | (uint64_t)copy[25] << 8) % 64; /* a count the bytes may hold */
  if (count * CJ_BUNDLE_ENTRY_SIZE > size - CJ_BUNDLE_HEADER_SIZE)
    count = (size - CJ_BUNDLE_HEADER_SIZE) / CJ_BUNDLE_ENTRY_SIZE;
  put(copy, 24, count, 4);
  for (i = 0; i < count; i++) { /* payload checksums made to match where they lie inside */
    size_t e = CJ_BUNDLE_HEADER_SIZE + (size_t)i * CJ_BUNDLE_ENTRY_SIZE;
    uint64_t off = 0, len = 0;
    int k;
    for (k = 7; k >= 0; k--) off = off << 8 | copy[e + 24 + (size_t)k];
    for (k = 7; k >= 0; k--) len = len << 8 | copy[e + 32 + (size_t)k];
    if (off <= size && len <= size - off)
      put(copy, e + 40, cj_checksum(copy + off, (size_t)len, "", 0), 8);
  }
  put(copy, 32,
      cj_checksum(copy, 32, copy + CJ_BUNDLE_HEADER_SIZE, (size_t)count * CJ_BUNDLE_ENTRY_SIZE), 8);
  read_all(copy, size);
  free(copy);
  return 0;
}
