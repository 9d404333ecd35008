/* device.c - a module on devices: loading its image lazily per device (CUBIN when it fits
 * the device, else PTX through the driver's JIT) with the context-independent library API,
 * finding kernels and variables by name, kernel attributes and parameter layout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "prebuilt.h"

enum { V_CUBIN = 0, V_PTX = 1, MAX_LISTED = 40, JIT_LOG_SIZE = 16384 };
#define CJ_DEVICE_SLOTS 64

/* What a module holds on devices (module.h's device_state); guarded by the module's lock. */
typedef struct cj_mstate {
  cj_symtab syms;        /* read from the PTX on first lookup; for a CUBIN or fatbin, the
                            variables from its ELF and the kernels the driver lists */
  int kernels_listed;    /* the driver has listed the kernels (CUBIN and fatbin) */
  int globals_known;     /* syms.globals is the module's whole list */
  CUlibrary lib[2];      /* loaded from the CUBIN and from the PTX, each when first needed */
  char *jit_log[2];      /* their JIT error logs: the driver may write them when it loads
                            lazily (at the first kernel lookup), so they live as long */
  cujit_function **fns;  /* every function handed out, freed with the module */
  size_t n_fns;
} cj_mstate;

/* A kernel's device state (function.h's `device`). */
typedef struct cj_fstate {
  CUkernel kernel[2];    /* per image, context-independent */
  int ndev;
  cj_fslot slot[];       /* one per device ordinal */
} cj_fstate;

/* ---- device limits ---- */

static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;
static cj_limits limits[CJ_DEVICE_SLOTS];
static int limits_ready[CJ_DEVICE_SLOTS];

static cujit_status read_limits(CUdevice dev, cj_limits *l) {
  static const CUdevice_attribute attrs[] = {
      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,          CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,           CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,   CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
      CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT};
  int v[CJ_COUNT(attrs)];
  size_t i;
  for (i = 0; i < CJ_COUNT(attrs); i++) {
    CUresult r = cj_cu.cuDeviceGetAttribute(&v[i], attrs[i], dev);
    if (r != CUDA_SUCCESS)
      return cj_cu_fail(r, "cuDeviceGetAttribute (reading the device's limits)");
  }
  l->cc = v[0] * 10 + v[1];
  l->max_threads = v[2];
  for (i = 0; i < 3; i++) {
    l->max_block[i] = v[3 + i];
    l->max_grid[i] = v[6 + i];
  }
  l->smem_optin = v[9];
  l->pools = v[10];
  l->coop = v[11];
  l->sms = v[12];
  return CUJIT_OK;
}

cujit_status cj_device_limits(CUdevice dev, const cj_limits **out) {
  cujit_status st = CUJIT_OK;
  if (dev < 0 || dev >= CJ_DEVICE_SLOTS)
    return cj_fail(CUJIT_ERROR_NO_DEVICE, "device %d is beyond the %d devices cujit supports",
                   (int)dev, CJ_DEVICE_SLOTS);
  if (!__atomic_load_n(&limits_ready[dev], __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&limits_lock);
    if (!limits_ready[dev] && (st = read_limits(dev, &limits[dev])) == CUJIT_OK)
      __atomic_store_n(&limits_ready[dev], 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&limits_lock);
  }
  *out = &limits[dev];
  return st;
}

/* ---- loading ---- */

/* Whether a CUBIN built for `arch` ("sm_90", "sm_90a", "sm_100f") runs on a device of
 * compute capability cc: same major version and a minor version no newer than the
 * device's; arch-specific ("a") code only on exactly its device. */
static int cubin_fits(const char *arch, int cc) {
  char *end;
  long a;
  if (strncmp(arch, "sm_", 3) != 0) return 0;
  a = strtol(arch + 3, &end, 10);
  if (*end == 'a') return a == cc;
  return a / 10 == cc / 10 && a % 10 <= cc % 10;
}

