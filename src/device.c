/* device.c - module state on devices (placeholder until the launch layer lands). */
#include "module.h"

void cj_module_device_free(cujit_module *m) { (void)m; }

/* Temporary: the launch layer replaces everything below. */
#define CJ_TODO_ return cj_fail(CUJIT_ERROR_NOT_SUPPORTED, "%s is not implemented yet", __func__)
cujit_status cujit_module_get_function(cujit_module *mod, const char *name, cujit_function **fn) { CJ_TODO_; }
cujit_status cujit_launch(const cujit_function *fn, cujit_dim3 grid, cujit_dim3 block,
                          const cujit_arg *args, size_t nargs, const cujit_launch_options *opts) { CJ_TODO_; }
