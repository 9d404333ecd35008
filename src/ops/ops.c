/* ops.c - elementwise operations on arrays (PyCUDA's gpuarray operators and cumath): each
 * op and combination of types is one generated kernel that converts its operands to the
 * promoted type, computes (in float for the 16-bit floats), and converts the result. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

/* NaN-propagating min/max; the operations' kernels get the integer arithmetic
 * (intwrap.c) before them. */
static const char kHelpers[] =
    "template <class T> __device__ T cj_fmin(T a, T b) { return a != a ? a : b != b ? b : "
    "(b < a ? b : a); }\n"
    "template <class T> __device__ T cj_fmax(T a, T b) { return a != a ? a : b != b ? b : "
    "(b > a ? b : a); }\n";

/* An operation's name for its range, whatever `op` holds (checked later, off the fast path). */
#define OP_NAME(row) ((row) ? (row)->numpy : "op")

static int is_comparison(int op) { return op >= CUJIT_BINOP_EQ && op <= CUJIT_BINOP_GE; }

/* Checks that `op` (its row: NULL for none) applies to the promoted type p. */
static cujit_status binop_allowed(const char *fn, int op, const cj_op *row, int p) {
  CJ_CHECK(row, CUJIT_ERROR_INVALID_VALUE, "%s: %d is not a cujit_binop", fn, op);
  return cj_op_takes(row, p) ? CUJIT_OK : cj_op_refuse(fn, row, p);
}

/* Whether cxmath.c computes the complex function of the table's `cuda` name f (cj_csqrt
 * ...); the others are cuda::std's. */
static int own_complex(const char *f) {
  static const char *const own[] = {"sqrt", "log",  "log10", "tan", "asin",
                                    "acos", "atan", "tanh",  "pow"};
  size_t k;
  for (k = 0; k < CJ_COUNT(own); k++)
    if (strcmp(f, own[k]) == 0) return 1;
  return 0;
}

/* The function a kernel calls for the table's `cuda` name f on compute type c (see
 * cujit_array.h, "The operations as tables"), into b. */
static void callee(cj_buf *b, const char *f, int c) {
  if (strncmp(f, "cj_", 3) == 0)
    cj_buf_puts(b, f);
  else if (cj_scalar_is_complex(c) && own_complex(f))
    cj_buf_printf(b, "cj_c%s", f); /* cxmath.c */
  else if (cj_scalar_is_complex(c))
    cj_buf_printf(b, "cuda::std::%s", strcmp(f, "fabs") == 0 ? "abs" : f);
  else if (cj_scalar_is_int(c))
    cj_buf_printf(b, "cj_i%s", f);
  else
    cj_buf_printf(b, "%s%s", f, c == CUJIT_TYPE_F32 ? "f" : "");
}

/* Whether the table's `cuda` form is an operator rather than a function. */
static int is_operator(const char *f) { return !((f[0] >= 'a' && f[0] <= 'z') || f[0] == '_'); }

/* The type op computes in for promoted type p: f64 for true division of integers, i8 for
 * pow and fmod of bools (as NumPy), float for the 16-bit floats. */
static int binop_compute(int op, int p) {
  if (op == CUJIT_BINOP_DIV && cj_scalar_is_int(p)) return CUJIT_TYPE_F64;
  if (p == CUJIT_TYPE_BOOL && (op == CUJIT_BINOP_POW || op == CUJIT_BINOP_FMOD))
    return CUJIT_TYPE_I8;
  return cj_ops_compute_type(p);
}

static int binop_result(int op, int p) {
  if (is_comparison(op)) return CUJIT_TYPE_BOOL;
  return p == CUJIT_TYPE_F16 || p == CUJIT_TYPE_BF16 ? p : binop_compute(op, p);
}

/* x op y, both of compute type c. */
static void binop_expr(cj_buf *b, const cj_op *op, int c, const char *x, const char *y) {
  static const char *const wrapping[][2] = {{"+", "add"}, {"-", "sub"}, {"*", "mul"}};
  size_t k;
  if (is_operator(op->cuda)) {
    for (k = 0; k < CJ_COUNT(wrapping) && cj_int_wraps(c); k++)
      if (strcmp(op->cuda, wrapping[k][0]) ==
          0) { /* wrapping as NumPy's, never a signed overflow */
        cj_buf_printf(b, "cj_%s<%s>(%s, %s)", wrapping[k][1], cj_elem_of(c)->c_name, x, y);
        return;
      }
    if (cj_scalar_is_complex(c) && strcmp(op->cuda, "/") == 0)
      cj_buf_printf(b, "cj_cdiv(%s, %s)", x, y); /* cxmath.c */
    else
      cj_buf_printf(b, "(%s %s %s)", x, op->cuda, y);
    return;
  }
  callee(b, op->cuda, c);
  cj_buf_printf(b, "(%s, %s)", x, y);
}

