/* aot.c - ahead of time, for several GPUs: a bundle compiled from one source for several
 * targets (a CUBIN per sm_XX, PTX for the newest, and per target the export blob that
 * warms a cache, with the source and options it came from), warming this machine's cache
 * from one (each target's entry checked as cujit_module_import() checks a blob), and a
 * listing of what any image holds. The format is bundle.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/blob.h"
#include "format/bundle.h"
#include "format/prebuilt.h"
#include "make/frontend.h"

enum { MAX_ARCHS = 64 };
#define OPTIONS_V1 CJ_SIZE_V1(cujit_options, flags)

/* ---- making a bundle ---- */

/* The number in "sm_90a" or "compute_100"; -1 when there is none. */
static long arch_number(const char *arch) {
  const char *u = strchr(arch, '_');
  return u ? strtol(u + 1, NULL, 10) : -1;
}

static cujit_status check_archs(const char *fn, const char *const *archs, size_t n) {
  size_t i, j;
  CJ_CHECK(archs && n > 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: no targets given; pass archs such "
           "as {\"sm_80\", \"sm_90\"} and their number",
           fn);
  CJ_CHECK(n <= MAX_ARCHS, CUJIT_ERROR_INVALID_VALUE,
           "%s: %zu targets, more than the %d a "
           "bundle holds",
           fn, n, MAX_ARCHS);
  for (i = 0; i < n; i++) {
    CJ_CHECK(archs[i] && archs[i][0], CUJIT_ERROR_INVALID_OPTION,
             "%s: target %zu is %s; give "
             "sm_XX (CUBIN and PTX) or compute_XX (PTX only)",
             fn, i, archs[i] ? "empty" : "NULL");
    CJ_CHECK(strlen(archs[i]) < 16 && arch_number(archs[i]) >= 0, CUJIT_ERROR_INVALID_OPTION,
             "%s: target '%s' is not sm_XX or compute_XX", fn, archs[i]);
    for (j = 0; j < i; j++)
      CJ_CHECK(strcmp(archs[i], archs[j]) != 0, CUJIT_ERROR_INVALID_OPTION,
               "%s: target '%s' "
               "is given twice",
               fn, archs[i]);
  }
  return CUJIT_OK;
}

/* What a bundle is made of while it is built. */
typedef struct making {
  cj_module *mods[MAX_ARCHS];
  void *blobs[MAX_ARCHS];
  size_t blob_sizes[MAX_ARCHS];
  char ptx_arch[MAX_ARCHS][16];
  cj_bundle_part parts[4 * MAX_ARCHS + 2];
  size_t n_parts;
  cj_buf options;
} making;

static void add_part(making *mk, uint32_t kind, const char *arch, const void *data, size_t size) {
  cj_bundle_part *p = &mk->parts[mk->n_parts++];
  size_t len = strnlen(arch, sizeof p->arch - 1); /* targets were checked to fit */
  p->kind = kind;
  memcpy(p->arch, arch, len);
  p->arch[len] = '\0';
  p->data = data;
  p->size = size;
}

/* Whether a target carries a suffix ("sm_90a", "sm_100f"): its PTX runs on fewer GPUs. */
static int suffixed(const char *arch) {
  size_t n = strlen(arch);
  return n > 0 && (arch[n - 1] == 'a' || arch[n - 1] == 'f');
}

/* The index of the target whose PTX the bundle carries: the newest, a plain one before a
 * suffixed one (whose PTX later GPUs cannot run), whatever the order given. */
static size_t newest(const char *const *archs, size_t n) {
  size_t i, best = 0;
  for (i = 1; i < n; i++) {
    int plain = !suffixed(archs[i]), best_plain = !suffixed(archs[best]);
    if (plain != best_plain ? plain : arch_number(archs[i]) > arch_number(archs[best])) best = i;
  }
  return best;
}

