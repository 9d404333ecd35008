/* scan.c - prefix scans over the whole of a 1-D array: the engine (a type, an associative
 * operator in a and b, its neutral element), cumsum and the scan generator (gen/) built on
 * it.
 *
 * One generated kernel does the work in two launches over a grid of at most MAX_CHUNKS
 * blocks, each owning a contiguous chunk of the array:
 *   phase 0: each block combines its chunk, in order, into one value (sums[block]);
 *   phase 1: each block combines sums[0 .. block) into the offset of its chunk, then scans
 *            the chunk tile by tile, carrying the running prefix from tile to tile.
 * A chunk is processed in tiles of ITEMS elements per thread, staged through shared
 * memory so that global loads and stores stay coalesced while each thread scans
 * consecutive elements; threads' totals are scanned with warp shuffles. Every combination
 * keeps the elements' order, so the operator need not be commutative. Indices are 64-bit
 * throughout; the block size is read from blockDim. An array that fits in one tile (or a
 * few) is scanned by one block in one launch, with no temporary memory. */
#include <stdio.h>
#include <string.h>

#include "launch/launch.h" /* the pool */
#include "reduce/reduce.h"

#define BLOCK 256       /* threads per block; the kernel works with any size up to 1024 */
#define MAX_CHUNKS 2048 /* blocks of the grid, hence partial results held between phases */

/* Elements each thread holds per tile: 8 for 4-byte types, fewer for wider ones. */
static int items_for(size_t size) { return size <= 4 ? 8 : size == 8 ? 4 : 2; }

/* The kernel body after the typedefs, the operator, the neutral element and the input
 * conversion: the same text for every scan. */
