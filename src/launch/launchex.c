/* launchex.c - launches beyond the plain one: cooperative launches (the whole grid resident
 * at once, so that it can synchronise) and thread-block clusters, both through
 * cuLaunchKernelEx. Every rule is checked before the launch, so that a refusal says which
 * one; plain launches never come here. */
#include <stdio.h>
#include <string.h>

#include "launch/launch.h"

static const unsigned known_flags =
    CUJIT_LAUNCH_OPT_COOPERATIVE | CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER;

/* The launch configuration of grid, block and options, without attributes. */
static void fill_config(CUlaunchConfig *cfg, cujit_dim3 grid, cujit_dim3 block,
                        const cujit_launch_options *o) {
  memset(cfg, 0, sizeof *cfg);
  cfg->gridDimX = grid.x;
  cfg->gridDimY = grid.y;
  cfg->gridDimZ = grid.z;
  cfg->blockDimX = block.x;
  cfg->blockDimY = block.y;
  cfg->blockDimZ = block.z;
  cfg->sharedMemBytes = o->shared_bytes;
  cfg->hStream = o->stream;
}

/* ---- what the driver says ---- */

static cujit_status kernel_function(const cj_fslot *slot, CUfunction *f) {
  CUcontext ctx;
  CUdevice dev;
  CUresult r;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  r = cj_cu_kernel_function(f, slot->kernel);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuKernelGetFunction");
}

static cujit_status coop_fits(const cujit_function *fn, const cj_fslot *slot, CUfunction f,
                              cujit_dim3 grid, cujit_dim3 block, unsigned shared_bytes) {
  int per_sm = 0;
  CUresult r;
  if (!slot->lim->coop)
    return cj_coop_check(fn->name, 0, grid, block, shared_bytes, 0, slot->lim->sms);
  CJ_CHECK(cj_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor, CUJIT_ERROR_NOT_SUPPORTED,
           "the CUDA driver lacks "
           "cuOccupancyMaxActiveBlocksPerMultiprocessor, needed to check a cooperative "
           "launch; update the driver");
  r = cj_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f,
                                                        (int)(block.x * block.y * block.z),
                                                        shared_bytes);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return cj_coop_check(fn->name, 1, grid, block, shared_bytes, per_sm, slot->lim->sms);
}

