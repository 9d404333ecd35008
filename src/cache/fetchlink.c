/* fetchlink.c - a linked program through the caches. Each source part is compiled (with
 * -rdc=true, and -dlto for link-time optimisation) through the compile cache under its own
 * key; the link's key is then made of what nvJitLink would be given: every part's bytes
 * (hashed), its kind and order, the target, LTO, the caller's link options and the
 * nvJitLink in use. Hashing a source's compiled output covers the source, its headers, its
 * options and NVRTC, as its own key does. The linked image is looked for in the memory
 * cache, then on disk; on a miss one process per key links it (the others wait for its
 * entry, as for a compile) and writes the entry in the format of a compile's. */
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
  CJ_TRY(cj_compile(p->source, im));
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
  for (i = 0; i < n; i++) in[i] = parts[i].in;
  cj_count(CJ_COMPILES, 1);
  st = cj_link_run(spec, in, n, out);
  cj_free(in);
  return st;
}

/* What waiting for another process's link looks at. */
typedef struct waiter {
  const cj_entry_path *path;
  const cj_key *key;
  cj_image *image;
  int oom;
} waiter;

static int entry_ready(void *arg) {
  waiter *w = arg;
  int rc = cj_disk_read(w->path, w->key, NULL, &w->image);
  if (rc == CJ_DISK_OOM) w->oom = 1;
  return rc == CJ_DISK_HIT || rc == CJ_DISK_OOM;
}

/* With the shard open: the entry, the entry another process writes, or a link whose
 * entry is written here. */
static cujit_status from_shard(const cj_link_spec *spec, const cj_link_part *parts, size_t n,
                               const cj_root *root, const cj_entry_path *p, const cj_key *key,
                               cj_image **out) {
  cj_lock lock = {-1};
  waiter w = {p, key, NULL, 0};
  uint64_t written = 0;
  cujit_status st;
  int rc = cj_disk_read(p, key, NULL, out);
  if (rc == CJ_DISK_OOM) return cj_fail_oom("reading a cache entry");
  if (rc == CJ_DISK_HIT) return cj_count_disk(root, 1, 0, 0), CUJIT_OK;
  rc =
      cj_lock_acquire(p->dir, p->lock, spec->name, cj_cache_lock_timeout(), entry_ready, &w, &lock);
  if (rc == CJ_LOCK_HELD && !w.image) entry_ready(&w); /* written before the lock was had */
  if (w.oom) {
    cj_lock_release(p->dir, p->lock, &lock);
    return cj_fail_oom("reading a cache entry");
  }
  if (w.image) {
    cj_lock_release(p->dir, p->lock, &lock);
    *out = w.image;
    return cj_count_disk(root, 1, 0, 0), CUJIT_OK;
  }
  st = link_now(spec, parts, n, out);
  if (st == CUJIT_OK) written = cj_disk_write(p, key, *out, NULL, spec->name, NULL);
  if (written) cj_toolchain_note(root);
  cj_lock_release(p->dir, p->lock, &lock);
  cj_count_disk(root, 0, 1, written);
  return st;
}

static cujit_status lookup(const cj_link_spec *spec, const cj_link_part *parts, size_t n,
                           const cj_key *key, cj_image **out) {
  cj_entry_path p;
  cj_root root;
  cj_deps *deps = NULL;
  cujit_status st;
  *out = cj_memcache_get(key, NULL, &deps);
  cj_deps_destroy(deps); /* a link keeps none */
  if (*out) {
    cj_count(CJ_HITS, 1);
    cj_count(CJ_MEMORY_HITS, 1);
    return CUJIT_OK;
  }
  if (cj_root_open(&root, 1) != 0) {
    cj_count(CJ_MISSES, 1);
    st = link_now(spec, parts, n, out);
  } else if (cj_entry_open(&root, key, 1, &p) != 0) {
    cj_count(CJ_MISSES, 1);
    st = link_now(spec, parts, n, out);
    cj_root_close(&root);
  } else {
    st = from_shard(spec, parts, n, &root, &p, key, out);
    cj_entry_close(&p);
    cj_root_close(&root);
  }
  if (st != CUJIT_OK) return st;
  (*out)->linked = 1; /* an entry does not say so: its key does */
  cj_memcache_put(key, *out, NULL, NULL);
  return CUJIT_OK;
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

cujit_status cj_link(const cj_link_spec *user_spec, cj_link_part *parts, size_t n, int no_cache,
                     cj_image **out) {
  cj_image **compiled = cj_calloc(n ? n : 1, sizeof *compiled);
  cj_link_spec spec_copy = *user_spec, *spec = &spec_copy;
  cujit_status st = CUJIT_OK;
  char arch[32] = "";
  cj_key key;
  size_t i;
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
