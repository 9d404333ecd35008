/* reduce.c - the reduction engine, and the reductions of arrays built on it (sum, min, max,
 * prod, any, all, argmin, argmax, dot), of contiguous arrays and strided views.
 *
 * One generated kernel does every pass. Each thread folds the elements of a grid-stride
 * loop into its own value, the warp combines its threads' values through shuffles, and the
 * block combines its warps' values through shared memory; thread 0 then writes the
 * block's value. The first pass maps element i of the arguments to a value; later passes
 * read the previous pass's block values. Grids are sized so that a thread folds about
 * ITEMS values, which keeps float sums close to a pairwise (tree) sum; passes repeat until
 * one block is left, and that block writes the result. The block values live in memory
 * from the stream-ordered pool, freed on the stream after the last pass. */
#include <stdio.h>
#include <string.h>

#include "reduce/reduce.h"
#include "launch/capture.h" /* the pool, and refusals during a capture */

#define THREADS 256          /* threads per block */
#define ITEMS 64             /* values a thread folds before the tree, in most passes */
#define MAX_BLOCKS (1 << 20) /* blocks of one pass; beyond, threads fold more values */
#define SCRATCH_ALIGN 256

/* ---- the kernel's source ---- */

/* What every reduction kernel shares, for the accumulator type cj_t: moving a value of any
 * size between lanes, and the warp and block combinations. Lanes [0, width) of a warp take
 * part; `mask` names the lanes that execute the shuffle. */
static const char combine_source[] =
    "__device__ __forceinline__ cj_t cj_shfl_down(unsigned mask, cj_t v, int off) {\n"
    "  unsigned w[(sizeof(cj_t) + 3) / 4] = {};\n"
    "  memcpy(w, &v, sizeof(cj_t));\n"
    "  for (int k = 0; k < (int)(sizeof w / sizeof w[0]); k++)\n"
    "    w[k] = __shfl_down_sync(mask, w[k], off);\n"
    "  memcpy(&v, w, sizeof(cj_t));\n"
    "  return v;\n"
    "}\n"
    "__device__ __forceinline__ cj_t cj_warp(cj_t v, unsigned mask, int width) {\n"
    "  int lane = (int)(threadIdx.x & 31);\n"
    "  for (int off = 16; off > 0; off >>= 1) {\n"
    "    cj_t other = cj_shfl_down(mask, v, off);\n"
    "    if (lane + off < width) v = cj_reduce(v, other);\n"
    "  }\n"
    "  return v;\n"
    "}\n"
    "/* The block's value, in thread 0; any block size. */\n"
    "__device__ __forceinline__ cj_t cj_block(cj_t v) {\n"
    "  __shared__ alignas(cj_t) unsigned char cj_raw[32 * sizeof(cj_t)];\n"
    "  cj_t *s = reinterpret_cast<cj_t *>(cj_raw);\n"
    "  int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31);\n"
    "  int warps = (int)((blockDim.x + 31) >> 5);\n"
    "  int width = min(32, (int)blockDim.x - warp * 32);\n"
    "  v = cj_warp(v, width == 32 ? 0xffffffffu : (1u << width) - 1u, width);\n"
    "  if (warps == 1) return v;\n"
    "  if (lane == 0) s[warp] = v;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) v = cj_warp(lane < warps ? s[lane] : v, 0xffffffffu, warps);\n"
    "  return v;\n"
    "}\n";

/* The first pass's chunked loop, when the spec has one: W elements of its array per
 * access while whole chunks are left (i, the thread's first index, then goes past them). */
