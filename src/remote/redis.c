/* redis.c - the remote tier on a Redis server (see remote.h).
 *
 * Entries are stored as they are on disk, under "cujit:<32 hex digits of the key>"; a
 * key's lock is "cujit:<hex>:lock", set with SET NX PX (so that it expires when its
 * holder dies) and removed only by the holder that set it (a script compares the token).
 *
 * One connection per store, shared by the process's threads under a mutex and made again
 * after a failure; a forked child makes its own (fork waits for a command in flight).
 * hiredis formats the commands and parses the replies (dl/libhiredis.c); the socket is
 * cujit's, non-blocking, so that every wait has a deadline: connect_timeout for
 * connecting, and for a whole command (sending it and reading all of its answer)
 * `timeout` plus MS_PER_MIB for each MiB it sends or its answer announces, so that a
 * server that trickles bytes cannot hold a compile longer; a stall of `timeout` ends a
 * long transfer early. Sends use MSG_NOSIGNAL: a server that went away is an error, never
 * a SIGPIPE.
 *
 * hiredis builds a whole reply before handing it over, and allocates for every element
 * (and every announced array slot) whatever its size on the wire. So the bytes are read
 * first by a small scanner of Redis's framing (format/resp.c), which counts what hiredis will
 * allocate for them and refuses a reply past the command's limit before hiredis sees the
 * bytes that would pass it: an array's slots when its header arrives, each element and
 * its text as they come, and nesting beyond CJ_RESP_MAX_DEPTH (hiredis frees replies
 * recursively). It accepts RESP2 only (cujit never asks for RESP3), as hiredis 0.14 does. */
#define _GNU_SOURCE /* MSG_NOSIGNAL, strncasecmp, memmem */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dl/hiredis.h"
#include "format/resp.h"
#include "remote/remote.h"

#define DEFAULT_PORT 6379
#define CONNECT_MS 50 /* default connect_timeout */
#define TIMEOUT_MS 50 /* default timeout: the bound of a whole command that moves little */
#define MS_PER_MIB 16 /* what a command may take longer for each MiB it moves (64 MiB/s) */
#define MAX_MS 60000
#define SMALL_REPLY ((size_t)1 << 16) /* the most any reply but GET's may hold */

static const char url_form[] =
    "redis://[[user]:password@]host[:port][/db][?connect_timeout=MS&timeout=MS]";

typedef struct redis {
  cj_remote base;
  pthread_mutex_t mu;
  char host[256];
  char port[8];
  char user[256], password[256]; /* password "" when none */
  unsigned db;
  int connect_ms, timeout_ms;
  int fd;           /* -1 when not connected */
  pid_t pid;        /* the process that connected */
  double failed_at; /* when a command last failed to reach the server (monotonic s; 0: never) */
  cj_redis_reader *reader;
} redis;

/* Each store's lock is listed for fork() (common/forklock.c): a child forked while
 * another thread was in the middle of a command would otherwise start with that store's
 * lock held forever. The child then connects anew (connect_now sees another pid). */

/* ---- the URL ---- */

static int bad_url(char *why, size_t size, const char *fmt, ...) CJ_PRINTF(3, 4);
static int bad_url(char *why, size_t size, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(why, size, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < size)
    snprintf(why + n, size - (size_t)n, "; the form is %s, e.g. redis://cache.example:6379/0",
             url_form);
  return -1;
}

static int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* Copies n bytes of a URL part, decoding %XX escapes. 0, or -1 when malformed or too long. */
static int decode(const char *s, size_t n, char *out, size_t size) {
  size_t i, o = 0;
  int hi, lo;
  for (i = 0; i < n; i++) {
    if (o + 1 >= size) return -1;
    if (s[i] != '%') {
      out[o++] = s[i];
      continue;
    }
    if (n - i < 3 || (hi = hex_digit(s[i + 1])) < 0 || (lo = hex_digit(s[i + 2])) < 0) return -1;
    out[o++] = (char)(hi * 16 + lo);
    i += 2;
  }
  out[o] = '\0';
  return 0;
}

/* A number of n digits (no sign) from 0 to max into *out. */
static int digits(const char *s, size_t n, unsigned long max, unsigned long *out) {
  unsigned long v = 0;
  size_t i;
  if (n == 0) return -1;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (max - (unsigned long)(s[i] - '0')) / 10) return -1;
    v = v * 10 + (unsigned long)(s[i] - '0');
  }
  *out = v;
  return 0;
}

