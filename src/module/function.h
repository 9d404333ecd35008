/* function.h - a module on devices and its kernels: the state loading made (load.c), the
 * kernel handles (function.c), their per-device slots (slot.c), and name lookup
 * (lookup.c). This layer owns `cujit_function`; a layer above may keep state of its own
 * with a kernel through `upper`, which this layer frees through `upper_free` without
 * knowing what it is. */
#ifndef CUJIT_FUNCTION_H
#define CUJIT_FUNCTION_H

#include "compile/symbols.h"
#include "driver/driver.h"
#include "module/module.h"

enum { CJ_V_CUBIN = 0, CJ_V_PTX = 1 }; /* which image of a module a library was loaded from */

/* What a module holds on devices; guarded by the module's lock. */
typedef struct cj_mstate {
  cj_symtab syms;        /* read from the PTX on first lookup; for a CUBIN or fatbin, the
                            variables from its ELF and the kernels the driver lists */
  int kernels_listed;    /* the driver has listed the kernels (CUBIN and fatbin) */
  int globals_known;     /* syms.globals is the module's whole list */
  CUlibrary lib[2];      /* loaded from the CUBIN and from the PTX, each when first needed */
  char *jit_log[2];      /* their JIT error logs: the driver may write them when it loads
                            lazily (at the first kernel lookup), so they live as long */
  cujit_function **fns;  /* every function handed out, freed with the module */
  size_t n_fns;
} cj_mstate;

/* What a launch on one device needs, filled once (under the module's lock) and then read
 * without locking: `ready` is set last with release order. */
typedef struct cj_fslot {
  int ready;
  CUkernel kernel;      /* the launch handle on this device (context-independent) */
  CUdevice dev;
  int max_threads;      /* the kernel's own limit on this device (registers, launch bounds) */
  int static_smem;
  int dyn_smem_max;     /* dynamic shared memory allowed now; raised on demand (atomic) */
  int non_portable;     /* clusters above 8 blocks allowed (set on demand, atomic) */
  const cj_limits *lim;
} cj_fslot;

/* A kernel's device state. */
typedef struct cj_fstate {
  CUkernel kernel[2];   /* per image (CJ_V_*), context-independent */
  int ndev;
  cj_fslot slot[];      /* one per device ordinal */
} cj_fstate;

struct cj_upper; /* state of a layer above, opaque here */

struct cujit_function {
  cujit_module *module;      /* the module it belongs to (not owned) */
  char *name;                /* plain name, e.g. "multiply_them" */
  char *lowered;             /* its symbol in the image, e.g. "_Z13multiply_themPfS_S_" */
  cj_fstate *dev;            /* per-device handles and slots */
  size_t nparams;            /* the parameter layout, from the driver or the PTX */
  size_t *param_offsets;
  size_t *param_sizes;
  struct cj_upper *upper;    /* the call layer's state (signature, bound pointers); NULL
                                until it needs some */
  void (*upper_free)(cujit_function *fn); /* frees `upper`; set with it */
};

/* ---- load.c ---- */

/* Whether the module's image is a CUBIN or fatbin, whose kernels the driver lists. */
int cj_module_binary_only(const cujit_module *m);
/* The module's device state, made on first use (symbols read); NULL when out of memory.
 * Module lock held. */
cj_mstate *cj_module_state(cujit_module *m);
/* Loads the image that suits `dev` (module lock held) and says which (CJ_V_*). */
cujit_status cj_module_load(cujit_module *m, cj_mstate *s, CUdevice dev, int *variant,
                            const cj_limits **lim);
/* A failed load of image `v` on `dev` as CUJIT_ERROR_LOAD with the driver's JIT log and
 * what to do. */
cujit_status cj_module_load_failed(cujit_module *m, int v, CUresult r, CUdevice dev, int cc,
                                   const char *log);

/* ---- lookup.c ---- */

/* Resolves `name` among the module's kernels (kernels 1) or variables into its symbol,
 * *sym borrowed from the module. Takes the module lock. */
cujit_status cj_module_lookup(cujit_module *m, int kernels, const char *name, const char **sym,
                              CUdevice dev);

/* ---- function.c (module lock held) ---- */

/* A new kernel handle for symbol `sym`, loaded on `dev`, kept in s->fns. */
cujit_status cj_function_new(cujit_module *m, cj_mstate *s, const char *sym, CUdevice dev,
                             cujit_function **out);
/* The handle already made for `sym`, or NULL. */
cujit_function *cj_function_find(const cj_mstate *s, const char *sym);
/* Frees a handle, the upper layer's state with it. NULL is fine. */
void cj_function_free(cujit_function *fn);

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
 * driver (the caller then handles CUDA_ERROR_INVALID_CONTEXT). */
cujit_status cj_function_slot(const cujit_function *fn, cj_fslot **slot, int need_ctx);
/* Lets the kernel use `bytes` of dynamic shared memory (above the 48 KiB default). */
cujit_status cj_function_allow_smem(const cujit_function *fn, cj_fslot *slot, unsigned bytes);

#endif
