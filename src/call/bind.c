/* bind.c - kernels as C function pointers of the C type
 *     cujit_status (*)(cujit_dim3 grid, cujit_dim3 block, <the kernel's parameters>).
 * Where trampoline.c has entry points (x86-64 Linux) and every parameter is a scalar, a
 * pointer or taken by address, the pointer is one of them, and where each argument lies
 * is worked out here once, at bind time; otherwise it is a libffi closure, which knows
 * every calling convention, structs and vectors by value included, but classifies every
 * argument at every call. Either way a call reaches bound_run with an array of where the
 * arguments are. A pointer freed by cujit_function_unbind() or with its module stays
 * aimed at a function that refuses the call, so that a stale call returns a status
 * instead of running freed code (see cujit.h). */
#include <ffi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "launch/launch.h"
#include "call/signature.h"
#include "call/trampoline.h"

/* Bound kernels with at most this many parameters may take an entry point. */
#define CJ_TRAMP_ARGS 64

typedef struct cj_binding cj_binding;
struct cj_binding {
  cj_tramp_obj tramp; /* first: what an entry point calls (with one) */
  cj_binding *next;
  ffi_closure *closure; /* NULL with an entry point */
  void *code;           /* the function pointer handed out */
  cujit_function *fn;
  const cujit_launch_options *opts; /* the caller's, read at every call */
  cj_signature *sig;                /* lives until the function is freed */
  ffi_cif cif;
  ffi_type **atypes;
  void **owned; /* ffi types and element lists built for structs */
  size_t nowned, cap_owned;
  int direct;     /* libffi's argument values are the kernel's parameters as they are */
  uint32_t *ptrs; /* with `direct`: which parameters are device pointers (owned) */
  size_t n_ptrs;
  uint32_t *where; /* for an entry point: each argument's place in its frame (the grid and
                      block words first; owned), else NULL */
  size_t n_where;
};

/* Guards the bindings lists, the retired closures and libffi's lazy initialisation of
 * shared types. */
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;

/* cujit_dim3 is a struct of three unsigned. Where the calling convention passes such a
 * struct, as the first or second argument, exactly as two 64-bit integers (x | y << 32, then
 * z), it is described so: libffi then classifies no struct at each call, which saves more
 * than the rest of a bound call costs. Elsewhere it is described as the struct it is. */
#if (defined(__x86_64__) && !defined(_WIN32)) || defined(__aarch64__)
#  define CJ_DIM3_AS_WORDS 1
#  define CJ_DIM3_ARGS 4
#else
#  define CJ_DIM3_AS_WORDS 0
#  define CJ_DIM3_ARGS 2
static ffi_type *dim3_elems[] = {&ffi_type_uint32, &ffi_type_uint32, &ffi_type_uint32, NULL};
static ffi_type dim3_type = {0, 0, FFI_TYPE_STRUCT, dim3_elems};
#endif

/* The grid and block from the closure's first arguments. */
static void dim3_args(void **ffi_args, cujit_dim3 *grid, cujit_dim3 *block) {
#if CJ_DIM3_AS_WORDS
  memcpy(&grid->x, ffi_args[0], 8); /* x and y: the low and high half of the first word */
  memcpy(&grid->z, ffi_args[1], 4);
  memcpy(&block->x, ffi_args[2], 8);
  memcpy(&block->z, ffi_args[3], 4);
#else
  *grid = *(const cujit_dim3 *)ffi_args[0];
  *block = *(const cujit_dim3 *)ffi_args[1];
#endif
}

static void *own(cj_binding *b, size_t bytes) {
  void *p;
  if (CJ_VEC_RESERVE(b->owned, b->cap_owned, b->nowned + 1) != 0) return NULL;
  p = cj_calloc(1, bytes);
  if (p) b->owned[b->nowned++] = p;
  return p;
}

static void binding_free(cj_binding *b) {
  size_t i;
  if (!b) return;
  if (b->closure) ffi_closure_free(b->closure);
  for (i = 0; i < b->nowned; i++) cj_free(b->owned[i]);
  cj_free(b->owned);
  cj_free(b->atypes);
  cj_free(b);
}

