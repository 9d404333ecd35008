/* function.c - kernel handles: made on first lookup with the parameter layout, freed with
 * their module; their attributes and parameter layout for the caller. */
#include <stddef.h>
#include <string.h>

#include "dl/zstd.h"
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

static cujit_status kparams_layout(cujit_function *fn, const void *cubin, size_t size,
                                   int *complete);

/* The layout a compressed fatbin entry describes: its zstd frame decompressed (libzstd,
 * loaded then), then read as the entry would be. CUJIT_ERROR_NOT_FOUND when it cannot be
 * (no libzstd, another compression, bytes zstd refuses); CUJIT_ERROR_OUT_OF_MEMORY. */
static cujit_status compressed_layout(cujit_function *fn, const cj_code *c, int *complete) {
  enum { MAX_ENTRY = 1 << 30 }; /* as large as a prebuilt file may be */
  unsigned char *plain = NULL;
  size_t size = 0;
  cujit_status st = cj_zstd_decompress(c->data, c->size, MAX_ENTRY, &plain, &size);
  if (st == CUJIT_ERROR_OUT_OF_MEMORY) return cj_fail_oom("reading a compressed entry");
  if (st != CUJIT_OK) {
    cj_debug("kernel '%s': its compressed fatbin entry cannot be read (%s%s%s)", fn->name,
             cujit_status_name(st), cj_zstd_error()[0] ? ": " : "", cj_zstd_error());
    return CUJIT_ERROR_NOT_FOUND;
  }
  if (c->kind == CJ_PREBUILT_PTX) {
    unsigned char *text = cj_realloc(plain, size + 1);
    if (!text) {
      cj_free(plain);
      return cj_fail_oom("reading a compressed entry");
    }
    text[size] = '\0';
    st = cj_ptx_params((const char *)text, fn->lowered, &fn->nparams, &fn->param_offsets,
                       &fn->param_sizes);
    cj_free(text);
    return st;
  }
  st = kparams_layout(fn, plain, size, complete);
  cj_free(plain);
  return st;
}

/* fn's layout as the code loaded on `dev` describes it: a CUBIN's own description of its
 * kernels (the module's, a linked module's, or a fatbin's or bundle's entry; *complete set,
 * as it is what the driver reports), or the parameter list of the PTX entry of a fatbin or
 * bundle that was loaded there (*complete 0: structs' places are the driver's to say).
 * A compressed fatbin entry is decompressed first. CUJIT_ERROR_NOT_FOUND, with nothing set,
 * when that code does not say (an entry that cannot be decompressed, a damaged
 * description); CUJIT_ERROR_OUT_OF_MEMORY. */
static cujit_status loaded_layout(cujit_function *fn, CUdevice dev, int *complete) {
  const cj_image *im = fn->module->image;
  const cj_mstate *s = fn->module->dev;
  const unsigned char *bytes = im->cubin;
  size_t size = im->cubin_size;
  int v;
  *complete = 0;
  if (im->prebuilt == CJ_PREBUILT_FATBIN || im->prebuilt == CJ_PREBUILT_BUNDLE) {
    const cj_code *c;
    v = dev >= 0 && dev < CJ_RECORDED_DEVICES ? s->on_dev[dev] - 1 : -1;
    if (v < 0 || !s->pick[v]) return CUJIT_ERROR_NOT_FOUND;
    c = &s->codes[s->pick[v] - 1];
    if (c->compressed) return compressed_layout(fn, c, complete);
    if (c->kind == CJ_PREBUILT_PTX) /* s->bytes[v] is the entry's text, with a NUL */
      return cj_ptx_params((const char *)s->bytes[v], fn->lowered, &fn->nparams, &fn->param_offsets,
                           &fn->param_sizes);
    bytes = c->data;
    size = c->size;
  }
  if (!bytes || cj_image_is_ltoir(im)) return CUJIT_ERROR_NOT_FOUND;
  return kparams_layout(fn, bytes, size, complete);
}

