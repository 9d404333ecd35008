/* fuzz_include_scan - the include scanner on arbitrary text: the input's first part (parts
 * are separated by form feeds) is the source, the others (up to 64) in-memory headers
 * h0.h, h1.h, ... which include each other as the text says, so that trees of many
 * headers are scanned. It must never crash, hang or leak, whatever the directives and the
 * comments, literals and line splices around them look like. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

#define MAX_HEADERS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return 0;
}

/* Splits buf at form feeds into at most `max` NUL-terminated parts; returns how many. */
static size_t split(char *buf, char **part, size_t max) {
  size_t n = 0;
  char *p = buf;
  while (n < max) {
    part[n++] = p;
    if (!(p = strchr(p, '\f'))) break;
    *p++ = '\0';
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char names[MAX_HEADERS][8];
  char *part[MAX_HEADERS + 1], *buf = malloc(size + 1), bypass[512];
  cujit_header hdr[MAX_HEADERS + 1];
  cujit_options o = {0};
  cj_deps *deps = NULL;
  cj_request r;
  size_t n, i;
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  n = split(buf, part, MAX_HEADERS + 1);
  for (i = 1; i < n; i++) {
    snprintf(names[i - 1], sizeof names[i - 1], "h%zu.h", i - 1);
    hdr[i - 1].name = names[i - 1];
    hdr[i - 1].source = part[i];
  }
  hdr[n - 1].name = NULL;
  hdr[n - 1].source = NULL;
  o.arch = "compute_80";
  o.headers = hdr;
  if (part[0][0] && cj_request_init(&r, part[0], "fuzz.cu", &o, NULL) == CUJIT_OK) {
    if (cj_scan_request(&r, &deps, bypass, sizeof bypass) == CUJIT_OK) cj_deplist_destroy(deps);
    cj_request_free(&r);
  }
  free(buf);
  return 0;
}
