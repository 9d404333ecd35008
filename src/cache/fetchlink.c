/* fetchlink.c - a linked program through the tiers. Each source part is compiled (with
 * -rdc=true, and -dlto for link-time optimisation) through the compile cache under its own
 * key; the link's key is then made of what nvJitLink would be given: every part's bytes
 * (hashed), its kind and order, the target, LTO, the caller's link options and the
 * nvJitLink in use. Hashing a source's compiled output covers the source, its headers, its
 * options and NVRTC, as its own key does. The linked image is looked for through the one
 * walk of the tiers (walk.c) as a compile's is: memory, disk, then the remote tier, whose
 * machines share links as they share compiles (the key names nvJitLink's build, so
 * machines with other toolkits do not mix theirs). On a miss one process per key, and one
 * machine per key, links it (the others wait for its entry, as for a compile) and stores
 * the entry, in the format of a compile's, in every tier. */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"

/* The nvJitLink a link key names: its library's build, found without loading it; its
 * version when only the system's search finds it. */
static cujit_status linker_identity(char *out, size_t size) {
  const char *id = cj_nvjitlink_identity();
  unsigned major = 0, minor = 0;
  if (id[0]) {
    snprintf(out, size, "%s", id);
    return CUJIT_OK;
  }
  CJ_TRY(cj_nvjitlink_load());
  cj_link_version(&major, &minor);
  snprintf(out, size, "nvjitlink version %u.%u", major, minor);
  return CUJIT_OK;
}

static void put_u64(cj_buf *b, uint64_t v) {
  unsigned char x[8];
  int i;
  for (i = 0; i < 8; i++) x[i] = (unsigned char)(v >> (8 * i));
  cj_buf_append(b, x, 8);
}

static void put_str(cj_buf *b, const char *s) {
  put_u64(b, strlen(s));
  cj_buf_append(b, s, strlen(s));
}

/* The link key: every field length-prefixed, so that no two links serialise alike. */
static cujit_status link_key(const cj_link_spec *spec, const cj_link_part *parts, size_t n,
                             cj_key *out) {
  char linker[600];
  unsigned char h[16];
  cj_buf b = {0};
  size_t i;
  CJ_TRY(linker_identity(linker, sizeof linker));
  put_str(&b, "cujit link key");
  put_u64(&b, CJ_CACHE_FORMAT);
  put_str(&b, linker);
  put_str(&b, spec->arch);
  put_u64(&b, (uint64_t)spec->lto);
  put_u64(&b, spec->n_options);
  for (i = 0; i < spec->n_options; i++) put_str(&b, spec->options[i]);
  put_u64(&b, n);
  for (i = 0; i < n; i++) {
    put_u64(&b, (uint64_t)parts[i].in.type);
    put_u64(&b, parts[i].in.size);
    cj_hash128(parts[i].in.data, parts[i].in.size, h);
    cj_buf_append(&b, h, sizeof h);
  }
  if (b.oom) {
    cj_buf_free(&b);
    return cj_fail_oom("making a link's cache key");
  }
  cj_hash128(b.data, b.len, out->b);
  cj_buf_free(&b);
  return CUJIT_OK;
}

/* Compiles source part p and points its input at the output: LTO-IR, or a relocatable
 * CUBIN. The image reference goes to *im. */
static cujit_status compile_part(const cj_link_spec *spec, cj_link_part *p, cj_image **im) {
  CJ_TRY(cj_cache_compile(p->source, im));
  CJ_CHECK((*im)->cubin_size > 0, CUJIT_ERROR_INVALID_OPTION,
           "source '%s' of '%s' compiled to PTX only "
           "(for %s); a link needs a real target: give cujit_options.arch as sm_XX",
           p->source->name, spec->name, (*im)->arch[0] ? (*im)->arch : "NVRTC's default");
  p->in.type = cj_image_is_ltoir(*im) ? NVJITLINK_INPUT_LTOIR : NVJITLINK_INPUT_CUBIN;
  p->in.data = (*im)->cubin;
  p->in.size = (*im)->cubin_size;
  return CUJIT_OK;
}

