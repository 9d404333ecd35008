/* store.h - where cache entries are kept: the disk cache (its directory and the trust
 * checks on it, entries written atomically and read back, the lock that makes one process
 * compile a key, counters kept across processes, listing and pruning) and the in-process
 * memory cache, with this process's counters. Entries are named by their key and hold
 * what format/entry.h describes; what goes into a key is key/'s. Private. */
#ifndef CUJIT_STORE_H
#define CUJIT_STORE_H

#include <limits.h>
#include <stdint.h>

#include "format/entry.h"

/* ---- cachedir.c: where the disk cache lives, and whether it may be used ---- */

/* The cache directory, opened once and checked on its descriptor; everything below it is
 * reached through `fd` (openat and friends), never by path again. */
typedef struct cj_root {
  int fd;              /* -1 when not open */
  char path[PATH_MAX]; /* for messages only */
} cj_root;

/* Opens the disk cache directory in use (creating it, 0700, when missing) and checks the
 * descriptor: a directory owned by this user (or root) that group and others cannot
 * write, and cujit's own: it holds cujit's CACHEDIR.TAG (written into a new or empty
 * directory, or one holding only what a cache holds); a directory of other files is
 * refused. Returns 0, or -1 when the disk cache is off or the directory is not usable;
 * `warn` logs why as a warning (once for the same reason; not when it was turned off).
 * Leaves the thread's error detail alone: a compile without the disk cache has not
 * failed. The caller closes it with cj_root_close(). */
int cj_root_open(cj_root *r, int warn);
/* The same, for the public functions: CUJIT_ERROR_CACHE with the reason as the detail. */
cujit_status cj_root_open_status(cj_root *r);
void cj_root_close(cj_root *r); /* closing a closed root is fine */
/* Opens the shard directory `name` below the root (`create`: make it when missing) and
 * checks it as the root is checked, on the descriptor. With `create`, a shard that fails
 * the check (a symbolic link, another user's, writable by others, not a directory) is
 * reported once and replaced: a link is removed, anything else moved aside. Returns the
 * descriptor, or -1 (a miss: the caller compiles without the disk cache). */
int cj_shard_open(const cj_root *r, const char *name, int create);
/* Warns once that a shard which fails the checks is skipped (by a walk, which repairs
 * nothing). */
void cj_warn_skipped(const cj_root *r, const char *name, const char *what);
/* Logs a warning about the cache unless it is the one logged last (so that a problem met
 * on every compile is reported once). */
void cj_warn_once(const char *text);
/* 1 when env CUJIT_CACHE turns the disk cache off. */
int cj_cachedir_disabled(void);
/* The configured size limit (CUJIT_CACHE_MAX_SIZE, default 1 GiB). */
uint64_t cj_cachedir_max_size(void);
/* Seconds to wait for another process compiling the same entry (CUJIT_CACHE_LOCK_TIMEOUT,
 * default 60). */
double cj_cachedir_lock_timeout(void);

/* ---- disk.c: entries on disk ---- */

/* One entry's names, in its shard directory <root>/<first 2 hex digits>/. */
typedef struct cj_entry_path {
  int dir; /* the shard, opened and checked; -1 when not open */
  char hex[33];
  char shard[3];
  char name[40];       /* <32 hex>.cujit */
  char lock[40];       /* <32 hex>.lock */
  char file[PATH_MAX]; /* <root>/<shard>/<name>, for messages only */
} cj_entry_path;

/* Names the entry of key and opens its shard (`create`: making it when missing). 0, or -1
 * when the shard cannot be used (a miss). Close with cj_disk_entry_close(). */
int cj_disk_entry_open(const cj_root *r, const cj_key *key, int create, cj_entry_path *p);
void cj_disk_entry_close(cj_entry_path *p);

enum { CJ_DISK_HIT = 0, CJ_DISK_ABSENT = 1, CJ_DISK_INVALID = 2, CJ_DISK_OOM = -1 };
/* Reads the entry for key. CJ_DISK_HIT with a new image whose recorded headers must equal
 * `expect` (present ones); CJ_DISK_ABSENT; CJ_DISK_INVALID (warned: the entry is
 * replaced by the next write; also for a file that is not regular, is another user's or
 * is writable by others); CJ_DISK_OOM. A hit refreshes the entry's last-use time. */
int cj_disk_read(const cj_entry_path *p, const cj_key *key, const cj_deps *expect, cj_image **out);
/* Writes the entry atomically (unique temporary file, locked while written, fsync,
 * rename). Returns the bytes written, or 0 when it could not be written (warned; the
 * compile goes on). */