/* The result's expression: expr, of type c, converted to r. */
static void result(cj_buf *b, int c, int r, const char *expr) { cj_array_convert(b, c, r, expr); }

/* What one operation launches: its inputs, its scalars and where the result goes. */
typedef struct op_call {
  const char *fn;    /* the public function, for messages */
  const cj_array *a; /* the result's shape and stream: the first input, or a broadcast's */
  int result;        /* the result's type */
  size_t n_in;
  CUdeviceptr in[CUJIT_MAP_MAX_ARRAYS];
  int types[CUJIT_MAP_MAX_ARRAYS + 1]; /* the inputs', then the result's */
  cujit_arg scalars[2];
  size_t n_scalars;    /* 0 to 2 */
  cj_array *given;     /* *out, looked up; NULL: a new output */
  cj_array *into;      /* *out when it overlaps an input: the result goes through a
                          temporary (given is then NULL); else NULL */
  const cj_plan *plan; /* NULL: every array contiguous, nothing broadcast */
} op_call;

/* Whether output o overlaps one of the n inputs other than element for element (a
 * broadcast input's one element is read by every thread: any overlap counts). */
static int overlaps(const cj_array *o, const cj_array *const *arrays, size_t n, unsigned bcast) {
  size_t i;
  for (i = 0; i < n; i++) {
    int meet = cj_layout_meet(arrays[i], o);
    if (meet == CJ_OVERLAP || (meet == CJ_SAME && (bcast >> i & 1))) return 1;
  }
  return 0;
}

/* Looks up a given output and plans the loop over c->a's shape of the inputs `arrays` (of
 * which those of `bcast` are single elements broadcast; others of fewer elements than the
 * result are broadcast by strides of 0) and the output: no plan (the plain contiguous
 * loop) when all are contiguous and nothing is broadcast. An output that overlaps an input
 * (other than element for element) is planned as a new one: the result goes to a
 * temporary, then into it. */
static cujit_status plan_call(op_call *c, cujit_array **out, const cj_array *const *arrays,
                              unsigned bcast, cj_plan *p) {
  const cj_array *all[CUJIT_MAP_MAX_ARRAYS + 1];
  int contig = !bcast;
  size_t i;
  c->given = NULL;
  c->into = NULL;
  c->plan = NULL;
  if (*out) CJ_TRY(cj_array_get(*out, c->fn, "*out", &c->given));
  if (c->given && overlaps(c->given, arrays, c->n_in, bcast)) {
    c->into = c->given;
    c->given = NULL;
  }
  for (i = 0; i < c->n_in; i++) { /* of another size: broadcast, through strides of 0 */
    contig &= arrays[i]->contig && (arrays[i]->size == c->a->size || (bcast >> i & 1));
    all[i] = arrays[i];
  }
  if (contig && (!c->given || c->given->contig)) return CUJIT_OK;
  all[c->n_in] = c->given;
  cj_plan_make(p, c->a->ndim, c->a->shape, c->n_in + 1, all, bcast);
  cj_plan_chunks(p);
  c->plan = p;
  return CUJIT_OK;
}

/* The result's shape (into *shape) when n operands (NULL ones are scalars, names[j]
 * naming operand j in messages) meet, by NumPy's rule: the shapes aligned on their last
 * dimensions (missing leading ones counting as 1), each dimension the size they share,
 * those of size 1 stretched to it. Operands of a single element that differ from the
 * result's shape get bit j of *bcast (read once by a contiguous loop); others of another
 * shape are read through strides of 0 along their stretched dimensions (cj_plan_make). The
 * result is ordered on the first operand's stream. */
