/* pool.c - worker processes for compiles that run at once. NVRTC compiles one program at
 * a time inside a process, so a batch or asynchronous compiles run side by side only in
 * other processes: small `cujit-worker` programs (serve.c), started with posix_spawn (a
 * library must not fork a process whose other threads may hold locks or a CUDA context),
 * on first need, and kept for later compiles with their NVRTC loaded and their
 * precompiled headers made.
 *
 * The pool has one slot here and up to cj_pool_jobs() - 1 workers. A compile takes the
 * slot here when it is free, so that one compile at a time never goes through a worker;
 * else an idle worker, or a new one. The caller has already looked in the caches and holds
 * the key's lock (cache/fetch.c), so a worker only compiles; its reply is checked as a
 * cache entry is (format/entry.c) and stored by the caller. Whatever goes wrong with a
 * worker costs the worker, never the compile: it is compiled here instead.
 *
 * The caller trusts a worker's bytes no more than a cache entry's (a reply for another
 * request, or not a valid entry, is not used), but it does trust what a valid entry
 * holds: a worker is code it runs as its own user, like the library. So only a program
 * that this user or root owns, in a directory no one else may write, is run, found by an
 * absolute path. A worker is used only when it greets as this library's own version
 * (serve.c): libraries of two versions installed side by side each find their own
 * worker first, in a directory named for their soname, and one that finds another's
 * anyway (CUJIT_WORKER, a copy beside it) refuses it once and compiles here, instead of
 * sending it requests whose answers it cannot read. And a worker holds its compile up no
 * longer than a compile here would: the request's time limit and cancel hook end the wait
 * for one that does not answer. */
#define _GNU_SOURCE /* dladdr1, MSG_NOSIGNAL, sched_getaffinity */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dl/nvrtc.h"
#include "worker/worker.h"

extern char **environ;

#define MAX_WORKERS 255
#define POLL_MS 20  /* how often a wait asks the cancel hook */
#define GRACE_S 0.5 /* how long a worker may take to stop by itself when asked */

/* A slot of the table; pid 0 when empty. Slots never move, so that a compile may hold
 * a pointer to its worker while others come and go. */
typedef struct worker {
  pid_t pid;
  int fd;
  int busy;
  int greeted; /* it answered the greeting as this library's worker */
} worker;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static int here_busy;
static CJ_LARGE worker workers[MAX_WORKERS];
static int n_workers;     /* slots in use */
static unsigned jobs_set; /* cujit_compile_set_jobs(); 0: not set */
static int program_state; /* 0: not looked for, 1: found, -1: none */
static CJ_LARGE char program[PATH_MAX];
static uint64_t answered;

/* ---- how many at once ---- */