/* ---- describing types to libffi ---- */

static ffi_type *scalar_ffi(cj_kind k, int top) {
  static ffi_type *const table[CJ_K_NSCALAR] = {&ffi_type_sint8,  &ffi_type_uint8,
                                                &ffi_type_sint16, &ffi_type_uint16,
                                                &ffi_type_sint32, &ffi_type_uint32,
                                                &ffi_type_sint64, &ffi_type_uint64,
                                                &ffi_type_uint16, &ffi_type_uint16,
                                                &ffi_type_float,  &ffi_type_double,
                                                &ffi_type_uint64};
  /* f16 and bf16 parameters are declared float; inside structs they are raw 16-bit words */
  if (top && (k == CJ_K_F16 || k == CJ_K_BF16)) return &ffi_type_float;
  return table[k];
}

/* libffi's description of struct t, or NULL when libffi lays it out differently (a member
 * with raised alignment) or memory ran out (*oom set). */
static ffi_type *struct_ffi(cj_binding *b, const cj_type *t, int *oom) {
  size_t n = 0, k = 0, *offs;
  uint32_t i, r;
  ffi_type *ft, **elems;
  for (i = 0; i < t->nmembers; i++) n += t->members[i].count;
  ft = own(b, sizeof *ft);
  elems = own(b, (n + 1) * sizeof *elems);
  offs = own(b, n * sizeof *offs);
  if (!ft || !elems || !offs) {
    *oom = 1;
    return NULL;
  }
  for (i = 0; i < t->nmembers; i++) {
    const cj_type *m = t->members[i].type;
    ffi_type *e = m->kind < CJ_K_NSCALAR ? scalar_ffi((cj_kind)m->kind, 0) : struct_ffi(b, m, oom);
    if (!e) return NULL;
    for (r = 0; r < t->members[i].count; r++) elems[k++] = e;
  }
  ft->type = FFI_TYPE_STRUCT;
  ft->elements = elems;
  if (ffi_get_struct_offsets(FFI_DEFAULT_ABI, ft, offs) != FFI_OK) return NULL;
  for (i = 0, k = 0; i < t->nmembers; i++)
    for (r = 0; r < t->members[i].count; r++, k++)
      if (offs[k] != t->members[i].offset + (size_t)r * t->members[i].type->size) return NULL;
  if (ft->alignment < t->align) { /* __align__ on the struct, as CUDA's float4 has */
    ft->alignment = (unsigned short)t->align;
    ft->size = (ft->size + t->align - 1) / t->align * t->align;
  }
  return ft->size == t->size ? ft : NULL;
}

static cujit_status bind_fail(const cj_signature *s, const char *kernel, size_t i,
                              const char *why) {
  cj_buf b = {0};
  cujit_status st;
  cj_param_label(s, i, &b);
  st = cj_fail(CUJIT_ERROR_SIGNATURE,
               "cujit_function_bind: kernel '%s', %s: %s; call it with "
               "cujit_call() or cujit_launch(), or give it an explicit signature where this "
               "parameter is an opaque bN:A (bound functions take those by address)",
               kernel, b.data ? b.data : "", why);
  cj_buf_free(&b);
  return st;
}

static cujit_status param_ffi(cj_binding *b, size_t i, ffi_type **out) {
  const cj_param *p = &b->sig->params[i];
  int oom = 0;
  if (p->type->raised)
    return bind_fail(b->sig, b->fn->name, i,
                     "it has a member aligned beyond its size, which "
                     "the C calling convention cannot be derived for");
  if (p->type->opaque) {
    *out = &ffi_type_pointer;
    return CUJIT_OK;
  }
  if (p->kind < CJ_K_NSCALAR) {
    *out = scalar_ffi((cj_kind)p->kind, 1);
    return CUJIT_OK;
  }
  *out = struct_ffi(b, p->type, &oom);
  if (oom) return cj_fail_oom("binding a kernel");
  if (!*out)
    return bind_fail(b->sig, b->fn->name, i,
                     "libffi lays this struct out differently than C "
                     "does for the kernel");
  return CUJIT_OK;
}

