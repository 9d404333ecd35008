/* test_gpu_multi - every device of the machine in one process, chosen per thread with
 * cujit_device_set_current(): one module launched on each device (the same cujit_function), two
 * threads each doing pageable In/Out on its own device at once, In/Out on device 1 going
 * on while device 0 is held busy, and a kernel fault on device 0 (in a child process).
 * CUDA documents an illegal address as fatal to the whole process ("any further CUDA
 * work will return the same error"), and drivers do end device 1's work too: what cujit
 * owes is that every later call on either device says so with CUJIT_ERROR_LAUNCH_FAILED,
 * never a crash, a hang or a wrong result. Needs two devices; with fewer it is skipped and
 * says how many it found. `test_gpu_multi --no-fault` leaves the fault case out, for a run
 * under compute-sanitizer, which would count the deliberate fault as an error (the plain
 * run checks it). */
#include <pthread.h>
#include <unistd.h>

#include "gputest.h"

static const char kSrc[] =
    "__global__ void axpb(const float *x, float *y, float a, float b, unsigned long long n) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       i < n; i += (unsigned long long)gridDim.x * blockDim.x) y[i] = a * x[i] + b;\n"
    "}\n"
    "__global__ void bad(float *x, int *p) {\n"
    "  x[threadIdx.x] += 1.0f;\n"
    "  if (threadIdx.x == 0) *(volatile int *)p = 1;\n"
    "}\n"
    /* spins until *flag (host memory) is set, or for limit_ns; *out: 1 saw the flag,
     * 2 gave up */
    "__global__ void wait_flag(const int *flag, int *out, unsigned long long limit_ns) {\n"
    "  unsigned long long t0, t;\n"
    "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  for (;;) {\n"
    "    if (*(const volatile int *)flag) { *(volatile int *)out = 1; return; }\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
    "    if (t - t0 > limit_ns) { *(volatile int *)out = 2; return; }\n"
    "  }\n"
    "}\n";

/* Large enough to go through the pinned chunks (CUJIT_STAGING_MIN, 1 MiB by default), and
 * not a whole number of chunks. */
#define BIG_BYTES ((size_t)(24u << 20) + 20)

static int device_count(void) {
  int n = 0;
  assert_ok(cujit_device_get_count(&n));
  return n;
}

static void fill(float *x, size_t n, unsigned seed) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 4096);
}

/* Launches axpb over n floats with In/Out from host memory and checks every element;
 * returns 0, or 1 with the reason in `why` (no cmocka asserts: threads call this). */
static int axpb_checked(cujit_function *f, const float *x, float *y, size_t n, float a, float b,
                        int ordinal, char *why, size_t why_size) {
  cujit_status st;
  size_t i;
  memset(y, 0xff, n * sizeof *y);
  st =
      CUJIT_LAUNCH(f, CUJIT_DIM3(1024), CUJIT_DIM3(256), cujit_in(x, n * sizeof *x),
                   cujit_out(y, n * sizeof *y), cujit_f32(a), cujit_f32(b), cujit_u64((uint64_t)n));
  if (st != CUJIT_OK) {
    snprintf(why, why_size, "device %d: launch: %s: %s", ordinal, cujit_status_name(st),
             cujit_last_error());
    return 1;
  }
  for (i = 0; i < n; i++) {
    if (y[i] != a * x[i] + b) {
      snprintf(why, why_size, "device %d: element %zu of %zu is %g, want %g", ordinal, i, n,
               (double)y[i], (double)(a * x[i] + b));
      return 1;
    }
  }
  return 0;
}

/* Each device in turn runs the module's kernel, looked up once on device 0, from a small
 * and a staged In/Out; cujit_device_get_current() follows cujit_device_set_current(). */
