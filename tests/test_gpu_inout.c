/* test_gpu_inout - In/Out/InOut buffers of several MiB from pageable and page-locked
 * memory (the pageable ones above the staging threshold go through cujit's pinned chunks,
 * in uneven sizes), on the default stream and on the caller's; small pageable buffers
 * copied directly by the first launches, with device memory of their own and no pool,
 * then through the device's small pinned area (made small, after CJ_BOUNCE_AFTER launches,
 * without the staging threads; full, taken by another thread, or shared by an In and an
 * Out buffer); pageable copies on every device present, each through its own lanes, in
 * turn and at once; empty buffers; how host memory is recognised; and the pool's memory
 * kept between launches and trimmed. */
#include <pthread.h>

#include "gputest.h"
#include "launch/launch.h"

static const char kSrc[] =
    "__global__ void inc(const float *in, float *out, unsigned long long n) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       i < n; i += (unsigned long long)gridDim.x * blockDim.x) out[i] = in[i] + 1.0f;\n"
    "}\n"
    "__global__ void twice(float *x, unsigned long long n) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "       i < n; i += (unsigned long long)gridDim.x * blockDim.x) x[i] *= 2.0f;\n"
    "}\n"
    "__global__ void is_null(const float *p, int *out) { *out = p == nullptr; }\n";

static void fill(float *x, size_t n, unsigned seed) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 100000);
}

/* In + Out of n floats through `inc`, then InOut through `twice`; all values checked. */
static void round_trip(float *in, float *out, size_t n, const cujit_launch_options *o) {
  cujit_function *inc = gpu_function(mod, "inc"), *twice = gpu_function(mod, "twice");
  size_t i;
  fill(in, n, (unsigned)n);
  memset(out, 0xff, n * sizeof(float)); /* every element must be written */
  assert_ok(CUJIT_LAUNCH_EX(inc, CUJIT_DIM3(1024), CUJIT_DIM3(256), o,
                            cujit_in(in, n * sizeof(float)), cujit_out(out, n * sizeof(float)),
                            cujit_u64(n)));
  for (i = 0; i < n; i++)
    if (out[i] != in[i] + 1.0f)
      fail_msg("Out element %zu of %zu: %g, want %g", i, n, (double)out[i], (double)in[i] + 1);
  assert_ok(CUJIT_LAUNCH_EX(twice, CUJIT_DIM3(1024), CUJIT_DIM3(256), o,
                            cujit_inout(out, n * sizeof(float)), cujit_u64(n)));
  for (i = 0; i < n; i++)
    if (out[i] != (in[i] + 1.0f) * 2.0f)
      fail_msg("InOut element %zu of %zu: %g", i, n, (double)out[i]);
  assert_int_equal(gpu_pool_in_use(), 0);
}

static void pageable(size_t bytes, const cujit_launch_options *o) {
  size_t n = bytes / sizeof(float);
  float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  assert_non_null(in);
  assert_non_null(out);
  round_trip(in, out, n, o);
  free(in);
  free(out);
}

/* ---- small pageable buffers: the device's small pinned area ---- */

static char debug_lines[1 << 16];
static pthread_mutex_t debug_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_debug(cujit_log_level level, const char *message, void *user) {
  size_t n;
  (void)level, (void)user;
  pthread_mutex_lock(&debug_lock);
  n = strlen(debug_lines);
  snprintf(debug_lines + n, sizeof debug_lines - n, "%s\n", message);
  pthread_mutex_unlock(&debug_lock);
}

static int logged(const char *needle) {
  int found;
  pthread_mutex_lock(&debug_lock);
  found = strstr(debug_lines, needle) != NULL;
  pthread_mutex_unlock(&debug_lock);
  return found;
}

enum { SMALL_N = 400, SMALL_LAUNCHES = 300 };

/* In + Out of SMALL_N pageable floats and InOut of the Out, `rounds` times, checked
 * without cmocka (threads call it): 0, or -1 with `why` filled. */
