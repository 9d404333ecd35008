/* bind.c - kernels as C function pointers of the C type
 *     cujit_status (*)(cujit_dim3 grid, cujit_dim3 block, <the kernel's parameters>).
 * Where the library has entry points of its own for the calling convention
 * (bindstubs_x86_64.S) and every parameter is a scalar or a pointer, a binding takes one
 * of them and reads its arguments where the convention puts them; otherwise it is a
 * libffi closure, which handles structs and vectors by value and every other ABI. */
#include <ffi.h>
#include <pthread.h>
#include <string.h>

#include "launch/launch.h"
#include "call/signature.h"

typedef struct cj_binding cj_binding;
struct cj_binding {
  cj_binding *next;
  ffi_closure *closure;
  void *code;                        /* the function pointer handed out */
  cujit_function *fn;
  const cujit_launch_options *opts;  /* the caller's, read at every call */
  cj_signature *sig;                 /* lives until the function is freed */
  ffi_cif cif;
  ffi_type **atypes;
  void **owned;                      /* ffi types and element lists built for structs */
  size_t nowned;
  int direct; /* libffi's argument values are the kernel's parameters as they are */
  int stub;           /* the library entry point it took, or -1 for a libffi closure */
  uint16_t *where;    /* with a stub: each argument's offset in the entry's frame */
};

/* Guards the bindings lists and libffi's lazy initialisation of shared types. */
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
  void **grown = cj_realloc(b->owned, (b->nowned + 1) * sizeof *grown);
  void *p;
  if (!grown) return NULL;
  b->owned = grown;
  p = cj_calloc(1, bytes);
  if (p) b->owned[b->nowned++] = p;
  return p;
}

static void stub_release(cj_binding *b);

static void binding_free(cj_binding *b) {
  size_t i;
  if (!b) return;
  stub_release(b);
  cj_free(b->where);
  if (b->closure) ffi_closure_free(b->closure);
  for (i = 0; i < b->nowned; i++) cj_free(b->owned[i]);
  cj_free(b->owned);
  cj_free(b->atypes);
  cj_free(b);
}

/* ---- describing types to libffi ---- */

static ffi_type *scalar_ffi(cj_kind k, int top) {
  static ffi_type *const table[CJ_K_NSCALAR] = {
      &ffi_type_sint8,  &ffi_type_uint8,  &ffi_type_sint16, &ffi_type_uint16, &ffi_type_sint32,
      &ffi_type_uint32, &ffi_type_sint64, &ffi_type_uint64, &ffi_type_uint16, &ffi_type_uint16,
      &ffi_type_float,  &ffi_type_double, &ffi_type_uint64};
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
  st = cj_fail(CUJIT_ERROR_SIGNATURE, "cujit_function_bind: kernel '%s', %s: %s; call it with "
               "cujit_call() or cujit_launch(), or give it an explicit signature where this "
               "parameter is an opaque bN:A (bound functions take those by address)", kernel,
               b.data ? b.data : "", why);
  cj_buf_free(&b);
  return st;
}

