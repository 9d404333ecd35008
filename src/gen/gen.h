/* gen.h - the kernel generators (PyCUDA's ElementwiseKernel, ReductionKernel and scan
 * kernels): a kernel made from a declaration of its arguments and expressions in CUDA C,
 * called on arrays and values. Built on the map engine (array/), the reduction and scan
 * engines (reduce/). Private; not installed. */
#ifndef CUJIT_GEN_H
#define CUJIT_GEN_H

#include "reduce/reduce.h"

/* ---- decl.c: argument declarations of the generators ---- */

typedef struct cj_gen_decl {
  char name[64];
  int type;     /* element type (cujit_type) */
  int is_array; /* declared with '*' */
  int is_const;
} cj_gen_decl;

/* Reads "float a, float *x, ..." into a new array of declarations (cj_free it).
 * CUJIT_ERROR_INVALID_VALUE naming the column and the token when it cannot. */
cujit_status cj_gen_decl_parse(const char *args, cj_gen_decl **out, size_t *n);

/* ---- bcast.c: a call's arrays broadcast to one shape ---- */

/* The most runs of dimensions a stretched array is not stretched along: they alternate
 * with those it is, in at most CUJIT_ARRAY_MAX_DIMS dimensions. */
#define CJ_GEN_RUNS ((CUJIT_ARRAY_MAX_DIMS + 1) / 2)

/* The shape a call's arrays broadcast to (NumPy's rule), and how each array stretched to it
 * (broadcast along a dimension of more than one element: fewer elements than the shape)
 * finds its element at a flat index j of the shape: over each of its runs r of dimensions
 * it is not stretched along, ((j / div) % len) * step elements from its first, a div of 1
 * and a len of 0 standing for no division. */
typedef struct cj_gen_shape {
  cj_array shape;     /* ndim, shape, size (the call's n) and the first array's stream */
  uint64_t stretched; /* bit k: declaration k's array is stretched */
  unsigned char runs[64];
  int64_t count[64]; /* each array's own elements */
  /* a stretched array's argument: its address, then div, len and step of each run */
  uint64_t packed[64][1 + 3 * CJ_GEN_RUNS];
} cj_gen_shape;

/* The shape of a call's arrays (arrays[k]: declaration k's, NULL for a scalar), n at most
 * 64. Shapes that do not broadcast are CUJIT_ERROR_INVALID_VALUE naming two arguments and
 * their shapes, for `fn`. */
cujit_status cj_gen_shape_of(const char *fn, const cj_gen_decl *d, size_t n,
                             const cj_array *const *arrays, cj_gen_shape *s);
/* Whether declaration k's array is stretched (s NULL: none is). */
static inline int cj_gen_stretched(const cj_gen_shape *s, size_t k) {
  return s && k < 64 && (s->stretched >> k & 1);
}
/* Makes each stretched array's argument (args[k], a device pointer, becomes its packed
 * indexer by value); the arguments point into s. */
void cj_gen_shape_args(const cj_gen_shape *s, size_t n, cujit_arg *args);
/* Appends the device code of the indexer a stretched array is in a kernel, cj_bcast<T, R>,
 * and of its walk over consecutive indices, cj_bcast_walk<T, R> (guarded: any number of
 * times in a source). */
void cj_gen_bcast_source(cj_buf *b);
/* Appends the kernel's parameters as the declarations give them ("const float *x, float
 * a"), a stretched array of s (NULL: none) as its indexer, of const elements unless
 * `writable` (and not declared const). */
void cj_gen_params(cj_buf *b, const cj_gen_decl *d, size_t n, const cj_gen_shape *s, int writable);
/* CUJIT_ERROR_INVALID_VALUE for `fn`: the operation writes the stretched arrays of `which`
 * (bit k: declaration k), where each element would be written for several indices. */
cujit_status cj_gen_refuse_write(const char *fn, const cj_gen_decl *d, size_t n,
                                 const cj_gen_shape *s, uint64_t which,
                                 const cj_array *const *arrays);

/* ---- ewtext.c: what an elementwise operation's text says ---- */

/* How an operation touches its arrays (bit k: declaration k). */
typedef struct cj_gen_ew_access {
  int chunks;       /* 1: every array only as `name[i]` (see ewtext.c), so the loop may run
                       the operation on chunks of consecutive elements in registers */
  uint64_t used;    /* the arrays it names */
  uint64_t written; /* those it may write */
  uint64_t whole;   /* those it assigns whole before anything else names them */
} cj_gen_ew_access;