static int small_round_trips(int rounds, char *why, size_t size) {
  cujit_function *inc = NULL, *twice = NULL;
  float in[SMALL_N], out[SMALL_N];
  int r, i;
  if (cujit_module_get_function(mod, "inc", &inc) != CUJIT_OK ||
      cujit_module_get_function(mod, "twice", &twice) != CUJIT_OK) {
    snprintf(why, size, "lookup: %s", cujit_last_error());
    return -1;
  }
  for (r = 0; r < rounds; r++) {
    for (i = 0; i < SMALL_N; i++) in[i] = (float)(i + r), out[i] = -1.0f;
    if (CUJIT_LAUNCH(inc, CUJIT_DIM3(2), CUJIT_DIM3(256), cujit_in(in, sizeof in),
                     cujit_out(out, sizeof out), cujit_u64(SMALL_N)) != CUJIT_OK ||
        CUJIT_LAUNCH(twice, CUJIT_DIM3(2), CUJIT_DIM3(256), cujit_inout(out, sizeof out),
                     cujit_u64(SMALL_N)) != CUJIT_OK) {
      snprintf(why, size, "round %d: %s", r, cujit_last_error());
      return -1;
    }
    for (i = 0; i < SMALL_N; i++)
      if (out[i] != (in[i] + 1.0f) * 2.0f) {
        snprintf(why, size, "round %d, element %d: %g, want %g", r, i, (double)out[i],
                 (double)((in[i] + 1.0f) * 2.0f));
        return -1;
      }
  }
  return 0;
}

static void *small_worker(void *arg) {
  char *why = arg;
  small_round_trips(SMALL_LAUNCHES, why, 256);
  return NULL;
}

/* The group's first launches: small pageable buffers are copied directly, into blocks of
 * device memory of their own (the stream-ordered pool is not made, which costs a process
 * milliseconds); after CJ_BOUNCE_AFTER launches they go through a 64 KiB pinned area made
 * for them, and the staging threads with their large pinned chunks are never started. */
static void small_pageable_buffers(void **state) {
  cujit_function *inc = gpu_function(mod, "inc");
  size_t n = (900u << 10) / sizeof(float), i;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), same[SMALL_N];
  char why[4][256];
  pthread_t t[4];
  int k;
  (void)state;
  assert_non_null(a);
  assert_non_null(b);
  cujit_log_set_callback(keep_debug, NULL);
  cujit_log_set_level(CUJIT_LOG_DEBUG);
  why[0][0] = '\0';
  assert_int_equal(small_round_trips(3, why[0], sizeof why[0]), 0);
  assert_false(logged("pinned area for small pageable copies made"));
  assert_false(logged("memory pool made"));
  assert_true(logged("staged launch 1 of the process (2 buffers, 3200 bytes): memory kinds "));
  assert_true(logged("staged launch 2 of the process (1 buffer, 1600 bytes): memory kinds "));
  assert_false(logged("staged launch 3"));
  assert_int_equal(small_round_trips(CJ_BOUNCE_AFTER / 2, why[0], sizeof why[0]), 0);
  assert_true(logged("a 65536-byte pinned area for small pageable copies made in"));
  assert_false(logged("memory pool made"));
  assert_false(logged("staging pageable copies on device")); /* no staging threads */
  /* more than the area holds: the first buffer through it (grown to 1 MiB), the second
   * through the driver */
  for (i = 0; i < n; i++) a[i] = (float)(i % 1000), b[i] = -1.0f;
  assert_ok(CUJIT_LAUNCH(inc, CUJIT_DIM3(1024), CUJIT_DIM3(256), cujit_in(a, n * sizeof(float)),
                         cujit_out(b, n * sizeof(float)), cujit_u64(n)));
  for (i = 0; i < n; i++)
    if (b[i] != a[i] + 1.0f) fail_msg("element %zu: %g", i, (double)b[i]);
  assert_true(logged("a 1048576-byte pinned area for small pageable copies made in"));
  assert_false(logged("staging pageable copies on device"));
  /* one host buffer as In and Out: read before the kernel, written after it */
  for (k = 0; k < SMALL_N; k++) same[k] = (float)k;
  assert_ok(CUJIT_LAUNCH(inc, CUJIT_DIM3(2), CUJIT_DIM3(256), cujit_in(same, sizeof same),
                         cujit_out(same, sizeof same), cujit_u64(SMALL_N)));
  for (k = 0; k < SMALL_N; k++) assert_true(same[k] == (float)k + 1.0f);
  cujit_log_set_level(CUJIT_LOG_OFF);
  cujit_log_set_callback(NULL, NULL);
  /* threads at once: one holds the area, the others' buffers go through the driver */
  for (k = 0; k < 4; k++) {
    why[k][0] = '\0';
    assert_int_equal(pthread_create(&t[k], NULL, small_worker, why[k]), 0);
  }
  for (k = 0; k < 4; k++) pthread_join(t[k], NULL);
  for (k = 0; k < 4; k++)
    if (why[k][0]) fail_msg("thread %d: %s", k, why[k]);
  assert_int_equal(gpu_pool_in_use(), 0);
  free(a);
  free(b);
}

