/* parse.c - numbers as the environment and the command line give them; names as C spells
 * them. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "common/common.h"

int cj_parse_size(const char *s, uint64_t *out) {
  unsigned long long v;
  unsigned shift = 0;
  char *end;
  if (!s) return -1;
  while (isspace((unsigned char)*s)) s++;
  if (!isdigit((unsigned char)*s)) return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno) return -1;
  switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: break;
  }
  if (shift) {
    end++;
    if (toupper((unsigned char)*end) == 'I') end++;
    if (toupper((unsigned char)*end) == 'B') end++;
  } else if (toupper((unsigned char)*end) == 'B') {
    end++;
  }
  while (isspace((unsigned char)*end)) end++;
  if (*end) return -1;
  if (shift && v > (UINT64_MAX >> shift)) return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

int cj_parse_count(const char *s, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (!s || !*s) return -1;
  for (; *s; s++) {
    uint64_t d = (uint64_t)(*s - '0');
    if (!isdigit((unsigned char)*s) || d > max || v > (max - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int cj_is_identifier(const char *s) {
  size_t i;
  if (!s[0] || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (i = 0; s[i]; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}
