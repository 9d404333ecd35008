/* test_error_end - how the error mode ends a process (cujit_error_exit): with status 1
 * whatever its other threads do (compile, hold stdout's lock, fail at the same moment),
 * stdio flushed, at_quick_exit functions run and atexit ones not, and nothing left behind
 * that the next process trips on: its compile workers end, the key locks it held are
 * taken at once by the next process, its directory of precompiled headers is gone, and
 * the disk cache's hits it counted are written. Each case runs in a child process (this
 * binary again, "--child MODE ARG"); the stress of the same end in a release build under
 * load is stress_process. */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static char *dir; /* the group's temporary directory */

static void nap_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The failing call every child makes: a source that is empty. */
static void fail_here(void) {
  cujit_module *m = NULL;
  cujit_error_set_handler(cujit_error_exit, NULL);
  cujit_module_from_source(&m, "", "the-failure.cu", NULL);
  printf("the failing call returned\n");
  fflush(stdout);
  _exit(3);
}

/* ---- the children ---- */

static void say_now(const char *s) { /* unbuffered: at_quick_exit runs after the flush */
  ssize_t n = write(1, s, strlen(s));
  (void)n;
}
static void at_exit_fn(void) { say_now("atexit ran\n"); }
static void at_quick_exit_fn(void) { say_now("at_quick_exit ran\n"); }

/* Output left in stdio's buffers (stdout is a pipe: fully buffered; a file of its own),
 * an atexit and an at_quick_exit function, then the failure. */
static int child_stdio(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return 4;
  atexit(at_exit_fn);
  at_quick_exit(at_quick_exit_fn);
  printf("buffered in stdout");
  fprintf(f, "buffered in a file");
  fail_here();
  return 3;
}

static int holding; /* the thread holds stdout's lock */

static void *hold_stdout(void *arg) {
  (void)arg;
  flockfile(stdout);
  __atomic_store_n(&holding, 1, __ATOMIC_SEQ_CST);
  for (;;) pause();
  return NULL;
}

/* Another thread holds stdout's lock and never lets go: the flush cannot finish. */
static int child_stdout_held(void) {
  pthread_t t;
  printf("buffered behind a held lock");
  if (pthread_create(&t, NULL, hold_stdout, NULL) != 0) return 4;
  while (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST)) nap_ms(1);
  fail_here();
  return 3;
}

enum { FAILERS = 8 };
static pthread_barrier_t together;

static void *fail_together(void *arg) {
  cujit_module *m = NULL;
  char name[32];
  snprintf(name, sizeof name, "thread-%d.cu", (int)(intptr_t)arg);
  pthread_barrier_wait(&together);
  cujit_module_from_source(&m, "", name, NULL);
  return NULL;
}

/* Eight threads fail at the same moment: one message, one end. */
static int child_together(void) {
  pthread_t t[FAILERS];
  int i;
  cujit_error_set_handler(cujit_error_exit, NULL);
  pthread_barrier_init(&together, NULL, FAILERS);
  for (i = 0; i < FAILERS; i++) pthread_create(&t[i], NULL, fail_together, (void *)(intptr_t)i);
  for (;;) pause();
  return 3;
}

static int started; /* compiling threads that reached NVRTC */

static int note_in_nvrtc(void *user) {
  (void)user;
  __atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
  return 0;
}

/* Compiles sources of its own (the thread's number in arg) until the process ends. */
static void *compile_loop(void *arg) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  char src[256];
  int i;
  o.arch = "compute_80";
  o.cancel = note_in_nvrtc;
  for (i = 0;; i++) {
    cujit_module *m = NULL;
    snprintf(src, sizeof src, "__global__ void k_%d_%d(float *p) { p[0] = %d.0f; }\n",
             (int)(intptr_t)arg, i, i);
    (cujit_module_from_source)(&m, src, "loop.cu", &o);
    cujit_module_destroy(m);
  }
  return NULL;
}

/* Three threads compile; one is inside NVRTC when the main thread fails. */
static int child_compiling(void) {
  pthread_t t[3];
  int i;
  for (i = 0; i < 3; i++) pthread_create(&t[i], NULL, compile_loop, (void *)(intptr_t)i);
  while (!__atomic_load_n(&started, __ATOMIC_SEQ_CST)) nap_ms(1);
  fail_here();
  return 3;
}

