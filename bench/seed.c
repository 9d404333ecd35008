/* seed.c - cujit-bench-seed: a short program such as the seeds are, written with cujit and
 * nothing else: it makes its context, compiles PyCUDA's multiply_them (from the cache an
 * earlier run filled), looks the kernel up, launches it with an Out and two In buffers of
 * 400 floats (1.6 KB each), then 11 times more, and checks the result. The benchmark's
 * firstio group runs it in new processes (bench/firstio.c).
 *
 *   cujit-bench-seed MODE
 *
 * MODE: pageable (the seed: buffers on the stack); pinned (buffers from cujit_host_alloc,
 * made before the first launch); pool (an array made and destroyed before the first
 * launch, which makes the memory pool); steps (pageable, with the log at debug level: its
 * lines about the first two staged launches, the pool and the pinned area are printed
 * after the figures, each as "log: " and the line). Prints one line of milliseconds:
 * "context module function before first second later", where "before" is what the mode
 * does before the first launch and "later" the median of launches 3 to 12; exits 1 when a
 * call fails or the result is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cujit_array.h"

#define N 400
#define LAUNCHES 12

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int check(cujit_status st, const char *what) {
  if (st == CUJIT_OK) return 0;
  fprintf(stderr, "cujit-bench-seed: %s: %s: %s\n", what, cujit_status_name(st),
          cujit_last_error());
  return -1;
}

/* The debug lines a steps run prints: those about the first staged launches, the pool
 * and the pinned area. */
static char lines[8192];

static void keep_line(cujit_log_level level, const char *message, void *user) {
  size_t n = strlen(lines);
  (void)level, (void)user;
  if (strstr(message, "staged launch ") || strstr(message, "memory pool made") ||
      strstr(message, "pinned area"))
    snprintf(lines + n, sizeof lines - n, "log: %s\n", message);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* What a mode does before the first launch: its buffers, or the pool. */
static int before(const char *mode, float **dest, float **a, float **b) {
  static float stack[3][N];
  if (strcmp(mode, "pinned") == 0)
    return check(cujit_host_alloc((void **)dest, sizeof stack[0]), "cujit_host_alloc") ||
           check(cujit_host_alloc((void **)a, sizeof stack[0]), "cujit_host_alloc") ||
           check(cujit_host_alloc((void **)b, sizeof stack[0]), "cujit_host_alloc");
  *dest = stack[0], *a = stack[1], *b = stack[2];
  if (strcmp(mode, "pool") == 0) {
    int64_t n = N;
    cujit_array *x = NULL;
    if (check(cujit_array_empty(&x, CUJIT_TYPE_F32, 1, &n), "cujit_array_empty")) return -1;
    cujit_array_destroy(x);
    return check(cujit_synchronize(), "cujit_synchronize");
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "pageable";
  cujit_module *m = NULL;
  cujit_function *f = NULL;
  float *dest = NULL, *a = NULL, *b = NULL;
  double t[5], launch[LAUNCHES];
  int i, k;
  if (strcmp(mode, "steps") == 0) {
    cujit_log_set_callback(keep_line, NULL);
    cujit_log_set_level(CUJIT_LOG_DEBUG);
  }
  t[0] = now_ms();
  if (check(cujit_synchronize(), "context")) return 1; /* the driver and the context */
  t[1] = now_ms();
  if (check(cujit_module_from_source(&m, bench_src_seed, "seed.cu", NULL), "from_source")) return 1;
  t[2] = now_ms();
  if (check(cujit_module_get_function(m, "multiply_them", &f), "get_function")) return 1;
  t[3] = now_ms();
  if (before(mode, &dest, &a, &b)) return 1;
  t[4] = now_ms();
  for (i = 0; i < N; i++) a[i] = (float)(i % 17) - 8.0f, b[i] = (float)(i % 5) + 0.5f;
  for (k = 0; k < LAUNCHES; k++) {
    double t0;
    memset(dest, 0, N * sizeof(float));
    t0 = now_ms();
    if (check(CUJIT_LAUNCH(f, CUJIT_DIM3(1), CUJIT_DIM3(N), cujit_out(dest, N * sizeof(float)),
                           cujit_in(a, N * sizeof(float)), cujit_in(b, N * sizeof(float))),
              "launch"))
      return 1;
    launch[k] = now_ms() - t0;
    for (i = 0; i < N; i++)
      if (dest[i] != a[i] * b[i]) {
        fprintf(stderr, "cujit-bench-seed: element %d is %g, not %g\n", i, (double)dest[i],
                (double)(a[i] * b[i]));
        return 1;
      }
  }
  qsort(launch + 2, LAUNCHES - 2, sizeof *launch, cmp);
  printf("%.6f %.6f %.6f %.6f %.6f %.6f %.6f\n", t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3],
         launch[0], launch[1], (launch[6] + launch[7]) / 2);
  fputs(lines, stdout);
  if (strcmp(mode, "pinned") == 0) {
    cujit_host_free(dest);
    cujit_host_free(a);
    cujit_host_free(b);
  }
  cujit_module_destroy(m);
  return 0;
}