static cujit_status param_ffi(cj_binding *b, size_t i, ffi_type **out) {
  const cj_param *p = &b->sig->params[i];
  int oom = 0;
  if (p->type->raised)
    return bind_fail(b->sig, b->fn->name, i, "it has a member aligned beyond its size, which "
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
    return bind_fail(b->sig, b->fn->name, i, "libffi lays this struct out differently than C "
                     "does for the kernel");
  return CUJIT_OK;
}

/* ---- the closure ---- */

/* One argument from the value libffi holds for it at v. */
static cujit_status bound_arg(const cj_binding *b, size_t i, const void *v, cujit_arg *a) {
  const cj_param *p = &b->sig->params[i];
  switch ((cj_kind)p->kind) {
    case CJ_K_I8: case CJ_K_U8: cj_arg_set(p, a, v, 1); return CUJIT_OK;
    case CJ_K_I16: case CJ_K_U16: cj_arg_set(p, a, v, 2); return CUJIT_OK;
    case CJ_K_I32: case CJ_K_U32: case CJ_K_F32: cj_arg_set(p, a, v, 4); return CUJIT_OK;
    case CJ_K_I64: case CJ_K_U64: case CJ_K_F64: cj_arg_set(p, a, v, 8); return CUJIT_OK;
    case CJ_K_PTR: return cj_arg_ptr(b->sig, b->fn->name, i, *(const CUdeviceptr *)v, a);
    case CJ_K_F16: case CJ_K_BF16: {
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
      if (!v)
        return cj_fail(CUJIT_ERROR_INVALID_ARGS, "kernel '%s', parameter %zu: an opaque "
                       "(bN) parameter of a bound function takes a pointer to its value, not "
                       "NULL", b->fn->name, i + 1);
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
    if (p->kind == CJ_K_F16 || p->kind == CJ_K_BF16 || p->type->opaque || p->type->raised)
      return 0;
  }
  return 1;
}

/* The hot path of a bound call: libffi's argument pointers already form the kernelParams
 * array. Returns 0 (not taken) when an In/Out reference, timing, a cooperative launch,
 * clusters or (in the fault-injection build) a test's launcher needs the general path. */
static inline CJ_ALWAYS_INLINE int bound_direct(const cj_binding *b, void **ffi_args,
                                                cujit_status *st) {
  void **params = ffi_args + CJ_DIM3_ARGS;
  cujit_dim3 grid, block;
  size_t i;
  if (!b->direct || CJ_LAUNCHER_REPLACED() ||
      (b->opts && (b->opts->elapsed_ms || CJ_OPTS_EX(b->opts))))
    return 0;
  for (i = 0; i < b->sig->n; i++)
    if (b->sig->params[i].kind == CJ_K_PTR &&
        CJ_UNLIKELY((*(const CUdeviceptr *)params[i] >> 48) == CUJIT_ARG_REF_TAG_))
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

/* A bound call, given where each argument's value is (ffi_args: the grid and block words,
 * then the kernel's parameters), whichever entry received it. */
static inline CJ_ALWAYS_INLINE cujit_status bound_call(const cj_binding *b, void **ffi_args) {
  cujit_status st;
  if (CJ_LIKELY(bound_direct(b, ffi_args, &st))) return st;
  return bound_general(b, ffi_args);
}

static void bound_entry(ffi_cif *cif, void *ret, void **ffi_args, void *user) {
  (void)cif;
  *(ffi_arg *)ret = (ffi_arg)(int)bound_call(user, ffi_args);
}

/* ---- the library's own entry points (bindstubs_*.S) ---- */

#if defined(CJ_HAVE_BIND_STUBS)
#  define CJ_BIND_STUBS 1024     /* as many as the assembly file holds, 16 bytes apart */
#  define CJ_STUB_MAX_PARAMS 64
#  define CJ_FRAME_XMM 48         /* the frame's layout: see bindstubs_x86_64.S */
#  define CJ_FRAME_STACK 192

CJ_HIDDEN extern const unsigned char cj_bind_stubs[], cj_bind_stubs_end[];
CJ_HIDDEN int cj_bind_dispatch(unsigned k, unsigned char *frame);

static cj_binding *stub_owner[CJ_BIND_STUBS]; /* read at every call: atomic */
static unsigned stub_next; /* freed entries are taken again as late as possible */

int cj_bind_dispatch(unsigned k, unsigned char *frame) {
  const cj_binding *b =
      k < CJ_BIND_STUBS ? __atomic_load_n(&stub_owner[k], __ATOMIC_ACQUIRE) : NULL;
  void *args[CJ_DIM3_ARGS + CJ_STUB_MAX_PARAMS];
  size_t i, n;
  if (CJ_UNLIKELY(!b))
    return (int)cj_fail(CUJIT_ERROR_INVALID_VALUE,
                        "a bound kernel was called after cujit_function_unbind() or the "
                        "destruction of its module freed it; nothing was launched");
  n = b->sig->n + CJ_DIM3_ARGS;
  for (i = 0; i < n; i++) args[i] = frame + b->where[i];
  return (int)bound_call(b, args);
}

static int is_sse(cj_kind k) {
  return k == CJ_K_F16 || k == CJ_K_BF16 || k == CJ_K_F32 || k == CJ_K_F64;
}

/* Where the System V x86-64 convention puts each argument: the grid and block words in
 * the first four integer registers, then integers and pointers in the other two and
 * floating-point values in eight vector registers, in order; what does not fit goes on
 * the stack, one eightbyte each, in order. f16 and bf16 are passed as float. Returns 0,
 * or -1 when the signature is not all scalars or out of memory. */
static int stub_plan(cj_binding *b) {
  unsigned gpr = CJ_DIM3_ARGS, sse = 0, stack = 0;
  size_t i, n = b->sig->n;
  if (n > CJ_STUB_MAX_PARAMS) return -1;
  for (i = 0; i < n; i++) {
    const cj_param *p = &b->sig->params[i];
    if (p->kind >= CJ_K_NSCALAR || p->type->opaque || p->type->raised) return -1;
  }
  if (!(b->where = cj_calloc(n + CJ_DIM3_ARGS, sizeof *b->where))) return -1;
  for (i = 0; i < CJ_DIM3_ARGS; i++) b->where[i] = (uint16_t)(8 * i);
  for (i = 0; i < n; i++) {
    uint16_t *w = &b->where[CJ_DIM3_ARGS + i];
    if (is_sse((cj_kind)b->sig->params[i].kind))
      *w = (uint16_t)(sse < 8 ? CJ_FRAME_XMM + 16 * sse++ : CJ_FRAME_STACK + 8 * stack++);
    else
      *w = (uint16_t)(gpr < 6 ? 8 * gpr++ : CJ_FRAME_STACK + 8 * stack++);
  }
  return 0;
}

/* Gives b a free entry point when its signature allows one. Called with bind_lock held. */
static void stub_take(cj_binding *b) {
  unsigned i, k;
  if (cj_bind_stubs_end - cj_bind_stubs != 16 * CJ_BIND_STUBS || stub_plan(b) != 0) {
    cj_free(b->where);
    b->where = NULL;
    return;
  }
  for (i = 0; i < CJ_BIND_STUBS; i++) {
    k = (stub_next + i) % CJ_BIND_STUBS;
    if (stub_owner[k]) continue;
    stub_next = k + 1;
    b->stub = (int)k;
    b->code = (void *)(cj_bind_stubs + 16 * (size_t)k);
    __atomic_store_n(&stub_owner[k], b, __ATOMIC_RELEASE);
    return;
  }
  cj_free(b->where); /* all taken: a libffi closure it is */
  b->where = NULL;
}

static void stub_release(cj_binding *b) {
  if (b->stub < 0) return;
  pthread_mutex_lock(&bind_lock);
  __atomic_store_n(&stub_owner[b->stub], NULL, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&bind_lock);
  b->stub = -1;
}

int cj_bind_uses_stub(const void *fnptr) {
  const unsigned char *p = fnptr;
  return p >= cj_bind_stubs && p < cj_bind_stubs + 16 * (size_t)CJ_BIND_STUBS;
}
#else
static void stub_take(cj_binding *b) { (void)b; }
static void stub_release(cj_binding *b) { (void)b; }
int cj_bind_uses_stub(const void *fnptr) {
  (void)fnptr;
  return 0;
}
#endif

/* Describes the C function to libffi and makes the closure. Called with bind_lock held. */
static cujit_status make_closure(cj_binding *b) {
  size_t i, n = b->sig->n;
  cujit_status st;
  b->atypes = cj_calloc(n + CJ_DIM3_ARGS, sizeof *b->atypes);
  if (!b->atypes) return cj_fail_oom("binding a kernel");
  for (i = 0; i < CJ_DIM3_ARGS; i++)
#if CJ_DIM3_AS_WORDS
    b->atypes[i] = &ffi_type_uint64;
#else
    b->atypes[i] = &dim3_type;
#endif
  for (i = 0; i < n; i++) {
    st = param_ffi(b, i, &b->atypes[i + CJ_DIM3_ARGS]);
    if (st != CUJIT_OK) return st;
  }
  if (ffi_prep_cif(&b->cif, FFI_DEFAULT_ABI, (unsigned)(n + CJ_DIM3_ARGS), &ffi_type_sint32,
                   b->atypes) != FFI_OK)
    return cj_fail(CUJIT_ERROR_SIGNATURE, "cujit_function_bind: libffi cannot describe a C "
                   "function with the parameters of kernel '%s' (%s)", b->fn->name,
                   b->sig->text);
  b->closure = ffi_closure_alloc(sizeof(ffi_closure), &b->code);
  if (!b->closure) return cj_fail_oom("allocating a closure for a bound kernel");
  if (ffi_prep_closure_loc(b->closure, &b->cif, bound_entry, b, b->code) != FFI_OK)
    return cj_fail(CUJIT_ERROR_NOT_SUPPORTED, "cujit_function_bind: libffi cannot make "
                   "closures on this system (kernel '%s')", b->fn->name);
  return CUJIT_OK;
}

cujit_status cujit_function_bind(cujit_function *fn, const cujit_launch_options *opts,
                                 void **fnptr) {
  cj_binding *b;
  cj_signature *s;
  cujit_status st;
  if (!fn || !fnptr)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_function_bind: %s is NULL",
                   fn ? "fnptr" : "fn");
  *fnptr = NULL;
  st = cj_function_sig(fn, &s);
  if (st != CUJIT_OK) return st;
  b = cj_calloc(1, sizeof *b);
  if (!b) return cj_fail_oom("binding a kernel");
  b->fn = fn;
  b->opts = opts;
  b->sig = s;
  b->direct = params_direct(b);
  b->stub = -1;
  pthread_mutex_lock(&bind_lock);
  stub_take(b);
  st = b->stub >= 0 ? CUJIT_OK : make_closure(b);
  if (st == CUJIT_OK) {
    b->next = fn->upper->bindings; /* cj_function_sig made fn->upper */
    fn->upper->bindings = b;
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
  binding_free(found);
}

void cj_bind_free_all(cujit_function *fn) {
  cj_binding *b, *next;
  pthread_mutex_lock(&bind_lock);
  b = fn->upper->bindings;
  fn->upper->bindings = NULL;
  pthread_mutex_unlock(&bind_lock);
  for (; b; b = next) {
    next = b->next;
    binding_free(b);
  }
}