static void same_module_on_every_device(void **state) {
  size_t small = 1000, n = BIG_BYTES / sizeof(float);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  cujit_function *f, *again = NULL;
  char why[512];
  int count = device_count(), d, got;
  (void)state;
  assert_non_null(x);
  assert_non_null(y);
  assert_ok(cujit_device_set_current(0));
  f = gpu_function(mod, "axpb");
  for (d = 0; d < count; d++) {
    assert_ok(cujit_device_set_current(d));
    got = -1;
    assert_ok(cujit_device_get_current(&got));
    assert_int_equal(got, d);
    fill(x, n, (unsigned)d + 7);
    if (axpb_checked(f, x, y, small, 2.0f, (float)d, d, why, sizeof why) ||
        axpb_checked(f, x, y, n, 0.5f, (float)(d + 1), d, why, sizeof why))
      fail_msg("%s", why);
    /* a lookup on this device finds the same function, now loaded here too */
    assert_ok(cujit_module_get_function(mod, "axpb", &again));
    assert_ptr_equal(again, f);
    assert_int_equal(gpu_pool_in_use(), 0);
  }
  assert_ok(cujit_device_set_current(0));
  free(x);
  free(y);
}

/* cujit_device_set_current names the ordinal and the count when there is no such device. */
static void set_device_out_of_range(void **state) {
  char want[64];
  int count = device_count(), got = -1;
  (void)state;
  assert_ok(cujit_device_set_current(1));
  snprintf(want, sizeof want, "cujit_device_set_current(%d) but there are %d CUDA devices", count,
           count);
  assert_status_detail(cujit_device_set_current(count), CUJIT_ERROR_NO_DEVICE, want);
  assert_status_detail(cujit_device_set_current(-1), CUJIT_ERROR_NO_DEVICE,
                       "cujit_device_set_current(-1)");
  /* a refused change leaves the thread where it was */
  assert_ok(cujit_device_get_current(&got));
  assert_int_equal(got, 1);
  assert_ok(cujit_device_set_current(0));
}

typedef struct device_job {
  int ordinal;
  pthread_barrier_t *start;
  char why[512];
} device_job;

/* One thread's device: several staged In/Out launches of the shared kernel, each checked. */
static void *device_work(void *arg) {
  device_job *j = arg;
  size_t n = BIG_BYTES / sizeof(float);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  cujit_function *f = NULL;
  cujit_status st;
  int k, got = -1;
  j->why[0] = '\0';
  if (!x || !y) {
    snprintf(j->why, sizeof j->why, "device %d: out of host memory", j->ordinal);
    goto done;
  }
  st = cujit_device_set_current(j->ordinal);
  if (st == CUJIT_OK) st = cujit_device_get_current(&got);
  if (st == CUJIT_OK) st = cujit_module_get_function(mod, "axpb", &f);
  if (st != CUJIT_OK || got != j->ordinal) {
    snprintf(j->why, sizeof j->why, "device %d: choosing it: %s (on device %d): %s", j->ordinal,
             cujit_status_name(st), got, cujit_last_error());
    goto done;
  }
  pthread_barrier_wait(j->start);
  for (k = 0; k < 6; k++) {
    fill(x, n, (unsigned)(j->ordinal * 100 + k));
    if (axpb_checked(f, x, y, n, (float)(k + 1), (float)j->ordinal, j->ordinal, j->why,
                     sizeof j->why))
      break;
  }
done:
  free(x);
  free(y);
  return NULL;
}

