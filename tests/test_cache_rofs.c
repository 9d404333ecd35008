/* test_cache_rofs - a cache directory on a read-only file system (EROFS): a miss still
 * compiles (the write fails, a warning says so, nothing is left behind) and an entry
 * written before the file system went read-only is still a hit. The read-only mount is
 * made in a private mount namespace, which needs root (CAP_SYS_ADMIN); without it the
 * group says so and is reported as skipped. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char *dir;
static char cache[4200];
static char warned[1024];

static void on_log(cujit_log_level level, const char *msg, void *user) {
  (void)user;
  if (level == CUJIT_LOG_WARN && !warned[0]) snprintf(warned, sizeof warned, "%s", msg);
}

static cujit_status compile(const char *src) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  cujit_status st;
  o.arch = "compute_80";
  st = cujit_module_from_source(&m, src, "rofs.cu", &o);
  cujit_module_destroy(m);
  return st;
}

/* In the child: makes `dir` read-only in a private mount namespace. 0 on success. */
static int make_read_only(void) {
  if (unshare(CLONE_NEWNS) != 0) return -1;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
  if (mount(dir, dir, NULL, MS_BIND, NULL) != 0) return -1;
  return mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
}

/* The child's checks; its exit code: 0 pass, 77 cannot make the mount, else the step. */
static int child(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  if (cujit_cache_set_dir(cache) != CUJIT_OK) return 1;
  if (make_read_only() != 0) return 77;
  if (access(cache, W_OK) == 0 || errno != EROFS) return 2;
  cujit_log_set_callback(on_log, NULL);
  cujit_log_set_level(CUJIT_LOG_WARN);
  /* a hit on the entry written before */
  if (compile("__global__ void warm(int *x) { x[0] = 1; }\n") != CUJIT_OK) return 3;
  if (cujit_cache_get_stats(&s) != CUJIT_OK || s.compiles != 0 || s.hits != 1) return 4;
  /* a miss compiles anyway and warns */
  if (compile("__global__ void cold(int *x) { x[0] = 2; }\n") != CUJIT_OK) return 5;
  if (cujit_cache_get_stats(&s) != CUJIT_OK || s.compiles != 1) return 6;
  if (!warned[0]) return 7;
  printf("warning seen: %s\n", warned);
  fflush(stdout);
  return 0;
}

/* Runs fn in a child process (so that no memory cache carries over); its exit code. */
static int in_child(int (*fn)(void)) {
  int status = 0;
  pid_t pid;
  fflush(stdout);
  pid = fork();
  if (pid == 0) _exit(fn());
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

static int write_warm_entry(void) {
  return cujit_cache_set_dir(cache) == CUJIT_OK &&
                 compile("__global__ void warm(int *x) { x[0] = 1; }\n") == CUJIT_OK
             ? 0
             : 1;
}

static void read_only_file_system(void **state) {
  int rc;
  (void)state;
  assert_int_equal(in_child(write_warm_entry), 0); /* the entry exists before the mount */
  rc = in_child(child);
  if (rc == 77) {
    test_skip_part("cannot make a read-only mount here (unshare or mount refused)");
    return;
  }
  if (rc != 0) fail_msg("read-only cache: check %d failed", rc);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(read_only_file_system)};
  int rc;
  dir = test_tempdir("rofs");
  if (!dir) return 1;
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  if (geteuid() != 0) {
    printf("SKIP: a read-only mount in a private namespace needs root\n");
    test_rmtree(dir);
    return TEST_SKIP_CODE;
  }
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  test_rmtree(dir);
  free(dir);
  return test_group_result(rc);
}
