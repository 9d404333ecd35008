/* escape.c - text from outside (a file's name, a source line NVRTC quotes, an environment
 * variable) made safe for a terminal: control characters and bytes that are not UTF-8
 * written as \xNN, so that a terminal shows them and acts on none.
 *
 * A pure function of its bytes, with no allocation and nothing else of the library: the
 * command (cli/) is built with it too, and the error mode runs it while the process ends. */
#include <string.h>

#include "common/common.h"

/* The length of the UTF-8 sequence at p (1 to 4 bytes) when it is valid and not a control
 * character (C0, DEL, or C1 written as U+0080..U+009F); 0 otherwise. Overlong forms,
 * surrogates and code points past U+10FFFF are invalid. */
static size_t printable_utf8(const unsigned char *p, size_t n) {
  size_t len, i;
  uint32_t c;
  if (p[0] >= 0x20 && p[0] < 0x7f) return 1;
  if (p[0] < 0xc2 || p[0] > 0xf4) return 0; /* controls, continuations, overlong C0/C1 */
  len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
  if (n < len) return 0;
  c = p[0] & (0x7f >> len);
  for (i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    c = c << 6 | (p[i] & 0x3f);
  }
  if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff))) return 0;
  if ((c >= 0xd800 && c <= 0xdfff) || (c >= 0x80 && c <= 0x9f)) return 0;
  return len;
}

/* How many bytes at s[i] pass as they are in `mode`; 0 for one to escape. */
static size_t kept(const unsigned char *s, size_t i, size_t n, int mode) {
  if (s[i] == '\\') return mode == CJ_ESCAPE_TEXT;
  if (mode == CJ_ESCAPE_TEXT) {
    if (s[i] == '\n' || s[i] == '\t') return 1;
    if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') return 2; /* a line's CR LF ending */
  }
  return printable_utf8(s + i, n - i);
}

void cj_escape(const void *p, size_t n, int mode, cj_escape_fn put, void *user) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = p;
  size_t i = 0, from = 0, run;
  while (i < n) {
    if ((run = kept(s, i, n, mode)) != 0) {
      i += run;
      continue;
    }
    if (i > from) put(user, (const char *)s + from, i - from);
    if (s[i] == '\\') {
      put(user, "\\\\", 2);
    } else {
      char x[4] = {'\\', 'x', hex[s[i] >> 4], hex[s[i] & 15]};
      put(user, x, 4);
    }
    from = ++i;
  }
  if (i > from) put(user, (const char *)s + from, i - from);
}
