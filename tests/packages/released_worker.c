/* released_worker.c - the stand-in of a released cujit-worker (0.1.0's and 0.2.0's, both
 * /usr/libexec/cujit-worker) in the package tests' stand-in packages (standins.sh). It
 * begins as they began (src/worker/serve.c before the greeting): it reads a request's
 * 20-byte head from its standard input, a socket, skipping a cancel byte before it, and
 * exits with status 1 when those bytes are not a request ("cjwq"), as they do at a later
 * library's greeting. A request, which only a released library sends, ends it with status
 * 2: the stand-in compiles nothing. */
#include <string.h>
#include <unistd.h>

static int read_all(unsigned char *b, size_t n) {
  while (n) {
    ssize_t k = read(0, b, n);
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

int main(void) {
  unsigned char head[20];
  do {
    if (read_all(head, 1) != 0) return 0; /* the caller closed: done */
  } while (head[0] == 0x18);
  if (read_all(head + 1, sizeof head - 1) != 0) return 1;
  return memcmp(head, "cjwq", 4) == 0 ? 2 : 1;
}