/* ---- the closure ---- */

/* One argument from the value libffi holds for it at v. */
static cujit_status bound_arg(const cj_binding *b, size_t i, const void *v, cujit_arg *a) {
  const cj_param *p = &b->sig->params[i];
  switch ((cj_kind)p->kind) {
    case CJ_K_I8:
    case CJ_K_U8: cj_arg_set(p, a, v, 1); return CUJIT_OK;
    case CJ_K_I16:
    case CJ_K_U16: cj_arg_set(p, a, v, 2); return CUJIT_OK;
    case CJ_K_I32:
    case CJ_K_U32:
    case CJ_K_F32: cj_arg_set(p, a, v, 4); return CUJIT_OK;
    case CJ_K_I64:
    case CJ_K_U64:
    case CJ_K_F64: cj_arg_set(p, a, v, 8); return CUJIT_OK;
    case CJ_K_PTR: return cj_arg_ptr(b->sig, b->fn->name, i, *(const CUdeviceptr *)v, a);
    case CJ_K_F16:
    case CJ_K_BF16: {
      float f = *(const float *)v;
      uint16_t h = p->kind == CJ_K_F16 ? cj_f16_bits(f) : cj_bf16_bits(f);
      cj_arg_set(p, a, &h, 2);
      return CUJIT_OK;
    }
    default:
      if (!p->type->opaque) {
        cj_arg_bytes(p, v, a);
        return CUJIT_OK;
      }
      v = *(const void *const *)v;
      CJ_CHECK(v, CUJIT_ERROR_INVALID_ARGS,
               "kernel '%s', parameter %zu: an opaque "
               "(bN) parameter of a bound function takes a pointer to its value, not "
               "NULL",
               b->fn->name, i + 1);
      cj_arg_bytes(p, v, a);
      return CUJIT_OK;
  }
}

static cujit_status bound_args(const cj_binding *b, void **ffi_args, cujit_arg *args) {
  size_t i;
  for (i = 0; i < b->sig->n; i++) {
    cujit_status st = bound_arg(b, i, ffi_args[i + CJ_DIM3_ARGS], &args[i]);
    if (CJ_UNLIKELY(st != CUJIT_OK)) return st;
  }
  return CUJIT_OK;
}

/* Whether every parameter can go to the driver straight from libffi's storage: no 16-bit
 * float converted from its float argument, no blob taken by address, and a signature that
 * matched the driver's layout (so count and sizes need no check per call). */
static int params_direct(const cj_binding *b) {
  size_t i;
  if (!b->sig->checked || b->sig->n != b->fn->nparams) return 0;
  for (i = 0; i < b->sig->n; i++) {
    const cj_param *p = &b->sig->params[i];
    if (p->kind == CJ_K_F16 || p->kind == CJ_K_BF16 || p->type->opaque || p->type->raised) return 0;
  }
  return 1;
}

/* Lists the device pointers among the parameters, which a call looks at for In/Out
 * references: the other parameters then cost a call nothing of cujit's. */
static cujit_status list_pointers(cj_binding *b) {
  size_t i;
  for (i = 0; i < b->sig->n; i++) b->n_ptrs += b->sig->params[i].kind == CJ_K_PTR;
  if (!b->n_ptrs) return CUJIT_OK;
  if (!(b->ptrs = own(b, b->n_ptrs * sizeof *b->ptrs))) return cj_fail_oom("binding a kernel");
  for (i = 0, b->n_ptrs = 0; i < b->sig->n; i++)
    if (b->sig->params[i].kind == CJ_K_PTR) b->ptrs[b->n_ptrs++] = (uint32_t)i;
  return CUJIT_OK;
}

/* The hot path of a bound call: libffi's argument pointers already form the kernelParams
 * array. Returns 0 (not taken) when an In/Out reference, timing, a cooperative launch,
 * clusters, options of another layout or (in the fault-injection build) a test's launcher
 * needs the general path. */
