/* cache.c - the 'cujit cache' command. */
#include <stdio.h>

#include "cli.h"

int cli_cache(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "cujit: the cache commands are not available in this build\n");
  return 1;
}

void cli_print_cache_line(void) {}
