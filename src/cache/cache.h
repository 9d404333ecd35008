/* cache.h - the kernel cache: the path from a request to an image through the memory cache,
 * the disk cache, the remote tier and NVRTC (fetch.c), linked programs (fetchlink.c), images
 * compiled elsewhere (adopt.c), and questions to the cache (explain.c, verify.c). The
 * keys are key/'s, the stores store/'s and remote/'s. Private; not installed.
 *
 * The flow (fetch.c): request key -> memory cache (revalidated by stat) -> header scan
 * -> disk key -> disk entry (or wait for the process compiling it) -> NVRTC -> store. */
#ifndef CUJIT_CACHE_H
#define CUJIT_CACHE_H

#include "compile/devlink.h"
#include "key/key.h"

/* ---- diff.c: how an entry's manifest differs from a request's ---- */

/* Receives one difference (part is a cujit_cache_part); returns nonzero to stop. */
typedef int (*cj_diff_fn)(int part, const char *what, const char *detail, void *user);
/* Compares an entry's manifest `was` with a request's `now`, calling fn (may be NULL) for
 * each difference found; returns how many. Out of memory for a message is a shorter one. */
unsigned cj_manifest_diff(const cj_manifest *was, const cj_manifest *now, cj_diff_fn fn,
                          void *user);

/* ---- fetch.c: request -> image, through the memory cache, the disk cache, NVRTC ---- */

cujit_status cj_compile(cj_request *r, cj_image **out);
/* Counts a disk lookup in this process and in the directory's statistics (a hit, or a
 * miss that wrote `written` bytes), pruning when the cache grew past its limit. */
void cj_count_disk(const cj_root *root, uint64_t hits, uint64_t misses, uint64_t written);

/* ---- fetchlink.c: a linked program through the memory cache, the disk cache, nvJitLink ---- */

/* One part of a link: a source to compile (its request, with `link` set), or bytes. */
typedef struct cj_link_part {
  cj_request *source; /* NULL for prebuilt bytes */
  cj_link_in in;      /* the bytes (borrowed); for a source, only the name is read */
} cj_link_part;

/* Compiles each source part through the compile cache, then finds the linked image under
 * a key made of every part's bytes (a source's compiled output, which its key made from
 * the source, its headers, its options and NVRTC), the link's target, LTO and options, and
 * nvJitLink's identity: in the memory cache, then the disk cache, else one process per key
 * links with nvJitLink and writes the entry. `no_cache` bypasses both caches. *out is a new
 * reference. Fails as cj_compile() for a source part, and as cj_link_run(). */
cujit_status cj_link(const cj_link_spec *spec, cj_link_part *parts, size_t n, int no_cache,
                     cj_image **out);

/* ---- adopt.c: an image compiled elsewhere, stored as if compiled here ---- */

/* Stores `im` (its source attached), which arrived as the encoded entry `entry` under the
 * disk key of k, the keys this process computed for request `r`: in the memory cache, and
 * in the disk cache unless a valid entry is there already. Nothing is stored for
 * CUJIT_OPT_NO_CACHE. Cache trouble is logged, never an error; no NVRTC is loaded. */
void cj_cache_adopt(const cj_request *r, const cj_keys *k, cj_image *im, const void *entry,
                    size_t entry_len);

#endif
