/* test_gpu_timer - timers of the work on a stream, on a GPU: a kernel that spins for a
 * known number of clock cycles takes a plausible time (between what the fastest and the
 * slowest clock a GPU runs at would give), twice the cycles take longer, and a timer
 * started again times the new work; launches on a stream of the program's, array
 * operations on their array's stream, generated-kernel calls and copies are timed; a timer
 * stopped twice, or destroyed, is refused; so are a stream and a timer of another context
 * than the current one. */
#include "gputest.h"
#include "cujit_array.h"

static const char kSrc[] = "__global__ void spin(long long cycles) {\n"
                           "  long long start = clock64();\n"
                           "  while (clock64() - start < cycles) {}\n"
                           "}\n";

enum { CYCLES = 50000000 }; /* 12.5 ms at 4 GHz, 500 ms at 100 MHz */

/* The milliseconds `cycles` take at 4 GHz and at 100 MHz: far beyond any GPU's clock. */
static void assert_plausible(double ms, double cycles) {
  if (!(ms >= cycles / 4e6 && ms <= cycles / 1e5))
    fail_msg("%lld cycles took %g ms, outside %g to %g ms", (long long)cycles, ms, cycles / 4e6,
             cycles / 1e5);
}

static double time_spin(cujit_timer **t, CUstream stream, long long cycles) {
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  cujit_function *spin = gpu_function(mod, "spin"); /* loaded before the timer starts */
  double ms = -1;
  o.stream = stream;
  assert_ok(cujit_timer_start(t, stream));
  assert_ok(CUJIT_LAUNCH_EX(spin, CUJIT_DIM3(1), CUJIT_DIM3(1), &o, cujit_i64(cycles)));
  assert_ok(cujit_timer_stop(*t, &ms));
  return ms;
}

static void spin_takes_a_plausible_time(void **state) {
  cujit_timer *t = NULL;
  CUstream s = NULL;
  double one, two;
  (void)state;
  one = time_spin(&t, NULL, CYCLES);
  assert_non_null(t);
  assert_plausible(one, CYCLES);
  /* started again, on a stream of the program's */
  assert_ok(cujit_stream_create(&s));
  two = time_spin(&t, s, 2LL * CYCLES);
  assert_plausible(two, 2.0 * CYCLES);
  if (!(two > one)) fail_msg("twice the cycles took %g ms, once %g ms", two, one);
  assert_ok(cujit_stream_destroy(s));
  cujit_timer_destroy(t);
}

/* Array operations on their array's stream, a generated kernel and a copy: each timed
 * above zero. */
static void arrays_generated_kernels_and_copies(void **state) {
  const int64_t n = 1 << 24;
  cujit_array *a = NULL, *b = NULL;
  cujit_elementwise *twice = NULL;
  cujit_timer *t = NULL;
  CUdeviceptr d = 0;
  void *host = calloc(1, (size_t)n * 4);
  double ms = 0;
  (void)state;
  assert_non_null(host);
  assert_ok(cujit_array_random(&a, CUJIT_TYPE_F32, 1, &n, CUJIT_RANDOM_UNIFORM, 1));
  assert_ok(cujit_array_unary(CUJIT_UNOP_SIN, a, &b)); /* compiled before it is timed */
  assert_ok(cujit_timer_start(&t, cujit_array_stream(a)));
  assert_ok(cujit_array_unary(CUJIT_UNOP_SIN, a, &b));
  assert_ok(cujit_timer_stop(t, &ms));
  assert_true(ms > 0);
  assert_ok(cujit_elementwise_create(&twice, "float *x", "x[i] *= 2", NULL));
  assert_ok(cujit_timer_start(&t, cujit_array_stream(b)));
  assert_ok(CUJIT_ELEMENTWISE(twice, b));
  assert_ok(cujit_timer_stop(t, &ms));
  assert_true(ms > 0);
  assert_ok(cujit_mem_alloc(&d, (size_t)n * 4));
  assert_ok(cujit_timer_start(&t, NULL));
  assert_ok(cujit_mem_copy_htod(d, host, (size_t)n * 4));
  assert_ok(cujit_timer_stop(t, &ms));
  assert_true(ms > 0);
  assert_ok(cujit_mem_free(d));
  cujit_elementwise_destroy(twice);
  cujit_array_destroy(a);
  cujit_array_destroy(b);
  cujit_timer_destroy(t);
  free(host);
}

