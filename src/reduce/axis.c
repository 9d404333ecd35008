/* axis.c - reductions along axes (NumPy's a.sum(axis=0), a.max(axis=(0, 2), keepdims=True),
 * a.argmax(axis=1)): the built-in reductions of reduce.c, one result per position of the
 * dimensions kept.
 *
 * The array is seen as two loops: the kept dimensions (one result each, in C order) and
 * the reduced ones, each set merged where its dimensions lie one inside the other (a
 * C-order matrix is one kept and one reduced dimension whichever axis is reduced). One
 * generated kernel per operation, types and counts of dimensions has two ways to walk
 * them, chosen by where the elements lie:
 *  - by rows, where the reduced elements of a result lie closer together than the results
 *    do (axis 1 of a C-order matrix): a warp per result, its lanes across the reduced
 *    elements (16 bytes per access where the rows are 16-byte aligned, an accumulator for
 *    each of its positions), combined by shuffles;
 *  - by columns, otherwise (axis 0): a block per run of up to 32 units of neighbouring
 *    results (a unit: 16 bytes of them where aligned, else one), a warp's lanes across
 *    128 bytes of units where it can, the block's lanes of a unit down the reduced
 *    elements, four accesses in flight; the lanes of a unit are combined in the block
 *    (shuffles, then shared memory), so that one launch of blocks of up to 1024 threads
 *    reads a matrix along axis 0 as fast as a copy does.
 * Where there are too few results to fill the device, the reduced elements are cut into
 * `splits` pieces, each reduced into a partial value (pool memory), and a second launch of
 * the same kernel combines each result's partials in piece order, a few loaded at once.
 * Each thread meets its elements in index order, so argmin and argmax fold an element in by
 * one comparison and two selects (a later element wins only when strictly better, or NaN)
 * rather than by the total order that combines values of threads. A reduction of every
 * element (the kept dimensions all of size 1) is reduce.c's, the result written where the
 * output is. An output that shares memory with the array, or is a strided view, gets the
 * result through a temporary. */
#include <stdio.h>
#include <string.h>

#include "reduce/reduce.h"
#include "launch/launch.h" /* the pool */

#define MAX_D CUJIT_ARRAY_MAX_DIMS
#define MIN_LANE 8        /* reduced elements a lane (by columns) reads at least */
#define SHARED_MOST 32768 /* bytes of shared memory a block (by columns) combines in */

/* The two loops, and the result's shape. */
typedef struct axplan {
  int k, r; /* kept and reduced dimensions, merged, those of one element left out */
  int64_t ks[MAX_D], kst[MAX_D], rs[MAX_D], rst[MAX_D];
  int64_t n_out, n_red;
  int out_ndim;
  int64_t out_shape[MAX_D];
} axplan;

/* How the kernel walks them. */
typedef struct axwalk {
  int rows;           /* 1: a warp per result; 0: a block of lanes per ux units of results */
  unsigned w;         /* elements per 16-byte access (1: none) */
  unsigned ux, warps; /* by columns: units across a block, and its warps */
  int64_t splits, chunk;
  int64_t blocks; /* by columns: the first launch's grid */
} axwalk;

/* Merges dimension (size, stride) into the list (shapes s, strides st, *n of them, the
 * innermost last) as a new outer one, or into the outermost where it continues it. */
static void push_outer(int64_t *s, int64_t *st, int *n, int64_t size, int64_t stride) {
  int i;
  if (size == 1) return;
  if (*n && stride == st[0] * s[0]) { /* within an array's span: no overflow */
    s[0] *= size;
    return;
  }
  for (i = *n; i > 0; i--) s[i] = s[i - 1], st[i] = st[i - 1];
  s[0] = size, st[0] = stride;
  (*n)++;
}

static void plan_of(const cj_array *a, const int *reduced, int keepdims, axplan *p) {
  int d;
  memset(p, 0, sizeof *p);
  p->n_out = p->n_red = 1;
  for (d = a->ndim - 1; d >= 0; d--) {
    if (reduced[d]) {
      push_outer(p->rs, p->rst, &p->r, a->shape[d], a->strides[d]);
      p->n_red *= a->shape[d]; /* a factor of the array's size, or 0 */
    } else {
      push_outer(p->ks, p->kst, &p->k, a->shape[d], a->strides[d]);
      p->n_out *= a->shape[d];
    }
  }
  for (d = 0; d < a->ndim; d++)
    if (!reduced[d] || keepdims) p->out_shape[p->out_ndim++] = reduced[d] ? 1 : a->shape[d];
  if (!p->n_out) p->n_red = 0; /* no result: nothing is read */
}

