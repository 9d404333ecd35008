/* bundle.h - cujit's bundle: one file holding a kernel source's code for several GPUs
 * (CUBINs, PTX), and, for a bundle made from source, what warms a cache: the source, its
 * options and one export blob per target. docs/bundle.md describes the format. The bytes
 * come from outside: every read is bounds-checked and every payload checksummed. */
#ifndef CUJIT_BUNDLE_H
#define CUJIT_BUNDLE_H

#include "compile/compile.h"

#define CJ_BUNDLE_FORMAT 1
#define CJ_BUNDLE_HEADER_SIZE 40
#define CJ_BUNDLE_ENTRY_SIZE 48
#define CJ_BUNDLE_MAX_ENTRIES 4096
#define CJ_BUNDLE_OPTIONS_FORMAT 1

/* What an entry holds. */
typedef enum cj_bundle_kind {
  CJ_BE_CUBIN = 1,  /* a CUBIN; arch "sm_90" */
  CJ_BE_PTX = 2,    /* PTX text; arch "compute_90" */
  CJ_BE_BLOB = 3,   /* a cujit_module_export() blob; arch the target it was compiled for */
  CJ_BE_SOURCE = 4, /* the CUDA C source the others were compiled from */
  CJ_BE_OPTIONS = 5 /* its name and options (cj_bundle_opts), for recomputing keys */
} cj_bundle_kind;

typedef struct cj_bundle_part {
  uint32_t kind;             /* cj_bundle_kind */
  char arch[16];             /* NUL-terminated; "" where no target applies */
  const unsigned char *data; /* the payload (borrowed) */
  size_t size;
} cj_bundle_part;

/* Nonzero when the bytes start with the bundle magic. */
int cj_bundle_is(const void *data, size_t size);
/* The name of a kind, for listings ("CUBIN", "PTX", "cache entry", ...). */
const char *cj_bundle_kind_name(uint32_t kind);

/* A bundle of the n parts into out; -1 when out of memory. */
int cj_bundle_build(const cj_bundle_part *parts, size_t n, cj_buf *out);

/* Reads and verifies a bundle: 0 with *parts (views into data; the array freed with
 * cj_free) and *n; 1 when the bytes are not a whole, undamaged bundle, with the reason in
 * `why` ("is truncated ..."); -1 when out of memory. Every check of docs/bundle.md is made
 * here, CUBIN and PTX entries included (their target's form, and their bytes through
 * cj_prebuilt_code_why()): a pure function of the bytes, the one every reader goes through,
 * so that loading, listing and warming refuse the same bundles. */
int cj_bundle_parse(const void *data, size_t size, cj_bundle_part **parts, size_t *n, char *why,
                    size_t why_size);

/* ---- the options entry ---- */

/* A request's name, first include directory and options, as a bundle carries them. */
int cj_bundle_opts_encode(const cj_request *r, cj_buf *out);

/* The options entry read back: the strings and lists live in this struct's own storage. */
typedef struct cj_bundle_opts {
  char *name;
  char *dir; /* the source file's directory, or NULL */
  unsigned flags;
  char **include_dirs, **defines, **nvrtc_options, **name_expressions; /* NULL-ended */
  cujit_header *headers;                                               /* ended by {NULL, NULL} */
  char **owned; /* every string above, freed with the struct */
  size_t n_owned;
} cj_bundle_opts;

/* 0, 1 with the reason in `why`, or -1 when out of memory. */
int cj_bundle_opts_decode(const unsigned char *p, size_t n, cj_bundle_opts *o, char *why,
                          size_t why_size);
/* Points o's fields at b's (o->arch and the time limits are left as they are). */
void cj_bundle_opts_apply(const cj_bundle_opts *b, cujit_options *o);
void cj_bundle_opts_free(cj_bundle_opts *o);

#endif
