/* test_cache_remote - the remote cache tier on a real Redis server: redis-server, started
 * here on 127.0.0.1 and a free port with a password and no persistence, in the group's
 * temporary directory, and stopped here. 32 processes with empty disk caches compile a
 * source once in total; a remote hit is stored on disk; garbage, truncated, oversized and
 * foreign values are rebuilt, never loaded, and replaced; a server killed mid-run, a
 * closed port, a port that accepts but never answers and a refused password cost each
 * compile at most the timeouts; threads share the connection; a URL that does not parse
 * is a clear error; a linked module is shared as a compile is, an imported one stays off
 * the server. The group is skipped, saying why, when redis-server or hiredis is not
 * installed. The children are this binary again ("--child MODE ARG"). */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "cachetest.h"
#include "linktest.h"
#include "remote/remote.h"
#include "dl/hiredis.h"

#define PASSWORD "cujit-test-pw"
enum { HERD = 32, LOOPERS = 4, LOOP_COMPILES = 5 };

static char redis_bin[4096];
static char *workdir; /* the group's temporary directory: Redis's, the children's caches */
static pid_t redis_pid = -1;
static int redis_port;
static char url[256];    /* the library's URL for the running server */
static cj_remote *admin; /* a store with generous timeouts, for putting and getting raw values */

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* ---- the server ---- */

static int find_redis_server(void) {
  const char *path = getenv("PATH");
  char dirs[8192];
  char *dir, *save = NULL;
  snprintf(dirs, sizeof dirs, "%s:/usr/bin:/usr/sbin:/usr/local/bin", path ? path : "");
  for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(redis_bin, sizeof redis_bin, "%s/redis-server", dir);
    if (access(redis_bin, X_OK) == 0) return 1;
  }
  return 0;
}

/* A TCP port on 127.0.0.1 that nothing listens on now. */
static int free_port(void) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM, 0), port;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0)
    port = -1;
  else
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* A socket listening on 127.0.0.1 that never accepts (backlog as given). */
static int silent_listener(int backlog, int *port) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, backlog) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0)
    return -1;
  *port = ntohs(a.sin_port);
  return fd;
}

static void stop_redis(void) {
  if (redis_pid > 0) {
    kill(redis_pid, SIGKILL);
    wait_child(redis_pid);
  }
  redis_pid = -1;
  if (admin) admin->ops->destroy(admin);
  admin = NULL;
}

/* Starts redis-server on a free port and waits until it answers. 0, or -1. */
static int start_redis(void) {
  char port[16], log[4200], why[512];
  double until;
  int rc = CJ_REMOTE_FAILED;
  cj_key probe;
  cj_buf b = {0};
  redis_port = free_port();
  snprintf(port, sizeof port, "%d", redis_port);
  snprintf(log, sizeof log, "%s/redis.log", workdir);
  redis_pid = fork();
  if (redis_pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(workdir) != 0) _exit(126);
    execl(redis_bin, "redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "",
          "--appendonly", "no", "--dir", workdir, "--requirepass", PASSWORD, (char *)NULL);
    _exit(127);
  }
  if (redis_pid < 0) return -1;
  /* generous timeouts: a busy test machine must not pass for a dead server (the timeouts'
   * defaults are tested against servers that are really unreachable) */
  snprintf(url, sizeof url, "redis://:%s@127.0.0.1:%d/0?timeout=3000&connect_timeout=3000",
           PASSWORD, redis_port);
  snprintf(log, sizeof log, "redis://:%s@127.0.0.1:%d/0?timeout=5000&connect_timeout=5000",
           PASSWORD, redis_port);
  if (cj_redis_open(log, &admin, why, sizeof why) != 0) return -1;
  memset(&probe, 0, sizeof probe);
  for (until = seconds() + 10; seconds() < until && rc != CJ_REMOTE_ABSENT; nap_ms(20))
    rc = admin->ops->get(admin, &probe, 16, &b, why, sizeof why);
  cj_buf_free(&b);
  return rc == CJ_REMOTE_ABSENT ? 0 : -1;
}

/* ---- sources, keys, entries ---- */

static void source(const char *tag, char *out, size_t size) {
  snprintf(out, size, "%s// %s\n", kKernel, tag);
}

/* The disk (and remote) key of source `tag` compiled with ptx_options() as "r.cu". */
static void key_of(const char *tag, cj_key *dk) {
  cujit_options o = ptx_options();
  char src[512], why[256];
  cj_request r;
  cj_key rk;
  cj_deps *deps = NULL;
  source(tag, src, sizeof src);
  assert_ok(cj_request_init(&r, src, "r.cu", &o, NULL));
  assert_ok(cj_key_request(&r, &rk));
  assert_ok(cj_scan_request(&r, &deps, why, sizeof why));
  cj_key_disk(&rk, deps, dk);
  cj_deplist_destroy(deps);
  cj_request_free(&r);
}

/* Compiles source `tag` in this process (memory cache emptied first): NVRTC programs made. */
static uint64_t compile_tag(const char *tag) {
  cujit_options o = ptx_options();
  char src[512];
  source(tag, src, sizeof src);
  cj_memcache_clear();
  return compile_count(src, "r.cu", &o);
}

/* The bytes of the one entry in the disk cache `dir`, into b. */
static void local_entry(const char *dir, cj_buf *b) {
  char paths[2][4200], chunk[4096];
  size_t n;
  FILE *f;
  assert_int_equal(find_entries(dir, paths, 2), 1);
  assert_non_null(f = fopen(paths[0], "rb"));
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) cj_buf_append(b, chunk, n);
  fclose(f);
  assert_false(b->oom);
}

/* Asserts that the server holds, under key, exactly the entry in the disk cache `dir`. */
static void assert_remote_is_local(const char *dir, const cj_key *key) {
  cj_buf local = {0}, remote = {0};
  char why[512];
  local_entry(dir, &local);
  assert_int_equal(admin->ops->get(admin, key, CJ_REMOTE_MAX_ENTRY, &remote, why, sizeof why),
                   CJ_REMOTE_OK);
  assert_int_equal(remote.len, local.len);
  assert_memory_equal(remote.data, local.data, local.len);
  cj_buf_free(&local);
  cj_buf_free(&remote);
}

static void put_raw(const cj_key *key, const void *data, size_t len) {
  char why[512];
  if (admin->ops->put(admin, key, data, len, why, sizeof why) != CJ_REMOTE_OK)
    fail_msg("cannot store a test value: %s", why);
}

static cujit_cache_stats stats_now(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  assert_ok(cujit_cache_get_stats(&s));
  return s;
}

/* A fresh disk cache for the next compile of this process (the fixture's is dropped). */
static void empty_local_cache(void) {
  drop_cache(cache);
  cache = fresh_cache("remote");
  assert_non_null(cache);
}

/* ---- children ---- */

/* Uses the disk cache `dir`, waits for the gate, compiles source `tag`; exit status 100 +
 * NVRTC programs made + 10 when a warning was logged, 1 on failure. */
static int child_compile(const char *dir, const char *tag) {
  char src[512];
  setenv("CUJIT_CACHE_DIR", dir, 1);
  source(tag, src, sizeof src);
  return child_compile_source(src, "r.cu");
}

