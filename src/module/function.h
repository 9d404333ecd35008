/* function.h - a module on devices and its kernels: the state loading made (load.c), the
 * kernel handles (function.c), their parameter types (ptypes.c; what each takes is
 * accept.h's), their per-device slots (slot.c), and name lookup (lookup.c). The objects
 * they share are objects.h's. */
#ifndef CUJIT_FUNCTION_H
#define CUJIT_FUNCTION_H

#include "format/prebuilt.h"
#include "module/accept.h"
#include "module/objects.h"

/* ---- load.c ---- */

/* The module's device state, made on first use (symbols read); NULL when out of memory.
 * Module lock held. */
cj_mstate *cj_module_state(cj_module *m);
/* Loads the image that suits `dev` (module lock held) and says which (CJ_V_*). */
cujit_status cj_module_load(cj_module *m, cj_mstate *s, CUdevice dev, int *variant,
                            const cj_limits **lim);
/* Frees the device state s: what was loaded from the image (the kernel handles are
 * cj_module_device_free()'s to free first). */
void cj_module_unload(cj_mstate *s);
/* A failed load of image `v` on `dev` as CUJIT_ERROR_LOAD with the driver's JIT log and
 * what to do. */
cujit_status cj_module_load_failed(cj_module *m, int v, CUresult r, CUdevice dev, int cc,
                                   const char *log);

/* ---- lookup.c ---- */

/* Resolves `name` among the module's kernels (kernels 1) or variables into its symbol,
 * *sym borrowed from the module. Takes the module lock. */
cujit_status cj_module_lookup(cj_module *m, int kernels, const char *name, const char **sym,
                              CUdevice dev);

/* ---- function.c (module lock held) ---- */

/* A new kernel handle for symbol `sym`, loaded on `dev`, kept in s->fns. */
cujit_status cj_function_new(cj_module *m, cj_mstate *s, const char *sym, CUdevice dev,
                             cujit_function **out);
/* The handle already made for `sym`, or NULL. */
cujit_function *cj_function_find(const cj_mstate *s, const char *sym);
/* Frees a handle, the upper layer's state with it. NULL is fine. */
void cj_function_free(cujit_function *fn);

/* ---- ptypes.c: parameter types from the compiler ---- */

/* n parameters' types, zeroed (the spellings NULL), from CJ_TYPES_*; NULL when out of
 * memory. Fill p[i].m and p[i].want, then cj_ptypes_seal(). */
cj_ptypes *cj_ptypes_new(size_t n, int from);
/* Sets each parameter's accept bits from its `want` (cj_accept_of). */
void cj_ptypes_seal(cj_ptypes *t);
/* Frees t (not the ones it replaced). NULL is fine. */
void cj_ptypes_free(cj_ptypes *t);
/* The types of kernel `sym` of module m with n parameters, as the compiler gives them: read
 * from a C++ kernel's symbol; for an extern "C" kernel, when `compile` is set, from a
 * probe compiled from the module's source (probe.c), else CUJIT_ERROR_NOT_FOUND. *out is
 * owned by the caller. CUJIT_ERROR_SIGNATURE saying why they cannot be known and what to
 * do; CUJIT_ERROR_OUT_OF_MEMORY; a failed probe's status. */
cujit_status cj_ptypes_of(cj_module *m, const char *sym, size_t n, int compile, cj_ptypes **out);
/* At lookup: a C++ kernel's types, read from its symbol (no compile). Left unknown when
 * they cannot be read: a lookup never fails for it. Module lock held. */
void cj_function_decode(cujit_function *fn);
/* fn's types as the compiler gives them, for typed calls: known since lookup, or (for an
 * extern "C" kernel) probed now, once. *out lives as long as fn. Returns as
 * cj_ptypes_of(), with the kernel named in messages. */
cujit_status cj_function_types(cujit_function *fn, const cj_ptypes **out);
/* Publishes t (moved in) as what fn's launches check against. The compiler's types
 * replace an explicit signature's; a signature's replace only another signature's, else
 * t is freed and 0 returned. */
int cj_function_offer_types(cujit_function *fn, cj_ptypes *t);
/* Frees every type list fn has had (with the kernel, or a test's hand-made kernel). */
void cj_function_drop_types(cujit_function *fn);

/* ---- slot.c ---- */

cujit_status cj_kernel_attr(CUkernel k, CUdevice dev, CUfunction_attribute a, int *v,
                            const char *what);
/* Fills fn's slot for `dev` (module lock held). */
cujit_status cj_slot_fill(const cujit_function *fn, CUdevice dev);
/* CUJIT_ERROR_NO_DEVICE unless `dev` has a slot. */
cujit_status cj_slot_index(const cj_fstate *fs, CUdevice dev);
/* The kernel's slot for the calling thread's device, filling it on first use there (the
 * module is loaded on that device then). Makes a context current if none is, except that
 * with need_ctx 0 on a single-device machine a filled slot is returned without asking the
 * driver (the caller then handles CUDA_ERROR_INVALID_CONTEXT). Inline, so that a launch's
 * usual case (one device, a filled slot, a thread that has had a context) costs no call;
 * cj_function_slot_find() (slot.c) does the rest. */
cujit_status cj_function_slot_find(const cujit_function *fn, cj_fslot **slot, int need_ctx);
extern _Thread_local int cj_had_context; /* the calling thread has had a current context */
static inline CJ_ALWAYS_INLINE cujit_status cj_function_slot(const cujit_function *fn,
                                                             cj_fslot **slot, int need_ctx) {
  cj_fstate *fs = fn->dev;
  if (!need_ctx && fs->ndev == 1 && __atomic_load_n(&fs->slot[0].ready, __ATOMIC_ACQUIRE) &&
      cj_had_context) {
    *slot = &fs->slot[0];
    return CUJIT_OK;
  }
  return cj_function_slot_find(fn, slot, need_ctx);
}
/* Lets the kernel use `bytes` of dynamic shared memory (above the 48 KiB default). */
cujit_status cj_function_allow_smem(const cujit_function *fn, cj_fslot *slot, unsigned bytes);

#endif