static void put_chunks(cj_buf *b, const cj_reduce_spec *s) {
  const cj_elem *e = s->vec_map ? cj_elem_of(s->vec_type) : NULL;
  unsigned w = e ? (unsigned)(16 / e->size) : 1;
  const char *raw = cj_raw_type(16);
  if (w < 2) return;
  cj_buf_printf(b,
                "    if (((unsigned long long)%s & 15) == 0) {\n"
                "      const long long cj_chunks = cj_n / %u;\n"
                "      for (long long cj_c = i; cj_c < cj_chunks; cj_c += cj_step) {\n"
                "        %s cj_v[%u];\n"
                "        { const %s cj_r = reinterpret_cast<const %s *>(%s)[cj_c];\n"
                "          memcpy(cj_v, &cj_r, sizeof cj_r); }\n"
                "#pragma unroll\n"
                "        for (int cj_j = 0; cj_j < %u; cj_j++) {\n"
                "          const %s cj_x = cj_v[cj_j];\n"
                "          const long long cj_i = cj_c * %u + cj_j; /* its index */\n"
                "          (void)cj_i;\n"
                "          cj_acc = cj_reduce(cj_acc, cj_as((%s)));\n"
                "        }\n"
                "      }\n"
                "      i += cj_chunks * %u;\n"
                "    }\n",
                s->vec_array, w, e->c_name, w, raw, raw, s->vec_array, w, e->c_name, w, s->vec_map,
                w);
}

/* The kernel: parameters of the spec, then the count, the previous pass's values (NULL in
 * the first pass), where block values go, and where the result goes (NULL but in the last
 * pass). Element i's value is the map expression; `i` is a long long. */
static void put_kernel(cj_buf *b, const cj_reduce_spec *s) {
  cj_buf_printf(b,
                "extern \"C\" __global__ void %s(%s%slong long cj_n, const cj_t *cj_in, cj_t "
                "*cj_part, "
                "%s *cj_res) {\n"
                "  cj_t cj_acc = cj_neutral();\n"
                "  long long cj_step = (long long)gridDim.x * blockDim.x;\n"
                "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                "  if (cj_in) {\n"
                "    for (; i < cj_n; i += cj_step) cj_acc = cj_reduce(cj_acc, cj_in[i]);\n"
                "  } else {\n",
                s->name, s->params, s->params[0] ? ", " : "", cj_elem_of(s->result)->c_name);
  put_chunks(b, s);
  cj_buf_printf(b,
                "    for (; i < cj_n; i += cj_step) cj_acc = cj_reduce(cj_acc, cj_as((%s)));\n"
                "  }\n"
                "  cj_acc = cj_block(cj_acc);\n"
                "  if (threadIdx.x != 0) return;\n"
                "  if (!cj_res) {\n"
                "    cj_part[blockIdx.x] = cj_acc;\n"
                "    return;\n"
                "  }\n"
                "  *cj_res = ",
                s->map);
  if (s->result_expr)
    cj_buf_puts(b, s->result_expr);
  else
    cj_array_convert(b, s->acc, s->result, "cj_acc");
  cj_buf_puts(b, ";\n}\n");
}

void cj_reduce_prologue(cj_buf *b, const cj_reduce_spec *s) {
  int types[2] = {s->acc, s->result};
  cj_array_includes(b, types, 2);
  if (s->ntypes) cj_array_includes(b, s->types, s->ntypes);
  if (s->preamble && s->preamble[0]) cj_buf_printf(b, "%s\n", s->preamble);
  cj_buf_printf(b, "typedef %s cj_t;\n", s->acc_type ? s->acc_type : cj_elem_of(s->acc)->c_name);
  cj_buf_printf(b, "__device__ __forceinline__ cj_t cj_neutral() { return (%s); }\n", s->neutral);
  cj_buf_printf(b, "__device__ __forceinline__ cj_t cj_reduce(cj_t a, cj_t b) { return (%s); }\n",
                s->reduce);
  cj_buf_puts(b, "__device__ __forceinline__ cj_t cj_as(cj_t v) { return v; }\n");
  cj_buf_puts(b, combine_source);
}

void cj_reduce_source(cj_buf *b, const cj_reduce_spec *s) {
  cj_reduce_prologue(b, s);
  put_kernel(b, s);
}

cujit_status cj_reduce_kernel(const cj_reduce_spec *s, cujit_function **fn) {
  cj_buf src = {0};
  cujit_status st;
  cj_reduce_source(&src, s);
  if (src.oom) {
    cj_buf_free(&src);
    return cj_fail_oom("writing a reduction kernel");
  }
  st = cj_array_kernel(src.data, s->name, fn); /* a compile error shows the source */
  cj_buf_free(&src);
  return st;
}

/* ---- running it ---- */

/* Blocks of a pass over n values. */
static int64_t blocks_for(int64_t n) {
  int64_t g = (n + (int64_t)THREADS * ITEMS - 1) / ((int64_t)THREADS * ITEMS);
  if (g > MAX_BLOCKS) g = MAX_BLOCKS;
  return g < 1 ? 1 : g;
}

static size_t round_up(size_t n) { return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN; }

/* Bytes of pool memory a reduction of n values needs: the block values of every pass but
 * the last, and a slot for the result when it goes to host memory. */
static size_t scratch_bytes(int64_t n, size_t acc_size, size_t result_size, int to_host) {
  size_t bytes = to_host ? round_up(result_size) : 0;
  int64_t g;
  for (g = blocks_for(n); g > 1; g = blocks_for(g)) bytes += round_up((size_t)g * acc_size);
  return bytes;
}

typedef struct pass_args {
  cujit_arg *all; /* the caller's arguments, then the engine's four */
  size_t n;
} pass_args;

static cujit_status launch_pass(cujit_function *fn, pass_args *p, CUstream stream, int64_t n,
                                CUdeviceptr in, CUdeviceptr part, CUdeviceptr res) {
  cujit_launch_options o;
  int64_t g = blocks_for(n);
  memset(&o, 0, sizeof o);
  o.stream = stream;
  p->all[p->n - 4] = cujit_i64(n);
  p->all[p->n - 3] = cujit_ptr(in);
  p->all[p->n - 2] = cujit_ptr(part);
  p->all[p->n - 1] = cujit_ptr(res);
  return cujit_launch(fn, CUJIT_DIM3((unsigned)g), CUJIT_DIM3(THREADS), p->all, p->n, &o);
}

/* Every pass, from n mapped elements to the result at `dst`. */
static cujit_status passes(cujit_function *fn, pass_args *p, CUstream stream, int64_t n,
                           size_t acc_size, CUdeviceptr scratch, CUdeviceptr dst) {
  CUdeviceptr in = 0, part = scratch;
  while (blocks_for(n) > 1) {
    CJ_TRY(launch_pass(fn, p, stream, n, in, part, 0));
    in = part;
    part += round_up((size_t)blocks_for(n) * acc_size);
    n = blocks_for(n);
  }
  return launch_pass(fn, p, stream, n, in, 0, dst);
}

static cujit_status cu(CUresult r, const char *what) {
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, what);
}

