/* entry.h - the cache's byte formats, which other processes and machines write: the entry
 * (entry.c), the manifest of what went into its key and the fingerprint a module blob
 * carries (manifest.c), and the list of headers both record (deplist.c). Parsing is a pure
 * function of the bytes, with every length checked before it is used. Private. */
#ifndef CUJIT_FORMAT_ENTRY_H
#define CUJIT_FORMAT_ENTRY_H

#include <stdint.h>
#include <sys/stat.h>

#include "compile/compile.h"

/* Version of the entry format and of the key's serialisation; part of every key. Format 2
 * added the manifest (manifest.c) and the -frandom-seed every compile gets; format 3 the
 * index of the PTX (SYMS) and the padding that lets a hit use the bytes it read in place. */
#define CJ_CACHE_FORMAT 3

/* ---- deplist.c: the user headers a compile depends on (what a key and a manifest hold) ---- */

typedef struct cj_dep {
  char *path;  /* as NVRTC opens it: relative to the working directory unless absolute */
  int present; /* 0: a search candidate that did not exist when scanned */
  int racy;    /* changed so recently that an unchanged stat does not prove it unchanged */
  uint64_t size;
  unsigned char hash[16]; /* XXH3-128 of the contents */
  uint64_t dev, ino;
  int64_t mtime_ns, ctime_ns;
} cj_dep;

typedef struct cj_deps {
  cj_dep *v;
  size_t n, cap;
  int refs; /* references beyond the first (a list made by the scan is shared by
               the compile that made it and the memory cache) */
} cj_deps;

/* Records an existing header (its stat and contents) or a candidate that does not exist.
 * Return 0, or -1 when out of memory. */
int cj_deplist_add_file(cj_deps *d, const char *path, const struct stat *st, const void *text,
                        size_t len);
int cj_deplist_add_absent(cj_deps *d, const char *path);
/* The record of `path` (present or absent), or NULL. */
const cj_dep *cj_deplist_find(const cj_deps *d, const char *path);
/* 1 when the present headers of a and b have the same paths, sizes and hashes, in order. */
int cj_deplist_same_files(const cj_deps *a, const cj_deps *b);
size_t cj_deplist_count_present(const cj_deps *d);
void cj_deplist_clear(cj_deps *d);
/* A new reference to a list from the heap (NULL gives NULL). */
cj_deps *cj_deplist_ref(cj_deps *d);
/* Drops a reference to a list from the heap, freeing it with the last; NULL is fine. */
void cj_deplist_destroy(cj_deps *d);

/* ---- manifest.c: what went into a key, part by part ---- */

/* Bytes that are not NUL-terminated (a view into an entry, a blob or a request). */
typedef struct cj_text {
  const char *p;
  size_t n;
} cj_text;

/* The option parts hashed one by one into a fingerprint and kept item by item in a
 * manifest, in the order a difference is looked for. */
enum {
  CJ_PART_INCLUDE_DIRS,
  CJ_PART_DEFINES,
  CJ_PART_NVRTC_OPTIONS,
  CJ_PART_HEADERS,
  CJ_PART_NAME_EXPRS,
  CJ_PART_TOOLKIT,
  CJ_NPARTS
};
/* "include directories", "defines", ... for messages. */
const char *cj_part_name(int part);

/* A request's parts as hashes only (what a module blob carries). */
typedef struct cj_fingerprint {
  cj_text nvrtc; /* the NVRTC the key names */
  cj_text arch;  /* the target the key names ("" for NVRTC's default) */
  cj_text name;  /* the program name */
  uint64_t source_len;
  unsigned char source_hash[16];
  uint32_t count[CJ_NPARTS];         /* how many items each part has */
  unsigned char hash[CJ_NPARTS][16]; /* XXH3-128 of each part's serialised items */
} cj_fingerprint;

/* The fingerprint of a request whose key names `nvrtc` (strings borrowed). */
cujit_status cj_fingerprint_of(const cj_request *r, const char *nvrtc, cj_fingerprint *fp);

