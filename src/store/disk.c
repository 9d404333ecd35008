/* disk.c - cache entries on disk: <root>/<first 2 hex digits>/<32 hex digits>.cujit.
 * Readers take no lock: writers write a unique temporary file beside the entry and rename
 * it into place, so a reader sees a whole old entry, a whole new one or none. The file is
 * not synced to the disk first (that cost a compile 0.5-4 ms): after the machine itself
 * crashes an entry may come back empty or torn, which its size and checksum show, and it
 * is then a miss like any bad entry, replaced by the next compile.
 * Everything is reached through the shard's directory descriptor (checked when opened,
 * cachedir.c), and entries are opened without following symbolic links and checked on
 * their descriptor: a regular file of this user's that nobody else may write. A bad entry
 * is a miss (warned), replaced by the next write. A hit sets the entry's modification
 * time to now: that is its last use, which eviction goes by (access times are
 * unreliable). The writer of a temporary file holds the file's own lock until it is
 * renamed into place, so that pruning can tell a live writer's file from a dead one's. */
#define _GNU_SOURCE /* O_NOFOLLOW */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

int cj_disk_entry_open(const cj_root *r, const cj_key *key, int create, cj_entry_path *p) {
  cj_hash128_hex(key, p->hex);
  memcpy(p->shard, p->hex, 2);
  p->shard[2] = '\0';
  cj_join(p->name, sizeof p->name, p->hex, ".cujit", NULL);
  cj_join(p->lock, sizeof p->lock, p->hex, ".lock", NULL);
  if (cj_join(p->file, sizeof p->file, r->path, "/", p->shard, "/", p->name, NULL) >=
      sizeof p->file)
    cj_join(p->file, sizeof p->file, p->name, NULL);
  p->dir = cj_shard_open(r, p->shard, create);
  return p->dir < 0 ? -1 : 0;
}

void cj_disk_entry_close(cj_entry_path *p) {
  if (p->dir >= 0) close(p->dir);
  p->dir = -1;
}

static int invalid(const cj_entry_path *p, const char *why) {
  cj_warn("cache entry '%s' %s; compiling again and replacing it", p->file, why);
  return CJ_DISK_INVALID;
}

/* Reads the whole file behind fd (at most CJ_ENTRY_MAX_SIZE bytes): a regular file that
 * cj_trusted() accepts. */
static int read_all(int fd, const cj_entry_path *p, cj_file *f) {
  cj_file_rc rc = cj_file_read_fd(fd, CJ_ENTRY_MAX_SIZE, f);
  char why[96];
  if (rc == CJ_FILE_NO_MEMORY) return CJ_DISK_OOM;
  if (rc == CJ_FILE_NOT_REGULAR) return invalid(p, "is not a regular file");
  if (rc == CJ_FILE_CANNOT_READ) {
    snprintf(why, sizeof why, "cannot be read: %s", strerror(f->err));
    return invalid(p, why);
  }
  if (!cj_trusted(&f->st)) {
    cj_free(f->data);
    f->data = NULL;
    return invalid(p, f->st.st_uid != geteuid() && f->st.st_uid != 0
                          ? "belongs to another user"
                          : "is writable by other users");
  }
  if (rc == CJ_FILE_TOO_LARGE) {
    snprintf(why, sizeof why, "is too large to be an entry (%lld bytes)", (long long)f->st.st_size);
    return invalid(p, why);
  }
  return CJ_DISK_HIT;
}

/* Decodes the entry read into f, whose bytes pass to the image (read in place, not
 * copied: a large module is not held twice) when it decodes. */
static int decode(const cj_entry_path *p, const cj_key *key, const cj_deps *expect, cj_file *f,
                  cj_image **out) {
  cj_deps recorded = {0};
  cj_entry_meta meta;
  char why[160];
  int rc = cj_entry_decode_owned(key, f->data, f->len, out, &recorded, &meta, why, sizeof why);
  if (rc == 0) f->data = NULL;
  if (rc < 0) return CJ_DISK_OOM;
  if (rc > 0) return invalid(p, why);
  rc = cj_deplist_same_files(&recorded, expect) ? CJ_DISK_HIT : CJ_DISK_INVALID;
  cj_deplist_clear(&recorded);
  if (rc == CJ_DISK_HIT) return rc;
  cj_image_unref(*out);
  *out = NULL;
  return invalid(p, "records other headers than the source includes now");
}

