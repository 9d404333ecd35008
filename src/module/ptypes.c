/* ptypes.c - a kernel's parameter types as the compiler gives them: decoded from a C++
 * kernel's mangled symbol at lookup (no compile), or for an extern "C" kernel from the
 * probe (probe.c) when a typed call or a plain value first needs them; each sealed with
 * what it takes (accept.c). */
#include <pthread.h>
#include <string.h>

#include "module/function.h"

/* Serialises publishing a kernel's types; launches read them without it. */
static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_types, types_lock)

cj_ptypes *cj_ptypes_new(size_t n, int from) {
  cj_ptypes *t = cj_calloc(1, sizeof *t + n * (sizeof(uint64_t) + sizeof(cj_ptype)));
  if (!t) return NULL;
  t->from = from;
  t->n = n;
  t->accept = (uint64_t *)(void *)(t + 1);
  t->p = (cj_ptype *)(void *)(t->accept + n);
  return t;
}

void cj_ptypes_free(cj_ptypes *t) {
  size_t i;
  if (!t) return;
  for (i = 0; i < t->n; i++) cj_free(t->p[i].m.spelling);
  cj_free(t);
}

void cj_ptypes_seal(cj_ptypes *t) {
  size_t i;
  for (i = 0; i < t->n; i++) t->accept[i] = cj_accept_of(t->p[i].want);
}

/* The cujit_type a parameter of class c is. */
static uint8_t want_of(const cj_ptype *p) {
  static const uint8_t scalar[] = {CUJIT_TYPE_BOOL, CUJIT_TYPE_I8,  CUJIT_TYPE_U8,   CUJIT_TYPE_I16,
                                   CUJIT_TYPE_U16,  CUJIT_TYPE_I32, CUJIT_TYPE_U32,  CUJIT_TYPE_I64,
                                   CUJIT_TYPE_U64,  CUJIT_TYPE_F16, CUJIT_TYPE_BF16, CUJIT_TYPE_F32,
                                   CUJIT_TYPE_F64,  CUJIT_TYPE_PTR};
  unsigned c = p->m.cls;
  if (c >= CJ_MC_BOOL && c <= CJ_MC_PTR) return scalar[c - CJ_MC_BOOL];
  return CUJIT_TYPE_BYTES; /* vectors, structs, enums, anything else: checked by size */
}

/* The parameter types of `sym`: decoded, or probed for an extern "C" kernel. */
static cujit_status params_of(cj_module *m, const char *sym, int compile, cj_mparams *mp) {
  char *lowered = NULL;
  cujit_status st;
  if (cj_mangled(sym)) return cj_mangle_params(sym, strlen(sym), mp);
  CJ_CHECK(compile, CUJIT_ERROR_NOT_FOUND,
           "the types of extern \"C\" kernel '%s' are not known "
           "before a typed call asks for them",
           sym);
  CJ_TRY(cj_module_probe(m, sym, &lowered));
  st = cj_mangle_probe_params(lowered, strlen(lowered), CJ_PROBE_NAME, mp);
  cj_free(lowered);
  return st;
}

/* Adds what the PTX says of each parameter: its alignment, and whether it is passed as a
 * plain scalar. Without PTX (a CUBIN or fatbin) these stay unknown. */
static cujit_status add_ptx(cj_module *m, const char *sym, cj_ptypes *t) {
  const cj_ptx_kernel *k = m->image->index ? cj_ptx_index_find(m->image->index, sym) : NULL;
  cj_ptx_param *list = NULL;
  size_t n = 0, i;
  cujit_status st;
  if (cj_module_binary_only(m) || !m->image->ptx || !m->image->ptx[0]) return CUJIT_OK;
  if (k && k->params_known) { /* the image's index holds what the PTX says */
    for (i = 0; k->nparams == t->n && i < k->nparams; i++) {
      t->p[i].align = (uint32_t)k->params[i].align;
      t->p[i].integer = !k->params[i].array;
    }
    return CUJIT_OK;
  }
  st = cj_ptx_param_list(m->image->ptx, sym, &n, &list);
  if (st == CUJIT_ERROR_OUT_OF_MEMORY) return st;
  for (i = 0; st == CUJIT_OK && n == t->n && i < n; i++) {
    t->p[i].align = (uint32_t)list[i].align;
    t->p[i].integer = !list[i].array;
  }
  cj_free(list);
  return CUJIT_OK;
}

