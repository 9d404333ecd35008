/* cursor.c - reading little-endian numbers and byte runs from a bounded buffer. */
#include "common/common.h"

uint64_t cj_cursor_get(cj_cursor *c, int bytes) {
  uint64_t v = 0;
  int i;
  if (c->bad || c->left < (size_t)bytes) {
    c->bad = 1;
    return 0;
  }
  for (i = 0; i < bytes; i++) v |= (uint64_t)c->p[i] << (8 * i);
  c->p += bytes;
  c->left -= (size_t)bytes;
  return v;
}

const unsigned char *cj_cursor_take(cj_cursor *c, uint64_t n) {
  const unsigned char *p = c->p;
  if (c->bad || n > c->left) {
    c->bad = 1;
    return NULL;
  }
  c->p += n;
  c->left -= (size_t)n;
  return p;
}
