/* globals.c - a module's __device__ and __constant__ variables: found by name, read and
 * written. */
#include "module/function.h"


cujit_status cujit_module_get_global(cujit_module *m, const char *name, CUdeviceptr *dptr,
                                     size_t *bytes) {
  const char *sym = NULL;
  const cj_limits *lim;
  CUcontext ctx;
  CUdevice dev;
  CUresult r = CUDA_SUCCESS;
  size_t size = 0;
  int v;
  cujit_status st;
  if (!m || !name || !name[0] || !dptr)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_get_global: %s is NULL%s",
                   !m ? "module" : !dptr ? "dptr" : "name", name && !name[0] ? " or empty" : "");
  *dptr = 0;
  if (bytes) *bytes = 0;
  if ((st = cj_module_lookup(m, 0, name, &sym, 0)) != CUJIT_OK) return st;
  if ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) return st;
  pthread_mutex_lock(&m->lock);
  st = cj_module_load(m, m->dev, dev, &v, &lim);
  if (st == CUJIT_OK)
    r = cj_cu.cuLibraryGetGlobal(dptr, &size, m->dev->lib[v], sym);
  pthread_mutex_unlock(&m->lock);
  if (st != CUJIT_OK) return st;
  if (r != CUDA_SUCCESS) {
    *dptr = 0;
    if (r == CUDA_ERROR_NOT_FOUND && !m->dev->globals_known)
      return cj_fail_cu(CUJIT_ERROR_NOT_FOUND, r, "module '%s' has no variable '%s' (its "
                        "variables cannot be listed: its fatbin's entries are compressed; give "
                        "the variable's symbol, e.g. _ZN2ns3valE for ns::val)", m->name, sym);
    return cj_fail_cu(r == CUDA_ERROR_NOT_FOUND ? CUJIT_ERROR_NOT_FOUND : cj_cu_status(r), r,
                      "module '%s' declares variable '%s' but the driver cannot find it: %s",
                      m->name, sym, cj_cu_name(r));
  }
  if (bytes) *bytes = size;
  return CUJIT_OK;
}

static cujit_status global_for_copy(cujit_module *m, const char *name, const void *host,
                                    size_t bytes, CUdeviceptr *dptr, const char *what) {
  size_t size = 0;
  cujit_status st;
  if (!host && bytes)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_%s_global: the host pointer is NULL",
                   what);
  if ((st = cujit_module_get_global(m, name, dptr, &size)) != CUJIT_OK) return st;
  if (bytes > size)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cannot %s %zu bytes %s variable '%s' of module "
                   "'%s': it has %zu bytes", what, bytes, what[0] == 'w' ? "into" : "from", name,
                   m->name, size);
  return CUJIT_OK;
}

cujit_status cujit_module_write_global(cujit_module *m, const char *name, const void *src,
                                       size_t bytes) {
  CUdeviceptr d;
  cujit_status st = global_for_copy(m, name, src, bytes, &d, "write");
  if (st != CUJIT_OK || bytes == 0) return st;
  return cj_memcpy_htod_sync(d, src, bytes, "cuMemcpyHtoD (writing a global)");
}

cujit_status cujit_module_read_global(cujit_module *m, const char *name, void *dst, size_t bytes) {
  CUdeviceptr d;
  CUresult r;
  cujit_status st = global_for_copy(m, name, dst, bytes, &d, "read");
  if (st != CUJIT_OK || bytes == 0) return st;
  r = cj_cu.cuMemcpyDtoH(dst, d, bytes);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpyDtoH (reading a global)");
}
