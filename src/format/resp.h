/* resp.h - Redis's reply framing (RESP2), followed byte by byte before a reply reaches
 * hiredis (remote/redis.c): hiredis builds a whole reply before handing it over, and
 * allocates for every element (and every announced array slot) whatever its size on the
 * wire, so the bytes a server sends are scanned first and a reply that would make it
 * allocate more than a limit is refused before hiredis sees the bytes that would pass it.
 * The bytes come from outside: the scan is a pure function of them, whatever way they are
 * split. Private. */
#ifndef CUJIT_FORMAT_RESP_H
#define CUJIT_FORMAT_RESP_H

#include <stddef.h>

#define CJ_RESP_ELEMENT_COST                                      \
  128 /* what hiredis allocates for one element besides its text, \
         at most */
#define CJ_RESP_MAX_DEPTH                                      \
  8 /* arrays nested deeper are refused (hiredis 0.14 takes no \
       more, and frees replies recursively) */

/* Where a scan is in a reply. */
typedef struct cj_resp_scan {
  size_t cost, limit; /* what hiredis will allocate for the bytes so far; the most allowed */
  size_t announced;   /* bytes of bulk strings announced */
  size_t left[CJ_RESP_MAX_DEPTH]; /* elements still to come in each open array */
  int depth;
  char type;             /* of the element whose first line is being read; 0 between elements */
  int cr, digits, minus; /* in that line: '\r' seen, digits of its number, a leading '-' */
  unsigned long long num;
  unsigned long long skip; /* bytes of a bulk string (and its "\r\n") still to come */
  int done;                /* the reply is complete */
  const char *why;         /* why it is too large */
} cj_resp_scan;

enum { CJ_RESP_OK = 0, CJ_RESP_TOO_LARGE = 1, CJ_RESP_BAD = -1 };

/* Starts the scan of one reply that may cost hiredis at most `limit` bytes. */
void cj_resp_start(cj_resp_scan *s, size_t limit);
/* Follows n more bytes of the reply: CJ_RESP_OK (s->done once it is complete),
 * CJ_RESP_TOO_LARGE (s->why says how) or CJ_RESP_BAD (not RESP2, or bytes after the
 * reply). */
int cj_resp_feed(cj_resp_scan *s, const char *buf, size_t n);

#endif
