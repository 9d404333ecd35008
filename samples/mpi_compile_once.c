/* mpi_compile_once - every rank of an MPI job builds the same kernels at start-up, and the
 * whole job compiles each of them once, two ways:
 *
 *   1. Ranks that share a disk cache (ranks on one node; nodes on a shared file system)
 *      just call cujit_module_from_source(): the first rank to miss compiles under the
 *      cache entry's lock while the others wait for the entry and read it.
 *   2. Ranks without a shared file system: rank 0 compiles and exports the module as a
 *      blob, MPI_Bcast sends it, and every other rank imports it with the source, name and
 *      options it would have compiled (if the blob does not match, that rank compiles).
 *
 * Rank 0 prints how many NVRTC compiles each way took across the job (every rank's
 * cujit_cache_get_stats().compiles, summed with MPI_Reduce). Where a GPU is present every
 * rank then launches the kernels of both ways and checks the results (ranks may share one
 * GPU; set CUJIT_DEVICE per rank to spread them). --compile-only skips the launches;
 * --way 1 or --way 2 builds one way only (each way is then the process's first compile,
 * which loads NVRTC); --include HEADER puts `#include <HEADER>` atop every source, as a
 * real job's kernels include heavier headers (bench/mpi-startup.sh times the ways so).
 *
 *     mpirun -np 8 ./sample_mpi_compile_once [--compile-only] [--way 1|2] [--include HEADER]
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"

static int rank, nranks;

/* The error mode's handler: a failing cujit call on any rank stops the whole job, with
 * cujit's explanation. */
