/* arrays.c - the array layer against the bandwidth floor and the bare driver, on 64 Mi
 * floats: a device-to-device copy of the same bytes is the floor (bytes touched / time);
 * x + y with a new output every call, sqrt(fabs(x)) fused and as two operations (fabs,
 * then sqrt, each with a new output, under the pool's default settings), the elementwise
 * generator's lin_comb (and, for information, on views one element in, one element at a
 * time as before its chunks, and its loop by hand at other grid sizes), the
 * reduction generator's dot, cujit_array_dot and max; where, if_positive, a broadcast
 * single element, concatenate, stack, any, prod and a sum as f64 (goal: 90% of the copy),
 * and, as information with what bounds each, argmax, take and put (in order, random,
 * checked), strided views (x[::2] + 1, its sum, a transposed copy); sum, max and argmax
 * along each axis of x as an 8192 x 8192 C-order matrix (goal: 85% of the copy) and a row
 * broadcast over it (goal: 90%; lin_comb's with the row, for information); each beside CuPy's
 * same operation where CuPy is installed; seed 004 host -> sin(2x + 1) -> host on
 * 4000 x 4000 floats;
 * the host cost of one small operation (1 Ki floats, output from the pool) against a bare
 * cuLaunchKernel of the same work; and the first call of a generated kernel in a new
 * process, on an empty cache against bare NVRTC compiling the same source, and on the
 * cache another process filled. Every timing is a median over rounds; each round of the
 * in-process rows queues `per` operations and waits once, so launch latency is amortised
 * as a user's loop amortises it. Where CuPy is installed, bench/cupy_arrays.py runs each
 * of these that CuPy has in a process of its own, on the same GPU in the same run, timed
 * the same way, and each such row is followed by one beside CuPy's figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cujit_array.h"

#define BIG ((int64_t)64 << 20) /* floats */

static double gbps(double bytes, double ns) { return bytes / ns; }

/* ---- CuPy beside cujit (bench/cupy_arrays.py), where it can be imported ---- */

typedef struct cupy_side {
  int have;
  char why[256];    /* why not */
  char version[32]; /* CuPy's */
  char text[2048];  /* what the script printed: "name value" lines */
} cupy_side;

static cupy_side cupy;

/* Runs bench/cupy_arrays.py with `how` (NULL-terminated arguments after the script) and
 * `env`; 1 with its output in out, else 0 with why. */
static int cupy_script(char *const how[], char *const env[], char *out, size_t size, char *why,
                       size_t why_size) {
  char script[4200];
  char *argv[8] = {"python3", script};
  int i, rc;
  if (bench_source_file("cupy_arrays.py", script, sizeof script) != 0) {
    snprintf(why, why_size, "bench/cupy_arrays.py is not in the sources");
    return 0;
  }
  for (i = 0; how[i] && i < 5; i++) argv[2 + i] = how[i];
  argv[2 + i] = NULL;
  rc = bench_run_program(argv, env, out, size);
  if (rc == -1 || rc == 127)
    snprintf(why, why_size, "python3 could not be run");
  else if (strncmp(out, "skip: ", 6) == 0)
    snprintf(why, why_size, "%.*s", (int)strcspn(out + 6, "\n"), out + 6);
  else if (rc != 0)
    snprintf(why, why_size, "bench/cupy_arrays.py failed (exit %d; see the log)", rc);
  return rc == 0 && strncmp(out, "skip: ", 6) != 0;
}

/* The value of line `name` in the script's output, or NAN. */
static double cupy_value(const char *text, const char *name) {
  size_t len = strlen(name);
  const char *p = text;
  double v;
  for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, name, len) == 0 && p[len] == ' ' && sscanf(p + len + 1, "%lf", &v) == 1)
      return v;
  return NAN;
}

static void cupy_start(void) {
  char rounds[16];
  char *how[] = {"big", rounds, NULL};
  snprintf(rounds, sizeof rounds, "%d", bench_reps(15, 3));
  memset(&cupy, 0, sizeof cupy);
  cupy.have = cupy_script(how, NULL, cupy.text, sizeof cupy.text, cupy.why, sizeof cupy.why);
  if (cupy.have && sscanf(cupy.text, "version %31s", cupy.version) != 1)
    snprintf(cupy.version, sizeof cupy.version, "?");
  if (!cupy.have) bench_skip("arrays", "beside CuPy", cupy.why);
}

/* A row after cujit's `metric`: cujit's figure beside CuPy's. */
static void beside(const char *metric, const char *unit, double ours, double theirs) {
  char m[96], goal[96];
  snprintf(m, sizeof m, "  %s: beside CuPy", metric);
  snprintf(goal, sizeof goal, "baseline: CuPy %s; same GPU; same run", cupy.version);
  bench_info("arrays", m, 0, unit, ours, theirs, goal);
}

/* The same with CuPy's figure from its line `name` of the 64 Mi float run. */
static void beside_cupy(const char *metric, const char *unit, double ours, const char *name) {
  if (cupy.have) beside(metric, unit, ours, cupy_value(cupy.text, name));
}

