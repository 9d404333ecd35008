/* herd.c - N processes (8, 16, 32) start at once on an empty cache and load the same
 * kernel; the same herd on the warm cache it left, and one process alone on an empty cache
 * (one compile), in the same round. Goals: exactly one NVRTC compile in the whole herd, and
 * cold-herd wall time <= warm-herd wall time + 1.5 x one compile.
 *
 * Every child first loads its libraries and reports ready; then all are released at once
 * (a pipe closes) and each runs cujit_module_from_source and reports its compile count.
 * The wall time runs from the release to the last report, so process start-up is not in
 * it. Children target bench_cfg.arch explicitly (CUJIT_ARCH) and never touch the driver:
 * what is measured is the cache, not context creation. Each child has a fresh HOME. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define HERD_MAX 32

/* Child: says ready, waits for stdin to close, loads the kernel, prints
 * "done <compiles> <hits>". */
int bench_herd_child(int argc, char **argv) {
  cujit_module *m = NULL;
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  char c;
  cujit_status st;
  (void)argc, (void)argv;
  printf("ready\n");
  fflush(stdout);
  while (read(0, &c, 1) > 0) {
  }
  st = cujit_module_from_source(&m, bench_src_small, "herd.cu", NULL);
  cujit_cache_get_stats(&s);
  printf("done %d %llu %llu\n", st == CUJIT_OK, (unsigned long long)s.compiles,
         (unsigned long long)s.hits);
  fflush(stdout);
  cujit_module_destroy(m);
  return st == CUJIT_OK ? 0 : 1;
}

typedef struct herd_result {
  double wall_ms;
  unsigned long long compiles;
  int failed;
} herd_result;

/* Reads lines until `n` of them start with `prefix`; sums the compiles of "done" lines. */
static int read_lines(FILE *f, int n, const char *prefix, herd_result *res) {
  char line[256];
  int got = 0, ok;
  unsigned long long compiles, hits;
  while (got < n && fgets(line, sizeof line, f)) {
    if (strncmp(line, prefix, strlen(prefix)) != 0) continue;
    got++;
    if (res && sscanf(line, "done %d %llu %llu", &ok, &compiles, &hits) == 3) {
      res->compiles += compiles;
      res->failed += !ok;
    }
  }
  return got == n ? 0 : -1;
}

/* Spawns up to n children; returns how many were started. */
static int spawn_herd(int n, const char *cache, int go_read, int out_write, pid_t *pids) {
  char home[600], env_home[640], env_cache[640], env_arch[64];
  char *argv[] = {"", "--child", "herd", NULL};
  char *env[] = {env_home, env_cache, env_arch, NULL};
  int i;
  snprintf(env_cache, sizeof env_cache, "CUJIT_CACHE_DIR=%s", cache);
  snprintf(env_arch, sizeof env_arch, "CUJIT_ARCH=%s", bench_cfg.arch);
  for (i = 0; i < n; i++) {
    if (bench_mkdir("home", home, sizeof home) != 0) break;
    snprintf(env_home, sizeof env_home, "HOME=%s", home);
    pids[i] = bench_spawn(argv, env, go_read, out_write);
    if (pids[i] < 0) break;
  }
  return i;
}

/* Runs one herd of n processes on `cache`. */
static int run_herd(int n, const char *cache, herd_result *res) {
  int go[2], out[2], i, started, rc = -1;
  pid_t pids[HERD_MAX];
  FILE *f;
  uint64_t t0;
  memset(res, 0, sizeof *res);
  if (pipe2(go, O_CLOEXEC) != 0) return -1;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(go[0]), close(go[1]);
    return -1;
  }
  started = spawn_herd(n, cache, go[0], out[1], pids);
  close(go[0]);
  close(out[1]);
  f = fdopen(out[0], "r");
  if (started == n && f && read_lines(f, n, "ready", NULL) == 0) {
    t0 = bench_now_ns();
    close(go[1]), go[1] = -1; /* release them all */
    if (read_lines(f, n, "done", res) == 0) rc = 0;
    res->wall_ms = (double)(bench_now_ns() - t0) / 1e6;
  }
  if (go[1] >= 0) close(go[1]);
  if (f)
    fclose(f);
  else
    close(out[0]);
  for (i = 0; i < started; i++)
    if (bench_wait(pids[i]) != 0) rc = -1;
  return rc == 0 && res->failed == 0 ? 0 : -1;
}

typedef struct herd_rounds {
  double one[16], cold[16], warm[16];
  unsigned long long worst_compiles; /* the cold-herd count furthest from 1 */
  unsigned long long warm_compiles;  /* the most any warm herd compiled */
} herd_rounds;

static int herd_round(int n, int r, herd_rounds *h) {
  char c1[600], cn[600];
  herd_result one, cold, warm;
  if (bench_mkdir("herd-cache", c1, sizeof c1) != 0 ||
      bench_mkdir("herd-cache", cn, sizeof cn) != 0)
    return -1;
  if (run_herd(1, c1, &one) != 0 || run_herd(n, cn, &cold) != 0 || run_herd(n, cn, &warm) != 0)
    return -1;
  h->one[r] = one.wall_ms, h->cold[r] = cold.wall_ms, h->warm[r] = warm.wall_ms;
  if (cold.compiles != 1 && (h->worst_compiles == 1 || cold.compiles > h->worst_compiles))
    h->worst_compiles = cold.compiles;
  if (warm.compiles > h->warm_compiles) h->warm_compiles = warm.compiles;
  return 0;
}

static void herd_size(int n) {
  int reps = bench_reps(5, 2), r;
  herd_rounds h;
  herd_result warmup;
  char metric[96], goal[96], cache[600];
  double one, cold, warm;
  memset(&h, 0, sizeof h);
  h.worst_compiles = 1;
  if (bench_mkdir("herd-cache", cache, sizeof cache) != 0 || run_herd(n, cache, &warmup) != 0) {
    bench_skip("herd", "herd", "a child process failed (see the log)");
    return;
  }
  for (r = 0; r < reps; r++)
    if (herd_round(n, r, &h) != 0) {
      bench_skip("herd", "herd", "a child process failed (see the log)");
      return;
    }
  one = bench_median(h.one, (size_t)reps);
  cold = bench_median(h.cold, (size_t)reps);
  warm = bench_median(h.warm, (size_t)reps);
  snprintf(metric, sizeof metric, "herd of %d: NVRTC compiles cold (warm)", n);
  bench_check("herd", metric, n, "count", (double)h.worst_compiles, (double)h.warm_compiles, NAN,
              h.worst_compiles == 1 && h.warm_compiles == 0,
              "cold: exactly 1 every round; warm: 0");
  snprintf(metric, sizeof metric, "herd of %d: cold vs warm wall time", n);
  snprintf(goal, sizeof goal, "<= warm + 1.5 x one compile (%.1f ms)", one);
  bench_check("herd", metric, n, "ms", cold, warm, warm + 1.5 * one, cold <= warm + 1.5 * one,
              goal);
}

void bench_herd(void) {
  static const int sizes[] = {8, 16, 32};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) herd_size(sizes[i]);
}