static void pageable_several_mib(void **state) {
  (void)state;
  pageable(512u << 10, NULL);      /* below the staging threshold: copied directly */
  pageable((3u << 20) + 12, NULL); /* staged, the last chunk short */
  pageable((9u << 20) + 12, NULL);
  pageable((33u << 20) + 4, NULL); /* staged, shares not multiples of a chunk */
  pageable(64u << 20, NULL);
}

static void pageable_on_a_stream(void **state) {
  cujit_launch_options o = {0};
  (void)state;
  assert_ok(cujit_stream_create(&o.stream));
  pageable((17u << 20) + 8, &o);
  assert_ok(cujit_stream_destroy(o.stream));
}

/* ---- every device: each one's own staging lanes ---- */

typedef struct device_job {
  int ordinal;
  char why[320]; /* what went wrong; empty when everything checked out */
} device_job;

/* Makes the primary context of device `ordinal` current on this thread. It stays retained
 * until the process exits, as the device's staging lanes work in it. */
static int use_device(int ordinal, CUcontext *ctx, CUdevice *dev) {
  return cj_cu.cuDeviceGet(dev, ordinal) == CUDA_SUCCESS &&
         cj_cu.cuDevicePrimaryCtxRetain(ctx, *dev) == CUDA_SUCCESS &&
         cj_cu.cuCtxSetCurrent(*ctx) == CUDA_SUCCESS;
}

/* The checks of one device, without cmocka's asserts, which must not run in a thread: a
 * pageable buffer staged to device memory and back with cj_stage_htod/dtoh, which must
 * take the staged path (each device has lanes of its own: NOT_SUPPORTED would mean this
 * one had none), then an In/Out launch of `inc` from pageable memory, from a module
 * compiled for this device (devices may differ); every element is checked. */
static void *device_work(void *arg) {
  device_job *j = arg;
  size_t bytes = (9u << 20) + 12, n = bytes / sizeof(float), i;
  float *in = malloc(bytes), *out = malloc(bytes);
  cujit_module *m = NULL;
  cujit_function *inc = NULL;
  CUdeviceptr d = 0;
  CUcontext ctx;
  CUdevice dev;
  cujit_status st;
  j->why[0] = '\0';
  if (!in || !out) {
    snprintf(j->why, sizeof j->why, "device %d: out of host memory", j->ordinal);
    goto done;
  }
  if (!use_device(j->ordinal, &ctx, &dev) || cj_cu.cuMemAlloc(&d, bytes) != CUDA_SUCCESS) {
    snprintf(j->why, sizeof j->why, "device %d: no context or no device memory", j->ordinal);
    goto done;
  }
  fill(in, n, (unsigned)j->ordinal + 1);
  memset(out, 0xff, bytes);
  st = cj_stage_htod(ctx, dev, d, in, bytes, NULL);
  if (st == CUJIT_OK) st = cj_stage_dtoh(ctx, dev, out, d, bytes, NULL);
  if (st != CUJIT_OK) {
    snprintf(j->why, sizeof j->why, "device %d: a staged copy returned %s: %s", j->ordinal,
             cujit_status_name(st),
             st == CUJIT_ERROR_NOT_SUPPORTED ? "the device has no staging lanes of its own"
                                             : cujit_last_error());
    goto done;
  }
  for (i = 0; i < n; i++)
    if (out[i] != in[i]) {
      snprintf(j->why, sizeof j->why,
               "device %d: staged element %zu of %zu came back as %g, "
               "not %g",
               j->ordinal, i, n, (double)out[i], (double)in[i]);
      goto done;
    }
  memset(out, 0xff, bytes);
  st = cujit_module_from_source(&m, kSrc, "inout.cu", NULL);
  if (st == CUJIT_OK) st = cujit_module_get_function(m, "inc", &inc);
  if (st == CUJIT_OK)
    st = CUJIT_LAUNCH(inc, CUJIT_DIM3(1024), CUJIT_DIM3(256), cujit_in(in, bytes),
                      cujit_out(out, bytes), cujit_u64(n));
  if (st != CUJIT_OK) {
    snprintf(j->why, sizeof j->why, "device %d: In/Out launch: %s: %s", j->ordinal,
             cujit_status_name(st), cujit_last_error());
    goto done;
  }
  for (i = 0; i < n; i++)
    if (out[i] != in[i] + 1.0f) {
      snprintf(j->why, sizeof j->why, "device %d: Out element %zu of %zu: %g, want %g", j->ordinal,
               i, n, (double)out[i], (double)in[i] + 1);
      break;
    }
done:
  cujit_module_destroy(m);
  if (d) cj_cu.cuMemFree(d);
  free(in);
  free(out);
  return NULL;
}

