/* verify.c - cujit_cache_verify(): disk entries compiled again from the inputs their
 * manifests record (format/manifest.c) and compared byte for byte. An entry is compiled again
 * only when the key of those inputs, computed now as a compile computes it (this NVRTC,
 * the headers on disk now), is the entry's own key: otherwise its inputs cannot be had
 * any more, and it is skipped with the part that changed. NVRTC's own cache stays off
 * (the request never sets CUJIT_OPT_NVRTC_CACHE), so the bytes compared are compiled. */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"

/* A request rebuilt from a manifest, and the strings it borrows. */
typedef struct rebuilt {
  cj_request r;
  int has_request;
  char *source, *name, *arch;
  char **list[CJ_NPARTS]; /* NULL-terminated items of each list part */
  cujit_header *headers;  /* ended by {NULL, NULL} */
} rebuilt;

static void rebuilt_free(rebuilt *b) {
  size_t i;
  int p;
  if (b->has_request) cj_request_free(&b->r);
  for (p = 0; p < CJ_NPARTS; p++) {
    for (i = 0; b->list[p] && b->list[p][i]; i++) cj_free(b->list[p][i]);
    cj_free(b->list[p]);
  }
  cj_free(b->headers);
  cj_free(b->source);
  cj_free(b->name);
  cj_free(b->arch);
}

static char *dup_text(cj_text t) { return cj_memdup(t.p ? t.p : "", t.n); }

/* The items of a part as a NULL-terminated array of strings. -1 out of memory. */
static int items(cj_text part, uint32_t count, char ***out) {
  size_t pos = 0, i = 0;
  cj_text item;
  if (!(*out = cj_calloc((size_t)count + 1, sizeof(char *)))) return -1;
  while (i < count && cj_manifest_item(part, &pos, &item))
    if (!((*out)[i++] = dup_text(item))) return -1;
  return 0;
}

static cujit_status rebuild(const cj_manifest *m, rebuilt *b) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  size_t i;
  int p;
  if (!(b->source = dup_text(m->source)) || !(b->name = dup_text(m->name)) ||
      !(b->arch = dup_text(m->arch)))
    return cj_fail_oom("verifying the cache");
  for (p = 0; p < CJ_PART_TOOLKIT; p++)
    if (items(m->part[p], p == CJ_PART_HEADERS ? 2 * m->count[p] : m->count[p], &b->list[p]))
      return cj_fail_oom("verifying the cache");
  if (!(b->headers = cj_calloc((size_t)m->count[CJ_PART_HEADERS] + 1, sizeof *b->headers)))
    return cj_fail_oom("verifying the cache");
  for (i = 0; i < m->count[CJ_PART_HEADERS]; i++) {
    b->headers[i].name = b->list[CJ_PART_HEADERS][2 * i];
    b->headers[i].source = b->list[CJ_PART_HEADERS][2 * i + 1];
  }
  o.arch = b->arch[0] ? b->arch : NULL;
  o.include_dirs = (const char *const *)b->list[CJ_PART_INCLUDE_DIRS];
  o.defines = (const char *const *)b->list[CJ_PART_DEFINES];
  o.nvrtc_options = (const char *const *)b->list[CJ_PART_NVRTC_OPTIONS];
  o.headers = b->headers;
  o.name_expressions = (const char *const *)b->list[CJ_PART_NAME_EXPRS];
  o.flags = m->toolkit ? 0 : CUJIT_OPT_NO_TOOLKIT_INCLUDES;
  CJ_TRY(cj_request_init(&b->r, b->source, b->name, &o, NULL));
  b->has_request = 1;
  if (!b->arch[0]) { /* NVRTC's default, whatever device or CUJIT_ARCH is here */
    b->r.arch[0] = '\0';
    b->r.arch_pending = 0;
  }
  return CUJIT_OK;
}

/* What one entry came to. */
typedef struct verdict {
  cujit_cache_verdict v;
  char detail[1024];
  char name[256], arch[32];
} verdict;

static int skip(verdict *out, const char *fmt, const char *a, const char *b) {
  out->v = CUJIT_CACHE_VERDICT_SKIPPED;
  snprintf(out->detail, sizeof out->detail, fmt, a, b);
  return 0;
}

/* Collects the differences into one line. */
static int collect(int part, const char *what, const char *detail, void *user) {
  cj_buf *b = user;
  (void)part;
  (void)what;
  if (b->len) cj_buf_puts(b, "; ");
  cj_buf_puts(b, detail);
  return 0;
}

/* The first byte where a and b differ. */
static size_t first_difference(const void *a, size_t na, const void *b, size_t nb) {
  const unsigned char *x = a, *y = b;
  size_t i, n = na < nb ? na : nb;
  for (i = 0; i < n && x[i] == y[i]; i++) {
  }
  return i;
}

