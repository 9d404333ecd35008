/* signature.h - kernel signatures: the types of a kernel's parameters, as the compiler gives
 * them (module/function.h: cj_function_types) or from an explicit type string (sigtype.c),
 * fitted to and checked against the driver's parameter layout (signature.c), and used by
 * the varargs calls (call.c) and the libffi-bound function pointers (bind.c). Private; not
 * installed. */
#ifndef CUJIT_SIGNATURE_H
#define CUJIT_SIGNATURE_H

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "module/function.h"

/* What a type is. The scalar kinds come first, in the order of their names' table. */
typedef enum cj_kind {
  CJ_K_I8,
  CJ_K_U8,
  CJ_K_I16,
  CJ_K_U16,
  CJ_K_I32,
  CJ_K_U32,
  CJ_K_I64,
  CJ_K_U64,
  CJ_K_F16,
  CJ_K_BF16,
  CJ_K_F32,
  CJ_K_F64,
  CJ_K_PTR,
  CJ_K_NSCALAR,
  CJ_K_STRUCT = CJ_K_NSCALAR, /* members at C layout; a vector type is a struct of lanes */
  CJ_K_BLOB                   /* N opaque bytes (also unions and what libffi cannot describe) */
} cj_kind;

typedef struct cj_type cj_type;

/* One member of a struct: `count` consecutive elements of `type` (an array when > 1). */
typedef struct cj_member {
  cj_type *type;
  uint32_t count;
  uint32_t offset;
} cj_member;

struct cj_type {
  uint8_t kind;   /* cj_kind */
  uint8_t lanes;  /* a CUDA vector type's lane count (1..4), else 0 */
  uint8_t opaque; /* is or holds a blob: bound functions take it by address */
  uint8_t raised; /* is or holds a scalar aligned above its size (alignas on a member):
                     libffi cannot describe it, so it cannot be bound by value */
  uint8_t heap;   /* allocated (structs, blobs, raised scalars); scalars are static */
  uint32_t size;
  uint32_t align;
  uint32_t nmembers;
  cj_member *members;
};

/* The static type of a scalar kind. */
const cj_type *cj_type_of_scalar(cj_kind k);
/* Type-string name of a scalar kind ("f32"). */
const char *cj_kind_name(cj_kind k);
/* Raises *t's alignment to `align` (a power of two; a lower one is ignored). A static
 * scalar is replaced by a heap copy marked `raised`; a blob or struct is changed in place,
 * and a struct's size rounded up to a multiple of it (as __align__ on a struct does; a
 * scalar's or blob's size stays). Returns 0, or -1 when out of memory (*t unchanged). */
int cj_type_align(cj_type **t, uint32_t align);
/* Builds a struct type from `n` >= 1 members (the array and its types are moved in,
 * offsets computed with C's rules); `align` > 0 raises the struct's alignment. Returns 0,
 * -1 when out of memory or -2 when larger than 1 MiB (the members are freed then). */
int cj_type_struct(cj_member *members, uint32_t n, uint32_t align, cj_type **out);
/* A CUDA vector type: `lanes` elements of scalar `k` at CUDA's alignment for it. */
cj_type *cj_type_vector(cj_kind k, unsigned lanes);
/* N opaque bytes aligned to `align`. */
cj_type *cj_type_blob(uint32_t size, uint32_t align);
/* A deep copy of t (static scalars are returned as they are); NULL when out of memory. */
cj_type *cj_type_clone(const cj_type *t);
/* Frees a type made by the functions above; static scalar types are left alone. */
void cj_type_free(cj_type *t);
/* Appends the type-string form of `t` to b ("f32", "f32x4", "{i32 f64[2]}:16", "b12:4"). */
void cj_type_text(const cj_type *t, cj_buf *b);

/* How cujit_call reads a parameter from its varargs and bound functions from libffi. */
typedef struct cj_param {
  cj_type *type;
  uint8_t kind; /* type->kind, copied for the hot path */
  uint8_t tag;  /* cujit_type for cujit_arg.type */
  uint32_t size;
  uint32_t offset; /* in the parameter buffer, by CUDA's rule (aligned as the type) */
  char *name;      /* the parameter's name; NULL when unknown (the compiler's types name
                      none) */
  uint64_t accept; /* what it takes as it is: cj_accept_of(tag) (module/accept.h) */
} cj_param;

typedef struct cj_signature cj_signature;
struct cj_signature {
  cj_signature *older; /* signatures it replaced, kept alive until the function is freed */
  size_t n;
  cj_param *params;
  char *text;  /* the type string */
  int checked; /* 1 once offsets and sizes matched the driver's layout */
};

/* What this layer keeps with a kernel (function.h's `upper`), freed with it. */
typedef struct cj_upper {
  cj_signature *sig;                  /* the newest signature; read without a lock */
  struct cj_binding *bindings;        /* bound function pointers (bind.c; under its lock) */
  void (*unbind)(cujit_function *fn); /* frees the bindings; set by bind.c with the first */
} cj_upper;