/* Whether the module's image is a CUBIN or fatbin, whose kernels the driver lists. */
static int binary_only(const cujit_module *m) {
  return m->image->prebuilt == CJ_PREBUILT_CUBIN || m->image->prebuilt == CJ_PREBUILT_FATBIN;
}

static cj_mstate *mstate(cujit_module *m) {
  cj_mstate *s = m->device_state;
  cujit_status st;
  if (s) return s;
  s = cj_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->globals_known = 1;
  if (binary_only(m))
    st = cj_prebuilt_globals(m->image, &s->syms, &s->globals_known);
  else
    st = cj_symtab_build(m->image->ptx, &s->syms);
  if (st != CUJIT_OK) {
    cj_free(s);
    return NULL;
  }
  m->device_state = s;
  return s;
}

/* What to do when loading failed with r. */
static const char *load_hint(const cujit_module *m, CUresult r) {
  if (m->image->prebuilt) {
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      return "; the PTX is newer than the driver: update the driver, or load a CUBIN or "
             "fatbin built for this device";
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_PTX ||
        r == CUDA_ERROR_INVALID_IMAGE)
      return "; build it for this device (nvcc -arch=sm_XX with the device's XX), or include "
             "PTX that the driver can compile for it";
    return "";
  }
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    return "; the driver is older than NVRTC: update the driver, or compile for the device's "
           "sm_XX so that its CUBIN is used";
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_PTX)
    return "; compile for this device (leave cujit_options.arch NULL, or give its sm_XX)";
  return "";
}

static const char *image_kind(const cujit_module *m, int v) {
  if (v == V_PTX) return "PTX through the driver's JIT";
  return m->image->fatbin ? "fatbin" : "CUBIN";
}

static cujit_status load_failed(cujit_module *m, int v, CUresult r, CUdevice dev, int cc,
                                const char *log) {
  const char *text = NULL;
  const char *hint = load_hint(m, r);
  cj_cu.cuGetErrorString(r, &text);
  return cj_fail_cu(CUJIT_ERROR_LOAD, r,
                    "loading module '%s' (%s, %s %s) on device %d (sm_%d) failed: "
                    "%s (%s)%s%s%s",
                    m->name, image_kind(m, v),
                    m->image->prebuilt ? "built for" : "compiled for",
                    m->image->arch[0] ? m->image->arch : "an unknown target", (int)dev, cc,
                    cj_cu_name(r), text ? text : "no description", hint,
                    log[0] ? "\nJIT log:\n" : "", log);
}

/* What is loaded for variant v: the CUBIN (or a prebuilt fatbin), or the PTX. */
static const void *image_bytes(const cj_image *im, int v) {
  if (v == V_PTX) return im->ptx;
  return im->fatbin ? (const void *)im->fatbin : (const void *)im->cubin;
}

/* Loads the CUBIN or the PTX as a library (once per module); caller holds the lock. */
static cujit_status load_image(cujit_module *m, cj_mstate *s, int v, CUdevice dev, int cc) {
  CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[2];
  char *log;
  CUresult r;
  cujit_status st = CUJIT_OK;
  if (s->lib[v]) return CUJIT_OK;
  if (!cj_cu.cuLibraryLoadData || !cj_cu.cuLibraryGetKernel || !cj_cu.cuLibraryGetGlobal ||
      !cj_cu.cuKernelGetFunction || !cj_cu.cuKernelGetAttribute)
    return cj_fail(CUJIT_ERROR_NOT_SUPPORTED,
                   "the CUDA driver lacks the library API (cuLibraryLoadData); cujit needs a "
                   "driver for CUDA 12.0 or newer");
  if (!(log = s->jit_log[v]) && !(log = s->jit_log[v] = cj_calloc(1, JIT_LOG_SIZE)))
    return cj_fail_oom("loading a module");
  val[0] = log;
  val[1] = (void *)(uintptr_t)(JIT_LOG_SIZE - 1);
  r = cj_cu.cuLibraryLoadData(&s->lib[v], image_bytes(m->image, v), opt, val, 2, NULL, NULL, 0);
  if (r != CUDA_SUCCESS) {
    s->lib[v] = NULL;
    st = load_failed(m, v, r, dev, cc, log);
    log[0] = '\0';
  } else {
    cj_debug("loaded module '%s' from its %s on device %d", m->name,
             v == V_CUBIN ? "CUBIN" : "PTX", (int)dev);
  }
  return st;
}

