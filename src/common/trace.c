/* trace.c - the ranges of common.h's CJ_TRACE: whether they are emitted, and their names.
 *
 * The process's first range decides, once, whether ranges are emitted:
 *   - not when CUJIT_NVTX is off;
 *   - not when NVTX_INJECTION64_PATH is unset: NVTX is then never started at all;
 *   - not when NVTX finds no tool it can load there (nvtx.c: the domain comes back NULL,
 *     which is how NVTX says that no tool is attached).
 * When they are not, cj_trace_live turns 0, and every range site after that costs one load
 * and a branch; its name is never formatted. When they are, fixed names are registered
 * with the tool at their first use and other names formatted into the thread's stack,
 * which the tool copies; NVTX itself is nvtx.c's. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/common.h"

int cj_trace_live = 1;

static pthread_once_t decided = PTHREAD_ONCE_INIT;
static int on; /* ranges are emitted; written once, under `decided` */

static void decide(void) {
  int wanted = 1;
  cj_env_flag("CUJIT_NVTX", &wanted);
  if (wanted && cj_env("NVTX_INJECTION64_PATH")) on = cj_nvtx_attach();
  if (on) {
    cj_debug("NVTX ranges on: a tool is attached (domain \"cujit\")");
    return;
  }
  cj_debug("NVTX ranges off: %s", !wanted ? "CUJIT_NVTX is off" : "no NVTX tool is attached");
  __atomic_store_n(&cj_trace_live, 0, __ATOMIC_RELAXED);
}

int cj_trace_begin(const char *fmt, ...) {
  char text[256];
  va_list ap;
  pthread_once(&decided, decide);
  if (!on) return 0;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  cj_nvtx_push(text);
  return 1;
}

int cj_trace_begin_named(cj_trace_name *name) {
  pthread_once(&decided, decide);
  if (!on) return 0;
  cj_nvtx_push_named(name->text, &name->registered);
  return 1;
}
