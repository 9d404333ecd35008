/* stress_process - the process-wide paths under load, in a release build. Sanitizers slow
 * threads down and hide the races this looks for, so the group is labelled "stress", not
 * "cpu", and runs in the build users get (-O2, no sanitizer).
 *
 * Each run is a process of its own (this binary again, "--run MODE SEED") whose threads
 * compile (NVRTC, through the disk cache and, where redis-server is installed, the Redis
 * tier), compile batches (in cujit-worker processes), link (nvJitLink) and, where there is
 * a device, copy and launch with In/Out buffers, while one of its threads (the main one,
 * a working one, or one started for it) makes a call that fails in the error mode
 * (cujit_error_exit set as the handler, or CUJIT_ERRORS=exit). Every run must
 *   - end with status 1 (not a signal, not another status), with its failure's message on
 *     stderr (the file name's ESC escaped, and no raw ESC anywhere) and what it printed to
 *     stdout flushed;
 *   - leave no process behind: the compile workers it started end within 10 s (this
 *     process is their subreaper, so it sees them);
 *   - leave no lock that makes a later run wait: the runs share one disk cache and all
 *     compile the same few sources (among their own), so a run often ends while holding
 *     their locks; a wait for one is logged (CUJIT_LOG=warn), which fails the run.
 * Under fork, the same end is asked of a child forked while its parent's threads work
 * (the parent goes on, checks that the child ended with 1, and ends with 0), and of a
 * parent that fails while a child it forked compiles (the child goes on and ends with 0).
 *
 * Usage: stress_process [RUNS]   RUNS runs (default 100) with threads, and as many under
 *                                fork (half of them a failing child, half a failing
 *                                parent);
 *        stress_process --run MODE SEED   one run (what the runs are). */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "linktest.h"

enum { MODE_THREADS, MODE_FORK_CHILD, MODE_FORK_PARENT, N_MODES };
static const char *const mode_names[N_MODES] = {"threads", "fork-child", "fork-parent"};

/* =======================================================================================
 * One run: a process that works on several threads and fails in the error mode
 * ===================================================================================== */

static unsigned seed;
static int device;       /* a device is usable: copies and launches run too */
static int forked;       /* this process is a child made by fork(): it uses no device */
static int begun;        /* working threads that have made their first call */
static int fail_in_loop; /* the thread compiling the run's own sources makes the failing call */

static void fail_now(void);

static void nap_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The options of every compile: a real target when there is no device (a link needs one). */
static cujit_options options(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  if (!device) o.arch = LINK_ARCH;
  return o;
}

static void began(int i) {
  if (i == 0) __atomic_add_fetch(&begun, 1, __ATOMIC_SEQ_CST);
}

/* Sources of this run only: every compile misses the cache, takes its key's lock and runs
 * NVRTC. */
static void *compile_own(void *arg) {
  cujit_options o = options();
  char src[256];
  int i;
  (void)arg;
  for (i = 0;; i++) {
    cujit_module *m = NULL;
    if (i && __atomic_load_n(&fail_in_loop, __ATOMIC_SEQ_CST)) fail_now();
    snprintf(src, sizeof src, "__global__ void own_%u_%d(float *p) { p[threadIdx.x] = %d.0f; }\n",
             seed, i, i);
    began(i);
    cujit_module_from_source(&m, src, "own.cu", &o);
    cujit_module_destroy(m);
  }
  return NULL;
}

/* Four sources every run compiles: a run that ended while compiling one left its lock
 * file, which the next run must take without waiting. The memory cache would hide the
 * disk after the first round, so each round compiles a source no run compiled in memory. */
static void *compile_shared(void *arg) {
  cujit_options o = options();
  char src[256];
  int i;
  (void)arg;
  for (i = 0;; i++) {
    cujit_module *m = NULL;
    snprintf(src, sizeof src,
             "__global__ void shared_%d(float *p) { p[threadIdx.x] += %d.0f; } // %d\n", i % 4,
             i % 4, i < 4 ? 0 : (int)seed);
    began(i);
    cujit_module_from_source(&m, src, "shared.cu", &o);
    cujit_module_destroy(m);
  }
  return NULL;
}

