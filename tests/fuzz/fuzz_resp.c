/* fuzz_resp - the Redis reply scanner (format/resp.c) on arbitrary bytes, with a limit taken
 * from the input. It must never crash or read out of bounds, never let a reply's cost pass
 * the limit, never nest deeper than it allows, and say the same of the bytes whole as in
 * pieces (a server's reply arrives split wherever the network splits it). */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "format/resp.h"

/* Feeds the bytes in pieces of `step` (0: whole); the result of the first refusal, or of
 * the last piece. */
static int scan_in(const char *p, size_t n, size_t limit, size_t step, cj_resp_scan *s) {
  size_t at = 0, k;
  int rc = CJ_RESP_OK;
  cj_resp_start(s, limit);
  if (!step) step = n ? n : 1;
  while (at < n && rc == CJ_RESP_OK) {
    k = n - at < step ? n - at : step;
    rc = cj_resp_feed(s, p + at, k);
    at += k;
  }
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_resp_scan whole, pieces;
  size_t limit, step;
  int a, b;
  if (size < 2) return 0;
  limit = (size_t)data[0] << 4; /* 0 to 4080 bytes: small, so that the limit is met */
  step = data[1] % 8;
  a = scan_in((const char *)data + 2, size - 2, limit, 0, &whole);
  b = scan_in((const char *)data + 2, size - 2, limit, step, &pieces);
  assert(a == b);
  assert(whole.done == pieces.done && whole.cost == pieces.cost);
  assert(whole.cost <= limit);
  assert(whole.depth >= 0 && whole.depth <= CJ_RESP_MAX_DEPTH);
  assert(a != CJ_RESP_TOO_LARGE || whole.why);
  return 0;
}
