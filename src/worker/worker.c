/* worker.c - the `cujit-worker` program: compiles for the library's worker pool
 * (cache/pool.c) over the socket it gets as standard input, until the library closes it.
 * It is started by libcujit, not by hand. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"

int main(int argc, char **argv) {
  if (argc != 2 || strcmp(argv[1], "--serve") != 0) {
    fprintf(stderr, "cujit-worker: compiles CUDA C for libcujit, which starts it; it is not "
                    "run by hand\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN); /* a caller gone mid-reply is seen as a failed write */
  return cj_worker_serve(0);
}
