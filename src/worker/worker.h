/* worker.h - the compile worker pool: worker processes (the cujit-worker program) that
 * compile misses side by side, the caller's side (pool.c) and the worker's (serve.c). A
 * worker compiles a request with NVRTC and answers with the image as a cache entry; the
 * caller checks it and stores it as it stores its own compiles. Private. */
#ifndef CUJIT_WORKER_H
#define CUJIT_WORKER_H

#include "format/entry.h"

/* ---- pool.c: worker processes for compiles that run at once ---- */

/* What an asynchronous compile sets as cj_request.compiler. Compiles here when no other
 * compile of the pool is running in this process; otherwise on an idle worker process, or
 * a new one while fewer than cj_pool_jobs() - 1 run; otherwise waits for one of these
 * (asking r->cancel meanwhile). A worker that dies, stops (SIGSTOP), cannot be started or
 * answers something that is not a reply fails nothing: the compile is retried here
 * (logged at info level). One that has not answered half a second after r->time_limit_s
 * passed or r->cancel said stop (it stops at NVRTC's next check, as a compile here does)
 * is killed, and the compile is CUJIT_ERROR_CANCELLED as a compile here stopped then
 * would be. The result is the image this process would have compiled. */
cujit_status cj_pool_compile(cj_request *r, cj_image **out);
/* How many compiles the pool runs at once: cujit_compile_set_jobs(), else
 * CUJIT_COMPILE_JOBS, else the CPUs this process may run on. */
unsigned cj_pool_jobs(void);
void cj_pool_set_jobs(unsigned n); /* 0: back to the default */
/* Closes idle workers (they exit when their socket closes). */
void cj_pool_trim(void);
/* For tests: the workers' process ids (busy ones have busy[i] set), at most max; returns
 * how many run. */
int cj_pool_workers(int *pids, int *busy, int max);
/* For tests: compiles workers have answered, and forgetting the worker program found
 * (closing every idle worker), so that CUJIT_WORKER is read again. */
uint64_t cj_pool_answered(void);
void cj_pool_reset(void);

/* ---- serve.c: the worker's side (the cujit-worker program) ---- */

/* The protocol, over one stream socket (the worker's standard input). It begins with the
 * greeting, which says which library each side belongs to: "cjwh", the greeting's
 * protocol number and the length of the version that follows, then the version (the
 * build's "MAJOR.MINOR.PATCH", at most CJ_WORKER_MAX_VERSION bytes). The library greets
 * first; the worker answers with its own greeting, and goes on only when the two agree
 * (else it exits). The library uses only a worker whose greeting is its own: a library
 * and a worker of two versions never exchange a request. These first 20 bytes stay as
 * they are in every version, so that any two versions tell each other apart; a worker
 * made before the greeting (cujit 0.2 and earlier) reads them as a request that is not
 * one, and exits. After it, a request is
 * "cjwq", a 64-bit number the reply repeats, the payload's length and the payload (the
 * caller's working directory, as a length and bytes, then cj_request_encode()'s bytes).
 * The reply is "cjwr", the number, its kind (CJ_REPLY_*), a cujit_status, an nvrtcResult,
 * the message's length and bytes (the compile's error detail) and the length and bytes of
 * the image as a cache entry (cj_disk_encode(), under a key made of the number) when the
 * status is CUJIT_OK. Numbers are little-endian. The byte CJ_WORKER_CANCEL between
 * requests, or during one, asks to stop the compile in progress. */
#define CJ_WORKER_HELLO "cjwh"
#define CJ_WORKER_PROTOCOL 1
#define CJ_WORKER_MAX_VERSION 64
#define CJ_WORKER_REQUEST "cjwq"
#define CJ_WORKER_REPLY "cjwr"
#define CJ_WORKER_CANCEL 0x18
#define CJ_WORKER_MAX_MESSAGE ((uint64_t)64 << 20)
enum { CJ_REPLY_RESULT = 0, CJ_REPLY_REFUSED = 1 /* could not compile it: do it yourself */ };
/* The version a library and its worker greet each other with: the build's (the project's
 * version, which cujit.h's numbers repeat). Static. */
const char *cj_worker_version(void);
/* Appends this build's greeting to b (b->oom when out of memory). */
void cj_worker_greeting(cj_buf *b);
/* The key a worker's entry is encoded under. */
void cj_worker_key(uint64_t id, cj_key *key);
/* Sends all n bytes on a worker socket (either end), never raising SIGPIPE; 0, or -1 when
 * the peer is gone. */
int cj_worker_send(int fd, const void *p, size_t n);
/* Answers requests on fd until it closes; returns the exit status for the worker. */
int cj_worker_serve(int fd);

#endif