cujit_status cj_reduce_run(cujit_function *fn, const cj_reduce_spec *s, int64_t n, CUstream stream,
                           const cujit_arg *args, size_t nargs, CUdeviceptr dst, void *host) {
  size_t acc_size = s->acc_size ? s->acc_size : cj_elem_of(s->acc)->size;
  size_t result_size = cj_elem_of(s->result)->size;
  size_t bytes = scratch_bytes(n, acc_size, result_size, host != NULL);
  CUdeviceptr scratch = 0;
  cj_mem_ctx owner = {NULL, 0};
  CUcontext ctx;
  CUdevice dev = 0;
  pass_args p;
  cujit_status st;
  if (host) CJ_TRY(cj_capture_refuse(stream, "a reduction into host memory waits for its stream"));
  p.n = nargs + 4;
  if (!(p.all = cj_calloc(p.n, sizeof *p.all))) return cj_fail_oom("launching a reduction");
  if (nargs) memcpy(p.all, args, nargs * sizeof *args);
  if (bytes && ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK ||
                (st = cj_mem_pool_alloc(dev, bytes, stream, &scratch, &owner)) != CUJIT_OK)) {
    cj_free(p.all);
    return st;
  }
  if (host) dst = scratch + bytes - round_up(result_size);
  st = passes(fn, &p, stream, n, acc_size, scratch, dst);
  if (st == CUJIT_OK && host)
    st = cu(cj_cu.cuMemcpyDtoHAsync(host, dst, result_size, stream), "cuMemcpyDtoHAsync");
  if (st == CUJIT_OK && host) st = cu(cj_cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
  if (scratch) cj_mem_pool_free(dev, scratch, bytes, stream, &owner);
  cj_free(p.all);
  return st;
}

