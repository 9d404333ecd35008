/* key.c - cache keys: a canonical serialisation of everything that changes a compile's
 * output, hashed with XXH3-128 (libxxhash, used in its header-only inline mode so that the
 * hit path makes no library call and needs no hashing state on the heap).
 *
 * The request key is built in two steps: the options key (everything but the source:
 * small, serialised into a buffer and hashed in one go) and the source's own hash. The
 * memory cache can then recognise a source it holds by comparing the text, with the
 * options key alone computed (memcache.c). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "key/key.h"

/* Bytes to hash: collected in a buffer and hashed in one shot, which is several times
 * faster than feeding XXH3's streaming state small pieces; only what outgrows the buffer
 * goes through the streaming state. */
typedef struct sink {
  unsigned char buf[1024];
  size_t len;
  int streaming;
  XXH3_state_t state;
} sink;

static void sink_init(sink *s) {
  s->len = 0;
  s->streaming = 0;
}

static void put_raw(sink *s, const void *p, size_t n) {
  if (s->len + n > sizeof s->buf) {
    if (!s->streaming) XXH3_128bits_reset(&s->state);
    s->streaming = 1;
    XXH3_128bits_update(&s->state, s->buf, s->len);
    s->len = 0;
    if (n > sizeof s->buf) {
      XXH3_128bits_update(&s->state, p, n);
      return;
    }
  }
  memcpy(s->buf + s->len, p, n);
  s->len += n;
}

static void to_key(XXH128_hash_t h, cj_key *out) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  memcpy(out->b, c.digest, sizeof out->b);
}

static void digest(sink *s, cj_key *out) {
  if (!s->streaming) {
    to_key(XXH3_128bits(s->buf, s->len), out);
    return;
  }
  XXH3_128bits_update(&s->state, s->buf, s->len);
  to_key(XXH3_128bits_digest(&s->state), out);
}

/* Every field goes in as a little-endian length (or count) followed by its bytes, so no
 * two different requests serialise to the same byte string. */