static unsigned cpus(void) {
  cpu_set_t set;
  long n;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return (unsigned)CPU_COUNT(&set);
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

unsigned cj_pool_jobs(void) {
  uint64_t n;
  unsigned set = __atomic_load_n(&jobs_set, __ATOMIC_RELAXED);
  if (set) return set;
  if (cj_env_u64("CUJIT_COMPILE_JOBS", &n) == CJ_ENV_SET) return (unsigned)n;
  n = cpus();
  return n > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : (unsigned)n;
}

void cj_pool_set_jobs(unsigned n) {
  __atomic_store_n(&jobs_set, n > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : n, __ATOMIC_RELAXED);
}

/* ---- the worker program ---- */

/* The directory the library (or the program it is linked into) was loaded from. The
 * loader keeps the path it was given, and a relative one (dlopen("lib/libcujit.so"), a
 * relative LD_LIBRARY_PATH) names a file only from the working directory of that moment:
 * a program that then changes into a shared directory would find another user's
 * cujit-worker there, and run it. So the directory is made absolute as the library
 * loads, before the program's own code runs, by a constructor that only reads the
 * loader's record (and, for a relative path, the working directory): no CUDA, no file
 * opened. "" when unknown; the program's own file is read from /proc when it is needed. */
static CJ_LARGE char loaded_from[PATH_MAX];
static int loaded_in_program; /* linked into the program itself */

__attribute__((constructor)) static void note_loaded_from(void) {
  struct link_map *map = NULL;
  Dl_info info;
  char cwd[PATH_MAX];
  const char *name;
  if (!dladdr1((void *)cj_pool_compile, &info, (void **)&map, RTLD_DL_LINKMAP) || !map ||
      !(name = map->l_name))
    return;
  if (!name[0]) { /* the program: the loader's name for it is argv[0] */
    loaded_in_program = 1;
    return;
  }
  if (!strchr(name, '/') || (name[0] != '/' && !getcwd(cwd, sizeof cwd))) return;
  if (cj_join(loaded_from, sizeof loaded_from, name[0] == '/' ? "" : cwd, name[0] == '/' ? "" : "/",
              name, NULL) >= sizeof loaded_from) {
    loaded_from[0] = '\0';
    return;
  }
  *strrchr(loaded_from, '/') = '\0'; /* its directory */
}

/* The library's directory, canonical, into out (PATH_MAX bytes): 1, or 0 when unknown. */
static int library_dir(char *out) {
  char *slash;
  if (!loaded_in_program) return loaded_from[0] && realpath(loaded_from, out) != NULL;
  if (!realpath("/proc/self/exe", out) || !(slash = strrchr(out, '/'))) return 0;
  *slash = '\0';
  return out[0] != '\0';
}

/* Why the program at the canonical path `path` must not be run, into why; 0 when it may:
 * a regular file that belongs to this user or root and that neither group nor others may
 * write, in a directory that is the same (so that nobody else can put another file in
 * its place). */
static int distrusted(const char *path, char *why, size_t size) {
  char dir[PATH_MAX], *slash;
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return snprintf(why, size, "it is not a regular file"), 1;
  if (!cj_trusted(&st)) return snprintf(why, size, "%s", cj_distrust(&st)), 1;
  snprintf(dir, sizeof dir, "%s", path);
  if ((slash = strrchr(dir, '/')) != NULL) *slash = '\0';
  if (stat(dir[0] ? dir : "/", &st) != 0 || !cj_trusted(&st))
    return snprintf(why, size, "its directory %s: %s", dir[0] ? dir : "/", cj_distrust(&st)), 1;
  return 0;
}

/* Takes `path` as the program (mu held): 1 when it is one that may run, its canonical
 * path in program[]; else 0, with a warning saying why when it is there but refused. */
static int take_program(const char *path, const char *from) {
  char why[PATH_MAX + 64];
  if (!realpath(path, program) || access(program, X_OK) != 0) {
    snprintf(program, sizeof program, "%s", path);
    return 0;
  }
  if (!distrusted(program, why, sizeof why)) return 1;
  cj_warn("the compile worker program '%s' (%s) is not run: %s; it and its directory must "
          "belong to you or root, and no one else may write to them. Compiles that could "
          "run at once run here, one at a time",
          program, from, why);
  return -1;
}

/* Where this version's worker is installed, as seen from the library's directory (or the
 * program's that it is linked into: the libexec directory's cujit-SOVERSION/), then beside
 * it and in ../bin (a build tree), then where it is installed, as an absolute path (for a
 * program linked with libcujit.a); the first that is there decides (src/CMakeLists.txt). */
static int find_beside(void) {
  static const char *const places[] = {CUJIT_WORKER_FROM_LIB, "", "../bin/", CUJIT_WORKER_DIR};
  char dir[PATH_MAX], path[PATH_MAX];
  size_t i;
  int rc;
  if (!library_dir(dir)) {
    snprintf(program, sizeof program, "cujit-worker (the library's directory is unknown)");
    return 0;
  }
  for (i = 0; i < CJ_COUNT(places); i++) {
    const char *at = places[i][0] == '/' ? "" : dir; /* an absolute libexec directory */
    if (cj_join(path, sizeof path, at, at[0] ? "/" : "", places[i], "cujit-worker", NULL) >=
        sizeof path)
      continue;
    if ((rc = take_program(path, "beside the library")) != 0) return rc;
  }
  cj_join(program, sizeof program, dir, "/cujit-worker", NULL);
  return 0;
}

/* Finds the worker program once (mu held); 1 when there is one that may run. */
static int have_program(void) {
  const char *env;
  int rc;
  if (program_state) return program_state > 0;
  env = cj_env("CUJIT_WORKER");
  if (env && env[0] != '/') {
    cj_warn("CUJIT_WORKER is '%s', which is not an absolute path, and is not used: set it to "
            "the full path of the worker program. Compiles that could run at once run here, "
            "one at a time",
            env);
    program_state = -1;
    return 0;
  }
  rc = env ? take_program(env, "CUJIT_WORKER") : find_beside();
  program_state = rc > 0 ? 1 : -1;
  if (rc == 0)
    cj_info("no compile worker program at '%s' (%s); compiles that could run at once run "
            "here, one at a time; install cujit-worker with the library or set CUJIT_WORKER "
            "to its path",
            program, env ? "CUJIT_WORKER" : "beside the library");
  return program_state > 0;
}

/* ---- starting and stopping workers ---- */

/* Waits a little for a worker to go, then makes it. */
static void reap(pid_t pid) {
  int i, status;
  for (i = 0; i < 100; i++) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return;
    cj_nap(0.01);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
}

/* Closes a worker (mu held) and empties its slot; `dead`: it is gone or misbehaved, so
 * it is killed rather than asked to go. A worker already reaped (by this process's own
 * wait for any child, or with SIGCHLD ignored) is not signalled: its pid may be another
 * process's by now. */
static void drop(worker *w, int dead) {
  int status;
  if (dead) {
    pid_t r = waitpid(w->pid, &status, WNOHANG);
    if (r == 0) kill(w->pid, SIGKILL); /* still running, and still ours */
    if (r != 0) {                      /* gone: nothing to wait for */
      close(w->fd);
      memset(w, 0, sizeof *w);
      n_workers--;
      return;
    }
  }
  close(w->fd);
  reap(w->pid);
  memset(w, 0, sizeof *w);
  n_workers--;
}

static void forget_in_child(void) {
  int i;
  /* The child of a fork has none of the parent's threads: the sockets are the parent's. */
  for (i = 0; i < MAX_WORKERS; i++)
    if (workers[i].pid) close(workers[i].fd);
  memset(workers, 0, sizeof workers);
  n_workers = 0;
  here_busy = 0;
  pthread_mutex_init(&mu, NULL);
  pthread_cond_init(&freed, NULL);
}

__attribute__((constructor)) static void at_fork(void) {
  cj_fork_hooks(NULL, NULL, forget_in_child);
}

/* The worker's environment (mu held): this process's, with CUJIT_NVRTC naming the NVRTC
 * this process found, so that the worker compiles with the NVRTC the cache key names
 * (the environment may have changed since this process looked). Each reply names its
 * NVRTC too, and one from another is not used. NULL when out of memory. */
static char **worker_env(void) {
  static CJ_LARGE char nvrtc[PATH_MAX + 16];
  const char *path = cujit_nvrtc_path();
  size_t n = 0, i, k = 0;
  char **env;
  while (environ[n]) n++;
  if (!(env = cj_calloc(n + 2, sizeof *env))) return NULL;
  for (i = 0; i < n; i++)
    if (!path[0] || strncmp(environ[i], "CUJIT_NVRTC=", 12) != 0) env[k++] = environ[i];
  if (path[0]) {
    snprintf(nvrtc, sizeof nvrtc, "CUJIT_NVRTC=%s", path);
    env[k++] = nvrtc;
  }
  return env;
}

/* Starts a worker (mu held); NULL when none can be. Its own process group keeps a
 * terminal's Ctrl-C away from it: it ends when this process closes its socket. */
static worker *spawn(worker *w) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, all;
  char *argv[] = {program, (char *)"--serve", NULL};
  char **env;
  int sv[2], rc;
  pid_t pid;
  if (!(env = worker_env())) return NULL;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return cj_free(env), NULL;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawnattr_init(&at);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  rc = posix_spawn(&pid, program, &fa, &at, argv, env);
  cj_free(env);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    cj_info("cannot start the compile worker '%s': %s; compiling here", program, strerror(rc));
    program_state = -1;
    return NULL;
  }
  cj_debug("started compile worker %d ('%s')", (int)pid, program);
  w->pid = pid;
  w->fd = sv[0];
  w->busy = 0;
  w->greeted = 0;
  n_workers++;
  return w;
}

