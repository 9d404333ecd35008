/* nvrtc.c - the bare NVRTC baseline: what a program does without cujit. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/* The program's log (malloc'ed, maybe empty); cujit reads it on every compile too. */
static char *program_log(nvrtcProgram p) {
  size_t size = 0;
  char *log;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS) size = 0;
  log = malloc(size + 1);
  if (!log) return NULL;
  log[0] = '\0';
  if (size && nvrtcGetProgramLog(p, log) != NVRTC_SUCCESS) log[0] = '\0';
  log[size] = '\0';
  return log;
}

static void *take_cubin(nvrtcProgram p, size_t *size) {
  size_t ptx_size = 0;
  char *cubin = NULL, *ptx = NULL;
  if (nvrtcGetPTXSize(p, &ptx_size) == NVRTC_SUCCESS && (ptx = malloc(ptx_size)))
    nvrtcGetPTX(p, ptx);
  if (nvrtcGetCUBINSize(p, size) == NVRTC_SUCCESS && *size && (cubin = malloc(*size)))
    nvrtcGetCUBIN(p, cubin);
  free(ptx);
  return cubin;
}

void *bench_nvrtc_cubin(const char *source, const char *name, const char *const *argv,
                        int argc, const char *name_expr, size_t *size) {
  nvrtcProgram p;
  nvrtcResult r;
  const char *lowered = NULL;
  char *log, *cubin = NULL;
  *size = 0;
  if (nvrtcCreateProgram(&p, source, name, 0, NULL, NULL) != NVRTC_SUCCESS) return NULL;
  if (name_expr) nvrtcAddNameExpression(p, name_expr);
  r = nvrtcCompileProgram(p, argc, argv);
  log = program_log(p);
  if (r != NVRTC_SUCCESS)
    fprintf(stderr, "cujit-bench: bare NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log ? log : "");
  else if (name_expr && nvrtcGetLoweredName(p, name_expr, &lowered) != NVRTC_SUCCESS)
    fprintf(stderr, "cujit-bench: bare NVRTC: no lowered name for %s\n", name_expr);
  else
    cubin = take_cubin(p, size);
  free(log);
  nvrtcDestroyProgram(&p);
  return cubin;
}
