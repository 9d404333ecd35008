/* worker.c - the `cujit-worker` program: compiles for the library's worker pool
 * (worker/pool.c) over the socket it gets as standard input, until the library closes it.
 * It is started by libcujit, not by hand. */
#define _GNU_SOURCE /* close_range */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/worker.h"

int main(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "--serve") != 0) {
    fprintf(stderr, "cujit-worker: compiles CUDA C for libcujit, which starts it; it is not "
                    "run by hand\n");
    return 2;
  }
  cj_env_warnings_off();    /* the library that started it read the same and warned */
  signal(SIGPIPE, SIG_IGN); /* a caller gone mid-reply is seen as a failed write */
  /* descriptors the library's program left open without close-on-exec are its own: a
   * worker holding a pipe's end or a socket would keep the program's peer waiting */
  if (close_range(3, ~0U, 0) != 0) {
    long fd, max = sysconf(_SC_OPEN_MAX);
    for (fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close((int)fd);
  }
  return cj_worker_serve(0);
}
