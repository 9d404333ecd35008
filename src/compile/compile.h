/* compile.h - the compile layer: a request (source + resolved options) becomes an image
 * (PTX, CUBIN, lowered names, log) with NVRTC. The cache layer above decides when. */
#ifndef CUJIT_COMPILE_H
#define CUJIT_COMPILE_H

#include <nvrtc.h>

#include "common/common.h"

/* Everything one compile needs, every option resolved. The request borrows the caller's
 * strings for the duration of the call (nothing is copied on the way to a cache hit);
 * what only NVRTC needs (argv, header arrays) is built by cj_request_prepare() on a miss. */
struct cj_image;

typedef struct cj_request {
  const char *source; /* borrowed */
  size_t source_len;
  const char *name; /* program name for logs ("source.cu" by default); borrowed */
  char arch[32];    /* "sm_90", "compute_90", or "" for NVRTC's default target; final
                       once arch_pending is 0 (cj_request_prepare) */
  int arch_pending; /* CJ_ARCH_*: what checking the target still needs NVRTC for */
  const char
      *first_include_dir; /* searched before include_dirs (a file's directory); may be NULL */
  const char *const *include_dirs; /* the caller's, in search order */
  size_t n_include_dirs;
  const char *const *defines;
  size_t n_defines;
  const char *const *user_options; /* the caller's NVRTC options, as given */
  size_t n_user_options;
  const cujit_header *headers; /* in-memory headers */
  size_t n_headers;
  int toolkit; /* search the toolkit's include directories (after the caller's) */
  const char *const *name_exprs;
  size_t n_name_exprs;
  unsigned flags; /* CUJIT_OPT_* */
  unsigned link;  /* CJ_LINK_*: compiled as a part of a link (-rdc=true, -dlto) */
  /* How long NVRTC may take and who may stop it: they change when a compile ends, never
   * its output, so no key holds them. */
  double time_limit_s;       /* 0: no limit */
  int (*cancel)(void *user); /* may be NULL */
  void *cancel_user;
  /* Who compiles on a cache miss: NULL for this process (cj_request_prepare() and
   * cj_nvrtc_compile()); an asynchronous compile sets the worker pool's (worker/pool.c).
   * Either way the result is the same image. */
  cujit_status (*compiler)(struct cj_request *r, struct cj_image **out);
  /* Built by cj_request_prepare(), freed by cj_request_free(). */
  const char *const *toolkit_dirs; /* the toolkit's include directories, when searched */
  size_t n_toolkit_dirs;
  char **argv; /* the full NVRTC command line */
  size_t argc;
  const char **header_names; /* the in-memory headers NVRTC gets, the built-ins included */
  const char **header_sources;
  size_t n_nvrtc_headers;
} cj_request;

/* The result of a compile. Immutable once built; shared by reference count between
 * modules and the memory cache. */
typedef struct cj_image {
  int refs;
  char *ptx;            /* NUL-terminated */
  size_t ptx_size;      /* without the NUL */
  unsigned char *cubin; /* NULL for a PTX-only target */
  size_t cubin_size;
  char *log;     /* never NULL ("" when empty) */
  char arch[32]; /* what it was compiled for (from the PTX when NVRTC chose) */
  size_t n_names;
  char **name_exprs; /* name expressions and their lowered names, same order */
  char **lowered;
  char *source;          /* the source it was compiled from (modules borrow it); owned */
  size_t source_len;     /* without the NUL */
  int prebuilt;          /* 0 when compiled here, else the cj_prebuilt_kind it was loaded
                            from (prebuilt.h): no source, names or cache entry then */
  unsigned char *fatbin; /* a prebuilt fatbin, loaded as it is; else NULL */
  size_t fatbin_size;
  int linked; /* 1 for the output of a link (cache/fetchlink.c): a CUBIN whose symbol
                 table lists the kernels and variables, loaded only as it is
                 (the PTX, when there is any, is for reading) */
  struct cj_ptx_index *index; /* its kernels with their parameters and its variables, read
                                 from its PTX once (symbols.h); NULL: read the PTX */
  void *block;       /* when set, ptx, cubin and log are views into it (the cache entry they
                        were read from), which is freed in their place */
  size_t block_size; /* its bytes */
} cj_image;

/* 1 when the image's `cubin` holds NVVM LTO-IR rather than a CUBIN (a source compiled with
 * -dlto for a link), known by its magic number. */
int cj_image_is_ltoir(const cj_image *im);
/* 1 when the bytes start as NVVM LTO-IR does. */
int cj_image_bytes_are_ltoir(const void *data, size_t size);

/* cj_request.link: relocatable device code for a link, and LTO-IR for link-time
 * optimisation; part of the key. */
enum { CJ_LINK_RDC = 1, CJ_LINK_LTO = 2 };

enum { CJ_ARCH_CHECK = 1, CJ_ARCH_CHECK_ENV = 2, CJ_ARCH_CLAMP = 3 };

/* options.c: validates opts and fills r, borrowing the caller's strings. The target is
 * found without loading NVRTC (a cache hit must not): an explicit one is checked against
 * NVRTC's list, and the device's clamped to it, by cj_request_prepare().
 * `first_include_dir` (may be NULL) goes before the caller's include directories. */
cujit_status cj_request_init(cj_request *r, const char *source, const char *name,
                             const cujit_options *opts, const char *first_include_dir);
