/* lock.c - one compile per key across processes: a lock file beside the entry, locked
 * with fcntl (works on NFS; an open-file-description lock where the system has one, so
 * that threads of one process exclude each other too). The lock dies with its holder.
 * Waiters poll without blocking, so they notice the entry as soon as it is written and
 * give up after a timeout instead of waiting forever for a holder that hangs. The holder
 * removes the lock file before releasing it; a locker checks that the file it locked is
 * still the one at its name, so a removed file is never mistaken for the lock. Lock files
 * are reached through their directory's descriptor and never through a symbolic link.
 *
 * A holder writes who it is into the lock file: its pid, its start time (so that a reused
 * pid is not taken for it), the boot it runs in and its pid namespace (so that a pid of
 * another machine sharing the cache, or of another container, is never looked up here).
 * A waiter that finds that process in /proc stopped (SIGSTOP, Ctrl-Z, a debugger: state T
 * or t) and using no CPU for CJ_STOPPED_S stops waiting and compiles too; a holder it
 * cannot see (another machine, container or user hidden by /proc) is waited for until the
 * timeout, as is one that runs or sleeps (it may be waiting on a worker, on the remote
 * tier or on a compile hook). A stopped holder that resumes writes its entry atomically,
 * as any writer does. The lock dies with its holder unless a child the holder forked
 * (without exec) still has the lock's descriptor, which keeps it held: a holder that
 * ended, its lock still held, for CJ_ENDED_S is not waited for either (the error mode's
 * end, a crash or a kill of a process that forked). */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

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
         fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

/* ---- who holds a lock ---- */

#define CJ_STOPPED_S 2.0 /* a holder seen stopped this long, using no CPU, is not waited for */
#define CJ_ENDED_S 0.5   /* nor one seen ended this long whose lock a forked child holds */
#define CJ_LOOK_S 0.25   /* how often a waiter looks at the holder */

typedef struct holder {
  long pid;
  unsigned long long start; /* in clock ticks after boot (/proc/PID/stat's starttime) */
  unsigned long long pidns; /* the inode of its pid namespace */
  char boot[40];            /* /proc/sys/kernel/random/boot_id */
} holder;

/* Reads a small /proc file into buf (NUL-terminated): its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  ssize_t n;
  if (fd < 0) return -1;
  n = pread(fd, buf, size - 1, 0);
  close(fd);
  if (n >= 0) buf[n] = '\0';
  return n;
}

/* The state, CPU time (user and system, in ticks) and start time of process pid: 0, or -1
 * when it cannot be seen. */
static int proc_stat(long pid, char *state, unsigned long long *cpu, unsigned long long *start) {
  char path[64], text[1024];
  unsigned long long utime, stime;
  const char *p;
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if (read_small(path, text, sizeof text) <= 0 || !(p = strrchr(text, ')')))
    return -1; /* the name, in parentheses, may hold spaces and ')' */
  if (sscanf(p + 1,
             " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
             "%*d %*d %llu",
             state, &utime, &stime, start) != 4)
    return -1;
  *cpu = utime + stime;
  return 0;
}

/* This process: 0, or -1 when it cannot say (no /proc). */
static int whoami(holder *me) {
  struct stat ns;
  char state;
  unsigned long long cpu;
  memset(me, 0, sizeof *me);
  me->pid = (long)getpid();
  if (proc_stat(me->pid, &state, &cpu, &me->start) != 0 || stat("/proc/self/ns/pid", &ns) != 0 ||
      read_small("/proc/sys/kernel/random/boot_id", me->boot, sizeof me->boot) < 36)
    return -1;
  me->boot[36] = '\0';
  me->pidns = (unsigned long long)ns.st_ino;
  return 0;
}

/* This process, looked up once per process (a forked child looks again). */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_self, self_lock)

static int self(holder *out) {
  static holder me;
  static int known; /* 1: me is this process; -1: it cannot be said */
  int rc;
  pthread_mutex_lock(&self_lock);
  if (me.pid != (long)getpid()) known = whoami(&me) == 0 ? 1 : -1;
  *out = me;
  rc = known > 0 ? 0 : -1;
  pthread_mutex_unlock(&self_lock);
  return rc;
}

/* The record a holder writes, always of the same length (so that it overwrites a record
 * left in the file by a holder that died). */
#define RECORD_FORMAT "cujit-lock pid %10ld start %20llu boot %-36.36s pidns %20llu\n"

static void write_record(int fd) {
  char text[160];
  holder me;
  int n;
  if (self(&me) != 0) return; /* no /proc: waiters wait for the timeout */
  n = snprintf(text, sizeof text, RECORD_FORMAT, me.pid, me.start, me.boot, me.pidns);
  if (n > 0 && (size_t)n < sizeof text && pwrite(fd, text, (size_t)n, 0) != n)
    cj_debug("could not record this process in a lock file: %s", strerror(errno));
}

