/* lookup.c - finding kernels and variables of a module by name (plain, qualified, a
 * symbol, or a name expression), with the candidates listed when a name is missing or
 * matches several. */
#include <string.h>

#include "module/function.h"

enum { MAX_LISTED = 40 };

/* Appends "readable (symbol)" for each listed symbol. */
static void list_symbols(cj_buf *b, char *const *syms, size_t n, const size_t *idx) {
  char name[256];
  size_t i;
  for (i = 0; i < n && i < MAX_LISTED; i++) {
    const char *sym = syms[idx ? idx[i] : i];
    cj_symbol_readable(sym, name, sizeof name);
    cj_buf_printf(b, "%s%s", i ? ", " : "", name);
    if (strcmp(name, sym) != 0) cj_buf_printf(b, " (%s)", sym);
  }
  if (n > MAX_LISTED) cj_buf_printf(b, " and %zu more", n - MAX_LISTED);
}

static cujit_status fail_listing(cujit_status st, cj_buf *b) {
  if (b->oom) {
    cj_buf_free(b);
    return cj_fail_oom("describing a lookup failure");
  }
  st = cj_fail(st, "%s", b->data);
  cj_buf_free(b);
  return st;
}

static cujit_status not_found(const cj_module *m, const char *what, const char *name,
                              char *const *syms, size_t n) {
  cj_buf b = {0};
  cj_buf_printf(&b, "module '%s' has no %s '%s'; ", m->name, what, name);
  if (n == 0) {
    cj_buf_printf(&b, "it has no %ss at all", what);
  } else {
    cj_buf_printf(&b, "its %ss: ", what);
    list_symbols(&b, syms, n, NULL);
  }
  if (strchr(name, '<'))
    cj_buf_printf(&b,
                  ". Template instances are found through name expressions: add \"%s\" "
                  "to cujit_options.name_expressions",
                  name);
  return fail_listing(CUJIT_ERROR_NOT_FOUND, &b);
}

static cujit_status ambiguous(const cj_module *m, const char *what, const char *name,
                              char *const *syms, const size_t *idx, size_t n) {
  cj_buf b = {0};
  cj_buf_printf(&b, "'%s' matches %zu %ss of module '%s': ", name, n, what, m->name);
  list_symbols(&b, syms, n, idx);
  cj_buf_puts(&b, "; pass the symbol of the one you want, or a name expression that selects "
                  "it (listed in cujit_options.name_expressions, e.g. \"scale<float>\")");
  return fail_listing(CUJIT_ERROR_AMBIGUOUS, &b);
}

/* The lowered name of name expression `name` (or of "&name"), or NULL. */
static const char *lowered_of(const cj_module *m, const char *name) {
  size_t i;
  for (i = 0; i < m->image->n_names; i++) {
    const char *e = m->image->name_exprs[i];
    if (strcmp(e, name) == 0 || (e[0] == '&' && strcmp(e + 1, name) == 0))
      return m->image->lowered[i];
  }
  return NULL;
}

static cujit_status resolve(const cj_module *m, char *const *syms, size_t n, const char *what,
                            const char *name, const char **sym) {
  size_t found[MAX_LISTED], count;
  const char *lowered = lowered_of(m, name), *given = name;
  if (lowered) name = lowered;
  count = cj_symbol_find(syms, n, name, found, MAX_LISTED);
  if (count == 1) {
    *sym = syms[found[0]];
    return CUJIT_OK;
  }
  if (count > 1) return ambiguous(m, what, name, syms, found, count);
  CJ_CHECK(!lowered, CUJIT_ERROR_NOT_FOUND,
           "name expression '%s' of module '%s' lowers to '%s', "
           "which is not a %s of the module",
           given, m->name, lowered, what);
  return not_found(m, what, name, syms, n);
}

/* Asks the driver for the kernels of a CUBIN or fatbin, which has no PTX to read them
 * from: loads it on `dev` first (module lock held; once per module). */
