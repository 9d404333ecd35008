/* link.c - cujit_module_link(): parts read and checked, sources made into requests for the
 * compile cache, and the link through the cache (cache/fetchlink.c). */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "dl/driver.h"
#include "format/prebuilt.h"
#include "module/module.h"

#define LINK_OPTIONS_V1 CJ_SIZE_V1(cujit_link_options, name)
#define LINK_PART_V1 CJ_SIZE_V1(cujit_link_part, path)
#define MAX_PART_FILE ((size_t)1 << 30)

/* What one part holds while the link runs. */
typedef struct part {
  cujit_link_part user; /* the caller's, read through its size */
  char name[64];        /* "part<i>" when the caller gave no name and no path */
  char *owned;          /* bytes read from a file (freed after the link) */
  char *dir;            /* a source file's directory (first on its include path) */
  cj_request req;
  int has_req;
  int terminated; /* the source text ends with a NUL at data_size */
} part;

/* The link's state, freed in one place. */
typedef struct job {
  part *p;
  cj_link_part *lp;
  size_t n;
  cujit_options opts;
  cujit_link_options link;
  const char *const *link_opts;
  size_t n_link_opts;
  char arch[32];
} job;

static const char *kind_name(int kind) {
  static const char *const names[] =
      {"?",      "a source",         "PTX",           "a CUBIN",     "a fatbin",
       "LTO-IR", "a static library", "a host object", "libcudadevrt"};
  return kind > 0 && (size_t)kind < CJ_COUNT(names) ? names[kind] : "?";
}

static nvJitLinkInputType input_type(int kind) {
  switch (kind) {
    case CUJIT_LINK_PTX: return NVJITLINK_INPUT_PTX;
    case CUJIT_LINK_CUBIN: return NVJITLINK_INPUT_CUBIN;
    case CUJIT_LINK_FATBIN: return NVJITLINK_INPUT_FATBIN;
    case CUJIT_LINK_LTOIR: return NVJITLINK_INPUT_LTOIR;
    case CUJIT_LINK_OBJECT: return NVJITLINK_INPUT_OBJECT;
    default: return NVJITLINK_INPUT_LIBRARY; /* a library, libcudadevrt */
  }
}

/* Reads part i's file (a source as text, anything else as bytes). */
static cujit_status read_part_file(part *p, const char *path) {
  cj_file f;
  if (p->user.kind == CUJIT_LINK_SOURCE) {
    CJ_TRY(cj_source_read(path, &p->owned));
    CJ_CHECK(p->owned[0], CUJIT_ERROR_INVALID_SOURCE,
             "'%s' is empty; it must hold CUDA C "
             "source",
             path);
    p->user.data = p->owned;
    p->user.data_size = strlen(p->owned);
    if (!(p->dir = cj_source_dir(path))) return cj_fail_oom("reading a source file");
    return CUJIT_OK;
  }
  CJ_TRY(cj_source_file_load(path, MAX_PART_FILE, "reading a part of a link",
                             "give the path of a file", &f));
  p->owned = f.data;
  p->user.data = f.data;
  p->user.data_size = f.len;
  CJ_CHECK(f.len, CUJIT_ERROR_INVALID_SOURCE, "'%s' is empty; it must hold %s", path,
           kind_name(p->user.kind));
  return CUJIT_OK;
}

/* Checks that an LTO-IR, library or object part starts as its kind does: nvJitLink reads
 * what it is given without checking it first. */
