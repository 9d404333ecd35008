/* test_cache_procs - the cache shared by processes: 16 processes compiling the same source
 * into an empty cache compile it once (the others wait on the key's lock and then hit),
 * 16 with different sources all store theirs, a fresh process hits without creating an
 * NVRTC program, a lock holder that dies, hangs or is stopped does not block others, and a
 * cache that cannot be written (read-only, file size limit) never fails a compile.
 * The children are this binary again ("--child MODE ARG"). */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "cachetest.h"

enum { PROCS = 16 };

/* The source of variant `v` ("-": the plain kernel). */
static void variant_source(const char *v, char *out, size_t size) {
  if (strcmp(v, "-") == 0)
    snprintf(out, size, "%s", kKernel);
  else
    snprintf(out, size, "%s// variant %s\n", kKernel, v);
}

/* ---- children ---- */

static int never_ready(void *ctx) {
  (void)ctx;
  return 0;
}

/* Compiles variant `v`; exit status 100 + NVRTC programs created + 10 when a warning was
 * logged; 1 on failure. */
static int child_compile(const char *v) {
  char src[512];
  variant_source(v, src, sizeof src);
  return child_compile_source(src, "p.cu");
}

/* The directory of `path`, opened, and its last part. */
static int open_parent(const char *path, const char **name) {
  char dir[4300];
  snprintf(dir, sizeof dir, "%s", path);
  *strrchr(dir, '/') = '\0';
  *name = strrchr(path, '/') + 1;
  return open(dir, O_RDONLY | O_DIRECTORY);
}

/* Holds the lock file `path` until killed; creates path.held once it does. */
static int child_hold(const char *path) {
  char held[4300];
  const char *name;
  cj_lock lock;
  FILE *f;
  int dir = open_parent(path, &name);
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed */
  if (cj_lock_try(dir, name, &lock) != CJ_LOCK_HELD) return 3;
  snprintf(held, sizeof held, "%s.held", path);
  if (!(f = fopen(held, "w"))) return 4;
  fclose(f);
  for (;;) pause();
}

/* Takes the lock file `path` as a compile does, then stops itself (as a process stopped by
 * Ctrl-Z or a debugger in the middle of a compile) until killed. */
static int child_stop(const char *path) {
  const char *name;
  cj_lock lock;
  int dir = open_parent(path, &name);
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed */
  if (cj_lock_acquire(dir, name, "p.cu", 1, never_ready, NULL, &lock) != CJ_LOCK_HELD) return 3;
  raise(SIGSTOP);
  for (;;) pause();
}

/* Takes the lock file `path` as a compile does, forks a child that keeps the lock's
 * descriptor (as a program's fork during a compile does) and writes its pid to path.held,
 * then ends without releasing the lock (as the error mode's end or a crash would). */
static int child_orphan(const char *path) {
  char held[4300];
  const char *name;
  cj_lock lock;
  FILE *f;
  pid_t pid;
  int dir = open_parent(path, &name);
  if (cj_lock_acquire(dir, name, "p.cu", 1, never_ready, NULL, &lock) != CJ_LOCK_HELD) return 3;
  pid = fork();
  if (pid < 0) return 4;
  if (pid == 0) { /* keeps the descriptor until killed (or for a minute at most) */
    alarm(60);
    for (;;) pause();
  }
  snprintf(held, sizeof held, "%s.held", path);
  if (!(f = fopen(held, "w"))) return 5;
  fprintf(f, "%d\n", (int)pid);
  fclose(f);
  _exit(0);
}

static int child_main(const char *mode, const char *arg) {
  if (strcmp(mode, "compile") == 0) return child_compile(arg);
  if (strcmp(mode, "hold") == 0) return child_hold(arg);
  if (strcmp(mode, "stop") == 0) return child_stop(arg);
  if (strcmp(mode, "orphan") == 0) return child_orphan(arg);
  if (strcmp(mode, "nobody") == 0) { /* as an unprivileged user */
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 5;
    return child_compile(arg);
  }
  if (strcmp(mode, "fsize") == 0) { /* with a file size limit: writes fail with EFBIG */
    struct rlimit rl = {64, 64};
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 6;
    return child_compile(arg);
  }
  return 7;
}

/* ---- running children ---- */

/* Starts n children of `mode` with args[i], all released at once; fills status[i]. */
static void run_children(const char *mode, const char *const *args, int n, int *status) {
  pid_t pids[PROCS];
  int gate[2], i;
  assert_true(n <= PROCS);
  assert_int_equal(pipe2(gate, O_CLOEXEC), 0); /* children keep only their stdin copy */
  for (i = 0; i < n; i++) {
    pids[i] = spawn_child(mode, args[i], gate[0]);
    assert_true(pids[i] > 0);
  }
  close(gate[0]);
  close(gate[1]); /* go */
  for (i = 0; i < n; i++) status[i] = wait_child(pids[i]);
}

