/* ops.h - the operations on arrays, as NumPy's: elementwise arithmetic and functions, take,
 * put and joins, random arrays; the operations' tables and the types of their results,
 * which the reductions (reduce/) use too. Built on the array layer. Private; not
 * installed. */
#ifndef CUJIT_OPS_H
#define CUJIT_OPS_H

#include "array/array.h"

/* ---- promote.c: the types of results ---- */

/* The type arithmetic on elements of type t is computed and accumulated in: float for the
 * 16-bit floats, t itself for the others. */
int cj_ops_compute_type(int t);
/* The type a sum, product or cumulative sum of elements of type t gives (NumPy's): 64-bit
 * for bool and the narrower integers, t itself for the others. */
int cj_ops_sum_type(int t);

/* ---- optable.c: the operations' tables ---- */

/* A row of CUJIT_BINOP_MAP, CUJIT_UNOP_MAP or CUJIT_REDOP_MAP (cujit_array.h). */
typedef struct cj_op {
  const char *name;  /* the enumerator: "CUJIT_BINOP_ADD" */
  const char *numpy; /* NumPy's name, which names the operation's kernels and ranges */
  const char *cuda;  /* an operator, a C math function of doubles, a cj_ function, or a
                        reduction's combination of a and b (see the header) */
  const char *types; /* the kinds it takes: b, i, f, c */
} cj_op;

/* The row of a binary, unary or reduction op; NULL for a value that is none. */
const cj_op *cj_binop_of(int op);
const cj_op *cj_unop_of(int op);
const cj_op *cj_redop_of(int op);
/* An element type's kind as the tables write it: b, i, f or c ('?' for none). */
char cj_op_kind(int type);
/* Whether op takes (promoted) element type `type`. */
int cj_op_takes(const cj_op *op, int type);
/* CUJIT_ERROR_INVALID_VALUE: op is not defined for `type`, for `fn`, saying why. */
cujit_status cj_op_refuse(const char *fn, const cj_op *op, int type);

/* ---- intwrap.c: integer arithmetic in kernels, wrapping as NumPy's ---- */

/* Device code (guarded: any number of times in a source): cj_add, cj_sub, cj_mul and
 * cj_neg of an integer type T (cj_add<T>(a, b)), cj_ipow and cj_ifmod, each giving the
 * two's complement result modulo 2^bits with no signed overflow (undefined in C++). */
extern const char cj_int_source[];
/* Whether arithmetic on `type` computes through cj_int_source: the integers but bool. */
int cj_int_wraps(int type);

/* ---- cxmath.c: complex functions in kernels ---- */

/* Device code (guarded): cj_csqrt, cj_clog, cj_clog10, cj_casin, cj_cacos, cj_catan, cj_ctan,
 * cj_ctanh of a cuda::std::complex<T>, cj_cpow(x, y) and cj_cdiv(a, b), accurate where
 * cuda::std::complex's formulas cancel or overflow (cxmath.c says where); arguments with an
 * infinite or NaN part give cuda::std's (Annex G's) results. */
extern const char cj_complex_source[];

/* ---- ops.c: elementwise operations ---- */

/* The shape of the result when n operands meet (NULL ones are scalars; names[j] names
 * operand j in messages), by NumPy's broadcasting, into *shape (its ndim, shape, C-order
 * strides, size and the first operand's stream): operands of a single element that is
 * broadcast get bit j of *bcast (bcast may be NULL; operands past the 32nd get none).
 * Shapes that do not broadcast, or a result of more than 2^62 elements, are
 * CUJIT_ERROR_INVALID_VALUE naming both, for `fn`. */
cujit_status cj_ops_broadcast(const char *fn, const cj_array *const *ops, const char *const *names,
                              size_t n, cj_array *shape, unsigned *bcast);

#endif
