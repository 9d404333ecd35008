/* export.c - compiling once for many processes. cujit_module_export() turns a module
 * compiled from source into a blob (format/blob.c): its image as a cache entry under the disk key
 * it was compiled under, and a fingerprint of what it was compiled from. Another process
 * (an MPI rank that received the blob by broadcast) turns it back into a module with
 * cujit_module_import(), giving the source, name and options it would have compiled: the
 * keys are computed here as the cache computes them (this process's NVRTC, target and
 * headers included) and compared with the blob's, and when they differ the fingerprints
 * say which part does. An imported module goes into the memory and disk caches as a
 * compile's result would (cache/adopt.c). */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "dl/nvrtc.h"
#include "format/blob.h"
#include "make/frontend.h"

/* ---- keys ---- */

/* A request's keys, computed as the cache computes them for a compile (key/key.c). */
static cujit_status compute_keys(const cj_request *r, const char *fn, cj_keys *k) {
  char bypass[512];
  CJ_TRY(cj_keys_compute(r, NULL, k, bypass, sizeof bypass));
  CJ_CHECK(!bypass[0], CUJIT_ERROR_INVALID_VALUE,
           "%s: '%s' cannot be keyed completely (%s), so a blob of it cannot be "
           "checked; compile it on every process with cujit_module_from_source()",
           fn, r->name, bypass);
  return CUJIT_OK;
}

/* ---- export ---- */

static int same_code(const cj_image *a, const cj_image *b) {
  return a->ptx_size == b->ptx_size && memcmp(a->ptx, b->ptx, a->ptx_size) == 0 &&
         a->cubin_size == b->cubin_size &&
         (!a->cubin_size || memcmp(a->cubin, b->cubin, a->cubin_size) == 0);
}

/* The headers are read again for the export. One changed since the module was compiled
 * would be named in the key with contents its image was not compiled from: the memory
 * cache, which knows the headers its image of this request was compiled or checked with,
 * tells when that happened. When it holds this code, its headers are this code's: stale
 * when they are not the ones found now. When it holds other code, compiled from the
 * headers found now, this code is stale. Without an image there is nothing to tell by. */
static cujit_status check_headers(const cj_module *m, const cj_keys *k) {
  cj_deps *held = NULL;
  cj_image *im = cj_memcache_get(&k->request, NULL, &held);
  int same_files = cj_deplist_same_files(held, k->deps);
  int stale = im && (im == m->image || same_code(im, m->image) ? !same_files : same_files);
  cj_image_unref(im);
  cj_deplist_destroy(held);
  if (!stale) return CUJIT_OK;
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "cujit_module_export: a header that '%s' includes changed after the module "
                 "was compiled, so the module is not what its source compiles to now; create "
                 "the module again and export that one",
                 m->name);
}

/* What the entry says besides the image. The NVRTC version is for listings only: a process
 * whose modules all came from the cache has not loaded NVRTC and leaves it 0.0. */
static void entry_meta(const cj_module *m, cj_entry_meta *meta) {
  memset(meta, 0, sizeof *meta);
  snprintf(meta->name, sizeof meta->name, "%s", m->name);
  if (cj_libnvrtc_loaded() &&
      cj_nvrtc_version_cached(&meta->nvrtc_major, &meta->nvrtc_minor) != CUJIT_OK)
    meta->nvrtc_major = meta->nvrtc_minor = 0;
}

static cujit_status encode(const cj_module *m, const cj_request *r, const cj_keys *k, cj_buf *out) {
  cj_fingerprint fp;
  cj_entry_meta meta;
  cj_buf entry = {0}, manifest = {0};
  cujit_status st = CUJIT_OK;
  CJ_TRY(cj_fingerprint_of(r, k->nvrtc, &fp));
  entry_meta(m, &meta);
  /* the entry keeps its manifest, so that an importer's disk cache can explain and verify
   * it as one of its own */
  if (cj_keys_manifest(r, k, &manifest) != 0 ||
      cj_entry_encode(&k->disk, m->image, k->deps, &meta, &manifest, &entry) != 0 ||
      cj_blob_build(&fp, &entry, out) != 0)
    st = cj_fail_oom("exporting a module");
  cj_buf_free(&manifest);
  cj_buf_free(&entry);
  return st;
}