cujit_status cj_ops_broadcast(const char *fn, const cj_array *const *ops, const char *const *names,
                              size_t n, cj_array *shape, unsigned *bcast) {
  char x[CJ_SHAPE_TEXT], y[CJ_SHAPE_TEXT];
  const cj_array *first = NULL;
  size_t j, by[CUJIT_ARRAY_MAX_DIMS]; /* the operand that set each dimension's size */
  int ndim = 0, d;
  if (bcast) *bcast = 0;
  memset(shape, 0, sizeof *shape);
  for (j = 0; j < n; j++)
    if (ops[j]) {
      if (!first) first = ops[j];
      if (ops[j]->ndim > ndim) ndim = ops[j]->ndim;
    }
  for (d = 0; d < ndim; d++) shape->shape[d] = 1, by[d] = n;
  for (j = 0; j < n; j++) {
    const cj_array *o = ops[j];
    int lead = o ? ndim - o->ndim : 0;
    for (d = 0; o && d < o->ndim; d++) {
      int64_t want = shape->shape[lead + d], have = o->shape[d];
      if (have == want || have == 1) continue;
      CJ_CHECK(want == 1, CUJIT_ERROR_INVALID_VALUE,
               "%s: %s has shape %s and %s %s, which do not broadcast (NumPy's rule: aligned "
               "on their last dimensions, sizes must be equal or 1; here %lld and %lld)",
               fn, names[by[lead + d]], cj_array_shape_text(ops[by[lead + d]], x), names[j],
               cj_array_shape_text(o, y), (long long)want, (long long)have);
      shape->shape[lead + d] = have;
      by[lead + d] = j;
    }
  }
  shape->ndim = ndim;
  shape->stream = first->stream;
  CJ_CHECK(cj_layout_count(ndim, shape->shape, &shape->size) == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: the result's shape %s would hold more than 2^62 elements", fn,
           cj_array_shape_text(shape, x));
  cj_layout_contiguous(ndim, shape->shape, shape->strides);
  shape->contig = 1;
  for (j = 0; bcast && j < n && j < 32; j++)
    if (ops[j] && ops[j]->size == 1 && !cj_array_same_shape(ops[j], shape)) *bcast |= 1u << j;
  return CUJIT_OK;
}

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

/* The operation's kind (1 binary, 2 with a scalar, 3 unary, 4 where, 5 if_positive), op,
 * types, flags and loop (the plan's code): what decides its kernel. 0 (not kept) for an op
 * beyond 2^16, which no operation has: it is refused on the way. */
static uint64_t op_key(int kind, int op, int a, int b, unsigned flags, const cj_plan *plan) {
  if ((unsigned)op >= 1u << 16) return 0;
  return 1ull << 63 | (uint64_t)kind << 56 | (uint64_t)a << 48 | (uint64_t)b << 40 |
         (uint64_t)(flags & 0xff) << 32 | (uint64_t)cj_plan_code(plan) << 16 | (uint32_t)op;
}

static size_t fast_home(uint64_t key) {
  return (size_t)(key ^ key >> 17 ^ key >> 31) & (FAST_SLOTS - 1);
}

