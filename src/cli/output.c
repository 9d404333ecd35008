/* output.c - what every command prints and writes: its text (escaped for a terminal), a
 * usage error, a failure with cujit's last error, and an output file (or stdout) with its
 * default name. Nothing else in cli/ writes to a stream: a file's name, a source line
 * NVRTC quotes in its log, a cache entry's name or a header's path may hold escape
 * sequences, and what cujit prints must never act on the terminal. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h" /* cj_escape */

static void put(void *user, const char *p, size_t n) { fwrite(p, 1, n, user); }

void cli_print(FILE *f, const char *fmt, ...) {
  char small[512], *text = small;
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof small) {
    if (!(text = malloc((size_t)n + 1))) {
      fputs("cujit: out of memory\n", stderr);
      return;
    }
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  cj_escape(text, (size_t)n, CJ_ESCAPE_TEXT, put, f);
  if (text != small) free(text);
}

void cli_raw(FILE *f, const char *controls) { fputs(controls, f); }

int cli_usage_error(const char *fmt, const char *arg) {
  cli_print(stderr, "cujit: ");
  cli_print(stderr, fmt, arg);
  cli_print(stderr, "\nrun 'cujit --help' for usage\n");
  return 2;
}

int cli_fail(const char *what) {
  cli_print(stderr, "cujit: %s: %s\n%s\n", what, cujit_status_string(cujit_last_status()),
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
    cli_print(stderr, "cujit: cannot write '%s': %s\n", path, strerror(errno));
    return 1;
  }
  ok = fwrite(data, 1, size, f) == size; /* the bytes asked for, as they are */
  ok = (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
  if (!ok) {
    cli_print(stderr, "cujit: writing '%s' failed: %s\n", path, strerror(errno));
    return 1;
  }
  return 0;
}
