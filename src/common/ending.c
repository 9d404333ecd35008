/* ending.c - the end of the process when the error mode ends it (cujit_error_exit), whatever
 * its other threads are doing, and what cujit does for itself at any end.
 *
 * exit() runs every atexit function and static destructor of the process (NVRTC's,
 * nvJitLink's, the driver's, the C++ runtime's, the program's) while other threads go on
 * running: a thread inside NVRTC then compiles with what its destructors freed, and the
 * process dies of SIGSEGV or a heap-corruption abort instead of ending with status 1. So
 * the error mode never calls exit(). It ends with the status its caller chose (1, or 77
 * where no GPU could be used: error.c), in order:
 *  1. the first thread to fail claims the end; another thread of the process that fails
 *     meanwhile waits for it to come, printing nothing (a forked child, whose pid is its
 *     own, claims its own end);
 *  2. a watchdog thread starts: if steps 3 to 5 have not finished within CJ_END_GRACE_S,
 *     it ends the process with that status by the exit_group system call (they may wait on a
 *     lock another thread holds: a stdio stream it is writing to a pipe nobody reads);
 *  3. the message is written to descriptor 2 without stdio, escaped as it goes
 *     (cj_end_say), so no stream lock is taken for it;
 *  4. cujit's own duties at the end run (cj_at_end: the directory of precompiled headers
 *     is removed, the keys' locks held in the remote tier are given back, the disk cache's
 *     pending hit counts are written);
 *  5. every stdio stream is flushed, as exit() would: stdout and stderr first, without
 *     their locks where another thread has held one for a second (as exit() does for
 *     every stream), then the others (fflush(NULL));
 *  6. quick_exit(status): the functions the program registered with at_quick_exit() run,
 *     then _exit(status). atexit() functions and static destructors do not run.
 * What cujit leaves then is left as by a killed process, and each piece is built for that:
 * compile workers see their socket close and stop at NVRTC's next check (worker/serve.c);
 * the kernel drops the disk cache's key locks with the process, and the next process
 * takes a lock file left behind at once (store/lock.c: also when a child the process
 * forked keeps the lock's descriptor); a temporary entry file left half written is
 * removed by the next prune. */
#define _GNU_SOURCE /* fflush_unlocked */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/common.h"

#define CJ_END_GRACE_S 5.0 /* the most steps 3 to 5 may take */
#define MAX_DUTIES 8

static void (*duties[MAX_DUTIES])(void);
static unsigned n_duties;

int cj_at_end(void (*fn)(void)) {
  unsigned slot = __atomic_fetch_add(&n_duties, 1, __ATOMIC_RELAXED);
  if (slot >= MAX_DUTIES) return -1; /* a layer added a duty without making room for it */
  __atomic_store_n(&duties[slot], fn, __ATOMIC_RELEASE);
  return atexit(fn);
}

static pid_t ender;            /* the process whose error mode ends it; 0 before */
static int end_code = 1;       /* the exit status it ends with (set by the claiming thread) */
static int handed_over;        /* steps 3 to 5 are done: the watchdog leaves the end alone */
static _Thread_local int mine; /* this thread claimed the end */

/* Ends the process now, as the system call itself: an _exit() that a sanitizer or another
 * library wraps may first flush stdio, and wait on the very lock that held up the end. */
static _Noreturn void end_now(void) {
  int code = __atomic_load_n(&end_code, __ATOMIC_ACQUIRE);
  syscall(SYS_exit_group, code);
  _exit(code); /* not reached */
}

static void *watchdog(void *arg) {
  (void)arg;
  cj_nap(CJ_END_GRACE_S);
  if (!__atomic_load_n(&handed_over, __ATOMIC_ACQUIRE)) end_now();
  return NULL;
}

/* Starts the watchdog with every signal blocked, so that no handler of the program runs on
 * it. Without one (no memory for a thread), the end goes on unguarded. */
static void start_watchdog(void) {
  sigset_t all, old;
  pthread_attr_t at;
  pthread_t t;
  sigfillset(&all);
  if (pthread_attr_init(&at) != 0) return;
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_create(&t, &at, watchdog, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&at);
}

void cj_end_begin(int code) {
  pid_t me = getpid(), seen = __atomic_load_n(&ender, __ATOMIC_ACQUIRE);
  if (mine) end_now(); /* failed again on the way out (an at_quick_exit function) */
  while (seen != me)
    if (__atomic_compare_exchange_n(&ender, &seen, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      mine = 1;
      __atomic_store_n(&end_code, code, __ATOMIC_RELEASE);
      start_watchdog();
      return;
    }
  for (;;) pause(); /* another thread ends the process */
}

/* ---- the message, straight to descriptor 2 ---- */

typedef struct say_buf {
  char b[1024];
  size_t n;
} say_buf;

static void say_flush(say_buf *s) {
  size_t at = 0;
  while (at < s->n) {
    ssize_t k = write(2, s->b + at, s->n - at);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break; /* stderr closed or broken: the end goes on without the message */
    at += (size_t)k;
  }
  s->n = 0;
}

static void say_put(void *user, const char *p, size_t n) {
  say_buf *s = user;
  while (n) {
    size_t k = sizeof s->b - s->n < n ? sizeof s->b - s->n : n;
    memcpy(s->b + s->n, p, k);
    s->n += k;
    p += k;
    n -= k;
    if (s->n == sizeof s->b) say_flush(s);
  }
}

void cj_end_say(const char *const *parts, size_t n) {
  say_buf s;
  size_t i;
  s.n = 0;
  for (i = 0; i < n; i++)
    if (parts[i]) cj_escape(parts[i], strlen(parts[i]), CJ_ESCAPE_TEXT, say_put, &s);
  say_flush(&s);
}

/* Flushes f, waiting at most a second for its lock: a thread that holds it longer is
 * stuck (blocked writing to a pipe, or stopped), and the stream is then flushed without
 * the lock, as exit() flushes every stream. */
static void flush_standard(FILE *f) {
  double give_up = cj_now_s() + 1;
  int locked;
  while (!(locked = ftrylockfile(f) == 0) && cj_now_s() < give_up) cj_nap(0.001);
  fflush_unlocked(f);
  if (locked) funlockfile(f);
}

void cj_end_finish(void) {
  unsigned i, n = __atomic_load_n(&n_duties, __ATOMIC_RELAXED);
  for (i = 0; i < n && i < MAX_DUTIES; i++) {
    void (*fn)(void) = __atomic_load_n(&duties[i], __ATOMIC_ACQUIRE);
    if (fn) fn();
  }
  flush_standard(stdout);
  flush_standard(stderr);
  fflush(NULL); /* the program's other streams (the newest first) */
  __atomic_store_n(&handed_over, 1, __ATOMIC_RELEASE);
  quick_exit(__atomic_load_n(&end_code, __ATOMIC_ACQUIRE));
}
