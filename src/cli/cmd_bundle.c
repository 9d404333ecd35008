/* cmd_bundle.c - bundles on the command line: 'cujit compile --arch sm_80,sm_90 FILE.cu'
 * writes one, 'cujit info FILE' lists what a bundle (or fatbin, CUBIN, PTX) holds, and
 * 'cujit warm --bundle FILE' stores its cache entries in this machine's cache. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

enum { MAX_TARGETS = 64 };

/* Splits "sm_80,sm_90" in `copy` (modified) into targets; their number, or 0 after
 * printing why. */
static size_t split_targets(char *copy, const char **archs) {
  size_t n = 0;
  char *p = copy, *comma;
  for (;;) {
    comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (!*p) {
      cli_usage_error("%s", "--arch has an empty target (write sm_80,sm_90)");
      return 0;
    }
    if (n == MAX_TARGETS) {
      cli_usage_error("--arch gives more than %s targets", "64");
      return 0;
    }
    archs[n++] = p;
    if (!comma) return n;
    p = comma + 1;
  }
}

int cli_run_bundle(const compile_args *c, const char *input) {
  cujit_options opts = CUJIT_OPTIONS_INIT;
  const char *archs[MAX_TARGETS];
  char *copy = strdup(c->arch), *out = NULL;
  void *data = NULL;
  size_t n, size = 0;
  int rc = 2;
  if (!copy) return cli_print(stderr, "cujit: out of memory\n"), 1;
  if (!(n = split_targets(copy, archs))) goto done;
  opts.include_dirs = c->includes;
  opts.defines = c->defines;
  opts.nvrtc_options = c->nvrtc;
  opts.flags = c->flags;
  opts.time_limit_s = c->time_limit_s;
  if (cujit_bundle_from_file(&data, &size, input, &opts, archs, n) != CUJIT_OK) {
    cli_print(stderr, "cujit: %s\n", cujit_last_error());
    rc = cujit_last_status() == CUJIT_ERROR_INVALID_OPTION ? 2 : 1;
    goto done;
  }
  rc = 0;
  if (c->cache_only) goto done;
  out = c->output ? NULL : cli_default_output(input, ".bundle");
  if (!c->output && !out) {
    rc = (cli_print(stderr, "cujit: out of memory\n"), 1);
    goto done;
  }
  rc = cli_write_output(c->output ? c->output : out, data, size);
done:
  free(out);
  free(copy);
  cujit_free(data);
  return rc;
}

/* Reads a whole file (at most 1 GiB) into *data (malloc'd); 0, or 1 after printing why. */
static int read_file(const char *path, void **data, size_t *size) {
  FILE *f;
  char *buf = NULL, *grown;
  size_t cap = 0, n = 0, got;
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return cli_print(stderr, "cujit: '%s' is not a regular file\n", path), 1;
  if (!(f = fopen(path, "rb")))
    return cli_print(stderr, "cujit: cannot open '%s': %s\n", path, strerror(errno)), 1;
  do {
    if (n == cap) {
      if (cap >= ((size_t)1 << 30) || !(grown = realloc(buf, cap ? 2 * cap : 65536))) {
        cli_print(stderr, "cujit: '%s' is %s\n", path,
                  cap ? "too large (over 1 GiB)" : "unreadable: out of memory");
        free(buf);
        fclose(f);
        return 1;
      }
      buf = grown;
      cap = cap ? 2 * cap : 65536;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  if (ferror(f)) {
    cli_print(stderr, "cujit: cannot read '%s': %s\n", path, strerror(errno));
    free(buf);
    fclose(f);
    return 1;
  }
  fclose(f);
  *data = buf;
  *size = n;
  return 0;
}

int cli_info_file(const char *path) {
  void *data = NULL;
  size_t size = 0;
  char *text = NULL;
  if (read_file(path, &data, &size) != 0) return 1;
  if (cujit_image_describe(data, size, path, &text) != CUJIT_OK) {
    cli_print(stderr, "cujit: %s\n", cujit_last_error());
    free(data);
    return 1;
  }
  cli_print(stdout, "%s: %s", path, text);
  cujit_free(text);
  free(data);
  return 0;
}

int cli_warm_bundle(int argc, char **argv) {
  void *data = NULL;
  size_t size = 0, stored = 0;
  int rc = 0;
  if (argc != 1 || argv[0][0] == '-')
    return cli_usage_error("%s", "warm --bundle takes one bundle file");
  if (read_file(argv[0], &data, &size) != 0) return 1;
  if (cujit_bundle_warm(data, size, &stored) != CUJIT_OK)
    rc = (cli_print(stderr, "cujit: %s: %s\n", argv[0], cujit_last_error()), 1);
  else
    cli_print(stdout, "%s: stored %zu cache entr%s\n", argv[0], stored, stored == 1 ? "y" : "ies");
  free(data);
  return rc;
}
