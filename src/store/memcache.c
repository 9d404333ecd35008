/* memcache.c - the in-process cache: images by request key, in a hash table with a
 * least-recently-used list, under one mutex. A hit takes the lock once, moves the node to
 * the front and takes a reference: no allocation, no system call. Bounded by count and
 * bytes (CUJIT_MEMORY_CACHE_MAX_SIZE, default 256 MiB; 0 turns it off).
 *
 * Programs usually pass the same source from the same place (a string constant, a file
 * read once), so a small table of hints maps a source's address, length and options key
 * to the request key it had last time. A lookup through a hint compares the text with
 * the image's copy, which costs a fraction of hashing it: whatever the hint says, only
 * identical text with identical options is a hit. */
#include <pthread.h>
#include <string.h>

#include "store/tier.h"

#define CJ_MEM_MAX_ENTRIES 1024
#define CJ_MEM_BUCKETS 2048 /* a power of two, twice the entries */

typedef struct node {
  cj_key key;
  cj_image *image;
  cj_deps *deps; /* the headers it was compiled from (a reference; may be NULL) */
  size_t bytes;
  struct node *chain;       /* next in the bucket */
  struct node *prev, *next; /* LRU list: most recent after the head */
} node;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_memcache, lock)
static pthread_once_t once = PTHREAD_ONCE_INIT;
#define CJ_MEM_HINTS 256 /* a power of two */

typedef struct hint {
  const char *source; /* NULL: empty */
  size_t len;
  cj_key options;
  cj_key request;
} hint;

static CJ_LARGE node *buckets[CJ_MEM_BUCKETS];
static CJ_LARGE hint hints[CJ_MEM_HINTS];
static node lru = {{{0}}, NULL, NULL, 0, NULL, &lru, &lru};
static size_t count, bytes;
static uint64_t max_bytes; /* CUJIT_MEMORY_CACHE_MAX_SIZE, read once (init) */

static void init(void) { cj_env_u64("CUJIT_MEMORY_CACHE_MAX_SIZE", &max_bytes); }

static node **bucket(const cj_key *k) {
  uint64_t h;
  memcpy(&h, k->b, sizeof h); /* the key is a hash already */
  return &buckets[h & (CJ_MEM_BUCKETS - 1)];
}

static void unlink_lru(node *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
}

static void push_front(node *n) {
  n->next = lru.next;
  n->prev = &lru;
  lru.next->prev = n;
  lru.next = n;
}

static node *find(const cj_key *k) {
  node *n;
  for (n = *bucket(k); n; n = n->chain)
    if (memcmp(n->key.b, k->b, sizeof k->b) == 0) return n;
  return NULL;
}

/* Takes n out of the table and the list; the caller frees it. */
static void remove_node(node *n) {
  node **p = bucket(&n->key);
  while (*p != n) p = &(*p)->chain;
  *p = n->chain;
  unlink_lru(n);
  count--;
  bytes -= n->bytes;
}

static hint *hint_slot(const char *source, size_t len) {
  uint64_t h = ((uint64_t)(uintptr_t)source ^ ((uint64_t)len << 32)) * 0x9E3779B97F4A7C15ull;
  return &hints[h >> 56 & (CJ_MEM_HINTS - 1)];
}

/* Called with the lock held. */
static void remember(const cj_key *k, const cj_memhint *h) {
  hint *slot;
  if (!h) return;
  slot = hint_slot(h->source, h->len);
  slot->source = h->source;
  slot->len = h->len;
  slot->options = h->options;
  slot->request = *k;
}

/* Called with the lock held: the node is now the most recently used. */
static cj_image *take(node *n, cj_deps **deps) {
  unlink_lru(n);
  push_front(n);
  *deps = cj_deplist_ref(n->deps);
  return cj_image_ref(n->image);
}

cj_image *cj_memcache_get_source(const cj_memhint *h, cj_deps **deps) {
  cj_image *im = NULL;
  hint *slot;
  node *n;
  *deps = NULL;
  pthread_mutex_lock(&lock);
  /* an empty cache is not read at all: the table's pages stay untouched until the first
   * entry, rather than being mapped for a read and again for that write */
  slot = count ? hint_slot(h->source, h->len) : NULL;
  if (slot && slot->source == h->source && slot->len == h->len &&
      memcmp(slot->options.b, h->options.b, sizeof h->options.b) == 0 &&
      (n = find(&slot->request)) != NULL)
    im = take(n, deps);
  pthread_mutex_unlock(&lock);
  /* the text at that address may have changed since: compare it, outside the lock */
  if (im && (im->source_len != h->len || memcmp(im->source, h->source, h->len) != 0)) {
    cj_image_unref(im);
    cj_deplist_destroy(*deps);
    *deps = NULL;
    im = NULL;
  }
  return im;
}

