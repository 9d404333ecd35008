/* ops.c - elementwise operations on arrays (PyCUDA's gpuarray operators and cumath): each
 * op and combination of types is one generated kernel that converts its operands to the
 * promoted type, computes (in float for the 16-bit floats), and converts the result. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"

static const char *const binop_names[] = {"add",  "sub", "mul", "div", "pow", "minimum", "maximum",
                                          "fmod", "eq",  "ne",  "lt",  "le",  "gt",      "ge"};
static const char *const unop_names[] = {"neg",  "fabs", "sqrt", "exp",   "log",  "log10",
                                         "sin",  "cos",  "tan",  "asin",  "acos", "atan",
                                         "sinh", "cosh", "tanh", "floor", "ceil"};

/* Helpers the integer ops use, and NaN-propagating min/max. */
static const char kHelpers[] =
    "template <class T> __device__ T cj_ipow(T b, T e) {\n"
    "  T r = 1;\n"
    "  if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);\n"
    "  for (; e; e >>= 1, b *= b) if (e & 1) r *= b;\n"
    "  return r;\n}\n"
    "template <class T> __device__ T cj_imod(T a, T b) { return b ? a % b : 0; }\n"
    "template <class T> __device__ T cj_fmin(T a, T b) { return a != a ? a : b != b ? b : "
    "(b < a ? b : a); }\n"
    "template <class T> __device__ T cj_fmax(T a, T b) { return a != a ? a : b != b ? b : "
    "(b > a ? b : a); }\n";

static int is_complex(int t) { return t == CUJIT_TYPE_C64 || t == CUJIT_TYPE_C128; }
static int is_float(int t) {
  return t == CUJIT_TYPE_F16 || t == CUJIT_TYPE_BF16 || t == CUJIT_TYPE_F32 || t == CUJIT_TYPE_F64;
}
static int is_int(int t) { return !is_float(t) && !is_complex(t); } /* bool included */

/* The type arithmetic happens in: float for the 16-bit floats. */
static int compute_type(int t) {
  return t == CUJIT_TYPE_F16 || t == CUJIT_TYPE_BF16 ? CUJIT_TYPE_F32 : t;
}

static int is_comparison(int op) { return op >= CUJIT_BINOP_EQ && op <= CUJIT_BINOP_GE; }

static cujit_status refuse(const char *fn, const char *op, int type, const char *why) {
  return cj_fail(CUJIT_ERROR_INVALID_VALUE, "%s: %s is not defined for %s (%s)", fn, op,
                 cj_elem_of(type)->name, why);
}

/* Checks that `op` applies to the promoted type p. */
static cujit_status binop_allowed(const char *fn, int op, int p) {
  CJ_CHECK(op >= 0 && (size_t)op < CJ_COUNT(binop_names), CUJIT_ERROR_INVALID_VALUE,
           "%s: %d is not a cujit_binop", fn, op);
  if (is_complex(p) &&
      (op == CUJIT_BINOP_FMOD || op == CUJIT_BINOP_MINIMUM || op == CUJIT_BINOP_MAXIMUM ||
       (is_comparison(op) && op != CUJIT_BINOP_EQ && op != CUJIT_BINOP_NE)))
    return refuse(fn, binop_names[op], p, "complex numbers have no order");
  if (p == CUJIT_TYPE_BOOL && op == CUJIT_BINOP_SUB)
    return refuse(fn, binop_names[op], p, "use CUJIT_BINOP_NE for the exclusive or of booleans");
  return CUJIT_OK;
}

static int binop_result(int op, int p) {
  if (is_comparison(op)) return CUJIT_TYPE_BOOL;
  if (op == CUJIT_BINOP_DIV && is_int(p)) return CUJIT_TYPE_F64;
  return p;
}

