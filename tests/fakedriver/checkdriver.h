/* checkdriver.h - the control and query functions of the checking fake CUDA driver
 * (checkdriver.c, built as libcujit-checkdriver.so). A program runs on it by setting
 * CUJIT_LIBCUDA to the library's absolute path, as it would name a real libcuda; it reaches
 * these functions with checkdriver_open(), which finds the library cujit loaded (never
 * loading a second copy). See checkdriver.c's first comment for what it models. */
#ifndef CUJIT_CHECKDRIVER_H
#define CUJIT_CHECKDRIVER_H

#include <dlfcn.h>
#include <stddef.h>

#include <cuda.h>

typedef struct checkdriver_api {
  /* Violations recorded since the start or the last clear. */
  unsigned long (*violations)(void);
  /* Copies their text (one line each, the first 64 KiB of them) into buf, NUL-terminated;
   * returns the length the whole text has. */
  size_t (*report)(char *buf, size_t size);
  /* Forgets the violations recorded so far. */
  void (*clear)(void);
  /* With on nonzero, the next violation prints its text on stderr and aborts. Also set by
   * CHECKDRIVER_ABORT=1 in the environment. */
  void (*set_abort)(int on);
  /* The next kernel launched in the calling thread's current context faults when it runs:
   * from the synchronisation that finds it, every call that does work, in any context,
   * fails with CUDA_ERROR_ILLEGAL_ADDRESS for the rest of the process, a retain, a
   * cuCtxSetCurrent and a cuCtxCreate included; a reset, a release or a cuCtxDestroy
   * answers CUDA_SUCCESS but brings nothing back (checkdriver.c's first comment says which
   * calls still answer). A kernel whose name starts with "checkdriver_fault" does the
   * same. */
  void (*fault_next_launch)(void);
  /* Reads n bytes at device address p as the device holds them now (finished work only),
   * touching no queue: 0; 1 when unfinished work will still write some of them (dst then
   * holds what they are now); -1 when [p, p + n) is not inside live device memory. */
  int (*peek)(CUdeviceptr p, void *dst, size_t n);
  /* Work queued and not yet finished, on every stream of every context. */
  unsigned long (*pending)(void);
  /* Copies the first `size` bytes of the last launch's parameter buffer (each parameter's
   * bytes at its offset, what lies between them 0) into dst; returns the buffer's length. */
  size_t (*last_params)(void *dst, size_t size);
  /* How many times the driver was asked whether a stream is being captured
   * (cuStreamIsCapturing, cuStreamGetCaptureInfo). */
  unsigned long (*capture_queries)(void);
  /* Libraries loaded now (cuLibraryLoadData, not unloaded). */
  unsigned long (*libraries)(void);
  /* How many times entry point `name` ("cuGraphExecUpdate", as cuGetProcAddress names it)
   * was called so far. */
  unsigned long (*calls)(const char *name);
  /* The next n calls of entry point `name`, from any thread, fail with r and do nothing
   * (n 0 or r CUDA_SUCCESS: no failure is asked for). */
  void (*fail_next)(const char *name, CUresult r, unsigned long n);
} checkdriver_api;

/* Fills *api from the fake driver loaded in this process (cujit loads it on its first
 * driver call: call cujit_device_get_count() first). 0, or -1 when it is not loaded. */
static inline int checkdriver_open(const char *path, checkdriver_api *api) {
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!h) return -1;
  *(void **)&api->violations = dlsym(h, "checkdriver_violations");
  *(void **)&api->report = dlsym(h, "checkdriver_report");
  *(void **)&api->clear = dlsym(h, "checkdriver_clear");
  *(void **)&api->set_abort = dlsym(h, "checkdriver_set_abort");
  *(void **)&api->fault_next_launch = dlsym(h, "checkdriver_fault_next_launch");
  *(void **)&api->peek = dlsym(h, "checkdriver_peek");
  *(void **)&api->pending = dlsym(h, "checkdriver_pending");
  *(void **)&api->last_params = dlsym(h, "checkdriver_last_params");
  *(void **)&api->capture_queries = dlsym(h, "checkdriver_capture_queries");
  *(void **)&api->libraries = dlsym(h, "checkdriver_libraries");
  *(void **)&api->calls = dlsym(h, "checkdriver_calls");
  *(void **)&api->fail_next = dlsym(h, "checkdriver_fail_next");
  dlclose(h); /* cujit's reference keeps it loaded */
  return api->violations && api->report && api->clear && api->set_abort && api->fault_next_launch &&
                 api->peek && api->pending && api->last_params && api->capture_queries &&
                 api->libraries && api->calls && api->fail_next
             ? 0
             : -1;
}

#endif