static cujit_status required_dims(const cj_fslot *slot, int required[3]) {
  static const CUfunction_attribute attrs[3] = {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
                                                CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
                                                CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH};
  int i;
  for (i = 0; i < 3; i++) {
    CUresult r = cj_cu.cuKernelGetAttribute(&required[i], attrs[i], slot->kernel, slot->dev);
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuKernelGetAttribute (the kernel's cluster)");
  }
  return CUJIT_OK;
}

/* Lets the kernel run clusters above the portable size, once per device. */
static cujit_status allow_non_portable(const cujit_function *fn, cj_fslot *slot) {
  CUresult r = CUDA_SUCCESS;
  if (__atomic_load_n(&slot->non_portable, __ATOMIC_ACQUIRE)) return CUJIT_OK;
  pthread_mutex_lock(&fn->module->lock);
  if (!slot->non_portable) {
    r = cj_cu.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1,
                                   slot->kernel, slot->dev);
    if (r == CUDA_SUCCESS) __atomic_store_n(&slot->non_portable, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&fn->module->lock);
  return r == CUDA_SUCCESS ? CUJIT_OK
                           : cj_cu_fail(r, "cuKernelSetAttribute (allowing non-portable clusters)");
}

/* How many blocks of this configuration the device runs as one cluster; 0 when the driver
 * cannot say (the launch then decides). */
static int cluster_capacity(CUfunction f, cujit_dim3 grid, cujit_dim3 block,
                            const cujit_launch_options *o) {
  CUlaunchConfig cfg;
  int size = 0;
  if (!cj_cu.cuOccupancyMaxPotentialClusterSize) return 0;
  fill_config(&cfg, grid, block, o);
  if (cj_cu.cuOccupancyMaxPotentialClusterSize(&size, f, &cfg) != CUDA_SUCCESS) return 0;
  return size;
}

static cujit_status cluster_fits(const cujit_function *fn, cj_fslot *slot, CUfunction f,
                                 cujit_dim3 grid, cujit_dim3 block, cujit_launch_options *o) {
  int required[3], fits;
  cujit_status st = cj_cluster_check(fn->name, slot->lim->cc, grid, o->cluster, o->flags);
  if (st != CUJIT_OK || (st = required_dims(slot, required)) != CUJIT_OK ||
      (st = cj_cluster_match(fn->name, required, o->cluster)) != CUJIT_OK)
    return st;
  if (required[0]) { /* the same as the kernel's own, which the driver applies */
    o->cluster = (cujit_dim3){0, 0, 0};
    return CUJIT_OK;
  }
  if ((o->flags & CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER) &&
      (st = allow_non_portable(fn, slot)) != CUJIT_OK)
    return st;
  fits = cluster_capacity(f, grid, block, o);
  return fits ? cj_cluster_fit_check(fn->name, o->cluster, block, o->shared_bytes, fits) : CUJIT_OK;
}

cujit_status cj_launch_ex_check(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                                cujit_dim3 block, cujit_launch_options *o) {
  CUfunction f;
  cujit_status st;
  CJ_CHECK(!(o->flags & ~known_flags), CUJIT_ERROR_INVALID_VALUE,
           "launching kernel '%s': cujit_launch_options.flags "
           "has unknown bits 0x%x; use the CUJIT_LAUNCH_* flags",
           fn->name, o->flags & ~known_flags);
  CJ_CHECK(cj_cu.cuLaunchKernelEx, CUJIT_ERROR_NOT_SUPPORTED,
           "the CUDA driver lacks cuLaunchKernelEx, needed "
           "for cooperative launches and clusters; update the driver");
  CJ_TRY(kernel_function(slot, &f));
  if ((o->cluster.x | o->cluster.y | o->cluster.z) &&
      (st = cluster_fits(fn, slot, f, grid, block, o)) != CUJIT_OK)
    return st;
  if (o->flags & CUJIT_LAUNCH_OPT_COOPERATIVE)
    return coop_fits(fn, slot, f, grid, block, o->shared_bytes);
  return CUJIT_OK;
}

/* ---- the launch ---- */

cujit_status cj_launch_ex(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                          cujit_dim3 block, void **params, const cujit_launch_options *o) {
  CUlaunchAttribute attr[2];
  CUlaunchConfig cfg;
  cujit_status st;
  int tries = 0;
  memset(attr, 0, sizeof attr);
  fill_config(&cfg, grid, block, o);
  cfg.attrs = attr;
  if (o->flags & CUJIT_LAUNCH_OPT_COOPERATIVE) {
    attr[cfg.numAttrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr[cfg.numAttrs++].value.cooperative = 1;
  }
  if (o->cluster.x | o->cluster.y | o->cluster.z) {
    attr[cfg.numAttrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr[cfg.numAttrs].value.clusterDim.x = o->cluster.x;
    attr[cfg.numAttrs].value.clusterDim.y = o->cluster.y;
    attr[cfg.numAttrs++].value.clusterDim.z = o->cluster.z;
  }
  do {
    CUresult r = cj_cu.cuLaunchKernelEx(&cfg, (CUfunction)slot->kernel, params, NULL);
    if (r == CUDA_SUCCESS && !__atomic_load_n(&cj_captures_live, __ATOMIC_RELAXED)) return CUJIT_OK;
    if (r == CUDA_SUCCESS)
      return cj_capture_launched(fn, (CUfunction)slot->kernel, 1, o->stream, params, grid, block,
                                 o->shared_bytes);
    st = cj_launch_refused(fn, r, tries++, "cuLaunchKernelEx");
  } while (st == CUJIT_OK);
  return st;
}