cujit_status cj_export_module(const cj_module *m, void **blob, size_t *size) {
  cj_request req;
  cj_buf out = {0};
  cj_keys k = {0};
  cujit_status st;
  if (blob) *blob = NULL;
  if (size) *size = 0;
  CJ_CHECK(blob && size, CUJIT_ERROR_INVALID_VALUE, "cujit_module_export: %s is NULL",
           !blob ? "blob" : "size");
  CJ_CHECK(m->origin.kept, CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_export: module '%s' was made from prebuilt code, which has no "
           "cache key to check an import by; send the code itself (cujit_module_cubin() "
           "or cujit_module_ptx()) and load it with cujit_module_from_image()",
           m->name);
  CJ_TRY(cj_origin_request(m, &req));
  st = compute_keys(&req, "cujit_module_export", &k);
  if (st == CUJIT_OK) st = check_headers(m, &k);
  if (st == CUJIT_OK) st = encode(m, &req, &k, &out);
  if (st == CUJIT_OK) {
    *size = out.len;
    *blob = cj_buf_take(&out);
  }
  cj_buf_free(&out);
  cj_keys_free(&k);
  cj_request_free(&req);
  return st;
}

cujit_status cujit_module_export(const cujit_module *h, void **blob, size_t *size) {
  cj_module *m;
  if (blob) *blob = NULL;
  if (size) *size = 0;
  CJ_TRY(cj_module_get(h, "cujit_module_export", &m));
  return cj_export_module(m, blob, size);
}

void cujit_free(void *p) { cj_free(p); }

/* ---- import: reading the blob ---- */

/* What a blob holds, read and verified. */
typedef struct received {
  cj_fingerprint fp; /* views into the blob */
  const unsigned char *entry;
  size_t entry_len;
  cj_key key;   /* the disk key the module was compiled under */
  cj_image *im; /* owned until it passes to the module */
  cj_deps deps; /* the headers its compile read, as the entry records them */
} received;

/* The entry goes into the disk cache as it came: its manifest is checked here, as a
 * hit never checks it. */
static int manifest_ok(const unsigned char *entry, size_t len) {
  uint64_t at, size;
  return cj_entry_manifest_span(entry, len, &at, &size) == 0 &&
         cj_entry_manifest_check(entry, entry + at, (size_t)size) == 0;
}

static cujit_status receive(const void *blob, size_t size, received *got) {
  cj_entry_meta meta;
  char why[256];
  int rc;
  CJ_CHECK(cj_blob_parse(blob, size, &got->fp, &got->entry, &got->entry_len, why, sizeof why) == 0,
           CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_import: the blob %s; pass all the bytes cujit_module_export() "
           "gave, unchanged (as MPI_BYTE when broadcasting)",
           why);
  rc = cj_entry_decode(NULL, got->entry, got->entry_len, &got->im, &got->deps, &meta, why,
                       sizeof why);
  if (rc < 0) return cj_fail_oom("importing a module");
  CJ_CHECK(rc <= 0, CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_import: the compiled module in the blob %s; export it again "
           "with the same cujit version",
           why);
  CJ_CHECK(manifest_ok(got->entry, got->entry_len), CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_import: the compiled module in the blob has a corrupted manifest "
           "(checksum mismatch); pass all the bytes cujit_module_export() gave, unchanged");
  cj_entry_peek(got->entry, got->entry_len, &got->key, &meta);
  return CUJIT_OK;
}

