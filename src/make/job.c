/* job.c - compiles that run while the caller goes on (cujit_compile_job_start): the one
 * way this library runs many compiles at once, for many sources (cujit_batch_compile,
 * batch.c) and for one source's many targets (a bundle, aot.c).
 *
 * A job keeps its request as bytes (compile/wire.c): the caller's storage may go as soon
 * as the start returns. The target is resolved on the caller's thread (it may read the
 * current device). Runner threads, at most as many as compiles may run at once
 * (worker/pool.c), take jobs in the order they were started and run each through the
 * caches as cujit_module_from_source() would; a miss goes to the pool, which compiles it
 * here or in a worker process. Runners that find nothing to do for a while end, and the
 * last one closes the idle workers. */
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "make/frontend.h"
#include "worker/worker.h"

#define RUNNER_IDLE_S 10

enum { QUEUED, RUNNING, DONE };

struct cujit_compile_job {
  struct cujit_compile_job *next; /* in the queue */
  cj_buf wire;                    /* the request (cj_request_encode) */
  char arch[32];                  /* the target its key names */
  int (*user_cancel)(void *);
  void *user_cancel_user;
  int stop;  /* 1: cujit_compile_job_cancel; 2: the hook said stop */
  int state; /* under mu */
  int taken; /* the module was handed over */
  cujit_status status;
  int nvrtc_result;
  char *message; /* the failure's detail; NULL when none */
  cj_module *module;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* a job was queued */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* a job finished */
static cujit_compile_job *head, *tail;
static unsigned queued, runners, idle_runners, running;

/* ---- running one job ---- */

/* The request's cancel hook: cujit_compile_job_cancel(), or the caller's own hook (not asked
 * again once it said stop). */
static int job_stop(void *user) {
  cujit_compile_job *j = user;
  if (__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) return 1;
  if (j->user_cancel && j->user_cancel(j->user_cancel_user)) {
    __atomic_store_n(&j->stop, 2, __ATOMIC_RELEASE);
    return 1;
  }
  return 0;
}

static cujit_status compile_job(cujit_compile_job *j) {
  cj_request r;
  cj_image *im = NULL;
  cujit_status st;
  int rc;
  if (__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE) == 1)
    return cj_fail(CUJIT_ERROR_CANCELLED, "the compile was cancelled by cujit_compile_job_cancel() "
                                          "before it started; nothing was compiled");
  rc = cj_request_decode(j->wire.data, j->wire.len, &r);
  if (rc < 0) return cj_fail_oom("starting an asynchronous compile");
  CJ_CHECK(rc == 0, CUJIT_ERROR_INVALID_VALUE,
           "an asynchronous compile's request could not "
           "be read back; this is a bug in cujit: please report it");
  r.cancel = job_stop;
  r.cancel_user = j;
  r.compiler = cj_pool_compile;
  st = cj_cache_compile(&r, &im);
  if (st == CUJIT_OK && (st = cj_module_new_kept(im, &r, j->arch, &j->module)) != CUJIT_OK)
    cj_image_unref(im);
  if (st == CUJIT_ERROR_CANCELLED && __atomic_load_n(&j->stop, __ATOMIC_ACQUIRE) == 1)
    st = cj_fail_nvrtc(st, cujit_last_nvrtc_result(),
                       "compiling '%s' was cancelled by "
                       "cujit_compile_job_cancel(); nothing was cached",
                       r.name);
  cj_request_decoded_free(&r);
  return st;
}

static void run(cujit_compile_job *j) {
  cujit_status st = compile_job(j);
  if (st != CUJIT_OK) {
    j->nvrtc_result = cujit_last_nvrtc_result();
    j->message = cj_strdup(cujit_last_error()); /* NULL when out of memory: a bare status */
  }
  pthread_mutex_lock(&mu);
  j->status = st;
  j->state = DONE;
  pthread_cond_broadcast(&done);
  pthread_mutex_unlock(&mu);
}

/* ---- runners ---- */

/* Whether a queued job may start now (mu held): no more run at once than compiles may,
 * even when the limit was lowered while more runners were alive. */
static int may_start(void) { return head && running < cj_pool_jobs(); }

/* Waits (mu held) up to RUNNER_IDLE_S for a job it may start; NULL when none came. */
static cujit_compile_job *next_job(void) {
  struct timespec until;
  cujit_compile_job *j;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += RUNNER_IDLE_S;
  while (!may_start()) {
    int rc;
    idle_runners++;
    rc = pthread_cond_timedwait(&work, &mu, &until);
    idle_runners--;
    if (rc != 0 && !may_start()) return NULL;
  }
  j = head;
  head = j->next;
  if (!head) tail = NULL;
  queued--;
  j->next = NULL;
  j->state = RUNNING;
  running++;
  return j;
}

static void *runner(void *arg) {
  cujit_compile_job *j;
  unsigned left;
  (void)arg;
  pthread_mutex_lock(&mu);
  while ((j = next_job()) != NULL) {
    pthread_mutex_unlock(&mu);
    run(j);
    pthread_mutex_lock(&mu);
    running--;
    if (head) pthread_cond_signal(&work); /* a runner held back by the limit may go */
  }
  left = --runners;
  pthread_mutex_unlock(&mu);
  if (!left) cj_pool_trim(); /* nothing to do for a while: let the workers go */
  return NULL;
}