static inline CJ_ALWAYS_INLINE int bound_direct(const cj_binding *b, void **ffi_args,
                                                cujit_status *st) {
  void **params = ffi_args + CJ_DIM3_ARGS;
  cujit_dim3 grid, block;
  size_t i;
  if (!b->direct || CJ_LAUNCHER_REPLACED() ||
      (b->opts && (!CJ_OPTS_CURRENT(b->opts) || b->opts->elapsed_ms || CJ_OPTS_EX(b->opts))))
    return 0;
  for (i = 0; i < b->n_ptrs; i++)
    if (CJ_UNLIKELY((*(const CUdeviceptr *)params[b->ptrs[i]] >> 48) == CUJIT_ARG_REF_TAG_))
      return 0;
  dim3_args(ffi_args, &grid, &block);
  *st = cj_launch_params(b->fn, grid, block, params, b->opts);
  return 1;
}

/* The general path: cujit_arg values built from the arguments and handed to cujit_launch.
 * Kept out of line so that its array does not deepen the stack of the direct path. */
static CJ_NOINLINE cujit_status bound_general(const cj_binding *b, void **ffi_args) {
  cujit_arg stack[CJ_CALL_STACK_ARGS], *args = stack;
  size_t n = b->sig->n;
  cujit_dim3 grid, block;
  cujit_status st;
  if (CJ_UNLIKELY(n > CJ_CALL_STACK_ARGS)) args = cj_malloc(n * sizeof *args);
  if (!args) return cj_fail_oom("calling a bound kernel");
  st = bound_args(b, ffi_args, args);
  dim3_args(ffi_args, &grid, &block);
  if (CJ_LIKELY(st == CUJIT_OK)) st = CJ_LAUNCH(b->fn, grid, block, args, n, b->opts);
  if (args != stack) cj_free(args);
  return st;
}

/* A bound call is the program's own call, made without the header's error-mode macros:
 * a failure goes to the error handler here, named after the kernel (NULL: one freed). */
static CJ_NOINLINE cujit_status bound_failed(const char *kernel, cujit_status st) {
  char call[160];
  snprintf(call, sizeof call, "%.140s (bound)", kernel ? kernel : "a freed kernel");
  return cujit_error_raise_(st, call);
}

/* A bound call: ffi_args holds where each argument is (the grid and block words, then the
 * kernel's parameters). */
static inline CJ_ALWAYS_INLINE cujit_status bound_run(const cj_binding *b, void **ffi_args) {
  cujit_status st;
  if (CJ_UNLIKELY(!bound_direct(b, ffi_args, &st))) st = bound_general(b, ffi_args);
  if (CJ_UNLIKELY(st != CUJIT_OK)) st = bound_failed(b->fn->name, st);
  return st;
}

/* The closure's function. */
static void bound_entry(ffi_cif *cif, void *ret, void **ffi_args, void *user) {
  (void)cif;
  *(ffi_arg *)ret = (ffi_arg)(int)bound_run(user, ffi_args);
}

/* An entry point's function: each argument's place in the frame, as planned at bind time. */
static int tramp_entry(cj_tramp_obj *self, char *frame) {
  const cj_binding *b = (const cj_binding *)self;
  void *args[CJ_DIM3_ARGS + CJ_TRAMP_ARGS];
  size_t i;
  for (i = 0; i < b->n_where; i++) args[i] = frame + b->where[i];
  return (int)bound_run(b, args);
}

/* Plans where each argument of a call lies for an entry point: possible when every
 * parameter is an integer, a pointer (a device pointer, or the address of an opaque
 * value) or a floating-point value, and the grid and block come as words. Leaves n_where
 * at 0 when it is not. */