static void order_is_checked(void **state) {
  cujit_timer *t = NULL, *kept;
  double ms = -1;
  (void)state;
  assert_ok(cujit_timer_start(&t, NULL));
  assert_ok(cujit_timer_stop(t, &ms));
  assert_true(ms >= 0);
  assert_status_detail(cujit_timer_stop(t, &ms), CUJIT_ERROR_INVALID_VALUE,
                       "the timer is stopped already; start it again");
  assert_true(ms == 0);
  assert_ok(cujit_timer_start(&t, NULL)); /* again: the same timer */
  assert_ok(cujit_timer_stop(t, &ms));
  kept = t;
  cujit_timer_destroy(t);
  assert_status_detail(cujit_timer_stop(kept, &ms), CUJIT_ERROR_INVALID_VALUE,
                       "the timer is not a live timer");
  assert_status_detail(cujit_timer_start(&t, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "*timer is not a live timer");
  t = NULL;
  assert_ok(cujit_timer_start(&t, NULL)); /* a new one: another handle */
  assert_ptr_not_equal(t, kept);
  cujit_timer_destroy(t);
  cujit_timer_destroy(t); /* twice: the second frees nothing */
}

typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*ctx_set_fn)(CUcontext);

/* A stream of another context, and a timer of another context, are refused. */
static void other_contexts_are_refused(void **state) {
  void *get = NULL, *set = NULL;
  CUcontext primary = NULL, own;
  CUstream other = NULL;
  cujit_timer *t = NULL, *theirs = NULL;
  double ms;
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuCtxGetCurrent", &get));
  assert_ok(cujit_driver_get_symbol("cuCtxSetCurrent", &set));
  assert_ok(cujit_timer_start(&t, NULL)); /* on the primary context cujit made current */
  assert_int_equal(((ctx_get_fn)get)(&primary), CUDA_SUCCESS);
  assert_non_null(primary);
  own = gpu_own_context(); /* now current */
  assert_ok(cujit_stream_create(&other));
  assert_status_detail(cujit_timer_stop(t, &ms), CUJIT_ERROR_INVALID_VALUE,
                       "the timer was started on another context");
  assert_status_detail(cujit_timer_start(&t, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "the timer was made on another context");
  assert_ok(cujit_timer_start(&theirs, other)); /* its own context's timer and stream */
  assert_ok(cujit_timer_stop(theirs, &ms));
  assert_int_equal(((ctx_set_fn)set)(primary), CUDA_SUCCESS);
  assert_status_detail(cujit_timer_start(&theirs, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "the timer was made on another context");
  cujit_timer_destroy(theirs);
  theirs = NULL;
  assert_status_detail(cujit_timer_start(&theirs, other), CUJIT_ERROR_INVALID_VALUE,
                       "the stream belongs to another context");
  assert_null(theirs);
  assert_ok(cujit_timer_stop(t, &ms)); /* back on its context, the timer stops */
  assert_int_equal(((ctx_set_fn)set)(own), CUDA_SUCCESS);
  assert_ok(cujit_stream_destroy(other));
  assert_int_equal(((ctx_set_fn)set)(primary), CUDA_SUCCESS);
  gpu_destroy_context(own);
  cujit_timer_destroy(t);
}

GPU_GROUP_MAIN(kSrc, "spin.cu", NULL, cmocka_unit_test(spin_takes_a_plausible_time),
               cmocka_unit_test(arrays_generated_kernels_and_copies),
               cmocka_unit_test(order_is_checked), cmocka_unit_test(other_contexts_are_refused))