static int64_t absolute(int64_t v) { return v < 0 ? -v : v; }

/* Whether every stride of the list, in bytes, is a multiple of 16. */
static int aligned16(const int64_t *st, int n, size_t esize) {
  int i;
  for (i = 0; i < n; i++)
    if ((uint64_t)st[i] * esize % 16) return 0;
  return 1;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Units (of w neighbouring results) across a block by columns: a warp's row of them spans
 * 128 bytes where it can (8 units of 16 bytes), 32 units of smaller elements, never more
 * than there are. */
static unsigned ux_of(size_t unit_bytes, int64_t units) {
  unsigned ux = unit_bytes >= 16 ? 8 : unit_bytes >= 8 ? 16 : 32;
  while (ux > 1 && (int64_t)ux / 2 >= units) ux /= 2;
  return ux;
}

/* Warps of a block by columns: 32 (1024 threads, one block fills half a multiprocessor)
 * while a lane's accumulators are small, fewer as they grow (registers), and few enough
 * that the block's values fit SHARED_MOST bytes (for up to 32 units a warp). */
static unsigned warps_of(unsigned w, size_t acc_size) {
  size_t lane = (size_t)w * acc_size;
  unsigned warps = lane <= 64 ? 32 : lane <= 128 ? 16 : 8;
  while (warps > 1 && (size_t)warps * 32 * lane > SHARED_MOST) warps /= 2;
  return warps;
}

/* Cuts the reduced elements into w->splits pieces of w->chunk, each at least `least`
 * long, about `want` of them. */
static void cut(const axplan *p, axwalk *w, int64_t want, int64_t least) {
  int64_t most = ceil_div(p->n_red, least);
  w->splits = want > most ? most : want;
  if (w->splits < 1) w->splits = 1;
  w->chunk = ceil_div(p->n_red, w->splits);
  if (w->rows) w->chunk = ceil_div(w->chunk, w->w) * w->w; /* each piece starts aligned */
  if (w->chunk) w->splits = ceil_div(p->n_red, w->chunk);
  if (w->splits < 1) w->splits = 1;
}

/* The walk for plan p over elements of esize bytes (accumulators of acc_size) at `data` on
 * a device of `sms` multiprocessors. */
static void walk_of(const axplan *p, size_t esize, size_t acc_size, CUdeviceptr data, int64_t sms,
                    axwalk *w) {
  unsigned width = esize < 16 ? (unsigned)(16 / esize) : 1, lanes;
  int64_t cblocks, most_blocks;
  memset(w, 0, sizeof *w);
  w->w = 1;
  w->rows = p->r > 0 && p->n_red >= 32 && p->k > 0 &&
            absolute(p->rst[p->r - 1]) < absolute(p->kst[p->k - 1]);
  if (w->rows) {
    /* 16 bytes a lane: the rows one after another in memory, each 16-byte aligned */
    if (width > 1 && p->r == 1 && p->rst[0] == 1 && data % 16 == 0 &&
        aligned16(p->kst, p->k, esize))
      w->w = width;
    /* about 64 warps a multiprocessor; a warp's elements at least: 4 accesses a lane */
    cut(p, w, ceil_div(sms * 64, p->n_out), 32 * (int64_t)w->w * 4);
    return;
  }
  /* 16 bytes of neighbouring results a lane: the innermost kept dimension in C order and
   * of a multiple of their number, every access 16-byte aligned */
  if (width > 1 && p->k > 0 && p->kst[p->k - 1] == 1 && p->ks[p->k - 1] % width == 0 &&
      data % 16 == 0 && aligned16(p->kst, p->k - 1, esize) && aligned16(p->rst, p->r, esize))
    w->w = width;
  w->ux = ux_of(esize * w->w, p->n_out / w->w);
  w->warps = warps_of(w->w, acc_size);
  lanes = w->warps * 32 / w->ux;
  cblocks = ceil_div(p->n_out / w->w, w->ux);
  /* one launch where the blocks of results alone cover half the multiprocessors (a block
   * of 1024 threads holds half of one); pieces, and a second launch, where they do not */
  cut(p, w, cblocks * 2 >= sms ? 1 : ceil_div(sms * 2, cblocks), (int64_t)lanes * MIN_LANE);
  most_blocks = sms * (2048 / (int64_t)(w->warps * 32)) * 8; /* a grid-stride loop covers more */
  w->blocks = cblocks * w->splits;
  if (w->blocks > most_blocks) w->blocks = most_blocks;
}

/* Threads of the kernel's blocks (its __launch_bounds__): 256 by rows. */
static unsigned block_of(const axwalk *w) { return w->rows ? 256 : w->warps * 32; }

/* ---- the kernel's source ---- */

/* The offset of position v of a list of n dimensions (shapes s, strides st in the kernel's
 * parameter L), as a device function `fn`. */
static void put_offset(cj_buf *b, const char *fn, int n, const char *s, const char *st) {
  int d;
  cj_buf_printf(
      b, "__device__ __forceinline__ long long %s(unsigned long long v, const cj_axl &L) {\n", fn);
  if (n == 0) {
    cj_buf_puts(b, "  (void)v; (void)L;\n  return 0;\n}\n");
    return;
  }
  if (n == 1) {
    cj_buf_printf(b, "  return (long long)v * L.%s[0];\n}\n", st);
    return;
  }
  cj_buf_puts(b, "  long long off = 0;\n");
  for (d = n - 1; d > 0; d--)
    cj_buf_printf(b,
                  "  { const unsigned long long q = v / (unsigned long long)L.%s[%d];\n"
                  "    off += (long long)(v - q * (unsigned long long)L.%s[%d]) * L.%s[%d];\n"
                  "    v = q; }\n",
                  s, d, s, d, st, d);
  cj_buf_printf(b, "  return off + (long long)v * L.%s[0];\n}\n", st);
}

/* The partials of every result combined, in piece order (the second launch), `batch` of
 * them loaded before any is combined: a thread waits for memory once a batch, not once a
 * partial (there are few threads here, one a result, and up to about a hundred pieces). */
static void put_combine(cj_buf *b, unsigned batch) {
  cj_buf_printf(b,
                "  if (cj_pin) {\n"
                "    for (unsigned long long o = cj_tid; o < cj_nout; o += cj_nth) {\n"
                "      cj_t acc = cj_neutral();\n"
                "      unsigned long long s = 0;\n"
                "      for (; s + %u <= cj_splits; s += %u) {\n"
                "        cj_t p[%u];\n"
                "#pragma unroll\n"
                "        for (int j = 0; j < %u; j++) p[j] = cj_pin[(s + j) * cj_nout + o];\n"
                "#pragma unroll\n"
                "        for (int j = 0; j < %u; j++) acc = cj_reduce(acc, p[j]);\n"
                "      }\n"
                "      for (; s < cj_splits; s++) acc = cj_reduce(acc, cj_pin[s * cj_nout + o]);\n"
                "      cj_res[o] = cj_fin(acc);\n"
                "    }\n"
                "    return;\n"
                "  }\n",
                batch, batch, batch, batch, batch);
}

/* Partials a thread loads at once: 8 of up to 4 bytes, else 4 (argmax's value and index
 * pairs too), few enough registers that the first launch, the same kernel, keeps its
 * occupancy (more raised the registers of some: 45 to 52 for a warp a row of floats). */
static unsigned batch_of(size_t acc_size) { return acc_size <= 4 ? 8 : 4; }

/* cj_step(acc, v, at): acc with element v at index `at` folded in, where `at` is past every
 * index acc holds (each thread walks its elements in index order). For ARGMIN and ARGMAX a
 * comparison and two selects, not cj_pick's total order: a later element is taken only when
 * strictly better, or NaN where acc is not, which keeps the first extremum and the first
 * NaN. An accumulator still neutral after the walk (every element equal to the neutral
 * value, as -inf for argmax) gets its walk's first index from cj_first(acc, at). */
static void put_step(cj_buf *b, cujit_redop op) {
  if (op != CUJIT_REDOP_ARGMIN && op != CUJIT_REDOP_ARGMAX) {
    cj_buf_puts(b, "__device__ __forceinline__ cj_t cj_step(cj_t acc, const cj_e v, const long "
                   "long at) {\n"
                   "  return cj_reduce(acc, cj_map(v, at));\n}\n"
                   "__device__ __forceinline__ cj_t cj_first(cj_t acc, const long long at) {\n"
                   "  (void)at;\n  return acc;\n}\n");
    return;
  }
  cj_buf_puts(b, "__device__ __forceinline__ cj_t cj_step(cj_t acc, const cj_e v, const long long "
                 "at) {\n"
                 "  const cj_v e = cj_map(v, at).v;\n"
                 "  const bool take = (e CJ_BETTER acc.v || e != e) && acc.v == acc.v;\n"
                 "  acc.v = take ? e : acc.v;\n"
                 "  acc.i = take ? at : acc.i;\n"
                 "  return acc;\n}\n"
                 "__device__ __forceinline__ cj_t cj_first(cj_t acc, const long long at) {\n"
                 "  if (acc.i == 9223372036854775807ll) acc.i = at;\n"
                 "  return acc;\n}\n");
}

/* A warp per result: its lanes across the reduced elements. */
static void put_rows(cj_buf *b, int t, unsigned w) {
  cj_buf_puts(b, "  const int lane = (int)(threadIdx.x & 31);\n"
                 "  const unsigned long long groups = cj_nout * cj_splits;\n"
                 "  for (unsigned long long g = cj_tid >> 5; g < groups; g += cj_nth >> 5) {\n"
                 "    const unsigned long long s = g / cj_nout, o = g - s * cj_nout;\n"
                 "    const long long base = cj_koff(o, L);\n"
                 "    const long long k0 = (long long)s * cj_chunk;\n"
                 "    const long long k1 = min(k0 + cj_chunk, (long long)cj_nred);\n"
                 "    cj_t acc = cj_neutral();\n");
  if (w > 1) {
    /* an accumulator for each position of an access: w chains that do not wait on each
     * other, folded together at the end (in index order within each) */
    cj_buf_printf(b,
                  "    if (cj_vec) {\n"
                  "      const cj_e *row = cj_x + base;\n"
                  "      const long long kend = k0 + (k1 - k0) / %u * %u;\n"
                  "      cj_t part[%u];\n"
                  "#pragma unroll\n"
                  "      for (int j = 0; j < %u; j++) part[j] = cj_neutral();\n"
                  "#pragma unroll 4\n"
                  "      for (long long k = k0 + (long long)lane * %u; k < kend; k += 32 * %u) {\n",
                  w, w, w, w, w, w);
    cj_chunk_load(b, "        ", t, w, "v", "row + k", "0");
    cj_buf_printf(b,
                  "#pragma unroll\n"
                  "        for (int j = 0; j < %u; j++) part[j] = cj_step(part[j], v[j], k + j);\n"
                  "      }\n"
                  "      for (long long k = kend + lane; k < k1; k += 32) part[0] = "
                  "cj_step(part[0], row[k], k);\n"
                  "      if (k0 + (long long)lane * %u < kend) {\n"
                  "#pragma unroll\n"
                  "        for (int j = 0; j < %u; j++) part[j] = cj_first(part[j], k0 + "
                  "(long long)lane * %u + j);\n"
                  "      } else if (kend + lane < k1) part[0] = cj_first(part[0], kend + lane);\n"
                  "      acc = part[0];\n"
                  "#pragma unroll\n"
                  "      for (int j = 1; j < %u; j++) acc = cj_reduce(acc, part[j]);\n"
                  "    } else\n",
                  w, w, w, w, w);
  }
  cj_buf_puts(b, "    {\n"
                 "#pragma unroll 4\n"
                 "      for (long long k = k0 + lane; k < k1; k += 32)\n"
                 "        acc = cj_step(acc, cj_x[base + cj_roff((unsigned long long)k, L)], k);\n"
                 "      if (k0 + lane < k1) acc = cj_first(acc, k0 + lane);\n"
                 "    }\n"
                 "    acc = cj_warp(acc, 0xffffffffu, 32);\n"
                 "    if (lane == 0) {\n"
                 "      if (cj_splits == 1) cj_res[o] = cj_fin(acc);\n"
                 "      else cj_pout[s * cj_nout + o] = acc;\n"
                 "    }\n"
                 "  }\n");
}

/* The reduced elements' loop of a lane by columns: from k0 + cj_ty to k1 by `lanes`, four
 * loads in flight before they are folded in, in index order. `load` writes the access at
 * index expression %s into v<q>; `fold` folds v<q> in at index k + q * lanes. */
static void put_column_loop(cj_buf *b, int t, unsigned w) {
  int q;
  cj_buf_printf(b, "      long long k = k0 + cj_ty;\n"
                   "      for (; k + 3 * (long long)lanes < k1; k += 4 * (long long)lanes) {\n");
  for (q = 0; q < 4; q++) {
    char var[8], off[96], at[112];
    snprintf(var, sizeof var, "v%d", q);
    snprintf(off, sizeof off, "cj_roff((unsigned long long)(k + %d * (long long)lanes), L)", q);
    snprintf(at, sizeof at, "col + %s", off);
    if (w > 1)
      cj_chunk_load(b, "        ", t, w, var, at, "0");
    else
      cj_buf_printf(b, "        const cj_e v%d[1] = {cj_x[base + %s]};\n", q, off);
  }
  cj_buf_printf(b,
                "#pragma unroll\n"
                "        for (int q = 0; q < 4; q++) {\n"
                "          const cj_e *v = q == 0 ? v0 : q == 1 ? v1 : q == 2 ? v2 : v3;\n"
                "#pragma unroll\n"
                "          for (int j = 0; j < %u; j++) acc[j] = cj_step(acc[j], v[j], k + q * "
                "(long long)lanes);\n"
                "        }\n"
                "      }\n"
                "      for (; k < k1; k += lanes) {\n",
                w);
  if (w > 1)
    cj_chunk_load(b, "        ", t, w, "v", "col + cj_roff((unsigned long long)k, L)", "0");
  else
    cj_buf_puts(b, "        const cj_e v[1] = {cj_x[base + cj_roff((unsigned long long)k, L)]};\n");
  cj_buf_printf(b,
                "#pragma unroll\n"
                "        for (int j = 0; j < %u; j++) acc[j] = cj_step(acc[j], v[j], k);\n"
                "      }\n",
                w);
}

/* A block of ux units (w neighbouring results each; ux = 2^cj_uxl, a parameter, so that one
 * kernel serves every shape) by `lanes` lanes down the reduced elements of a piece, each
 * lane meeting every lanes-th element in index order; the lanes of a unit are combined in
 * the block, in a fixed order: by shuffles within each warp, then the warps' values
 * through shared memory, warp by warp. */
static void put_columns(cj_buf *b, int t, const axwalk *aw) {
  unsigned w = aw->w;
  cj_buf_printf(b,
                "  const unsigned cj_ux = 1u << cj_uxl, lanes = blockDim.x >> cj_uxl;\n"
                "  const unsigned cj_tx = threadIdx.x & (cj_ux - 1), cj_ty = threadIdx.x >> "
                "cj_uxl;\n"
                "  __shared__ alignas(cj_t) unsigned char cj_sraw[%u * sizeof(cj_t)];\n"
                "  cj_t *cj_sm = reinterpret_cast<cj_t *>(cj_sraw);\n"
                "  const unsigned long long units = cj_nout / %u;\n"
                "  const unsigned long long cblocks = (units + cj_ux - 1) >> cj_uxl;\n"
                "  for (unsigned long long bid = blockIdx.x; bid < cblocks * cj_splits; bid += "
                "gridDim.x) {\n"
                "    const unsigned long long s = bid / cblocks;\n"
                "    const unsigned long long u0 = (bid - s * cblocks) << cj_uxl, u = u0 + cj_tx;\n"
                "    const long long k0 = (long long)s * cj_chunk;\n"
                "    const long long k1 = min(k0 + cj_chunk, (long long)cj_nred);\n"
                "    cj_t acc[%u];\n"
                "#pragma unroll\n"
                "    for (int j = 0; j < %u; j++) acc[j] = cj_neutral();\n"
                "    if (u < units) {\n",
                aw->warps * 32 * w, w, w, w);
  if (w > 1)
    cj_buf_printf(b, "      const cj_e *col = cj_x + cj_koff(u * %u, L);\n", w);
  else
    cj_buf_puts(b, "      const long long base = cj_koff(u, L);\n");
  put_column_loop(b, t, w);
  cj_buf_printf(b,
                "      if (k0 + cj_ty < k1) {\n"
                "#pragma unroll\n"
                "        for (int j = 0; j < %u; j++) acc[j] = cj_first(acc[j], k0 + cj_ty);\n"
                "      }\n"
                "    }\n"
                "#pragma unroll\n"
                "    for (int j = 0; j < %u; j++)\n"
                "      for (unsigned off = 16; off >= cj_ux; off >>= 1)\n"
                "        acc[j] = cj_reduce(acc[j], cj_shfl_down(0xffffffffu, acc[j], off));\n"
                "    if ((threadIdx.x & 31) < cj_ux) {\n"
                "#pragma unroll\n"
                "      for (int j = 0; j < %u; j++)\n"
                "        cj_sm[((threadIdx.x >> 5) * cj_ux + (threadIdx.x & 31)) * %u + j] = "
                "acc[j];\n"
                "    }\n"
                "    __syncthreads();\n"
                "    for (unsigned c = threadIdx.x; c < cj_ux * %u; c += blockDim.x) {\n"
                "      cj_t a = cj_sm[c];\n"
                "      for (unsigned q = 1; q < %u; q++) a = cj_reduce(a, cj_sm[q * cj_ux * %u + "
                "c]);\n"
                "      const unsigned long long o = u0 * %u + c;\n"
                "      if (o < cj_nout) {\n"
                "        if (cj_splits == 1) cj_res[o] = cj_fin(a);\n"
                "        else cj_pout[s * cj_nout + o] = a;\n"
                "      }\n"
                "    }\n"
                "    __syncthreads();\n"
                "  }\n",
                w, w, w, w, w, aw->warps, w, w);
}

/* The kernel for op on elements of type t into `result`, walking as `w` says, over k kept
 * and r reduced dimensions; its name into name. */
static void put_kernel(cj_buf *b, const cj_reduce_spec *s, cujit_redop op, int t, const axplan *p,
                       const axwalk *w, const char *name) {
  cj_reduce_prologue(b, s);
  cj_buf_printf(b, "typedef %s cj_e;\n", cj_elem_of(t)->c_name);
  cj_buf_puts(b, "__device__ __forceinline__ cj_t cj_map(const cj_e v, const long long at) {\n"
                 "  (void)at;\n  return ");
  cj_reduce_element(b, op, t, s->acc, s->result, "v", "at");
  cj_buf_puts(b, ";\n}\n");
  put_step(b, op);
  cj_buf_printf(b, "__device__ __forceinline__ %s cj_fin(const cj_t cj_acc) {\n  return ",
                cj_elem_of(s->result)->c_name);
  if (s->result_expr)
    cj_buf_puts(b, s->result_expr);
  else
    cj_array_convert(b, s->acc, s->result, "cj_acc");
  cj_buf_printf(b,
                ";\n}\n/* the kept and the reduced dimensions, innermost last */\n"
                "struct cj_axl {\n  long long ks[%d], kst[%d], rs[%d], rst[%d];\n};\n",
                MAX_D, MAX_D, MAX_D, MAX_D);
  put_offset(b, "cj_koff", p->k, "ks", "kst");
  put_offset(b, "cj_roff", p->r, "rs", "rst");
  cj_buf_printf(b,
                "extern \"C\" __global__ void __launch_bounds__(%u) %s(const cj_e *__restrict__ "
                "cj_x, unsigned long long "
                "cj_nout,\n    unsigned long long cj_nred, long long cj_chunk, unsigned long long "
                "cj_splits, const cj_axl L,\n    const cj_t *cj_pin, cj_t *cj_pout, %s *cj_res, "
                "int cj_vec, unsigned cj_uxl) {\n"
                "  const unsigned long long cj_tid = (unsigned long long)blockIdx.x * blockDim.x + "
                "threadIdx.x;\n"
                "  const unsigned long long cj_nth = (unsigned long long)gridDim.x * blockDim.x;\n"
                "  (void)cj_vec;\n  (void)cj_uxl;\n",
                block_of(w), name, cj_elem_of(s->result)->c_name);
  put_combine(b, batch_of(s->acc_size ? s->acc_size : cj_elem_of(s->acc)->size));
  if (w->rows)
    put_rows(b, t, w->w);
  else
    put_columns(b, t, w);
  cj_buf_puts(b, "}\n");
}

/* ---- running it ---- */

/* The kernel's arguments, and where they point. */
typedef struct axrun {
  CUdeviceptr x, pin, pout, res;
  uint64_t n_out, n_red, splits;
  int64_t chunk;
  int64_t lay[4 * MAX_D];
  int vec;
  unsigned uxl; /* log2 of the walk's ux */
} axrun;

static void params_of(axrun *r, void **params) {
  void *all[] = {&r->x,   &r->n_out, &r->n_red, &r->chunk, &r->splits, r->lay,
                 &r->pin, &r->pout,  &r->res,   &r->vec,   &r->uxl};
  memcpy(params, all, sizeof all);
}

/* The first launch: a warp per result and piece (by rows), or the walk's blocks. */
static cujit_status launch_first(cujit_function *f, axrun *r, const axplan *p, const axwalk *w,
                                 CUstream stream) {
  void *params[11];
  params_of(r, params);
  if (w->rows)
    return cj_array_launch_params(f, (int64_t)p->n_out * w->splits * 32, stream, params, 11);
  return cj_array_launch_blocks(f, w->blocks, block_of(w), stream, params, 11);
}

/* Runs the kernel f for plan p and walk w over a, into `dst` (n_out results of the result
 * type, C order): one launch, or with pieces a launch into partials from the pool and one
 * that combines them. */
static cujit_status run(cujit_function *f, const cj_reduce_spec *s, const cj_array *a,
                        const axplan *p, const axwalk *w, CUdeviceptr dst) {
  size_t acc_size = s->acc_size ? s->acc_size : cj_elem_of(s->acc)->size, bytes = 0;
  cj_mem_ctx owner = {NULL, 0};
  CUcontext ctx;
  CUdevice dev = 0;
  void *params[11];
  int64_t combiners = ceil_div(p->n_out, block_of(w)), most = cj_array_sms() * 32;
  axrun r;
  cujit_status st;
  int d;
  memset(&r, 0, sizeof r);
  r.x = a->data;
  r.n_out = (uint64_t)p->n_out;
  r.n_red = (uint64_t)p->n_red;
  r.splits = (uint64_t)w->splits;
  r.chunk = w->chunk;
  r.vec = w->w > 1;
  while ((1u << r.uxl) < w->ux) r.uxl++;
  r.res = dst;
  for (d = 0; d < MAX_D; d++) {
    r.lay[d] = d < p->k ? p->ks[d] : 1;
    r.lay[MAX_D + d] = d < p->k ? p->kst[d] : 0;
    r.lay[2 * MAX_D + d] = d < p->r ? p->rs[d] : 1;
    r.lay[3 * MAX_D + d] = d < p->r ? p->rst[d] : 0;
  }
  if (w->splits == 1) return launch_first(f, &r, p, w, a->stream);
  /* the partials: splits of every result */
  bytes = (size_t)w->splits * (size_t)p->n_out * acc_size;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(cj_mem_pool_alloc(dev, bytes, a->stream, &r.pout, &owner));
  st = launch_first(f, &r, p, w, a->stream);
  if (st == CUJIT_OK) {
    r.pin = r.pout;
    r.pout = 0;
    params_of(&r, params);
    /* a thread per result, in blocks of the kernel's own size */
    st = cj_array_launch_blocks(f, combiners < most ? combiners : most, block_of(w), a->stream,
                                params, 11);
  }
  cj_mem_pool_free(dev, r.pin ? r.pin : r.pout, bytes, a->stream, &owner);
  return st;
}

/* Compiles (once per source) and runs op of a along plan p into dst. */
static cujit_status reduce_along(cujit_redop op, const cj_array *a, int result, const axplan *p,
                                 CUdeviceptr dst) {
  cj_reduce_spec s;
  cj_buf pre = {0}, neutral = {0}, src = {0};
  cujit_function *f = NULL;
  char name[96];
  axwalk w;
  cujit_status st;
  int t = a->type;
  memset(&s, 0, sizeof s);
  s.types = &t;
  s.ntypes = 1;
  st = cj_reduce_op_code(&s, &pre, &neutral, op, t, result);
  walk_of(p, cj_elem_of(t)->size, s.acc_size ? s.acc_size : cj_elem_of(s.acc)->size, a->data,
          cj_array_sms(), &w);
  snprintf(name, sizeof name, "cj_%s_%s_%s%s%s_k%dr%d%s", w.rows ? "rows" : "columns",
           cj_redop_of(op)->numpy, cj_elem_of(t)->name,
           result == cj_reduce_result(op, t) ? "" : "_",
           result == cj_reduce_result(op, t) ? "" : cj_elem_of(result)->name, p->k, p->r,
           w.w > 1 ? "_v" : "");
  if (st == CUJIT_OK) {
    put_kernel(&src, &s, op, t, p, &w, name);
    st = src.oom ? cj_fail_oom("writing a reduction kernel") : cj_array_kernel(src.data, name, &f);
  }
  if (st == CUJIT_OK) st = run(f, &s, a, p, &w, dst);
  cj_buf_free(&src);
  cj_buf_free(&pre);
  cj_buf_free(&neutral);
  return st;
}

/* ---- the public functions ---- */

static int has_identity(cujit_redop op) {
  return op == CUJIT_REDOP_SUM || op == CUJIT_REDOP_PROD || op == CUJIT_REDOP_ANY ||
         op == CUJIT_REDOP_ALL;
}

/* Reads the axes into reduced[] (1 for each reduced dimension of a). */
static cujit_status read_axes(const char *fn, cujit_redop op, const cj_array *a, int naxes,
                              const int *axes, int *reduced) {
  int i;
  CJ_CHECK(naxes >= 0, CUJIT_ERROR_INVALID_VALUE, "%s: naxes is %d; give 0 or more axes", fn,
           naxes);
  CJ_CHECK(!naxes || axes, CUJIT_ERROR_INVALID_VALUE, "%s: axes is NULL, with naxes %d", fn, naxes);
  CJ_CHECK(naxes == 1 || has_identity(op) || op == CUJIT_REDOP_MIN || op == CUJIT_REDOP_MAX,
           CUJIT_ERROR_INVALID_VALUE,
           "%s: %s takes one axis, as NumPy's does (%d given); for the index over the whole "
           "array use cujit_array_reduce",
           fn, cj_redop_of(op)->numpy, naxes);
  for (i = 0; i < naxes; i++) {
    int ax = axes[i];
    CJ_CHECK(a->ndim > 0, CUJIT_ERROR_INVALID_VALUE,
             "%s: axis %d: the array is 0-d, it has no axis (reduce along none, naxes 0)", fn, ax);
    CJ_CHECK(ax >= -a->ndim && ax < a->ndim, CUJIT_ERROR_INVALID_VALUE,
             "%s: axis %d is outside the array's %d dimensions (%d to %d; a negative axis counts "
             "from the last)",
             fn, ax, a->ndim, -a->ndim, a->ndim - 1);
    if (ax < 0) ax += a->ndim;
    CJ_CHECK(!reduced[ax], CUJIT_ERROR_INVALID_VALUE, "%s: axis %d is given twice", fn, axes[i]);
    reduced[ax] = 1;
  }
  return CUJIT_OK;
}

/* op of a along the axes, into `result`, in *out (the output rule). */
static cujit_status reduce_axis(const char *fn, cujit_redop op, const cj_array *a, int naxes,
                                const int *axes, int keepdims, int result, cujit_array **out) {
  int reduced[MAX_D] = {0}, made = 0, d;
  int64_t red_count = 1;
  cujit_array *th = NULL;
  cj_array like, *o, *tmp = NULL;
  axplan p;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  CJ_TRY(read_axes(fn, op, a, naxes, axes, reduced));
  CJ_TRACE("cujit: %s axis " CJ_TYPES2_FMT, cj_redop_of(op)->numpy, CJ_TYPES2(a->type, result));
  CJ_CHECK(cj_op_takes(cj_redop_of(op), a->type), CUJIT_ERROR_INVALID_VALUE,
           "%s: complex numbers have no order, so no %s; reduce their real parts or magnitudes "
           "instead",
           fn, cj_redop_of(op)->numpy);
  for (d = 0; d < a->ndim; d++)
    if (reduced[d]) red_count *= a->shape[d] ? 1 : 0;
  CJ_CHECK(has_identity(op) || red_count, CUJIT_ERROR_INVALID_VALUE,
           "%s: the %s along an axis of no element is undefined (as NumPy's, which has no "
           "identity for it); check the sizes first",
           fn, cj_redop_of(op)->numpy);
  plan_of(a, reduced, keepdims, &p);
  memset(&like, 0, sizeof like);
  like.ndim = p.out_ndim;
  memcpy(like.shape, p.out_shape, sizeof like.shape);
  like.size = p.n_out;
  like.stream = a->stream;
  CJ_TRY(cj_array_output(out, &like, result, fn, &o, &made));
  if (!made && (!o->contig || cj_layout_meet(a, o) != CJ_APART) &&
      (st = cj_array_stage(o, a->stream, fn, &th, &tmp)) != CUJIT_OK)
    return st;
  if (p.n_out == 0)
    st = CUJIT_OK;
  else if (p.k == 0) /* every element into one: the whole array's reduction */
    st = cj_reduce_to(op, a, result, (tmp ? tmp : o)->data);
  else
    st = reduce_along(op, a, result, &p, (tmp ? tmp : o)->data);
  if (tmp) return cj_array_settle(st, 1, th, tmp, o, a->stream);
  return cj_array_unmake(st, out, made);
}

cujit_status cujit_array_reduce_axis(cujit_redop op, const cujit_array *h, int naxes,
                                     const int *axes, int keepdims, cujit_array **out) {
  static const char fn[] = "cujit_array_reduce_axis";
  cj_array *a;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(cj_redop_of(op), CUJIT_ERROR_INVALID_VALUE, "%s: op is %d, not a cujit_redop", fn,
           (int)op);
  return reduce_axis(fn, op, a, naxes, axes, keepdims, cj_reduce_result(op, a->type), out);
}

cujit_status cujit_array_reduce_axis_as(cujit_redop op, const cujit_array *h, int naxes,
                                        const int *axes, int keepdims, cujit_type type,
                                        cujit_array **out) {
  static const char fn[] = "cujit_array_reduce_axis_as";
  cj_array *a;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_TRY(cj_reduce_as_check(fn, op, a->type, type));
  return reduce_axis(fn, op, a, naxes, axes, keepdims, type, out);
}
