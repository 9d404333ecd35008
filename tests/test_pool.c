/* test_pool - the launch layer's memory against a driver of the test's own (the entry
 * point table filled with fakes that keep count): the pool keeps everything arrays and
 * In/Out buffers give back unless CUJIT_POOL_KEEP caps it, an allocation that finds the
 * device full has the pool give back what it keeps and tries once more, small requests on
 * the default stream take blocks of plain device memory without making the pool, and the
 * small pinned area for pageable copies is made on the CJ_BOUNCE_AFTER-th copy that could
 * use it (the earlier ones copy directly), at 64 KiB, grown only as far as a copy needs, never
 * waited for, only in a primary context cujit holds, and made again after a reset of that context.
 * The same with real devices is in test_gpu_inout, test_gpu_contexts and test_gpu_stress.
 *
 * Run as `test_pool --staging-off` with CUJIT_STAGING_THREADS=0, it checks that the area
 * is never made then (the variable is read once per process). */
#include "testutil.h"
#include "launch/launch.h"

/* ---- the fake driver ---- */

/* The primary context cujit holds, and one the program made. */
#define HELD_CTX ((CUcontext)(uintptr_t)0x5000)
#define OTHER_CTX ((CUcontext)(uintptr_t)0x6000)

static int pools_made, trims, oom_replies, host_allocs, host_alloc_fails, host_frees;
static int plain_allocs, plain_frees;
static CUcontext current_ctx; /* NULL but where a test says */
static cuuint64_t threshold;
static size_t host_alloc_size[16];
static void *host_alloc_mem[16]; /* what the fake driver pinned and did not free */
static const void *last_htod_from;
static unsigned long long held_ctx_id = 1; /* changes when the context is reset */

static CUresult fake_attribute(int *v, CUdevice_attribute attr, CUdevice dev) {
  (void)dev;
  *v = attr == CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED ? 1 : 1024;
  return CUDA_SUCCESS;
}

static CUresult fake_pool_create(CUmemoryPool *pool, const CUmemPoolProps *props) {
  (void)props;
  *pool = (CUmemoryPool)(uintptr_t)(0x1000 + ++pools_made);
  return CUDA_SUCCESS;
}

static CUresult fake_pool_set(CUmemoryPool pool, CUmemPool_attribute attr, void *value) {
  (void)pool;
  if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) threshold = *(cuuint64_t *)value;
  return CUDA_SUCCESS;
}

