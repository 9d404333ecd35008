/* tier.h - what a cache tier is: a place that keeps compiled images under their key, asked
 * through the same few operations by the one walk through the tiers (cache/walk.c), which
 * holds their list, nearest first. This process's memory cache (memcache.c) and the disk
 * cache (disktier.c) are store/'s tiers; the remote tier is remote/'s (remote/remote.c).
 *
 * A walk finds (fetch: a compile, a link), probes (explain: without waiting, making or
 * writing anything) or puts (an import). For each tier in turn it opens it, asks it, and
 * when the walk is over leaves it, saying how the walk ended, so that the tier can count
 * and give back what it holds (a lock, a directory). A tier never calls another: what one
 * finds, the walk puts into the nearer ones. Private. */
#ifndef CUJIT_TIER_H
#define CUJIT_TIER_H

#include "store/store.h"

/* What a walk looks for: filled by the walk's caller and by the walk; read by the tiers. */
typedef struct cj_want {
  const char *name;       /* the program's name, for messages */
  const cj_key *request;  /* the options and the source hashed: its name in the tiers named by
                             the request key (the walk makes it from `hint` when NULL) */
  const cj_key *key;      /* the request key and the headers from disk: its entry's name in the
                             other tiers (made by the walk's caller when NULL) */
  cj_deps *deps;          /* the headers an entry must record (NULL: none); borrowed (a tier
                             that keeps them takes a reference) */
  const cj_memhint *hint; /* where its source lies, or NULL */
  int local;              /* 1: only the tiers of this machine (not those marked shared) */
  cj_root root;           /* the disk cache directory, opened by the walk before the first tier
                             named by `key` (fd -1: none, or not yet); closed by the caller */
  /* Asked between looks while a tier waits for another's compile of the same key (NULL: a
   * wait is never stopped): NULL to go on, else why the wait stops ("stopped by its time
   * limit"), which it says again when asked again. */
  const char *(*stop)(void *arg);
  void *stop_arg;
} cj_want;

/* What a tier found. */
typedef struct cj_found {
  cj_image *image; /* a new reference; NULL when nothing was found */
  cj_deps *deps;   /* from a tier named by the request key: the headers the image was made
                      from (a reference, NULL: none), which the walk checks by stat */
  cj_buf entry;    /* from a tier that keeps bytes, when it read them whole: the entry as it
                      came, which nearer tiers that keep bytes store as it is */
} cj_found;

/* Answers of recall, find and probe. */
enum { CJ_TIER_NONE = 0, CJ_TIER_FOUND = 1, CJ_TIER_STOPPED = 2, CJ_TIER_NOMEM = -1 };

/* How a walk ended, as each tier it opened is told when the walk leaves it. */
typedef enum cj_tier_end {
  CJ_END_NOTHING, /* it failed, was stopped, or only asked: nothing to count */
  CJ_END_FOUND,   /* this tier had it */
  CJ_END_FARTHER, /* a farther tier had it (and put it into this one) */
  CJ_END_MADE,    /* no tier had it: compiled or linked (put into this one unless that failed) */
  CJ_END_IMPORTED /* an entry from outside was put into this one, unless it had it already */
} cj_tier_end;

/* A tier. `visit` is what one walk keeps while it uses the tier (its type is named beside the
 * tier in the walk's list); open() sets it up and leave() gives back what it holds. `why`
 * (why_size bytes) receives a sentence for cujit_cache_explain(). */
typedef struct cj_tier {
  int shown_as;             /* the cujit_cache_tier that cujit_cache_explain() names for a hit */
  const char *reading;      /* what ran out of memory when a find does: "reading a cache entry" */
  const char *holder;       /* who makes the entry a wait in this tier is for: "another process" */
  unsigned by_request : 1;  /* named by the request key (else by the entry key); its hits'
                               headers are checked by the walk, as that key does not cover them */
  unsigned keeps_bytes : 1; /* keeps encoded entries (format/entry.c), not images */
  unsigned behind : 1;      /* used only where the tier before it is used */
  unsigned shared : 1;      /* read by other machines: passed over by a walk kept to this
                               machine (w->local) */
  /* Readies the tier: 0, or -1 when it cannot be used now (why says why, for a probe).
   * `create`: the walk may write (fetch, put); a probe only reads. NULL for a tier that
   * needs nothing readied and can always be used. */
  int (*open)(void *visit, const cj_want *w, int create, char *why, size_t why_size);
  /* Finds the image by where its source lies (w->hint), before the request key is made:
   * CJ_TIER_FOUND or CJ_TIER_NONE. NULL for tiers that cannot. */
  int (*recall)(void *visit, const cj_want *w, cj_found *f);
  /* Finds the image. When the tier has none, it may take the key's lock in it, or wait for
   * the holder of that lock to store it (then CJ_TIER_FOUND). CJ_TIER_FOUND, CJ_TIER_NONE
   * (the lock may be held until leave()), CJ_TIER_STOPPED (w->stop said so) or
   * CJ_TIER_NOMEM. */
  int (*find)(void *visit, const cj_want *w, cj_found *f);
  /* Whether it holds the image, without waiting or writing: CJ_TIER_FOUND, or
   * CJ_TIER_NONE with why. */
  int (*probe)(void *visit, const cj_want *w, cj_found *f, char *why, size_t why_size);
  /* Stores the image, or the entry (w->key's) for a tier that keeps bytes. Trouble is
   * logged, never an error. Returns the bytes it wrote to this machine's disk. */
  uint64_t (*put)(void *visit, const cj_want *w, cj_image *im, const cj_buf *entry);
  /* Counts how the walk ended and gives back what open() and find() took. */
  void (*leave)(void *visit, const cj_want *w, cj_tier_end end);
} cj_tier;

/* ---- store/'s tiers ---- */

/* memcache.c: this process's images, named by the request key. Its walk keeps nothing. */
extern const cj_tier cj_memcache_tier;

/* disktier.c: the disk cache, named by the entry key: one process per key compiles, while
 * the others wait for its entry; hits, misses and writes are counted in the directory. */
extern const cj_tier cj_disk_tier;
/* What a walk keeps while it uses the disk tier. */
typedef struct cj_disk_visit {
  cj_entry_path path;
  cj_lock lock;        /* the key's lock, while held */
  const cj_want *want; /* while find() waits */
  struct stat seen;    /* while find() waits: the entry as last looked at (st_ino 0: absent) */
  cj_image *image;     /* while find() waits: the entry another process wrote */
  uint64_t written;    /* bytes put */
  int oom, stopped;
} cj_disk_visit;

#endif