/* Finishes the target (loading NVRTC) and builds what NVRTC needs (argv, header arrays).
 * Returns CUJIT_OK, out of memory, or the target's or NVRTC's loading failure. */
cujit_status cj_request_prepare(cj_request *r);
void cj_request_free(cj_request *r);
/* The i-th include directory of the search order (first_include_dir, then the caller's). */
size_t cj_request_include_count(const cj_request *r);
const char *cj_request_include_dir(const cj_request *r, size_t i);
/* Arch validation and clamping, exposed for tests and the CLI. Writes "sm_XX" etc. */
cujit_status cj_arch_resolve(const char *requested, char *out, size_t out_size);
/* Largest supported arch <= cc (else the smallest supported), or 0 if the list is empty. */
int cj_arch_clamp(int cc, const int *supported, size_t n);

/* wire.c: a request as bytes, for an asynchronous compile and a worker process. Encodes
 * what the compile's output depends on and the time limit (not the cancel hook, not what
 * cj_request_prepare() builds). 0, or -1 when out of memory (out->oom). */
int cj_request_encode(const cj_request *r, cj_buf *out);
/* Fills r from bytes of cj_request_encode(); its strings point into `data`, which must
 * outlive it, and its lists are allocated: free them with cj_request_decoded_free().
 * 0; 1 when the bytes are not an encoded request (every length is checked); -1 when out
 * of memory. r is left empty on failure. */
int cj_request_decode(const void *data, size_t len, cj_request *r);
/* cj_request_free() and the lists cj_request_decode() allocated. */
void cj_request_decoded_free(cj_request *r);

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
/* Gives an image compiled from source its index (symbols.h), read from its PTX, when it
 * has none: done once, before the image is shared, so that lookups read no PTX. Out of
 * memory, the image stays without one. */
void cj_image_index(cj_image *im);

/* nvrtc.c: compiles with NVRTC; r must be prepared. A compile stopped by r->cancel or
 * r->time_limit_s is CUJIT_ERROR_CANCELLED, saying which. A fork() made while compiles
 * run waits for them to end (NVRTC's lock would stay held in the child), at most 5 s; a
 * child forked while another thread still compiled fails its compiles (CUJIT_ERROR_NVRTC)
 * rather than wait forever. */
cujit_status cj_nvrtc_compile(const cj_request *r, cj_image **out);
/* How long a fork waits for compiles in flight (for tests). */
void cj_nvrtc_set_fork_wait(double seconds);
/* The failure of r's compile stopped `after` seconds in, by r->cancel (`by_hook`) or else
 * by r->time_limit_s, with NVRTC's result: as cj_nvrtc_compile() reports it, and the
 * worker pool reports a worker's compile that it had to stop. */
cujit_status cj_nvrtc_stopped(const cj_request *r, int by_hook, double after, int nvrtc);
/* NVRTC's version and architectures (cached after the first call; cheap; neither creates
 * an NVRTC program). */
cujit_status cj_nvrtc_archs(const int **archs, size_t *count);
cujit_status cj_nvrtc_version_cached(int *major, int *minor);
/* How many NVRTC programs this process has created: a cache hit must not add one. */
uint64_t cj_nvrtc_programs_created(void);

/* pch.c: precompiled headers for sources whose header prefix repeats in this process.
 * Before a compile: 1 when NVRTC should make or use one, with `args` the --pch-dir option
 * to add (and *prefix what cj_pch_end() needs); 0 for a plain compile. */
int cj_pch_begin(const cj_request *r, char *args, size_t args_size, uint64_t *prefix);
/* After a compile that cj_pch_begin() said 1 for: notes whether the header was made. */
void cj_pch_end(uint64_t prefix, nvrtcProgram p);
/* After a compile that failed with a precompiled header (NVRTC's `log`) and succeeded
 * without one: precompiled headers are off for the rest of the process, with a warning. */
void cj_pch_fell_back(uint64_t prefix, const char *log);
/* Called by nvrtc.c's fork hooks around a fork (prepare, then done in parent and child). */
void cj_pch_fork_prepare(void);
void cj_pch_fork_done(void);
/* Precompiled headers made in this process (for tests). */
int cj_pch_created(void);
/* This process's directory of precompiled headers, "" when it has none (for tests). */
void cj_pch_dir(char *out, size_t size);

/* ---- srcfile.c: files a public call names ---- */

/* Reads a source file (a regular file holding no NUL byte) into *text (NUL-terminated,
 * freed with cj_free), and gives the directory part of a path ("." when there is none). */
cujit_status cj_source_read(const char *path, char **text);
char *cj_source_dir(const char *path);
/* Both for a public call `fn` given a .cu file: a NULL or empty path is CUJIT_ERROR_FILE
 * and an empty file CUJIT_ERROR_INVALID_SOURCE, saying so. On success the caller frees
 * *text and *dir with cj_free; on failure both are NULL. */
cujit_status cj_source_file(const char *fn, const char *path, char **text, char **dir);

/* Reads the whole file at `path` (at most `max` bytes) into *f for a public call given a
 * file, failing with CUJIT_ERROR_FILE and a message naming the path: what cannot be
 * opened or read, what is not a regular file (refused before it is opened; `hint` says
 * what to pass instead), what is too large. `what` names the work for an out-of-memory
 * failure. On success f->data is the caller's to free (cj_free). */
cujit_status cj_source_file_load(const char *path, size_t max, const char *what, const char *hint,
                                 cj_file *f);

#endif