/* Compiles LOOP_COMPILES sources of its own into the disk cache `dir`, touching
 * `dir`.started after the first; 0 when every compile succeeded. */
static int child_loop(const char *dir) {
  cujit_options o = ptx_options();
  char src[512], tag[4200];
  int i;
  FILE *f;
  setenv("CUJIT_CACHE_DIR", dir, 1);
  child_wait_gate();
  for (i = 0; i < LOOP_COMPILES; i++) {
    cujit_module *m = NULL;
    snprintf(tag, sizeof tag, "loop %s %d", dir, i);
    source(tag, src, sizeof src);
    if (cujit_module_from_source(&m, src, "r.cu", &o) != CUJIT_OK) {
      fprintf(stderr, "child: %s\n", cujit_last_error());
      return 1;
    }
    if (!strstr(cujit_module_ptx(m, NULL), "scale")) return 2;
    cujit_module_destroy(m);
    snprintf(tag, sizeof tag, "%s.started", dir);
    if (i == 0 && (f = fopen(tag, "w")) != NULL) fclose(f);
  }
  return 0;
}

/* With hiredis unloadable: setting a tier fails clearly, and compiles still work. */
static int child_no_hiredis(const char *remote) {
  cujit_options o = ptx_options();
  cujit_module *m = NULL;
  if (cujit_cache_set_remote(remote) != CUJIT_ERROR_CACHE) return 3;
  printf("%s\n", cujit_last_error());
  if (!strstr(cujit_last_error(), "CUJIT_HIREDIS") || !strstr(cujit_last_error(), "hiredis"))
    return 4;
  if (getenv("CUJIT_HIREDIS")[0] != '/' && !strstr(cujit_last_error(), "not an absolute path"))
    return 6;
  if (cujit_module_from_source(&m, kKernel, "r.cu", &o) != CUJIT_OK) return 5;
  cujit_module_destroy(m);
  return 0;
}

/* Compiles source "ends" into the disk cache `dir` through the tier in `url` (env
 * CUJIT_CACHE_REMOTE), and while NVRTC runs it (the key's lock held here and in the tier),
 * another thread makes a call that fails in the error mode. Never returns: exit status 1. */
static int in_compile;

static int slow_hook(void *user) {
  (void)user;
  __atomic_store_n(&in_compile, 1, __ATOMIC_SEQ_CST);
  nap_ms(50);
  return 0;
}

static void *compile_slowly(void *arg) {
  cujit_options o = CUJIT_OPTIONS_INIT; /* ptx_options()'s, with the cancel hook */
  cujit_module *m = NULL;
  char src[512];
  int never = 0;
  (void)arg;
  o.arch = "compute_80";
  o.cancel = slow_hook;
  source("ends", src, sizeof src);
  cujit_module_from_source(&m, src, "r.cu", &o);
  __atomic_compare_exchange_n(&in_compile, &never, 2, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return NULL;
}

static int child_ends(const char *dir) {
  cujit_module *m = NULL;
  pthread_t t;
  setenv("CUJIT_CACHE_DIR", dir, 1);
  if (pthread_create(&t, NULL, compile_slowly, NULL) != 0) return 3;
  while (!__atomic_load_n(&in_compile, __ATOMIC_SEQ_CST)) nap_ms(1);
  if (__atomic_load_n(&in_compile, __ATOMIC_SEQ_CST) == 2) return 5; /* it never reached NVRTC */
  cujit_error_set_handler(cujit_error_exit, NULL);
  cujit_module_from_source(&m, "", "ends.cu", NULL);
  return 4;
}

static int child_main(const char *mode, const char *arg) {
  if (strcmp(mode, "ends") == 0) return child_ends(arg);
  if (strcmp(mode, "herd") == 0) return child_compile(arg, "herd");
  if (strcmp(mode, "compile") == 0) return child_compile(arg, arg); /* a source of its own */
  if (strcmp(mode, "loop") == 0) return child_loop(arg);
  if (strcmp(mode, "nohiredis") == 0) return child_no_hiredis(arg);
  return 7;
}

/* Starts n children of `mode`, the i-th with args[i], released together; returns their
 * pids (waited for by the caller). */
static void spawn_all(const char *mode, char (*args)[4200], int n, pid_t *pids) {
  int gate[2], i;
  assert_int_equal(pipe2(gate, O_CLOEXEC), 0); /* children keep only their stdin copy */
  for (i = 0; i < n; i++) {
    pids[i] = spawn_child(mode, args[i], gate[0]);
    assert_true(pids[i] > 0);
  }
  close(gate[0]);
  close(gate[1]); /* go */
}

static int run_one(const char *mode, const char *arg) {
  char args[1][4200];
  pid_t pid;
  snprintf(args[0], sizeof args[0], "%s", arg);
  spawn_all(mode, args, 1, &pid);
  return wait_child(pid);
}

/* ---- fixture: each test has a fresh disk cache and the server's URL set ---- */

static int remote_setup(void **state) {
  if (cache_setup(state) != 0) return -1;
  return cujit_cache_set_remote(url) == CUJIT_OK ? 0 : -1;
}

static int remote_teardown(void **state) {
  cujit_cache_set_remote("");
  unsetenv("CUJIT_CACHE_REMOTE");
  return cache_teardown(state);
}

#define REMOTE_TEST(fn) cmocka_unit_test_setup_teardown(fn, remote_setup, remote_teardown)

/* ---- a fake server: a thread of this process that speaks just enough of Redis ---- */

enum { FAKE_HUGE, FAKE_WIDE, FAKE_DEEP, FAKE_TRICKLE, FAKE_SILENT, FAKE_NIL };

typedef struct fake {
  int mode;             /* what GET answers (FAKE_*) */
  const char *password; /* what AUTH must be given (NULL: anything) */
  int listen_fd, port;
  int stop;        /* read and written atomically */
  size_t trickled; /* FAKE_TRICKLE: bytes of the answer sent before the client left */
  int gone;        /* set once a trickled answer's client left */
  int accepted;    /* connections taken (atomic) */
  pthread_t thread;
} fake;

/* `count` copies of `item`, in chunks. */
static int fake_repeat(int fd, const char *item, size_t count) {
  char chunk[65536];
  size_t len = strlen(item), per = sizeof chunk / len, i, n;
  for (i = 0; i < per; i++) memcpy(chunk + i * len, item, len);
  for (; count; count -= n) {
    n = count < per ? count : per;
    if (cj_worker_send(fd, chunk, n * len) != 0) return -1;
  }
  return 0;
}

/* GET's answer in each mode. */
static int fake_get(fake *f, int fd) {
  char value[128], ch;
  size_t i;
  memset(value, 'v', sizeof value); /* 4 s of trickling: a string of 90 bytes */
  memcpy(value, "$90\r\n", 5);
  memcpy(value + 95, "\r\n", 3);
  switch (f->mode) {
    case FAKE_HUGE: /* 22 million empty statuses: 66 MB on the wire, under the 64 MiB cap */
      if (cj_worker_send(fd, "*22000000\r\n", 11) != 0) return -1;
      return fake_repeat(fd, "+\r\n", 22000000);
    case FAKE_WIDE: /* 1000 arrays of 1000 empty statuses: 3 MB, announced 1000 at a time */
      for (i = 0; i < 1001; i++)
        if (cj_worker_send(fd, "*1000\r\n", 7) != 0 || (i && fake_repeat(fd, "+\r\n", 1000) != 0))
          return -1;
      return 0;
    case FAKE_DEEP: /* arrays in arrays, 100 deep */
      return fake_repeat(fd, "*1\r\n", 100) == 0 && cj_worker_send(fd, "+\r\n", 3) == 0 ? 0 : -1;
    case FAKE_TRICKLE: /* one byte every 40 ms, until the client leaves */
      for (i = 0; i < 97; i++) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 40) > 0 && recv(fd, &ch, 1, MSG_DONTWAIT) <= 0) break;
        if (cj_worker_send(fd, value + i, 1) != 0) break;
        __atomic_store_n(&f->trickled, i + 1, __ATOMIC_RELEASE);
      }
      __atomic_store_n(&f->gone, 1, __ATOMIC_RELEASE);
      return -1;
    case FAKE_SILENT: { /* no answer, until the client leaves */
      struct pollfd p = {fd, POLLIN, 0};
      poll(&p, 1, 10000);
      return -1;
    }
    default: return cj_worker_send(fd, "$-1\r\n", 5);
  }
}

