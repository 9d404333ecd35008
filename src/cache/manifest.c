/* manifest.c - what went into a cache key, part by part. The same parts serve twice:
 * hashed one by one, they are the fingerprint a module blob carries (module/blob.c), so
 * that an importer whose key differs can say which part does; kept in full, they are the
 * manifest every disk entry records (entry.c), so that a miss can be explained against the
 * nearest entry (explain.c) and an entry compiled again from its inputs (verify.c).
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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache/cache.h"

static const char *const part_names[CJ_NPARTS] = {
  "include directories", "defines", "NVRTC options", "in-memory headers", "name expressions",
  "toolkit include directories searched (CUJIT_OPT_NO_TOOLKIT_INCLUDES)"};

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
    default: /* CJ_PART_TOOLKIT */
      n = r->toolkit != 0;
      break;
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

int cj_manifest_encode(const cj_request *r, const char *nvrtc, const cj_deps *deps,
                       cj_buf *out) {
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
  cj_buf_append(out, cj_key_toolkit_env(), 16);
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
  put_le(out, deps ? cj_deps_count_present(deps) : 0, 4);
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
    if (cj_deps_add_absent(deps, s) != 0) {
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
  if (rc != 0) cj_deps_clear(&m->deps);
  return rc;
}

void cj_manifest_free(cj_manifest *m) { cj_deps_clear(&m->deps); }

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

/* ---- differences ---- */

typedef struct differ {
  cj_diff_fn fn;
  void *user;
  unsigned count;
  int stopped;
} differ;

static int same(cj_text a, cj_text b) { return a.n == b.n && (!a.n || memcmp(a.p, b.p, a.n) == 0); }

/* At most 120 bytes of t, anything but printable ASCII as '?', into out. */
static const char *shown(cj_text t, char *out, size_t size) {
  size_t i, max = t.n < 120 ? t.n : 120;
  if (max >= size) max = size - 1;
  for (i = 0; i < max; i++) out[i] = t.p[i] >= 0x20 && t.p[i] < 0x7f ? t.p[i] : '?';
  out[max] = '\0';
  if (max < t.n && max >= 3) memcpy(out + max - 3, "...", 3);
  return out;
}

static void report(differ *d, int part, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(differ *d, int part, const char *what, const char *fmt, ...) {
  char detail[1024];
  va_list ap;
  d->count++;
  if (!d->fn || d->stopped) return;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (d->fn(part, what, detail, d->user) != 0) d->stopped = 1;
}

static const char *target(cj_text t, char *out, size_t size) {
  char s[128];
  if (!t.n) return "NVRTC's default";
  snprintf(out, size, "'%s'", shown(t, s, sizeof s));
  return out;
}

/* The line (from 1) where two texts first differ. */
static size_t first_line(cj_text a, cj_text b) {
  size_t i, line = 1, n = a.n < b.n ? a.n : b.n;
  for (i = 0; i < n && a.p[i] == b.p[i]; i++) line += a.p[i] == '\n';
  return line;
}

static void diff_top(differ *d, const cj_manifest *was, const cj_manifest *now) {
  char a[160], b[160];
  if (!same(was->nvrtc, now->nvrtc))
    report(d, CUJIT_CACHE_PART_NVRTC, "", "NVRTC differs: the entry's is %s, this one is %s",
           shown(was->nvrtc, a, sizeof a), shown(now->nvrtc, b, sizeof b));
  if (!same(was->arch, now->arch))
    report(d, CUJIT_CACHE_PART_ARCH, "", "the target differs: %s in the entry, %s now",
           target(was->arch, a, sizeof a), target(now->arch, b, sizeof b));
  if (!same(was->name, now->name))
    report(d, CUJIT_CACHE_PART_NAME, "", "the program name differs: '%s' in the entry, '%s' now",
           shown(was->name, a, sizeof a), shown(now->name, b, sizeof b));
  if (!same(was->source, now->source))
    report(d, CUJIT_CACHE_PART_SOURCE, "", "the source differs from line %zu on (%zu bytes in "
           "the entry, %zu now)", first_line(was->source, now->source), was->source.n,
           now->source.n);
}

static const cj_dep *find_dep(const cj_deps *d, const char *path) {
  size_t i;
  for (i = 0; i < d->n; i++)
    if (strcmp(d->v[i].path, path) == 0) return &d->v[i];
  return NULL;
}

static void diff_headers(differ *d, const cj_manifest *was, const cj_manifest *now) {
  size_t i;
  for (i = 0; i < now->deps.n; i++) {
    const cj_dep *y = &now->deps.v[i], *x = find_dep(&was->deps, y->path);
    if (!x)
      report(d, CUJIT_CACHE_PART_HEADER, y->path, "header '%s' is included now; the entry's "
             "compile did not include it", y->path);
    else if (x->size != y->size || memcmp(x->hash, y->hash, 16) != 0)
      report(d, CUJIT_CACHE_PART_HEADER, y->path, "header '%s' changed (%llu bytes in the "
             "entry, %llu now%s)", y->path, (unsigned long long)x->size,
             (unsigned long long)y->size, x->size == y->size ? ", other contents" : "");
  }
  for (i = 0; i < was->deps.n; i++)
    if (!find_dep(&now->deps, was->deps.v[i].path))
      report(d, CUJIT_CACHE_PART_HEADER, was->deps.v[i].path, "header '%s', included by the "
             "entry's compile, is not included now", was->deps.v[i].path);
}

/* 1 when the part holds this item. */
static int holds(cj_text part, cj_text item) {
  size_t pos = 0;
  cj_text x;
  while (cj_manifest_item(part, &pos, &x))
    if (same(x, item)) return 1;
  return 0;
}

static const int public_part[CJ_NPARTS] = {
  CUJIT_CACHE_PART_INCLUDE_DIRS, CUJIT_CACHE_PART_DEFINES, CUJIT_CACHE_PART_OPTIONS,
  CUJIT_CACHE_PART_MEMORY_HEADERS, CUJIT_CACHE_PART_NAME_EXPRESSIONS, CUJIT_CACHE_PART_TOOLKIT};
static const char *const item_names[CJ_NPARTS] = {
  "include directory", "define", "NVRTC option", "in-memory header", "name expression", ""};

/* A list part: items added and removed, or the same items in another order. */
static void diff_list(differ *d, int p, cj_text was, cj_text now) {
  size_t pos = 0;
  unsigned before = d->count;
  cj_text x;
  char s[160];
  while (cj_manifest_item(now, &pos, &x))
    if (!holds(was, x))
      report(d, public_part[p], shown(x, s, sizeof s), "%s '%s' is given now, not in the entry",
             item_names[p], s);
  pos = 0;
  while (cj_manifest_item(was, &pos, &x))
    if (!holds(now, x))
      report(d, public_part[p], shown(x, s, sizeof s), "%s '%s' was given for the entry, not "
             "now", item_names[p], s);
  if (d->count == before)
    report(d, public_part[p], "", "the %s are the same but in another order (order matters)",
           cj_part_name(p));
}

/* In-memory headers: pairs of name and text. */
static int find_header(cj_text part, cj_text name, cj_text *text) {
  size_t pos = 0;
  cj_text n;
  while (cj_manifest_item(part, &pos, &n) && cj_manifest_item(part, &pos, text))
    if (same(n, name)) return 1;
  return 0;
}

static void diff_memory_headers(differ *d, cj_text was, cj_text now) {
  size_t pos = 0;
  unsigned before = d->count;
  cj_text name, text, other;
  char s[160];
  while (cj_manifest_item(now, &pos, &name) && cj_manifest_item(now, &pos, &text)) {
    shown(name, s, sizeof s);
    if (!find_header(was, name, &other))
      report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, s, "in-memory header '%s' is given now, not "
             "in the entry", s);
    else if (!same(text, other))
      report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, s, "in-memory header '%s' changed from line "
             "%zu on (%zu bytes in the entry, %zu now)", s, first_line(other, text), other.n,
             text.n);
  }
  pos = 0;
  while (cj_manifest_item(was, &pos, &name) && cj_manifest_item(was, &pos, &text))
    if (!find_header(now, name, &other))
      report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, shown(name, s, sizeof s), "in-memory header "
             "'%s' was given for the entry, not now", s);
  if (d->count == before)
    report(d, CUJIT_CACHE_PART_MEMORY_HEADERS, "", "the in-memory headers are the same but in "
           "another order (order matters)");
}