static int parse_userinfo(redis *c, const char *s, size_t n, char *why, size_t size) {
  const char *colon = memchr(s, ':', n);
  if (!colon)
    return bad_url(why, size,
                   "a user needs a password (user:password@host; a password "
                   "alone is :password@host)");
  if (decode(s, (size_t)(colon - s), c->user, sizeof c->user) != 0 ||
      decode(colon + 1, n - (size_t)(colon - s) - 1, c->password, sizeof c->password) != 0)
    return bad_url(why, size,
                   "the user or password is too long or has a malformed %%XX "
                   "escape");
  return 0;
}

static int parse_host(redis *c, const char *s, size_t n, char *why, size_t size) {
  const char *end = s + n, *port = NULL, *close;
  unsigned long v = DEFAULT_PORT;
  size_t hlen;
  if (n && s[0] == '[') { /* an IPv6 address */
    if (!(close = memchr(s, ']', n))) return bad_url(why, size, "'[' without ']' in the host");
    hlen = (size_t)(close - s) - 1;
    s++;
    if (close + 1 < end && close[1] != ':')
      return bad_url(why, size, "unexpected text after the IPv6 address");
    port = close + 1 < end ? close + 2 : NULL;
  } else {
    const char *colon = memchr(s, ':', n);
    hlen = colon ? (size_t)(colon - s) : n;
    port = colon ? colon + 1 : NULL;
    if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
      return bad_url(why, size, "an IPv6 address needs brackets, as in redis://[::1]:6379");
  }
  if (hlen == 0) return bad_url(why, size, "no host");
  if (hlen >= sizeof c->host) return bad_url(why, size, "the host name is too long");
  memcpy(c->host, s, hlen);
  c->host[hlen] = '\0';
  if (port && (digits(port, (size_t)(end - port), 65535, &v) != 0 || v == 0))
    return bad_url(why, size,
                   "the port is not a number from 1 to 65535 (it is not shown: "
                   "it may be a password whose '@' is missing)");
  snprintf(c->port, sizeof c->port, "%lu", v);
  return 0;
}

static int parse_query(redis *c, const char *s, char *why, size_t size) {
  while (*s) {
    size_t n = strcspn(s, "&"), name_len;
    const char *eq = memchr(s, '=', n);
    unsigned long v;
    int *field = NULL;
    name_len = eq ? (size_t)(eq - s) : n;
    if (name_len == 15 && strncmp(s, "connect_timeout", 15) == 0) field = &c->connect_ms;
    if (name_len == 7 && strncmp(s, "timeout", 7) == 0) field = &c->timeout_ms;
    if (!field)
      return bad_url(why, size, "unknown parameter '%.*s' (known: connect_timeout, timeout)",
                     (int)name_len, s);
    if (!eq || digits(eq + 1, n - name_len - 1, MAX_MS, &v) != 0 || v == 0)
      return bad_url(why, size, "%.*s needs a number of milliseconds from 1 to %d", (int)name_len,
                     s, MAX_MS);
    *field = (int)v;
    s += n;
    if (*s == '&') s++;
  }
  return 0;
}

/* The URL as shown in messages: no password, no parameters. */
static void display_name(redis *c) {
  const char *open = strchr(c->host, ':') ? "[" : "", *close = open[0] ? "]" : "";
  snprintf(c->base.name, sizeof c->base.name, "redis://%s%s%s:%s/%u", open, c->host, close, c->port,
           c->db);
}

/* Where the user information of the URL after "scheme://" ends: its last '@' (so that a
 * password may hold '/', '?', '#' or '@'), or NULL when there is none. */
static const char *userinfo_end(const char *s) { return strrchr(s, '@'); }

void cj_redis_shown(const char *url, char *out, size_t size) {
  const char *s = strstr(url, "://"), *at, *colon = NULL;
  s = s ? s + 3 : url;
  if ((at = userinfo_end(s)) != NULL) colon = memchr(s, ':', (size_t)(at - s));
  if (colon)
    snprintf(out, size, "%.*s***%s", (int)(colon + 1 - url), url, at);
  else
    snprintf(out, size, "%s", url);
}

