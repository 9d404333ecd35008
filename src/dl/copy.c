/* copy.c - waiting for the device, and copies that have finished when they return. */
#include "dl/driver.h"

cujit_status cj_cu_wait_failed(CUresult r, const char *what) {
  const char *text = NULL;
  if (cj_cu_status(r) != CUJIT_ERROR_LAUNCH_FAILED) return cj_cu_fail(r, what);
  cj_cu.cuGetErrorString(r, &text);
  /* cj_fail_cu adds that the context is lost and the process must end */
  return cj_fail_cu(CUJIT_ERROR_LAUNCH_FAILED, r, "%s: a kernel launched earlier failed: %s (%s)",
                    what, cj_cu_name(r), text ? text : "no description");
}

cujit_status cj_memcpy_htod_sync(CUdeviceptr dst, const void *src, size_t bytes, const char *what) {
  CUresult r = cj_cu.cuMemcpyHtoD(dst, src, bytes);
  if (r == CUDA_SUCCESS) r = cj_cu.cuStreamSynchronize(NULL);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_wait_failed(r, what);
}
