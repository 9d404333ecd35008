/* output.c - what every command prints and writes: a usage error, a failure with cujit's
 * last error, and an output file (or stdout) with its default name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "cujit: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'cujit --help' for usage\n");
  return 2;
}

int cli_fail(const char *what) {
  fprintf(stderr, "cujit: %s: %s\n%s\n", what, cujit_status_string(cujit_last_status()),
          cujit_last_error());
  return 1;
}

/* FILE's base name with its extension replaced by ext. */
char *cli_default_output(const char *input, const char *ext) {
  const char *base = strrchr(input, '/');
  const char *dot;
  size_t n;
  char *out;
  base = base ? base + 1 : input;
  dot = strrchr(base, '.');
  n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  out = malloc(n + strlen(ext) + 1);
  if (!out) return NULL;
  memcpy(out, base, n);
  strcpy(out + n, ext);
  return out;
}

int cli_write_output(const char *path, const void *data, size_t size) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  int ok;
  if (!f) {
    fprintf(stderr, "cujit: cannot write '%s': %s\n", path, strerror(errno));
    return 1;
  }
  ok = fwrite(data, 1, size, f) == size;
  ok = (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
  if (!ok) {
    fprintf(stderr, "cujit: writing '%s' failed: %s\n", path, strerror(errno));
    return 1;
  }
  return 0;
}
