/* test_gpu_batch - kernels compiled at once (a batch and asynchronous jobs, some of them
 * in worker processes, some certainly) for the device's own target run and compute what
 * they should. */
#include <time.h>

#include "testutil.h"

#define N 6
#define THREADS 64

/* Kernel i adds i + 1 to every element. */
static void kernel_source(int i, char *out, size_t size) {
  snprintf(out, size, "extern \"C\" __global__ void add%d(float *x) { x[threadIdx.x] += %d.0f; }\n",
           i, i + 1);
}

/* Launches add<i> of m on THREADS floats of `start` and checks each became start + i + 1. */
static void check_kernel(cujit_module *m, int i, float start) {
  char name[32];
  float x[THREADS];
  cujit_function *fn = NULL;
  int k;
  snprintf(name, sizeof name, "add%d", i);
  for (k = 0; k < THREADS; k++) x[k] = start + (float)k;
  assert_ok(cujit_module_get_function(m, name, &fn));
  assert_ok(CUJIT_LAUNCH(fn, CUJIT_DIM3(1), CUJIT_DIM3(THREADS), cujit_inout(x, sizeof x)));
  for (k = 0; k < THREADS; k++) assert_true(x[k] == start + (float)k + (float)(i + 1));
}

static void a_batch_runs_on_the_device(void **state) {
  char src[N][256];
  const char *srcs[N];
  cujit_module *mods[N];
  cujit_status st[N];
  cujit_options o = CUJIT_OPTIONS_INIT;
  int i;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE; /* every one a real compile, some in workers */
  for (i = 0; i < N; i++) {
    kernel_source(i, src[i], sizeof src[i]);
    srcs[i] = src[i];
  }
  assert_ok(cujit_batch_compile(mods, st, srcs, NULL, N, &o));
  for (i = 0; i < N; i++) {
    assert_int_equal(st[i], CUJIT_OK);
    assert_non_null(cujit_module_cubin(mods[i], NULL)); /* the device's own target */
    check_kernel(mods[i], i, 10.0f * (float)i);
    cujit_module_destroy(mods[i]);
  }
}

static void jobs_run_on_the_device(void **state) {
  char src[3][256];
  cujit_compile_job *jobs[3];
  cujit_options o = CUJIT_OPTIONS_INIT;
  int i;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  for (i = 0; i < 3; i++) {
    kernel_source(10 + i, src[i], sizeof src[i]);
    assert_ok(cujit_compile_job_start(&jobs[i], src[i], "job.cu", &o));
  }
  for (i = 2; i >= 0; i--) { /* waited for in any order */
    cujit_module *m = NULL;
    assert_ok(cujit_compile_job_wait(jobs[i], &m));
    check_kernel(m, 10 + i, 1.5f);
    cujit_module_destroy(m);
    cujit_compile_job_destroy(jobs[i]);
  }
}

/* ---- compiles that certainly go to workers ---- */

static int holding, released;

static void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The cancel hook of a job that holds this process's compile slot: at NVRTC's first check
 * it waits until released, so that the jobs started meanwhile go to workers. */
static int hold_here(void *user) {
  (void)user;
  __atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE)) nap_ms(5);
  return 0;
}

static int never_stop(void *user) {
  (void)user;
  return 0;
}

/* Kernels compiled while this process's compile slot is held, so by worker processes, with
 * a time limit and a cancel hook (neither reached), for the device's own target: each runs
 * and computes what it should, and so does the one compiled here meanwhile. */
static void worker_compiles_run_on_the_device(void **state) {
  char held[256], src[3][256];
  cujit_compile_job *holder = NULL, *jobs[3];
  cujit_module *m = NULL;
  cujit_options o = CUJIT_OPTIONS_INIT, ho = CUJIT_OPTIONS_INIT;
  int i, waited;
  (void)state;
  o.flags = ho.flags = CUJIT_OPT_NO_CACHE;
  ho.cancel = hold_here;
  kernel_source(20, held, sizeof held);
  assert_ok(cujit_compile_job_start(&holder, held, "held.cu", &ho));
  while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE)) nap_ms(1);
  o.time_limit_s = 120;
  o.cancel = never_stop; /* asked by the pool while a worker compiles */
  for (i = 0; i < 3; i++) {
    kernel_source(21 + i, src[i], sizeof src[i]);
    assert_ok(cujit_compile_job_start(&jobs[i], src[i], "worker.cu", &o));
  }
  for (waited = 0; waited < 120000; waited += 10) { /* only workers can finish them */
    if (cujit_compile_job_poll(jobs[0]) && cujit_compile_job_poll(jobs[1]) &&
        cujit_compile_job_poll(jobs[2]))
      break;
    nap_ms(10);
  }
  __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
  assert_true(waited < 120000);
  for (i = 0; i < 3; i++) {
    assert_ok(cujit_compile_job_wait(jobs[i], &m));
    assert_non_null(cujit_module_cubin(m, NULL));
    check_kernel(m, 21 + i, 2.5f);
    cujit_module_destroy(m);
    cujit_compile_job_destroy(jobs[i]);
  }
  assert_ok(cujit_compile_job_wait(holder, &m));
  check_kernel(m, 20, 0.5f);
  cujit_module_destroy(m);
  cujit_compile_job_destroy(holder);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_batch_runs_on_the_device),
      cmocka_unit_test(jobs_run_on_the_device),
      cmocka_unit_test(worker_compiles_run_on_the_device),
  };
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  cujit_compile_set_jobs(3); /* workers even on a host with few CPUs */
  return cmocka_run_group_tests(tests, NULL, NULL);
}
