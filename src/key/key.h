/* key.h - what goes into a cache key: the request's options and source, the NVRTC it names
 * (found without loading it), the headers it includes from disk, found by scanning its
 * text, and whether those headers are still as they were. Private. */
#ifndef CUJIT_KEY_H
#define CUJIT_KEY_H

#include <stdint.h>

#include "store/store.h"

/* ---- key.c ---- */

/* The options key: everything that changes the output except the source and the
 * contents of headers found on disk (the program name, the resolved target, include
 * directories, defines, NVRTC options, in-memory headers, name expressions, NVRTC's
 * version and the cache format). */
cujit_status cj_key_options(const cj_request *r, cj_key *out);
/* The request key: the options key and the source. Keys the memory cache. */
void cj_key_source(const cj_key *options_key, const char *source, size_t len, cj_key *out);
/* Both steps at once. */
cujit_status cj_key_request(const cj_request *r, cj_key *out);
/* The disk key: the request key plus the path, size and hash of every header found on
 * disk. Names the entry. */
void cj_key_disk(const cj_key *request_key, const cj_deps *deps, cj_key *out);

/* Every key of a request, as a compile computes them: the one way fetch, explain, verify
 * and export key a request. */
typedef struct cj_keys {
  const char *nvrtc; /* the NVRTC the keys name (static storage: toolchain.c) */
  cj_key request;    /* options and source: the memory cache's name for the image */
  cj_key disk;       /* the request key and the headers from disk: the entry's name */
  cj_deps *deps;     /* the headers the source includes from disk; owned (NULL: none) */
} cj_keys;

/* Computes k for request r: the NVRTC its keys name, its request key (taken from
 * `request_key` when the caller has it already, after a memory-cache lookup; else
 * computed), the headers it includes from disk (incscan.c) and its disk key. When r
 * cannot be keyed completely, `bypass` gets the reason, and k has no headers and no disk
 * key: the caller does without the cache. CUJIT_OK, or the failure of finding the NVRTC
 * the keys name (CUJIT_ERROR_NO_NVRTC) or CUJIT_ERROR_OUT_OF_MEMORY. Free with
 * cj_keys_free(), whatever it returned. */
cujit_status cj_keys_compute(const cj_request *r, const cj_key *request_key, cj_keys *k,
                             char *bypass, size_t bypass_size);
void cj_keys_free(cj_keys *k);
/* The manifest of request r keyed as k (the parts of its keys in full, what an entry
 * records) encoded into out: 0, or -1 when out of memory. */
int cj_keys_manifest(const cj_request *r, const cj_keys *k, cj_buf *out);

/* ---- deps.c: whether the headers a key was made from are still as they were ---- */

/* 1 when every header is unchanged (stat, and contents for racy ones) and every absent
 * candidate is still absent. Makes only stat calls unless a header is racy. */
int cj_deps_fresh(const cj_deps *d);
/* The first header that is no longer as recorded (its stat identity, size or contents,
 * or an absent candidate that now exists), or NULL when none changed. Reads every
 * present header: for the check after a compile, where the key was made before NVRTC
 * read the headers. */
const cj_dep *cj_deps_changed(const cj_deps *d);

/* ---- incscan.c: finding the headers a source includes, without preprocessing ---- */

/* Follows every #include (and __has_include) of the source, its pre-included headers and
 * every header found, through in-memory headers, the includer's directory and the include
 * path, the way NVRTC searches them. Headers not found there are toolkit or system headers
 * (covered by NVRTC's version). *deps gets the list (owned by the caller). When the
 * request cannot be keyed completely (an #include whose macro cannot be resolved, an
 * option that reads or writes files), `bypass` gets the reason and the caller compiles
 * without the cache. Returns CUJIT_OK or CUJIT_ERROR_OUT_OF_MEMORY. */
cujit_status cj_scan_request(const cj_request *r, cj_deps **deps, char *bypass, size_t bypass_size);
/* How many bytes the scans of this thread have examined so far, counting each time a byte
 * is looked at again (tests check that a scan stays linear in its input). */
uint64_t cj_scan_bytes_examined(void);

/* ---- toolchain.c: the NVRTC a key names ---- */

/* The NVRTC that cache keys name: the build of the library a compile would load, found
 * without loading it; with no NVRTC on this machine, the one recorded in the cache
 * directory by the last process that wrote an entry there. *name is static storage.
 * CUJIT_ERROR_NO_NVRTC when neither is known. */
cujit_status cj_toolchain_name(const char **name);
/* Records this machine's NVRTC in the cache directory (once per process), after an entry
 * was written there. */
void cj_toolchain_note(const cj_root *r);
/* On a machine where cj_toolchain_name() finds no NVRTC, makes keys name `id` from now on
 * (an imported module's NVRTC, as the cache directory's record is taken otherwise).
 * Does nothing when a name is known already. */
void cj_toolchain_assume(const char *id);

#endif
