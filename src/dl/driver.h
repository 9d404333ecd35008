/* driver.h - the CUDA driver, loaded at run time (libcuda is never linked). */
#ifndef CUJIT_DRIVER_H
#define CUJIT_DRIVER_H

#include "common/common.h"

/* Every driver entry point cujit uses. Required ones must resolve or the driver counts
 * as missing; optional ones (newer drivers only) may stay NULL and are checked at use. */
/* clang-format off */
#define CJ_DRIVER_REQUIRED(X)                                                                      \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet)             \
  X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain)       \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)                      \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal)                \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuOccupancyMaxPotentialBlockSize)                  \
  X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH)                     \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemsetD8) X(cuMemHostAlloc) X(cuMemFreeHost)       \
  X(cuMemHostRegister) X(cuMemHostUnregister) X(cuMemGetInfo) X(cuPointerGetAttribute)             \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate)    \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)                   \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async)
/* clang-format on */

/* clang-format off */
#define CJ_DRIVER_OPTIONAL(X)                                                                      \
  X(cuLibraryLoadData) X(cuLibraryUnload) X(cuLibraryGetKernel) X(cuLibraryGetGlobal)              \
  X(cuLibraryGetKernelCount) X(cuLibraryEnumerateKernels) X(cuKernelGetFunction)                   \
  X(cuKernelGetName) X(cuKernelGetParamInfo) X(cuKernelGetAttribute) X(cuKernelSetAttribute)       \
  X(cuFuncGetParamInfo) X(cuFuncGetName) X(cuModuleGetFunctionCount)                               \
  X(cuModuleEnumerateFunctions) X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocFromPoolAsync)    \
  X(cuDeviceGetDefaultMemPool) X(cuMemPoolSetAttribute) X(cuMemPoolGetAttribute)                   \
  X(cuMemPoolTrimTo) X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuStreamGetCtx)                      \
  X(cuLaunchHostFunc) X(cuPointerGetAttributes) X(cuLaunchKernelEx)                                \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuOccupancyMaxPotentialClusterSize)             \
  X(cuTexObjectCreate) X(cuTexObjectDestroy) X(cuSurfObjectCreate) X(cuSurfObjectDestroy)          \
  X(cuArray3DCreate) X(cuArrayDestroy) X(cuMemcpy3D) X(cuDeviceGetTexture1DLinearMaxWidth)         \
  X(cuDevicePrimaryCtxGetState) X(cuDevicePrimaryCtxRelease) X(cuCtxGetId)                      \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuStreamIsCapturing) X(cuStreamGetCaptureInfo)   \
  X(cuThreadExchangeStreamCaptureMode) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)             \
  X(cuGraphExecUpdate) X(cuGraphExecKernelNodeSetParams) X(cuGraphExecDestroy) X(cuGraphDestroy)   \
  X(cuEventQuery) X(cuGraphGetNodes) X(cuGraphNodeGetType)
/* clang-format on */

typedef struct cj_driver {
#define CJ_DRIVER_FIELD_(fn) __typeof__(fn) *fn;
  CJ_DRIVER_REQUIRED(CJ_DRIVER_FIELD_)
  CJ_DRIVER_OPTIONAL(CJ_DRIVER_FIELD_)
#undef CJ_DRIVER_FIELD_
  int version; /* cuDriverGetVersion */
} cj_driver;

/* The table; valid once cj_driver_load() returned CUJIT_OK. */
extern cj_driver cj_cu;

/* Loads libcuda.so.1 (or env CUJIT_LIBCUDA), resolves the table and calls cuInit, once per
 * process. Returns CUJIT_OK, CUJIT_ERROR_NO_DRIVER, CUJIT_ERROR_NO_DEVICE or
 * CUJIT_ERROR_DRIVER, with the same detail on every call. Cheap after the first call. */
cujit_status cj_driver_load(void);

/* Turns a failed driver call into a status with detail "<what> failed: NAME (text)". */
cujit_status cj_cu_fail(CUresult r, const char *what);
/* The status a CUresult maps to (CUDA_SUCCESS -> CUJIT_OK). */
cujit_status cj_cu_status(CUresult r);
/* Name of a CUresult ("CUDA_ERROR_ILLEGAL_ADDRESS"), never NULL. */
const char *cj_cu_name(CUresult r);

/* CUJIT_DEVICE, read once per process: the device ordinal in *ordinal (0 when unset or
 * empty). CUJIT_ERROR_INVALID_VALUE, naming the value, when it is not digits only; every
 * call that may choose a device by it fails then, before the driver is loaded. */
cujit_status cj_device_env(int *ordinal);

/* Makes sure the calling thread has a current context: the caller's own if one is
 * current, else the primary context of env CUJIT_DEVICE (default 0), retained once per
 * device for the life of the process and made current on this thread. */
