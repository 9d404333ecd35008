/* test_graph - CUDA graphs on the checking fake driver (tests/fakedriver, two devices), which
 * records the work queued on a capturing stream as a graph, queues a copy of it at each
 * launch, checks the memory, libraries and host memory each node uses then, and refuses
 * what the real driver refuses during a capture:
 *  - capture and replay: nothing runs while captured, every launch runs the work again with
 *    the data as it is then, on any stream; a discarded capture; In/Out buffers in
 *    page-locked memory copied at each launch; memory given back during a capture taken
 *    again by the next request of its size;
 *  - updates: in place from a new capture (other scalars, other memory), made again when
 *    the work differs (other launches, kernels or operations: the driver is then not asked
 *    for an update it would refuse), one launch's arguments set (converted, checked);
 *  - a graph destroyed where its context cannot be made current says so;
 *  - refusals with their messages, the capture going on after each: waits, timed launches,
 *    timers, pageable In/Out, host reads of arrays, destroying the stream, a second begin,
 *    an end from another thread; a call the driver refuses invalidates the capture, and the
 *    end says so;
 *  - lifetime: a module, an array, a graph launched by another graph, destroyed while a
 *    graph uses them, are given back only with it (the driver sees no freed memory and no
 *    unloaded library at a launch), and cujit's pool returns to where it was;
 *  - threads and streams: a capture on one stream while another stream works, and another
 *    thread launches; the capture modes; a capture begun through the driver is refused;
 *  - the hot path: no capture running, a launch asks the driver nothing about captures. */
#include <pthread.h>

#include "testutil.h"
#include "cujit_array.h"
#include "fakedriver/checkdriver.h"

static checkdriver_api cd;
static cujit_module *mod;
static cujit_function *step, *pair;
static CUstream s1, s2;

static const char kSrc[] = "__global__ void step(float *x, int n, float f) {}\n"
                           "__global__ void pair(float *out, const float *in, int n) {}\n"
                           "__global__ void other(float *x) {}\n";

static int setup(void **state) {
  int n = 0;
  (void)state;
  if (cujit_device_get_count(&n) != CUJIT_OK || n != 2) return -1;
  if (checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) != 0) return -1;
  if (cujit_module_from_source(&mod, kSrc, "graph.cu", NULL) != CUJIT_OK) return -1;
  if (cujit_module_get_function(mod, "step", &step) != CUJIT_OK ||
      cujit_module_get_function(mod, "pair", &pair) != CUJIT_OK)
    return -1;
  return cujit_stream_create(&s1) == CUJIT_OK && cujit_stream_create(&s2) == CUJIT_OK ? 0 : -1;
}

static int teardown(void **state) {
  char report[4096];
  (void)state;
  cujit_stream_destroy(s1);
  cujit_stream_destroy(s2);
  cujit_module_destroy(mod);
  if (cd.violations() == 0) return 0;
  cd.report(report, sizeof report);
  printf("violations:\n%s", report);
  return -1;
}

/* Fails the test, with the driver's report, when it saw a violation. */
static void no_violations(void) {
  char report[4096];
  if (cd.violations() == 0) return;
  cd.report(report, sizeof report);
  fail_msg("the fake driver saw violations:\n%s", report);
}

static cujit_launch_options on(CUstream s) {
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  o.stream = s;
  return o;
}

/* Asserts that the last launch's third parameter (step's f) was f. */
static void last_f(float f) {
  unsigned char params[64];
  float got;
  size_t off = 0;
  assert_true(cd.last_params(params, sizeof params) > 0);
  assert_ok(cujit_function_get_param_info(step, 2, &off, NULL));
  memcpy(&got, params + off, sizeof got);
  if (got != f) fail_msg("the launch received f = %g, wanted %g", got, f);
}

/* The work captured does not run; each launch of the graph runs it again, with the data as
 * it is at that launch, on whichever stream. */