static cujit_status link_now(const cj_link_spec *spec, const cj_link_part *parts, size_t n,
                             cj_image **out) {
  cj_link_in *in = cj_calloc(n ? n : 1, sizeof *in);
  cujit_status st;
  size_t i;
  if (!in) return cj_fail_oom("starting a link");
  CJ_TRACE("cujit: nvJitLink %s", spec->name);
  for (i = 0; i < n; i++) in[i] = parts[i].in;
  cj_count(CJ_COMPILES, 1);
  st = cj_link_run(spec, in, n, out);
  cj_free(in);
  return st;
}

/* What the walk needs to make a link. */
typedef struct linking {
  const cj_link_spec *spec;
  const cj_link_part *parts;
  size_t n;
} linking;

static cujit_status make(void *ctx, const cj_want *w, cj_image **out, int *keep, cj_buf *manifest) {
  const linking *l = ctx;
  (void)w, (void)manifest; /* a link's entry keeps no manifest */
  *keep = 1;
  return link_now(l->spec, l->parts, l->n, out);
}

/* An entry does not say that it holds a link: its key does. */
static cujit_status finish(void *ctx, cj_image **im) {
  (void)ctx;
  (*im)->linked = 1;
  return CUJIT_OK;
}

static cujit_status lookup(const cj_link_spec *spec, const cj_link_part *parts, size_t n,
                           const cj_key *key, cj_image **out) {
  linking l = {spec, parts, n};
  const cj_maker m = {&l, NULL, make, finish};
  cujit_status st;
  cj_want w;
  cj_want_init(&w, spec->name);
  w.request = w.key = key; /* a link has one key, and keeps no headers */
  st = cj_walk_fetch(&w, &m, out);
  cj_want_end(&w);
  return st;
}

/* The target of a link with sources and no target of its own: their compiles'. All
 * sources were compiled with the same options, so they agree. */
static cujit_status sources_arch(cj_link_spec *spec, cj_image *const *compiled, size_t n,
                                 char *arch, size_t size) {
  size_t i;
  for (i = 0; i < n && !arch[0]; i++)
    if (compiled[i]) snprintf(arch, size, "%s", compiled[i]->arch);
  CJ_CHECK(arch[0], CUJIT_ERROR_INVALID_OPTION,
           "'%s' has no target: give cujit_options.arch "
           "as sm_XX",
           spec->name);
  spec->arch = arch;
  return CUJIT_OK;
}

cujit_status cj_cache_link(const cj_link_spec *user_spec, cj_link_part *parts, size_t n,
                           int no_cache, cj_image **out) {
  cj_image **compiled = cj_calloc(n ? n : 1, sizeof *compiled);
  cj_link_spec spec_copy = *user_spec, *spec = &spec_copy;
  cujit_status st = CUJIT_OK;
  char arch[32] = "";
  cj_key key;
  size_t i;
  CJ_TRACE("cujit: link %s", spec->name);
  *out = NULL;
  if (!compiled) return cj_fail_oom("starting a link");
  for (i = 0; i < n && st == CUJIT_OK; i++)
    if (parts[i].source) st = compile_part(spec, &parts[i], &compiled[i]);
  if (st == CUJIT_OK && !spec->arch[0]) st = sources_arch(spec, compiled, n, arch, sizeof arch);
  if (st == CUJIT_OK && no_cache)
    st = link_now(spec, parts, n, out);
  else if (st == CUJIT_OK && (st = link_key(spec, parts, n, &key)) == CUJIT_OK)
    st = lookup(spec, parts, n, &key, out);
  for (i = 0; i < n; i++) cj_image_unref(compiled[i]);
  cj_free(compiled);
  return st;
}
