/* driver.c - raw CUDA driver entry points for the baselines, resolved through cujit so
 * that the benchmark, like cujit, never links libcuda. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

bench_driver bench_cu;

int bench_driver_load(void) {
  int version;
  cujit_status st = cujit_driver_get_version(&version);
  if (st != CUJIT_OK) {
    fprintf(stderr, "cujit-bench: no usable driver: %s\n", cujit_last_error());
    return -1;
  }
#define BENCH_CU_RESOLVE_(fn)                                            \
  if (cujit_driver_get_symbol(#fn, (void **)&bench_cu.fn) != CUJIT_OK) { \
    fprintf(stderr, "cujit-bench: %s\n", cujit_last_error());            \
    return -1;                                                           \
  }
  BENCH_CU_LIST(BENCH_CU_RESOLVE_)
#undef BENCH_CU_RESOLVE_
  return 0;
}

int bench_context(void) {
  CUdevice dev;
  CUcontext ctx;
  if (bench_cu.cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return -1;
  if (bench_cu.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return -1;
  return bench_cu.cuCtxSetCurrent(ctx) == CUDA_SUCCESS ? 0 : -1;
}

void bench_cu_check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return;
  fprintf(stderr, "cujit-bench: %s failed: CUresult %d\n", what, (int)r);
  exit(3);
}

void bench_check_ok(cujit_status st, const char *what) {
  if (st == CUJIT_OK) return;
  fprintf(stderr, "cujit-bench: %s failed: %s: %s\n", what, cujit_status_name(st),
          cujit_last_error());
  exit(3);
}
