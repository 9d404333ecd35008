/* test_cache_attack - the disk cache against a hostile user who shares the machine, and
 * against odd files where cujit expects its own: prune and clear never delete outside the
 * cache; code in a directory or file that another user controls, or that others may
 * write, is never loaded; the root is checked on the descriptor that is then used; no
 * lock held by a stopped process and no FIFO makes cujit wait; temporary files of dead
 * writers go. Tests that need a second user run as root (files are given to uid 65534)
 * and skip, saying so, otherwise. Every wait is bounded by alarm(): a hang fails. */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "cachetest.h"

#define OTHER_UID 65534
#define SHARD_OF(path) (strrchr(path, '/') - 2) /* "xx/<hex>.cujit" of an entry's path */

static const char kOther[] = "__global__ void planted(int *x) { x[0] = 666; }\n";

static char *outside; /* a directory of the user's outside the cache */

static int setup(void **state) {
  if (cache_setup(state) != 0 || !(outside = test_tempdir("outside"))) return -1;
  alarm(120);
  return 0;
}

static int teardown(void **state) {
  alarm(0);
  test_rmtree(outside);
  free(outside);
  return cache_teardown(state);
}

#define ATTACK(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* Compiles kKernel into the cache and puts its entry's path in `path`. */
static void entry_of_kernel(char path[4200]) {
  cujit_options o = ptx_options();
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1);
  assert_int_equal(find_entries(cache, (char(*)[4200])path, 1), 1);
}

/* How many NVRTC programs a compile of kKernel makes, with the memory cache emptied. */
static uint64_t recompiles(void) {
  cujit_options o = ptx_options();
  cj_memcache_clear();
  return compile_count(kKernel, "k.cu", &o);
}

static int exists(const char *dir, const char *name) {
  char path[4400];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return lstat(path, &st) == 0;
}

static void run(const char *cmd) {
  if (system(cmd) != 0) fail_msg("'%s' failed", cmd);
}

static void age(const char *dir, const char *name, int seconds) {
  char path[4400];
  struct timeval tv[2];
  gettimeofday(&tv[0], NULL);
  tv[0].tv_sec -= seconds;
  tv[1] = tv[0];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  assert_int_equal(utimes(path, tv), 0);
}

/* Runs the CLI on the cache, within 30 s; its exit status (124 when it hung). */
static int cli(const char *args, char *out, size_t size) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd,
           "CUJIT_CACHE_DIR='%s' CUJIT_LIBCUDA=/nonexistent timeout 30 '%s' %s "
           "2>&1",
           cache, CUJIT_CLI_PATH, args);
  return test_capture(cmd, out, size);
}

static void skip_unless_root(void) {
  if (geteuid() == 0) return;
  test_skip_part("giving files to another user needs root");
  skip();
}

/* ---- data loss ---- */

/* Files a project might keep, and files named as cujit names its own, in a directory of
 * the user's that a shard symbolic link points to: none may go. */
static const char *const kBait[] = {"Cargo.lock",
                                    "yarn.lock",
                                    "notes.tmp",
                                    ".old.tmp",
                                    "ab000000000000000000000000000000.cujit",
                                    "ab000000000000000000000000000000.lock",
                                    ".ab000000000000000000000000000000.1.0000000000000000.tmp"};

static void plant_bait(const char *dir, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    assert_int_equal(test_write_file(dir, kBait[i], "precious\n"), 0);
    age(dir, kBait[i], 7200);
  }
}

static void assert_bait_kept(const char *dir, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!exists(dir, kBait[i])) fail_msg("'%s/%s' was deleted", dir, kBait[i]);
}

static void prune_and_clear_stay_inside(void **state) {
  char link[4400], entry[4200], shard[4200], out[4096];
  (void)state;
  entry_of_kernel(entry);
  plant_bait(outside, CJ_COUNT(kBait));
  snprintf(link, sizeof link, "%s/ab", cache);
  assert_int_equal(symlink(outside, link), 0);
  snprintf(shard, sizeof shard, "%.*s", (int)(SHARD_OF(entry) - entry + 2), entry);
  plant_bait(shard, 4); /* names not of cujit's making inside a real shard stay too */
  assert_ok(cujit_cache_prune(1));
  assert_ok(cujit_cache_clear());
  assert_int_equal(cli("cache prune --max-size 1", out, sizeof out), 0);
  assert_int_equal(cli("cache clear", out, sizeof out), 0);
  assert_bait_kept(outside, CJ_COUNT(kBait));
  assert_bait_kept(shard, 4);
  assert_int_equal(access(entry, F_OK), -1); /* the real entry went */
}