static void a_graph_replays_its_work(void **state) {
  cujit_launch_options o = on(s1);
  CUdeviceptr src, dst;
  cujit_graph *g = NULL;
  unsigned long before;
  int in[4] = {1, 2, 3, 4}, out[4], round;
  (void)state;
  assert_ok(cujit_mem_alloc(&src, sizeof in));
  assert_ok(cujit_mem_alloc(&dst, sizeof in));
  assert_ok(cujit_mem_copy_htod(src, in, sizeof in));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  before = cd.pending();
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(32), &o, dst, 4, 1.5f));
  assert_ok(cujit_mem_copy_dtod_async(dst, src, sizeof in, s1));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(32), &o, dst, 4, 2.5f));
  assert_int_equal(cd.pending(), before); /* recorded, not queued */
  assert_ok(cujit_graph_end(s1, &g));
  assert_int_equal(cujit_graph_launch_count(g), 2);
  for (round = 0; round < 3; round++) {
    in[0] = 100 + round;
    assert_ok(cujit_mem_copy_htod(src, in, sizeof in));
    before = cd.pending();
    assert_ok(cujit_graph_launch(g, round == 1 ? s2 : s1));
    assert_int_equal(cd.pending() - before, 3); /* its three nodes */
    last_f(2.5f);
    assert_ok(cujit_stream_synchronize(round == 1 ? s2 : s1));
    assert_ok(cujit_mem_copy_dtoh(out, dst, sizeof out));
    assert_int_equal(out[0], 100 + round);
  }
  cujit_graph_destroy(g);
  cujit_graph_destroy(NULL);
  assert_ok(cujit_mem_free(src));
  assert_ok(cujit_mem_free(dst));
  no_violations();
}

/* A capture ended without a graph is dropped; a handle is refused once destroyed. */
static void a_capture_can_be_discarded(void **state) {
  cujit_launch_options o = on(s1);
  CUdeviceptr x;
  cujit_graph *g = NULL;
  unsigned long before;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  before = cd.pending();
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_THREAD_LOCAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 1, 1.0f));
  assert_ok(cujit_graph_end(s1, NULL));
  assert_int_equal(cd.pending(), before);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_RELAXED));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_graph_launch(g, s1)); /* empty: nothing to run */
  cujit_graph_destroy(g);
  assert_status_detail(cujit_graph_launch(g, s1), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_graph_launch: graph is not a live graph");
  cujit_graph_destroy(g); /* a second destroy frees nothing */
  assert_true(strstr(cujit_last_error(), "not a live graph") != NULL);
  assert_int_equal(cujit_graph_launch_count(g), 0);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* In/Out buffers of page-locked memory: the copies are the graph's, made at each launch.
 * The first launch's device memory, given back, is taken again by the second (same size,
 * same stream, same capture): what the first copied in, the second copies out. */
static void in_out_buffers_are_copied_at_each_launch(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = NULL;
  int *a, *b, i, in_place = 0;
  size_t in_use = 0, base = 0;
  (void)state;
  assert_ok(cujit_host_alloc((void **)&a, 64 * sizeof(int)));
  assert_ok(cujit_host_alloc((void **)&b, 64 * sizeof(int)));
  assert_ok(cujit_mem_pool_get_usage(&base, NULL));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(64), &o,
                            cujit_inout(a, 64 * sizeof(int)), 64, 1.0f));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(64), &o, cujit_out(b, 64 * sizeof(int)),
                            64, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_mem_pool_get_usage(&in_use, NULL));
  assert_true(in_use >= base + 64 * sizeof(int)); /* held by the graph */
  for (i = 0; i < 64; i++) a[i] = 7 * i, b[i] = -1;
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_stream_synchronize(s1));
  for (i = 0; i < 64; i++) assert_int_equal(b[i], 7 * i);
  a[5] = 12345;
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_stream_synchronize(s1));
  assert_int_equal(b[5], 12345);
  /* the same work on other buffers (a and b swapped): updated in place */
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(64), &o,
                            cujit_inout(b, 64 * sizeof(int)), 64, 1.0f));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(64), &o, cujit_out(a, 64 * sizeof(int)),
                            64, 1.0f));
  assert_ok(cujit_graph_update(g, s1, &in_place));
  assert_int_equal(in_place, 1);
  b[7] = 777;
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_stream_synchronize(s1));
  assert_int_equal(a[7], 777);
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_pool_get_usage(&in_use, NULL));
  assert_int_equal(in_use, base);
  assert_ok(cujit_host_free(a));
  assert_ok(cujit_host_free(b));
  no_violations();
}

