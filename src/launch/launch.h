/* launch.h - the launch layer's private interface: the checks a launch makes (check.c),
 * the launch itself (launch.c, launchex.c), and the memory a launch stages through (memory.c,
 * staging.c). */
#ifndef CUJIT_LAUNCH_H
#define CUJIT_LAUNCH_H

#include "module/function.h"

/* ---- checks made before a launch (check.c; pure, no driver) ---- */

/* How messages name an argument's kind ("In buffer"). */
const char *cj_launch_kind_name(int kind);
/* CUJIT_ERROR_LAUNCH_CONFIG: "cannot launch kernel 'k': <what>; nothing was launched". */
cujit_status cj_config_fail(const char *kernel, const char *fmt, ...) CJ_PRINTF(2, 3);
/* Argument count and each argument's kind, size and type against the kernel's parameters
 * (`types`, when known, says which argument types each takes: module/function.h).
 * CUJIT_ERROR_INVALID_ARGS naming the parameter, the expected and the given size or type. */
cujit_status cj_launch_check_args(const char *kernel, size_t nparams, const size_t *sizes,
                                  const cj_ptypes *types, const cujit_arg *args, size_t nargs);
/* 1 when some argument is a plain value (a number CUJIT_LAUNCH() made an argument of) that
 * its parameter does not take as it is (module/accept.h; every one, where `types` is NULL),
 * which cj_launch_check_args() left to cj_launch_convert_args(). */
int cj_launch_plain_args(const cj_ptypes *types, const cujit_arg *args, size_t nargs);
/* The arguments into out[0..nargs), each plain value its parameter does not take as it is
 * converted to the parameter's type (cj_convert), the others copied. CUJIT_ERROR_INVALID_ARGS
 * naming the argument, its type and value, the parameter's type and why, where it is
 * refused. */
cujit_status cj_launch_convert_args(const char *kernel, const cj_ptypes *types,
                                    const cujit_arg *args, size_t nargs, cujit_arg *out);
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
 * blocks (16 with CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER in `flags`). */
cujit_status cj_cluster_check(const char *kernel, int cc, cujit_dim3 grid, cujit_dim3 cluster,
                              unsigned flags);
/* The cluster agrees with the kernel's __cluster_dims__ (`required`; zeros: none). */
cujit_status cj_cluster_match(const char *kernel, const int required[3], cujit_dim3 cluster);
/* The cluster holds at most `fits` blocks: the most the device can run together for this
 * block size and shared memory (cuOccupancyMaxPotentialClusterSize). */
cujit_status cj_cluster_fit_check(const char *kernel, cujit_dim3 cluster, cujit_dim3 block,
                                  unsigned shared_bytes, int fits);

/* ---- the launch itself (launch.c, and inline below) ---- */

/* The launch options' first version ended with cluster: what a size of 0 stands for. */
#define CJ_LAUNCH_OPTIONS_V1 CJ_SIZE_V1(cujit_launch_options, cluster)
/* Nonzero when the caller's options have this library's layout and may be read where they
 * are; others are read into a copy by cujit_launch, which the direct paths leave them to. */
#define CJ_OPTS_CURRENT(o) \
  CJ_SIZED_CURRENT((o)->size, CJ_LAUNCH_OPTIONS_V1, sizeof(cujit_launch_options))
/* Nonzero when the options ask for a cooperative launch or clusters (the launch then goes
 * through cuLaunchKernelEx; plain launches never do). */
#define CJ_OPTS_EX(o) ((o)->flags | (o)->cluster.x | (o)->cluster.y | (o)->cluster.z)
/* What a launch with CJ_OPTS_EX options needs beyond cj_launch_checked: the flags known,
 * the driver able, and the rules above, with the device's and the kernel's answers. A
 * cluster equal to the kernel's __cluster_dims__ is cleared in *o (the kernel's own
 * applies), so the launch may then be a plain one. */
cujit_status cj_launch_ex_check(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                                cujit_dim3 block, cujit_launch_options *o);
/* The launch through cuLaunchKernelEx, with the options' attributes: the only call of
 * cuLaunchKernelEx (launchex.c). */
cujit_status cj_launch_ex(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                          cujit_dim3 block, void **params, const cujit_launch_options *o);

/* The configuration against the device's and the kernel's limits; raises the kernel's
 * dynamic shared memory allowance when asked for more. */
cujit_status cj_launch_checked(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                               cujit_dim3 block, const cujit_launch_options *o);
/* A failed launch (or a later step of one) as a status with its message (check.c). */
cujit_status cj_launch_failed(const cujit_function *fn, CUresult r, const char *when);
/* What to do after `what` (cuLaunchKernel or cuLaunchKernelEx) returned r, not
 * CUDA_SUCCESS, on try `tries` (0 the first): CUJIT_OK when the launch is worth making
 * again (the thread had no current context and now has one, on the first try only),
 * else the failure as a status with its message. Out of line: never on the hot path. */