static int run_one(const char *mode, const char *arg) {
  int status;
  run_children(mode, &arg, 1, &status);
  return status;
}

static void same_source_compiles_once(void **state) {
  const char *args[PROCS];
  int status[PROCS], i, programs = 0;
  cujit_cache_stats d = CUJIT_CACHE_STATS_INIT;
  char paths[4][4200];
  (void)state;
  for (i = 0; i < PROCS; i++) args[i] = "-";
  run_children("compile", args, PROCS, status);
  for (i = 0; i < PROCS; i++) {
    if (status[i] != 100 && status[i] != 101) fail_msg("child %d exited with %d", i, status[i]);
    programs += status[i] - 100;
  }
  assert_int_equal(programs, 1);
  assert_ok(cujit_cache_get_disk_stats(&d));
  assert_int_equal(d.compiles, 1);
  assert_int_equal(d.misses, 1);
  assert_int_equal(d.hits, PROCS - 1);
  assert_int_equal(find_entries(cache, paths, 4), 1);
  assert_int_equal(count_files(cache, ".lock"), 0);
  assert_int_equal(count_files(cache, ".tmp"), 0);
  /* the entry is valid: this process and a fresh one hit it */
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 0);
  assert_int_equal(run_one("compile", "-"), 100);
}

static void different_sources_all_stored(void **state) {
  static char names[PROCS][8];
  const char *args[PROCS];
  int status[PROCS], i;
  cujit_cache_stats d = CUJIT_CACHE_STATS_INIT;
  char paths[PROCS + 1][4200], src[512];
  cujit_options o = ptx_options();
  (void)state;
  for (i = 0; i < PROCS; i++) {
    snprintf(names[i], sizeof names[i], "%d", i);
    args[i] = names[i];
  }
  run_children("compile", args, PROCS, status);
  for (i = 0; i < PROCS; i++)
    if (status[i] != 101) fail_msg("child %d exited with %d", i, status[i]);
  assert_int_equal(find_entries(cache, paths, PROCS + 1), PROCS);
  assert_ok(cujit_cache_get_disk_stats(&d));
  assert_int_equal(d.compiles, PROCS);
  for (i = 0; i < PROCS; i++) {
    variant_source(names[i], src, sizeof src);
    assert_int_equal(compile_count(src, "p.cu", &o), 0);
  }
}

/* ---- locks ---- */

static void wait_for_file(const char *path) {
  struct timespec t = {0, 5000000};
  int i;
  for (i = 0; i < 2000 && access(path, F_OK) != 0; i++) nanosleep(&t, NULL);
  assert_int_equal(access(path, F_OK), 0);
}

/* The lock file a compile of kKernel with ptx_options() as "p.cu" uses. */
static char lock_path[4400], shard_path[4400]; /* of the kernel's entry */

static void lock_path_of_kernel(cj_entry_path *p) {
  cujit_options o = ptx_options();
  char why[256];
  cj_root root;
  cj_request r;
  cj_key rk, dk;
  cj_deps *deps = NULL;
  assert_ok(cj_request_init(&r, kKernel, "p.cu", &o, NULL));
  assert_ok(cj_key_request(&r, &rk));
  assert_ok(cj_scan_request(&r, &deps, why, sizeof why));
  cj_key_disk(&rk, deps, &dk);
  cj_deplist_destroy(deps);
  cj_request_free(&r);
  assert_int_equal(cj_root_open(&root, 0), 0);
  assert_int_equal(cj_disk_entry_open(&root, &dk, 1, p), 0);
  snprintf(lock_path, sizeof lock_path, "%s/%s/%s", root.path, p->shard, p->lock);
  snprintf(shard_path, sizeof shard_path, "%s/%s", root.path, p->shard);
  cj_root_close(&root);
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A child process that holds the lock of the kernel's entry (until killed). */
static pid_t start_holder(cj_entry_path *p) {
  char held[4300];
  pid_t pid;
  lock_path_of_kernel(p);
  snprintf(held, sizeof held, "%s.held", lock_path);
  pid = spawn_child("hold", lock_path, -1);
  wait_for_file(held);
  return pid;
}

static void dead_holder_releases(void **state) {
  cj_entry_path p;
  cj_lock lock;
  pid_t pid;
  (void)state;
  pid = start_holder(&p);
  assert_int_equal(cj_lock_try(p.dir, p.lock, &lock), CJ_LOCK_BUSY);
  kill(pid, SIGKILL);
  assert_int_equal(wait_child(pid), -1);
  /* died: the lock went with it */
  assert_int_equal(cj_lock_try(p.dir, p.lock, &lock), CJ_LOCK_HELD);
  cj_lock_release(p.dir, p.lock, &lock);
  assert_int_equal(access(lock_path, F_OK), -1);
  /* a stale lock file left behind does not block a compile */
  assert_int_equal(test_write_file(shard_path, p.lock, ""), 0);
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 1);
  assert_int_equal(access(lock_path, F_OK), -1);
  cj_disk_entry_close(&p);
}