/* x op y, both of compute type c. */
static void binop_expr(cj_buf *b, int op, int c, const char *x, const char *y) {
  static const char *const infix[] =
      {[CUJIT_BINOP_ADD] = "+", [CUJIT_BINOP_SUB] = "-", [CUJIT_BINOP_MUL] = "*",
       [CUJIT_BINOP_DIV] = "/", [CUJIT_BINOP_EQ] = "==", [CUJIT_BINOP_NE] = "!=",
       [CUJIT_BINOP_LT] = "<",  [CUJIT_BINOP_LE] = "<=", [CUJIT_BINOP_GT] = ">",
       [CUJIT_BINOP_GE] = ">="};
  int f32 = c == CUJIT_TYPE_F32;
  if ((size_t)op < CJ_COUNT(infix) && infix[op]) {
    cj_buf_printf(b, "(%s %s %s)", x, infix[op], y);
  } else if (op == CUJIT_BINOP_POW) {
    cj_buf_printf(b, "%s(%s, %s)",
                  is_complex(c) ? "cuda::std::pow"
                  : is_int(c)   ? "cj_ipow"
                  : f32         ? "powf"
                                : "pow",
                  x, y);
  } else if (op == CUJIT_BINOP_FMOD) {
    cj_buf_printf(b, "%s(%s, %s)", is_int(c) ? "cj_imod" : f32 ? "fmodf" : "fmod", x, y);
  } else {
    int min = op == CUJIT_BINOP_MINIMUM;
    if (is_int(c))
      cj_buf_printf(b, "(%s %s %s ? %s : %s)", x, min ? "<" : ">", y, x, y);
    else
      cj_buf_printf(b, "cj_f%s(%s, %s)", min ? "min" : "max", x, y);
  }
}

/* The result's expression: expr, of type c, converted to r. */
static void result(cj_buf *b, int c, int r, const char *expr) { cj_array_convert(b, c, r, expr); }

/* What one operation launches: its inputs, its scalar and where the result goes. */
typedef struct op_call {
  const char *fn;    /* the public function, for messages */
  const cj_array *a; /* the first input: shape, stream */
  int result;        /* the result's type */
  size_t n_in;
  CUdeviceptr in[CUJIT_MAP_MAX_ARRAYS];
  int types[CUJIT_MAP_MAX_ARRAYS + 1]; /* the inputs', then the result's */
  cujit_arg scalar;
  size_t n_scalars; /* 0 or 1 */
} op_call;

/* ---- kernels already made: an operation's key (kind, op, types, flags) to its function,
 * so that a repeated operation neither writes nor looks up its source ---- */

#define FAST_SLOTS 1024 /* a power of two */

/* An operation run before: its kernel, and what its types gave. Written under the lock,
 * read without it: the fields are stored before the key (with release order) and none
 * changes after, so a reader that sees the key sees them. A full table keeps no more
 * (those operations then find their kernel by its source text, as the first call does). */
typedef struct fast_slot {
  uint64_t key; /* 0: empty */
  cujit_function *fn;
  int result, promoted;
  unsigned w; /* elements per 16-byte access (cj_map_width) */
} fast_slot;

static pthread_mutex_t fast_lock = PTHREAD_MUTEX_INITIALIZER;
static CJ_LARGE fast_slot fast[FAST_SLOTS];

/* The operation's kind (1 binary, 2 with a scalar, 3 unary), op, types and flags: what
 * decides its kernel. */
static uint64_t op_key(int kind, int op, int a, int b, unsigned flags) {
  return 1ull << 63 | (uint64_t)kind << 56 | (uint64_t)a << 48 | (uint64_t)b << 40 |
         (uint64_t)(flags & 0xff) << 32 | (uint32_t)op; /* op whole: an unknown one is no hit */
}

static size_t fast_home(uint64_t key) {
  return (size_t)(key ^ key >> 17 ^ key >> 31) & (FAST_SLOTS - 1);
}

static const fast_slot *fast_get(uint64_t key) {
  size_t i = fast_home(key), probes;
  for (probes = 0; probes < FAST_SLOTS; probes++, i = (i + 1) & (FAST_SLOTS - 1)) {
    uint64_t k = __atomic_load_n(&fast[i].key, __ATOMIC_ACQUIRE);
    if (k == key) return &fast[i];
    if (k == 0) break;
  }
  return NULL;
}

