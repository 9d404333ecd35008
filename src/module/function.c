/* function.c - kernel handles: made on first lookup with the parameter layout, freed with
 * their module; their attributes and parameter layout for the caller. */
#include <stddef.h>
#include <string.h>

#include "module/function.h"

void cj_function_free(cujit_function *fn) {
  if (!fn) return;
  if (fn->upper_free) fn->upper_free(fn);
  cj_function_drop_types(fn);
  cj_free(fn->name);
  cj_free(fn->lowered);
  cj_free(fn->param_offsets);
  cj_free(fn->param_sizes);
  cj_free(fn->dev);
  cj_free(fn);
}

/* fn's layout as the image's index holds it (symbols.h): CUJIT_OK, with *complete set when
 * every parameter is a plain scalar or pointer (whose places their sizes fix);
 * CUJIT_ERROR_NOT_FOUND, with nothing set, when the index does not know the kernel's
 * parameters; or CUJIT_ERROR_OUT_OF_MEMORY. */
static cujit_status indexed_layout(cujit_function *fn, int *complete) {
  const cj_ptx_index *x = fn->module->image->index;
  const cj_ptx_kernel *k = x ? cj_ptx_index_find(x, fn->lowered) : NULL;
  size_t i;
  *complete = 0;
  if (!k || !k->params_known) return CUJIT_ERROR_NOT_FOUND;
  if (k->nparams && (!(fn->param_offsets = cj_malloc(k->nparams * sizeof(size_t))) ||
                     !(fn->param_sizes = cj_malloc(k->nparams * sizeof(size_t)))))
    return cj_fail_oom("reading a kernel's parameters");
  for (i = 0; i < k->nparams; i++) {
    fn->param_offsets[i] = k->params[i].offset;
    fn->param_sizes[i] = k->params[i].size;
  }
  fn->nparams = k->nparams;
  *complete = cj_ptx_kernel_scalars_only(k);
  return CUJIT_OK;
}

/* The parameter layout from the driver (12.4 and newer), else from the PTX. The PTX gives
 * the count, so that the driver is never asked for a parameter past the last (an error
 * that compute-sanitizer would report); only when the PTX cannot be read, or there is none
 * (a CUBIN or fatbin), is the driver asked until it refuses. A kernel of an image with an
 * index takes the count from it, and the whole layout when every parameter is a plain
 * scalar or pointer: the PTX places those by their sizes alone, as the driver does, so it
 * is not asked (a warm start's lookup then makes no driver call per parameter). */
