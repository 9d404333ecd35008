/* function.h - kernels of a module. The launch layer (device.c, launch.c) owns the device
 * fields; the signature layer (signature.c, call.c) owns `sig` and `closures`. */
#ifndef CUJIT_FUNCTION_H
#define CUJIT_FUNCTION_H

#include "module.h"

struct cj_signature; /* signature.c */

struct cujit_function {
  cujit_module *module;      /* the module it belongs to (not owned) */
  char *name;                /* plain name, e.g. "multiply_them" */
  char *lowered;             /* its symbol in the image, e.g. "_Z13multiply_themPfS_S_" */
  /* ---- launch layer: device handles and the parameter layout from the driver ---- */
  void *device;              /* launch layer's per-device state */
  size_t nparams;
  size_t *param_offsets;
  size_t *param_sizes;
  /* ---- signature layer ---- */
  struct cj_signature *sig;  /* parsed or explicit signature; NULL until first needed */
  void *closures;            /* function pointers made by cujit_function_bind() */
};

/* signature.c: frees `sig` and `closures` (called when the function is freed). */
void cj_function_sig_free(cujit_function *fn);

#endif