/* Whether the PTX of an image built for `arch` ("sm_90" or "compute_90" both mean PTX for
 * compute_90) can be compiled for a device of compute capability cc: not for an older
 * device, and arch-specific ("a") PTX only for its own. */
static int ptx_fits(const char *arch, int cc) {
  const char *digits = strchr(arch, '_');
  char *end;
  long a;
  if (!digits) return 1; /* unknown form: let the driver decide */
  a = strtol(digits + 1, &end, 10);
  return *end == 'a' ? a == cc : a <= cc;
}

/* Loads the image that suits `dev` and returns which one it is. */
static cujit_status load_for_device(cujit_module *m, cj_mstate *s, CUdevice dev, int *variant,
                                    const cj_limits **lim) {
  cujit_status st = cj_device_limits(dev, lim);
  int cc;
  if (st != CUJIT_OK) return st;
  cc = (*lim)->cc;
  if (binary_only(m)) { /* a CUBIN or fatbin: the driver picks or refuses */
    *variant = V_CUBIN;
    return load_image(m, s, V_CUBIN, dev, cc);
  }
  *variant = m->image->cubin && cubin_fits(m->image->arch, cc) ? V_CUBIN : V_PTX;
  if (*variant == V_PTX && m->image->prebuilt && !ptx_fits(m->image->arch, cc))
    return cj_fail(CUJIT_ERROR_LOAD, "cannot load module '%s' on device %d (sm_%d): its PTX "
                   "targets %s, which this device cannot run; generate it for compute_%d or older",
                   m->name, (int)dev, cc, m->image->arch, cc);
  if (*variant == V_PTX && !ptx_fits(m->image->arch, cc))
    return cj_fail(CUJIT_ERROR_LOAD, "cannot load module '%s' (compiled for %s) on device %d "
                   "(sm_%d): neither its CUBIN nor its PTX can run there; compile for this "
                   "device (leave cujit_options.arch NULL, or give \"sm_%d\")", m->name,
                   m->image->arch, (int)dev, cc, cc);
  return load_image(m, s, *variant, dev, cc);
}

/* ---- kernels on a device ---- */

static cujit_status kernel_attr(CUkernel k, CUdevice dev, CUfunction_attribute a, int *v,
                                const char *what) {
  CUresult r = cj_cu.cuKernelGetAttribute(v, a, k, dev);
  return r == CUDA_SUCCESS ? CUJIT_OK : cj_cu_fail(r, what);
}

