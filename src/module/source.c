/* source.c - modules compiled from source (cujit_module_from_source, _from_file: the
 * request through the cache, cache/fetch.c), and what each was made from, kept so that
 * cujit_module_export() can name the cache key it was compiled under: the target the key
 * names and a copy of the options (the caller's storage lives only during the compile).
 * The copy lies in the module's own allocation, so that creating a module (on a
 * memory-cache hit, all it allocates) costs no allocation more; with default options there
 * is nothing to copy. */
#include <string.h>

#include "cache/cache.h"
#include "module/module.h"

/* Bytes the strings of a list take, with their NULs. */
static size_t list_chars(const char *const *v, size_t n) {
  size_t i, bytes = 0;
  for (i = 0; i < n; i++) bytes += strlen(v[i]) + 1;
  return bytes;
}

static size_t header_chars(const cujit_header *h, size_t n) {
  size_t i, bytes = 0;
  for (i = 0; i < n; i++) bytes += strlen(h[i].name) + strlen(h[i].source) + 2;
  return bytes;
}

/* Copies s to *chars (advancing it) and returns the copy. */
static const char *put(char **chars, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = *chars;
  memcpy(d, s, n);
  *chars += n;
  return d;
}

/* Copies a list into the pointer array at *ptrs (NULL-terminated), its strings to *chars;
 * an empty list stays NULL. */
static const char *const *put_list(const char ***ptrs, char **chars, const char *const *v,
                                   size_t n) {
  const char **out = *ptrs;
  size_t i;
  if (!n) return NULL;
  for (i = 0; i < n; i++) out[i] = put(chars, v[i]);
  out[n] = NULL;
  *ptrs += n + 1;
  return out;
}

/* Bytes the copy of r's options takes: header pairs, pointer arrays, then characters. */
static size_t copy_bytes(const cj_request *r) {
  size_t n_headers = r->n_headers ? r->n_headers + 1 : 0;
  size_t n_ptrs = r->n_include_dirs + r->n_defines + r->n_user_options + r->n_name_exprs + 4;
  return n_headers * sizeof(cujit_header) + n_ptrs * sizeof(char *) +
         list_chars(r->include_dirs, r->n_include_dirs) + list_chars(r->defines, r->n_defines) +
         list_chars(r->user_options, r->n_user_options) +
         list_chars(r->name_exprs, r->n_name_exprs) + header_chars(r->headers, r->n_headers) +
         (r->first_include_dir ? strlen(r->first_include_dir) + 1 : 0);
}

static void copy_into(cj_origin *o, const cj_request *r, void *block) {
  cujit_header *h = block;
  const char **ptrs = (const char **)(h + (r->n_headers ? r->n_headers + 1 : 0));
  char *chars;
  size_t i;
  chars =
      (char *)(ptrs + r->n_include_dirs + r->n_defines + r->n_user_options + r->n_name_exprs + 4);
  o->opts.include_dirs = put_list(&ptrs, &chars, r->include_dirs, r->n_include_dirs);
  o->opts.defines = put_list(&ptrs, &chars, r->defines, r->n_defines);
  o->opts.nvrtc_options = put_list(&ptrs, &chars, r->user_options, r->n_user_options);
  o->opts.name_expressions = put_list(&ptrs, &chars, r->name_exprs, r->n_name_exprs);
  for (i = 0; i < r->n_headers; i++) {
    h[i].name = put(&chars, r->headers[i].name);
    h[i].source = put(&chars, r->headers[i].source);
  }
  if (r->n_headers) {
    h[r->n_headers].name = h[r->n_headers].source = NULL;
    o->opts.headers = h;
  }
  if (r->first_include_dir) o->first_include_dir = put(&chars, r->first_include_dir);
}

static int has_lists(const cj_request *r) {
  return r->n_include_dirs || r->n_defines || r->n_user_options || r->n_name_exprs ||
         r->n_headers || r->first_include_dir;
}

cujit_status cj_module_new_kept(cj_image *im, const cj_request *r, const char arch[32],
                                cj_module **out) {
  size_t bytes = has_lists(r) ? copy_bytes(r) : 0;
  void *block = NULL;
  cj_origin *o;
  CJ_TRY(cj_module_new_ex(im, r->name, bytes, &block, out));
  o = &(*out)->origin;
  o->kept = 1;
  memcpy(o->arch, arch, sizeof o->arch);
  o->opts.flags = r->flags;
  if (bytes) copy_into(o, r, block);
  return CUJIT_OK;
}

cujit_status cj_origin_request(const cj_module *m, cj_request *r) {
  const cj_origin *o = &m->origin;
  cujit_options opts = o->opts;
  opts.arch = o->arch[0] ? o->arch : NULL;
  CJ_TRY(cj_request_init(r, m->source, m->name, &opts, o->first_include_dir));
  memcpy(r->arch, o->arch, sizeof r->arch); /* "" stays NVRTC's default, whatever the device */
  r->arch_pending = 0;                      /* never compiled: nothing left to check */
  return CUJIT_OK;
}

/* Compiles `source` as cujit_module_from_source() does, with `dir` (may be NULL) first on
 * the include path as for a file. */
static cujit_status module_compile(cj_module **out, const char *source, const char *name,
                                   const cujit_options *opts, const char *dir) {
  cj_request req;
  cj_image *im = NULL;
  char arch[sizeof req.arch];
  cujit_status st;
  CJ_TRY(cj_request_init(&req, source, name, opts, dir));
  memcpy(arch, req.arch, sizeof arch); /* the target the key names: the compile may clamp it */
  st = cj_cache_compile(&req, &im);
  if (st == CUJIT_OK) {
    st = cj_module_new_kept(im, &req, arch, out);
    if (st != CUJIT_OK) cj_image_unref(im);
  }
  cj_request_free(&req);
  return st;
}

cujit_status cujit_module_from_source(cujit_module **out, const char *source, const char *name,
                                      const cujit_options *opts) {
  cj_module *m;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_source: out is NULL");
  *out = NULL;
  CJ_TRY(module_compile(&m, source, name, opts, NULL));
  *out = cj_module_handle(m);
  return CUJIT_OK;
}

cujit_status cujit_module_from_file(cujit_module **out, const char *path,
                                    const cujit_options *opts) {
  char *text, *dir;
  cj_module *m = NULL;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_file: out is NULL");
  *out = NULL;
  CJ_TRY(cj_source_file("cujit_module_from_file", path, &text, &dir));
  st = module_compile(&m, text, path, opts, dir);
  if (st == CUJIT_OK) *out = cj_module_handle(m);
  cj_free(dir);
  cj_free(text);
  return st;
}
