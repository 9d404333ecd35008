/* module.h - modules: a compiled image plus what was loaded from it on devices. */
#ifndef CUJIT_MODULE_H
#define CUJIT_MODULE_H

#include <pthread.h>

#include "compile/compile.h"

struct cj_mstate; /* function.h: what the module holds on devices */

struct cujit_module {
  cj_image *image;      /* shared with the memory cache */
  char *name;
  const char *source;   /* the source text, borrowed from the image */
  pthread_mutex_t lock; /* guards the device state */
  struct cj_mstate *dev; /* made on first lookup (load.c); NULL before */
};

/* A module holding `im` (the reference passes to it on success) named `name` (copied). */
cujit_status cj_module_new(cj_image *im, const char *name, cujit_module **out);

/* Releases what the module loaded on devices, and its kernel handles; safe when nothing
 * was loaded. */
void cj_module_device_free(cujit_module *m);

#endif
