/* graph.c - CUDA graphs. 10, 100 and 1,000 launches of a small kernel (saxpy on 1 Ki
 * floats) captured once and replayed: a graph made by cujit_graph_begin/end and launched
 * with cujit_graph_launch, against the same launches captured and replayed through the
 * driver directly (the goal: <= 1.05x), beside the same launches made one by one with
 * cujit_launch, and beside CuPy's graph replay where CuPy is installed (bench/cupy_graph.py,
 * in a process of its own on the same GPU). Then array operations on 1 Ki floats, one by
 * one and as a graph: the sin(2x + 1) chain (three operations into outputs made before)
 * and a 100-step loop (acc += x in place); and what an update costs: a new capture of the
 * 100 launches updating the graph in place against ending it into a new graph, and one
 * launch's arguments set.
 *
 * Each figure is per kernel (per chain, per loop): the median over rounds of a batch of
 * replays (or of one-by-one launches) queued back to back and one wait for the stream;
 * cujit and the driver alternate batch by batch in every round. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cujit_array.h"

#define ELEMS 1024
#define GRID CUJIT_DIM3(ELEMS / 256)
#define BLOCK CUJIT_DIM3(256)

typedef struct graph_ctx {
  int launches;   /* kernels per replay */
  CUfunction raw; /* the driver's kernel handle (cuLibraryGetKernel), as cujit launches */
  cujit_function *fn;
  CUstream raw_stream, stream; /* the driver's own; cujit's */
  CUgraph raw_graph;
  CUgraphExec raw_exec;
  cujit_graph *graph;
  CUdeviceptr x, y;
  float a;
  int n;
} graph_ctx;

/* ---- the batches timed ---- */

enum { RAW_REPLAY, CUJIT_REPLAY, ONE_BY_ONE, N_FORMS };

static void raw_launches(graph_ctx *c) {
  void *params[] = {&c->a, &c->x, &c->y, &c->n};
  int i;
  for (i = 0; i < c->launches; i++)
    bench_cu_check(bench_cu.cuLaunchKernel(c->raw, ELEMS / 256, 1, 1, 256, 1, 1, 0, c->raw_stream,
                                           params, NULL),
                   "cuLaunchKernel");
}

static void cujit_launches(graph_ctx *c) {
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  int i;
  o.stream = c->stream;
  for (i = 0; i < c->launches; i++)
    bench_check_ok(CUJIT_LAUNCH_EX(c->fn, GRID, BLOCK, &o, cujit_f32(c->a), cujit_ptr(c->x),
                                   cujit_ptr(c->y), cujit_i32(c->n)),
                   "cujit_launch");
}

/* `per` replays (or one-by-one rounds) of form v, and the wait: nanoseconds. */
static double batch(graph_ctx *c, int v, int per) {
  uint64_t t0 = bench_now_ns();
  int k;
  for (k = 0; k < per; k++) {
    if (v == RAW_REPLAY)
      bench_cu_check(bench_cu.cuGraphLaunch(c->raw_exec, c->raw_stream), "cuGraphLaunch");
    else if (v == CUJIT_REPLAY)
      bench_check_ok(cujit_graph_launch(c->graph, c->stream), "cujit_graph_launch");
    else
      cujit_launches(c);
  }
  bench_cu_check(bench_cu.cuStreamSynchronize(v == RAW_REPLAY ? c->raw_stream : c->stream),
                 "cuStreamSynchronize");
  return (double)(bench_now_ns() - t0);
}

/* ---- CuPy beside (bench/cupy_graph.py) ---- */

static char cupy_text[2048];
static char cupy_version[32];
static int cupy_have;

static void cupy_run(void) {
  char script[4200], rounds[16];
  char *argv[] = {"python3", script, rounds, NULL};
  int rc;
  cupy_have = 0;
  if (bench_source_file("cupy_graph.py", script, sizeof script) != 0) {
    bench_skip("graph", "beside CuPy", "bench/cupy_graph.py is not in the sources");
    return;
  }
  snprintf(rounds, sizeof rounds, "%d", bench_reps(21, 3));
  rc = bench_run_program(argv, NULL, cupy_text, sizeof cupy_text);
  if (rc == 0 && strncmp(cupy_text, "skip: ", 6) != 0 &&
      sscanf(cupy_text, "version %31s", cupy_version) == 1) {
    cupy_have = 1;
    return;
  }
  if (strncmp(cupy_text, "skip: ", 6) == 0)
    bench_skip("graph", "beside CuPy", cupy_text + 6);
  else
    bench_skip("graph", "beside CuPy", "bench/cupy_graph.py failed (see the log)");
}