static const fast_slot *fast_get(uint64_t key) {
  size_t i = fast_home(key), probes;
  if (!key) return NULL;
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

/* Makes or checks the output and launches `f` (of width w) over the result's elements;
 * into a temporary first when the output overlaps an input (c->into). */
static cujit_status launch_op(op_call *c, cujit_function *f, unsigned w, cujit_array **out) {
  cujit_array *h = NULL;
  cj_array *o, *tmp = NULL;
  int made = 0;
  cujit_status st =
      cj_array_output_of(out, c->given ? c->given : c->into, c->a, c->result, c->fn, &o, &made);
  if (st == CUJIT_OK && c->into) st = cj_array_stage(c->into, c->a->stream, c->fn, &h, &tmp);
  if (st != CUJIT_OK) return st;
  cj_map_run r = {c->a->size,   c->a->stream,          c->in, c->n_in, c->scalars,
                  c->n_scalars, (tmp ? tmp : o)->data, 1,     c->plan};
  st = cj_map_run_kernel(f, w, &r);
  if (tmp) return cj_array_settle(st, 1, h, tmp, c->into, c->a->stream);
  return cj_array_unmake(st, out, made);
}

/* The first time an operation runs: checks a given output, compiles the kernel (before any
 * output is made: a compile error costs no allocation), remembers it under `key` (0: not
 * kept) with the promoted type p, and launches. Frees `expr`. */
static cujit_status run_op(op_call *c, cj_map_kernel *k, cj_buf *expr, cujit_array **out,
                           uint64_t key, int p) {
  cujit_function *f = NULL;
  cj_array *o;
  unsigned w;
  int made = 0;
  cujit_status st = CUJIT_OK;
  k->in_types = c->types;
  k->n_in = c->n_in;
  k->out_type = c->result;
  k->expr = expr->data;
  k->dims = c->plan ? c->plan->dims : 0;
  k->bcast = c->plan ? c->plan->bcast : 0;
  k->chunk = c->plan ? c->plan->chunk : 0;
  k->zinner = c->plan ? c->plan->zinner : 0;
  w = cj_map_kernel_width(k);
  if (c->given || c->into)
    st = cj_array_output_of(out, c->given ? c->given : c->into, c->a, c->result, c->fn, &o, &made);
  if (st == CUJIT_OK) st = expr->oom ? cj_fail_oom("writing a kernel") : cj_map_prepare(k, &f);
  cj_buf_free(expr);
  if (st != CUJIT_OK) return st;
  if (key) fast_put(key, f, c->result, p, w);
  return launch_op(c, f, w, out);
}

/* The kernels of the built-in operations name their inputs' elements a and b. */
static const char *const ab_names[] = {"a", "b"};

/* run_op for the kernel `name` of a built-in operation (`scalars`: its scalar parameters,
 * or NULL), with the integer arithmetic (intwrap.c) and the helpers above before it. */
static cujit_status run_builtin(op_call *c, const char *name, const char *scalars, cj_buf *expr,
                                cujit_array **out, uint64_t key, int p) {
  cj_buf pre = {0};
  cujit_status st;
  cj_buf_puts(&pre, cj_int_source);
  cj_buf_puts(&pre, kHelpers);
  if (cj_scalar_is_complex(p)) cj_buf_puts(&pre, cj_complex_source);
  cj_map_kernel k = {name, pre.data, 0, NULL, ab_names, scalars, 0, NULL, 0, 0, 0, 0};
  expr->oom |= pre.oom;
  st = run_op(c, &k, expr, out, key, p);
  cj_buf_free(&pre);
  return st;
}

/* The op of a kernel's name, then its types' tags: "cj_add_f32_f32". */
static void kernel_name(char *name, size_t size, const char *op, int a, const char *b,
                        const char *suffix) {
  snprintf(name, size, "cj_%s_%s%s%s%s", op, cj_elem_of(a)->name, b ? "_" : "", b ? b : "", suffix);
}

cujit_status cujit_array_binary(cujit_binop op, const cujit_array *ha, const cujit_array *hb,
                                cujit_array **out) {
  static const char fn[] = "cujit_array_binary";
  const cj_op *row = cj_binop_of(op);
  cj_buf x = {0}, y = {0}, e = {0};
  char name[64];
  op_call call;
  cj_array *a, *b, shape;
  cj_plan plan;
  unsigned bc = 0;
  int p, c, r, same;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get2(ha, hb, fn, "a", "b", &a, &b));
  CJ_TRACE("cujit: %s " CJ_TYPES2_FMT, OP_NAME(row), CJ_TYPES2(a->type, b->type));
  same = cj_array_same_shape(a, b);
  if (!same)
    CJ_TRY(cj_ops_broadcast(fn, (const cj_array *const[]){a, b}, ab_names, 2, &shape, &bc));
  call.fn = fn, call.a = same ? a : &shape, call.n_in = 2, call.n_scalars = 0;
  call.in[0] = a->data, call.in[1] = b->data;
  CJ_TRY(plan_call(&call, out, (const cj_array *const[]){a, b}, bc, &plan));
  uint64_t key = op_key(1, op, a->type, b->type, 0, call.plan);
  const fast_slot *known = fast_get(key);
  if (known) {
    call.result = known->result;
    return launch_op(&call, known->fn, known->w, out);
  }
  p = cujit_type_promote(a->type, b->type, 0);
  CJ_TRY(binop_allowed(fn, op, row, p));
  r = binop_result(op, p);
  c = binop_compute(op, p);
  call.result = r;
  call.types[0] = a->type, call.types[1] = b->type, call.types[2] = r;
  kernel_name(name, sizeof name, row->numpy, a->type, cj_elem_of(b->type)->name, "");
  cj_array_convert(&x, a->type, c, "a");
  cj_array_convert(&y, b->type, c, "b");
  {
    cj_buf v = {0};
    binop_expr(&v, row, c, x.data ? x.data : "", y.data ? y.data : "");
    result(&e, is_comparison(op) ? CUJIT_TYPE_BOOL : c, r, v.data ? v.data : "");
    e.oom |= v.oom | x.oom | y.oom;
    cj_buf_free(&v);
  }
  cj_buf_free(&x);
  cj_buf_free(&y);
  return run_builtin(&call, name, NULL, &e, out, key, p);
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
 * NumPy 2 refuses 300 with an int8 array); an integer power's exponent must not be
 * negative (as NumPy refuses 2 ** -1 of integers). */
