/* slot.c - a kernel on one device: its handle there, its limits, and the slot a launch
 * reads without locking once it is filled. */
#include "module/function.h"

cujit_status cj_kernel_attr(CUkernel k, CUdevice dev, CUfunction_attribute a, int *v,
                            const char *what) {
  CUresult r = cj_cu.cuKernelGetAttribute(v, a, k, dev);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, what);
}

/* Fills fn's slot for `dev` (module lock held). */
static cujit_status slot_fill(const cujit_function *fn, CUdevice dev) {
  cj_module *m = fn->module;
  cj_mstate *s = m->dev;
  cj_fstate *fs = fn->dev;
  cj_fslot *slot = &fs->slot[dev];
  const cj_limits *lim;
  CUfunction f;
  CUresult r;
  int v;
  if (slot->ready) return CUJIT_OK;
  CJ_TRY(cj_module_load(m, s, dev, &v, &lim));
  if (!fs->kernel[v]) {
    /* with lazy loading, this is where the image is really loaded (or the PTX JIT fails) */
    r = cj_cu.cuLibraryGetKernel(&fs->kernel[v], s->lib[v], fn->lowered);
    if (r != CUDA_SUCCESS) {
      fs->kernel[v] = NULL;
      if (r != CUDA_ERROR_NOT_FOUND)
        return cj_module_load_failed(m, v, r, dev, lim->cc, s->jit_log[v]);
      return cj_fail_cu(CUJIT_ERROR_LOAD, r,
                        "module '%s' has kernel '%s' in its PTX but the "
                        "driver cannot find it: %s",
                        m->name, fn->lowered, cj_cu_name(r));
    }
  }
  /* loads the kernel into the current context now, so load errors surface here */
  r = cj_cu.cuKernelGetFunction(&f, fs->kernel[v]);
  if (r != CUDA_SUCCESS) return cj_module_load_failed(m, v, r, dev, lim->cc, s->jit_log[v]);
  if (cj_cu.cuCtxGetId && cj_cu.cuCtxGetId(NULL, &slot->fn_ctx) == CUDA_SUCCESS && slot->fn_ctx)
    slot->fn = f;
  CJ_TRY(cj_kernel_attr(fs->kernel[v], dev, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                        &slot->max_threads, "cuKernelGetAttribute"));
  CJ_TRY(cj_kernel_attr(fs->kernel[v], dev, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &slot->static_smem,
                        "cuKernelGetAttribute"));
  CJ_TRY(cj_kernel_attr(fs->kernel[v], dev, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        &slot->dyn_smem_max, "cuKernelGetAttribute"));
  slot->kernel = fs->kernel[v];
  slot->dev = dev;
  slot->lim = lim;
  __atomic_store_n(&slot->ready, 1, __ATOMIC_RELEASE);
  return CUJIT_OK;
}

cujit_status cj_slot_fill(const cujit_function *fn, CUdevice dev) {
  CUstreamCaptureMode mode;
  cujit_status st;
  if (fn->dev->slot[dev].ready) return CUJIT_OK;
  cj_capture_relax(&mode); /* loading code adds nothing to a capture: allowed during one */
  st = slot_fill(fn, dev);
  cj_capture_restore(&mode);
  return st;
}

cujit_status cj_slot_index(const cj_fstate *fs, CUdevice dev) {
  CJ_CHECK(dev >= 0 && dev < fs->ndev, CUJIT_ERROR_NO_DEVICE,
           "the current context's device (%d) "
           "is not one of the %d devices present when the kernel was looked up",
           (int)dev, fs->ndev);
  return CUJIT_OK;
}

_Thread_local int cj_had_context;

cujit_status cj_function_slot_find(const cujit_function *fn, cj_fslot **out, int need_ctx) {
  cj_fstate *fs = fn->dev;
  CUcontext ctx = NULL;
  CUdevice dev = 0;
  cujit_status st;
  cj_fslot *slot;
  if (CJ_UNLIKELY(cj_cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)) {
    CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  } else if (fs->ndev > 1) {
    CUresult r = cj_cu.cuCtxGetDevice(&dev);
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuCtxGetDevice");
  }
  cj_had_context = 1;
  if (CJ_UNLIKELY(dev < 0 || dev >= fs->ndev)) return cj_slot_index(fs, dev);
  slot = &fs->slot[dev];
  if (CJ_UNLIKELY(!__atomic_load_n(&slot->ready, __ATOMIC_ACQUIRE))) {
    pthread_mutex_lock(&fn->module->lock);
    st = cj_slot_fill(fn, dev);
    pthread_mutex_unlock(&fn->module->lock);
    CJ_TRY(st);
  }
  *out = slot;
  return CUJIT_OK;
}

cujit_status cj_function_allow_smem(const cujit_function *fn, cj_fslot *slot, unsigned bytes) {
  CUresult r = CUDA_SUCCESS;
  CJ_CHECK(cj_cu.cuKernelSetAttribute, CUJIT_ERROR_NOT_SUPPORTED,
           "the driver lacks "
           "cuKernelSetAttribute, needed for more than the default dynamic shared memory");
  pthread_mutex_lock(&fn->module->lock);
  if ((unsigned)slot->dyn_smem_max < bytes) {
    r = cj_cu.cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes,
                                   slot->kernel, slot->dev);
    if (r == CUDA_SUCCESS) __atomic_store_n(&slot->dyn_smem_max, (int)bytes, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&fn->module->lock);
  if (r != CUDA_SUCCESS)
    return cj_cu_fail(r, "cuKernelSetAttribute (allowing more dynamic shared memory)");
  return CUJIT_OK;
}