static void fast_put(uint64_t key, cujit_function *f, int result, int promoted, unsigned w) {
  size_t i = fast_home(key), probes;
  pthread_mutex_lock(&fast_lock);
  for (probes = 0; probes < FAST_SLOTS; probes++, i = (i + 1) & (FAST_SLOTS - 1)) {
    if (fast[i].key == key) break; /* another thread kept it first */
    if (fast[i].key == 0) {
      fast[i].fn = f;
      fast[i].result = result;
      fast[i].promoted = promoted;
      fast[i].w = w;
      __atomic_store_n(&fast[i].key, key, __ATOMIC_RELEASE);
      break;
    }
  }
  pthread_mutex_unlock(&fast_lock);
}

/* Makes or checks the output and launches `f` (of width w) over the first input's
 * elements. */
static cujit_status launch_op(op_call *c, cujit_function *f, unsigned w, cujit_array **out) {
  cj_array *o;
  int made = 0;
  cujit_status st = cj_array_output(out, c->a, c->result, c->fn, &o, &made);
  if (st != CUJIT_OK) return st;
  st = cj_map_launch(f, w, c->a->size, c->a->stream, c->in, c->n_in, &c->scalar, c->n_scalars,
                     o->data);
  return cj_array_unmake(st, out, made);
}

/* The first time an operation runs: checks a given output, compiles the kernel (before any
 * output is made: a compile error costs no allocation), remembers it under `key` (0: not
 * kept) with the promoted type p, and launches. Frees `expr`. */
static cujit_status run_op(op_call *c, cj_map_kernel *k, cj_buf *expr, cujit_array **out,
                           uint64_t key, int p) {
  cujit_function *f = NULL;
  unsigned w = cj_map_width(c->types, c->n_in + 1);
  cj_array *o;
  int made = 0;
  cujit_status st = CUJIT_OK;
  k->in_types = c->types;
  k->n_in = c->n_in;
  k->out_type = c->result;
  k->expr = expr->data;
  if (*out) st = cj_array_output(out, c->a, c->result, c->fn, &o, &made); /* checks it */
  if (st == CUJIT_OK) st = expr->oom ? cj_fail_oom("writing a kernel") : cj_map_prepare(k, &f);
  cj_buf_free(expr);
  if (st != CUJIT_OK) return st;
  if (key) fast_put(key, f, c->result, p, w);
  return launch_op(c, f, w, out);
}

/* The kernels of the built-in operations name their inputs' elements a and b. */
static const char *const ab_names[] = {"a", "b"};

/* The op of a kernel's name, then its types' tags: "cj_add_f32_f32". */
static void kernel_name(char *name, size_t size, const char *op, int a, const char *b,
                        const char *suffix) {
  snprintf(name, size, "cj_%s_%s%s%s%s", op, cj_elem_of(a)->name, b ? "_" : "", b ? b : "", suffix);
}

cujit_status cujit_array_binary(cujit_binop op, const cujit_array *ha, const cujit_array *hb,
                                cujit_array **out) {
  static const char fn[] = "cujit_array_binary";
  cj_buf x = {0}, y = {0}, e = {0};
  char name[64], sa[CJ_SHAPE_TEXT], sb[CJ_SHAPE_TEXT];
  op_call call;
  cj_array *a, *b;
  int p, c, r;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get2(ha, hb, fn, "a", "b", &a, &b));
  CJ_CHECK(cj_array_same_shape(a, b), CUJIT_ERROR_INVALID_VALUE,
           "%s: a has shape %s and b %s; elementwise operations need arrays of one shape "
           "(cujit_array_reshape gives a view of another)",
           fn, cj_array_shape_text(a, sa), cj_array_shape_text(b, sb));
  call.fn = fn, call.a = a, call.n_in = 2, call.n_scalars = 0;
  call.in[0] = a->data, call.in[1] = b->data;
  uint64_t key = op_key(1, op, a->type, b->type, 0);
  const fast_slot *known = fast_get(key);
  if (known) {
    call.result = known->result;
    return launch_op(&call, known->fn, known->w, out);
  }
  p = cujit_type_promote(a->type, b->type, 0);
  CJ_TRY(binop_allowed(fn, op, p));
  r = binop_result(op, p);
  c = compute_type(op == CUJIT_BINOP_DIV && is_int(p) ? CUJIT_TYPE_F64 : p);
  call.result = r;
  call.types[0] = a->type, call.types[1] = b->type, call.types[2] = r;
  kernel_name(name, sizeof name, binop_names[op], a->type, cj_elem_of(b->type)->name, "");
  cj_array_convert(&x, a->type, c, "a");
  cj_array_convert(&y, b->type, c, "b");
  {
    cj_buf v = {0};
    binop_expr(&v, op, c, x.data ? x.data : "", y.data ? y.data : "");
    result(&e, is_comparison(op) ? CUJIT_TYPE_BOOL : c, r, v.data ? v.data : "");
    e.oom |= v.oom | x.oom | y.oom;
    cj_buf_free(&v);
  }
  cj_buf_free(&x);
  cj_buf_free(&y);
  cj_map_kernel k = {name, kHelpers, 0, NULL, ab_names, NULL, 0, NULL};
  return run_op(&call, &k, &e, out, key, p);
}