/* An idle worker, or a new one while the limit allows (mu held). */
static worker *idle_worker(void) {
  int i, limit = (int)cj_pool_jobs() - 1;
  worker *empty = NULL;
  for (i = 0; i < MAX_WORKERS; i++) {
    if (workers[i].pid && !workers[i].busy) return &workers[i];
    if (!workers[i].pid && !empty) empty = &workers[i];
  }
  if (n_workers >= limit || !empty || !have_program()) return NULL;
  return spawn(empty);
}

/* ---- talking to a worker ---- */

enum {
  SENT_OK = 0,
  SENT_BROKEN = 1,  /* it died, stopped or answered out of step: compile here */
  SENT_REFUSED = 2, /* it could not take the request: compile here */
  SENT_NO_MEMORY = 3,
  SENT_LATE = 4,    /* past the time limit, or cancelled, and no answer: it was stopped */
  SENT_FOREIGN = 5, /* not this library's worker (the greeting): compile here, start no more */
  SENT_STOPPED = 6  /* cancelled while it was greeted, before the request was sent */
};

/* One request to a worker. Every wait in it has an end, as a compile here has (see
 * overdue()); the worker applies the request's time limit and cancel byte itself, as
 * NVRTC does here, and is stopped by force only when it fails to. */
typedef struct exchange {
  int fd;
  pid_t pid;
  cj_request *r;
  double start; /* when the exchange began, with the greeting or the request (monotonic s) */
  double asked; /* seconds in when the cancel hook said stop; 0 before */
  int by_hook;  /* SENT_LATE: the hook's stop, not the time limit, was missed */
  int waited;   /* the worker's status was taken by a wait (it ended or stopped): in status */
  int status;
} exchange;

