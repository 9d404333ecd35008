/* measure.c - cujit-bench-measure PROGRAM [ARGS...]: runs the program and prints its wall
 * time in ms and its peak resident memory in KiB. A new process's peak starts at the size
 * of the process that forked it, so the one that measures must be small: this program
 * links nothing but the C library. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  struct rusage ru;
  double t0;
  pid_t pid;
  int status = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: cujit-bench-measure PROGRAM [ARGS...]\n");
    return 2;
  }
  t0 = now_ms();
  if (posix_spawn(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0) return 3;
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status)) return 4;
  printf("%.4f %ld\n", now_ms() - t0, ru.ru_maxrss);
  return WEXITSTATUS(status);
}
