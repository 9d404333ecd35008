/* util.c - time and statistics. */
#include <stdlib.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_min(const double *v, size_t n) {
  double m = v[0];
  size_t i;
  for (i = 1; i < n; i++)
    if (v[i] < m) m = v[i];
  return m;
}

double bench_max(const double *v, size_t n) {
  double m = v[0];
  size_t i;
  for (i = 1; i < n; i++)
    if (v[i] > m) m = v[i];
  return m;
}

int bench_reps(int full, int quick) { return bench_cfg.quick ? quick : full; }