static cujit_status plan_entry(cj_binding *b) {
  cj_tramp_walk w = {0, 0, 0};
  size_t i, n = b->sig->n;
  if (!CJ_TRAMP_SLOTS || !CJ_DIM3_AS_WORDS || n > CJ_TRAMP_ARGS) return CUJIT_OK;
  for (i = 0; i < n; i++) {
    const cj_param *p = &b->sig->params[i];
    if (p->type->raised || (p->kind >= CJ_K_NSCALAR && !p->type->opaque)) return CUJIT_OK;
  }
  if (!(b->where = own(b, (n + CJ_DIM3_ARGS) * sizeof *b->where)))
    return cj_fail_oom("binding a kernel");
  for (i = 0; i < CJ_DIM3_ARGS; i++) b->where[i] = cj_tramp_place(&w, CJ_TRAMP_INT);
  for (i = 0; i < n; i++) {
    const cj_param *p = &b->sig->params[i];
    int fp = !p->type->opaque && (p->kind == CJ_K_F16 || p->kind == CJ_K_BF16 ||
                                  p->kind == CJ_K_F32 || p->kind == CJ_K_F64);
    b->where[CJ_DIM3_ARGS + i] = cj_tramp_place(&w, fp ? CJ_TRAMP_FLOAT : CJ_TRAMP_INT);
  }
  b->n_where = n + CJ_DIM3_ARGS;
  return CUJIT_OK;
}

/* ---- freed pointers ---- */

/* A pointer that was handed out stays callable after its binding is freed: its closure is
 * aimed at stale_entry through stale_cif, a C function of no parameters returning int.
 * The caller's arguments are then left unread, which C's calling conventions allow (the
 * caller owns their space), and the status comes back where the int is returned. The closures are
 * never freed or taken again; each one's user data links to the one retired before it, from
 * `retired`. */
static ffi_cif stale_cif;
static int stale_ready;
static ffi_closure *retired;

static cujit_status stale_call(void) {
  return bound_failed(NULL, cj_fail(CUJIT_ERROR_INVALID_VALUE,
                                    "a bound kernel was called after cujit_function_unbind() or "
                                    "the destruction of its module freed it; nothing was launched "
                                    "(bind it again with "
                                    "cujit_function_bind() to call it)"));
}

static void stale_entry(ffi_cif *cif, void *ret, void **ffi_args, void *user) {
  (void)cif, (void)ffi_args, (void)user;
  *(ffi_arg *)ret = (ffi_arg)(int)stale_call();
}

/* An entry point freed is aimed at this: the caller's arguments are left unread. */
static int stale_tramp_entry(cj_tramp_obj *self, char *frame) {
  (void)self, (void)frame;
  return (int)stale_call();
}
static cj_tramp_obj stale_tramp = {stale_tramp_entry};

/* Prepares stale_cif once. Called with bind_lock held. */
static cujit_status stale_prepare(void) {
  if (stale_ready) return CUJIT_OK;
  CJ_CHECK(ffi_prep_cif(&stale_cif, FFI_DEFAULT_ABI, 0, &ffi_type_sint32, NULL) == FFI_OK,
           CUJIT_ERROR_NOT_SUPPORTED,
           "cujit_function_bind: libffi cannot describe a "
           "C function returning int on this system");
  stale_ready = 1;
  return CUJIT_OK;
}

/* Frees a binding whose pointer was handed out, keeping its closure aimed at stale_entry.
 * Were libffi to refuse that (it accepted the same ABI when the closure was made), the
 * binding is kept whole instead: a stale call then launches as before, but never reaches
 * freed memory. */
static void binding_retire(cj_binding *b) {
  int ok;
  if (!b) return;
  if (!b->closure) { /* an entry point: its slot is never handed out again */
    cj_tramp_retire(b->code, &stale_tramp);
    binding_free(b);
    return;
  }
  pthread_mutex_lock(&bind_lock);
  ok = ffi_prep_closure_loc(b->closure, &stale_cif, stale_entry, retired, b->code) == FFI_OK;
  if (ok) {
    retired = b->closure;
    b->closure = NULL;
  }
  pthread_mutex_unlock(&bind_lock);
  if (ok) binding_free(b);
}

