/* entry.c - the cache entry format (version CJ_CACHE_FORMAT), little-endian throughout:
 *
 *   header (64 bytes)
 *     0  magic "CUJITKC\x1a"
 *     8  u32 format version
 *    12  u32 header size (64)
 *    16  key (16 bytes: the disk key the entry was written under)
 *    32  u64 payload size
 *    40  u64 checksum: XXH3-64 of header bytes 0..39 followed by the payload
 *    48  u64 manifest size (0: none recorded)
 *    56  u64 manifest checksum: XXH3-64 of header bytes 48..55 followed by the manifest
 *   payload: sections in this order, each a 4-byte tag, u32 0, u64 length, the bytes, then
 *   1 to 16 zero bytes, so that every section starts at a multiple of 16 bytes
 *     META  u32 NVRTC major, u32 NVRTC minor, u32 length + program name
 *     ARCH  target ("sm_90", "compute_90")
 *     PTX   PTX text (no NUL)
 *     CUBN  CUBIN (empty for a PTX-only target)
 *     LOG   NVRTC's log
 *     NAME  u32 count, then per name expression: u32 length + text, u32 length + lowered name
 *     DEPS  u32 count, then per header: u32 length + path, u64 size, 16-byte XXH3-128
 *     SYMS  what lookups need of the PTX (compile/symbols.h), empty when it has none:
 *           u32 index version, u32 kernel count, u32 variable count, u32 parameters in
 *           all, u32 bytes of all symbols with a NUL each; per kernel: u32 length +
 *           symbol, u32 1 when its parameters were read (else 0), u32 parameter count,
 *           then per parameter u32 offset, size, alignment, and 1 when declared as bytes
 *           (an aggregate: else 0); per variable: u32 length + symbol
 *   manifest: what went into the key, part by part (manifest.c), after the payload
 *
 * A hit reads the payload only: the manifest has its own checksum, checked by those who
 * read it (explaining a miss, verifying entries), and the payload's checksum leaves it out.
 * The padding lets a hit use the bytes it read in place: each text ends in a NUL, the
 * CUBIN lies where the driver may read it as words (cj_entry_decode_owned). An index of
 * another version than this cujit's is not used (the PTX is read instead).
 * Entries of an older format (1: 48-byte header, no manifest; 2: no padding, no SYMS) are
 * not entries of this format: a miss, replaced by the next write.
 *
 * Decoding checks every length against what is left before using or allocating it; a
 * file that is short, long, foreign, of another version or fails its checksum is not an
 * entry. tests/data/ holds a golden entry that pins this layout. */
#include <stdio.h>
#include <string.h>

#include "format/entry.h"
#include "compile/symbols.h"

static const unsigned char magic[8] = {'C', 'U', 'J', 'I', 'T', 'K', 'C', 0x1a};

/* ---- writing ---- */

static void put32(cj_buf *b, uint32_t v) {
  unsigned char x[4];
  int i;
  for (i = 0; i < 4; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, 4);
}

static void put64(cj_buf *b, uint64_t v) {
  unsigned char x[8];
  int i;
  for (i = 0; i < 8; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, 8);
}

static void put_lstr(cj_buf *b, const char *s) {
  put32(b, (uint32_t)strlen(s));
  cj_buf_append(b, s, strlen(s));
}

/* Starts a section; returns where its length goes, patched by end_section(). */
static size_t begin_section(cj_buf *b, const char tag[4]) {
  size_t at;
  cj_buf_append(b, tag, 4);
  put32(b, 0);
  at = b->len;
  put64(b, 0);
  return at;
}

/* The zero bytes after a section of `len` bytes: 1 to 16. */
static size_t padding(uint64_t len) { return 16 - (size_t)(len % 16); }

static void end_section(cj_buf *b, size_t at) {
  static const char zeros[16];
  uint64_t len = b->len - at - 8;
  int i;
  if (b->oom) return;
  for (i = 0; i < 8; i++) b->data[at + (size_t)i] = (char)(unsigned char)(len >> (8 * i));
  cj_buf_append(b, zeros, padding(len));
}

static void section(cj_buf *b, const char tag[4], const void *p, size_t n) {
  size_t at = begin_section(b, tag);
  cj_buf_append(b, p, n);
  end_section(b, at);
}