/* Reads `op` (the operation) against its n declarations and the kernel's other parts (each
 * may be NULL). Anything it cannot vouch for gives chunks = 0 and nothing else. */
void cj_gen_ew_access_of(const char *op, const cj_gen_decl *d, size_t n, const char *preamble,
                         const char *loop_prep, const char *after_loop, cj_gen_ew_access *a);

/* ---- elementwise.c: the elementwise generator ---- */

/* An elementwise kernel: `body` runs for every i (a const long long) of the loop;
 * `params` is its parameter list ("const float *a, float *out"), before the loop's own. */
typedef struct cj_gen_ew_kernel {
  const char *name;
  const char *params;
  const char *body;
  const char *preamble;   /* may be NULL */
  const char *loop_prep;  /* may be NULL */
  const char *after_loop; /* may be NULL */
  const int *types;       /* element types it uses (for their headers) */
  size_t n_types;
  const cj_gen_decl *decls; /* the n_types declarations the params were made from */
  cj_gen_ew_access access;  /* what body says of them (ewtext.c) */
  int chunks_failed;        /* set (atomically) when the kernel with chunks did not compile */
} cj_gen_ew_kernel;

/* A call's variant of k: s NULL, or a shape with no array stretched, for arrays of one
 * shape (k's params as they are); else each stretched array an indexer (bcast.c). */

/* The width of k's loop on chunks: elements per access of the arrays it uses (cj_map_width)
 * but those s stretches, or 0 when it runs one element at a time only. */
unsigned cj_gen_ew_width(const cj_gen_ew_kernel *k, const cj_gen_shape *s);
/* Appends k's source: with `chunks`, the loop on chunks of cj_gen_ew_width() elements besides
 * the one at a time, and one more parameter (cj_head: the elements before the first chunk,
 * or -1 for none). A stretched array's indexer is of const elements unless `writable`. */
void cj_gen_ew_source(cj_buf *b, const cj_gen_ew_kernel *k, const cj_gen_shape *s, int chunks,
                      int writable);
/* Compiles k's variant for s (once per process and source text): the kernel with chunks
 * where k has a width and it compiles (*chunks set), else the one at a time. */
cujit_status cj_gen_ew_prepare(cj_gen_ew_kernel *k, const cj_gen_shape *s, cujit_function **fn,
                               int *chunks);
/* cj_head for a call of k's kernel with chunks of w elements: how many elements (from
 * `start`) come before the first chunk boundary, when every array used but those s
 * stretches (args: k's arguments, arrays as device pointers, of `size` elements, a
 * stretched one of its own count) is as far from one as the others and none that k may
 * write overlaps another; else -1 (one element at a time), as for a step other than 1. */
long long cj_gen_ew_head(const cj_gen_ew_kernel *k, const cj_gen_shape *s, unsigned w,
                         int64_t start, int64_t step, int64_t size, const cujit_arg *args);
/* Runs k's variant for s over i = start + j * step for `count` values of j, on `stream`,
 * with `args` matching its params (a stretched array's its indexer: cj_gen_shape_args);
 * `size` is the shape's element count. */
cujit_status cj_gen_ew_run(cj_gen_ew_kernel *k, const cj_gen_shape *s, int64_t start, int64_t step,
                           int64_t count, int64_t size, CUstream stream, const cujit_arg *args,
                           size_t nargs);

/* ---- genargs.c: what the generators' callers give ---- */

/* Reads the caller's generator options (NULL: none) into `own`, as the caller's size says
 * (common.h: cj_sized_in); `fn` names the function in messages. */
cujit_status cj_gen_options(const char *fn, const cujit_generator_options *user,
                            cujit_generator_options *own);

/* Checks a generator's call arguments against its declarations and turns them into kernel
 * arguments (out: n of them): arrays looked up (live, of the declared type, contiguous)
 * and their shapes broadcast (into *s, whose stretched arrays' arguments are their
 * indexers), scalars converted to the declared type or refused, as cujit.h says ("Kernel
 * generators"). arrays[k] gets declaration k's array (NULL for a scalar); n is at most
 * 64. `fn` names the call in messages. */
cujit_status cj_gen_args(const char *fn, const cj_gen_decl *d, size_t n, const cujit_arg *args,
                         size_t nargs, cujit_arg *out, const cj_array **arrays, cj_gen_shape *s);

#endif
