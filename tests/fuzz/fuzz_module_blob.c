/* fuzz_module_blob - a module blob (cujit_module_import()'s input) on arbitrary bytes: as
 * they are (mostly rejected by the header checks), and resealed: the blob's sizes and
 * checksum made to match, and those of the cache entry inside it, so that the fingerprint
 * and entry parsers, the key comparison and the message saying what differs all see the
 * bytes. It must never crash, read out of bounds or allocate what a length merely claims,
 * and every refusal must be CUJIT_ERROR_INVALID_VALUE with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "format/blob.h"

static const char kSource[] = "__global__ void k(int *x) { x[threadIdx.x] += 1; }\n";

static void import(const uint8_t *data, size_t size) {
  static const char *const names[] = {"k", NULL};
  cujit_options o = {0};
  cujit_module *m = NULL;
  cujit_status st;
  o.arch = "compute_80";
  o.name_expressions = names;
  o.flags = CUJIT_OPT_NO_CACHE;
  st = cujit_module_import(&m, data, size, kSource, "fuzz.cu", &o);
  if (st == CUJIT_OK) {
    cujit_module_destroy(m);
    return;
  }
  if (m || st != CUJIT_ERROR_INVALID_VALUE || !cujit_last_error()[0]) abort();
}

static void put64(uint8_t *p, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Makes the sizes and checksums of the blob, and of the entry inside it, match. */
static void reseal(uint8_t *b, size_t size) {
  uint64_t fsize = get64(b + 16), esize;
  uint8_t *e;
  if (fsize > size - CJ_BLOB_HEADER_SIZE) fsize = (size - CJ_BLOB_HEADER_SIZE) / 2;
  esize = size - CJ_BLOB_HEADER_SIZE - fsize;
  put64(b + 16, fsize);
  put64(b + 24, esize);
  e = b + CJ_BLOB_HEADER_SIZE + fsize;
  if (esize >= CJ_ENTRY_HEADER_SIZE) { /* all payload, no manifest */
    put64(e + 32, esize - CJ_ENTRY_HEADER_SIZE);
    put64(e + 40, cj_checksum(e, 40, e + CJ_ENTRY_HEADER_SIZE, esize - CJ_ENTRY_HEADER_SIZE));
    put64(e + 48, 0);
    put64(e + 56, cj_checksum(e + 48, 8, e + esize, 0));
  }
  put64(b + 32, cj_checksum(b, 32, b + CJ_BLOB_HEADER_SIZE, size - CJ_BLOB_HEADER_SIZE));
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("CUJIT_CACHE", "0", 1);
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy;
  import(data, size);
  if (size < CJ_BLOB_HEADER_SIZE || !(copy = malloc(size))) return 0;
  memcpy(copy, data, size);
  reseal(copy, size);
  import(copy, size);
  free(copy);
  return 0;
}
