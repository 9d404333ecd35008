/* cache.h - the kernel cache: the one walk through the tiers (walk.c: this process's
 * memory, the disk cache, the remote tier, in that order), which compiles (fetch.c), links
 * (fetchlink.c), imported images (adopt.c) and questions to the cache (explain.c) all take;
 * verifying entries (verify.c) and the cache's public functions (cache.c). The keys are
 * key/'s, the tiers store/'s and remote/'s. Private; not installed.
 *
 * A compile (fetch.c): request key -> memory cache (revalidated by stat) -> header scan
 * -> disk key -> disk entry (or wait for the process compiling it) -> remote tier (or wait
 * for the machine compiling it) -> NVRTC -> every tier. */
#ifndef CUJIT_CACHE_H
#define CUJIT_CACHE_H

#include "compile/devlink.h"
#include "key/key.h"
#include "store/tier.h"

/* ---- diff.c: how an entry's manifest differs from a request's ---- */

/* Receives one difference (part is a cujit_cache_part); returns nonzero to stop. */
typedef int (*cj_diff_fn)(int part, const char *what, const char *detail, void *user);
/* Compares an entry's manifest `was` with a request's `now`, calling fn (may be NULL) for
 * each difference found; returns how many. Out of memory for a message is a shorter one. */
unsigned cj_cache_manifest_diff(const cj_manifest *was, const cj_manifest *now, cj_diff_fn fn,
                                void *user);

/* ---- walk.c: the one walk through the tiers (store/tier.h), nearest first ---- */

/* How a fetch makes what no tier has. */
typedef struct cj_maker {
  void *ctx; /* passed to each */
  /* Makes w->key and w->deps (kept by the maker until the walk is over) before the first
   * tier named by the entry key; leaves w->key NULL when the request cannot be keyed
   * completely (having said why), which is then made without any tier. NULL when the
   * caller gave w->key. */
  cujit_status (*keys)(void *ctx, cj_want *w);
  /* Makes the image (*out, a new reference), setting *keep to 0 when it must not be
   * stored; with w->key set, the manifest of the key into `manifest` (left empty when out
   * of memory). */
  cujit_status (*make)(void *ctx, const cj_want *w, cj_image **out, int *keep, cj_buf *manifest);
  /* Readies an image read from a tier's bytes before it is shared (NULL: nothing to do);
   * on failure it drops the image and sets *im to NULL. */
  cujit_status (*finish)(void *ctx, cj_image **im);
} cj_maker;

/* Starts w for the program `name` (borrowed): no keys, no hint, every tier, no directory,
 * no stop.
 * (Field by field: the directory's path, 4 KiB, is written only when it is opened.) */
static inline void cj_want_init(cj_want *w, const char *name) {
  w->name = name;
  w->request = w->key = NULL;
  w->deps = NULL;
  w->hint = NULL;
  w->local = 0;
  w->root.fd = -1;
  w->stop = NULL;
  w->stop_arg = NULL;
}
/* Closes what a walk left open in w (the disk cache's directory). */
static inline void cj_want_end(cj_want *w) {
  if (w->root.fd >= 0) cj_root_close(&w->root);
}
/* The image of w (*out, a new reference): from the nearest tier that has it, put into the
 * nearer ones; else made by m and put into every tier. Counts this process's hit or miss.
 * Fails as m does, out of memory, or with CUJIT_ERROR_CANCELLED when w->stop ended a
 * wait for another process's or machine's compile of the same key. */
cujit_status cj_walk_fetch(cj_want *w, const cj_maker *m, cj_image **out);
/* The cujit_cache_tier that would give w (keys given), asking each tier without waiting
 * or writing; CUJIT_CACHE_TIER_COMPILE when none has it, with why each tier asked has not
 * (joined by "; ") in why. w->root is left open for the caller (fd -1 when the disk cache
 * cannot be used, or a nearer tier had it). */
int cj_walk_probe(cj_want *w, char *why, size_t why_size);
/* Stores `im` (its source attached), which arrived as the encoded entry `entry` under
 * w->key, in every tier w may use, but in a tier that keeps bytes only where no valid entry
 * is there yet. Trouble is logged, never an error. */
void cj_walk_put(cj_want *w, cj_image *im, const void *entry, size_t len);

/* ---- fetch.c: a compile's request -> image ---- */

cujit_status cj_cache_compile(cj_request *r, cj_image **out);

/* ---- fetchlink.c: a linked program through the tiers, else nvJitLink ---- */

/* One part of a link: a source to compile (its request, with `link` set), or bytes. */
typedef struct cj_link_part {
  cj_request *source; /* NULL for prebuilt bytes */
  cj_link_in in;      /* the bytes (borrowed); for a source, only the name is read */
} cj_link_part;

/* Compiles each source part through the compile cache, then finds the linked image under
 * a key made of every part's bytes (a source's compiled output, which its key made from
 * the source, its headers, its options and NVRTC), the link's target, LTO and options, and
 * nvJitLink's identity, through the tiers as a compile does (memory, disk, remote), else
 * one process per key (and per cluster) links with nvJitLink and stores the entry in every
 * tier. `no_cache` bypasses them all. *out is a new reference. Fails as cj_cache_compile() for a
 * source part, and as cj_link_run(). */
cujit_status cj_cache_link(const cj_link_spec *spec, cj_link_part *parts, size_t n, int no_cache,
                           cj_image **out);

/* ---- adopt.c: an image compiled elsewhere, stored as if compiled here ---- */

/* Stores `im` (its source attached), which arrived as the encoded entry `entry` under the
 * disk key of k, the keys this process computed for request `r`: in the memory cache, and
 * in the disk cache unless a valid entry is there already. Nothing is stored for
 * CUJIT_OPT_NO_CACHE. Cache trouble is logged, never an error; no NVRTC is loaded. */
void cj_cache_adopt(const cj_request *r, const cj_keys *k, cj_image *im, const void *entry,
                    size_t entry_len);

#endif
