/* test_nvrtc_load.c - NVRTC is loaded at run time, on the first compile that needs it: a
 * process whose kernels come from the cache never maps it, and a missing NVRTC is a clear
 * error that leaves cache hits and prebuilt code working; CUJIT_NVRTC names a file by its
 * absolute path, and the library loaded is the file the cache keys named. Each check runs
 * in a child process forked from a parent that never compiles, so that every child starts
 * as a new program does: without NVRTC. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachetest.h"
#include "dl/nvrtc.h"

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
  if (cj_libnvrtc_loaded() || nvrtc_mapped() != 0) return 13;
  return 0;
}

static void a_cache_hit_never_loads_nvrtc(void **state) {
  char *dir = fresh_cache("nvrtc-hit");
  (void)state;
  assert_int_equal(in_child(compile_once), 0);
  assert_int_equal(in_child(hit_without_nvrtc), 0);
  drop_cache(dir);
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
      !strstr(cujit_last_error(), "CUJIT_NVRTC") || !strstr(cujit_last_error(), "need no NVRTC"))
    return 21;
  if (cujit_module_from_source(&m, kKernel, "k.cu", NULL) != CUJIT_OK) return 22;
  cujit_module_destroy(m);
  m = NULL;
  if (cujit_module_from_image(&m, ptx, sizeof ptx - 1, "noop.ptx") != CUJIT_OK) return 23;
  cujit_module_destroy(m);
  return nvrtc_mapped() == 0 ? 0 : 24;
}

static void a_missing_nvrtc_is_a_clear_error(void **state) {
  char *dir = fresh_cache("nvrtc-missing");
  (void)state;
  assert_int_equal(in_child(compile_once), 0);
  assert_int_equal(in_child(missing_nvrtc), 0);
  drop_cache(dir);
}

/* The key names NVRTC by the build ID of the library that would be loaded. */
static int identity_from_build_id(void) {
  const char *id = cj_libnvrtc_identity();
  if (strncmp(id, "nvrtc build ", 12) != 0 || strlen(id) < 12 + 16) return 30;
  return cj_libnvrtc_loaded() ? 31 : 0;
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
  if (strcmp(cj_libnvrtc_identity(), want) != 0)
    rc = 42;
  else if (strcmp(cujit_nvrtc_path(), path) != 0)
    rc = 43;
  else if (strcmp(cj_libnvrtc_dir(), dir) != 0)
    rc = 44;
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
  return strncmp(cj_libnvrtc_identity(), "nvrtc build ", 12) != 0 ? 52
         : strcmp(cj_libnvrtc_dir(), dir) != 0                    ? 53
                                                                  : 0;
}

static void nvrtc_identity_path_and_directory(void **state) {
  (void)state;
  assert_int_equal(in_child(identity_without_build_id), 0);
  assert_int_equal(in_child(explicit_library), 0);
}

/* CUJIT_NVRTC must name a file by its absolute path: a bare name, with a file of that name
 * in the working directory, is refused naming the variable. Nothing is keyed from the
 * working directory's file, nothing is loaded, and nvJitLink is not looked for there. */
static int relative_nvrtc(void) {
  char *dir = test_tempdir("nvrtc-rel");
  int rc = 0;
  cujit_module *m = NULL;
  if (!dir || chdir(dir) != 0) return 60;
  if (test_write_file(dir, "libnvrtc.so.13", "planted, 12") != 0) return 61;
  setenv("CUJIT_NVRTC", "libnvrtc.so.13", 1);
  log_capture(CUJIT_LOG_WARN);
  if (cj_libnvrtc_identity()[0] || cujit_nvrtc_path()[0] || cj_libnvrtc_dir()[0])
    rc = 62;
  else if (!strstr(log_text, "CUJIT_NVRTC is 'libnvrtc.so.13', which is not an absolute path"))
    rc = 63;
  else if (cujit_module_from_source(&m, kOther, "other.cu", NULL) != CUJIT_ERROR_NO_NVRTC)
    rc = 64;
  else if (!strstr(cujit_last_error(), "CUJIT_NVRTC is 'libnvrtc.so.13', which is not an "
                                       "absolute path"))
    rc = 65;
  else if (cj_libnvrtc_loaded() || nvrtc_mapped() != 0)
    rc = 66;
  if (rc)
    fprintf(stderr, "identity '%s', error: %s\nlog: %s\n", cj_libnvrtc_identity(),
            cujit_last_error(), log_text);
  cujit_module_destroy(m);
  test_rmtree(dir);
  free(dir);
  return rc;
}