/* The parts of module i: its CUBIN, its PTX when it is the newest or PTX only, its blob. */
static void add_module(making *mk, const char *const *archs, size_t i, size_t top) {
  const cj_module *m = mk->mods[i];
  const char *arch = m->origin.arch;
  if (m->image->cubin) add_part(mk, CJ_BE_CUBIN, arch, m->image->cubin, m->image->cubin_size);
  if (!m->image->cubin || i == top) {
    snprintf(mk->ptx_arch[i], sizeof mk->ptx_arch[i], "compute_%s", strchr(archs[i], '_') + 1);
    add_part(mk, CJ_BE_PTX, mk->ptx_arch[i], m->image->ptx, m->image->ptx_size);
  }
  add_part(mk, CJ_BE_BLOB, arch, mk->blobs[i], mk->blob_sizes[i]);
}

static cujit_status assemble(making *mk, const char *const *archs, size_t n, void **out,
                             size_t *size) {
  cj_request req;
  cj_buf b = {0};
  size_t i, top = newest(archs, n);
  int rc;
  for (i = 0; i < n; i++) add_module(mk, archs, i, top);
  add_part(mk, CJ_BE_SOURCE, "", mk->mods[0]->source, mk->mods[0]->image->source_len);
  CJ_TRY(cj_origin_request(mk->mods[0], &req));
  rc = cj_bundle_opts_encode(&req, &mk->options);
  cj_request_free(&req);
  if (rc != 0) return cj_fail_oom("making a bundle");
  add_part(mk, CJ_BE_OPTIONS, "", mk->options.data, mk->options.len);
  if (cj_bundle_build(mk->parts, mk->n_parts, &b) != 0) {
    cj_buf_free(&b);
    return cj_fail_oom("making a bundle");
  }
  *size = b.len;
  *out = cj_buf_take(&b);
  return CUJIT_OK;
}

/* Compiles the source for every target at once, as compile jobs (job.c); each module into
 * mk->mods. The failure reported is the first in the order the targets were given, as if
 * they had been compiled one after the other. */
static cujit_status compile_all(making *mk, const char *source, const char *name,
                                cujit_options *own, const char *const *archs, size_t n,
                                const char *dir) {
  cujit_compile_job *jobs[MAX_ARCHS] = {0};
  cujit_module *h;
  cujit_status st = CUJIT_OK, start = CUJIT_OK;
  char *why = NULL;
  size_t i, started;
  for (started = 0; started < n && start == CUJIT_OK; started++) {
    own->arch = archs[started];
    start = cj_job_start_dir(&jobs[started], source, name, own, dir);
  }
  if (start != CUJIT_OK) why = cj_strdup(cujit_last_error()); /* after those started before */
  for (i = 0; i < started && st == CUJIT_OK; i++) {
    if (!jobs[i]) continue;
    if ((st = cujit_compile_job_wait(jobs[i], &h)) == CUJIT_OK) mk->mods[i] = cj_module_find(h);
  }
  for (i = 0; i < started; i++) cujit_compile_job_destroy(jobs[i]); /* cancels the rest */
  if (st == CUJIT_OK && start != CUJIT_OK)
    st = why ? cj_fail(start, "%s", why) : cj_fail_oom("making a bundle");
  cj_free(why);
  return st;
}

static cujit_status make_bundle(const char *fn, void **out, size_t *size, const char *source,
                                const char *name, const cujit_options *opts,
                                const char *const *archs, size_t n, const char *dir) {
  making *mk;
  cujit_options own;
  cujit_status st = CUJIT_OK;
  size_t i;
  CJ_TRY(check_archs(fn, archs, n));
  CJ_TRY(cj_sized_in(fn, "cujit_options", opts, OPTIONS_V1, &own, sizeof own));
  if (!(mk = cj_calloc(1, sizeof *mk))) return cj_fail_oom("making a bundle");
  st = compile_all(mk, source, name, &own, archs, n, dir);
  for (i = 0; i < n && st == CUJIT_OK; i++)
    st = cj_export_module(mk->mods[i], &mk->blobs[i], &mk->blob_sizes[i]);
  if (st == CUJIT_OK) st = assemble(mk, archs, n, out, size);
  for (i = 0; i < n; i++) {
    cj_module_free(mk->mods[i]);
    cj_free(mk->blobs[i]);
  }
  cj_buf_free(&mk->options);
  cj_free(mk);
  return st;
}

