/* typestest.h - for the CPU groups that test parameter types: sources compiled with NVRTC
 * (no device needed), a kernel's symbol and PTX layout, and the types the compiler gives
 * for it, read as the module layer reads them. Internal: link with cujit_static. */
#ifndef CUJIT_TYPESTEST_H
#define CUJIT_TYPESTEST_H

#include "testutil.h"
#include "compile/symbols.h"
#include "module/function.h"

/* Compiles `src` for compute_90 with `defines` (NULL-terminated, may be NULL) and name
 * expressions `exprs` (may be NULL); `cache` 0 bypasses the caches. Fails the test on an
 * error. */
static inline cujit_module *types_compile(const char *src, const char *name,
                                          const char *const *defines, const char *const *exprs,
                                          const cujit_header *headers, int cache) {
  cujit_options o = {0};
  cujit_module *m = NULL;
  o.arch = "compute_90";
  o.defines = defines;
  o.name_expressions = exprs;
  o.headers = headers;
  o.flags = cache ? 0 : CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, src, name, &o));
  return m;
}

/* The symbol of kernel `name` of m (a plain or qualified name, a name expression of the
 * module, or the symbol itself), borrowed from m or from a static buffer. */
static inline const char *types_symbol(cujit_module *m, const char *name) {
  static char sym[1024];
  const char *lowered = NULL;
  cj_symtab t;
  size_t found[2], n;
  if (cujit_module_get_lowered_name(m, name, &lowered) == CUJIT_OK) return lowered;
  assert_ok(cj_symtab_build(cujit_module_ptx(m, NULL), &t));
  n = cj_symbol_find(t.kernels, t.n_kernels, name, found, 2);
  if (n != 1) fail_msg("'%s' matches %zu kernels of the module", name, n);
  snprintf(sym, sizeof sym, "%s", t.kernels[found[0]]);
  cj_symtab_free(&t);
  return sym;
}

/* A kernel's layout and types: what the module layer keeps with a kernel handle. */
typedef struct types_kernel {
  const char *sym;
  size_t n, *offsets, *sizes;
  cj_ptx_param *ptx;
  cj_ptypes *types;
} types_kernel;

/* Reads kernel `name` of m; `compile` lets an extern "C" kernel's types be probed. The
 * types are NULL (and the detail set) when they cannot be known. */
static inline cujit_status types_read(cujit_module *m, const char *name, int compile,
                                      types_kernel *k) {
  memset(k, 0, sizeof *k);
  k->sym = types_symbol(m, name);
  assert_ok(cj_ptx_params(cujit_module_ptx(m, NULL), k->sym, &k->n, &k->offsets, &k->sizes));
  assert_ok(cj_ptx_param_list(cujit_module_ptx(m, NULL), k->sym, &k->n, &k->ptx));
  return cj_ptypes_of(cj_module_find(m), k->sym, k->n, compile, &k->types);
}

static inline void types_free(types_kernel *k) {
  free(k->offsets);
  free(k->sizes);
  free(k->ptx);
  cj_ptypes_free(k->types);
  memset(k, 0, sizeof *k);
}

/* Asserts the C spellings of k's parameters, separated by "; ". */
static inline void types_expect_spelled(const types_kernel *k, const char *want) {
  char got[2048] = "";
  size_t i;
  for (i = 0; i < k->types->n; i++) {
    if (i) strcat(got, "; ");
    strncat(got, k->types->p[i].m.spelling, sizeof got - strlen(got) - 1);
  }
  if (strcmp(got, want) != 0) fail_msg("%s: spelled \"%s\", wanted \"%s\"", k->sym, got, want);
}

#endif
