/* fakecuda.c - a CUDA driver that does nothing, for measuring cujit's own work on a machine
 * without a GPU: CUJIT_LIBCUDA=<build>/lib/libcujit-fakecuda.so makes cujit (and the
 * benchmark, which asks cujit for its driver entry points) use it. One device of compute
 * capability 9.0; loads, lookups and launches succeed at once and run nothing; device
 * memory is addresses that nothing backs. Only the `start` and `launch` groups mean
 * anything on it: with the driver's own work gone, what cujit takes beyond the bare side is
 * cujit's work on the CPU (instructions, system calls, page faults), which callgrind,
 * strace and perf can look at (cujit-bench-callcost, callcost.c, counts each launch form's
 * instructions per call on it). Never a test: it answers what those groups ask and no more.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define FAKE_CTX ((CUcontext)(uintptr_t)0x1000)
#define FAKE_HANDLE(x) ((void *)(uintptr_t)(x))

static _Thread_local CUcontext current;
static uintptr_t next_address = 0x7f0000000000;

typedef struct kernel_layout {
  const char *name;
  unsigned n;
  unsigned short offset[16], size[16];
} kernel_layout;

/* The parameters of the benchmark's kernels, as the driver would report them. */
static const kernel_layout layouts[] = {
    {"saxpy", 4, {0, 8, 16, 24}, {4, 8, 8, 4}},
    {"empty3", 3, {0, 8, 16}, {8, 8, 4}},
    {"empty16",
     16,
     {0, 8, 16, 24, 32, 40, 48, 56, 64, 68, 72, 80, 88, 96, 100, 104},
     {8, 8, 8, 8, 8, 8, 8, 8, 4, 4, 4, 8, 8, 4, 4, 8}},
};

