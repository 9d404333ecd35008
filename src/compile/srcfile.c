/* srcfile.c - the files a public call names: read whole, with messages that name the path
 * and say what to pass instead (source files for a compile, prebuilt code, link parts),
 * and a source file's directory, which goes first on its include path. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "compile/compile.h"

cujit_status cj_source_file_load(const char *path, size_t max, const char *what, const char *hint,
                                 cj_file *f) {
  switch (cj_file_read(AT_FDCWD, path, CJ_FILE_STAT_FIRST, max, f)) {
    case CJ_FILE_OK: return CUJIT_OK;
    case CJ_FILE_CANNOT_OPEN:
      return cj_fail(CUJIT_ERROR_FILE, "cannot open '%s': %s; check the path and permissions", path,
                     strerror(f->err));
    case CJ_FILE_NOT_REGULAR:
      return cj_fail(CUJIT_ERROR_FILE, "'%s' is %s, not a regular file; %s", path,
                     cj_file_kind(f->st.st_mode), hint);
    case CJ_FILE_TOO_LARGE:
      return cj_fail(CUJIT_ERROR_FILE,
                     "'%s' is %lld bytes, more than the %zu MiB cujit reads "
                     "from one file",
                     path, (long long)f->st.st_size, max >> 20);
    case CJ_FILE_NO_MEMORY: return cj_fail_oom(what);
    case CJ_FILE_CANNOT_READ: break;
  }
  return cj_fail(CUJIT_ERROR_FILE, "cannot read '%s': %s", path, strerror(f->err));
}

/* Reads a whole source file; *text is NUL-terminated. A NUL byte inside is refused: the
 * source would silently end there. */
cujit_status cj_source_read(const char *path, char **text) {
  cj_file f;
  const char *nul;
  *text = NULL;
  CJ_TRY(cj_source_file_load(path, SIZE_MAX, "reading the source file",
                             "pass a .cu file (for text from a pipe or a device, read it "
                             "yourself and use cujit_module_from_source)",
                             &f));
  if ((nul = memchr(f.data, '\0', f.len)) != NULL) {
    size_t at = (size_t)(nul - f.data);
    cj_free(f.data);
    return cj_fail(CUJIT_ERROR_INVALID_SOURCE,
                   "'%s' holds a NUL byte at offset %zu; a source file must be text (is it a "
                   "binary, or UTF-16?)",
                   path, at);
  }
  *text = f.data;
  return CUJIT_OK;
}

/* The directory part of path ("." when there is none). */
char *cj_source_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return cj_strdup(".");
  if (slash == path) return cj_strdup("/");
  return cj_memdup(path, (size_t)(slash - path));
}

cujit_status cj_source_file(const char *fn, const char *path, char **text, char **dir) {
  *text = *dir = NULL;
  CJ_CHECK(path && path[0], CUJIT_ERROR_FILE, "%s: path is %s", fn, path ? "empty" : "NULL");
  CJ_TRY(cj_source_read(path, text));
  if (!(*text)[0]) {
    cj_free(*text);
    *text = NULL;
    return cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' is empty; it must hold CUDA C source", path);
  }
  if (!(*dir = cj_source_dir(path))) {
    cj_free(*text);
    *text = NULL;
    return cj_fail_oom("reading the source file");
  }
  return CUJIT_OK;
}