/* Batches of three: two of them compile in worker processes. */
static void *compile_batches(void *arg) {
  cujit_options o = options();
  char text[3][256];
  const char *srcs[3] = {text[0], text[1], text[2]};
  cujit_module *mods[3];
  int i, j;
  (void)arg;
  for (i = 0;; i++) {
    for (j = 0; j < 3; j++)
      snprintf(text[j], sizeof text[j],
               "__global__ void batch_%u_%d_%d(int *p) { p[threadIdx.x] = %d; }\n", seed, i, j, j);
    began(i);
    cujit_batch_compile(mods, NULL, srcs, NULL, 3, &o);
    for (j = 0; j < 3; j++) cujit_module_destroy(mods[j]);
  }
  return NULL;
}

/* Links of two sources (nvJitLink), the library's text new each time. */
static void *link_loop(void *arg) {
  cujit_options o = options();
  char lib[256];
  int i;
  (void)arg;
  for (i = 0;; i++) {
    cujit_link_part parts[2];
    cujit_module *m = NULL;
    snprintf(lib, sizeof lib,
             "__device__ float scale = %d.0f;\n__device__ int calls = %u;\n"
             "__device__ float twice(float x) { return 2.0f * x + 1.0f; }\n",
             i, seed);
    parts[0] = link_source(kLinkMain, "main.cu");
    parts[1] = link_source(lib, "lib.cu");
    began(i);
    cujit_module_link(&m, parts, 2, &o, NULL);
    cujit_module_destroy(m);
  }
  return NULL;
}

/* Copies through the device and launches with In/Out buffers (pageable, 4 MiB: the
 * staging threads move them). */
static void *device_loop(void *arg) {
  static const char src[] = "__global__ void twice(float *y, const float *x, int n) {\n"
                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "  if (i < n) y[i] = 2.0f * x[i];\n"
                            "}\n";
  enum { N = 1 << 20 };
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  CUdeviceptr a = 0, b = 0;
  int i, k;
  (void)arg;
  cujit_module_from_source(&m, src, "twice.cu", NULL);
  cujit_module_get_function(m, "twice", &f);
  cujit_mem_alloc(&a, N * sizeof *x);
  cujit_mem_alloc(&b, N * sizeof *x);
  for (k = 0; k < N; k++) x[k] = (float)k;
  for (i = 0;; i++) { /* until the process ends */
    began(i);
    cujit_mem_copy_htod(a, x, N * sizeof *x);
    cujit_mem_copy_dtod(b, a, N * sizeof *x);
    cujit_mem_copy_dtoh(y, b, N * sizeof *x);
    CUJIT_LAUNCH(f, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_out(y, N * sizeof *y),
                 cujit_in(x, N * sizeof *x), cujit_i32(N));
  }
  return NULL;
}

static void *(*const loops[])(void *) = {compile_own, compile_shared, compile_batches, link_loop,
                                         device_loop};
enum { N_LOOPS = sizeof loops / sizeof *loops };

/* Which failure a run makes: a lookup loads the module on the device, which a forked
 * child may not use (CUDA's rule), so its child compiles instead. */
static int failure_kind(void) { return forked && seed % 3 == 2 ? 0 : (int)(seed % 3); }

/* The failing call of the run: a compile error in a file whose name holds ESC, a missing
 * file of such a name, or a kernel that is not there. Each message names the run's seed. */
static void fail_now(void) {
  cujit_options o = options();
  char name[128];
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  snprintf(name, sizeof name, "/nonexistent/stress-%u-\x1b[31m.cu", seed);
  switch (failure_kind()) {
    case 0: cujit_module_from_source(&m, "this is not CUDA\n", name + 13, &o); break;
    case 1: cujit_module_from_file(&m, name, &o); break;
    default:
      if ((cujit_module_from_source)(&m, "__global__ void k(int *p) {}\n", "k.cu", &o) ==
          CUJIT_OK) {
        snprintf(name, sizeof name, "missing_%u", seed);
        cujit_module_get_function(m, name, &f);
      }
  }
  printf("the failing call returned\n"); /* never */
  fflush(stdout);
  _exit(3);
}

static void *fail_thread(void *arg) {
  (void)arg;
  fail_now();
  return NULL;
}