/* A new capture of the same work with other scalars updates the graph in place; other work
 * makes it again; each launch then runs the new work. */
static void a_graph_is_updated_from_a_new_capture(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = NULL;
  CUdeviceptr x, y;
  unsigned long before, updates;
  int in_place = -1;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_mem_alloc(&y, 64));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 16, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_graph_launch(g, s1));
  last_f(1.0f);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, y, 16, 2.0f));
  updates = cd.calls("cuGraphExecUpdate");
  assert_ok(cujit_graph_update(g, s1, &in_place));
  assert_int_equal(in_place, 1);
  assert_int_equal(cd.calls("cuGraphExecUpdate"), updates + 1);
  assert_ok(cujit_graph_launch(g, s1));
  last_f(2.0f);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL)); /* two launches: other work */
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 16, 3.0f));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, y, 16, 4.0f));
  assert_ok(cujit_graph_update(g, s1, &in_place));
  assert_int_equal(in_place, 0);
  /* the driver is not asked for an update that it would refuse with an error */
  assert_int_equal(cd.calls("cuGraphExecUpdate"), updates + 1);
  assert_int_equal(cujit_graph_launch_count(g), 2);
  before = cd.pending();
  assert_ok(cujit_graph_launch(g, s1));
  assert_int_equal(cd.pending() - before, 2);
  last_f(4.0f);
  assert_ok(cujit_stream_synchronize(s1));
  assert_status_detail(cujit_graph_update(g, s2, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "is not being captured by cujit_graph_begin()");
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(x));
  assert_ok(cujit_mem_free(y));
  no_violations();
}

/* The same launches of the same kernels with other operations around them (an In buffer's
 * copy): the graph is made again, and cuGraphExecUpdate, which would refuse the new graph
 * with an error, is not called; each kernel launched through another handle, likewise. */
static void other_operations_make_the_graph_again(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = NULL;
  CUdeviceptr x;
  float *host;
  unsigned long updates;
  int in_place = -1;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_host_alloc((void **)&host, 64));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 16, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL)); /* a copy in, then the launch */
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, cujit_in(host, 64), 16, 2.0f));
  updates = cd.calls("cuGraphExecUpdate");
  assert_ok(cujit_graph_update(g, s1, &in_place));
  assert_int_equal(in_place, 0);
  assert_int_equal(cd.calls("cuGraphExecUpdate"), updates);
  assert_int_equal(cujit_graph_launch_count(g), 1);
  assert_ok(cujit_graph_launch(g, s1));
  last_f(2.0f);
  assert_ok(cujit_stream_synchronize(s1));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL)); /* one launch, of another kernel */
  assert_ok(CUJIT_LAUNCH_EX(pair, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, x, 16));
  assert_ok(cujit_graph_update(g, s1, &in_place));
  assert_int_equal(in_place, 0);
  assert_int_equal(cd.calls("cuGraphExecUpdate"), updates);
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(x));
  assert_ok(cujit_host_free(host));
  no_violations();
}

/* A graph destroyed on a thread where another context is current, when the driver refuses
 * to make the graph's context current: the destroy says so (it returns nothing: the
 * thread's error detail), and makes no call in the wrong context. */