static const char kBody[] =
    "#define CJ_PAD(i) ((i) + ((i) >> 5)) /* a gap every 32 elements: no bank conflicts */\n"
    "\n"
    "/* Shuffles any trivially copyable value, 32 bits at a time. */\n"
    "template <typename V>\n"
    "static __device__ __forceinline__ V cj_shfl_up(unsigned mask, V v, unsigned d) {\n"
    "  unsigned w[(sizeof(V) + 3) / 4];\n"
    "  for (unsigned k = 0; k < (sizeof(V) + 3) / 4; k++) w[k] = 0;\n"
    "  memcpy(w, &v, sizeof(V));\n"
    "  for (unsigned k = 0; k < (sizeof(V) + 3) / 4; k++) w[k] = __shfl_up_sync(mask, w[k], d);\n"
    "  memcpy(&v, w, sizeof(V));\n"
    "  return v;\n"
    "}\n"
    "\n"
    "/* The lanes of this thread's warp that exist (the last warp may be partial). */\n"
    "static __device__ __forceinline__ unsigned cj_lanes(void) {\n"
    "  unsigned here = blockDim.x - (threadIdx.x & ~31u);\n"
    "  return here >= 32 ? 0xffffffffu : (1u << here) - 1u;\n"
    "}\n"
    "\n"
    "static __device__ __forceinline__ cj_t cj_warp_inclusive(cj_t x, unsigned mask,\n"
    "                                                         unsigned lane) {\n"
    "  for (unsigned d = 1; d < 32; d <<= 1) {\n"
    "    cj_t y = cj_shfl_up(mask, x, d);\n"
    "    if (lane >= d) x = cj_op(y, x);\n"
    "  }\n"
    "  return x;\n"
    "}\n"
    "\n"
    "/* The exclusive scan of x over the block's threads; *total gets all of them combined.\n"
    " * Every thread of the block must call it. */\n"
    "static __device__ cj_t cj_block_scan(cj_t x, cj_t *warp_sums, cj_t *total) {\n"
    "  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "  unsigned warps = (blockDim.x + 31) >> 5, mask = cj_lanes();\n"
    "  cj_t inclusive = cj_warp_inclusive(x, mask, lane);\n"
    "  cj_t exclusive = cj_shfl_up(mask, inclusive, 1);\n"
    "  if (lane == 31 || threadIdx.x == blockDim.x - 1) warp_sums[warp] = inclusive;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    cj_t w = lane < warps ? warp_sums[lane] : cj_neutral();\n"
    "    w = cj_warp_inclusive(w, mask, lane);\n"
    "    if (lane < warps) warp_sums[lane] = w;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  *total = warp_sums[warps - 1];\n"
    "  if (lane == 0) exclusive = warp == 0 ? cj_neutral() : warp_sums[warp - 1];\n"
    "  else if (warp > 0) exclusive = cj_op(warp_sums[warp - 1], exclusive);\n"
    "  __syncthreads(); /* warp_sums is written again by the next call */\n"
    "  return exclusive;\n"
    "}\n"
    "\n"
    "struct cj_input {\n"
    "  const cj_in_t *p;\n"
    "  __device__ cj_t operator()(long long i) const { return cj_convert(p[i]); }\n"
    "};\n"
    "struct cj_partials {\n"
    "  const cj_t *p;\n"
    "  __device__ cj_t operator()(long long i) const { return p[i]; }\n"
    "};\n"
    "\n"
    "/* One tile: elements [base, base + CJ_ITEMS * blockDim.x) below n, read with `load`.\n"
    " * With out, writes their scan after `carry` there; returns carry combined with them. */\n"
    "template <typename L>\n"
    "static __device__ cj_t cj_tile(L load, cj_t *out, long long base, long long n, cj_t carry,\n"
    "                               cj_t *warp_sums, cj_t *tile) {\n"
    "  unsigned t = threadIdx.x, threads = blockDim.x;\n"
    "  cj_t v[CJ_ITEMS], total;\n"
    "  for (unsigned j = 0; j < CJ_ITEMS; j++) {\n"
    "    unsigned s = j * threads + t;\n"
    "    tile[CJ_PAD(s)] = base + s < n ? load(base + s) : cj_neutral();\n"
    "  }\n"
    "  __syncthreads();\n"
    "  for (unsigned j = 0; j < CJ_ITEMS; j++) v[j] = tile[CJ_PAD(t * CJ_ITEMS + j)];\n"
    "  for (unsigned j = 1; j < CJ_ITEMS; j++) v[j] = cj_op(v[j - 1], v[j]);\n"
    "  cj_t prefix = cj_op(carry, cj_block_scan(v[CJ_ITEMS - 1], warp_sums, &total));\n"
    "  if (out) { /* the block scan's barriers ordered every read of the tile before this */\n"
    "    for (unsigned j = 0; j < CJ_ITEMS; j++)\n"
    "      tile[CJ_PAD(t * CJ_ITEMS + j)] =\n"
    "          CJ_EXCLUSIVE ? (j == 0 ? prefix : cj_op(prefix, v[j - 1])) : cj_op(prefix, v[j]);\n"
    "    __syncthreads();\n"
    "    for (unsigned j = 0; j < CJ_ITEMS; j++) {\n"
    "      unsigned s = j * threads + t;\n"
    "      if (base + s < n) out[base + s] = tile[CJ_PAD(s)];\n"
    "    }\n"
    "    __syncthreads(); /* before the next tile is loaded over this one */\n"
    "  }\n"
    "  return cj_op(carry, total);\n"
    "}\n"
    "\n";

static const char kKernel[] =
    "(const cj_in_t *in, cj_t *out, cj_t *sums, long long n,\n"
    "    long long chunk, int phase) {\n"
    "  extern __shared__ __align__(16) unsigned char cj_smem[];\n"
    "  cj_t *warp_sums = (cj_t *)cj_smem, *tile = warp_sums + 32;\n"
    "  long long start = (long long)blockIdx.x * chunk, step = (long long)CJ_ITEMS * blockDim.x;\n"
    "  long long stop = n - start < chunk ? n : start + chunk;\n"
    "  cj_input input = {in};\n"
    "  cj_t carry = cj_neutral();\n"
    "  if (phase == 0) {\n"
    "    for (long long base = start; base < stop; base += step)\n"
    "      carry = cj_tile(input, (cj_t *)0, base, stop, carry, warp_sums, tile);\n"
    "    if (threadIdx.x == 0) sums[blockIdx.x] = carry;\n"
    "    return;\n"
    "  }\n"
    "  if (sums) {\n"
    "    cj_partials before = {sums};\n"
    "    for (long long base = 0; base < blockIdx.x; base += step)\n"
    "      carry = cj_tile(before, (cj_t *)0, base, blockIdx.x, carry, warp_sums, tile);\n"
    "  }\n"
    "  for (long long base = start; base < stop; base += step)\n"
    "    carry = cj_tile(input, out, base, stop, carry, warp_sums, tile);\n"
    "}\n";