cj_image *cj_memcache_get(const cj_key *k, const cj_memhint *h, cj_deps **deps) {
  cj_image *im = NULL;
  node *n;
  *deps = NULL;
  pthread_mutex_lock(&lock);
  n = count ? find(k) : NULL; /* (see cj_memcache_get_source) */
  if (n) {
    im = take(n, deps);
    remember(k, h);
  }
  pthread_mutex_unlock(&lock);
  return im;
}

static void free_nodes(node *list) {
  while (list) {
    node *next = list->chain;
    cj_image_unref(list->image);
    cj_deplist_destroy(list->deps);
    cj_free(list);
    list = next;
  }
}

void cj_memcache_put(const cj_key *k, cj_image *im, cj_deps *deps, const cj_memhint *h) {
  node *n, *old, *dead = NULL;
  pthread_once(&once, init);
  if (!max_bytes || cj_image_bytes(im) > max_bytes) return;
  if (!(n = cj_malloc(sizeof *n))) return; /* the cache is an optimisation */
  n->key = *k;
  n->image = cj_image_ref(im);
  n->deps = cj_deplist_ref(deps);
  n->bytes = cj_image_bytes(im);
  pthread_mutex_lock(&lock);
  if ((old = count ? find(k) : NULL) != NULL) {
    remove_node(old);
    old->chain = dead;
    dead = old;
  }
  n->chain = count ? *bucket(k) : NULL; /* into an empty table, a write is the first touch */
  *bucket(k) = n;
  push_front(n);
  count++;
  bytes += n->bytes;
  remember(k, h);
  while (count > CJ_MEM_MAX_ENTRIES || bytes > max_bytes) {
    old = lru.prev;
    remove_node(old);
    old->chain = dead;
    dead = old;
  }
  pthread_mutex_unlock(&lock);
  free_nodes(dead); /* outside the lock: freeing images takes time */
}

void cj_memcache_clear(void) {
  node *dead = NULL, *n;
  pthread_mutex_lock(&lock);
  while ((n = lru.next) != &lru) {
    remove_node(n);
    n->chain = dead;
    dead = n;
  }
  memset(hints, 0, sizeof hints);
  pthread_mutex_unlock(&lock);
  free_nodes(dead);
}

size_t cj_memcache_count(void) {
  size_t n;
  pthread_mutex_lock(&lock);
  n = count;
  pthread_mutex_unlock(&lock);
  return n;
}

/* ---- the memory cache as a tier (tier.h) ---- */

static int mem_found(cj_found *f) { return f->image ? CJ_TIER_FOUND : CJ_TIER_NONE; }

static int mem_recall(void *visit, const cj_want *w, cj_found *f) {
  (void)visit;
  f->image = cj_memcache_get_source(w->hint, &f->deps);
  return mem_found(f);
}

static int mem_find(void *visit, const cj_want *w, cj_found *f) {
  (void)visit;
  f->image = cj_memcache_get(w->request, w->hint, &f->deps);
  return mem_found(f);
}

static int mem_probe(void *visit, const cj_want *w, cj_found *f, char *why, size_t why_size) {
  (void)visit, (void)why, (void)why_size; /* a miss here needs no words */
  f->image = cj_memcache_get(w->request, NULL, &f->deps);
  return mem_found(f);
}

static uint64_t mem_put(void *visit, const cj_want *w, cj_image *im, const cj_buf *entry) {
  (void)visit, (void)entry;
  cj_memcache_put(w->request, im, w->deps, w->hint);
  return 0;
}

static void mem_leave(void *visit, const cj_want *w, cj_tier_end end) {
  (void)visit, (void)w;
  if (end == CJ_END_FOUND) cj_count(CJ_MEMORY_HITS, 1);
}

const cj_tier cj_memcache_tier = {
    .shown_as = CUJIT_CACHE_TIER_MEMORY,
    .reading = "reading the memory cache",
    .holder = "another thread",
    .by_request = 1,
    .recall = mem_recall,
    .find = mem_find,
    .probe = mem_probe,
    .put = mem_put,
    .leave = mem_leave,
};