cujit_status cj_launch_refused(const cujit_function *fn, CUresult r, int tries, const char *what);

/* Whether grid, block and shared memory are within every limit cj_launch_checked() tests,
 * with the allowance for dynamic shared memory already raised far enough: the hot path's
 * test, without a call or a branch per limit (a dimension of 0 wraps around to the largest
 * unsigned and fails its comparison). When it says no, cj_launch_checked() says why, or
 * raises the allowance. */
static inline CJ_ALWAYS_INLINE int cj_config_fits(const cj_fslot *slot, cujit_dim3 grid,
                                                  cujit_dim3 block, unsigned shared_bytes) {
  const cj_limits *l = slot->lim;
  const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  return ((block.x - 1u) < (unsigned)l->max_block[0]) &
         ((block.y - 1u) < (unsigned)l->max_block[1]) &
         ((block.z - 1u) < (unsigned)l->max_block[2]) & ((grid.x - 1u) < (unsigned)l->max_grid[0]) &
         ((grid.y - 1u) < (unsigned)l->max_grid[1]) & ((grid.z - 1u) < (unsigned)l->max_grid[2]) &
         (threads <= (unsigned long long)l->max_threads) &
         (threads <= (unsigned long long)slot->max_threads) &
         ((unsigned long long)slot->static_smem + shared_bytes <=
          (unsigned long long)l->smem_optin) &
         (shared_bytes <= (unsigned)__atomic_load_n(&slot->dyn_smem_max, __ATOMIC_ACQUIRE));
}

/* cj_launch_checked() behind cj_config_fits(): called only when the fast test fails. */
static inline CJ_ALWAYS_INLINE cujit_status cj_launch_ready(const cujit_function *fn,
                                                            cj_fslot *slot, cujit_dim3 grid,
                                                            cujit_dim3 block,
                                                            const cujit_launch_options *o) {
  if (CJ_LIKELY(cj_config_fits(slot, grid, block, o->shared_bytes))) return CUJIT_OK;
  return cj_launch_checked(fn, slot, grid, block, o);
}

/* ---- graphs: what the hot paths ask (capture.c) ---- */

/* Captures begun with cujit_graph_begin() and not ended yet (atomic): while it is 0, which
 * is the hot paths' one test, a launch, an allocation or a free asks nothing more. */
extern int cj_captures_live;
/* A launch that succeeded while a capture runs: when its stream is being captured (by
 * cujit_graph_begin()), the capture holds the kernel's module and the memory its arguments
 * point into, and records the launch (`handle`, the CUkernel when `by_kernel`) and its
 * node. CUJIT_OK, or CUJIT_ERROR_OUT_OF_MEMORY (the capture's end then fails). */
cujit_status cj_capture_launched(const cujit_function *fn, CUfunction handle, int by_kernel,
                                 CUstream stream, void **params, cujit_dim3 grid, cujit_dim3 block,
                                 unsigned shared_bytes);

/* What cuLaunchKernel is given: the kernel's function when the current context is the one
 * the slot saw (one driver call to ask, which costs less than what the driver spends
 * finding a CUkernel's function for the context), else the context-independent kernel. */
static inline CJ_ALWAYS_INLINE CUfunction cj_launch_handle(const cj_fslot *slot) {
  unsigned long long id;
  if (slot->fn && cj_cu.cuCtxGetId(NULL, &id) == CUDA_SUCCESS && id == slot->fn_ctx)
    return slot->fn;
  return (CUfunction)slot->kernel;
}

/* The launch with `params` a kernelParams array (no In/Out left to stage): the only call
 * of cuLaunchKernel, which every path takes (cujit_launch, staged launches, typed and
 * bound calls, arrays). Inline, so that the driver runs as few frames below the caller as
 * possible (each frame more is a return the processor may mispredict: the driver's own
 * calls go deep); one test of the result on success. */
static inline CJ_ALWAYS_INLINE cujit_status cj_launch_kernel(const cujit_function *fn,
                                                             const cj_fslot *slot, cujit_dim3 grid,
                                                             cujit_dim3 block, void **params,
                                                             const cujit_launch_options *o) {
  cujit_status st;
  int tries = 0;
  do {
    CUfunction h = cj_launch_handle(slot);
    CUresult r = cj_cu.cuLaunchKernel(h, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                      o->shared_bytes, o->stream, params, NULL);
    if (CJ_LIKELY(r == CUDA_SUCCESS)) {
      if (CJ_LIKELY(!__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED))) return CUJIT_OK;
      return cj_capture_launched(fn, h, h != slot->fn, o->stream, params, grid, block,
                                 o->shared_bytes);
    }
    st = cj_launch_refused(fn, r, tries++, "cuLaunchKernel");
  } while (st == CUJIT_OK);
  return st;
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
  if (CJ_UNLIKELY((st = cj_launch_ready(fn, slot, grid, block, o)) != CUJIT_OK)) return st;
  return cj_launch_kernel(fn, slot, grid, block, params, o);
}

