/* cache.h - the kernel cache: keys, the headers a source depends on, the entry format,
 * the disk cache (directory, entries, locks, eviction, persisted counters) and the
 * in-process memory cache. Private; not installed.
 *
 * The flow (fetch.c): request key -> memory cache (revalidated by stat) -> header scan
 * -> disk key -> disk entry (or wait for the process compiling it) -> NVRTC -> store. */
#ifndef CUJIT_CACHE_H
#define CUJIT_CACHE_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "compile/compile.h"
#include "compile/link.h"

/* Version of the entry format and of the key's serialisation; part of every key. Format 2
 * added the manifest (manifest.c) and the -frandom-seed every compile gets. */
#define CJ_CACHE_FORMAT 2

/* ---- key.c ---- */

typedef struct cj_key {
  unsigned char b[16]; /* XXH3-128, big-endian canonical form */
} cj_key;

struct cj_deps;

/* The options key: everything that changes the output except the source and the
 * contents of headers found on disk (the program name, the resolved target, include
 * directories, defines, NVRTC options, in-memory headers, name expressions, NVRTC's
 * version and the cache format). */
cujit_status cj_key_options(const cj_request *r, cj_key *out);
/* The request key: the options key and the source. Keys the memory cache. */
void cj_key_source(const cj_key *options_key, const char *source, size_t len, cj_key *out);
/* Both steps at once. */
cujit_status cj_key_request(const cj_request *r, cj_key *out);
/* The disk key: the request key plus the path, size and hash of every header found on
 * disk. Names the entry. */
void cj_key_disk(const cj_key *request_key, const struct cj_deps *deps, cj_key *out);
/* 32 lowercase hex digits and a NUL. */
void cj_key_hex(const cj_key *k, char out[33]);
/* XXH3-128 of bytes, in canonical form. */
void cj_hash128(const void *p, size_t n, unsigned char out[16]);
/* XXH3-64 of head followed by body (the entry checksum). */
uint64_t cj_checksum(const void *head, size_t head_len, const void *body, size_t body_len);

/* ---- deps.c: the user headers a compile depends on (its manifest) ---- */

typedef struct cj_dep {
  char *path;      /* as NVRTC opens it: relative to the working directory unless absolute */
  int present;     /* 0: a search candidate that did not exist when scanned */
  int racy;        /* changed so recently that an unchanged stat does not prove it unchanged */
  uint64_t size;
  unsigned char hash[16]; /* XXH3-128 of the contents */
  uint64_t dev, ino;
  int64_t mtime_ns, ctime_ns;
} cj_dep;

typedef struct cj_deps {
  cj_dep *v;
  size_t n, cap;
  int refs;        /* references beyond the first (a list made by the scan is shared by
                      the compile that made it and the memory cache) */
} cj_deps;

/* Records an existing header (its stat and contents) or a candidate that does not exist.
 * Return 0, or -1 when out of memory. */
int cj_deps_add_file(cj_deps *d, const char *path, const struct stat *st, const void *text,
                     size_t len);
int cj_deps_add_absent(cj_deps *d, const char *path);
/* The record of `path` (present or absent), or NULL. */
const cj_dep *cj_deps_find(const cj_deps *d, const char *path);
/* 1 when every header is unchanged (stat, and contents for racy ones) and every absent
 * candidate is still absent. Makes only stat calls unless a header is racy. */
int cj_deps_fresh(const cj_deps *d);
/* The first header that is no longer as recorded (its stat identity, size or contents,
 * or an absent candidate that now exists), or NULL when none changed. Reads every
 * present header: for the check after a compile, where the key was made before NVRTC
 * read the headers. */
const cj_dep *cj_deps_changed(const cj_deps *d);
/* 1 when the present headers of a and b have the same paths, sizes and hashes, in order. */
int cj_deps_same_files(const cj_deps *a, const cj_deps *b);
size_t cj_deps_count_present(const cj_deps *d);
void cj_deps_clear(cj_deps *d);
/* A new reference to a list from the heap (NULL gives NULL). */
cj_deps *cj_deps_ref(cj_deps *d);
/* Drops a reference to a list from the heap, freeing it with the last; NULL is fine. */
void cj_deps_destroy(cj_deps *d);

/* ---- scan.c: finding the headers a source includes, without preprocessing ---- */

