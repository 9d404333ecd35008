/* libhiredis.c - hiredis's table for the loader (see hiredis.h and loader.h), and the
 * reply layout of the library loaded. With hiredis's headers at build
 * time (Debian: libhiredis-dev) the prototypes come from them and the reply layout of that
 * version is checked against cujit's own description of it; without them, cujit declares
 * the few prototypes it uses itself. Either way the library found at run time decides
 * which reply layout is read. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dl/hiredis.h"
#include "dl/loader.h"

#ifdef CJ_HAVE_HIREDIS_H
#  include <hiredis/hiredis.h>
#else
/* The prototypes hiredis 0.14 and 1.x both declare, for the types of the table below. */
typedef struct redisReader redisReader;
redisReader *redisReaderCreate(void);
void redisReaderFree(redisReader *r);
int redisReaderFeed(redisReader *r, const char *buf, size_t len);
int redisReaderGetReply(redisReader *r, void **reply);
void freeReplyObject(void *reply);
void redisFreeCommand(char *cmd);
#endif

/* The reply object of hiredis 0.14 and of hiredis 1.0 and later. */
typedef struct reply_v0 {
  int type;
  long long integer;
  size_t len;
  char *str;
  size_t elements;
  void **element;
} reply_v0;

typedef struct reply_v1 {
  int type;
  long long integer;
  double dval;
  size_t len;
  char *str;
  char vtype[4];
  size_t elements;
  void **element;
} reply_v1;

#ifdef CJ_HAVE_HIREDIS_H
#  if HIREDIS_MAJOR == 0
typedef reply_v0 reply_built;
#  else
typedef reply_v1 reply_built;
#  endif
_Static_assert(offsetof(redisReply, type) == offsetof(reply_built, type) &&
                   offsetof(redisReply, integer) == offsetof(reply_built, integer) &&
                   offsetof(redisReply, len) == offsetof(reply_built, len) &&
                   offsetof(redisReply, str) == offsetof(reply_built, str),
               "hiredis's reply layout is not the one cujit knows for this version");
#endif

/* redisFormatCommandArgv returns int in hiredis 0.14 and long long in 1.x: it is called as
 * returning int, whose bits both return the same way for the lengths cujit formats (far
 * below 2 GiB; cj_hiredis_format refuses larger commands before formatting them). */
typedef int format_fn(char **target, int argc, const char **argv, const size_t *argvlen);

typedef struct hiredis_api {
  format_fn *format;
  __typeof__(redisFreeCommand) *free_command;
  __typeof__(redisReaderCreate) *reader_create;
  __typeof__(redisReaderFeed) *reader_feed;
  __typeof__(redisReaderGetReply) *reader_get;
  __typeof__(redisReaderFree) *reader_free;
  __typeof__(freeReplyObject) *free_reply;
} hiredis_api;

static hiredis_api hi;

/* Newest first; hiredis 1.1 and 1.2 both have the soname 1.1.0. */
static const char *const sonames[] = {"libhiredis.so.1.3.0", "libhiredis.so.1.1.0",
                                      "libhiredis.so.1.0.0", "libhiredis.so.0.14", "libhiredis.so"};

static const cj_dsym syms[] = {
#define CJ_HI_(field, fn) \
  { fn, offsetof(hiredis_api, field), 0 }
    CJ_HI_(format, "redisFormatCommandArgv"),   CJ_HI_(free_command, "redisFreeCommand"),
    CJ_HI_(reader_create, "redisReaderCreate"), CJ_HI_(reader_feed, "redisReaderFeed"),
    CJ_HI_(reader_get, "redisReaderGetReply"),  CJ_HI_(reader_free, "redisReaderFree"),
    CJ_HI_(free_reply, "freeReplyObject"),
#undef CJ_HI_
};

static size_t off_len, off_str; /* where the loaded library keeps a reply's len and str */

/* 1 when `reply` holds the 5-byte string "hello" at the given offsets. */
static int holds_hello(const void *reply, size_t len_at, size_t str_at) {
  const char *p = reply;
  size_t len;
  char *str;
  int type;
  memcpy(&type, p, sizeof type);
  memcpy(&len, p + len_at, sizeof len);
  memcpy(&str, p + str_at, sizeof str);
  return type == CJ_REPLY_STRING && len == 5 && str && memcmp(str, "hello", 5) == 0;
}