static void a_graph_whose_context_cannot_be_entered_says_so(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = NULL;
  CUdeviceptr x;
  cujit_status st;
  int said;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 16, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_stream_synchronize(s1));
  assert_ok(cujit_device_set_current(1));
  cd.fail_next("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT, 1);
  cujit_graph_destroy(g);
  st = cujit_last_status();
  said = strstr(cujit_last_error(), "cujit_graph_destroy: the graph's context could not be made "
                                    "current to free it (cuCtxSetCurrent failed: "
                                    "CUDA_ERROR_INVALID_CONTEXT") != NULL;
  if (!said) print_message("%s\n", cujit_last_error());
  assert_ok(cujit_device_set_current(0)); /* the later tests' device, whatever happened */
  assert_int_equal(st, CUJIT_ERROR_DRIVER);
  assert_true(said);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* One launch's arguments set between launches: numbers converted to the parameters'
 * types, checked as a launch checks them. */
static void one_launch_takes_other_arguments(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = NULL;
  CUdeviceptr x;
  float h[4];
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 16, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(CUJIT_GRAPH_SET_ARGS(g, 0, x, 16, 3.5)); /* a double, converted */
  assert_ok(cujit_graph_launch(g, s1));
  last_f(3.5f);
  assert_status_detail(CUJIT_GRAPH_SET_ARGS(g, 1, x, 16, 1.0f), CUJIT_ERROR_INVALID_VALUE,
                       "the graph's capture made 1 kernel launch (0 to 0); 1 is none of them");
  assert_status_detail(CUJIT_GRAPH_SET_ARGS(g, 0, x, 16), CUJIT_ERROR_INVALID_ARGS,
                       "kernel 'step'");
  assert_status_detail(CUJIT_GRAPH_SET_ARGS(g, 0, x, 16.5, 1.0f), CUJIT_ERROR_INVALID_ARGS,
                       "not an integer");
  assert_status_detail(CUJIT_GRAPH_SET_ARGS(g, 0, cujit_inout(h, sizeof h), 16, 1.0f),
                       CUJIT_ERROR_INVALID_ARGS,
                       "its In/Out buffers were fixed when it was captured");
  assert_status_detail(cujit_graph_set_args(g, 0, NULL, 3), CUJIT_ERROR_INVALID_VALUE,
                       "args is NULL");
  assert_ok(cujit_graph_launch(g, s1));
  last_f(3.5f); /* the refused ones changed nothing */
  assert_ok(cujit_stream_synchronize(s1));
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* What a capture cannot hold is refused with its reason, nothing captured, and the capture
 * goes on to a graph that runs. */
static void what_cannot_be_captured_is_refused(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = NULL;
  cujit_timer *t = NULL;
  cujit_array *x = NULL, *ix = NULL, *taken = NULL;
  cujit_reduction *r = NULL;
  int64_t n = 16;
  int close = 0;
  char text[256];
  float pageable[16], elapsed, host[16];
  CUdeviceptr d;
  unsigned long before;
  (void)state;
  assert_ok(cujit_mem_alloc(&d, sizeof pageable));
  assert_ok(cujit_array_zeros(&x, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_zeros(&ix, CUJIT_TYPE_I32, 1, &n));
  assert_ok(cujit_array_set_stream(x, s1));
  assert_ok(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]", "float *x", NULL));
  assert_status_detail(cujit_graph_begin(NULL, CUJIT_CAPTURE_GLOBAL), CUJIT_ERROR_INVALID_VALUE,
                       "the legacy default stream (NULL) and the per-thread one cannot be "
                       "captured");
  assert_status_detail(cujit_graph_begin(s1, (cujit_capture_mode)7), CUJIT_ERROR_INVALID_VALUE,
                       "mode is 7");
  assert_status_detail(cujit_graph_end(s1, &g), CUJIT_ERROR_INVALID_VALUE,
                       "is not being captured by cujit_graph_begin()");
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_status_detail(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL), CUJIT_ERROR_CAPTURE,
                       "is being captured already");
  assert_status_detail(cujit_stream_synchronize(s1), CUJIT_ERROR_CAPTURE,
                       "cujit_stream_synchronize() waits for the stream, but stream");
  assert_true(strstr(cujit_last_error(), "nothing was done, and the capture goes on") != NULL);
  assert_status_detail(cujit_synchronize(), CUJIT_ERROR_CAPTURE,
                       "cujit_synchronize() waits for all work of the current context");
  o.elapsed_ms = &elapsed;
  assert_status_detail(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, d, 1, 1.0f),
                       CUJIT_ERROR_CAPTURE, "a timed launch (elapsed_ms) cannot be captured");
  o.elapsed_ms = NULL;
  assert_status_detail(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o,
                                       cujit_in(pageable, sizeof pageable), 16, 1.0f),
                       CUJIT_ERROR_CAPTURE,
                       "argument 1 of kernel 'step' is an In buffer in pageable host memory, "
                       "which a graph cannot copy when it is launched");
  assert_status_detail(cujit_timer_start(&t, s1), CUJIT_ERROR_CAPTURE,
                       "cujit_timer_start() records an event on the stream");
  assert_status_detail(cujit_array_read(x, host, sizeof host), CUJIT_ERROR_CAPTURE,
                       "copying between an array and host memory waits for the array's stream");
  assert_status_detail(cujit_array_write(x, host, sizeof host), CUJIT_ERROR_CAPTURE,
                       "copying between an array and host memory waits for the array's stream");
  assert_status_detail(cujit_array_reduce_host(CUJIT_REDOP_SUM, x, host, sizeof(float), NULL),
                       CUJIT_ERROR_CAPTURE, "a reduction into host memory waits for its stream");
  assert_status_detail(cujit_array_dot_host(x, x, host, sizeof(float), NULL), CUJIT_ERROR_CAPTURE,
                       "a reduction into host memory waits for its stream");
  assert_status_detail(CUJIT_REDUCTION_HOST(r, host, x), CUJIT_ERROR_CAPTURE,
                       "a reduction into host memory waits for its stream");
  assert_status_detail(cujit_array_allclose(x, x, 0, 0, 0, &close), CUJIT_ERROR_CAPTURE,
                       "cujit_array_allclose() gives its answer in host memory");
  assert_status_detail(cujit_array_allclose_host(x, host, sizeof host, 0, 0, 0, &close),
                       CUJIT_ERROR_CAPTURE, "cujit_array_allclose_host() gives its answer");
  assert_status_detail(cujit_array_format(x, text, sizeof text, NULL), CUJIT_ERROR_CAPTURE,
                       "copying between an array and host memory waits for the array's stream");
  assert_status_detail(cujit_array_take(x, ix, CUJIT_INDEX_RAISE, &taken), CUJIT_ERROR_CAPTURE,
                       "CUJIT_INDEX_RAISE checks the indices by waiting for the array's stream");
  assert_null(taken);
  assert_status_detail(cujit_stream_destroy(s1), CUJIT_ERROR_CAPTURE,
                       "cujit_stream_destroy() destroys the stream");
  before = cd.pending();
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, d, 1, 1.0f));
  assert_int_equal(cd.pending(), before);
  assert_ok(cujit_graph_end(s1, &g));
  assert_int_equal(cujit_graph_launch_count(g), 1);
  assert_ok(cujit_graph_launch(g, s1));
  assert_int_equal(cd.pending() - before, 1);
  assert_ok(cujit_stream_synchronize(s1));
  cujit_graph_destroy(g);
  cujit_array_destroy(x);
  cujit_array_destroy(ix);
  cujit_reduction_destroy(r);
  assert_ok(cujit_mem_free(d));
  no_violations();
}