static cujit_status check_int_scalar(const char *fn, double s, int p, int op, unsigned flags) {
  double lo, hi;
  CJ_CHECK(s == floor(s) && fabs(s) < 0x1p63, CUJIT_ERROR_INVALID_VALUE,
           "%s: %g is not an integer that CUJIT_SCALAR_INT "
           "can pass; drop the flag to pass a float",
           fn, s);
  if (!cj_scalar_is_int(p) || p == CUJIT_TYPE_BOOL) return CUJIT_OK;
  CJ_CHECK(!(op == CUJIT_BINOP_POW && !(flags & CUJIT_SCALAR_FIRST) && s < 0),
           CUJIT_ERROR_INVALID_VALUE,
           "%s: an integer to the negative integer power %.0f is not an integer; pass the "
           "exponent as a float (drop CUJIT_SCALAR_INT) or convert the array",
           fn, s);
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
  const cj_op *row = cj_binop_of(op);
  cj_buf x = {0}, y = {0}, v = {0}, e = {0};
  char name[72];
  op_call call;
  int kind = flags & CUJIT_SCALAR_INT ? CUJIT_TYPE_I64 : CUJIT_TYPE_F64, p, c, r;
  cj_array *a;
  cj_plan plan;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get(ha, fn, "a", &a));
  CJ_TRACE("cujit: %s %s", OP_NAME(row), CJ_TYPE_NAME(a->type));
  CJ_CHECK(!(flags & ~(unsigned)(CUJIT_SCALAR_FIRST | CUJIT_SCALAR_INT)), CUJIT_ERROR_INVALID_VALUE,
           "%s: unknown flags 0x%x", fn, flags);
  call.fn = fn, call.a = a, call.n_in = 1, call.n_scalars = 1;
  call.in[0] = a->data, call.scalars[0] = cujit_f64(s);
  CJ_TRY(plan_call(&call, out, (const cj_array *const[]){a}, 0, &plan));
  uint64_t key = op_key(2, op, a->type, kind, flags, call.plan);
  const fast_slot *known = fast_get(key);
  if (known) {
    if (kind == CUJIT_TYPE_I64 &&
        (st = check_int_scalar(fn, s, known->promoted, op, flags)) != CUJIT_OK)
      return st;
    call.result = known->result;
    return launch_op(&call, known->fn, known->w, out);
  }
  p = cujit_type_promote(a->type, kind, 1);
  CJ_TRY(binop_allowed(fn, op, row, p));
  if (kind == CUJIT_TYPE_I64 && (st = check_int_scalar(fn, s, p, op, flags)) != CUJIT_OK) return st;
  r = binop_result(op, p);
  c = binop_compute(op, p);
  call.result = r;
  call.types[0] = a->type, call.types[1] = r;
  kernel_name(name, sizeof name, row->numpy, a->type, kind == CUJIT_TYPE_I64 ? "int" : "float",
              flags & CUJIT_SCALAR_FIRST ? "_first" : "");
  cj_array_convert(&x, a->type, c, "a");
  if (p == CUJIT_TYPE_F16 || p == CUJIT_TYPE_BF16) {
    /* the scalar takes the array's type first, as NumPy 2 casts a Python number (0.1 is
     * the f16 nearest to it, 1e10 the infinity), then the operation computes in float */
    cj_buf in_p = {0};
    cj_array_convert(&in_p, CUJIT_TYPE_F64, p, "s");
    cj_array_convert(&y, p, c, in_p.data ? in_p.data : "s");
    y.oom |= in_p.oom;
    cj_buf_free(&in_p);
  } else {
    cj_array_convert(&y, CUJIT_TYPE_F64, c, "s");
  }
  if (flags & CUJIT_SCALAR_FIRST)
    binop_expr(&v, row, c, y.data ? y.data : "", x.data ? x.data : "");
  else
    binop_expr(&v, row, c, x.data ? x.data : "", y.data ? y.data : "");
  result(&e, is_comparison(op) ? CUJIT_TYPE_BOOL : c, r, v.data ? v.data : "");
  e.oom |= v.oom | x.oom | y.oom;
  cj_buf_free(&x);
  cj_buf_free(&y);
  cj_buf_free(&v);
  return run_builtin(&call, name, "double s", &e, out, key, p);
}

