/* blob.c - the module blob format (version CJ_BLOB_FORMAT), little-endian throughout:
 *
 *   header (40 bytes)
 *     0  magic "CUJITMB\x1a"
 *     8  u32 blob format version
 *    12  u32 header size (40)
 *    16  u64 fingerprint size
 *    24  u64 entry size
 *    32  u64 checksum: XXH3-64 of header bytes 0..31 followed by everything after the header
 *   fingerprint
 *     u32 length + NVRTC identity, u32 length + target, u32 length + program name,
 *     u64 source length, 16-byte XXH3-128 of the source,
 *     u32 number of parts (CJ_NPARTS), then per part u32 count + 16-byte XXH3-128
 *   entry: a cache entry (entry.c, its own header and checksum included) holding the
 *     image under the disk key it was compiled under
 *
 * A part's hash covers its items each as a u64 length and bytes (headers: name, then
 * text), so that no two different lists hash the same bytes (manifest.c). */
#include <stdio.h>
#include <string.h>

#include "format/blob.h"

static const unsigned char magic[8] = {'C', 'U', 'J', 'I', 'T', 'M', 'B', 0x1a};

static void put_le(cj_buf *b, uint64_t v, int bytes) {
  unsigned char x[8];
  int i;
  for (i = 0; i < bytes; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, (size_t)bytes);
}

/* ---- writing ---- */

static void put_text(cj_buf *b, cj_text t) {
  put_le(b, t.n, 4);
  cj_buf_append(b, t.p, t.n);
}

static void put_fingerprint(cj_buf *b, const cj_fingerprint *fp) {
  int part;
  put_text(b, fp->nvrtc);
  put_text(b, fp->arch);
  put_text(b, fp->name);
  put_le(b, fp->source_len, 8);
  cj_buf_append(b, fp->source_hash, 16);
  put_le(b, CJ_NPARTS, 4);
  for (part = 0; part < CJ_NPARTS; part++) {
    put_le(b, fp->count[part], 4);
    cj_buf_append(b, fp->hash[part], 16);
  }
}

/* Writes v at b->data + at, little-endian. */
static void patch(cj_buf *b, size_t at, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++) b->data[at + (size_t)i] = (char)(unsigned char)(v >> (8 * i));
}

int cj_blob_build(const cj_fingerprint *fp, const cj_buf *entry, cj_buf *out) {
  size_t fp_size;
  cj_buf_append(out, magic, sizeof magic);
  put_le(out, CJ_BLOB_FORMAT, 4);
  put_le(out, CJ_BLOB_HEADER_SIZE, 4);
  put_le(out, 0, 8); /* fingerprint size, patched below */
  put_le(out, entry->len, 8);
  put_le(out, 0, 8); /* checksum, patched below */
  put_fingerprint(out, fp);
  fp_size = out->len - CJ_BLOB_HEADER_SIZE;
  cj_buf_append(out, entry->data, entry->len);
  if (out->oom) return -1;
  patch(out, 16, fp_size);
  patch(out, 32,
        cj_checksum(out->data, 32, out->data + CJ_BLOB_HEADER_SIZE,
                    out->len - CJ_BLOB_HEADER_SIZE));
  return 0;
}

/* ---- reading ---- */

static void get_text(cj_cursor *c, cj_text *t) {
  uint64_t n = cj_cursor_get(c, 4);
  t->p = (const char *)cj_cursor_take(c, n);
  t->n = t->p ? (size_t)n : 0;
}

/* The fingerprint section: 0, or 1 when malformed. */
static int read_fingerprint(cj_cursor *c, cj_fingerprint *fp) {
  const unsigned char *h;
  int part;
  get_text(c, &fp->nvrtc);
  get_text(c, &fp->arch);
  get_text(c, &fp->name);
  fp->source_len = cj_cursor_get(c, 8);
  if ((h = cj_cursor_take(c, 16)) != NULL) memcpy(fp->source_hash, h, 16);
  if (cj_cursor_get(c, 4) != CJ_NPARTS) return 1;
  for (part = 0; part < CJ_NPARTS; part++) {
    fp->count[part] = (uint32_t)cj_cursor_get(c, 4);
    if ((h = cj_cursor_take(c, 16)) != NULL) memcpy(fp->hash[part], h, 16);
  }
  return c->bad || c->left ? 1 : 0;
}

#define WHY(...) (snprintf(why, why_size, __VA_ARGS__), 1)

int cj_blob_parse(const void *data, size_t len, cj_fingerprint *fp, const unsigned char **entry,
                  size_t *entry_len, char *why, size_t why_size) {
  const unsigned char *d = data;
  cj_cursor c = {d + 8, len > 8 ? len - 8 : 0, 0}, f;
  uint64_t version, hsize, fsize, esize, sum;
  memset(fp, 0, sizeof *fp);
  if (len == 0) return WHY("is empty");
  if (len < sizeof magic || memcmp(d, magic, sizeof magic) != 0)
    return WHY("is not a module blob from cujit_module_export() (%zu bytes that do not start "
               "as one does)",
               len);
  if (len < CJ_BLOB_HEADER_SIZE)
    return WHY("is truncated (%zu bytes, less than its %d-byte header)", len, CJ_BLOB_HEADER_SIZE);
  version = cj_cursor_get(&c, 4);
  hsize = cj_cursor_get(&c, 4);
  fsize = cj_cursor_get(&c, 8);
  esize = cj_cursor_get(&c, 8);
  sum = cj_cursor_get(&c, 8);
  if (version != CJ_BLOB_FORMAT)
    return WHY("was made in blob format %llu (this cujit reads format %d): export and import "
               "with the same cujit version",
               (unsigned long long)version, CJ_BLOB_FORMAT);
  if (hsize != CJ_BLOB_HEADER_SIZE)
    return WHY("has a header of %llu bytes (expected %d)", (unsigned long long)hsize,
               CJ_BLOB_HEADER_SIZE);
  if (fsize > len - CJ_BLOB_HEADER_SIZE || esize != len - CJ_BLOB_HEADER_SIZE - fsize)
    return WHY("is truncated or padded (%zu bytes; its header says %llu + %llu after the "
               "header)",
               len, (unsigned long long)fsize, (unsigned long long)esize);
  if (sum != cj_checksum(d, 32, d + CJ_BLOB_HEADER_SIZE, len - CJ_BLOB_HEADER_SIZE))
    return WHY("is corrupted (checksum mismatch)");
  f.p = d + CJ_BLOB_HEADER_SIZE;
  f.left = (size_t)fsize;
  f.bad = 0;
  if (read_fingerprint(&f, fp) != 0) return WHY("has a malformed fingerprint section");
  *entry = d + CJ_BLOB_HEADER_SIZE + fsize;
  *entry_len = (size_t)esize;
  return 0;
}
