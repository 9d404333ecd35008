/* diskstats.c - counters kept in the cache directory (file "stats", a few "name value"
 * lines), shared by every process using the cache, so that 'cujit cache stats' reports
 * hits and misses across processes. Updated under an fcntl lock on the file itself; the
 * critical section is one read and one write. It also carries the estimated size of the
 * entries, so that pruning scans the directory only when the estimate passes the limit.
 * The counters are best effort: the lock is waited for briefly (CJ_STATS_LOCK_WAIT_S), so
 * that a process stopped while holding it cannot stall the others, and a stats file that
 * is not a regular file of this user's is reported and left alone. */
#define _GNU_SOURCE /* O_NOFOLLOW */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"

static const char *const names[] = {"hits",          "misses",        "compiles",
                                    "evictions",     "size",          "scanned",
                                    "remote_hits",   "remote_misses", "remote_invalid",
                                    "remote_errors", "remote_time_us"};

static uint64_t *field(cj_disk_counters *c, size_t i) {
  uint64_t *f[] = {&c->hits,          &c->misses,        &c->compiles,
                   &c->evictions,     &c->size,          (uint64_t *)&c->scanned,
                   &c->remote_hits,   &c->remote_misses, &c->remote_invalid,
                   &c->remote_errors, &c->remote_time_us};
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

#define CJ_WHY_SIZE (PATH_MAX + 160)

/* Opens the stats file and checks it on its descriptor. -1 when there is none or it
 * cannot be opened; -2, with the reason in `why`, when it is not a regular file of this
 * user's. */
static int open_checked(const cj_root *r, int create, char why[CJ_WHY_SIZE]) {
  struct stat st;
  int fd =
      openat(r->fd, "stats",
             (create ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  /* none yet, or a read-only cache (deployed warm): no statistics, and nothing to report */
  if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == EROFS || errno == EPERM)) return -1;
  if (fd < 0 && fstatat(r->fd, "stats", &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && cj_trusted(&st)) return fd;
  if (fd >= 0) close(fd);
  snprintf(why, CJ_WHY_SIZE,
           "the cache's statistics file '%s/stats' is %s; cujit keeps no "
           "statistics there until it is removed",
           r->path,
           !S_ISREG(st.st_mode) ? cj_file_kind(st.st_mode)
           : cj_trusted(&st)    ? "unusable"
                                : "another user's or writable by others");
  return -2;
}

/* Opens the stats file and locks it, waiting briefly. An update (`need_lock`) is dropped
 * when the file cannot be used (warned once) or its lock stays busy; a read goes on
 * without the lock, and a file that cannot be used sets the error detail. Returns the
 * descriptor, -1 or -2 as open_checked(). */
/* The stats file whose lock a wait ran out on, and until when its updates are skipped (so
 * that a stopped holder costs one wait, not one per compile). */
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_busy, busy_lock)
static struct busy {
  dev_t dev;
  ino_t ino;
  int64_t until;
} busy;

static int64_t now_s(void) { return (int64_t)time(NULL); }

static int skipped(int fd) {
  struct stat st;
  int skip;
  if (fstat(fd, &st) != 0) return 0;
  pthread_mutex_lock(&busy_lock);
  skip = st.st_dev == busy.dev && st.st_ino == busy.ino && now_s() < busy.until;
  pthread_mutex_unlock(&busy_lock);
  return skip;
}

static void skip_for_a_while(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  pthread_mutex_lock(&busy_lock);
  busy.dev = st.st_dev;
  busy.ino = st.st_ino;
  busy.until = now_s() + 10;
  pthread_mutex_unlock(&busy_lock);
}

static int open_locked(const cj_root *r, int create, int need_lock) {
  char why[CJ_WHY_SIZE];
  int fd = open_checked(r, create, why);
  if (fd >= 0 && need_lock && skipped(fd)) {
    close(fd);
    return -1;
  }
  if (fd == -2 && need_lock) cj_warn_once(why);
  if (fd == -2 && !need_lock) cj_fail(CUJIT_ERROR_CACHE, "%s", why);
  if (fd < 0) return fd;
  if (cj_lock_fd_wait(fd, create ? F_WRLCK : F_RDLCK, CJ_STATS_LOCK_WAIT_S) == 0 ||
      errno != ETIMEDOUT || !need_lock)
    return fd; /* no locks on this file system, or a read: go on unlocked */
  cj_debug("the cache's statistics file is locked by a process that does not let go; the "
           "counters' updates are dropped for 10 s");
  skip_for_a_while(fd);
  close(fd);
  return -1;
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

/* ---- hits, counted in batches ----
 *
 * A disk hit is the common case of a new process, and updating the file costs it eight
 * system calls under a lock. Hits are counted here instead and written with the next
 * update this process makes anyway (a miss, a scan), every 64 hits, when the statistics
 * are read in this process, and at exit; hits pending for another cache directory than
 * the one in use are dropped (the counters are best effort). A forked child starts with
 * none, so that no hit is written twice. */

#define HIT_BATCH 64

static pthread_mutex_t hits_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pending_hits;
/* The directory they are for, as a hash of its path: a copy of the path would cost a
 * hit a page of its own (a fresh process faults every page it first writes). */
static uint64_t pending_dir;
static int hooks_set;

/* Around a fork: the lock is one fork() takes (common/forklock.c), so that the child gets
 * it free and the counter whole; the child starts with no hits (the parent writes them). */
static void fork_child(void) { pending_hits = 0; }

__attribute__((constructor)) static void fork_hooks(void) {
  cj_fork_guard(&hits_lock);
  cj_fork_hooks(NULL, NULL, fork_child);
}

static void flush_at_exit(void) {
  cj_root r;
  if (!pending_hits || cj_root_open(&r, 0) != 0) return;
  cj_diskstats_flush(&r);
  cj_root_close(&r);
}

static uint64_t dir_id(const cj_root *r) { return cj_checksum(r->path, strlen(r->path), "", 0); }

/* Takes the hits pending for r's directory (lock held); 0 for another directory. */
static uint64_t take_pending(const cj_root *r) {
  uint64_t n = pending_dir == dir_id(r) ? pending_hits : 0;
  pending_hits = 0;
  return n;
}

void cj_diskstats_flush(const cj_root *r) {
  cj_disk_counters d;
  memset(&d, 0, sizeof d);
  pthread_mutex_lock(&hits_lock);
  d.hits = take_pending(r);
  pthread_mutex_unlock(&hits_lock);
  if (d.hits) cj_diskstats_add(r, &d, 0);
}

void cj_diskstats_hit(const cj_root *r) {
  uint64_t n, id;
  pthread_mutex_lock(&hits_lock);
  if (!hooks_set) {
    hooks_set = 1;
    cj_at_end(flush_at_exit);
  }
  id = dir_id(r);
  if (pending_hits && pending_dir != id) pending_hits = 0;
  pending_dir = id;
  n = ++pending_hits;
  pthread_mutex_unlock(&hits_lock);
  if (n >= HIT_BATCH) cj_diskstats_flush(r);
}

int cj_diskstats_add(const cj_root *r, const cj_disk_counters *d, uint64_t max_size) {
  cj_disk_counters c;
  uint64_t pending;
  int fd = open_locked(r, 1, 1), due;
  if (fd < 0) return -1;
  read_locked(fd, &c);
  pthread_mutex_lock(&hits_lock); /* the batched hits go with this update */
  pending = take_pending(r);
  pthread_mutex_unlock(&hits_lock);
  c.hits += d->hits + pending;
  c.misses += d->misses;
  c.compiles += d->compiles;
  c.evictions += d->evictions;
  c.size += d->size;
  c.remote_hits += d->remote_hits;
  c.remote_misses += d->remote_misses;
  c.remote_invalid += d->remote_invalid;
  c.remote_errors += d->remote_errors;
  c.remote_time_us += d->remote_time_us;
  write_locked(fd, &c);
  close(fd);
  due = d->size && (c.scanned == 0 || c.size > max_size);
  return due;
}

int cj_diskstats_read(const cj_root *r, cj_disk_counters *out) {
  int fd;
  cj_diskstats_flush(r); /* this process's own hits count */
  fd = open_locked(r, 0, 0);
  memset(out, 0, sizeof *out);
  if (fd < 0) return fd == -2 ? -1 : 0;
  read_locked(fd, out);
  close(fd);
  return 0;
}

void cj_diskstats_scanned(const cj_root *r, uint64_t size, uint64_t evictions) {
  cj_disk_counters c;
  int fd = open_locked(r, 1, 1);
  if (fd < 0) return;
  read_locked(fd, &c);
  c.size = size;
  c.evictions += evictions;
  c.scanned = (int64_t)time(NULL);
  write_locked(fd, &c);
  close(fd);
}
