/* graphio.c - a launch with In/Out buffers made into a capture: each buffer's device
 * memory is made outside the graph and kept by it, and the copies in and out become the
 * graph's own, so that every launch of the graph copies the host buffers as they are
 * then. The driver copies only page-locked host memory in a graph; pageable buffers are
 * refused, as is a timed launch (its time is read by waiting). Nothing waits here. */
#include <string.h>

#include "launch/capture.h"

enum { STACK_ARGS = 32 };

static void *value_of(const cujit_arg *a) {
  return (void *)(a->data ? a->data : (const void *)a->value.bytes);
}

/* Every buffer is page-locked host memory, checked before anything is captured. */
static cujit_status buffers_check(const cujit_function *fn, const cujit_arg *args, size_t nargs) {
  size_t i;
  for (i = 0; i < nargs; i++) {
    const cujit_arg *a = &args[i];
    cj_host_kind k;
    if (a->kind == CUJIT_ARG_VALUE || !a->bytes) continue;
    k = cj_host_kind_of(a->host, a->bytes);
    CJ_CHECK(k != CJ_HOST_DEVICE, CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' is an %s in device memory; In/Out buffers are host "
             "memory, pass device memory with cujit_ptr()",
             i + 1, fn->name, cj_launch_kind_name(a->kind));
    CJ_CHECK(k == CJ_HOST_PINNED, CUJIT_ERROR_CAPTURE,
             "argument %zu of kernel '%s' is an %s in pageable host memory, which a graph "
             "cannot copy when it is launched (the driver copies only page-locked memory "
             "there): make it with cujit_host_alloc() or register it (cuMemHostRegister), or "
             "copy it to device memory before the capture and pass a device pointer; nothing "
             "was captured, and the capture goes on",
             i + 1, fn->name, cj_launch_kind_name(a->kind));
  }
  return CUJIT_OK;
}

/* The copies of one direction, on the captured stream. */
static cujit_status copies(const cujit_function *fn, const cujit_arg *args, size_t nargs,
                           const CUdeviceptr *d, int direction, CUstream stream) {
  size_t i;
  for (i = 0; i < nargs; i++) {
    CUresult r;
    if (!(args[i].kind & direction) || !args[i].bytes) continue;
    r = direction == CUJIT_ARG_IN
            ? cj_cu.cuMemcpyHtoDAsync(d[i], args[i].host, args[i].bytes, stream)
            : cj_cu.cuMemcpyDtoHAsync(args[i].host, d[i], args[i].bytes, stream);
    if (r != CUDA_SUCCESS)
      return cj_launch_failed(fn, r,
                              direction == CUJIT_ARG_IN ? "cuMemcpyHtoDAsync (an In buffer)"
                                                        : "cuMemcpyDtoHAsync (an Out buffer)");
  }
  return CUJIT_OK;
}

cujit_status cj_launch_captured(const cujit_function *fn, const cj_fslot *slot, cujit_dim3 grid,
                                cujit_dim3 block, const cujit_arg *args, size_t nargs,
                                const cujit_launch_options *o) {
  CUdeviceptr stack_d[STACK_ARGS], *d = stack_d;
  void *stack_p[STACK_ARGS], **params = stack_p, *heap = NULL;
  cj_mem_ctx owner = {NULL, 0};
  cujit_status st = CUJIT_OK;
  int started = 0;
  size_t i;
  CJ_CHECK(!o->elapsed_ms, CUJIT_ERROR_CAPTURE,
           "kernel '%s': a timed launch (elapsed_ms) cannot be captured into a graph: its time "
           "is read by waiting for the stream, which a capture cannot do; time the graph's "
           "launches with cujit_timer_start() and cujit_timer_stop() instead; nothing was "
           "captured, and the capture goes on",
           fn->name);
  CJ_TRY(buffers_check(fn, args, nargs));
  if (nargs > STACK_ARGS) {
    if (!(heap = cj_calloc(nargs, sizeof *d + sizeof *params)))
      return cj_fail_oom("capturing a launch");
    d = heap;
    params = (void **)(d + nargs);
  }
  memset(d, 0, nargs * sizeof *d);
  for (i = 0; i < nargs && st == CUJIT_OK; i++) {
    params[i] = args[i].kind == CUJIT_ARG_VALUE ? value_of(&args[i]) : (void *)&d[i];
    if (args[i].kind != CUJIT_ARG_VALUE && args[i].bytes)
      st = cj_mem_pool_alloc(slot->dev, args[i].bytes, o->stream, &d[i], &owner);
  }
  if (st == CUJIT_OK) {
    started = 1;
    st = copies(fn, args, nargs, d, CUJIT_ARG_IN, o->stream);
  }
  if (st == CUJIT_OK)
    st = CJ_OPTS_EX(o) ? cj_launch_ex(fn, slot, grid, block, params, o)
                       : cj_launch_kernel(fn, slot, grid, block, params, o);
  if (st == CUJIT_OK) st = copies(fn, args, nargs, d, CUJIT_ARG_OUT, o->stream);
  /* given back on the captured stream: the capture keeps the memory for its graph */
  for (i = 0; i < nargs; i++)
    if (d[i]) cj_mem_pool_free(slot->dev, d[i], args[i].bytes, o->stream, &owner);
  if (st != CUJIT_OK && started) cj_capture_fail(o->stream);
  cj_free(heap);
  return st;
}