static void abort_job(cujit_status status, const char *call, const char *detail, void *user) {
  (void)user;
  fprintf(stderr, "rank %d: %s failed: %s\n%s\n", rank, call, cujit_status_name(status), detail);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The kernels every rank needs. The two ways compile them with different defines, so
 * that the second way does not find what the first one compiled. */
static const char *const kSaxpy =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";
static const char *const kScale =
    "template <typename T> __global__ void scale(T *x, T f, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= f;\n"
    "}\n";

enum { NMOD = 2 };
static const char *kSources[NMOD] = {kSaxpy, kScale};
static const char *const kNames[NMOD] = {"saxpy.cu", "scale.cu"};

/* The options of module i built way `way`. */
static cujit_options way_options(int way, int i) {
  static const char *const defines[2][2] = {{"WAY=1", NULL}, {"WAY=2", NULL}};
  static const char *const names[] = {"scale<float>", NULL};
  cujit_options o = {0}; /* the device's target (every rank has the same kind of GPU) */
  o.defines = defines[way - 1];
  o.name_expressions = i == 1 ? names : NULL;
  /* The second way shows compiling without any disk cache. In a real job leave the cache
   * on: rank 0 then compiles only on the first run, and every rank keeps the import. */
  if (way == 2) o.flags = CUJIT_OPT_NO_CACHE;
  return o;
}

static unsigned long long compiles_so_far(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_cache_get_stats(&s);
  return (unsigned long long)s.compiles;
}

/* Way 1: every rank compiles; the shared disk cache makes it one compile in the job. */
static void build_shared_cache(int i, cujit_module **m) {
  cujit_options o = way_options(1, i);
  cujit_module_from_source(m, kSources[i], kNames[i], &o);
}

/* Way 2: rank 0 compiles and exports; the blob is broadcast; the others import it. */
static void build_broadcast(int i, cujit_module **m) {
  cujit_options o = way_options(2, i);
  unsigned long long size = 0;
  size_t exported = 0;
  void *blob = NULL;
  if (rank == 0) {
    cujit_module_from_source(m, kSources[i], kNames[i], &o);
    cujit_module_export(*m, &blob, &exported);
    size = exported;
  }
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (size > INT_MAX) { /* one MPI_Bcast carries at most INT_MAX elements */
    if (rank == 0) fprintf(stderr, "%s: the blob is too large for one MPI_Bcast\n", kNames[i]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank != 0 && !(blob = malloc(size))) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Bcast(blob, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
  /* a blob that does not match is an answer, not an error: the name in parentheses skips
   * the error handler, and this rank compiles */
  if (rank != 0 && (cujit_module_import)(m, blob, size, kSources[i], kNames[i], &o) != CUJIT_OK) {
    fprintf(stderr, "rank %d: %s\nrank %d compiles %s itself\n", rank, cujit_last_error(), rank,
            kNames[i]);
    cujit_module_from_source(m, kSources[i], kNames[i], &o);
  }
  if (rank == 0)
    cujit_free(blob);
  else
    free(blob);
}

/* Builds the modules one way on every rank, all ranks starting together as at a job's
 * start-up; rank 0 reports how many NVRTC compiles each module took in the whole job. */
static void build(int way, const char *what, void (*how)(int, cujit_module **),
                  cujit_module **mods) {
  unsigned long long before, mine, total;
  double t0;
  int i;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  for (i = 0; i < NMOD; i++) {
    before = compiles_so_far();
    how(i, &mods[i]);
    mine = compiles_so_far() - before;
    total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("way %d (%s): %s: %llu NVRTC compile%s across %d rank%s\n", way, what, kNames[i],
             total, total == 1 ? "" : "s", nranks, nranks == 1 ? "" : "s");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("way %d: every rank had its modules after %.3f s\n", way, MPI_Wtime() - t0);
}

/* Launches saxpy and scale<float> of one way's modules and checks every element; returns
 * the number of wrong elements. */
static int run(cujit_module **mods) {
  enum { N = 4096 };
  static float x[N], y[N], z[N];
  cujit_function *saxpy, *scale;
  int i, wrong = 0;
  cujit_module_get_function(mods[0], "saxpy", &saxpy);
  cujit_module_get_function(mods[1], "scale<float>", &scale);
  for (i = 0; i < N; i++) {
    x[i] = (float)(i % 97) - 48.0f;
    y[i] = z[i] = (float)rank + (float)i * 0.5f;
  }
  CUJIT_LAUNCH(saxpy, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256), cujit_f32(2.0f),
               cujit_in(x, sizeof x), cujit_inout(y, sizeof y), cujit_i32(N));
  CUJIT_LAUNCH(scale, CUJIT_DIM3((N + 255) / 256), CUJIT_DIM3(256), cujit_inout(z, sizeof z),
               cujit_f32(-4.0f), cujit_i32(N));
  for (i = 0; i < N; i++) {
    float want_y = 2.0f * x[i] + ((float)rank + (float)i * 0.5f);
    float want_z = ((float)rank + (float)i * 0.5f) * -4.0f;
    if (y[i] != want_y || z[i] != want_z) {
      if (!wrong)
        printf("rank %d: element %d is %g and %g, expected %g and %g\n", rank, i, (double)y[i],
               (double)z[i], (double)want_y, (double)want_z);
      wrong++;
    }
  }
  return wrong;
}

/* Puts `#include <header>` atop every source (--include). */
static void include_atop(const char *header) {
  static char text[NMOD][1024];
  int i;
  for (i = 0; i < NMOD; i++) {
    snprintf(text[i], sizeof text[i], "#include <%s>\n%s", header, kSources[i]);
    kSources[i] = text[i];
  }
}

int main(int argc, char **argv) {
  cujit_module *shared[NMOD], *broadcast[NMOD];
  int compile_only = 0, gpu = 0, n = 0, ways = 3; /* bit 0: way 1, bit 1: way 2 */
  int wrong = 0, total_wrong = 0, i;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  cujit_error_set_handler(abort_job, NULL);
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--compile-only") == 0)
      compile_only = 1;
    else if (strcmp(argv[i], "--include") == 0 && i + 1 < argc)
      include_atop(argv[++i]);
    else if (strcmp(argv[i], "--way") == 0 && i + 1 < argc &&
             (argv[i + 1][0] == '1' || argv[i + 1][0] == '2') && argv[i + 1][1] == '\0')
      ways = argv[++i][0] - '0';
    else {
      if (rank == 0)
        fprintf(stderr, "usage: %s [--compile-only] [--way 1|2] [--include HEADER]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  memset(shared, 0, sizeof shared);
  memset(broadcast, 0, sizeof broadcast);
  if (ways & 1) build(1, "shared disk cache", build_shared_cache, shared);
  if (ways & 2) build(2, "rank 0 compiles, MPI_Bcast, import", build_broadcast, broadcast);
  if (!compile_only) gpu = (cujit_device_get_count)(&n) == CUJIT_OK && n > 0; /* no GPU: fine */
  if (gpu && (ways & 1)) wrong += run(shared);
  if (gpu && (ways & 2)) wrong += run(broadcast);
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  for (i = 0; i < NMOD; i++) {
    cujit_module_destroy(shared[i]);
    cujit_module_destroy(broadcast[i]);
  }
  if (rank == 0) {
    if (compile_only)
      printf("Compile only: no launches\n");
    else if (!gpu)
      printf("No GPU here (%s); skipping the launches\n", cujit_last_error());
    else if (total_wrong)
      printf("Failed: %d wrong elements\n", total_wrong);
    else
      printf("Success: %d rank%s launched %s kernels and checked them\n", nranks,
             nranks == 1 ? "" : "s", ways == 3 ? "both ways'" : "their");
  }
  MPI_Finalize();
  return total_wrong ? 1 : 0;
}
