/* compile.h - the compile path: a request (source + resolved options) becomes an image
 * (PTX, CUBIN, lowered names, log), from the memory cache, the disk cache or NVRTC. */
#ifndef CUJIT_COMPILE_H
#define CUJIT_COMPILE_H

#include "common.h"

/* Everything one compile needs, owned by the request, every option resolved. */
typedef struct cj_request {
  const char *source;  /* borrowed from the caller for the duration of the call */
  size_t source_len;
  char *name;          /* program name for logs ("source.cu" by default) */
  char arch[32];       /* "sm_90", "compute_90", or "" for NVRTC's default target */
  char **include_dirs; /* in search order (a file's own directory first) */
  size_t n_include_dirs;
  char **defines;
  size_t n_defines;
  char **user_options; /* the caller's NVRTC options, as given */
  size_t n_user_options;
  char **header_names; /* in-memory headers */
  char **header_sources;
  size_t n_headers;
  char **name_exprs;
  size_t n_name_exprs;
  unsigned flags;      /* CUJIT_OPT_* */
  char **argv;         /* the full NVRTC command line built from the above */
  size_t argc;
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
} cj_image;

/* options.c: validates opts and fills r (arch resolved, argv built). `first_include_dir`
 * (may be NULL) goes before the caller's include directories. */
cujit_status cj_request_init(cj_request *r, const char *source, const char *name,
                             const cujit_options *opts, const char *first_include_dir);
void cj_request_free(cj_request *r);
/* Arch validation and clamping, exposed for tests and the CLI. Writes "sm_XX" etc. */
cujit_status cj_arch_resolve(const char *requested, char *out, size_t out_size);
/* Largest supported arch <= cc (else the smallest supported), or 0 if the list is empty. */
int cj_arch_clamp(int cc, const int *supported, size_t n);

/* image.c */
cj_image *cj_image_new(void);
cj_image *cj_image_ref(cj_image *im);
void cj_image_unref(cj_image *im);
/* Takes the target named by the PTX's ".target" line, e.g. "compute_75", into im->arch. */
void cj_image_arch_from_ptx(cj_image *im);

/* nvrtc.c: compiles with NVRTC. */
cujit_status cj_nvrtc_compile(const cj_request *r, cj_image **out);
/* NVRTC's version and architectures (cached after the first call; cheap). */
cujit_status cj_nvrtc_archs(const int **archs, size_t *count);

/* compile.c: request -> image, through the caches. */
cujit_status cj_compile(const cj_request *r, cj_image **out);

#endif