/* Fills fn's slot for `dev` (module lock held). */
static cujit_status slot_fill(const cujit_function *fn, CUdevice dev) {
  cujit_module *m = fn->module;
  cj_mstate *s = m->device_state;
  cj_fstate *fs = fn->device;
  cj_fslot *slot = &fs->slot[dev];
  const cj_limits *lim;
  CUfunction f;
  CUresult r;
  int v;
  cujit_status st;
  if (slot->ready) return CUJIT_OK;
  if ((st = load_for_device(m, s, dev, &v, &lim)) != CUJIT_OK) return st;
  if (!fs->kernel[v]) {
    /* with lazy loading, this is where the image is really loaded (or the PTX JIT fails) */
    r = cj_cu.cuLibraryGetKernel(&fs->kernel[v], s->lib[v], fn->lowered);
    if (r != CUDA_SUCCESS) {
      fs->kernel[v] = NULL;
      if (r != CUDA_ERROR_NOT_FOUND) return load_failed(m, v, r, dev, lim->cc, s->jit_log[v]);
      return cj_fail_cu(CUJIT_ERROR_LOAD, r, "module '%s' has kernel '%s' in its PTX but the "
                        "driver cannot find it: %s", m->name, fn->lowered, cj_cu_name(r));
    }
  }
  /* loads the kernel into the current context now, so load errors surface here */
  r = cj_cu.cuKernelGetFunction(&f, fs->kernel[v]);
  if (r != CUDA_SUCCESS) return load_failed(m, v, r, dev, lim->cc, s->jit_log[v]);
  if ((st = kernel_attr(fs->kernel[v], dev, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                        &slot->max_threads, "cuKernelGetAttribute")) != CUJIT_OK ||
      (st = kernel_attr(fs->kernel[v], dev, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                        &slot->static_smem, "cuKernelGetAttribute")) != CUJIT_OK ||
      (st = kernel_attr(fs->kernel[v], dev, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        &slot->dyn_smem_max, "cuKernelGetAttribute")) != CUJIT_OK)
    return st;
  slot->kernel = fs->kernel[v];
  slot->dev = dev;
  slot->lim = lim;
  __atomic_store_n(&slot->ready, 1, __ATOMIC_RELEASE);
  return CUJIT_OK;
}

static cujit_status slot_index(const cj_fstate *fs, CUdevice dev) {
  if (dev >= 0 && dev < fs->ndev) return CUJIT_OK;
  return cj_fail(CUJIT_ERROR_NO_DEVICE, "the current context's device (%d) is not one of the "
                 "%d devices present when the kernel was looked up", (int)dev, fs->ndev);
}

/* Set once the calling thread had a current context in cj_function_slot. */
static _Thread_local int had_context;

cujit_status cj_function_slot(const cujit_function *fn, cj_fslot **out, int need_ctx) {
  cj_fstate *fs = fn->device;
  CUcontext ctx = NULL;
  CUdevice dev = 0;
  cujit_status st;
  cj_fslot *slot;
  /* one device: its slot serves any context, and in a thread that has had one a launch
   * finds out itself whether one is still current, which saves a driver call per launch */
  if (!need_ctx && fs->ndev == 1 && had_context &&
      __atomic_load_n(&fs->slot[0].ready, __ATOMIC_ACQUIRE)) {
    *out = &fs->slot[0];
    return CUJIT_OK;
  }
  if (CJ_UNLIKELY(cj_cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)) {
    if ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) return st;
  } else if (fs->ndev > 1) {
    CUresult r = cj_cu.cuCtxGetDevice(&dev);
    if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuCtxGetDevice");
  }
  had_context = 1;
  if (CJ_UNLIKELY(dev < 0 || dev >= fs->ndev)) return slot_index(fs, dev);
  slot = &fs->slot[dev];
  if (CJ_UNLIKELY(!__atomic_load_n(&slot->ready, __ATOMIC_ACQUIRE))) {
    pthread_mutex_lock(&fn->module->lock);
    st = slot_fill(fn, dev);
    pthread_mutex_unlock(&fn->module->lock);
    if (st != CUJIT_OK) return st;
  }
  *out = slot;
  return CUJIT_OK;
}