/* ---- another user's code ---- */

static void symlinked_shard_is_replaced(void **state) {
  char entry[4200], shard[4200], moved[4400];
  struct stat st;
  (void)state;
  entry_of_kernel(entry);
  snprintf(shard, sizeof shard, "%.*s", (int)(SHARD_OF(entry) - entry + 2), entry);
  snprintf(moved, sizeof moved, "%s/%s", outside, SHARD_OF(entry));
  moved[strlen(moved) - strlen(SHARD_OF(entry)) + 2] = '\0';
  assert_int_equal(rename(shard, moved), 0);
  assert_int_equal(symlink(moved, shard), 0);
  assert_int_equal(recompiles(), 1);
  assert_logged("was a symbolic link");
  assert_int_equal(lstat(shard, &st), 0);
  assert_true(S_ISDIR(st.st_mode)); /* a directory of cujit's own took its place */
  assert_int_equal(recompiles(), 0);
  assert_int_equal(stat(moved, &st), 0); /* what the link pointed to was left alone */
}

static void writable_shard_or_entry_is_not_loaded(void **state) {
  char entry[4200], shard[4200];
  (void)state;
  entry_of_kernel(entry);
  snprintf(shard, sizeof shard, "%.*s", (int)(SHARD_OF(entry) - entry + 2), entry);
  assert_int_equal(chmod(shard, 0777), 0);
  assert_int_equal(recompiles(), 1);
  assert_logged("others may write to it; it was moved to");
  assert_int_equal(count_files(cache, ".cujit"), 1); /* the new shard's entry */
  assert_int_equal(recompiles(), 0);
  assert_int_equal(chmod(entry, 0666), 0);
  assert_int_equal(recompiles(), 1);
  assert_logged("is writable by other users");
  assert_int_equal(recompiles(), 0); /* replaced by a private one */
}

static void foreign_shard_or_entry_is_not_loaded(void **state) {
  char entry[4200], shard[4200], cmd[9000];
  (void)state;
  skip_unless_root();
  entry_of_kernel(entry);
  snprintf(shard, sizeof shard, "%.*s", (int)(SHARD_OF(entry) - entry + 2), entry);
  snprintf(cmd, sizeof cmd, "chown -R %d '%s'", OTHER_UID, shard);
  run(cmd);
  assert_int_equal(recompiles(), 1);
  assert_logged("it belongs to another user");
  assert_int_equal(recompiles(), 0);
  assert_int_equal(find_entries(cache, (char(*)[4200])entry, 1), 1);
  assert_int_equal(chown(entry, OTHER_UID, OTHER_UID), 0);
  assert_int_equal(recompiles(), 1);
  assert_logged("belongs to another user; compiling again");
}

/* The cache's path is a symbolic link flipped, while kKernel is compiled again and again,
 * between the user's cache and a directory others may write holding an entry planted
 * under the same key. Checked by path and then used by path, the planted code would be
 * loaded now and then; checked on the descriptor used, never. */
static volatile int flipping;

static void *flipper(void *arg) {
  char **paths = arg, tmp[4400];
  int i;
  snprintf(tmp, sizeof tmp, "%s.new", paths[0]);
  for (i = 0; __atomic_load_n(&flipping, __ATOMIC_RELAXED); i++) {
    unlink(tmp);
    if (symlink(paths[1 + i % 2], tmp) == 0) rename(tmp, paths[0]);
  }
  return NULL;
}

static void plant_entry(const char *dir, const char *entry) {
  cujit_options o = ptx_options();
  const char *hex = strrchr(entry, '/') + 1;
  cj_image *im = NULL;
  cj_request r;
  cj_entry_path p;
  cj_key key;
  cj_root root;
  int i;
  for (i = 0; i < 16; i++) sscanf(hex + 2 * i, "%2hhx", &key.b[i]);
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cj_request_init(&r, kOther, "k.cu", &o, NULL));
  assert_ok(cj_cache_compile(&r, &im));
  cj_request_free(&r);
  root.fd = open(dir, O_RDONLY | O_DIRECTORY);
  snprintf(root.path, sizeof root.path, "%s", dir);
  assert_int_equal(cj_disk_entry_open(&root, &key, 1, &p), 0);
  assert_true(cj_disk_write(&p, &key, im, NULL, "k.cu", NULL) > 0);
  cj_disk_entry_close(&p);
  cj_root_close(&root);
  cj_image_unref(im);
}