/* The kernel's source for `s`; NULL when out of memory (the caller reports it). */
static char *scan_source(const cj_reduce_scan_spec *s) {
  const cj_elem *in = cj_elem_of(s->in_type), *t = cj_elem_of(s->type);
  cj_buf b = {0};
  cj_array_includes(&b, (int[]){s->in_type, s->type}, 2);
  if (s->preamble) cj_buf_printf(&b, "%s\n", s->preamble);
  cj_buf_printf(&b,
                "typedef %s cj_t;\ntypedef %s cj_in_t;\n#define CJ_ITEMS %du\n"
                "#define CJ_EXCLUSIVE %d\n\n",
                t->c_name, in->c_name, items_for(t->size), s->exclusive != 0);
  cj_buf_printf(&b,
                "static __device__ __forceinline__ cj_t cj_op(const cj_t &a, const cj_t &b) "
                "{\n  return (%s);\n}\n",
                s->op);
  cj_buf_printf(&b,
                "static __device__ __forceinline__ cj_t cj_neutral(void) {\n  return "
                "(cj_t)(%s);\n}\n",
                s->neutral);
  cj_buf_puts(&b, "static __device__ __forceinline__ cj_t cj_convert(const cj_in_t &x) {\n"
                  "  return ");
  cj_array_convert(&b, s->in_type, s->type, "x");
  cj_buf_puts(&b, ";\n}\n\n");
  cj_buf_puts(&b, kBody);
  cj_buf_printf(&b, "extern \"C\" __global__ void %s", s->name);
  cj_buf_puts(&b, kKernel);
  if (b.oom) {
    cj_buf_free(&b);
    return NULL;
  }
  return cj_buf_take(&b);
}

static cujit_status spec_kernel(const cj_reduce_scan_spec *s, cujit_function **fn) {
  char *src = scan_source(s);
  cujit_status st;
  if (!src) return cj_fail_oom("writing a scan kernel");
  st = cj_array_kernel(src, s->name, fn);
  cj_free(src);
  return st;
}

/* Chunk of elements per block: whole tiles, at most MAX_CHUNKS chunks. */
static int64_t chunk_for(int64_t n, int64_t tile) {
  int64_t tiles = (n + tile - 1) / tile;
  return (tiles + MAX_CHUNKS - 1) / MAX_CHUNKS * tile;
}

static cujit_status launch(cujit_function *fn, unsigned blocks, unsigned smem, CUstream stream,
                           CUdeviceptr in, CUdeviceptr out, CUdeviceptr sums, int64_t n,
                           int64_t chunk, int phase) {
  cujit_launch_options o;
  cujit_arg args[] = {cujit_ptr(in), cujit_ptr(out),   cujit_ptr(sums),
                      cujit_i64(n),  cujit_i64(chunk), cujit_i32(phase)};
  memset(&o, 0, sizeof o);
  o.shared_bytes = smem;
  o.stream = stream;
  return cujit_launch(fn, CUJIT_DIM3(blocks), CUJIT_DIM3(BLOCK), args, CJ_COUNT(args), &o);
}