cujit_status cj_function_allow_smem(const cujit_function *fn, cj_fslot *slot, unsigned bytes) {
  CUresult r = CUDA_SUCCESS;
  if (!cj_cu.cuKernelSetAttribute)
    return cj_fail(CUJIT_ERROR_NOT_SUPPORTED, "the driver lacks cuKernelSetAttribute, needed "
                   "for more than the default dynamic shared memory");
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

/* ---- names ---- */

/* Appends "readable (symbol)" for each listed symbol. */
static void list_symbols(cj_buf *b, char *const *syms, size_t n, const size_t *idx) {
  char name[256];
  size_t i;
  for (i = 0; i < n && i < MAX_LISTED; i++) {
    const char *sym = syms[idx ? idx[i] : i];
    cj_symbol_readable(sym, name, sizeof name);
    cj_buf_printf(b, "%s%s", i ? ", " : "", name);
    if (strcmp(name, sym) != 0) cj_buf_printf(b, " (%s)", sym);
  }
  if (n > MAX_LISTED) cj_buf_printf(b, " and %zu more", n - MAX_LISTED);
}

static cujit_status fail_listing(cujit_status st, cj_buf *b) {
  if (b->oom) {
    cj_buf_free(b);
    return cj_fail_oom("describing a lookup failure");
  }
  st = cj_fail(st, "%s", b->data);
  cj_buf_free(b);
  return st;
}

static cujit_status not_found(const cujit_module *m, const char *what, const char *name,
                              char *const *syms, size_t n) {
  cj_buf b = {0};
  cj_buf_printf(&b, "module '%s' has no %s '%s'; ", m->name, what, name);
  if (n == 0) {
    cj_buf_printf(&b, "it has no %ss at all", what);
  } else {
    cj_buf_printf(&b, "its %ss: ", what);
    list_symbols(&b, syms, n, NULL);
  }
  if (strchr(name, '<'))
    cj_buf_printf(&b, ". Template instances are found through name expressions: add \"%s\" "
                  "to cujit_options.name_expressions", name);
  return fail_listing(CUJIT_ERROR_NOT_FOUND, &b);
}

static cujit_status ambiguous(const cujit_module *m, const char *what, const char *name,
                              char *const *syms, const size_t *idx, size_t n) {
  cj_buf b = {0};
  cj_buf_printf(&b, "'%s' matches %zu %ss of module '%s': ", name, n, what, m->name);
  list_symbols(&b, syms, n, idx);
  cj_buf_puts(&b, "; pass the symbol of the one you want, or a name expression that selects "
                  "it (listed in cujit_options.name_expressions, e.g. \"scale<float>\")");
  return fail_listing(CUJIT_ERROR_AMBIGUOUS, &b);
}

/* The lowered name of name expression `name` (or of "&name"), or NULL. */
static const char *lowered_of(const cujit_module *m, const char *name) {
  size_t i;
  for (i = 0; i < m->image->n_names; i++) {
    const char *e = m->image->name_exprs[i];
    if (strcmp(e, name) == 0 || (e[0] == '&' && strcmp(e + 1, name) == 0))
      return m->image->lowered[i];
  }
  return NULL;
}

static cujit_status resolve(const cujit_module *m, char *const *syms, size_t n, const char *what,
                            const char *name, const char **sym) {
  size_t found[MAX_LISTED], count;
  const char *lowered = lowered_of(m, name);
  if (lowered) name = lowered;
  count = cj_symbol_find(syms, n, name, found, MAX_LISTED);
  if (count == 1) {
    *sym = syms[found[0]];
    return CUJIT_OK;
  }
  if (count > 1) return ambiguous(m, what, name, syms, found, count);
  if (lowered)
    return cj_fail(CUJIT_ERROR_NOT_FOUND, "name expression '%s' of module '%s' lowers to '%s', "
                   "which is not a %s of the module", name, m->name, lowered, what);
  return not_found(m, what, name, syms, n);
}

/* ---- functions ---- */

static void function_free(cujit_function *fn) {
  if (!fn) return;
  cj_function_sig_free(fn);
  cj_free(fn->name);
  cj_free(fn->lowered);
  cj_free(fn->param_offsets);
  cj_free(fn->param_sizes);
  cj_free(fn->device);
  cj_free(fn);
}

/* The parameter layout from the driver (12.4 and newer), else from the PTX. The PTX gives
 * the count, so that the driver is never asked for a parameter past the last (an error
 * that compute-sanitizer would report); only when the PTX cannot be read, or there is none
 * (a CUBIN or fatbin), is the driver asked until it refuses. */
static cujit_status param_layout(cujit_function *fn, CUkernel k) {
  size_t cap = 0, i, off, size;
  CUresult r;
  cujit_status st = CUJIT_ERROR_NOT_FOUND;
  if (!binary_only(fn->module))
    st = cj_ptx_params(fn->module->image->ptx, fn->lowered, &fn->nparams, &fn->param_offsets,
                       &fn->param_sizes);
  else if (!cj_cu.cuKernelGetParamInfo)
    return cj_fail(CUJIT_ERROR_NOT_SUPPORTED, "the parameters of kernel '%s' of module '%s' "
                   "(a CUBIN or fatbin, with no PTX to read them from) need the driver's "
                   "cuKernelGetParamInfo (CUDA 12.4 or newer); update the driver, or load the "
                   "module from PTX", fn->name, fn->module->name);
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
    if (i == cap) {
      size_t *o, *s;
      cap = cap ? cap * 2 : 8;
      o = cj_realloc(fn->param_offsets, cap * sizeof *o);
      if (o) fn->param_offsets = o;
      s = o ? cj_realloc(fn->param_sizes, cap * sizeof *s) : NULL;
      if (!s) return cj_fail_oom("reading a kernel's parameters");
      fn->param_sizes = s;
    }
    fn->param_offsets[i] = off;
    fn->param_sizes[i] = size;
  }
  fn->nparams = i;
  return CUJIT_OK;
}