/* Median ns per operation of `op` over rounds of `per` operations. */
static double time_op(void (*op)(void *), void *ctx, int per, int rounds) {
  double v[64];
  int r, i;
  if (rounds > 64) rounds = 64;
  op(ctx); /* warm: compile, first allocation */
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  for (r = 0; r < rounds; r++) {
    uint64_t t0 = bench_now_ns();
    for (i = 0; i < per; i++) op(ctx);
    bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
    v[r] = (double)(bench_now_ns() - t0) / per;
  }
  return bench_median(v, (size_t)rounds);
}

typedef struct big {
  cujit_array *x, *y, *z, *out, *scalar;
  CUdeviceptr src, dst;
  cujit_elementwise *lin_comb, *lin_comb_one; /* the second: an operation read as y[i + 0] */
  cujit_array *vx, *vy, *vz;                  /* x[1:], y[1:], z[1:] */
  cujit_reduction *dot;
  float a, b;
} big;

static void copy_floor(void *p) {
  big *c = p;
  bench_cu_check(bench_cu.cuMemcpyDtoDAsync(c->dst, c->src, (size_t)BIG * 4, NULL), "copy");
}

static void add_new_output(void *p) {
  big *c = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_binary(CUJIT_BINOP_ADD, c->x, c->y, &r), "x + y");
  cujit_array_destroy(r);
}

/* Two operations, each with a new output, as an array program writes sqrt(fabs(x)). */
static void sqrt_fabs_two(void *p) {
  big *c = p;
  cujit_array *t = NULL, *r = NULL;
  bench_check_ok(cujit_array_unary(CUJIT_UNOP_FABS, c->x, &t), "fabs(x)");
  bench_check_ok(cujit_array_unary(CUJIT_UNOP_SQRT, t, &r), "sqrt(t)");
  cujit_array_destroy(t);
  cujit_array_destroy(r);
}

static void sqrt_fabs(void *p) {
  big *c = p;
  bench_check_ok(cujit_array_map(&c->out, "sqrt(fabs(x))", 1, (const char *[]){"x"},
                                 (const cujit_array *[]){c->x}),
                 "sqrt(fabs(x))");
}

static void lin_comb(void *p) {
  big *c = p;
  bench_check_ok(CUJIT_ELEMENTWISE(c->lin_comb, c->a, c->x, c->b, c->y, c->z), "lin_comb");
}

/* The same on views one element in: its first three and last element go one at a time. */
static void lin_comb_views(void *p) {
  big *c = p;
  bench_check_ok(CUJIT_ELEMENTWISE(c->lin_comb, c->a, c->vx, c->b, c->vy, c->vz),
                 "lin_comb on views");
}

/* An operation that reads y at an index the generator does not take for i: the loop one
 * element at a time, as every operation ran before chunks. */
static void lin_comb_one_at_a_time(void *p) {
  big *c = p;
  bench_check_ok(CUJIT_ELEMENTWISE(c->lin_comb_one, c->a, c->x, c->b, c->y, c->z),
                 "lin_comb one at a time");
}

static void dot_generator(void *p) {
  big *c = p;
  bench_check_ok(CUJIT_REDUCTION(c->dot, &c->scalar, c->x, c->y), "dot");
}

static void dot_array(void *p) {
  big *c = p;
  bench_check_ok(cujit_array_dot(c->x, c->y, &c->scalar), "cujit_array_dot");
}

static void max_reduce(void *p) {
  big *c = p;
  bench_check_ok(cujit_array_reduce(CUJIT_REDOP_MAX, c->x, &c->scalar), "max");
}

/* ---- the elementwise generator's loop at other grid sizes (information for choosing the
 * generator's own: it keeps 32 blocks of 256 threads per multiprocessor) ---- */

static const char lin_comb_src[] =
    "extern \"C\" __global__ void lin_comb(float a, const float *x, float b, const float *y,\n"
    "                                      float *z, unsigned long long n) {\n"
    "  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "#pragma unroll 4\n"
    "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "       i < n; i += stride)\n"
    "    z[i] = a * x[i] + b * y[i];\n"
    "}\n";

typedef struct grid_case {
  big *c;
  cujit_function *f;
  unsigned blocks;
} grid_case;

static void lin_comb_at(void *p) {
  grid_case *g = p;
  bench_check_ok(CUJIT_LAUNCH(g->f, CUJIT_DIM3(g->blocks), CUJIT_DIM3(256), cujit_f32(g->c->a),
                              cujit_array_arg(g->c->x), cujit_f32(g->c->b),
                              cujit_array_arg(g->c->y), cujit_array_arg(g->c->z),
                              cujit_u64((uint64_t)BIG)),
                 "lin_comb");
}

