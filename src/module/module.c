/* module.c - creating modules from source or files, and reading their results. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/cache.h"
#include "module/module.h"

/* One allocation holds the module, the options it was compiled with and its name (the
 * options first, where the alignment of the allocation holds for their pointers). */
cujit_status cj_module_new(cj_image *im, const char *name, const cj_request *req,
                           cujit_module **out) {
  size_t len = strlen(name), saved = req ? cj_request_saved_size(req) : 0;
  cujit_module *m = cj_calloc(1, sizeof *m + saved + len + 1);
  if (!m) return cj_fail_oom("creating the module");
  if (req) m->req = cj_request_save_at(req, m + 1);
  m->name = (char *)(m + 1) + saved;
  memcpy(m->name, name, len + 1);
  m->image = im;
  m->source = im->source;
  pthread_mutex_init(&m->lock, NULL);
  pthread_mutex_init(&m->probe_lock, NULL);
  *out = m;
  return CUJIT_OK;
}

static cujit_status from_source(cujit_module **out, const char *source, const char *name,
                                const cujit_options *opts, const char *dir) {
  cj_request req;
  cj_image *im = NULL;
  cujit_status st;
  st = cj_request_init(&req, source, name, opts, dir);
  if (st != CUJIT_OK) return st;
  st = cj_compile(&req, &im);
  if (st == CUJIT_OK) {
    st = cj_module_new(im, req.name, &req, out);
    if (st != CUJIT_OK) cj_image_unref(im);
  }
  cj_request_free(&req);
  return st;
}

cujit_status cujit_module_from_source(cujit_module **out, const char *source, const char *name,
                                      const cujit_options *opts) {
  if (!out) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_source: out is NULL");
  *out = NULL;
  return from_source(out, source, name, opts, NULL);
}

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

static cujit_status not_regular(const char *path, mode_t mode) {
  return cj_fail(CUJIT_ERROR_FILE,
                 "'%s' is %s, not a regular file; pass a .cu file (for text from a pipe or a "
                 "device, read it yourself and use cujit_module_from_source)",
                 path, file_kind(mode));
}

/* Opens a regular file for reading. O_NONBLOCK: opening a FIFO must not wait for a writer
 * (it is refused once fstat says what it is). */
static cujit_status open_regular(const char *path, int *fd, struct stat *st) {
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (*fd < 0)
    return cj_fail(CUJIT_ERROR_FILE, "cannot open '%s': %s; check the path and permissions", path,
                   strerror(errno));
  if (fstat(*fd, st) != 0) {
    int e = errno;
    close(*fd);
    return cj_fail(CUJIT_ERROR_FILE, "cannot read '%s': %s", path, strerror(e));
  }
  if (S_ISREG(st->st_mode)) return CUJIT_OK;
  close(*fd);
  return not_regular(path, st->st_mode);
}

/* Reads up to size bytes; *got says how many there were. */
static cujit_status read_all(int fd, const char *path, char *buf, size_t size, size_t *got) {
  ssize_t n = 0;
  *got = 0;
  while (*got < size && (n = read(fd, buf + *got, size - *got)) != 0) {
    if (n > 0)
      *got += (size_t)n;
    else if (errno != EINTR)
      return cj_fail(CUJIT_ERROR_FILE, "cannot read '%s': %s", path, strerror(errno));
  }
  return CUJIT_OK;
}

/* Reads a whole regular file; *text is NUL-terminated. A NUL byte inside is refused: the
 * source would silently end there. */
static cujit_status read_file(const char *path, char **text) {
  struct stat info;
  size_t got = 0;
  const char *nul;
  char *buf;
  int fd;
  cujit_status st;
  *text = NULL;
  /* refused before opening: opening a device can have effects of its own */
  if (stat(path, &info) == 0 && !S_ISREG(info.st_mode)) return not_regular(path, info.st_mode);
  if ((st = open_regular(path, &fd, &info)) != CUJIT_OK) return st;
  buf = cj_malloc((size_t)info.st_size + 1);
  st = buf ? read_all(fd, path, buf, (size_t)info.st_size, &got)
           : cj_fail_oom("reading the source file");
  close(fd);
  if (st == CUJIT_OK && (nul = memchr(buf, '\0', got)) != NULL)
    st = cj_fail(CUJIT_ERROR_INVALID_SOURCE,
                 "'%s' holds a NUL byte at offset %zu; a source file must be text (is it a "
                 "binary, or UTF-16?)", path, (size_t)(nul - buf));
  if (st != CUJIT_OK) {
    cj_free(buf);
    return st;
  }
  buf[got] = '\0';
  *text = buf;
  return CUJIT_OK;
}

/* The directory part of path ("." when there is none). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return cj_strdup(".");
  if (slash == path) return cj_strdup("/");
  return cj_memdup(path, (size_t)(slash - path));
}

cujit_status cujit_module_from_file(cujit_module **out, const char *path,
                                    const cujit_options *opts) {
  char *text = NULL, *dir = NULL;
  cujit_status st;
  if (!out) return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_from_file: out is NULL");
  *out = NULL;
  if (!path || !path[0]) return cj_fail(CUJIT_ERROR_FILE, "cujit_module_from_file: path is %s",
                                        path ? "empty" : "NULL");
  st = read_file(path, &text);
  if (st != CUJIT_OK) return st;
  dir = dir_of(path);
  if (!dir)
    st = cj_fail_oom("reading the source file");
  else if (!text[0])
    st = cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' is empty; it must hold CUDA C source", path);
  else
    st = from_source(out, text, path, opts, dir);
  cj_free(dir);
  cj_free(text);
  return st;
}

void cujit_module_destroy(cujit_module *m) {
  if (!m) return;
  cj_module_device_free(m);
  cj_module_probe_free(m);
  cj_image_unref(m->image);
  pthread_mutex_destroy(&m->lock);
  pthread_mutex_destroy(&m->probe_lock);
  cj_free(m);
}

const char *cujit_module_ptx(const cujit_module *m, size_t *size) {
  if (size) *size = m ? m->image->ptx_size : 0;
  return m ? m->image->ptx : NULL;
}

const void *cujit_module_cubin(const cujit_module *m, size_t *size) {
  if (size) *size = m ? m->image->cubin_size : 0;
  return m ? m->image->cubin : NULL;
}

const char *cujit_module_log(const cujit_module *m) { return m ? m->image->log : NULL; }
const char *cujit_module_arch(const cujit_module *m) { return m ? m->image->arch : NULL; }
const char *cujit_module_name(const cujit_module *m) { return m ? m->name : NULL; }
size_t cujit_module_name_count(const cujit_module *m) { return m ? m->image->n_names : 0; }

const char *cujit_module_name_expression(const cujit_module *m, size_t i, const char **lowered) {
  if (!m || i >= m->image->n_names) return NULL;
  if (lowered) *lowered = m->image->lowered[i];
  return m->image->name_exprs[i];
}

cujit_status cujit_module_lowered_name(const cujit_module *m, const char *expr,
                                       const char **lowered) {
  size_t i;
  if (!m || !expr || !lowered)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE, "cujit_module_lowered_name: NULL argument");
  for (i = 0; i < m->image->n_names; i++) {
    if (strcmp(m->image->name_exprs[i], expr) == 0) {
      *lowered = m->image->lowered[i];
      return CUJIT_OK;
    }
  }
  return cj_fail(CUJIT_ERROR_NOT_FOUND,
                 "'%s' is not a name expression of module '%s'; add it to "
                 "cujit_options.name_expressions before compiling", expr, m->name);
}