int cj_disk_read(const cj_entry_path *p, const cj_key *key, const cj_deps *expect, cj_image **out) {
  cj_file f = {0};
  char why[160];
  int fd, rc;
  *out = NULL;
  fd = cj_file_open(p->dir, p->name, CJ_FILE_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return CJ_DISK_ABSENT;
    snprintf(why, sizeof why, "cannot be opened: %s",
             errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    return invalid(p, why);
  }
  rc = read_all(fd, p, &f);
  if (rc == CJ_DISK_HIT) rc = decode(p, key, expect, &f, out);
  /* the last use orders pruning (least recently used first); a use within the last
   * minute is recorded already, to the precision pruning needs */
  if (rc == CJ_DISK_HIT && time(NULL) - f.st.st_mtime > 60 && futimens(fd, NULL) != 0)
    cj_debug("cannot record the last use of '%s': %s", p->file, strerror(errno));
  close(fd);
  cj_free(f.data);
  return rc;
}

/* ---- reading for questions (explain, verify): never warned, never a use ---- */

/* Opens the entry and checks its descriptor as a hit does. fd, or -1 with why. */
static int open_checked(const cj_entry_path *p, struct stat *st, char *why, size_t why_size) {
  int fd = cj_file_open(p->dir, p->name, CJ_FILE_NOFOLLOW);
  if (fd < 0) {
    snprintf(why, why_size, "cannot be opened: %s",
             errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    return -1;
  }
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || !cj_trusted(st)) {
    snprintf(why, why_size,
             "is not a regular file of this user's that only this user may "
             "write");
    close(fd);
    return -1;
  }
  return fd;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t at) {
  char *p = buf;
  while (n) {
    ssize_t got = pread(fd, p, n, (off_t)at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
    at += (uint64_t)got;
  }
  return 0;
}

int cj_disk_read_manifest(const cj_entry_path *p, cj_buf *out) {
  unsigned char head[CJ_ENTRY_HEADER_SIZE];
  uint64_t at, size;
  struct stat st;
  char why[160];
  int fd = open_checked(p, &st, why, sizeof why), rc = 1;
  if (fd < 0) return 1;
  if (pread_all(fd, head, sizeof head, 0) == 0 &&
      cj_entry_manifest_span(head, (uint64_t)st.st_size, &at, &size) == 0 &&
      size <= CJ_MANIFEST_MAX) {
    cj_buf_free(out);
    if (!(out->data = cj_malloc((size_t)size + 1)))
      rc = -1;
    else if (pread_all(fd, out->data, (size_t)size, at) == 0) {
      out->len = (size_t)size;
      out->cap = (size_t)size + 1;
      out->data[size] = '\0';
      rc = cj_entry_manifest_check(head, out->data, out->len);
    }
  }
  close(fd);
  return rc;
}

int cj_disk_read_file(const cj_entry_path *p, cj_file *f, char *why, size_t why_size) {
  struct stat st;
  cj_file_rc rc;
  int fd = open_checked(p, &st, why, why_size);
  if (fd < 0) return 1;
  rc = cj_file_read_fd(fd, CJ_ENTRY_MAX_SIZE, f);
  close(fd);
  if (rc == CJ_FILE_NO_MEMORY) return -1;
  if (rc == CJ_FILE_OK) return 0;
  snprintf(why, why_size, "cannot be read (%s)",
           rc == CJ_FILE_TOO_LARGE ? "too large to be an entry" : strerror(f->err));
  return 1;
}

/* ---- writing ---- */

static int write_all(int fd, const char *data, size_t len) {
  ssize_t n;
  while (len) {
    n = write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

static uint64_t write_failed(const cj_entry_path *p, const char *what, int err) {
  cj_warn("cannot write cache entry '%s' (%s: %s); the module compiled, but it is not cached",
          p->file, what, strerror(err));
  return 0;
}

/* Creates a unique temporary file in the shard directory and takes its lock (where the
 * file system has locks): the lock says that its writer is alive. */
static int open_temp(const cj_entry_path *p, char *tmp, size_t size) {
  int tries, fd = -1;
  for (tries = 0; tries < 4 && fd < 0; tries++) {
    snprintf(tmp, size, ".%s.%ld.%016llx.tmp", p->hex, (long)getpid(),
             (unsigned long long)cj_random64());
    fd = openat(p->dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd >= 0) cj_lock_fd(fd);
  return fd;
}

uint64_t cj_disk_store(const cj_entry_path *p, const cj_buf *b) {
  char tmp[80];
  int fd, err;
  if ((fd = open_temp(p, tmp, sizeof tmp)) < 0)
    return write_failed(p, "creating a temporary file", errno);
  if (write_all(fd, b->data, b->len) != 0 || renameat(p->dir, tmp, p->dir, p->name) != 0) {
    err = errno;
    unlinkat(p->dir, tmp, 0);
    close(fd);
    return write_failed(p, "writing it", err);
  }
  close(fd); /* releases the lock; the entry is in place */
  return b->len;
}

int cj_disk_encode(const cj_key *key, const cj_image *im, const cj_deps *deps, const char *name,
                   const cj_buf *manifest, cj_buf *out) {
  cj_entry_meta meta;
  memset(&meta, 0, sizeof meta);
  snprintf(meta.name, sizeof meta.name, "%s", name);
  if (cj_nvrtc_version_cached(&meta.nvrtc_major, &meta.nvrtc_minor) == CUJIT_OK &&
      cj_entry_encode(key, im, deps, &meta, manifest, out) == 0)
    return 0;
  cj_buf_free(out);
  cj_debug("not caching '%s': out of memory while encoding it", name);
  return -1;
}

uint64_t cj_disk_write(const cj_entry_path *p, const cj_key *key, const cj_image *im,
                       const cj_deps *deps, const char *name, const cj_buf *manifest) {
  cj_buf b = {0};
  uint64_t written;
  if (cj_disk_encode(key, im, deps, name, manifest, &b) != 0) return 0;
  written = cj_disk_store(p, &b);
  cj_buf_free(&b);
  return written;
}