/* Batches compile in worker processes (CUJIT_COMPILE_JOBS=3) when the main thread fails. */
static void *batch_loop(void *arg) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  char text[3][256];
  const char *srcs[3] = {text[0], text[1], text[2]};
  cujit_module *mods[3];
  int i, j;
  (void)arg;
  o.arch = "compute_80";
  o.cancel = note_in_nvrtc;
  for (i = 0;; i++) {
    for (j = 0; j < 3; j++)
      snprintf(text[j], sizeof text[j], "__global__ void b_%d_%d(int *p) { *p = %d; }\n", i, j, j);
    (cujit_batch_compile)(mods, NULL, srcs, NULL, 3, &o);
    for (j = 0; j < 3; j++) cujit_module_destroy(mods[j]);
  }
  return NULL;
}

static int child_workers(void) {
  pthread_t t;
  pthread_create(&t, NULL, batch_loop, NULL);
  while (!__atomic_load_n(&started, __ATOMIC_SEQ_CST)) nap_ms(1);
  nap_ms(100); /* the workers are at work too */
  fail_here();
  return 3;
}

/* The key's lock held: a compile of `arg`'s source stays in NVRTC (its cancel hook naps)
 * when the main thread fails. */
static int slow_note(void *user) {
  (void)user;
  __atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
  nap_ms(50);
  return 0;
}

static void *compile_slowly(void *arg) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  o.arch = "compute_80";
  o.cancel = slow_note;
  (cujit_module_from_source)(&m, arg, "held.cu", &o);
  return NULL;
}

static const char kHeldSource[] = "__global__ void held(int *p) { *p = 42; }\n";

static int child_lock_held(void) {
  pthread_t t;
  pthread_create(&t, NULL, compile_slowly, (void *)kHeldSource);
  while (!__atomic_load_n(&started, __ATOMIC_SEQ_CST)) nap_ms(1);
  fail_here();
  return 3;
}

/* Compiles kHeldSource as a process that comes next; 0 when it compiled. */
static int child_compile_held(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  o.arch = "compute_80";
  if ((cujit_module_from_source)(&m, kHeldSource, "held.cu", &o) != CUJIT_OK) {
    printf("%s\n", cujit_last_error());
    return 4;
  }
  cujit_module_destroy(m);
  return 0;
}

/* A source whose <...> header prefix is compiled twice: the second compile makes a
 * precompiled header in the process's directory of them (in TMPDIR). */
static int child_pch(void) {
  static const char *const srcs[] =
      {"#include <cuda_fp16.h>\n__global__ void h1(__half *p) { p[0] = __float2half(1.0f); }\n",
       "#include <cuda_fp16.h>\n__global__ void h2(__half *p) { p[0] = __float2half(2.0f); }\n"};
  cujit_options o = CUJIT_OPTIONS_INIT;
  size_t i;
  o.arch = "compute_80";
  for (i = 0; i < 2; i++) {
    cujit_module *m = NULL;
    if ((cujit_module_from_source)(&m, srcs[i], "half.cu", &o) != CUJIT_OK) return 4;
    cujit_module_destroy(m);
  }
  printf("compiled\n");
  fail_here();
  return 3;
}

/* Hits on the disk cache (the memory cache is off), fewer than a batch of hits the
 * library writes at once. */
static int child_hits(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  int i;
  o.arch = "compute_80";
  for (i = 0; i < 6; i++) {
    cujit_module *m = NULL;
    if ((cujit_module_from_source)(&m, kHeldSource, "hits.cu", &o) != CUJIT_OK) return 4;
    cujit_module_destroy(m);
  }
  fail_here();
  return 3;
}

static int child_main(const char *mode, const char *arg) {
  if (strcmp(mode, "stdio") == 0) return child_stdio(arg);
  if (strcmp(mode, "stdout-held") == 0) return child_stdout_held();
  if (strcmp(mode, "together") == 0) return child_together();
  if (strcmp(mode, "compiling") == 0) return child_compiling();
  if (strcmp(mode, "workers") == 0) return child_workers();
  if (strcmp(mode, "lock-held") == 0) return child_lock_held();
  if (strcmp(mode, "compile-held") == 0) return child_compile_held();
  if (strcmp(mode, "pch") == 0) return child_pch();
  if (strcmp(mode, "hits") == 0) return child_hits();
  return 9;
}

