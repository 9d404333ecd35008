/* blob.h - the bytes cujit_module_export() makes and cujit_module_import() reads: a compiled
 * module as a cache entry (entry.c) under the disk key it was compiled under, and a
 * fingerprint of what it was compiled from, part by part, so that an importer whose key
 * differs can say which part differs. The bytes come from outside: every read is checked. */
#ifndef CUJIT_BLOB_H
#define CUJIT_BLOB_H

#include "format/entry.h"

#define CJ_BLOB_FORMAT 1
#define CJ_BLOB_HEADER_SIZE 40

/* The fingerprint (cj_fingerprint, cj_fingerprint_of) is manifest.c's:
 * an entry's manifest keeps the same parts in full. */

/* A blob of the fingerprint and an encoded entry into out. -1 when out of memory. */
int cj_blob_build(const cj_fingerprint *fp, const cj_buf *entry, cj_buf *out);

/* Parses and verifies a blob's header, checksum and fingerprint: 0 with *fp (views into
 * data) and the entry's bytes; 1 when the bytes are not a whole blob, with the reason in
 * `why` ("is truncated ..."). The entry is decoded by cj_entry_decode(). */
int cj_blob_parse(const void *data, size_t len, cj_fingerprint *fp, const unsigned char **entry,
                  size_t *entry_len, char *why, size_t why_size);

#endif