/* Starts the working threads and waits until each has made its first call. */
static int start_work(pthread_t *t) {
  int n = device ? N_LOOPS : N_LOOPS - 1, i;
  for (i = 0; i < n; i++)
    if (pthread_create(&t[i], NULL, loops[i], NULL) != 0) return -1;
  while (__atomic_load_n(&begun, __ATOMIC_SEQ_CST) < n) nap_ms(1);
  nap_ms((int)(seed * 7919u % 60u)); /* somewhere inside their calls */
  return n;
}

/* The error mode: its handler set by the program, or CUJIT_ERRORS=exit (set by the
 * runner for odd seeds). */
static void error_mode(void) {
  if (seed % 2 == 0) cujit_error_set_handler(cujit_error_exit, NULL);
}

static int run_threads(void) {
  pthread_t t[N_LOOPS + 1];
  error_mode();
  printf("run %u: working\n", seed); /* a pipe's stdout is buffered: the end must flush it */
  if (start_work(t) < 0) return 4;
  switch (seed / 3 % 3) { /* which thread fails */
    case 0: fail_now(); break;
    case 1: pthread_create(&t[N_LOOPS], NULL, fail_thread, NULL); break;
    default: __atomic_store_n(&fail_in_loop, 1, __ATOMIC_SEQ_CST); break;
  }
  for (;;) pause();
}

/* The child forked while the threads work fails in the error mode; the parent goes on. */
static int run_fork_child(void) {
  pthread_t t[N_LOOPS];
  int n, status = 0;
  pid_t pid;
  error_mode();
  if ((n = start_work(t)) < 0) return 4;
  fflush(stdout);
  if ((pid = fork()) < 0) return 5;
  if (pid == 0) {
    pthread_t own;
    device = 0; /* a forked child cannot use its parent's CUDA context */
    forked = 1;
    printf("run %u: child working\n", seed);
    if (seed / 3 % 2) { /* a thread of its own compiles while it fails */
      begun = 0;
      pthread_create(&own, NULL, compile_own, NULL);
      while (!__atomic_load_n(&begun, __ATOMIC_SEQ_CST)) nap_ms(1);
    }
    fail_now();
  }
  (void)n;
  nap_ms(20); /* the threads work on while the child ends */
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  printf("run %u: the child ended with %s %d\n", seed, WIFEXITED(status) ? "status" : "signal",
         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  fflush(stdout);
  /* the threads are still at work: this end is not what is tested, so it runs no exit
   * handler under them (the error mode's end does the same) */
  _exit(WIFEXITED(status) && WEXITSTATUS(status) == 1 ? 0 : 6);
}

/* The parent fails in the error mode while the child it forked compiles and links. */
static int run_fork_parent(void) {
  pthread_t t[N_LOOPS];
  pid_t pid;
  error_mode();
  if (start_work(t) < 0) return 4;
  fflush(stdout);
  if ((pid = fork()) < 0) return 5;
  if (pid == 0) {
    cujit_options o;
    cujit_link_part parts[2];
    cujit_module *m = NULL;
    char src[256], lib[256];
    device = 0; /* a forked child cannot use its parent's CUDA context */
    forked = 1;
    o = options();
    cujit_error_set_handler(NULL, NULL); /* this child checks its own calls */
    snprintf(src, sizeof src, "__global__ void kid_%u(int *p) { *p = 1; }\n", seed);
    snprintf(lib, sizeof lib, "%s// the child of run %u\n", kLinkLib, seed); /* linked anew */
    parts[0] = link_source(kLinkMain, "main.cu");
    parts[1] = link_source(lib, "lib.cu");
    if (cujit_module_from_source(&m, src, "kid.cu", &o) != CUJIT_OK) {
      fprintf(stderr, "run %u: the child's compile failed: %s\n", seed, cujit_last_error());
      _exit(7);
    }
    cujit_module_destroy(m);
    if (cujit_module_link(&m, parts, 2, &o, NULL) != CUJIT_OK) {
      fprintf(stderr, "run %u: the child's link failed: %s\n", seed, cujit_last_error());
      _exit(8);
    }
    cujit_module_destroy(m);
    printf("run %u: the child is done\n", seed);
    fflush(stdout);
    _exit(0); /* no exit handler: the parent's CUDA driver registered some, for its process */
  }
  printf("run %u: child %d\n", seed, (int)pid);
  fail_now();
  return 3;
}

static int run_main(const char *mode, const char *seed_text) {
  int count = 0;
  seed = (unsigned)strtoul(seed_text, NULL, 10);
  device = (cujit_device_get_count)(&count) == CUJIT_OK && count > 0;
  if (strcmp(mode, "threads") == 0) return run_threads();
  if (strcmp(mode, "fork-child") == 0) return run_fork_child();
  if (strcmp(mode, "fork-parent") == 0) return run_fork_parent();
  return 9;
}

/* =======================================================================================
 * The runner
 * ===================================================================================== */

static char self[4096], workdir[4096], remote[128];
static pid_t redis_pid = -1;

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- a Redis server for the remote tier, where one is installed ---- */

static int find_redis(char *out, size_t size) {
  const char *path = getenv("PATH");
  char dirs[8192], *dir, *save = NULL;
  snprintf(dirs, sizeof dirs, "%s:/usr/bin:/usr/sbin:/usr/local/bin", path ? path : "");
  for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(out, size, "%s/redis-server", dir);
    if (access(out, X_OK) == 0) return 1;
  }
  return 0;
}

