/* key.c - cache keys: a canonical serialisation of everything that changes a compile's
 * output, hashed with XXH3-128 (libxxhash, used in its header-only inline mode so that the
 * hit path makes no library call and needs no hashing state on the heap). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <string.h>

#include "cache.h"

/* Every field goes in as a little-endian length (or count) followed by its bytes, so no
 * two different requests serialise to the same byte string. */
static void put_u64(XXH3_state_t *s, uint64_t v) {
  unsigned char b[8];
  int i;
  for (i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  XXH3_128bits_update(s, b, sizeof b);
}

static void put_bytes(XXH3_state_t *s, const void *p, size_t n) {
  put_u64(s, n);
  if (n) XXH3_128bits_update(s, p, n);
}

static void put_str(XXH3_state_t *s, const char *str) { put_bytes(s, str, strlen(str)); }

static void put_list(XXH3_state_t *s, const char *const *v, size_t n) {
  size_t i;
  put_u64(s, n);
  for (i = 0; i < n; i++) put_str(s, v[i]);
}

/* NVRTC's own cache changes how long a compile takes, never its output. */
static int is_nvrtc_cache_option(const char *o) {
  return strcmp(o, "-no-cache") == 0 || strcmp(o, "--no-cache") == 0;
}

static void put_user_options(XXH3_state_t *s, const cj_request *r) {
  size_t i, n = 0;
  for (i = 0; i < r->n_user_options; i++) n += !is_nvrtc_cache_option(r->user_options[i]);
  put_u64(s, n);
  for (i = 0; i < r->n_user_options; i++)
    if (!is_nvrtc_cache_option(r->user_options[i])) put_str(s, r->user_options[i]);
}

static void digest(XXH3_state_t *s, cj_key *out) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s));
  memcpy(out->b, c.digest, sizeof out->b);
}

/* Include directories, defines, options, in-memory headers and name expressions keep
 * their order: each can change which header is found, which definition wins or the order
 * of the lowered names. The program name stays in: it is __FILE__ (assert() puts it in
 * the PTX) and it names the source in line information. */
cujit_status cj_key_request(const cj_request *r, cj_key *out) {
  XXH3_state_t s;
  int major, minor;
  size_t i, n_inc = cj_request_include_count(r);
  cujit_status st = cj_nvrtc_version_cached(&major, &minor);
  if (st != CUJIT_OK) return st;
  XXH3_128bits_reset(&s);
  put_str(&s, "cujit request key");
  put_u64(&s, CJ_CACHE_FORMAT);
  put_u64(&s, (uint64_t)major);
  put_u64(&s, (uint64_t)minor);
  put_str(&s, r->arch);
  put_str(&s, r->name);
  put_u64(&s, n_inc);
  for (i = 0; i < n_inc; i++) put_str(&s, cj_request_include_dir(r, i));
  put_list(&s, r->defines, r->n_defines);
  put_user_options(&s, r);
  put_u64(&s, r->n_headers);
  for (i = 0; i < r->n_headers; i++) {
    put_str(&s, r->headers[i].name);
    put_str(&s, r->headers[i].source);
  }
  put_list(&s, r->name_exprs, r->n_name_exprs);
  put_bytes(&s, r->source, r->source_len);
  digest(&s, out);
  return CUJIT_OK;
}

void cj_key_disk(const cj_key *request_key, const cj_deps *deps, cj_key *out) {
  XXH3_state_t s;
  size_t i;
  XXH3_128bits_reset(&s);
  put_str(&s, "cujit disk key");
  put_bytes(&s, request_key->b, sizeof request_key->b);
  put_u64(&s, deps ? cj_deps_count_present(deps) : 0);
  for (i = 0; deps && i < deps->n; i++) {
    if (!deps->v[i].present) continue;
    put_str(&s, deps->v[i].path);
    put_u64(&s, deps->v[i].size);
    put_bytes(&s, deps->v[i].hash, sizeof deps->v[i].hash);
  }
  digest(&s, out);
}

void cj_key_hex(const cj_key *k, char out[33]) {
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
