/* bcast.c - the generators' arrays broadcast to one shape, as NumPy broadcasts the operands
 * of an operation: a call runs its operation over every element of the shape its arrays
 * broadcast to, and `x[j]` stands for x's element at the position of element j (C order)
 * of that shape.
 *
 * Arrays of one shape, or whose shapes differ only by leading dimensions of one element,
 * hold their elements in the shape's own order, so `x[j]` is x's element j and the kernel
 * is the one a call of arrays of one shape runs. An array with fewer elements than the
 * shape is stretched (broadcast along some dimension of more than one element): in the
 * kernel its parameter is an indexer, cj_bcast<const T, R>, whose operator[] finds the
 * element from j. Its elements are const there, since each is the element of several j:
 * an operation that writes one would write it from several threads in no order, and does
 * not compile. The kernel's source depends on which arrays are stretched and on their
 * number of runs R (below) only, so each such pattern compiles once per process, as every
 * generated kernel does (array/kernels.c); the sizes are the indexer's values.
 *
 * The generators take contiguous arrays only, so array x's element at coordinates c of the
 * shape is at sum(c[d] * stride[d]), its C-order strides, 0 along the dimensions it is
 * stretched along. Dimensions of one element in the shape count for nothing; the others
 * group into runs of consecutive dimensions x is not stretched along, and over a run the
 * coordinates read as one number: (j / div) % len, div the elements of the shape after
 * the run and len the run's own, times step, x's elements after the run. The outermost
 * run needs no % (j is below the shape's size) and the innermost none of the /. */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"

/* How an array's element is found from j, one run at a time; the runs of x are r = 0 ...
 * R - 1, each {div, len, step}. Divisions are 32-bit where both numbers fit; the 64-bit
 * one, for shapes of 2^32 elements and more, is a call, which keeps each access's code
 * short. The walk gives the elements at j, j + 1, ... (a chunk's) from coordinates it
 * keeps, divided once at j and then stepped as an odometer steps. */
static const char bcast_source[] =
    "#ifndef CJ_BCAST\n#define CJ_BCAST\n"
    "__device__ __noinline__ unsigned long long cj_bcast_div64(unsigned long long k,\n"
    "                                                          unsigned long long d) {\n"
    "  return k / d;\n"
    "}\n"
    "__device__ __forceinline__ unsigned long long cj_bcast_div(unsigned long long k,\n"
    "                                                           unsigned long long d) {\n"
    "  return ((k | d) >> 32) == 0 ? (unsigned long long)((unsigned)k / (unsigned)d)\n"
    "                              : cj_bcast_div64(k, d);\n"
    "}\n"
    "/* An array stretched to the call's shape (NumPy's broadcasting): x[j] is its element at\n"
    " * the position of element j (C order) of the shape. */\n"
    "template <typename T, int R> struct cj_bcast {\n"
    "  T *p;\n"
    "  unsigned long long run[R > 0 ? R : 1][3]; /* div (1: none), len (0: none), step */\n"
    "  __device__ __forceinline__ T &operator[](long long j) const {\n"
    "    unsigned long long o = 0;\n"
    "#pragma unroll\n"
    "    for (int r = 0; r < R; r++) {\n"
    "      unsigned long long q = run[r][0] == 1 ? (unsigned long long)j\n"
    "                                             : cj_bcast_div((unsigned long long)j, "
    "run[r][0]);\n"
    "      if (run[r][1]) q -= cj_bcast_div(q, run[r][1]) * run[r][1];\n"
    "      o += q * run[r][2];\n"
    "    }\n"
    "    return p[o];\n"
    "  }\n"
    "};\n"
    "/* Its elements at j, j + 1, ...: *w is the one at the current index, w.next() steps. */\n"
    "template <typename T, int R> struct cj_bcast_walk {\n"
    "  const cj_bcast<T, R> &b;\n"
    "  unsigned long long c[R > 0 ? R : 1], rem[R > 0 ? R : 1], o;\n"
    "  __device__ __forceinline__ cj_bcast_walk(const cj_bcast<T, R> &x, long long j)\n"
    "      : b(x), o(0) {\n"
    "#pragma unroll\n"
    "    for (int r = 0; r < R; r++) {\n"
    "      const unsigned long long d = b.run[r][0], n = b.run[r][1];\n"
    "      unsigned long long q = d == 1 ? (unsigned long long)j\n"
    "                                    : cj_bcast_div((unsigned long long)j, d);\n"
    "      rem[r] = (unsigned long long)j - q * d;\n"
    "      if (n) q -= cj_bcast_div(q, n) * n;\n"
    "      c[r] = q;\n"
    "      o += q * b.run[r][2];\n"
    "    }\n"
    "  }\n"
    "  __device__ __forceinline__ T &operator*() const { return b.p[o]; }\n"
    "  __device__ __forceinline__ void next() {\n"
    "#pragma unroll\n"
    "    for (int r = 0; r < R; r++)\n"
    "      if (++rem[r] == b.run[r][0]) {\n"
    "        rem[r] = 0;\n"
    "        if (++c[r] == b.run[r][1]) {\n"
    "          c[r] = 0;\n"
    "          o -= (b.run[r][1] - 1) * b.run[r][2];\n"
    "        } else {\n"
    "          o += b.run[r][2];\n"
    "        }\n"
    "      }\n"
    "  }\n"
    "};\n#endif\n";

void cj_gen_bcast_source(cj_buf *b) { cj_buf_puts(b, bcast_source); }