/* The range of an integer type, as doubles. */
static void int_range(int t, double *lo, double *hi) {
  size_t bits = 8 * cj_elem_of(t)->size;
  int is_unsigned =
      t == CUJIT_TYPE_U8 || t == CUJIT_TYPE_U16 || t == CUJIT_TYPE_U32 || t == CUJIT_TYPE_U64;
  *lo = is_unsigned ? 0 : -ldexp(1, (int)bits - 1);
  *hi = is_unsigned ? ldexp(1, (int)bits) - 1 : ldexp(1, (int)bits - 1) - 1;
}

/* An integer scalar must be an integer and, for an integer computation, fit its type (as
 * NumPy 2 refuses 300 with an int8 array). */
static cujit_status check_int_scalar(const char *fn, double s, int p) {
  double lo, hi;
  CJ_CHECK(s == floor(s) && fabs(s) < 0x1p63, CUJIT_ERROR_INVALID_VALUE,
           "%s: %g is not an integer that CUJIT_SCALAR_INT "
           "can pass; drop the flag to pass a float",
           fn, s);
  if (!is_int(p) || p == CUJIT_TYPE_BOOL) return CUJIT_OK;
  int_range(p, &lo, &hi);
  CJ_CHECK(s >= lo && s <= hi, CUJIT_ERROR_INVALID_VALUE,
           "%s: the integer %.0f does not fit %s, the "
           "array's type (%.0f to %.0f); convert the array first (cujit_array_astype)",
           fn, s, cj_elem_of(p)->name, lo, hi);
  return CUJIT_OK;
}

cujit_status cujit_array_binary_scalar(cujit_binop op, const cujit_array *ha, double s,
                                       unsigned flags, cujit_array **out) {
  static const char fn[] = "cujit_array_binary_scalar";
  cj_buf x = {0}, y = {0}, v = {0}, e = {0};
  char name[72];
  op_call call;
  int kind = flags & CUJIT_SCALAR_INT ? CUJIT_TYPE_I64 : CUJIT_TYPE_F64, p, c, r;
  cj_array *a;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get(ha, fn, "a", &a));
  CJ_CHECK(!(flags & ~(unsigned)(CUJIT_SCALAR_FIRST | CUJIT_SCALAR_INT)), CUJIT_ERROR_INVALID_VALUE,
           "%s: unknown flags 0x%x", fn, flags);
  call.fn = fn, call.a = a, call.n_in = 1, call.n_scalars = 1;
  call.in[0] = a->data, call.scalar = cujit_f64(s);
  uint64_t key = op_key(2, op, a->type, kind, flags);
  const fast_slot *known = fast_get(key);
  if (known) {
    if (kind == CUJIT_TYPE_I64 && (st = check_int_scalar(fn, s, known->promoted)) != CUJIT_OK)
      return st;
    call.result = known->result;
    return launch_op(&call, known->fn, known->w, out);
  }
  p = cujit_type_promote(a->type, kind, 1);
  CJ_TRY(binop_allowed(fn, op, p));
  if (kind == CUJIT_TYPE_I64 && (st = check_int_scalar(fn, s, p)) != CUJIT_OK) return st;
  r = binop_result(op, p);
  c = compute_type(op == CUJIT_BINOP_DIV && is_int(p) ? CUJIT_TYPE_F64 : p);
  call.result = r;
  call.types[0] = a->type, call.types[1] = r;
  kernel_name(name, sizeof name, binop_names[op], a->type, kind == CUJIT_TYPE_I64 ? "int" : "float",
              flags & CUJIT_SCALAR_FIRST ? "_first" : "");
  cj_array_convert(&x, a->type, c, "a");
  cj_array_convert(&y, CUJIT_TYPE_F64, c, "s");
  if (flags & CUJIT_SCALAR_FIRST)
    binop_expr(&v, op, c, y.data ? y.data : "", x.data ? x.data : "");
  else
    binop_expr(&v, op, c, x.data ? x.data : "", y.data ? y.data : "");
  result(&e, is_comparison(op) ? CUJIT_TYPE_BOOL : c, r, v.data ? v.data : "");
  e.oom |= v.oom | x.oom | y.oom;
  cj_buf_free(&x);
  cj_buf_free(&y);
  cj_buf_free(&v);
  cj_map_kernel k = {name, kHelpers, 0, NULL, ab_names, "double s", 0, NULL};
  return run_op(&call, &k, &e, out, key, p);
}

