/* test_nvrtc_load.c - NVRTC is loaded at run time, on the first compile that needs it: a
 * process whose kernels come from the cache never maps it, and a missing NVRTC is a clear
 * error that leaves cache hits and prebuilt code working. Each check runs in a child
 * process forked from a parent that never compiles, so that every child starts as a new
 * program does: without NVRTC. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachetest.h"
#include "driver/nvrtc.h"

static const char kOther[] = "__global__ void other(int *x) { x[0] = 1; }\n";

/* 1 when this process has a libnvrtc mapped. */
static int nvrtc_mapped(void) {
  char line[4608];
  int found = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, "/libnvrtc.") != NULL;
  fclose(f);
  return found;
}

/* Runs fn in a child process; its result is the child's exit status (0: all held). */
static int in_child(int (*fn)(void)) {
  pid_t pid = fork();
  int status = 0;
  if (pid == 0) _exit(fn());
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

static int compile_once(void) {
  cujit_module *m = NULL;
  int rc = cujit_module_from_source(&m, kKernel, "k.cu", NULL) == CUJIT_OK ? 0 : 1;
  cujit_module_destroy(m);
  return rc;
}

/* A cache hit: the module comes from the disk cache and NVRTC stays unmapped. */
static int hit_without_nvrtc(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_module *m = NULL;
  if (nvrtc_mapped() != 0) return 10; /* the test binary itself must not link it */
  if (cujit_module_from_source(&m, kKernel, "k.cu", NULL) != CUJIT_OK) return 11;
  cujit_module_destroy(m);
  if (cujit_cache_get_stats(&s) != CUJIT_OK || s.hits != 1 || s.compiles != 0) return 12;
  if (cj_nvrtc_loaded() || nvrtc_mapped() != 0) return 13;
  return 0;
}

static void a_cache_hit_never_loads_nvrtc(void **state) {
  char *cache = fresh_cache("nvrtc-hit");
  (void)state;
  assert_int_equal(in_child(compile_once), 0);
  assert_int_equal(in_child(hit_without_nvrtc), 0);
  drop_cache(cache);
}

/* With CUJIT_NVRTC naming no file: a compile fails saying where it looked and what to do;
 * a cache hit and prebuilt PTX still work. */
static int missing_nvrtc(void) {
  static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                            ".visible .entry noop()\n{\n\tret;\n}\n";
  cujit_module *m = NULL;
  cujit_status st;
  setenv("CUJIT_NVRTC", "/nonexistent/libnvrtc.so.13", 1);
  st = cujit_module_from_source(&m, kOther, "other.cu", NULL);
  if (st != CUJIT_ERROR_NO_NVRTC) return 20;
  if (!strstr(cujit_last_error(), "/nonexistent/libnvrtc.so.13") ||
      !strstr(cujit_last_error(), "CUJIT_NVRTC") ||
      !strstr(cujit_last_error(), "need no NVRTC"))
    return 21;
  if (cujit_module_from_source(&m, kKernel, "k.cu", NULL) != CUJIT_OK) return 22;
  cujit_module_destroy(m);
  m = NULL;
  if (cujit_module_from_image(&m, ptx, sizeof ptx - 1, "noop.ptx") != CUJIT_OK) return 23;
  cujit_module_destroy(m);
  return nvrtc_mapped() == 0 ? 0 : 24;
}

static void a_missing_nvrtc_is_a_clear_error(void **state) {
  char *cache = fresh_cache("nvrtc-missing");
  (void)state;
  assert_int_equal(in_child(compile_once), 0);
  assert_int_equal(in_child(missing_nvrtc), 0);
  drop_cache(cache);
}

/* The key names NVRTC by the build ID of the library that would be loaded. */
static int identity_from_build_id(void) {
  const char *id = cj_nvrtc_identity();
  if (strncmp(id, "nvrtc build ", 12) != 0 || strlen(id) < 12 + 16) return 30;
  return cj_nvrtc_loaded() ? 31 : 0;
}

static void nvrtc_is_named_by_its_build(void **state) {
  (void)state;
  assert_int_equal(in_child(identity_from_build_id), 0);
}

/* A file with no build ID (here not a library at all: only its identity is read until a
 * compile loads it) is named by its file name and size; its path and directory are kept
 * as given. */
static int identity_without_build_id(void) {
  char dir[] = "/tmp/cujit-nvrtc-id-XXXXXX", path[128], want[64];
  FILE *f;
  int rc = 0;
  if (!mkdtemp(dir)) return 40;
  snprintf(path, sizeof path, "%s/libnvrtc.so.13", dir);
  if (!(f = fopen(path, "w"))) return 41;
  fputs("not an ELF file, 28 bytes\n..", f);
  fclose(f);
  setenv("CUJIT_NVRTC", path, 1);
  snprintf(want, sizeof want, "libnvrtc.so.13 %d", 28);
  if (strcmp(cj_nvrtc_identity(), want) != 0) rc = 42;
  else if (strcmp(cujit_nvrtc_path(), path) != 0) rc = 43;
  else if (strcmp(cj_nvrtc_dir(), dir) != 0) rc = 44;
  unlink(path);
  rmdir(dir);
  return rc;
}

/* The library the search finds, which has a build ID: identity and directory. */
static int explicit_library(void) {
  char path[4096], dir[4096], *slash;
  const char *found;
  if (!(found = cujit_nvrtc_path()) || !found[0]) return 50; /* the one the search finds */
  snprintf(path, sizeof path, "%s", found);
  snprintf(dir, sizeof dir, "%s", found);
  if (!(slash = strrchr(dir, '/'))) return 51;
  *slash = '\0';
  return strncmp(cj_nvrtc_identity(), "nvrtc build ", 12) != 0 ? 52
         : strcmp(cj_nvrtc_dir(), dir) != 0                   ? 53
                                                               : 0;
}

static void nvrtc_identity_path_and_directory(void **state) {
  (void)state;
  assert_int_equal(in_child(identity_without_build_id), 0);
  assert_int_equal(in_child(explicit_library), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_cache_hit_never_loads_nvrtc),
      cmocka_unit_test(a_missing_nvrtc_is_a_clear_error),
      cmocka_unit_test(nvrtc_is_named_by_its_build),
      cmocka_unit_test(nvrtc_identity_path_and_directory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