/* Reads one command (an array of bulk strings): its name and last argument (each cut at
 * 255 bytes), and how many arguments it has; -1 at the end of the connection. */
static int fake_command(FILE *in, char name[256], char last[256]) {
  char line[64], buf[256];
  long argc, len, i, n;
  if (!fgets(line, sizeof line, in) || line[0] != '*' || (argc = atol(line + 1)) <= 0) return -1;
  for (i = 0; i < argc; i++) {
    if (!fgets(line, sizeof line, in) || line[0] != '$' || (len = atol(line + 1)) < 0) return -1;
    n = len < 255 ? len : 255;
    if (fread(buf, 1, (size_t)n, in) != (size_t)n) return -1;
    buf[n] = '\0';
    for (len -= n; len > 0; len--) fgetc(in);
    fgetc(in); /* "\r\n" */
    fgetc(in);
    if (i == 0) snprintf(name, 256, "%s", buf);
    snprintf(last, 256, "%s", buf);
  }
  return (int)argc;
}

/* Answers the commands of one connection until it ends. */
static void fake_serve(fake *f, int fd) {
  char name[256], last[256], answer[512];
  FILE *in = fdopen(dup(fd), "rb");
  while (in && fake_command(in, name, last) > 0) {
    int rc;
    if (strcasecmp(name, "GET") == 0) {
      rc = fake_get(f, fd);
    } else if (strcasecmp(name, "AUTH") == 0 && f->password && strcmp(last, f->password) != 0) {
      /* a hostile server repeats the password it was given */
      snprintf(answer, sizeof answer, "-WRONGPASS '%s' is not the password\r\n", last);
      rc = cj_worker_send(fd, answer, strlen(answer));
    } else if (strcasecmp(name, "EVAL") == 0) {
      rc = cj_worker_send(fd, ":1\r\n", 4);
    } else {
      rc = cj_worker_send(fd, "+OK\r\n", 5);
    }
    if (rc != 0) break;
  }
  if (in) fclose(in);
  close(fd);
}

static void *fake_main(void *arg) {
  fake *f = arg;
  while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
    struct pollfd p = {f->listen_fd, POLLIN, 0};
    int fd;
    if (poll(&p, 1, 20) <= 0 || (fd = accept(f->listen_fd, NULL, NULL)) < 0) continue;
    __atomic_add_fetch(&f->accepted, 1, __ATOMIC_ACQ_REL);
    fake_serve(f, fd);
  }
  return NULL;
}