/* ---- unary ---- */

static int unop_result(int op, int t) {
  if (op == CUJIT_UNOP_NEG) return t;
  if (op == CUJIT_UNOP_FABS && is_complex(t))
    return t == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32;
  return is_int(t) ? CUJIT_TYPE_F64 : t;
}

static cujit_status unop_allowed(const char *fn, int op, int t) {
  CJ_CHECK(op >= 0 && (size_t)op < CJ_COUNT(unop_names), CUJIT_ERROR_INVALID_VALUE,
           "%s: %d is not a cujit_unop", fn, op);
  if (op == CUJIT_UNOP_NEG && t == CUJIT_TYPE_BOOL)
    return refuse(fn, "neg", t, "use CUJIT_BINOP_EQ with false for logical not");
  if (is_complex(t) && (op == CUJIT_UNOP_FLOOR || op == CUJIT_UNOP_CEIL))
    return refuse(fn, unop_names[op], t, "complex numbers have no order");
  return CUJIT_OK;
}

static void unop_expr(cj_buf *b, int op, int c, const char *x) {
  if (op == CUJIT_UNOP_NEG) {
    cj_buf_printf(b, "(-%s)", x);
  } else if (is_complex(c)) {
    cj_buf_printf(b, "cuda::std::%s(%s)", op == CUJIT_UNOP_FABS ? "abs" : unop_names[op], x);
  } else {
    cj_buf_printf(b, "%s%s(%s)", unop_names[op], c == CUJIT_TYPE_F32 ? "f" : "", x);
  }
}

cujit_status cujit_array_unary(cujit_unop op, const cujit_array *ha, cujit_array **out) {
  static const char fn[] = "cujit_array_unary";
  cj_buf x = {0}, v = {0}, e = {0};
  char name[64];
  op_call call;
  cj_array *a;
  int r, c;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get(ha, fn, "a", &a));
  call.fn = fn, call.a = a, call.n_in = 1, call.n_scalars = 0;
  call.in[0] = a->data;
  uint64_t key = op_key(3, op, a->type, 0, 0);
  const fast_slot *known = fast_get(key);
  if (known) {
    call.result = known->result;
    return launch_op(&call, known->fn, known->w, out);
  }
  CJ_TRY(unop_allowed(fn, op, a->type));
  r = unop_result(op, a->type);
  c = op == CUJIT_UNOP_NEG ? compute_type(a->type) : compute_type(is_int(a->type) ? r : a->type);
  call.result = r;
  call.types[0] = a->type, call.types[1] = r;
  kernel_name(name, sizeof name, unop_names[op], a->type, NULL, "");
  cj_array_convert(&x, a->type, c, "a");
  unop_expr(&v, op, c, x.data ? x.data : "");
  /* the magnitude of a complex number is real */
  result(&e, op == CUJIT_UNOP_FABS && is_complex(c) ? r : c, r, v.data ? v.data : "");
  e.oom |= v.oom | x.oom;
  cj_buf_free(&x);
  cj_buf_free(&v);
  cj_map_kernel k = {name, kHelpers, 0, NULL, ab_names, NULL, 0, NULL};
  return run_op(&call, &k, &e, out, key, a->type);
}

