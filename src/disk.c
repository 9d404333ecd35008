/* disk.c - cache entries on disk: <root>/<first 2 hex digits>/<32 hex digits>.cujit.
 * Readers take no lock: writers write a unique temporary file beside the entry, fsync it
 * and rename it into place, so a reader sees a whole old entry, a whole new one or none.
 * Entries are opened without following symbolic links. A bad entry is a miss (warned),
 * replaced by the next write. A hit sets the entry's modification time to now: that is
 * its last use, which eviction goes by (access times are unreliable). */
#define _GNU_SOURCE /* O_NOFOLLOW, getrandom */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"

int cj_entry_path_make(const char *root, const cj_key *key, cj_entry_path *p) {
  int n;
  cj_key_hex(key, p->hex);
  n = snprintf(p->shard, sizeof p->shard, "%s/%.2s", root, p->hex);
  if (n < 0 || (size_t)n + 80 >= sizeof p->shard) return -1; /* room for the names below */
  n = snprintf(p->file, sizeof p->file, "%s/%s.cujit", p->shard, p->hex);
  if (n < 0 || (size_t)n >= sizeof p->file) return -1;
  n = snprintf(p->lock, sizeof p->lock, "%s/%s.lock", p->shard, p->hex);
  return n < 0 || (size_t)n >= sizeof p->lock ? -1 : 0;
}

static int invalid(const cj_entry_path *p, const char *why) {
  cj_warn("cache entry '%s' %s; compiling again and replacing it", p->file, why);
  return CJ_DISK_INVALID;
}

/* Reads the whole file behind fd (at most CJ_ENTRY_MAX_SIZE bytes). */
static int read_all(int fd, const cj_entry_path *p, unsigned char **data, size_t *len) {
  struct stat st;
  size_t got = 0;
  ssize_t n;
  char why[96];
  *data = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return invalid(p, "is not a regular file");
  if ((uint64_t)st.st_size > CJ_ENTRY_MAX_SIZE) {
    snprintf(why, sizeof why, "is too large to be an entry (%lld bytes)", (long long)st.st_size);
    return invalid(p, why);
  }
  if (!(*data = cj_malloc((size_t)st.st_size))) return CJ_DISK_OOM;
  while (got < (size_t)st.st_size &&
         ((n = read(fd, *data + got, (size_t)st.st_size - got)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) got += (size_t)n;
  *len = got;
  return CJ_DISK_HIT;
}

static int decode(const cj_entry_path *p, const cj_key *key, const cj_deps *expect,
                  const unsigned char *data, size_t len, cj_image **out) {
  cj_deps recorded = {0};
  cj_entry_meta meta;
  char why[160];
  int rc = cj_entry_decode(key, data, len, out, &recorded, &meta, why, sizeof why);
  if (rc < 0) return CJ_DISK_OOM;
  if (rc > 0) return invalid(p, why);
  rc = cj_deps_same_files(&recorded, expect) ? CJ_DISK_HIT : CJ_DISK_INVALID;
  cj_deps_clear(&recorded);
  if (rc == CJ_DISK_HIT) return rc;
  cj_image_unref(*out);
  *out = NULL;
  return invalid(p, "records other headers than the source includes now");
}

int cj_disk_read(const cj_entry_path *p, const cj_key *key, const cj_deps *expect,
                 cj_image **out) {
  unsigned char *data = NULL;
  size_t len = 0;
  char why[160];
  int fd, rc;
  *out = NULL;
  fd = open(p->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return CJ_DISK_ABSENT;
    snprintf(why, sizeof why, "cannot be opened: %s", errno == ELOOP ? "it is a symbolic link"
                                                                      : strerror(errno));
    return invalid(p, why);
  }
  rc = read_all(fd, p, &data, &len);
  if (rc == CJ_DISK_HIT) rc = decode(p, key, expect, data, len, out);
  if (rc == CJ_DISK_HIT && futimens(fd, NULL) != 0)
    cj_debug("cannot record the last use of '%s': %s", p->file, strerror(errno));
  close(fd);
  cj_free(data);
  return rc;
}

/* ---- writing ---- */

static uint64_t random64(void) {
  static uint64_t counter;
  uint64_t r = 0;
  struct timespec t;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return ((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec) ^
         (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 40);
}

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

/* Creates a unique temporary file in the shard directory. */
static int open_temp(const cj_entry_path *p, char *tmp, size_t size) {
  int tries, fd = -1;
  for (tries = 0; tries < 4 && fd < 0; tries++) {
    int n = snprintf(tmp, size, "%s/.%s.%ld.%016llx.tmp", p->shard, p->hex, (long)getpid(),
                     (unsigned long long)random64());
    if (n < 0 || (size_t)n >= size) return errno = ENAMETOOLONG, -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  return fd;
}

static uint64_t store(const cj_entry_path *p, const cj_buf *b) {
  char tmp[PATH_MAX];
  int fd, err;
  if (cj_mkdir_private(p->shard) != 0) return write_failed(p, "creating its directory", errno);
  if ((fd = open_temp(p, tmp, sizeof tmp)) < 0)
    return write_failed(p, "creating a temporary file", errno);
  if (write_all(fd, b->data, b->len) != 0 || fsync(fd) != 0) {
    err = errno;
    close(fd);
    unlink(tmp);
    return write_failed(p, "writing", err);
  }
  if (close(fd) != 0 || rename(tmp, p->file) != 0) {
    err = errno;
    unlink(tmp);
    return write_failed(p, "renaming it into place", err);
  }
  return b->len;
}

uint64_t cj_disk_write(const cj_entry_path *p, const cj_key *key, const cj_image *im,
                       const cj_deps *deps, const char *name) {
  cj_entry_meta meta;
  cj_buf b = {0};
  uint64_t written;
  memset(&meta, 0, sizeof meta);
  snprintf(meta.name, sizeof meta.name, "%s", name);
  if (cj_nvrtc_version_cached(&meta.nvrtc_major, &meta.nvrtc_minor) != CUJIT_OK ||
      cj_entry_encode(key, im, deps, &meta, &b) != 0) {
    cj_buf_free(&b);
    cj_debug("not caching '%s': out of memory while encoding it", name);
    return 0;
  }
  written = store(p, &b);
  cj_buf_free(&b);
  return written;
}
