/* capture.h - CUDA graphs' captures: the captures cujit runs and what each one's work needs
 * kept alive (capture.c), and the In/Out buffers of launches captured into them (graphio.c);
 * what the graphs made of them (graph/graph.c) and the layers above (the arrays' memory,
 * the operations' refusals) ask of them. The hot paths' test and hook are launch.h's. */
#ifndef CUJIT_CAPTURE_H
#define CUJIT_CAPTURE_H

#include <pthread.h>

#include "launch/launch.h"

/* Something a graph's work needs alive (a module, an array's memory, another graph it
 * launches), held once and let go with `release` when the graph is done with it. */
typedef struct cj_ghold {
  void *obj;
  void (*release)(void *obj);
} cj_ghold;

/* Device memory given back while a capture ran (an In/Out buffer's, a temporary array's):
 * its work may still use it at every replay, so the graph keeps it until it is released. A
 * later request of the same size on the same stream in the same capture takes it again
 * (`taken`): the stream's order, which the graph keeps, separates the two uses. */
typedef struct cj_gmem {
  CUdevice dev;
  CUdeviceptr ptr;
  size_t bytes;
  cj_mem_ctx owner;
  CUstream stream; /* the stream it was given back on */
  int taken;       /* in use again, by a later part of the same capture */
} cj_gmem;

/* A kernel launch made during the capture, in order: what cujit_graph_set_args() needs to
 * give its node other arguments. */
typedef struct cj_glaunch {
  const cujit_function *fn;
  CUgraphNode node;  /* its node in the graph the executable graph was made from; NULL when
                        the driver did not say (set_args then refuses it) */
  CUfunction handle; /* what it was launched through */
  int by_kernel;     /* handle is the context-independent CUkernel */
  cujit_dim3 grid, block;
  unsigned shared_bytes;
} cj_glaunch;

/* What one capture gathered, which its graph keeps. Changed under the captures' lock. */
typedef struct cj_gres {
  cj_ghold *holds;
  size_t n_holds, cap_holds;
  void **seen; /* the held objects, a set (open addressing, at most half full) */
  size_t cap_seen;
  cj_gmem *mem;
  size_t n_mem, cap_mem;
  cj_glaunch *launches;
  size_t n_launches, cap_launches;
  CUstream side; /* a stream of its own, not captured: memory made for the capture is
                    allocated on it (and given back on it when the graph is released) */
  CUevent begun; /* recorded on the captured stream just before the capture began: work
                    queued there before it may still use memory the capture kept */
  CUcontext ctx; /* the context the capture ran in */
  int failed;    /* something could not be recorded (out of memory), or a call failed after
                    part of its work was captured: its end fails */
} cj_gres;

/* ---- the captures (capture.c) ---- */

/* A capture begun by cujit_graph_begin() on `stream` (its origin). */
typedef struct cj_capture {
  CUstream stream;
  CUstream joined[8]; /* other streams found in the same capture (forked from it) */
  int n_joined;
  cuuint64_t id; /* the driver's ID of the capture sequence; 0 when it did not say */
  pthread_t thread;
  int mode; /* CUstreamCaptureMode */
  cj_gres res;
} cj_capture;

/* Puts c (filled by the caller) in the table of captures. CUJIT_ERROR_OUT_OF_MEMORY. */
cujit_status cj_capture_add(cj_capture *c);
/* The capture whose origin is `stream`, taken out of the table; NULL when there is none. */
cj_capture *cj_capture_remove(CUstream stream);
/* Whether `stream` is the origin of a capture in the table (*thread, *mode: its thread and
 * mode, when non-NULL). */
int cj_capture_origin(CUstream stream, pthread_t *thread, int *mode);
/* The resources of the capture `stream` belongs to (its origin, or a stream forked from it,
 * which the driver is asked about the first time), or NULL when none of the table's; NULL
 * at once, without a lock, when the table is empty. */
