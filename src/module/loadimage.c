/* loadimage.c - modules from PTX, CUBIN or fatbin bytes built elsewhere, in memory or in a
 * file. Neither NVRTC nor the cache is involved; the device is needed only at the first
 * kernel or variable lookup, as for compiled modules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module/module.h"
#include "module/prebuilt.h"

/* The largest file read as one image. */
#define MAX_IMAGE_FILE ((off_t)1 << 30)

static const char *kind_suffix(cj_prebuilt_kind kind) {
  return kind == CJ_PREBUILT_PTX ? "ptx" : kind == CJ_PREBUILT_CUBIN ? "cubin" : "fatbin";
}

/* An image holding a copy of the bytes: PTX as its text, a CUBIN as its CUBIN, a fatbin
 * aside; the others empty ("" for the PTX and the log, as a compiled image has). */
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
  if (kind == CJ_PREBUILT_FATBIN && !(im->fatbin = (unsigned char *)cj_memdup(p, size))) goto oom;
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
  cujit_status st = cj_prebuilt_inspect(data, size, name ? name : "image", &kind, arch,
                                        sizeof arch);
  if (st != CUJIT_OK) return st;
  if ((st = image_of(data, size, kind, arch, &im)) != CUJIT_OK) return st;
  if (!name) {
    snprintf(fallback, sizeof fallback, "image.%s", kind_suffix(kind));
    name = fallback;
  }
  if ((st = cj_module_new(im, name, NULL, out)) != CUJIT_OK) cj_image_unref(im);
  return st;
}

cujit_status cujit_module_from_image(cujit_module **out, const void *data, size_t size,
                                     const char *name) {
  if (!out) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_image: out is NULL");
  *out = NULL;
  if (!data || size == 0)
    return cj_fail(CUJIT_ERROR_INVALID_SOURCE, "cujit_module_from_image: data is %s; pass the "
                   "bytes of PTX, a CUBIN or a fatbin", !data ? "NULL" : "empty (size 0)");
  return from_bytes(out, data, size, name);
}

static const char *file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/* Checks what fd is before anything is read: a regular file of a bounded size. */
static cujit_status check_file(int fd, const char *path, size_t *size) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return cj_fail(CUJIT_ERROR_FILE, "cannot read '%s': %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return cj_fail(CUJIT_ERROR_FILE, "'%s' is %s, not a regular file; give the path of a PTX, "
                   "CUBIN or fatbin file", path, file_type(st.st_mode));
  if (st.st_size > MAX_IMAGE_FILE)
    return cj_fail(CUJIT_ERROR_FILE, "'%s' is %lld bytes, more than the 1 GiB cujit reads as "
                   "one image", path, (long long)st.st_size);
  if (st.st_size == 0)
    return cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' is empty; it must hold PTX, a CUBIN or a "
                   "fatbin", path);
  *size = (size_t)st.st_size;
  return CUJIT_OK;
}

/* Reads up to `size` bytes; *got gets how many there were (the file may have shrunk). */
static cujit_status read_all(int fd, const char *path, unsigned char *buf, size_t size,
                             size_t *got) {
  *got = 0;
  while (*got < size) {
    ssize_t n = read(fd, buf + *got, size - *got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return cj_fail(CUJIT_ERROR_FILE, "cannot read '%s': %s", path, strerror(errno));
    if (n == 0) break;
    *got += (size_t)n;
  }
  return CUJIT_OK;
}

/* Opens without blocking (a FIFO is refused, never waited on) and reads a whole regular
 * file into *data (cj_malloc'd, owned by the caller). */
static cujit_status read_image_file(const char *path, unsigned char **data, size_t *size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  size_t want = 0;
  cujit_status st;
  *data = NULL;
  if (fd < 0)
    return cj_fail(CUJIT_ERROR_FILE, "cannot open '%s': %s; check the path and permissions", path,
                   strerror(errno));
  st = check_file(fd, path, &want);
  if (st == CUJIT_OK && !(*data = cj_malloc(want))) st = cj_fail_oom("reading an image file");
  if (st == CUJIT_OK) st = read_all(fd, path, *data, want, size);
  if (st == CUJIT_OK && *size == 0)
    st = cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' is empty; it must hold PTX, a CUBIN or a "
                 "fatbin", path);
  close(fd);
  if (st != CUJIT_OK) {
    cj_free(*data);
    *data = NULL;
  }
  return st;
}

cujit_status cujit_module_from_image_file(cujit_module **out, const char *path) {
  unsigned char *data = NULL;
  size_t size = 0;
  cujit_status st;
  if (!out) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_image_file: out is NULL");
  *out = NULL;
  if (!path || !path[0])
    return cj_fail(CUJIT_ERROR_FILE, "cujit_module_from_image_file: path is %s",
                   path ? "empty" : "NULL");
  if ((st = read_image_file(path, &data, &size)) != CUJIT_OK) return st;
  st = from_bytes(out, data, size, path);
  cj_free(data);
  return st;
}
