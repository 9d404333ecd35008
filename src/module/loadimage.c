/* loadimage.c - modules from PTX, CUBIN or fatbin bytes built elsewhere, in memory or in a
 * file. Neither NVRTC nor the cache is involved; the device is needed only at the first
 * kernel or variable lookup, as for compiled modules. */
#include <stdio.h>
#include <string.h>

#include "module/module.h"
#include "format/prebuilt.h"

/* The largest file read as one image. */
#define MAX_IMAGE_FILE ((size_t)1 << 30)

static const char *kind_suffix(cj_prebuilt_kind kind) {
  return kind == CJ_PREBUILT_PTX      ? "ptx"
         : kind == CJ_PREBUILT_CUBIN  ? "cubin"
         : kind == CJ_PREBUILT_BUNDLE ? "bundle"
                                      : "fatbin";
}

/* An image holding a copy of the bytes: PTX as its text, a CUBIN as its CUBIN, a fatbin
 * or bundle aside (its entry for a device chosen when it is loaded there); the others
 * empty ("" for the PTX and the log, as a compiled image has). */
static cujit_status image_of(const unsigned char *p, size_t size, cj_prebuilt_kind kind,
                             const char *arch, cj_image **out) {
  cj_image *im = cj_image_new();
  size_t n = size;
  if (!im || !(im->log = cj_strdup(""))) goto oom;
  im->prebuilt = kind;
  snprintf(im->arch, sizeof im->arch, "%s", arch);
  if (kind == CJ_PREBUILT_PTX)
    while (n > 0 && p[n - 1] == '\0') n--;
  else
    n = 0;
  if (!(im->ptx = cj_memdup(p, n))) goto oom;
  im->ptx_size = n;
  if (kind == CJ_PREBUILT_CUBIN && !(im->cubin = (unsigned char *)cj_memdup(p, size))) goto oom;
  if ((kind == CJ_PREBUILT_FATBIN || kind == CJ_PREBUILT_BUNDLE) &&
      !(im->fatbin = (unsigned char *)cj_memdup(p, size)))
    goto oom;
  im->cubin_size = im->cubin ? size : 0;
  im->fatbin_size = im->fatbin ? size : 0;
  *out = im;
  return CUJIT_OK;
oom:
  cj_image_unref(im);
  return cj_fail_oom("copying a prebuilt image");
}

static cujit_status from_bytes(cujit_module **out, const void *data, size_t size,
                               const char *name) {
  cj_prebuilt_kind kind;
  char arch[32], fallback[16];
  cj_image *im = NULL;
  cj_module *m;
  cujit_status st;
  CJ_TRY(cj_prebuilt_inspect(data, size, name ? name : "image", &kind, arch, sizeof arch));
  CJ_TRY(image_of(data, size, kind, arch, &im));
  if (!name) {
    snprintf(fallback, sizeof fallback, "image.%s", kind_suffix(kind));
    name = fallback;
  }
  if ((st = cj_module_new(im, name, &m)) != CUJIT_OK)
    cj_image_unref(im);
  else
    *out = cj_module_handle(m);
  return st;
}

cujit_status cujit_module_from_image(cujit_module **out, const void *data, size_t size,
                                     const char *name) {
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_image: out is NULL");
  *out = NULL;
  CJ_CHECK(data && size > 0, CUJIT_ERROR_INVALID_SOURCE,
           "cujit_module_from_image: data is %s; "
           "pass the bytes of PTX, a CUBIN, a fatbin or a cujit bundle",
           !data ? "NULL" : "empty (size 0)");
  return from_bytes(out, data, size, name);
}

/* Reads a whole regular file of at most 1 GiB. */
static cujit_status read_image_file(const char *path, cj_file *f) {
  CJ_TRY(cj_source_file_load(path, MAX_IMAGE_FILE, "reading an image file",
                             "give the path of a PTX, CUBIN, fatbin or bundle file", f));
  if (f->len) return CUJIT_OK;
  cj_free(f->data);
  return cj_fail(CUJIT_ERROR_INVALID_SOURCE,
                 "'%s' is empty; it must hold PTX, a CUBIN, a "
                 "fatbin or a cujit bundle",
                 path);
}

cujit_status cujit_module_from_image_file(cujit_module **out, const char *path) {
  cj_file f;
  cujit_status st;
  CJ_CHECK(out, CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_image_file: out is NULL");
  *out = NULL;
  CJ_CHECK(path && path[0], CUJIT_ERROR_FILE, "cujit_module_from_image_file: path is %s",
           path ? "empty" : "NULL");
  CJ_TRY(read_image_file(path, &f));
  st = from_bytes(out, f.data, f.len, path);
  cj_free(f.data);
  return st;
}
