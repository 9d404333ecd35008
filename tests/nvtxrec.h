/* nvtxrec.h - the tests' own NVTX tool (nvtxrec.c, built as libcujit-nvtxrec.so), and how a
 * test reads what it recorded. A program that names the library in NVTX_INJECTION64_PATH,
 * as a profiler names its own, has NVTX load it at the program's first NVTX call; from then
 * on every range of every domain is recorded in the tool's memory: its name, its domain, the
 * range it is nested in and its thread. The program reaches the records with
 * nvtxrec_open(), which finds the library NVTX loaded (never loading a second copy). */
#ifndef CUJIT_NVTXREC_H
#define CUJIT_NVTXREC_H

#include <dlfcn.h>
#include <stddef.h>

/* One range, as pushed and popped. */
typedef struct nvtxrec_range {
  char name[224];       /* its message: the text given, or the registered string's */
  char domain[32];      /* its domain's name; "" for NVTX's global domain */
  int registered;       /* 1: named by a registered string (nvtxDomainRegisterStringA) */
  int parent;           /* the range open on the same thread and domain when this one was
                           pushed (its index), or -1 */
  int depth;            /* 0 for a range with no parent */
  int closed;           /* 1 once popped */
  unsigned long thread; /* the pushing thread's id (gettid) */
} nvtxrec_range;

typedef struct nvtxrec_api {
  /* Ranges recorded since the start or the last clear, in the order they were pushed. */
  size_t (*count)(void);
  /* Copies range i into *out: 0, or -1 when there is no range i. */
  int (*get)(size_t i, nvtxrec_range *out);
  /* Forgets the ranges recorded so far (a range open now is still popped later, unseen). */
  void (*clear)(void);
  /* Calls that were wrong or are not expected of cujit, since the start: a pop with no range
   * open on the thread and domain, a range over 64 deep, a range or mark outside a domain,
   * a mark, a start/end range. Their text (one line each, the first 4 KiB) goes to buf. */
  unsigned long (*problems)(char *buf, size_t size);
  /* Domains created (nvtxDomainCreateA), and strings registered, since the start. */
  unsigned long (*domains)(void);
  unsigned long (*strings)(void);
} nvtxrec_api;

/* Fills *api from the tool loaded in this process, `path` being NVTX_INJECTION64_PATH. 0, or
 * -1 when the tool is not loaded (nothing emitted a range yet, or NVTX never ran). */
static inline int nvtxrec_open(const char *path, nvtxrec_api *api) {
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!h) return -1;
  *(void **)&api->count = dlsym(h, "nvtxrec_count");
  *(void **)&api->get = dlsym(h, "nvtxrec_get");
  *(void **)&api->clear = dlsym(h, "nvtxrec_clear");
  *(void **)&api->problems = dlsym(h, "nvtxrec_problems");
  *(void **)&api->domains = dlsym(h, "nvtxrec_domains");
  *(void **)&api->strings = dlsym(h, "nvtxrec_strings");
  dlclose(h); /* NVTX's reference keeps it loaded */
  return api->count && api->get && api->clear && api->problems && api->domains && api->strings ? 0
                                                                                               : -1;
}

#endif
