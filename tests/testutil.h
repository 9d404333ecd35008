/* testutil.h - helpers shared by the test groups (cmocka). */
#ifndef CUJIT_TESTUTIL_H
#define CUJIT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "cujit.h"

/* Exit code that CTest reports as "skipped" (SKIP_RETURN_CODE). */
#define TEST_SKIP_CODE 77

/* Set once a test of the group skipped something it could not check here. */
static inline int *test_skipped_flag(void) {
  static int skipped;
  return &skipped;
}

/* A test, or a part of one, that cannot run here (no root, no nvcc): prints "SKIP: " and
 * the reason (scripts/skip-reasons shows the first) and marks the group, whose main then
 * returns test_group_result(): CTest reports it skipped, never passed. The caller calls
 * skip() after it to skip the whole test. */
static inline void test_skip_part(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void test_skip_part(const char *fmt, ...) {
  va_list ap;
  printf("SKIP: ");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  *test_skipped_flag() = 1;
}

/* What a group's main returns after cmocka_run_group_tests() gave `failed`: the failures,
 * else TEST_SKIP_CODE when something was skipped, else 0. */
static inline int test_group_result(int failed) {
  return failed ? failed : *test_skipped_flag() ? TEST_SKIP_CODE : 0;
}

/* For GPU groups: returns 1 when a CUDA device is usable. Otherwise prints why to stdout
 * and returns 0; the group's main then returns TEST_SKIP_CODE. */
static inline int test_have_gpu(void) {
  int n = 0;
  if (cujit_device_get_count(&n) != CUJIT_OK || n == 0) {
    printf("SKIP: no usable CUDA device: %s\n", n == 0 && cujit_last_error()[0] == '\0'
                                                    ? "the driver reports 0 devices"
                                                    : cujit_last_error());
    return 0;
  }
  return 1;
}

/* Asserts that `st` is `want` and that the thread's detail contains `needle`. */
#define assert_status_detail(st, want, needle)                             \
  do {                                                                     \
    cujit_status st_ = (st);                                               \
    if (st_ != (want))                                                     \
      fail_msg("status %s, wanted %s; detail: %s", cujit_status_name(st_), \
               cujit_status_name(want), cujit_last_error());               \
    if (!strstr(cujit_last_error(), (needle)))                             \
      fail_msg("detail lacks \"%s\": %s", (needle), cujit_last_error());   \
  } while (0)

#define assert_ok(st)                                                                    \
  do {                                                                                   \
    cujit_status st_ = (st);                                                             \
    if (st_ != CUJIT_OK) fail_msg("%s: %s", cujit_status_name(st_), cujit_last_error()); \
  } while (0)

/* A fresh private directory under $TMPDIR (or /tmp); caller frees the string. */
static inline char *test_tempdir(const char *tag) {
  const char *base = getenv("TMPDIR");
  char *p = malloc(4096);
  snprintf(p, 4096, "%s/cujit-%s-XXXXXX", base && *base ? base : "/tmp", tag);
  if (!mkdtemp(p)) {
    free(p);
    return NULL;
  }
  return p;
}

/* Writes text to dir/name; returns 0 on success. */
static inline int test_write_file(const char *dir, const char *name, const char *text) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

/* Runs a shell command with stdout and stderr captured into out (NUL-terminated).
 * Returns its exit status, or -1 when it did not exit normally. */
static inline int test_capture(const char *cmd, char *out, size_t size) {
  FILE *p = popen(cmd, "r");
  size_t n;
  int st;
  if (!p) return -1;
  n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Removes a directory tree (test cleanup). */
static inline void test_rmtree(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

#endif