void cj_gen_params(cj_buf *b, const cj_gen_decl *d, size_t n, const cj_gen_shape *s, int writable) {
  size_t i;
  for (i = 0; i < n; i++) {
    const char *t = cj_elem_of(d[i].type)->c_name;
    if (d[i].is_array && cj_gen_stretched(s, i))
      cj_buf_printf(b, "%scj_bcast<%s%s, %d> %s", i ? ", " : "",
                    writable && !d[i].is_const ? "" : "const ", t, s->runs[i], d[i].name);
    else
      cj_buf_printf(b, "%s%s%s %s%s", i ? ", " : "", d[i].is_const ? "const " : "", t,
                    d[i].is_array ? "*" : "", d[i].name);
  }
}

/* The runs of array a, stretched to the shape `sh`, into p[1 ...]; their number. */
static unsigned char runs_of(const cj_array *sh, const cj_array *a, uint64_t *p) {
  uint64_t after = 1, own = 1; /* the shape's elements after d, and a's */
  int lead = sh->ndim - a->ndim, d, in_run = 0;
  unsigned char r = 0;
  for (d = sh->ndim - 1; d >= 0; d--) {
    uint64_t size = (uint64_t)sh->shape[d];
    if (size == 1) continue;
    if (d >= lead && a->shape[d - lead] != 1) { /* along it: a run starts or goes on */
      if (!in_run) {
        p[1 + 3 * r] = after;
        p[2 + 3 * r] = size;
        p[3 + 3 * r] = own;
        in_run = 1;
        r++;
      } else {
        p[3 * r - 1] *= size;
      }
      own *= size;
    } else {
      in_run = 0;
    }
    after *= size;
  }
  if (in_run) p[3 * r - 1] = 0; /* the outermost run: j / div is below its len */
  return r;
}

/* "argument 2 ('x')" for each array, as cj_ops_broadcast names them. */
typedef char arg_name[96];

/* Shapes that do not broadcast; where the arrays have one size, how to pair their elements
 * as before (in C order). */
static cujit_status not_broadcast(cujit_status st, const cj_array *const *arrays, size_t n) {
  const cj_array *first = NULL;
  char was[1024];
  size_t k;
  for (k = 0; k < n; k++)
    if (arrays[k]) {
      if (!first) first = arrays[k];
      if (arrays[k]->size != first->size) return st;
    }
  snprintf(was, sizeof was, "%s", cujit_last_error());
  return cj_fail(st,
                 "%s; to pair their elements in C order, pass views of one shape "
                 "(cujit_array_reshape())",
                 was);
}

cujit_status cj_gen_shape_of(const char *fn, const cj_gen_decl *d, size_t n,
                             const cj_array *const *arrays, cj_gen_shape *s) {
  const cj_array *first = NULL;
  arg_name names[64];
  const char *name_of[64];
  cujit_status st;
  size_t k;
  int same = 1;
  s->stretched = 0;
  for (k = 0; k < n; k++)
    if (arrays[k]) {
      s->count[k] = arrays[k]->size;
      if (!first) first = arrays[k];
      same &= cj_array_same_shape(arrays[k], first);
    }
  if (same) { /* the common case, without a message prepared */
    s->shape.ndim = first->ndim;
    memcpy(s->shape.shape, first->shape, sizeof first->shape);
    s->shape.size = first->size;
    s->shape.stream = first->stream;
    return CUJIT_OK;
  }
  for (k = 0; k < n; k++) {
    /* a name too long for the message is cut there, which the message can bear */
    if (snprintf(names[k], sizeof names[k], "argument %zu ('%s')", k + 1, d[k].name) < 0)
      names[k][0] = '\0';
    name_of[k] = names[k];
  }
  st = cj_ops_broadcast(fn, arrays, name_of, n, &s->shape, NULL);
  if (st != CUJIT_OK) return not_broadcast(st, arrays, n);
  for (k = 0; k < n; k++)
    if (arrays[k] && arrays[k]->size < s->shape.size) {
      s->stretched |= (uint64_t)1 << k;
      s->packed[k][0] = arrays[k]->data;
      s->runs[k] = runs_of(&s->shape, arrays[k], s->packed[k]);
    }
  return CUJIT_OK;
}

void cj_gen_shape_args(const cj_gen_shape *s, size_t n, cujit_arg *args) {
  size_t k;
  for (k = 0; k < n; k++)
    if (cj_gen_stretched(s, k))
      args[k] = cujit_value(s->packed[k], 8 * (1 + 3 * (size_t)(s->runs[k] ? s->runs[k] : 1)));
}

cujit_status cj_gen_refuse_write(const char *fn, const cj_gen_decl *d, size_t n,
                                 const cj_gen_shape *s, uint64_t which,
                                 const cj_array *const *arrays) {
  char has[CJ_SHAPE_TEXT], to[CJ_SHAPE_TEXT], more[64] = "";
  size_t k, first = n, others = 0;
  for (k = 0; k < n; k++)
    if (which >> k & 1) {
      if (first == n)
        first = k;
      else
        others++;
    }
  if (others)
    snprintf(more, sizeof more, " (and %zu other stretched array%s)", others,
             others == 1 ? "" : "s");
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: argument %zu ('%s') has shape %s, stretched to the call's shape %s, "
                 "and the operation writes it%s: each of its elements would be written for "
                 "several i at once; pass an array of shape %s for it, or write another array",
                 fn, first + 1, d[first].name, cj_array_shape_text(arrays[first], has),
                 cj_array_shape_text(&s->shape, to), more, to);
}