/* 1 when the worker has stopped (SIGSTOP, a debugger) or is gone: it will not answer. A
 * worker runs in its own process group, so a terminal's job control never stops it. */
static int worker_halted(exchange *x) {
  pid_t r = waitpid(x->pid, &x->status, WNOHANG | WUNTRACED);
  if (r == x->pid) x->waited = 1;
  return r == x->pid || (r < 0 && errno == ECHILD);
}

/* 1 when a worker that closed its socket has exited by itself (as a program that is no
 * worker of this version does at the greeting), within GRACE_S; 0 when it was killed or
 * stopped, or its end is not seen (then it may have been one that failed by chance). */
static int exited_by_itself(exchange *x) {
  int i;
  for (i = 0; !x->waited && i < (int)(GRACE_S / 0.01); i++) {
    pid_t r = waitpid(x->pid, &x->status, WNOHANG);
    if (r == x->pid) x->waited = 1;
    if (r < 0 && errno != EINTR) break;
    if (r == 0) cj_nap(0.01);
  }
  return x->waited && WIFEXITED(x->status);
}

/* Asked at each tick of a wait: passes the cancel hook's stop on to the worker (which
 * stops at NVRTC's next check and answers CUJIT_ERROR_CANCELLED), and says when to give
 * up on it. A worker that has not answered GRACE_S after the stop was asked for, or after
 * the time limit passed (its own NVRTC checks the limit too), is late: the compile ends
 * there as a compile here would have, without waiting for NVRTC's next check. */
