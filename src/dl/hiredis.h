/* hiredis.h - hiredis, the Redis client library, loaded at run time on the first use of a
 * remote cache tier: libcujit does not depend on it, and a program that sets no remote
 * tier never maps it. cujit uses hiredis for Redis's protocol: it formats commands and
 * parses replies, while cujit owns the socket (so that every wait has a deadline and a
 * connection the server closed never raises SIGPIPE).
 *
 * Only functions that hiredis 0.14 and 1.x both export are used. The reply object grew a
 * field in hiredis 1.0 (`dval`, before `len` and `str`), so its fields are read through
 * cj_hiredis_reply(), which knows the layout of the library it loaded: when loading, a
 * known reply is parsed by the library and the layout that holds it is kept. */
#ifndef CUJIT_DRIVER_HIREDIS_H
#define CUJIT_DRIVER_HIREDIS_H

#include "common/common.h"

/* Reply types: the same numbers in hiredis 0.14 and 1.x (1.x adds RESP3 types above 6,
 * which a server speaking RESP2, the default, never sends). */
enum {
  CJ_REPLY_STRING = 1,
  CJ_REPLY_ARRAY = 2,
  CJ_REPLY_INTEGER = 3,
  CJ_REPLY_NIL = 4,
  CJ_REPLY_STATUS = 5,
  CJ_REPLY_ERROR = 6
};

/* A reply's fields, whichever hiredis is loaded. */
typedef struct cj_reply {
  int type;
  long long integer; /* CJ_REPLY_INTEGER */
  const char *str;   /* CJ_REPLY_STRING, STATUS and ERROR: owned by the reply object */
  size_t len;
} cj_reply;

typedef struct cj_redis_reader cj_redis_reader; /* hiredis's redisReader */

/* Loads hiredis, once per process: env CUJIT_HIREDIS (a file) when set, else the system's
 * search for libhiredis.so.1.3.0, .1.1.0 (hiredis 1.1 and 1.2), .1.0.0, .0.14 and
 * libhiredis.so. CUJIT_OK, or CUJIT_ERROR_CACHE, the same on every call; the thread's
 * error detail is left alone (a compile that goes on without the remote tier has not
 * failed): cj_hiredis_error() says what is missing and what to install. */
cujit_status cj_hiredis_load(void);
const char *cj_hiredis_error(void); /* "" once loaded; static storage */

/* The rest needs a successful cj_hiredis_load(). */

/* Formats a command from argc arguments (bytes and lengths) in Redis's protocol into a new
 * buffer in *cmd, freed with cj_hiredis_free_command(). Returns its length, or -1 when out
 * of memory (or when the command would be 2 GiB or more). */
long cj_hiredis_format(char **cmd, int argc, const char **argv, const size_t *lens);
void cj_hiredis_free_command(char *cmd);

/* A protocol parser fed with the bytes read from a connection. NULL when out of memory. */
cj_redis_reader *cj_hiredis_reader_new(void);
/* 0, or -1 when out of memory. */
int cj_hiredis_reader_feed(cj_redis_reader *r, const char *buf, size_t len);
/* The next whole reply in *reply (NULL while more bytes are needed): 0, or -1 when the
 * bytes are not Redis's protocol (the connection is then unusable). */
int cj_hiredis_reader_get(cj_redis_reader *r, void **reply);
void cj_hiredis_reader_free(cj_redis_reader *r); /* NULL is fine */

/* Reads a reply's fields into *out; the strings stay owned by the reply. */
void cj_hiredis_reply(const void *reply, cj_reply *out);
void cj_hiredis_reply_free(void *reply); /* NULL is fine */

#endif