static void fake_start(fake *f, int mode, const char *password) {
  memset(f, 0, sizeof *f);
  f->mode = mode;
  f->password = password;
  assert_true((f->listen_fd = silent_listener(16, &f->port)) >= 0);
  assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_stop(fake *f) {
  __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
  pthread_join(f->thread, NULL);
  close(f->listen_fd);
}

/* The most memory this process has held so far, in KiB. */
static long peak_kib(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

/* ---- tests ---- */

/* A miss compiled here goes to disk and to the server; a process with an empty disk cache
 * then hits the server, without NVRTC, and keeps the entry on its disk. */
static void hit_is_stored_locally(void **state) {
  cujit_cache_stats before = stats_now(), after, d = CUJIT_CACHE_STATS_INIT;
  char cmd[8192], out[8192];
  cj_key key;
  (void)state;
  key_of("hit", &key);
  assert_int_equal(compile_tag("hit"), 1);
  assert_remote_is_local(cache, &key);
  after = stats_now();
  assert_int_equal(after.remote_misses - before.remote_misses, 1);
  assert_int_equal(after.remote_hits - before.remote_hits, 0);
  empty_local_cache();
  assert_int_equal(compile_tag("hit"), 0);
  assert_int_equal(count_files(cache, ".cujit"), 1);
  assert_remote_is_local(cache, &key);
  assert_int_equal(stats_now().remote_hits - after.remote_hits, 1);
  assert_ok(cujit_cache_get_disk_stats(&d));
  assert_int_equal(d.hits, 1);
  assert_int_equal(d.compiles, 0);
  assert_int_equal(d.remote_hits, 1);
  assert_true(d.remote_time_us > 0);
  /* the CLI shows it, without the password */
  snprintf(cmd, sizeof cmd, "CUJIT_CACHE_DIR='%s' CUJIT_CACHE_REMOTE='%s' '%s' cache stats 2>&1",
           cache, url, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 0);
  snprintf(cmd, sizeof cmd, "remote            redis://127.0.0.1:%d/0?", redis_port);
  if (!strstr(out, cmd) || !strstr(out, "remote hits       1\n") || strstr(out, PASSWORD))
    fail_msg("cujit cache stats printed:\n%s", out);
  assert_not_logged("remote");
}

/* 32 processes with empty disk caches and one server: one NVRTC compile in total, and
 * each disk cache ends up with the entry. */
static void herd_compiles_once(void **state) {
  static char dirs[HERD][4200];
  pid_t pids[HERD];
  int i, status, programs = 0;
  cj_key key;
  (void)state;
  setenv("CUJIT_CACHE_REMOTE", url, 1);
  for (i = 0; i < HERD; i++) snprintf(dirs[i], sizeof dirs[i], "%s/herd%d", workdir, i);
  spawn_all("herd", dirs, HERD, pids);
  for (i = 0; i < HERD; i++) {
    status = wait_child(pids[i]);
    if (status != 100 && status != 101) fail_msg("child %d exited with %d", i, status);
    programs += status - 100;
  }
  assert_int_equal(programs, 1);
  key_of("herd", &key);
  for (i = 0; i < HERD; i++) assert_remote_is_local(dirs[i], &key);
}

/* Values that are not this key's entry are never loaded: the source is compiled again,
 * the value counted as invalid and replaced by the new entry. */
static void bad_values_are_replaced(void **state) {
  static const char *const tags[] = {"garbage", "truncated", "oversized", "foreign", "empty"};
  cj_buf valid = {0};
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT;
  size_t i;
  cj_key key;
  (void)state;
  /* a valid entry of another source, for the truncated and foreign values */
  assert_ok(cujit_cache_set_remote(""));
  assert_int_equal(compile_tag("valid"), 1);
  local_entry(cache, &valid);
  assert_ok(cujit_cache_set_remote(url));
  for (i = 0; i < CJ_COUNT(tags); i++) {
    empty_local_cache();
    log_capture(CUJIT_LOG_WARN);
    key_of(tags[i], &key);
    if (i == 0) {
      put_raw(&key, "not a cache entry at all", 24);
    } else if (i == 1) {
      put_raw(&key, valid.data, valid.len - 7);
    } else if (i == 2) {
      char *big = calloc(1, CJ_REMOTE_MAX_ENTRY + 1);
      assert_non_null(big);
      memcpy(big, valid.data, valid.len);
      put_raw(&key, big, CJ_REMOTE_MAX_ENTRY + 1);
      free(big);
    } else if (i == 3) {
      put_raw(&key, valid.data, valid.len);
    } else {
      put_raw(&key, "", 0);
    }
    before = stats_now();
    if (compile_tag(tags[i]) != 1) fail_msg("the %s value was not rebuilt", tags[i]);
    if (stats_now().remote_invalid - before.remote_invalid != 1)
      fail_msg("the %s value was not counted as invalid; log:\n%s", tags[i], log_text);
    assert_int_equal(stats_now().remote_hits - before.remote_hits, 0);
    assert_logged("in the remote cache");
    assert_logged("compiling it again and replacing it");
    assert_remote_is_local(cache, &key);
  }
  assert_logged("is empty");
  cj_buf_free(&valid);
}

/* The server killed while processes use it: every compile succeeds. */
static void killed_mid_run(void **state) {
  static char dirs[LOOPERS][4200];
  char started[4300];
  pid_t pids[LOOPERS];
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  double until;
  int i;
  (void)state;
  setenv("CUJIT_CACHE_REMOTE", url, 1);
  for (i = 0; i < LOOPERS; i++) snprintf(dirs[i], sizeof dirs[i], "%s/loop%d", workdir, i);
  spawn_all("loop", dirs, LOOPERS, pids);
  for (i = 0; i < LOOPERS; i++) { /* until each has compiled through the server once */
    snprintf(started, sizeof started, "%s.started", dirs[i]);
    for (until = seconds() + 30; access(started, F_OK) != 0 && seconds() < until;) nap_ms(5);
  }
  stop_redis();
  for (i = 0; i < LOOPERS; i++)
    if (wait_child(pids[i]) != 0) fail_msg("child %d failed after the server was killed", i);
  /* and here: the failure is warned about once, and the tier is skipped afterwards */
  before = stats_now();
  assert_int_equal(compile_tag("after kill 1"), 1);
  after = stats_now();
  assert_int_equal(after.remote_errors - before.remote_errors, 1);
  assert_logged("compiling without it for 30 s");
  assert_int_equal(compile_tag("after kill 2"), 1);
  assert_int_equal(stats_now().remote_errors, after.remote_errors);
  assert_int_equal(stats_now().remote_time_us, after.remote_time_us);
  assert_int_equal(start_redis(), 0); /* for the tests after this one */
}

/* Compiles source `tag` with the tier at `remote`: it succeeds, the tier costs less than
 * a second (the timeouts are 50 ms: this bounds a hang), one error is counted, and the
 * warning holds `needle`. */
static void bounded_failure(const char *remote, const char *tag, const char *needle) {
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  assert_ok(cujit_cache_set_remote(remote));
  log_capture(CUJIT_LOG_WARN);
  before = stats_now();
  assert_int_equal(compile_tag(tag), 1);
  after = stats_now();
  if (after.remote_time_us - before.remote_time_us >= 1000000)
    fail_msg("the unreachable tier held the compile for %.3f s",
             (double)(after.remote_time_us - before.remote_time_us) / 1e6);
  assert_int_equal(after.remote_errors - before.remote_errors, 1);
  assert_logged("compiling without it for 30 s");
  assert_logged(needle);
}

/* A closed port, a port that accepts but never answers, one whose queue is full (so that
 * connecting itself hangs) and a wrong password: each compile goes on after the timeout. */
static void unreachable_is_skipped(void **state) {
  char remote[256];
  int port, quiet, full, filler[4], i;
  cujit_cache_stats after = CUJIT_CACHE_STATS_INIT;
  double t0, waited;
  cj_key key;
  cj_remote *direct;
  cj_buf b = {0};
  char why[512];
  (void)state;
  snprintf(remote, sizeof remote, "redis://127.0.0.1:%d", free_port());
  bounded_failure(remote, "closed port", "cannot connect");
  /* accepts (the kernel completes the handshake) but never answers */
  assert_true((quiet = silent_listener(16, &port)) >= 0);
  snprintf(remote, sizeof remote, "redis://127.0.0.1:%d/0", port);
  bounded_failure(remote, "silent port", "did not finish within the command's 50 ms (timeout");
  after = stats_now();
  assert_int_equal(compile_tag("silent port, later"), 1); /* skipped: backing off */
  assert_int_equal(stats_now().remote_errors, after.remote_errors);
  assert_int_equal(stats_now().remote_time_us, after.remote_time_us);
  close(quiet);
  /* a full accept queue: connecting hangs until connect_timeout */
  assert_true((full = silent_listener(0, &port)) >= 0);
  snprintf(remote, sizeof remote, "redis://127.0.0.1:%d/0?connect_timeout=30", port);
  for (i = 0; i < (int)CJ_COUNT(filler); i++) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    filler[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    connect(filler[i], (struct sockaddr *)&a, sizeof a);
  }
  assert_int_equal(cj_redis_open(remote, &direct, why, sizeof why), 0);
  key_of("full queue", &key);
  t0 = seconds();
  assert_int_equal(direct->ops->get(direct, &key, 1024, &b, why, sizeof why), CJ_REMOTE_FAILED);
  waited = seconds() - t0;
  assert_true(waited < 1.0);
  if (!strstr(why, "(connect_timeout)") && !strstr(why, "(timeout)"))
    fail_msg("unexpected reason: %s", why);
  direct->ops->destroy(direct);
  bounded_failure(remote, "full queue", "remote cache");
  for (i = 0; i < (int)CJ_COUNT(filler); i++) close(filler[i]);
  close(full);
  /* the server refuses the password */
  snprintf(remote, sizeof remote, "redis://:wrong@127.0.0.1:%d/0?timeout=3000", redis_port);
  bounded_failure(remote, "wrong password", "AUTH: the server answered 'WRONGPASS");
  cj_buf_free(&b);
}

/* The database in the URL is the one used. */
static void database_is_selected(void **state) {
  char remote[512], why[512];
  cj_remote *db3;
  cj_buf b = {0};
  cj_key key;
  (void)state;
  snprintf(remote, sizeof remote, "redis://:%s@127.0.0.1:%d/3?timeout=3000", PASSWORD, redis_port);
  assert_ok(cujit_cache_set_remote(remote));
  assert_int_equal(compile_tag("database 3"), 1);
  key_of("database 3", &key);
  assert_int_equal(admin->ops->get(admin, &key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why),
                   CJ_REMOTE_ABSENT); /* not in database 0 */
  assert_int_equal(cj_redis_open(remote, &db3, why, sizeof why), 0);
  assert_int_equal(db3->ops->get(db3, &key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why),
                   CJ_REMOTE_OK);
  db3->ops->destroy(db3);
  cj_buf_free(&b);
  assert_not_logged("remote");
}

/* A lock held by another machine: compiles wait for its entry, and compile after the lock
 * timeout when none comes. */
static void waits_for_the_lock_holder(void **state) {
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT;
  cj_buf valid = {0};
  char why[512];
  cj_key key;
  double t0;
  pid_t other_pid;
  (void)state;
  key_of("held", &key);
  assert_int_equal(admin->ops->lock(admin, &key, 42, 60000, why, sizeof why), CJ_REMOTE_OK);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "0.5", 1);
  t0 = seconds();
  before = stats_now();
  assert_int_equal(compile_tag("held"), 1);
  assert_true(seconds() - t0 >= 0.5);
  assert_logged("waited");
  assert_logged("for another machine to finish compiling 'r.cu'");
  assert_int_equal(stats_now().remote_misses - before.remote_misses, 1);
  assert_remote_is_local(cache, &key); /* stored anyway */
  /* the holder stores its entry while another waits: the waiter takes it */
  local_entry(cache, &valid);
  assert_int_equal(admin->ops->put(admin, &key, "", 0, why, sizeof why), CJ_REMOTE_OK);
  empty_local_cache();
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "20", 1);
  if ((other_pid = fork()) == 0) { /* the other machine, finishing in 0.3 s */
    cj_remote *other;
    nap_ms(300);
    if (cj_redis_open(url, &other, why, sizeof why) != 0 ||
        other->ops->put(other, &key, valid.data, valid.len, why, sizeof why) != CJ_REMOTE_OK)
      _exit(1);
    _exit(0);
  }
  t0 = seconds();
  assert_int_equal(compile_tag("held"), 0);
  assert_true(seconds() - t0 < 10);
  assert_int_equal(wait_child(other_pid), 0);
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  assert_int_equal(admin->ops->unlock(admin, &key, 42, why, sizeof why), CJ_REMOTE_OK);
  cj_buf_free(&valid);
}