/* A call the driver itself refuses during a global capture (cuMemAlloc, which cujit makes
 * for cujit_mem_alloc()) fails with CUJIT_ERROR_CAPTURE saying why, and invalidates the
 * capture: its end says so and makes nothing. The same call in relaxed mode works. */
static void a_call_the_driver_refuses_invalidates_the_capture(void **state) {
  cujit_launch_options o = on(s1);
  cujit_graph *g = (cujit_graph *)1;
  CUdeviceptr d = 0, x;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, 1, 1.0f));
  assert_status_detail(cujit_mem_alloc(&d, 64), CUJIT_ERROR_CAPTURE,
                       "cuMemAlloc failed: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
  assert_true(strstr(cujit_last_error(), "make it before cujit_graph_begin()") != NULL);
  assert_status_detail(cujit_graph_end(s1, &g), CUJIT_ERROR_CAPTURE,
                       "was invalidated by a call made during it");
  assert_null(g);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_RELAXED));
  assert_ok(cujit_mem_alloc(&d, 64));
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, d, 1, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_stream_synchronize(s1));
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(d));
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* A module destroyed while a graph launches its kernels stays loaded until the graph is
 * destroyed; its handle is refused at once. */
static void a_module_lives_as_long_as_its_graphs(void **state) {
  cujit_launch_options o = on(s1);
  cujit_module *m = NULL;
  cujit_function *other = NULL;
  cujit_graph *g = NULL;
  CUdeviceptr x;
  unsigned long libs;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_module_from_source(&m, "__global__ void other2(float *x) {}\n", "m.cu", NULL));
  assert_ok(cujit_module_get_function(m, "other2", &other));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(other, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x));
  assert_ok(cujit_graph_end(s1, &g));
  libs = cd.libraries();
  cujit_module_destroy(m);
  assert_null(cujit_module_name(m));      /* the handle is gone */
  assert_int_equal(cd.libraries(), libs); /* the code is not */
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_graph_launch(g, s2));
  assert_ok(cujit_stream_synchronize(s2));
  cujit_graph_destroy(g);
  assert_int_equal(cd.libraries(), libs - 1);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* Arrays destroyed while a graph uses them (one made before the capture, one made and
 * destroyed during it, one made during it and kept) give their memory back only when the
 * graph is destroyed; the pool's memory in use returns to where it was. */