static void forget_in_child(void) {
  /* A forked child has none of the runners; the parent's jobs are not its own. */
  head = tail = NULL;
  queued = runners = idle_runners = running = 0;
  pthread_mutex_init(&mu, NULL);
  pthread_cond_init(&work, NULL);
  pthread_cond_init(&done, NULL);
}

__attribute__((constructor)) static void at_fork(void) {
  cj_fork_hooks(NULL, NULL, forget_in_child);
}

/* Queues a job, starting a runner when more jobs wait than runners are idle (a runner
 * woken for an earlier job may not have taken it yet) and fewer run than compiles may.
 * With no runner at all (a thread could not be made), runs it on this thread. */
static void submit(cujit_compile_job *j) {
  pthread_t t;
  pthread_attr_t at;
  int started = 1;
  pthread_mutex_lock(&mu);
  if (tail)
    tail->next = j;
  else
    head = j;
  tail = j;
  queued++;
  if (idle_runners) pthread_cond_signal(&work);
  if (queued > idle_runners && runners < cj_pool_jobs()) {
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &at, runner, NULL) == 0;
    pthread_attr_destroy(&at);
    if (started) runners++;
  }
  if (!started && runners == 0) {
    head = j->next; /* j is the only one queued: no runner takes any */
    if (!head) tail = NULL;
    queued--;
    j->state = RUNNING;
    pthread_mutex_unlock(&mu);
    cj_debug("no thread for an asynchronous compile; compiling it now");
    run(j);
    return;
  }
  pthread_mutex_unlock(&mu);
}

/* ---- the interface ---- */

cujit_status cj_job_start_dir(cujit_compile_job **job, const char *source, const char *name,
                              const cujit_options *opts, const char *dir) {
  cujit_compile_job *j;
  cj_request r;
  CJ_CHECK(job, CUJIT_ERROR_INVALID_VALUE, "cujit_compile_job_start: job is NULL");
  *job = NULL;
  CJ_TRY(cj_request_init(&r, source, name, opts, dir));
  if (!(j = cj_calloc(1, sizeof *j))) return cj_fail_oom("starting an asynchronous compile");
  memcpy(j->arch, r.arch, sizeof j->arch);
  j->user_cancel = r.cancel;
  j->user_cancel_user = r.cancel_user;
  if (cj_request_encode(&r, &j->wire) != 0) {
    cj_buf_free(&j->wire);
    cj_free(j);
    return cj_fail_oom("starting an asynchronous compile");
  }
  cj_request_free(&r);
  *job = j;
  submit(j);
  return CUJIT_OK;
}

cujit_status cujit_compile_job_start(cujit_compile_job **job, const char *source, const char *name,
                                     const cujit_options *opts) {
  return cj_job_start_dir(job, source, name, opts, NULL);
}

int cujit_compile_job_poll(const cujit_compile_job *job) {
  int finished;
  if (!job) return 1;
  pthread_mutex_lock(&mu);
  finished = job->state == DONE;
  pthread_mutex_unlock(&mu);
  return finished;
}

static void wait_done(const cujit_compile_job *j) {
  pthread_mutex_lock(&mu);
  while (j->state != DONE) pthread_cond_wait(&done, &mu);
  pthread_mutex_unlock(&mu);
}

cujit_status cujit_compile_job_wait(cujit_compile_job *job, cujit_module **out) {
  CJ_CHECK(job && out, CUJIT_ERROR_INVALID_VALUE, "cujit_compile_job_wait: %s is NULL",
           job ? "out" : "job");
  *out = NULL;
  wait_done(job);
  if (job->status != CUJIT_OK)
    return job->message ? cj_fail_nvrtc(job->status, job->nvrtc_result, "%s", job->message)
                        : cj_fail(job->status, "%s", cujit_status_string(job->status));
  CJ_CHECK(!job->taken, CUJIT_ERROR_INVALID_VALUE,
           "cujit_compile_job_wait: the module of this job "
           "was handed over by an earlier wait (it is the caller's since); wait once per job");
  *out = cj_module_handle(job->module);
  job->module = NULL;
  job->taken = 1;
  return CUJIT_OK;
}

void cujit_compile_job_cancel(cujit_compile_job *job) {
  if (job) __atomic_store_n(&job->stop, 1, __ATOMIC_RELEASE);
}

const char *cujit_compile_job_error(const cujit_compile_job *job) {
  const char *msg = "";
  if (!job) return msg;
  pthread_mutex_lock(&mu);
  if (job->state == DONE && job->status != CUJIT_OK)
    msg = job->message ? job->message : cujit_status_string(job->status);
  pthread_mutex_unlock(&mu);
  return msg;
}

void cujit_compile_job_destroy(cujit_compile_job *job) {
  if (!job) return;
  cujit_compile_job_cancel(job);
  wait_done(job);
  cj_module_free(job->module);
  cj_free(job->message);
  cj_buf_free(&job->wire);
  cj_free(job);
}

void cujit_compile_set_jobs(unsigned n) { cj_pool_set_jobs(n); }
