/* fuzz_cli_args - the argument parser of 'cujit compile'; each input line is one word.
 * Usage errors go to stderr, which scripts/fuzz sends to a log file. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "fuzz.h"

#define MAXV 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *v[MAXV + 1];
  const char *includes[MAXV + 1], *defines[MAXV + 1], *inputs[MAXV + 1];
  size_t n = 0;
  compile_args c = {0};
  char *buf = fuzz_split(data, size, v, MAXV, &n);
  if (!buf) return 0;
  memset(includes, 0, sizeof includes);
  memset(defines, 0, sizeof defines);
  memset(inputs, 0, sizeof inputs);
  c.inputs = inputs;
  c.includes = includes;
  c.defines = defines;
  if (cli_parse_compile((int)n, v, &c) == 0) {
    if (!c.n_inputs || c.n_inputs > n || c.n_includes > n || c.n_defines > n) abort();
    if (c.output && c.n_inputs != 1) abort();
    if (c.nvrtc && c.nvrtc[c.n_nvrtc] != NULL) abort(); /* must stay NULL-terminated */
    if (!isfinite(c.time_limit_s) || c.time_limit_s < 0) abort();
  }
  free(buf);
  return 0;
}