/* ---- results in 0-d arrays ---- */

cujit_status cj_reduce_output_check(cujit_array **out, int type, const char *fn) {
  cj_array *o;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "%s: out is NULL", fn);
  if (!*out) return CUJIT_OK;
  CJ_TRY(cj_array_get(*out, fn, "*out", &o));
  CJ_CHECK(o->type == type, CUJIT_ERROR_INVALID_VALUE,
           "%s: the output holds %s, the result is %s; pass "
           "an output of the result's type, or NULL for a new one",
           fn, cj_elem_of(o->type)->name, cj_elem_of(type)->name);
  CJ_CHECK(o->ndim == 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: the output has %d dimensions; a reduction's "
           "result is 0-d (ndim 0, one element): pass such an array, or NULL for a new "
           "one",
           fn, o->ndim);
  return CUJIT_OK;
}

cujit_status cj_reduce_output(cujit_array **out, int type, CUstream stream, const char *fn,
                              CUdeviceptr *data, int *made) {
  cj_array *o;
  *made = 0;
  if (*out) {
    CJ_TRY(cj_array_get(*out, fn, "*out", &o));
  } else {
    CJ_TRY(cj_array_new_on(out, &o, type, 0, NULL, stream, fn));
    *made = 1;
  }
  *data = o->data;
  return CUJIT_OK;
}

/* ---- the reductions of arrays ---- */

/* The largest and the lowest value of an accumulator type: MIN's and MAX's neutral. */
static const char *extreme(int t, int largest) {
  switch (t) {
    case CUJIT_TYPE_BOOL: return largest ? "true" : "false";
    case CUJIT_TYPE_I8: return largest ? "127" : "-128";
    case CUJIT_TYPE_U8: return largest ? "255" : "0";
    case CUJIT_TYPE_I16: return largest ? "32767" : "-32768";
    case CUJIT_TYPE_U16: return largest ? "65535" : "0";
    case CUJIT_TYPE_I32: return largest ? "2147483647" : "(-2147483647 - 1)";
    case CUJIT_TYPE_U32: return largest ? "4294967295u" : "0u";
    case CUJIT_TYPE_I64: return largest ? "9223372036854775807ll" : "(-9223372036854775807ll - 1)";
    case CUJIT_TYPE_U64: return largest ? "18446744073709551615ull" : "0ull";
    case CUJIT_TYPE_F64:
      return largest ? "__longlong_as_double(0x7ff0000000000000ll)"
                     : "-__longlong_as_double(0x7ff0000000000000ll)";
    default: return largest ? "__int_as_float(0x7f800000)" : "-__int_as_float(0x7f800000)";
  }
}

static int is_arg(cujit_redop op) { return op == CUJIT_REDOP_ARGMIN || op == CUJIT_REDOP_ARGMAX; }
/* The reductions that order the elements. */
static int orders(cujit_redop op) {
  return op == CUJIT_REDOP_MIN || op == CUJIT_REDOP_MAX || is_arg(op);
}

int cj_reduce_result(cujit_redop op, int t) {
  switch (op) {
    case CUJIT_REDOP_SUM:
    case CUJIT_REDOP_PROD: return cj_ops_sum_type(t);
    case CUJIT_REDOP_ANY:
    case CUJIT_REDOP_ALL: return CUJIT_TYPE_BOOL;
    case CUJIT_REDOP_ARGMIN:
    case CUJIT_REDOP_ARGMAX: return CUJIT_TYPE_I64;
    default: return t;
  }
}

