/* test_gpu_threads - 8 threads at once: the first lookup of a kernel (which loads the
 * module) racing in every thread, launches with In/Out buffers and with device pointers on
 * the default stream and on each thread's own stream, and modules compiled, used and
 * destroyed in every thread. */
#include <pthread.h>

#include "gputest.h"

enum { THREADS = 8, ROUNDS = 200, N = 3000 };

static const char kSrc[] = "__global__ void axpy(float a, const float *x, float *y, int n) {\n"
                           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "  if (i < n) y[i] = a * x[i] + y[i];\n"
                           "}\n";

typedef struct worker {
  int id;
  cujit_module *shared;
  cujit_function *found;
  pthread_barrier_t *start;
  char err[400];
} worker;

static int failed(worker *w, const char *what) {
  snprintf(w->err, sizeof w->err, "thread %d: %s: %s", w->id, what, cujit_last_error());
  return 0;
}

static int check(worker *w, const float *y, float a, const float *x, float base, int round) {
  int i;
  for (i = 0; i < N; i++) {
    if (y[i] != a * x[i] + base) {
      snprintf(w->err, sizeof w->err, "thread %d round %d: y[%d] = %g, want %g", w->id, round, i,
               (double)y[i], (double)(a * x[i] + base));
      return 0;
    }
  }
  return 1;
}

/* One launch with an InOut buffer, one with device pointers on the thread's stream. */
static int rounds(worker *w, cujit_function *f) {
  float x[N], y[N];
  cujit_launch_options o = {0};
  CUdeviceptr dx = 0, dy = 0;
  int r, i, ok = 1;
  for (i = 0; i < N; i++) x[i] = (float)((i * 7 + w->id) % 50);
  if (cujit_stream_create(&o.stream) != CUJIT_OK || cujit_mem_alloc(&dx, sizeof x) != CUJIT_OK ||
      cujit_mem_alloc(&dy, sizeof y) != CUJIT_OK ||
      cujit_mem_copy_htod(dx, x, sizeof x) != CUJIT_OK)
    return failed(w, "setup");
  for (r = 0; r < ROUNDS && ok; r++) {
    float a = (float)(w->id + r % 5);
    for (i = 0; i < N; i++) y[i] = (float)w->id;
    if (CUJIT_LAUNCH(f, CUJIT_DIM3((N + 127) / 128), CUJIT_DIM3(128), cujit_f32(a),
                     cujit_in(x, sizeof x), cujit_inout(y, sizeof y), cujit_i32(N)) != CUJIT_OK) {
      ok = failed(w, "In/Out launch");
      break;
    }
    ok = check(w, y, a, x, (float)w->id, r);
    for (i = 0; i < N; i++) y[i] = 1.0f;
    if (!ok || cujit_mem_copy_htod(dy, y, sizeof y) != CUJIT_OK ||
        CUJIT_LAUNCH_EX(f, CUJIT_DIM3((N + 127) / 128), CUJIT_DIM3(128), &o, cujit_f32(a),
                        cujit_ptr(dx), cujit_ptr(dy), cujit_i32(N)) != CUJIT_OK ||
        cujit_stream_synchronize(o.stream) != CUJIT_OK ||
        cujit_mem_copy_dtoh(y, dy, sizeof y) != CUJIT_OK) {
      ok = ok ? failed(w, "device-pointer launch") : 0;
      break;
    }
    ok = check(w, y, a, x, 1.0f, r);
  }
  cujit_mem_free(dx);
  cujit_mem_free(dy);
  cujit_stream_destroy(o.stream);
  return ok;
}

/* A module of the thread's own, compiled, used and destroyed here. */
static int own_module(worker *w) {
  char src[256];
  float y[N];
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  int i, ok;
  snprintf(src, sizeof src,
           "__global__ void put(float *y, int n) { int i = blockIdx.x * "
           "blockDim.x + threadIdx.x; if (i < n) y[i] = %d.0f; }\n",
           w->id + 100);
  if (cujit_module_from_source(&m, src, "own.cu", NULL) != CUJIT_OK ||
      cujit_module_get_function(m, "put", &f) != CUJIT_OK ||
      CUJIT_LAUNCH(f, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256), cujit_out(y, sizeof y),
                   cujit_i32(N)) != CUJIT_OK) {
    cujit_module_destroy(m);
    return failed(w, "own module");
  }
  for (ok = 1, i = 0; i < N && ok; i++) ok = y[i] == (float)(w->id + 100);
  if (!ok) snprintf(w->err, sizeof w->err, "thread %d: own module wrote wrong values", w->id);
  cujit_module_destroy(m);
  return ok;
}

static void *work(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->start);
  if (cujit_module_get_function(w->shared, "axpy", &w->found) != CUJIT_OK) {
    failed(w, "first lookup");
    return NULL;
  }
  if (rounds(w, w->found)) own_module(w);
  return NULL;
}

static void eight_threads_at_once(void **state) {
  pthread_t t[THREADS];
  worker w[THREADS];
  pthread_barrier_t start;
  int i;
  (void)state;
  assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
  for (i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].id = i;
    w[i].shared = mod; /* compiled, not yet loaded: the first lookups race to load it */
    w[i].start = &start;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  for (i = 0; i < THREADS; i++) {
    if (w[i].err[0]) fail_msg("%s", w[i].err);
    assert_ptr_equal(w[i].found, w[0].found);
  }
  assert_int_equal(gpu_pool_in_use(), 0);
}

GPU_GROUP_MAIN(kSrc, "threads.cu", NULL, cmocka_unit_test(eight_threads_at_once))