static int tcp_to(int port) {
  struct sockaddr_in a;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons((uint16_t)port);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

/* A free port on 127.0.0.1. */
static int free_port(void) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* Starts redis-server (no password, no persistence) and waits for its PONG; sets remote. */
static void start_redis(void) {
  char bin[4200], port[16], reply[8];
  double until;
  int p = free_port();
  if (!find_redis(bin, sizeof bin) || p < 0) {
    printf("note: redis-server is not installed; the runs use no remote tier\n");
    return;
  }
  snprintf(port, sizeof port, "%d", p);
  if ((redis_pid = fork()) == 0) {
    int fd = open("/dev/null", O_WRONLY);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(workdir) != 0) _exit(126);
    execl(bin, "redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly",
          "no", (char *)NULL);
    _exit(127);
  }
  for (until = seconds() + 10; seconds() < until; nap_ms(20)) {
    int fd = tcp_to(p);
    ssize_t n = -1;
    if (fd < 0) continue;
    if (write(fd, "PING\r\n", 6) == 6) n = read(fd, reply, 5);
    close(fd);
    if (n == 5 && memcmp(reply, "+PONG", 5) == 0) {
      snprintf(remote, sizeof remote, "redis://127.0.0.1:%d?timeout=2000&connect_timeout=2000", p);
      printf("the runs share a remote tier: redis-server on port %d\n", p);
      return;
    }
  }
  printf("note: redis-server did not answer; the runs use no remote tier\n");
}

static void stop_redis(void) {
  if (redis_pid > 0) {
    kill(redis_pid, SIGKILL);
    waitpid(redis_pid, NULL, 0);
  }
  redis_pid = -1;
}

/* ---- the device ---- */

/* The runs copy on the device where there is one, else on the checking fake driver (device
 * memory backed by host memory, tests/fakedriver), which a run loads as its libcuda. */
static void choose_device(void) {
  int count = 0;
  if ((cujit_device_get_count)(&count) == CUJIT_OK && count > 0) {
    printf("the runs copy and launch on the device\n");
    return;
  }
#ifdef CUJIT_CHECKDRIVER_PATH
  if (access(CUJIT_CHECKDRIVER_PATH, R_OK) == 0) {
    setenv("CUJIT_LIBCUDA", CUJIT_CHECKDRIVER_PATH, 1);
    setenv("CHECKDRIVER_DEVICES", "1", 1);
    printf("no device: the runs copy and launch on the checking fake driver\n");
    return;
  }
#endif
  printf("note: no device and no fake driver: the runs make no copies\n");
}

/* ---- descendants ---- */

/* The children of this process (orphans of a run come here: it is their subreaper),
 * the Redis server aside: their number, at most max pids in pids. */
static int children(pid_t *pids, int max) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  int n = 0;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    char path[300], text[1024], *p;
    long pid = strtol(e->d_name, &p, 10), ppid = 0;
    FILE *f;
    if (*p || pid <= 0 || pid == redis_pid) continue;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r"))) continue;
    if (fgets(text, sizeof text, f) && (p = strrchr(text, ')')) != NULL)
      sscanf(p + 1, " %*c %ld", &ppid);
    fclose(f);
    if (ppid == (long)getpid() && n < max) pids[n++] = (pid_t)pid;
  }
  closedir(d);
  return n;
}

/* ---- one run ---- */