/* ARGMIN's and ARGMAX's accumulator: a value and its index; cj_pick keeps the better of
 * two, by a total order (NaN first, then the value, then the lower index), so that the
 * tree's order does not matter and the first extremum wins. */
static const char arg_source[] =
    "struct cj_vi {\n  cj_v v;\n  long long i;\n};\n"
    "__device__ __forceinline__ cj_vi cj_vi_make(cj_v v, long long i) {\n"
    "  cj_vi r;\n  r.v = v;\n  r.i = i;\n  return r;\n}\n"
    "__device__ __forceinline__ cj_vi cj_pick(cj_vi a, cj_vi b) {\n"
    "  const bool an = a.v != a.v, bn = b.v != b.v;\n"
    "  if (an != bn) return an ? a : b;\n"
    "  if (!an && a.v != b.v) return a.v CJ_BETTER b.v ? a : b;\n"
    "  return a.i <= b.i ? a : b;\n}\n";

/* A spec with its strings kept beside it, and the arguments of its kernel. */
typedef struct builtin {
  cj_reduce_spec spec;
  char name[64];
  char params[160];
  cj_buf map, vec_map, pre, neutral;
  int types[2];
  int dims;                              /* the strided loop's, or 0 */
  int64_t lay[3 * CUJIT_ARRAY_MAX_DIMS]; /* its plan */
  cujit_arg args[3];
  size_t nargs;
} builtin;

static void builtin_free(builtin *k) {
  cj_buf_free(&k->map);
  cj_buf_free(&k->vec_map);
  cj_buf_free(&k->pre);
  cj_buf_free(&k->neutral);
}

/* Element i of array j (named x or y), C order, as the kernel reads it. */
static const char *element(const builtin *k, int j) {
  static const char *const flat[] = {"x[i]", "y[i]"};
  static const char *const strided[] = {"x[cj_off((unsigned long long)i, cj_lay, 0)]",
                                        "y[cj_off((unsigned long long)i, cj_lay, 1)]"};
  return k->dims ? strided[j] : flat[j];
}

/* The kernel's parameters and arguments for arrays a (and b), named x (and y): a strided
 * loop over them (planned as map.c's) when one is a strided view, its plan then a last
 * parameter; else the 16-byte loop over a where a is read alone. */
static void builtin_arrays(builtin *k, const char *name, const cj_array *a, const cj_array *b) {
  const cj_array *arrays[2] = {a, b};
  size_t n = b ? 2 : 1, j;
  cj_plan plan;
  memset(k, 0, sizeof *k);
  if (a->contig && (!b || b->contig))
    plan.dims = 0;
  else
    cj_plan_make(&plan, a->ndim, a->shape, n, arrays, 0);
  snprintf(k->params, sizeof k->params, "const %s *x", cj_elem_of(a->type)->c_name);
  if (b)
    snprintf(k->params + strlen(k->params), sizeof k->params - strlen(k->params), ", const %s *y",
             cj_elem_of(b->type)->c_name);
  for (j = 0; j < n; j++) {
    k->args[k->nargs++] = cujit_ptr(arrays[j]->data);
    k->types[j] = arrays[j]->type;
  }
  k->dims = plan.dims;
  if (plan.dims) {
    size_t bytes = cj_plan_pack(&plan, k->lay);
    snprintf(k->params + strlen(k->params), sizeof k->params - strlen(k->params),
             ", const cj_lay<%d, %zu> cj_lay", plan.dims, n);
    k->args[k->nargs++] = cujit_value(k->lay, bytes);
    cj_layout_source(&k->pre);
    snprintf(k->name, sizeof k->name, "%s_s%d", name, plan.dims);
  } else {
    snprintf(k->name, sizeof k->name, "%s", name);
    if (!b) { /* the 16-byte loop reads x alone */
      k->spec.vec_array = "x";
      k->spec.vec_type = a->type;
    }
  }
  k->spec.preamble = k->pre.data; /* NULL: contiguous */
  k->spec.name = k->name;
  k->spec.params = k->params;
  k->spec.types = k->types;
  k->spec.ntypes = n;
}