/* ---- unary ---- */

static int unop_result(int op, int t) {
  if (op == CUJIT_UNOP_NEG) return t;
  if (op == CUJIT_UNOP_FABS && cj_scalar_is_complex(t))
    return t == CUJIT_TYPE_C128 ? CUJIT_TYPE_F64 : CUJIT_TYPE_F32;
  return cj_scalar_is_int(t) ? CUJIT_TYPE_F64 : t;
}

static cujit_status unop_allowed(const char *fn, int op, const cj_op *row, int t) {
  CJ_CHECK(row, CUJIT_ERROR_INVALID_VALUE, "%s: %d is not a cujit_unop", fn, op);
  return cj_op_takes(row, t) ? CUJIT_OK : cj_op_refuse(fn, row, t);
}

static void unop_expr(cj_buf *b, const cj_op *op, int c, const char *x) {
  if (!is_operator(op->cuda)) {
    callee(b, op->cuda, c);
    cj_buf_printf(b, "(%s)", x);
  } else if (cj_int_wraps(c)) { /* -INT_MIN is INT_MIN, as NumPy's */
    cj_buf_printf(b, "cj_neg<%s>(%s)", cj_elem_of(c)->c_name, x);
  } else {
    cj_buf_printf(b, "(%s%s)", op->cuda, x);
  }
}

cujit_status cujit_array_unary(cujit_unop op, const cujit_array *ha, cujit_array **out) {
  static const char fn[] = "cujit_array_unary";
  const cj_op *row = cj_unop_of(op);
  cj_buf x = {0}, v = {0}, e = {0};
  char name[64];
  op_call call;
  cj_array *a;
  cj_plan plan;
  int r, c;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get(ha, fn, "a", &a));
  CJ_TRACE("cujit: %s %s", OP_NAME(row), CJ_TYPE_NAME(a->type));
  call.fn = fn, call.a = a, call.n_in = 1, call.n_scalars = 0;
  call.in[0] = a->data;
  CJ_TRY(plan_call(&call, out, (const cj_array *const[]){a}, 0, &plan));
  uint64_t key = op_key(3, op, a->type, 0, 0, call.plan);
  const fast_slot *known = fast_get(key);
  if (known) {
    call.result = known->result;
    return launch_op(&call, known->fn, known->w, out);
  }
  CJ_TRY(unop_allowed(fn, op, row, a->type));
  r = unop_result(op, a->type);
  c = op == CUJIT_UNOP_NEG ? cj_ops_compute_type(a->type)
                           : cj_ops_compute_type(cj_scalar_is_int(a->type) ? r : a->type);
  call.result = r;
  call.types[0] = a->type, call.types[1] = r;
  kernel_name(name, sizeof name, row->numpy, a->type, NULL, "");
  cj_array_convert(&x, a->type, c, "a");
  unop_expr(&v, row, c, x.data ? x.data : "");
  /* the magnitude of a complex number is real */
  result(&e, op == CUJIT_UNOP_FABS && cj_scalar_is_complex(c) ? r : c, r, v.data ? v.data : "");
  e.oom |= v.oom | x.oom;
  cj_buf_free(&x);
  cj_buf_free(&v);
  return run_builtin(&call, name, NULL, &e, out, key, a->type);
}

/* ---- fused expressions ---- */