static cujit_status function_new(cujit_module *m, cj_mstate *s, const char *sym, CUdevice dev,
                                 cujit_function **out) {
  cujit_function *fn = cj_calloc(1, sizeof *fn);
  cujit_function **fns;
  cj_fstate *fs;
  char name[256];
  int ndev = 0;
  cujit_status st;
  cj_cu.cuDeviceGetCount(&ndev);
  if (ndev > CJ_DEVICE_SLOTS) ndev = CJ_DEVICE_SLOTS;
  if (ndev <= dev) ndev = (int)dev + 1;
  if (!fn || !(fn->device = fs = cj_calloc(1, sizeof *fs + (size_t)ndev * sizeof fs->slot[0])) ||
      !(fn->name = cj_strdup(cj_symbol_unqualified(sym, name, sizeof name))) ||
      !(fn->lowered = cj_strdup(sym))) {
    function_free(fn);
    return cj_fail_oom("creating a kernel handle");
  }
  fs->ndev = ndev;
  fn->module = m;
  if ((st = slot_fill(fn, dev)) != CUJIT_OK ||
      (st = param_layout(fn, fs->slot[dev].kernel)) != CUJIT_OK) {
    function_free(fn);
    return st;
  }
  if (!(fns = cj_realloc(s->fns, (s->n_fns + 1) * sizeof *fns))) {
    function_free(fn);
    return cj_fail_oom("creating a kernel handle");
  }
  s->fns = fns;
  fns[s->n_fns++] = fn;
  *out = fn;
  return CUJIT_OK;
}

static cujit_function *function_find(const cj_mstate *s, const char *sym) {
  size_t i;
  for (i = 0; i < s->n_fns; i++)
    if (strcmp(s->fns[i]->lowered, sym) == 0) return s->fns[i];
  return NULL;
}

/* Asks the driver for the kernels of a CUBIN or fatbin, which has no PTX to read them
 * from: loads it on `dev` first (module lock held; once per module). */