void cj_reduce_element(cj_buf *b, cujit_redop op, int t, int acc, int result, const char *x,
                       const char *at) {
  int half = result == CUJIT_TYPE_F16 || result == CUJIT_TYPE_BF16;
  if (!is_arg(op) && half && t != result) { /* the element rounded to the 16-bit type first */
    cj_buf elem = {0};
    cj_array_convert(&elem, t, result, x);
    cj_array_convert(b, result, acc, elem.data ? elem.data : "0");
    b->oom |= elem.oom || !elem.data;
    cj_buf_free(&elem);
    return;
  }
  if (!is_arg(op)) {
    cj_array_convert(b, t, acc, x);
    return;
  }
  cj_buf_puts(b, "cj_vi_make(");
  cj_array_convert(b, t, acc, x);
  cj_buf_printf(b, ", %s)", at);
}

cujit_status cj_reduce_op_code(cj_reduce_spec *s, cj_buf *pre, cj_buf *neutral, cujit_redop op,
                               int t, int result) {
  const cj_op *row = cj_redop_of(op);
  int acc = is_arg(op) ? cj_ops_compute_type(t) : cj_ops_compute_type(result);
  s->result = result;
  s->acc = acc;
  s->reduce = row->cuda;
  if (cj_int_wraps(acc) && (op == CUJIT_REDOP_SUM || op == CUJIT_REDOP_PROD)) {
    /* integer sums and products wrap, as NumPy's do, with no signed overflow */
    cj_buf_puts(pre, cj_int_source);
    s->reduce = op == CUJIT_REDOP_SUM ? "cj_add<cj_t>(a, b)" : "cj_mul<cj_t>(a, b)";
  }
  switch (op) {
    case CUJIT_REDOP_SUM: s->neutral = "0"; break;
    case CUJIT_REDOP_PROD: s->neutral = "1"; break;
    case CUJIT_REDOP_ANY: s->neutral = "false"; break;
    case CUJIT_REDOP_ALL: s->neutral = "true"; break;
    case CUJIT_REDOP_MIN:
    case CUJIT_REDOP_MAX: s->neutral = extreme(acc, op == CUJIT_REDOP_MIN); break;
    default: /* ARGMIN, ARGMAX */
      cj_buf_printf(pre, "typedef %s cj_v;\n#define CJ_BETTER %s\n%s", cj_elem_of(acc)->c_name,
                    op == CUJIT_REDOP_ARGMIN ? "<" : ">", arg_source);
      cj_buf_printf(neutral, "cj_vi_make(%s, 9223372036854775807ll)",
                    extreme(acc, op == CUJIT_REDOP_ARGMIN));
      s->neutral = neutral->data;
      s->acc_type = "cj_vi";
      s->acc_size = 16; /* a value of up to 8 bytes and a long long */
      s->result_expr = "cj_acc.i";
  }
  s->preamble = pre->data;
  return pre->oom || neutral->oom || (is_arg(op) && !neutral->data)
             ? cj_fail_oom("writing a reduction kernel")
             : CUJIT_OK;
}

/* op over a (type t) into `result`, accumulated in cj_ops_compute_type(result) (the value's type
 * for ARGMIN and ARGMAX). */
static cujit_status builtin_spec(builtin *k, cujit_redop op, const cj_array *a, int result) {
  char name[64];
  int t = a->type;
  snprintf(name, sizeof name, "cj_%s_%s%s%s", cj_redop_of(op)->numpy, cj_elem_of(t)->name,
           result == cj_reduce_result(op, t) ? "" : "_", /* a sum as another type names it */
           result == cj_reduce_result(op, t) ? "" : cj_elem_of(result)->name);
  builtin_arrays(k, name, a, NULL);
  CJ_TRY(cj_reduce_op_code(&k->spec, &k->pre, &k->neutral, op, t, result));
  cj_reduce_element(&k->map, op, t, k->spec.acc, result, element(k, 0), "i");
  cj_reduce_element(&k->vec_map, op, t, k->spec.acc, result, "cj_x", "cj_i");
  k->spec.map = k->map.data;
  k->spec.vec_map = k->spec.vec_array ? k->vec_map.data : NULL;
  return k->map.oom || !k->map.data || k->vec_map.oom ? cj_fail_oom("writing a reduction kernel")
                                                      : CUJIT_OK;
}

