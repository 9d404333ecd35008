/* forklock.c - cujit across fork(). A child has only the thread that forked: a lock another
 * thread of the parent held at that moment would stay held in the child forever, and what
 * it guards could be half changed; a call into NVRTC another thread was making would leave
 * NVRTC's own lock so. So fork() first runs the hooks the layers registered here (NVRTC's
 * waits for the calls in flight to end: compile/nvrtc.c), then takes every lock that a
 * child may take (those of the compile and cache paths, the modules, the log, the error
 * mode, the loading of libraries), and the child gets each free and what it guards whole;
 * then the hooks for the parent and the child run (the child forgets the parent's compile
 * workers and jobs).
 *
 * The locks nest in many ways (a cache lock held while the log's is taken), so no one
 * order of taking them is safe: fork() tries each in turn, and when one is busy gives back
 * those it took and tries again a moment later, so that a thread holding one lock and
 * waiting for another always gets it. If some lock stays busy for FORK_WAIT_S, the fork
 * goes on without them, and the child makes each lock anew.
 *
 * There is one pthread_atfork registration, made as the library loads. The system's own
 * list lets a thread register hooks while another forks (and skips them for that fork);
 * this list is held from the first hook of a fork to the last, so a layer that registers
 * its hooks at its first use, while another thread forks, has them run for every fork
 * that starts after they are in. */
#include <pthread.h>

#include "common/common.h"

#define FORK_WAIT_S 5.0

typedef struct hooks {
  void (*prepare)(void), (*parent)(void), (*child)(void);
} hooks;

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t **locks;
static size_t n_locks, cap_locks;
static hooks *hook_list;
static size_t n_hooks, cap_hooks;
static int all_taken; /* prepare() took every lock of the list */

static int take_all(void) {
  size_t i;
  for (i = 0; i < n_locks; i++)
    if (pthread_mutex_trylock(locks[i]) != 0) break;
  if (i == n_locks) return 1;
  while (i--) pthread_mutex_unlock(locks[i]);
  return 0;
}

static void prepare(void) {
  double give_up;
  size_t i;
  pthread_mutex_lock(&list_lock);
  for (i = 0; i < n_hooks; i++)
    if (hook_list[i].prepare) hook_list[i].prepare();
  give_up = cj_now_s() + FORK_WAIT_S;
  while (!(all_taken = take_all()) && cj_now_s() < give_up) cj_nap(0.0005);
}

static void in_parent(void) {
  size_t i;
  for (i = 0; all_taken && i < n_locks; i++) pthread_mutex_unlock(locks[i]);
  for (i = n_hooks; i-- > 0;)
    if (hook_list[i].parent) hook_list[i].parent();
  pthread_mutex_unlock(&list_lock);
}

static void in_child(void) {
  size_t i;
  for (i = 0; i < n_locks; i++)
    if (all_taken)
      pthread_mutex_unlock(locks[i]);
    else
      pthread_mutex_init(locks[i], NULL);
  for (i = n_hooks; i-- > 0;)
    if (hook_list[i].child) hook_list[i].child();
  pthread_mutex_unlock(&list_lock);
}

__attribute__((constructor)) static void register_hooks(void) {
  pthread_atfork(prepare, in_parent, in_child);
}

int cj_fork_guard(pthread_mutex_t *m) {
  int rc = 0;
  pthread_mutex_lock(&list_lock);
  if (CJ_VEC_RESERVE(locks, cap_locks, n_locks + 1) == 0)
    locks[n_locks++] = m;
  else
    rc = -1;
  pthread_mutex_unlock(&list_lock);
  return rc;
}

void cj_fork_unguard(pthread_mutex_t *m) {
  size_t i;
  pthread_mutex_lock(&list_lock);
  for (i = 0; i < n_locks; i++)
    if (locks[i] == m) {
      locks[i] = locks[--n_locks];
      break;
    }
  pthread_mutex_unlock(&list_lock);
}

int cj_fork_hooks(void (*prepare_fn)(void), void (*parent_fn)(void), void (*child_fn)(void)) {
  int rc = 0;
  pthread_mutex_lock(&list_lock);
  if (CJ_VEC_RESERVE(hook_list, cap_hooks, n_hooks + 1) == 0)
    hook_list[n_hooks++] = (hooks){prepare_fn, parent_fn, child_fn};
  else
    rc = -1;
  pthread_mutex_unlock(&list_lock);
  return rc;
}