cujit_status cj_ptypes_of(cj_module *m, const char *sym, size_t n, int compile, cj_ptypes **out) {
  cj_mparams mp;
  cj_ptypes *t;
  size_t i;
  cujit_status st;
  *out = NULL;
  CJ_TRY(params_of(m, sym, compile, &mp));
  if (mp.n != n) {
    cj_mparams_free(&mp);
    return cj_fail(CUJIT_ERROR_SIGNATURE,
                   "the symbol '%s' names %zu parameters, but the "
                   "kernel's parameter layout has %zu",
                   sym, mp.n, n);
  }
  if (!(t = cj_ptypes_new(n, CJ_TYPES_COMPILER))) {
    cj_mparams_free(&mp);
    return cj_fail_oom("reading a kernel's parameter types");
  }
  for (i = 0; i < n; i++) {
    t->p[i].m = mp.v[i]; /* the spelling moves */
    t->p[i].want = want_of(&t->p[i]);
  }
  cj_free(mp.v);
  cj_ptypes_seal(t);
  if ((st = add_ptx(m, sym, t)) != CUJIT_OK) {
    cj_ptypes_free(t);
    return st;
  }
  *out = t;
  return CUJIT_OK;
}

int cj_function_offer_types(cujit_function *fn, cj_ptypes *t) {
  cj_ptypes *cur;
  int taken = 0;
  pthread_mutex_lock(&types_lock);
  cur = fn->types;
  if (!cur || t->from == CJ_TYPES_COMPILER || cur->from == CJ_TYPES_SIGNATURE) {
    t->older = cur;
    __atomic_store_n(&fn->types, t, __ATOMIC_RELEASE);
    taken = 1;
  }
  pthread_mutex_unlock(&types_lock);
  if (!taken) cj_ptypes_free(t);
  return taken;
}

void cj_function_drop_types(cujit_function *fn) {
  cj_ptypes *t = fn->types, *older;
  for (; t; t = older) {
    older = t->older;
    cj_ptypes_free(t);
  }
  fn->types = NULL;
}

void cj_function_decode(cujit_function *fn) {
  cj_ptypes *t = NULL;
  if (!cj_mangled(fn->lowered)) return; /* extern "C": probed when a typed call needs it */
  if (cj_ptypes_of(fn->module, fn->lowered, fn->nparams, 0, &t) == CUJIT_OK)
    cj_function_offer_types(fn, t);
  else
    cj_debug("kernel '%s': parameter types unknown, launches check sizes only: %s", fn->name,
             cujit_last_error());
}

/* Says why fn's types cannot be known and what to do instead. */
static cujit_status types_failed(const cujit_function *fn, cujit_status st) {
  const char *how = "give it an explicit signature with cujit_function_set_signature(), e.g. "
                    "\"f32 ptr ptr u32\" (see cujit.h)";
  char *why;
  if (st == CUJIT_ERROR_OUT_OF_MEMORY) return st;
  CJ_CHECK(fn->module, CUJIT_ERROR_SIGNATURE,
           "kernel '%s' belongs to no module, so its parameter "
           "types cannot be asked of the compiler; %s",
           fn->name, how);
  CJ_CHECK(cj_mangled(fn->lowered) || fn->module->origin.kept, CUJIT_ERROR_SIGNATURE,
           "kernel '%s' of module '%s' is extern \"C\", so its "
           "symbol does not spell its parameter types, and the module was loaded from "
           "prebuilt code, which keeps no source to ask the compiler about; %s",
           fn->name, fn->module->name, how);
  why = cj_strdup(cujit_last_error()); /* the detail is rewritten below */
  if (!why) return cj_fail_oom("reading a kernel's parameter types");
  st = cj_fail(CUJIT_ERROR_SIGNATURE, "kernel '%s' of module '%s': %s; %s", fn->name,
               fn->module->name, why, how);
  cj_free(why);
  return st;
}

cujit_status cj_function_types(cujit_function *fn, const cj_ptypes **out) {
  const cj_ptypes *cur = cj_function_ptypes(fn);
  cj_ptypes *t = NULL;
  cujit_status st;
  if (cur && cur->from == CJ_TYPES_COMPILER) {
    *out = cur;
    return CUJIT_OK;
  }
  if (!fn->module || (!cj_mangled(fn->lowered) && !fn->module->origin.kept))
    return types_failed(fn, CUJIT_ERROR_SIGNATURE);
  if ((st = cj_ptypes_of(fn->module, fn->lowered, fn->nparams, 1, &t)) != CUJIT_OK)
    return types_failed(fn, st);
  cj_function_offer_types(fn, t);
  *out = cj_function_ptypes(fn); /* the compiler's: this one, or another thread's */
  return CUJIT_OK;
}