/* Follows every #include (and __has_include) of the source, its pre-included headers and
 * every header found, through in-memory headers, the includer's directory and the include
 * path, the way NVRTC searches them. Headers not found there are toolkit or system headers
 * (covered by NVRTC's version). *deps gets the list (owned by the caller). When the
 * request cannot be keyed completely (an #include whose macro cannot be resolved, an
 * option that reads or writes files), `bypass` gets the reason and the caller compiles
 * without the cache. Returns CUJIT_OK or CUJIT_ERROR_OUT_OF_MEMORY. */
cujit_status cj_scan_request(const cj_request *r, cj_deps **deps, char *bypass,
                             size_t bypass_size);
/* How many bytes the scans of this thread have examined so far, counting each time a byte
 * is looked at again (tests check that a scan stays linear in its input). */
uint64_t cj_scan_bytes_examined(void);

/* ---- manifest.c: what went into a key, part by part ---- */

/* Bytes that are not NUL-terminated (a view into an entry, a blob or a request). */
typedef struct cj_text {
  const char *p;
  size_t n;
} cj_text;

/* The option parts hashed one by one into a fingerprint and kept item by item in a
 * manifest, in the order a difference is looked for. */
enum {
  CJ_PART_INCLUDE_DIRS, CJ_PART_DEFINES, CJ_PART_NVRTC_OPTIONS, CJ_PART_HEADERS,
  CJ_PART_NAME_EXPRS, CJ_PART_TOOLKIT, CJ_NPARTS
};
/* "include directories", "defines", ... for messages. */
const char *cj_part_name(int part);

/* A request's parts as hashes only (what a module blob carries). */
typedef struct cj_fingerprint {
  cj_text nvrtc;          /* the NVRTC the key names */
  cj_text arch;           /* the target the key names ("" for NVRTC's default) */
  cj_text name;           /* the program name */
  uint64_t source_len;
  unsigned char source_hash[16];
  uint32_t count[CJ_NPARTS];            /* how many items each part has */
  unsigned char hash[CJ_NPARTS][16];    /* XXH3-128 of each part's serialised items */
} cj_fingerprint;

/* The fingerprint of a request whose key names `nvrtc` (strings borrowed). */
cujit_status cj_fingerprint_of(const cj_request *r, const char *nvrtc, cj_fingerprint *fp);

/* A request's parts in full (what a cache entry carries): the fingerprint's parts with
 * their items kept, the source text, the toolkit location and the headers from disk. */
typedef struct cj_manifest {
  cj_text nvrtc, arch, name, cwd, source;
  int toolkit;                      /* the toolkit's headers are searched */
  unsigned char toolkit_env[16];    /* hash of CUDA_PATH and CUDA_HOME (when searched) */
  uint32_t count[CJ_NPARTS];
  cj_text part[CJ_NPARTS];          /* each item a u64 length and its bytes */
  cj_deps deps;                     /* the present headers from disk; owned */
} cj_manifest;

/* Serialises the manifest of request r (key naming `nvrtc`, headers `deps`, may be NULL)
 * into out. -1 when out of memory. */
int cj_manifest_encode(const cj_request *r, const char *nvrtc, const cj_deps *deps,
                       cj_buf *out);
/* Parses a serialised manifest into m (views into data; deps copied): 0, 1 when malformed,
 * -1 out of memory. Every length is checked. Free with cj_manifest_free(). */
int cj_manifest_parse(const void *data, size_t len, cj_manifest *m);
void cj_manifest_free(cj_manifest *m);
/* The next item of a part (pos starts at 0): 1 with *item, 0 at the end. */
int cj_manifest_item(cj_text part, size_t *pos, cj_text *item);
/* Receives one difference (part is a cujit_cache_part); returns nonzero to stop. */
typedef int (*cj_diff_fn)(int part, const char *what, const char *detail, void *user);
/* Compares an entry's manifest `was` with a request's `now`, calling fn (may be NULL) for
 * each difference found; returns how many. Out of memory for a message is a shorter one. */
unsigned cj_manifest_diff(const cj_manifest *was, const cj_manifest *now, cj_diff_fn fn,
                          void *user);
/* 16 bytes: the hash of CUDA_PATH and CUDA_HOME that keys with the toolkit hold (key.c). */
const unsigned char *cj_key_toolkit_env(void);

