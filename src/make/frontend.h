/* frontend.h - the ways to make modules beyond one source at a time, on top of the module
 * layer: asynchronous compiles and batches (job.c, batch.c), export and import (export.c),
 * bundles for several GPUs (aot.c) and modules linked from several parts (link.c). Each is
 * a public entry point; this header holds what one of them offers another. Private. */
#ifndef CUJIT_FRONTEND_H
#define CUJIT_FRONTEND_H

#include "module/module.h"

/* cujit_compile_job_start() with `dir` (may be NULL) first on the include path, as for a file
 * (job.c). */
cujit_status cj_job_start_dir(cujit_compile_job **job, const char *source, const char *name,
                              const cujit_options *opts, const char *dir);
/* cujit_module_export() of a module, which the caller has looked up (export.c). */
cujit_status cj_export_module(const cj_module *m, void **blob, size_t *size);
/* cujit_module_import() with `dir` first on the include path, as the exporter's
 * cujit_module_from_file() had it (export.c). */
cujit_status cj_export_import_dir(cj_module **out, const void *blob, size_t size,
                                  const char *source, const char *name, const cujit_options *opts,
                                  const char *dir);

#endif