/* One wave is as many blocks of 256 threads as the device runs at once. */
static void lin_comb_grids(big *c, double floor_gbps) {
  cujit_module *m = NULL;
  grid_case g;
  int block = 0, min_grid = 0;
  unsigned wave;
  size_t i;
  const double waves[] = {1, 2, 4, 0}; /* 0: one element per thread */
  if (cujit_module_from_source(&m, lin_comb_src, "lin_comb.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "lin_comb", &g.f) != CUJIT_OK ||
      cujit_function_suggest_block(g.f, 0, &block, &min_grid) != CUJIT_OK) {
    bench_skip("arrays", "lin_comb at other grid sizes", cujit_last_error());
    cujit_module_destroy(m);
    return;
  }
  g.c = c;
  wave = (unsigned)((long long)block * min_grid / 256);
  if (!wave) {
    bench_skip("arrays", "lin_comb at other grid sizes", "the occupancy calculator said 0");
    cujit_module_destroy(m);
    return;
  }
  for (i = 0; i < sizeof waves / sizeof *waves; i++) {
    char metric[80];
    double ns;
    g.blocks = waves[i] ? (unsigned)(waves[i] * wave) : (unsigned)(BIG / 256);
    if (waves[i])
      snprintf(metric, sizeof metric, "  lin_comb loop, %g wave%s (%u blocks)", waves[i],
               waves[i] == 1 ? "" : "s", g.blocks);
    else
      snprintf(metric, sizeof metric, "  lin_comb loop, one element a thread (%u blocks)",
               g.blocks);
    ns = time_op(lin_comb_at, &g, 10, bench_reps(15, 3));
    bench_info("arrays", metric, 3.0 * BIG * 4, "GB/s", gbps(3.0 * BIG * 4, ns), floor_gbps,
               "the generator's loop by hand, for choosing its grid");
  }
  cujit_module_destroy(m);
}

/* A row against the floor (a goal when share > 0), and one beside CuPy's `cupy_name` (NULL:
 * none). */
static void bandwidth(const char *metric, void (*op)(void *), void *ctx, double bytes,
                      double floor_gbps, double share, const char *cupy_name) {
  double ns = time_op(op, ctx, 10, bench_reps(15, 3)), got = gbps(bytes, ns);
  char goal[96];
  snprintf(goal, sizeof goal, ">= %.0f%% of the copy's bandwidth (%.0f GB/s)", share * 100,
           floor_gbps);
  if (share > 0)
    bench_check("arrays", metric, bytes, "GB/s", got, floor_gbps, NAN, got >= share * floor_gbps,
                goal);
  else
    bench_info("arrays", metric, bytes, "GB/s", got, floor_gbps, "baseline: the copy");
  if (cupy_name) beside_cupy(metric, "GB/s", got, cupy_name);
}

static int setup_big(big *c) {
  int64_t n = BIG;
  float v = 1.5f;
  memset(c, 0, sizeof *c);
  c->a = 5;
  c->b = 6;
  return cujit_array_full(&c->x, CUJIT_TYPE_F32, 1, &n, &v) != CUJIT_OK ||
         cujit_array_full(&c->y, CUJIT_TYPE_F32, 1, &n, &v) != CUJIT_OK ||
         cujit_array_empty(&c->z, CUJIT_TYPE_F32, 1, &n) != CUJIT_OK ||
         bench_cu.cuMemAlloc(&c->src, (size_t)n * 4) != CUDA_SUCCESS ||
         bench_cu.cuMemAlloc(&c->dst, (size_t)n * 4) != CUDA_SUCCESS ||
         cujit_elementwise_create(&c->lin_comb, "float a, float *x, float b, float *y, float *z",
                                  "z[i] = a*x[i] + b*y[i]", NULL) != CUJIT_OK ||
         cujit_elementwise_create(&c->lin_comb_one,
                                  "float a, float *x, float b, float *y, float *z",
                                  "z[i] = a*x[i] + b*y[i + 0]", NULL) != CUJIT_OK ||
         cujit_array_view(c->x, 1, n, &c->vx) != CUJIT_OK ||
         cujit_array_view(c->y, 1, n, &c->vy) != CUJIT_OK ||
         cujit_array_view(c->z, 1, n, &c->vz) != CUJIT_OK ||
         cujit_reduction_create(&c->dot, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                                "float *x, float *y", NULL) != CUJIT_OK;
}

static void free_big(big *c) {
  cujit_array_destroy(c->x);
  cujit_array_destroy(c->y);
  cujit_array_destroy(c->z);
  cujit_array_destroy(c->out);
  cujit_array_destroy(c->scalar);
  cujit_array_destroy(c->vx);
  cujit_array_destroy(c->vy);
  cujit_array_destroy(c->vz);
  cujit_elementwise_destroy(c->lin_comb);
  cujit_elementwise_destroy(c->lin_comb_one);
  cujit_reduction_destroy(c->dot);
  if (c->src) bench_cu.cuMemFree(c->src);
  if (c->dst) bench_cu.cuMemFree(c->dst);
}

/* ---- where, broadcasting, joins, the added reductions, take and put, strided views ---- */

typedef struct sel {
  big *c;
  cujit_array *cond, *scalar0d, *one, *out, *idx, *perm, *half, *t, *tout, *res, *stacked;
  cujit_array *parts[2];
} sel;

static void where_op(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_where(s->cond, cujit_arr(s->c->x), cujit_arr(s->c->y), &s->out),
                 "where");
}

static void if_positive_op(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_if_positive(s->c->x, cujit_arr(s->c->x), cujit_f32(0), &s->out),
                 "if_positive");
}

static void stack_op(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_stack(2, (const cujit_array *const *)s->parts, &s->stacked), "stack");
}

static void prod_op(void *p) {
  sel *s = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_reduce(CUJIT_REDOP_PROD, s->c->x, &r), "prod");
  cujit_array_destroy(r);
}

static void broadcast_add(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_binary(CUJIT_BINOP_ADD, s->c->x, s->one, &s->out), "x + y[0:1]");
}

