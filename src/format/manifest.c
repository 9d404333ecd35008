/* manifest.c - what went into a cache key, part by part. The same parts serve twice:
 * hashed one by one, they are the fingerprint a module blob carries (blob.c), so that an
 * importer whose key differs can say which part does; kept in full, they are the manifest
 * every disk entry records (entry.c), so that a miss can be explained against the nearest
 * entry (cache/explain.c, cache/diff.c) and an entry compiled again from its inputs
 * (cache/verify.c).
 *
 * A manifest, little-endian, each string a u32 length and its bytes:
 *   NVRTC identity, target, program name, working directory (for messages)
 *   u64 source length, source text
 *   u32 toolkit searched (0 or 1), 16 bytes: hash of CUDA_PATH and CUDA_HOME
 *   u32 number of parts (CJ_NPARTS), then per part: u32 item count, u64 byte length, items
 *     (each a u64 length and its bytes; in-memory headers: name, then text)
 *   u32 number of headers from disk, then per header: path, u64 size, 16-byte XXH3-128
 * Every length is checked against what is left before it is used. */
#define _GNU_SOURCE /* getcwd's PATH_MAX */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/entry.h"

static const char *const part_names[CJ_NPARTS] =
    {"include directories", "defines",
     "NVRTC options",       "in-memory headers",
     "name expressions",    "toolkit include directories searched (CUJIT_OPT_NO_TOOLKIT_INCLUDES)"};

const char *cj_part_name(int part) {
  return part >= 0 && part < CJ_NPARTS ? part_names[part] : "?";
}

/* ---- serialising a request's parts ---- */

static void put_le(cj_buf *b, uint64_t v, int bytes) {
  unsigned char x[8];
  int i;
  for (i = 0; i < bytes; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, (size_t)bytes);
}

static void put_item(cj_buf *b, const char *s) {
  put_le(b, strlen(s), 8);
  cj_buf_puts(b, s);
}

static void put_str(cj_buf *b, const char *s, size_t n) {
  put_le(b, n, 4);
  cj_buf_append(b, s, n);
}

/* NVRTC's own cache changes how long a compile takes, never its output (as in the key). */
static int is_nvrtc_cache_option(const char *o) {
  return strcmp(o, "-no-cache") == 0 || strcmp(o, "--no-cache") == 0;
}

/* Serialises part `part` of r into b and returns its item count. */
static uint32_t serialise(const cj_request *r, int part, cj_buf *b) {
  size_t i, n = 0;
  switch (part) {
    case CJ_PART_INCLUDE_DIRS:
      for (n = 0; n < cj_request_include_count(r); n++) put_item(b, cj_request_include_dir(r, n));
      break;
    case CJ_PART_DEFINES:
      for (n = 0; n < r->n_defines; n++) put_item(b, r->defines[n]);
      break;
    case CJ_PART_NVRTC_OPTIONS:
      for (i = 0; i < r->n_user_options; i++)
        if (!is_nvrtc_cache_option(r->user_options[i])) put_item(b, r->user_options[i]), n++;
      break;
    case CJ_PART_HEADERS:
      for (n = 0; n < r->n_headers; n++) {
        put_item(b, r->headers[n].name);
        put_item(b, r->headers[n].source);
      }
      break;
    case CJ_PART_NAME_EXPRS:
      for (n = 0; n < r->n_name_exprs; n++) put_item(b, r->name_exprs[n]);
      break;
    default: /* CJ_PART_TOOLKIT */ n = r->toolkit != 0; break;
  }
  return (uint32_t)n;
}

cujit_status cj_fingerprint_of(const cj_request *r, const char *nvrtc, cj_fingerprint *fp) {
  cj_buf b = {0};
  int part;
  memset(fp, 0, sizeof *fp);
  fp->nvrtc.p = nvrtc;
  fp->nvrtc.n = strlen(nvrtc);
  fp->arch.p = r->arch;
  fp->arch.n = strlen(r->arch);
  fp->name.p = r->name;
  fp->name.n = strlen(r->name);
  fp->source_len = r->source_len;
  cj_hash128(r->source, r->source_len, fp->source_hash);
  for (part = 0; part < CJ_NPARTS; part++) {
    b.len = 0;
    fp->count[part] = serialise(r, part, &b);
    if (b.oom) break;
    cj_hash128(b.data ? b.data : "", b.len, fp->hash[part]);
  }
  part = b.oom;
  cj_buf_free(&b);
  return part ? cj_fail_oom("fingerprinting a module") : CUJIT_OK;
}

/* ---- manifests ---- */

