/* launchex.c - launches beyond the plain one: cooperative launches (the whole grid resident
 * at once, so that it can synchronise) and thread-block clusters, both through
 * cuLaunchKernelEx. Every rule is checked before the launch, so that a refusal says which
 * one; plain launches never come here. */
#include <stdio.h>
#include <string.h>

#include "launch/launch.h"

enum { PORTABLE_CLUSTER = 8, NON_PORTABLE_CLUSTER = 16 };

static const unsigned known_flags = CUJIT_LAUNCH_OPT_COOPERATIVE | CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER;

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

/* ---- the rules (pure) ---- */

cujit_status cj_coop_check(const char *kernel, int supported, cujit_dim3 grid, cujit_dim3 block,
                           unsigned shared_bytes, int per_sm, int sms) {
  const unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;
  const unsigned long long limit = (unsigned long long)(per_sm > 0 ? per_sm : 0) *
                                   (unsigned long long)(sms > 0 ? sms : 0);
  if (!supported)
    return cj_config_fail(kernel, "this device does not support cooperative launches "
                  "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0); launch without "
                  "CUJIT_LAUNCH_OPT_COOPERATIVE and synchronise the grid by splitting the kernel in "
                  "two launches");
  if (blocks > limit)
    return cj_config_fail(kernel, "a cooperative launch needs all its blocks resident at once, and the "
                  "grid has %llu blocks while at most %llu fit on this device (%d per "
                  "multiprocessor x %d multiprocessors, for blocks of %u threads with %u bytes "
                  "of dynamic shared memory); launch at most %llu blocks and let each thread "
                  "loop over several elements (a grid-stride loop)", blocks, limit, per_sm, sms,
                  block.x * block.y * block.z, shared_bytes, limit);
  return CUJIT_OK;
}

static cujit_status cluster_dims_check(const char *kernel, cujit_dim3 grid, cujit_dim3 cluster) {
  const unsigned c[3] = {cluster.x, cluster.y, cluster.z}, g[3] = {grid.x, grid.y, grid.z};
  int i;
  for (i = 0; i < 3; i++)
    if (!c[i])
      return cj_config_fail(kernel, "cluster.%c is 0 while the cluster is %u x %u x %u: give every "
                    "cluster dimension (1 for none along it), or all three 0 for no clusters",
                    "xyz"[i], c[0], c[1], c[2]);
  for (i = 0; i < 3; i++)
    if (g[i] % c[i])
      return cj_config_fail(kernel, "grid.%c = %u is not a multiple of cluster.%c = %u, and the grid "
                    "must be made of whole clusters; round grid.%c up to %u and let the kernel "
                    "skip the extra blocks", "xyz"[i], g[i], "xyz"[i], c[i], "xyz"[i],
                    (g[i] / c[i] + 1) * c[i]);
  return CUJIT_OK;
}

cujit_status cj_cluster_check(const char *kernel, int cc, cujit_dim3 grid, cujit_dim3 cluster,
                              unsigned flags) {
  const unsigned long long size = (unsigned long long)cluster.x * cluster.y * cluster.z;
  const int non_portable = (flags & CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER) != 0;
  if (cc < 90)
    return cj_config_fail(kernel, "thread-block clusters need a device of compute capability 9.0 or "
                  "newer, and this one is %d.%d; leave cujit_launch_options.cluster zero on "
                  "this device", cc / 10, cc % 10);
  CJ_TRY(cluster_dims_check(kernel, grid, cluster));
  if (size > PORTABLE_CLUSTER && !non_portable)
    return cj_config_fail(kernel, "a cluster of %u x %u x %u = %llu blocks exceeds the portable limit "
                  "of %d blocks; use a smaller cluster, or set CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER "
                  "in flags to allow up to %d where the device supports it", cluster.x,
                  cluster.y, cluster.z, size, PORTABLE_CLUSTER, NON_PORTABLE_CLUSTER);
  if (size > NON_PORTABLE_CLUSTER)
    return cj_config_fail(kernel, "a cluster of %u x %u x %u = %llu blocks exceeds the limit of %d "
                  "blocks (with non-portable sizes allowed); use a smaller cluster", cluster.x,
                  cluster.y, cluster.z, size, NON_PORTABLE_CLUSTER);
  return CUJIT_OK;
}

cujit_status cj_cluster_match(const char *kernel, const int required[3], cujit_dim3 cluster) {
  if (!required[0] && !required[1] && !required[2]) return CUJIT_OK;
  if ((unsigned)required[0] == cluster.x && (unsigned)required[1] == cluster.y &&
      (unsigned)required[2] == cluster.z)
    return CUJIT_OK;
  return cj_config_fail(kernel, "the kernel declares __cluster_dims__(%d, %d, %d) but the options ask "
                "for clusters of %u x %u x %u; leave cujit_launch_options.cluster zero to use "
                "the kernel's own, or give the same dimensions", required[0], required[1],
                required[2], cluster.x, cluster.y, cluster.z);
}

cujit_status cj_cluster_fit_check(const char *kernel, cujit_dim3 cluster, cujit_dim3 block,
                                  unsigned shared_bytes, int fits) {
  const unsigned long long size = (unsigned long long)cluster.x * cluster.y * cluster.z;
  if (size <= (unsigned long long)(fits > 0 ? fits : 0)) return CUJIT_OK;
  return cj_config_fail(kernel, "a cluster of %llu blocks of %u threads with %u bytes of dynamic shared "
                "memory does not fit on this device, which runs at most %d such blocks "
                "together; use a smaller cluster, smaller blocks or less shared memory", size,
                block.x * block.y * block.z, shared_bytes, fits > 0 ? fits : 0);
}

/* ---- what the driver says ---- */

static cujit_status kernel_function(const cj_fslot *slot, CUfunction *f) {
  CUcontext ctx;
  CUdevice dev;
  CUresult r;
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  r = cj_cu.cuKernelGetFunction(f, slot->kernel);
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
  r = cj_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, f, (int)(block.x * block.y * block.z), shared_bytes);
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
  return fits ? cj_cluster_fit_check(fn->name, o->cluster, block, o->shared_bytes, fits)
              : CUJIT_OK;
}

cujit_status cj_launch_ex_check(const cujit_function *fn, cj_fslot *slot, cujit_dim3 grid,
                                cujit_dim3 block, cujit_launch_options *o) {
  CUfunction f;
  cujit_status st;
  CJ_CHECK(!(o->flags & ~known_flags), CUJIT_ERROR_INVALID_VALUE,
           "launching kernel '%s': cujit_launch_options.flags "
           "has unknown bits 0x%x; use the CUJIT_LAUNCH_* flags", fn->name,
           o->flags & ~known_flags);
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
    if (r == CUDA_SUCCESS) return CUJIT_OK;
    st = cj_launch_refused(fn, r, tries++, "cuLaunchKernelEx");
  } while (st == CUJIT_OK);
  return st;
}