static void a_relative_nvrtc_path_is_refused(void **state) {
  (void)state;
  assert_int_equal(in_child(relative_nvrtc), 0);
}

/* The NVRTC the usual search finds, asked of a child so that this process has looked for
 * nothing yet (what it finds is kept for the process's life). */
static int usual_nvrtc(char *out, size_t size) {
  int fd[2], status = 0;
  ssize_t n;
  pid_t pid;
  if (pipe(fd) != 0) return -1;
  if ((pid = fork()) == 0) {
    const char *p = cujit_nvrtc_path();
    _exit(write(fd[1], p, strlen(p)) == (ssize_t)strlen(p) ? 0 : 1);
  }
  close(fd[1]);
  n = read(fd[0], out, size - 1);
  close(fd[0]);
  waitpid(pid, &status, 0);
  if (n <= 0) return -1;
  out[n] = '\0';
  return 0;
}

/* A directory of LD_LIBRARY_PATH given relative to the working directory: the NVRTC found
 * there is kept by its absolute path, so that the file keyed is the file a compile loads
 * after the program changed directory. */
static int nvrtc_through_a_relative_directory(void) {
  char *dir = test_tempdir("nvrtc-reldir"), real[4096], path[4200], cwd[4096];
  cujit_module *m = NULL;
  int rc = 0;
  if (!dir || usual_nvrtc(real, sizeof real) != 0) return 70;
  snprintf(path, sizeof path, "%s/lib", dir);
  if (mkdir(path, 0700) != 0) return 71;
  snprintf(path, sizeof path, "%s/lib/libnvrtc.so.13", dir);
  if (symlink(real, path) != 0 || chdir(dir) != 0 || !getcwd(cwd, sizeof cwd)) return 72;
  unsetenv("CUJIT_NVRTC");
  setenv("LD_LIBRARY_PATH", "lib", 1);
  snprintf(path, sizeof path, "%s/lib/libnvrtc.so.13", cwd);
  if (strcmp(cujit_nvrtc_path(), path) != 0)
    rc = 73;
  else if (chdir("/") != 0)
    rc = 74;
  else if (cujit_module_from_source(&m, kOther, "other.cu", NULL) != CUJIT_OK)
    rc = 75;
  else if (!cj_libnvrtc_loaded())
    rc = 76; /* compiled, not found in a cache */
  if (rc)
    fprintf(stderr, "path '%s' (want '%s'): %s\n", cujit_nvrtc_path(), path, cujit_last_error());
  cujit_module_destroy(m);
  test_rmtree(dir);
  free(dir);
  return rc;
}

static void a_relative_search_directory_is_made_absolute(void **state) {
  char *dir = fresh_cache("nvrtc-reldir-cache");
  (void)state;
  assert_int_equal(in_child(nvrtc_through_a_relative_directory), 0);
  drop_cache(dir);
}

/* The path of the loaded library that holds `sym`. */
static int library_of(void *sym, char *out, size_t size) {
  Dl_info info;
  if (!sym || !dladdr(sym, &info) || !info.dli_fname || info.dli_fname[0] != '/') return -1;
  snprintf(out, size, "%s", info.dli_fname);
  return 0;
}

/* The file at the path CUJIT_NVRTC names is replaced between the look that names it in
 * cache keys and the first compile's load: the library loaded is not the one keyed, and
 * the compile is refused rather than run under another NVRTC's keys. (Two libraries of
 * the C runtime stand in for the two NVRTCs: each has a build ID of its own.) */
