/* module.h - modules: a compiled image plus what was loaded from it on devices. */
#ifndef CUJIT_MODULE_H
#define CUJIT_MODULE_H

#include <pthread.h>

#include "compile/compile.h"

struct cj_mstate; /* function.h: what the module holds on devices */
struct cj_probe;  /* probe.c: answers about extern "C" kernels */

struct cujit_module {
  cj_image *image;      /* shared with the memory cache */
  char *name;
  const char *source;   /* the source text, borrowed from the image */
  cj_request *req;      /* the options it was compiled with (held in the module's own
                           allocation), to compile the probe of extern "C" kernels; NULL
                           for prebuilt code */
  pthread_mutex_t lock; /* guards the device state */
  struct cj_mstate *dev; /* made on first lookup (load.c); NULL before */
  pthread_mutex_t probe_lock; /* guards `probe` (held while a probe compiles) */
  struct cj_probe *probe;
};

/* A module holding `im` (the reference passes to it on success) named `name` (copied),
 * compiled with `req` (its options copied; NULL for prebuilt code). */
cujit_status cj_module_new(cj_image *im, const char *name, const cj_request *req,
                           cujit_module **out);

/* ---- probe.c: what the compiler says of extern "C" kernels ---- */

/* The name of the probe template appended to a module's source. */
#define CJ_PROBE_NAME "__cujit_probe"
/* The lowered name of CJ_PROBE_NAME<decltype(&kernel)> for kernel `sym` of m (*lowered
 * owned by the caller), compiled from m's source with its options through the caches, for
 * all of m's extern "C" kernels at once; each answer, or failure, is kept with m.
 * CUJIT_ERROR_SIGNATURE when m keeps no source (prebuilt code) or the probe does not
 * compile, saying what to do. */
cujit_status cj_module_probe(cujit_module *m, const char *sym, char **lowered);
/* Frees what the probes left with m. */
void cj_module_probe_free(cujit_module *m);

/* Releases what the module loaded on devices, and its kernel handles; safe when nothing
 * was loaded. */
void cj_module_device_free(cujit_module *m);

#endif