cj_gres *cj_capture_res(CUstream stream);
/* Whether a capture of the table runs in context ctx. */
int cj_capture_in_ctx(CUcontext ctx);
/* CUJIT_ERROR_CAPTURE when `stream` belongs to a capture of the table: `what` (a phrase:
 * "cujit_stream_synchronize() waits for the stream") cannot be done until it ends. */
cujit_status cj_capture_refuse(CUstream stream, const char *what);

/* Holds obj for r's graph (under the captures' lock): 1 when it was not held yet (the
 * caller takes its reference now, and `release` gives it back when the graph is done), 0
 * when it is held already, -1 when out of memory (r is marked failed). */
int cj_gres_hold(cj_gres *r, void *obj, void (*release)(void *obj));
/* The layer above's part of a captured launch (the array layer's: the arrays whose memory
 * the launch's arguments point into), called with each argument's bytes and size. */
typedef void (*cj_gres_scan_fn)(cj_gres *r, void *const *params, const size_t *sizes, size_t n);
void cj_capture_set_scan(cj_gres_scan_fn fn);
/* Calls the layer above's scan, if one is set. */
void cj_gres_scan(cj_gres *r, void *const *params, const size_t *sizes, size_t n);
/* Marks the capture of `stream` failed: a call made into it failed after part of its work
 * was captured, so its graph would be incomplete and its end fails. */
void cj_capture_fail(CUstream stream);
/* Frees r's own lists (what they hold must have been released). */
void cj_gres_free(cj_gres *r);

/* Memory given back on `stream` while it is captured: kept by its capture (1), or 0 when
 * the stream is not one of the table's. */
int cj_capture_keep(CUstream stream, CUdevice dev, CUdeviceptr ptr, size_t bytes,
                    const cj_mem_ctx *owner);
/* Memory asked for on `stream` while it is captured: 1 with *ptr and *owner, memory the
 * capture kept of that size, on that stream and device, taken again; 0 with *side, the
 * capture's own stream to allocate on, when it kept none; -1 when `stream` is not one of
 * the table's. */
int cj_capture_take(CUstream stream, CUdevice dev, size_t bytes, CUdeviceptr *ptr,
                    cj_mem_ctx *owner, CUstream *side);

/* ---- In/Out buffers in a capture (graphio.c) ---- */

/* A launch with In/Out buffers (its arguments checked) made into the capture of its stream,
 * in two halves around the kernel's launch: device memory held by the graph, page-locked
 * host buffers copied by the graph at each replay, pageable ones and timings refused
 * (CUJIT_ERROR_CAPTURE, nothing captured). What the halves share: */
#define CJ_CAPTURE_IO_STACK 32 /* arguments kept on the caller's stack */
typedef struct cj_capture_io {
  void **params;    /* the kernel's parameter array, once the first half succeeded */
  CUdeviceptr *d;   /* each buffer's device memory (0: none) */
  size_t n;         /* entries of d */
  cj_mem_ctx owner; /* the context that memory is made in */
  int started;      /* part of the work is captured: a later failure fails the capture */
  void *heap;       /* d and params, for more than CJ_CAPTURE_IO_STACK arguments */
  CUdeviceptr stack_d[CJ_CAPTURE_IO_STACK];
  void *stack_p[CJ_CAPTURE_IO_STACK];
} cj_capture_io;

/* The first half: the checks, the buffers' device memory, the copies in (on o->stream,
 * captured). Whatever it returns, cj_capture_io_out() follows, with its status when it
 * failed and with the launch's status (io->params launched) when it did not. */
cujit_status cj_capture_io_in(cj_capture_io *io, const cujit_function *fn, const cj_fslot *slot,
                              const cujit_arg *args, size_t nargs, const cujit_launch_options *o);
/* The second half: the copies out when st is CUJIT_OK, the memory given back to the
 * capture, the capture failed when part of the work was captured and st is a failure.
 * Returns the launch's status. */
cujit_status cj_capture_io_out(cj_capture_io *io, const cujit_function *fn, const cj_fslot *slot,
                               const cujit_arg *args, const cujit_launch_options *o,
                               cujit_status st);

#endif