/* ---- entry.c: the entry file format ---- */

/* What an entry holds besides the image. */
typedef struct cj_entry_meta {
  char name[256];         /* program name (for listings; truncated) */
  int nvrtc_major, nvrtc_minor;
  char arch[32];
  uint64_t ptx_size, cubin_size;
} cj_entry_meta;

#define CJ_ENTRY_HEADER_SIZE 64
#define CJ_ENTRY_MAX_SIZE ((uint64_t)1 << 31) /* larger files are not entries */

/* Serialises an image (and its present deps) under `key` into out, with the encoded
 * manifest (NULL: none recorded) after the payload. -1 when out of memory. */
int cj_entry_encode(const cj_key *key, const cj_image *im, const cj_deps *deps,
                    const cj_entry_meta *meta, const cj_buf *manifest, cj_buf *out);
/* Parses and verifies an entry. Returns 0 with a new image (refs 1) and its recorded deps
 * (paths, sizes, hashes) in *deps; 1 when the bytes are not a valid entry for `key`, with
 * the reason in `why`; -1 when out of memory. Every length is checked before use. */
int cj_entry_decode(const cj_key *key, const void *data, size_t len, cj_image **out,
                    cj_deps *deps, cj_entry_meta *meta, char *why, size_t why_size);
/* Reads the header and the metadata section only (for listings); 0 or 1 as above. */
int cj_entry_peek(const void *data, size_t len, cj_key *key, cj_entry_meta *meta);
/* Where an entry of `file_len` bytes keeps its manifest, from its header (at least
 * CJ_ENTRY_HEADER_SIZE bytes): 0 with *offset and *size (0 when none is recorded), or 1
 * when the header is not a valid one of this format. */
int cj_entry_manifest_span(const void *header, uint64_t file_len, uint64_t *offset,
                           uint64_t *size);
/* Checks a manifest read from an entry against its header's checksum: 0, or 1. */
int cj_entry_manifest_check(const void *header, const void *manifest, size_t size);

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
int cj_cache_disabled(void);
/* The configured size limit (CUJIT_CACHE_MAX_SIZE, default 1 GiB). */
uint64_t cj_cache_max_size(void);
/* Seconds to wait for another process compiling the same entry (CUJIT_CACHE_LOCK_TIMEOUT,
 * default 60). */
double cj_cache_lock_timeout(void);

/* ---- disk.c: entries on disk ---- */

/* One entry's names, in its shard directory <root>/<first 2 hex digits>/. */
typedef struct cj_entry_path {
  int dir;             /* the shard, opened and checked; -1 when not open */
  char hex[33];
  char shard[3];
  char name[40];       /* <32 hex>.cujit */
  char lock[40];       /* <32 hex>.lock */
  char file[PATH_MAX]; /* <root>/<shard>/<name>, for messages only */
} cj_entry_path;

/* Names the entry of key and opens its shard (`create`: making it when missing). 0, or -1
 * when the shard cannot be used (a miss). Close with cj_entry_close(). */
int cj_entry_open(const cj_root *r, const cj_key *key, int create, cj_entry_path *p);
void cj_entry_close(cj_entry_path *p);

enum { CJ_DISK_HIT = 0, CJ_DISK_ABSENT = 1, CJ_DISK_INVALID = 2, CJ_DISK_OOM = -1 };
/* Reads the entry for key. CJ_DISK_HIT with a new image whose recorded headers must equal
 * `expect` (present ones); CJ_DISK_ABSENT; CJ_DISK_INVALID (warned: the entry is
 * replaced by the next write; also for a file that is not regular, is another user's or
 * is writable by others); CJ_DISK_OOM. A hit refreshes the entry's last-use time. */
int cj_disk_read(const cj_entry_path *p, const cj_key *key, const cj_deps *expect,
                 cj_image **out);
/* Writes the entry atomically (unique temporary file, locked while written, fsync,
 * rename). Returns the bytes written, or 0 when it could not be written (warned; the
 * compile goes on). */
uint64_t cj_disk_write(const cj_entry_path *p, const cj_key *key, const cj_image *im,
                       const cj_deps *deps, const char *name, const cj_buf *manifest);
