/* graphio.c - a launch with In/Out buffers made into a capture, in two halves around the
 * kernel's launch (which the caller makes, launch.c): each buffer's device memory is made
 * outside the graph and kept by it, and the copies in and out become the graph's own, so
 * that every launch of the graph copies the host buffers as they are then. The driver
 * copies only page-locked host memory in a graph; pageable buffers are refused, as is a
 * timed launch (its time is read by waiting). Nothing waits here. */
#include <string.h>

#include "launch/capture.h"

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

cujit_status cj_capture_io_in(cj_capture_io *io, const cujit_function *fn, const cj_fslot *slot,
                              const cujit_arg *args, size_t nargs, const cujit_launch_options *o) {
  cujit_status st = CUJIT_OK;
  size_t i;
  io->d = io->stack_d;
  io->params = io->stack_p;
  io->heap = NULL;
  io->owner.ctx = NULL;
  io->owner.id = 0;
  io->started = 0;
  io->n = 0;
  CJ_CHECK(!o->elapsed_ms, CUJIT_ERROR_CAPTURE,
           "kernel '%s': a timed launch (elapsed_ms) cannot be captured into a graph: its time "
           "is read by waiting for the stream, which a capture cannot do; time the graph's "
           "launches with cujit_timer_start() and cujit_timer_stop() instead; nothing was "
           "captured, and the capture goes on",
           fn->name);
  CJ_TRY(buffers_check(fn, args, nargs));
  if (nargs > CJ_CAPTURE_IO_STACK) {
    if (!(io->heap = cj_calloc(nargs, sizeof *io->d + sizeof *io->params)))
      return cj_fail_oom("capturing a launch");
    io->d = io->heap;
    io->params = (void **)(io->d + nargs);
  }
  memset(io->d, 0, nargs * sizeof *io->d);
  io->n = nargs;
  for (i = 0; i < nargs && st == CUJIT_OK; i++) {
    io->params[i] = args[i].kind == CUJIT_ARG_VALUE ? value_of(&args[i]) : (void *)&io->d[i];
    if (args[i].kind != CUJIT_ARG_VALUE && args[i].bytes)
      st = cj_mem_pool_alloc(slot->dev, args[i].bytes, o->stream, &io->d[i], &io->owner);
  }
  if (st != CUJIT_OK) return st;
  io->started = 1;
  return copies(fn, args, nargs, io->d, CUJIT_ARG_IN, o->stream);
}

cujit_status cj_capture_io_out(cj_capture_io *io, const cujit_function *fn, const cj_fslot *slot,
                               const cujit_arg *args, const cujit_launch_options *o,
                               cujit_status st) {
  size_t i;
  if (st == CUJIT_OK) st = copies(fn, args, io->n, io->d, CUJIT_ARG_OUT, o->stream);
  /* given back on the captured stream: the capture keeps the memory for its graph */
  for (i = 0; i < io->n; i++)
    if (io->d[i]) cj_mem_pool_free(slot->dev, io->d[i], args[i].bytes, o->stream, &io->owner);
  if (st != CUJIT_OK && io->started) cj_capture_fail(o->stream);
  cj_free(io->heap);
  return st;
}