cujit_status cj_ctx_ensure(CUcontext *ctx, CUdevice *dev);
/* Called as a compile that a launch will likely follow starts (on a cache miss): when the
 * process has no context for the device cujit would choose and this thread none current,
 * starts loading the driver and making that device's primary context on a thread of its
 * own; the first call that needs it (cj_ctx_ensure) waits for it. Does nothing otherwise,
 * or when CUJIT_EARLY_CONTEXT is off; reports nothing (the call that needs the context
 * does). driver.c's section on it says more. */
void cj_ctx_early(void);
/* Whether ctx, the calling thread's current context, is a primary context this library
 * holds (it lives until the process exits), as opposed to one the program made and may
 * destroy. A primary context the program made current (through the runtime API, say) is
 * retained here the first time it is asked about. */
int cj_ctx_retained(CUcontext ctx);

/* The device that compiles should target: the current context's, else CUJIT_DEVICE's.
 * Returns its compute capability as major*10+minor in *cc, or a failure status (no
 * driver, no device) without touching the thread's error detail. Where every device has
 * the same compute capability, that is the answer, found without a driver call. */
cujit_status cj_device_cc_for_compile(int *cc);

/* The context device or page-locked memory was made in: its handle and the ID of that
 * life of it (cuCtxGetId: a primary context reset keeps the handle and ends the life, and
 * the memory with it; a context made again at a freed handle's address has a new ID). */
typedef struct cj_mem_ctx {
  CUcontext ctx;
  unsigned long long id; /* 0 where the driver cannot tell */
} cj_mem_ctx;
/* The ID of context ctx's life now; 0 where the driver cannot tell or ctx is not a live
 * context. */
unsigned long long cj_ctx_id(CUcontext ctx);
/* Whether memory made in `owner` died with its context: its ID is known and the context
 * (by its handle) now has another, or none. */
int cj_ctx_mem_dead(const cj_mem_ctx *owner);

/* The calling thread's stream capture mode made relaxed, for a call that adds nothing to a
 * capture but that the driver refuses while one runs (in global mode, any thread's; in
 * thread-local mode, this thread's): loading code, allocating memory a graph will hold.
 * *saved gets the mode to give back with cj_capture_restore(). Nothing is called where the
 * driver lacks the entry point. */
static inline void cj_capture_relax(CUstreamCaptureMode *saved) {
  *saved = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (cj_cu.cuThreadExchangeStreamCaptureMode &&
      cj_cu.cuThreadExchangeStreamCaptureMode(saved) != CUDA_SUCCESS)
    *saved = CU_STREAM_CAPTURE_MODE_RELAXED;
}
static inline void cj_capture_restore(CUstreamCaptureMode *saved) {
  if (*saved != CU_STREAM_CAPTURE_MODE_RELAXED) cj_cu.cuThreadExchangeStreamCaptureMode(saved);
}
/* cuKernelGetFunction, which may load the kernel into the current context, in the relaxed
 * capture mode. */
static inline CUresult cj_cu_kernel_function(CUfunction *f, CUkernel k) {
  CUstreamCaptureMode mode;
  CUresult r;
  cj_capture_relax(&mode);
  r = cj_cu.cuKernelGetFunction(f, k);
  cj_capture_restore(&mode);
  return r;
}
/* Whether r is one of the driver's refusals of a call made while a stream is being captured
 * (CUDA_ERROR_STREAM_CAPTURE_*, CUDA_ERROR_CAPTURED_EVENT). */
static inline int cj_cu_capture_error(CUresult r) {
  return (r >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
          r <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
}

/* ---- limits.c ---- */

#define CJ_DEVICE_SLOTS 64 /* devices cujit supports in one process */

typedef struct cj_limits {
  int cc;           /* compute capability, major * 10 + minor */
  int max_threads;  /* threads per block */
  int max_block[3]; /* block dimensions */
  int max_grid[3];  /* grid dimensions */
  int smem_optin;   /* shared memory per block a kernel may opt in to */
  int pools;        /* stream-ordered memory pools are supported */
  int coop;         /* cooperative launches are supported */
  int sms;          /* multiprocessors */
} cj_limits;

/* The limits of `dev`, read once per process; owned by cujit. */
cujit_status cj_device_limits(CUdevice dev, const cj_limits **out);

/* ---- copy.c ---- */

/* A failed wait for the device: a kernel fault found here is reported as one (the context
 * is lost then), anything else as the driver's error. */
cujit_status cj_cu_wait_failed(CUresult r, const char *what);
/* cuMemcpyHtoD that has finished when it returns: from pageable memory the driver returns
 * once the data is staged, before it reaches the device, so that work on a non-blocking
 * stream could still read the old contents; this also waits for the legacy stream. */
cujit_status cj_memcpy_htod_sync(CUdeviceptr dst, const void *src, size_t bytes, const char *what);

#endif