static void root_swapped_after_check(void **state) {
  char entry[4200], attacker[4400], link[4400], *paths[3];
  cujit_options o = ptx_options();
  pthread_t t;
  int i, planted = 0;
  (void)state;
  entry_of_kernel(entry);
  snprintf(attacker, sizeof attacker, "%s/attacker", outside);
  assert_int_equal(mkdir(attacker, 0700), 0);
  plant_entry(attacker, entry);
  assert_int_equal(chmod(attacker, 0777), 0);
  snprintf(link, sizeof link, "%s/link", outside);
  assert_int_equal(symlink(cache, link), 0);
  setenv("CUJIT_CACHE_DIR", link, 1);
  paths[0] = link;
  paths[1] = attacker;
  paths[2] = cache;
  flipping = 1;
  assert_int_equal(pthread_create(&t, NULL, flipper, paths), 0);
  for (i = 0; i < 300; i++) {
    cujit_module *m = NULL;
    cj_memcache_clear();
    assert_ok(cujit_module_from_source(&m, kKernel, "k.cu", &o));
    planted += strstr(cujit_module_ptx(m, NULL), "planted") != NULL;
    cujit_module_destroy(m);
  }
  __atomic_store_n(&flipping, 0, __ATOMIC_RELAXED);
  pthread_join(t, NULL);
  setenv("CUJIT_CACHE_DIR", cache, 1);
  if (planted) fail_msg("the planted entry was loaded %d times in 300", planted);
}

/* ---- a cache path pointed at a directory of other files ---- */

static void directory_of_other_files_is_not_used(void **state) {
  char link[4400], ab[4400], tag[4400];
  struct stat st;
  cujit_options o = ptx_options();
  (void)state;
  assert_int_equal(test_write_file(outside, "notes.txt", "mine\n"), 0);
  snprintf(ab, sizeof ab, "%s/ab", outside);
  assert_int_equal(mkdir(ab, 0770), 0); /* a shard's name, group-writable */
  assert_int_equal(chmod(ab, 0770), 0);
  snprintf(link, sizeof link, "%s/3f", outside);
  assert_int_equal(symlink("/nonexistent", link), 0);
  snprintf(link, sizeof link, "%s/link", cache);
  mkdir(cache, 0700);
  assert_int_equal(symlink(outside, link), 0);
  setenv("CUJIT_CACHE_DIR", link, 1);
  cj_memcache_clear();
  assert_int_equal(compile_count(kKernel, "k.cu", &o), 1);
  assert_logged("holds other files and is not marked as cujit's cache");
  assert_int_equal(stat(ab, &st), 0); /* nothing there was moved, removed or made */
  assert_true(exists(outside, "3f") && exists(outside, "notes.txt"));
  snprintf(tag, sizeof tag, "%s/CACHEDIR.TAG", outside);
  assert_int_equal(access(tag, F_OK), -1);
  assert_status_detail(cujit_cache_clear(), CUJIT_ERROR_CACHE, "holds other files");
  setenv("CUJIT_CACHE_DIR", cache, 1);
}

static void caches_are_tagged(void **state) {
  char entry[4200], tag[4400], old_cache[4400];
  cujit_options o = ptx_options();
  (void)state;
  entry_of_kernel(entry);
  snprintf(tag, sizeof tag, "%s/CACHEDIR.TAG", cache);
  assert_int_equal(access(tag, F_OK), 0);
  /* a cache made before the tag (stats and shards only) is taken over and tagged */
  snprintf(old_cache, sizeof old_cache, "%s/old", outside);
  assert_int_equal(rename(cache, old_cache), 0);
  assert_int_equal(unlink(strcat(strcpy(tag, old_cache), "/CACHEDIR.TAG")), 0);
  setenv("CUJIT_CACHE_DIR", old_cache, 1);
  assert_int_equal(recompiles(), 0); /* its entry still hits */
  assert_int_equal(access(tag, F_OK), 0);
  (void)o;
  setenv("CUJIT_CACHE_DIR", cache, 1);
}