static void concatenate_op(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_concatenate(2, (const cujit_array *const *)s->parts, &s->res),
                 "concatenate");
}

static void any_op(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_reduce(CUJIT_REDOP_ANY, s->c->x, &s->scalar0d), "any");
}

static void sum_as_f64(void *p) {
  sel *s = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_reduce_as(CUJIT_REDOP_SUM, s->c->x, CUJIT_TYPE_F64, &r), "sum as f64");
  cujit_array_destroy(r);
}

static void argmax_op(void *p) {
  sel *s = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_reduce(CUJIT_REDOP_ARGMAX, s->c->x, &r), "argmax");
  cujit_array_destroy(r);
}

static void take_seq(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_take(s->c->x, s->idx, CUJIT_INDEX_WRAP, &s->out), "take");
}

static void take_perm(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_take(s->c->x, s->perm, CUJIT_INDEX_WRAP, &s->out), "take");
}

static void take_raise(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_take(s->c->x, s->idx, CUJIT_INDEX_RAISE, &s->out), "take");
}

static void put_perm(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_put(s->c->z, s->perm, s->c->y, CUJIT_INDEX_WRAP), "put");
}

static void half_plus_one(void *p) {
  sel *s = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, s->half, 1, CUJIT_SCALAR_INT, &r),
                 "x[::2] + 1");
  cujit_array_destroy(r);
}

static void half_sum(void *p) {
  sel *s = p;
  cujit_array *r = NULL; /* an f32, where any's result is a bool */
  bench_check_ok(cujit_array_reduce(CUJIT_REDOP_SUM, s->half, &r), "sum(x[::2])");
  cujit_array_destroy(r);
}

static void transposed_copy(void *p) {
  sel *s = p;
  bench_check_ok(cujit_array_copy(s->t, &s->tout), "copy of x.T");
}

static int setup_sel(sel *s, big *c) {
  int64_t n = BIG, square[] = {8192, 8192};
  float one = 1;
  unsigned char yes = 1;
  cujit_array *u = NULL, *x2 = NULL;
  int bad;
  memset(s, 0, sizeof *s);
  s->c = c;
  s->parts[0] = c->x, s->parts[1] = c->y;
  bad = cujit_array_full(&s->cond, CUJIT_TYPE_BOOL, 1, &n, &yes) != CUJIT_OK ||
        cujit_array_full(&s->one, CUJIT_TYPE_F32, 0, NULL, &one) != CUJIT_OK ||
        cujit_array_arange(&s->idx, CUJIT_TYPE_I64, 0, (double)n, 1) != CUJIT_OK ||
        cujit_array_empty(&s->perm, CUJIT_TYPE_I64, 1, &n) != CUJIT_OK ||
        cujit_array_random(&u, CUJIT_TYPE_F32, 1, &n, CUJIT_RANDOM_UNIFORM, 7) != CUJIT_OK ||
        cujit_array_map(&s->perm, "(long long)(x * 67108864.0f)", 1, (const char *[]){"x"},
                        (const cujit_array *[]){u}) != CUJIT_OK ||
        cujit_array_slice(c->x, 0, 0, n, 2, &s->half) != CUJIT_OK ||
        cujit_array_reshape(c->x, 2, square, &x2) != CUJIT_OK ||
        cujit_array_transpose(x2, &s->t) != CUJIT_OK;
  cujit_array_destroy(u);
  cujit_array_destroy(x2);
  return bad;
}

static void free_sel(sel *s) {
  cujit_array_destroy(s->cond);
  cujit_array_destroy(s->scalar0d);
  cujit_array_destroy(s->one);
  cujit_array_destroy(s->out);
  cujit_array_destroy(s->idx);
  cujit_array_destroy(s->perm);
  cujit_array_destroy(s->half);
  cujit_array_destroy(s->t);
  cujit_array_destroy(s->tout);
  cujit_array_destroy(s->res);
  cujit_array_destroy(s->stacked);
}

/* ---- along the axes of a C-order matrix, and a row broadcast over it ---- */

typedef struct axes_ctx {
  cujit_array *x2, *row, *out; /* x as 8192 x 8192, y[0:8192] */
  cujit_elementwise *lin_comb;
  cujit_redop op;
  int axis;
} axes_ctx;

static void along_axis(void *p) {
  axes_ctx *a = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_reduce_axis(a->op, a->x2, 1, &a->axis, 0, &r), "reduce along an axis");
  cujit_array_destroy(r);
}

static void row_broadcast(void *p) {
  axes_ctx *a = p;
  bench_check_ok(cujit_array_binary(CUJIT_BINOP_ADD, a->x2, a->row, &a->out), "x2 + row");
}

static void row_lin_comb(void *p) {
  axes_ctx *a = p;
  bench_check_ok(CUJIT_ELEMENTWISE(a->lin_comb, 5.0f, a->x2, 6.0f, a->row, a->out),
                 "lin_comb of x2 and a row");
}

/* sum, max and argmax of x as 8192 x 8192 along each axis (the bytes read: the goal is 85%
 * of the copy's bandwidth), and x2 + y[0:8192], a row broadcast over every row; the
 * elementwise generator's lin_comb with the same row broadcast, for information. */