/* Scans in (n elements) into out on `stream`. */
static cujit_status scan_run(const cj_reduce_scan_spec *s, CUdeviceptr in, CUdeviceptr out,
                             int64_t n, CUstream stream) {
  size_t size = cj_elem_of(s->type)->size;
  int64_t tile = (int64_t)items_for(size) * BLOCK, chunk = chunk_for(n, tile);
  unsigned blocks = n ? (unsigned)((n + chunk - 1) / chunk) : 0;
  unsigned smem = (unsigned)((32 + tile + tile / 32 + 1) * size);
  cujit_function *fn = NULL;
  CUdeviceptr sums = 0;
  cj_mem_ctx owner = {NULL, 0};
  CUcontext ctx;
  CUdevice dev;
  cujit_status st = spec_kernel(s, &fn); /* first, so that a bad expression shows anyway */
  if (st != CUJIT_OK || blocks == 0) return st;
  if (blocks == 1) return launch(fn, 1, smem, stream, in, out, 0, n, chunk, 1);
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(cj_mem_pool_alloc(dev, blocks * size, stream, &sums, &owner));
  st = launch(fn, blocks, smem, stream, in, out, sums, n, chunk, 0);
  if (st == CUJIT_OK) st = launch(fn, blocks, smem, stream, in, out, sums, n, chunk, 1);
  cj_mem_pool_free(dev, sums, blocks * size, stream, &owner);
  return st;
}

/* Checks the input (contiguous: the kernel reads in[i]) and the output (1-D, in's size, of
 * s's type, contiguous; made when *out is NULL) and scans. */
cujit_status cj_reduce_scan(const cj_reduce_scan_spec *s, const cj_array *in, cujit_array **out,
                            const char *fn) {
  cj_array flat; /* what the output must look like: in, as 1-D */
  cj_array *o;
  int made;
  cujit_status st;
  /* a bad output is refused by cj_array_output below, with its own message */
  if (out && *out && cj_array_get(*out, fn, "*out", &o) == CUJIT_OK)
    CJ_CHECK(o->ndim == 1, CUJIT_ERROR_INVALID_VALUE,
             "%s: the output has %d dimensions; "
             "the result is 1-D (pass a 1-D output, or NULL for a new one)",
             fn, o->ndim);
  memset(&flat, 0, sizeof flat);
  flat.ndim = 1;
  flat.shape[0] = flat.size = in->size;
  flat.stream = in->stream;
  CJ_TRY(cj_array_need_contiguous(in, fn, "the input"));
  CJ_TRY(cj_array_output(out, &flat, s->type, fn, &o, &made));
  if (!made && (st = cj_array_need_contiguous(o, fn, "the output")) != CUJIT_OK) return st;
  if (!made && cj_layout_meet(in, o) == CJ_OVERLAP) {
    /* a shifted (or differently typed) view of the input: its blocks would read elements
     * that others wrote already; through a temporary */
    cujit_array *h;
    cj_array *tmp;
    CJ_TRY(cj_array_stage(o, in->stream, fn, &h, &tmp));
    st = scan_run(s, in->data, tmp->data, in->size, in->stream);
    return cj_array_settle(st, 1, h, tmp, o, in->stream);
  }
  st = scan_run(s, in->data, o->data, in->size, in->stream);
  return cj_array_unmake(st, out, made);
}

/* ---- cumsum ---- */

cujit_status cujit_array_cumsum(const cujit_array *h, int exclusive, cujit_array **out) {
  cj_reduce_scan_spec s;
  char name[48];
  cj_buf zero = {0};
  cj_array *a;
  cujit_status st = CUJIT_OK;
  CJ_TRY(cj_array_get(h, "cujit_array_cumsum", "a", &a));
  CJ_TRACE("cujit: cumsum %s", CJ_TYPE_NAME(a->type));
  memset(&s, 0, sizeof s);
  s.in_type = a->type;
  s.type = cj_ops_sum_type(a->type);
  s.op = "a + b";
  if (cj_int_wraps(s.type)) { /* integer sums wrap, as NumPy's, with no signed overflow */
    s.op = "cj_add<cj_t>(a, b)";
    s.preamble = cj_int_source;
  }
  cj_array_convert(&zero, CUJIT_TYPE_I32, s.type, "0");
  if (zero.oom) {
    cj_buf_free(&zero);
    return cj_fail_oom("writing a cumsum kernel");
  }
  s.neutral = zero.data;
  s.exclusive = exclusive != 0;
  snprintf(name, sizeof name, "cj_cumsum_%s_%s_%s", cj_elem_of(s.in_type)->name,
           cj_elem_of(s.type)->name, s.exclusive ? "exclusive" : "inclusive");
  s.name = name;
  st = cj_reduce_scan(&s, a, out, "cujit_array_cumsum");
  cj_buf_free(&zero);
  return st;
}