/* Describes the C function to libffi and makes the closure. Called with bind_lock held. */
static cujit_status make_closure(cj_binding *b) {
  size_t i, n = b->sig->n;
  b->atypes = cj_calloc(n + CJ_DIM3_ARGS, sizeof *b->atypes);
  if (!b->atypes) return cj_fail_oom("binding a kernel");
  for (i = 0; i < CJ_DIM3_ARGS; i++)
#if CJ_DIM3_AS_WORDS
    b->atypes[i] = &ffi_type_uint64;
#else
    b->atypes[i] = &dim3_type;
#endif
  for (i = 0; i < n; i++) {
    CJ_TRY(param_ffi(b, i, &b->atypes[i + CJ_DIM3_ARGS]));
  }
  CJ_CHECK(ffi_prep_cif(&b->cif, FFI_DEFAULT_ABI, (unsigned)(n + CJ_DIM3_ARGS), &ffi_type_sint32,
                        b->atypes) == FFI_OK,
           CUJIT_ERROR_SIGNATURE,
           "cujit_function_bind: libffi cannot describe a C "
           "function with the parameters of kernel '%s' (%s)",
           b->fn->name, b->sig->text);
  b->closure = ffi_closure_alloc(sizeof(ffi_closure), &b->code);
  if (!b->closure) return cj_fail_oom("allocating a closure for a bound kernel");
  CJ_CHECK(ffi_prep_closure_loc(b->closure, &b->cif, bound_entry, b, b->code) == FFI_OK,
           CUJIT_ERROR_NOT_SUPPORTED,
           "cujit_function_bind: libffi cannot make "
           "closures on this system (kernel '%s')",
           b->fn->name);
  return CUJIT_OK;
}

/* Frees every bound function pointer of fn (each then refuses its calls), when the kernel
 * is freed (signature.c). */
static void unbind_all(cujit_function *fn) {
  cj_binding *b, *next;
  pthread_mutex_lock(&bind_lock);
  b = fn->upper->bindings;
  fn->upper->bindings = NULL;
  pthread_mutex_unlock(&bind_lock);
  for (; b; b = next) {
    next = b->next;
    binding_retire(b);
  }
}

cujit_status cujit_function_bind(cujit_function *fn, const cujit_launch_options *opts,
                                 void **fnptr) {
  cj_binding *b;
  cj_signature *s;
  cujit_status st;
  CJ_CHECK(fn && fnptr, CUJIT_ERROR_INVALID_VALUE, "cujit_function_bind: %s is NULL",
           fn ? "fnptr" : "fn");
  *fnptr = NULL;
  CJ_TRY(cj_sig_of_function(fn, &s));
  b = cj_calloc(1, sizeof *b);
  if (!b) return cj_fail_oom("binding a kernel");
  b->fn = fn;
  b->opts = opts;
  b->sig = s;
  b->tramp.entry = tramp_entry;
  b->direct = params_direct(b);
  st = b->direct ? list_pointers(b) : CUJIT_OK;
  if (st == CUJIT_OK) st = plan_entry(b);
  pthread_mutex_lock(&bind_lock);
  if (st == CUJIT_OK && !(b->n_where && (b->code = cj_tramp_take(&b->tramp)))) {
    st = stale_prepare();
    if (st == CUJIT_OK) st = make_closure(b);
  }
  if (st == CUJIT_OK) {
    b->next = fn->upper->bindings; /* cj_sig_of_function made fn->upper */
    fn->upper->bindings = b;
    __atomic_store_n(&fn->upper->unbind, unbind_all, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&bind_lock);
  if (st != CUJIT_OK) {
    binding_free(b);
    return st;
  }
  *fnptr = b->code;
  return CUJIT_OK;
}

void cujit_function_unbind(cujit_function *fn, void *fnptr) {
  cj_binding **link, *found = NULL;
  if (!fn || !fnptr || !fn->upper) return;
  pthread_mutex_lock(&bind_lock);
  for (link = &fn->upper->bindings; *link; link = &(*link)->next) {
    if ((*link)->code == fnptr) {
      found = *link;
      *link = found->next;
      break;
    }
  }
  pthread_mutex_unlock(&bind_lock);
  binding_retire(found);
}
