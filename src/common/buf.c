/* buf.c - a growable NUL-terminated string buffer that remembers running out of memory. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

/* Room for `extra` more bytes and the NUL; at least 64 bytes once anything is kept. */
static int reserve(cj_buf *b, size_t extra) {
  size_t need = b->len + extra + 1;
  if (b->oom) return -1;
  if (need < extra || CJ_VEC_RESERVE(b->data, b->cap, need < 64 ? 64 : need) != 0) {
    b->oom = 1;
    return -1;
  }
  return 0;
}

void cj_buf_append(cj_buf *b, const void *p, size_t n) {
  if (reserve(b, n) != 0) return;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void cj_buf_puts(cj_buf *b, const char *s) { cj_buf_append(b, s, strlen(s)); }

void cj_buf_put_le(cj_buf *b, uint64_t v, int bytes) {
  unsigned char x[8];
  int i;
  for (i = 0; i < bytes; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, (size_t)bytes);
}

void cj_buf_vprintf(cj_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  int n;
  va_copy(ap2, ap);
  n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || reserve(b, (size_t)n) != 0) return;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void cj_buf_printf(cj_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cj_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

static void buf_put(void *user, const char *p, size_t n) { cj_buf_append(user, p, n); }

void cj_buf_escaped(cj_buf *b, const void *p, size_t n) {
  cj_escape(p, n, CJ_ESCAPE_VALUE, buf_put, b);
}

const char *cj_shown(char out[CJ_SHOWN_SIZE], const char *value) {
  cj_buf b = {0};
  cj_buf_escaped(&b, value, strnlen(value, 64));
  snprintf(out, CJ_SHOWN_SIZE, "%s",
           b.oom    ? "(a value not shown: out of memory)"
           : b.data ? b.data
                    : "");
  cj_buf_free(&b);
  return out;
}

char *cj_buf_take(cj_buf *b) {
  char *s;
  if (b->oom) {
    cj_buf_free(b);
    return NULL;
  }
  if (!b->data) return cj_strdup("");
  s = b->data;
  b->data = NULL;
  b->len = b->cap = 0;
  return s;
}

void cj_buf_free(cj_buf *b) {
  cj_free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}

size_t cj_join(char *out, size_t size, ...) {
  size_t len = 0, n, room;
  const char *part;
  va_list ap;
  va_start(ap, size);
  while ((part = va_arg(ap, const char *)) != NULL) {
    n = strlen(part);
    room = len < size ? size - 1 - len : 0;
    if (room) memcpy(out + len, part, n < room ? n : room);
    len += n;
  }
  va_end(ap);
  out[len < size ? len : size - 1] = '\0';
  return len;
}
