/* resp.c - following Redis's reply framing byte by byte (see resp.h): an element starts
 * with its type ('+' status, '-' error, ':' integer, '$' bulk string, '*' array), its first
 * line ends with "\r\n"; a bulk string's line gives its length (-1: nil) and its bytes
 * follow with "\r\n", an array's gives its count (-1: nil) and its elements follow. */
#include <string.h>

#include "format/resp.h"

static int charge(cj_resp_scan *s, unsigned long long n, const char *why) {
  if (n > s->limit - s->cost) {
    s->why = why;
    return CJ_RESP_TOO_LARGE;
  }
  s->cost += (size_t)n;
  return CJ_RESP_OK;
}

/* An element is complete, and so is each array it completes. */
static void element_done(cj_resp_scan *s) {
  while (s->depth > 0 && --s->left[s->depth - 1] == 0) s->depth--;
  if (s->depth == 0) s->done = 1;
}

static int element_start(cj_resp_scan *s, char ch) {
  if (s->done || !ch || !strchr("+-:$*", ch)) return CJ_RESP_BAD; /* a second answer, or RESP3 */
  s->type = ch;
  s->cr = s->digits = s->minus = 0;
  s->num = 0;
  return charge(s, CJ_RESP_ELEMENT_COST, "holds more elements than that allows");
}

static int line_byte(cj_resp_scan *s, char ch) {
  if (s->type != '$' && s->type != '*') /* a status, error or integer, which hiredis copies */
    return charge(s, 1, "holds a longer line than that allows");
  if (ch == '-' && !s->minus && !s->digits) return s->minus = 1, CJ_RESP_OK;
  if (ch < '0' || ch > '9' || s->digits >= 19) return CJ_RESP_BAD;
  s->num = s->num * 10 + (unsigned)(ch - '0');
  s->digits++;
  return CJ_RESP_OK;
}

/* The first line of an element is complete. */
static int line_done(cj_resp_scan *s) {
  char type = s->type;
  int rc;
  s->type = 0;
  if (type != '$' && type != '*') return element_done(s), CJ_RESP_OK;
  if (!s->digits || (s->minus && s->num != 1)) return CJ_RESP_BAD;
  if (s->minus || s->num == 0) { /* nil, or an empty array */
    if (type == '$' && !s->minus)
      s->skip = 2;
    else
      element_done(s);
    return CJ_RESP_OK;
  }
  if (type == '$') {
    if ((rc = charge(s, s->num, "announces a longer string")) != CJ_RESP_OK) return rc;
    s->announced += (size_t)s->num;
    s->skip = s->num + 2;
    return CJ_RESP_OK;
  }
  if (s->depth == CJ_RESP_MAX_DEPTH) return s->why = "nests arrays too deep", CJ_RESP_TOO_LARGE;
  if (s->num > (s->limit - s->cost) / sizeof(void *))
    return s->why = "announces more elements than that allows", CJ_RESP_TOO_LARGE;
  s->cost += (size_t)s->num * sizeof(void *); /* hiredis allocates the slots at once */
  s->left[s->depth++] = (size_t)s->num;
  return CJ_RESP_OK;
}

void cj_resp_start(cj_resp_scan *s, size_t limit) {
  memset(s, 0, sizeof *s);
  s->limit = limit;
}

int cj_resp_feed(cj_resp_scan *s, const char *buf, size_t n) {
  size_t i = 0;
  int rc = CJ_RESP_OK;
  while (i < n && rc == CJ_RESP_OK) {
    if (s->skip) {
      size_t k = n - i < s->skip ? n - i : (size_t)s->skip;
      s->skip -= k;
      i += k;
      if (!s->skip) element_done(s);
      continue;
    }
    if (!s->type)
      rc = element_start(s, buf[i]);
    else if (s->cr)
      rc = buf[i] == '\n' ? line_done(s) : CJ_RESP_BAD;
    else if (buf[i] == '\r')
      s->cr = 1;
    else
      rc = line_byte(s, buf[i]);
    i++;
  }
  return rc;
}