/* cj_disk_write in two steps, for an entry that also goes elsewhere: the entry's bytes
 * (0, or -1 when out of memory), and writing bytes as the entry (as cj_disk_write).
 * `manifest` (may be NULL) is an encoded manifest (cj_manifest_encode). */
int cj_disk_encode(const cj_key *key, const cj_image *im, const cj_deps *deps, const char *name,
                   const cj_buf *manifest, cj_buf *out);
uint64_t cj_disk_store(const cj_entry_path *p, const cj_buf *b);
/* Writes bytes that already are an encoded entry (an imported module's) as cj_disk_write()
 * writes one. Returns the bytes written, or 0 (warned). */
uint64_t cj_disk_write_bytes(const cj_entry_path *p, const void *data, size_t len);
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
/* 64 random bits (for unique file names). */
uint64_t cj_random64(void);

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
  uint64_t size;     /* estimated bytes of entries: at the last scan, plus writes since */
  int64_t scanned;   /* time of the last full scan (0: never, so the size is unknown) */
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
  uint64_t entries, bytes;           /* left after the operation */
  uint64_t removed, removed_bytes;
} cj_prune_result;

/* Removes least recently used entries until the entries total at most max_bytes (and
 * temporary files left by writers that died). -1 when the directory cannot be read. */
int cj_prune(const cj_root *r, uint64_t max_bytes, cj_prune_result *res);
/* Removes every entry. */
int cj_clear(const cj_root *r, cj_prune_result *res);
/* Counts entries and bytes. */
int cj_scan_dir(const cj_root *r, uint64_t *entries, uint64_t *bytes);
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
int cj_entry_keys(const cj_root *r, cj_entry_key **keys, size_t *n);
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

/* ---- cache.c: this process's counters ---- */

typedef enum cj_counter {
  CJ_HITS, CJ_MEMORY_HITS, CJ_MISSES, CJ_COMPILES, CJ_EVICTIONS, CJ_NCOUNTERS
} cj_counter;
void cj_count(cj_counter c, uint64_t n);

/* ---- toolchain.c: the NVRTC a key names ---- */

/* The NVRTC that cache keys name: the build of the library a compile would load, found
 * without loading it; with no NVRTC on this machine, the one recorded in the cache
 * directory by the last process that wrote an entry there. *name is static storage.
 * CUJIT_ERROR_NO_NVRTC when neither is known. */
cujit_status cj_toolchain_name(const char **name);
/* Records this machine's NVRTC in the cache directory (once per process), after an entry
 * was written there. */
void cj_toolchain_note(const cj_root *r);
/* On a machine where cj_toolchain_name() finds no NVRTC, makes keys name `id` from now on
 * (an imported module's NVRTC, as the cache directory's record is taken otherwise).
 * Does nothing when a name is known already. */
void cj_toolchain_assume(const char *id);

/* ---- fetch.c: request -> image, through the memory cache, the disk cache, NVRTC ---- */

cujit_status cj_compile(cj_request *r, cj_image **out);
/* Counts a disk lookup in this process and in the directory's statistics (a hit, or a
 * miss that wrote `written` bytes), pruning when the cache grew past its limit. */
void cj_count_disk(const cj_root *root, uint64_t hits, uint64_t misses, uint64_t written);

/* ---- link.c: a linked program through the memory cache, the disk cache, nvJitLink ---- */

/* One part of a link: a source to compile (its request, with `link` set), or bytes. */
typedef struct cj_link_part {
  cj_request *source; /* NULL for prebuilt bytes */
  cj_link_in in;      /* the bytes (borrowed); for a source, only the name is read */
} cj_link_part;

/* Compiles each source part through the compile cache, then finds the linked image under
 * a key made of every part's bytes (a source's compiled output, which its key made from
 * the source, its headers, its options and NVRTC), the link's target, LTO and options, and
 * nvJitLink's identity: in the memory cache, then the disk cache, else one process per key
 * links with nvJitLink and writes the entry. `no_cache` bypasses both caches. *out is a new
 * reference. Fails as cj_compile() for a source part, and as cj_link_run(). */
cujit_status cj_link(const cj_link_spec *spec, cj_link_part *parts, size_t n, int no_cache,
                     cj_image **out);