static int stop_now(void *user) {
  (void)user;
  return 1;
}

static void hung_holder_times_out(void **state) {
  cujit_module *m = NULL;
  cj_entry_path p;
  cj_lock lock;
  double t0;
  pid_t pid;
  (void)state;
  pid = start_holder(&p);
  t0 = seconds();
  assert_int_equal(cj_lock_acquire(p.dir, p.lock, "p.cu", 0.2, never_ready, NULL, &lock),
                   CJ_LOCK_NONE);
  assert_true(seconds() - t0 >= 0.2);
  assert_logged("waited");
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "0.3", 1);
  log_capture(CUJIT_LOG_WARN);
  t0 = seconds();
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 1);
  assert_true(seconds() - t0 >= 0.3);
  assert_logged("compiling it here as well (CUJIT_CACHE_LOCK_TIMEOUT");
  /* a time limit or a cancel hook holds while waiting for the holder, too */
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "30", 1);
  cj_memcache_clear();
  assert_int_equal(unlinkat(p.dir, p.name, 0), 0); /* the entry written above: wait again */
  t0 = seconds();
  assert_status_detail(cujit_module_from_source(&m, kKernel, "p.cu",
                                                &(cujit_options){.size = sizeof(cujit_options),
                                                                 .arch = "compute_80",
                                                                 .time_limit_s = 0.2}),
                       CUJIT_ERROR_CANCELLED,
                       "stopped by its time limit while another process compiled");
  assert_true(seconds() - t0 < 10);
  assert_status_detail(cujit_module_from_source(&m, kKernel, "p.cu",
                                                &(cujit_options){.size = sizeof(cujit_options),
                                                                 .arch = "compute_80",
                                                                 .cancel = stop_now}),
                       CUJIT_ERROR_CANCELLED,
                       "cancelled by its cancel hook while another process compiled");
  assert_null(m);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "0.3", 1); /* the entry again, for what follows */
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 1);
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  kill(pid, SIGKILL);
  wait_child(pid);
  cj_memcache_clear();
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 0);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "soon", 1);
  log_capture(CUJIT_LOG_WARN);
  assert_true(cj_cachedir_lock_timeout() == 60.0);
  assert_logged("CUJIT_CACHE_LOCK_TIMEOUT='soon' is not a number of seconds");
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  cj_disk_entry_close(&p);
}

/* Waits for the lock of p held by `pid` until the timeout (3 s, past the 2 s after which
 * a stopped holder is given up on), then kills the holder and closes p. */
static void waited_out_then_killed(cj_entry_path *p, pid_t pid) {
  cj_lock lock;
  log_capture(CUJIT_LOG_WARN);
  assert_int_equal(cj_lock_acquire(p->dir, p->lock, "p.cu", 3, never_ready, NULL, &lock),
                   CJ_LOCK_NONE);
  assert_logged("waited 3.");
  assert_not_logged("is stopped");
  kill(pid, SIGKILL);
  wait_child(pid);
  cj_disk_entry_close(p);
}

/* A holder stopped while it holds the key's lock (SIGSTOP, Ctrl-Z, a debugger) is seen
 * stopped, and the compile goes on here long before the lock's timeout; a holder that is
 * alive, or that cannot be looked up on this machine, is waited for until the timeout. */
static void stopped_holder_is_not_waited_for(void **state) {
  char needle[128], record[256];
  cj_entry_path p;
  double t0;
  pid_t pid;
  int st, fd;
  ssize_t n;
  char *boot;
  (void)state;
  lock_path_of_kernel(&p);
  pid = spawn_child("stop", lock_path, -1);
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
  assert_true(WIFSTOPPED(st));
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "30", 1);
  t0 = seconds();
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 1);
  snprintf(needle, sizeof needle, "the process %d holding the lock of 'p.cu' is stopped", (int)pid);
  assert_logged(needle);
  assert_logged("compiling it here as well");
  assert_not_logged("waited");
  assert_true(seconds() - t0 < 15); /* a bound on a hang, not a timing: the timeout is 30 s */
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  /* its lock file names a holder on another machine (another boot): not looked up here */
  assert_true((fd = open(lock_path, O_RDWR)) >= 0);
  n = pread(fd, record, sizeof record - 1, 0);
  assert_true(n > 0);
  record[n] = '\0';
  assert_non_null(boot = strstr(record, "boot "));
  boot[5] = boot[5] == '0' ? '1' : '0';
  assert_int_equal(pwrite(fd, record, (size_t)n, 0), n);
  close(fd);
  waited_out_then_killed(&p, pid);
  /* a holder that is alive (asleep, using no CPU) is waited for */
  pid = start_holder(&p);
  waited_out_then_killed(&p, pid);
}

