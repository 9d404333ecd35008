/* main.c - cujit-bench: runs the benchmark groups, prints the table, writes the CSV.
 *
 *   cujit-bench [--csv FILE] [--arch sm_XX] [group ...]
 *
 * Groups: compile memcache herd start launch inout memory arrays cli pch multigpu batch
 * firstio graph (default: all). Groups that need a GPU are reported as skipped without one. Env
 * QUICK=1 shrinks the repetitions for a smoke run; env BENCH_COMMIT names the source
 * version in the header.
 * Children of the process-level benchmarks run this program as
 *   cujit-bench --child MODE ...                                                      */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

bench_config bench_cfg;

typedef struct group {
  const char *name;
  void (*run)(void);
  int needs_gpu;
} group;

static const group groups[] = {
    {"compile", bench_compile, 0}, {"memcache", bench_memcache, 0}, {"herd", bench_herd, 0},
    {"start", bench_start, 1},     {"launch", bench_launch, 1},     {"inout", bench_inout, 1},
    {"memory", bench_memory, 1},   {"arrays", bench_arrays, 1},     {"cli", bench_cli, 0},
    {"pch", bench_pch, 0},         {"multigpu", bench_multigpu, 1}, {"batch", bench_batch, 0},
    {"firstio", bench_firstio, 1}, {"graph", bench_graph, 1},
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

static int child_main(int argc, char **argv) {
  const char *mode = argc > 0 ? argv[0] : "";
  if (strcmp(mode, "compile") == 0) return bench_compile_child(argc - 1, argv + 1);
  if (strcmp(mode, "herd") == 0) return bench_herd_child(argc - 1, argv + 1);
  if (strcmp(mode, "pch") == 0) return bench_pch_child(argc - 1, argv + 1);
  if (strcmp(mode, "batch") == 0) return bench_batch_child(argc - 1, argv + 1);
  if (strcmp(mode, "arrays") == 0) return bench_arrays_child(argc - 1, argv + 1);
  if (strcmp(mode, "firstio") == 0) return bench_firstio_child(argc - 1, argv + 1);
  fprintf(stderr, "cujit-bench: unknown child mode '%s'\n", mode);
  return 2;
}

/* The newest architecture this NVRTC supports that the device runs (sm_XX). */
static void device_arch(int cc) {
  int archs[64], best = 0;
  size_t n = 0, i;
  if (cujit_nvrtc_get_archs(archs, 64, &n) != CUJIT_OK) return;
  for (i = 0; i < n && i < 64; i++)
    if (archs[i] <= cc && archs[i] > best) best = archs[i];
  if (best) snprintf(bench_cfg.cc_arch, sizeof bench_cfg.cc_arch, "sm_%d", best);
}

/* Fills the header: date, machine, device, driver, NVRTC and cujit versions. */
static void describe(char *out, size_t size) {
  char date[64], dev[256] = "none", drv[32] = "none";
  int major = 0, minor = 0, nv_major = 0, nv_minor = 0, version = 0;
  time_t t = time(NULL);
  struct utsname u;
  const char *commit = getenv("BENCH_COMMIT");
  if (commit && !*commit) commit = NULL;
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
  if (uname(&u) != 0) snprintf(u.machine, sizeof u.machine, "?");
  if (bench_cfg.have_gpu && cujit_device_get_info(0, dev, sizeof dev, &major, &minor) == CUJIT_OK)
    snprintf(dev + strlen(dev), sizeof dev - strlen(dev), " (sm_%d%d)", major, minor);
  if (cujit_driver_get_version(&version) == CUJIT_OK)
    snprintf(drv, sizeof drv, "CUDA %d.%d", version / 1000, version % 1000 / 10);
  cujit_nvrtc_get_version(&nv_major, &nv_minor);
  snprintf(out, size,
           "cujit-bench %s\ndate: %s\ndevice: %s\ndriver: %s\nNVRTC: %d.%d\n"
           "cujit: %s%s%s\nhost: %s, %ld CPUs\ntarget: %s\nrepetitions: %s",
           bench_cfg.quick ? "(QUICK: smoke run, few repetitions)" : "", date, dev, drv, nv_major,
           nv_minor, cujit_version_string(), commit ? " commit " : "", commit ? commit : "",
           u.machine, sysconf(_SC_NPROCESSORS_ONLN), bench_cfg.arch,
           bench_cfg.quick ? "quick" : "full");
}

/* Private scratch directory, HOME and cache directory, so nothing outside is touched
 * and NVRTC's own cache (under $HOME) starts empty. */
static int setup(const char *arch) {
  const char *tmp = getenv("TMPDIR");
  char path[600];
  int n = 0, major = 0, minor = 0;
  ssize_t len = readlink("/proc/self/exe", bench_cfg.self, sizeof bench_cfg.self - 1);
  if (len <= 0) return -1;
  bench_cfg.self[len] = '\0';
  snprintf(bench_cfg.scratch, sizeof bench_cfg.scratch, "%s/cujit-bench-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(bench_cfg.scratch)) return -1;
  if (bench_mkdir("home", path, sizeof path) != 0) return -1;
  setenv("HOME", path, 1);
  snprintf(path, sizeof path, "%s/cache", bench_cfg.scratch);
  setenv("CUJIT_CACHE_DIR", path, 1);
  unsetenv("CUJIT_ARCH");
  bench_cfg.quick = getenv("QUICK") && strcmp(getenv("QUICK"), "0") != 0;
  bench_cfg.cuda_include = BENCH_CUDA_INCLUDE;
  bench_cfg.have_gpu = cujit_device_get_count(&n) == CUJIT_OK && n > 0 &&
                       cujit_device_get_info(0, NULL, 0, &major, &minor) == CUJIT_OK;
  if (bench_cfg.have_gpu) device_arch(major * 10 + minor);
  snprintf(bench_cfg.arch, sizeof bench_cfg.arch, "%s",
           arch                   ? arch
           : bench_cfg.cc_arch[0] ? bench_cfg.cc_arch
                                  : "sm_90");
  return 0;
}

static int selected(const group *g, char **names, int n) {
  int i;
  if (n == 0) return 1;
  for (i = 0; i < n; i++)
    if (strcmp(names[i], g->name) == 0) return 1;
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: cujit-bench [--csv FILE] [--arch sm_XX] [group ...]\ngroups:");
  for (size_t i = 0; i < N_GROUPS; i++) fprintf(stderr, " %s", groups[i].name);
  fprintf(stderr, "\nenv QUICK=1 for a smoke run\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *csv = NULL, *arch = NULL;
  char header[1024], *names[16];
  int n_names = 0, i, failed, csv_failed = 0;
  size_t g;
  if (argc > 1 && strcmp(argv[1], "--child") == 0) return child_main(argc - 2, argv + 2);
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
      csv = argv[++i];
    else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
      arch = argv[++i];
    else if (argv[i][0] == '-' || n_names == 16)
      return usage();
    else
      names[n_names++] = argv[i];
  }
  for (i = 0; i < n_names; i++) {
    for (g = 0; g < N_GROUPS && strcmp(groups[g].name, names[i]) != 0; g++) {
    }
    if (g == N_GROUPS) return usage();
  }
  if (setup(arch) != 0) {
    fprintf(stderr, "cujit-bench: cannot create a scratch directory\n");
    return 1;
  }
  describe(header, sizeof header);
  fprintf(stderr, "%s\n", header);
  for (g = 0; g < N_GROUPS; g++) {
    if (!selected(&groups[g], names, n_names)) continue;
    fprintf(stderr, "== %s\n", groups[g].name);
    if (groups[g].needs_gpu && !bench_cfg.have_gpu)
      bench_skip(groups[g].name, groups[g].name, "needs a GPU; none is usable here");
    else
      groups[g].run();
    if (csv && bench_write_csv(csv, header) != 0) { /* after every group: a crash keeps them */
      fprintf(stderr, "cujit-bench: cannot write %s\n", csv);
      csv_failed = 1;
      csv = NULL;
    }
  }
  failed = bench_finish(header);
  bench_rmtree(bench_cfg.scratch);
  printf("%d goal%s missed\n", failed, failed == 1 ? "" : "s");
  return csv_failed;
}