static int parse_url(redis *c, const char *url, char *why, size_t size) {
  const char *s, *at, *path;
  unsigned long db = 0;
  if (strncasecmp(url, "rediss://", 9) == 0)
    return bad_url(why, size,
                   "TLS (rediss://) is not supported: reach Redis through a "
                   "trusted network, or through a TLS tunnel that listens on this machine");
  if (strncasecmp(url, "redis://", 8) != 0) return bad_url(why, size, "it is not a redis:// URL");
  s = url + 8;
  at = userinfo_end(s);
  if (at && parse_userinfo(c, s, (size_t)(at - s), why, size) != 0) return -1;
  if (at) s = at + 1;
  path = s + strcspn(s, "/?");
  if (parse_host(c, s, (size_t)(path - s), why, size) != 0) return -1;
  if (*path == '/') {
    size_t n = strcspn(path + 1, "?");
    if (n && digits(path + 1, n, 1u << 20, &db) != 0)
      return bad_url(why, size, "the database '%.*s' is not a number", (int)n, path + 1);
    path += 1 + n;
  }
  c->db = (unsigned)db;
  if (*path == '?' && parse_query(c, path + 1, why, size) != 0) return -1;
  display_name(c);
  return 0;
}

/* ---- the connection ---- */

static int say(char *why, size_t size, int rc, const char *fmt, ...) CJ_PRINTF(4, 5);
static int say(char *why, size_t size, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
  return rc;
}

/* Waits until fd is ready for `events`, at most until `deadline`: 1 when ready, 0 when
 * the time ran out, -1 on error (errno). */
static int wait_fd(int fd, short events, double deadline) {
  for (;;) {
    struct pollfd p = {fd, events, 0};
    double left = deadline - cj_now_s();
    int rc;
    if (left <= 0) return 0;
    rc = poll(&p, 1, (int)(left * 1000) + 1);
    if (rc > 0) return 1; /* also on an error or hang-up, which the next call reports */
    if (rc < 0 && errno != EINTR) return -1;
  }
}

static void hang_up(redis *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  cj_hiredis_reader_free(c->reader);
  c->reader = NULL;
}

/* Connects one address within the deadline: the descriptor, or -1 with errno. */
static int dial_one(const struct addrinfo *a, double deadline) {
  int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
  int err = 0, one = 1, rc;
  socklen_t len = sizeof err;
  if (fd < 0) return -1;
  if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) goto fail;
    rc = wait_fd(fd, POLLOUT, deadline);
    if (rc == 0) errno = ETIMEDOUT;
    if (rc <= 0) goto fail;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) goto fail;
    if (err) {
      errno = err;
      goto fail;
    }
  }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
fail:
  err = errno;
  close(fd);
  errno = err;
  return -1;
}

static int dial(redis *c, char *why, size_t size) {
  struct addrinfo hints, *list = NULL, *a;
  double deadline = cj_now_s() + c->connect_ms / 1e3;
  int rc, err = 0;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if ((rc = getaddrinfo(c->host, c->port, &hints, &list)) != 0)
    return say(why, size, CJ_REMOTE_FAILED, "cannot resolve '%s': %s", c->host, gai_strerror(rc));
  c->fd = -1;
  for (a = list; a && c->fd < 0; a = a->ai_next)
    if ((c->fd = dial_one(a, deadline)) < 0) err = errno;
  freeaddrinfo(list);
  if (c->fd >= 0) return CJ_REMOTE_OK;
  if (err == ETIMEDOUT)
    return say(why, size, CJ_REMOTE_FAILED, "no connection within %d ms (connect_timeout)",
               c->connect_ms);
  return say(why, size, CJ_REMOTE_FAILED, "cannot connect: %s", strerror(err));
}

/* The time one command may take from `start`: `timeout`, plus MS_PER_MIB for each MiB it
 * sends and its answer announces. */
typedef struct span {
  double start, bound; /* monotonic seconds; seconds */
} span;

static double allowance(size_t bytes) { return (double)bytes / (1 << 20) * MS_PER_MIB / 1e3; }

/* The end of the next wait: `timeout` from now, and no later than the command's bound. */
static double next_wait(const redis *c, const span *t) {
  double w = cj_now_s() + c->timeout_ms / 1e3, end = t->start + t->bound;
  return w < end ? w : end;
}

/* A wait that ran out (rc 0) or a call that failed (errno err) while `doing`. */
static int io_failed(const redis *c, const span *t, char *why, size_t size, const char *doing,
                     int rc, int err) {
  if (rc == 0 && cj_now_s() >= t->start + t->bound)
    return say(why, size, CJ_REMOTE_FAILED,
               "%s did not finish within the command's %.0f ms "
               "(timeout, plus %d ms for each MiB moved)",
               doing, t->bound * 1e3, MS_PER_MIB);
  if (rc == 0)
    return say(why, size, CJ_REMOTE_FAILED, "%s stalled for %d ms (timeout)", doing, c->timeout_ms);
  return say(why, size, CJ_REMOTE_FAILED, "%s failed: %s", doing, strerror(err));
}