/* The holder the lock file records, if it runs in this boot and pid namespace and is
 * another process: 0, else -1. */
static int recorded_holder(int dir, const char *name, holder *h) {
  char text[160];
  struct stat st;
  holder me;
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  ssize_t n = -1;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && cj_trusted(&st))
    n = pread(fd, text, sizeof text - 1, 0);
  if (fd >= 0) close(fd);
  if (n <= 0 || self(&me) != 0) return -1;
  text[n] = '\0';
  memset(h, 0, sizeof *h);
  if (sscanf(text, "cujit-lock pid %ld start %llu boot %36s pidns %llu", &h->pid, &h->start,
             h->boot, &h->pidns) != 4)
    return -1; /* none yet, or being written */
  return h->pid > 0 && h->pid != me.pid && h->pidns == me.pidns && strcmp(h->boot, me.boot) == 0
             ? 0
             : -1;
}

/* 1 when process h (of this boot and pid namespace) has ended: no process has its pid, or
 * the one that has it started at another time, or it is a zombie (its descriptors, and so
 * its locks, are gone). */
static int ended(const holder *h) {
  unsigned long long cpu, start;
  char state;
  if (kill((pid_t)h->pid, 0) != 0 && errno == ESRCH) return 1;
  return proc_stat(h->pid, &state, &cpu, &start) == 0 &&
         (start != h->start || state == 'Z' || state == 'X');
}

enum { HOLDER_WAITED_FOR, HOLDER_STOPPED, HOLDER_ENDED };

/* What a waiter saw of the holder: what it was (stopped or ended) since when, and with
 * which CPU time. */
typedef struct watch {
  holder h;
  unsigned long long cpu;
  int seen;     /* HOLDER_STOPPED or HOLDER_ENDED since `since` */
  double since; /* 0: seen neither */
  double next;  /* when to look again */
} watch;

/* Looks at the holder the lock file records: HOLDER_STOPPED once it has been seen stopped,
 * using no CPU, for CJ_STOPPED_S; HOLDER_ENDED once it has been seen ended for CJ_ENDED_S
 * while its lock is still held (a child it forked inherited the lock's descriptor: it will
 * write no entry). Seen twice at least, a look apart, so that the record of the holder
 * before, in the moment before a new holder writes its own, is not taken for the new. */
static int holder_state(int dir, const char *name, watch *w, double now) {
  unsigned long long cpu = 0, start;
  char state;
  holder h;
  int seen;
  if (now < w->next) return HOLDER_WAITED_FOR;
  w->next = now + CJ_LOOK_S;
  if (recorded_holder(dir, name, &h) != 0) {
    w->since = 0;
    return HOLDER_WAITED_FOR;
  }
  if (ended(&h))
    seen = HOLDER_ENDED;
  else if (proc_stat(h.pid, &state, &cpu, &start) == 0 && start == h.start &&
           (state == 'T' || state == 't'))
    seen = HOLDER_STOPPED;
  else
    return w->since = 0, HOLDER_WAITED_FOR;
  if (!w->since || w->seen != seen || w->h.pid != h.pid || w->h.start != h.start || w->cpu != cpu) {
    w->h = h;
    w->cpu = cpu;
    w->seen = seen;
    w->since = now;
    return HOLDER_WAITED_FOR;
  }
  return now - w->since >= (seen == HOLDER_ENDED ? CJ_ENDED_S : CJ_STOPPED_S) ? seen
                                                                              : HOLDER_WAITED_FOR;
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
      write_record(fd);
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
  watch w;
  int rc;
  memset(&w, 0, sizeof w);
  w.next = start + CJ_LOOK_S;
  for (;;) {
    rc = cj_lock_try(dir, name, lock);
    if (rc != CJ_LOCK_BUSY) return rc;
    if (ready(ctx)) return CJ_LOCK_ENTRY_READY;
    switch (holder_state(dir, name, &w, cj_now_s())) {
      case HOLDER_STOPPED:
        cj_warn("the process %ld holding the lock of '%s' is stopped (it has used no CPU for "
                "%.1f s); compiling it here as well rather than waiting for it to resume",
                w.h.pid, what, cj_now_s() - w.since);
        return CJ_LOCK_NONE;
      case HOLDER_ENDED:
        cj_warn("the process %ld that took the lock of '%s' has ended without releasing it "
                "(a process it forked holds the lock's descriptor, and will write no entry); "
                "compiling it here as well rather than waiting",
                w.h.pid, what);
        return CJ_LOCK_NONE;
      default: break;
    }
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
