/* symbols.h - the kernels and variables of an image, read from its PTX, and matching the
 * names users write ("multiply_them", "ns::kernel") against mangled symbols. Needs no
 * device, so lookups fail or succeed the same way on machines without a GPU. */
#ifndef CUJIT_SYMBOLS_H
#define CUJIT_SYMBOLS_H

#include "common/common.h"

typedef struct cj_symtab {
  char **kernels; /* symbols of the .entry functions, in PTX order */
  size_t n_kernels, cap_kernels;
  char **globals; /* symbols of .global and .const variables */
  size_t n_globals, cap_globals;
  int borrowed; /* the lists are an index's (cj_symtab_borrow): nothing is added or freed */
} cj_symtab;

/* Reads the entry and variable symbols of `ptx`. Fails only when out of memory. */
cujit_status cj_symtab_build(const char *ptx, cj_symtab *t);
void cj_symtab_free(cj_symtab *t);
/* Appends the first `len` bytes of `name` to t's kernels (kernel != 0) or globals. Returns
 * CUJIT_OK or CUJIT_ERROR_OUT_OF_MEMORY (with its detail). */
cujit_status cj_symtab_add(cj_symtab *t, int kernel, const char *name, size_t len);

/* 1 when symbol `sym` is what `name` refers to: the same text (extern "C" symbols, or a
 * mangled name given as it is), or for an Itanium-mangled symbol, `name` equal to its
 * unqualified name ("kernel") or to a trailing part of its qualified name ("ns::kernel"). */
int cj_symbol_matches(const char *sym, const char *name);

/* Indexes of the symbols in syms[0..n) that `name` refers to: an exact match alone wins;
 * otherwise every symbol cj_symbol_matches() accepts. Writes at most `cap` indexes to
 * `found` and returns how many there are in all. */
size_t cj_symbol_find(char *const *syms, size_t n, const char *name, size_t *found, size_t cap);

/* A readable form of `sym` for messages: "ns::kernel", "scale<...>", or the symbol itself
 * when it is not mangled. Writes into buf (NUL-terminated, truncated to size). */
const char *cj_symbol_readable(const char *sym, char *buf, size_t size);

/* The unqualified name of `sym` ("kernel" for ns::kernel<float>), or the symbol itself
 * when it is not mangled. Writes into buf (NUL-terminated, truncated to size). */
const char *cj_symbol_unqualified(const char *sym, char *buf, size_t size);

/* One parameter as the PTX declares it. */
typedef struct cj_ptx_param {
  size_t offset, size, align;
  int array; /* declared as bytes (".b8 name[N]"): a struct, union or vector; else a plain
                scalar of the PTX's own types (integers, floats, pointers, enums) */
} cj_ptx_param;

/* The parameters of entry `sym` as the PTX declares them (*out allocated with cj_malloc,
 * owned by the caller; NULL when there are none). Returns as cj_ptx_params(). */
cujit_status cj_ptx_param_list(const char *ptx, const char *sym, size_t *n, cj_ptx_param **out);

/* ---- the index: what lookups need of a PTX, read in one pass ---- */

/* Version of what an index holds and how it is read from the PTX; an index written by
 * another (kept in a cache entry) is not used. */
#define CJ_PTX_INDEX_VERSION 1

/* One kernel of an index. */
typedef struct cj_ptx_kernel {
  const char *name;     /* its symbol */
  size_t nparams;       /* 0 when its parameter list could not be read */
  cj_ptx_param *params; /* nparams of them */
  int params_known;     /* the parameter list was read */
} cj_ptx_kernel;

/* The kernels of a PTX with their parameters, and its variables: what
 * cj_symtab_build() and cj_ptx_param_list() would read, in one allocation (cj_free). The
 * image keeps one, made when it was compiled or read with it from its cache entry, so that
 * a lookup reads no PTX. */
typedef struct cj_ptx_index {
  size_t n_kernels, n_globals;
  cj_ptx_kernel *kernels;
  char **kernel_names; /* kernels[i].name, as a symbol table lists them */
  char **globals;
  /* while it is filled: where the next parameters and name go, and where their room ends */
  cj_ptx_param *next_param, *end_param;
  char *next_char, *end_char;
} cj_ptx_index;

/* An index with room for the counts given (`chars`: the names' bytes, their NULs
 * included), its arrays zeroed; NULL when out of memory. Fill it with
 * cj_ptx_index_put_name() and cj_ptx_index_put_params(). */
cj_ptx_index *cj_ptx_index_new(size_t n_kernels, size_t n_globals, size_t n_params, size_t chars);
/* Copies a name of `len` bytes into x's room for names; NULL when it does not fit. */
char *cj_ptx_index_put_name(cj_ptx_index *x, const char *name, size_t len);
/* Takes room for n parameters; NULL when they do not fit. */
cj_ptx_param *cj_ptx_index_put_params(cj_ptx_index *x, size_t n);
/* The index of `ptx` (owned by the caller), or NULL when out of memory (with no error
 * detail: an index is an optimisation, and those who lack one read the PTX). */
cj_ptx_index *cj_ptx_index_build(const char *ptx);
/* The kernel of symbol `sym`, or NULL. */
const cj_ptx_kernel *cj_ptx_index_find(const cj_ptx_index *x, const char *sym);
/* 1 when every parameter of k is a plain scalar or pointer (none declared as bytes), whose
 * place the PTX fixes by its size alone. */
int cj_ptx_kernel_scalars_only(const cj_ptx_kernel *k);
/* Makes t list x's kernels and variables without copying them (t is then only read, and
 * freeing it frees nothing of x). */
void cj_symtab_borrow(cj_symtab *t, const cj_ptx_index *x);

/* The parameter layout of entry `sym` as the PTX declares it: count, byte offsets and sizes
 * (arrays allocated with cj_malloc, owned by the caller; NULL when there are none).
 * Returns CUJIT_OK, CUJIT_ERROR_NOT_FOUND when the entry is missing or its parameter list
 * cannot be read, or CUJIT_ERROR_OUT_OF_MEMORY. */
cujit_status cj_ptx_params(const char *ptx, const char *sym, size_t *n, size_t **offsets,
                           size_t **sizes);

#endif