/* Out of file descriptors, a shard cannot be opened: a miss, and the shard is kept. */
static void no_descriptors_is_not_an_untrusted_shard(void **state) {
  char entry[4200], shard_name[3];
  struct rlimit saved, low;
  cj_root root;
  int fds[4096], n = 0, rc;
  (void)state;
  entry_of_kernel(entry);
  memcpy(shard_name, SHARD_OF(entry), 2);
  shard_name[2] = '\0';
  assert_int_equal(cj_root_open(&root, 0), 0);
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
  low = saved;
  low.rlim_cur = (rlim_t)dup(0) + 4; /* a little above the descriptors open now */
  close((int)low.rlim_cur - 4);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  while (n < 4096 && (fds[n] = dup(0)) >= 0) n++;
  rc = cj_shard_open(&root, shard_name, 1);
  while (n > 0) close(fds[--n]);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
  assert_int_equal(rc, -1);
  assert_logged("Too many open files");
  assert_int_equal(access(entry, F_OK), 0); /* not moved aside */
  cj_root_close(&root);
}

/* With the statistics file unusable, the size limit still holds. */
static void size_limit_holds_without_statistics(void **state) {
  char stats[4400], src[128];
  cujit_options o = ptx_options();
  uint64_t entries = 0, bytes = 0;
  cj_root root;
  int i;
  (void)state;
  entry_of_kernel(stats); /* a first entry, and the stats file */
  snprintf(stats, sizeof stats, "%s/stats", cache);
  assert_int_equal(unlink(stats), 0);
  assert_int_equal(mkfifo(stats, 0600), 0);
  setenv("CUJIT_CACHE_MAX_SIZE", "16K", 1);
  for (i = 0; i < 70; i++) {
    snprintf(src, sizeof src, "__global__ void k%d(float *x) { x[0] = %d; }\n", i, i);
    compile_count(src, "k.cu", &o);
  }
  unsetenv("CUJIT_CACHE_MAX_SIZE");
  assert_int_equal(cj_root_open(&root, 0), 0);
  assert_int_equal(cj_prune_scan_dir(&root, &entries, &bytes), 0);
  cj_root_close(&root);
  if (bytes > 2 * 16384)
    fail_msg("%llu bytes in %llu entries after 70 writes", (unsigned long long)bytes,
             (unsigned long long)entries);
}

/* ---- waits ---- */

/* A child that holds an open-file-description lock on dir/name until killed. */
static pid_t hold_lock(const char *dir, const char *name) {
  char path[4400], c;
  int ready[2];
  pid_t pid;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  assert_int_equal(pipe(ready), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int fd = open(path, O_RDWR);
    if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) != 0) _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(2);
    for (;;) pause();
  }
  close(ready[1]);
  assert_int_equal(read(ready[0], &c, 1), 1);
  close(ready[0]);
  return pid;
}

static void stats_lock_of_stopped_process(void **state) {
  char entry[4200];
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_options o = ptx_options();
  pid_t holder;
  (void)state;
  entry_of_kernel(entry);
  holder = hold_lock(cache, "stats");
  kill(holder, SIGSTOP);
  assert_int_equal(compile_count(kOther, "other.cu", &o), 1); /* a miss, written */
  assert_int_equal(find_entries(cache, NULL, 0), 2);
  cj_memcache_clear();
  assert_int_equal(compile_count(kOther, "other.cu", &o), 0); /* a disk hit */
  assert_ok(cujit_cache_get_disk_stats(&s));
  assert_int_equal(s.entries, 2);
  assert_ok(cujit_cache_prune(0));
  kill(holder, SIGKILL);
  wait_child(holder);
}

static void fifos_are_refused(void **state) {
  char entry[4200], stats[4400], out[4096];
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_options o = ptx_options();
  (void)state;
  entry_of_kernel(entry);
  snprintf(stats, sizeof stats, "%s/stats", cache);
  assert_int_equal(unlink(stats), 0);
  assert_int_equal(mkfifo(stats, 0600), 0);
  assert_int_equal(compile_count(kOther, "other.cu", &o), 1);
  assert_int_equal(find_entries(cache, NULL, 0), 2);
  assert_status_detail(cujit_cache_get_disk_stats(&s), CUJIT_ERROR_CACHE, "stats' is a FIFO");
  assert_ok(cujit_cache_get_stats(&s));
  assert_int_equal(s.entries, 2);
  assert_int_equal(cli("cache stats", out, sizeof out), 1);
  if (!strstr(out, "is a FIFO")) fail_msg("cache stats said:\n%s", out);
  assert_int_equal(cli("info", out, sizeof out), 0);
  assert_int_equal(cli("cache list", out, sizeof out), 0);
  assert_int_equal(cli("cache prune", out, sizeof out), 0);
  assert_int_equal(cli("cache clear", out, sizeof out), 0);
  assert_int_equal(find_entries(cache, NULL, 0), 0);
  /* a FIFO in an entry's place is a miss */
  cj_memcache_clear();
  entry_of_kernel(entry);
  assert_int_equal(unlink(entry), 0);
  assert_int_equal(mkfifo(entry, 0600), 0);
  assert_int_equal(recompiles(), 1);
}

