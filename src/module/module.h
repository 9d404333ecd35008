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

/* Reads the whole file at `path` (at most `max` bytes) into *f for a module made from a
 * file, failing with CUJIT_ERROR_FILE and a message naming the path: what cannot be
 * opened or read, what is not a regular file (refused before it is opened; `hint` says
 * what to pass instead), what is too large. `what` names the work for an out-of-memory
 * failure. On success f->data is the caller's to free (cj_free). */
cujit_status cj_module_read_file(const char *path, size_t max, const char *what,
                                 const char *hint, cj_file *f);

/* Releases what the module loaded on devices, and its kernel handles; safe when nothing
 * was loaded. */
void cj_module_device_free(cujit_module *m);

#endif
