/* test_gpu_stress - 8 threads launch many kernels at once with In/Out buffers and device
 * pointers, checking every result; at the end device memory in use and the process's
 * resident size are back where they were after warm-up (no growth). And the pool keeps
 * what arrays give back across synchronisations, yet an allocation that needs that memory
 * gets it. */
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"
#include "cujit_array.h"

enum { THREADS = 8, LAUNCHES = 1500, N = 4096 };

static const char kSrc[] =
    "__global__ void axpy(float a, const float *x, float *y, float *out, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = a * x[i] + y[i];\n"
    "}\n";

static cujit_function *axpy;

typedef struct worker {
  int id;
  int launches;
  char err[512];
} worker;

static int run_one(worker *w, int round, CUdeviceptr dy, float *x, float *y, float *out) {
  float a = (float)(w->id + 1) + 0.25f * (float)(round % 7);
  int i;
  cujit_status st;
  for (i = 0; i < N; i++) x[i] = (float)((i * 7 + round + w->id) % 101) - 50.0f;
  memset(out, 0xff, N * sizeof(float)); /* poison: every element must be written */
  st = CUJIT_LAUNCH(axpy, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256), cujit_f32(a),
                    cujit_in(x, N * sizeof(float)), cujit_ptr(dy),
                    cujit_out(out, N * sizeof(float)), cujit_u32(N));
  if (st != CUJIT_OK) {
    snprintf(w->err, sizeof w->err, "launch %d: %s: %s", round, cujit_status_name(st),
             cujit_last_error());
    return 0;
  }
  for (i = 0; i < N; i++) {
    float want = a * x[i] + y[i];
    if (out[i] != want) {
      snprintf(w->err, sizeof w->err, "launch %d: out[%d] = %g, want %g", round, i, out[i], want);
      return 0;
    }
  }
  w->launches++;
  return 1;
}

static void *work(void *arg) {
  worker *w = arg;
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)),
        *out = malloc(N * sizeof(float));
  CUdeviceptr dy = 0;
  int i, r;
  for (i = 0; i < N; i++) y[i] = (float)(i % 13) * (float)(w->id + 1);
  if (cujit_mem_alloc(&dy, N * sizeof(float)) != CUJIT_OK ||
      cujit_mem_copy_htod(dy, y, N * sizeof(float)) != CUJIT_OK) {
    snprintf(w->err, sizeof w->err, "setup: %s", cujit_last_error());
  } else {
    for (r = 0; r < LAUNCHES && run_one(w, r, dy, x, y, out); r++) {
    }
  }
  cujit_mem_free(dy);
  free(x);
  free(y);
  free(out);
  return NULL;
}

static size_t device_free(size_t *total) {
  CUresult (*get_info)(size_t *, size_t *) = NULL;
  size_t free_b = 0;
  *total = 0;
  if (cujit_driver_get_symbol("cuMemGetInfo", (void **)&get_info) != CUJIT_OK) return 0;
  get_info(&free_b, total);
  return free_b;
}

static size_t device_used(void) {
  size_t total, free_b = device_free(&total);
  return total - free_b;
}

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void run_threads(worker *w) {
  pthread_t t[THREADS];
  int i;
  for (i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].id = i;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (i = 0; i < THREADS; i++)
    if (w[i].err[0]) fail_msg("thread %d: %s", i, w[i].err);
}

static void eight_threads_many_launches(void **state) {
  worker w[THREADS];
  size_t dev0, dev1;
  long rss0, rss1;
  int i, total = 0;
  (void)state;
  run_threads(w); /* warm-up: pools and staging buffers reach their working size */
  assert_ok(cujit_synchronize());
  dev0 = device_used();
  rss0 = rss_kib();
  run_threads(w);
  for (i = 0; i < THREADS; i++) total += w[i].launches;
  assert_int_equal(total, THREADS * LAUNCHES);
  assert_ok(cujit_synchronize());
  dev1 = device_used();
  rss1 = rss_kib();
  printf("%d launches; device memory in use %zu -> %zu bytes; RSS %ld -> %ld KiB\n", total, dev0,
         dev1, rss0, rss1);
  assert_true(dev1 <= dev0 + (2u << 20)); /* allow the driver 2 MiB of slack, no more */
  assert_true(rss1 <= rss0 + 4096);       /* and the process 4 MiB */
}

/* An array of 60% of the free device memory, destroyed: the pool keeps its memory after a
 * synchronisation (no threshold counts it against the arrays still alive), and a
 * cujit_mem_alloc() of as much, which only fits once the pool gives it back, succeeds. */
static void kept_memory_never_fails_an_allocation(void **state) {
  size_t total, kept = 0, big = device_free(&total) / 10 * 6 / (2u << 20) * (2u << 20);
  int64_t n = (int64_t)big;
  cujit_array *a = NULL;
  CUdeviceptr d = 0;
  (void)state;
  assert_true(big > 0);
  assert_ok(cujit_array_empty(&a, CUJIT_TYPE_U8, 1, &n));
  cujit_array_destroy(a);
  assert_ok(cujit_synchronize());
  assert_ok(cujit_mem_pool_get_usage(NULL, &kept));
  printf("an array of %zu bytes destroyed: the pool keeps %zu bytes\n", big, kept);
  assert_true(kept >= big);
  assert_ok(cujit_mem_alloc(&d, big));
  assert_ok(cujit_mem_pool_get_usage(NULL, &kept));
  assert_true(kept < big);
  assert_ok(cujit_mem_free(d));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(eight_threads_many_launches),
                                     cmocka_unit_test(kept_memory_never_fails_an_allocation)};
  cujit_module *m = NULL;
  int rc;
  if (!test_have_gpu()) return TEST_SKIP_CODE;
  if (cujit_module_from_source(&m, kSrc, "axpy.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "axpy", &axpy) != CUJIT_OK) {
    printf("setup failed: %s\n", cujit_last_error());
    return 1;
  }
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  cujit_module_destroy(m);
  return rc;
}
