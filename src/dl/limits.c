/* limits.c - what a device allows a launch (threads, grid, shared memory, features), read
 * once per process per device. */
#include <pthread.h>

#include "dl/driver.h"

static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;
static CJ_LARGE cj_limits limits[CJ_DEVICE_SLOTS];
static int limits_ready[CJ_DEVICE_SLOTS];

static cujit_status read_limits(CUdevice dev, cj_limits *l) {
  static const CUdevice_attribute attrs[] = {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                             CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                             CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                             CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                             CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
                                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                                             CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                             CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                             CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                                             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT};
  int v[CJ_COUNT(attrs)];
  size_t i;
  for (i = 0; i < CJ_COUNT(attrs); i++) {
    CUresult r = cj_cu.cuDeviceGetAttribute(&v[i], attrs[i], dev);
    if (r != CUDA_SUCCESS)
      return cj_cu_fail(r, "cuDeviceGetAttribute (reading the device's limits)");
  }
  l->cc = v[0] * 10 + v[1];
  l->max_threads = v[2];
  for (i = 0; i < 3; i++) {
    l->max_block[i] = v[3 + i];
    l->max_grid[i] = v[6 + i];
  }
  l->smem_optin = v[9];
  l->pools = v[10];
  l->coop = v[11];
  l->sms = v[12];
  return CUJIT_OK;
}

cujit_status cj_device_limits(CUdevice dev, const cj_limits **out) {
  cujit_status st = CUJIT_OK;
  CJ_CHECK(dev >= 0 && dev < CJ_DEVICE_SLOTS, CUJIT_ERROR_NO_DEVICE,
           "device %d is beyond the %d devices cujit supports", (int)dev, CJ_DEVICE_SLOTS);
  if (!__atomic_load_n(&limits_ready[dev], __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&limits_lock);
    if (!limits_ready[dev] && (st = read_limits(dev, &limits[dev])) == CUJIT_OK)
      __atomic_store_n(&limits_ready[dev], 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&limits_lock);
  }
  *out = &limits[dev];
  return st;
}
