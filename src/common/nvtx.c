/* nvtx.c - the NVTX calls under CJ_TRACE's ranges (see nvtx.h), in the domain "cujit".
 *
 * NVTX 3 is the CUDA toolkit's header-only library: a program links nothing, and a tool
 * (Nsight Systems, Nsight Compute) is found through NVTX_INJECTION64_PATH, which the tool
 * sets before it starts the program. Nothing of NVTX runs before cj_nvtx_attach(), which
 * trace.c calls only when ranges are wanted and a tool is named. */
#include <string.h>

#include "common/nvtx.h"

#ifdef CJ_NO_NVTX

int cj_nvtx_attach(void) { return 0; }

void cj_nvtx_push(const char *text) { (void)text; }

void cj_nvtx_push_named(const char *text, void **registered) {
  (void)text;
  (void)registered;
}

void cj_nvtx_pop(void) {}

#else

#  define NVTX_AS_SYSTEM_HEADER /* its own code is not held to the project's warnings */
#  include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t domain; /* NULL: no tool; written once, before any range */

int cj_nvtx_attach(void) {
  domain = nvtxDomainCreateA("cujit");
  return domain != NULL;
}

static void push(nvtxEventAttributes_t *a) {
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  nvtxDomainRangePushEx(domain, a);
}

void cj_nvtx_push(const char *text) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  push(&a);
}

void cj_nvtx_push_named(const char *text, void **registered) {
  nvtxEventAttributes_t a;
  nvtxStringHandle_t h = (nvtxStringHandle_t)__atomic_load_n(registered, __ATOMIC_ACQUIRE);
  if (!h) { /* two threads may both register it: the tool gives either handle the name */
    h = nvtxDomainRegisterStringA(domain, text);
    __atomic_store_n(registered, (void *)h, __ATOMIC_RELEASE);
  }
  memset(&a, 0, sizeof a);
  if (h) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
  } else { /* a tool that does not register strings */
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text;
  }
  push(&a);
}

void cj_nvtx_pop(void) { nvtxDomainRangePop(domain); }

#endif
