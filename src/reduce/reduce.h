/* reduce.h - the reductions and scans of arrays, as NumPy's: whole arrays and along axes,
 * into device or host memory, dot, allclose and cumsum; and the engines of the reductions
 * and scans, which the generators (gen/) use too. Built on the operations (ops/). Private;
 * not installed. */
#ifndef CUJIT_REDUCE_H
#define CUJIT_REDUCE_H

#include "ops/ops.h"

/* ---- reduce.c: the reduction engine ---- */

/* A reduction kernel: the strings are borrowed for the call they are passed to. */
typedef struct cj_reduce_spec {
  const char *name;     /* kernel name */
  int acc;              /* the type values are combined in (cj_t in the kernel) */
  int result;           /* the result's type (converted from acc as C converts) */
  const char *neutral;  /* the value that changes nothing, an expression */
  const char *reduce;   /* combines a and b */
  const char *map;      /* element i's value, from the parameters and i (a long long) */
  const char *params;   /* the kernel's own parameters ("const float *x"; "" for none) */
  const char *preamble; /* code before the kernel, or NULL */
  const int *types;     /* element types the parameters use (for their headers) */
  size_t ntypes;
  /* May be NULL: the one array parameter whose elements are all the map reads, which the
   * first pass then reads 16 bytes at a time where it is 16-byte aligned; vec_map is the
   * map of its element cj_x (of type vec_type). */
  const char *vec_array;
  int vec_type;
  const char *vec_map; /* may use cj_i, the element's index */
  /* May be NULL (0): cj_t is acc's element type, and the result acc converted. Else cj_t
   * is acc_type, of acc_size bytes (defined in the preamble), and the result result_expr,
   * an expression of cj_acc of the result's type. */
  const char *acc_type;
  size_t acc_size;
  const char *result_expr;
} cj_reduce_spec;

/* Appends the kernel's source; cj_reduce_prologue everything before the kernel (headers,
 * preamble, cj_t, cj_neutral, cj_reduce, and the warp's and block's combinations
 * cj_warp(v, mask, width) and cj_block(v)), for kernels of other shapes (axis.c). */
void cj_reduce_source(cj_buf *b, const cj_reduce_spec *s);
void cj_reduce_prologue(cj_buf *b, const cj_reduce_spec *s);
/* The compiled kernel, kept for the process (cj_array_kernel). CUJIT_ERROR_COMPILE adds
 * the generated source with line numbers to NVRTC's log. */
cujit_status cj_reduce_kernel(const cj_reduce_spec *s, cujit_function **fn);
/* Reduces n elements on `stream`: `args` are the spec's parameters; the result goes to
 * device memory at dst, or, when host is not NULL, to host memory (and the call waits). */
cujit_status cj_reduce_run(cujit_function *fn, const cj_reduce_spec *s, int64_t n, CUstream stream,
                           const cujit_arg *args, size_t nargs, CUdeviceptr dst, void *host);
/* What built-in reduction op computes on elements of type t into `result`: s's acc,
 * result, neutral, reduce, preamble (written into pre) and, for ARGMIN and ARGMAX, its
 * accumulator (a value and its index, cj_vi) and result_expr; neutral holds a neutral
 * that is written out. The caller frees pre and neutral, and sets the rest of s. */
cujit_status cj_reduce_op_code(cj_reduce_spec *s, cj_buf *pre, cj_buf *neutral, cujit_redop op,
                               int t, int result);
/* Appends op's value, in accumulator type acc, of the element x (an expression of type t)
 * at index `at` (the index ARGMIN and ARGMAX give), for a reduction into type `result`: a
 * sum or product into f16 or bf16 rounds the element to it first (NumPy's dtype=). */
void cj_reduce_element(cj_buf *b, cujit_redop op, int t, int acc, int result, const char *x,
                       const char *at);
/* A given output (*out not NULL) for a result of `type`: live, of that type and 0-d. */
cujit_status cj_reduce_output_check(cujit_array **out, int type, const char *fn);
/* The type reduction op gives for an array of type t (cujit_array_reduce()). */
int cj_reduce_result(cujit_redop op, int t);
/* cujit_array_reduce() and cujit_array_dot() of arrays looked up, for `fn` (its name in
 * messages). */
cujit_status cj_reduce_op(cujit_redop op, const cj_array *a, cujit_array **out, const char *fn);
cujit_status cj_reduce_dot_op(const cj_array *a, const cj_array *b, cujit_array **out,
                              const char *fn);
/* reduce_as's checks of op, the array's type t and the accumulator's `type`, for `fn`. */
cujit_status cj_reduce_as_check(const char *fn, cujit_redop op, int t, int type);
/* Reduces all of a (looked up and checked) by op into one element of `result` at dst, on
 * a's stream. */
cujit_status cj_reduce_to(cujit_redop op, const cj_array *a, int result, CUdeviceptr dst);
/* Makes a 0-d output on `stream` when *out is NULL (*made is then 1); *data gets the
 * output's memory. */
cujit_status cj_reduce_output(cujit_array **out, int type, CUstream stream, const char *fn,
                              CUdeviceptr *data, int *made);

/* ---- scan.c: the scan engine ---- */

/* What one scan computes: elements of `in_type` combined as `type`. */
typedef struct cj_reduce_scan_spec {
  int in_type, type;
  const char *op;      /* expression in a and b */
  const char *neutral; /* expression of the neutral element (converted to type) */
  int exclusive;
  const char *name;
  const char *preamble; /* or NULL */
} cj_reduce_scan_spec;

/* Scans `in` into the output (1-D, in's size, of s's type, contiguous; made when *out is
 * NULL, else checked), both contiguous; `fn` names the call in messages. */
cujit_status cj_reduce_scan(const cj_reduce_scan_spec *s, const cj_array *in, cujit_array **out,
                            const char *fn);

#endif