static cujit_status dot_spec(builtin *k, const cj_array *a, const cj_array *b) {
  char name[64];
  int wraps;
  snprintf(name, sizeof name, "cj_dot_%s_%s", cj_elem_of(a->type)->name, cj_elem_of(b->type)->name);
  builtin_arrays(k, name, a, b);
  k->spec.result = cujit_type_promote((cujit_type)a->type, (cujit_type)b->type, 0);
  k->spec.acc = cj_ops_compute_type(k->spec.result);
  wraps = cj_int_wraps(k->spec.acc); /* products and their sum wrap, as NumPy's */
  if (wraps) cj_buf_puts(&k->map, "cj_mul<cj_t>(");
  cj_array_convert(&k->map, a->type, k->spec.acc, element(k, 0));
  cj_buf_puts(&k->map, wraps ? ", " : " * ");
  cj_array_convert(&k->map, b->type, k->spec.acc, element(k, 1));
  if (wraps) cj_buf_puts(&k->map, ")");
  if (wraps) {
    cj_buf_puts(&k->pre, cj_int_source);
    k->spec.preamble = k->pre.data;
  }
  k->spec.map = k->map.data;
  k->spec.neutral = "0";
  k->spec.reduce = wraps ? "cj_add<cj_t>(a, b)" : "a + b";
  return k->map.oom || !k->map.data || k->pre.oom ? cj_fail_oom("writing a reduction kernel")
                                                  : CUJIT_OK;
}

/* Compiles the kernel, makes the output when none was given, and runs it over n elements
 * of the arrays in `args` on `stream`. */
static cujit_status run_builtin(builtin *k, cujit_array **out, int64_t n, CUstream stream,
                                const char *fn) {
  cujit_function *f = NULL;
  CUdeviceptr dst;
  int made;
  cujit_status st = cj_reduce_kernel(&k->spec, &f);
  if (st == CUJIT_OK) st = cj_reduce_output(out, k->spec.result, stream, fn, &dst, &made);
  if (st != CUJIT_OK) return st;
  st = cj_reduce_run(f, &k->spec, n, stream, k->args, k->nargs, dst, NULL);
  return cj_array_unmake(st, out, made);
}

/* op of a into a 0-d array of `result`, after the checks every reduction makes. */
static cujit_status reduce(cujit_redop op, const cj_array *a, int result, cujit_array **out,
                           const char *fn) {
  builtin k;
  cujit_status st;
  CJ_TRACE("cujit: %s " CJ_TYPES2_FMT, cj_redop_of(op)->numpy, CJ_TYPES2(a->type, result));
  CJ_CHECK(cj_op_takes(cj_redop_of(op), a->type), CUJIT_ERROR_INVALID_VALUE,
           "%s: complex numbers have no order, so no %s; reduce their real parts or "
           "magnitudes instead",
           fn, cj_redop_of(op)->numpy);
  CJ_CHECK(!orders(op) || a->size != 0, CUJIT_ERROR_INVALID_VALUE,
           "%s: the %s of an empty array is undefined; check the size first", fn,
           cj_redop_of(op)->numpy);
  CJ_TRY(cj_reduce_output_check(out, result, fn));
  if ((st = builtin_spec(&k, op, a, result)) == CUJIT_OK)
    st = run_builtin(&k, out, a->size, a->stream, fn);
  builtin_free(&k);
  return st;
}

