/* load.c - a module on devices: its image loaded lazily per device (the CUBIN when it fits
 * the device, else the PTX through the driver's JIT) with the context-independent library
 * API, and released with the module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/function.h"
#include "format/prebuilt.h"

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

cj_mstate *cj_module_state(cj_module *m) {
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
  else if (m->image->index) /* read when compiled, kept in its cache entry: no PTX to read */
    cj_symtab_borrow(&s->syms, m->image->index), st = CUJIT_OK;
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
static const char *load_hint(const cj_module *m, CUresult r) {
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

static const char *image_kind(const cj_module *m, int v) {
  if (m->dev && m->dev->what[v][0]) return m->dev->what[v];
  if (v == CJ_V_PTX) return "PTX through the driver's JIT";
  return m->image->fatbin ? "fatbin" : "CUBIN";
}

cujit_status cj_module_load_failed(cj_module *m, int v, CUresult r, CUdevice dev, int cc,
                                   const char *log) {
  const char *text = NULL;
  const char *hint = load_hint(m, r);
  if (cj_cu_status(r) == CUJIT_ERROR_LAUNCH_FAILED) { /* an earlier kernel's fault, not the image */
    char what[256];
    snprintf(what, sizeof what, "loading module '%s' on device %d", m->name, (int)dev);
    return cj_cu_wait_failed(r, what);
  }
  cj_cu.cuGetErrorString(r, &text);
  return cj_fail_cu(CUJIT_ERROR_LOAD, r,
                    "loading module '%s' (%s, %s %s) on device %d (sm_%d) failed: "
                    "%s (%s)%s%s%s",
                    m->name, image_kind(m, v), m->image->prebuilt ? "built for" : "compiled for",
                    m->image->arch[0] ? m->image->arch : "an unknown target", (int)dev, cc,
                    cj_cu_name(r), text ? text : "no description", hint,
                    log[0] ? "\nJIT log:\n" : "", log);
}

/* What is loaded for variant v of a module that is not a fatbin or bundle. */
static const void *image_bytes(const cj_image *im, int v) {
  if (v == CJ_V_PTX) return im->ptx;
  return im->cubin;
}

/* Loads `bytes` as library v (once per module); caller holds the lock. */
static cujit_status load_image(cj_module *m, cj_mstate *s, int v, const void *bytes, CUdevice dev,
                               int cc) {
  CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[2];
  char *log;
  CUresult r;
  CUstreamCaptureMode mode;
  cujit_status st = CUJIT_OK;
  if (s->lib[v]) return CUJIT_OK;
  CJ_CHECK(cj_cu.cuLibraryLoadData && cj_cu.cuLibraryGetKernel && cj_cu.cuLibraryGetGlobal &&
               cj_cu.cuKernelGetFunction && cj_cu.cuKernelGetAttribute,
           CUJIT_ERROR_NOT_SUPPORTED,
           "the CUDA driver lacks the library API (cuLibraryLoadData); "
           "cujit needs a driver for CUDA 12.0 or newer");
  /* the driver writes a NUL-terminated log of at most the size it is given, and often
   * nothing: only the first byte is set here, so that a load that logs nothing touches one
   * page of the buffer, not four */
  if (!(log = s->jit_log[v])) {
    if (!(log = s->jit_log[v] = cj_malloc(JIT_LOG_SIZE))) return cj_fail_oom("loading a module");
    log[0] = '\0';
  }
  val[0] = log;
  val[1] = (void *)(uintptr_t)(JIT_LOG_SIZE - 1);
  cj_capture_relax(&mode); /* loading code adds nothing to a capture: allowed during one */
  r = cj_cu.cuLibraryLoadData(&s->lib[v], bytes, opt, val, 2, NULL, NULL, 0);
  cj_capture_restore(&mode);
  if (r != CUDA_SUCCESS) {
    s->lib[v] = NULL;
    st = cj_module_load_failed(m, v, r, dev, cc, log);
    log[0] = '\0';
  } else {
    cj_debug("loaded module '%s' from its %s on device %d", m->name, image_kind(m, v), (int)dev);
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

/* ---- fatbins and bundles: the entry for the device ---- */

/* Whether entry c runs on a device of compute capability cc: a CUBIN of the same major
 * version and no newer minor one (an 'a' CUBIN only on its own device), PTX of no newer
 * version (an 'a' or 'f' PTX only within its own device or family). */
static int code_fits(const cj_code *c, int cc) {
  int a = (int)c->arch;
  if (c->kind == CJ_PREBUILT_CUBIN) {
    if (c->suffix == 'a') return a == cc;
    return a / 10 == cc / 10 && a % 10 <= cc % 10;
  }
  if (c->suffix == 'a') return a == cc;
  if (c->suffix == 'f') return a / 10 == cc / 10 && a <= cc;
  return a <= cc;
}

/* The entry of `kind` to load on a device of cc: the CUBIN for exactly that device, else
 * the newest compatible one; the newest PTX that can be compiled for it. -1 for none. */
static int code_pick(const cj_code *c, size_t n, cj_prebuilt_kind kind, int cc) {
  int best = -1;
  size_t i;
  for (i = 0; i < n; i++) {
    if (c[i].kind != kind || !code_fits(&c[i], cc)) continue;
    if (best < 0 || c[i].arch > c[best].arch || (c[i].arch == c[best].arch && c[i].suffix == 'a'))
      best = (int)i;
  }
  return best;
}

/* The bytes the driver is given for entry c: a CUBIN as it is, PTX as text ending in a NUL,
 * a compressed fatbin entry as a fatbin holding only it (the driver decompresses it). */
static unsigned char *code_bytes(const cj_code *c) {
  unsigned char *b;
  size_t n = c->size;
  if (c->compressed) {
    static const unsigned char head[8] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0};
    uint64_t total = c->entry_size;
    int k;
    if (!(b = cj_malloc(16 + c->entry_size))) return NULL;
    memcpy(b, head, sizeof head);
    for (k = 0; k < 8; k++) b[8 + k] = (unsigned char)(total >> (8 * k));
    memcpy(b + 16, c->entry, c->entry_size);
    return b;
  }
  if (c->kind == CJ_PREBUILT_PTX)
    while (n > 0 && c->data[n - 1] == '\0') n--;
  return (unsigned char *)cj_memdup(c->data, n);
}

/* What the module holds, for a message: "sm_80 sm_90 compute_90". */
static void list_codes(const cj_mstate *s, char *out, size_t size) {
  size_t i, used = 0;
  out[0] = '\0';
  for (i = 0; i < s->n_codes && used + 1 < size; i++) {
    char one[32];
    cj_code_name(&s->codes[i], one, sizeof one);
    used += (size_t)snprintf(out + used, size - used, "%s%s", i ? " " : "", one);
  }
}

static cujit_status no_code(const cj_module *m, const cj_mstate *s, CUdevice dev, int cc) {
  char held[512];
  list_codes(s, held, sizeof held);
  if (s->pick[CJ_V_CUBIN] || s->pick[CJ_V_PTX])
    return cj_fail(CUJIT_ERROR_LOAD,
                   "cannot load module '%s' on device %d (sm_%d): it was "
                   "loaded on another device as %s, which cannot run here, and a module loads "
                   "one CUBIN and one PTX at most; make a second module of the same bytes for "
                   "this device (it holds %s)",
                   m->name, (int)dev, cc, s->what[s->pick[CJ_V_CUBIN] ? CJ_V_CUBIN : CJ_V_PTX],
                   held);
  return cj_fail(CUJIT_ERROR_LOAD,
                 "cannot load module '%s' on device %d (sm_%d): it holds %s, "
                 "and none of them runs there: a CUBIN runs on its own major version at the "
                 "same or a newer minor one, PTX on its version or newer; build it for sm_%d "
                 "(cujit compile --arch ...,sm_%d, or nvcc -gencode arch=compute_%d,code=sm_%d)",
                 m->name, (int)dev, cc, held[0] ? held : "no CUBIN or PTX", cc, cc, cc, cc);
}

/* Loads entry i as library v. */
static cujit_status load_code(cj_module *m, cj_mstate *s, int v, int i, CUdevice dev, int cc) {
  const cj_code *c = &s->codes[i];
  char name[32];
  cujit_status st;
  cj_code_name(c, name, sizeof name);
  snprintf(s->what[v], sizeof s->what[v], "%s %s%s", v == CJ_V_CUBIN ? "CUBIN" : "PTX", name,
           v == CJ_V_CUBIN ? "" : " (JIT)");
  if (!(s->bytes[v] = code_bytes(c))) return cj_fail_oom("loading a module");
  st = load_image(m, s, v, s->bytes[v], dev, cc);
  if (st != CUJIT_OK) {
    cj_free(s->bytes[v]);
    s->bytes[v] = NULL;
    return st;
  }
  s->pick[v] = i + 1;
  return CUJIT_OK;
}

/* Chooses and loads the entry of a fatbin or bundle for `dev`: a library already loaded
 * when it runs there, else the CUBIN for the device, else its PTX through the JIT. */
static cujit_status load_container(cj_module *m, cj_mstate *s, CUdevice dev, int cc, int *variant) {
  int v, i;
  if (!s->codes) {
    CJ_TRY(cj_prebuilt_codes(m->image->fatbin, m->image->fatbin_size,
                             (cj_prebuilt_kind)m->image->prebuilt, &s->codes, &s->n_codes));
    if (!s->codes && !(s->codes = cj_calloc(1, sizeof *s->codes)))
      return cj_fail_oom("loading a module");
  }
  for (v = CJ_V_CUBIN; v <= CJ_V_PTX; v++) {
    if (s->pick[v] && code_fits(&s->codes[s->pick[v] - 1], cc)) {
      /* a PTX loaded for another device serves here only when no CUBIN would */
      if (v == CJ_V_PTX && !s->pick[CJ_V_CUBIN] &&
          code_pick(s->codes, s->n_codes, CJ_PREBUILT_CUBIN, cc) >= 0)
        break;
      *variant = v;
      return CUJIT_OK;
    }
  }
  for (v = CJ_V_CUBIN; v <= CJ_V_PTX; v++) {
    if (s->pick[v]) continue;
    i = code_pick(s->codes, s->n_codes, v == CJ_V_CUBIN ? CJ_PREBUILT_CUBIN : CJ_PREBUILT_PTX, cc);
    if (i < 0) continue;
    *variant = v;
    return load_code(m, s, v, i, dev, cc);
  }
  return no_code(m, s, dev, cc);
}

/* Says, once per device, what was loaded there. */
static void record(cj_module *m, cj_mstate *s, int v, CUdevice dev, int cc) {
  if (!s->what[v][0]) {
    const char *arch = m->image->arch;
    if (v == CJ_V_PTX && strncmp(arch, "sm_", 3) == 0)
      snprintf(s->what[v], sizeof s->what[v], "PTX compute_%s (JIT)", arch + 3);
    else /* not snprintf: this is on a warm start's path (see cj_join) */
      cj_join(s->what[v], sizeof s->what[v], v == CJ_V_CUBIN ? "CUBIN " : "PTX ",
              arch[0] ? arch : "(target unknown)", v == CJ_V_CUBIN ? "" : " (JIT)", NULL);
  }
  if (dev < 0 || dev >= CJ_RECORDED_DEVICES || s->on_dev[dev]) return;
  s->on_dev[dev] = (signed char)(v + 1);
  cj_info("module '%s' on device %d (sm_%d): loaded %s", m->name, (int)dev, cc, s->what[v]);
}

/* Loads the image that suits `dev` and returns which one it is. */
cujit_status cj_module_load(cj_module *m, cj_mstate *s, CUdevice dev, int *variant,
                            const cj_limits **lim) {
  int cc, fits;
  CJ_TRACE("cujit: module load %s", m->name);
  CJ_TRY(cj_device_limits(dev, lim));
  cc = (*lim)->cc;
  if (m->image->prebuilt == CJ_PREBUILT_FATBIN || m->image->prebuilt == CJ_PREBUILT_BUNDLE) {
    CJ_TRY(load_container(m, s, dev, cc, variant));
    record(m, s, *variant, dev, cc);
    return CUJIT_OK;
  }
  if (m->image->prebuilt == CJ_PREBUILT_CUBIN) { /* the driver loads it or refuses */
    *variant = CJ_V_CUBIN;
    CJ_TRY(load_image(m, s, CJ_V_CUBIN, m->image->cubin, dev, cc));
    record(m, s, *variant, dev, cc);
    return CUJIT_OK;
  }
  if (m->image->linked) { /* a linked CUBIN, loaded as it is */
    *variant = CJ_V_CUBIN;
    CJ_CHECK(cubin_fits(m->image->arch, cc), CUJIT_ERROR_LOAD,
             "cannot load module '%s' "
             "(linked for %s) on device %d (sm_%d); link it for this device (leave "
             "cujit_options.arch NULL, or give \"sm_%d\")",
             m->name, m->image->arch, (int)dev, cc, cc);
    CJ_TRY(load_image(m, s, CJ_V_CUBIN, m->image->cubin, dev, cc));
    record(m, s, *variant, dev, cc);
    return CUJIT_OK;
  }
  CJ_CHECK(!cj_image_is_ltoir(m->image), CUJIT_ERROR_LOAD,
           "cannot load module '%s': it holds "
           "LTO-IR, which no device loads; link it (cujit_module_link)",
           m->name);
  *variant = m->image->cubin && cubin_fits(m->image->arch, cc) ? CJ_V_CUBIN : CJ_V_PTX;
  fits = *variant == CJ_V_CUBIN || ptx_fits(m->image->arch, cc);
  CJ_CHECK(fits || !m->image->prebuilt, CUJIT_ERROR_LOAD,
           "cannot load module '%s' on device %d "
           "(sm_%d): its PTX targets %s, which this device cannot run; generate it for "
           "compute_%d or older",
           m->name, (int)dev, cc, m->image->arch, cc);
  CJ_CHECK(fits, CUJIT_ERROR_LOAD,
           "cannot load module '%s' (compiled for %s) on device %d "
           "(sm_%d): neither its CUBIN nor its PTX can run there; compile for this device "
           "(leave cujit_options.arch NULL, or give \"sm_%d\")",
           m->name, m->image->arch, (int)dev, cc, cc);
  CJ_TRY(load_image(m, s, *variant, image_bytes(m->image, *variant), dev, cc));
  record(m, s, *variant, dev, cc);
  return CUJIT_OK;
}

void cj_module_unload(cj_mstate *s) {
  CUstreamCaptureMode mode;
  size_t i;
  cj_capture_relax(&mode); /* no capture cujit runs uses it: those hold their modules */
  for (i = 0; i < 2; i++) {
    if (s->lib[i]) cj_cu.cuLibraryUnload(s->lib[i]);
    cj_free(s->jit_log[i]);
    cj_free(s->bytes[i]);
  }
  cj_capture_restore(&mode);
  cj_free(s->codes);
  cj_symtab_free(&s->syms);
  cj_free(s);
}