/* Every device in turn, then all at once from one thread each (at least two threads, so
 * that with one device two transfers take turns on its lanes). Staging may be off here
 * (CUJIT_STAGING_THREADS=0, or fewer than four cores): then there are no lanes to check. */
static void pageable_on_every_device(void **state) {
  enum { MAX_WORKERS = 16 };
  device_job jobs[MAX_WORKERS];
  pthread_t th[MAX_WORKERS];
  CUcontext saved = NULL, ctx;
  CUdevice dev;
  CUdeviceptr d = 0;
  char probe[4096] = {0};
  const char *why = NULL;
  int n = 0, k, workers;
  cujit_status st;
  (void)state;
  assert_ok(cujit_device_get_count(&n));
  if (n > CJ_DEVICE_SLOTS) n = CJ_DEVICE_SLOTS;
  assert_int_equal(cj_cu.cuCtxGetCurrent(&saved), CUDA_SUCCESS);
  assert_true(use_device(0, &ctx, &dev));
  assert_int_equal(cj_cu.cuMemAlloc(&d, sizeof probe), CUDA_SUCCESS);
  st = cj_stage_htod(ctx, dev, d, probe, sizeof probe, NULL);
  assert_int_equal(cj_cu.cuCtxSynchronize(), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuMemFree(d), CUDA_SUCCESS);
  cj_cu.cuCtxSetCurrent(saved);
  if (st == CUJIT_ERROR_NOT_SUPPORTED) {
    test_skip_part("staging is off here (CUJIT_STAGING_THREADS=0 or fewer than 4 cores)");
    skip();
  }
  assert_ok(st);
  printf("%d device%s\n", n, n == 1 ? "" : "s");
  for (k = 0; k < n && !why; k++) {
    jobs[0].ordinal = k;
    device_work(&jobs[0]);
    if (jobs[0].why[0]) why = jobs[0].why;
  }
  workers = n < 2 ? 2 : n > MAX_WORKERS ? MAX_WORKERS : n;
  for (k = 0; k < workers && !why; k++) {
    jobs[k].ordinal = k % n;
    assert_int_equal(pthread_create(&th[k], NULL, device_work, &jobs[k]), 0);
  }
  for (k = 0; k < workers && !why; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
  for (k = 0; k < workers && !why; k++)
    if (jobs[k].why[0]) why = jobs[k].why;
  cj_cu.cuCtxSetCurrent(saved);
  if (why) fail_msg("%s", why);
  assert_int_equal(gpu_pool_in_use(), 0);
}

static void pinned_several_mib(void **state) {
  size_t n = ((9u << 20) + 12) / sizeof(float);
  float *in = NULL, *out = NULL;
  (void)state;
  assert_ok(cujit_host_alloc((void **)&in, n * sizeof(float)));
  assert_ok(cujit_host_alloc((void **)&out, n * sizeof(float)));
  round_trip(in, out, n, NULL);
  assert_ok(cujit_host_free(in));
  assert_ok(cujit_host_free(out));
}

static void empty_buffer_is_a_null_pointer(void **state) {
  cujit_function *f = gpu_function(mod, "is_null");
  int flag = -1;
  (void)state;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_in(NULL, 0),
                         cujit_out(&flag, sizeof flag)));
  assert_int_equal(flag, 1);
}

typedef CUresult (*host_register_fn)(void *, size_t, unsigned);
typedef CUresult (*host_unregister_fn)(void *);
typedef CUresult (*alloc_managed_fn)(CUdeviceptr *, size_t, unsigned);