static void axis_ops(big *c, double floor_gbps) {
  static const struct {
    cujit_redop op;
    const char *name;
  } ops[] = {{CUJIT_REDOP_SUM, "sum"}, {CUJIT_REDOP_MAX, "max"}, {CUJIT_REDOP_ARGMAX, "argmax"}};
  int64_t square[] = {8192, 8192};
  double fb = (double)BIG * 4;
  axes_ctx a;
  size_t i;
  memset(&a, 0, sizeof a);
  if (cujit_array_reshape(c->x, 2, square, &a.x2) != CUJIT_OK ||
      cujit_array_view(c->y, 0, 8192, &a.row) != CUJIT_OK) {
    bench_skip("arrays", "reductions along axes", cujit_last_error());
    cujit_array_destroy(a.x2);
    return;
  }
  for (i = 0; i < sizeof ops / sizeof *ops; i++)
    for (a.axis = 0; a.axis < 2; a.axis++) {
      char metric[96], cupy_name[32];
      a.op = ops[i].op;
      snprintf(metric, sizeof metric, "%s(axis=%d) of 8192 x 8192 floats", ops[i].name, a.axis);
      snprintf(cupy_name, sizeof cupy_name, "%s_axis%d", ops[i].name, a.axis);
      bandwidth(metric, along_axis, &a, fb, floor_gbps, 0.85, cupy_name);
    }
  bandwidth("x2 + y[0:8192], (8192, 8192) + (8192,) broadcast", row_broadcast, &a, 2 * fb,
            floor_gbps, 0.90, "broadcast_row");
  a.lin_comb = c->lin_comb;
  bandwidth("elementwise lin_comb of x2 and y[0:8192], (8192, 8192) + (8192,) broadcast",
            row_lin_comb, &a, 2 * fb, floor_gbps, 0, NULL);
  cujit_array_destroy(a.x2);
  cujit_array_destroy(a.row);
  cujit_array_destroy(a.out);
}

/* A row with no goal: what bounds the operation is said in `note`. */
static void bound(const char *metric, void (*op)(void *), sel *s, double bytes, double floor_gbps,
                  const char *note, const char *cupy_name) {
  double ns = time_op(op, s, 10, bench_reps(15, 3)), got = gbps(bytes, ns);
  bench_info("arrays", metric, bytes, "GB/s", got, floor_gbps, note);
  beside_cupy(metric, "GB/s", got, cupy_name);
}

static void select_ops(big *c, double floor_gbps) {
  double fb = (double)BIG * 4, n = (double)BIG;
  sel s;
  if (setup_sel(&s, c) != 0) {
    bench_skip("arrays", "where, take, put, joins and views", cujit_last_error());
    free_sel(&s);
    return;
  }
  /* streaming: as many bytes moved as a copy would, so the copy's bandwidth is the goal */
  bandwidth("where(cond, x, y)", where_op, &s, n + 3 * fb, floor_gbps, 0.90, "where");
  bandwidth("if_positive(x, x, 0)", if_positive_op, &s, 2 * fb, floor_gbps, 0.90, "if_positive");
  bandwidth("x + y[0:1], one element broadcast", broadcast_add, &s, 2 * fb, floor_gbps, 0.90,
            "broadcast_add");
  bandwidth("concatenate(x, y)", concatenate_op, &s, 4 * fb, floor_gbps, 0.90, "concatenate");
  bandwidth("stack(x, y)", stack_op, &s, 4 * fb, floor_gbps, 0.90, "stack");
  bandwidth("any(x)", any_op, &s, fb, floor_gbps, 0.90, "any");
  bandwidth("prod(x)", prod_op, &s, fb, floor_gbps, 0.90, "prod");
  bandwidth("sum of x as f64 (reduce_as)", sum_as_f64, &s, fb, floor_gbps, 0.90, "sum_f64");
  /* bounded by something else than the bytes: said in the note */
  bound("argmax(x)", argmax_op, &s, fb, floor_gbps,
        "bytes read / time; a (value, index) pair compared per element, 16-byte partials",
        "argmax");
  bound("take, indices 0..n-1 (i64)", take_seq, &s, 8 * n + 2 * fb, floor_gbps,
        "indices + gathered + written / time; the gathers in order", "take_seq");
  bound("take, random indices (i64)", take_perm, &s, 8 * n + 2 * fb, floor_gbps,
        "as above; each 4-byte gather touches a 32-byte sector: random access bounds it",
        "take_perm");
  bound("take, raise mode (checks, then waits)", take_raise, &s, 8 * n + 2 * fb, floor_gbps,
        "as take in order, plus a wait for the kernel and a read of the flag per call", "take_seq");
  bound("put, random indices (i64)", put_perm, &s, 8 * n + 2 * fb, floor_gbps,
        "indices + values + scattered / time; each 4-byte store is a 32-byte sector", "put_perm");
  bound("x[::2] + 1 (strided loop)", half_plus_one, &s, fb, floor_gbps,
        "bytes of the elements used / time; every other 4 bytes read, the strided loop's "
        "index arithmetic per element",
        "half_plus_one");
  bound("sum(x[::2]) (strided)", half_sum, &s, fb / 2, floor_gbps,
        "bytes of the elements used / time; half of each sector read is used", "half_sum");
  bound("copy of x.T, 8192 x 8192 floats", transposed_copy, &s, 2 * fb, floor_gbps,
        "bytes read and written / time; the reads stride by 32 KiB (a transpose without "
        "shared-memory tiles)",
        "transposed_copy");
  free_sel(&s);
}