static cujit_status check_out(const char *fn, void **out, size_t *size) {
  CJ_CHECK(out && size, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL", fn, !out ? "out" : "size");
  *out = NULL;
  *size = 0;
  return CUJIT_OK;
}

cujit_status cujit_bundle_from_source(void **out, size_t *size, const char *source,
                                      const char *name, const cujit_options *opts,
                                      const char *const *archs, size_t narchs) {
  const char *fn = "cujit_bundle_from_source";
  CJ_TRY(check_out(fn, out, size));
  return make_bundle(fn, out, size, source, name, opts, archs, narchs, NULL);
}

cujit_status cujit_bundle_from_file(void **out, size_t *size, const char *path,
                                    const cujit_options *opts, const char *const *archs,
                                    size_t narchs) {
  const char *fn = "cujit_bundle_from_file";
  char *text, *dir;
  cujit_status st;
  CJ_TRY(check_out(fn, out, size));
  CJ_CHECK(path && path[0], CUJIT_ERROR_FILE, "%s: path is %s", fn, path ? "empty" : "NULL");
  CJ_TRY(check_archs(fn, archs, narchs));
  CJ_TRY(cj_source_file(fn, path, &text, &dir));
  st = make_bundle(fn, out, size, text, path, opts, archs, narchs, dir);
  cj_free(dir);
  cj_free(text);
  return st;
}

/* ---- reading one ---- */

static cujit_status parse(const char *fn, const void *data, size_t size, cj_bundle_part **parts,
                          size_t *n) {
  char why[256];
  int rc;
  CJ_CHECK(data && size, CUJIT_ERROR_INVALID_VALUE, "%s: the bundle is %s", fn,
           !data ? "NULL" : "empty (size 0)");
  rc = cj_bundle_parse(data, size, parts, n, why, sizeof why);
  if (rc < 0) return cj_fail_oom("reading a bundle");
  CJ_CHECK(rc == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: the bundle %s; pass the bytes cujit "
           "compile --arch (or cujit_bundle_from_source) wrote, unchanged",
           fn, why);
  return CUJIT_OK;
}

static const cj_bundle_part *find_kind(const cj_bundle_part *p, size_t n, uint32_t kind) {
  size_t i;
  for (i = 0; i < n; i++)
    if (p[i].kind == kind) return &p[i];
  return NULL;
}

/* ---- warming a cache ---- */

typedef struct warming {
  char *source;
  cj_bundle_opts opts;
  cujit_status first; /* the first refusal */
  char first_why[2048];
} warming;

static cujit_status warm_setup(const char *fn, const cj_bundle_part *p, size_t n, warming *w) {
  const cj_bundle_part *src = find_kind(p, n, CJ_BE_SOURCE), *opt = find_kind(p, n, CJ_BE_OPTIONS);
  char why[256];
  int rc;
  CJ_CHECK(src && opt && find_kind(p, n, CJ_BE_BLOB), CUJIT_ERROR_INVALID_VALUE,
           "%s: the bundle "
           "holds no %s, so it cannot warm a cache: only a bundle made from source (cujit "
           "compile --arch, cujit_bundle_from_source) can",
           fn,
           !src   ? "source"
           : !opt ? "options"
                  : "cache entries");
  if (!(w->source = cj_memdup(src->data, src->size))) return cj_fail_oom("warming a cache");
  rc = cj_bundle_opts_decode(opt->data, opt->size, &w->opts, why, sizeof why);
  if (rc < 0) return cj_fail_oom("warming a cache");
  CJ_CHECK(rc == 0, CUJIT_ERROR_INVALID_VALUE, "%s: the bundle %s", fn, why);
  return CUJIT_OK;
}

/* Stores one target's entry, after import's checks; a refusal is kept in w. */
static int warm_one(warming *w, const cj_bundle_part *blob) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cj_module *m = NULL;
  cujit_status st;
  cj_bundle_opts_apply(&w->opts, &o);
  o.flags &= ~(unsigned)CUJIT_OPT_NO_CACHE;
  o.arch = blob->arch;
  st = cj_export_import_dir(&m, blob->data, blob->size, w->source, w->opts.name, &o, w->opts.dir);
  cj_module_free(m);
  if (st == CUJIT_OK) {
    cj_info("warmed the cache with '%s' for %s", w->opts.name, blob->arch);
    return 1;
  }
  if (w->first == CUJIT_OK) {
    w->first = st;
    snprintf(w->first_why, sizeof w->first_why, "%s", cujit_last_error());
  }
  cj_warn("the cache entry of '%s' for %s was refused: %s", w->opts.name, blob->arch,
          cujit_last_error());
  return 0;
}