typedef struct outcome {
  int exited, status, sig; /* how the run's process ended */
  int hung;                /* killed after 60 s */
  int lingered;            /* processes left 10 s after it ended */
  int kid_status;          /* fork-parent: the child's exit status (-1: not seen) */
  char why[512];           /* what else was wrong; "" when nothing */
} outcome;

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  char *s = calloc(1, 1 << 20);
  size_t n;
  if (!f || !s) {
    if (f) fclose(f);
    return s;
  }
  n = fread(s, 1, (1 << 20) - 1, f);
  s[n] = '\0';
  fclose(f);
  return s;
}

/* Whether the run's output says what it must; the reason in o->why when not. */
static void check_output(int mode, unsigned s, outcome *o, const char *out, const char *err) {
  char want[160];
  snprintf(want, sizeof want, "run %u: %s", s,
           mode == MODE_FORK_CHILD ? "the child ended with status 1"
           : mode == MODE_THREADS  ? "working"
                                   : "child ");
  if (!strstr(out, want)) {
    snprintf(o->why, sizeof o->why, "stdout lacks \"%s\" (not flushed?)", want);
    return;
  }
  if (mode == MODE_FORK_PARENT && !strstr(out, "the child is done")) {
    snprintf(o->why, sizeof o->why, "the forked child did not finish its work");
    return;
  }
  if (strstr(err, "\x1b")) {
    snprintf(o->why, sizeof o->why, "stderr holds a raw ESC");
    return;
  }
  if (!strstr(err, "cujit: cujit_module_")) {
    snprintf(o->why, sizeof o->why, "stderr lacks the error mode's message");
    return;
  }
  /* the failure the run made (fail_now): in fork-child runs the child failed, and never
   * by a lookup */
  snprintf(want, sizeof want,
           s % 3 == 2 && mode != MODE_FORK_CHILD ? "missing_%u" : "stress-%u-\\x1b[31m.cu", s);
  if (!strstr(err, want)) {
    snprintf(o->why, sizeof o->why, "the message is not the run's failure (no \"%s\")", want);
    return;
  }
  if (strstr(err, "waited")) snprintf(o->why, sizeof o->why, "a lock was waited for");
}

static void run_once(int mode, unsigned s, outcome *o) {
  char seed_text[16], out_path[4200], err_path[4200], *out, *err, *p;
  double until;
  pid_t pid, left[64], kid = -1;
  int st = 0, n, i;
  memset(o, 0, sizeof *o);
  o->kid_status = -1;
  snprintf(seed_text, sizeof seed_text, "%u", s);
  snprintf(out_path, sizeof out_path, "%s/out", workdir);
  snprintf(err_path, sizeof err_path, "%s/err", workdir);
  fflush(stdout);
  if ((pid = fork()) == 0) {
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
    setpgid(0, 0);
    if (s % 2) setenv("CUJIT_ERRORS", "exit", 1);
    execl(self, self, "--run", mode_names[mode], seed_text, (char *)NULL);
    _exit(127);
  }
  assert_true(pid > 0);
  for (until = seconds() + 60; waitpid(pid, &st, WNOHANG) == 0; nap_ms(2))
    if (seconds() > until) {
      o->hung = 1;
      kill(-pid, SIGKILL);
    }
  o->exited = WIFEXITED(st);
  o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  out = read_all(out_path);
  err = read_all(err_path);
  /* what the run started: compile workers, a forked child (its pid on stdout) */
  if (mode == MODE_FORK_PARENT && out && (p = strstr(out, ": child ")) != NULL) kid = atoi(p + 8);
  /* the compile workers have 10 s to see that their caller is gone; the child of a
   * fork-parent run has a minute for its work */
  for (until = seconds() + 10; (n = children(left, 64)) > 0; nap_ms(5)) {
    int kid_left = 0;
    for (i = 0; i < n; i++) {
      int ks;
      if (waitpid(left[i], &ks, WNOHANG) != left[i])
        kid_left |= left[i] == kid;
      else if (left[i] == kid)
        o->kid_status = WIFEXITED(ks) ? WEXITSTATUS(ks) : 128 + WTERMSIG(ks);
    }
    if (seconds() > until + (kid_left ? 50 : 0)) break;
  }
  o->lingered = n;
  for (i = 0; i < n; i++) {
    kill(left[i], SIGKILL);
    waitpid(left[i], NULL, 0);
  }
  free(out);
  out = read_all(out_path); /* with what the child printed */
  check_output(mode, s, o, out ? out : "", err ? err : "");
  if (o->why[0] || !o->exited || o->status != (mode == MODE_FORK_CHILD ? 0 : 1))
    printf("run %u (%s): stdout:\n%s\nstderr (first 2000 bytes):\n%.2000s\n", s, mode_names[mode],
           out ? out : "", err ? err : "");
  free(out);
  free(err);
}

