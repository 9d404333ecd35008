/* remote.h - the remote cache tier: entries shared by the machines of a cluster, behind
 * the disk cache in the walk through the tiers (memory -> disk -> remote -> compile).
 *
 * A server is a store with get and put by key and a lock that expires (cj_remote_ops);
 * Redis is the one implementation (redis.c). remote.c holds what does not depend on the
 * server: the tier's operations (cj_remote_tier), the setting (env CUJIT_CACHE_REMOTE or
 * cujit_cache_set_remote), the back-off after a failure, the checks on what comes back,
 * the wait for another machine's compile, and the counters. What the store holds is
 * untrusted: a value is used only when it passes the checks a disk entry passes (size,
 * magic, format, key, checksum, headers), and a value that does not is a miss, replaced
 * by the entry compiled here. Private. */
#ifndef CUJIT_REMOTE_H
#define CUJIT_REMOTE_H

#include "key/key.h"
#include "store/tier.h"

/* ---- the store: one implementation per kind of server ---- */

/* Results of the store's operations. */
enum {
  CJ_REMOTE_OK = 0,        /* get: a value; lock: taken; put, unlock: done */
  CJ_REMOTE_ABSENT = 1,    /* get: no value under the key; lock: someone else holds it */
  CJ_REMOTE_TOO_LARGE = 2, /* get: the answer would take more than `max` bytes, counting
                              what the client allocates for each of its elements (it was
                              not read to the end) */
  CJ_REMOTE_FAILED = -1,   /* the server could not be reached, did not answer in time, or
                              answered out of protocol (why says which): back off */
  CJ_REMOTE_REFUSED = -2,  /* the server answered with an error (why has it) */
  CJ_REMOTE_NOMEM = -3
};

/* Values larger than this are neither read nor written. */
#define CJ_REMOTE_MAX_ENTRY ((size_t)64 << 20)

typedef struct cj_remote cj_remote;

/* Every operation is thread-safe and bounded by the store's timeouts (Redis: connecting,
 * then each command as a whole); `why` (why_size bytes) receives the reason of a failure,
 * which never holds the password. */
typedef struct cj_remote_ops {
  /* The value under key into *out (appended to the empty buffer), at most max bytes. */
  int (*get)(cj_remote *t, const cj_key *key, size_t max, cj_buf *out, char *why, size_t why_size);
  int (*put)(cj_remote *t, const cj_key *key, const void *data, size_t len, char *why,
             size_t why_size);
  /* Takes the key's lock for `token` unless someone holds it; it expires after ttl_ms. */
  int (*lock)(cj_remote *t, const cj_key *key, uint64_t token, uint64_t ttl_ms, char *why,
              size_t why_size);
  /* Drops the key's lock if `token` still holds it. */
  int (*unlock)(cj_remote *t, const cj_key *key, uint64_t token, char *why, size_t why_size);
  void (*destroy)(cj_remote *t);
} cj_remote_ops;

struct cj_remote {
  const cj_remote_ops *ops;
  char name[320]; /* for messages: the URL without its password */
  int refs;       /* remote.c's: references held by compiles in progress, and the setting */
};

/* redis.c: "redis://[[user]:password@]host[:port][/db][?connect_timeout=MS&timeout=MS]",
 * the user information ending at the last '@'. Parses the URL into a new store without
 * connecting (the first operation connects). 0, or
 * -1 with the reason in why (CUJIT_ERROR_INVALID_VALUE's detail) or out of memory (*out
 * NULL and why empty). */
int cj_redis_open(const char *url, cj_remote **out, char *why, size_t why_size);
/* The URL as shown to the user: the password of its user information (which ends at the
 * URL's last '@', as cj_redis_open reads it) replaced by "***". */
void cj_redis_shown(const char *url, char *out, size_t size);
/* The Redis key that holds an entry: "cujit:" and the key's 32 hex digits. */
void cj_redis_key(const cj_key *key, char out[40]);

/* ---- remote.c: the tier in the walk ---- */

/* Seconds a tier that failed is left alone before it is tried again. */
#define CJ_REMOTE_BACKOFF_S 30.0

/* What a walk keeps while it uses the remote tier: the lock it holds there while it
 * compiles a key nobody has stored yet. */
typedef struct cj_remote_claim {
  cj_remote *tier; /* a reference; NULL when no lock is held */
  cj_key key;
  uint64_t token;
} cj_remote_claim;

/* The remote tier (tier.h), used only behind the disk tier: it asks the server set now
 * (none, or one in its back-off, is a miss at once) after a disk miss, takes the key's
 * lock there or waits for the machine that holds it, and stores what is compiled here;
 * an import is never stored there. Its hits, misses, bad values, failures and time are
 * counted in this process and in the cache directory. */
extern const cj_tier cj_remote_tier;
/* This process's remote counters (the remote_* fields; the others are left alone). */
void cj_remote_counters(cj_disk_counters *out);

#endif
