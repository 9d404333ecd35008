/* launch.h - the launch layer's private interface: the checks a launch makes (launch.c,
 * launchex.c), the launch itself, and the memory a launch stages through (memory.c,
 * staging.c). */
#ifndef CUJIT_LAUNCH_H
#define CUJIT_LAUNCH_H

#include "module/function.h"

/* ---- checks made before a launch (launch.c; pure, no driver) ---- */

/* CUJIT_ERROR_LAUNCH_CONFIG: "cannot launch kernel 'k': <what>; nothing was launched". */
cujit_status cj_config_fail(const char *kernel, const char *fmt, ...) CJ_PRINTF(2, 3);
/* Argument count and each argument's kind, size and type against the kernel's parameters
 * (`types`, when known, says which argument types each takes: module/function.h).
 * CUJIT_ERROR_INVALID_ARGS naming the parameter, the expected and the given size or type. */
cujit_status cj_args_check(const char *kernel, size_t nparams, const size_t *sizes,
                           const cj_ptypes *types, const cujit_arg *args, size_t nargs);
/* Grid, block and shared memory against the device's and the kernel's limits.
 * CUJIT_ERROR_LAUNCH_CONFIG saying which limit is exceeded. */
cujit_status cj_config_check(const char *kernel, const cj_limits *lim, int kernel_max_threads,
                             int static_smem, cujit_dim3 grid, cujit_dim3 block,
                             unsigned shared_bytes);

/* Cooperative launches and clusters (pure, no driver). Each refusal is
 * CUJIT_ERROR_LAUNCH_CONFIG naming the rule and what to do. */
/* The device supports cooperative launches, and the grid's blocks are at most `per_sm`
 * (the occupancy calculator's answer for this block and shared memory) times `sms`. */
cujit_status cj_coop_check(const char *kernel, int supported, cujit_dim3 grid, cujit_dim3 block,
                           unsigned shared_bytes, int per_sm, int sms);
/* Compute capability `cc` (major * 10 + minor) is 9.0 or newer, every cluster dimension is
 * set, each grid dimension is a multiple of the cluster's, and the cluster holds at most 8
 * blocks (16 with CUJIT_LAUNCH_NON_PORTABLE_CLUSTER in `flags`). */
cujit_status cj_cluster_check(const char *kernel, int cc, cujit_dim3 grid, cujit_dim3 cluster,
                              unsigned flags);
/* The cluster agrees with the kernel's __cluster_dims__ (`required`; zeros: none). */
cujit_status cj_cluster_match(const char *kernel, const int required[3], cujit_dim3 cluster);
/* The cluster holds at most `fits` blocks: the most the device can run together for this
 * block size and shared memory (cuOccupancyMaxPotentialClusterSize). */
cujit_status cj_cluster_fit_check(const char *kernel, cujit_dim3 cluster, cujit_dim3 block,
                                  unsigned shared_bytes, int fits);

/* ---- the launch itself (launch.c, and inline below) ---- */

/* Nonzero when the options ask for a cooperative launch or clusters (the launch then goes
 * through cuLaunchKernelEx; plain launches never do). */
#define CJ_OPTS_EX(o) ((o)->flags | (o)->cluster.x | (o)->cluster.y | (o)->cluster.z)
/* What a launch with CJ_OPTS_EX options needs beyond cj_launch_checked: the flags known,
 * the driver able, and the rules above, with the device's and the kernel's answers. A
 * cluster equal to the kernel's __cluster_dims__ is cleared in *o (the kernel's own
 * applies), so the launch may then be a plain one. */
cujit_status cj_launch_ex_check(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                                cujit_dim3 block, cujit_launch_options *o);
/* The launch through cuLaunchKernelEx, with the options' attributes. */
cujit_status cj_launch_ex(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                          cujit_dim3 block, void **params, const cujit_launch_options *o);

/* The configuration against the device's and the kernel's limits; raises the kernel's
 * dynamic shared memory allowance when asked for more. */
cujit_status cj_launch_checked(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                               cujit_dim3 block, const cujit_launch_options *o);
/* A failed launch (or a later step of one) as a status with its message. */
cujit_status cj_launch_failed(const cujit_function *fn, CUresult r, const char *when);