/* A holder that ended while a child it forked keeps its lock's descriptor (so the lock
 * stays held, and nobody will write the entry) is not waited for. */
static void ended_holder_is_not_waited_for(void **state) {
  char held[4300], needle[160];
  cj_entry_path p;
  double t0;
  pid_t pid;
  FILE *f;
  int keeper = 0;
  cj_lock lock;
  (void)state;
  lock_path_of_kernel(&p);
  snprintf(held, sizeof held, "%s.held", lock_path);
  pid = spawn_child("orphan", lock_path, -1);
  assert_true(pid > 0);
  assert_int_equal(wait_child(pid), 0);
  wait_for_file(held);
  assert_non_null(f = fopen(held, "r"));
  assert_int_equal(fscanf(f, "%d", &keeper), 1);
  fclose(f);
  assert_true(keeper > 0);
  assert_int_equal(cj_lock_try(p.dir, p.lock, &lock), CJ_LOCK_BUSY); /* the child holds it */
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "30", 1);
  log_capture(CUJIT_LOG_WARN);
  t0 = seconds();
  assert_int_equal(compile_count(kKernel, "p.cu", &(cujit_options){.arch = "compute_80"}), 1);
  snprintf(needle, sizeof needle, "the process %d that took the lock of 'p.cu' has ended",
           (int)pid);
  assert_logged(needle);
  assert_not_logged("waited");
  assert_true(seconds() - t0 < 15); /* a bound on a hang, not a timing: the timeout is 30 s */
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  kill(keeper, SIGKILL); /* the grandchild: init reaps it */
  unlink(held);
  cj_disk_entry_close(&p);
}

/* ---- caches that cannot be written ---- */

/* A read-only cache: compiles succeed with a warning. Run as an unprivileged user when this
 * test runs as root (root writes anywhere); a cache warmed beforehand still hits. */
static void read_only_directory(void **state) {
  char cmd[4400];
  (void)state;
  if (geteuid() == 0) {
    /* nobody must be able to reach the cache and own it */
    snprintf(cmd, sizeof cmd,
             "chmod 755 \"$(dirname '%s')\" && mkdir -p '%s' && chown "
             "65534:65534 '%s' && chmod 500 '%s'",
             cache, cache, cache, cache);
  } else {
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && chmod 500 '%s'", cache, cache);
  }
  assert_int_equal(system(cmd), 0);
  assert_int_equal(run_one("nobody", "-"), 111); /* compiled, warned */
  assert_int_equal(count_files(cache, ".cujit"), 0);
  /* warm it as its owner would, then read-only again: the next process hits */
  snprintf(cmd, sizeof cmd, "chmod 700 '%s'", cache);
  assert_int_equal(system(cmd), 0);
  if (geteuid() == 0) {
    assert_int_equal(run_one("nobody", "warm"), 101);
    snprintf(cmd, sizeof cmd, "chmod -R a-w '%s'", cache);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run_one("nobody", "warm"), 100);
  } else {
    assert_int_equal(run_one("compile", "warm"), 101);
    snprintf(cmd, sizeof cmd, "chmod -R a-w '%s'", cache);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run_one("compile", "warm"), 100);
  }
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'", cache);
  assert_int_equal(system(cmd), 0);
}

/* Writing the entry fails (file size limit: the same path as a full disk): the compile
 * succeeds, a warning says so, and no temporary file is left behind. */
static void failed_write_is_not_an_error(void **state) {
  (void)state;
  assert_int_equal(run_one("fsize", "-"), 111);
  assert_int_equal(count_files(cache, ".cujit"), 0);
  assert_int_equal(count_files(cache, ".tmp"), 0);
  assert_int_equal(run_one("compile", "-"), 101); /* and the next process stores it */
  assert_int_equal(count_files(cache, ".cujit"), 1);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      CACHE_TEST(same_source_compiles_once),
      CACHE_TEST(different_sources_all_stored),
      CACHE_TEST(dead_holder_releases),
      CACHE_TEST(hung_holder_times_out),
      CACHE_TEST(stopped_holder_is_not_waited_for),
      CACHE_TEST(ended_holder_is_not_waited_for),
      CACHE_TEST(read_only_directory),
      CACHE_TEST(failed_write_is_not_an_error),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], argv[3]);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
