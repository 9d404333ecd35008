/* optable.c - the operations' tables (cujit_array.h: CUJIT_BINOP_MAP, CUJIT_UNOP_MAP,
 * CUJIT_REDOP_MAP) as the kernels' writers read them: each row by its enumerator, with its
 * names, its CUDA form and the kinds of types it takes. Nothing else lists the operations. */
#include "ops/ops.h"

#define CJ_OP_ROW_(family, name, num, numpy, cuda, types, what) \
  [num] = {"CUJIT_" #family "_" #name, numpy, cuda, types},
#define CJ_BINOP_ROW_(...) CJ_OP_ROW_(BINOP, __VA_ARGS__)
#define CJ_UNOP_ROW_(...) CJ_OP_ROW_(UNOP, __VA_ARGS__)
#define CJ_REDOP_ROW_(...) CJ_OP_ROW_(REDOP, __VA_ARGS__)

static const cj_op binops[] = {CUJIT_BINOP_MAP(CJ_BINOP_ROW_)};
static const cj_op unops[] = {CUJIT_UNOP_MAP(CJ_UNOP_ROW_)};
static const cj_op redops[] = {CUJIT_REDOP_MAP(CJ_REDOP_ROW_)};

/* The row of `op` in a table of n rows, or NULL (a value no enumerator has, or a gap). */
static const cj_op *row(const cj_op *table, size_t n, int op) {
  return op >= 0 && (size_t)op < n && table[op].numpy ? &table[op] : NULL;
}

const cj_op *cj_binop_of(int op) { return row(binops, CJ_COUNT(binops), op); }
const cj_op *cj_unop_of(int op) { return row(unops, CJ_COUNT(unops), op); }
const cj_op *cj_redop_of(int op) { return row(redops, CJ_COUNT(redops), op); }

char cj_op_kind(int type) {
  switch (cj_elem_of(type) ? cj_elem_of(type)->kind : CJ_SK_BYTES) {
    case CJ_SK_BOOL: return 'b';
    case CJ_SK_SIGNED:
    case CJ_SK_UNSIGNED: return 'i';
    case CJ_SK_FLOAT: return 'f';
    case CJ_SK_COMPLEX: return 'c';
    default: return '?';
  }
}

int cj_op_takes(const cj_op *op, int type) {
  char k = cj_op_kind(type);
  const char *t;
  for (t = op->types; *t; t++)
    if (*t == k) return 1;
  return 0;
}

cujit_status cj_op_refuse(const char *fn, const cj_op *op, int type) {
  const char *why = cj_op_kind(type) == 'c'   ? "complex numbers have no order"
                    : cj_op_kind(type) == 'b' ? "bools are not numbers here"
                                              : "not of the kinds it takes";
  if (op == cj_binop_of(CUJIT_BINOP_SUB) && cj_op_kind(type) == 'b')
    why = "use CUJIT_BINOP_NE for the exclusive or of booleans";
  else if (op == cj_unop_of(CUJIT_UNOP_NEG) && cj_op_kind(type) == 'b')
    why = "use CUJIT_BINOP_EQ with false for logical not";
  else if (op == cj_binop_of(CUJIT_BINOP_FMOD) && cj_op_kind(type) == 'c')
    why = "complex numbers have no remainder";
  return cj_fail(CUJIT_ERROR_INVALID_VALUE, "%s: %s (%s) is not defined for %s (%s)", fn, op->numpy,
                 op->name, cj_elem_of(type)->name, why);
}