/* Device memory is host memory here, so that copies can be checked. */
static CUresult fake_pool_alloc(CUdeviceptr *d, size_t bytes, CUmemoryPool pool, CUstream s) {
  (void)pool, (void)s;
  if (oom_replies > 0) {
    oom_replies--;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *d = (CUdeviceptr)(uintptr_t)malloc(bytes);
  return *d ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult fake_free_async(CUdeviceptr d, CUstream s) {
  (void)s;
  free((void *)(uintptr_t)d);
  return CUDA_SUCCESS;
}

static CUresult fake_pool_get(CUmemoryPool pool, CUmemPool_attribute attr, void *value) {
  (void)pool, (void)attr;
  *(cuuint64_t *)value = 0; /* the pool holds nothing of the small blocks' */
  return CUDA_SUCCESS;
}

static CUresult fake_trim(CUmemoryPool pool, size_t keep) {
  (void)pool, (void)keep;
  trims++;
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_current(CUcontext *ctx) {
  *ctx = current_ctx; /* NULL: no context cujit holds, so small blocks are only pooled */
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_set(CUcontext ctx) {
  current_ctx = ctx;
  return CUDA_SUCCESS;
}

static CUresult fake_mem_alloc(CUdeviceptr *d, size_t bytes) {
  *d = (CUdeviceptr)(uintptr_t)malloc(bytes);
  plain_allocs++;
  return *d ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult fake_mem_free(CUdeviceptr d) {
  plain_frees++;
  free((void *)(uintptr_t)d);
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_device(CUdevice *dev) {
  *dev = 0;
  return CUDA_SUCCESS;
}

static CUstream last_synced; /* the stream of the last cuStreamSynchronize */

static CUresult fake_sync(CUstream s) {
  last_synced = s;
  return CUDA_SUCCESS;
}

static CUresult fake_host_alloc(void **p, size_t bytes, unsigned flags) {
  (void)flags;
  if (host_alloc_fails || host_allocs == 16) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = host_alloc_mem[host_allocs] = malloc(bytes);
  host_alloc_size[host_allocs++] = bytes;
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult fake_free_host(void *p) {
  int i;
  for (i = 0; i < host_allocs; i++)
    if (host_alloc_mem[i] == p) host_alloc_mem[i] = NULL;
  host_frees++;
  free(p);
  return CUDA_SUCCESS;
}

/* What a context dying with the process would free. */
static void free_pinned(void) {
  int i;
  for (i = 0; i < host_allocs; i++) free(host_alloc_mem[i]);
}

/* HELD_CTX is device 0's primary context, which cujit adopts and holds. */
static CUresult fake_primary_state(CUdevice dev, unsigned *flags, int *active) {
  (void)dev;
  *flags = 0;
  *active = 1;
  return CUDA_SUCCESS;
}

static CUresult fake_primary_retain(CUcontext *ctx, CUdevice dev) {
  (void)dev;
  *ctx = HELD_CTX;
  return CUDA_SUCCESS;
}

static CUresult fake_primary_release(CUdevice dev) {
  (void)dev;
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_id(CUcontext ctx, unsigned long long *id) {
  *id = ctx == HELD_CTX ? held_ctx_id : 99;
  return CUDA_SUCCESS;
}

static CUresult fake_htod(CUdeviceptr d, const void *from, size_t bytes, CUstream s) {
  (void)s;
  last_htod_from = from;
  memcpy((void *)(uintptr_t)d, from, bytes);
  return CUDA_SUCCESS;
}

static CUresult fake_dtoh(void *to, CUdeviceptr d, size_t bytes, CUstream s) {
  (void)s;
  memcpy(to, (const void *)(uintptr_t)d, bytes);
  return CUDA_SUCCESS;
}

static void fake_driver(void) {
  memset(&cj_cu, 0, sizeof cj_cu);
  cj_cu.cuDeviceGetAttribute = fake_attribute;
  cj_cu.cuMemPoolCreate = fake_pool_create;
  cj_cu.cuMemPoolSetAttribute = fake_pool_set;
  cj_cu.cuMemAllocFromPoolAsync = fake_pool_alloc;
  cj_cu.cuMemFreeAsync = fake_free_async;
  cj_cu.cuMemPoolTrimTo = fake_trim;
  cj_cu.cuMemPoolGetAttribute = fake_pool_get;
  cj_cu.cuCtxGetCurrent = fake_ctx_current;
  cj_cu.cuCtxSetCurrent = fake_ctx_set;
  cj_cu.cuMemAlloc = fake_mem_alloc;
  cj_cu.cuMemFree = fake_mem_free;
  cj_cu.cuCtxGetDevice = fake_ctx_device;
  cj_cu.cuStreamSynchronize = fake_sync;
  cj_cu.cuMemHostAlloc = fake_host_alloc;
  cj_cu.cuMemFreeHost = fake_free_host;
  cj_cu.cuMemcpyHtoDAsync = fake_htod;
  cj_cu.cuMemcpyDtoHAsync = fake_dtoh;
  cj_cu.cuDevicePrimaryCtxGetState = fake_primary_state;
  cj_cu.cuDevicePrimaryCtxRetain = fake_primary_retain;
  cj_cu.cuDevicePrimaryCtxRelease = fake_primary_release;
  cj_cu.cuCtxGetId = fake_ctx_id;
}

/* ---- the pool ---- */

static cj_mem_ctx owner; /* the context the memory came from, as cj_mem_pool_alloc says */

static void pool_keeps_everything_unless_capped(void **state) {
  CUdeviceptr d = 0;
  (void)state;
  unsetenv("CUJIT_POOL_KEEP");
  assert_ok(cj_mem_pool_alloc(0, 4096, NULL, &d, &owner));
  assert_int_equal(pools_made, 1);
  /* no release threshold: a synchronisation gives nothing back */
  assert_true(threshold == UINT64_MAX);
  cj_mem_pool_free(0, d, 4096, NULL, &owner);
  setenv("CUJIT_POOL_KEEP", "256M", 1); /* read when a device's pool is made */
  assert_ok(cj_mem_pool_alloc(1, 4096, NULL, &d, &owner));
  assert_int_equal(pools_made, 2);
  assert_true(threshold == (cuuint64_t)256 << 20);
  cj_mem_pool_free(1, d, 4096, NULL, &owner);
  unsetenv("CUJIT_POOL_KEEP");
}

static void a_full_device_gets_what_the_pool_keeps(void **state) {
  CUdeviceptr d = 0;
  (void)state;
  trims = 0;
  oom_replies = 1; /* full until the pool gives back what it keeps */
  assert_ok(cj_mem_pool_alloc(0, 1 << 20, NULL, &d, &owner));
  assert_int_equal(trims, 1);
  assert_int_equal(oom_replies, 0);
  cj_mem_pool_free(0, d, 1 << 20, NULL, &owner);
  /* full even then: one more try, then the failure says what was done */
  oom_replies = 2;
  assert_status_detail(cj_mem_pool_alloc(0, 1 << 20, NULL, &d, &owner), CUJIT_ERROR_DEVICE_MEMORY,
                       "cannot get 1048576 bytes of device memory for an In/Out buffer or an "
                       "array: CUDA_ERROR_OUT_OF_MEMORY, even after cujit's pool gave back what "
                       "it kept");
  assert_int_equal(trims, 2);
  assert_int_equal(oom_replies, 0);
  assert_true(d == 0);
  /* a device that is not full is never trimmed */
  assert_ok(cj_mem_pool_alloc(0, 64, NULL, &d, &owner));
  assert_int_equal(trims, 2);
  cj_mem_pool_free(0, d, 64, NULL, &owner);
}

/* Small requests on the default stream of a context cujit holds: plain device memory
 * of the size asked for, taken again by requests of that size, at most 16 blocks; the
 * pool is not made for them, and a trim frees those not in use. */
static void small_blocks_need_no_pool(void **state) {
  CUdeviceptr d[20], again;
  size_t used = 1, kept = 0;
  int k, made = pools_made;
  (void)state;
  current_ctx = HELD_CTX;
  for (k = 0; k < 3; k++) assert_ok(cj_mem_pool_alloc(2, 1600, NULL, &d[k], &owner));
  assert_int_equal(pools_made, made); /* a short program's first launch: no pool */
  assert_int_equal(plain_allocs, 3);
  assert_true(d[0] != d[1] && d[1] != d[2] && d[0] != d[2]);
  cj_mem_pool_free(2, d[1], 1600, NULL, &owner);
  assert_ok(
      cj_mem_pool_alloc(2, 1600, NULL, &again, &owner)); /* the block given back, no new one */
  assert_true(again == d[1]);
  assert_int_equal(plain_allocs, 3);
  assert_ok(cj_mem_pool_alloc(2, 1200, NULL, &d[3], &owner)); /* another size: a block of its own */
  assert_int_equal(plain_allocs, 4);
  for (k = 4; k < 16; k++) assert_ok(cj_mem_pool_alloc(2, 100 + k, NULL, &d[k], &owner));
  assert_int_equal(plain_allocs, 16);
  assert_ok(
      cj_mem_pool_alloc(2, 1600, NULL, &d[16], &owner)); /* 16 blocks: the rest from the pool */
  assert_int_equal(plain_allocs, 16);
  assert_int_equal(pools_made, made + 1);
  assert_ok(
      cj_mem_pool_alloc(2, (64 << 10) + 1, NULL, &d[17], &owner)); /* beyond 64 KiB: the pool */
  assert_ok(
      cj_mem_pool_alloc(2, 1600, (CUstream)(uintptr_t)0x77, &d[18], &owner)); /* another stream */
  assert_int_equal(plain_allocs, 16);
  current_ctx = OTHER_CTX; /* a context of the program's own: never */
  assert_ok(cj_mem_pool_alloc(2, 500, NULL, &d[19], &owner));
  assert_int_equal(plain_allocs, 16);
  current_ctx = HELD_CTX;
  cj_mem_pool_free(2, d[16], 1600, NULL, &owner);
  cj_mem_pool_free(2, d[17], (64 << 10) + 1, NULL, &owner);
  cj_mem_pool_free(2, d[18], 1600, (CUstream)(uintptr_t)0x77, &owner);
  cj_mem_pool_free(2, d[19], 500, NULL, &owner);
  for (k = 3; k < 16; k++)
    cj_mem_pool_free(2, d[k], k == 3 ? 1200 : (size_t)(100 + k), NULL, &owner);
  cj_mem_pool_free(2, d[0], 1600, NULL, &owner);
  /* d[2] and `again` in use: the trim frees the other 14 */
  assert_int_equal(plain_frees, 0);
  assert_ok(cj_mem_trim(2));
  assert_int_equal(plain_frees, 14);
  assert_ok(cj_mem_usage(2, &used, &kept));
  assert_int_equal(used, 3200);
  assert_int_equal(kept, 3200);
  cj_mem_pool_free(2, d[2], 1600, NULL, &owner);
  cj_mem_pool_free(2, again, 1600, NULL, &owner);
  assert_ok(cj_mem_trim(2));
  assert_int_equal(plain_frees, 16);
  /* given back on another stream (an array moved to one): free once that stream drained,
   * since the next request is ordered on the default stream only */
  assert_ok(cj_mem_pool_alloc(2, 1600, NULL, &d[0], &owner));
  assert_int_equal(plain_allocs, 17);
  last_synced = NULL;
  cj_mem_pool_free(2, d[0], 1600, (CUstream)(uintptr_t)0x77, &owner);
  assert_true(last_synced == (CUstream)(uintptr_t)0x77);
  assert_ok(cj_mem_pool_alloc(2, 1600, NULL, &again, &owner));
  assert_true(again == d[0]);
  cj_mem_pool_free(2, again, 1600, NULL, &owner);
  /* a reset: the block of the context before it is neither taken again nor freed */
  assert_ok(cj_mem_pool_alloc(2, 1600, NULL, &d[0], &owner));
  cj_mem_pool_free(2, d[0], 1600, NULL, &owner);
  held_ctx_id++; /* cuDevicePrimaryCtxReset */
  assert_ok(cj_mem_pool_alloc(2, 1600, NULL, &again, &owner));
  assert_true(again != d[0]);
  assert_int_equal(plain_allocs, 18);
  cj_mem_pool_free(2, again, 1600, NULL, &owner);
  assert_ok(cj_mem_trim(2));
  assert_int_equal(plain_frees, 17);
  free((void *)(uintptr_t)d[0]); /* what the reset freed */
  current_ctx = NULL;
}

/* ---- the small pinned area ---- */

/* The device's first CJ_BOUNCE_AFTER transfers that could use the area copy directly. */
static void before_the_area(CUdevice dev) {
  int k, allocs = host_allocs;
  for (k = 0; k < CJ_BOUNCE_AFTER; k++) assert_null(cj_bounce_take(HELD_CTX, dev, 100));
  assert_int_equal(host_allocs, allocs);
}

static void small_area_made_small_after_the_first_copies(void **state) {
  unsigned char src[1600], back[1600], *dev = malloc(sizeof src), *area;
  size_t i;
  (void)state;
  assert_non_null(dev);
  for (i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 7);
  assert_int_equal(host_allocs, 0); /* nothing pinned before a copy needs it */
  assert_int_equal(cj_bounce_htod(HELD_CTX, 0, (CUdeviceptr)(uintptr_t)dev, src, sizeof src, NULL,
                                  "copy"),
                   CUJIT_ERROR_NOT_SUPPORTED); /* the first: the caller copies directly */
  for (i = 1; i < CJ_BOUNCE_AFTER; i++) assert_null(cj_bounce_take(HELD_CTX, 0, 100));
  before_the_area(1);
  assert_int_equal(host_allocs, 0);
  assert_ok(
      cj_bounce_htod(HELD_CTX, 0, (CUdeviceptr)(uintptr_t)dev, src, sizeof src, NULL, "copy"));
  assert_memory_equal(dev, src, sizeof src);
  assert_true(last_htod_from != src); /* through the area */
  assert_int_equal(host_allocs, 1);
  assert_int_equal(host_alloc_size[0], 64 << 10); /* sized for small copies, not large ones */
  memset(back, 0, sizeof back);
  assert_ok(
      cj_bounce_dtoh(HELD_CTX, 0, back, (CUdeviceptr)(uintptr_t)dev, sizeof back, NULL, "copy"));
  assert_memory_equal(back, src, sizeof src);
  assert_int_equal(host_allocs, 1); /* kept */
  /* held: another transfer is not made to wait, it copies directly */
  area = cj_bounce_take(HELD_CTX, 0, 100);
  assert_non_null(area);
  assert_null(cj_bounce_take(HELD_CTX, 0, 100));
  assert_int_equal(cj_bounce_htod(HELD_CTX, 0, (CUdeviceptr)(uintptr_t)dev, src, 16, NULL, "copy"),
                   CUJIT_ERROR_NOT_SUPPORTED);
  assert_non_null(cj_bounce_take(HELD_CTX, 1, 100)); /* each device has its own */
  cj_bounce_give(1);
  cj_bounce_give(0);
  /* grown by powers of two, only as far as a transfer needs, up to CJ_BOUNCE_MAX */
  assert_non_null(cj_bounce_take(HELD_CTX, 0, (200 << 10) + 1));
  cj_bounce_give(0);
  assert_int_equal(host_allocs, 3);
  assert_int_equal(host_alloc_size[2], 256 << 10);
  assert_null(cj_bounce_take(HELD_CTX, 0, CJ_BOUNCE_MAX + 1));
  assert_null(cj_bounce_take(HELD_CTX, -1, 16));
  assert_null(cj_bounce_take(HELD_CTX, CJ_DEVICE_SLOTS, 16));
  assert_int_equal(host_allocs, 3);
  free(dev);
}

/* Pinned memory dies with the context it was made in: a context the program made, which
 * it may destroy, gets no area; after a reset of the held one, a new area is made (the
 * old one's memory went with the context, and is not freed again). */
static void only_held_contexts_get_an_area(void **state) {
  unsigned char src[64] = {7}, dev[64];
  int allocs, frees;
  (void)state;
  assert_null(cj_bounce_take(OTHER_CTX, 0, 16));
  assert_int_equal(cj_bounce_htod(OTHER_CTX, 0, (CUdeviceptr)(uintptr_t)dev, src, sizeof src, NULL,
                                  "copy"),
                   CUJIT_ERROR_NOT_SUPPORTED);
  assert_non_null(cj_bounce_take(HELD_CTX, 0, 16));
  cj_bounce_give(0);
  allocs = host_allocs;
  frees = host_frees;
  held_ctx_id++; /* cuDevicePrimaryCtxReset */
  assert_ok(
      cj_bounce_htod(HELD_CTX, 0, (CUdeviceptr)(uintptr_t)dev, src, sizeof src, NULL, "copy"));
  assert_int_equal(dev[0], 7);
  assert_int_equal(host_allocs, allocs + 1);
  assert_int_equal(host_alloc_size[allocs], 64 << 10);
  assert_int_equal(host_frees, frees);
  assert_non_null(cj_bounce_take(HELD_CTX, 0, 16)); /* and kept for that context */
  cj_bounce_give(0);
  assert_int_equal(host_allocs, allocs + 1);
}

static void no_pinned_memory_no_area(void **state) {
  unsigned char src[64] = {1}, dev[64];
  (void)state;
  before_the_area(3);
  host_alloc_fails = 1;
  assert_int_equal(cj_bounce_htod(HELD_CTX, 3, (CUdeviceptr)(uintptr_t)dev, src, sizeof src, NULL,
                                  "copy"),
                   CUJIT_ERROR_NOT_SUPPORTED);
  host_alloc_fails = 0;
  assert_null(cj_bounce_take(HELD_CTX, 3, 16)); /* not asked again */
  assert_null(cj_bounce_take(HELD_CTX, 3, 16));
}

/* CUJIT_STAGING_THREADS=0: the driver copies every pageable buffer. */
static void staging_off_makes_no_area(void **state) {
  (void)state;
  assert_string_equal(getenv("CUJIT_STAGING_THREADS"), "0");
  assert_null(cj_bounce_take(HELD_CTX, 0, 16));
  assert_int_equal(host_allocs, 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_area_made_small_after_the_first_copies),
      cmocka_unit_test(pool_keeps_everything_unless_capped),
      cmocka_unit_test(a_full_device_gets_what_the_pool_keeps),
      cmocka_unit_test(small_blocks_need_no_pool),
      cmocka_unit_test(only_held_contexts_get_an_area),
      cmocka_unit_test(no_pinned_memory_no_area),
  };
  const struct CMUnitTest off[] = {cmocka_unit_test(staging_off_makes_no_area)};
  int failed;
  fake_driver();
  if (argc > 1 && strcmp(argv[1], "--staging-off") == 0)
    return cmocka_run_group_tests(off, NULL, NULL);
  unsetenv("CUJIT_STAGING_THREADS");
  failed = cmocka_run_group_tests(tests, NULL, NULL);
  free_pinned();
  return failed;
}
