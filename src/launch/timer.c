/* timer.c - timers of the work on a stream (cujit_timer_start/stop/destroy): two CUDA
 * events recorded on the stream, the second waited for, and the time between them (not on
 * a stream being captured into a graph: the events would be the graph's). A
 * timer is a handle (common/handle.c), so that a destroyed one is refused, and belongs to
 * the context that was current when it was made: events and stream must share it. */
#include <pthread.h>
#include <stdint.h>

#include "launch/capture.h"

typedef struct cj_timer {
  CUevent ev[2]; /* start, stop */
  CUcontext ctx; /* where the events were made */
  CUstream stream;
  int running; /* started and not stopped since */
} cj_timer;

static pthread_mutex_t timers_lock = PTHREAD_MUTEX_INITIALIZER;
static cj_handles timers = CJ_HANDLES_INIT(CJ_HANDLE_TAG(0x54));

static cj_timer *timer_of(const cujit_timer *h) {
  cj_timer *t;
  pthread_mutex_lock(&timers_lock);
  t = cj_handle_get(&timers, (uintptr_t)h);
  pthread_mutex_unlock(&timers_lock);
  return t;
}

static void timer_free(cj_timer *t) {
  if (t->ev[0]) cj_cu.cuEventDestroy(t->ev[0]);
  if (t->ev[1]) cj_cu.cuEventDestroy(t->ev[1]);
  cj_free(t);
}

/* A new timer of context ctx, in the table; *out gets its handle. */
static cujit_status timer_new(CUcontext ctx, cj_timer **made, cujit_timer **out) {
  cj_timer *t = cj_calloc(1, sizeof *t);
  uintptr_t h = 0;
  CUresult r;
  int full = 0;
  if (!t) return cj_fail_oom("making a timer");
  t->ctx = ctx;
  r = cj_cu.cuEventCreate(&t->ev[0], CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = cj_cu.cuEventCreate(&t->ev[1], CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    timer_free(t);
    return cj_cu_fail(r, "cuEventCreate (making a timer)");
  }
  pthread_mutex_lock(&timers_lock);
  if (!(h = cj_handle_add(&timers, t))) full = cj_handles_full(&timers);
  pthread_mutex_unlock(&timers_lock);
  if (!h) {
    timer_free(t);
    if (!full) return cj_fail_oom("making a timer");
    return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                   "cujit_timer_start: 2^24 timers are alive already; destroy some first");
  }
  *made = t;
  *out = (cujit_timer *)h;
  return CUJIT_OK;
}

/* Whether `stream` belongs to ctx, the calling thread's current context. The legacy and
 * per-thread default streams (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are the current
 * context's; without cuStreamGetCtx (an old driver) the driver's own check remains. */
static cujit_status stream_of(CUstream stream, CUcontext ctx) {
  CUcontext owner = NULL;
  CUresult r;
  if ((uintptr_t)stream <= 2 || !cj_cu.cuStreamGetCtx) return CUJIT_OK;
  r = cj_cu.cuStreamGetCtx(stream, &owner);
  if (r != CUDA_SUCCESS) return cj_cu_fail(r, "cuStreamGetCtx (cujit_timer_start's stream)");
  CJ_CHECK(owner == ctx, CUJIT_ERROR_INVALID_VALUE,
           "cujit_timer_start: the stream belongs to another context than the calling thread's "
           "current one; make the stream's device current first (cujit_device_set_current())");
  return CUJIT_OK;
}

cujit_status cujit_timer_start(cujit_timer **timer, CUstream stream) {
  cj_timer *t = NULL;
  CUcontext ctx;
  CUdevice dev;
  CUresult r;
  cujit_status st;
  int made = 0;
  CJ_CHECK(timer, CUJIT_ERROR_INVALID_VALUE, "cujit_timer_start: timer is NULL");
  if (*timer)
    CJ_CHECK(t = timer_of(*timer), CUJIT_ERROR_INVALID_VALUE,
             "cujit_timer_start: *timer is not a live timer (destroyed, or not made by "
             "cujit_timer_start()); set it to NULL to make a new one");
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_TRY(stream_of(stream, ctx));
  CJ_TRY(cj_capture_refuse(stream, "cujit_timer_start() records an event on the stream to "
                                   "time its work"));
  if (t)
    CJ_CHECK(t->ctx == ctx, CUJIT_ERROR_INVALID_VALUE,
             "cujit_timer_start: the timer was made on another context than the calling "
             "thread's current one; make that context current, or start a new timer (*timer "
             "NULL) here");
  else {
    CJ_TRY(timer_new(ctx, &t, timer));
    made = 1;
  }
  t->running = 0;
  if ((r = cj_cu.cuEventRecord(t->ev[0], stream)) != CUDA_SUCCESS) {
    st = cj_cu_fail(r, "cuEventRecord (cujit_timer_start)");
    if (made) {
      cujit_timer_destroy(*timer);
      *timer = NULL;
    }
    return st;
  }
  t->stream = stream;
  t->running = 1;
  return CUJIT_OK;
}

cujit_status cujit_timer_stop(cujit_timer *timer, double *ms) {
  cj_timer *t;
  float elapsed;
  CUcontext ctx;
  CUdevice dev;
  CUresult r;
  CJ_CHECK(ms, CUJIT_ERROR_INVALID_VALUE, "cujit_timer_stop: ms is NULL");
  *ms = 0;
  CJ_CHECK(t = timer_of(timer), CUJIT_ERROR_INVALID_VALUE,
           "cujit_timer_stop: the timer is not a live timer (NULL, destroyed, or not made by "
           "cujit_timer_start())");
  CJ_CHECK(t->running, CUJIT_ERROR_INVALID_VALUE,
           "cujit_timer_stop: the timer is stopped already; start it again with "
           "cujit_timer_start() before stopping it");
  CJ_TRY(cj_ctx_ensure(&ctx, &dev));
  CJ_CHECK(t->ctx == ctx, CUJIT_ERROR_INVALID_VALUE,
           "cujit_timer_stop: the timer was started on another context than the calling "
           "thread's current one; make that context current first");
  CJ_TRY(cj_capture_refuse(t->stream, "cujit_timer_stop() waits for the timer's stream"));
  t->running = 0;
  if ((r = cj_cu.cuEventRecord(t->ev[1], t->stream)) != CUDA_SUCCESS)
    return cj_cu_fail(r, "cuEventRecord (cujit_timer_stop)");
  if ((r = cj_cu.cuEventSynchronize(t->ev[1])) != CUDA_SUCCESS)
    return cj_cu_wait_failed(r, "cuEventSynchronize (cujit_timer_stop)");
  if ((r = cj_cu.cuEventElapsedTime(&elapsed, t->ev[0], t->ev[1])) != CUDA_SUCCESS)
    return cj_cu_fail(r, "cuEventElapsedTime (cujit_timer_stop)");
  *ms = elapsed;
  return CUJIT_OK;
}

void cujit_timer_destroy(cujit_timer *timer) {
  cj_timer *t;
  if (!timer) return;
  pthread_mutex_lock(&timers_lock);
  t = cj_handle_remove(&timers, (uintptr_t)timer);
  pthread_mutex_unlock(&timers_lock);
  if (!t) {
    cj_fail(CUJIT_ERROR_INVALID_VALUE,
            "cujit_timer_destroy: not a live timer (destroyed already, or not made by "
            "cujit_timer_start()); nothing was freed");
    return;
  }
  timer_free(t);
}