static int overdue(exchange *x) {
  double t = cj_now_s() - x->start;
  if (!x->asked && x->r->cancel && x->r->cancel(x->r->cancel_user)) {
    unsigned char c = CJ_WORKER_CANCEL;
    x->asked = t > 0 ? t : 1e-9;
    /* never blocks: a worker too stopped to read it is caught by the deadline below */
    if (send(x->fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN) return SENT_BROKEN;
  }
  if (x->asked && t > x->asked + GRACE_S) return x->by_hook = 1, SENT_LATE;
  if (x->r->time_limit_s > 0 && t > x->r->time_limit_s + GRACE_S) return SENT_LATE;
  return worker_halted(x) ? SENT_BROKEN : SENT_OK;
}

/* Waits until the socket is ready for `events`, or the exchange is overdue. */
static int wait_ready(exchange *x, short events) {
  for (;;) {
    struct pollfd pf = {x->fd, events, 0};
    int rc = poll(&pf, 1, POLL_MS);
    if (rc > 0) return SENT_OK; /* readable, writable, or closed: the call says which */
    if (rc < 0 && errno != EINTR) return SENT_BROKEN;
    if ((rc = overdue(x)) != SENT_OK) return rc;
  }
}

/* Sends (events POLLOUT) or reads (POLLIN) n bytes without ever blocking: a worker that
 * stops reading or answering holds up no one. SENT_BROKEN when the worker closed its
 * socket (it died) or the call failed; SENT_LATE when the exchange is overdue. */
static int transfer(exchange *x, unsigned char *b, size_t n, short events) {
  while (n) {
    ssize_t k = events == POLLOUT ? send(x->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT)
                                  : recv(x->fd, b, n, MSG_DONTWAIT);
    int rc;
    if (k > 0) {
      b += k;
      n -= (size_t)k;
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if ((rc = wait_ready(x, events)) != SENT_OK) return rc;
    } else if (k == 0 || errno != EINTR) {
      return SENT_BROKEN;
    }
  }
  return SENT_OK;
}

static int receive(exchange *x, void *p, size_t n) { return transfer(x, p, n, POLLIN); }

static uint64_t le(const unsigned char *p, int bytes) {
  cj_cursor c = {p, (size_t)bytes, 0};
  return cj_cursor_get(&c, bytes);
}

/* The request's bytes: its id, the working directory and the request. */
static int frame(const cj_request *r, uint64_t id, cj_buf *b) {
  char cwd[PATH_MAX];
  size_t at;
  if (!getcwd(cwd, sizeof cwd)) return SENT_REFUSED;
  cj_buf_append(b, CJ_WORKER_REQUEST, 4);
  cj_buf_put_le(b, id, 8);
  at = b->len;
  cj_buf_put_le(b, 0, 8); /* the payload's length, filled below */
  cj_buf_put_le(b, strlen(cwd), 8);
  cj_buf_puts(b, cwd);
  if (cj_request_encode(r, b) != 0 || b->oom) return SENT_NO_MEMORY;
  {
    uint64_t len = b->len - at - 8;
    int i;
    for (i = 0; i < 8; i++) b->data[at + (size_t)i] = (char)(len >> (8 * i));
  }
  return SENT_OK;
}

/* The image of a successful reply, checked as a cache entry. */
static int take_entry(exchange *x, uint64_t id, cj_image **out) {
  unsigned char len8[8];
  unsigned char *data;
  uint64_t len;
  cj_key key;
  cj_deps deps;
  cj_entry_meta meta;
  char why[256];
  int rc;
  if ((rc = receive(x, len8, 8)) != SENT_OK) return rc;
  len = le(len8, 8);
  if (len == 0 || len > CJ_ENTRY_MAX_SIZE) return SENT_BROKEN;
  if (!(data = cj_malloc((size_t)len))) return SENT_NO_MEMORY;
  if ((rc = receive(x, data, (size_t)len)) != SENT_OK) return cj_free(data), rc;
  memset(&deps, 0, sizeof deps);
  cj_worker_key(id, &key);
  rc = cj_entry_decode(&key, data, (size_t)len, out, &deps, &meta, why, sizeof why);
  cj_deplist_clear(&deps);
  cj_free(data);
  if (rc == 1) cj_info("a compile worker's reply is not a valid entry: %s", why);
  return rc == 0 ? SENT_OK : rc < 0 ? SENT_NO_MEMORY : SENT_BROKEN;
}

/* The greeting, a new worker's first exchange (worker.h): SENT_OK when it greets as this
 * library's version; SENT_FOREIGN, with why saying what it is, when it does not (another
 * version's worker, or a program that is no worker). */
static int greet(exchange *x, char *why, size_t size) {
  unsigned char h[20];
  char version[CJ_WORKER_MAX_VERSION + 1], shown[CJ_SHOWN_SIZE];
  uint64_t len;
  cj_buf b = {0};
  int rc;
  cj_worker_greeting(&b);
  rc = b.oom ? SENT_NO_MEMORY : transfer(x, (unsigned char *)b.data, b.len, POLLOUT);
  cj_buf_free(&b);
  if (rc == SENT_OK) rc = receive(x, h, sizeof h);
  if (rc == SENT_BROKEN && exited_by_itself(x))
    return snprintf(why, size,
                    "it exited without answering the greeting (as a worker of cujit "
                    "0.2 or earlier does)"),
           SENT_FOREIGN;
  if (rc != SENT_OK) return rc; /* killed or stopped: not this program's fault */
  len = le(h + 12, 8);
  if (memcmp(h, CJ_WORKER_HELLO, 4) != 0 || len > CJ_WORKER_MAX_VERSION)
    return snprintf(why, size, "it answered the greeting with something else"), SENT_FOREIGN;
  if ((rc = receive(x, version, (size_t)len)) != SENT_OK)
    return rc == SENT_BROKEN ? (snprintf(why, size, "its greeting was cut short"), SENT_FOREIGN)
                             : rc;
  version[len] = '\0';
  cj_shown(shown, version); /* another program's bytes: escaped before a log line */
  if (le(h + 4, 8) != CJ_WORKER_PROTOCOL || strcmp(version, cj_worker_version()) != 0)
    return snprintf(why, size,
                    "it is the worker of cujit %s (greeting %llu), not of %s (greeting %d)", shown,
                    (unsigned long long)le(h + 4, 8), cj_worker_version(), CJ_WORKER_PROTOCOL),
           SENT_FOREIGN;
  cj_debug("compile worker %d is the worker of cujit %s", (int)x->pid, shown);
  return SENT_OK;
}

/* Reads a reply; on a result, *st is the compile's status (its detail set as the worker
 * had it) and *out its image. */
static int take_reply(exchange *x, uint64_t id, cujit_status *st, cj_image **out) {
  unsigned char h[32], zero[8];
  uint64_t kind, status, nvrtc, msg_len;
  char *msg;
  int rc;
  if ((rc = receive(x, h, sizeof h)) != SENT_OK) return rc;
  if (memcmp(h, CJ_WORKER_REPLY, 4) != 0 || le(h + 4, 8) != id) return SENT_BROKEN;
  kind = le(h + 12, 4);
  status = le(h + 16, 4);
  nvrtc = le(h + 20, 4);
  msg_len = le(h + 24, 8);
  if (kind == CJ_REPLY_REFUSED) { /* nothing follows but an empty entry */
    if (msg_len != 0) return SENT_BROKEN;
    if ((rc = receive(x, zero, 8)) != SENT_OK) return rc;
    return le(zero, 8) == 0 ? SENT_REFUSED : SENT_BROKEN;
  }
  if (kind != CJ_REPLY_RESULT || msg_len > CJ_WORKER_MAX_MESSAGE || msg_len == 0 ||
      status > CUJIT_ERROR_CANCELLED)
    return SENT_BROKEN;
  if (!(msg = cj_malloc((size_t)msg_len + 1))) return SENT_NO_MEMORY;
  if ((rc = receive(x, msg, (size_t)msg_len)) != SENT_OK) return cj_free(msg), rc;
  msg[msg_len] = '\0';
  *st = (cujit_status)status;
  if (status == CUJIT_ERROR_NO_NVRTC) { /* this process has one: compile here */
    cj_free(msg);
    return SENT_BROKEN;
  }
  if (status == CUJIT_OK && strcmp(msg, cj_libnvrtc_identity()) != 0) {
    cj_info("a compile worker used another NVRTC (%s, not %s)", msg, cj_libnvrtc_identity());
    cj_free(msg);
    return SENT_BROKEN;
  }
  if (status != CUJIT_OK) {
    if ((rc = receive(x, zero, 8)) == SENT_OK && le(zero, 8) != 0) rc = SENT_BROKEN;
    if (rc == SENT_OK) cj_fail_nvrtc(*st, (int)(int32_t)nvrtc, "%s", msg);
    cj_free(msg);
    return rc;
  }
  cj_free(msg);
  return take_entry(x, id, out);
}

/* What became of a compile sent to a worker, besides its status and image. */
typedef struct outcome {
  double after; /* SENT_LATE, SENT_STOPPED: when the hook said stop, or when it was given up on */
  int by_hook;  /* SENT_LATE: the cancel hook's stop (else the time limit) was missed */
  char why[CJ_SHOWN_SIZE + 96]; /* SENT_FOREIGN: what the program is */
} outcome;

/* Compiles r on worker w, greeting it first when it is new. */
static int on_worker(worker *w, cj_request *r, cujit_status *st, cj_image **out, outcome *o) {
  exchange x = {w->fd, w->pid, r, cj_now_s(), 0, 0, 0, 0};
  cj_buf b = {0};
  uint64_t id = cj_random64();
  int rc = SENT_OK;
  CJ_TRACE("cujit: worker compile %s", r->name);
  if (!w->greeted && (rc = greet(&x, o->why, sizeof o->why)) == SENT_OK) {
    w->greeted = 1;
    if (x.asked) rc = SENT_STOPPED, x.by_hook = 1; /* no request sent: nothing to stop */
  }
  if (rc == SENT_OK) rc = frame(r, id, &b);
  if (rc == SENT_OK) rc = transfer(&x, (unsigned char *)b.data, b.len, POLLOUT);
  cj_buf_free(&b);
  if (rc == SENT_OK) rc = take_reply(&x, id, st, out);
  if (rc != SENT_OK && *out) {
    cj_image_unref(*out);
    *out = NULL;
  }
  o->after = x.by_hook ? x.asked : cj_now_s() - x.start;
  o->by_hook = x.by_hook;
  return rc;
}

/* ---- the slots ---- */

static cujit_status compile_here(cj_request *r, cj_image **out) {
  CJ_TRY(cj_request_prepare(r));
  return cj_nvrtc_compile(r, out);
}

static void after_worker(worker *w, int rc, const char *name, const char *why) {
  pthread_mutex_lock(&mu);
  w->busy = 0;
  if (rc == SENT_FOREIGN) { /* the program is not this library's worker: none is started again */
    if (program_state > 0)
      cj_info("the compile worker program '%s' is not used: %s. Compiles that could run at "
              "once run here, one at a time",
              program, why);
    program_state = -1;
    drop(w, 1);
  } else if (rc == SENT_BROKEN || rc == SENT_NO_MEMORY) { /* its stream is out of step */
    cj_info("compile worker %d stopped or answered something else while compiling '%s'; "
            "compiling it here",
            (int)w->pid, name);
    drop(w, 1);
  } else if (rc == SENT_LATE) {
    cj_info("compile worker %d did not stop compiling '%s' within %g s of being asked to "
            "(its time limit or cancel); it was killed",
            (int)w->pid, name, GRACE_S);
    drop(w, 1);
  } else if (n_workers > (int)cj_pool_jobs() - 1) {
    drop(w, 0); /* the limit was lowered */
  }
  if (rc == SENT_OK) {
    answered++;
    cj_debug("compile worker %d compiled '%s'", (int)w->pid, name);
  }
  pthread_cond_broadcast(&freed);
  pthread_mutex_unlock(&mu);
}

/* Waits for the slot here or a worker (mu held). CUJIT_ERROR_CANCELLED when the cancel
 * hook says stop first. */
static cujit_status take_slot(cj_request *r, int *here, worker **w) {
  struct timespec until;
  for (;;) {
    if (!here_busy) return here_busy = *here = 1, CUJIT_OK;
    if ((*w = idle_worker()) != NULL) return (*w)->busy = 1, CUJIT_OK;
    if (r->cancel && r->cancel(r->cancel_user))
      return cj_fail(CUJIT_ERROR_CANCELLED,
                     "compiling '%s' was cancelled by its cancel hook "
                     "while it waited for a free compile slot; nothing was compiled",
                     r->name);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += POLL_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&freed, &mu, &until);
  }
}