/* The manifest of request r, which the caller has keyed (headers `deps`), as an entry
 * records it: -1 when out of memory or when no NVRTC is known (nothing recorded then). */
int cj_fetch_manifest(const cj_request *r, const cj_deps *deps, cj_buf *out);

/* ---- explain.c, verify.c: questioning the cache ---- */

/* cujit_cache_explain() for a request made by the module layer. */
cujit_status cj_cache_explain(cj_request *r, cujit_cache_explanation *out,
                              cujit_cache_difference_fn fn, void *user);

/* ---- pool.c: worker processes for compiles that run at once ---- */

/* What an asynchronous compile sets as cj_request.compiler. Compiles here when no other
 * compile of the pool is running in this process; otherwise on an idle worker process, or
 * a new one while fewer than cj_pool_jobs() - 1 run; otherwise waits for one of these
 * (asking r->cancel meanwhile). A worker that dies, stops (SIGSTOP), cannot be started or
 * answers something that is not a reply fails nothing: the compile is retried here
 * (logged at info level). One that has not answered half a second after r->time_limit_s
 * passed or r->cancel said stop (it stops at NVRTC's next check, as a compile here does)
 * is killed, and the compile is CUJIT_ERROR_CANCELLED as a compile here stopped then
 * would be. The result is the image this process would have compiled. */
cujit_status cj_pool_compile(cj_request *r, cj_image **out);
/* How many compiles the pool runs at once: cujit_compile_set_jobs(), else
 * CUJIT_COMPILE_JOBS, else the CPUs this process may run on. */
unsigned cj_pool_jobs(void);
void cj_pool_set_jobs(unsigned n); /* 0: back to the default */
/* Closes idle workers (they exit when their socket closes). */
void cj_pool_trim(void);
/* For tests: the workers' process ids (busy ones have busy[i] set), at most max; returns
 * how many run. */
int cj_pool_workers(int *pids, int *busy, int max);
/* For tests: compiles workers have answered, and forgetting the worker program found
 * (closing every idle worker), so that CUJIT_WORKER is read again. */
uint64_t cj_pool_answered(void);
void cj_pool_reset(void);

/* ---- serve.c: the worker's side (the cujit-worker program) ---- */

/* The protocol, over one stream socket (the worker's standard input). A request is
 * "cjwq", a 64-bit number the reply repeats, the payload's length and the payload (the
 * caller's working directory, as a length and bytes, then cj_request_encode()'s bytes).
 * The reply is "cjwr", the number, its kind (CJ_REPLY_*), a cujit_status, an nvrtcResult,
 * the message's length and bytes (the compile's error detail) and the length and bytes of
 * the image as a cache entry (cj_disk_encode(), under a key made of the number) when the
 * status is CUJIT_OK. Numbers are little-endian. The byte CJ_WORKER_CANCEL between
 * requests, or during one, asks to stop the compile in progress. */
#define CJ_WORKER_REQUEST "cjwq"
#define CJ_WORKER_REPLY "cjwr"
#define CJ_WORKER_CANCEL 0x18
#define CJ_WORKER_MAX_MESSAGE ((uint64_t)64 << 20)
enum { CJ_REPLY_RESULT = 0, CJ_REPLY_REFUSED = 1 /* could not compile it: do it yourself */ };
/* The key a worker's entry is encoded under. */
void cj_worker_key(uint64_t id, cj_key *key);
/* Sends all n bytes on a worker socket (either end), never raising SIGPIPE; 0, or -1 when
 * the peer is gone. */
int cj_worker_send(int fd, const void *p, size_t n);
/* Answers requests on fd until it closes; returns the exit status for the worker. */
int cj_worker_serve(int fd);

/* ---- adopt.c: an image compiled elsewhere, stored as if compiled here ---- */

/* Stores `im` (its source attached), which arrived as the encoded entry `entry` under the
 * disk key `dkey` that this process computed for request `r` (request key `rkey`, headers
 * `deps`): in the memory cache, and in the disk cache unless a valid entry is there
 * already. Nothing is stored for CUJIT_OPT_NO_CACHE. Cache trouble is logged, never an
 * error; no NVRTC is loaded. */
void cj_cache_adopt(const cj_request *r, const cj_key *rkey, const cj_key *dkey, cj_deps *deps,
                    cj_image *im, const void *entry, size_t entry_len);

#endif