/* A kernel handle: its layout, or the slot past the table for any other kernel. */
static CUkernel kernel_named(const char *name) {
  size_t i;
  for (i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    if (strcmp(layouts[i].name, name) == 0) break;
  return (CUkernel)(void *)&layouts[i];
}

static CUresult ok(void) { return CUDA_SUCCESS; }

static CUresult get_error_name(CUresult r, const char **s) {
  *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

static CUresult get_version(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

static CUresult device_count(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}

static CUresult device_get(CUdevice *d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult device_name(char *name, int len, CUdevice d) {
  (void)d;
  strncpy(name, "fake CUDA driver (no GPU)", (size_t)len);
  return CUDA_SUCCESS;
}

static CUresult device_attribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = 1; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

static CUresult primary_retain(CUcontext *c, CUdevice d) {
  (void)d;
  *c = FAKE_CTX;
  return CUDA_SUCCESS;
}

static CUresult primary_state(CUdevice d, unsigned *flags, int *active) {
  (void)d;
  *flags = 0;
  *active = 1;
  return CUDA_SUCCESS;
}

static CUresult ctx_get(CUcontext *c) {
  *c = current;
  return CUDA_SUCCESS;
}

static CUresult ctx_set(CUcontext c) {
  current = c;
  return CUDA_SUCCESS;
}

static CUresult ctx_device(CUdevice *d) {
  *d = 0;
  return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult ctx_id(CUcontext c, unsigned long long *id) {
  (void)c;
  *id = 1;
  return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult module_load(CUmodule *m, const void *image) {
  (void)image;
  *m = (CUmodule)FAKE_HANDLE(0x2000);
  return CUDA_SUCCESS;
}

static CUresult module_function(CUfunction *f, CUmodule m, const char *name) {
  (void)m;
  *f = (CUfunction)(void *)kernel_named(name);
  return CUDA_SUCCESS;
}

static CUresult library_load(CUlibrary *l, const void *code, CUjit_option *o, void **ov,
                             unsigned no, CUlibraryOption *lo, void **lov, unsigned nlo) {
  (void)code, (void)o, (void)ov, (void)no, (void)lo, (void)lov, (void)nlo;
  *l = (CUlibrary)FAKE_HANDLE(0x3000);
  return CUDA_SUCCESS;
}

static CUresult library_kernel(CUkernel *k, CUlibrary l, const char *name) {
  (void)l;
  *k = kernel_named(name);
  return CUDA_SUCCESS;
}

static CUresult kernel_function(CUfunction *f, CUkernel k) {
  *f = (CUfunction)(void *)k;
  return CUDA_SUCCESS;
}

static CUresult kernel_attribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d) {
  (void)k, (void)d;
  *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK           ? 1024
       : a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 49152
                                                              : 0;
  return CUDA_SUCCESS;
}

/* Any other kernel has 16 parameters of 8 bytes: enough for looking it up, not for a launch
 * with arguments of other sizes. */
static CUresult param_info(const kernel_layout *k, size_t i, size_t *offset, size_t *size) {
  if (k == &layouts[sizeof layouts / sizeof layouts[0]]) {
    *offset = 8 * i;
    *size = 8;
    return i < 16 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  if (i >= k->n) return CUDA_ERROR_INVALID_VALUE;
  *offset = k->offset[i];
  *size = k->size[i];
  return CUDA_SUCCESS;
}

static CUresult kernel_param_info(CUkernel k, size_t i, size_t *offset, size_t *size) {
  return param_info((const kernel_layout *)(void *)k, i, offset, size);
}

static CUresult func_param_info(CUfunction f, size_t i, size_t *offset, size_t *size) {
  return param_info((const kernel_layout *)(void *)f, i, offset, size);
}

static CUresult mem_alloc(CUdeviceptr *p, size_t bytes) {
  *p = (CUdeviceptr)__atomic_fetch_add(&next_address, (bytes + 255) / 256 * 256 + 256,
                                       __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

static CUresult host_alloc(void **p, size_t bytes, unsigned flags) {
  (void)flags;
  *p = malloc(bytes ? bytes : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult host_free(void *p) {
  free(p);
  return CUDA_SUCCESS;
}

static CUresult pool_create(CUmemoryPool *pool, const CUmemPoolProps *props) {
  (void)props;
  *pool = (CUmemoryPool)FAKE_HANDLE(0x4000);
  return CUDA_SUCCESS;
}

static CUresult pool_alloc(CUdeviceptr *p, size_t bytes, CUmemoryPool pool, CUstream s) {
  (void)pool, (void)s;
  return mem_alloc(p, bytes);
}

/* What memory a pointer is: not answered (only In/Out asks, which means nothing here). */
static CUresult pointer_attributes(unsigned n, CUpointer_attribute *a, void **data, CUdeviceptr p) {
  (void)n, (void)a, (void)data, (void)p;
  return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult mem_info(size_t *free_bytes, size_t *total) {
  *free_bytes = (size_t)70 << 30;
  *total = (size_t)80 << 30;
  return CUDA_SUCCESS;
}

static const struct {
  const char *name;
  void *fn;
} table[] = {
#define FAKE_(name, fn) \
  { #name, (void *)(fn) }
    FAKE_(cuInit, ok),
    FAKE_(cuDriverGetVersion, get_version),
    FAKE_(cuGetErrorName, get_error_name),
    FAKE_(cuGetErrorString, get_error_name),
    FAKE_(cuDeviceGet, device_get),
    FAKE_(cuDeviceGetCount, device_count),
    FAKE_(cuDeviceGetName, device_name),
    FAKE_(cuDeviceGetAttribute, device_attribute),
    FAKE_(cuDevicePrimaryCtxRetain, primary_retain),
    FAKE_(cuDevicePrimaryCtxGetState, primary_state),
    FAKE_(cuDevicePrimaryCtxRelease, ok),
    FAKE_(cuCtxGetCurrent, ctx_get),
    FAKE_(cuCtxSetCurrent, ctx_set),
    FAKE_(cuCtxGetDevice, ctx_device),
    FAKE_(cuCtxGetId, ctx_id),
    FAKE_(cuCtxSynchronize, ok),
    FAKE_(cuModuleLoadData, module_load),
    FAKE_(cuModuleUnload, ok),
    FAKE_(cuModuleGetFunction, module_function),
    FAKE_(cuModuleGetGlobal, ok),
    FAKE_(cuFuncGetAttribute, ok),
    FAKE_(cuFuncSetAttribute, ok),
    FAKE_(cuFuncGetParamInfo, func_param_info),
    FAKE_(cuOccupancyMaxPotentialBlockSize, ok),
    FAKE_(cuLaunchKernel, ok),
    FAKE_(cuMemAlloc, mem_alloc),
    FAKE_(cuMemFree, ok),
    FAKE_(cuMemcpyHtoD, ok),
    FAKE_(cuMemcpyDtoH, ok),
    FAKE_(cuMemcpyHtoDAsync, ok),
    FAKE_(cuMemcpyDtoHAsync, ok),
    FAKE_(cuMemcpyDtoDAsync, ok),
    FAKE_(cuMemsetD8, ok),
    FAKE_(cuMemsetD8Async, ok),
    FAKE_(cuMemHostAlloc, host_alloc),
    FAKE_(cuMemFreeHost, host_free),
    FAKE_(cuMemPoolCreate, pool_create),
    FAKE_(cuMemPoolDestroy, ok),
    FAKE_(cuMemAllocFromPoolAsync, pool_alloc),
    FAKE_(cuMemFreeAsync, ok),
    FAKE_(cuPointerGetAttributes, pointer_attributes),
    FAKE_(cuMemHostRegister, ok),
    FAKE_(cuMemHostUnregister, ok),
    FAKE_(cuMemGetInfo, mem_info),
    FAKE_(cuPointerGetAttribute, ok),
    FAKE_(cuStreamCreate, ok),
    FAKE_(cuStreamDestroy, ok),
    FAKE_(cuStreamSynchronize, ok),
    FAKE_(cuStreamQuery, ok),
    FAKE_(cuEventCreate, ok),
    FAKE_(cuEventDestroy, ok),
    FAKE_(cuEventRecord, ok),
    FAKE_(cuEventSynchronize, ok),
    FAKE_(cuEventElapsedTime, ok),
    FAKE_(cuLibraryLoadData, library_load),
    FAKE_(cuLibraryUnload, ok),
    FAKE_(cuLibraryGetKernel, library_kernel),
    FAKE_(cuLibraryGetGlobal, ok),
    FAKE_(cuKernelGetFunction, kernel_function),
    FAKE_(cuKernelGetAttribute, kernel_attribute),
    FAKE_(cuKernelSetAttribute, ok),
    FAKE_(cuKernelGetParamInfo, kernel_param_info),
#undef FAKE_
};

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *status) {
  size_t i;
  (void)version, (void)flags;
  *pfn = NULL;
  for (i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, symbol) == 0) *pfn = table[i].fn;
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