static void big_ops(void) {
  big c;
  double copy_ns, floor_gbps, fb = (double)BIG * 4;
  if (setup_big(&c) != 0) {
    bench_skip("arrays", "64 Mi float operations", cujit_last_error());
    free_big(&c);
    return;
  }
  copy_ns = time_op(copy_floor, &c, 10, bench_reps(15, 3));
  floor_gbps = gbps(2 * fb, copy_ns);
  bench_info("arrays", "device-to-device copy (the floor)", 2 * fb, "GB/s", floor_gbps, NAN,
             "bytes read and written / time");
  beside_cupy("device-to-device copy (the floor)", "GB/s", floor_gbps, "copy");
  bandwidth("x + y, new output each call", add_new_output, &c, 3 * fb, floor_gbps, 0.90, "add");
  bandwidth("sqrt(fabs(x)), one fused kernel", sqrt_fabs, &c, 2 * fb, floor_gbps, 0.90,
            "sqrt_fabs_fused");
  /* after the fused row, whose output stays alive beside x, y and z: the pool holds more
   * than 1 GiB in use here, as the programs that use the device most do */
  bandwidth("sqrt(fabs(x)), two operations, default settings", sqrt_fabs_two, &c, 4 * fb,
            floor_gbps, 0.90, "sqrt_fabs_two");
  bandwidth("elementwise lin_comb", lin_comb, &c, 3 * fb, floor_gbps, 0.93, "lin_comb");
  bandwidth("  lin_comb on views x[1:], y[1:], z[1:]", lin_comb_views, &c, 3 * (fb - 4), floor_gbps,
            0, NULL);
  bandwidth("  lin_comb one element at a time (y[i + 0])", lin_comb_one_at_a_time, &c, 3 * fb,
            floor_gbps, 0, NULL);
  lin_comb_grids(&c, floor_gbps);
  bandwidth("reduction dot (generator)", dot_generator, &c, 2 * fb, floor_gbps, 0.90,
            "dot_reduction");
  bandwidth("cujit_array_dot", dot_array, &c, 2 * fb, floor_gbps, 0, "dot");
  bandwidth("max", max_reduce, &c, fb, floor_gbps, 0.90, "max");
  select_ops(&c, floor_gbps);
  axis_ops(&c, floor_gbps);
  free_big(&c);
}

/* Seed 004: 4000 x 4000 floats from the host, sin(2x + 1), back to the host. */
static void seed_004(void) {
  int64_t shape[] = {4000, 4000}, n = 4000 * 4000, i;
  float *h = malloc((size_t)n * 4), *back = malloc((size_t)n * 4);
  double v[32];
  int r, rounds = bench_reps(15, 3);
  for (i = 0; i < n; i++) h[i] = (float)(i % 1000) / 1000.0f;
  for (r = -1; r < rounds; r++) { /* round -1 warms up */
    cujit_array *x = NULL, *y = NULL;
    uint64_t t0 = bench_now_ns();
    bench_check_ok(cujit_array_from_host(&x, CUJIT_TYPE_F32, 2, shape, h), "to_gpu");
    bench_check_ok(cujit_array_map(&y, "sin(2*x + 1)", 1, (const char *[]){"x"},
                                   (const cujit_array *[]){x}),
                   "sin(2x + 1)");
    bench_check_ok(cujit_array_read(y, back, (size_t)n * 4), "get");
    if (r >= 0) v[r] = (double)(bench_now_ns() - t0) / 1e6;
    cujit_array_destroy(x);
    cujit_array_destroy(y);
  }
  bench_check("arrays", "seed 004: host -> sin(2x + 1) -> host, 4000^2 floats", (double)n * 4, "ms",
              bench_median(v, (size_t)rounds), NAN, 8, bench_median(v, (size_t)rounds) <= 8,
              "<= 8 ms (PyCUDA: 32.3 ms)");
  beside_cupy("seed 004", "ms", bench_median(v, (size_t)rounds), "seed004");
  free(h);
  free(back);
}

/* ---- the host cost of one small operation ---- */

static const char small_add_src[] =
    "extern \"C\" __global__ void add(const float *a, const float *b, float *c, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

typedef struct small {
  cujit_array *a, *b;
  CUfunction raw;
  CUdeviceptr pa, pb, pc;
  long long n;
} small;

static void small_cujit(void *p) {
  small *s = p;
  cujit_array *r = NULL;
  bench_check_ok(cujit_array_binary(CUJIT_BINOP_ADD, s->a, s->b, &r), "a + b");
  cujit_array_destroy(r);
}