static cujit_status check_magic(const part *p) {
  const char *what = p->user.kind == CUJIT_LINK_LTOIR    ? "NVVM LTO-IR (magic 0x7f4e43ed)"
                     : p->user.kind == CUJIT_LINK_OBJECT ? "an ELF object"
                                                         : "an ar archive (\"!<arch>\")";
  int ok = p->user.kind == CUJIT_LINK_LTOIR
               ? cj_image_bytes_are_ltoir(p->user.data, p->user.data_size)
           : p->user.kind == CUJIT_LINK_OBJECT
               ? p->user.data_size >= 4 && memcmp(p->user.data, "\177ELF", 4) == 0
               : p->user.data_size >= 8 && memcmp(p->user.data, "!<arch>\n", 8) == 0;
  CJ_CHECK(ok, CUJIT_ERROR_INVALID_SOURCE,
           "part '%s' is given as %s, but its bytes are not %s; "
           "check the file, or give the part's kind",
           p->user.name, kind_name(p->user.kind), what);
  return CUJIT_OK;
}

/* Checks that a part's bytes are of its kind. */
static cujit_status check_bytes(const part *p) {
  static const int expect[] = {0, 0, CJ_PREBUILT_PTX, CJ_PREBUILT_CUBIN, CJ_PREBUILT_FATBIN};
  static const char *const found[] = {"?", "PTX", "a CUBIN", "a fatbin"};
  cj_prebuilt_kind kind;
  char arch[64];
  if (p->user.kind > CUJIT_LINK_FATBIN) return check_magic(p);
  if (p->user.kind == CUJIT_LINK_FATBIN) /* its entries may be LTO-IR only */
    return cj_prebuilt_check_fatbin(p->user.data, p->user.data_size, p->user.name);
  CJ_TRY(
      cj_prebuilt_inspect(p->user.data, p->user.data_size, p->user.name, &kind, arch, sizeof arch));
  CJ_CHECK(kind != CJ_PREBUILT_BUNDLE, CUJIT_ERROR_INVALID_SOURCE,
           "part '%s' is a cujit "
           "bundle, which nvJitLink cannot read; link the sources it was made from, or a "
           "CUBIN or PTX of them",
           p->user.name);
  CJ_CHECK((int)kind == expect[p->user.kind], CUJIT_ERROR_INVALID_SOURCE,
           "part '%s' is given as %s, but its bytes are %s (for %s); give it as that kind",
           p->user.name, kind_name(p->user.kind),
           (size_t)kind < CJ_COUNT(found) ? found[kind] : "of another kind", arch);
  return CUJIT_OK;
}

/* Reads the caller's part i into p: its size, kind, name and bytes. */
static cujit_status read_part(const cujit_link_part *user, size_t i, part *p) {
  const char *devrt, *looked, *path;
  CJ_TRY(cj_sized_in("cujit_module_link", "cujit_link_part", user, LINK_PART_V1, &p->user,
                     sizeof p->user));
  CJ_CHECK(p->user.kind >= CUJIT_LINK_SOURCE && p->user.kind <= CUJIT_LINK_CUDADEVRT,
           CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_link: part %zu has kind %d, which is not a "
           "cujit_link_kind (CUJIT_LINK_SOURCE ... CUJIT_LINK_CUDADEVRT)",
           i, p->user.kind);
  path = p->user.path;
  if (p->user.kind == CUJIT_LINK_CUDADEVRT && !path && !p->user.data) {
    devrt = cj_cudadevrt_path(&looked);
    CJ_CHECK(devrt[0], CUJIT_ERROR_FILE,
             "cujit_module_link: part %zu asks for the device "
             "runtime, but libcudadevrt.a was not found; looked in %s. Install the CUDA "
             "toolkit's libraries, or give the file's path in the part's path",
             i, looked);
    path = devrt;
  }
  CJ_CHECK(!p->user.data != !path, CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_link: part %zu "
           "(%s) has %s; give data (with data_size) or a path",
           i, kind_name(p->user.kind), path ? "both data and a path" : "neither data nor a path");
  CJ_CHECK(path || p->user.data_size || p->user.kind == CUJIT_LINK_SOURCE,
           CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_link: part %zu (%s) has data_size 0; give "
           "the number of bytes",
           i, kind_name(p->user.kind));
  if (!p->user.name) {
    snprintf(p->name, sizeof p->name, "part%zu", i);
    p->user.name = path ? path : p->name;
  }
  if (path) return read_part_file(p, path);
  if (p->user.kind == CUJIT_LINK_SOURCE && !p->user.data_size) {
    p->user.data_size = strlen(p->user.data);
    p->terminated = 1;
  }
  return CUJIT_OK;
}

