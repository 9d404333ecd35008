/* fuzz.h - shared by the fuzz targets: splitting an input into NUL-terminated strings. */
#ifndef CUJIT_FUZZ_H
#define CUJIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Copies data into one buffer and splits it at '\n' into at most max strings (each
 * NUL-terminated); v[count] is NULL. Returns the buffer to free, or NULL. */
static inline char *fuzz_split(const uint8_t *data, size_t size, char **v, size_t max,
                               size_t *count) {
  char *buf = malloc(size + 1), *p;
  size_t n = 0;
  if (!buf) return NULL;
  memcpy(buf, data, size);
  buf[size] = '\0';
  p = buf;
  while (n < max) {
    char *nl = strchr(p, '\n');
    v[n++] = p;
    if (!nl) break;
    *nl = '\0';
    p = nl + 1;
  }
  v[n] = NULL;
  *count = n;
  return buf;
}

#endif