static void arrays_live_as_long_as_their_graphs(void **state) {
  cujit_graph *g = NULL;
  cujit_array *x = NULL, *t = NULL, *y = NULL;
  int64_t n = 32768; /* 128 KiB: pool memory, which is freed, not a small block */
  size_t base = 0, in_use = 0;
  (void)state;
  assert_ok(cujit_array_zeros(&x, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_set_stream(x, s1));
  assert_ok(cujit_stream_synchronize(NULL));
  assert_ok(cujit_mem_pool_get_usage(&base, NULL));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_MUL, x, 2, 0, &t)); /* on x's stream */
  assert_ok(cujit_array_binary_scalar(CUJIT_BINOP_ADD, t, 1, 0, &y));
  cujit_array_destroy(t);
  t = NULL;
  assert_ok(cujit_array_copy(y, &t)); /* a device copy of the graph's */
  assert_ok(cujit_graph_end(s1, &g));
  cujit_array_destroy(x);
  cujit_array_destroy(y);
  cujit_array_destroy(t);
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_graph_launch(g, s2));
  assert_ok(cujit_stream_synchronize(s2));
  no_violations();
  assert_ok(cujit_mem_pool_get_usage(&in_use, NULL));
  assert_true(in_use > base);
  cujit_graph_destroy(g);
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_pool_get_usage(&in_use, NULL));
  assert_int_equal(in_use, base - (size_t)n * sizeof(float));
  no_violations();
}

/* A graph launched by another capture lives, hidden, until that capture's graph is
 * destroyed, and so do the module and memory it uses. */
static void a_graph_launched_by_a_graph_is_held(void **state) {
  cujit_launch_options o = on(s1);
  cujit_module *m = NULL;
  cujit_function *other = NULL;
  cujit_graph *inner = NULL, *outer = NULL;
  CUdeviceptr x;
  unsigned long libs, before;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_module_from_source(&m, "__global__ void other3(float *x) {}\n", "m3.cu", NULL));
  assert_ok(cujit_module_get_function(m, "other3", &other));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(CUJIT_LAUNCH_EX(other, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x));
  assert_ok(cujit_graph_end(s1, &inner));
  assert_ok(cujit_graph_begin(s2, CUJIT_CAPTURE_GLOBAL));
  assert_ok(cujit_graph_launch(inner, s2));
  assert_ok(cujit_graph_launch(inner, s2));
  assert_ok(cujit_graph_end(s2, &outer));
  libs = cd.libraries();
  cujit_graph_destroy(inner);
  cujit_module_destroy(m);
  before = cd.pending();
  assert_ok(cujit_graph_launch(outer, s1));
  assert_int_equal(cd.pending() - before, 2);
  assert_ok(cujit_stream_synchronize(s1));
  assert_int_equal(cd.libraries(), libs);
  cujit_graph_destroy(outer);
  assert_int_equal(cd.libraries(), libs - 1);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* ---- threads and streams ---- */

typedef struct worker {
  CUstream stream;
  int launches;
  cujit_status st;
  CUdeviceptr x;
} worker;

static void *launch_many(void *arg) {
  worker *w = arg;
  cujit_launch_options o = on(w->stream);
  int i;
  for (i = 0; i < w->launches && w->st == CUJIT_OK; i++)
    w->st = CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, w->x, i, 1.0f);
  if (w->st == CUJIT_OK) w->st = cujit_stream_synchronize(w->stream);
  return NULL;
}

/* While one stream is captured, another stream works as ever, on this thread and on
 * another, and none of that work enters the graph. */