/* Two threads, each on its own device, doing pageable In/Out at the same time. */
static void two_threads_two_devices(void **state) {
  device_job jobs[2];
  pthread_t th[2];
  pthread_barrier_t start;
  int k;
  (void)state;
  assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
  for (k = 0; k < 2; k++) {
    jobs[k].ordinal = k;
    jobs[k].start = &start;
    assert_int_equal(pthread_create(&th[k], NULL, device_work, &jobs[k]), 0);
  }
  for (k = 0; k < 2; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
  pthread_barrier_destroy(&start);
  for (k = 0; k < 2; k++)
    if (jobs[k].why[0]) fail_msg("%s", jobs[k].why);
  for (k = 0; k < 2; k++) {
    assert_ok(cujit_device_set_current(k));
    assert_int_equal(gpu_pool_in_use(), 0);
  }
  assert_ok(cujit_device_set_current(0));
}

/* Device 0 runs a kernel that waits for a flag in host memory, which is set only once an
 * In/Out launch on device 1 has finished and been checked: were device 1's launch to wait
 * for device 0 (a shared lock, a wait on the wrong context), device 0's kernel would give
 * up after its time limit and say so. */
static void device1_proceeds_while_device0_busy(void **state) {
  size_t n = BIG_BYTES / sizeof(float);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  cujit_function *wait = gpu_function(mod, "wait_flag"), *f = gpu_function(mod, "axpb");
  int *flag = NULL, *res = NULL, failed;
  char why[512];
  (void)state;
  assert_non_null(x);
  assert_non_null(y);
  assert_ok(cujit_host_alloc((void **)&flag, sizeof *flag));
  assert_ok(cujit_host_alloc((void **)&res, sizeof *res));
  *(volatile int *)flag = 0;
  *(volatile int *)res = 0;
  assert_ok(cujit_device_set_current(0));
  /* by-value arguments only: the launch returns once the kernel is queued */
  assert_ok(CUJIT_LAUNCH(wait, CUJIT_DIM3(1), CUJIT_DIM3(1),
                         cujit_ptr((CUdeviceptr)(uintptr_t)flag),
                         cujit_ptr((CUdeviceptr)(uintptr_t)res), cujit_u64(60ull * 1000000000ull)));
  assert_ok(cujit_device_set_current(1));
  fill(x, n, 99);
  failed = axpb_checked(f, x, y, n, 3.0f, -1.0f, 1, why, sizeof why);
  __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
  assert_ok(cujit_device_set_current(0));
  assert_ok(cujit_synchronize());
  if (failed) fail_msg("%s", why);
  assert_int_equal(*(volatile int *)res, 1); /* 2: device 0's kernel gave up waiting */
  assert_ok(cujit_host_free(flag));
  assert_ok(cujit_host_free(res));
  free(x);
  free(y);
}

/* ---- a fault on device 0 leaves device 1 usable: in a child process ---- */

/* In the child: 0 when all went as it should, else 1 after saying why. */
static int fault_child(void) {
  enum { N = 1 << 16 };
  size_t n = BIG_BYTES / sizeof(float);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  cujit_module *m = NULL;
  cujit_function *f = NULL, *bad = NULL;
  cujit_status st;
  size_t used = 1;
  char why[512] = "";
  int ok = 0;
  if (!x || !y) return 1;
  fill(x, n, 5);
  /* device 1 has the module loaded and its pool and lanes in use before the fault */
  if ((st = cujit_module_from_source(&m, kSrc, "multi.cu", NULL)) != CUJIT_OK ||
      (st = cujit_device_set_current(1)) != CUJIT_OK ||
      (st = cujit_module_get_function(m, "axpb", &f)) != CUJIT_OK ||
      (st = cujit_module_get_function(m, "bad", &bad)) != CUJIT_OK) {
    printf("setting up: %s: %s\n", cujit_status_name(st), cujit_last_error());
    goto done;
  }
  if (axpb_checked(f, x, y, n, 2.0f, 1.0f, 1, why, sizeof why)) goto done;
  if ((st = cujit_device_set_current(0)) != CUJIT_OK) goto done;
  st = CUJIT_LAUNCH(bad, CUJIT_DIM3(1), CUJIT_DIM3(256), cujit_inout(y, N * sizeof(float)),
                    cujit_ptr((CUdeviceptr)0x10));
  if (st != CUJIT_ERROR_LAUNCH_FAILED || !strstr(cujit_last_error(), "kernel 'bad'")) {
    snprintf(why, sizeof why, "the faulting launch on device 0 gave %s: %s", cujit_status_name(st),
             cujit_last_error());
    goto done;
  }
  st = cujit_synchronize();
  if (st != CUJIT_ERROR_LAUNCH_FAILED) {
    snprintf(why, sizeof why,
             "device 0 after its fault: cujit_synchronize gave %s, want "
             "CUJIT_ERROR_LAUNCH_FAILED",
             cujit_status_name(st));
    goto done;
  }
  if ((st = cujit_device_set_current(1)) != CUJIT_OK) {
    snprintf(why, sizeof why, "cujit_device_set_current(1) after device 0's fault: %s: %s",
             cujit_status_name(st), cujit_last_error());
    goto done;
  }
  st = cujit_synchronize();
  if (st == CUJIT_ERROR_LAUNCH_FAILED) {
    /* the fault reached device 1, as CUDA documents: each later call says so */
    if (!strstr(cujit_last_error(), "every later GPU call of this process fails too")) {
      snprintf(why, sizeof why,
               "device 1 after the fault: the message does not say the "
               "process must stop: %s",
               cujit_last_error());
      goto done;
    }
    st = CUJIT_LAUNCH(f, CUJIT_DIM3(64), CUJIT_DIM3(256), cujit_in(x, N * sizeof(float)),
                      cujit_out(y, N * sizeof(float)), cujit_f32(1.0f), cujit_f32(0.0f),
                      cujit_u64(N));
    if (st != CUJIT_ERROR_LAUNCH_FAILED) {
      snprintf(why, sizeof why, "an In/Out launch on device 1 after the fault gave %s: %s",
               cujit_status_name(st), cujit_last_error());
      goto done;
    }
    printf("device 0's fault ended device 1's work too, reported as CUJIT_ERROR_LAUNCH_FAILED\n");
    ok = 1;
    goto done;
  }
  /* a driver that keeps device 1 going: its waits, staged In/Out and pool must be right */
  if (st != CUJIT_OK) {
    snprintf(why, sizeof why, "device 1 after device 0's fault: %s: %s", cujit_status_name(st),
             cujit_last_error());
    goto done;
  }
  if (axpb_checked(f, x, y, n, -1.5f, 4.0f, 1, why, sizeof why)) goto done;
  if ((st = cujit_mem_pool_get_usage(&used, NULL)) != CUJIT_OK || used != 0) {
    snprintf(why, sizeof why, "device 1's pool after the launches: %s, %zu bytes in use",
             cujit_status_name(st), used);
    goto done;
  }
  ok = 1;
done:
  if (!ok) printf("%s\n", why[0] ? why : cujit_last_error());
  cujit_module_destroy(m);
  free(x);
  free(y);
  return ok ? 0 : 1;
}

static void fault_on_one_device_is_reported_on_both(void **state) {
  int st = 0;
  pid_t pid;
  (void)state;
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "test_gpu_multi", "--fault-child", (char *)NULL);
    _exit(120);
  }
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

static int group_setup(void **state) {
  (void)state;
  assert_ok(cujit_device_set_current(0));
  mod = gpu_module(kSrc, "multi.cu", NULL);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  cujit_module_destroy(mod);
  return 0;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_module_on_every_device),
      cmocka_unit_test(set_device_out_of_range),
      cmocka_unit_test(two_threads_two_devices),
      cmocka_unit_test(device1_proceeds_while_device0_busy),
      cmocka_unit_test(fault_on_one_device_is_reported_on_both),
  };
  if (argc == 2 && strcmp(argv[1], "--fault-child") == 0) return fault_child();
  if (argc == 2 && strcmp(argv[1], "--no-fault") == 0)
    cmocka_set_skip_filter("fault_on_one_device_is_reported_on_both");
  if (!gpu_have_devices(2)) return TEST_SKIP_CODE;
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