/* ---- running a child ---- */

typedef struct ended {
  int exited, status, sig;
  char out[16384], err[16384];
} ended;

static void read_into(int fd, char *buf, size_t size) {
  size_t n = 0;
  ssize_t k;
  while (n + 1 < size && (k = read(fd, buf + n, size - 1 - n)) != 0)
    if (k > 0)
      n += (size_t)k;
    else if (errno != EINTR)
      break;
  buf[n] = '\0';
}

/* Runs this binary as "--child mode arg" with `env` (up to two NAME=VALUE, or NULL) added;
 * fails the test when it has not ended within 60 s (a hang). */
static void run_env(const char *mode, const char *arg, const char *env, const char *env2,
                    ended *e) {
  char self[4096], out_path[4200], err_path[4200];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  double until = seconds() + 60;
  int st = 0, fd;
  pid_t pid;
  assert_true(n > 0);
  self[n] = '\0';
  snprintf(out_path, sizeof out_path, "%s/out", dir);
  snprintf(err_path, sizeof err_path, "%s/err", dir);
  if ((pid = fork()) == 0) {
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
    if (env) putenv((char *)env);
    if (env2) putenv((char *)env2);
    execl(self, self, "--child", mode, arg ? arg : "-", (char *)NULL);
    _exit(127);
  }
  assert_true(pid > 0);
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (seconds() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      fail_msg("the child (%s) did not end within 60 s", mode);
    }
    nap_ms(2);
  }
  e->exited = WIFEXITED(st);
  e->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  e->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  assert_true((fd = open(out_path, O_RDONLY)) >= 0);
  read_into(fd, e->out, sizeof e->out);
  close(fd);
  assert_true((fd = open(err_path, O_RDONLY)) >= 0);
  read_into(fd, e->err, sizeof e->err);
  close(fd);
}

static void run(const char *mode, const char *arg, const char *env, ended *e) {
  run_env(mode, arg, env, NULL, e);
}

static void assert_ended_in_error_mode(const ended *e) {
  if (!e->exited || e->status != 1)
    fail_msg("the child ended with %s %d, not status 1; stdout:\n%s\nstderr:\n%s",
             e->exited ? "status" : "signal", e->exited ? e->status : e->sig, e->out, e->err);
  assert_non_null(strstr(e->err, "cujit: cujit_module_from_source: CUJIT_ERROR_INVALID_SOURCE: "));
}

/* ---- the tests ---- */

/* stdio's buffers are flushed, at_quick_exit functions run, atexit functions do not. */
static void stdio_is_flushed_and_quick_exit_functions_run(void **state) {
  char path[4200], text[256];
  ended e;
  FILE *f;
  size_t n;
  (void)state;
  snprintf(path, sizeof path, "%s/file.txt", dir);
  run("stdio", path, NULL, &e);
  assert_ended_in_error_mode(&e);
  assert_non_null(strstr(e.out, "buffered in stdout"));
  assert_non_null(strstr(e.out, "at_quick_exit ran"));
  assert_null(strstr(e.out, "atexit ran"));
  assert_null(strstr(e.out, "the failing call returned"));
  assert_non_null(f = fopen(path, "r"));
  n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  assert_string_equal(text, "buffered in a file");
}

/* A thread that holds stdout's lock forever cannot keep the process from ending: stdout
 * is flushed without the lock after a second (as exit() does), and the process ends with
 * status 1 when the rest of the flush waits on the held lock past the grace period. */
static void a_held_stream_does_not_stop_the_end(void **state) {
  ended e;
  (void)state;
  run("stdout-held", NULL, NULL, &e);
  assert_ended_in_error_mode(&e);
  assert_non_null(strstr(e.out, "buffered behind a held lock"));
}

/* Threads failing together: the first ends the process, the others print nothing. */
static void threads_failing_together_end_it_once(void **state) {
  const char *p;
  ended e;
  int lines = 0;
  (void)state;
  run("together", NULL, NULL, &e);
  if (!e.exited || e.status != 1)
    fail_msg("ended with %s %d", e.exited ? "status" : "signal", e.exited ? e.status : e.sig);
  for (p = e.err; (p = strstr(p, "cujit: cujit_module_from_source: ")) != NULL; p++) lines++;
  assert_int_equal(lines, 1);
}

