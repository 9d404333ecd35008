/* test_pool - the launch layer's memory against a driver of the test's own (the entry
 * point table filled with fakes that keep count): the pool keeps everything arrays and
 * In/Out buffers give back unless CUJIT_POOL_KEEP caps it, and an allocation that finds
 * the device full has the pool give back what it keeps and tries once more. The same with
 * a real device is in test_gpu_stress. */
#include "testutil.h"
#include "launch/launch.h"

/* ---- the fake driver ---- */

static int pools_made, trims, oom_replies;
static cuuint64_t threshold;

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

static CUresult fake_trim(CUmemoryPool pool, size_t keep) {
  (void)pool, (void)keep;
  trims++;
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_current(CUcontext *ctx) {
  *ctx = NULL; /* no context cujit holds: small blocks are not kept, only pooled */
  return CUDA_SUCCESS;
}

static CUresult fake_ctx_device(CUdevice *dev) {
  *dev = 0;
  return CUDA_SUCCESS;
}

static CUresult fake_sync(CUstream s) {
  (void)s;
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
  cj_cu.cuCtxGetCurrent = fake_ctx_current;
  cj_cu.cuCtxGetDevice = fake_ctx_device;
  cj_cu.cuStreamSynchronize = fake_sync;
}

/* ---- the pool ---- */

static void pool_keeps_everything_unless_capped(void **state) {
  CUdeviceptr d = 0;
  (void)state;
  unsetenv("CUJIT_POOL_KEEP");
  assert_ok(cj_pool_alloc(0, 4096, NULL, &d));
  assert_int_equal(pools_made, 1);
  /* no release threshold: a synchronisation gives nothing back */
  assert_true(threshold == UINT64_MAX);
  cj_pool_free(0, d, 4096, NULL);
  setenv("CUJIT_POOL_KEEP", "256M", 1); /* read when a device's pool is made */
  assert_ok(cj_pool_alloc(1, 4096, NULL, &d));
  assert_int_equal(pools_made, 2);
  assert_true(threshold == (cuuint64_t)256 << 20);
  cj_pool_free(1, d, 4096, NULL);
  unsetenv("CUJIT_POOL_KEEP");
}

static void a_full_device_gets_what_the_pool_keeps(void **state) {
  CUdeviceptr d = 0;
  (void)state;
  trims = 0;
  oom_replies = 1; /* full until the pool gives back what it keeps */
  assert_ok(cj_pool_alloc(0, 1 << 20, NULL, &d));
  assert_int_equal(trims, 1);
  assert_int_equal(oom_replies, 0);
  cj_pool_free(0, d, 1 << 20, NULL);
  /* full even then: one more try, then the failure says what was done */
  oom_replies = 2;
  assert_status_detail(cj_pool_alloc(0, 1 << 20, NULL, &d), CUJIT_ERROR_DEVICE_MEMORY,
                       "cannot get 1048576 bytes of device memory for an In/Out buffer or an "
                       "array: CUDA_ERROR_OUT_OF_MEMORY, even after cujit's pool gave back what "
                       "it kept");
  assert_int_equal(trims, 2);
  assert_int_equal(oom_replies, 0);
  assert_true(d == 0);
  /* a device that is not full is never trimmed */
  assert_ok(cj_pool_alloc(0, 64, NULL, &d));
  assert_int_equal(trims, 2);
  cj_pool_free(0, d, 64, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pool_keeps_everything_unless_capped),
      cmocka_unit_test(a_full_device_gets_what_the_pool_keeps),
  };
  fake_driver();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
