/* lock.c - one compile per key across processes: a lock file beside the entry, locked
 * with fcntl (works on NFS; an open-file-description lock where the system has one, so
 * that threads of one process exclude each other too). The lock dies with its holder.
 * Waiters poll without blocking, so they notice the entry as soon as it is written and
 * give up after a timeout instead of waiting forever for a holder that hangs. The holder
 * removes the lock file before releasing it; a locker checks that the file it locked is
 * still the one at its name, so a removed file is never mistaken for the lock. Lock files
 * are reached through their directory's descriptor and never through a symbolic link. */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"

#ifdef F_OFD_SETLK
#  define CJ_SETLK F_OFD_SETLK
#else
#  define CJ_SETLK F_SETLK
#endif

static int set_lock(int fd, short type) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  return fcntl(fd, CJ_SETLK, &fl);
}

int cj_lock_fd(int fd) { return set_lock(fd, F_WRLCK); }

int cj_lock_fd_wait(int fd, short type, double timeout_s) {
  double start = cj_now_s();
  while (set_lock(fd, type) != 0) {
    if (errno != EAGAIN && errno != EACCES && errno != EINTR) return -1;
    if (cj_now_s() - start >= timeout_s) return errno = ETIMEDOUT, -1;
    cj_nap(0.001);
  }
  return 0;
}

static int same_file(int fd, int dir, const char *name) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && cj_trusted(&a) &&
         fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int cj_lock_try(int dir, const char *name, cj_lock *lock) {
  int tries, fd, err;
  lock->fd = -1;
  for (tries = 0; tries < 8; tries++) {
    fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) return CJ_LOCK_NONE;
    if (set_lock(fd, F_WRLCK) != 0) {
      err = errno;
      close(fd);
      return err == EAGAIN || err == EACCES ? CJ_LOCK_BUSY : CJ_LOCK_NONE;
    }
    if (same_file(fd, dir, name)) {
      lock->fd = fd;
      return CJ_LOCK_HELD;
    }
    close(fd); /* the holder removed it after we opened it: try the new one */
  }
  return CJ_LOCK_NONE;
}

int cj_lock_acquire(int dir, const char *name, const char *what, double timeout_s,
                    int (*ready)(void *), void *ctx, cj_lock *lock) {
  double start = cj_now_s(), delay = 0.001;
  int rc;
  for (;;) {
    rc = cj_lock_try(dir, name, lock);
    if (rc != CJ_LOCK_BUSY) return rc;
    if (ready(ctx)) return CJ_LOCK_ENTRY_READY;
    if (cj_now_s() - start >= timeout_s) {
      cj_warn("waited %.1f s for another process to finish compiling '%s' (its lock is "
              "held); compiling it here as well (CUJIT_CACHE_LOCK_TIMEOUT sets the wait)",
              cj_now_s() - start, what);
      return CJ_LOCK_NONE;
    }
    cj_nap(delay);
    if (delay < 0.004) delay *= 2; /* 1, 2, 4 ms: a waiter sees the entry within 4 ms */
  }
}

void cj_lock_release(int dir, const char *name, cj_lock *lock) {
  if (lock->fd < 0) return;
  unlinkat(dir, name, 0);
  close(lock->fd); /* releases the lock */
  lock->fd = -1;
}
