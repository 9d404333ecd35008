/* blob.h - the bytes cujit_module_export() makes and cujit_module_import() reads: a compiled
 * module as a cache entry (cache/entry.c) under the disk key it was compiled under, and a
 * fingerprint of what it was compiled from, part by part, so that an importer whose key
 * differs can say which part differs. The bytes come from outside: every read is checked. */
#ifndef CUJIT_BLOB_H
#define CUJIT_BLOB_H

#include "cache/cache.h"

#define CJ_BLOB_FORMAT 1
#define CJ_BLOB_HEADER_SIZE 40

/* The option parts a fingerprint hashes one by one, in the order a mismatch is looked for. */
enum {
  CJ_PART_INCLUDE_DIRS, CJ_PART_DEFINES, CJ_PART_NVRTC_OPTIONS, CJ_PART_HEADERS,
  CJ_PART_NAME_EXPRS, CJ_PART_TOOLKIT, CJ_NPARTS
};

/* Bytes that are not NUL-terminated (a view into a blob, or into a request). */
typedef struct cj_text {
  const char *p;
  size_t n;
} cj_text;

typedef struct cj_fingerprint {
  cj_text nvrtc;          /* the NVRTC the key names */
  cj_text arch;           /* the target the key names ("" for NVRTC's default) */
  cj_text name;           /* the program name */
  uint64_t source_len;
  unsigned char source_hash[16];
  uint32_t count[CJ_NPARTS];            /* how many items each part has */
  unsigned char hash[CJ_NPARTS][16];    /* XXH3-128 of each part's serialised items */
} cj_fingerprint;

/* The fingerprint of a request whose key names `nvrtc` (strings borrowed). */
cujit_status cj_fingerprint_of(const cj_request *r, const char *nvrtc, cj_fingerprint *fp);

/* A blob of the fingerprint and an encoded entry into out. -1 when out of memory. */
int cj_blob_build(const cj_fingerprint *fp, const cj_buf *entry, cj_buf *out);

/* Parses and verifies a blob's header, checksum and fingerprint: 0 with *fp (views into
 * data) and the entry's bytes; 1 when the bytes are not a whole blob, with the reason in
 * `why` ("is truncated ..."). The entry is decoded by cj_entry_decode(). */
int cj_blob_parse(const void *data, size_t len, cj_fingerprint *fp, const unsigned char **entry,
                  size_t *entry_len, char *why, size_t why_size);

#endif
