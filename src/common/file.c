/* file.c - reading a whole file: the one way the library does it (module sources and
 * images, included headers, cache entries). Files are opened without waiting, so that a
 * FIFO put where a file was expected is refused rather than waited on, and checked on the
 * open descriptor, so that what is read is what was checked. Also whether something found
 * on disk may be trusted (its owner and who may write to it). */
#define _GNU_SOURCE /* O_NOFOLLOW */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

int cj_file_open(int dir, const char *path, int flags) {
  int o = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (flags & CJ_FILE_NOFOLLOW) o |= O_NOFOLLOW;
  return openat(dir, path, o);
}

static cj_file_rc read_failed(cj_file *f, int err) {
  cj_free(f->data);
  f->data = NULL;
  f->len = 0;
  f->err = err;
  return CJ_FILE_CANNOT_READ;
}

/* Reads up to `size` bytes (fewer when the file ends sooner), then looks for one more. */
static cj_file_rc read_all(int fd, size_t size, cj_file *f) {
  ssize_t n;
  char more;
  while (f->len < size) {
    n = read(fd, f->data + f->len, size - f->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return read_failed(f, errno);
    if (n == 0) break;
    f->len += (size_t)n;
  }
  if (f->len == size) {
    do n = read(fd, &more, 1);
    while (n < 0 && errno == EINTR);
    f->grew = n > 0;
  }
  f->data[f->len] = '\0';
  return CJ_FILE_OK;
}

cj_file_rc cj_file_read_fd(int fd, size_t max, cj_file *f) {
  size_t size;
  memset(f, 0, sizeof *f);
  if (fstat(fd, &f->st) != 0) return read_failed(f, errno);
  if (!S_ISREG(f->st.st_mode)) return CJ_FILE_NOT_REGULAR;
  if (f->st.st_size < 0 || (uint64_t)f->st.st_size > max || (uint64_t)f->st.st_size >= SIZE_MAX)
    return CJ_FILE_TOO_LARGE;
  size = (size_t)f->st.st_size;
  if (!(f->data = cj_malloc(size + 1))) return CJ_FILE_NO_MEMORY;
  return read_all(fd, size, f);
}

cj_file_rc cj_file_read(int dir, const char *path, int flags, size_t max, cj_file *f) {
  int fd, at = flags & CJ_FILE_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0;
  cj_file_rc rc;
  memset(f, 0, sizeof *f);
  if ((flags & CJ_FILE_STAT_FIRST) && fstatat(dir, path, &f->st, at) == 0 &&
      !S_ISREG(f->st.st_mode))
    return CJ_FILE_NOT_REGULAR;
  if ((fd = cj_file_open(dir, path, flags)) < 0) {
    f->err = errno;
    return CJ_FILE_CANNOT_OPEN;
  }
  rc = cj_file_read_fd(fd, max, f);
  close(fd);
  return rc;
}

const char *cj_file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

int cj_trusted(const struct stat *st) {
  return (st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

const char *cj_distrust(const struct stat *st) {
  if (st->st_uid != geteuid() && st->st_uid != 0) return "it belongs to another user";
  if (st->st_mode & S_IWOTH) return "others may write to it";
  return "its group may write to it";
}
