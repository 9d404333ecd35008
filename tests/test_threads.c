/* test_threads - 16 threads create modules from the same and from different sources at once
 * (the same source mostly hits the memory cache), read their results and destroy them.
 * Runs under ThreadSanitizer in scripts/check. */
#include <pthread.h>

#include "testutil.h"

enum { THREADS = 16, ROUNDS = 4 };

typedef struct worker {
  int id;
  char err[512];
} worker;

static const char kShared[] =
    "__global__ void shared_kernel(float *x, float f) { x[threadIdx.x] *= f; }\n";

static int check_module(worker *w, cujit_status st, cujit_module *m, const char *want) {
  if (st != CUJIT_OK) {
    snprintf(w->err, sizeof w->err, "%s: %s", cujit_status_name(st), cujit_last_error());
    return 0;
  }
  if (!strstr(cujit_module_ptx(m, NULL), want)) {
    snprintf(w->err, sizeof w->err, "PTX lacks %s", want);
    return 0;
  }
  return 1;
}

static void *work(void *arg) {
  worker *w = arg;
  cujit_options o = {0};
  int r;
  o.arch = "sm_90";
  for (r = 0; r < ROUNDS; r++) {
    char src[256], want[32];
    cujit_module *a = NULL, *b = NULL;
    cujit_status st = cujit_module_from_source(&a, kShared, "shared.cu", &o);
    if (!check_module(w, st, a, "shared_kernel")) return NULL;
    snprintf(src, sizeof src, "__global__ void own(int *x) { x[0] = %d; }\n",
             500000 + w->id * 10 + r);
    snprintf(want, sizeof want, "%d", 500000 + w->id * 10 + r);
    st = cujit_module_from_source(&b, src, "own.cu", &o);
    if (!check_module(w, st, b, want)) return NULL;
    if (!cujit_module_cubin(a, NULL) || !cujit_module_cubin(b, NULL)) {
      snprintf(w->err, sizeof w->err, "no CUBIN");
      return NULL;
    }
    cujit_module_destroy(a);
    cujit_module_destroy(b);
  }
  return NULL;
}

static void sixteen_threads(void **state) {
  pthread_t t[THREADS];
  worker w[THREADS];
  int i;
  (void)state;
  for (i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].id = i;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (i = 0; i < THREADS; i++)
    if (w[i].err[0]) fail_msg("thread %d: %s", i, w[i].err);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(sixteen_threads)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