/* Whether a parameter is one a kernel can take: a size and a power-of-two alignment within
 * what PTX allows, at an aligned offset past the end of the parameter before it. The
 * writer checks what it writes as the reader does, so that an entry it wrote always
 * reads. */
static int param_ok(uint64_t offset, uint64_t size, uint64_t align, uint64_t array, uint64_t end) {
  return size && size <= (1u << 24) && align && align <= 65536 && !(align & (align - 1)) &&
         offset % align == 0 && offset >= end && offset <= (1u << 24) && array <= 1;
}

static int params_ok(const cj_ptx_kernel *k) {
  size_t i, end = 0;
  for (i = 0; i < k->nparams; i++) {
    const cj_ptx_param *p = &k->params[i];
    if (!param_ok(p->offset, p->size, p->align, (uint64_t)p->array, end)) return 0;
    end = p->offset + p->size;
  }
  return 1;
}

/* The SYMS section's bytes: the image's index, or one read from its PTX now; nothing when
 * it has no PTX (or it cannot be read for want of memory: a later lookup reads the PTX). */
static void put_index(cj_buf *b, const cj_image *im) {
  cj_ptx_index *own = NULL;
  const cj_ptx_index *x = im->index;
  size_t i, k, n_params = 0, chars = 0;
  if (!x && !im->prebuilt && !im->linked && im->ptx && im->ptx[0])
    x = own = cj_ptx_index_build(im->ptx);
  if (!x) return;
  for (i = 0; i < x->n_kernels; i++) {
    if (x->kernels[i].params_known && params_ok(&x->kernels[i])) n_params += x->kernels[i].nparams;
    chars += strlen(x->kernels[i].name) + 1;
  }
  for (i = 0; i < x->n_globals; i++) chars += strlen(x->globals[i]) + 1;
  put32(b, CJ_PTX_INDEX_VERSION);
  put32(b, (uint32_t)x->n_kernels);
  put32(b, (uint32_t)x->n_globals);
  put32(b, (uint32_t)n_params);
  put32(b, (uint32_t)chars);
  for (i = 0; i < x->n_kernels; i++) {
    const cj_ptx_kernel *kn = &x->kernels[i];
    int known = kn->params_known && params_ok(kn);
    put_lstr(b, kn->name);
    put32(b, (uint32_t)known);
    put32(b, known ? (uint32_t)kn->nparams : 0);
    for (k = 0; known && k < kn->nparams; k++) {
      put32(b, (uint32_t)kn->params[k].offset);
      put32(b, (uint32_t)kn->params[k].size);
      put32(b, (uint32_t)kn->params[k].align);
      put32(b, (uint32_t)kn->params[k].array);
    }
  }
  for (i = 0; i < x->n_globals; i++) put_lstr(b, x->globals[i]);
  cj_free(own);
}

static void payload(cj_buf *b, const cj_image *im, const cj_deps *deps, const cj_entry_meta *m) {
  size_t at, i;
  at = begin_section(b, "META");
  put32(b, (uint32_t)m->nvrtc_major);
  put32(b, (uint32_t)m->nvrtc_minor);
  put_lstr(b, m->name);
  end_section(b, at);
  section(b, "ARCH", im->arch, strlen(im->arch));
  section(b, "PTX ", im->ptx, im->ptx_size);
  section(b, "CUBN", im->cubin, im->cubin_size);
  section(b, "LOG ", im->log, strlen(im->log));
  at = begin_section(b, "NAME");
  put32(b, (uint32_t)im->n_names);
  for (i = 0; i < im->n_names; i++) {
    put_lstr(b, im->name_exprs[i]);
    put_lstr(b, im->lowered[i]);
  }
  end_section(b, at);
  at = begin_section(b, "DEPS");
  put32(b, (uint32_t)cj_deplist_count_present(deps));
  for (i = 0; deps && i < deps->n; i++) {
    if (!deps->v[i].present) continue;
    put_lstr(b, deps->v[i].path);
    put64(b, deps->v[i].size);
    cj_buf_append(b, deps->v[i].hash, sizeof deps->v[i].hash);
  }
  end_section(b, at);
  at = begin_section(b, "SYMS");
  put_index(b, im);
  end_section(b, at);
}

static void patch64(cj_buf *b, size_t at, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++) b->data[at + (size_t)i] = (char)(unsigned char)(v >> (8 * i));
}

