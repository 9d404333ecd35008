/* wire.c - a request as bytes: what an asynchronous compile keeps after its caller's
 * storage is gone, and what a worker process receives. Everything a compile's output
 * depends on travels (the source, name, resolved target, include path, defines, NVRTC
 * options, in-memory headers, name expressions, flags) and so does the time limit; the
 * cancel hook and what cj_request_prepare() builds do not. Strings are written with
 * their NUL, so that the decoded request points into the bytes themselves. */
#include <string.h>

#include "compile/compile.h"

#define WIRE_VERSION 1

static void put_str(cj_buf *b, const char *s, size_t len) {
  cj_buf_put_le(b, len, 8);
  cj_buf_append(b, s, len);
  cj_buf_put_le(b, 0, 1);
}

static void put_list(cj_buf *b, const char *const *v, size_t n) {
  size_t i;
  cj_buf_put_le(b, n, 4);
  for (i = 0; i < n; i++) put_str(b, v[i], strlen(v[i]));
}

int cj_request_encode(const cj_request *r, cj_buf *out) {
  size_t i;
  double limit = r->time_limit_s;
  uint64_t bits;
  memcpy(&bits, &limit, sizeof bits);
  cj_buf_put_le(out, WIRE_VERSION, 4);
  put_str(out, r->source, r->source_len);
  put_str(out, r->name, strlen(r->name));
  put_str(out, r->arch, strnlen(r->arch, sizeof r->arch - 1));
  cj_buf_put_le(out, (uint64_t)r->arch_pending, 4);
  cj_buf_put_le(out, r->first_include_dir != NULL, 1);
  if (r->first_include_dir) put_str(out, r->first_include_dir, strlen(r->first_include_dir));
  put_list(out, r->include_dirs, r->n_include_dirs);
  put_list(out, r->defines, r->n_defines);
  put_list(out, r->user_options, r->n_user_options);
  put_list(out, r->name_exprs, r->n_name_exprs);
  cj_buf_put_le(out, r->n_headers, 4);
  for (i = 0; i < r->n_headers; i++) {
    put_str(out, r->headers[i].name, strlen(r->headers[i].name));
    put_str(out, r->headers[i].source, strlen(r->headers[i].source));
  }
  cj_buf_put_le(out, (uint64_t)r->toolkit, 1);
  cj_buf_put_le(out, r->flags, 4);
  cj_buf_put_le(out, bits, 8);
  return out->oom ? -1 : 0;
}

/* A string of the bytes: its length, its characters and a NUL, with no NUL inside (a
 * source's NUL would end it early). NULL when the bytes do not hold one. */
static const char *get_str(cj_cursor *c, size_t *len) {
  uint64_t n = cj_cursor_get(c, 8);
  const char *s;
  if (c->bad || n >= c->left) return c->bad = 1, NULL;
  s = (const char *)cj_cursor_take(c, n + 1);
  if (!s || s[n] != '\0' || memchr(s, '\0', n)) return c->bad = 1, NULL;
  if (len) *len = (size_t)n;
  return s;
}

/* A list of strings, NULL-terminated as cujit_options' lists are; *v stays NULL for an
 * empty one. -1 when out of memory; c->bad when the bytes are wrong. */
static int get_list(cj_cursor *c, const char *const **v, size_t *n) {
  uint64_t count = cj_cursor_get(c, 4), i;
  const char **out;
  *v = NULL;
  *n = 0;
  if (c->bad || count == 0) return 0;
  if (count > c->left / 9) return c->bad = 1, 0; /* each string takes at least 9 bytes */
  if (!(out = cj_calloc((size_t)count + 1, sizeof *out))) return -1;
  for (i = 0; i < count && !c->bad; i++) out[i] = get_str(c, NULL);
  *v = out;
  *n = c->bad ? 0 : (size_t)count;
  return 0;
}

static int get_headers(cj_cursor *c, cj_request *r) {
  uint64_t count = cj_cursor_get(c, 4), i;
  cujit_header *h;
  if (c->bad || count == 0) return 0;
  if (count > c->left / 18) return c->bad = 1, 0;
  if (!(h = cj_calloc((size_t)count + 1, sizeof *h))) return -1;
  for (i = 0; i < count && !c->bad; i++) {
    h[i].name = get_str(c, NULL);
    h[i].source = get_str(c, NULL);
  }
  r->headers = h;
  r->n_headers = c->bad ? 0 : (size_t)count;
  return 0;
}

static int get_lists(cj_cursor *c, cj_request *r) {
  if (get_list(c, &r->include_dirs, &r->n_include_dirs) != 0) return -1;
  if (get_list(c, &r->defines, &r->n_defines) != 0) return -1;
  if (get_list(c, &r->user_options, &r->n_user_options) != 0) return -1;
  if (get_list(c, &r->name_exprs, &r->n_name_exprs) != 0) return -1;
  return get_headers(c, r);
}

int cj_request_decode(const void *data, size_t len, cj_request *r) {
  cj_cursor c = {data, len, 0};
  const char *arch;
  size_t arch_len = 0;
  uint64_t bits;
  double limit;
  memset(r, 0, sizeof *r);
  if (cj_cursor_get(&c, 4) != WIRE_VERSION) return 1;
  r->source = get_str(&c, &r->source_len);
  r->name = get_str(&c, NULL);
  arch = get_str(&c, &arch_len);
  if (c.bad || arch_len >= sizeof r->arch) return 1;
  memcpy(r->arch, arch, arch_len + 1);
  r->arch_pending = (int)cj_cursor_get(&c, 4);
  if (cj_cursor_get(&c, 1)) r->first_include_dir = get_str(&c, NULL);
  if (get_lists(&c, r) != 0) {
    cj_request_decoded_free(r);
    return -1;
  }
  r->toolkit = (int)cj_cursor_get(&c, 1);
  r->flags = (unsigned)cj_cursor_get(&c, 4);
  bits = cj_cursor_get(&c, 8);
  memcpy(&limit, &bits, sizeof limit);
  r->time_limit_s = limit >= 0 ? limit : 0; /* NaN and negatives were refused at the start */
  if (c.bad || c.left != 0 || !r->source_len) {
    cj_request_decoded_free(r);
    return 1;
  }
  return 0;
}

void cj_request_decoded_free(cj_request *r) {
  cj_free((void *)r->include_dirs);
  cj_free((void *)r->defines);
  cj_free((void *)r->user_options);
  cj_free((void *)r->name_exprs);
  cj_free((void *)r->headers);
  cj_request_free(r);
}
