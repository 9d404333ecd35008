/* hash.c - hashing bytes with XXH3 (libxxhash, in its header-only inline mode, so that no
 * call leaves the library): the 128-bit hash that names what the caches hold and the
 * 64-bit checksum of their files. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <string.h>

#include "common/common.h"

void cj_hash128_hex(const cj_key *k, char out[33]) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < sizeof k->b; i++) {
    out[2 * i] = digits[k->b[i] >> 4];
    out[2 * i + 1] = digits[k->b[i] & 15];
  }
  out[32] = '\0';
}

void cj_hash128(const void *p, size_t n, unsigned char out[16]) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(p, n));
  memcpy(out, c.digest, 16);
}

uint64_t cj_checksum(const void *head, size_t head_len, const void *body, size_t body_len) {
  XXH3_state_t s;
  XXH3_64bits_reset(&s);
  XXH3_64bits_update(&s, head, head_len);
  XXH3_64bits_update(&s, body, body_len);
  return XXH3_64bits_digest(&s);
}