/* Checks the expression and the names, and looks the arrays up into a[]. */
static cujit_status check_map(const char *fn, const char *expr, size_t n, const char *const *names,
                              const cujit_array *const *arrays, cj_array **a) {
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
  cj_array *a[CUJIT_MAP_MAX_ARRAYS], shape;
  cj_plan plan;
  unsigned bc = 0;
  size_t i;
  int r, same = 1;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_CHECK(n <= CUJIT_MAP_MAX_ARRAYS, CUJIT_ERROR_INVALID_VALUE, "%s: more than %d arrays", fn,
           CUJIT_MAP_MAX_ARRAYS);
  CJ_TRY(check_map(fn, expr, n, names, arrays, a));
  r = a[0]->type;
  for (i = 1; i < n; i++) r = cujit_type_promote(r, a[i]->type, 0);
  CJ_TRACE("cujit: map %s", CJ_TYPE_NAME(r));
  for (i = 1; i < n && same; i++) same = cj_array_same_shape(a[i], a[0]);
  if (!same) {
    char quoted[CUJIT_MAP_MAX_ARRAYS][72];
    const char *what[CUJIT_MAP_MAX_ARRAYS];
    for (i = 0; i < n; i++) {
      snprintf(quoted[i], sizeof quoted[i], "'%.64s'", names[i]);
      what[i] = quoted[i];
    }
    CJ_TRY(cj_ops_broadcast(fn, (const cj_array *const *)a, what, n, &shape, &bc));
  }
  call.fn = fn, call.a = same ? a[0] : &shape, call.n_in = n, call.n_scalars = 0;
  CJ_TRY(plan_call(&call, out, (const cj_array *const *)a, bc, &plan));
  if (call.given || call.into) r = (call.given ? call.given : call.into)->type;
  call.result = r;
  for (i = 0; i < n; i++) {
    call.in[i] = a[i]->data;
    call.types[i] = a[i]->type;
  }
  call.types[n] = r;
  map_expr(&e, expr, r);
  cj_map_kernel k = {"cj_map", NULL, 0, NULL, names, NULL, 0, NULL, 0, 0, 0, 0};
  return run_op(&call, &k, &e, out, 0, r); /* keyed by its source text only */
}

/* ---- where and if_positive ---- */

/* One of where's values: an array (*arr) or a typed scalar (*arr NULL); *type gets its
 * element type. */
static cujit_status where_value(const char *fn, const char *what, const cujit_arg *v,
                                cj_array **arr, int *type) {
  const cj_elem *e;
  *arr = NULL;
  if (v->kind == CUJIT_ARG_ARRAY) {
    CJ_TRY(cj_array_get((const cujit_array *)(uintptr_t)v->value.ptr, fn, what, arr));
    *type = (*arr)->type;
    return CUJIT_OK;
  }
  e = v->kind == CUJIT_ARG_VALUE ? cj_elem_of(v->type) : NULL;
  CJ_CHECK(e && v->size == e->size && !v->data, CUJIT_ERROR_INVALID_VALUE,
           "%s: %s is %s; pass an array (cujit_arr(x)) or a typed scalar (cujit_f32(0), "
           "cujit_i64(1), cujit_bool(1), cujit_c64(0, 1), ...)",
           fn, what,
           v->kind != CUJIT_ARG_VALUE    ? "an In/Out buffer"
           : v->type == CUJIT_TYPE_PTR   ? "a device pointer"
           : v->type == CUJIT_TYPE_BYTES ? "a value given by its bytes, which has no type"
                                         : "a value of no element type");
  *type = v->type;
  return CUJIT_OK;
}