static int runs = 100;

static void stress_mode(int mode) {
  int i, ok = 0, crashed = 0, other = 0, hung = 0, lingered = 0, wrong = 0;
  int n = mode == MODE_THREADS ? runs : mode == MODE_FORK_CHILD ? runs / 2 : runs - runs / 2;
  int want = mode == MODE_FORK_CHILD ? 0 : 1;
  double t0 = seconds();
  for (i = 0; i < n; i++) {
    outcome o;
    unsigned s = (unsigned)(mode * 100000 + i);
    run_once(mode, s, &o);
    if (o.hung)
      hung++;
    else if (!o.exited)
      crashed++, printf("run %u (%s): killed by signal %d\n", s, mode_names[mode], o.sig);
    else if (o.status != want)
      other++, printf("run %u (%s): ended with status %d\n", s, mode_names[mode], o.status);
    else if (o.lingered)
      lingered++, printf("run %u (%s): %d processes left\n", s, mode_names[mode], o.lingered);
    else if (o.why[0] || (mode == MODE_FORK_PARENT && o.kid_status != 0))
      wrong++, printf("run %u (%s): %s (the forked child's status: %d)\n", s, mode_names[mode],
                      o.why[0] ? o.why : "the forked child did not end with 0", o.kid_status);
    else
      ok++;
  }
  printf("%s: %d of %d runs ended as they must (%s %d): %d killed by a signal, %d with another "
         "status, %d hung, %d left processes, %d with wrong output; %.1f s\n",
         mode_names[mode], ok, n,
         mode == MODE_FORK_CHILD ? "the child with 1, the parent with" : "status", want, crashed,
         other, hung, lingered, wrong, seconds() - t0);
  assert_int_equal(ok, n);
}

static void error_end_under_threads(void **state) {
  (void)state;
  stress_mode(MODE_THREADS);
}

static void error_end_of_a_forked_child(void **state) {
  (void)state;
  stress_mode(MODE_FORK_CHILD);
}

static void error_end_of_a_parent_whose_child_works(void **state) {
  (void)state;
  stress_mode(MODE_FORK_PARENT);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(error_end_under_threads),
      cmocka_unit_test(error_end_of_a_forked_child),
      cmocka_unit_test(error_end_of_a_parent_whose_child_works),
  };
  ssize_t n;
  char *dir;
  int failed;
  if (argc == 4 && strcmp(argv[1], "--run") == 0) return run_main(argv[2], argv[3]);
  if (argc == 2) runs = atoi(argv[1]);
  if (runs < 1) return fprintf(stderr, "usage: stress_process [RUNS]\n"), 2;
  if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0) return 2;
  self[n] = '\0';
  if (!(dir = test_tempdir("stress"))) return 2;
  snprintf(workdir, sizeof workdir, "%s", dir);
  free(dir);
#if defined(CUJIT_STRESS_BUILD_TYPE) && defined(__OPTIMIZE__)
  printf("build: %s, optimized\n", CUJIT_STRESS_BUILD_TYPE);
#elif defined(CUJIT_STRESS_BUILD_TYPE)
  printf("build: %s, NOT optimized: races that show under load in a release build may not\n",
         CUJIT_STRESS_BUILD_TYPE);
#endif
  prctl(PR_SET_CHILD_SUBREAPER, 1); /* the runs' orphans (workers, children) come here */
  start_redis();
  if (remote[0]) setenv("CUJIT_CACHE_REMOTE", remote, 1);
  choose_device();
  setenv("CUJIT_LOG", "warn", 1);
  setenv("CUJIT_COMPILE_JOBS", "3", 1);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "30", 1);
  failed = cmocka_run_group_tests(tests, NULL, NULL);
  stop_redis();
  test_rmtree(workdir);
  return failed;
}