static void another_stream_works_during_a_capture(void **state) {
  cujit_launch_options o1 = on(s1), o2 = on(s2);
  worker w = {NULL, 200, CUJIT_OK, 0};
  cujit_graph *g = NULL;
  pthread_t th;
  CUstream s3;
  int in[4] = {9, 8, 7, 6}, out[4] = {0};
  CUdeviceptr src, dst, x; /* x: this thread's; w.x the worker's, on its own stream */
  unsigned long before;
  (void)state;
  assert_ok(cujit_stream_create(&s3));
  assert_ok(cujit_mem_alloc(&w.x, 64));
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_mem_alloc(&src, sizeof in));
  assert_ok(cujit_mem_alloc(&dst, sizeof in));
  assert_ok(cujit_mem_copy_htod(src, in, sizeof in));
  w.stream = s3;
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_int_equal(pthread_create(&th, NULL, launch_many, &w), 0);
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o1, x, 1, 1.0f));
  assert_ok(cujit_mem_copy_dtod_async(dst, src, sizeof in, s2)); /* runs now */
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o2, x, 2, 1.0f));
  assert_ok(cujit_stream_synchronize(s2));
  assert_ok(cujit_mem_copy_dtoh(out, dst, sizeof out));
  assert_int_equal(out[3], 6);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_ok(w.st);
  assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o1, x, 3, 1.0f));
  assert_ok(cujit_graph_end(s1, &g));
  assert_int_equal(cujit_graph_launch_count(g), 2);
  before = cd.pending();
  assert_ok(cujit_graph_launch(g, s1));
  assert_int_equal(cd.pending() - before, 2);
  assert_ok(cujit_stream_synchronize(s1));
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(w.x));
  assert_ok(cujit_mem_free(x));
  assert_ok(cujit_mem_free(src));
  assert_ok(cujit_mem_free(dst));
  assert_ok(cujit_stream_destroy(s3));
  no_violations();
}

typedef struct ender {
  CUstream stream;
  cujit_status st;
  char detail[512];
  CUdeviceptr d;
} ender;

static void *end_elsewhere(void *arg) {
  ender *e = arg;
  cujit_graph *g = NULL;
  e->st = cujit_graph_end(e->stream, &g);
  snprintf(e->detail, sizeof e->detail, "%s", cujit_last_error());
  cujit_graph_destroy(g);
  return NULL;
}

static void *alloc_elsewhere(void *arg) {
  ender *e = arg;
  e->st = cujit_mem_alloc(&e->d, 64);
  snprintf(e->detail, sizeof e->detail, "%s", cujit_last_error());
  return NULL;
}

/* A global or thread-local capture ends on its own thread; a relaxed one on any. Another
 * thread's allocation is refused during a global capture (and invalidates it), not during
 * a thread-local one. */
static void capture_modes_and_threads(void **state) {
  cujit_graph *g = NULL;
  ender e = {NULL, CUJIT_OK, "", 0};
  pthread_t th;
  (void)state;
  e.stream = s1;
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_int_equal(pthread_create(&th, NULL, end_elsewhere, &e), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(e.st, CUJIT_ERROR_CAPTURE);
  assert_non_null(strstr(e.detail, "was begun by another thread in global mode"));
  assert_ok(cujit_graph_end(s1, &g));
  cujit_graph_destroy(g);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_THREAD_LOCAL));
  assert_int_equal(pthread_create(&th, NULL, end_elsewhere, &e), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(e.st, CUJIT_ERROR_CAPTURE);
  assert_non_null(strstr(e.detail, "was begun by another thread in thread-local mode"));
  assert_ok(cujit_graph_end(s1, NULL));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_RELAXED));
  assert_int_equal(pthread_create(&th, NULL, end_elsewhere, &e), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_ok(e.st);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_THREAD_LOCAL));
  assert_int_equal(pthread_create(&th, NULL, alloc_elsewhere, &e), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_ok(e.st);
  assert_ok(cujit_graph_end(s1, &g));
  assert_ok(cujit_mem_free(e.d));
  cujit_graph_destroy(g);
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_int_equal(pthread_create(&th, NULL, alloc_elsewhere, &e), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(e.st, CUJIT_ERROR_CAPTURE);
  assert_status_detail(cujit_graph_end(s1, &g), CUJIT_ERROR_CAPTURE, "was invalidated");
  no_violations();
}

/* A kernel's first launch during a global capture loads its module (in the relaxed mode,
 * which the driver allows) and is captured. */
static void a_first_launch_loads_during_a_capture(void **state) {
  cujit_launch_options o = on(s1);
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  cujit_graph *g = NULL;
  CUdeviceptr x;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  assert_ok(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL));
  assert_ok(cujit_module_from_source(&m, "__global__ void late(float *x) {}\n", "late.cu", NULL));
  assert_ok(cujit_module_get_function(m, "late", &f));
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x));
  assert_ok(cujit_graph_end(s1, &g));
  cujit_module_destroy(m);
  assert_ok(cujit_graph_launch(g, s1));
  assert_ok(cujit_stream_synchronize(s1));
  cujit_graph_destroy(g);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

