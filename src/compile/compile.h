/* compile.h - the compile layer: a request (source + resolved options) becomes an image
 * (PTX, CUBIN, lowered names, log) with NVRTC. The cache layer above decides when. */
#ifndef CUJIT_COMPILE_H
#define CUJIT_COMPILE_H

#include "common/common.h"

/* Everything one compile needs, every option resolved. The request borrows the caller's
 * strings for the duration of the call (nothing is copied on the way to a cache hit);
 * what only NVRTC needs (argv, header arrays) is built by cj_request_prepare() on a miss. */
typedef struct cj_request {
  const char *source;  /* borrowed */
  size_t source_len;
  const char *name;    /* program name for logs ("source.cu" by default); borrowed */
  char arch[32];       /* "sm_90", "compute_90", or "" for NVRTC's default target */
  const char *first_include_dir;   /* searched before include_dirs (a file's directory); may be NULL */
  const char *const *include_dirs; /* the caller's, in search order */
  size_t n_include_dirs;
  const char *const *defines;
  size_t n_defines;
  const char *const *user_options; /* the caller's NVRTC options, as given */
  size_t n_user_options;
  const cujit_header *headers;     /* in-memory headers */
  size_t n_headers;
  int toolkit;         /* search the toolkit's include directories (after the caller's) */
  const char *const *name_exprs;
  size_t n_name_exprs;
  unsigned flags;      /* CUJIT_OPT_* */
  /* Built by cj_request_prepare(), freed by cj_request_free(). */
  const char *const *toolkit_dirs; /* the toolkit's include directories, when searched */
  size_t n_toolkit_dirs;
  char **argv;         /* the full NVRTC command line */
  size_t argc;
  const char **header_names;  /* the in-memory headers NVRTC gets, the built-ins included */
  const char **header_sources;
  size_t n_nvrtc_headers;
} cj_request;

/* The result of a compile. Immutable once built; shared by reference count between
 * modules and the memory cache. */
typedef struct cj_image {
  int refs;
  char *ptx;              /* NUL-terminated */
  size_t ptx_size;        /* without the NUL */
  unsigned char *cubin;   /* NULL for a PTX-only target */
  size_t cubin_size;
  char *log;              /* never NULL ("" when empty) */
  char arch[32];          /* what it was compiled for (from the PTX when NVRTC chose) */
  size_t n_names;
  char **name_exprs;      /* name expressions and their lowered names, same order */
  char **lowered;
  char *source;           /* the source it was compiled from (modules borrow it); owned */
  size_t source_len;      /* without the NUL */
  int prebuilt;           /* 0 when compiled here, else the cj_prebuilt_kind it was loaded
                             from (prebuilt.h): no source, names or cache entry then */
  unsigned char *fatbin;  /* a prebuilt fatbin, loaded as it is; else NULL */
  size_t fatbin_size;
} cj_image;

/* options.c: validates opts and fills r (arch resolved), borrowing the caller's strings.
 * `first_include_dir` (may be NULL) goes before the caller's include directories. */
cujit_status cj_request_init(cj_request *r, const char *source, const char *name,
                             const cujit_options *opts, const char *first_include_dir);
/* Builds what NVRTC needs (argv, header arrays). Returns CUJIT_OK or out of memory. */
cujit_status cj_request_prepare(cj_request *r);
void cj_request_free(cj_request *r);
/* A copy of r's options that holds its strings, for compiling other source with the same
 * options later: everything but the source, the name expressions and what
 * cj_request_prepare() builds. cj_request_save_at() writes it into `at`, which has
 * cj_request_saved_size(r) bytes aligned for pointers, and returns it; it lives as long as
 * that memory (nothing to free). To compile, use a shallow copy of it with a source and
 * name expressions set, and cj_request_free() that copy. */
size_t cj_request_saved_size(const cj_request *r);
cj_request *cj_request_save_at(const cj_request *r, void *at);
/* The i-th include directory of the search order (first_include_dir, then the caller's). */
size_t cj_request_include_count(const cj_request *r);
const char *cj_request_include_dir(const cj_request *r, size_t i);
/* Arch validation and clamping, exposed for tests and the CLI. Writes "sm_XX" etc. */
cujit_status cj_arch_resolve(const char *requested, char *out, size_t out_size);
/* Reads CUJIT_ARCH again at the next compile that needs it (it is read once; for tests,
 * with no compile running). */
void cj_arch_env_forget(void);
/* Largest supported arch <= cc (else the smallest supported), or 0 if the list is empty. */
int cj_arch_clamp(int cc, const int *supported, size_t n);

/* toolkit.c: the CUDA toolkit's include directories (CCCL's, then the toolkit's), found
 * once per process; *n is 0 when no toolkit was found. Canonical paths, never freed. */
const char *const *cj_toolkit_include_dirs(size_t *n);
/* 1 when a canonical directory lies inside the toolkit's include directory (or the one
 * cujit was built against). */
int cj_toolkit_owns(const char *real_dir);
/* The built-in C library headers NVRTC lacks (stdint.h, stddef.h, limits.h, float.h),
 * given to NVRTC as in-memory headers with the toolkit's directories unless the caller
 * has an in-memory header of the same name. */
const cujit_header *cj_toolkit_builtin_headers(size_t *n);

/* image.c */
cj_image *cj_image_new(void);
cj_image *cj_image_ref(cj_image *im);
void cj_image_unref(cj_image *im);
/* Takes the target named by the PTX's ".target" line, e.g. "compute_75", into im->arch. */
void cj_image_arch_from_ptx(cj_image *im);
/* Bytes the image holds (PTX, CUBIN, log, names), for the memory cache's budget. */
size_t cj_image_bytes(const cj_image *im);

/* nvrtc.c: compiles with NVRTC; r must be prepared. */
cujit_status cj_nvrtc_compile(const cj_request *r, cj_image **out);
/* NVRTC's version and architectures (cached after the first call; cheap; neither creates
 * an NVRTC program). */
cujit_status cj_nvrtc_archs(const int **archs, size_t *count);
cujit_status cj_nvrtc_version_cached(int *major, int *minor);
/* How many NVRTC programs this process has created: a cache hit must not add one. */
uint64_t cj_nvrtc_programs_created(void);

#endif
