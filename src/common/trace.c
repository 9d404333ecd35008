/* trace.c - the ranges of common.h's CJ_TRACE, as NVTX ranges in the domain "cujit".
 *
 * NVTX 3 is the CUDA toolkit's header-only library: a program links nothing, and a tool
 * (Nsight Systems, Nsight Compute) is found through NVTX_INJECTION64_PATH, which the tool
 * sets before it starts the program. Nothing of NVTX runs before the process's first
 * range, which decides, once, whether ranges are emitted:
 *   - not when CUJIT_NVTX is off;
 *   - not when NVTX_INJECTION64_PATH is unset: NVTX is then never initialised at all;
 *   - not when NVTX finds no tool it can load there (the domain comes back NULL, which is
 *     how NVTX says that no tool is attached: its calls are then pointer tests).
 * When they are not, cj_trace_live turns 0, and every range site after that costs one load
 * and a branch; its name is never formatted. When they are, fixed names are registered
 * with the tool at their first use (nvtxDomainRegisterStringA) and other names formatted
 * into the thread's stack, which the tool copies. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

#ifdef CJ_NO_NVTX

int cj_trace_live; /* never read: the macros are empty */

int cj_trace_begin(const char *fmt, ...) {
  (void)fmt;
  return 0;
}

int cj_trace_begin_named(cj_trace_name *name) {
  (void)name;
  return 0;
}

void cj_trace_pop(void) {}

#else

#  define NVTX_AS_SYSTEM_HEADER /* its own code is not held to the project's warnings */
#  include <nvtx3/nvToolsExt.h>

int cj_trace_live = 1;

static pthread_once_t decided = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t domain; /* NULL: no ranges; written once, under `decided` */

static void decide(void) {
  int on = 1;
  cj_env_flag("CUJIT_NVTX", &on);
  if (on && cj_env("NVTX_INJECTION64_PATH")) domain = nvtxDomainCreateA("cujit");
  if (domain) {
    cj_debug("NVTX ranges on: a tool is attached (domain \"cujit\")");
    return;
  }
  cj_debug("NVTX ranges off: %s", !on ? "CUJIT_NVTX is off" : "no NVTX tool is attached");
  __atomic_store_n(&cj_trace_live, 0, __ATOMIC_RELAXED);
}

static int push(nvtxEventAttributes_t *a) {
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  nvtxDomainRangePushEx(domain, a);
  return 1;
}

int cj_trace_begin(const char *fmt, ...) {
  nvtxEventAttributes_t a;
  char text[256];
  va_list ap;
  pthread_once(&decided, decide);
  if (!domain) return 0;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  memset(&a, 0, sizeof a);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  return push(&a);
}

int cj_trace_begin_named(cj_trace_name *name) {
  nvtxEventAttributes_t a;
  nvtxStringHandle_t h;
  pthread_once(&decided, decide);
  if (!domain) return 0;
  h = (nvtxStringHandle_t)__atomic_load_n(&name->registered, __ATOMIC_ACQUIRE);
  if (!h) { /* two threads may both register it: the tool gives either handle the name */
    h = nvtxDomainRegisterStringA(domain, name->text);
    __atomic_store_n(&name->registered, (void *)h, __ATOMIC_RELEASE);
  }
  memset(&a, 0, sizeof a);
  if (h) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
  } else { /* a tool that does not register strings */
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name->text;
  }
  return push(&a);
}

void cj_trace_pop(void) { nvtxDomainRangePop(domain); }

#endif
