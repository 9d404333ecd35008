/* code.h - the two kinds of code a device loads, as bytes built elsewhere (code.c): PTX
 * text and a CUBIN, told apart by their bytes, checked, and the kernels and variables each
 * names; the kinds of prebuilt code, one entry of a container, and the bounds-checked
 * reader every parser of them uses. Needs no device. */
#ifndef CUJIT_CODE_H
#define CUJIT_CODE_H

#include "compile/compile.h"
#include "compile/symbols.h"

/* cj_image.prebuilt: 0 for an image compiled here, else the kind it was loaded from. */
typedef enum cj_prebuilt_kind {
  CJ_PREBUILT_NONE = 0,
  CJ_PREBUILT_PTX = 1,
  CJ_PREBUILT_CUBIN = 2,
  CJ_PREBUILT_FATBIN = 3,
  CJ_PREBUILT_BUNDLE = 4 /* cujit's own bundle (bundle.h) */
} cj_prebuilt_kind;

/* One CUBIN or PTX entry of a fatbin or bundle (views into its bytes). */
typedef struct cj_code {
  cj_prebuilt_kind kind;     /* CJ_PREBUILT_CUBIN or CJ_PREBUILT_PTX */
  unsigned arch;             /* 90 for sm_90 or compute_90 */
  char suffix;               /* 'a', 'f' or 0 */
  int compressed;            /* a fatbin entry whose payload is compressed */
  const unsigned char *data; /* the payload */
  size_t size;
  const unsigned char *entry; /* a fatbin entry's header and payload; NULL in a bundle */
  size_t entry_size;
} cj_code;

/* Reads a little-endian unsigned integer of `width` bytes at `off` into *v; 0 when it lies
 * past the end. */
static inline int cj_get_le(const unsigned char *p, size_t size, uint64_t off, unsigned width,
                            uint64_t *v) {
  unsigned i;
  if (off > size || width > size - off) return 0;
  *v = 0;
  for (i = width; i > 0; i--) *v = (*v << 8) | p[off + i - 1];
  return 1;
}

/* Bytes as a CUBIN, its target into arch ("sm_90"): CUJIT_ERROR_INVALID_SOURCE saying what
 * is wrong, naming them `name`. */
cujit_status cj_cubin_check(const unsigned char *p, size_t size, const char *name, char *arch,
                            size_t arch_size);
/* 1 when bytes are PTX text, with its target in arch ("compute_90"). */
int cj_code_ptx_check(const unsigned char *p, size_t size, char *arch, size_t arch_size);
/* The variables (with `kernels`, the kernels too) a CUBIN's symbol table names, added to t;
 * *known set when a table was read. Fails only when out of memory. */
cujit_status cj_cubin_globals(const unsigned char *p, size_t size, int kernels, cj_symtab *t,
                              int *known);
/* The variables PTX text declares, added to t; *known set when it is PTX. */
cujit_status cj_code_ptx_globals(const void *data, size_t size, cj_symtab *t, int *known);

/* One kernel parameter as a CUBIN describes it for the driver. */
typedef struct cj_kparam {
  uint32_t offset, size; /* in bytes, within the kernel's parameter space */
} cj_kparam;

/* The parameters of kernel `kernel` (its symbol) as the CUBIN's own description of it says
 * (the attributes ptxas writes for the driver, which cuKernelGetParamInfo reports): 1 with
 * their count in *n and their places in ordinal order in *params (cj_malloc'd, the
 * caller's to free; NULL when there are none); 0, with nothing set, when the bytes do not
 * describe that kernel's parameters (not a CUBIN, no such kernel, a damaged or unknown
 * description: an ordinal missing or given twice, a size of 0); -1 when out of memory
 * (without an error detail). A pure function of the bytes. */
int cj_cubin_kparams(const void *cubin, size_t size, const char *kernel, size_t *n,
                     cj_kparam **params);

/* The value of kernel `kernel`'s first sized attribute `attr` in a CUBIN's description of
 * it (as EIATTR_MAX_THREADS, 0x05: the three sizes of __launch_bounds__): 1 with *value
 * pointing into the bytes and its length in *len, else 0 (not a CUBIN, no such kernel or
 * attribute, a damaged description). A pure function of the bytes. */
int cj_cubin_kernel_attr(const void *cubin, size_t size, const char *kernel, unsigned attr,
                         const unsigned char **value, size_t *len);

/* Whether bytes hold what a code entry of `kind` (CJ_PREBUILT_CUBIN or CJ_PREBUILT_PTX)
 * must: a CUBIN is a 64-bit little-endian ELF file for CUDA whose section headers lie
 * inside it, PTX is text with .version and .target lines. 0 when they do (and for other
 * kinds), else 1 with the reason in `why` ("is a 32-bit ELF file, ..."). A pure function of
 * the bytes: cj_bundle_parse() checks every CUBIN and PTX entry with it. */
int cj_prebuilt_code_why(cj_prebuilt_kind kind, const void *data, size_t size, char *why,
                         size_t why_size);
/* The kernels (entry functions) and variables a CUBIN's symbol table defines, into t (a
 * linked module's, read without a device). Fails only when out of memory. */
cujit_status cj_prebuilt_symbols(const void *cubin, size_t size, cj_symtab *t);

#endif