static void compare(const cj_image *was, const cj_image *now, verdict *out) {
  size_t i;
  out->v = CUJIT_CACHE_VERDICT_MISMATCH;
  if (was->ptx_size != now->ptx_size || memcmp(was->ptx, now->ptx, was->ptx_size) != 0) {
    snprintf(out->detail, sizeof out->detail,
             "the PTX differs from byte %zu on (%zu bytes in the "
             "entry, %zu compiled now)",
             first_difference(was->ptx, was->ptx_size, now->ptx, now->ptx_size), was->ptx_size,
             now->ptx_size);
    return;
  }
  if (was->cubin_size != now->cubin_size ||
      (was->cubin_size && memcmp(was->cubin, now->cubin, was->cubin_size) != 0)) {
    snprintf(out->detail, sizeof out->detail,
             "the CUBIN differs from byte %zu on (%zu bytes in "
             "the entry, %zu compiled now)",
             first_difference(was->cubin, was->cubin_size, now->cubin, now->cubin_size),
             was->cubin_size, now->cubin_size);
    return;
  }
  for (i = 0; i < was->n_names && i < now->n_names; i++)
    if (strcmp(was->lowered[i], now->lowered[i]) != 0) {
      snprintf(out->detail, sizeof out->detail,
               "name expression '%s' is lowered to '%s' in "
               "the entry, '%s' now",
               was->name_exprs[i], was->lowered[i], now->lowered[i]);
      return;
    }
  if (was->n_names != now->n_names) {
    snprintf(out->detail, sizeof out->detail, "%zu lowered names in the entry, %zu now",
             was->n_names, now->n_names);
    return;
  }
  out->v = CUJIT_CACHE_VERDICT_MATCH;
}

/* With the inputs rebuilt: the key checked, then the compile and the comparison. */
static int recompile(const cj_key *key, const cj_manifest *m, rebuilt *b, const cj_image *was,
                     verdict *out) {
  char bypass[512];
  cj_keys k;
  cj_buf why = {0}, mine = {0};
  cj_manifest now;
  cj_image *im = NULL;
  cujit_status st = cj_keys_compute(&b->r, NULL, &k, bypass, sizeof bypass);
  if (st != CUJIT_OK) {
    cj_keys_free(&k);
    if (st == CUJIT_ERROR_OUT_OF_MEMORY) return -1;
    return skip(out, "no NVRTC to compile it with (%s)%s", cujit_last_error(), "");
  }
  if (bypass[0]) {
    skip(out, "its inputs cannot be keyed now: %s%s", bypass, "");
  } else if (memcmp(k.disk.b, key->b, sizeof k.disk.b) != 0) {
    if (cj_keys_manifest(&b->r, &k, &mine) == 0 &&
        cj_manifest_parse(mine.data, mine.len, &now) == 0) {
      cj_cache_manifest_diff(m, &now, collect, &why);
      cj_manifest_free(&now);
    }
    snprintf(out->detail, sizeof out->detail, "its inputs are not reproducible here: %s",
             why.len ? why.data
                     : "the key computed now differs (was it compiled in another "
                       "working directory?)");
    out->v = CUJIT_CACHE_VERDICT_SKIPPED;
  } else if (cj_request_prepare(&b->r) != CUJIT_OK || cj_nvrtc_compile(&b->r, &im) != CUJIT_OK) {
    skip(out, "compiling it again failed: %s%s", cujit_last_error(), "");
  } else {
    compare(was, im, out);
  }
  cj_image_unref(im);
  cj_buf_free(&why);
  cj_buf_free(&mine);
  cj_keys_free(&k);
  return 0;
}

/* The entry's manifest, rebuilt into a request and compiled. -1 out of memory. */
static int from_manifest(const cj_key *key, const cj_file *f, const cj_image *was, verdict *out) {
  uint64_t at, size;
  cj_manifest m;
  rebuilt b;
  int rc;
  if (cj_entry_manifest_span(f->data, f->len, &at, &size) != 0 || !size)
    return skip(out, "it records no inputs (written by an older cujit, or by a link)%s%s", "", "");
  if (cj_entry_manifest_check(f->data, f->data + at, (size_t)size) != 0)
    return skip(out, "its manifest is corrupted (checksum mismatch)%s%s", "", "");
  if ((rc = cj_manifest_parse(f->data + at, (size_t)size, &m)) != 0)
    return rc < 0 ? -1 : skip(out, "its manifest is malformed%s%s", "", "");
  memset(&b, 0, sizeof b);
  if (rebuild(&m, &b) != CUJIT_OK) {
    rc = cujit_last_status() == CUJIT_ERROR_OUT_OF_MEMORY ? -1 : 0;
    skip(out, "its recorded options are refused now: %s%s", cujit_last_error(), "");
  } else {
    rc = recompile(key, &m, &b, was, out);
  }
  rebuilt_free(&b);
  cj_manifest_free(&m);
  return rc;
}

