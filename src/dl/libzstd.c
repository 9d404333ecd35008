/* libzstd.c - libzstd's table for the loader (see zstd.h and loader.h): the entry points a
 * compressed fatbin entry needs, with the prototypes zstd 1.x declares. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dl/loader.h"
#include "dl/zstd.h"

typedef struct zstd_api {
  size_t (*decompress)(void *dst, size_t capacity, const void *src, size_t size);
  unsigned long long (*content_size)(const void *src, size_t size);
  size_t (*frame_size)(const void *src, size_t size);
  unsigned (*is_error)(size_t code);
} zstd_api;

static zstd_api zs;

static const char *const sonames[] = {"libzstd.so.1"};

static const cj_dsym syms[] = {
    {"ZSTD_decompress", offsetof(zstd_api, decompress), 0},
    {"ZSTD_getFrameContentSize", offsetof(zstd_api, content_size), 0},
    {"ZSTD_findFrameCompressedSize", offsetof(zstd_api, frame_size), 0},
    {"ZSTD_isError", offsetof(zstd_api, is_error), 0},
};

/* Loaded by the system's search (or CUJIT_LIBZSTD), never keyed: what it gives back is
 * read as any outside bytes are. */
static const cj_dlib libzstd = {
    .env = "CUJIT_LIBZSTD",
    .sonames = sonames,
    .n_sonames = CJ_COUNT(sonames),
    .syms = syms,
    .n_syms = CJ_COUNT(syms),
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static CJ_LARGE char load_detail[768];

static void load(void) {
  static CJ_LARGE cj_dlib_file file;
  char why[512];
  void *lib;
  cj_dlib_rc rc;
  cj_dlib_locate(&libzstd, &file);
  rc = cj_dlib_load(&libzstd, &file, &zs, &lib, why, sizeof why);
  if (rc == CJ_DLIB_LOADED) {
    loaded = 1;
    return;
  }
  snprintf(load_detail, sizeof load_detail,
           "reading a compressed fatbin entry needs libzstd, which could not be loaded%s: "
           "%s; install it (Debian and Ubuntu: apt-get install libzstd1), or set "
           "CUJIT_LIBZSTD to the absolute path of libzstd.so.1",
           file.env ? " from CUJIT_LIBZSTD" : "",
           rc == CJ_DLIB_REFUSED ? "CUJIT_LIBZSTD is not an absolute path"
           : why[0]              ? why
                                 : "libzstd.so.1 was not found");
}

int cj_zstd_is_frame(const void *data, size_t size) {
  static const unsigned char magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
  return size >= 4 && memcmp(data, magic, 4) == 0;
}

cujit_status cj_zstd_decompress(const void *data, size_t size, size_t max, unsigned char **out,
                                size_t *out_size) {
  unsigned long long n;
  size_t got;
  *out = NULL;
  *out_size = 0;
  pthread_once(&load_once, load);
  if (!loaded) return CUJIT_ERROR_NOT_SUPPORTED;
  if (!cj_zstd_is_frame(data, size)) return CUJIT_ERROR_INVALID_SOURCE;
  /* a fatbin pads an entry's frame to 8 bytes: the frame alone is decompressed */
  got = zs.frame_size(data, size);
  if (zs.is_error(got) || got > size) return CUJIT_ERROR_INVALID_SOURCE;
  size = got;
  n = zs.content_size(data, size);
  /* ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values */
  if (n >= (unsigned long long)-2 || n > max) return CUJIT_ERROR_INVALID_SOURCE;
  if (!(*out = cj_malloc(n ? (size_t)n : 1))) return CUJIT_ERROR_OUT_OF_MEMORY;
  got = zs.decompress(*out, (size_t)n, data, size);
  if (zs.is_error(got) || got != n) {
    cj_free(*out);
    *out = NULL;
    return CUJIT_ERROR_INVALID_SOURCE;
  }
  *out_size = got;
  return CUJIT_OK;
}

const char *cj_zstd_error(void) { return load_detail; }