cujit_status cujit_bundle_warm(const void *data, size_t size, size_t *stored) {
  const char *fn = "cujit_bundle_warm";
  cj_bundle_part *p = NULL;
  warming w;
  size_t n = 0, i, ok = 0, tried = 0;
  cujit_status st;
  if (stored) *stored = 0;
  memset(&w, 0, sizeof w);
  CJ_TRY(parse(fn, data, size, &p, &n));
  st = warm_setup(fn, p, n, &w);
  for (i = 0; i < n && st == CUJIT_OK; i++) {
    if (p[i].kind != CJ_BE_BLOB) continue;
    tried++;
    ok += (size_t)warm_one(&w, &p[i]);
  }
  if (stored) *stored = ok;
  if (st == CUJIT_OK && w.first != CUJIT_OK)
    st = cj_fail(w.first,
                 "%s: %zu of the bundle's %zu cache entries stored; the first refused: "
                 "%s",
                 fn, ok, tried, w.first_why);
  cj_free(p);
  cj_free(w.source);
  cj_bundle_opts_free(&w.opts);
  return st;
}

/* ---- describing an image ---- */

/* Appends `before`, a string of the bundle's (escaped: it comes from outside and goes to a
 * terminal) and `after`. */
static void put_outside(cj_buf *b, const char *before, const char *s, size_t n, const char *after) {
  cj_buf_puts(b, before);
  cj_buf_escaped(b, s, n);
  cj_buf_puts(b, after);
}

static void describe_blob(cj_buf *b, const cj_bundle_part *p) {
  cj_fingerprint fp;
  const unsigned char *entry;
  size_t entry_len;
  cj_key key;
  cj_entry_meta meta;
  char why[200], hex[33];
  if (cj_blob_parse(p->data, p->size, &fp, &entry, &entry_len, why, sizeof why) != 0 ||
      cj_entry_peek(entry, entry_len, &key, &meta) != 0) {
    cj_buf_printf(b, "  cache entry  %-13s %10zu bytes, unreadable\n", p->arch, p->size);
    return;
  }
  cj_hash128_hex(&key, hex);
  cj_buf_printf(b, "  cache entry  %-13s %10zu bytes, key %s, NVRTC ", p->arch, p->size, hex);
  put_outside(b, "", (const char *)fp.nvrtc.p, fp.nvrtc.n > 200 ? 200 : fp.nvrtc.n, "\n");
}

/* Each string of a NULL-ended list of the options entry, between `before` and `after`. */
static void put_list(cj_buf *b, const char *before, char *const *v, const char *after) {
  size_t i;
  for (i = 0; v[i]; i++) put_outside(b, before, v[i], strlen(v[i]), after);
}