static int verify_one(const cj_root *root, const cj_key *key, verdict *out) {
  char why[256];
  cj_entry_path p;
  cj_file f = {0};
  cj_deps deps = {0};
  cj_entry_meta meta;
  cj_image *im = NULL;
  int rc;
  strcpy(out->name, "?");
  strcpy(out->arch, "?");
  if (cj_disk_entry_open(root, key, 0, &p) != 0)
    return skip(out, "its shard cannot be opened%s%s", "", "");
  rc = cj_disk_read_file(&p, &f, why, sizeof why);
  cj_disk_entry_close(&p);
  if (rc != 0) return rc < 0 ? -1 : skip(out, "the entry %s%s", why, "");
  rc = cj_entry_decode(key, f.data, f.len, &im, &deps, &meta, why, sizeof why);
  if (rc == 0) {
    snprintf(out->name, sizeof out->name, "%s", meta.name);
    snprintf(out->arch, sizeof out->arch, "%s", meta.arch);
    rc = from_manifest(key, &f, im, out);
  } else if (rc > 0) {
    rc = skip(out, "it is not a valid entry: it %s%s", why, "");
  }
  cj_image_unref(im);
  cj_deplist_clear(&deps);
  cj_free(f.data);
  return rc;
}

/* Moves a random choice of `sample` keys to the front (a partial shuffle). */
static void choose(cj_entry_key *keys, size_t n, size_t sample) {
  size_t i, j;
  cj_entry_key t;
  for (i = 0; i < sample && i + 1 < n; i++) {
    j = i + (size_t)(cj_random64() % (n - i));
    t = keys[i];
    keys[i] = keys[j];
    keys[j] = t;
  }
}

static void tally(cujit_cache_verify_summary *s, cujit_cache_verdict v) {
  if (v == CUJIT_CACHE_VERDICT_MATCH)
    s->matched++;
  else if (v == CUJIT_CACHE_VERDICT_MISMATCH)
    s->mismatched++;
  else
    s->skipped++;
}

static int report(const cj_key *key, const verdict *v, cujit_cache_verify_fn fn, void *user) {
  cujit_cache_verified e;
  char hex[33];
  if (!fn) return 0;
  cj_hash128_hex(key, hex);
  e.size = sizeof e;
  e.key = hex;
  e.name = v->name;
  e.arch = v->arch;
  e.verdict = v->v;
  e.detail = v->v == CUJIT_CACHE_VERDICT_MATCH ? "" : v->detail;
  return fn(&e, user);
}

static cujit_status verify_all(const cj_root *root, size_t sample, cujit_cache_verify_fn fn,
                               void *user, cujit_cache_verify_summary *s) {
  cj_entry_key *keys = NULL;
  size_t n = 0, i, todo;
  cujit_status st = CUJIT_OK;
  verdict *v;
  int rc = cj_prune_entry_keys(root, &keys, &n);
  if (rc == -2) return cj_fail_oom("listing the cache's entries");
  if (rc != 0)
    return cj_fail(CUJIT_ERROR_CACHE, "cannot read the cache directory '%s'", root->path);
  if (!(v = cj_malloc(sizeof *v))) {
    cj_free(keys);
    return cj_fail_oom("verifying the cache");
  }
  s->entries = n;
  todo = sample && sample < n ? sample : n;
  if (todo < n) choose(keys, n, todo);
  for (i = 0; i < todo; i++) {
    memset(v, 0, sizeof *v);
    if (verify_one(root, &keys[i].key, v) < 0) {
      st = cj_fail_oom("verifying the cache");
      break;
    }
    tally(s, v->v);
    if (report(&keys[i].key, v, fn, user) != 0) break;
  }
  cj_free(v);
  cj_free(keys);
  return st;
}

#define SUMMARY_V1 CJ_SIZE_V1(cujit_cache_verify_summary, skipped)

cujit_status cujit_cache_verify(size_t sample, cujit_cache_verify_fn fn, void *user,
                                cujit_cache_verify_summary *summary) {
  static const char fn_name[] = "cujit_cache_verify";
  cujit_cache_verify_summary own;
  cj_root root;
  cujit_status st;
  memset(&own, 0, sizeof own);
  own.size = sizeof own;
  if (summary)
    CJ_TRY(
        cj_sized_out(fn_name, "cujit_cache_verify_summary", summary, SUMMARY_V1, &own, sizeof own));
  CJ_TRY(cj_root_open_status(&root));
  st = verify_all(&root, sample, fn, user, &own);
  cj_root_close(&root);
  if (st != CUJIT_OK || !summary) return st;
  return cj_sized_out(fn_name, "cujit_cache_verify_summary", summary, SUMMARY_V1, &own, sizeof own);
}