/* ---- leftovers ---- */

static void dead_writers_files_go(void **state) {
  char entry[4200], shard[4200], dead[80], live[80], young[80];
  const char *hex;
  pid_t holder;
  (void)state;
  entry_of_kernel(entry);
  hex = strrchr(entry, '/') + 1;
  snprintf(shard, sizeof shard, "%.*s", (int)(SHARD_OF(entry) - entry + 2), entry);
  snprintf(dead, sizeof dead, ".%.32s.99999.0123456789abcdef.tmp", hex);
  snprintf(live, sizeof live, ".%.32s.%d.0123456789abcdef.tmp", hex, (int)getpid());
  snprintf(young, sizeof young, ".%.32s.1.fedcba9876543210.tmp", hex);
  assert_int_equal(test_write_file(shard, dead, "half an entry"), 0);
  assert_int_equal(test_write_file(shard, live, "half an entry"), 0);
  assert_int_equal(test_write_file(shard, young, "half an entry"), 0);
  age(shard, dead, 60);
  age(shard, live, 60);
  holder = hold_lock(shard, live); /* its writer is still at it */
  assert_ok(cujit_cache_prune(0));
  assert_false(exists(shard, dead));
  assert_true(exists(shard, live));
  assert_true(exists(shard, young)); /* may not be locked yet by its writer */
  assert_int_equal(find_entries(cache, NULL, 0), 1);
  kill(holder, SIGKILL);
  wait_child(holder);
}

/* 'cache prune' while another process keeps writing entries: what was removed is never
 * reported as a negative number wrapped around. */
static void cli_counts_with_writers(void **state) {
  char entry[4200], out[4096];
  pid_t writer;
  int i;
  (void)state;
  entry_of_kernel(entry);
  writer = fork();
  assert_true(writer >= 0);
  if (writer == 0) {
    cj_image *im = NULL;
    cj_request r;
    cj_root root;
    cujit_options o = ptx_options();
    uint64_t n;
    o.flags = CUJIT_OPT_NO_CACHE;
    if (cj_request_init(&r, kOther, "k.cu", &o, NULL) || cj_cache_compile(&r, &im)) _exit(1);
    if (cj_root_open(&root, 0) != 0) _exit(2);
    for (n = 0;; n++) {
      cj_entry_path p;
      cj_key key;
      memset(&key, 0, sizeof key);
      memcpy(key.b, &n, sizeof n);
      if (cj_disk_entry_open(&root, &key, 1, &p) == 0)
        cj_disk_write(&p, &key, im, NULL, "w.cu", NULL);
      cj_disk_entry_close(&p);
    }
  }
  for (i = 0; i < 10; i++) {
    assert_int_equal(cli("cache prune --max-size 1G", out, sizeof out), 0);
    if (strstr(out, "removed 1844")) fail_msg("prune said:\n%s", out);
  }
  kill(writer, SIGKILL);
  wait_child(writer);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ATTACK(prune_and_clear_stay_inside),
      ATTACK(symlinked_shard_is_replaced),
      ATTACK(writable_shard_or_entry_is_not_loaded),
      ATTACK(foreign_shard_or_entry_is_not_loaded),
      ATTACK(root_swapped_after_check),
      ATTACK(stats_lock_of_stopped_process),
      ATTACK(fifos_are_refused),
      ATTACK(dead_writers_files_go),
      ATTACK(cli_counts_with_writers),
      ATTACK(directory_of_other_files_is_not_used),
      ATTACK(caches_are_tagged),
      ATTACK(no_descriptors_is_not_an_untrusted_shard),
      ATTACK(size_limit_holds_without_statistics),
  };
  return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
}
