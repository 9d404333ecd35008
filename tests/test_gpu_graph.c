/* test_gpu_graph - CUDA graphs on a device: the values a graph's launches leave, whatever
 * made the captured work (launches, typed calls, bound functions, array operations, a
 * generator's call, a kernel compiled during the capture); updates from a new capture
 * and launch by launch, checked by the values they give; refusals on the real driver with
 * the capture going on to a graph that runs; modules and arrays destroyed while a graph
 * uses them and is running. */
#include <math.h>
#include <unistd.h>

#include "gputest.h"
#include "cujit_array.h"

static const char kSrc[] =
    "extern \"C\" __global__ void axpb(float *x, int n, float a, float b) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void copy(float *dst, const float *src, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) dst[i] = src[i];\n"
    "}\n";

enum { N = 1000 };

static const cujit_dim3 kGrid = {(N + 255) / 256, 1, 1}, kBlock = {256, 1, 1};

static cujit_launch_options on(CUstream s) {
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  o.stream = s;
  return o;
}

/* Device memory holding v at every element. */
static CUdeviceptr filled(float v) {
  float h[N];
  CUdeviceptr d = 0;
  int i;
  for (i = 0; i < N; i++) h[i] = v;
  assert_ok(cujit_mem_alloc(&d, sizeof h));
  assert_ok(cujit_mem_copy_htod(d, h, sizeof h));
  return d;
}

/* Asserts that every element of d is `want`. */
static void all_equal(CUdeviceptr d, float want) {
  float h[N];
  int i;
  assert_ok(cujit_mem_copy_dtoh(h, d, sizeof h));
  for (i = 0; i < N; i++)
    if (h[i] != want) fail_msg("element %d is %g, wanted %g", i, h[i], want);
}

/* 100 launches made by cujit_launch, cujit_call and a bound function, then a kernel of a
 * module compiled and loaded during the capture: nothing runs until the graph is launched,
 * and each launch runs all of it again, on any stream. */
static void replays_give_the_values_of_the_work(void **state) {
  typedef cujit_status (*axpb_fn)(cujit_dim3, cujit_dim3, CUdeviceptr, int, float, float);
  cujit_function *f = gpu_function(mod, "axpb"), *g2 = NULL;
  cujit_module *late = NULL;
  cujit_launch_options o;
  cujit_graph *g = NULL;
  CUstream s, t;
  CUdeviceptr x = filled(0.0f);
  void *bound = NULL;
  char src[200], name[40];
  int i, round;
  (void)state;
  assert_ok(cujit_stream_create(&s));
  assert_ok(cujit_stream_create(&t));
  o = on(s);
  assert_ok(cujit_function_bind(f, &o, &bound));
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL));
  for (i = 0; i < 98; i++) assert_ok(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, x, N, 1.0f, 1.0f));
  assert_ok(cujit_call_ex(f, kGrid, kBlock, &o, x, N, 1.0f, 1.0f));
  assert_ok(((axpb_fn)bound)(kGrid, kBlock, x, N, 1.0f, 1.0f));
  /* a kernel no cache has seen (its source names this process): compiled and loaded now */
  snprintf(name, sizeof name, "twice_%ld", (long)getpid());
  snprintf(src, sizeof src,
           "extern \"C\" __global__ void %s(float *x, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= 2.0f;\n}\n",
           name);
  assert_ok(cujit_module_from_source(&late, src, "late.cu", NULL));
  assert_ok(cujit_module_get_function(late, name, &g2));
  assert_ok(CUJIT_LAUNCH_EX(g2, kGrid, kBlock, &o, x, N));
  assert_ok(cujit_graph_end(s, &g));
  assert_int_equal(cujit_graph_launch_count(g), 101);
  all_equal(x, 0.0f); /* nothing ran */
  for (round = 1; round <= 3; round++) {
    float want = 0.0f;
    assert_ok(cujit_graph_launch(g, round == 2 ? t : s));
    assert_ok(cujit_stream_synchronize(round == 2 ? t : s));
    for (i = 0; i < round; i++) want = (want + 100.0f) * 2.0f;
    all_equal(x, want);
  }
  cujit_graph_destroy(g);
  cujit_module_destroy(late);
  assert_ok(cujit_mem_free(x));
  assert_ok(cujit_stream_destroy(s));
  assert_ok(cujit_stream_destroy(t));
}

/* sin(2x + 1) as three array operations, a 100-step loop of an operation in place and a
 * generator's call, captured: each launch computes them from x as it is then. */