static void small_raw(void *p) {
  small *s = p;
  void *args[] = {&s->pa, &s->pb, &s->pc, &s->n};
  bench_cu_check(bench_cu.cuLaunchKernel(s->raw, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                 "cuLaunchKernel");
}

static void small_op(void) {
  small s;
  CUmodule mod = NULL;
  size_t size = 0;
  char arch[48];
  const char *argv[] = {arch, "-no-cache"};
  void *cubin;
  int64_t n = 1024;
  double ours, bare;
  memset(&s, 0, sizeof s);
  s.n = n;
  snprintf(arch, sizeof arch, "-arch=%s", bench_cfg.cc_arch);
  cubin = bench_nvrtc_cubin(small_add_src, "add.cu", argv, 2, NULL, &size);
  if (!cubin || bench_cu.cuModuleLoadData(&mod, cubin) != CUDA_SUCCESS ||
      bench_cu.cuModuleGetFunction(&s.raw, mod, "add") != CUDA_SUCCESS ||
      cujit_array_zeros(&s.a, CUJIT_TYPE_F32, 1, &n) != CUJIT_OK ||
      cujit_array_zeros(&s.b, CUJIT_TYPE_F32, 1, &n) != CUJIT_OK) {
    bench_skip("arrays", "one small operation", "setup failed");
    free(cubin);
    return;
  }
  s.pa = cujit_array_data(s.a);
  s.pb = cujit_array_data(s.b);
  bench_cu_check(bench_cu.cuMemAlloc(&s.pc, (size_t)n * 4), "cuMemAlloc");
  ours = time_op(small_cujit, &s, 1000, bench_reps(25, 3));
  bare = time_op(small_raw, &s, 1000, bench_reps(25, 3));
  bench_ratio("arrays", "a + b on 1 Ki floats, output from the pool", 1024, "us", ours / 1e3,
              bare / 1e3, 1.5, "<= 1.5x a bare cuLaunchKernel of the same add");
  beside_cupy("a + b on 1 Ki floats", "us", ours / 1e3, "small_add");
  bench_cu.cuMemFree(s.pc);
  bench_cu.cuModuleUnload(mod);
  cujit_array_destroy(s.a);
  cujit_array_destroy(s.b);
  free(cubin);
}

/* ---- the first call of a generated kernel in a new process ----
 *
 * A child makes its arrays and a generator (nothing is compiled yet), then times the first
 * call to its end: with an empty cache that is the compile, the cache's write, the load
 * and the launch; with the cache another process filled, the disk read, the load and the
 * launch. The baseline is bare NVRTC compiling, in a new process too, the very source and
 * options cujit gave NVRTC, as a child recorded them (bench/nvrtc.c). */

static const char *const first_kinds[] = {"elementwise", "reduction"};

static double first_call(int reduction) {
  int64_t n = 1 << 20;
  cujit_array *x = NULL, *y = NULL, *z = NULL, *out = NULL;
  cujit_elementwise *e = NULL;
  cujit_reduction *r = NULL;
  float a = 5, b = 6;
  uint64_t t0;
  double ms;
  bench_check_ok(cujit_array_zeros(&x, CUJIT_TYPE_F32, 1, &n), "zeros");
  bench_check_ok(cujit_array_zeros(&y, CUJIT_TYPE_F32, 1, &n), "zeros");
  bench_check_ok(cujit_array_zeros(&z, CUJIT_TYPE_F32, 1, &n), "zeros");
  if (reduction)
    bench_check_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]*y[i]",
                                          "float *x, float *y", NULL),
                   "reduction_create");
  else
    bench_check_ok(cujit_elementwise_create(&e, "float a, float *x, float b, float *y, float *z",
                                            "z[i] = a*x[i] + b*y[i]", NULL),
                   "elementwise_create");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  t0 = bench_now_ns();
  if (reduction)
    bench_check_ok(CUJIT_REDUCTION(r, &out, x, y), "first dot");
  else
    bench_check_ok(CUJIT_ELEMENTWISE(e, a, x, b, y, z), "first lin_comb");
  bench_cu_check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  ms = (double)(bench_now_ns() - t0) / 1e6;
  cujit_elementwise_destroy(e);
  cujit_reduction_destroy(r);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(z);
  cujit_array_destroy(out);
  return ms;
}

/* Child: argv = {kind, "cujit"}, {kind, "record", file} or {kind, "nvrtc", file}. Prints
 * "ms compiles" (compiles: NVRTC compiles cujit made in the process). */
int bench_arrays_child(int argc, char **argv) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  double ms;
  int reduction, record;
  if (argc < 2) return 2;
  reduction = strcmp(argv[0], first_kinds[1]) == 0;
  record = strcmp(argv[1], "record") == 0;
  if ((record || strcmp(argv[1], "nvrtc") == 0) && argc < 3) return 2;
  if (strcmp(argv[1], "nvrtc") == 0) {
    ms = bench_nvrtc_replay(argv[2]);
    printf("%.6f 0\n", ms);
    return isnan(ms) ? 1 : 0;
  }
  if (bench_driver_load() != 0 || bench_context() != 0) return 3;
  if (record) bench_nvrtc_record_start();
  ms = first_call(reduction);
  if (record && bench_nvrtc_record_write(argv[2]) != 0) {
    fprintf(stderr, "cujit-bench: no NVRTC compile was recorded\n");
    return 4;
  }
  memset(&s, 0, sizeof s);
  cujit_cache_get_stats(&s);
  printf("%.6f %d\n", ms, (int)s.compiles);
  return 0;
}