/* Source text of a given length as a NUL-terminated string (copied when it may not be). */
static cujit_status source_text(part *p, const char **text) {
  const char *d = p->user.data;
  if (p->owned || p->terminated) {
    *text = d;
    return CUJIT_OK;
  }
  if (!(p->owned = cj_memdup(d, p->user.data_size))) return cj_fail_oom("copying a source");
  p->user.data = p->owned;
  *text = p->owned;
  return CUJIT_OK;
}

static cujit_status prepare_part(job *j, size_t i) {
  part *p = &j->p[i];
  const char *text = NULL;
  j->lp[i].in.name = p->user.name;
  if (p->user.kind != CUJIT_LINK_SOURCE) {
    CJ_TRY(check_bytes(p));
    j->lp[i].in.type = input_type(p->user.kind);
    j->lp[i].in.data = p->user.data;
    j->lp[i].in.size = p->user.data_size;
    return CUJIT_OK;
  }
  CJ_TRY(source_text(p, &text));
  CJ_CHECK(text[0] && strlen(text) == p->user.data_size, CUJIT_ERROR_INVALID_SOURCE,
           "source part '%s' is %s; pass CUDA C text", p->user.name,
           text[0] ? "cut short by a NUL byte inside its data_size" : "empty");
  CJ_TRY(cj_request_init(&p->req, text, p->user.name, &j->opts, p->dir));
  p->has_req = 1;
  p->req.link = CJ_LINK_RDC | ((j->link.flags & CUJIT_LINK_OPT_LTO) ? CJ_LINK_LTO : 0);
  j->lp[i].source = &p->req;
  return CUJIT_OK;
}

/* The target of a link without sources: opts' arch, CUJIT_ARCH, or the device's. */
static cujit_status prebuilt_arch(job *j) {
  const char *a = j->opts.arch ? j->opts.arch : cj_env("CUJIT_ARCH");
  int cc = 0, ordinal;
  if (!a) {
    CJ_TRY(cj_device_env(&ordinal));
    CJ_CHECK(cj_device_cc_for_compile(&cc) == CUJIT_OK, CUJIT_ERROR_INVALID_OPTION,
             "cujit_module_link: no target for the link: no device was found and "
             "cujit_options.arch (or CUJIT_ARCH) is not set; give the GPU's sm_XX");
    snprintf(j->arch, sizeof j->arch, "sm_%d", cc);
    return CUJIT_OK;
  }
  CJ_CHECK(strncmp(a, "sm_", 3) == 0 && strlen(a) < sizeof j->arch, CUJIT_ERROR_INVALID_OPTION,
           "cujit_module_link: target '%s' is not a real architecture; a link makes a CUBIN: "
           "give sm_XX",
           a);
  snprintf(j->arch, sizeof j->arch, "%s", a);
  return CUJIT_OK;
}