/* A process that ends in the error mode while one of its threads compiles gives back the
 * key's lock it holds in the tier: no other machine waits for it to expire. */
static void error_mode_end_gives_the_lock_back(void **state) {
  char why[512];
  cj_key key;
  (void)state;
  key_of("ends", &key);
  setenv("CUJIT_CACHE_REMOTE", url, 1);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "60", 1); /* the lock's lifetime in the tier */
  assert_int_equal(run_one("ends", cache), 1);
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  unsetenv("CUJIT_CACHE_REMOTE");
  /* free at once: another machine takes it */
  assert_int_equal(admin->ops->lock(admin, &key, 43, 1000, why, sizeof why), CJ_REMOTE_OK);
  assert_int_equal(admin->ops->unlock(admin, &key, 43, why, sizeof why), CJ_REMOTE_OK);
}

/* A compile waiting for another machine's entry stops at its own time limit and when its
 * cancel hook asks, with CUJIT_ERROR_CANCELLED, long before the lock's timeout. */
static int cancel_now(void *user) { return ++*(int *)user > 3; }

static void wait_for_the_holder_stops(void **state) {
  cujit_options o = ptx_options();
  cujit_module *m = NULL;
  char src[512], why[512];
  cj_key key;
  double t0;
  int asked = 0;
  (void)state;
  key_of("stopped", &key);
  source("stopped", src, sizeof src);
  assert_int_equal(admin->ops->lock(admin, &key, 42, 60000, why, sizeof why), CJ_REMOTE_OK);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "30", 1);
  o.size = sizeof o; /* the time limit and cancel hook came after the first version */
  o.time_limit_s = 0.3;
  t0 = seconds();
  assert_status_detail(cujit_module_from_source(&m, src, "r.cu", &o), CUJIT_ERROR_CANCELLED,
                       "stopped by its time limit while another machine compiled");
  assert_true(seconds() - t0 < 5);
  assert_null(m);
  o.time_limit_s = 0;
  o.cancel = cancel_now;
  o.cancel_user = &asked;
  t0 = seconds();
  assert_status_detail(cujit_module_from_source(&m, src, "r.cu", &o), CUJIT_ERROR_CANCELLED,
                       "cancelled by its cancel hook while another machine compiled");
  assert_true(seconds() - t0 < 5);
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  assert_int_equal(admin->ops->unlock(admin, &key, 42, why, sizeof why), CJ_REMOTE_OK);
  /* the lock gone, the same compile goes through */
  o.cancel = NULL;
  assert_ok(cujit_module_from_source(&m, src, "r.cu", &o));
  cujit_module_destroy(m);
}

/* Threads of one process share the tier's connection: each compile goes through it. */
static void *compile_thread(void *arg) {
  cujit_options o = ptx_options();
  cujit_module *m = NULL;
  char src[512];
  source(arg, src, sizeof src);
  if (cujit_module_from_source(&m, src, "r.cu", &o) != CUJIT_OK) return (void *)1;
  cujit_module_destroy(m);
  return NULL;
}

static void threads_share_the_tier(void **state) {
  static char tags[8][32];
  pthread_t th[8];
  cujit_cache_stats before = stats_now(), after;
  void *rc;
  cj_buf b = {0};
  char why[512];
  cj_key key;
  int i;
  (void)state;
  for (i = 0; i < 8; i++) {
    snprintf(tags[i], sizeof tags[i], "thread %d", i);
    assert_int_equal(pthread_create(&th[i], NULL, compile_thread, tags[i]), 0);
  }
  for (i = 0; i < 8; i++) {
    assert_int_equal(pthread_join(th[i], &rc), 0);
    assert_null(rc);
  }
  after = stats_now();
  assert_int_equal(after.remote_misses - before.remote_misses, 8);
  assert_int_equal(after.remote_errors - before.remote_errors, 0);
  for (i = 0; i < 8; i++) {
    key_of(tags[i], &key);
    b.len = 0;
    assert_int_equal(admin->ops->get(admin, &key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why),
                     CJ_REMOTE_OK);
  }
  cj_buf_free(&b);
  assert_not_logged("remote");
}

/* A process forked while another thread is in the middle of a command on a store: the
 * child uses the same store at once (its own connection) and does not hang on the lock
 * the busy thread held at the fork. */
static int busy_stop; /* read and written atomically */

static void *busy_thread(void *arg) {
  cj_buf b = {0};
  char why[512];
  cj_key key;
  key_of("fork", &key);
  while (!__atomic_load_n(&busy_stop, __ATOMIC_ACQUIRE)) {
    b.len = 0;
    ((cj_remote *)arg)->ops->get(arg, &key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why);
  }
  cj_buf_free(&b);
  return NULL;
}

