/* module.h - modules: a compiled image plus what was loaded from it on devices. */
#ifndef CUJIT_MODULE_H
#define CUJIT_MODULE_H

#include <pthread.h>

#include "compile.h"

struct cujit_module {
  cj_image *image; /* shared with the memory cache */
  char *name;
  const char *source; /* the source text, borrowed from the image (signatures are parsed from it) */
  pthread_mutex_t lock; /* guards the device state below */
  /* Device state (loading, functions, globals) is added by the launch layer. */
  void *device_state;
};

/* A module holding `im` (the reference passes to it on success) named `name` (copied). */
cujit_status cj_module_new(cj_image *im, const char *name, cujit_module **out);

/* Releases what the module loaded on devices; safe when nothing was loaded. */
void cj_module_device_free(cujit_module *m);

#endif