uint64_t cj_disk_write(const cj_entry_path *p, const cj_key *key, const cj_image *im,
                       const cj_deps *deps, const char *name, const cj_buf *manifest);
/* cj_disk_write in two steps, for an entry that also goes elsewhere (the walk through the
 * tiers encodes it once for all of them): the entry's bytes (0, or -1 when out of memory),
 * and writing bytes that are an encoded entry (a compile's, a remote hit's, an imported
 * module's) as the entry (as cj_disk_write). `manifest` (may be NULL) is an encoded
 * manifest (cj_manifest_encode). */
int cj_disk_encode(const cj_key *key, const cj_image *im, const cj_deps *deps, const char *name,
                   const cj_buf *manifest, cj_buf *out);
uint64_t cj_disk_store(const cj_entry_path *p, const cj_buf *b);
/* The most bytes a manifest is read in: a source and its in-memory headers are far
 * smaller, and a larger one (a damaged or hostile entry) is not read. */
#define CJ_MANIFEST_MAX ((uint64_t)64 << 20)
/* Reads the manifest of the entry p names, without its image: 0 with the bytes in *out
 * (empty when none is recorded), 1 when there is no valid entry (its header, bounds or the
 * manifest's checksum fail; not warned), -1 out of memory. */
int cj_disk_read_manifest(const cj_entry_path *p, cj_buf *out);
/* Reads the whole entry file p names (a regular file of this user's), not warned: 0 with
 * *f, 1 with the reason in why, -1 out of memory. */
int cj_disk_read_file(const cj_entry_path *p, cj_file *f, char *why, size_t why_size);

/* ---- lock.c: one compile per key across processes ---- */

typedef struct cj_lock {
  int fd; /* -1 when not held */
} cj_lock;

enum { CJ_LOCK_HELD = 0, CJ_LOCK_ENTRY_READY = 1, CJ_LOCK_NONE = 2, CJ_LOCK_BUSY = 3 };
/* Takes the lock of the file `name` in directory `dir` (created 0600 there, never through
 * a symbolic link). While another process holds it, polls `ready(ctx)` (which says
 * whether the entry can now be read) until it returns 1 (CJ_LOCK_ENTRY_READY), the holder
 * goes away (CJ_LOCK_HELD), or the timeout passes or the holder is seen stopped for 2 s
 * (CJ_LOCK_NONE, warned with `what`: the caller compiles anyway); also CJ_LOCK_NONE when
 * the file system refuses locks. */
int cj_lock_acquire(int dir, const char *name, const char *what, double timeout_s,
                    int (*ready)(void *), void *ctx, cj_lock *lock);
/* Takes the lock without waiting: CJ_LOCK_HELD, CJ_LOCK_BUSY or CJ_LOCK_NONE. A holder
 * writes who it is into the file (for waiters that look for a stopped holder). */
int cj_lock_try(int dir, const char *name, cj_lock *lock);
/* Removes the lock file and releases the lock. */
void cj_lock_release(int dir, const char *name, cj_lock *lock);
/* Takes an open file's own lock without waiting (the writer of a temporary file holds
 * it): 0, or -1 with errno (EAGAIN/EACCES: someone holds it). */
int cj_lock_fd(int fd);
/* Takes an open file's lock (F_RDLCK or F_WRLCK), waiting at most timeout_s: 0, or -1 with
 * errno (ETIMEDOUT when the wait ran out; other values when the file system has no locks). */
int cj_lock_fd_wait(int fd, short type, double timeout_s);

/* ---- diskstats.c: counters kept in the cache directory, across processes ---- */

typedef struct cj_disk_counters {
  uint64_t hits, misses, compiles, evictions;
  uint64_t size;   /* estimated bytes of entries: at the last scan, plus writes since */
  int64_t scanned; /* time of the last full scan (0: never, so the size is unknown) */
  /* the remote tier (remote.c): lookups that found an entry, found none, found a value
   * that failed the checks (a miss too), operations that failed, time spent in it */
  uint64_t remote_hits, remote_misses, remote_invalid, remote_errors, remote_time_us;
} cj_disk_counters;

/* Statistics are best effort: their file lock is waited for at most this long, after
 * which an update is dropped and a read goes on without the lock. */
#define CJ_STATS_LOCK_WAIT_S 0.1

/* Adds the deltas (hits, misses, compiles, evictions, written bytes) under the stats
 * file's lock. Returns 1 when the estimated size now exceeds `max_size` (time to prune),
 * 0 when not, -1 when the file cannot be used or its lock stays busy (then the caller
 * prunes by another rule, so that the size limit holds without statistics). */