/* The loader's check: parses a known reply with the loaded library and keeps the layout
 * that holds it. */
static int probe_layout(char *why, size_t why_size) {
  static const char wire[] = "$5\r\nhello\r\n";
  redisReader *r = hi.reader_create();
  void *reply = NULL;
  int found = 0;
  if (r && hi.reader_feed(r, wire, sizeof wire - 1) == 0 && hi.reader_get(r, &reply) == 0 &&
      reply) {
    if (holds_hello(reply, offsetof(reply_v0, len), offsetof(reply_v0, str))) {
      off_len = offsetof(reply_v0, len);
      off_str = offsetof(reply_v0, str);
      found = 1;
    } else if (holds_hello(reply, offsetof(reply_v1, len), offsetof(reply_v1, str))) {
      off_len = offsetof(reply_v1, len);
      off_str = offsetof(reply_v1, str);
      found = 1;
    }
  }
  if (reply) hi.free_reply(reply);
  if (r) hi.reader_free(r);
  if (!found)
    snprintf(why, why_size, "%s",
             r ? "its replies are laid out as in no hiredis version cujit knows (0.14 or 1.x)"
               : "it could not make a reply parser (out of memory?)");
  return found;
}

CJ_DLIB_STATE(state);

/* Loaded by the system's search (or CUJIT_HIREDIS), never keyed: it only speaks Redis's
 * protocol, and every value it hands back is checked as an entry from disk is. */
static const cj_dlib hiredis = {
    .name = "hiredis",
    .file = "libhiredis.so",
    .install = "hiredis (Debian 12 and Ubuntu 22.04: apt-get install libhiredis0.14; Debian 13 "
               "and Ubuntu 24.04: libhiredis1.1.0)",
    .oldest = "hiredis 0.14",
    .without = "only the remote cache needs it",
    .status = CUJIT_ERROR_CACHE,
    .env = "CUJIT_HIREDIS",
    .sonames = sonames,
    .n_sonames = CJ_COUNT(sonames),
    .syms = syms,
    .n_syms = CJ_COUNT(syms),
    .table = &hi,
    .check = probe_layout,
    .state = &state,
};

cujit_status cj_hiredis_load(void) { return cj_dlib_open(&hiredis); }

const char *cj_hiredis_error(void) {
  cj_dlib_open(&hiredis);
  return cj_dlib_why(&hiredis);
}

long cj_hiredis_format(char **cmd, int argc, const char **argv, const size_t *lens) {
  size_t total = 16;
  int i, n;
  *cmd = NULL;
  for (i = 0; i < argc; i++) {
    if (lens[i] > (size_t)INT_MAX - 32 - total) return -1;
    total += lens[i] + 32; /* "$<len>\r\n" and "\r\n" around each argument */
  }
  n = hi.format(cmd, argc, argv, lens);
  return n < 0 || !*cmd ? -1 : (long)n;
}

void cj_hiredis_free_command(char *cmd) {
  if (cmd) hi.free_command(cmd);
}

cj_redis_reader *cj_hiredis_reader_new(void) { return (cj_redis_reader *)hi.reader_create(); }

int cj_hiredis_reader_feed(cj_redis_reader *r, const char *buf, size_t len) {
  return hi.reader_feed((redisReader *)r, buf, len) == 0 ? 0 : -1;
}

int cj_hiredis_reader_get(cj_redis_reader *r, void **reply) {
  *reply = NULL;
  return hi.reader_get((redisReader *)r, reply) == 0 ? 0 : -1;
}

void cj_hiredis_reader_free(cj_redis_reader *r) {
  if (r) hi.reader_free((redisReader *)r);
}

void cj_hiredis_reply(const void *reply, cj_reply *out) {
  const char *p = reply;
  char *str;
  memcpy(&out->type, p + offsetof(reply_v0, type), sizeof out->type);
  memcpy(&out->integer, p + offsetof(reply_v0, integer), sizeof out->integer);
  memcpy(&out->len, p + off_len, sizeof out->len);
  memcpy(&str, p + off_str, sizeof str);
  out->str = str;
  if (out->type != CJ_REPLY_STRING && out->type != CJ_REPLY_STATUS && out->type != CJ_REPLY_ERROR) {
    out->str = NULL;
    out->len = 0;
  }
}

void cj_hiredis_reply_free(void *reply) {
  if (reply) hi.free_reply(reply);
}