/* Bytes from a blob shown in a message: at most 100, anything but printable ASCII as '?'. */
static const char *shown(const char *p, size_t n, char *out, size_t size) {
  size_t i, max = n < 100 ? n : 100;
  if (max >= size) max = size - 1;
  for (i = 0; i < max; i++) out[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
  out[max] = '\0';
  if (max < n && max >= 3) memcpy(out + max - 3, "...", 3);
  return out;
}

static int printable(cj_text t) {
  size_t i;
  for (i = 0; i < t.n; i++)
    if (t.p[i] < 0x20 || t.p[i] >= 0x7f) return 0;
  return t.n > 0;
}

/* A process with no NVRTC at all compiles nothing itself: it takes the blob's NVRTC as the
 * one its keys name, as it takes the one that filled its cache directory. */
static cujit_status choose_nvrtc(const cj_fingerprint *theirs) {
  const char *name;
  char id[512];
  cujit_status st = cj_toolchain_name(&name);
  if (st != CUJIT_ERROR_NO_NVRTC || !printable(theirs->nvrtc) || theirs->nvrtc.n >= sizeof id)
    return st;
  memcpy(id, theirs->nvrtc.p, theirs->nvrtc.n);
  id[theirs->nvrtc.n] = '\0';
  cj_toolchain_assume(id);
  return CUJIT_OK;
}

/* ---- import: what differs ---- */

static int same_text(cj_text a, cj_text b) {
  return a.n == b.n && (!a.n || memcmp(a.p, b.p, a.n) == 0);
}

static const char *target(cj_text t, char *out, size_t size) {
  char s[128];
  if (!t.n) return "NVRTC's default (no arch given and no device)";
  snprintf(out, size, "'%s'", shown(t.p, t.n, s, sizeof s));
  return out;
}

static const cj_dep *next_present(const cj_deps *d, size_t *i) {
  for (; d && *i < d->n; ++*i)
    if (d->v[*i].present) return &d->v[(*i)++];
  return NULL;
}

/* The first header that differs between the blob's compile and this process's; 0 when
 * they are the same. */
static int header_difference(const cj_deps *theirs, const cj_deps *ours, char *out, size_t size) {
  size_t i = 0, j = 0;
  const cj_dep *x, *y;
  char a[128], b[128];
  for (;;) {
    x = next_present(theirs, &i);
    y = next_present(ours, &j);
    if (!x && !y) return 0;
    if (!x || !y || strcmp(x->path, y->path) != 0) break;
    if (x->size != y->size || memcmp(x->hash, y->hash, sizeof x->hash) != 0)
      return snprintf(out, size,
                      "header '%s' differs (%llu bytes where the blob was compiled, "
                      "%llu here%s)",
                      y->path, (unsigned long long)x->size, (unsigned long long)y->size,
                      x->size == y->size ? ", other contents" : ""),
             1;
  }
  if (!x)
    return snprintf(out, size,
                    "header '%s' is included here but was not where the blob "
                    "was compiled",
                    y->path),
           1;
  shown(x->path, strlen(x->path), a, sizeof a);
  if (!y)
    return snprintf(out, size,
                    "header '%s', included where the blob was compiled, is "
                    "not found here",
                    a),
           1;
  return snprintf(out, size, "the headers differ: '%s' where the blob was compiled, '%s' here", a,
                  shown(y->path, strlen(y->path), b, sizeof b)),
         1;
}

/* Which part of what was compiled differs, in the order of the cache key. */
static void what_differs(const cj_fingerprint *theirs, const cj_fingerprint *ours,
                         const received *got, const cj_keys *k, char *out, size_t size) {
  char a[128], b[128];
  int part;
  if (!same_text(theirs->nvrtc, ours->nvrtc)) {
    snprintf(out, size,
             "NVRTC differs (the blob's: %s; here: %s): give every process the same "
             "NVRTC library (CUJIT_NVRTC, LD_LIBRARY_PATH)",
             shown(theirs->nvrtc.p, theirs->nvrtc.n, a, sizeof a), ours->nvrtc.p);
    return;
  }
  if (!same_text(theirs->arch, ours->arch)) {
    snprintf(out, size,
             "the target architecture differs (the blob's: %s; here: %s): pass the "
             "same cujit_options.arch everywhere, or export one blob per kind of GPU",
             target(theirs->arch, a, sizeof a), target(ours->arch, b, sizeof b));
    return;
  }
  if (!same_text(theirs->name, ours->name)) {
    snprintf(out, size, "the program name differs (the blob's: '%s'; here: '%s')",
             shown(theirs->name.p, theirs->name.n, a, sizeof a), ours->name.p);
    return;
  }
  for (part = 0; part < CJ_NPARTS; part++) {
    if (theirs->count[part] == ours->count[part] &&
        memcmp(theirs->hash[part], ours->hash[part], 16) == 0)
      continue;
    snprintf(out, size, "the %s differ (the blob's: %u; here: %u%s)", cj_part_name(part),
             (unsigned)theirs->count[part], (unsigned)ours->count[part],
             theirs->count[part] == ours->count[part] ? ", other values" : "");
    return;
  }
  if (theirs->source_len != ours->source_len ||
      memcmp(theirs->source_hash, ours->source_hash, 16) != 0)
    snprintf(out, size, "the source differs (the blob's: %llu bytes; here: %llu bytes%s)",
             (unsigned long long)theirs->source_len, (unsigned long long)ours->source_len,
             theirs->source_len == ours->source_len ? ", other text" : "");
  else if (!header_difference(&got->deps, k->deps, out, size))
    snprintf(out, size,
             "the CUDA toolkit's location differs (env CUDA_PATH or CUDA_HOME, which "
             "choose the toolkit's headers)");
}

static cujit_status mismatch(const cj_request *r, const received *got, const cj_keys *k) {
  cj_fingerprint ours;
  char why[1024];
  CJ_TRY(cj_fingerprint_of(r, k->nvrtc, &ours));
  what_differs(&got->fp, &ours, got, k, why, sizeof why);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "cujit_module_import: the blob does not hold what this process would compile "
                 "for '%s': %s. Import a blob only where the source, name, options, target and "
                 "NVRTC are the exporter's, or compile here with cujit_module_from_source()",
                 r->name, why);
}

