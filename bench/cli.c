/* cli.c - the `cujit compile` command on a cache hit, in a new process each time: wall
 * time and peak resident memory, against a program that does nothing (/bin/true). NVRTC
 * is loaded only when something must be compiled, so a hit should cost about what
 * starting any program costs. Needs no GPU. Goals: <= 2 ms and <= 8 MiB, best of 10, with
 * the target given (--arch, as a cache is warmed for deployment); without it the device
 * is asked for its compute capability, which starts the driver where there is one: shown
 * for information. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

typedef struct run_cost {
  double ms;      /* wall time from start to exit */
  double rss_mib; /* peak resident set size */
} run_cost;

static char measure[600]; /* cujit-bench-measure, beside this program */

/* Runs argv through cujit-bench-measure; 0 with its cost, or -1. */
static int run(char *const argv[], run_cost *c) {
  char *args[16] = {measure}, out[128];
  int fd[2], status = 0;
  long kib = 0;
  ssize_t n;
  size_t i;
  pid_t pid;
  posix_spawn_file_actions_t fa;
  for (i = 0; argv[i] && i + 2 < 16; i++) args[1 + i] = argv[i];
  args[1 + i] = NULL;
  if (pipe(fd) != 0) return -1;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  status = posix_spawn(&pid, measure, &fa, NULL, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  n = status == 0 ? read(fd[0], out, sizeof out - 1) : -1;
  close(fd[0]);
  if (status != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0 || n <= 0)
    return -1;
  out[n] = '\0';
  if (sscanf(out, "%lf %ld", &c->ms, &kib) != 2) return -1;
  c->rss_mib = (double)kib / 1024.0;
  return 0;
}

/* The best wall time and the best peak memory of `reps` runs. */
static int best_of(char *const argv[], int reps, run_cost *best) {
  run_cost c;
  int i;
  best->ms = best->rss_mib = 1e30;
  for (i = 0; i < reps; i++) {
    if (run(argv, &c) != 0) return -1;
    if (c.ms < best->ms) best->ms = c.ms;
    if (c.rss_mib < best->rss_mib) best->rss_mib = c.rss_mib;
  }
  return 0;
}

void bench_cli(void) {
  static const char src[] = "__global__ void twice(float *x) { x[threadIdx.x] *= 2; }\n";
  char dir[512], cu[600], out[600], cli[600], *slash;
  char *compile[] = {cli, "compile", cu, "-o", out, "--arch", bench_cfg.arch, NULL};
  char *compile_auto[] = {cli, "compile", cu, "-o", out, NULL};
  char *noop[] = {"/bin/true", NULL};
  run_cost hit, bare, hit_auto;
  int reps = bench_cfg.quick ? 3 : 10;
  snprintf(cli, sizeof cli, "%.560s", bench_cfg.self);
  if (!(slash = strrchr(cli, '/'))) return bench_skip("cli", "cache-hit cujit compile", "no path");
  snprintf(measure, sizeof measure, "%.*s/cujit-bench-measure", (int)(slash - cli), cli);
  snprintf(slash + 1, sizeof cli - (size_t)(slash + 1 - cli), "cujit");
  if (access(cli, X_OK) != 0 || access(measure, X_OK) != 0)
    return bench_skip("cli", "cache-hit cujit compile",
                      "cujit or cujit-bench-measure is not built");
  if (bench_mkdir("cli", dir, sizeof dir) != 0) return bench_skip("cli", "cache hit", "scratch");
  snprintf(cu, sizeof cu, "%s/twice.cu", dir);
  snprintf(out, sizeof out, "%s/twice.ptx", dir);
  if (bench_write_file(cu, src, sizeof src - 1) != 0 || run(compile, &hit) != 0)
    return bench_skip("cli", "cache-hit cujit compile", "the first compile failed");
  if (best_of(compile, reps, &hit) != 0 || best_of(noop, reps, &bare) != 0 ||
      run(compile_auto, &hit_auto) != 0 || best_of(compile_auto, reps, &hit_auto) != 0)
    return bench_skip("cli", "cache-hit cujit compile", "a run failed");
  bench_check("cli", "cache-hit `cujit compile --arch`: wall, best of 10", 1, "ms", hit.ms, bare.ms,
              2.0, hit.ms <= 2.0, "<= 2 ms (baseline: /bin/true)");
  bench_check("cli", "cache-hit `cujit compile --arch`: peak RSS, best of 10", 1, "MiB",
              hit.rss_mib, bare.rss_mib, 8.0, hit.rss_mib <= 8.0, "<= 8 MiB (baseline: /bin/true)");
  bench_info("cli", "  the same without --arch: wall", 1, "ms", hit_auto.ms, bare.ms,
             "the device is asked for its target (the driver starts where there is one)");
  bench_info("cli", "  the same without --arch: peak RSS", 1, "MiB", hit_auto.rss_mib, bare.rss_mib,
             "the driver's libraries mapped where there is one");
}