static cujit_status list_kernels(cujit_module *m, cj_mstate *s, CUdevice dev) {
  const cj_limits *lim;
  CUkernel *ks = NULL;
  unsigned count = 0, i;
  CUresult r;
  int v;
  cujit_status st;
  if (s->kernels_listed) return CUJIT_OK;
  if (!cj_cu.cuLibraryGetKernelCount || !cj_cu.cuLibraryEnumerateKernels || !cj_cu.cuKernelGetName)
    return cj_fail(CUJIT_ERROR_NOT_SUPPORTED, "module '%s' is a CUBIN or fatbin, whose kernels "
                   "only the driver can list, and this driver cannot (cuLibraryEnumerateKernels "
                   "needs CUDA 12.4 or newer); update the driver, or load the module from PTX",
                   m->name);
  if ((st = load_for_device(m, s, dev, &v, &lim)) != CUJIT_OK) return st;
  r = cj_cu.cuLibraryGetKernelCount(&count, s->lib[v]);
  if (r == CUDA_SUCCESS && count > 0 && !(ks = cj_calloc(count, sizeof *ks)))
    return cj_fail_oom("listing the module's kernels");
  if (r == CUDA_SUCCESS && count > 0) r = cj_cu.cuLibraryEnumerateKernels(ks, count, s->lib[v]);
  for (i = 0; r == CUDA_SUCCESS && st == CUJIT_OK && i < count; i++) {
    const char *name = NULL;
    r = cj_cu.cuKernelGetName(&name, ks[i]);
    if (r == CUDA_SUCCESS && name) st = cj_symtab_add(&s->syms, 1, name, strlen(name));
  }
  cj_free(ks);
  if (r != CUDA_SUCCESS) st = load_failed(m, v, r, dev, lim->cc, s->jit_log[v]);
  if (st != CUJIT_OK) {
    cj_strv_free(s->syms.kernels, s->syms.n_kernels);
    s->syms.kernels = NULL;
    s->syms.n_kernels = 0;
    return st;
  }
  s->kernels_listed = 1;
  return CUJIT_OK;
}

/* Resolves `name` among the module's kernels or globals. No device is needed, except to
 * list the kernels of a CUBIN or fatbin (on `dev`, which is then the current device). A
 * variable of a module whose variables could not be listed is taken by its symbol. */
static cujit_status lookup_locked(cujit_module *m, cj_mstate *s, int kernels, const char *name,
                                  const char **sym, CUdevice dev) {
  cujit_status st;
  if (!kernels && !s->globals_known) {
    *sym = name;
    return CUJIT_OK;
  }
  if (!kernels) return resolve(m, s->syms.globals, s->syms.n_globals, "variable", name, sym);
  if (binary_only(m) && (st = list_kernels(m, s, dev)) != CUJIT_OK) return st;
  return resolve(m, s->syms.kernels, s->syms.n_kernels, "kernel", name, sym);
}

static cujit_status lookup(cujit_module *m, int kernels, const char *name, const char **sym,
                           CUdevice dev) {
  cj_mstate *s;
  cujit_status st;
  pthread_mutex_lock(&m->lock);
  s = mstate(m);
  st = s ? lookup_locked(m, s, kernels, name, sym, dev)
         : cj_fail_oom("listing the module's kernels");
  pthread_mutex_unlock(&m->lock);
  return st;
}

cujit_status cujit_module_get_function(cujit_module *m, const char *name, cujit_function **out) {
  const char *sym = NULL;
  CUcontext ctx;
  CUdevice dev = 0;
  cujit_function *fn;
  cujit_status st;
  if (!out) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_get_function: fn is NULL");
  *out = NULL;
  if (!m || !name || !name[0])
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_get_function: %s",
                   !m ? "module is NULL" : "name is NULL or empty");
  if (binary_only(m) && (st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) return st;
  if ((st = lookup(m, 1, name, &sym, dev)) != CUJIT_OK) return st;
  if ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) return st;
  pthread_mutex_lock(&m->lock);
  fn = function_find(m->device_state, sym);
  if (!fn)
    st = function_new(m, m->device_state, sym, dev, &fn);
  else if ((st = slot_index(fn->device, dev)) == CUJIT_OK)
    st = slot_fill(fn, dev);
  pthread_mutex_unlock(&m->lock);
  if (st == CUJIT_OK) *out = fn;
  return st;
}

void cj_module_device_free(cujit_module *m) {
  cj_mstate *s = m->device_state;
  size_t i;
  if (!s) return;
  for (i = 0; i < s->n_fns; i++) function_free(s->fns[i]);
  for (i = 0; i < 2; i++) {
    if (s->lib[i]) cj_cu.cuLibraryUnload(s->lib[i]);
    cj_free(s->jit_log[i]);
  }
  cj_free(s->fns);
  cj_symtab_free(&s->syms);
  cj_free(s);
  m->device_state = NULL;
}

