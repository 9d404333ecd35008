/* objects.h - the objects of the module layer's kernels, which load.c, function.c,
 * ptypes.c, slot.c and lookup.c share (their functions are function.h's): what a module
 * holds on devices, a kernel's per-device slots, its parameter types, and `cujit_function`
 * itself, which this layer owns; a layer above may keep state of its own with a kernel
 * through `upper`, which this layer frees through `upper_free` without knowing what it
 * is. */
#ifndef CUJIT_OBJECTS_H
#define CUJIT_OBJECTS_H

#include "compile/symbols.h"
#include "dl/driver.h"
#include "format/code.h"
#include "format/mangle.h"
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

/* A kernel's parameter types, and what each takes. */
typedef struct cj_ptypes cj_ptypes;
struct cj_ptypes {
  cj_ptypes *older; /* the ones it replaced, kept until the kernel is freed */
  int from;         /* CJ_TYPES_*: the compiler's, or an explicit signature's */
  size_t n;
  uint64_t *accept; /* per parameter: its accept bits (function.h, accept.c) */
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

/* Whether the module's image is a CUBIN, fatbin or bundle, whose kernels the driver lists. */
static inline int cj_module_binary_only(const cj_module *m) {
  return m->image->prebuilt == CJ_PREBUILT_CUBIN || m->image->prebuilt == CJ_PREBUILT_FATBIN ||
         m->image->prebuilt == CJ_PREBUILT_BUNDLE;
}
/* The types launches check fn's arguments against, or NULL. */
static inline const cj_ptypes *cj_function_ptypes(const cujit_function *fn) {
  return __atomic_load_n(&fn->types, __ATOMIC_ACQUIRE);
}
#endif