cujit_status cj_pool_compile(cj_request *r, cj_image **out) {
  worker *w = NULL;
  cujit_status st = CUJIT_OK;
  outcome o = {0, 0, ""};
  int here = 0, rc;
  pthread_mutex_lock(&mu);
  st = take_slot(r, &here, &w);
  pthread_mutex_unlock(&mu);
  if (st != CUJIT_OK) return st;
  if (here) {
    st = compile_here(r, out);
    pthread_mutex_lock(&mu);
    here_busy = 0;
    pthread_cond_broadcast(&freed);
    pthread_mutex_unlock(&mu);
    return st;
  }
  *out = NULL;
  rc = on_worker(w, r, &st, out, &o);
  after_worker(w, rc, r->name, o.why);
  if (rc == SENT_NO_MEMORY) return cj_fail_oom("sending a compile to a worker process");
  if (rc == SENT_LATE || rc == SENT_STOPPED)
    return cj_nvrtc_stopped(r, o.by_hook, o.after, NVRTC_ERROR_CANCELLED);
  return rc == SENT_OK ? st : compile_here(r, out);
}

/* ---- for the job runner and tests ---- */

void cj_pool_trim(void) {
  int i;
  pthread_mutex_lock(&mu);
  for (i = 0; i < MAX_WORKERS; i++)
    if (workers[i].pid && !workers[i].busy) drop(&workers[i], 0);
  pthread_mutex_unlock(&mu);
}

int cj_pool_workers(int *pids, int *busy, int max) {
  int i, n = 0;
  pthread_mutex_lock(&mu);
  for (i = 0; i < MAX_WORKERS; i++) {
    if (!workers[i].pid) continue;
    if (n < max && pids) pids[n] = (int)workers[i].pid;
    if (n < max && busy) busy[n] = workers[i].busy;
    n++;
  }
  pthread_mutex_unlock(&mu);
  return n;
}

uint64_t cj_pool_answered(void) {
  uint64_t n;
  pthread_mutex_lock(&mu);
  n = answered;
  pthread_mutex_unlock(&mu);
  return n;
}

void cj_pool_reset(void) {
  cj_pool_trim();
  pthread_mutex_lock(&mu);
  program_state = 0;
  pthread_mutex_unlock(&mu);
}