/* A request's parts in full (what a cache entry carries): the fingerprint's parts with
 * their items kept, the source text, the toolkit location and the headers from disk. */
typedef struct cj_manifest {
  cj_text nvrtc, arch, name, cwd, source;
  int toolkit;                   /* the toolkit's headers are searched */
  unsigned char toolkit_env[16]; /* hash of CUDA_PATH and CUDA_HOME (when searched) */
  uint32_t count[CJ_NPARTS];
  cj_text part[CJ_NPARTS]; /* each item a u64 length and its bytes */
  cj_deps deps;            /* the present headers from disk; owned */
} cj_manifest;

/* Serialises the manifest of request r (key naming `nvrtc`, the toolkit's location hashed
 * into `toolkit_env`, headers `deps`, may be NULL) into out. -1 when out of memory. */
int cj_manifest_encode(const cj_request *r, const char *nvrtc, const unsigned char toolkit_env[16],
                       const cj_deps *deps, cj_buf *out);
/* Parses a serialised manifest into m (views into data; deps copied): 0, 1 when malformed,
 * -1 out of memory. Every length is checked. Free with cj_manifest_free(). */
int cj_manifest_parse(const void *data, size_t len, cj_manifest *m);
void cj_manifest_free(cj_manifest *m);
/* The next item of a part (pos starts at 0): 1 with *item, 0 at the end. */
int cj_manifest_item(cj_text part, size_t *pos, cj_text *item);

/* ---- entry.c: the entry file format ---- */

/* What an entry holds besides the image. */
typedef struct cj_entry_meta {
  char name[256]; /* program name (for listings; truncated) */
  int nvrtc_major, nvrtc_minor;
  char arch[32];
  uint64_t ptx_size, cubin_size;
} cj_entry_meta;

#define CJ_ENTRY_HEADER_SIZE 64
#define CJ_ENTRY_MAX_SIZE ((uint64_t)1 << 31) /* larger files are not entries */

/* Serialises an image (and its present deps) under `key` into out, with the encoded
 * manifest (NULL: none recorded) after the payload. -1 when out of memory. */
int cj_entry_encode(const cj_key *key, const cj_image *im, const cj_deps *deps,
                    const cj_entry_meta *meta, const cj_buf *manifest, cj_buf *out);
/* Parses and verifies an entry. Returns 0 with a new image (refs 1) and its recorded deps
 * (paths, sizes, hashes) in *deps; 1 when the bytes are not a valid entry for `key`, with
 * the reason in `why`; -1 when out of memory. Every length is checked before use. */
int cj_entry_decode(const cj_key *key, const void *data, size_t len, cj_image **out, cj_deps *deps,
                    cj_entry_meta *meta, char *why, size_t why_size);
/* As cj_entry_decode(), but `data` (from cj_malloc, 16-byte aligned) passes to the image
 * when it decodes: its PTX, CUBIN and log are then read in place, not copied, and freed
 * with the image. On any other return the caller keeps `data`. */
int cj_entry_decode_owned(const cj_key *key, void *data, size_t len, cj_image **out, cj_deps *deps,
                          cj_entry_meta *meta, char *why, size_t why_size);
/* Reads the header and the metadata section only (for listings); 0 or 1 as above. */
int cj_entry_peek(const void *data, size_t len, cj_key *key, cj_entry_meta *meta);
/* Where an entry of `file_len` bytes keeps its manifest, from its header (at least
 * CJ_ENTRY_HEADER_SIZE bytes): 0 with *offset and *size (0 when none is recorded), or 1
 * when the header is not a valid one of this format. */
int cj_entry_manifest_span(const void *header, uint64_t file_len, uint64_t *offset, uint64_t *size);
/* Checks a manifest read from an entry against its header's checksum: 0, or 1. */
int cj_entry_manifest_check(const void *header, const void *manifest, size_t size);

#endif