cujit_status cujit_array_reduce(cujit_redop op, const cujit_array *h, cujit_array **out) {
  static const char fn[] = "cujit_array_reduce";
  cj_array *a;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_CHECK(op >= CUJIT_REDOP_SUM && op <= CUJIT_REDOP_ARGMAX, CUJIT_ERROR_INVALID_VALUE,
           "%s: op is %d; use CUJIT_REDOP_SUM, _MIN, _MAX, _PROD, _ANY, _ALL, _ARGMIN or "
           "_ARGMAX",
           fn, (int)op);
  return reduce(op, a, cj_reduce_result(op, a->type), out, fn);
}

cujit_status cj_reduce_as_check(const char *fn, cujit_redop op, int t, int type) {
  CJ_CHECK(op == CUJIT_REDOP_SUM || op == CUJIT_REDOP_PROD, CUJIT_ERROR_INVALID_VALUE,
           "%s: op is %d; a reduction with a type of its own is CUJIT_REDOP_SUM or "
           "CUJIT_REDOP_PROD",
           fn, (int)op);
  CJ_CHECK(cj_elem_of(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: type %d is not an element type arrays hold (use CUJIT_TYPE_BOOL, _I8 ... _U64, "
           "_F16, _BF16, _F32, _F64, _C64 or _C128)",
           fn, (int)type);
  CJ_CHECK(!cj_scalar_is_complex(t) || cj_scalar_is_complex(type), CUJIT_ERROR_INVALID_VALUE,
           "%s: a holds %s and type is %s, which would drop the imaginary parts; reduce "
           "as a complex type, or reduce the real parts",
           fn, cj_elem_of(t)->name, cj_elem_of(type)->name);
  return CUJIT_OK;
}

cujit_status cujit_array_reduce_as(cujit_redop op, const cujit_array *h, cujit_type type,
                                   cujit_array **out) {
  static const char fn[] = "cujit_array_reduce_as";
  cj_array *a;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  CJ_TRY(cj_reduce_as_check(fn, op, a->type, type));
  return reduce(op, a, type, out, fn);
}

cujit_status cj_reduce_to(cujit_redop op, const cj_array *a, int result, CUdeviceptr dst) {
  builtin k;
  cujit_function *f = NULL;
  cujit_status st = builtin_spec(&k, op, a, result);
  if (st == CUJIT_OK) st = cj_reduce_kernel(&k.spec, &f);
  if (st == CUJIT_OK)
    st = cj_reduce_run(f, &k.spec, a->size, a->stream, k.args, k.nargs, dst, NULL);
  builtin_free(&k);
  return st;
}

cujit_status cj_reduce_op(cujit_redop op, const cj_array *a, cujit_array **out, const char *fn) {
  return reduce(op, a, cj_reduce_result(op, a->type), out, fn);
}

cujit_status cj_reduce_dot_op(const cj_array *a, const cj_array *b, cujit_array **out,
                              const char *fn) {
  char sa[CJ_SHAPE_TEXT], sb[CJ_SHAPE_TEXT];
  builtin k;
  cujit_status st;
  CJ_TRACE("cujit: dot " CJ_TYPES2_FMT, CJ_TYPES2(a->type, b->type));
  CJ_CHECK(cj_array_same_shape(a, b), CUJIT_ERROR_INVALID_VALUE,
           "%s: a has shape %s and b %s; pass arrays of one shape", fn, cj_array_shape_text(a, sa),
           cj_array_shape_text(b, sb));
  CJ_TRY(cj_reduce_output_check(out,
                                cujit_type_promote((cujit_type)a->type, (cujit_type)b->type, 0),
                                fn));
  if ((st = dot_spec(&k, a, b)) == CUJIT_OK) st = run_builtin(&k, out, a->size, a->stream, fn);
  builtin_free(&k);
  return st;
}

cujit_status cujit_array_dot(const cujit_array *ha, const cujit_array *hb, cujit_array **out) {
  static const char fn[] = "cujit_array_dot";
  cj_array *a, *b;
  CJ_TRY(cj_array_get2(ha, hb, fn, "a", "b", &a, &b));
  return cj_reduce_dot_op(a, b, out, fn);
}
