/* test_cancel - a compile stopped by its time limit or its cancel hook: the status and
 * message say which, nothing is cached, the key's lock is let go, and the next compile of
 * the same source compiles; a hook that lets it run changes nothing, and neither the limit
 * nor the hook is part of the cache key.
 *
 * NVRTC checks only between its phases, and it parses the source in one of them, so the
 * kernel here is cheap to parse and dear to optimise (an unrolled loop of math calls),
 * which leaves many checks in a compile of a second or more. */
#include <math.h>
#include <time.h>

#include "cachetest.h"
#include "dl/nvrtc.h" /* internal: the entry point table, to play an older NVRTC */

static const char kHeavy[] = "template <int N> __global__ void heavy(float *x) {\n"
                             "  float a = x[threadIdx.x], b = x[threadIdx.x + 1];\n"
                             "#pragma unroll\n"
                             "  for (int i = 0; i < N; i++) {\n"
                             "    a = sinf(a * b + i) + cosf(b - a * i);\n"
                             "    b = expf(a * 0.001f) * b + (float)i;\n"
                             "  }\n"
                             "  x[threadIdx.x] = a + b;\n"
                             "}\n"
                             "template __global__ void heavy<60>(float *);\n"
                             "template __global__ void heavy<61>(float *);\n";

#define NVRTC_CANCELLED 16 /* NVRTC_ERROR_CANCELLED */

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A hook that counts its calls, notes the threads it ran on, and asks to stop from call
 * `stop_at` on (0: never). */
typedef struct hook {
  int calls;
  int stop_at;
  int other_thread;
  pthread_t caller;
} hook;

static int hook_fn(void *user) {
  hook *h = user;
  h->calls++;
  if (!pthread_equal(pthread_self(), h->caller)) h->other_thread = 1;
  return h->stop_at && h->calls >= h->stop_at;
}

static cujit_options heavy_options(hook *h) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  o.arch = "compute_75";
  if (h) {
    memset(h, 0, sizeof *h);
    h->caller = pthread_self();
    o.cancel = hook_fn;
    o.cancel_user = h;
  }
  return o;
}

/* Compiles kHeavy; *elapsed gets the seconds it took. */
static cujit_status compile_heavy(const cujit_options *o, double *elapsed) {
  cujit_module *m = NULL;
  double t = seconds();
  cujit_status st = cujit_module_from_source(&m, kHeavy, "heavy.cu", o);
  *elapsed = seconds() - t;
  if (st == CUJIT_OK)
    assert_non_null(m);
  else
    assert_null(m);
  cujit_module_destroy(m);
  return st;
}

static void nothing_cached(void) {
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  assert_int_equal(count_files(cache, ".lock"), 0); /* the key's lock was let go */
}

static void a_time_limit_stops_the_compile(void **state) {
  cujit_options o = heavy_options(NULL);
  hook h;
  uint64_t before;
  double stopped, full;
  int full_checks;
  (void)state;
  o.time_limit_s = 0.05;
  before = cj_nvrtc_programs_created();
  assert_status_detail(compile_heavy(&o, &stopped), CUJIT_ERROR_CANCELLED,
                       "compiling 'heavy.cu' was stopped: its time limit of 0.05 s passed "
                       "after ");
  assert_int_equal(cujit_last_nvrtc_result(), NVRTC_CANCELLED);
  assert_int_equal(cj_nvrtc_programs_created() - before, 1);
  nothing_cached();
  /* the same source again, without a limit: compiled afresh, then cached. The hook only
   * counts NVRTC's checks, to compare with a limited compile's. */
  o = heavy_options(&h);
  before = cj_nvrtc_programs_created();
  assert_ok(compile_heavy(&o, &full));
  assert_int_equal(cj_nvrtc_programs_created() - before, 1);
  assert_int_equal(find_entries(cache, NULL, 0), 1);
  print_message("stopped after %.3f s; a whole compile took %.3f s and %d checks\n", stopped, full,
                h.calls);
  full_checks = h.calls;
  assert_true(full_checks > 2); /* else this kernel would not test stopping in the middle */
  assert_true(stopped < full);
  /* stopped at one of the later checks: with the hook, fewer of them were made */
  o = heavy_options(&h);
  o.time_limit_s = 0.05;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_int_equal(compile_heavy(&o, &stopped), CUJIT_ERROR_CANCELLED);
  assert_int_equal(h.other_thread, 0);
  print_message("with the limit: %d checks\n", h.calls);
  assert_true(h.calls < full_checks);
}