static void put_u64(sink *s, uint64_t v) {
  unsigned char b[8];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(b, &v, sizeof b); /* already in the order the key wants */
#else
  int i;
  for (i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
#endif
  if (s->len + sizeof b > sizeof s->buf) {
    put_raw(s, b, sizeof b);
    return;
  }
  memcpy(s->buf + s->len, b, sizeof b); /* a constant size: no library call */
  s->len += sizeof b;
}

static void put_bytes(sink *s, const void *p, size_t n) {
  put_u64(s, n);
  if (n) put_raw(s, p, n);
}

static void put_str(sink *s, const char *str) { put_bytes(s, str, strlen(str)); }

static void put_list(sink *s, const char *const *v, size_t n) {
  size_t i;
  put_u64(s, n);
  for (i = 0; i < n; i++) put_str(s, v[i]);
}

/* NVRTC's own cache changes how long a compile takes, never its output. */
static int is_nvrtc_cache_option(const char *o) {
  return strcmp(o, "-no-cache") == 0 || strcmp(o, "--no-cache") == 0;
}

static void put_user_options(sink *s, const cj_request *r) {
  size_t i, n = 0;
  for (i = 0; i < r->n_user_options; i++) n += !is_nvrtc_cache_option(r->user_options[i]);
  put_u64(s, n);
  for (i = 0; i < r->n_user_options; i++)
    if (!is_nvrtc_cache_option(r->user_options[i])) put_str(s, r->user_options[i]);
}

/* CUDA_PATH and CUDA_HOME, hashed once per process (reading the environment walks all of
 * it, which a memory-cache hit should not). */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static cj_key env_key;

static void hash_env(void) {
  sink s;
  const char *path = cj_env("CUDA_PATH"), *home = cj_env("CUDA_HOME");
  sink_init(&s);
  put_str(&s, path ? path : "");
  put_str(&s, home ? home : "");
  digest(&s, &env_key);
}

static const cj_key *toolkit_env(void) {
  pthread_once(&env_once, hash_env);
  return &env_key;
}

/* Include directories, defines, options, in-memory headers and name expressions keep
 * their order: each can change which header is found, which definition wins or the order
 * of the lowered names. The program name stays in: it is __FILE__ (assert() puts it in
 * the PTX) and it names the source in line information. */
/* The NVRTC the key is for, named without loading it (toolchain.c). */
static cujit_status put_nvrtc(sink *s) {
  const char *name;
  cujit_status st = cj_toolchain_name(&name);
  if (st == CUJIT_OK) put_str(s, name);
  return st;
}

cujit_status cj_key_options(const cj_request *r, cj_key *out) {
  sink s;
  size_t i, n_inc = cj_request_include_count(r);
  sink_init(&s);
  put_str(&s, "cujit options key");
  put_u64(&s, CJ_CACHE_FORMAT);
  CJ_TRY(put_nvrtc(&s));
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
  /* The toolkit's headers are covered by NVRTC's version (the toolkit is looked for where
   * that NVRTC lives first) and by the variables that point elsewhere; the built-in C
   * headers come with them and with the cache format. Finding the toolkit costs file
   * system calls, which a cache hit does not make. */
  put_u64(&s, (uint64_t)r->toolkit);
  if (r->toolkit) put_bytes(&s, toolkit_env()->b, sizeof toolkit_env()->b);
  /* only a part of a link says so, which leaves every other key as it was */
  if (r->link) {
    put_str(&s, "link part");
    put_u64(&s, r->link);
  }
  digest(&s, out);
  return CUJIT_OK;
}

void cj_key_source(const cj_key *options_key, const char *source, size_t len, cj_key *out) {
  sink s;
  cj_key text;
  to_key(XXH3_128bits(source, len), &text);
  sink_init(&s);
  put_str(&s, "cujit request key");
  put_bytes(&s, options_key->b, sizeof options_key->b);
  put_u64(&s, len);
  put_bytes(&s, text.b, sizeof text.b);
  digest(&s, out);
}

cujit_status cj_key_request(const cj_request *r, cj_key *out) {
  cj_key okey;
  CJ_TRY(cj_key_options(r, &okey));
  cj_key_source(&okey, r->source, r->source_len, out);
  return CUJIT_OK;
}

void cj_key_disk(const cj_key *request_key, const cj_deps *deps, cj_key *out) {
  sink s;
  size_t i;
  sink_init(&s);
  put_str(&s, "cujit disk key");
  put_bytes(&s, request_key->b, sizeof request_key->b);
  put_u64(&s, deps ? cj_deplist_count_present(deps) : 0);
  for (i = 0; deps && i < deps->n; i++) {
    if (!deps->v[i].present) continue;
    put_str(&s, deps->v[i].path);
    put_u64(&s, deps->v[i].size);
    put_bytes(&s, deps->v[i].hash, sizeof deps->v[i].hash);
  }
  digest(&s, out);
}

cujit_status cj_keys_compute(const cj_request *r, const cj_key *request_key, cj_keys *k,
                             char *bypass, size_t bypass_size) {
  memset(k, 0, sizeof *k);
  CJ_TRY(cj_toolchain_name(&k->nvrtc));
  if (request_key)
    k->request = *request_key;
  else
    CJ_TRY(cj_key_request(r, &k->request));
  CJ_TRY(cj_scan_request(r, &k->deps, bypass, bypass_size));
  if (bypass[0]) {
    cj_keys_free(k);
    return CUJIT_OK;
  }
  cj_key_disk(&k->request, k->deps, &k->disk);
  return CUJIT_OK;
}

void cj_keys_free(cj_keys *k) {
  cj_deplist_destroy(k->deps);
  k->deps = NULL;
}

int cj_keys_manifest(const cj_request *r, const cj_keys *k, cj_buf *out) {
  return cj_manifest_encode(r, k->nvrtc, toolkit_env()->b, k->deps, out);
}