static int replaced_nvrtc(void) {
  char *dir = test_tempdir("nvrtc-swap"), first[4096], second[4096], path[4200];
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  cujit_module *m = NULL;
  int rc = 0;
  if (!dir || !libm || library_of(dlsym(RTLD_DEFAULT, "printf"), first, sizeof first) != 0 ||
      library_of(dlsym(libm, "cos"), second, sizeof second) != 0)
    return 80;
  snprintf(path, sizeof path, "%s/libnvrtc.so.13", dir);
  if (symlink(first, path) != 0) return 81;
  setenv("CUJIT_NVRTC", path, 1);
  if (strncmp(cj_libnvrtc_identity(), "nvrtc build ", 12) != 0)
    rc = 82;
  else if (unlink(path) != 0 || symlink(second, path) != 0)
    rc = 83;
  else if (cujit_module_from_source(&m, kOther, "other.cu", NULL) != CUJIT_ERROR_NO_NVRTC)
    rc = 84;
  else if (!strstr(cujit_last_error(), "is not the file this process named in its cache keys"))
    rc = 85;
  if (rc) fprintf(stderr, "identity '%s': %s\n", cj_libnvrtc_identity(), cujit_last_error());
  cujit_module_destroy(m);
  test_rmtree(dir);
  free(dir);
  return rc;
}

static void a_replaced_nvrtc_is_not_loaded(void **state) {
  (void)state;
  assert_int_equal(in_child(replaced_nvrtc), 0);
}

/* An ELF file of `phnum` program headers whose last is a note segment at `note_at`
 * holding the build ID 0x0123456789abcdef; its descriptor, for cj_elf_build_id. */
static int elf_with_note(size_t phnum, size_t note_at) {
  static const unsigned char id[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  unsigned char file[8192] = {0};
  Elf64_Ehdr eh = {0};
  Elf64_Phdr ph = {0};
  Elf64_Nhdr nh = {4, sizeof id, NT_GNU_BUILD_ID};
  char path[] = "/tmp/cujit-elf-XXXXXX";
  size_t i;
  int fd;
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_phoff = sizeof eh;
  eh.e_phentsize = sizeof ph;
  eh.e_phnum = (Elf64_Half)phnum;
  memcpy(file, &eh, sizeof eh);
  for (i = 0; i < phnum; i++) { /* PT_NULL headers, then the note */
    if (i == phnum - 1) {
      ph.p_type = PT_NOTE;
      ph.p_offset = note_at;
      ph.p_filesz = sizeof nh + 4 + sizeof id;
    }
    memcpy(file + sizeof eh + i * sizeof ph, &ph, sizeof ph);
  }
  if (note_at + sizeof nh + 4 + sizeof id <= sizeof file) { /* else it runs past the end */
    memcpy(file + note_at, &nh, sizeof nh);
    memcpy(file + note_at + sizeof nh, "GNU", 4);
    memcpy(file + note_at + sizeof nh + 4, id, sizeof id);
  }
  if ((fd = mkstemp(path)) < 0) return -1;
  unlink(path);
  if (write(fd, file, sizeof file) != (ssize_t)sizeof file) {
    close(fd);
    return -1;
  }
  return fd;
}

static void build_id_wherever_the_note_is(void **state) {
  /* right after the headers; beyond the first KiB read; after a table of program headers
   * longer than that KiB */
  static const size_t phnum[] = {3, 3, 40}, note_at[] = {64 + 3 * 56, 5000, 64 + 40 * 56};
  char out[64];
  size_t i;
  int fd;
  (void)state;
  for (i = 0; i < 3; i++) {
    assert_true((fd = elf_with_note(phnum[i], note_at[i])) >= 0);
    out[0] = '\0';
    assert_int_equal(cj_elf_build_id(fd, out, sizeof out), 1);
    assert_string_equal(out, "0123456789abcdef");
    close(fd);
  }
  assert_true((fd = elf_with_note(3, 8192 - 8)) >= 0); /* the note runs past the file's end */
  assert_int_equal(cj_elf_build_id(fd, out, sizeof out), 0);
  close(fd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_cache_hit_never_loads_nvrtc),
      cmocka_unit_test(a_missing_nvrtc_is_a_clear_error),
      cmocka_unit_test(nvrtc_is_named_by_its_build),
      cmocka_unit_test(nvrtc_identity_path_and_directory),
      cmocka_unit_test(build_id_wherever_the_note_is),
      cmocka_unit_test(a_relative_nvrtc_path_is_refused),
      cmocka_unit_test(a_relative_search_directory_is_made_absolute),
      cmocka_unit_test(a_replaced_nvrtc_is_not_loaded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
