/* test_gpu_fault - a kernel that writes to an invalid address: the launch reports the fault
 * naming the kernel and saying the context is no longer usable, every temporary In/Out
 * buffer is given back (the pool's accounting returns to its baseline), and later calls
 * fail cleanly instead of crashing. Its own executable: the fault ruins the context. */
#include "gputest.h"

static const char kSrc[] = "__global__ void bad(float *x, const float *y, int *p) {\n"
                           "  x[threadIdx.x] += y[threadIdx.x];\n"
                           "  if (threadIdx.x == 0) *(volatile int *)p = 1;\n"
                           "}\n";

static void fault_is_reported_and_memory_released(void **state) {
  enum { N = 1 << 18 };
  cujit_function *f = gpu_function(mod, "bad");
  float *x = calloc(N, sizeof(float)), *y = calloc(N, sizeof(float));
  size_t before = 1, after = 1;
  cujit_status st;
  (void)state;
  assert_ok(cujit_mem_pool_get_usage(&before, NULL));
  assert_int_equal(before, 0);
  st = CUJIT_LAUNCH(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_inout(x, N * sizeof(float)),
                    cujit_in(y, N * sizeof(float)), cujit_ptr((CUdeviceptr)0x10));
  printf("the faulting launch: %s: %s\n", cujit_status_name(st), cujit_last_error());
  assert_status_detail(st, CUJIT_ERROR_LAUNCH_FAILED, "kernel 'bad' failed while running: ");
  assert_non_null(strstr(cujit_last_error(), "the CUDA context is no longer usable"));
  assert_int_equal(cujit_last_cu_result(), CUDA_ERROR_ILLEGAL_ADDRESS);
  assert_ok(cujit_mem_pool_get_usage(&after, NULL));
  assert_int_equal(after, before);
  /* what follows fails with an explanation instead of crashing */
  st = cujit_synchronize();
  assert_int_equal(st, CUJIT_ERROR_LAUNCH_FAILED);
  assert_non_null(strstr(cujit_last_error(), "a kernel launched earlier failed"));
  st = CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_inout(x, sizeof(float)),
                    cujit_in(y, sizeof(float)), cujit_ptr((CUdeviceptr)0));
  assert_int_not_equal(st, CUJIT_OK);
  printf("a later launch: %s: %s\n", cujit_status_name(st), cujit_last_error());
  assert_ok(cujit_mem_pool_get_usage(&after, NULL));
  assert_int_equal(after, before);
  free(x);
  free(y);
}

GPU_GROUP_MAIN(kSrc, "fault.cu", NULL, cmocka_unit_test(fault_is_reported_and_memory_released))