int cj_entry_encode(const cj_key *key, const cj_image *im, const cj_deps *deps,
                    const cj_entry_meta *meta, const cj_buf *manifest, cj_buf *out) {
  size_t mlen = manifest ? manifest->len : 0, end;
  cj_buf_append(out, magic, sizeof magic);
  put32(out, CJ_CACHE_FORMAT);
  put32(out, CJ_ENTRY_HEADER_SIZE);
  cj_buf_append(out, key->b, sizeof key->b);
  put64(out, 0); /* payload size, patched below */
  put64(out, 0); /* checksum, patched below */
  put64(out, mlen);
  put64(out, 0); /* manifest checksum, patched below */
  payload(out, im, deps, meta);
  end = out->len;
  if (mlen) cj_buf_append(out, manifest->data, mlen);
  if (out->oom) return -1;
  patch64(out, 32, end - CJ_ENTRY_HEADER_SIZE);
  patch64(out, 40,
          cj_checksum(out->data, 40, out->data + CJ_ENTRY_HEADER_SIZE, end - CJ_ENTRY_HEADER_SIZE));
  patch64(out, 56, cj_checksum(out->data + 48, 8, out->data + end, mlen));
  return 0;
}

/* ---- reading ---- */

/* Opens the next section, which must be `tag`; *sec covers its bytes. Its padding must
 * be zeros. */
static int open_section(cj_cursor *c, const char tag[4], cj_cursor *sec) {
  const unsigned char *t = cj_cursor_take(c, 4), *pad;
  uint64_t len;
  size_t i, n;
  if (!t || memcmp(t, tag, 4) != 0 || cj_cursor_get(c, 4) != 0) return c->bad = 1, -1;
  len = cj_cursor_get(c, 8);
  sec->p = cj_cursor_take(c, len);
  sec->left = (size_t)len;
  n = padding(len);
  pad = sec->p ? cj_cursor_take(c, n) : NULL;
  sec->bad = pad == NULL;
  for (i = 0; pad && i < n; i++) sec->bad |= pad[i] != 0;
  return sec->bad ? (c->bad = 1, -1) : 0;
}

/* A u32-length-prefixed string, copied (NUL-terminated) into *out; -1 out of memory. */
static int get_lstr(cj_cursor *c, char **out) {
  uint64_t n = cj_cursor_get(c, 4);
  const unsigned char *p = cj_cursor_take(c, n);
  *out = NULL;
  if (!p) return 0;
  *out = cj_memdup(p, (size_t)n);
  return *out ? 0 : -1;
}

static int read_meta(cj_cursor *c, cj_entry_meta *m) {
  cj_cursor s;
  uint64_t n;
  const unsigned char *name;
  if (open_section(c, "META", &s) != 0) return -1;
  m->nvrtc_major = (int)cj_cursor_get(&s, 4);
  m->nvrtc_minor = (int)cj_cursor_get(&s, 4);
  n = cj_cursor_get(&s, 4);
  name = cj_cursor_take(&s, n);
  if (!name || s.left) return -1;
  if (n >= sizeof m->name) n = sizeof m->name - 1;
  memcpy(m->name, name, (size_t)n);
  m->name[n] = '\0';
  return 0;
}

static int read_names(cj_cursor *c, cj_image *im) {
  cj_cursor s;
  uint64_t n, i;
  if (open_section(c, "NAME", &s) != 0) return 1;
  n = cj_cursor_get(&s, 4);
  if (s.bad || n > s.left / 8) return 1; /* each name takes at least 8 bytes */
  if (!n) return s.left ? 1 : 0;
  im->name_exprs = cj_calloc((size_t)n, sizeof(char *));
  im->lowered = cj_calloc((size_t)n, sizeof(char *));
  if (!im->name_exprs || !im->lowered) return -1;
  im->n_names = (size_t)n;
  for (i = 0; i < n; i++)
    if (get_lstr(&s, &im->name_exprs[i]) != 0 || get_lstr(&s, &im->lowered[i]) != 0) return -1;
  return s.bad || s.left ? 1 : 0;
}