static double cupy_value(const char *name) {
  size_t len = strlen(name);
  const char *p = cupy_text;
  double v;
  for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, name, len) == 0 && p[len] == ' ' && sscanf(p + len + 1, "%lf", &v) == 1)
      return v;
  return NAN;
}

static void beside_cupy(const char *metric, double param, double ours, const char *name) {
  char m[96], goal[96];
  if (!cupy_have) return;
  snprintf(m, sizeof m, "  %s: beside CuPy", metric);
  snprintf(goal, sizeof goal, "baseline: CuPy %s; same GPU; same run", cupy_version);
  bench_info("graph", m, param, "us", ours, cupy_value(name), goal);
}

/* ---- N launches replayed ---- */

static void capture_raw(graph_ctx *c) {
  bench_cu_check(bench_cu.cuStreamBeginCapture(c->raw_stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
                 "cuStreamBeginCapture");
  raw_launches(c);
  bench_cu_check(bench_cu.cuStreamEndCapture(c->raw_stream, &c->raw_graph), "cuStreamEndCapture");
  bench_cu_check(bench_cu.cuGraphInstantiateWithFlags(&c->raw_exec, c->raw_graph, 0),
                 "cuGraphInstantiateWithFlags");
}

static void capture_cujit(graph_ctx *c) {
  bench_check_ok(cujit_graph_begin(c->stream, CUJIT_CAPTURE_GLOBAL), "cujit_graph_begin");
  cujit_launches(c);
  bench_check_ok(cujit_graph_end(c->stream, &c->graph), "cujit_graph_end");
}

static void replays(graph_ctx *c, int launches) {
  int rounds = bench_reps(21, 3), per = launches >= 1000 ? 4 : 4000 / launches, r, v;
  double *t[N_FORMS], med[N_FORMS];
  char metric[80], key[32];
  c->launches = launches;
  capture_raw(c);
  capture_cujit(c);
  for (v = 0; v < N_FORMS; v++) {
    t[v] = calloc((size_t)rounds, sizeof(double));
    batch(c, v, 1); /* warm */
  }
  for (r = 0; r < rounds; r++)
    for (v = 0; v < N_FORMS; v++) {
      int form = r % 2 ? N_FORMS - 1 - v : v; /* the order alternates round by round */
      t[form][r] = batch(c, form, per) / ((double)per * launches) / 1e3;
    }
  for (v = 0; v < N_FORMS; v++) {
    med[v] = bench_median(t[v], (size_t)rounds);
    free(t[v]);
  }
  snprintf(metric, sizeof metric, "%d launches replayed, per kernel", launches);
  bench_ratio("graph", metric, launches, "us", med[CUJIT_REPLAY], med[RAW_REPLAY], 1.05,
              "<= 1.05x the driver's own graph of the same launches");
  snprintf(metric, sizeof metric, "%d launches one by one vs replayed, per kernel", launches);
  bench_info("graph", metric, launches, "us", med[ONE_BY_ONE], med[CUJIT_REPLAY],
             "cujit_launch one by one; baseline: cujit_graph_launch");
  snprintf(metric, sizeof metric, "%d launches replayed", launches);
  snprintf(key, sizeof key, "replay%d", launches);
  beside_cupy(metric, launches, med[CUJIT_REPLAY], key);
  cujit_graph_destroy(c->graph);
  bench_cu.cuGraphExecDestroy(c->raw_exec);
  bench_cu.cuGraphDestroy(c->raw_graph);
}

/* ---- updates ---- */

static void updates(graph_ctx *c) {
  int rounds = bench_reps(21, 3), r, in_place = 0;
  cujit_graph *kept;
  double *upd = calloc((size_t)rounds, sizeof(double)),
         *made = calloc((size_t)rounds, sizeof(double)),
         *set = calloc((size_t)rounds, sizeof(double));
  c->launches = 100;
  capture_cujit(c);
  for (r = 0; r < rounds; r++) {
    uint64_t t0 = bench_now_ns();
    c->a = (float)r;
    bench_check_ok(cujit_graph_begin(c->stream, CUJIT_CAPTURE_GLOBAL), "cujit_graph_begin");
    cujit_launches(c);
    bench_check_ok(cujit_graph_update(c->graph, c->stream, &in_place), "cujit_graph_update");
    upd[r] = (double)(bench_now_ns() - t0) / 1e6;
    if (!in_place) {
      bench_skip("graph", "update in place", "the driver made the graph again");
      break;
    }
    kept = c->graph;
    t0 = bench_now_ns();
    capture_cujit(c); /* a new graph in c->graph */
    made[r] = (double)(bench_now_ns() - t0) / 1e6;
    cujit_graph_destroy(kept);
    t0 = bench_now_ns();
    bench_check_ok(CUJIT_GRAPH_SET_ARGS(c->graph, 50, cujit_f32(c->a), cujit_ptr(c->x),
                                        cujit_ptr(c->y), cujit_i32(c->n)),
                   "cujit_graph_set_args");
    set[r] = (double)(bench_now_ns() - t0) / 1e3;
  }
  if (in_place) {
    bench_info("graph", "100 launches captured again: update in place vs a new graph", 100, "ms",
               bench_median(upd, (size_t)rounds), bench_median(made, (size_t)rounds),
               "cujit_graph_update; baseline: cujit_graph_end, instantiated again");
    bench_info("graph", "one launch's arguments set (cujit_graph_set_args)", 4, "us",
               bench_median(set, (size_t)rounds), NAN, "cuGraphExecKernelNodeSetParams");
  }
  bench_check_ok(cujit_stream_synchronize(c->stream), "cujit_stream_synchronize");
  cujit_graph_destroy(c->graph);
  free(upd);
  free(made);
  free(set);
}

/* ---- array operations ---- */

typedef struct ops_ctx {
  cujit_array *x, *t, *u, *y, *acc;
  int loop; /* the 100-step loop, else the chain */
} ops_ctx;

static void ops_once(ops_ctx *o) {
  int i;
  if (o->loop) {
    for (i = 0; i < 100; i++) {
      cujit_array *io = o->acc;
      bench_check_ok(cujit_array_binary(CUJIT_BINOP_ADD, o->acc, o->x, &io), "acc += x");
    }
    return;
  }
  bench_check_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, o->x, 2, CUJIT_SCALAR_INT, &o->t),
                 "2x");
  bench_check_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, o->t, 1, CUJIT_SCALAR_INT, &o->u),
                 "2x + 1");
  bench_check_ok(cujit_array_unary(CUJIT_UNOP_SIN, o->u, &o->y), "sin(2x + 1)");
}

