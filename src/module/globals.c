/* globals.c - a module's __device__ and __constant__ variables: found by name, read and
 * written. */
#include "module/function.h"

/* cujit_module_get_global() of a live module; `fn` names the public function. */
static cujit_status get_global(cj_module *m, const char *name, CUdeviceptr *dptr, size_t *bytes,
                               const char *fn) {
  const char *sym = NULL;
  const cj_limits *lim;
  CUcontext ctx;
  CUdevice dev;
  CUresult r = CUDA_SUCCESS;
  size_t size = 0;
  int v;
  cujit_status st;
  CJ_CHECK(name && name[0] && dptr, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL%s", fn,
           !dptr ? "dptr" : "name", name && !name[0] ? " or empty" : "");
  *dptr = 0;
  if (bytes) *bytes = 0;
  CJ_TRY(cj_module_lookup(m, 0, name, &sym, 0));
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  pthread_mutex_lock(&m->lock);
  st = cj_module_load(m, m->dev, dev, &v, &lim);
  if (st == CUJIT_OK) r = cj_cu.cuLibraryGetGlobal(dptr, &size, m->dev->lib[v], sym);
  pthread_mutex_unlock(&m->lock);
  CJ_TRY(st);
  if (r != CUDA_SUCCESS) {
    *dptr = 0;
    if (r == CUDA_ERROR_NOT_FOUND && !m->dev->globals_known)
      return cj_fail_cu(CUJIT_ERROR_NOT_FOUND, r,
                        "module '%s' has no variable '%s' (its "
                        "variables cannot be listed: its fatbin's entries are compressed; give "
                        "the variable's symbol, e.g. _ZN2ns3valE for ns::val)",
                        m->name, sym);
    return cj_fail_cu(r == CUDA_ERROR_NOT_FOUND ? CUJIT_ERROR_NOT_FOUND : cj_cu_status(r), r,
                      "module '%s' declares variable '%s' but the driver cannot find it: %s",
                      m->name, sym, cj_cu_name(r));
  }
  if (bytes) *bytes = size;
  return CUJIT_OK;
}

cujit_status cujit_module_get_global(cujit_module *h, const char *name, CUdeviceptr *dptr,
                                     size_t *bytes) {
  cj_module *m;
  if (dptr) *dptr = 0;
  if (bytes) *bytes = 0;
  CJ_TRY(cj_module_get(h, "cujit_module_get_global", &m));
  return get_global(m, name, dptr, bytes, "cujit_module_get_global");
}

static cujit_status global_for_copy(cujit_module *h, const char *name, const void *host,
                                    size_t bytes, CUdeviceptr *dptr, const char *what) {
  const char *fn = what[0] == 'w' ? "cujit_module_write_global" : "cujit_module_read_global";
  size_t size = 0;
  cj_module *m;
  CJ_TRY(cj_module_get(h, fn, &m));
  CJ_CHECK(host || !bytes, CUJIT_ERROR_INVALID_VALUE, "%s: the host pointer is NULL", fn);
  CJ_TRY(get_global(m, name, dptr, &size, fn));
  CJ_CHECK(bytes <= size, CUJIT_ERROR_INVALID_VALUE,
           "cannot %s %zu bytes %s variable '%s' of module '%s': it has %zu bytes", what, bytes,
           what[0] == 'w' ? "into" : "from", name, m->name, size);
  return CUJIT_OK;
}

cujit_status cujit_module_write_global(cujit_module *m, const char *name, const void *src,
                                       size_t bytes) {
  CUdeviceptr d;
  CJ_TRY(global_for_copy(m, name, src, bytes, &d, "write"));
  if (bytes == 0) return CUJIT_OK;
  return cj_memcpy_htod_sync(d, src, bytes, "cuMemcpyHtoD (writing a global)");
}

cujit_status cujit_module_read_global(cujit_module *m, const char *name, void *dst, size_t bytes) {
  CUdeviceptr d;
  CUresult r;
  CJ_TRY(global_for_copy(m, name, dst, bytes, &d, "read"));
  if (bytes == 0) return CUJIT_OK;
  r = cj_cu.cuMemcpyDtoH(dst, d, bytes);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, "cuMemcpyDtoH (reading a global)");
}