static int read_deps(cj_cursor *c, cj_deps *deps) {
  cj_cursor s;
  uint64_t n, i;
  if (open_section(c, "DEPS", &s) != 0) return 1;
  n = cj_cursor_get(&s, 4);
  if (s.bad || n > s.left / 28) return 1; /* each takes at least 4 + 8 + 16 bytes */
  for (i = 0; i < n; i++) {
    const unsigned char *hash;
    cj_dep *e;
    char *path = NULL;
    if (get_lstr(&s, &path) != 0 || cj_deplist_add_absent(deps, path ? path : "") != 0) {
      cj_free(path);
      return -1;
    }
    cj_free(path);
    e = &deps->v[deps->n - 1];
    e->present = 1;
    e->size = cj_cursor_get(&s, 8);
    hash = cj_cursor_take(&s, 16);
    if (hash) memcpy(e->hash, hash, 16);
  }
  return s.bad || s.left ? 1 : 0;
}

/* The section's bytes: a copy, or (in_place) the bytes themselves, which its padding
 * ends with a NUL. */
static int copy_section(cj_cursor *c, const char tag[4], int in_place, char **out, size_t *size) {
  cj_cursor s;
  if (open_section(c, tag, &s) != 0) return 1;
  *out = in_place ? (char *)(uintptr_t)s.p : cj_memdup(s.p, s.left);
  if (size) *size = s.left;
  return *out ? 0 : -1;
}

/* ---- the index (SYMS) ---- */

/* A symbol: not empty, no NUL in it. */
static const unsigned char *get_symbol(cj_cursor *c, size_t *len) {
  uint64_t n = cj_cursor_get(c, 4);
  const unsigned char *p = n ? cj_cursor_take(c, n) : NULL;
  if (!p || memchr(p, 0, (size_t)n)) return c->bad = 1, NULL;
  *len = (size_t)n;
  return p;
}

/* One parameter, past the one before it (whose end is *end). */
static int get_param(cj_cursor *c, size_t *end, cj_ptx_param *out) {
  uint64_t offset = cj_cursor_get(c, 4), size = cj_cursor_get(c, 4), align = cj_cursor_get(c, 4),
           array = cj_cursor_get(c, 4);
  if (c->bad || !param_ok(offset, size, align, array, *end)) return c->bad = 1, -1;
  *end = (size_t)(offset + size);
  if (out) {
    out->offset = (size_t)offset;
    out->size = (size_t)size;
    out->align = (size_t)align;
    out->array = (int)array;
  }
  return 0;
}

/* Reads an index's kernels and variables into x, whose room is exactly what its header
 * says they take: 0, or 1 when malformed. */
static int walk_index(cj_cursor c, cj_ptx_index *x) {
  const unsigned char *name;
  uint64_t i, k, np, known;
  size_t len, end;
  for (i = 0; i < x->n_kernels; i++) {
    cj_ptx_kernel *kn = &x->kernels[i];
    if (!(name = get_symbol(&c, &len))) return 1;
    known = cj_cursor_get(&c, 4);
    np = cj_cursor_get(&c, 4);
    if (c.bad || known > 1 || (!known && np)) return 1;
    kn->name = x->kernel_names[i] = cj_ptx_index_put_name(x, (const char *)name, len);
    kn->params_known = (int)known;
    kn->nparams = (size_t)np;
    kn->params = cj_ptx_index_put_params(x, (size_t)np);
    if (!kn->name || !kn->params) return 1;
    for (k = 0, end = 0; k < np; k++)
      if (get_param(&c, &end, &kn->params[k]) != 0) return 1;
  }
  for (i = 0; i < x->n_globals; i++)
    if (!(name = get_symbol(&c, &len)) ||
        !(x->globals[i] = cj_ptx_index_put_name(x, (const char *)name, len)))
      return 1;
  return c.bad || c.left || x->next_param != x->end_param || x->next_char != x->end_char;
}

/* The SYMS section into im->index (left NULL when empty or of another version). */
static int read_index(cj_cursor *c, cj_image *im) {
  cj_cursor s;
  uint64_t nk, ng, np, chars;
  if (open_section(c, "SYMS", &s) != 0) return 1;
  if (!s.left) return 0;
  if (cj_cursor_get(&s, 4) != CJ_PTX_INDEX_VERSION) return s.bad ? 1 : 0;
  nk = cj_cursor_get(&s, 4);
  ng = cj_cursor_get(&s, 4);
  np = cj_cursor_get(&s, 4);
  chars = cj_cursor_get(&s, 4);
  /* each kernel takes at least 13 bytes, a variable 5, a parameter 16, a symbol's byte 1 */
  if (s.bad || nk > s.left / 13 || ng > s.left / 5 || np > s.left / 16 || chars > s.left + nk + ng)
    return 1;
  if (!(im->index = cj_ptx_index_new((size_t)nk, (size_t)ng, (size_t)np, (size_t)chars))) return -1;
  return walk_index(s, im->index);
}