/* ---- fused expressions ---- */

/* Checks the expression and the names, and looks the arrays up into a[]. */
static cujit_status check_map(const char *fn, const char *expr, size_t n, const char *const *names,
                              const cujit_array *const *arrays, cj_array **a) {
  char si[CJ_SHAPE_TEXT], s0[CJ_SHAPE_TEXT];
  size_t i, k;
  CJ_CHECK(expr && expr[0], CUJIT_ERROR_INVALID_VALUE, "%s: the expression is %s", fn,
           expr ? "empty" : "NULL");
  CJ_CHECK(n && names && arrays, CUJIT_ERROR_INVALID_VALUE, "%s: give at least one named array",
           fn);
  for (i = 0; i < n; i++) {
    const char *s = names[i];
    CJ_TRY(cj_array_get(arrays[i], fn, s ? s : "an array", &a[i]));
    CJ_CHECK(s && cj_is_identifier(s) && strcmp(s, "i") != 0 && strncmp(s, "cj_", 3) != 0,
             CUJIT_ERROR_INVALID_VALUE,
             "%s: name %zu ('%s') is not a C identifier "
             "other than i and cj_...",
             fn, i + 1, s ? s : "(NULL)");
    for (k = 0; k < i; k++)
      CJ_CHECK(strcmp(names[k], s) != 0, CUJIT_ERROR_INVALID_VALUE,
               "%s: the name '%s' is given twice", fn, s);
    CJ_CHECK(cj_array_same_shape(a[i], a[0]), CUJIT_ERROR_INVALID_VALUE,
             "%s: '%s' has shape %s, '%s' %s; the arrays must have one shape", fn, s,
             cj_array_shape_text(a[i], si), names[0], cj_array_shape_text(a[0], s0));
  }
  return CUJIT_OK;
}

/* The map's result: the expression converted to r. */
static void map_expr(cj_buf *e, const char *expr, int r) {
  if (r == CUJIT_TYPE_F16 || r == CUJIT_TYPE_BF16)
    cj_buf_printf(e, "%s((float)(%s))", cj_elem_of(r)->c_name, expr);
  else
    cj_buf_printf(e, "static_cast<%s>(%s)", cj_elem_of(r)->c_name, expr);
}

cujit_status cujit_array_map(cujit_array **out, const char *expr, size_t n,
                             const char *const *names, const cujit_array *const *arrays) {
  static const char fn[] = "cujit_array_map";
  cj_buf e = {0};
  op_call call;
  cj_array *a[CUJIT_MAP_MAX_ARRAYS], *o;
  size_t i;
  int r;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_CHECK(n <= CUJIT_MAP_MAX_ARRAYS, CUJIT_ERROR_INVALID_VALUE, "%s: more than %d arrays", fn,
           CUJIT_MAP_MAX_ARRAYS);
  CJ_TRY(check_map(fn, expr, n, names, arrays, a));
  r = a[0]->type;
  for (i = 1; i < n; i++) r = cujit_type_promote(r, a[i]->type, 0);
  if (*out && cj_array_get(*out, fn, "*out", &o) == CUJIT_OK) r = o->type;
  call.fn = fn, call.a = a[0], call.result = r, call.n_in = n, call.n_scalars = 0;
  for (i = 0; i < n; i++) {
    call.in[i] = a[i]->data;
    call.types[i] = a[i]->type;
  }
  call.types[n] = r;
  map_expr(&e, expr, r);
  cj_map_kernel k = {"cj_map", NULL, 0, NULL, names, NULL, 0, NULL};
  return run_op(&call, &k, &e, out, 0, r); /* keyed by its source text only */
}