static void fork_during_a_command(void **state) {
  pthread_t th;
  pid_t pid;
  int i;
  (void)state;
  __atomic_store_n(&busy_stop, 0, __ATOMIC_RELEASE);
  assert_int_equal(pthread_create(&th, NULL, busy_thread, admin), 0);
  for (i = 0; i < 40; i++) {
    if ((pid = fork()) == 0) {
      cj_buf b = {0};
      char why[512];
      cj_key key;
      alarm(5); /* a child stuck on the lock dies, and the test fails */
      key_of("fork", &key);
      _exit(admin->ops->get(admin, &key, 16, &b, why, sizeof why) == CJ_REMOTE_ABSENT ? 0 : 1);
    }
    assert_true(pid > 0);
    if (wait_child(pid) != 0) {
      __atomic_store_n(&busy_stop, 1, __ATOMIC_RELEASE);
      pthread_join(th, NULL);
      fail_msg("child %d of 40 forked during a command failed or hung", i + 1);
    }
  }
  __atomic_store_n(&busy_stop, 1, __ATOMIC_RELEASE);
  assert_int_equal(pthread_join(th, NULL), 0);
}

/* Answers whose reply objects would pass the 64 MiB cap, however few bytes they take on
 * the wire: refused before hiredis builds them, and a counted miss (not an error). */
static void replies_past_the_cap_are_refused(void **state) {
  static const int modes[] = {FAKE_HUGE, FAKE_WIDE, FAKE_DEEP};
  static const char *const tags[] = {"huge answer", "wide answer", "deep answer"};
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  char remote[128], why[512];
  long peak = peak_kib();
  cj_remote *direct;
  cj_buf b = {0};
  cj_key key;
  size_t i;
  fake f;
  int rc;
  (void)state;
  for (i = 0; i < CJ_COUNT(modes); i++) {
    fake_start(&f, modes[i], NULL);
    snprintf(remote, sizeof remote, "redis://127.0.0.1:%d/0?timeout=5000", f.port);
    assert_int_equal(cj_redis_open(remote, &direct, why, sizeof why), 0);
    key_of(tags[i], &key);
    rc = direct->ops->get(direct, &key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why);
    direct->ops->destroy(direct);
    /* a bound, not a measure: hiredis took 1.1 GiB or more for the 22 million elements */
    if (peak_kib() - peak > 256 * 1024)
      fail_msg("the %s took %ld MiB", tags[i], (peak_kib() - peak) / 1024);
    if (rc != CJ_REMOTE_TOO_LARGE || !strstr(why, "is larger than 67108864 bytes"))
      fail_msg("the %s: %d, %s", tags[i], rc, why);
    /* through a compile: a miss, counted as invalid, and no error */
    assert_ok(cujit_cache_set_remote(remote));
    log_capture(CUJIT_LOG_WARN);
    before = stats_now();
    assert_int_equal(compile_tag(tags[i]), 1);
    after = stats_now();
    assert_int_equal(after.remote_invalid - before.remote_invalid, 1);
    assert_int_equal(after.remote_errors - before.remote_errors, 0);
    assert_logged("is larger than 67108864 bytes");
    assert_ok(cujit_cache_set_remote(""));
    fake_stop(&f);
  }
  assert_logged("(it nests arrays too deep)");
  cj_buf_free(&b);
}

/* A server that sends its answer a byte every 40 ms (each wait for the next bytes is
 * shorter than the timeout) is given up on once the whole command has taken `timeout`. */
static void trickled_answer_is_cut_short(void **state) {
  char remote[128], why[512];
  cj_remote *direct;
  cj_buf b = {0};
  cj_key key;
  double until;
  fake f;
  (void)state;
  key_of("trickle", &key);
  fake_start(&f, FAKE_TRICKLE, NULL);
  snprintf(remote, sizeof remote, "redis://127.0.0.1:%d/0", f.port); /* timeout: 50 ms */
  assert_int_equal(cj_redis_open(remote, &direct, why, sizeof why), 0);
  assert_int_equal(direct->ops->get(direct, &key, 1024, &b, why, sizeof why), CJ_REMOTE_FAILED);
  for (until = seconds() + 10; !__atomic_load_n(&f.gone, __ATOMIC_ACQUIRE) && seconds() < until;)
    nap_ms(5);
  /* a byte every 40 ms: a command bounded at 50 ms takes a few; one whose every read was
   * bounded at 50 ms took 50 (two seconds' worth) */
  if (__atomic_load_n(&f.trickled, __ATOMIC_ACQUIRE) >= 10)
    fail_msg("the server sent %zu bytes before the client gave up (%s)", f.trickled, why);
  if (!strstr(why, "the answer did not finish within the command's 50 ms (timeout"))
    fail_msg("unexpected reason: %s", why);
  direct->ops->destroy(direct);
  fake_stop(&f);
  cj_buf_free(&b);
}

/* No message shows a password, whatever it holds: not the URL's parse errors, not the URL
 * shown, not a connection's errors (even a server that repeats the password it was
 * given), not the log. Such a password, as given, is the one sent. */
static void passwords_are_never_shown(void **state) {
  static const char *const passwords[] = {"sekrit1/sekrit2",
                                          "sekrit1?sekrit2",
                                          "sekrit1#sekrit2",
                                          "sekrit1@sekrit2",
                                          "sekrit1:sekrit2",
                                          "sekrit1/sekrit2?sekrit3#sekrit4@sekrit5:sekrit6"};
  static const char *const bad[] = {"redis://:%s@127.0.0.1:0x%d", "redis://u:%s@[::1/%d",
                                    "redis://u:%s@h:%d/x",        "redis://u:%s@h:%d?speed=1",
                                    "redis://u:%s127.0.0.1:%d",   "redis://u:%s/%d"};
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  char remote[256], shown[256];
  size_t i, j;
  fake good, hostile;
  (void)state;
  for (i = 0; i < CJ_COUNT(passwords); i++) {
    fake_start(&good, FAKE_NIL, passwords[i]);
    fake_start(&hostile, FAKE_NIL, "another password");
    log_capture(CUJIT_LOG_DEBUG);
    /* the server that knows it: the compile goes through the tier, silently */
    snprintf(remote, sizeof remote, "redis://user:%s@127.0.0.1:%d/0?timeout=3000", passwords[i],
             good.port);
    if (cujit_cache_set_remote(remote) != CUJIT_OK) fail_msg("%s", cujit_last_error());
    assert_ok(cujit_cache_get_remote(shown, sizeof shown));
    snprintf(remote, sizeof remote, "redis://user:***@127.0.0.1:%d/0?timeout=3000", good.port);
    assert_string_equal(shown, remote);
    before = stats_now();
    assert_int_equal(compile_tag(passwords[i]), 1);
    after = stats_now();
    assert_int_equal(after.remote_misses - before.remote_misses, 1);
    assert_int_equal(after.remote_errors - before.remote_errors, 0);
    /* one that refuses it and repeats it */
    snprintf(remote, sizeof remote, "redis://:%s@127.0.0.1:%d/0?timeout=3000", passwords[i],
             hostile.port);
    assert_ok(cujit_cache_set_remote(remote));
    snprintf(shown, sizeof shown, "refused %zu", i);
    assert_int_equal(compile_tag(shown), 1);
    assert_logged("AUTH: the server answered an error that holds the password (not shown)");
    assert_not_logged("sekrit");
    /* URLs that do not parse */
    for (j = 0; j < CJ_COUNT(bad); j++) {
      if (j >= 4 && strchr(passwords[i], '@')) continue; /* without its '@', a valid URL */
      snprintf(remote, sizeof remote, bad[j], passwords[i], good.port);
      assert_int_equal(cujit_cache_set_remote(remote), CUJIT_ERROR_INVALID_VALUE);
      if (strstr(cujit_last_error(), "sekrit")) fail_msg("%s: %s", remote, cujit_last_error());
    }
    assert_ok(cujit_cache_set_remote(""));
    fake_stop(&good);
    fake_stop(&hostile);
  }
}