/* ---- globals ---- */

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
  if ((st = lookup(m, 0, name, &sym, 0)) != CUJIT_OK) return st;
  if ((st = cj_ctx_ensure(&ctx, &dev)) != CUJIT_OK) return st;
  pthread_mutex_lock(&m->lock);
  st = load_for_device(m, m->device_state, dev, &v, &lim);
  if (st == CUJIT_OK)
    r = cj_cu.cuLibraryGetGlobal(dptr, &size, ((cj_mstate *)m->device_state)->lib[v], sym);
  pthread_mutex_unlock(&m->lock);
  if (st != CUJIT_OK) return st;
  if (r != CUDA_SUCCESS) {
    *dptr = 0;
    if (r == CUDA_ERROR_NOT_FOUND && !((cj_mstate *)m->device_state)->globals_known)
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

/* ---- attributes ---- */

cujit_status cujit_function_get_attrs(const cujit_function *fn, cujit_function_attrs *a) {
  static const struct { CUfunction_attribute attr; size_t field; } map[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, offsetof(cujit_function_attrs, num_regs)},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, offsetof(cujit_function_attrs, static_shared_bytes)},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
       offsetof(cujit_function_attrs, max_threads_per_block)},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(cujit_function_attrs, local_bytes)},
      {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, offsetof(cujit_function_attrs, const_bytes)},
      {CU_FUNC_ATTRIBUTE_PTX_VERSION, offsetof(cujit_function_attrs, ptx_version)},
      {CU_FUNC_ATTRIBUTE_BINARY_VERSION, offsetof(cujit_function_attrs, binary_version)}};
  cj_fslot *slot;
  cujit_status st;
  size_t i;
  if (!fn || !a)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_function_get_attrs: %s is NULL",
                   !fn ? "fn" : "attrs");
  memset(a, 0, sizeof *a);
  if ((st = cj_function_slot(fn, &slot, 1)) != CUJIT_OK) return st;
  for (i = 0; i < CJ_COUNT(map); i++) {
    st = kernel_attr(slot->kernel, slot->dev, map[i].attr, (int *)((char *)a + map[i].field),
                     "cuKernelGetAttribute");
    if (st != CUJIT_OK) return st;
  }
  a->num_params = (int)fn->nparams;
  return CUJIT_OK;
}

cujit_status cujit_function_suggest_block(const cujit_function *fn, size_t dynamic_shared_bytes,
                                          int *block_size, int *min_grid_size) {
  cj_fslot *slot;
  CUfunction f;
  CUresult r;
  int grid = 0, block = 0;
  cujit_status st;
  if (!fn || !block_size)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_function_suggest_block: %s is NULL",
                   !fn ? "fn" : "block_size");
  if ((st = cj_function_slot(fn, &slot, 1)) != CUJIT_OK) return st;
  r = cj_cu.cuKernelGetFunction(&f, slot->kernel);
  if (r == CUDA_SUCCESS)
    r = cj_cu.cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, dynamic_shared_bytes, 0);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuOccupancyMaxPotentialBlockSize");
  *block_size = block;
  if (min_grid_size) *min_grid_size = grid;
  return CUJIT_OK;
}

const char *cujit_function_name(const cujit_function *fn) { return fn ? fn->name : NULL; }

cujit_status cujit_function_param_info(const cujit_function *fn, size_t i, size_t *offset,
                                       size_t *size) {
  if (!fn) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_function_param_info: fn is NULL");
  if (i >= fn->nparams)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "kernel '%s' has %zu parameter%s; index %zu is out "
                   "of range", fn->name, fn->nparams, fn->nparams == 1 ? "" : "s", i);
  if (offset) *offset = fn->param_offsets[i];
  if (size) *size = fn->param_sizes[i];
  return CUJIT_OK;
}