int cj_diskstats_add(const cj_root *r, const cj_disk_counters *delta, uint64_t max_size);
/* Reads the counters (zeros when there is no stats file). -1 with the error detail set
 * when the stats file is not a regular file of this user's. */
int cj_diskstats_read(const cj_root *r, cj_disk_counters *out);
/* A disk hit, counted in this process and written in batches (diskstats.c says when). */
void cj_diskstats_hit(const cj_root *r);
/* Writes the hits this process has pending for r's directory. */
void cj_diskstats_flush(const cj_root *r);
/* Records the result of a full scan: the size now, evictions made. */
void cj_diskstats_scanned(const cj_root *r, uint64_t size, uint64_t evictions);

/* ---- prune.c: listing, eviction and clearing ---- */

/* Every walk stays inside the root: shards are opened without following links and
 * checked as cj_shard_open() checks them, files are looked at with fstatat() without
 * following links and removed with unlinkat() in their shard, and only names of cujit's
 * own making are removed (entries, temporary files of writers that are gone, free lock
 * files). */
typedef struct cj_prune_result {
  uint64_t entries, bytes; /* left after the operation */
  uint64_t removed, removed_bytes;
} cj_prune_result;

/* Removes least recently used entries until the entries total at most max_bytes (and
 * temporary files left by writers that died). -1 when the directory cannot be read. */
int cj_prune(const cj_root *r, uint64_t max_bytes, cj_prune_result *res);
/* Removes every entry. */
int cj_clear(const cj_root *r, cj_prune_result *res);
/* Counts entries and bytes. */
int cj_prune_scan_dir(const cj_root *r, uint64_t *entries, uint64_t *bytes);
/* Calls fn for every entry, least recently used first, until it returns nonzero. */
int cj_list(const cj_root *r, cujit_cache_entry_fn fn, void *user);
/* Every entry's key and last use (nanoseconds), least recently used first, into a new
 * array (*keys, freed with cj_free; NULL when empty). -1 when the directory cannot be read
 * or out of memory. */
typedef struct cj_entry_key {
  cj_key key;
  int64_t mtime_ns;
} cj_entry_key;
/* Every entry's key, oldest first (free *keys with cj_free): 0, -1 when the directory
 * cannot be walked, -2 out of memory. */
int cj_prune_entry_keys(const cj_root *r, cj_entry_key **keys, size_t *n);
/* Prunes after a write pushed the estimated size over the limit, to 90% of it, unless
 * another process is pruning. */
void cj_prune_auto(const cj_root *r, uint64_t max_size);

/* ---- memcache.c: the in-process cache ---- */

/* Where a request's source text lies and which options key it came with: the memory
 * cache remembers, for recently seen addresses, which request key the text there had,
 * so that the same text at the same address is found again without hashing it. */
typedef struct cj_memhint {
  cj_key options;
  const char *source;
  size_t len;
} cj_memhint;

/* A new reference to the image cached for this exact text (compared byte for byte with
 * the image's copy) at this address with these options, or NULL; *deps gets a reference
 * to the headers it was compiled from (NULL: none), which the caller checks and drops. No
 * hashing of the text, no allocation. */
cj_image *cj_memcache_get_source(const cj_memhint *h, cj_deps **deps);
/* A new reference to the image cached under key, or NULL, with its headers as above;
 * remembers h (may be NULL) for cj_memcache_get_source(). No allocation. */
cj_image *cj_memcache_get(const cj_key *key, const cj_memhint *h, cj_deps **deps);
/* Caches the image and its headers (deps, may be NULL) under key, taking a reference to
 * each, replacing an older entry, and remembers h (may be NULL); evicts least recently
 * used images beyond the limits (CUJIT_MEMORY_CACHE_MAX_SIZE, default 256 MiB, 0 turns
 * the memory cache off; at most 1024 images). Silently does nothing when out of memory. */
void cj_memcache_put(const cj_key *key, cj_image *im, cj_deps *deps, const cj_memhint *h);
void cj_memcache_clear(void);
size_t cj_memcache_count(void);

/* ---- counters.c: this process's counters ---- */

typedef enum cj_counter {
  CJ_HITS,
  CJ_MEMORY_HITS,
  CJ_MISSES,
  CJ_COMPILES,
  CJ_EVICTIONS,
  CJ_NCOUNTERS
} cj_counter;
void cj_count(cj_counter c, uint64_t n);
uint64_t cj_counter_get(cj_counter c);

#endif