/* URLs that do not parse are refused, saying what is wrong; the tier is then off. */
/* cujit_cache_get_remote shows the tier in use without its password, even one holding
 * an '@' (the user information ends at the last one). Setting a tier connects nowhere. */
static void shown_url_hides_the_password(void **state) {
  char shown[256];
  (void)state;
  assert_ok(cujit_cache_set_remote("redis://u:se@cret@127.0.0.1:1/0"));
  assert_ok(cujit_cache_get_remote(shown, sizeof shown));
  assert_string_equal(shown, "redis://u:***@127.0.0.1:1/0");
  assert_ok(cujit_cache_set_remote(""));
  assert_ok(cujit_cache_get_remote(shown, sizeof shown));
  assert_string_equal(shown, "");
}

static void bad_urls_are_errors(void **state) {
  static const char *const bad[][2] = {
      {"http://localhost", "is not a redis:// URL"},
      {"redis://", "no host"},
      {"redis://host:0", "the port is not a number from 1 to 65535"},
      {"redis://host:70000", "the port is not a number"},
      {"redis://host:63x9", "the port is not a number"},
      {"redis://host/abc", "the database 'abc' is not a number"},
      {"redis://host?timeout=0", "timeout needs a number of milliseconds"},
      {"redis://host?connect_timeout=soon", "connect_timeout needs a number"},
      {"redis://host?speed=1", "unknown parameter 'speed'"},
      {"redis://user@host", "a user needs a password"},
      {"redis://:pa%zzss@host", "malformed %XX escape"},
      {"redis://[::1", "'[' without ']'"},
      {"redis://::1:6379", "an IPv6 address needs brackets"},
      {"rediss://:secret@host", "TLS (rediss://) is not supported"},
  };
  static const char *const good[] = {"redis://127.0.0.1", "redis://cache.example:1/15",
                                     "redis://[::1]:6380/2?timeout=100&connect_timeout=20",
                                     "redis://u:p%40ss@h/0", "REDIS://h:6379/"};
  char dir[4200];
  size_t i;
  (void)state;
  for (i = 0; i < CJ_COUNT(bad); i++) {
    const char *detail;
    assert_status_detail(cujit_cache_set_remote(bad[i][0]), CUJIT_ERROR_INVALID_VALUE, bad[i][1]);
    detail = cujit_last_error();
    if (strncmp(detail, "cujit_cache_set_remote: ", 24) != 0 ||
        !strstr(detail, "the form is redis://[[user]:password@]host[:port][/db]") ||
        !strstr(detail, "the remote cache is off until it is set again") ||
        strstr(detail, "secret"))
      fail_msg("for '%s': %s", bad[i][0], detail);
  }
  /* off after a bad URL: a compile does not touch any tier */
  assert_int_equal(compile_tag("after a bad url"), 1);
  assert_not_logged("remote");
  for (i = 0; i < CJ_COUNT(good); i++)
    if (cujit_cache_set_remote(good[i]) != CUJIT_OK)
      fail_msg("'%s' refused: %s", good[i], cujit_last_error());
  /* from the environment: NULL reads it, naming the variable */
  setenv("CUJIT_CACHE_REMOTE", "redis//nocolon", 1);
  assert_status_detail(cujit_cache_set_remote(NULL), CUJIT_ERROR_INVALID_VALUE,
                       "CUJIT_CACHE_REMOTE: it is not a redis:// URL");
  /* a process that finds it there at its first compile warns and compiles */
  snprintf(dir, sizeof dir, "%s/from-env", workdir);
  assert_int_equal(run_one("compile", dir), 111);
  setenv("CUJIT_CACHE_REMOTE", url, 1);
  assert_ok(cujit_cache_set_remote(NULL));
  /* hiredis missing: a clear error, and compiles still work */
  setenv("CUJIT_HIREDIS", "/nonexistent/libhiredis.so", 1);
  assert_int_equal(run_one("nohiredis", url), 0);
  /* a name that is not an absolute path is not loaded, though the loader would find it */
  setenv("CUJIT_HIREDIS", "libhiredis.so.0.14", 1);
  assert_int_equal(run_one("nohiredis", url), 0);
  unsetenv("CUJIT_HIREDIS");
}

/* Threads share the tier's one connection: when a server stops answering, the threads
 * that waited behind the first command to fail do not each connect and wait again. */
typedef struct silent_compile {
  pthread_t thread;
  char source[512];
  cujit_status status;
} silent_compile;

static void *compile_behind(void *arg) {
  silent_compile *c = arg;
  cujit_options o = ptx_options();
  cujit_module *m = NULL;
  c->status = cujit_module_from_source(&m, c->source, "r.cu", &o);
  cujit_module_destroy(m);
  return NULL;
}

static void threads_behind_a_failure_do_not_retry(void **state) {
  silent_compile c[4];
  char silent_url[256];
  fake f;
  size_t i;
  uint64_t programs = cj_nvrtc_programs_created();
  (void)state;
  fake_start(&f, FAKE_SILENT, NULL);
  snprintf(silent_url, sizeof silent_url,
           "redis://127.0.0.1:%d/0?timeout=1000&connect_timeout=1000", f.port);
  assert_ok(cujit_cache_set_remote(silent_url));
  cj_memcache_clear();
  for (i = 0; i < CJ_COUNT(c); i++) {
    char tag[32];
    snprintf(tag, sizeof tag, "behind %zu", i);
    source(tag, c[i].source, sizeof c[i].source);
    assert_int_equal(pthread_create(&c[i].thread, NULL, compile_behind, &c[i]), 0);
  }
  for (i = 0; i < CJ_COUNT(c); i++) {
    pthread_join(c[i].thread, NULL);
    assert_ok(c[i].status);
  }
  /* each compiled here, whatever the tier did */
  assert_int_equal(cj_nvrtc_programs_created() - programs, CJ_COUNT(c));
  fake_stop(&f);
  if (f.accepted != 1) fail_msg("the silent server was connected to %d times", f.accepted);
  assert_ok(cujit_cache_set_remote(url));
}

/* Writers of the tier are trusted: an entry made for a key, with that key's manifest but
 * other code, is a valid entry. It is loaded, copied to the disk cache, and `cujit cache
 * verify` (which compiles the recorded inputs again) says it does not reproduce. */
static int verdict_of(const cujit_cache_verified *v, void *user) {
  *(cujit_cache_verdict *)user = v->verdict;
  return 0;
}

