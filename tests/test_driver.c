/* test_driver - behaviour without a CUDA driver: every device call fails with
 * CUJIT_ERROR_NO_DRIVER and says so, while compiling still works. The driver path is forced
 * to a missing file, so this runs the same on machines with and without a GPU. */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static void device_calls_report_no_driver(void **state) {
  int v = -1;
  CUdeviceptr p = 0;
  void *fn = NULL;
  (void)state;
  assert_status_detail(cujit_driver_get_version(&v), CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  assert_non_null(strstr(cujit_last_error(), "/nonexistent/libcuda.so.1 (from CUJIT_LIBCUDA"));
  assert_status_detail(cujit_device_get_count(&v), CUJIT_ERROR_NO_DRIVER,
                       "install the NVIDIA driver");
  assert_int_equal(v, 0);
  assert_int_equal(cujit_driver_get_symbol("cuMemAlloc", &fn), CUJIT_ERROR_NO_DRIVER);
  assert_null(fn);
  assert_int_equal(cujit_device_get_info(0, NULL, 0, NULL, NULL), CUJIT_ERROR_NO_DRIVER);
  (void)p;
}

static void compile_works_without_driver(void **state) {
  cujit_module *m = NULL;
  size_t n = 0;
  (void)state;
  assert_ok(cujit_module_from_source(&m, "__global__ void k(int *x) { *x = 1; }", "k.cu", NULL));
  /* no device to choose an arch: NVRTC's default virtual target, PTX only */
  assert_non_null(strstr(cujit_module_ptx(m, &n), ".entry"));
  assert_true(n > 0);
  assert_null(cujit_module_cubin(m, &n));
  assert_int_equal(n, 0);
  assert_memory_equal(cujit_module_arch(m), "compute_", 8);
  cujit_module_destroy(m);
}

/* ---- CUJIT_DEVICE: read once per process, so each value is tried in a child ---- */

/* In a child: 0 when `st` is `want` and the detail holds `needle`, else 1 (and says why). */
static int child_check(cujit_status st, cujit_status want, const char *needle) {
  if (st == want && strstr(cujit_last_error(), needle)) return 0;
  printf("got %s, wanted %s with \"%s\"; detail: %s\n", cujit_status_name(st),
         cujit_status_name(want), needle, cujit_last_error());
  return 1;
}

/* Device calls and compiles that choose their target from the device fail, before the
 * driver is looked at; a compile for an explicit target and calls that choose no device
 * work as before. */
static int bad_device_env(const char *value) {
  char needle[128];
  cujit_module *m = NULL;
  cujit_options o = {0};
  CUdeviceptr p = 0;
  int n = 0, bad = 0;
  snprintf(needle, sizeof needle, "CUJIT_DEVICE='%s' is not a device ordinal", value);
  bad |= child_check(cujit_mem_alloc(&p, 64), CUJIT_ERROR_INVALID_VALUE, needle);
  bad |= child_check(cujit_mem_alloc(&p, 64), CUJIT_ERROR_INVALID_VALUE, "digits only");
  bad |= child_check(cujit_module_from_source(&m, "__global__ void k() {}", "k.cu", NULL),
                     CUJIT_ERROR_INVALID_VALUE, needle);
  o.arch = "compute_80";
  bad |=
      child_check(cujit_module_from_source(&m, "__global__ void k() {}", "k.cu", &o), CUJIT_OK, "");
  cujit_module_destroy(m);
  bad |= child_check(cujit_device_get_count(&n), CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  n = 0;
  bad |= child_check(cujit_device_get_current(&n), CUJIT_ERROR_INVALID_VALUE, needle);
  if (n != -1) {
    printf("cujit_device_get_current gave %d for a malformed CUJIT_DEVICE, wanted -1\n", n);
    bad = 1;
  }
  return bad;
}

/* Unset, empty or a number: no complaint (the missing driver is what fails). */
static int good_device_env(const char *value) {
  CUdeviceptr p = 0;
  int want = value[0] ? atoi(value) : 0, got = -1, bad;
  bad = child_check(cujit_mem_alloc(&p, 64), CUJIT_ERROR_NO_DRIVER, "no CUDA driver found");
  /* without a driver no context is current: the device named by CUJIT_DEVICE */
  bad |= child_check(cujit_device_get_current(&got), CUJIT_OK, "");
  if (got != want) {
    printf("cujit_device_get_current gave %d with CUJIT_DEVICE='%s', wanted %d\n", got, value,
           want);
    bad = 1;
  }
  return bad;
}

/* A CUJIT_LIBCUDA that is not an absolute path is not loaded, though the working directory
 * holds a file of that name; the message names the variable. */
static int relative_libcuda(const char *value) {
  char dir[] = "/tmp/cujit-libcuda-XXXXXX";
  int n = 0, bad;
  FILE *f;
  unsetenv("CUJIT_DEVICE");
  setenv("CUJIT_LIBCUDA", value, 1);
  if (!mkdtemp(dir) || chdir(dir) != 0 || mkdir("lib", 0700) != 0) return 1;
  if ((f = fopen(value, "w")) != NULL) fclose(f); /* not a library: dlopen would say so */
  bad = child_check(cujit_device_get_count(&n), CUJIT_ERROR_NO_DRIVER, "CUJIT_LIBCUDA is '");
  bad |= child_check(cujit_device_get_count(&n), CUJIT_ERROR_NO_DRIVER,
                     "which is not an absolute path, so it was not loaded");
  unlink(value);
  rmdir("lib");
  if (chdir("/") != 0 || rmdir(dir) != 0) bad = 1;
  return bad;
}

/* Runs this binary again as `--MODE VALUE` with CUJIT_DEVICE=VALUE (see main). */
static int in_child(const char *value, const char *mode) {
  int st = 0;
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CUJIT_DEVICE", value, 1);
    execl("/proc/self/exe", "test_driver", mode, value, (char *)NULL);
    _exit(120);
  }
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void device_env_is_checked(void **state) {
  static const char *const bad[] = {"abc", "1x",  "-1",  " 1",
                                    "+1",  "0x1", "1.0", "99999999999999999999"};
  static const char *const good[] = {"", "0", "1", "63"};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof *bad; i++)
    if (in_child(bad[i], "--bad-device") != 0)
      fail_msg("CUJIT_DEVICE='%s' was not refused", bad[i]);
  for (i = 0; i < sizeof good / sizeof *good; i++)
    if (in_child(good[i], "--good-device") != 0) fail_msg("CUJIT_DEVICE='%s' was refused", good[i]);
}

/* cujit_device_set_current: an ordinal that cannot be a device is refused before the driver is
 * looked at; any other fails for want of a driver, saying which call and which ordinal. */
static void set_device_without_driver(void **state) {
  (void)state;
  assert_status_detail(cujit_device_set_current(-1), CUJIT_ERROR_NO_DEVICE,
                       "cujit_device_set_current(-1)");
  assert_non_null(strstr(cujit_last_error(), "0 or more"));
  assert_status_detail(cujit_device_set_current(-2147483647 - 1), CUJIT_ERROR_NO_DEVICE,
                       "cujit_device_set_current(-2147483648)");
  assert_status_detail(cujit_device_set_current(64), CUJIT_ERROR_NO_DEVICE,
                       "cujit_device_set_current(64)");
  assert_non_null(strstr(cujit_last_error(), "devices 0..63"));
  assert_status_detail(cujit_device_set_current(1000000), CUJIT_ERROR_NO_DEVICE, "devices 0..63");
  assert_status_detail(cujit_device_set_current(3), CUJIT_ERROR_NO_DRIVER,
                       "cujit_device_set_current(3): no CUDA driver found");
  assert_non_null(strstr(cujit_last_error(), "install the NVIDIA driver"));
  assert_status_detail(cujit_device_set_current(0), CUJIT_ERROR_NO_DRIVER,
                       "cujit_device_set_current(0): ");
  /* nothing was made current: the thread still works on the default device */
  assert_status_detail(cujit_mem_alloc(&(CUdeviceptr){0}, 64), CUJIT_ERROR_NO_DRIVER,
                       "no CUDA driver found");
}

static void null_arguments(void **state) {
  (void)state;
  assert_int_equal(cujit_driver_get_version(NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(cujit_device_get_count(NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_int_equal(cujit_driver_get_symbol(NULL, NULL), CUJIT_ERROR_INVALID_VALUE);
  assert_status_detail(cujit_device_get_current(NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_device_get_current: ordinal is NULL");
}

static void relative_libcuda_is_refused(void **state) {
  (void)state;
  assert_int_equal(in_child("libcuda.so.1", "--relative-libcuda"), 0);
  assert_int_equal(in_child("lib/libcuda.so.1", "--relative-libcuda"), 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(device_calls_report_no_driver),
      cmocka_unit_test(compile_works_without_driver),
      cmocka_unit_test(device_env_is_checked),
      cmocka_unit_test(set_device_without_driver),
      cmocka_unit_test(null_arguments),
      cmocka_unit_test(relative_libcuda_is_refused),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  if (argc == 3 && strcmp(argv[1], "--bad-device") == 0) return bad_device_env(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--good-device") == 0) return good_device_env(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--relative-libcuda") == 0) return relative_libcuda(argv[2]);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