static int send_all(redis *c, const char *buf, size_t len, const span *t, char *why, size_t size) {
  while (len) {
    ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
    int rc;
    if (n > 0) {
      buf += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return io_failed(c, t, why, size, "sending", -1, errno);
    if ((rc = wait_fd(c->fd, POLLOUT, next_wait(c, t))) <= 0)
      return io_failed(c, t, why, size, "sending", rc, errno);
  }
  return CJ_REMOTE_OK;
}

static int read_reply(redis *c, size_t max, span *t, void **reply, char *why, size_t size) {
  char buf[16384];
  double base = t->bound;
  cj_resp_scan s;
  cj_resp_start(&s, max + CJ_RESP_ELEMENT_COST); /* one string of max bytes fits */
  for (;;) {
    ssize_t n;
    int rc;
    if (cj_hiredis_reader_get(c->reader, reply) != 0)
      return say(why, size, CJ_REMOTE_FAILED, "the server's answer is not Redis's protocol");
    if (*reply) return CJ_REMOTE_OK;
    if ((rc = wait_fd(c->fd, POLLIN, next_wait(c, t))) <= 0)
      return io_failed(c, t, why, size, "the answer", rc, errno);
    n = recv(c->fd, buf, sizeof buf, 0);
    if (n == 0) return say(why, size, CJ_REMOTE_FAILED, "the server closed the connection");
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return io_failed(c, t, why, size, "receiving", -1, errno);
    if ((rc = cj_resp_feed(&s, buf, (size_t)n)) == CJ_RESP_TOO_LARGE)
      return say(why, size, CJ_REMOTE_TOO_LARGE, "is larger than %zu bytes (it %s)", max, s.why);
    if (rc != CJ_RESP_OK)
      return say(why, size, CJ_REMOTE_FAILED, "the server's answer is not Redis's protocol");
    t->bound = base + allowance(s.announced);
    if (cj_hiredis_reader_feed(c->reader, buf, (size_t)n) != 0) return CJ_REMOTE_NOMEM;
  }
}

/* Sends one command and reads its reply, on a connection that is up. Anything but a reply
 * leaves the connection closed (its state is unknown). */
static int roundtrip(redis *c, int argc, const char **argv, const size_t *lens, size_t max,
                     void **reply, char *why, size_t size) {
  char *cmd = NULL;
  long len = cj_hiredis_format(&cmd, argc, argv, lens);
  span t;
  int rc;
  *reply = NULL;
  if (len < 0) {
    hang_up(c);
    return CJ_REMOTE_NOMEM;
  }
  t.start = cj_now_s();
  t.bound = c->timeout_ms / 1e3 + allowance((size_t)len);
  rc = send_all(c, cmd, (size_t)len, &t, why, size);
  cj_hiredis_free_command(cmd);
  if (rc == CJ_REMOTE_OK) rc = read_reply(c, max, &t, reply, why, size);
  if (rc != CJ_REMOTE_OK) hang_up(c);
  return rc;
}

/* One command (arguments of lens[i] bytes; lens NULL: strings) whose reply must not be
 * an error: CJ_REMOTE_OK with *reply (the caller frees it, also after a refusal),
 * CJ_REMOTE_REFUSED with the server's message in why, or a failure. */
static int command(redis *c, int argc, const char **argv, const size_t *lens, size_t max,
                   cj_reply *r, void **reply, char *why, size_t size);

static int simple(redis *c, int argc, const char **argv, char *why, size_t size) {
  cj_reply r;
  void *reply;
  int rc = command(c, argc, argv, NULL, SMALL_REPLY, &r, &reply, why, size);
  cj_hiredis_reply_free(reply);
  return rc;
}

/* AUTH and SELECT on a new connection. */
static int hello(redis *c, char *why, size_t size) {
  char db[16], detail[256];
  const char *auth[3] = {"AUTH", c->user, c->password}, *sel[2] = {"SELECT", db};
  int rc = CJ_REMOTE_OK;
  if (c->password[0]) {
    if (!c->user[0]) auth[1] = c->password;
    rc = simple(c, c->user[0] ? 3 : 2, auth, detail, sizeof detail);
    if (rc == CJ_REMOTE_REFUSED)
      rc = say(why, size, CJ_REMOTE_FAILED, "AUTH: %s", detail);
    else if (rc != CJ_REMOTE_OK)
      snprintf(why, size, "%s", detail);
  }
  if (rc == CJ_REMOTE_OK && c->db) {
    snprintf(db, sizeof db, "%u", c->db);
    rc = simple(c, 2, sel, detail, sizeof detail);
    if (rc == CJ_REMOTE_REFUSED)
      rc = say(why, size, CJ_REMOTE_FAILED, "SELECT %u: %s", c->db, detail);
    else if (rc != CJ_REMOTE_OK)
      snprintf(why, size, "%s", detail);
  }
  if (rc != CJ_REMOTE_OK) hang_up(c);
  return rc;
}

static int connect_now(redis *c, char *why, size_t size) {
  int rc;
  if (c->fd >= 0 && c->pid == getpid()) return CJ_REMOTE_OK;
  if (c->fd >= 0)
    hang_up(c); /* the parent's, inherited through fork: closing our copy
                   leaves the parent's connection alone */
  if (cj_hiredis_load() != CUJIT_OK)
    return say(why, size, CJ_REMOTE_FAILED, "%s", cj_hiredis_error());
  if ((rc = dial(c, why, size)) != CJ_REMOTE_OK) return rc;
  c->pid = getpid();
  if (!(c->reader = cj_hiredis_reader_new())) {
    hang_up(c);
    return CJ_REMOTE_NOMEM;
  }
  return hello(c, why, size);
}

static int command(redis *c, int argc, const char **argv, const size_t *lens, size_t max,
                   cj_reply *r, void **reply, char *why, size_t size) {
  size_t own[8];
  int i, rc;
  *reply = NULL;
  if (!lens) {
    for (i = 0; i < argc && i < (int)CJ_COUNT(own); i++) own[i] = strlen(argv[i]);
    lens = own;
  }
  if ((rc = connect_now(c, why, size)) == CJ_REMOTE_OK)
    rc = roundtrip(c, argc, argv, lens, max, reply, why, size);
  if (rc == CJ_REMOTE_FAILED) c->failed_at = cj_now_s();
  if (rc != CJ_REMOTE_OK) return rc;
  cj_hiredis_reply(*reply, r);
  if (r->type != CJ_REPLY_ERROR) return CJ_REMOTE_OK;
  if (c->password[0] && r->str && memmem(r->str, r->len, c->password, strlen(c->password)))
    return say(why, size, CJ_REMOTE_REFUSED,
               "the server answered an error that holds the "
               "password (not shown)");
  return say(why, size, CJ_REMOTE_REFUSED, "the server answered '%.*s'",
             (int)(r->len < 200 ? r->len : 200), r->str ? r->str : "");
}

/* Takes the store's lock for a command. Threads share one connection, so a command that
 * waited while another failed to reach the server is not tried again: each would cost its
 * own timeouts, and the tier is skipped for a while after a failure anyway. */
static int take(redis *c, char *why, size_t size) {
  double asked = cj_now_s();
  pthread_mutex_lock(&c->mu);
  if (c->failed_at >= asked)
    return say(why, size, CJ_REMOTE_FAILED,
               "the server failed another command of this "
               "process while this one waited; not tried again");
  return CJ_REMOTE_OK;
}

static int unexpected(const char *what, const cj_reply *r, char *why, size_t size) {
  return say(why, size, CJ_REMOTE_FAILED, "%s got an answer of type %d, not Redis's", what,
             r->type);
}

/* ---- the operations ---- */

void cj_redis_key(const cj_key *key, char out[40]) {
  char hex[33];
  cj_hash128_hex(key, hex);
  snprintf(out, 40, "cujit:%s", hex);
}

static void lock_key(const cj_key *key, char out[48]) {
  char k[40];
  cj_redis_key(key, k);
  snprintf(out, 48, "%s:lock", k);
}

static int redis_get(cj_remote *t, const cj_key *key, size_t max, cj_buf *out, char *why,
                     size_t size) {
  redis *c = (redis *)t;
  char k[40];
  const char *argv[2] = {"GET", k};
  void *reply = NULL;
  cj_reply r;
  int rc;
  cj_redis_key(key, k);
  if ((rc = take(c, why, size)) == CJ_REMOTE_OK)
    rc = command(c, 2, argv, NULL, max, &r, &reply, why, size);
  if (rc == CJ_REMOTE_OK) {
    if (r.type == CJ_REPLY_NIL) {
      rc = CJ_REMOTE_ABSENT;
    } else if (r.type != CJ_REPLY_STRING) {
      rc = unexpected("GET", &r, why, size);
    } else if (r.len > max) {
      rc = say(why, size, CJ_REMOTE_TOO_LARGE, "is larger than %zu bytes", max);
    } else {
      cj_buf_append(out, r.str, r.len);
      rc = out->oom ? CJ_REMOTE_NOMEM : CJ_REMOTE_OK;
    }
  }
  cj_hiredis_reply_free(reply);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

/* Runs a command whose reply must be +OK (or nil: CJ_REMOTE_ABSENT). */
static int expect_ok(redis *c, int argc, const char **argv, const size_t *lens, const char *what,
                     char *why, size_t size) {
  void *reply = NULL;
  cj_reply r;
  int rc;
  if ((rc = take(c, why, size)) == CJ_REMOTE_OK)
    rc = command(c, argc, argv, lens, SMALL_REPLY, &r, &reply, why, size);
  if (rc == CJ_REMOTE_OK && r.type == CJ_REPLY_NIL)
    rc = CJ_REMOTE_ABSENT;
  else if (rc == CJ_REMOTE_OK && r.type != CJ_REPLY_STATUS)
    rc = unexpected(what, &r, why, size);
  cj_hiredis_reply_free(reply);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

static int redis_put(cj_remote *t, const cj_key *key, const void *data, size_t len, char *why,
                     size_t size) {
  char k[40];
  const char *argv[3] = {"SET", k, data};
  size_t lens[3] = {3, 0, len};
  cj_redis_key(key, k);
  lens[1] = strlen(k);
  return expect_ok((redis *)t, 3, argv, lens, "SET", why, size);
}

static int redis_lock(cj_remote *t, const cj_key *key, uint64_t token, uint64_t ttl_ms, char *why,
                      size_t size) {
  char k[48], tok[24], ttl[24];
  const char *argv[6] = {"SET", k, tok, "NX", "PX", ttl};
  size_t lens[6];
  int i;
  lock_key(key, k);
  snprintf(tok, sizeof tok, "%016llx", (unsigned long long)token);
  snprintf(ttl, sizeof ttl, "%llu", (unsigned long long)ttl_ms);
  for (i = 0; i < 6; i++) lens[i] = strlen(argv[i]);
  return expect_ok((redis *)t, 6, argv, lens, "SET NX", why, size);
}

static int redis_unlock(cj_remote *t, const cj_key *key, uint64_t token, char *why, size_t size) {
  static const char script[] =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end "
      "return 0";
  redis *c = (redis *)t;
  char k[48], tok[24];
  const char *argv[5] = {"EVAL", script, "1", k, tok};
  void *reply = NULL;
  cj_reply r;
  int rc;
  lock_key(key, k);
  snprintf(tok, sizeof tok, "%016llx", (unsigned long long)token);
  if ((rc = take(c, why, size)) == CJ_REMOTE_OK)
    rc = command(c, 5, argv, NULL, SMALL_REPLY, &r, &reply, why, size);
  if (rc == CJ_REMOTE_OK && r.type != CJ_REPLY_INTEGER) rc = unexpected("EVAL", &r, why, size);
  cj_hiredis_reply_free(reply);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

static void redis_destroy(cj_remote *t) {
  redis *c = (redis *)t;
  if (!c) return;
  cj_fork_unguard(&c->mu);
  hang_up(c);
  pthread_mutex_destroy(&c->mu);
  memset(c->password, 0, sizeof c->password);
  cj_free(c);
}

static const cj_remote_ops redis_ops = {redis_get, redis_put, redis_lock, redis_unlock,
                                        redis_destroy};

int cj_redis_open(const char *url, cj_remote **out, char *why, size_t why_size) {
  redis *c;
  *out = NULL;
  why[0] = '\0';
  if (!(c = cj_calloc(1, sizeof *c))) return -1;
  c->base.ops = &redis_ops;
  c->fd = -1;
  c->connect_ms = CONNECT_MS;
  c->timeout_ms = TIMEOUT_MS;
  if (parse_url(c, url, why, why_size) != 0) {
    cj_free(c);
    return -1;
  }
  pthread_mutex_init(&c->mu, NULL);
  cj_fork_guard(&c->mu);
  *out = &c->base;
  return 0;
}