/* The layout a CUBIN describes for kernel fn, as loaded_layout() returns it. */
static cujit_status kparams_layout(cujit_function *fn, const void *cubin, size_t size,
                                   int *complete) {
  cj_kparam *kp;
  size_t n, i;
  int r = cj_cubin_kparams(cubin, size, fn->lowered, &n, &kp);
  if (r < 0) return cj_fail_oom("reading a kernel's parameters");
  if (r == 0) return CUJIT_ERROR_NOT_FOUND;
  if (n && (!(fn->param_offsets = cj_malloc(n * sizeof(size_t))) ||
            !(fn->param_sizes = cj_malloc(n * sizeof(size_t))))) {
    cj_free(kp);
    return cj_fail_oom("reading a kernel's parameters");
  }
  for (i = 0; i < n; i++) {
    fn->param_offsets[i] = kp[i].offset;
    fn->param_sizes[i] = kp[i].size;
  }
  cj_free(kp);
  fn->nparams = n;
  *complete = 1;
  return CUJIT_OK;
}

/* Asks the driver for every parameter until it refuses one: only for code that describes
 * none (a compressed entry without libzstd, a damaged description). The refusal past the last
 * parameter is an API error that compute-sanitizer reports. */
static cujit_status probed_layout(cujit_function *fn, CUkernel k) {
  size_t cap_o = 0, cap_s = 0, i, off, size;
  CUresult r;
  cj_debug("kernel '%s' of module '%s': its code does not describe its parameters; the "
           "driver is asked for them until it refuses one",
           fn->name, fn->module->name);
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

/* The parameter layout, with the count always known before the driver is asked, so that
 * it is never asked for a parameter past the last (an error compute-sanitizer would
 * report). A kernel compiled from source takes its layout from the image's index, or its
 * count from the PTX; prebuilt and linked code from the CUBIN loaded on `dev` (its own
 * description of its kernels, which is what the driver reports) or the PTX entry loaded
 * there. Only where only the count is known (from PTX: a struct's place is the driver's to
 * say) is the driver asked, for each parameter; only where nothing describes them is it
 * asked until it refuses. */
static cujit_status param_layout(cujit_function *fn, CUdevice dev, CUkernel k) {
  size_t i;
  CUresult r;
  int complete = 0;
  cujit_status st = CUJIT_ERROR_NOT_FOUND;
  if (!cj_module_binary_only(fn->module)) {
    st = indexed_layout(fn, &complete);
    if (st == CUJIT_ERROR_NOT_FOUND)
      st = cj_ptx_params(fn->module->image->ptx, fn->lowered, &fn->nparams, &fn->param_offsets,
                         &fn->param_sizes);
  }
  if (st == CUJIT_ERROR_NOT_FOUND) st = loaded_layout(fn, dev, &complete);
  if (st == CUJIT_ERROR_OUT_OF_MEMORY || (st == CUJIT_OK && complete)) return st;
  if (!cj_cu.cuKernelGetParamInfo) {
    CJ_CHECK(st == CUJIT_OK || !cj_module_binary_only(fn->module), CUJIT_ERROR_NOT_SUPPORTED,
             "the parameters of kernel '%s' of module '%s' (a CUBIN or fatbin that does "
             "not describe them, with no PTX to read them from) need the driver's "
             "cuKernelGetParamInfo (CUDA 12.4 or newer); update the driver, or load the "
             "module from PTX",
             fn->name, fn->module->name);
    return st;
  }
  if (st != CUJIT_OK) return probed_layout(fn, k);
  for (i = 0; i < fn->nparams; i++) {
    r = cj_cu.cuKernelGetParamInfo(k, i, &fn->param_offsets[i], &fn->param_sizes[i]);
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuKernelGetParamInfo");
  }
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
      (st = param_layout(fn, dev, fs->slot[dev].kernel)) != CUJIT_OK) {
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
  r = cj_cu_kernel_function(&f, slot->kernel);
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
