/* toolchain.c - the NVRTC a cache key names. Normally the build ID of the NVRTC library
 * that a compile would load, read from the file without loading it (dl/loader.c), so
 * that a cache hit never maps NVRTC. On a machine with no NVRTC at all, where a cache
 * filled elsewhere is used as it is, the keys name the NVRTC that last wrote an entry
 * there: the cache directory's "nvrtc" file records it. */
#define _GNU_SOURCE /* O_NOFOLLOW */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "key/key.h"
#include "dl/nvrtc.h"

#define NAME_FILE "nvrtc"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_toolchain, lock)
static char name[512]; /* "" until known */
static int from_nvrtc; /* name is this machine's NVRTC's (not read from a cache) */
static int noted;      /* name was recorded in the cache directory by this process */

/* The name recorded in the cache directory into out; 0, or -1 when there is none to
 * trust (a file of this user's, regular, not writable by others). */
static int read_recorded(const cj_root *r, char *out, size_t size) {
  struct stat st;
  ssize_t n;
  int fd = openat(r->fd, NAME_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !cj_trusted(&st) ||
      (n = read(fd, out, size - 1)) <= 0) {
    close(fd);
    return -1;
  }
  close(fd);
  out[n] = '\0';
  out[strcspn(out, "\n")] = '\0';
  return out[0] ? 0 : -1;
}

/* Without an NVRTC: the name the cache directory records. */
static cujit_status from_cache(void) {
  cujit_status st = cj_libnvrtc_load(); /* the detail says where NVRTC was looked for */
  cj_root root;
  int rc;
  if (cj_root_open(&root, 0) != 0) return st;
  rc = read_recorded(&root, name, sizeof name);
  cj_root_close(&root);
  if (rc != 0) return st;
  cj_debug("no NVRTC here; cache keys name the one that filled the cache: %s", name);
  return CUJIT_OK;
}

static cujit_status find_name(void) {
  const char *id = cj_libnvrtc_identity();
  int major, minor;
  if (id[0]) {
    cj_join(name, sizeof name, id, NULL);
  } else if (cj_libnvrtc_load() == CUJIT_OK) { /* found only by the system's search */
    if (cj_nvrtc_version_cached(&major, &minor) != CUJIT_OK) return cj_libnvrtc_load();
    snprintf(name, sizeof name, "nvrtc version %d.%d", major, minor);
  } else {
    return from_cache();
  }
  from_nvrtc = 1;
  return CUJIT_OK;
}

cujit_status cj_toolchain_name(const char **out) {
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&lock);
  if (!name[0]) st = find_name();
  pthread_mutex_unlock(&lock);
  *out = name;
  return st;
}

/* Writes the name to the cache directory through a temporary file, so that a reader
 * sees the old name or the new one. */
static void record(const cj_root *r) {
  char tmp[64], old[sizeof name];
  size_t len = strlen(name);
  int fd, ok;
  if (read_recorded(r, old, sizeof old) == 0 && strcmp(old, name) == 0) return;
  snprintf(tmp, sizeof tmp, NAME_FILE ".%ld.tmp", (long)getpid());
  fd = openat(r->fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ok = write(fd, name, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
  if (close(fd) != 0) ok = 0;
  if (!ok || renameat(r->fd, tmp, r->fd, NAME_FILE) != 0) {
    cj_debug("cannot record the NVRTC in the cache directory: %s", strerror(errno));
    unlinkat(r->fd, tmp, 0);
  }
}

void cj_toolchain_note(const cj_root *r) {
  pthread_mutex_lock(&lock);
  if (from_nvrtc && !noted) {
    record(r);
    noted = 1;
  }
  pthread_mutex_unlock(&lock);
}

void cj_toolchain_assume(const char *id) {
  pthread_mutex_lock(&lock);
  if (!name[0] && find_name() != CUJIT_OK && !name[0]) {
    snprintf(name, sizeof name, "%s", id);
    cj_debug("no NVRTC here; cache keys name the one an imported module was compiled with: %s",
             name);
  }
  pthread_mutex_unlock(&lock);
}
