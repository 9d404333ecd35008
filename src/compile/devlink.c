/* devlink.c - the device link: linking with nvJitLink (loaded on the first link that needs it). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compile/devlink.h"
#include "dl/nvrtc.h"

/* ---- forks while links run ----
 *
 * As with NVRTC (compile/nvrtc.c): a child forked while another thread is inside nvJitLink
 * would find nvJitLink's own lock held by a thread it does not have, and its first link
 * would wait forever. So every call into nvJitLink is in flight: a fork waits (in a hook
 * of common/forklock.c) for those in flight to end, at most 5 s, and none starts until the
 * fork is done; a child forked while a link still ran refuses to link, saying why. */

static pthread_mutex_t flight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flight_change = PTHREAD_COND_INITIALIZER;
static int in_flight, forking, stuck;

static void fork_prepare(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&flight_lock);
  forking++;
  while (in_flight && pthread_cond_timedwait(&flight_change, &flight_lock, &until) != ETIMEDOUT) {
  }
}

static void fork_parent(void) {
  forking--;
  pthread_cond_broadcast(&flight_change);
  pthread_mutex_unlock(&flight_lock);
}

static void fork_child(void) { /* only this thread is left: nothing else is in flight */
  stuck |= in_flight > 0;
  in_flight = forking = 0;
  pthread_cond_init(&flight_change, NULL);
  pthread_mutex_unlock(&flight_lock);
}

__attribute__((constructor)) static void fork_hooks(void) {
  cj_fork_hooks(fork_prepare, fork_parent, fork_child);
}

static cujit_status flight_begin(const char *what) {
  int no;
  pthread_mutex_lock(&flight_lock);
  while (forking) pthread_cond_wait(&flight_change, &flight_lock);
  no = stuck;
  in_flight += !no;
  pthread_mutex_unlock(&flight_lock);
  CJ_CHECK(!no, CUJIT_ERROR_LINK,
           "cannot link '%s' in this process: it was forked while another thread of its parent "
           "was in nvJitLink, and nvJitLink's lock stays held by that thread, which a child "
           "does not have. Fork while no link runs, or start the child with exec "
           "(posix_spawn); links found in the cache still work",
           what);
  return CUJIT_OK;
}

static void flight_end(void) {
  pthread_mutex_lock(&flight_lock);
  in_flight--;
  pthread_cond_broadcast(&flight_change);
  pthread_mutex_unlock(&flight_lock);
}

void cj_link_version(unsigned *major, unsigned *minor) {
  *major = *minor = 0;
  if (!cj_jl.version || flight_begin("the version query") != CUJIT_OK) return;
  cj_jl.version(major, minor);
  flight_end();
}

const char *cj_link_type_name(nvJitLinkInputType t) {
  switch (t) {
    case NVJITLINK_INPUT_CUBIN: return "a CUBIN";
    case NVJITLINK_INPUT_PTX: return "PTX";
    case NVJITLINK_INPUT_LTOIR: return "LTO-IR";
    case NVJITLINK_INPUT_FATBIN: return "a fatbin";
    case NVJITLINK_INPUT_OBJECT: return "a host object";
    case NVJITLINK_INPUT_LIBRARY: return "a static library";
    default: return "an input";
  }
}

/* One of nvJitLink's logs, NUL-terminated ("" when empty); NULL when out of memory. */
static char *link_log(nvJitLinkHandle h, int error) {
  size_t size = 0;
  char *log;
  nvJitLinkResult r = error ? cj_jl.error_log_size(h, &size) : cj_jl.info_log_size(h, &size);
  if (r != NVJITLINK_SUCCESS || size == 0) return cj_strdup("");
  if (!(log = cj_malloc(size + 1))) return NULL;
  r = error ? cj_jl.error_log(h, log) : cj_jl.info_log(h, log);
  if (r != NVJITLINK_SUCCESS) log[0] = '\0';
  log[size] = '\0';
  return log;
}

/* nvJitLink's options: the target, -lto, then the caller's. */
static cujit_status link_options(const cj_link_spec *spec, char *arch, size_t arch_size,
                                 const char ***argv, size_t *argc) {
  size_t i, n = 0;
  const char **v = cj_calloc(spec->n_options + 2, sizeof *v);
  if (!v) return cj_fail_oom("preparing the link options");
  snprintf(arch, arch_size, "-arch=%s", spec->arch);
  v[n++] = arch;
  if (spec->lto) v[n++] = "-lto";
  for (i = 0; i < spec->n_options; i++) v[n++] = spec->options[i];
  *argv = v;
  *argc = n;
  return CUJIT_OK;
}

