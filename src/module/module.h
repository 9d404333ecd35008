/* module.h - modules: a compiled image plus what was loaded from it on devices. */
#ifndef CUJIT_MODULE_H
#define CUJIT_MODULE_H

#include <pthread.h>

#include "compile/compile.h"

struct cj_mstate; /* function.h: what the module holds on devices */
struct cj_probe;  /* probe.c: answers about extern "C" kernels */

/* What a module compiled from source was made from, kept for cujit_module_export()
 * (source.c): the target its cache key names and a copy of the options, which lies in the
 * module's own allocation. All zero for a module made from prebuilt code. */
typedef struct cj_origin {
  int kept;                      /* 1 for a module compiled from source */
  char arch[32];                 /* the target the key names (before NVRTC checks or clamps it) */
  cujit_options opts;            /* the options, arch NULL */
  const char *first_include_dir; /* a source file's directory, or NULL */
} cj_origin;

/* A module as this layer sees it. The interface hands out its handle instead (common.h:
 * handles that never alias): a `cujit_module *` is that handle in disguise, and struct
 * cujit_module is never defined, so that a handle cannot be read as a module by mistake.
 * A kernel (cujit_function) points to its module directly. */
typedef struct cj_module {
  uintptr_t handle; /* what the caller holds */
  cj_image *image;  /* shared with the memory cache */
  char *name;
  const char *source;         /* the source text, borrowed from the image */
  pthread_mutex_t lock;       /* guards the device state */
  struct cj_mstate *dev;      /* made on first lookup (load.c); NULL before */
  cj_origin origin;           /* what it was compiled from: for export (export.c) and for the
                                 probe of extern "C" kernels (probe.c); origin.kept 0 for
                                 prebuilt code */
  pthread_mutex_t probe_lock; /* guards `probe` (held while a probe compiles) */
  struct cj_probe *probe;
  int graphs; /* graphs that launch its kernels (cj_module_hold); under the table's lock */
  int doomed; /* destroyed while graphs held it: freed by the last cj_module_unhold */
} cj_module;

/* The module of handle `h`, or NULL when h is not a live module (NULL, destroyed, or never
 * made by cujit). */
cj_module *cj_module_find(const cujit_module *h);
/* The same for a public function `fn`: CUJIT_ERROR_INVALID_VALUE naming fn and the
 * argument when h is not a live module. */
cujit_status cj_module_get(const cujit_module *h, const char *fn, cj_module **m);
/* The handle the caller holds for m. */
static inline cujit_module *cj_module_handle(const cj_module *m) {
  return (cujit_module *)m->handle;
}
/* Frees m (as cujit_module_destroy() frees its handle). */
void cj_module_free(cj_module *m);
/* One more graph that launches m's kernels (graph/graph.c): cujit_module_destroy() then
 * takes the handle away at once but leaves the rest (the loaded code, the kernels) until
 * the last such graph lets go with cj_module_unhold(), which frees it then. */
void cj_module_hold(cj_module *m);
void cj_module_unhold(cj_module *m);

/* A module holding `im` (the reference passes to it on success) named `name` (copied),
 * with its handle. */
cujit_status cj_module_new(cj_image *im, const char *name, cj_module **out);
/* The same with `extra` more bytes in the module's allocation (zeroed, aligned for any
 * type), at *extra_at. */
cujit_status cj_module_new_ex(cj_image *im, const char *name, size_t extra, void **extra_at,
                              cj_module **out);
/* A module holding `im`, compiled from request `r` whose key names the target `arch` (a
 * cj_request.arch: 32 bytes), keeping a copy of r's options for export (source.c). */
cujit_status cj_module_new_kept(cj_image *im, const cj_request *r, const char arch[32],
                                cj_module **out);
/* The request a kept module was compiled from (its source and name borrowed from the
 * module), for computing its keys again; never for compiling. */
cujit_status cj_origin_request(const cj_module *m, cj_request *r);

/* ---- probe.c: what the compiler says of extern "C" kernels ---- */

/* The name of the probe template appended to a module's source. */
#define CJ_PROBE_NAME "__cujit_probe"
/* The lowered name of CJ_PROBE_NAME<decltype(&kernel)> for kernel `sym` of m (*lowered
 * owned by the caller), compiled from m's source with its options through the caches, for
 * all of m's extern "C" kernels at once; each answer, or failure, is kept with m.
 * CUJIT_ERROR_SIGNATURE when m keeps no source (prebuilt code) or the probe does not
 * compile, saying what to do. */
cujit_status cj_module_probe(cj_module *m, const char *sym, char **lowered);
/* Frees what the probes left with m. */
void cj_module_probe_free(cj_module *m);

/* Releases what the module loaded on devices, and its kernel handles; safe when nothing
 * was loaded (function.c). */
void cj_module_device_free(cj_module *m);

#endif
