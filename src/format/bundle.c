/* bundle.c - the bundle format (version CJ_BUNDLE_FORMAT), little-endian throughout; see
 * docs/bundle.md:
 *
 *   header (40 bytes)
 *     0  magic "CUJITBN\x1a"
 *     8  u32 format version
 *    12  u32 header size (40)
 *    16  u64 size of the whole bundle
 *    24  u32 number of entries
 *    28  u32 reserved (0)
 *    32  u64 checksum: XXH3-64 of header bytes 0..31 followed by the entry table
 *   entry table: one 48-byte entry each
 *     0  u32 kind (cj_bundle_kind)
 *     4  u32 reserved (0)
 *     8  16 bytes: target, NUL-padded ("sm_90", "compute_90", or empty)
 *    24  u64 offset of the payload from the start of the bundle
 *    32  u64 payload size
 *    40  u64 XXH3-64 of the payload
 *   payloads, each starting at a multiple of 16, after the table, never overlapping
 *
 * The options entry (CJ_BE_OPTIONS): u32 format (1), text name, text directory (empty for
 * none), u32 flags, then four lists (include directories, defines, NVRTC options, name
 * expressions) each as u32 count and texts, then the in-memory headers as u32 count and
 * (name, source) text pairs. A text is u32 length and bytes, no NUL among them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/bundle.h"
#include "format/code.h"

static const unsigned char magic[8] = {'C', 'U', 'J', 'I', 'T', 'B', 'N', 0x1a};

int cj_bundle_is(const void *data, size_t size) {
  return size >= sizeof magic && memcmp(data, magic, sizeof magic) == 0;
}

const char *cj_bundle_kind_name(uint32_t kind) {
  switch (kind) {
    case CJ_BE_CUBIN: return "CUBIN";
    case CJ_BE_PTX: return "PTX";
    case CJ_BE_BLOB: return "cache entry";
    case CJ_BE_SOURCE: return "source";
    case CJ_BE_OPTIONS: return "options";
    default: return "unknown";
  }
}

/* ---- writing ---- */

static void put_le(cj_buf *b, uint64_t v, int bytes) {
  unsigned char x[8];
  int i;
  for (i = 0; i < bytes; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, (size_t)bytes);
}

static void patch(cj_buf *b, size_t at, uint64_t v, int bytes) {
  int i;
  for (i = 0; i < bytes; i++) b->data[at + (size_t)i] = (char)(unsigned char)(v >> (8 * i));
}

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

int cj_bundle_build(const cj_bundle_part *parts, size_t n, cj_buf *out) {
  static const unsigned char zeros[16];
  size_t i, table = CJ_BUNDLE_HEADER_SIZE, at = align16(table + n * CJ_BUNDLE_ENTRY_SIZE);
  cj_buf_append(out, magic, sizeof magic);
  put_le(out, CJ_BUNDLE_FORMAT, 4);
  put_le(out, CJ_BUNDLE_HEADER_SIZE, 4);
  put_le(out, 0, 8); /* the size, patched below */
  put_le(out, n, 4);
  put_le(out, 0, 4);
  put_le(out, 0, 8); /* the checksum, patched below */
  for (i = 0; i < n; i++) {
    char arch[16] = {0};
    snprintf(arch, sizeof arch, "%s", parts[i].arch);
    put_le(out, parts[i].kind, 4);
    put_le(out, 0, 4);
    cj_buf_append(out, arch, sizeof arch);
    put_le(out, at, 8);
    put_le(out, parts[i].size, 8);
    put_le(out, cj_checksum(parts[i].data, parts[i].size, "", 0), 8);
    at = align16(at + parts[i].size);
  }
  for (i = 0; i < n; i++) {
    cj_buf_append(out, zeros, align16(out->len) - out->len);
    cj_buf_append(out, parts[i].data, parts[i].size);
  }
  if (out->oom) return -1;
  patch(out, 16, out->len, 8);
  table += n * CJ_BUNDLE_ENTRY_SIZE;
  patch(out, 32,
        cj_checksum(out->data, 32, out->data + CJ_BUNDLE_HEADER_SIZE,
                    table - CJ_BUNDLE_HEADER_SIZE),
        8);
  return 0;
}

/* ---- reading ---- */

#define WHY(...) (snprintf(why, why_size, __VA_ARGS__), 1)

typedef struct placed {
  uint64_t offset, size;
  size_t index;
} placed;