static double ops_batch(ops_ctx *o, cujit_graph *g, CUstream s, int per) {
  uint64_t t0 = bench_now_ns();
  int k;
  for (k = 0; k < per; k++)
    if (g)
      bench_check_ok(cujit_graph_launch(g, s), "cujit_graph_launch");
    else
      ops_once(o);
  bench_check_ok(cujit_stream_synchronize(s), "cujit_stream_synchronize");
  return (double)(bench_now_ns() - t0) / per / 1e3;
}

static void array_ops(CUstream s, int loop) {
  static const char *const names[2] = {"sin(2x + 1) chain on 1 Ki floats",
                                       "100-step loop acc += x on 1 Ki floats"};
  ops_ctx o;
  cujit_graph *g = NULL;
  int64_t n = ELEMS;
  int rounds = bench_reps(21, 3), per = loop ? 20 : 500, r;
  double *one = calloc((size_t)rounds, sizeof(double)),
         *rep = calloc((size_t)rounds, sizeof(double));
  char metric[96];
  memset(&o, 0, sizeof o);
  o.loop = loop;
  bench_check_ok(cujit_array_zeros(&o.x, CUJIT_TYPE_F32, 1, &n), "an array");
  bench_check_ok(cujit_array_zeros(&o.acc, CUJIT_TYPE_F32, 1, &n), "an array");
  bench_check_ok(cujit_array_set_stream(o.x, s), "cujit_array_set_stream");
  bench_check_ok(cujit_array_set_stream(o.acc, s), "cujit_array_set_stream");
  ops_once(&o); /* compiles, makes the outputs: the graph and the loop then reuse them */
  bench_check_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL), "cujit_graph_begin");
  ops_once(&o);
  bench_check_ok(cujit_graph_end(s, &g), "cujit_graph_end");
  ops_batch(&o, g, s, 1);
  for (r = 0; r < rounds; r++) {
    if (r % 2) {
      rep[r] = ops_batch(&o, g, s, per);
      one[r] = ops_batch(&o, NULL, s, per);
    } else {
      one[r] = ops_batch(&o, NULL, s, per);
      rep[r] = ops_batch(&o, g, s, per);
    }
  }
  snprintf(metric, sizeof metric, "%s: one by one vs a graph", names[loop]);
  bench_info("graph", metric, loop ? 100 : 3, "us", bench_median(one, (size_t)rounds),
             bench_median(rep, (size_t)rounds), "per pass; baseline: cujit_graph_launch");
  beside_cupy(names[loop], loop ? 100 : 3, bench_median(rep, (size_t)rounds),
              loop ? "loop_graph" : "chain_graph");
  cujit_graph_destroy(g);
  cujit_array_destroy(o.x);
  cujit_array_destroy(o.t);
  cujit_array_destroy(o.u);
  cujit_array_destroy(o.y);
  cujit_array_destroy(o.acc);
  free(one);
  free(rep);
}

