/* serve.c - the worker's side of the pool (worker.h says the protocol): a greeting, then
 * requests in, NVRTC compiles, entries out. The worker keeps no cache: its caller looked
 * in the caches and holds the key's lock, and writes the entry. What it keeps between
 * requests is this process's NVRTC and its precompiled headers, which is why it is
 * reused. It serves only a library of its own version (the greeting). */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dl/nvrtc.h"
#include "store/store.h"
#include "worker/worker.h"

const char *cj_worker_version(void) { return CJ_WORKER_VERSION; }

void cj_worker_greeting(cj_buf *b) {
  const char *v = cj_worker_version();
  cj_buf_append(b, CJ_WORKER_HELLO, 4);
  cj_buf_put_le(b, CJ_WORKER_PROTOCOL, 8);
  cj_buf_put_le(b, strlen(v), 8);
  cj_buf_puts(b, v);
}

void cj_worker_key(uint64_t id, cj_key *key) {
  int i;
  for (i = 0; i < 8; i++) key->b[i] = key->b[i + 8] = (unsigned char)(id >> (8 * i));
  key->b[0] ^= 0x5a; /* not a key a hash would name by chance: both halves differ */
}

static int read_all(int fd, void *p, size_t n) {
  unsigned char *b = p;
  while (n) {
    ssize_t k = read(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

int cj_worker_send(int fd, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n) {
    ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static uint64_t le(const unsigned char *p, int bytes) {
  cj_cursor c = {p, (size_t)bytes, 0};
  return cj_cursor_get(&c, bytes);
}

/* NVRTC's flow callback in the worker: stop on a cancel byte, or when the caller is gone
 * (its end of the socket closed: nobody waits for the result). */
static int asked_to_stop(void *user) {
  int fd = *(int *)user;
  struct pollfd p = {fd, POLLIN, 0};
  unsigned char c;
  ssize_t k;
  if (poll(&p, 1, 0) <= 0) return 0;
  k = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (k == 0) return 1;
  if (k != 1 || c != CJ_WORKER_CANCEL) return 0;
  k = read(fd, &c, 1); /* the cancel byte it peeked at, taken; asked to stop either way */
  return 1;
}

static int reply(int fd, uint64_t id, int kind, cujit_status st, int nvrtc, const char *msg,
                 const cj_buf *entry) {
  cj_buf b = {0};
  size_t len = strlen(msg);
  int rc;
  if (len > CJ_WORKER_MAX_MESSAGE) len = (size_t)CJ_WORKER_MAX_MESSAGE;
  cj_buf_append(&b, CJ_WORKER_REPLY, 4);
  cj_buf_put_le(&b, id, 8);
  cj_buf_put_le(&b, (uint64_t)kind, 4);
  cj_buf_put_le(&b, (uint64_t)st, 4);
  cj_buf_put_le(&b, (uint64_t)(uint32_t)nvrtc, 4);
  cj_buf_put_le(&b, len, 8);
  cj_buf_append(&b, msg, len);
  cj_buf_put_le(&b, entry ? entry->len : 0, 8);
  if (b.oom) return cj_buf_free(&b), -1;
  rc = cj_worker_send(fd, b.data, b.len);
  if (rc == 0 && entry && entry->len) rc = cj_worker_send(fd, entry->data, entry->len);
  cj_buf_free(&b);
  return rc;
}

/* Compiles one decoded request in the caller's working directory and answers it. */
static int compile_one(int fd, uint64_t id, cj_request *r, const char *cwd) {
  static CJ_LARGE char here[PATH_MAX];
  cj_image *im = NULL;
  cj_buf entry = {0};
  cj_key key;
  cujit_status st;
  int rc;
  if (strcmp(here, cwd) != 0) {
    if (chdir(cwd) != 0) return reply(fd, id, CJ_REPLY_REFUSED, CUJIT_OK, 0, "", NULL);
    snprintf(here, sizeof here, "%s", cwd);
  }
  r->cancel = asked_to_stop;
  r->cancel_user = &fd;
  st = cj_request_prepare(r);
  if (st == CUJIT_OK) st = cj_nvrtc_compile(r, &im);
  if (st != CUJIT_OK)
    return reply(fd, id, CJ_REPLY_RESULT, st, cujit_last_nvrtc_result(), cujit_last_error(), NULL);
  cj_worker_key(id, &key);
  if (cj_disk_encode(&key, im, NULL, r->name, NULL, &entry) != 0) {
    cj_image_unref(im);
    return reply(fd, id, CJ_REPLY_REFUSED, CUJIT_OK, 0, "", NULL);
  }
  cj_image_unref(im);
  /* a result names the NVRTC that made it, which the caller checks against its own */
  rc = reply(fd, id, CJ_REPLY_RESULT, CUJIT_OK, 0, cj_libnvrtc_identity(), &entry);
  cj_buf_free(&entry);
  return rc;
}

/* Reads the payload of one request and answers it. -1 when the caller is gone or sent
 * something that is not a request: the worker then exits. */
static int serve_one(int fd, const unsigned char head[20]) {
  uint64_t id = le(head + 4, 8), len = le(head + 12, 8), cwd_len;
  char cwd[PATH_MAX];
  unsigned char *payload;
  cj_request r;
  int rc;
  if (memcmp(head, CJ_WORKER_REQUEST, 4) != 0 || len < 8 || len > CJ_ENTRY_MAX_SIZE) return -1;
  if (!(payload = cj_malloc((size_t)len + 1))) return -1;
  if (read_all(fd, payload, (size_t)len) != 0) return cj_free(payload), -1;
  payload[len] = '\0';
  cwd_len = le(payload, 8);
  if (cwd_len == 0 || cwd_len >= PATH_MAX || cwd_len > len - 8 ||
      memchr(payload + 8, '\0', (size_t)cwd_len))
    return cj_free(payload), -1;
  rc = cj_request_decode(payload + 8 + cwd_len, (size_t)(len - 8 - cwd_len), &r);
  if (rc != 0) {
    cj_free(payload);
    return rc < 0 ? reply(fd, id, CJ_REPLY_REFUSED, CUJIT_OK, 0, "", NULL) : -1;
  }
  memcpy(cwd, payload + 8, (size_t)cwd_len);
  cwd[cwd_len] = '\0';
  rc = compile_one(fd, id, &r, cwd);
  cj_request_decoded_free(&r);
  cj_free(payload);
  return rc;
}

/* Reads the library's greeting and answers with this worker's own: 0 when the library is
 * of this worker's protocol and version, so that requests may follow; else 1 (something
 * else, or another version, which learns this worker's from the answer). */
static int greet(int fd) {
  unsigned char head[20];
  char version[CJ_WORKER_MAX_VERSION + 1];
  uint64_t len;
  cj_buf b = {0};
  int rc, same;
  if (read_all(fd, head, sizeof head) != 0 || memcmp(head, CJ_WORKER_HELLO, 4) != 0) return 1;
  len = le(head + 12, 8);
  if (len > CJ_WORKER_MAX_VERSION || read_all(fd, version, (size_t)len) != 0) return 1;
  version[len] = '\0';
  same = le(head + 4, 8) == CJ_WORKER_PROTOCOL && strcmp(version, cj_worker_version()) == 0;
  cj_worker_greeting(&b);
  rc = b.oom ? -1 : cj_worker_send(fd, b.data, b.len);
  cj_buf_free(&b);
  return rc == 0 && same ? 0 : 1;
}

int cj_worker_serve(int fd) {
  unsigned char head[20];
  if (greet(fd) != 0) return 1;
  for (;;) {
    if (read_all(fd, head, 1) != 0) return 0;  /* the caller closed: done */
    if (head[0] == CJ_WORKER_CANCEL) continue; /* asked to stop a compile that had ended */
    if (read_all(fd, head + 1, sizeof head - 1) != 0 || serve_one(fd, head) != 0) return 1;
  }
}