/* cond ? x : y elementwise (positive: crit > 0 ? x : y). */
static cujit_status select_values(int positive, const cujit_array *hc, const cujit_arg *x,
                                  const cujit_arg *y, cujit_array **out, const char *fn) {
  static const char *const names[] = {"c", "x", "y"};
  const char *const what[] = {positive ? "crit" : "cond", "a", "b"};
  cj_array *ops[3], shape;
  cj_buf e = {0}, ex = {0}, ey = {0}, ec = {0}, pre = {0};
  char name[80];
  op_call call;
  cj_plan plan;
  unsigned bc = 0, bits = 0;
  int tx, ty, ct, r;
  size_t j;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(cj_array_get(hc, fn, what[0], &ops[0]));
  CJ_TRY(where_value(fn, "a", x, &ops[1], &tx));
  CJ_TRY(where_value(fn, "b", y, &ops[2], &ty));
  CJ_TRACE("cujit: %s " CJ_TYPES2_FMT, positive ? "if_positive" : "where", CJ_TYPES2(tx, ty));
  ct = ops[0]->type;
  if (positive && cj_elem_of(ct)->kind == CJ_SK_COMPLEX)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                   "%s: if_positive is not defined for %s (complex numbers have no order)", fn,
                   cj_elem_of(ct)->name);
  CJ_TRY(cj_ops_broadcast(fn, (const cj_array *const *)ops, what, 3, &shape, &bc));
  /* the kernel's inputs: cond, then the values given as arrays */
  call.fn = fn, call.a = &shape, call.n_in = 0, call.n_scalars = 0;
  for (j = 0; j < 3; j++) {
    if (!ops[j]) {
      call.scalars[call.n_scalars++] = *(j == 1 ? x : y);
      continue;
    }
    if (bc >> j & 1) bits |= 1u << call.n_in;
    ops[call.n_in] = ops[j];
    call.types[call.n_in] = ops[j]->type;
    call.in[call.n_in++] = ops[j]->data;
  }
  CJ_TRY(plan_call(&call, out, (const cj_array *const *)ops, bits, &plan));
  uint64_t key = op_key(positive ? 5 : 4, 0, tx, ty,
                        (unsigned)ct | (unsigned)(x->kind != CUJIT_ARG_ARRAY) << 5 |
                            (unsigned)(y->kind != CUJIT_ARG_ARRAY) << 6,
                        call.plan);
  const fast_slot *known = fast_get(key);
  r = cujit_type_promote((cujit_type)tx, (cujit_type)ty, 0);
  call.result = r;
  if (known) return launch_op(&call, known->fn, known->w, out);
  snprintf(name, sizeof name, "cj_%s_%s_%s%s_%s%s", positive ? "if_positive" : "where",
           cj_elem_of(ct)->name, x->kind == CUJIT_ARG_ARRAY ? "" : "s", cj_elem_of(tx)->name,
           y->kind == CUJIT_ARG_ARRAY ? "" : "s", cj_elem_of(ty)->name);
  if (positive)
    cj_array_convert(&ec, ct, cj_ops_compute_type(ct), "c");
  else
    cj_array_convert(&ec, ct, CUJIT_TYPE_BOOL, "c");
  cj_array_convert(&ex, tx, r, x->kind == CUJIT_ARG_ARRAY ? "x" : "sx");
  cj_array_convert(&ey, ty, r, y->kind == CUJIT_ARG_ARRAY ? "y" : "sy");
  cj_buf_printf(&e, "(%s%s) ? %s : %s", ec.data ? ec.data : "", positive ? " > 0" : "",
                ex.data ? ex.data : "", ey.data ? ey.data : "");
  e.oom |= ec.oom | ex.oom | ey.oom;
  cj_buf_free(&ec);
  cj_buf_free(&ex);
  cj_buf_free(&ey);
  {
    char scalars[96] = "";
    const char *in_names[3];
    size_t n = 0;
    if (x->kind != CUJIT_ARG_ARRAY)
      snprintf(scalars, sizeof scalars, "%s sx", cj_elem_of(tx)->c_name);
    if (y->kind != CUJIT_ARG_ARRAY)
      snprintf(scalars + strlen(scalars), sizeof scalars - strlen(scalars), "%s%s sy",
               scalars[0] ? ", " : "", cj_elem_of(ty)->c_name);
    for (j = 0; j < 3; j++)
      if (j == 0 || (j == 1 ? x : y)->kind == CUJIT_ARG_ARRAY) in_names[n++] = names[j];
    cujit_status st;
    /* the scalars' types may need headers that no array's type brings */
    cj_array_includes(&pre, (const int[]){tx, ty}, 2);
    cj_map_kernel k = {name, pre.data, 0, NULL, in_names, scalars, 0, NULL, 0, 0, 0, 0};
    call.types[call.n_in] = r;
    e.oom |= pre.oom;
    st = run_op(&call, &k, &e, out, key, r);
    cj_buf_free(&pre);
    return st;
  }
}

cujit_status cujit_array_where(const cujit_array *cond, cujit_arg a, cujit_arg b,
                               cujit_array **out) {
  return select_values(0, cond, &a, &b, out, "cujit_array_where");
}

cujit_status cujit_array_if_positive(const cujit_array *crit, cujit_arg a, cujit_arg b,
                                     cujit_array **out) {
  return select_values(1, crit, &a, &b, out, "cujit_array_if_positive");
}