static int by_offset(const void *a, const void *b) {
  const placed *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The header: 0 with the entry count, or 1 with the reason. */
static int read_header(const unsigned char *d, size_t size, uint64_t *count, char *why,
                       size_t why_size) {
  cj_cursor c = {d + 8, size - 8, 0};
  uint64_t version, hsize, total, sum;
  if (size < CJ_BUNDLE_HEADER_SIZE)
    return WHY("is truncated (%zu bytes, less than its %d-byte header)", size,
               CJ_BUNDLE_HEADER_SIZE);
  version = cj_cursor_get(&c, 4);
  hsize = cj_cursor_get(&c, 4);
  total = cj_cursor_get(&c, 8);
  *count = cj_cursor_get(&c, 4);
  cj_cursor_get(&c, 4);
  sum = cj_cursor_get(&c, 8);
  if (version != CJ_BUNDLE_FORMAT)
    return WHY("is in bundle format %llu, but this cujit reads format %d: make it again with "
               "this cujit's 'cujit compile --arch'",
               (unsigned long long)version, CJ_BUNDLE_FORMAT);
  if (hsize != CJ_BUNDLE_HEADER_SIZE)
    return WHY("has a header of %llu bytes (expected %d)", (unsigned long long)hsize,
               CJ_BUNDLE_HEADER_SIZE);
  if (total != size)
    return WHY("is %s: %zu bytes, but its header says %llu",
               total > size ? "truncated" : "followed by other bytes", size,
               (unsigned long long)total);
  if (*count > CJ_BUNDLE_MAX_ENTRIES ||
      *count > (size - CJ_BUNDLE_HEADER_SIZE) / CJ_BUNDLE_ENTRY_SIZE)
    return WHY("announces %llu entries, more than its %zu bytes can hold (at most %d)",
               (unsigned long long)*count, size, CJ_BUNDLE_MAX_ENTRIES);
  if (sum != cj_checksum(d, 32, d + CJ_BUNDLE_HEADER_SIZE, (size_t)*count * CJ_BUNDLE_ENTRY_SIZE))
    return WHY("is damaged: the checksum of its header and entry table does not match");
  return 0;
}

/* Whether a code entry's target has its kind's form: sm_90, sm_90a, compute_100f. */
static int code_target(uint32_t kind, const char *arch) {
  const char *prefix = kind == CJ_BE_CUBIN ? "sm_" : "compute_", *rest;
  size_t n = strlen(prefix), digits;
  if (strncmp(arch, prefix, n) != 0) return 0;
  digits = strspn(arch + n, "0123456789");
  rest = arch + n + digits;
  return digits > 0 && digits <= 4 &&
         (!rest[0] || ((rest[0] == 'a' || rest[0] == 'f') && !rest[1]));
}

/* What an entry's payload must be for its kind, checked here so that every reader of a
 * bundle (loading, listing, warming) refuses the same ones: a CUBIN or PTX entry's target
 * and bytes, the source's text, the options entry's form. 0, 1 with the reason, or -1 when
 * out of memory. */
static int payload(const cj_bundle_part *p, size_t i, char *why, size_t why_size) {
  char reason[200];
  cj_bundle_opts o;
  int rc;
  if (p->kind == CJ_BE_SOURCE && (!p->size || memchr(p->data, '\0', p->size)))
    return WHY("has a source entry %zu that is %s", i,
               p->size ? "not text (it holds a NUL "
                         "byte)"
                       : "empty");
  if (p->kind == CJ_BE_OPTIONS) {
    rc = cj_bundle_opts_decode(p->data, p->size, &o, why, why_size);
    cj_bundle_opts_free(&o);
    return rc;
  }
  if (p->kind != CJ_BE_CUBIN && p->kind != CJ_BE_PTX) return 0;
  if (!code_target(p->kind, p->arch))
    return WHY("has a %s entry %zu whose target '%s' is not %s", cj_bundle_kind_name(p->kind), i,
               p->arch, p->kind == CJ_BE_CUBIN ? "sm_XX" : "compute_XX");
  if (cj_prebuilt_code_why(p->kind == CJ_BE_CUBIN ? CJ_PREBUILT_CUBIN : CJ_PREBUILT_PTX, p->data,
                           p->size, reason, sizeof reason) != 0)
    return WHY("has a %s entry %zu (%s) that %s", cj_bundle_kind_name(p->kind), i, p->arch, reason);
  return 0;
}

/* Entry i of the table into *p (payload not yet checked against the others). */
static int read_entry(const unsigned char *d, size_t size, size_t i, size_t table_end,
                      cj_bundle_part *p, placed *pl, char *why, size_t why_size) {
  const unsigned char *e = d + CJ_BUNDLE_HEADER_SIZE + i * CJ_BUNDLE_ENTRY_SIZE;
  cj_cursor c = {e, CJ_BUNDLE_ENTRY_SIZE, 0};
  const unsigned char *arch;
  uint64_t off, len, sum;
  size_t k;
  p->kind = (uint32_t)cj_cursor_get(&c, 4);
  cj_cursor_get(&c, 4);
  arch = cj_cursor_take(&c, 16);
  off = cj_cursor_get(&c, 8);
  len = cj_cursor_get(&c, 8);
  sum = cj_cursor_get(&c, 8);
  if (p->kind < CJ_BE_CUBIN || p->kind > CJ_BE_OPTIONS)
    return WHY("has entry %zu of unknown kind %u (a newer cujit's bundle?)", i, p->kind);
  if (!memchr(arch, '\0', 16)) return WHY("has entry %zu whose target is not terminated", i);
  for (k = 0; arch[k]; k++)
    if (arch[k] < 0x21 || arch[k] > 0x7e)
      return WHY("has entry %zu whose target holds a byte 0x%02x", i, arch[k]);
  memcpy(p->arch, arch, 16);
  if (off < table_end || off > size || len > size - off)
    return WHY("has entry %zu (%s) at bytes %llu..%llu, outside the payloads (%zu..%zu)", i,
               cj_bundle_kind_name(p->kind), (unsigned long long)off,
               (unsigned long long)(off + (len > size ? 0 : len)), table_end, size);
  if (sum != cj_checksum(d + off, (size_t)len, "", 0))
    return WHY("is damaged: entry %zu (%s %s) does not match its checksum", i,
               cj_bundle_kind_name(p->kind), p->arch);
  p->data = d + off;
  p->size = (size_t)len;
  pl->offset = off;
  pl->size = len;
  pl->index = i;
  return 0;
}

static int no_overlap(placed *pl, size_t n, char *why, size_t why_size) {
  size_t i;
  qsort(pl, n, sizeof *pl, by_offset);
  for (i = 1; i < n; i++)
    if (pl[i - 1].offset + pl[i - 1].size > pl[i].offset)
      return WHY("has overlapping entries %zu and %zu", pl[i - 1].index, pl[i].index);
  return 0;
}

int cj_bundle_parse(const void *data, size_t size, cj_bundle_part **parts, size_t *n, char *why,
                    size_t why_size) {
  const unsigned char *d = data;
  uint64_t count;
  cj_bundle_part *p = NULL;
  placed *pl = NULL;
  size_t i, table_end;
  int rc;
  *parts = NULL;
  *n = 0;
  if (!cj_bundle_is(data, size))
    return WHY("is not a cujit bundle (%zu bytes that do not start with its magic)", size);
  if ((rc = read_header(d, size, &count, why, why_size)) != 0) return rc;
  table_end = CJ_BUNDLE_HEADER_SIZE + (size_t)count * CJ_BUNDLE_ENTRY_SIZE;
  p = cj_calloc(count ? (size_t)count : 1, sizeof *p);
  pl = cj_calloc(count ? (size_t)count : 1, sizeof *pl);
  if (!p || !pl) {
    cj_free(p);
    cj_free(pl);
    return -1;
  }
  for (i = 0, rc = 0; i < count && rc == 0; i++) {
    rc = read_entry(d, size, i, table_end, &p[i], &pl[i], why, why_size);
    if (rc == 0) rc = payload(&p[i], i, why, why_size);
  }
  if (rc == 0) rc = no_overlap(pl, (size_t)count, why, why_size);
  cj_free(pl);
  if (rc != 0) {
    cj_free(p);
    return rc;
  }
  *parts = p;
  *n = (size_t)count;
  return 0;
}

/* ---- the options entry ---- */

static void put_text(cj_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_le(b, n, 4);
  cj_buf_append(b, s ? s : "", n);
}

static void put_list(cj_buf *b, const char *const *v, size_t n) {
  size_t i;
  put_le(b, n, 4);
  for (i = 0; i < n; i++) put_text(b, v[i]);
}

int cj_bundle_opts_encode(const cj_request *r, cj_buf *out) {
  size_t i;
  put_le(out, CJ_BUNDLE_OPTIONS_FORMAT, 4);
  put_text(out, r->name);
  put_text(out, r->first_include_dir);
  put_le(out, r->flags, 4);
  put_list(out, r->include_dirs, r->n_include_dirs);
  put_list(out, r->defines, r->n_defines);
  put_list(out, r->user_options, r->n_user_options);
  put_list(out, r->name_exprs, r->n_name_exprs);
  put_le(out, r->n_headers, 4);
  for (i = 0; i < r->n_headers; i++) {
    put_text(out, r->headers[i].name);
    put_text(out, r->headers[i].source);
  }
  return out->oom ? -1 : 0;
}

/* A text of the options entry, copied into o's storage; NULL when malformed (c->bad set)
 * or out of memory (*oom set). */
static char *get_text(cj_cursor *c, cj_bundle_opts *o, int *oom) {
  uint64_t n = cj_cursor_get(c, 4);
  const unsigned char *p = cj_cursor_take(c, n);
  char *s;
  if (!p || memchr(p, '\0', (size_t)n)) {
    c->bad = 1;
    return NULL;
  }
  if (!(s = cj_memdup(p, (size_t)n))) {
    *oom = 1;
    return NULL;
  }
  o->owned[o->n_owned++] = s;
  return s;
}

/* A list of texts, NULL-ended; NULL when malformed or out of memory. Each text takes at
 * least 4 bytes, which bounds the count by the bytes left. */
static char **get_list(cj_cursor *c, cj_bundle_opts *o, int *oom, size_t per_item) {
  uint64_t n = cj_cursor_get(c, 4), i;
  char **v;
  if (c->bad || n > c->left / (4 * per_item)) {
    c->bad = 1;
    return NULL;
  }
  if (!(v = cj_calloc((size_t)n * per_item + 2, sizeof *v))) {
    *oom = 1;
    return NULL;
  }
  o->owned[o->n_owned++] = (char *)v;
  for (i = 0; i < n * per_item; i++)
    if (!(v[i] = get_text(c, o, oom))) return NULL;
  return v;
}

int cj_bundle_opts_decode(const unsigned char *p, size_t n, cj_bundle_opts *o, char *why,
                          size_t why_size) {
  cj_cursor c = {p, n, 0};
  char **headers;
  size_t i;
  int oom = 0;
  memset(o, 0, sizeof *o);
  /* every owned item takes at least 4 bytes of the entry, plus the fixed fields */
  if (!(o->owned = cj_calloc(n / 4 + 16, sizeof *o->owned))) return -1;
  if (cj_cursor_get(&c, 4) != CJ_BUNDLE_OPTIONS_FORMAT && !c.bad)
    return WHY("has an options entry of another format (this cujit reads format %d)",
               CJ_BUNDLE_OPTIONS_FORMAT);
  o->name = get_text(&c, o, &oom);
  o->dir = get_text(&c, o, &oom);
  o->flags = (unsigned)cj_cursor_get(&c, 4);
  if (!oom) o->include_dirs = get_list(&c, o, &oom, 1);
  if (!oom) o->defines = get_list(&c, o, &oom, 1);
  if (!oom) o->nvrtc_options = get_list(&c, o, &oom, 1);
  if (!oom) o->name_expressions = get_list(&c, o, &oom, 1);
  headers = oom ? NULL : get_list(&c, o, &oom, 2);
  if (oom) return -1;
  if (c.bad || c.left || !o->name || !o->name[0]) return WHY("has a malformed options entry");
  if (o->dir && !o->dir[0]) o->dir = NULL;
  for (i = 0; headers[2 * i]; i++) {
  }
  if (!(o->headers = cj_calloc(i + 1, sizeof *o->headers))) return -1;
  o->owned[o->n_owned++] = (char *)o->headers;
  for (i = 0; headers[2 * i]; i++) {
    o->headers[i].name = headers[2 * i];
    o->headers[i].source = headers[2 * i + 1];
  }
  return 0;
}

void cj_bundle_opts_apply(const cj_bundle_opts *b, cujit_options *o) {
  o->include_dirs = (const char *const *)b->include_dirs;
  o->defines = (const char *const *)b->defines;
  o->nvrtc_options = (const char *const *)b->nvrtc_options;
  o->name_expressions = (const char *const *)b->name_expressions;
  o->headers = b->headers;
  o->flags = b->flags;
}

void cj_bundle_opts_free(cj_bundle_opts *o) {
  size_t i;
  if (!o->owned) return;
  for (i = 0; i < o->n_owned; i++) cj_free(o->owned[i]);
  cj_free(o->owned);
  memset(o, 0, sizeof *o);
}