/* A capture begun through the driver is not cujit's to begin again or to end. */
static void a_capture_begun_through_the_driver_is_refused(void **state) {
  CUresult (*begin)(CUstream, CUstreamCaptureMode) = NULL;
  CUresult (*end)(CUstream, CUgraph *) = NULL;
  CUresult (*drop)(CUgraph) = NULL;
  CUgraph graph = NULL;
  cujit_graph *g = NULL;
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuStreamBeginCapture", (void **)&begin));
  assert_ok(cujit_driver_get_symbol("cuStreamEndCapture", (void **)&end));
  assert_ok(cujit_driver_get_symbol("cuGraphDestroy", (void **)&drop));
  assert_int_equal(begin(s1, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  assert_status_detail(cujit_graph_begin(s1, CUJIT_CAPTURE_GLOBAL), CUJIT_ERROR_CAPTURE,
                       "by a capture begun through the driver (cuStreamBeginCapture)");
  assert_status_detail(cujit_graph_end(s1, &g), CUJIT_ERROR_INVALID_VALUE,
                       "is not being captured by cujit_graph_begin()");
  assert_int_equal(end(s1, &graph), CUDA_SUCCESS);
  assert_int_equal(drop(graph), CUDA_SUCCESS);
  no_violations();
}

/* With no capture running, launches, allocations and frees never ask the driver whether
 * a stream is being captured. */
static void the_hot_path_asks_the_driver_nothing(void **state) {
  cujit_launch_options o = on(s1);
  cujit_array *a = NULL;
  CUdeviceptr x;
  unsigned long asked;
  int64_t n = 64;
  int i;
  (void)state;
  assert_ok(cujit_mem_alloc(&x, 64));
  asked = cd.capture_queries();
  for (i = 0; i < 100; i++)
    assert_ok(CUJIT_LAUNCH_EX(step, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, x, i, 1.0f));
  assert_ok(cujit_array_zeros(&a, CUJIT_TYPE_F32, 1, &n));
  assert_ok(cujit_array_set_stream(a, s1));
  cujit_array_destroy(a);
  assert_ok(cujit_stream_synchronize(s1));
  assert_int_equal(cd.capture_queries(), asked);
  assert_ok(cujit_mem_free(x));
  no_violations();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_graph_replays_its_work),
      cmocka_unit_test(a_capture_can_be_discarded),
      cmocka_unit_test(in_out_buffers_are_copied_at_each_launch),
      cmocka_unit_test(a_graph_is_updated_from_a_new_capture),
      cmocka_unit_test(other_operations_make_the_graph_again),
      cmocka_unit_test(a_graph_whose_context_cannot_be_entered_says_so),
      cmocka_unit_test(one_launch_takes_other_arguments),
      cmocka_unit_test(what_cannot_be_captured_is_refused),
      cmocka_unit_test(a_call_the_driver_refuses_invalidates_the_capture),
      cmocka_unit_test(a_module_lives_as_long_as_its_graphs),
      cmocka_unit_test(arrays_live_as_long_as_their_graphs),
      cmocka_unit_test(a_graph_launched_by_a_graph_is_held),
      cmocka_unit_test(another_stream_works_during_a_capture),
      cmocka_unit_test(capture_modes_and_threads),
      cmocka_unit_test(a_first_launch_loads_during_a_capture),
      cmocka_unit_test(a_capture_begun_through_the_driver_is_refused),
      cmocka_unit_test(the_hot_path_asks_the_driver_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