static void diff_toolkit(differ *d, const cj_manifest *was, const cj_manifest *now) {
  if (was->toolkit != now->toolkit)
    report(d, CUJIT_CACHE_PART_TOOLKIT, "", "the toolkit's headers were %s for the entry and "
           "are %s now (CUJIT_OPT_NO_TOOLKIT_INCLUDES)", was->toolkit ? "searched" : "not searched",
           now->toolkit ? "searched" : "not searched");
  else if (now->toolkit && memcmp(was->toolkit_env, now->toolkit_env, 16) != 0)
    report(d, CUJIT_CACHE_PART_TOOLKIT, "", "the toolkit's location differs (env CUDA_PATH or "
           "CUDA_HOME, which choose the toolkit's headers)");
}

unsigned cj_manifest_diff(const cj_manifest *was, const cj_manifest *now, cj_diff_fn fn,
                          void *user) {
  differ d = {fn, user, 0, 0};
  int p;
  diff_top(&d, was, now);
  diff_headers(&d, was, now);
  for (p = 0; p < CJ_PART_TOOLKIT; p++) {
    if (was->count[p] == now->count[p] && same(was->part[p], now->part[p])) continue;
    if (p == CJ_PART_HEADERS) diff_memory_headers(&d, was->part[p], now->part[p]);
    else diff_list(&d, p, was->part[p], now->part[p]);
  }
  diff_toolkit(&d, was, now);
  return d.count;
}