static int read_arch(cj_cursor *c, cj_image *im, cj_entry_meta *m) {
  cj_cursor s;
  if (open_section(c, "ARCH", &s) != 0 || s.left >= sizeof im->arch) return 1;
  memcpy(im->arch, s.p, s.left);
  im->arch[s.left] = '\0';
  memcpy(m->arch, im->arch, sizeof m->arch);
  return 0;
}

/* The payload's sections into im and deps: 0, 1 (malformed) or -1 (out of memory). With
 * in_place, the PTX, CUBIN and log are views into the payload (im->block is its owner). */
static int read_payload(cj_cursor *c, cj_image *im, cj_deps *deps, cj_entry_meta *m, int in_place) {
  char *cubin = NULL;
  int rc;
  if (read_meta(c, m) != 0) return 1;
  if ((rc = read_arch(c, im, m)) != 0) return rc;
  if ((rc = copy_section(c, "PTX ", in_place, &im->ptx, &im->ptx_size)) != 0) return rc;
  if ((rc = copy_section(c, "CUBN", in_place, &cubin, &im->cubin_size)) != 0) return rc;
  im->cubin = (unsigned char *)cubin;
  if (!im->cubin_size) {
    if (!in_place) cj_free(im->cubin);
    im->cubin = NULL;
  }
  if ((rc = copy_section(c, "LOG ", in_place, &im->log, NULL)) != 0) return rc;
  if ((rc = read_names(c, im)) != 0) return rc;
  if ((rc = read_deps(c, deps)) != 0) return rc;
  if ((rc = read_index(c, im)) != 0) return rc;
  m->ptx_size = im->ptx_size;
  m->cubin_size = im->cubin_size;
  return c->left ? 1 : 0;
}

/* Checks the header; on success *body covers the payload. Else 1 with the reason. */
static int check_header(const cj_key *key, const unsigned char *d, size_t len, cj_cursor *body,
                        char *why, size_t why_size) {
  cj_cursor c = {d + 8, len > 8 ? len - 8 : 0, 0};
  uint64_t version, hsize, psize, sum, msize;
  if (len == 0) return snprintf(why, why_size, "is empty"), 1;
  if (len < CJ_ENTRY_HEADER_SIZE || memcmp(d, magic, sizeof magic) != 0)
    return snprintf(why, why_size, "is not a cujit cache entry (%zu bytes)", len), 1;
  version = cj_cursor_get(&c, 4);
  hsize = cj_cursor_get(&c, 4);
  if (version != CJ_CACHE_FORMAT)
    return snprintf(why, why_size, "was written in cache format %llu (this cujit uses %d)",
                    (unsigned long long)version, CJ_CACHE_FORMAT),
           1;
  if (hsize != CJ_ENTRY_HEADER_SIZE)
    return snprintf(why, why_size, "has a header of %llu bytes (expected %d)",
                    (unsigned long long)hsize, CJ_ENTRY_HEADER_SIZE),
           1;
  if (key && memcmp(cj_cursor_take(&c, 16), key->b, 16) != 0)
    return snprintf(why, why_size, "was written for another key"), 1;
  c.p = d + 32;
  c.left = len - 32;
  psize = cj_cursor_get(&c, 8);
  sum = cj_cursor_get(&c, 8);
  msize = cj_cursor_get(&c, 8);
  if (psize > len - CJ_ENTRY_HEADER_SIZE || msize != len - CJ_ENTRY_HEADER_SIZE - psize)
    return snprintf(why, why_size,
                    "is truncated or padded (%zu bytes after the header, which "
                    "says %llu + %llu)",
                    len - CJ_ENTRY_HEADER_SIZE, (unsigned long long)psize,
                    (unsigned long long)msize),
           1;
  if (sum != cj_checksum(d, 40, d + CJ_ENTRY_HEADER_SIZE, (size_t)psize))
    return snprintf(why, why_size, "is corrupted (checksum mismatch)"), 1;
  body->p = d + CJ_ENTRY_HEADER_SIZE;
  body->left = (size_t)psize;
  body->bad = 0;
  return 0;
}