/* The launch without In/Out buffers: nothing allocated. Inline in every launch path, so
 * that the driver runs as few frames below the caller as possible (each frame more is a
 * return the processor may mispredict: the driver's own calls go deep). */
static inline CJ_ALWAYS_INLINE cujit_status cj_launch_direct(const cujit_function *fn,
                                                             const cj_fslot *slot,
                                                             cujit_dim3 grid, cujit_dim3 block,
                                                             void **params,
                                                             const cujit_launch_options *o) {
  CUcontext ctx;
  CUdevice dev;
  cujit_status st;
  CUresult r = cj_cu.cuLaunchKernel((CUfunction)slot->kernel, grid.x, grid.y, grid.z, block.x,
                                    block.y, block.z, o->shared_bytes, o->stream, params, NULL);
  if (CJ_UNLIKELY(r == CUDA_ERROR_INVALID_CONTEXT)) { /* this thread has no context yet */
    if ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) return st;
    r = cj_cu.cuLaunchKernel((CUfunction)slot->kernel, grid.x, grid.y, grid.z, block.x, block.y,
                             block.z, o->shared_bytes, o->stream, params, NULL);
  }
  return CJ_LIKELY(r == CUDA_SUCCESS) ? CUJIT_OK : cj_launch_failed(fn, r, "cuLaunchKernel");
}

/* Launches with `params` already a kernelParams array matching the kernel's layout (the
 * caller guarantees count and sizes; no In/Out): device limits are checked, then launch. */
static inline CJ_ALWAYS_INLINE cujit_status cj_launch_params(const cujit_function *fn,
                                                             cujit_dim3 grid, cujit_dim3 block,
                                                             void **params,
                                                             const cujit_launch_options *opts) {
  static const cujit_launch_options defaults;
  const cujit_launch_options *o = opts ? opts : &defaults;
  cj_fslot *slot;
  cujit_status st;
  if (CJ_UNLIKELY((st = cj_function_slot(fn, &slot, 0)) != CUJIT_OK)) return st;
  if (CJ_UNLIKELY((st = cj_launch_checked(fn, slot, grid, block, o)) != CUJIT_OK)) return st;
  return cj_launch_direct(fn, slot, grid, block, params, o);
}

/* ---- device memory pool and host memory (memory.c) ---- */

/* Temporary device memory for a launch, ordered on `stream`, from a per-device pool that
 * keeps memory between launches (falls back to cuMemAlloc where pools are unsupported). */
cujit_status cj_pool_alloc(CUdevice dev, size_t bytes, CUstream stream, CUdeviceptr *dptr);
/* Gives it back, ordered on `stream`; counted as returned even when the driver fails
 * (after a kernel fault), so the accounting always returns to its baseline. */
void cj_pool_free(CUdevice dev, CUdeviceptr dptr, size_t bytes, CUstream stream);

typedef enum cj_host_kind {
  CJ_HOST_PAGEABLE = 0, /* ordinary memory: the driver or cujit must stage it */
  CJ_HOST_PINNED = 1,   /* page-locked (cujit_host_alloc, cuMemHostRegister) or managed */
  CJ_HOST_DEVICE = 2    /* device memory, which In/Out must not be given */
} cj_host_kind;

/* What kind of memory [p, p + bytes) is, as far as the driver knows. */
cj_host_kind cj_host_kind_of(const void *p, size_t bytes);

/* ---- pageable transfers through pinned chunks (staging.c) ---- */

/* Smallest pageable transfer worth staging (env CUJIT_STAGING_MIN, default 1 MiB). */
size_t cj_staging_min(void);
/* Copies between pageable host memory and device memory through reusable pinned chunks
 * filled and drained by several threads, ordered on `stream`; the host side is finished
 * when these return (the device side of htod may still be in flight). Return
 * CUJIT_ERROR_NOT_SUPPORTED, touching nothing and leaving no detail, when staging is not
 * available here (another context, setup failed); the caller then copies directly. */
cujit_status cj_stage_htod(CUcontext ctx, CUdeviceptr dst, const void *src, size_t bytes,
                           CUstream stream);
cujit_status cj_stage_dtoh(CUcontext ctx, void *dst, CUdeviceptr src, size_t bytes,
                           CUstream stream);

#endif