static void options_line(const char **argv, size_t argc, cj_buf *b) {
  size_t i;
  for (i = 0; i < argc; i++) cj_buf_printf(b, "%s%s", i ? " " : "", argv[i]);
}

/* The failure of a link step, with nvJitLink's error log. `in` names the input refused
 * (NULL when the link as a whole failed). */
static cujit_status link_failed(const cj_link_spec *spec, nvJitLinkHandle h, nvJitLinkResult r,
                                const cj_link_in *in, const char *opts) {
  char *log = link_log(h, 1);
  const char *hint = "";
  cujit_status st;
  if (!log) return cj_fail_oom("reading nvJitLink's log");
  if (r == NVJITLINK_ERROR_ARCH_MISMATCH || strstr(log, "arch") || strstr(log, "Arch"))
    hint = "; every part must be built for the link's target or be PTX or LTO-IR it can "
           "compile (give the same sm_XX to nvcc and to cujit_options.arch)";
  else if (strstr(log, "ndefined"))
    hint = "; define the symbol in one part (a __device__ function or variable declared "
           "extern must be defined in another part), or add the library that defines it "
           "(CUJIT_LINK_CUDADEVRT for kernels that launch kernels)";
  else if (strstr(log, "ultiple definition") || strstr(log, "uplicate"))
    hint = "; define each symbol in one part only (declare it extern in the others)";
  if (in)
    st = cj_fail(CUJIT_ERROR_LINK,
                 "linking '%s': nvJitLink refused part '%s' (given as %s, "
                 "%zu bytes): %s%s\noptions: %s\n%s",
                 spec->name, in->name, cj_link_type_name(in->type), in->size,
                 cj_nvjitlink_result_name(r),
                 in->type == NVJITLINK_INPUT_CUBIN || in->type == NVJITLINK_INPUT_FATBIN
                     ? "; check that the part's kind matches its bytes and that it was built "
                       "for the link's target"
                     : "; check that the part's kind matches its bytes",
                 opts, log);
  else
    st = cj_fail(CUJIT_ERROR_LINK, "linking '%s' failed: %s%s\noptions: %s\n%s", spec->name,
                 cj_nvjitlink_result_name(r), hint, opts, log);
  cj_free(log);
  return st;
}

static cujit_status check_error_log(const cj_link_spec *spec, nvJitLinkHandle h, const char *opts) {
  size_t size = 0;
  if (cj_jl.error_log_size(h, &size) != NVJITLINK_SUCCESS || size <= 1) return CUJIT_OK;
  return link_failed(spec, h, NVJITLINK_ERROR_FINALIZE, NULL, opts);
}

static cujit_status take_cubin(nvJitLinkHandle h, cj_image *im) {
  size_t size = 0;
  nvJitLinkResult r = cj_jl.cubin_size(h, &size);
  CJ_CHECK(r == NVJITLINK_SUCCESS && size > 0, CUJIT_ERROR_LINK,
           "nvJitLink linked but gave no CUBIN (%s)", cj_nvjitlink_result_name(r));
  if (!(im->cubin = cj_malloc(size))) return cj_fail_oom("copying the linked CUBIN");
  im->cubin_size = size;
  r = cj_jl.cubin(h, im->cubin);
  CJ_CHECK(r == NVJITLINK_SUCCESS, CUJIT_ERROR_LINK,
           "nvJitLink could not give the linked "
           "CUBIN: %s",
           cj_nvjitlink_result_name(r));
  return CUJIT_OK;
}

/* ---- symbols defined twice ---- */

/* Some nvJitLink releases link relocatable CUBINs that define one symbol twice, warning on
 * stderr and succeeding with either definition. The CUBINs' symbol tables are read here
 * first, so that such a link fails as nvlink's would. */

typedef struct defined {
  const char *name; /* inside the input's bytes */
  size_t len, part;
} defined;

static uint64_t le(const unsigned char *p, size_t size, uint64_t off, unsigned width, int *ok) {
  uint64_t v = 0;
  unsigned i;
  if (off > size || width > size - off) {
    *ok = 0;
    return 0;
  }
  for (i = width; i > 0; i--) v = (v << 8) | p[off + i - 1];
  return v;
}