int cj_manifest_encode(const cj_request *r, const char *nvrtc, const unsigned char toolkit_env[16],
                       const cj_deps *deps, cj_buf *out) {
  char cwd[PATH_MAX];
  cj_buf part = {0};
  size_t i;
  int p;
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
  put_str(out, nvrtc, strlen(nvrtc));
  put_str(out, r->arch, strlen(r->arch));
  put_str(out, r->name, strlen(r->name));
  put_str(out, cwd, strlen(cwd));
  put_le(out, r->source_len, 8);
  cj_buf_append(out, r->source, r->source_len);
  put_le(out, (uint64_t)(r->toolkit != 0), 4);
  cj_buf_append(out, toolkit_env, 16);
  put_le(out, CJ_NPARTS, 4);
  for (p = 0; p < CJ_NPARTS; p++) {
    uint32_t n;
    part.len = 0;
    n = serialise(r, p, &part);
    put_le(out, n, 4);
    put_le(out, part.len, 8);
    cj_buf_append(out, part.data, part.len);
  }
  cj_buf_free(&part);
  put_le(out, deps ? cj_deplist_count_present(deps) : 0, 4);
  for (i = 0; deps && i < deps->n; i++) {
    if (!deps->v[i].present) continue;
    put_str(out, deps->v[i].path, strlen(deps->v[i].path));
    put_le(out, deps->v[i].size, 8);
    cj_buf_append(out, deps->v[i].hash, 16);
  }
  return out->oom || part.oom ? -1 : 0;
}

static void get_text(cj_cursor *c, cj_text *t) {
  uint64_t n = cj_cursor_get(c, 4);
  t->p = (const char *)cj_cursor_take(c, n);
  t->n = t->p ? (size_t)n : 0;
}

/* A part's items must fill its bytes exactly: `count` of them, two for each in-memory
 * header (its name and its text). */
static int part_ok(int p, cj_text part, uint32_t count) {
  size_t pos = 0;
  uint64_t n = 0, want = p == CJ_PART_HEADERS ? 2 * (uint64_t)count : count;
  cj_text item;
  while (cj_manifest_item(part, &pos, &item)) n++;
  return pos == part.n && n == want;
}

static int read_deps(cj_cursor *c, cj_deps *deps) {
  uint64_t n = cj_cursor_get(c, 4), i;
  if (c->bad || n > c->left / 28) return 1; /* each takes at least 4 + 8 + 16 bytes */
  for (i = 0; i < n; i++) {
    cj_text path;
    const unsigned char *hash;
    char *s;
    get_text(c, &path);
    if (c->bad) return 1;
    if (!(s = cj_memdup(path.p ? path.p : "", path.n))) return -1;
    if (cj_deplist_add_absent(deps, s) != 0) {
      cj_free(s);
      return -1;
    }
    cj_free(s);
    deps->v[deps->n - 1].present = 1;
    deps->v[deps->n - 1].size = cj_cursor_get(c, 8);
    if ((hash = cj_cursor_take(c, 16)) != NULL) memcpy(deps->v[deps->n - 1].hash, hash, 16);
  }
  return c->bad ? 1 : 0;
}

int cj_manifest_parse(const void *data, size_t len, cj_manifest *m) {
  cj_cursor c = {data, len, 0};
  const unsigned char *h;
  uint64_t n;
  int p, rc;
  memset(m, 0, sizeof *m);
  get_text(&c, &m->nvrtc);
  get_text(&c, &m->arch);
  get_text(&c, &m->name);
  get_text(&c, &m->cwd);
  n = cj_cursor_get(&c, 8);
  m->source.p = (const char *)cj_cursor_take(&c, n);
  m->source.n = m->source.p ? (size_t)n : 0;
  m->toolkit = cj_cursor_get(&c, 4) != 0;
  if ((h = cj_cursor_take(&c, 16)) != NULL) memcpy(m->toolkit_env, h, 16);
  if (c.bad || cj_cursor_get(&c, 4) != CJ_NPARTS) return 1;
  for (p = 0; p < CJ_NPARTS; p++) {
    m->count[p] = (uint32_t)cj_cursor_get(&c, 4);
    n = cj_cursor_get(&c, 8);
    m->part[p].p = (const char *)cj_cursor_take(&c, n);
    m->part[p].n = m->part[p].p ? (size_t)n : 0;
    if (c.bad || (p != CJ_PART_TOOLKIT && !part_ok(p, m->part[p], m->count[p]))) return 1;
  }
  rc = read_deps(&c, &m->deps);
  if (rc == 0 && c.left) rc = 1;
  if (rc != 0) cj_deplist_clear(&m->deps);
  return rc;
}

void cj_manifest_free(cj_manifest *m) { cj_deplist_clear(&m->deps); }

int cj_manifest_item(cj_text part, size_t *pos, cj_text *item) {
  cj_cursor c;
  uint64_t n;
  if (*pos >= part.n) return 0;
  c.p = (const unsigned char *)part.p + *pos;
  c.left = part.n - *pos;
  c.bad = 0;
  n = cj_cursor_get(&c, 8);
  item->p = (const char *)cj_cursor_take(&c, n);
  if (!item->p) return 0;
  item->n = (size_t)n;
  *pos = part.n - c.left;
  return 1;
}