static void array_operations_replayed(void **state) {
  cujit_array *x = NULL, *two = NULL, *plus = NULL, *y = NULL, *acc = NULL, *io;
  cujit_elementwise *k = NULL;
  cujit_graph *g = NULL;
  CUstream s;
  int64_t n = N;
  float hx[N], hy[N], ha[N];
  int i, round;
  (void)state;
  assert_ok(cujit_stream_create(&s));
  assert_ok(cujit_array_zeros(&x, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&acc, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_set_stream(x, s));
  assert_ok(cujit_array_set_stream(acc, s));
  assert_ok(cujit_elementwise_create(&k, "float a, float *x", "x[i] = a * x[i]", NULL));
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, x, 2, CUJIT_SCALAR_INT, &two));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, two, 1, CUJIT_SCALAR_INT, &plus));
  assert_ok(cujit_array_unary(CUJIT_UNOP_SIN, plus, &y));
  cujit_array_destroy(two); /* during the capture: the graph keeps the memory */
  cujit_array_destroy(plus);
  for (i = 0; i < 100; i++) {
    io = acc;
    assert_ok(cujit_array_binary(CUJIT_BINOP_ADD, acc, x, &io));
  }
  assert_ok(CUJIT_ELEMENTWISE(k, 0.5f, acc));
  assert_ok(cujit_graph_end(s, &g));
  for (round = 0; round < 3; round++) {
    for (i = 0; i < N; i++) hx[i] = (float)(i % 17) * 0.25f - (float)round;
    assert_ok(cujit_array_write(x, hx, sizeof hx));
    assert_ok(cujit_array_write(acc, hx, sizeof hx));
    assert_ok(cujit_graph_launch(g, s));
    assert_ok(cujit_stream_synchronize(s));
    assert_ok(cujit_array_read(y, hy, sizeof hy));
    assert_ok(cujit_array_read(acc, ha, sizeof ha));
    for (i = 0; i < N; i++) {
      float want = sinf(2.0f * hx[i] + 1.0f), sum = hx[i];
      int step;
      if (fabsf(hy[i] - want) > 1e-5f)
        fail_msg("round %d: y[%d] = %g, sin(2x+1) = %g", round, i, hy[i], want);
      for (step = 0; step < 100; step++) sum += hx[i];
      if (ha[i] != 0.5f * sum)
        fail_msg("round %d: acc[%d] = %g, wanted %g", round, i, ha[i], 0.5f * sum);
    }
  }
  cujit_graph_destroy(g);
  cujit_elementwise_destroy(k);
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(acc);
  assert_ok(cujit_stream_destroy(s));
}

/* A new capture with other scalars and other memory updates the graph in place; one
 * launch's arguments set directly; other work makes the graph again. */
static void updates_give_new_values(void **state) {
  cujit_function *f = gpu_function(mod, "axpb"), *copy = gpu_function(mod, "copy");
  cujit_launch_options o;
  cujit_graph *g = NULL;
  CUstream s;
  CUdeviceptr x = filled(1.0f), y = filled(10.0f);
  int in_place = -1;
  (void)state;
  assert_ok(cujit_stream_create(&s));
  o = on(s);
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, x, N, 2.0f, 0.0f));
  assert_ok(cujit_graph_end(s, &g));
  assert_ok(cujit_graph_launch(g, s));
  assert_ok(cujit_stream_synchronize(s));
  all_equal(x, 2.0f);
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL)); /* other memory, other scalars */
  assert_ok(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, y, N, 3.0f, 1.0f));
  assert_ok(cujit_graph_update(g, s, &in_place));
  assert_int_equal(in_place, 1);
  assert_ok(cujit_graph_launch(g, s));
  assert_ok(cujit_stream_synchronize(s));
  all_equal(y, 31.0f);
  all_equal(x, 2.0f);
  assert_ok(CUJIT_GRAPH_SET_ARGS(g, 0, x, N, 0.5, 4)); /* numbers converted */
  assert_ok(cujit_graph_launch(g, s));
  assert_ok(cujit_stream_synchronize(s));
  all_equal(x, 5.0f);
  all_equal(y, 31.0f);
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL)); /* other work: made again */
  assert_ok(CUJIT_LAUNCH_EX(copy, kGrid, kBlock, &o, y, x, N));
  assert_ok(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, y, N, 1.0f, 1.0f));
  assert_ok(cujit_graph_update(g, s, &in_place));
  assert_int_equal(in_place, 0);
  assert_int_equal(cujit_graph_launch_count(g), 2);
  assert_ok(cujit_graph_launch(g, s));
  assert_ok(cujit_stream_synchronize(s));
  all_equal(y, 6.0f);
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(x));
  assert_ok(cujit_mem_free(y));
  assert_ok(cujit_stream_destroy(s));
}

/* On the real driver: refusals leave the capture going on; a page-locked In/Out buffer is
 * copied at every launch; a call the driver refuses invalidates the capture. */