/* Runs one child with a fresh HOME and the cache directory `cache`. */
static int first_child(const char *kind, const char *how, const char *file, const char *cache,
                       double *ms, int *compiles) {
  char home[600], env_home[640], env_cache[640], out[128];
  char *argv[] = {"", "--child", "arrays", (char *)kind, (char *)how, (char *)file, NULL};
  char *env[] = {env_home, env_cache, NULL};
  if (bench_mkdir("home", home, sizeof home) != 0) return -1;
  snprintf(env_home, sizeof env_home, "HOME=%s", home);
  snprintf(env_cache, sizeof env_cache, "CUJIT_CACHE_DIR=%s", cache);
  if (bench_run_child(argv, env, out, sizeof out) != 0) return -1;
  return sscanf(out, "%lf %d", ms, compiles) == 2 && !isnan(*ms) ? 0 : -1;
}

/* One round: a new process on an empty cache, then one on the cache it filled; and bare
 * NVRTC, before or after them. Returns -1 when a child failed or the compile counts are
 * not 1 and 0. */
static int first_round(const char *kind, const char *file, int nvrtc_first, double *empty,
                       double *warm, double *nvrtc) {
  char cache[600];
  int c_empty = -1, c_warm = -1, c_nvrtc;
  if (bench_mkdir("first-cache", cache, sizeof cache) != 0) return -1;
  if (nvrtc_first && first_child(kind, "nvrtc", file, cache, nvrtc, &c_nvrtc) != 0) return -1;
  if (first_child(kind, "cujit", "", cache, empty, &c_empty) != 0 ||
      first_child(kind, "cujit", "", cache, warm, &c_warm) != 0)
    return -1;
  if (!nvrtc_first && first_child(kind, "nvrtc", file, cache, nvrtc, &c_nvrtc) != 0) return -1;
  if (c_empty != 1 || c_warm != 0) {
    fprintf(stderr, "cujit-bench: first calls compiled %d and %d times, not 1 and 0\n", c_empty,
            c_warm);
    return -1;
  }
  return 0;
}

/* CuPy's first call of the same kernel (ElementwiseKernel, ReductionKernel) in new
 * processes: on an empty kernel cache, then on the cache that one filled. */
static void cupy_first_calls(const char *kind, const char *empty_metric, double cj_empty,
                             const char *warm_metric, double cj_warm) {
  char dir[600], env_dir[640], out[512], why[256] = "no figure in its output";
  char *how[] = {"first", (char *)kind, NULL};
  char *env[] = {env_dir, NULL};
  double empty[8], warm[8];
  int reps = bench_reps(3, 1), r;
  if (!cupy.have) return;
  for (r = 0; r < reps; r++) {
    if (bench_mkdir("cupy-cache", dir, sizeof dir) != 0) return;
    snprintf(env_dir, sizeof env_dir, "CUPY_CACHE_DIR=%s", dir);
    if (!cupy_script(how, env, out, sizeof out, why, sizeof why) ||
        isnan(empty[r] = cupy_value(out, "first")) ||
        !cupy_script(how, env, out, sizeof out, why, sizeof why) ||
        isnan(warm[r] = cupy_value(out, "first"))) {
      bench_skip("arrays", empty_metric, why);
      return;
    }
  }
  beside(empty_metric, "ms", cj_empty, bench_median(empty, (size_t)reps));
  beside(warm_metric, "ms", cj_warm, bench_median(warm, (size_t)reps));
}

static void first_calls(int which) {
  const char *kind = first_kinds[which];
  char cache[600], file[700], metric[80], warm_metric[80], goal[96];
  double empty[16], warm[16], nvrtc[16], ms, cj_empty;
  int reps = bench_reps(9, 2), r, c;
  snprintf(metric, sizeof metric, "first call of the %s generator", kind);
  snprintf(file, sizeof file, "%s/first-%s.txt", bench_cfg.scratch, kind);
  if (bench_mkdir("first-cache", cache, sizeof cache) != 0 ||
      first_child(kind, "record", file, cache, &ms, &c) != 0 ||
      first_round(kind, file, 0, empty, warm, nvrtc) != 0) { /* the first round warms up */
    bench_skip("arrays", metric, "a child process failed (see the log)");
    return;
  }
  for (r = 0; r < reps; r++)
    if (first_round(kind, file, r % 2, &empty[r], &warm[r], &nvrtc[r]) != 0) {
      bench_skip("arrays", metric, "a child process failed (see the log)");
      return;
    }
  snprintf(metric, sizeof metric, "first %s call, new process, empty cache", kind);
  snprintf(goal, sizeof goal, "<= 1.1x bare NVRTC on the same source in a new process");
  cj_empty = bench_median(empty, (size_t)reps);
  bench_ratio("arrays", metric, 0, "ms", cj_empty, bench_median(nvrtc, (size_t)reps), 1.1, goal);
  snprintf(warm_metric, sizeof warm_metric, "first %s call, second process (disk cache)", kind);
  ms = bench_median(warm, (size_t)reps);
  bench_check("arrays", warm_metric, 0, "ms", ms, NAN, 1.0, ms <= 1.0, "<= 1 ms");
  cupy_first_calls(kind, metric, cj_empty, warm_metric, ms);
}

void bench_arrays(void) {
  if (bench_driver_load() != 0 || bench_context() != 0) {
    bench_skip("arrays", "array operations", "no usable GPU");
    return;
  }
  cupy_start(); /* before cujit's arrays hold device memory */
  big_ops();
  seed_004();
  small_op();
  first_calls(0);
  first_calls(1);
}