static int decode(const cj_key *key, const void *data, size_t len, int in_place, cj_image **out,
                  cj_deps *deps, cj_entry_meta *meta, char *why, size_t why_size) {
  cj_cursor body;
  cj_image *im;
  int rc;
  *out = NULL;
  memset(meta, 0, sizeof *meta);
  if (check_header(key, data, len, &body, why, why_size) != 0) return 1;
  if (!(im = cj_image_new())) return -1;
  rc = read_payload(&body, im, deps, meta, in_place);
  if (rc == 0) {
    if (in_place) im->block = (void *)(uintptr_t)data, im->block_size = len;
    *out = im;
    return 0;
  }
  if (in_place) im->ptx = im->log = NULL, im->cubin = NULL; /* views: the caller's bytes */
  cj_image_unref(im);
  cj_deplist_clear(deps);
  if (rc > 0) snprintf(why, why_size, "has a malformed payload");
  return rc;
}

int cj_entry_decode(const cj_key *key, const void *data, size_t len, cj_image **out, cj_deps *deps,
                    cj_entry_meta *meta, char *why, size_t why_size) {
  return decode(key, data, len, 0, out, deps, meta, why, why_size);
}

int cj_entry_decode_owned(const cj_key *key, void *data, size_t len, cj_image **out, cj_deps *deps,
                          cj_entry_meta *meta, char *why, size_t why_size) {
  return decode(key, data, len, 1, out, deps, meta, why, why_size);
}

int cj_entry_peek(const void *data, size_t len, cj_key *key, cj_entry_meta *meta) {
  const unsigned char *d = data;
  cj_cursor c;
  memset(meta, 0, sizeof *meta);
  if (len < CJ_ENTRY_HEADER_SIZE + 16 || memcmp(d, magic, sizeof magic) != 0) return 1;
  c.p = d + 8;
  c.left = len - 8;
  c.bad = 0;
  if (cj_cursor_get(&c, 4) != CJ_CACHE_FORMAT || cj_cursor_get(&c, 4) != CJ_ENTRY_HEADER_SIZE)
    return 1;
  memcpy(key->b, d + 16, 16);
  c.p = d + CJ_ENTRY_HEADER_SIZE;
  c.left = len - CJ_ENTRY_HEADER_SIZE;
  if (read_meta(&c, meta) != 0) return 1;
  {
    cj_image tmp;
    memset(&tmp, 0, sizeof tmp);
    if (read_arch(&c, &tmp, meta) != 0) return 1;
  }
  return 0;
}

int cj_entry_manifest_span(const void *header, uint64_t file_len, uint64_t *offset,
                           uint64_t *size) {
  const unsigned char *d = header;
  cj_cursor c = {d + 8, CJ_ENTRY_HEADER_SIZE - 8, 0};
  uint64_t psize, msize;
  if (memcmp(d, magic, sizeof magic) != 0 || file_len < CJ_ENTRY_HEADER_SIZE) return 1;
  if (cj_cursor_get(&c, 4) != CJ_CACHE_FORMAT || cj_cursor_get(&c, 4) != CJ_ENTRY_HEADER_SIZE)
    return 1;
  c.p = d + 32;
  c.left = CJ_ENTRY_HEADER_SIZE - 32;
  psize = cj_cursor_get(&c, 8);
  cj_cursor_get(&c, 8);
  msize = cj_cursor_get(&c, 8);
  if (psize > file_len - CJ_ENTRY_HEADER_SIZE || msize != file_len - CJ_ENTRY_HEADER_SIZE - psize)
    return 1;
  *offset = CJ_ENTRY_HEADER_SIZE + psize;
  *size = msize;
  return 0;
}

int cj_entry_manifest_check(const void *header, const void *manifest, size_t size) {
  const unsigned char *d = header;
  cj_cursor c = {d + 56, 8, 0};
  return cj_cursor_get(&c, 8) == cj_checksum(d + 48, 8, manifest, size) ? 0 : 1;
}
