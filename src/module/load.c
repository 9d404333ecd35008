/* load.c - a module on devices: its image loaded lazily per device (the CUBIN when it fits
 * the device, else the PTX through the driver's JIT) with the context-independent library
 * API, and released with the module. */
#include <stdlib.h>
#include <string.h>

#include "module/function.h"
#include "module/prebuilt.h"

enum { JIT_LOG_SIZE = 16384 };

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
int cj_module_binary_only(const cujit_module *m) {
  return m->image->prebuilt == CJ_PREBUILT_CUBIN || m->image->prebuilt == CJ_PREBUILT_FATBIN;
}

cj_mstate *cj_module_state(cujit_module *m) {
  cj_mstate *s = m->dev;
  cujit_status st;
  if (s) return s;
  s = cj_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->globals_known = 1;
  if (m->image->linked) /* its symbol table names everything it holds */
    st = cj_prebuilt_symbols(m->image->cubin, m->image->cubin_size, &s->syms);
  else if (cj_module_binary_only(m))
    st = cj_prebuilt_globals(m->image, &s->syms, &s->globals_known);
  else
    st = cj_symtab_build(m->image->ptx, &s->syms);
  if (st != CUJIT_OK) {
    cj_free(s);
    return NULL;
  }
  m->dev = s;
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
  if (v == CJ_V_PTX) return "PTX through the driver's JIT";
  return m->image->fatbin ? "fatbin" : "CUBIN";
}

cujit_status cj_module_load_failed(cujit_module *m, int v, CUresult r, CUdevice dev, int cc,
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
  if (v == CJ_V_PTX) return im->ptx;
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
  CJ_CHECK(cj_cu.cuLibraryLoadData && cj_cu.cuLibraryGetKernel && cj_cu.cuLibraryGetGlobal &&
               cj_cu.cuKernelGetFunction && cj_cu.cuKernelGetAttribute,
           CUJIT_ERROR_NOT_SUPPORTED, "the CUDA driver lacks the library API (cuLibraryLoadData); "
           "cujit needs a driver for CUDA 12.0 or newer");
  if (!(log = s->jit_log[v]) && !(log = s->jit_log[v] = cj_calloc(1, JIT_LOG_SIZE)))
    return cj_fail_oom("loading a module");
  val[0] = log;
  val[1] = (void *)(uintptr_t)(JIT_LOG_SIZE - 1);
  r = cj_cu.cuLibraryLoadData(&s->lib[v], image_bytes(m->image, v), opt, val, 2, NULL, NULL, 0);
  if (r != CUDA_SUCCESS) {
    s->lib[v] = NULL;
    st = cj_module_load_failed(m, v, r, dev, cc, log);
    log[0] = '\0';
  } else {
    cj_debug("loaded module '%s' from its %s on device %d", m->name,
             v == CJ_V_CUBIN ? "CUBIN" : "PTX", (int)dev);
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
cujit_status cj_module_load(cujit_module *m, cj_mstate *s, CUdevice dev, int *variant,
                                    const cj_limits **lim) {
  int cc, fits;
  CJ_TRY(cj_device_limits(dev, lim));
  cc = (*lim)->cc;
  if (cj_module_binary_only(m)) { /* a CUBIN or fatbin: the driver picks or refuses */
    *variant = CJ_V_CUBIN;
    return load_image(m, s, CJ_V_CUBIN, dev, cc);
  }
  if (m->image->linked) { /* a linked CUBIN, loaded as it is */
    *variant = CJ_V_CUBIN;
    CJ_CHECK(cubin_fits(m->image->arch, cc), CUJIT_ERROR_LOAD, "cannot load module '%s' "
             "(linked for %s) on device %d (sm_%d); link it for this device (leave "
             "cujit_options.arch NULL, or give \"sm_%d\")", m->name, m->image->arch, (int)dev,
             cc, cc);
    return load_image(m, s, CJ_V_CUBIN, dev, cc);
  }
  CJ_CHECK(!cj_image_is_ltoir(m->image), CUJIT_ERROR_LOAD, "cannot load module '%s': it holds "
           "LTO-IR, which no device loads; link it (cujit_module_link)", m->name);
  *variant = m->image->cubin && cubin_fits(m->image->arch, cc) ? CJ_V_CUBIN : CJ_V_PTX;
  fits = *variant == CJ_V_CUBIN || ptx_fits(m->image->arch, cc);
  CJ_CHECK(fits || !m->image->prebuilt, CUJIT_ERROR_LOAD, "cannot load module '%s' on device %d "
           "(sm_%d): its PTX targets %s, which this device cannot run; generate it for "
           "compute_%d or older", m->name, (int)dev, cc, m->image->arch, cc);
  CJ_CHECK(fits, CUJIT_ERROR_LOAD, "cannot load module '%s' (compiled for %s) on device %d "
           "(sm_%d): neither its CUBIN nor its PTX can run there; compile for this device "
           "(leave cujit_options.arch NULL, or give \"sm_%d\")", m->name, m->image->arch,
           (int)dev, cc, cc);
  return load_image(m, s, *variant, dev, cc);
}

void cj_module_device_free(cujit_module *m) {
  cj_mstate *s = m->dev;
  size_t i;
  if (!s) return;
  for (i = 0; i < s->n_fns; i++) cj_function_free(s->fns[i]);
  for (i = 0; i < 2; i++) {
    if (s->lib[i]) cj_cu.cuLibraryUnload(s->lib[i]);
    cj_free(s->jit_log[i]);
  }
  cj_free(s->fns);
  cj_symtab_free(&s->syms);
  cj_free(s);
  m->dev = NULL;
}