/* ---- device memory pool and host memory (memory.c) ---- */

/* Device memory for a launch or an array, ordered on `stream` (a stream of the current
 * context), from a per-device pool that keeps memory between launches (falls back to
 * cuMemAlloc where pools are unsupported); *owner gets the context it is made in. On a
 * stream cujit is capturing, the memory is not part of the graph: it is taken from what
 * the capture kept, or made on the capture's own stream (and waited for), outside it. */
cujit_status cj_mem_pool_alloc(CUdevice dev, size_t bytes, CUstream stream, CUdeviceptr *dptr,
                               cj_mem_ctx *owner);
/* Gives it back, ordered on `stream` (a stream of its context, which is made current for
 * the call when another is); counted as returned even when the driver fails (after a
 * kernel fault), so the accounting always returns to its baseline. Memory whose context
 * died (a reset) is neither freed nor kept: it went with its context. Given back on a
 * stream cujit is capturing, it is kept by the capture (its graph's work may use it at
 * every replay) and still counted in use until the graph is released. */
void cj_mem_pool_free(CUdevice dev, CUdeviceptr dptr, size_t bytes, CUstream stream,
                      const cj_mem_ctx *owner);
/* cujit_mem_pool_get_usage() and cujit_mem_pool_trim() for device dev. */
cujit_status cj_mem_usage(CUdevice dev, size_t *in_use, size_t *kept);
cujit_status cj_mem_trim(CUdevice dev);

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
/* Copies between pageable host memory and the memory of device `dev` (ctx current on the
 * calling thread) through reusable pinned chunks filled and drained by several threads,
 * ordered on `stream`; the host side is finished when these return (the device side of
 * htod may still be in flight). Each device has threads and chunks of its own, made on
 * its first staged copy for the context current then, and kept until the process exits.
 * Return CUJIT_ERROR_NOT_SUPPORTED, touching nothing and leaving no detail, when staging
 * is not available here (staging turned off, setup failed, a device beyond
 * CJ_DEVICE_SLOTS, or another context than the one the device's threads work in); the
 * caller then copies directly. */
cujit_status cj_stage_htod(CUcontext ctx, CUdevice dev, CUdeviceptr dst, const void *src,
                           size_t bytes, CUstream stream);
cujit_status cj_stage_dtoh(CUcontext ctx, CUdevice dev, void *dst, CUdeviceptr src, size_t bytes,
                           CUstream stream);
/* Small pageable transfers: one pinned area per device, made (at 64 KiB) on the
 * CJ_BOUNCE_AFTER-th transfer that could use it (the earlier ones get NULL: a short
 * program copies directly rather than pay for pinned memory) and grown to what one needs,
 * up to CJ_BOUNCE_MAX; kept until the process exits. cj_bounce_take gives device dev's area, at
 * least `bytes` long, to the caller until cj_bounce_give, for copies in ctx (current on the calling
 * thread, a context of dev); NULL (nothing to give back) when another caller holds it, when ctx is
 * not a primary context this library holds (the area's memory must outlive its context), when bytes
 * is above CJ_BOUNCE_MAX, when CUJIT_STAGING_THREADS is 0 (the driver copies every pageable buffer
 * then) or when no pinned memory could be had: the caller then copies directly. A caller gives it
 * back only once no copy from or to it is in flight. */
#define CJ_BOUNCE_MAX ((size_t)1 << 20)
#define CJ_BOUNCE_AFTER 32
unsigned char *cj_bounce_take(CUcontext ctx, CUdevice dev, size_t bytes);
void cj_bounce_give(CUdevice dev);
/* Copies through the area, on `stream`, and waits for the stream: complete, on both
 * sides, when they return. CUJIT_ERROR_NOT_SUPPORTED, touching nothing and leaving no
 * detail, when the area is not available (cj_bounce_take); a failure names `what`. */
cujit_status cj_bounce_htod(CUcontext ctx, CUdevice dev, CUdeviceptr dst, const void *src,
                            size_t bytes, CUstream stream, const char *what);
cujit_status cj_bounce_dtoh(CUcontext ctx, CUdevice dev, void *dst, CUdeviceptr src, size_t bytes,
                            CUstream stream, const char *what);
/* Where each share of a staged transfer starts: a multiple of this. */
#define CJ_STAGING_ALIGN ((size_t)64 << 10)
/* Lane i's share [*begin, *end) of a transfer of `bytes` split between `nlanes` lanes
 * (0 <= i < nlanes): equal shares rounded up to CJ_STAGING_ALIGN, in order, so that the
 * shares cover the transfer once; the last lanes' may be empty (*begin == *end). Pure. */
void cj_staging_share(size_t bytes, int nlanes, int i, size_t *begin, size_t *end);

#endif