static void host_memory_is_recognised(void **state) {
  host_register_fn reg = NULL;
  host_unregister_fn unreg = NULL;
  alloc_managed_fn managed = NULL;
  size_t bytes = 1u << 20;
  char *page = NULL, *pinned = NULL, *heap = malloc(bytes);
  CUdeviceptr d = 0, m = 0;
  (void)state;
  assert_ok(cujit_driver_get_symbol("cuMemHostRegister", (void **)&reg));
  assert_ok(cujit_driver_get_symbol("cuMemHostUnregister", (void **)&unreg));
  assert_ok(cujit_driver_get_symbol("cuMemAllocManaged", (void **)&managed));
  assert_int_equal(cj_host_kind_of(heap, bytes), CJ_HOST_PAGEABLE);
  assert_ok(cujit_host_alloc((void **)&pinned, bytes));
  assert_int_equal(cj_host_kind_of(pinned, bytes), CJ_HOST_PINNED);
  assert_int_equal(cj_host_kind_of(pinned + 100, bytes - 100), CJ_HOST_PINNED);
  assert_int_equal(posix_memalign((void **)&page, 4096, 2 * bytes), 0);
  assert_int_equal(cj_host_kind_of(page, 2 * bytes), CJ_HOST_PAGEABLE);
  assert_int_equal(reg(page, bytes, 0), CUDA_SUCCESS); /* only the first half */
  assert_int_equal(cj_host_kind_of(page, bytes), CJ_HOST_PINNED);
  assert_int_equal(cj_host_kind_of(page, 2 * bytes), CJ_HOST_PAGEABLE);
  assert_int_equal(unreg(page), CUDA_SUCCESS);
  assert_ok(cujit_mem_alloc(&d, bytes));
  assert_int_equal(cj_host_kind_of((void *)(uintptr_t)d, bytes), CJ_HOST_DEVICE);
  assert_int_equal(managed(&m, bytes, 1 /* CU_MEM_ATTACH_GLOBAL */), CUDA_SUCCESS);
  assert_int_equal(cj_host_kind_of((void *)(uintptr_t)m, bytes), CJ_HOST_PINNED);
  assert_ok(cujit_mem_free(d));
  assert_ok(cujit_mem_free(m));
  assert_ok(cujit_host_free(pinned));
  /* freed: no longer taken as pinned (the driver has forgotten it too) */
  assert_int_equal(cj_host_kind_of(pinned, bytes), CJ_HOST_PAGEABLE);
  free(page);
  free(heap);
}

static void pool_keeps_memory_until_trimmed(void **state) {
  size_t used = 1, kept = 0;
  (void)state;
  pageable(8u << 20, NULL);
  assert_ok(cujit_mem_pool_get_usage(&used, &kept));
  assert_int_equal(used, 0);
  printf("the pool keeps %zu bytes between launches\n", kept);
  assert_true(kept >= (8u << 20)); /* In and Out of the last launches */
  assert_ok(cujit_mem_pool_trim());
  assert_ok(cujit_mem_pool_get_usage(&used, &kept));
  assert_int_equal(kept, 0);
  pageable(1u << 20, NULL); /* and it grows again when needed */
}

/* A context the program makes and destroys: its small In/Out blocks are not kept for
 * later (trimming then would make the dead context current), while a primary context the
 * program made current itself is recognised and held. */
static void own_context_keeps_nothing(void **state) {
  CUcontext own, primary = NULL;
  CUdevice dev = 0;
  (void)state;
  own = gpu_own_context();
  assert_int_equal(cj_cu.cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  assert_int_equal(cj_ctx_retained(own), 0);
  pageable(4096, NULL); /* small blocks, the default stream: kept only in a held context */
  gpu_destroy_context(own);
  assert_int_equal(cj_cu.cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  assert_int_equal(cj_cu.cuCtxSetCurrent(primary), CUDA_SUCCESS);
  assert_int_equal(cj_ctx_retained(primary), 1);
  assert_ok(cujit_mem_pool_trim()); /* nothing of the dead context to give back */
  pageable(4096, NULL);
}

GPU_GROUP_MAIN(kSrc, "inout.cu", NULL, cmocka_unit_test(small_pageable_buffers),
               cmocka_unit_test(own_context_keeps_nothing), cmocka_unit_test(pageable_several_mib),
               cmocka_unit_test(pageable_on_a_stream), cmocka_unit_test(pageable_on_every_device),
               cmocka_unit_test(pinned_several_mib),
               cmocka_unit_test(empty_buffer_is_a_null_pointer),
               cmocka_unit_test(host_memory_is_recognised),
               cmocka_unit_test(pool_keeps_memory_until_trimmed))