static cujit_status param_layout(cujit_function *fn, CUkernel k) {
  size_t cap_o = 0, cap_s = 0, i, off, size;
  CUresult r;
  int complete;
  cujit_status st = CUJIT_ERROR_NOT_FOUND;
  if (!cj_module_binary_only(fn->module)) {
    st = indexed_layout(fn, &complete);
    if (st == CUJIT_OK && complete) return CUJIT_OK;
    if (st == CUJIT_ERROR_NOT_FOUND)
      st = cj_ptx_params(fn->module->image->ptx, fn->lowered, &fn->nparams, &fn->param_offsets,
                         &fn->param_sizes);
  } else if (!cj_cu.cuKernelGetParamInfo) {
    return cj_fail(CUJIT_ERROR_NOT_SUPPORTED,
                   "the parameters of kernel '%s' of module '%s' "
                   "(a CUBIN or fatbin, with no PTX to read them from) need the driver's "
                   "cuKernelGetParamInfo (CUDA 12.4 or newer); update the driver, or load the "
                   "module from PTX",
                   fn->name, fn->module->name);
  }
  if (!cj_cu.cuKernelGetParamInfo || st == CUJIT_ERROR_OUT_OF_MEMORY) return st;
  if (st == CUJIT_OK) {
    for (i = 0; i < fn->nparams; i++) {
      r = cj_cu.cuKernelGetParamInfo(k, i, &fn->param_offsets[i], &fn->param_sizes[i]);
      if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuKernelGetParamInfo");
    }
    return CUJIT_OK;
  }
  for (i = 0;; i++) {
    r = cj_cu.cuKernelGetParamInfo(k, i, &off, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break; /* past the last parameter */
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuKernelGetParamInfo");
    if (CJ_VEC_RESERVE(fn->param_offsets, cap_o, i + 1) != 0 ||
        CJ_VEC_RESERVE(fn->param_sizes, cap_s, i + 1) != 0)
      return cj_fail_oom("reading a kernel's parameters");
    fn->param_offsets[i] = off;
    fn->param_sizes[i] = size;
  }
  fn->nparams = i;
  return CUJIT_OK;
}

cujit_status cj_function_new(cj_module *m, cj_mstate *s, const char *sym, CUdevice dev,
                             cujit_function **out) {
  cujit_function *fn = cj_calloc(1, sizeof *fn);
  cj_fstate *fs;
  char name[256];
  int ndev = 0;
  cujit_status st;
  cj_cu.cuDeviceGetCount(&ndev);
  if (ndev > CJ_DEVICE_SLOTS) ndev = CJ_DEVICE_SLOTS;
  if (ndev <= dev) ndev = (int)dev + 1;
  if (!fn || !(fn->dev = fs = cj_calloc(1, sizeof *fs + (size_t)ndev * sizeof fs->slot[0])) ||
      !(fn->name = cj_strdup(cj_symbol_unqualified(sym, name, sizeof name))) ||
      !(fn->lowered = cj_strdup(sym))) {
    cj_function_free(fn);
    return cj_fail_oom("creating a kernel handle");
  }
  fs->ndev = ndev;
  fn->module = m;
  if ((st = cj_slot_fill(fn, dev)) != CUJIT_OK ||
      (st = param_layout(fn, fs->slot[dev].kernel)) != CUJIT_OK) {
    cj_function_free(fn);
    return st;
  }
  cj_function_decode(fn);
  if (CJ_VEC_RESERVE(s->fns, s->cap_fns, s->n_fns + 1) != 0) {
    cj_function_free(fn);
    return cj_fail_oom("creating a kernel handle");
  }
  s->fns[s->n_fns++] = fn;
  *out = fn;
  return CUJIT_OK;
}

cujit_function *cj_function_find(const cj_mstate *s, const char *sym) {
  size_t i;
  for (i = 0; i < s->n_fns; i++)
    if (strcmp(s->fns[i]->lowered, sym) == 0) return s->fns[i];
  return NULL;
}

/* The attributes' first version ended with num_params: what a size of 0 stands for. */
#define ATTRS_V1 CJ_SIZE_V1(cujit_function_attrs, num_params)

cujit_status cujit_function_get_attrs(const cujit_function *fn, cujit_function_attrs *user) {
  static const char name[] = "cujit_function_get_attrs", type[] = "cujit_function_attrs";
  static const struct {
    CUfunction_attribute attr;
    size_t field;
  } map[] = {{CU_FUNC_ATTRIBUTE_NUM_REGS, offsetof(cujit_function_attrs, num_regs)},
             {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
              offsetof(cujit_function_attrs, static_shared_bytes)},
             {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
              offsetof(cujit_function_attrs, max_threads_per_block)},
             {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(cujit_function_attrs, local_bytes)},
             {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, offsetof(cujit_function_attrs, const_bytes)},
             {CU_FUNC_ATTRIBUTE_PTX_VERSION, offsetof(cujit_function_attrs, ptx_version)},
             {CU_FUNC_ATTRIBUTE_BINARY_VERSION, offsetof(cujit_function_attrs, binary_version)}};
  cujit_function_attrs own, *a = &own;
  cj_fslot *slot;
  size_t i;
  CJ_CHECK(fn && user, CUJIT_ERROR_INVALID_VALUE, "%s: %s is NULL", name, !fn ? "fn" : "attrs");
  memset(a, 0, sizeof *a); /* a failure leaves the caller's fields 0 */
  CJ_TRY(cj_sized_out(name, type, user, ATTRS_V1, a, sizeof *a));
  CJ_TRY(cj_function_slot(fn, &slot, 1));
  for (i = 0; i < CJ_COUNT(map); i++) {
    CJ_TRY(cj_kernel_attr(slot->kernel, slot->dev, map[i].attr, (int *)((char *)a + map[i].field),
                          "cuKernelGetAttribute"));
  }
  a->num_params = (int)fn->nparams;
  return cj_sized_out(name, type, user, ATTRS_V1, a, sizeof *a);
}

cujit_status cujit_function_suggest_block(const cujit_function *fn, size_t dynamic_shared_bytes,
                                          int *block_size, int *min_grid_size) {
  cj_fslot *slot;
  CUfunction f;
  CUresult r;
  int grid = 0, block = 0;
  CJ_CHECK(fn && block_size, CUJIT_ERROR_INVALID_VALUE, "cujit_function_suggest_block: %s is NULL",
           !fn ? "fn" : "block_size");
  CJ_TRY(cj_function_slot(fn, &slot, 1));
  r = cj_cu.cuKernelGetFunction(&f, slot->kernel);
  if (r == CUDA_SUCCESS)
    r = cj_cu.cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, dynamic_shared_bytes, 0);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuOccupancyMaxPotentialBlockSize");
  *block_size = block;
  if (min_grid_size) *min_grid_size = grid;
  return CUJIT_OK;
}

const char *cujit_function_name(const cujit_function *fn) { return fn ? fn->name : NULL; }

cujit_status cujit_function_get_param_info(const cujit_function *fn, size_t i, size_t *offset,
                                           size_t *size) {
  CJ_CHECK(fn, CUJIT_ERROR_INVALID_VALUE, "cujit_function_get_param_info: fn is NULL");
  CJ_CHECK(i < fn->nparams, CUJIT_ERROR_INVALID_VALUE,
           "kernel '%s' has %zu parameter%s; index %zu is out "
           "of range",
           fn->name, fn->nparams, fn->nparams == 1 ? "" : "s", i);
  if (offset) *offset = fn->param_offsets[i];
  if (size) *size = fn->param_sizes[i];
  return CUJIT_OK;
}

void cj_module_device_free(cj_module *m) {
  cj_mstate *s = m->dev;
  size_t i;
  if (!s) return;
  for (i = 0; i < s->n_fns; i++) cj_function_free(s->fns[i]);
  cj_free(s->fns);
  cj_module_unload(s);
  m->dev = NULL;
}