static void refusals_on_a_device(void **state) {
  cujit_function *f = gpu_function(mod, "axpb");
  cujit_launch_options o;
  cujit_graph *g = NULL;
  CUstream s;
  CUdeviceptr x = filled(1.0f), d = 0;
  float pageable[N], *pinned = NULL, elapsed = 0;
  int i;
  (void)state;
  assert_ok(cujit_stream_create(&s));
  assert_ok(cujit_host_alloc((void **)&pinned, N * sizeof(float)));
  o = on(s);
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL));
  assert_status_detail(cujit_stream_synchronize(s), CUJIT_ERROR_CAPTURE,
                       "cujit_stream_synchronize() waits for the stream");
  assert_status_detail(cujit_synchronize(), CUJIT_ERROR_CAPTURE, "cujit_synchronize()");
  assert_status_detail(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, cujit_inout(pageable, sizeof pageable),
                                       N, 1.0f, 1.0f),
                       CUJIT_ERROR_CAPTURE, "pageable host memory");
  o.elapsed_ms = &elapsed;
  assert_status_detail(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, x, N, 1.0f, 1.0f), CUJIT_ERROR_CAPTURE,
                       "a timed launch (elapsed_ms) cannot be captured");
  o.elapsed_ms = NULL;
  assert_ok(
      CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, cujit_inout(pinned, N * sizeof(float)), N, 2.0f, 1.0f));
  assert_ok(cujit_graph_end(s, &g));
  for (i = 0; i < N; i++) pinned[i] = (float)i;
  assert_ok(cujit_graph_launch(g, s));
  assert_ok(cujit_stream_synchronize(s));
  for (i = 0; i < N; i++) assert_true(pinned[i] == 2.0f * (float)i + 1.0f);
  assert_ok(cujit_graph_launch(g, s)); /* the buffer as it is now, copied again */
  assert_ok(cujit_stream_synchronize(s));
  for (i = 0; i < N; i++) assert_true(pinned[i] == 2.0f * (2.0f * (float)i + 1.0f) + 1.0f);
  cujit_graph_destroy(g);
  g = (cujit_graph *)1;
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(f, kGrid, kBlock, &o, x, N, 1.0f, 1.0f));
  assert_status_detail(cujit_mem_alloc(&d, 64), CUJIT_ERROR_CAPTURE, "cuMemAlloc");
  assert_status_detail(cujit_graph_end(s, &g), CUJIT_ERROR_CAPTURE, "was invalidated");
  assert_null(g);
  all_equal(x, 1.0f); /* the refused capture ran nothing */
  assert_ok(cujit_host_free(pinned));
  assert_ok(cujit_mem_free(x));
  assert_ok(cujit_stream_destroy(s));
}

/* A module and an array destroyed while a graph using them is launched, and the graph
 * destroyed while its launches run: no fault, and the pool back where it was. */
static void destroyed_while_launched(void **state) {
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_array *a = NULL, *out = NULL;
  cujit_launch_options o;
  cujit_graph *g = NULL;
  CUstream s;
  int64_t n = 1 << 20;
  size_t base, used;
  int i;
  (void)state;
  assert_ok(cujit_stream_create(&s));
  o = on(s);
  m = gpu_module(kSrc, "graph_lifetime.cu", NULL);
  f = gpu_function(m, "axpb");
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_set_stream(a, s));
  assert_ok(cujit_stream_synchronize(s));
  assert_ok(cujit_synchronize());
  base = gpu_pool_in_use();
  assert_ok(cujit_graph_begin(s, CUJIT_CAPTURE_GLOBAL));
  for (i = 0; i < 50; i++)
    assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3((unsigned)(n / 256)), CUJIT_DIM3(256), &o,
                              cujit_array_data(a), (int)n, 1.0f, 1.0f));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, a, 3, CUJIT_SCALAR_INT, &out));
  assert_ok(cujit_graph_end(s, &g));
  cujit_module_destroy(m);
  cujit_array_destroy(a);
  for (i = 0; i < 20; i++) assert_ok(cujit_graph_launch(g, s));
  assert_ok(cujit_stream_synchronize(s));
  {
    float h[4];
    assert_ok(cujit_array_read_range(out, 0, 4, h));
    assert_true(h[0] == 3.0f * 1000.0f);
  }
  for (i = 0; i < 20; i++) assert_ok(cujit_graph_launch(g, s));
  cujit_array_destroy(out);
  cujit_graph_destroy(g); /* its launches still running: it waits for them */
  assert_ok(cujit_stream_synchronize(s));
  assert_ok(cujit_synchronize());
  used = gpu_pool_in_use();
  assert_int_equal(used, base - (size_t)n * sizeof(float));
  assert_ok(cujit_stream_destroy(s));
}

GPU_GROUP_MAIN(kSrc, "graph.cu", NULL, cmocka_unit_test(replays_give_the_values_of_the_work),
               cmocka_unit_test(array_operations_replayed),
               cmocka_unit_test(updates_give_new_values), cmocka_unit_test(refusals_on_a_device),
               cmocka_unit_test(destroyed_while_launched))