/* ---- sigtype.c ---- */

/* Builds a signature from `n` parameter types (moved in; names may be NULL or moved in). */
cujit_status cj_sig_build(cj_type **types, char **names, size_t n, cj_signature **out);
/* Parses a type string (see cujit_function_set_signature in cujit.h). */
cujit_status cj_sig_from_types(const char *types, cj_signature **out);
/* Frees one signature (not the ones it replaced). NULL is fine. */
void cj_sig_free(cj_signature *s);

/* ---- signature.c ---- */

/* 1 when the launch layer has filled fn's parameter layout. */
int cj_sig_has_layout(const cujit_function *fn);
/* Checks s against fn's parameter layout: count, offsets and sizes. */
cujit_status cj_sig_check(const cj_signature *s, const cujit_function *fn);
/* The type of a parameter as the compiler gives it, as this layer describes types:
 * scalars, pointers and CUDA vector types as themselves, an enum (a named type the PTX
 * passes as a scalar of `size` bytes) as an integer; NULL for what is known by name only
 * (structs, unions, classes) or not described (*oom set when out of memory). */
cj_type *cj_type_of_param(const cj_ptype *p, size_t size, int *oom);
/* The signature of parameters `t` with the layout offsets/sizes (n of each): each type
 * as cj_type_of_param() gives it where it fits the layout, else opaque bytes of the
 * layout's size and alignment (structs known by name only). */
cujit_status cj_sig_from_ptypes(const cj_ptypes *t, size_t n, const size_t *offsets,
                                const size_t *sizes, cj_signature **out);
/* The function's signature: the explicit one, else made from the compiler's types on
 * first use (which may compile the probe of an extern "C" kernel). Cheap after that. */
cujit_status cj_sig_of_function(cujit_function *fn, cj_signature **out);

/* ---- call.c ---- */

/* CJ_LAUNCH(...) is how a typed or bound call that needs the general path reaches the
 * device: cujit_launch, called directly. In the fault-injection build only
 * (CUJIT_FAULT_INJECTION), it goes through cj_call_launcher, which tests point elsewhere to
 * see the arguments built, and CJ_LAUNCHER_REPLACED() then keeps the calls off their
 * direct paths, which would reach the driver without it. */
#ifdef CUJIT_FAULT_INJECTION
typedef cujit_status (*cj_launch_fn)(const cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                                     const cujit_arg *args, size_t nargs,
                                     const cujit_launch_options *opts);
void cj_call_set_launcher(cj_launch_fn f); /* NULL restores cujit_launch */
extern cj_launch_fn cj_call_launcher;
#  define CJ_LAUNCH cj_call_launcher
#  define CJ_LAUNCHER_REPLACED() (cj_call_launcher != cujit_launch)
#else
#  define CJ_LAUNCH cujit_launch
#  define CJ_LAUNCHER_REPLACED() 0
#endif

/* Kernels with at most this many parameters are called without a heap allocation. */
#define CJ_CALL_STACK_ARGS 32

/* Converts `nargs` varargs (after the fixed arguments) into args[0..sig->n); `kernel`
 * names the kernel in messages. Their types are what the signature says, unchecked. */
cujit_status cj_args_from_va(const cj_signature *s, const char *kernel, int nargs, va_list *ap,
                             cujit_arg *args);
/* Fills `a` as a by-value argument of parameter p from the first n bytes at `v` (n at most
 * 16; the value's first 8 bytes are zeroed before). Inline so constant sizes stay cheap. */
static inline void cj_arg_set(const cj_param *p, cujit_arg *a, const void *v, size_t n) {
  a->kind = CUJIT_ARG_VALUE;
  a->type = p->tag;
  a->size = p->size;
  a->data = NULL;
  a->value.u64 = 0;
  memcpy(a->value.bytes, v, n);
  a->host = NULL;
  a->bytes = 0;
}
/* Converts the arguments cujit_call() made (plain values, values by their address) into
 * args[0..sig->n): each taken as it is by its parameter, or converted to its type by the
 * rule of module/accept.h, or refused (CUJIT_ERROR_INVALID_ARGS naming the parameter, the
 * argument's type and value, and why). The count is the caller's to check. */
cujit_status cj_args_from_plain(const cj_signature *s, const char *kernel, const cujit_arg *in,
                                cujit_arg *args);
/* Fills `a` as a by-value argument of parameter p from the bytes at `v`. */
void cj_arg_bytes(const cj_param *p, const void *v, cujit_arg *a);
/* Fills `a` for pointer parameter i from `v`: a device pointer, or an argument reference
 * made by cujit_arg_ref() (CUJIT_IN_PTR, CUJIT_OUT_PTR, CUJIT_INOUT_PTR). */
cujit_status cj_arg_ptr(const cj_signature *s, const char *kernel, size_t i, CUdeviceptr v,
                        cujit_arg *a);
/* Appends "parameter 2 'x' (f32)" for parameter i to b. */
void cj_param_label(const cj_signature *s, size_t i, cj_buf *b);

#endif