void bench_graph(void) {
  static const int counts[] = {10, 100, 1000};
  graph_ctx c;
  CUlibrary raw_lib = NULL;
  CUkernel raw_kernel = NULL;
  cujit_module *m = NULL;
  char arch[48];
  const char *argv[] = {arch, "-no-cache"};
  size_t size, i;
  void *cubin;
  if (bench_driver_load() != 0 || bench_context() != 0) {
    bench_skip("graph", "graphs", "no usable GPU");
    return;
  }
  cupy_run(); /* before cujit holds device memory */
  memset(&c, 0, sizeof c);
  c.a = 0.5f;
  c.n = ELEMS;
  snprintf(arch, sizeof arch, "-arch=%s", bench_cfg.cc_arch);
  cubin = bench_nvrtc_cubin(bench_src_small, "saxpy.cu", argv, 2, NULL, &size);
  if (!cubin ||
      bench_cu.cuLibraryLoadData(&raw_lib, cubin, NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS ||
      bench_cu.cuLibraryGetKernel(&raw_kernel, raw_lib, "saxpy") != CUDA_SUCCESS ||
      cujit_module_from_source(&m, bench_src_small, "saxpy.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "saxpy", &c.fn) != CUJIT_OK) {
    bench_skip("graph", "graphs", "setup failed");
    free(cubin);
    return;
  }
  free(cubin);
  c.raw = (CUfunction)raw_kernel;
  bench_cu_check(bench_cu.cuStreamCreate(&c.raw_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  bench_check_ok(cujit_stream_create(&c.stream), "cujit_stream_create");
  bench_cu_check(bench_cu.cuMemAlloc(&c.x, ELEMS * sizeof(float)), "cuMemAlloc");
  bench_cu_check(bench_cu.cuMemAlloc(&c.y, ELEMS * sizeof(float)), "cuMemAlloc");
  for (i = 0; i < sizeof counts / sizeof *counts; i++) replays(&c, counts[i]);
  updates(&c);
  array_ops(c.stream, 0);
  array_ops(c.stream, 1);
  bench_cu.cuMemFree(c.x);
  bench_cu.cuMemFree(c.y);
  bench_cu.cuStreamDestroy(c.raw_stream);
  cujit_stream_destroy(c.stream);
  cujit_module_destroy(m);
  bench_cu.cuLibraryUnload(raw_lib);
}
