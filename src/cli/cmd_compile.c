/* cmd_compile.c - 'cujit compile': one file (its PTX or CUBIN written, or a bundle for
 * several targets: cmd_bundle.c), or many files ('cujit compile A.cu B.cu ...' and
 * 'cujit warm DIR'). NVRTC compiles one program at a time inside a process, so the files
 * are compiled in child processes, `jobs` at once; the cache's per-key lock keeps two of
 * them from compiling the same thing. On a terminal, one line shows the progress; otherwise nothing
 * is printed but the errors. */
#define _GNU_SOURCE /* nftw's FTW_PHYS */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_run_compile(const compile_args *c, const char *input) {
  cujit_options opts = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  const void *data;
  size_t size = 0;
  char *out = NULL;
  int rc;
  if (c->bundle) return cli_run_bundle(c, input);
  opts.arch = c->arch;
  opts.include_dirs = c->includes;
  opts.defines = c->defines;
  opts.nvrtc_options = c->nvrtc;
  opts.flags = c->flags | CUJIT_OPT_NO_EARLY_CONTEXT; /* the command never launches */
  opts.time_limit_s = c->time_limit_s;
  if (cujit_module_from_file(&m, input, &opts) != CUJIT_OK) {
    cli_print(stderr, "cujit: %s\n", cujit_last_error());
    return cujit_last_status() == CUJIT_ERROR_INVALID_OPTION ? 2 : 1;
  }
  if (cujit_module_log(m)[0]) cli_print(stderr, "%s", cujit_module_log(m));
  if (c->cache_only) {
    cujit_module_destroy(m);
    return 0;
  }
  data = c->cubin ? cujit_module_cubin(m, &size) : (const void *)cujit_module_ptx(m, &size);
  if (c->cubin && !data) {
    cli_print(stderr,
              "cujit: no CUBIN for target %s; --cubin needs a real architecture "
              "(--arch sm_XX, or a GPU to choose one)\n",
              cujit_module_arch(m));
    cujit_module_destroy(m);
    return 2;
  }
  out = c->output ? NULL : cli_default_output(input, c->cubin ? ".cubin" : ".ptx");
  rc = cli_write_output(c->output ? c->output : out, data, size);
  free(out);
  cujit_module_destroy(m);
  return rc;
}

/* ---- many files ---- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void progress(int tty, size_t done, size_t n, size_t failed, double t0) {
  if (!tty) return;
  cli_raw(stderr, "\r\033[K"); /* back to the line's start, and clear it */
  cli_print(stderr, "cujit: %zu/%zu done", done, n);
  if (failed) cli_print(stderr, ", %zu failed", failed);
  cli_print(stderr, ", %.1f s", now_s() - t0);
  fflush(stderr);
}

/* Starts a child compiling `file`; its pid, or -1. */
static pid_t start(const compile_args *c, const char *file) {
  pid_t pid;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid == 0) _exit(cli_run_compile(c, file));
  if (pid < 0)
    cli_print(stderr, "\ncujit: cannot start a compile of '%s': %s\n", file, strerror(errno));
  return pid;
}

/* Waits for one child; 1 when it failed. */
static int reap(void) {
  int status = 0;
  while (wait(&status) < 0)
    if (errno != EINTR) return 1;
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int cli_compile_many(const compile_args *c, const char *const *files, size_t n) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t jobs = c->jobs > 0 ? (size_t)c->jobs : cpus > 0 ? (size_t)cpus : 1;
  size_t next = 0, running = 0, done = 0, failed = 0;
  int tty = isatty(2);
  double t0 = now_s();
  /* the library reads its environment here, once, and says what is wrong with it before
   * there are children to say it again */
  (void)cujit_log_env_ignored();
  while (done < n) {
    while (running < jobs && next < n) {
      int started = start(c, files[next]) >= 0;
      next++;
      if (!started) {
        failed++;
        done++;
        continue;
      }
      running++;
    }
    if (!running) break;
    failed += (size_t)reap();
    running--;
    done++;
    progress(tty, done, n, failed, t0);
  }
  if (tty) cli_print(stderr, "\n");
  if (failed) cli_print(stderr, "cujit: %zu of %zu files did not compile\n", failed, n);
  return failed ? 1 : 0;
}

/* ---- finding the sources of a directory ---- */

static char **found;
static size_t n_found, cap_found;
static int find_failed;

static int ends_with_cu(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".cu") == 0;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  char **bigger;
  (void)st;
  (void)ftw;
  if (type != FTW_F || !ends_with_cu(path)) return 0;
  if (n_found == cap_found) {
    cap_found = cap_found ? cap_found * 2 : 64;
    if (!(bigger = realloc(found, cap_found * sizeof *found))) return find_failed = 1;
    found = bigger;
  }
  if (!(found[n_found] = strdup(path))) return find_failed = 1;
  n_found++;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_find_sources(const char *dir, char ***files, size_t *n) {
  found = NULL;
  n_found = cap_found = 0;
  find_failed = 0;
  if (nftw(dir, visit, 16, FTW_PHYS) != 0 || find_failed) {
    cli_print(stderr, "cujit: cannot read the directory '%s': %s\n", dir,
              find_failed ? "out of memory" : strerror(errno));
    cli_free_sources(found, n_found);
    return 1;
  }
  qsort(found, n_found, sizeof *found, by_name);
  *files = found;
  *n = n_found;
  return 0;
}

void cli_free_sources(char **files, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) free(files[i]);
  free(files);
}