/* The end while other threads compile, five times. */
static void the_end_while_threads_compile(void **state) {
  ended e;
  int i;
  (void)state;
  for (i = 0; i < 5; i++) {
    run("compiling", NULL, NULL, &e);
    assert_ended_in_error_mode(&e);
  }
}

/* The process's children, at most max, into pids. */
static int children(pid_t *pids, int max) {
  DIR *d = opendir("/proc");
  struct dirent *de;
  int n = 0;
  if (!d) return 0;
  while ((de = readdir(d)) != NULL) {
    char path[300], text[1024], *p;
    long pid = strtol(de->d_name, &p, 10), ppid = 0;
    FILE *f;
    if (*p || pid <= 0) continue;
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

/* The compile workers of a process that ended end too (this process is their subreaper,
 * so they come here), within 10 s. */
static void workers_do_not_outlive_their_caller(void **state) {
  pid_t left[64];
  double until;
  ended e;
  int n, i;
  (void)state;
  assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  run("workers", NULL, "CUJIT_COMPILE_JOBS=3", &e);
  assert_ended_in_error_mode(&e);
  for (until = seconds() + 10; (n = children(left, 64)) > 0 && seconds() < until; nap_ms(5))
    for (i = 0; i < n; i++) waitpid(left[i], NULL, WNOHANG);
  for (i = 0; i < n; i++) {
    kill(left[i], SIGKILL);
    waitpid(left[i], NULL, 0);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  if (n) fail_msg("%d processes (compile workers) outlived the process by 10 s", n);
}

/* A process that ended in the error mode while it held a key's lock (its thread inside
 * NVRTC) makes the next process wait for nothing: it takes the lock file left behind. */
static void a_lock_left_behind_costs_no_wait(void **state) {
  ended e;
  (void)state;
  run("lock-held", NULL, NULL, &e);
  assert_ended_in_error_mode(&e);
  run("compile-held", NULL, "CUJIT_LOG=warn", &e);
  assert_int_equal(e.status, 0);
  assert_null(strstr(e.err, "waited"));
}

/* The directory of precompiled headers the process made in TMPDIR is removed. */
static void the_precompiled_headers_go(void **state) {
  char tmpdir[4200], env[4300];
  struct dirent *de;
  ended e;
  DIR *d;
  int left = 0;
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir);
  assert_int_equal(mkdir(tmpdir, 0700), 0);
  snprintf(env, sizeof env, "TMPDIR=%s", tmpdir);
  run("pch", NULL, env, &e);
  assert_non_null(strstr(e.out, "compiled"));
  assert_ended_in_error_mode(&e);
  assert_non_null(d = opendir(tmpdir));
  while ((de = readdir(d)) != NULL) left += strncmp(de->d_name, "cujit-pch-", 10) == 0;
  closedir(d);
  assert_int_equal(left, 0);
}

/* The hits the process counted but had not yet written are in the cache's statistics. */
static void the_cache_hits_are_written(void **state) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  char cache[4200], env[4300];
  ended e;
  (void)state;
  snprintf(cache, sizeof cache, "%s/hits", dir);
  snprintf(env, sizeof env, "CUJIT_CACHE_DIR=%s", cache);
  run_env("hits", NULL, "CUJIT_MEMORY_CACHE_MAX_SIZE=0", env, &e);
  assert_ended_in_error_mode(&e);
  assert_ok(cujit_cache_set_dir(cache));
  assert_ok(cujit_cache_get_disk_stats(&s));
  assert_int_equal(s.hits, 5); /* the first compile missed */
  assert_ok(cujit_cache_set_dir(NULL));
}

static int group_setup(void **state) {
  (void)state;
  return (dir = test_tempdir("end")) ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  test_rmtree(dir);
  free(dir);
  return 0;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stdio_is_flushed_and_quick_exit_functions_run),
      cmocka_unit_test(a_held_stream_does_not_stop_the_end),
      cmocka_unit_test(threads_failing_together_end_it_once),
      cmocka_unit_test(the_end_while_threads_compile),
      cmocka_unit_test(workers_do_not_outlive_their_caller),
      cmocka_unit_test(a_lock_left_behind_costs_no_wait),
      cmocka_unit_test(the_precompiled_headers_go),
      cmocka_unit_test(the_cache_hits_are_written),
  };
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], argv[3]);
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
