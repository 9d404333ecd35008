/* diskstats.c - counters kept in the cache directory (file "stats", a few "name value"
 * lines), shared by every process using the cache, so that 'cujit cache stats' reports
 * hits and misses across processes. Updated under an fcntl lock on the file itself; the
 * critical section is one read and one write. It also carries the estimated size of the
 * entries, so that pruning scans the directory only when the estimate passes the limit. */
#define _GNU_SOURCE /* F_OFD_SETLKW */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"

#ifdef F_OFD_SETLKW
#  define CJ_SETLKW F_OFD_SETLKW
#else
#  define CJ_SETLKW F_SETLKW
#endif

static const char *const names[] = {"hits", "misses", "compiles", "evictions", "size", "scanned"};

static uint64_t *field(cj_disk_counters *c, size_t i) {
  uint64_t *f[] = {&c->hits, &c->misses, &c->compiles, &c->evictions, &c->size,
                   (uint64_t *)&c->scanned};
  return f[i];
}

static void parse(const char *text, cj_disk_counters *c) {
  const char *line = text;
  size_t i;
  memset(c, 0, sizeof *c);
  while (line && *line) {
    for (i = 0; i < CJ_COUNT(names); i++) {
      size_t n = strlen(names[i]);
      if (strncmp(line, names[i], n) == 0 && line[n] == ' ')
        *field(c, i) = strtoull(line + n + 1, NULL, 10);
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
}

static int format(char *buf, size_t size, cj_disk_counters *c) {
  size_t i, len = 0;
  for (i = 0; i < CJ_COUNT(names) && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s %20" PRIu64 "\n", names[i], *field(c, i));
  return len < size ? (int)len : -1;
}

static int open_locked(const char *root, int create) {
  char path[PATH_MAX];
  struct flock fl;
  int fd;
  snprintf(path, sizeof path, "%s/stats", root);
  fd = open(path, (create ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  memset(&fl, 0, sizeof fl);
  fl.l_type = create ? F_WRLCK : F_RDLCK;
  fl.l_whence = SEEK_SET;
  while (fcntl(fd, CJ_SETLKW, &fl) != 0) {
    if (errno == EINTR) continue;
    break; /* no locks here (some network file systems): go on unlocked */
  }
  return fd;
}

static void read_locked(int fd, cj_disk_counters *c) {
  char buf[1024];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  buf[n > 0 ? n : 0] = '\0';
  parse(buf, c);
}

/* Numbers are written at a fixed width, so the file keeps its length and an update is one
 * pwrite: truncating first costs a journal commit on common file systems, which would
 * dominate a disk hit. */
static void write_locked(int fd, cj_disk_counters *c) {
  char buf[1024];
  struct stat st;
  int n = format(buf, sizeof buf, c);
  if (n < 0 || pwrite(fd, buf, (size_t)n, 0) != n ||
      (fstat(fd, &st) == 0 && st.st_size != n && ftruncate(fd, n) != 0))
    cj_debug("cannot update the cache's stats file: %s", strerror(errno));
}

int cj_diskstats_add(const char *root, const cj_disk_counters *d, uint64_t max_size) {
  cj_disk_counters c;
  int fd = open_locked(root, 1), due;
  if (fd < 0) return 0;
  read_locked(fd, &c);
  c.hits += d->hits;
  c.misses += d->misses;
  c.compiles += d->compiles;
  c.evictions += d->evictions;
  c.size += d->size;
  write_locked(fd, &c);
  close(fd);
  due = d->size && (c.scanned == 0 || c.size > max_size);
  return due;
}

void cj_diskstats_read(const char *root, cj_disk_counters *out) {
  int fd = open_locked(root, 0);
  memset(out, 0, sizeof *out);
  if (fd < 0) return;
  read_locked(fd, out);
  close(fd);
}

void cj_diskstats_scanned(const char *root, uint64_t size, uint64_t evictions) {
  cj_disk_counters c;
  int fd = open_locked(root, 1);
  if (fd < 0) return;
  read_locked(fd, &c);
  c.size = size;
  c.evictions += evictions;
  c.scanned = (int64_t)time(NULL);
  write_locked(fd, &c);
  close(fd);
}
