/* function.h - a module on devices and its kernels: the state loading made (load.c), the
 * kernel handles (function.c), their per-device slots (slot.c), and name lookup
 * (lookup.c). This layer owns `cujit_function`; a layer above may keep state of its own
 * with a kernel through `upper`, which this layer frees through `upper_free` without
 * knowing what it is. */
#ifndef CUJIT_FUNCTION_H
#define CUJIT_FUNCTION_H

#include "compile/mangle.h"
#include "compile/symbols.h"
#include "driver/driver.h"
#include "format/prebuilt.h"
#include "module/module.h"

enum { CJ_V_CUBIN = 0, CJ_V_PTX = 1 }; /* which image of a module a library was loaded from */
enum { CJ_RECORDED_DEVICES = 64 };     /* devices whose load cujit_module_loaded_as() tells */

/* What a module holds on devices; guarded by the module's lock. */
typedef struct cj_mstate {
  cj_symtab syms;       /* read from the PTX on first lookup; for a CUBIN or fatbin, the
                           variables from its ELF and the kernels the driver lists */
  int kernels_listed;   /* the driver has listed the kernels (CUBIN and fatbin) */
  int globals_known;    /* syms.globals is the module's whole list */
  CUlibrary lib[2];     /* loaded from the CUBIN and from the PTX, each when first needed */
  char *jit_log[2];     /* their JIT error logs: the driver may write them when it loads
                           lazily (at the first kernel lookup), so they live as long */
  cujit_function **fns; /* every function handed out, freed with the module */
  size_t n_fns, cap_fns;
  struct cj_code *codes; /* a fatbin's or bundle's entries (views into the image), read at
                            its first load; NULL for other modules */
  size_t n_codes;
  int pick[2];             /* the entry (index + 1) each library was loaded from; 0: none */
  unsigned char *bytes[2]; /* what the driver was given for an entry, kept while loaded */
  char what[2][64];        /* each library: "CUBIN sm_90", "PTX compute_100 (JIT)" */
  signed char on_dev[CJ_RECORDED_DEVICES]; /* the library (CJ_V_* + 1) each device uses */
} cj_mstate;

/* What a launch on one device needs, filled once (under the module's lock) and then read
 * without locking: `ready` is set last with release order. */
typedef struct cj_fslot {
  int ready;
  CUkernel kernel; /* the launch handle on this device (context-independent) */
  CUdevice dev;
  int max_threads; /* the kernel's own limit on this device (registers, launch bounds) */
  int static_smem;
  int dyn_smem_max; /* dynamic shared memory allowed now; raised on demand (atomic) */
  int non_portable; /* clusters above 8 blocks allowed (set on demand, atomic) */
  const cj_limits *lim;
  /* The kernel's function in the context that filled the slot, and that context's ID
   * (unique in the process: a context made again at the same address, or a primary
   * context reset, gets a new one); NULL and 0 when the driver cannot say. A launch in
   * that context uses it: the driver launches a CUfunction faster than a CUkernel. */
  CUfunction fn;
  unsigned long long fn_ctx;
} cj_fslot;

/* A kernel's device state. */
typedef struct cj_fstate {
  CUkernel kernel[2]; /* per image (CJ_V_*), context-independent */
  int ndev;
  cj_fslot slot[]; /* one per device ordinal */
} cj_fstate;

struct cj_upper; /* state of a layer above, opaque here */

/* One parameter's type. */
typedef struct cj_ptype {
  cj_mparam m;     /* class and C spelling, from the compiler (or made from a signature) */
  uint32_t align;  /* its alignment in the PTX; 0 when there is no PTX */
  uint8_t integer; /* the PTX passes it as a plain scalar: a named type then is an enum */
  uint8_t want;    /* the cujit_type it is; CUJIT_TYPE_BYTES when not a scalar or pointer */
} cj_ptype;

enum { CJ_TYPES_COMPILER = 0, CJ_TYPES_SIGNATURE = 1 };

/* A kernel's parameter types, and what launches accept for each. */
typedef struct cj_ptypes cj_ptypes;
struct cj_ptypes {
  cj_ptypes *older; /* the ones it replaced, kept until the kernel is freed */
  int from;         /* CJ_TYPES_*: the compiler's, or an explicit signature's */
  size_t n;
  uint32_t *accept; /* per parameter: bit t set when an argument of cujit_type t is taken */
  cj_ptype *p;
};

struct cujit_function {
  cj_module *module; /* the module it belongs to (not owned) */
  char *name;        /* plain name, e.g. "multiply_them" */
  char *lowered;     /* its symbol in the image, e.g. "_Z13multiply_themPfS_S_" */
  cj_fstate *dev;    /* per-device handles and slots */
  size_t nparams;    /* the parameter layout, from the driver or the PTX */
  size_t *param_offsets;
  size_t *param_sizes;
  cj_ptypes *types;       /* what launches check arguments against (read without a
                             lock); NULL while not known, when only sizes are checked */
  struct cj_upper *upper; /* the call layer's state (signature, bound pointers); NULL
                             until it needs some */
  void (*upper_free)(cujit_function *fn); /* frees `upper`; set with it */
};

/* ---- load.c ---- */

/* Whether the module's image is a CUBIN, fatbin or bundle, whose kernels the driver lists. */
static inline int cj_module_binary_only(const cj_module *m) {
  return m->image->prebuilt == CJ_PREBUILT_CUBIN || m->image->prebuilt == CJ_PREBUILT_FATBIN ||
         m->image->prebuilt == CJ_PREBUILT_BUNDLE;
}
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
/* Computes what launches accept from each parameter's `want`: an argument of that type,
 * or of CUJIT_TYPE_BYTES (any value of the right size); bool also takes u8 and i8; a
 * parameter that is not a scalar or pointer takes any argument of its size. */
void cj_ptypes_seal(cj_ptypes *t);
/* Frees t (not the ones it replaced). NULL is fine. */
void cj_ptypes_free(cj_ptypes *t);
/* The types of kernel `sym` of module m with n parameters, as the compiler gives them: read
 * from a C++ kernel's symbol; for an extern "C" kernel, when `compile` is set, from a
 * probe compiled from the module's source (probe.c), else CUJIT_ERROR_NOT_FOUND. *out is
 * owned by the caller. CUJIT_ERROR_SIGNATURE saying why they cannot be known and what to
 * do; CUJIT_ERROR_OUT_OF_MEMORY; a failed probe's status. */
cujit_status cj_ptypes_of(cj_module *m, const char *sym, size_t n, int compile, cj_ptypes **out);
/* The types launches check fn's arguments against, or NULL. */
static inline const cj_ptypes *cj_function_ptypes(const cujit_function *fn) {
  return __atomic_load_n(&fn->types, __ATOMIC_ACQUIRE);
}
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