/* Appends the global functions and variables that CUBIN `in` (part `part`) defines. */
static int add_defined(const cj_link_in *in, size_t part, defined **v, size_t *n, size_t *cap) {
  const unsigned char *p = in->data;
  size_t size = in->size;
  uint64_t shoff, shnum, shent, i, k, type, off, len, ent, link, stroff, strsize, at, name, info;
  uint64_t shndx;
  int ok = 1;
  if (size < 64 || memcmp(p, "\177ELF", 4) != 0 || p[4] != 2) return 0;
  shoff = le(p, size, 0x28, 8, &ok);
  shent = le(p, size, 0x3a, 2, &ok);
  shnum = le(p, size, 0x3c, 2, &ok);
  for (i = 0; ok && shent >= 64 && i < shnum; i++) {
    at = shoff + i * shent;
    type = le(p, size, at + 4, 4, &ok);
    off = le(p, size, at + 0x18, 8, &ok);
    len = le(p, size, at + 0x20, 8, &ok);
    link = le(p, size, at + 0x28, 4, &ok);
    ent = le(p, size, at + 0x38, 8, &ok);
    if (!ok || type != 2 || ent < 24 || off > size || len > size - off) continue;
    stroff = le(p, size, shoff + link * shent + 0x18, 8, &ok);
    strsize = le(p, size, shoff + link * shent + 0x20, 8, &ok);
    if (!ok || stroff > size || strsize > size - stroff) return 0;
    for (k = 0; k + ent <= len; k += ent) {
      name = le(p, size, off + k, 4, &ok);
      info = le(p, size, off + k + 4, 1, &ok);
      shndx = le(p, size, off + k + 6, 2, &ok);
      /* functions (2) and variables: STT_OBJECT (1), or 13 in a relocatable CUBIN */
      if (!ok || (info >> 4) != 1 ||
          ((info & 0xf) != 1 && (info & 0xf) != 2 && (info & 0xf) != 13) || shndx == 0 ||
          shndx >= 0xff00 || name >= strsize)
        continue;
      if (CJ_VEC_RESERVE(*v, *cap, *n + 1) != 0) return -1;
      (*v)[*n].name = (const char *)p + stroff + name;
      (*v)[*n].len = strnlen((*v)[*n].name, (size_t)(strsize - name));
      (*v)[(*n)++].part = part;
    }
    break; /* an ELF file has one symbol table: more headers naming it are not read again */
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  const defined *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->name, y->name, n);
  if (c) return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

static cujit_status check_defined_once(const cj_link_spec *spec, const cj_link_in *in, size_t n) {
  defined *v = NULL;
  size_t count = 0, cap = 0, i;
  cujit_status st = CUJIT_OK;
  for (i = 0; i < n; i++)
    if (in[i].type == NVJITLINK_INPUT_CUBIN && add_defined(&in[i], i, &v, &count, &cap) != 0) {
      cj_free(v);
      return cj_fail_oom("reading the symbols of a link's parts");
    }
  if (count > 1) qsort(v, count, sizeof *v, by_name);
  for (i = 1; i < count && st == CUJIT_OK; i++)
    if (by_name(&v[i - 1], &v[i]) == 0 && v[i - 1].part != v[i].part)
      st =
          cj_fail(CUJIT_ERROR_LINK,
                  "linking '%s' failed: '%.*s' is defined in part '%s' and "
                  "again in part '%s'; define each symbol in one part only (declare it extern "
                  "in the others)",
                  spec->name, (int)v[i].len, v[i].name, in[v[i - 1].part].name, in[v[i].part].name);
  cj_free(v);
  return st;
}

static cujit_status run(const cj_link_spec *spec, nvJitLinkHandle h, const cj_link_in *in, size_t n,
                        const char *opts, cj_image *im) {
  nvJitLinkResult r;
  size_t i;
  CJ_TRY(check_defined_once(spec, in, n));
  for (i = 0; i < n; i++) {
    r = cj_jl.add_data(h, in[i].type, in[i].data, in[i].size, in[i].name);
    if (r != NVJITLINK_SUCCESS) return link_failed(spec, h, r, &in[i], opts);
  }
  r = cj_jl.complete(h);
  if (r != NVJITLINK_SUCCESS) return link_failed(spec, h, r, NULL, opts);
  /* some nvJitLink releases report a symbol defined twice in the error log and still
   * succeed: an error in the log fails the link */
  CJ_TRY(check_error_log(spec, h, opts));
  if (!(im->log = link_log(h, 0))) return cj_fail_oom("reading nvJitLink's log");
  CJ_TRY(take_cubin(h, im));
  /* nvJitLink gives PTX instead of a CUBIN (-ptx), never both: the image has none */
  if (!(im->ptx = cj_strdup(""))) return cj_fail_oom("linking");
  snprintf(im->arch, sizeof im->arch, "%s", spec->arch);
  im->linked = 1;
  return CUJIT_OK;
}

cujit_status cj_link_run(const cj_link_spec *spec, const cj_link_in *in, size_t n, cj_image **out) {
  nvJitLinkHandle h = NULL;
  nvJitLinkResult r;
  const char **argv = NULL;
  char arch[48];
  cj_buf opts = {0};
  cj_image *im = NULL;
  cujit_status st;
  size_t argc = 0;
  *out = NULL;
  CJ_TRY(cj_nvjitlink_load());
  CJ_TRY(link_options(spec, arch, sizeof arch, &argv, &argc));
  if ((st = flight_begin(spec->name)) != CUJIT_OK) {
    cj_free(argv);
    return st;
  }
  options_line(argv, argc, &opts);
  r = cj_jl.create(&h, (uint32_t)argc, argv);
  if (r != NVJITLINK_SUCCESS) {
    st = r == NVJITLINK_ERROR_UNRECOGNIZED_OPTION || r == NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS ||
                 r == NVJITLINK_ERROR_UNRECOGNIZED_ARCH || r == NVJITLINK_ERROR_UNSUPPORTED_ARCH
             ? cj_fail(CUJIT_ERROR_INVALID_OPTION,
                       "nvJitLink refused the options of the link "
                       "of '%s' (%s): %s; see nvJitLink's documentation for valid options",
                       spec->name, cj_nvjitlink_result_name(r), opts.data ? opts.data : "")
             : cj_fail(CUJIT_ERROR_LINK, "nvJitLinkCreate failed for '%s': %s\noptions: %s",
                       spec->name, cj_nvjitlink_result_name(r), opts.data ? opts.data : "");
    goto done;
  }
  if (!(im = cj_image_new())) {
    st = cj_fail_oom("starting a link");
    goto done;
  }
  cj_debug("linking '%s' (%zu parts) for %s%s", spec->name, n, spec->arch,
           spec->lto ? " with link-time optimisation" : "");
  st = run(spec, h, in, n, opts.data ? opts.data : "", im);
  if (st == CUJIT_OK && im->log[0]) cj_info("'%s' linked with messages:\n%s", spec->name, im->log);
done:
  if (h) cj_jl.destroy(&h);
  flight_end();
  if (st != CUJIT_OK)
    cj_image_unref(im);
  else
    *out = im;
  cj_free(argv);
  cj_buf_free(&opts);
  return st;
}

/* ---- libcudadevrt ---- */

static pthread_once_t devrt_once = PTHREAD_ONCE_INIT;
static CJ_LARGE char devrt_path[PATH_MAX];
static CJ_LARGE char devrt_looked[2048];

static int try_devrt(const char *dir, size_t len, const char *sub) {
  char path[PATH_MAX];
  size_t n = strlen(devrt_looked);
  if (!len) return 0;
  if (n + len + strlen(sub) + 3 < sizeof devrt_looked)
    snprintf(devrt_looked + n, sizeof devrt_looked - n, "%s%.*s%s", n ? ", " : "", (int)len, dir,
             sub);
  snprintf(path, sizeof path, "%.*s%s/libcudadevrt.a", (int)len, dir, sub);
  if (access(path, R_OK) != 0) return 0;
  snprintf(devrt_path, sizeof devrt_path, "%s", path);
  return 1;
}

static int try_beside(const char *file) {
  const char *slash = strrchr(file, '/');
  return slash && try_devrt(file, (size_t)(slash - file), "");
}

static void find_devrt(void) {
  search_dir v[64];
  size_t n, i;
  if (try_beside(cj_nvjitlink_path())) return;
  if (try_devrt(cj_libnvrtc_dir(), strlen(cj_libnvrtc_dir()), "")) return;
  n = cj_lib_search_dirs(v, CJ_COUNT(v));
  for (i = 0; i < n; i++)
    if (try_devrt(v[i].dir, v[i].len, v[i].sub)) return;
}

const char *cj_cudadevrt_path(const char **looked) {
  pthread_once(&devrt_once, find_devrt);
  if (looked) *looked = devrt_looked;
  return devrt_path;
}