static void describe_options(cj_buf *b, const cj_bundle_part *p) {
  cj_bundle_opts o;
  char why[128];
  size_t i;
  int rc = cj_bundle_opts_decode(p->data, p->size, &o, why, sizeof why);
  if (rc != 0) {
    cj_buf_printf(b, "  options      %s\n", rc < 0 ? "(out of memory)" : why);
    cj_bundle_opts_free(&o);
    return;
  }
  put_outside(b, "  options      name '", o.name, strlen(o.name), "'");
  if (o.dir) put_outside(b, " directory '", o.dir, strlen(o.dir), "'");
  put_list(b, " -I", o.include_dirs, "");
  put_list(b, " -D", o.defines, "");
  for (i = 0; o.headers[i].name; i++)
    put_outside(b, " header '", o.headers[i].name, strlen(o.headers[i].name), "'");
  put_list(b, " name '", o.name_expressions, "'");
  for (i = 0; o.nvrtc_options[i]; i++)
    put_outside(b, i ? " " : " -- ", o.nvrtc_options[i], strlen(o.nvrtc_options[i]), "");
  cj_buf_puts(b, "\n");
  cj_bundle_opts_free(&o);
}

static cujit_status describe_bundle(cj_buf *b, const void *data, size_t size) {
  cj_bundle_part *p;
  size_t n, i;
  CJ_TRY(parse("cujit_image_describe", data, size, &p, &n));
  cj_buf_printf(b, "cujit bundle (format %d), %zu bytes, %zu entries:\n", CJ_BUNDLE_FORMAT, size,
                n);
  for (i = 0; i < n; i++) {
    if (p[i].kind == CJ_BE_BLOB)
      describe_blob(b, &p[i]);
    else if (p[i].kind == CJ_BE_OPTIONS)
      describe_options(b, &p[i]);
    else
      cj_buf_printf(b, "  %-12s %-13s %10zu bytes\n", cj_bundle_kind_name(p[i].kind),
                    p[i].arch[0] ? p[i].arch : "-", p[i].size);
  }
  cj_free(p);
  return CUJIT_OK;
}

static cujit_status describe_fatbin(cj_buf *b, const void *data, size_t size) {
  cj_code *c;
  size_t n, i;
  char name[32];
  CJ_TRY(cj_prebuilt_codes(data, size, CJ_PREBUILT_FATBIN, &c, &n));
  cj_buf_printf(b, "fatbin, %zu bytes, %zu CUBIN or PTX entries:\n", size, n);
  for (i = 0; i < n; i++) {
    cj_code_name(&c[i], name, sizeof name);
    cj_buf_printf(b, "  %-12s %-13s %10zu bytes%s\n",
                  c[i].kind == CJ_PREBUILT_CUBIN ? "CUBIN" : "PTX", name, c[i].size,
                  c[i].compressed ? " (compressed)" : "");
  }
  cj_free(c);
  return CUJIT_OK;
}

cujit_status cujit_image_describe(const void *data, size_t size, const char *name, char **text) {
  cj_prebuilt_kind kind;
  char arch[32];
  cj_buf b = {0};
  cujit_status st = CUJIT_OK;
  CJ_CHECK(text, CUJIT_ERROR_INVALID_VALUE, "cujit_image_describe: text is NULL");
  *text = NULL;
  CJ_CHECK(data && size, CUJIT_ERROR_INVALID_SOURCE, "cujit_image_describe: the image is %s",
           !data ? "NULL" : "empty (size 0)");
  CJ_TRY(cj_prebuilt_inspect(data, size, name ? name : "image", &kind, arch, sizeof arch));
  if (kind == CJ_PREBUILT_BUNDLE)
    st = describe_bundle(&b, data, size);
  else if (kind == CJ_PREBUILT_FATBIN)
    st = describe_fatbin(&b, data, size);
  else
    cj_buf_printf(&b, "%s for %s, %zu bytes\n", kind == CJ_PREBUILT_PTX ? "PTX" : "CUBIN", arch,
                  size);
  if (st == CUJIT_OK && b.oom) st = cj_fail_oom("describing an image");
  if (st == CUJIT_OK) *text = cj_buf_take(&b);
  cj_buf_free(&b);
  return st;
}