/* ---- import ---- */

/* Makes the module once the keys agree, and stores it in the caches. */
static cujit_status make_module(const cj_request *r, received *got, const cj_keys *k,
                                cj_module **out) {
  got->im->source = cj_memdup(r->source, r->source_len);
  got->im->source_len = r->source_len;
  if (!got->im->source) return cj_fail_oom("importing a module");
  CJ_TRY(cj_module_new_kept(got->im, r, r->arch, out));
  cj_cache_adopt(r, k, got->im, got->entry, got->entry_len);
  got->im = NULL; /* the module holds it */
  return CUJIT_OK;
}

cujit_status cj_export_import_dir(cj_module **out, const void *blob, size_t size,
                                  const char *source, const char *name, const cujit_options *opts,
                                  const char *dir) {
  cj_request req;
  received got;
  cj_keys k = {0};
  cujit_status st;
  memset(&got, 0, sizeof got);
  CJ_TRY(cj_request_init(&req, source, name, opts, dir));
  st = receive(blob, size, &got);
  if (st == CUJIT_OK) st = choose_nvrtc(&got.fp);
  if (st == CUJIT_OK) st = compute_keys(&req, "cujit_module_import", &k);
  if (st == CUJIT_OK && memcmp(k.disk.b, got.key.b, sizeof k.disk.b) != 0)
    st = mismatch(&req, &got, &k);
  if (st == CUJIT_OK) st = make_module(&req, &got, &k, out);
  cj_image_unref(got.im);
  cj_deplist_clear(&got.deps);
  cj_keys_free(&k);
  cj_request_free(&req);
  return st;
}

static cujit_status check_blob(const char *fn, cujit_module **out, const void *blob, size_t size) {
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  *out = NULL;
  CJ_CHECK(blob && size, CUJIT_ERROR_INVALID_VALUE,
           "%s: the blob is %s; pass the bytes and size that "
           "cujit_module_export() gave",
           fn, !blob ? "NULL" : "empty (size 0)");
  return CUJIT_OK;
}

cujit_status cujit_module_import(cujit_module **out, const void *blob, size_t size,
                                 const char *source, const char *name, const cujit_options *opts) {
  cj_module *m;
  CJ_TRY(check_blob("cujit_module_import", out, blob, size));
  CJ_TRY(cj_export_import_dir(&m, blob, size, source, name, opts, NULL));
  *out = cj_module_handle(m);
  return CUJIT_OK;
}

cujit_status cujit_module_import_file(cujit_module **out, const void *blob, size_t size,
                                      const char *path, const cujit_options *opts) {
  char *text, *dir;
  cj_module *m = NULL;
  cujit_status st = CUJIT_OK;
  CJ_TRY(check_blob("cujit_module_import_file", out, blob, size));
  CJ_TRY(cj_source_file("cujit_module_import_file", path, &text, &dir));
  st = cj_export_import_dir(&m, blob, size, text, path, opts, dir);
  if (st == CUJIT_OK) *out = cj_module_handle(m);
  cj_free(dir);
  cj_free(text);
  return st;
}