static cujit_status list_kernels(cj_module *m, cj_mstate *s, CUdevice dev) {
  const cj_limits *lim;
  CUkernel *ks = NULL;
  unsigned count = 0, i;
  CUresult r;
  int v;
  cujit_status st = CUJIT_OK;
  if (s->kernels_listed) return CUJIT_OK;
  CJ_CHECK(cj_cu.cuLibraryGetKernelCount && cj_cu.cuLibraryEnumerateKernels &&
               cj_cu.cuKernelGetName,
           CUJIT_ERROR_NOT_SUPPORTED,
           "module '%s' is a CUBIN or fatbin, whose kernels only the "
           "driver can list, and this driver cannot (cuLibraryEnumerateKernels needs CUDA 12.4 "
           "or newer); update the driver, or load the module from PTX",
           m->name);
  CJ_TRY(cj_module_load(m, s, dev, &v, &lim));
  r = cj_cu.cuLibraryGetKernelCount(&count, s->lib[v]);
  if (r == CUDA_SUCCESS && count > 0 && !(ks = cj_calloc(count, sizeof *ks)))
    return cj_fail_oom("listing the module's kernels");
  if (r == CUDA_SUCCESS && count > 0) r = cj_cu.cuLibraryEnumerateKernels(ks, count, s->lib[v]);
  for (i = 0; r == CUDA_SUCCESS && st == CUJIT_OK && i < count; i++) {
    const char *name = NULL;
    r = cj_cu.cuKernelGetName(&name, ks[i]);
    if (r == CUDA_SUCCESS && name) st = cj_symtab_add(&s->syms, 1, name, strlen(name));
  }
  cj_free(ks);
  if (r != CUDA_SUCCESS) st = cj_module_load_failed(m, v, r, dev, lim->cc, s->jit_log[v]);
  if (st != CUJIT_OK) {
    cj_strv_free(s->syms.kernels, s->syms.n_kernels);
    s->syms.kernels = NULL;
    s->syms.n_kernels = s->syms.cap_kernels = 0;
    return st;
  }
  s->kernels_listed = 1;
  return CUJIT_OK;
}

/* Resolves `name` among the module's kernels or globals. No device is needed, except to
 * list the kernels of a CUBIN or fatbin (on `dev`, which is then the current device). A
 * variable of a module whose variables could not be listed is taken by its symbol. */
static cujit_status lookup_locked(cj_module *m, cj_mstate *s, int kernels, const char *name,
                                  const char **sym, CUdevice dev) {
  if (!kernels && !s->globals_known) {
    *sym = name;
    return CUJIT_OK;
  }
  if (!kernels) return resolve(m, s->syms.globals, s->syms.n_globals, "variable", name, sym);
  if (cj_module_binary_only(m)) CJ_TRY(list_kernels(m, s, dev));
  return resolve(m, s->syms.kernels, s->syms.n_kernels, "kernel", name, sym);
}

cujit_status cj_module_lookup(cj_module *m, int kernels, const char *name, const char **sym,
                              CUdevice dev) {
  cj_mstate *s;
  cujit_status st;
  pthread_mutex_lock(&m->lock);
  s = cj_module_state(m);
  st = s ? lookup_locked(m, s, kernels, name, sym, dev)
         : cj_fail_oom("listing the module's kernels");
  pthread_mutex_unlock(&m->lock);
  return st;
}

cujit_status cujit_module_get_function(cujit_module *h, const char *name, cujit_function **out) {
  const char *sym = NULL;
  CUcontext ctx;
  CUdevice dev = 0;
  cujit_function *fn;
  cj_module *m;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_module_get_function: fn is NULL");
  *out = NULL;
  CJ_TRY(cj_module_get(h, "cujit_module_get_function", &m));
  CJ_CHECK(name && name[0], CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_get_function: name is NULL or empty");
  if (cj_module_binary_only(m)) CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(cj_module_lookup(m, 1, name, &sym, dev));
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  pthread_mutex_lock(&m->lock);
  fn = cj_function_find(m->dev, sym);
  if (!fn)
    st = cj_function_new(m, m->dev, sym, dev, &fn);
  else if ((st = cj_slot_index(fn->dev, dev)) == CUJIT_OK)
    st = cj_slot_fill(fn, dev);
  pthread_mutex_unlock(&m->lock);
  if (st == CUJIT_OK) *out = fn;
  return st;
}