static void a_cancel_hook_stops_the_compile(void **state) {
  cujit_options o;
  hook h;
  uint64_t before;
  double t;
  (void)state;
  o = heavy_options(&h);
  h.stop_at = 2; /* lets the first check pass */
  before = cj_nvrtc_programs_created();
  assert_status_detail(compile_heavy(&o, &t), CUJIT_ERROR_CANCELLED,
                       "compiling 'heavy.cu' was cancelled: the cancel hook asked to stop "
                       "after ");
  assert_non_null(strstr(cujit_last_error(), "nothing was cached"));
  assert_int_equal(cujit_last_nvrtc_result(), NVRTC_CANCELLED);
  assert_int_equal(h.calls, 2); /* not asked again once it said stop */
  assert_int_equal(h.other_thread, 0);
  assert_int_equal(cj_nvrtc_programs_created() - before, 1);
  nothing_cached();
  /* a hook that lets it run: an ordinary compile, cached */
  o = heavy_options(&h);
  assert_int_equal(compile_count(kHeavy, "heavy.cu", &o), 1);
  assert_true(h.calls > 2);
  assert_int_equal(find_entries(cache, NULL, 0), 1);
}

/* What is checked is the key, not how far a compile gets: a small kernel will do. */
static void neither_is_in_the_cache_key(void **state) {
  cujit_options o, plain = heavy_options(NULL);
  cujit_module *m = NULL;
  hook h;
  (void)state;
  /* a hook that stops at once and a limit that has passed: a miss is stopped */
  o = heavy_options(&h);
  h.stop_at = 1;
  o.time_limit_s = 1e-9;
  assert_int_equal(cujit_module_from_source(&m, kKernel, "k.cu", &o), CUJIT_ERROR_CANCELLED);
  assert_true(h.calls > 0);
  assert_int_equal(compile_count(kKernel, "k.cu", &plain), 1);
  /* a cache hit is never limited nor asks the hook */
  o = heavy_options(&h);
  h.stop_at = 1;
  o.time_limit_s = 1e-9;
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 0);
  cj_memcache_clear(); /* and from disk */
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 0);
  assert_int_equal(h.calls, 0);
}

static void a_hook_sees_compile_errors_through(void **state) {
  cujit_options o;
  hook h;
  cujit_module *m = NULL;
  (void)state;
  o = heavy_options(&h);
  assert_status_detail(cujit_module_from_source(&m, "__global__ void k() { nope; }\n", "bad.cu",
                                                &o),
                       CUJIT_ERROR_COMPILE, "nope");
  assert_null(m);
}

static void a_bad_limit_is_refused(void **state) {
  cujit_options o = heavy_options(NULL);
  cujit_module *m = (cujit_module *)1;
  uint64_t before = cj_nvrtc_programs_created();
  (void)state;
  o.time_limit_s = -1;
  assert_status_detail(cujit_module_from_source(&m, kHeavy, "heavy.cu", &o),
                       CUJIT_ERROR_INVALID_OPTION, "time_limit_s is -1; give the seconds");
  assert_null(m);
  o.time_limit_s = NAN;
  assert_status_detail(cujit_module_from_source(&m, kHeavy, "heavy.cu", &o),
                       CUJIT_ERROR_INVALID_OPTION, "time_limit_s is nan");
  assert_int_equal(cj_nvrtc_programs_created(), before);
}

/* An NVRTC without nvrtcSetFlowCallback cannot stop a compile: it compiles to the end,
 * with one warning per process. */
static void an_nvrtc_that_cannot_stop_compiles_to_the_end(void **state) {
  __typeof__(cj_nv.nvrtcSetFlowCallback) saved;
  cujit_options o;
  hook h;
  (void)state;
  assert_ok(cj_libnvrtc_load());
  saved = cj_nv.nvrtcSetFlowCallback;
  cj_nv.nvrtcSetFlowCallback = NULL;
  o = heavy_options(&h);
  h.stop_at = 1;
  o.time_limit_s = 1e-9;
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_int_equal(compile_count(kKernel, "old.cu", &o), 1);
  assert_int_equal(h.calls, 0);
  assert_logged("this NVRTC cannot stop a compile");
  log_capture(CUJIT_LOG_WARN);
  assert_int_equal(compile_count(kKernel, "old.cu", &o), 1);
  assert_not_logged("cannot stop");
  cj_nv.nvrtcSetFlowCallback = saved;
}

static void the_status_has_a_name(void **state) {
  (void)state;
  assert_string_equal(cujit_status_name(CUJIT_ERROR_CANCELLED), "CUJIT_ERROR_CANCELLED");
  assert_string_equal(cujit_status_string(CUJIT_ERROR_CANCELLED),
                      "the compile was cancelled or ran out of time");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(a_time_limit_stops_the_compile),
      CACHE_TEST(a_cancel_hook_stops_the_compile),
      CACHE_TEST(neither_is_in_the_cache_key),
      CACHE_TEST(a_hook_sees_compile_errors_through),
      CACHE_TEST(a_bad_limit_is_refused),
      CACHE_TEST(an_nvrtc_that_cannot_stop_compiles_to_the_end),
      cmocka_unit_test(the_status_has_a_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