static void forged_entry_is_found_by_verify(void **state) {
  static const char planted[] = "\n// planted by another writer of the tier\n";
  cj_buf real = {0}, forged = {0}, manifest = {0}, ptx = {0};
  cj_image *im = NULL;
  cj_deps deps;
  cj_entry_meta meta;
  cj_key key;
  uint64_t at, size;
  char why[256];
  cujit_cache_verify_summary sum = CUJIT_CACHE_VERIFY_SUMMARY_INIT;
  cujit_cache_verdict verdict = CUJIT_CACHE_VERDICT_MATCH;
  cujit_cache_stats before;
  (void)state;
  /* the real entry of the source: its image and its manifest */
  assert_ok(cujit_cache_set_remote(""));
  key_of("forged", &key);
  assert_int_equal(compile_tag("forged"), 1);
  local_entry(cache, &real);
  memset(&deps, 0, sizeof deps);
  assert_int_equal(cj_entry_decode(&key, real.data, real.len, &im, &deps, &meta, why, sizeof why),
                   0);
  cj_deplist_clear(&deps);
  assert_int_equal(cj_entry_manifest_span(real.data, real.len, &at, &size), 0);
  assert_true(size > 0);
  cj_buf_append(&manifest, real.data + at, (size_t)size);
  /* other code under the same key and manifest: a valid entry */
  cj_buf_append(&ptx, im->ptx, im->ptx_size);
  cj_buf_append(&ptx, planted, sizeof planted); /* with the NUL */
  assert_false(ptx.oom);
  cj_free(im->ptx);
  im->ptx = ptx.data;
  im->ptx_size = ptx.len - 1;
  assert_int_equal(cj_entry_encode(&key, im, NULL, &meta, &manifest, &forged), 0);
  /* stored in the tier, it is served from there and copied to the disk cache */
  assert_ok(cujit_cache_set_remote(url));
  put_raw(&key, forged.data, forged.len);
  empty_local_cache();
  before = stats_now();
  assert_int_equal(compile_tag("forged"), 0);
  assert_int_equal(stats_now().remote_hits - before.remote_hits, 1);
  assert_remote_is_local(cache, &key);
  /* verify compiles the recorded inputs again and finds other bytes */
  assert_ok(cujit_cache_verify(0, verdict_of, &verdict, &sum));
  assert_int_equal(sum.entries, 1);
  assert_int_equal(sum.mismatched, 1);
  assert_int_equal(verdict, CUJIT_CACHE_VERDICT_MISMATCH);
  /* the entry compiled here verifies */
  empty_local_cache();
  assert_ok(cujit_cache_set_remote(""));
  assert_int_equal(compile_tag("forged"), 1);
  assert_ok(cujit_cache_verify(0, NULL, NULL, &sum));
  assert_int_equal(sum.matched, 1);
  assert_ok(cujit_cache_set_remote(url));
  cj_image_unref(im);
  cj_buf_free(&real);
  cj_buf_free(&forged);
  cj_buf_free(&manifest);
}

/* A linked module is shared as a compile is: linked here, it goes to the server beside its
 * sources; with an empty disk cache the same link then finds all three there, compiling
 * and linking nothing, keeps them on disk, and is still a linked module. */
static void links_are_shared(void **state) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_link_part parts[2];
  cujit_module *m = NULL;
  cujit_cache_stats a, b, c;
  size_t size = 0;
  (void)state;
  o.arch = LINK_ARCH;
  parts[0] = link_source(kLinkMain, "main.cu");
  parts[1] = link_source(kLinkLib, "lib.cu");
  cj_memcache_clear();
  a = stats_now();
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  cujit_module_destroy(m);
  b = stats_now();
  assert_int_equal(b.compiles - a.compiles, 3); /* two sources and the link */
  assert_int_equal(b.remote_misses - a.remote_misses, 3);
  empty_local_cache();
  cj_memcache_clear();
  assert_ok(cujit_module_link(&m, parts, 2, &o, NULL));
  c = stats_now();
  assert_int_equal(c.compiles - b.compiles, 0);
  assert_int_equal(c.remote_hits - b.remote_hits, 3);
  assert_int_equal(count_files(cache, ".cujit"), 3);
  assert_memory_equal(cujit_module_cubin(m, &size), "\177ELF", 4);
  /* its kernels are read from the linked CUBIN's symbol table, as a link's are */
  assert_status_detail(cujit_module_get_function(m, "nothing", &(cujit_function *){NULL}),
                       CUJIT_ERROR_NOT_FOUND, "apply");
  cujit_module_destroy(m);
  assert_not_logged("remote");
}

/* An imported module is stored in memory and on disk, as a compile is, but not on the
 * server: the cluster shares only what a cujit of its own compiled. */
static void imports_stay_local(void **state) {
  cujit_options o = ptx_options();
  cujit_module *m = NULL, *im = NULL;
  char src[512], why[512];
  cj_buf b = {0};
  void *blob = NULL;
  size_t size = 0;
  cj_key key;
  (void)state;
  source("imported", src, sizeof src);
  key_of("imported", &key);
  assert_ok(cujit_cache_set_remote(""));
  cj_memcache_clear();
  assert_ok(cujit_module_from_source(&m, src, "r.cu", &o));
  assert_ok(cujit_module_export(m, &blob, &size));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_set_remote(url));
  empty_local_cache();
  cj_memcache_clear();
  assert_ok(cujit_module_import(&im, blob, size, src, "r.cu", &o));
  cujit_module_destroy(im);
  assert_int_equal(count_files(cache, ".cujit"), 1);
  assert_int_equal(admin->ops->get(admin, &key, CJ_REMOTE_MAX_ENTRY, &b, why, sizeof why),
                   CJ_REMOTE_ABSENT);
  /* a compile of it now is a disk hit */
  assert_int_equal(compile_tag("imported"), 0);
  cj_buf_free(&b);
  cujit_free(blob);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      REMOTE_TEST(hit_is_stored_locally),
      REMOTE_TEST(herd_compiles_once),
      REMOTE_TEST(bad_values_are_replaced),
      REMOTE_TEST(database_is_selected),
      REMOTE_TEST(waits_for_the_lock_holder),
      REMOTE_TEST(error_mode_end_gives_the_lock_back),
      REMOTE_TEST(threads_share_the_tier),
      REMOTE_TEST(unreachable_is_skipped),
      REMOTE_TEST(shown_url_hides_the_password),
      REMOTE_TEST(bad_urls_are_errors),
      REMOTE_TEST(killed_mid_run),
      REMOTE_TEST(fork_during_a_command),
      REMOTE_TEST(wait_for_the_holder_stops),
      REMOTE_TEST(replies_past_the_cap_are_refused),
      REMOTE_TEST(trickled_answer_is_cut_short),
      REMOTE_TEST(passwords_are_never_shown),
      REMOTE_TEST(forged_entry_is_found_by_verify),
      REMOTE_TEST(threads_behind_a_failure_do_not_retry),
      REMOTE_TEST(links_are_shared),
      REMOTE_TEST(imports_stay_local),
  };
  int rc;
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], argv[3]);
  if (!find_redis_server()) {
    printf("SKIP: redis-server is not installed (Debian: apt-get install redis-server)\n");
    return TEST_SKIP_CODE;
  }
  if (cj_hiredis_load() != CUJIT_OK) {
    printf("SKIP: %s\n", cj_hiredis_error());
    return TEST_SKIP_CODE;
  }
  if (!(workdir = test_tempdir("remote")) || start_redis() != 0) {
    printf("could not start %s (log in %s/redis.log)\n", redis_bin, workdir ? workdir : "?");
    stop_redis();
    return 1;
  }
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  stop_redis();
  test_rmtree(workdir);
  free(workdir);
  return rc;
}