static cujit_status read_options(job *j, const cujit_options *opts,
                                 const cujit_link_options *link) {
  CJ_TRY(cj_sized_in("cujit_module_link", "cujit_options", opts, CJ_SIZE_V1(cujit_options, flags),
                     &j->opts, sizeof j->opts));
  CJ_TRY(cj_sized_in("cujit_module_link", "cujit_link_options", link, LINK_OPTIONS_V1, &j->link,
                     sizeof j->link));
  CJ_CHECK(!(j->link.flags & ~(unsigned)CUJIT_LINK_OPT_LTO), CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_link: link flags 0x%x include unknown bits; use CUJIT_LINK_*",
           j->link.flags);
  j->link_opts = j->link.options;
  while (j->link_opts && j->link_opts[j->n_link_opts]) {
    CJ_CHECK(j->link_opts[j->n_link_opts][0] == '-', CUJIT_ERROR_INVALID_OPTION,
             "nvJitLink option '%s' does not start with '-'; pass each option as one string, "
             "e.g. \"-O3\"",
             j->link_opts[j->n_link_opts]);
    CJ_CHECK(strncmp(j->link_opts[j->n_link_opts], "-arch", 5) != 0 &&
                 strcmp(j->link_opts[j->n_link_opts], "-lto") != 0,
             CUJIT_ERROR_INVALID_OPTION,
             "nvJitLink option '%s' is cujit's to set: give the "
             "target as cujit_options.arch and LTO as CUJIT_LINK_OPT_LTO",
             j->link_opts[j->n_link_opts]);
    j->n_link_opts++;
  }
  return CUJIT_OK;
}

static void job_free(job *j) {
  size_t i;
  for (i = 0; j->p && i < j->n; i++) {
    if (j->p[i].has_req) cj_request_free(&j->p[i].req);
    cj_free(j->p[i].owned);
    cj_free(j->p[i].dir);
  }
  cj_free(j->p);
  cj_free(j->lp);
}

static cujit_status run(job *j, const cujit_link_part *parts, cujit_module **out) {
  cj_link_spec spec;
  cj_image *im = NULL;
  cj_module *m;
  cujit_status st;
  size_t i, sources = 0;
  /* the array is stepped through by its first part's size (a program built against
   * another header has parts of another size; every part must have the same) */
  size_t stride = parts[0].size ? parts[0].size : LINK_PART_V1;
  for (i = 0; i < j->n; i++) {
    const cujit_link_part *user =
        (const cujit_link_part *)(const void *)((const char *)parts + i * stride);
    CJ_CHECK(user->size == parts[0].size, CUJIT_ERROR_INVALID_VALUE,
             "cujit_module_link: "
             "part %zu has size %zu but part 0 has %zu; make every part with "
             "CUJIT_LINK_PART_INIT",
             i, user->size, parts[0].size);
    CJ_TRY(read_part(user, i, &j->p[i]));
    sources += j->p[i].user.kind == CUJIT_LINK_SOURCE;
  }
  if (!sources) CJ_TRY(prebuilt_arch(j));
  for (i = 0; i < j->n; i++) CJ_TRY(prepare_part(j, i));
  spec.arch = j->arch; /* "" with sources: their compiles' target */
  spec.lto = (j->link.flags & CUJIT_LINK_OPT_LTO) != 0;
  spec.options = j->link_opts;
  spec.n_options = j->n_link_opts;
  spec.name = j->link.name ? j->link.name : "linked";
  CJ_TRY(cj_cache_link(&spec, j->lp, j->n, (j->opts.flags & CUJIT_OPT_NO_CACHE) != 0, &im));
  if ((st = cj_module_new(im, spec.name, &m)) != CUJIT_OK)
    cj_image_unref(im);
  else
    *out = cj_module_handle(m);
  return st;
}

cujit_status cujit_module_link(cujit_module **out, const cujit_link_part *parts, size_t count,
                               const cujit_options *opts, const cujit_link_options *link) {
  job j;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_module_link: out is NULL");
  *out = NULL;
  CJ_CHECK(parts && count, CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_link: %s; give at least "
           "one part",
           parts ? "count is 0" : "parts is NULL");
  memset(&j, 0, sizeof j);
  CJ_TRY(read_options(&j, opts, link));
  j.n = count;
  j.p = cj_calloc(count, sizeof *j.p);
  j.lp = cj_calloc(count, sizeof *j.lp);
  if (!j.p || !j.lp)
    st = cj_fail_oom("starting a link");
  else
    st = run(&j, parts, out);
  job_free(&j);
  return st;
}
