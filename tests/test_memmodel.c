/* test_memmodel - a model-based test of memory and contexts: random sequences of steps
 * (arrays made and destroyed in every size class: small exact-size blocks of at most
 * 64 KiB, kept blocks up to 1 MiB, the pool above; views; writes, reads and copies;
 * kernels and In/Out launches; streams made, destroyed and arrays moved between them;
 * other threads; device switches; primary-context resets; a device fault;
 * cujit_mem_pool_trim; fork), each sequence made from its seed, checked after every step
 * against a model of who owns which bytes:
 * - no two live arrays, other than views of one block, share a byte (cujit_array_data and
 *   cujit_array_nbytes);
 * - every live array holds what was last written to it (read back: on the checking fake
 *   driver from its host-backed memory without synchronising, on a GPU through cujit);
 * - the checking fake driver (tests/fakedriver) records no violation; no call fails but
 *   where the step expects it, nothing crashes.
 * A device fault (an illegal address) ends its sequence. Just before it, an array of each
 * size class is made (and, with two devices, one of each on the other device too); after
 * it, what cujit promises then is checked (the fault reported as CUJIT_ERROR_LAUNCH_FAILED
 * with its message, every later call that needs the device failing so with a message,
 * arrays and the streams of a device that can be made current destroyed without a crash, a
 * hang or a second free), but some arrays made before it are kept, and the program then
 * resets the device's primary context. A fault ends CUDA for the whole process: the reset
 * returns CUDA_SUCCESS, but the retain, cuCtxSetCurrent and every call that does work
 * return CUDA_ERROR_ILLEGAL_ADDRESS for the rest of the process (as on an H200 with driver
 * 580; the checking fake driver models it so). After the reset the program tries what it
 * might: retains the primary context and makes it current, makes arrays of 1 KiB and 4 MiB,
 * reads, writes and reads them again, compiles a kernel and launches it and one loaded
 * before the fault with In/Out buffers, calls cujit_synchronize, destroys the kept arrays
 * and makes arrays of their sizes. Each call may fail, with a status and a message; what
 * one that succeeds gives is checked (on a GPU, the launches' results). What fails the
 * sequence is a crash, a hang, a failure without a message, two arrays made after the reset
 * sharing a byte, a read giving other bytes than were last written, and (on the checking
 * fake driver) anything of the old context freed, used or handed out. Each sequence with a
 * fault runs in a process of its own, after the batch of the others.
 * A failing sequence is replayed alone in a new process, shrunk to the fewest steps that
 * still fail (each try a new process too, so that a crash is a failure like any other),
 * and printed as C. Every failure that a driver call is behind names its CUresult.
 *
 * CPU mode (CUJIT_LIBCUDA naming the checking fake driver): in CI. GPU mode (a real driver): the
 * same sequences; kernels run, so their results are checked too; run under compute-sanitizer with
 * --no-fault (a fault is an error it reports; the sequences then skip their fault step and run on
 * past it, all in the batch). With no driver, or a real one with no device, the group is skipped,
 * unless --require-gpu is given: then a run that could check nothing fails.
 *
 * The runs themselves are child processes (--batch, --alone), so that a crash is caught,
 * replayed and shrunk too.
 *
 * Usage: test_memmodel [--sequences N] [--first SEED] [--no-fault] [--require-gpu]
 *        test_memmodel --replay SEED [--keep I,J,...] [--after FIRST]
 *          (one sequence, its steps I, J, ...; after sequences FIRST to SEED - 1 that have
 *          no fault, in full)
 * Exit: 0 passed, 1 failed, 77 skipped. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "cujit_array.h"
#include "fakedriver/checkdriver.h"

enum { MAX_ARR = 24, MAX_STREAMS = 4, MAX_STEPS = 48, LOG_SIZE = 1 << 16 };
/* Seconds one sequence may take in a process of its own (--alone, --replay): longer is a
 * hang. One takes well under a second on the checking fake driver, and a few seconds at
 * most on a GPU (a new context for each reset). */
#define ALONE_LIMIT_S 120

typedef enum kind {
  K_NEW,
  K_NEW_LIKE,
  K_VIEW,
  K_DESTROY,
  K_WRITE,
  K_READ,
  K_COPY,
  K_KERNEL,
  K_INOUT,
  K_MOVE,
  K_STREAM_NEW,
  K_STREAM_DESTROY,
  K_THREAD,
  K_DEVICE,
  K_RESET,
  K_FAULT,
  K_TRIM,
  K_FORK,
  K_SYNC,
  N_KINDS
} kind;

/* How often each kind is drawn (of 100). */
static const int kWeight[N_KINDS] = {16, 6, 6, 13, 9, 5, 5, 5, 6, 5, 3, 2, 3, 3, 3, 2, 1, 1, 1};

typedef struct step {
  int kind;
  uint64_t r[3]; /* resolved against the state when the step runs */
} step;

typedef struct marr {
  cujit_array *h; /* NULL: a free slot */
  int group;      /* the block: views share their base's */
  size_t off, n;  /* bytes of the block this array covers */
  int stream;     /* index into streams, -1 for the legacy default stream */
} marr;

typedef struct mgroup {
  unsigned char *bytes, *known; /* what was last written, and which bytes are known */
  size_t n;
  int dev, refs, dead; /* dead: its context was reset */
  unsigned touched;    /* the streams whose work used it (bit k + 1 for stream k, 0: NULL) */
} mgroup;

/* ---- the run ---- */

static int gpu_mode, no_fault, ndev, require_gpu;
/* Reads arrays back through cujit (on a GPU; on the fake with --read-through-cujit, which
 * tries that path without a device) rather than from the fake's memory. */
static int via_cujit;
static checkdriver_api cd;
static cujit_module *mod;
static cujit_function *k_inc, *k_fault;
static marr arr[MAX_ARR];
static mgroup grp[MAX_ARR];
static CUstream streams[MAX_STREAMS];
static int stream_dev[MAX_STREAMS];
static int cur_dev;
static char failure[4096]; /* the first failure of the sequence */
static char c_log[LOG_SIZE];
static size_t c_len;
static unsigned long long n_checks_bytes, n_checks_sharing, n_steps_run;
static unsigned long long n_faults, n_checks_fault; /* faults, and checks after them */
static int fault_dev = -1;                          /* the device of the sequence's fault */
static CUresult reset_after_fault = CUDA_SUCCESS;   /* what the reset after it returned */

static const char kSource[] =
    "extern \"C\" __global__ void inc(const unsigned char *in, unsigned char *out, long n) {\n"
    "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = (unsigned char)(in[i] + 1);\n"
    "}\n"
    "extern \"C\" __global__ void checkdriver_fault_now(int *p) {\n"
    "  *(volatile int *)(unsigned long)16 = *p;\n"
    "}\n";

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void fail_with(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail_with(const char *fmt, ...) {
  va_list ap;
  if (failure[0]) return;
  va_start(ap, fmt);
  vsnprintf(failure, sizeof failure, fmt, ap);
  va_end(ap);
}

static int log_now; /* replays print each line as it comes (a crash ends the program) */

static void logc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logc(const char *fmt, ...) {
  va_list ap;
  if (log_now) {
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
    return;
  }
  if (c_len >= LOG_SIZE - 256) return;
  va_start(ap, fmt);
  c_len += (size_t)vsnprintf(c_log + c_len, LOG_SIZE - c_len, fmt, ap);
  va_end(ap);
  if (c_len > LOG_SIZE - 1) c_len = LOG_SIZE - 1;
}

/* A cujit call that must succeed. */
#define OK(call, what)                                                     \
  do {                                                                     \
    cujit_status st_ = (call);                                             \
    if (st_ != CUJIT_OK) {                                                 \
      fail_with("%s failed: %s: %s", what, cujit_status_name(st_), why()); \
      return;                                                              \
    }                                                                      \
  } while (0)

/* ---- sizes and bytes ---- */

/* A size of class c: small exact-size blocks (<= 64 KiB), kept blocks (<= 1 MiB), the pool. */
static size_t size_of(uint64_t r) {
  static const size_t sizes[3][4] = {{1, 100, 1024, 65536},
                                     {65537, 100000, 262144, 1 << 20},
                                     {(1 << 20) + 1, 3 << 20, 4 << 20, 4 << 20}};
  int c = (int)(r % 10);
  return sizes[c < 6 ? 0 : c < 9 ? 1 : 2][(r >> 8) % 4];
}

static void pattern(unsigned char *p, size_t n, uint64_t seed) {
  uint64_t s = seed;
  size_t i;
  for (i = 0; i < n; i += 8) {
    uint64_t v = mix(&s);
    memcpy(p + i, &v, n - i < 8 ? n - i : 8);
  }
}

/* ---- driver access the test makes as a program would ---- */

static void *driver_symbol(const char *name) {
  const char *path = getenv("CUJIT_LIBCUDA");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *f = h ? dlsym(h, name) : NULL;
  if (h) dlclose(h);
  return f;
}

typedef CUresult (*error_name_fn)(CUresult, const char **);

/* A CUresult's name, as the driver spells it (its number when the driver cannot say). */
static const char *cu_name(CUresult r) {
  static _Thread_local char buf[48];
  error_name_fn f = (error_name_fn)driver_symbol("cuGetErrorName");
  const char *name = NULL;
  if (!f || f(r, &name) != CUDA_SUCCESS || !name) {
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
  }
  return name;
}

/* The calling thread's last failure, as a failure message tells it: cujit's detail, and
 * the CUresult behind it named when a driver call failed and the detail does not name it. */
static const char *why(void) {
  static _Thread_local char buf[2048];
  CUresult r = cujit_last_cu_result();
  const char *detail = cujit_last_error(), *name = r != CUDA_SUCCESS ? cu_name(r) : NULL;
  if (!name || strstr(detail, name)) return detail;
  snprintf(buf, sizeof buf, "%s [the driver returned %s]", detail, name);
  return buf;
}

/* ---- the model ---- */

/* The r-th live array (round the slots), -1 when none; with `usable`, only arrays whose
 * context lives; with dev >= 0, only that device's. */
static int pick(uint64_t r, int usable, int dev) {
  int i, k, n = 0;
  for (i = 0; i < MAX_ARR; i++)
    n += arr[i].h && (!usable || !grp[arr[i].group].dead) &&
         (dev < 0 || grp[arr[i].group].dev == dev);
  if (!n) return -1;
  k = (int)(r % (uint64_t)n);
  for (i = 0; i < MAX_ARR; i++)
    if (arr[i].h && (!usable || !grp[arr[i].group].dead) &&
        (dev < 0 || grp[arr[i].group].dev == dev) && k-- == 0)
      return i;
  return -1;
}

static int free_slot(void) {
  int i;
  for (i = 0; i < MAX_ARR; i++)
    if (!arr[i].h) return i;
  return -1;
}

static int free_group(void) {
  int i;
  for (i = 0; i < MAX_ARR; i++)
    if (!grp[i].refs) return i;
  return -1;
}

static CUstream stream_h(int k) { return k < 0 ? NULL : streams[k]; }

/* Stream k's bit in a group's `touched`. */
static unsigned bit(int k) { return 1u << (k + 1); }

/* How the printed program names stream k. */
static const char *sname(int k) {
  static char names[4][8];
  static int next;
  char *n = names[next++ % 4];
  if (k < 0) return "NULL";
  snprintf(n, 8, "s%d", k);
  return n;
}

static void to_dev(int d) {
  if (cur_dev == d) return;
  logc("  cujit_device_set_current(%d);\n", d);
  if (cujit_device_set_current(d) != CUJIT_OK)
    fail_with("cujit_device_set_current(%d): %s", d, why());
  cur_dev = d;
}

static void group_release(int g) {
  if (--grp[g].refs > 0) return;
  free(grp[g].bytes);
  free(grp[g].known);
  memset(&grp[g], 0, sizeof grp[g]);
}

/* Records that host bytes were written to array i. */
static void wrote(int i, const unsigned char *host) {
  mgroup *g = &grp[arr[i].group];
  memcpy(g->bytes + arr[i].off, host, arr[i].n);
  memset(g->known + arr[i].off, 1, arr[i].n);
}

/* Array i's bytes, from the fake's memory (CPU: no synchronisation) or through cujit (GPU):
 * 0, or 1 when they cannot be read now (CPU: unfinished work writes them). */
static int fetch(int i, size_t off, size_t n, unsigned char *out) {
  if (!via_cujit) {
    int r = cd.peek(cujit_array_data(arr[i].h) + off, out, n);
    if (r < 0)
      fail_with("array a%d: its memory (0x%llx, %zu bytes) is not live device memory", i,
                (unsigned long long)cujit_array_data(arr[i].h), arr[i].n);
    return r != 0;
  }
  if (cujit_array_read_range(arr[i].h, (int64_t)off, (int64_t)n, out) != CUJIT_OK) {
    fail_with("reading a%d: %s", i, why());
    return 1;
  }
  return 0;
}

static void sync_others(int gi, int keep, int quiet);

/* Compares array i's known bytes with what it holds: all of a small one, stripes of a
 * large one. */
static void check_contents(int i) {
  const mgroup *g = &grp[arr[i].group];
  unsigned char buf[4096];
  /* through cujit on a GPU, each read a synchronised copy: fewer stripes there */
  size_t n = arr[i].n, stripe = n <= sizeof buf ? n : 256,
         stride = n <= sizeof buf ? n : n / (via_cujit ? 3 : 15), at, k;
  if (!n) return;
  /* on a GPU the read is a copy on the array's stream: what others queue on its block
   * finishes first (the fake reads without synchronising, and says what is unfinished) */
  if (via_cujit) sync_others(arr[i].group, arr[i].stream, 1);
  if (via_cujit && g->dev != cur_dev && cujit_device_set_current(g->dev) != CUJIT_OK) {
    fail_with("cujit_device_set_current(%d): %s", g->dev, why());
    return;
  }
  for (at = 0; at < n && !failure[0]; at += stride) {
    size_t len = at + stripe > n ? n - at : stripe;
    if (fetch(i, at, len, buf)) return;
    for (k = 0; k < len; k++) {
      size_t b = arr[i].off + at + k;
      if (g->known[b] && buf[k] != g->bytes[b]) {
        fail_with("array a%d (%zu bytes at 0x%llx) holds 0x%02x at byte %zu, but 0x%02x was "
                  "last written there",
                  i, n, (unsigned long long)cujit_array_data(arr[i].h), buf[k], at + k,
                  g->bytes[b]);
        return;
      }
    }
    n_checks_bytes++;
    if (stride == n) break;
  }
  /* the step's device again: checking changes nothing of the sequence */
  if (via_cujit && g->dev != cur_dev && cujit_device_set_current(cur_dev) != CUJIT_OK)
    fail_with("cujit_device_set_current(%d): %s", cur_dev, why());
}

/* The invariants, after every step. */
static void check_all(void) {
  int i, j;
  for (i = 0; i < MAX_ARR && !failure[0]; i++) {
    CUdeviceptr a, b;
    if (!arr[i].h || grp[arr[i].group].dead || !arr[i].n) continue;
    a = cujit_array_data(arr[i].h);
    if (cujit_array_nbytes(arr[i].h) != arr[i].n) {
      fail_with("array a%d has %zu bytes, made with %zu", i, cujit_array_nbytes(arr[i].h),
                arr[i].n);
      break;
    }
    for (j = i + 1; j < MAX_ARR; j++) {
      if (!arr[j].h || grp[arr[j].group].dead || !arr[j].n || arr[j].group == arr[i].group)
        continue;
      b = cujit_array_data(arr[j].h);
      if (grp[arr[i].group].dev == grp[arr[j].group].dev && a < b + arr[j].n && b < a + arr[i].n)
        fail_with("live arrays a%d (0x%llx, %zu bytes) and a%d (0x%llx, %zu bytes) share "
                  "device memory",
                  i, (unsigned long long)a, arr[i].n, j, (unsigned long long)b, arr[j].n);
      n_checks_sharing++;
    }
    check_contents(i);
  }
  if (!gpu_mode && !failure[0] && cd.violations()) {
    char text[2048];
    cd.report(text, sizeof text);
    fail_with("the checking driver recorded %lu violation(s):\n%s", cd.violations(), text);
  }
}

/* ---- steps ---- */

/* A new array of n bytes of a pattern of `seed`, on the current device and the legacy
 * default stream: its slot, or -1 (the model is full, or it failed). */
static int make_array(size_t n, uint64_t seed) {
  int i = free_slot(), g = free_group();
  unsigned char *host;
  int64_t shape;
  if (i < 0 || g < 0) return -1;
  host = malloc(n);
  pattern(host, n, seed);
  shape = (int64_t)n;
  logc("  pattern(host, %zu, %lluu);\n  cujit_array_from_host(&a%d, CUJIT_TYPE_U8, 1, "
       "(int64_t[]){%zu}, host); /* device %d */\n",
       n, (unsigned long long)seed, i, n, cur_dev);
  if (cujit_array_from_host(&arr[i].h, CUJIT_TYPE_U8, 1, &shape, host) != CUJIT_OK) {
    fail_with("cujit_array_from_host (%zu bytes): %s", n, why());
    arr[i].h = NULL;
    free(host);
    return -1;
  }
  grp[g].bytes = malloc(n);
  grp[g].known = calloc(n, 1);
  grp[g].n = n;
  grp[g].dev = cur_dev;
  grp[g].refs = 1;
  arr[i].group = g;
  arr[i].off = 0;
  arr[i].n = n;
  arr[i].stream = -1;
  grp[g].touched = bit(-1);
  wrote(i, host);
  free(host);
  return i;
}

static void new_array(const step *s) { make_array(size_of(s->r[0]), s->r[1]); }

static void new_like(const step *s) {
  int like = pick(s->r[0], 1, -1), i = free_slot(), g = free_group();
  if (like < 0 || i < 0 || g < 0) return;
  to_dev(grp[arr[like].group].dev);
  logc("  cujit_array_empty_like(&a%d, a%d);\n", i, like);
  OK(cujit_array_empty_like(&arr[i].h, arr[like].h), "cujit_array_empty_like");
  grp[g].bytes = malloc(arr[like].n);
  grp[g].known = calloc(arr[like].n ? arr[like].n : 1, 1);
  grp[g].n = arr[like].n;
  grp[g].dev = cur_dev;
  grp[g].refs = 1;
  arr[i].group = g;
  arr[i].off = 0;
  arr[i].n = arr[like].n;
  arr[i].stream = arr[like].stream;
  grp[g].touched = bit(arr[i].stream);
}

static void view(const step *s) {
  int a = pick(s->r[0], 1, -1), i = free_slot();
  int64_t start, stop;
  if (a < 0 || i < 0 || !arr[a].n) return;
  start = (int64_t)(s->r[1] % arr[a].n);
  stop = start + 1 + (int64_t)(s->r[2] % (arr[a].n - (size_t)start));
  to_dev(grp[arr[a].group].dev);
  logc("  cujit_array_view(a%d, %lld, %lld, &a%d);\n", a, (long long)start, (long long)stop, i);
  OK(cujit_array_view(arr[a].h, start, stop, &arr[i].h), "cujit_array_view");
  arr[i].group = arr[a].group;
  arr[i].off = arr[a].off + (size_t)start;
  arr[i].n = (size_t)(stop - start);
  arr[i].stream = arr[a].stream;
  grp[arr[i].group].refs++;
}

/* Before more work on block gi is ordered on stream `keep`: the work other streams queued
 * on it finishes, as the docs ask of a program (a step's own, logged; with `quiet`, a
 * check's, on the block's device without changing the current one). */
static void sync_others(int gi, int keep, int quiet) {
  mgroup *g = &grp[gi];
  int k, switched = 0;
  if (g->dead) return;
  for (k = -1; k < MAX_STREAMS; k++) {
    if (!(g->touched & bit(k)) || k == keep) continue;
    if (k >= 0 && (!streams[k] || stream_dev[k] != g->dev)) continue; /* gone, and synced then */
    if (!quiet) {
      to_dev(g->dev);
      logc("  cujit_stream_synchronize(%s);\n", sname(k));
    } else if (g->dev != cur_dev && !switched) {
      switched = cujit_device_set_current(g->dev) == CUJIT_OK;
    }
    if (cujit_stream_synchronize(stream_h(k)) != CUJIT_OK)
      fail_with("cujit_stream_synchronize: %s", why());
  }
  if (switched && cujit_device_set_current(cur_dev) != CUJIT_OK)
    fail_with("cujit_device_set_current(%d): %s", cur_dev, why());
  g->touched = bit(keep);
}

/* Before array a's memory is ordered on its own stream alone (it is destroyed, or moved). */
static void finish_others(int a) { sync_others(arr[a].group, arr[a].stream, 0); }

static void destroy(int a) {
  int g = arr[a].group;
  if (grp[g].refs == 1) finish_others(a);
  if (!grp[g].dead) to_dev(grp[g].dev);
  logc("  cujit_array_destroy(a%d);%s\n", a, grp[g].dead ? " /* made before the reset */" : "");
  cujit_array_destroy(arr[a].h);
  arr[a].h = NULL;
  group_release(g);
}

static void write_step(const step *s) {
  int a = pick(s->r[0], 1, -1);
  unsigned char *host;
  if (a < 0) return;
  host = malloc(arr[a].n + 1);
  pattern(host, arr[a].n, s->r[1]);
  to_dev(grp[arr[a].group].dev);
  finish_others(a);
  logc("  pattern(host, %zu, %lluu);\n  cujit_array_write(a%d, host, %zu);\n", arr[a].n,
       (unsigned long long)s->r[1], a, arr[a].n);
  if (cujit_array_write(arr[a].h, host, arr[a].n) != CUJIT_OK)
    fail_with("cujit_array_write(a%d): %s", a, why());
  else
    wrote(a, host);
  free(host);
}

/* A full read through cujit (it synchronises the array's stream). */
static void read_step(const step *s) {
  int a = pick(s->r[0], 1, -1);
  const mgroup *g;
  unsigned char *host;
  size_t k;
  if (a < 0) return;
  g = &grp[arr[a].group];
  host = malloc(arr[a].n + 1);
  finish_others(a);
  to_dev(g->dev);
  logc("  cujit_array_read(a%d, host, %zu);\n", a, arr[a].n);
  if (cujit_array_read(arr[a].h, host, arr[a].n) != CUJIT_OK) {
    fail_with("cujit_array_read(a%d): %s", a, why());
  } else {
    for (k = 0; k < arr[a].n; k++)
      if (g->known[arr[a].off + k] && host[k] != g->bytes[arr[a].off + k]) {
        fail_with("cujit_array_read(a%d) gave 0x%02x at byte %zu, but 0x%02x was last written", a,
                  host[k], k, g->bytes[arr[a].off + k]);
        break;
      }
    n_checks_bytes++;
  }
  free(host);
}

static void copy_step(const step *s) {
  int a = pick(s->r[0], 1, -1), b = pick(s->r[1], 1, -1);
  mgroup *ga, *gb;
  if (a < 0 || b < 0 || arr[a].group == arr[b].group || arr[a].n != arr[b].n) return;
  ga = &grp[arr[a].group];
  gb = &grp[arr[b].group];
  if (ga->dev != gb->dev) return;
  to_dev(ga->dev);
  sync_others(arr[a].group, arr[a].stream, 0); /* the copy is on a's stream */
  sync_others(arr[b].group, arr[a].stream, 0);
  logc("  cujit_array_copy(a%d, &a%d);\n", a, b);
  OK(cujit_array_copy(arr[a].h, &arr[b].h), "cujit_array_copy");
  memcpy(gb->bytes + arr[b].off, ga->bytes + arr[a].off, arr[a].n);
  memcpy(gb->known + arr[b].off, ga->known + arr[a].off, arr[a].n);
}

/* A kernel reading a and writing b (b = a + 1, bytewise), on a's stream. */
static void kernel_step(const step *s) {
  int a = pick(s->r[0], 1, -1), b = pick(s->r[1], 1, -1);
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  mgroup *ga, *gb;
  size_t k;
  long n;
  if (a < 0 || b < 0 || arr[a].group == arr[b].group || arr[a].n != arr[b].n || !arr[a].n) return;
  ga = &grp[arr[a].group];
  gb = &grp[arr[b].group];
  if (ga->dev != gb->dev) return;
  to_dev(ga->dev);
  sync_others(arr[a].group, arr[a].stream, 0);
  sync_others(arr[b].group, arr[a].stream, 0);
  o.stream = stream_h(arr[a].stream);
  n = (long)arr[a].n;
  logc("  o.stream = %s;\n  CUJIT_LAUNCH_EX(inc, CUJIT_DIM3(%ld), CUJIT_DIM3(256), &o, "
       "cujit_array_arg(a%d), cujit_array_arg(a%d), cujit_i64(%ld));\n",
       sname(arr[a].stream), (n + 255) / 256, a, b, n);
  OK(CUJIT_LAUNCH_EX(k_inc, CUJIT_DIM3((unsigned)((n + 255) / 256)), CUJIT_DIM3(256), &o,
                     cujit_array_arg(arr[a].h), cujit_array_arg(arr[b].h), cujit_i64(n)),
     "launching inc");
  for (k = 0; k < arr[a].n; k++) {
    gb->bytes[arr[b].off + k] = (unsigned char)(ga->bytes[arr[a].off + k] + 1);
    /* the fake runs no kernel: what it writes is not known there */
    gb->known[arr[b].off + k] = gpu_mode && ga->known[arr[a].off + k];
  }
}

/* In and Out buffers of host memory, on a stream of the current device or the default. */
static void inout_step(const step *s) {
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  size_t n = size_of(s->r[0]), k;
  int sk = (int)(s->r[1] % (MAX_STREAMS + 1)) - 1;
  unsigned char *in = malloc(n), *out = malloc(n);
  if (sk >= 0 && (!streams[sk] || stream_dev[sk] != cur_dev)) sk = -1;
  o.stream = stream_h(sk);
  pattern(in, n, s->r[2]);
  memset(out, 0, n);
  logc("  o.stream = %s;\n  CUJIT_LAUNCH_EX(inc, CUJIT_DIM3(%zu), CUJIT_DIM3(256), &o, "
       "cujit_in(in, %zu), cujit_out(out, %zu), cujit_i64(%zu));\n",
       sname(sk), (n + 255) / 256, n, n, n);
  if (CUJIT_LAUNCH_EX(k_inc, CUJIT_DIM3((unsigned)((n + 255) / 256)), CUJIT_DIM3(256), &o,
                      cujit_in(in, n), cujit_out(out, n), cujit_i64((int64_t)n)) != CUJIT_OK) {
    fail_with("an In/Out launch of %zu bytes: %s", n, why());
  } else if (gpu_mode) {
    for (k = 0; k < n; k++)
      if (out[k] != (unsigned char)(in[k] + 1)) {
        fail_with("an In/Out launch of %zu bytes gave 0x%02x at byte %zu for 0x%02x", n, out[k], k,
                  in[k]);
        break;
      }
    n_checks_bytes++;
  }
  free(in);
  free(out);
}

static void move_step(const step *s) {
  int a = pick(s->r[0], 1, -1), sk = (int)(s->r[1] % (MAX_STREAMS + 1)) - 1;
  if (a < 0) return;
  if (sk >= 0 && (!streams[sk] || stream_dev[sk] != grp[arr[a].group].dev)) sk = -1;
  finish_others(a);
  to_dev(grp[arr[a].group].dev);
  if (arr[a].stream != sk) { /* its work on the old stream finishes first */
    logc("  cujit_stream_synchronize(%s);\n", sname(arr[a].stream));
    OK(cujit_stream_synchronize(stream_h(arr[a].stream)), "cujit_stream_synchronize");
  }
  logc("  cujit_array_set_stream(a%d, %s);\n", a, sname(sk));
  OK(cujit_array_set_stream(arr[a].h, stream_h(sk)), "cujit_array_set_stream");
  arr[a].stream = sk;
  grp[arr[a].group].touched |= bit(sk);
}

static void stream_new(const step *s) {
  int k = (int)(s->r[0] % MAX_STREAMS);
  if (streams[k]) return;
  logc("  cujit_stream_create(&s%d); /* device %d */\n", k, cur_dev);
  OK(cujit_stream_create(&streams[k]), "cujit_stream_create");
  stream_dev[k] = cur_dev;
}

/* The arrays on it move to the default stream (after it drains), then it is destroyed. */
static void stream_destroy(const step *s) {
  int k = (int)(s->r[0] % MAX_STREAMS), i;
  if (!streams[k]) return;
  to_dev(stream_dev[k]);
  logc("  cujit_stream_synchronize(s%d);\n", k);
  OK(cujit_stream_synchronize(streams[k]), "cujit_stream_synchronize");
  for (i = 0; i < MAX_ARR; i++)
    if (arr[i].h && arr[i].stream == k) {
      logc("  cujit_array_set_stream(a%d, NULL);\n", i);
      OK(cujit_array_set_stream(arr[i].h, NULL), "cujit_array_set_stream");
      arr[i].stream = -1;
    }
  logc("  cujit_stream_destroy(s%d);\n", k);
  OK(cujit_stream_destroy(streams[k]), "cujit_stream_destroy");
  streams[k] = NULL;
}

/* Another thread makes, writes, reads and destroys an array of its own, launches with
 * In/Out buffers, and destroys one of the model's arrays; joined before the next step. */
typedef struct job {
  int dev, victim;
  size_t n;
  uint64_t seed;
  cujit_array *victim_h;
  char why[512];
} job;

static void *thread_main(void *arg) {
  job *j = arg;
  cujit_array *a = NULL;
  unsigned char *in = malloc(j->n), *back = malloc(j->n);
  int64_t shape = (int64_t)j->n;
  pattern(in, j->n, j->seed);
  if (cujit_device_set_current(j->dev) != CUJIT_OK ||
      cujit_array_from_host(&a, CUJIT_TYPE_U8, 1, &shape, in) != CUJIT_OK ||
      cujit_array_read(a, back, j->n) != CUJIT_OK)
    snprintf(j->why, sizeof j->why, "in a thread: %s", why());
  else if (memcmp(in, back, j->n) != 0)
    snprintf(j->why, sizeof j->why, "in a thread: an array of %zu bytes read back other bytes",
             j->n);
  else if (CUJIT_LAUNCH(k_inc, CUJIT_DIM3((unsigned)((j->n + 255) / 256)), CUJIT_DIM3(256),
                        cujit_in(in, j->n), cujit_out(back, j->n),
                        cujit_i64((int64_t)j->n)) != CUJIT_OK)
    snprintf(j->why, sizeof j->why, "an In/Out launch in a thread: %s", why());
  cujit_array_destroy(a);
  if (j->victim_h) cujit_array_destroy(j->victim_h);
  free(in);
  free(back);
  return NULL;
}

static void thread_step(const step *s) {
  pthread_t t;
  job j;
  memset(&j, 0, sizeof j);
  j.dev = cur_dev;
  j.n = size_of(s->r[0]);
  j.seed = s->r[1];
  j.victim = pick(s->r[2], 1, cur_dev);
  if (j.victim >= 0) j.victim_h = arr[j.victim].h;
  logc("  /* a thread: cujit_device_set_current(%d); an array of %zu bytes made, read, "
       "destroyed; an In/Out launch; cujit_array_destroy(a%d) */\n",
       j.dev, j.n, j.victim);
  if (pthread_create(&t, NULL, thread_main, &j) != 0) {
    fail_with("pthread_create failed");
    return;
  }
  pthread_join(t, NULL);
  if (j.why[0]) fail_with("%s", j.why);
  if (j.victim >= 0) {
    int g = arr[j.victim].group;
    arr[j.victim].h = NULL;
    group_release(g);
  }
}

static void device_step(const step *s) { to_dev((int)(s->r[0] % (uint64_t)ndev)); }

typedef CUresult (*reset_fn)(CUdevice);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_fn)(CUcontext);

/* The current device's primary context reset by the program, as a program linked with
 * libcuda does it (its symbols), then retained and made current again (as the runtime
 * does on its next call): every array and stream of the device made before is dead. */
static void reset_device(void) {
  reset_fn reset = (reset_fn)driver_symbol("cuDevicePrimaryCtxReset_v2");
  retain_fn retain = (retain_fn)driver_symbol("cuDevicePrimaryCtxRetain");
  set_fn set = (set_fn)driver_symbol("cuCtxSetCurrent");
  CUcontext c = NULL;
  CUresult r;
  const char *call = "cuDevicePrimaryCtxReset";
  int i;
  if (!reset || !retain || !set) {
    fail_with("the driver's cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxRetain or "
              "cuCtxSetCurrent cannot be found with dlsym");
    return;
  }
  logc("  cuDevicePrimaryCtxReset(%d); cuDevicePrimaryCtxRetain(&c, %d); cuCtxSetCurrent(c);\n",
       cur_dev, cur_dev);
  if ((r = reset(cur_dev)) == CUDA_SUCCESS && (call = "cuDevicePrimaryCtxRetain") &&
      (r = retain(&c, cur_dev)) == CUDA_SUCCESS && (call = "cuCtxSetCurrent"))
    r = set(c);
  if (r != CUDA_SUCCESS) {
    fail_with("resetting device %d's primary context failed: %s returned %s", cur_dev, call,
              cu_name(r));
    return;
  }
  for (i = 0; i < MAX_ARR; i++)
    if (grp[i].refs && grp[i].dev == cur_dev) grp[i].dead = 1;
  for (i = 0; i < MAX_STREAMS; i++)
    if (streams[i] && stream_dev[i] == cur_dev) streams[i] = NULL; /* died with it */
}

/* ---- a device fault, and what cujit promises after it ---- */

/* A failure after the fault that carries a driver error, whatever the error (the fault's
 * own, or another that the lost context brings: a refused cuCtxSetCurrent, a destroyed
 * context), says that the process must end. */
static void says_to_end(cujit_status st, const char *what) {
  CUresult r = cujit_last_cu_result();
  if (st == CUJIT_OK || r == CUDA_SUCCESS || failure[0]) return;
  if (!strstr(cujit_last_error(), "no longer usable") ||
      !strstr(cujit_last_error(), "end the process"))
    fail_with("%s after a device fault failed with %s (driver: %s), and its message does not "
              "say that the context is no longer usable and to end the process: \"%s\"",
              what, cujit_status_name(st), cu_name(r), cujit_last_error());
}

/* A call made after the fault that needs device `dev`: on the fault's device it fails
 * with CUJIT_ERROR_LAUNCH_FAILED and a message naming the driver's error (include/cujit.h:
 * "later calls on any device then return CUJIT_ERROR_LAUNCH_FAILED saying so"); on
 * another device it may succeed, where the driver keeps that device going. 1 when it
 * succeeded. */
static int after_fault(cujit_status st, const char *what, int dev) {
  CUresult r = cujit_last_cu_result();
  if (st == CUJIT_OK) {
    if (dev == fault_dev) fail_with("%s succeeded after a device fault on its device", what);
    return 1;
  }
  n_checks_fault++;
  if (st != CUJIT_ERROR_LAUNCH_FAILED)
    fail_with("%s after a device fault gave %s, not CUJIT_ERROR_LAUNCH_FAILED: %s", what,
              cujit_status_name(st), why());
  else if (r == CUDA_SUCCESS || !strstr(cujit_last_error(), cu_name(r)))
    fail_with("%s after a device fault gave CUJIT_ERROR_LAUNCH_FAILED with a message that "
              "names no driver error (the driver's was %s): \"%s\"",
              what, r == CUDA_SUCCESS ? "not kept" : cu_name(r), cujit_last_error());
  says_to_end(st, what);
  return 0;
}

/* A call after the fault that may succeed or fail (it need not reach the device), but
 * fails with a status and a message. */
static void after_fault_any(cujit_status st, const char *what) {
  if (st == CUJIT_OK) return;
  n_checks_fault++;
  if (!cujit_last_error()[0])
    fail_with("%s after a device fault gave %s with no message", what, cujit_status_name(st));
  says_to_end(st, what);
}

/* The device current after the fault: the fault's, until a switch succeeds. */
static int after_dev = -1;

/* Makes device d current after the fault (it needs the driver only for a device not used
 * before; the driver may refuse any switch then): 1, or 0 when that failed. */
static int after_fault_dev(int d) {
  char what[64];
  cujit_status st;
  snprintf(what, sizeof what, "cujit_device_set_current(%d)", d);
  logc("  %s;\n", what);
  after_fault_any(st = cujit_device_set_current(d), what);
  if (st == CUJIT_OK) after_dev = d;
  return st == CUJIT_OK;
}

/* Each live array read and written (its first bytes; what a read gives where it succeeds
 * is checked), new arrays of a small and a pool size, an In/Out launch, each stream
 * synchronised, the pool trimmed. */
static void after_fault_calls(void) {
  static const size_t sizes[2] = {1024, 3 << 20};
  unsigned char *host = malloc((size_t)8 << 20), back[64];
  char what[96];
  int i, k;
  for (i = 0; i < MAX_ARR && !failure[0]; i++) {
    int dev;
    size_t n = arr[i].n < sizeof back ? arr[i].n : sizeof back;
    if (!arr[i].h || grp[arr[i].group].dead || !arr[i].n) continue;
    if (!after_fault_dev(dev = grp[arr[i].group].dev)) continue;
    snprintf(what, sizeof what, "cujit_array_read_range(a%d, 0, %zu, host)", i, n);
    logc("  %s;\n", what);
    if (after_fault(cujit_array_read_range(arr[i].h, 0, (int64_t)n, back), what, dev))
      for (k = 0; k < (int)n; k++)
        if (grp[arr[i].group].known[arr[i].off + k] &&
            back[k] != grp[arr[i].group].bytes[arr[i].off + k])
          fail_with("%s after a device fault (device %d's) gave 0x%02x at byte %d, but 0x%02x "
                    "was last written",
                    what, fault_dev, back[k], k, grp[arr[i].group].bytes[arr[i].off + k]);
    snprintf(what, sizeof what, "cujit_array_write(a%d, host, %zu)", i, arr[i].n);
    logc("  %s;\n", what);
    memset(host, 0x5a, arr[i].n);
    if (after_fault(cujit_array_write(arr[i].h, host, arr[i].n), what, dev)) wrote(i, host);
  }
  for (k = 0; k < 2 && !failure[0] && after_fault_dev(fault_dev); k++) {
    cujit_array *a = NULL;
    int64_t shape = (int64_t)sizes[k];
    cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
    snprintf(what, sizeof what, "cujit_array_from_host (%zu bytes)", sizes[k]);
    logc("  cujit_array_from_host(&a, CUJIT_TYPE_U8, 1, (int64_t[]){%zu}, host);\n", sizes[k]);
    if (after_fault(cujit_array_from_host(&a, CUJIT_TYPE_U8, 1, &shape, host), what, fault_dev))
      cujit_array_destroy(a);
    snprintf(what, sizeof what, "an In/Out launch of %zu bytes", sizes[k]);
    logc("  CUJIT_LAUNCH_EX(inc, CUJIT_DIM3(%zu), CUJIT_DIM3(256), &o, cujit_in(host, %zu), "
         "cujit_out(host + %zu, %zu), cujit_i64(%zu));\n",
         (sizes[k] + 255) / 256, sizes[k], sizes[k], sizes[k], sizes[k]);
    after_fault(CUJIT_LAUNCH_EX(k_inc, CUJIT_DIM3((unsigned)((sizes[k] + 255) / 256)),
                                CUJIT_DIM3(256), &o, cujit_in(host, sizes[k]),
                                cujit_out(host + sizes[k], sizes[k]), cujit_i64((int64_t)sizes[k])),
                what, fault_dev);
  }
  for (k = 0; k < MAX_STREAMS && !failure[0]; k++) {
    if (!streams[k] || !after_fault_dev(stream_dev[k])) continue;
    snprintf(what, sizeof what, "cujit_stream_synchronize(s%d)", k);
    logc("  %s;\n", what);
    after_fault(cujit_stream_synchronize(streams[k]), what, stream_dev[k]);
  }
  if (!failure[0] && after_fault_dev(fault_dev)) {
    logc("  cujit_mem_pool_trim();\n");
    after_fault_any(cujit_mem_pool_trim(), "cujit_mem_pool_trim");
  }
  free(host);
}

/* ---- after the reset that follows a fault ---- */

/* What the program tries after the reset that follows a fault, in that process. The fault
 * ends CUDA for the process, so each may fail, but with a status and a message (what each
 * gave is printed too, in the run's last lines). What fails the sequence is a failure
 * without a message, a crash, a hang, two live arrays made after the reset sharing a byte,
 * a read that gives other bytes than were last written, and (on the fake) a violation:
 * memory of the old context freed, used or handed out. */
enum {
  P_RETAIN,     /* cuDevicePrimaryCtxRetain and cuCtxSetCurrent */
  P_ZEROS_1K,   /* cujit_array_zeros, 1 KiB (a small block) */
  P_ZEROS_4M,   /* cujit_array_zeros, 4 MiB (the pool) */
  P_WRITE_READ, /* each read, written, read again */
  P_COMPILE,    /* a kernel compiled now, launched with an Out buffer */
  P_OLD_KERNEL, /* a kernel loaded before the fault, launched with In/Out buffers */
  P_SYNC,       /* cujit_synchronize */
  P_OLD_ARRAYS, /* arrays made before the fault destroyed, arrays of their sizes made */
  N_PROBES
};
static const char *const kProbe[N_PROBES] =
    {"cuDevicePrimaryCtxRetain and cuCtxSetCurrent",
     "cujit_array_zeros (1 KiB)",
     "cujit_array_zeros (4 MiB)",
     "cujit_array_read, cujit_array_write and cujit_array_read of each",
     "a kernel compiled and launched",
     "a kernel loaded before the fault launched",
     "cujit_synchronize",
     "arrays made before the fault destroyed, new ones of their sizes made"};
static char probe[N_PROBES][128]; /* each one's outcome; "" where it was not tried */

/* Arrays made after the reset, and what was last written to each (known: its bytes hold). */
enum { MAX_FRESH = 8 };
static struct fresh {
  cujit_array *h;
  size_t n;
  unsigned char *bytes;
  int known;
} fresh[MAX_FRESH];

static const char kAfterReset[] =
    "extern \"C\" __global__ void after_reset_fill(unsigned char *p, long n, unsigned char v) {\n"
    "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) p[i] = v;\n"
    "}\n";

/* Records a cujit call's outcome for probe k (its first failure, where it makes several
 * calls): its status, with the driver's error behind a failure. A failure must come with a
 * message. 1 when it succeeded. */
static int probe_st(int k, cujit_status st, const char *what) {
  CUresult r = cujit_last_cu_result();
  n_checks_fault++;
  if (st != CUJIT_OK && !cujit_last_error()[0])
    fail_with("%s after the reset that followed a device fault gave %s (driver: %s) with no "
              "message",
              what, cujit_status_name(st), r != CUDA_SUCCESS ? cu_name(r) : "no error");
  says_to_end(st, what);
  if (probe[k][0] && strcmp(probe[k], "CUJIT_OK") != 0) return st == CUJIT_OK;
  if (st == CUJIT_OK)
    snprintf(probe[k], sizeof probe[k], "CUJIT_OK");
  else if (r != CUDA_SUCCESS)
    snprintf(probe[k], sizeof probe[k], "%s (%s)", cujit_status_name(st), cu_name(r));
  else
    snprintf(probe[k], sizeof probe[k], "%s", cujit_status_name(st));
  return st == CUJIT_OK;
}

/* Compares what a successful read gave with what was last written. */
static void read_matches(const char *what, const unsigned char *got, const unsigned char *want,
                         size_t n) {
  size_t k;
  n_checks_bytes++;
  for (k = 0; k < n; k++)
    if (got[k] != want[k]) {
      fail_with("%s after the reset that followed a device fault gave 0x%02x at byte %zu, "
                "but 0x%02x was last written there",
                what, got[k], k, want[k]);
      return;
    }
}

/* A new array of n bytes (zeros, or from host bytes of a pattern of `seed`) for probe k,
 * kept in `fresh`: 1 when it was made. */
static int fresh_make(int k, size_t n, int zeros, uint64_t seed) {
  int i;
  int64_t shape = (int64_t)n;
  char what[96];
  unsigned char *host;
  for (i = 0; i < MAX_FRESH && fresh[i].h; i++) {
  }
  if (i == MAX_FRESH) return 0;
  host = calloc(n, 1);
  if (!zeros) pattern(host, n, seed);
  snprintf(what, sizeof what, "%s (%zu bytes)",
           zeros ? "cujit_array_zeros" : "cujit_array_from_host", n);
  if (zeros)
    logc("  cujit_array_zeros(&f%d, CUJIT_TYPE_U8, 1, (int64_t[]){%zu});\n", i, n);
  else
    logc("  pattern(host, %zu, %lluu);\n  cujit_array_from_host(&f%d, CUJIT_TYPE_U8, 1, "
         "(int64_t[]){%zu}, host);\n",
         n, (unsigned long long)seed, i, n);
  if (!probe_st(k,
                zeros ? cujit_array_zeros(&fresh[i].h, CUJIT_TYPE_U8, 1, &shape)
                      : cujit_array_from_host(&fresh[i].h, CUJIT_TYPE_U8, 1, &shape, host),
                what)) {
    fresh[i].h = NULL;
    free(host);
    return 0;
  }
  if (!gpu_mode) /* the fake fails every allocation, memset and copy after a fault */
    fail_with("%s after the reset that followed a device fault succeeded on the checking fake "
              "driver, which refuses all work then: cujit handed out memory it kept",
              what);
  fresh[i].n = n;
  fresh[i].bytes = host;
  fresh[i].known = 1;
  return 1;
}

/* No two arrays made after the reset share a byte (all live in the new context). */
static void fresh_apart(void) {
  int i, j;
  for (i = 0; i < MAX_FRESH; i++)
    for (j = i + 1; j < MAX_FRESH && fresh[i].h; j++) {
      CUdeviceptr a, b;
      if (!fresh[j].h) continue;
      a = cujit_array_data(fresh[i].h);
      b = cujit_array_data(fresh[j].h);
      n_checks_sharing++;
      if (a < b + fresh[j].n && b < a + fresh[i].n)
        fail_with("arrays f%d (0x%llx, %zu bytes) and f%d (0x%llx, %zu bytes), both made after "
                  "the reset that followed a device fault, share device memory",
                  i, (unsigned long long)a, fresh[i].n, j, (unsigned long long)b, fresh[j].n);
    }
}

/* Each array made after the reset read (for probe k): what a read that succeeds gives is
 * what was last written. */
static void fresh_read(int k) {
  int i;
  char what[64];
  for (i = 0; i < MAX_FRESH && !failure[0]; i++) {
    unsigned char *back;
    if (!fresh[i].h) continue;
    back = malloc(fresh[i].n);
    snprintf(what, sizeof what, "cujit_array_read(f%d, host, %zu)", i, fresh[i].n);
    logc("  %s;\n", what);
    if (probe_st(k, cujit_array_read(fresh[i].h, back, fresh[i].n), what) && fresh[i].known)
      read_matches(what, back, fresh[i].bytes, fresh[i].n);
    free(back);
  }
}

/* Each array made after the reset written with a pattern (for probe k); one whose write
 * failed holds what it holds. */
static void fresh_write(int k, uint64_t seed) {
  int i;
  char what[64];
  for (i = 0; i < MAX_FRESH && !failure[0]; i++) {
    if (!fresh[i].h) continue;
    pattern(fresh[i].bytes, fresh[i].n, seed + (uint64_t)i);
    snprintf(what, sizeof what, "cujit_array_write(f%d, host, %zu)", i, fresh[i].n);
    logc("  pattern(host, %zu, %lluu);\n  %s;\n", fresh[i].n,
         (unsigned long long)(seed + (uint64_t)i), what);
    fresh[i].known = probe_st(k, cujit_array_write(fresh[i].h, fresh[i].bytes, fresh[i].n), what);
  }
}

/* A kernel compiled now, launched with an Out buffer; the kernel loaded before the fault
 * (inc), launched with In and Out buffers. What a launch that succeeds writes is checked
 * (on a GPU: the checking fake driver runs no kernel's work). */
static void after_reset_launches(void) {
  enum { N = 4096 };
  unsigned char in[N], out[N];
  cujit_module *m = NULL;
  cujit_function *fill = NULL;
  int k;
  logc("  cujit_module_from_source(&m, after_reset_source, \"after_reset.cu\", NULL);\n"
       "  cujit_module_get_function(m, \"after_reset_fill\", &fill);\n"
       "  CUJIT_LAUNCH(fill, CUJIT_DIM3(%d), CUJIT_DIM3(256), cujit_out(out, %d), "
       "cujit_i64(%d), cujit_u8(0xa7));\n",
       N / 256, N, N);
  memset(out, 0, sizeof out);
  if (probe_st(P_COMPILE, cujit_module_from_source(&m, kAfterReset, "after_reset.cu", NULL),
               "cujit_module_from_source") &&
      probe_st(P_COMPILE, cujit_module_get_function(m, "after_reset_fill", &fill),
               "cujit_module_get_function") &&
      probe_st(P_COMPILE,
               CUJIT_LAUNCH(fill, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_out(out, N),
                            cujit_i64(N), cujit_u8(0xa7)),
               "launching a kernel compiled after the reset")) {
    memset(in, 0xa7, sizeof in);
    if (gpu_mode)
      read_matches("the Out buffer of after_reset_fill", out, in, N); /* the fake runs no kernel */
  }
  cujit_module_destroy(m);
  pattern(in, N, 77);
  logc("  pattern(in, %d, 77u);\n  CUJIT_LAUNCH(inc, CUJIT_DIM3(%d), CUJIT_DIM3(256), "
       "cujit_in(in, %d), cujit_out(out, %d), cujit_i64(%d));\n",
       N, N / 256, N, N, N);
  if (probe_st(P_OLD_KERNEL,
               CUJIT_LAUNCH(k_inc, CUJIT_DIM3(N / 256), CUJIT_DIM3(256), cujit_in(in, N),
                            cujit_out(out, N), cujit_i64(N)),
               "launching a kernel loaded before the fault")) {
    for (k = 0; k < N; k++) in[k]++;
    if (gpu_mode) read_matches("the Out buffer of inc (loaded before the fault)", out, in, N);
  }
}

/* The arrays kept from before the fault destroyed (their memory died with the old context:
 * none of it may be freed into the new one or handed out of it), then arrays of their sizes
 * (at most four, of at most 4 MiB) made in the new context, kept apart from the others. */
static void after_reset_old_arrays(void) {
  size_t sizes[4];
  int i, n = 0;
  for (i = 0; i < MAX_ARR; i++) {
    if (!arr[i].h) continue;
    if (!grp[arr[i].group].dead) after_fault_dev(grp[arr[i].group].dev);
    logc("  cujit_array_destroy(a%d); /* made before the fault */\n", i);
    cujit_array_destroy(arr[i].h);
    arr[i].h = NULL;
    if (n < 4 && arr[i].n && arr[i].n <= (4 << 20)) sizes[n++] = arr[i].n;
    group_release(arr[i].group);
  }
  if (!n) return; /* none was kept: not tried */
  after_fault_dev(fault_dev);
  for (i = 0; i < n && !failure[0]; i++) fresh_make(P_OLD_ARRAYS, sizes[i], 0, 900 + (uint64_t)i);
}

/* After a reset that succeeded: the primary context retained and made current, as a
 * program would (after a fault both fail with the sticky error), then the probes, tried
 * whatever the retain gave. */
static void after_reset(void) {
  retain_fn retain = (retain_fn)driver_symbol("cuDevicePrimaryCtxRetain");
  set_fn set = (set_fn)driver_symbol("cuCtxSetCurrent");
  CUcontext c = NULL;
  CUresult r = CUDA_ERROR_NOT_FOUND;
  int i;
  for (i = 0; i < MAX_ARR; i++)
    if (grp[i].refs && grp[i].dev == fault_dev) grp[i].dead = 1;
  logc("  cuDevicePrimaryCtxRetain(&c, %d); cuCtxSetCurrent(c);\n", fault_dev);
  if (retain && set && (r = retain(&c, fault_dev)) == CUDA_SUCCESS) r = set(c);
  snprintf(probe[P_RETAIN], sizeof probe[P_RETAIN], "%s", cu_name(r));
  n_checks_fault++;
  fresh_make(P_ZEROS_1K, 1024, 1, 0);
  fresh_make(P_ZEROS_4M, 4 << 20, 1, 0);
  fresh_apart();
  if (fresh[0].h || fresh[1].h) {
    fresh_read(P_WRITE_READ);
    fresh_write(P_WRITE_READ, 500);
    fresh_read(P_WRITE_READ);
  }
  if (!failure[0]) after_reset_launches();
  logc("  cujit_synchronize();\n");
  if (!failure[0]) probe_st(P_SYNC, cujit_synchronize(), "cujit_synchronize");
  if (!failure[0]) after_reset_old_arrays();
  fresh_apart();
  if (!failure[0]) fresh_read(P_OLD_ARRAYS);
  for (i = 0; i < MAX_FRESH; i++)
    if (fresh[i].h) {
      logc("  cujit_array_destroy(f%d);\n", i);
      cujit_array_destroy(fresh[i].h);
      free(fresh[i].bytes);
      memset(&fresh[i], 0, sizeof fresh[i]);
    }
}

/* The arrays the fault step makes just before its fault, one of each size class (on each
 * of two devices). */
static unsigned char made_for_fault[MAX_ARR];

/* Arrays made before the fault that outlive the reset after it, to be destroyed after the
 * new context's arrays are made: those the fault step made, and every other one of the
 * others on the legacy default stream (the others' streams are destroyed before the
 * reset). */
static int outlives_reset(int i) { return arr[i].stream < 0 && (made_for_fault[i] || i % 2 == 0); }

/* Every array and stream destroyed, each with its device current where that can be made
 * so (no crash, no hang; the checking fake driver flags any second free), but the arrays
 * that outlive the reset; then the reset a program might try (what it returned is kept)
 * and, where it succeeded, what the program tries after it; then the rest destroyed. */
static void after_fault_end(void) {
  reset_fn reset = (reset_fn)driver_symbol("cuDevicePrimaryCtxReset_v2");
  char what[64];
  int i;
  for (i = 0; i < MAX_ARR; i++) {
    if (!arr[i].h || outlives_reset(i)) continue;
    if (!grp[arr[i].group].dead) after_fault_dev(grp[arr[i].group].dev);
    logc("  cujit_array_destroy(a%d);\n", i);
    cujit_array_destroy(arr[i].h);
    arr[i].h = NULL;
    group_release(arr[i].group);
  }
  for (i = 0; i < MAX_STREAMS; i++) {
    if (!streams[i]) continue;
    if (!after_fault_dev(stream_dev[i]) && stream_dev[i] != after_dev) {
      /* its device cannot be made current: the stream is left to the process's end */
      logc("  /* s%d left: device %d cannot be made current */\n", i, stream_dev[i]);
      streams[i] = NULL;
      continue;
    }
    snprintf(what, sizeof what, "cujit_stream_destroy(s%d)", i);
    logc("  %s;\n", what);
    after_fault_any(cujit_stream_destroy(streams[i]), what);
    streams[i] = NULL;
  }
  if (!gpu_mode && !failure[0] && cd.violations()) {
    char text[2048];
    cd.report(text, sizeof text);
    fail_with("after a device fault, the checking driver recorded %lu violation(s):\n%s",
              cd.violations(), text);
  }
  logc("  cuDevicePrimaryCtxReset(%d); /* CUDA_SUCCESS, but the fault stays */\n", fault_dev);
  reset_after_fault = reset ? reset(fault_dev) : CUDA_ERROR_NOT_FOUND;
  n_checks_fault++;
  if (reset_after_fault != CUDA_SUCCESS && !failure[0])
    fail_with("cuDevicePrimaryCtxReset(%d) after a device fault gave %s", fault_dev,
              cu_name(reset_after_fault));
  if (!failure[0]) after_reset();
  for (i = 0; i < MAX_ARR; i++) { /* where a step after the reset failed */
    if (!arr[i].h) continue;
    if (!grp[arr[i].group].dead) after_fault_dev(grp[arr[i].group].dev);
    logc("  cujit_array_destroy(a%d);\n", i);
    cujit_array_destroy(arr[i].h);
    arr[i].h = NULL;
    group_release(arr[i].group);
  }
  if (!gpu_mode && !failure[0] && cd.violations()) {
    char text[2048];
    cd.report(text, sizeof text);
    fail_with("after the reset that followed a device fault, the checking driver recorded %lu "
              "violation(s):\n%s",
              cd.violations(), text);
  }
}

/* A kernel that writes to an invalid address: the fault is reported as
 * CUJIT_ERROR_LAUNCH_FAILED, its message naming the driver's error and saying that the
 * context is no longer usable, that every later GPU call of the process fails and to end
 * the process (include/cujit.h, docs/guarantees.md); then the calls above. The sequence ends here
 * (with --no-fault, the step is skipped). */
static void fault_step(void) {
  CUdeviceptr p = 0;
  cujit_status st;
  CUresult r;
  static const size_t sizes[3] = {1024, 256 << 10, 4 << 20}; /* small, kept, pool */
  int k, i, dev = cur_dev;
  if (no_fault) return;
  memset(made_for_fault, 0, sizeof made_for_fault);
  if (ndev > 1) { /* and on another device, whose arrays are destroyed with this one current */
    to_dev((dev + 1) % ndev);
    for (k = 0; k < 3 && !failure[0]; k++)
      if ((i = make_array(sizes[k], 710 + (uint64_t)k)) >= 0) made_for_fault[i] = 1;
    to_dev(dev);
  }
  for (k = 0; k < 3 && !failure[0]; k++)
    if ((i = make_array(sizes[k], 700 + (uint64_t)k)) >= 0) made_for_fault[i] = 1;
  if (failure[0]) return;
  OK(cujit_mem_alloc(&p, 64), "cujit_mem_alloc");
  logc("  CUJIT_LAUNCH(checkdriver_fault_now, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_ptr(p));\n"
       "  cujit_synchronize(); /* CUJIT_ERROR_LAUNCH_FAILED */\n");
  fault_dev = after_dev = cur_dev;
  n_faults++;
  st = CUJIT_LAUNCH(k_fault, CUJIT_DIM3(1), CUJIT_DIM3(1), cujit_ptr(p));
  if (st == CUJIT_OK) st = cujit_synchronize();
  r = cujit_last_cu_result();
  if (st != CUJIT_ERROR_LAUNCH_FAILED) {
    fail_with("a faulting kernel gave %s, not CUJIT_ERROR_LAUNCH_FAILED: %s", cujit_status_name(st),
              why());
    return;
  }
  if (r == CUDA_SUCCESS || !strstr(cujit_last_error(), cu_name(r)) ||
      !strstr(cujit_last_error(), "no longer usable") ||
      !strstr(cujit_last_error(), "every later GPU call of this process fails") ||
      !strstr(cujit_last_error(), "end the process")) {
    fail_with("a faulting kernel's CUJIT_ERROR_LAUNCH_FAILED does not name the driver's error "
              "(%s) and say that the context is no longer usable, that every later GPU call "
              "of this process fails and to end the process: \"%s\"",
              r == CUDA_SUCCESS ? "not kept" : cu_name(r), cujit_last_error());
    return;
  }
  n_checks_fault++;
  logc("  cujit_synchronize(); /* CUJIT_ERROR_LAUNCH_FAILED again */\n");
  after_fault(cujit_synchronize(), "cujit_synchronize", fault_dev);
  if (!failure[0]) after_fault_calls();
  after_fault_end();
}

static void trim_step(void) {
  logc("  cujit_mem_pool_trim();\n");
  OK(cujit_mem_pool_trim(), "cujit_mem_pool_trim");
}

/* A child made by fork() compiles (the docs allow it; it must not use the device) and
 * exits; the parent goes on. */
static void fork_step(void) {
  pid_t pid;
  int status;
  logc("  /* fork(): the child compiles a kernel and exits 0 */\n");
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    fail_with("fork failed");
    return;
  }
  if (pid == 0) {
    cujit_module *m = NULL;
    cujit_options o = CUJIT_OPTIONS_INIT;
    int bad;
    o.arch = "compute_80";
    bad = cujit_module_from_source(&m, kSource, "child.cu", &o) != CUJIT_OK;
    cujit_module_destroy(m);
    if (!gpu_mode && cd.violations()) bad = 2;
    _exit(bad);
  }
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_with("a forked child failed (%s %d): %s", WIFEXITED(status) ? "exit status" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
              WIFEXITED(status) && WEXITSTATUS(status) == 2
                  ? "it called the driver (cujit must not, in a child)"
                  : "its compile failed");
}

static void sync_step(void) {
  logc("  cujit_synchronize();\n");
  OK(cujit_synchronize(), "cujit_synchronize");
}

static void run_step(const step *s) {
  switch (s->kind) {
    case K_NEW: new_array(s); break;
    case K_NEW_LIKE: new_like(s); break;
    case K_VIEW: view(s); break;
    case K_DESTROY: {
      int a = pick(s->r[0], 0, -1);
      if (a < 0) break;
      if (ndev > 1 && s->r[1] % 4 == 0 && !grp[arr[a].group].dead) {
        /* destroyed while another device is current: given back in its own context */
        if (grp[arr[a].group].refs == 1) finish_others(a);
        to_dev(1 - grp[arr[a].group].dev);
        logc("  cujit_array_destroy(a%d); /* device %d's, device %d current */\n", a,
             grp[arr[a].group].dev, cur_dev);
        cujit_array_destroy(arr[a].h);
        arr[a].h = NULL;
        group_release(arr[a].group);
        break;
      }
      destroy(a);
      break;
    }
    case K_WRITE: write_step(s); break;
    case K_READ: read_step(s); break;
    case K_COPY: copy_step(s); break;
    case K_KERNEL: kernel_step(s); break;
    case K_INOUT: inout_step(s); break;
    case K_MOVE: move_step(s); break;
    case K_STREAM_NEW: stream_new(s); break;
    case K_STREAM_DESTROY: stream_destroy(s); break;
    case K_THREAD: thread_step(s); break;
    case K_DEVICE: device_step(s); break;
    case K_RESET: reset_device(); break;
    case K_FAULT: fault_step(); break;
    case K_TRIM: trim_step(); break;
    case K_FORK: fork_step(); break;
    case K_SYNC: sync_step(); break;
    default: break;
  }
}

/* ---- sequences ---- */

/* One sequence in RESETS_EVERY may reset and fault the device (each costs a GPU a new
 * context, a tenth of a second or more; a fault, a process); in the others those steps
 * synchronise instead. */
#define RESETS_EVERY 8

/* Sequence `seed`'s steps: a fault is the last (with --no-fault, it is skipped and the
 * sequence goes on). */
static size_t make_steps(uint64_t seed, step *out) {
  uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
  size_t n = 16 + mix(&s) % (MAX_STEPS - 16), i;
  for (i = 0; i < n; i++) {
    int w = (int)(mix(&s) % 100), k = 0;
    while (k < N_KINDS - 1 && w >= kWeight[k]) w -= kWeight[k++];
    if ((k == K_RESET || k == K_FAULT) && seed % RESETS_EVERY != 0) k = K_SYNC;
    out[i].kind = k;
    out[i].r[0] = mix(&s);
    out[i].r[1] = mix(&s);
    out[i].r[2] = mix(&s);
    if (k == K_FAULT && !no_fault) return i + 1;
  }
  return n;
}

/* Whether sequence `seed` ends in a device fault (and so runs in a process of its own). */
static int has_fault(uint64_t seed) {
  step steps[MAX_STEPS];
  size_t n = make_steps(seed, steps);
  return steps[n - 1].kind == K_FAULT && !no_fault;
}

/* Destroys what the sequence left (arrays, streams) and checks once more. */
static void clean_up(void) {
  int i;
  for (i = 0; i < MAX_ARR; i++)
    if (arr[i].h) destroy(i);
  for (i = 0; i < MAX_STREAMS; i++)
    if (streams[i]) {
      step s = {K_STREAM_DESTROY, {(uint64_t)i, 0, 0}};
      stream_destroy(&s);
    }
  to_dev(0);
  if (!gpu_mode && !failure[0] && cd.violations()) check_all();
}

/* Runs sequence `seed` (the steps whose bit is set in keep, all when keep is NULL): 0
 * when it held, else 1 with `failure` set. */
static int run_sequence(uint64_t seed, const unsigned char *keep) {
  step steps[MAX_STEPS];
  size_t n = make_steps(seed, steps), i;
  int ended = 0; /* by a fault */
  failure[0] = '\0';
  c_len = 0;
  for (i = 0; i < n && !failure[0] && !ended; i++) {
    if (keep && !keep[i]) continue;
    logc("  /* step %zu */\n", i);
    run_step(&steps[i]);
    n_steps_run++;
    ended = steps[i].kind == K_FAULT && !no_fault;
    if (!failure[0] && !ended) check_all();
    if (failure[0] && !gpu_mode && cd.violations()) { /* what the driver saw, with it */
      char text[2048];
      size_t have = strlen(failure);
      cd.report(text, sizeof text);
      if (!strstr(failure, "violation"))
        snprintf(failure + have, sizeof failure - have, "; the checking driver recorded: %s", text);
    }
  }
  if (!failure[0] && !ended)
    clean_up(); /* after a fault, the fault's checks destroyed everything */
  else if (failure[0])
    logc("  /* fails here: %s */\n", failure);
  return failure[0] != 0;
}

/* ---- replays in new processes, and shrinking ---- */

static char self_path[4096];

/* What kind of failure a text tells, without its numbers (addresses, sizes, counts): a
 * shorter sequence must fail the same way to replace a longer one. */
static void signature(const char *text, char *out, size_t size) {
  size_t n = 0;
  for (; *text && n + 1 < size && n < 160; text++) {
    if ((*text >= '0' && *text <= '9') || (*text >= 'a' && *text <= 'f' && n && out[n - 1] == '#'))
      continue;
    if (*text == 'x' && n && out[n - 1] == '#') continue;
    out[n++] = (*text >= '0' && *text <= '9') ? '#' : *text;
  }
  out[n] = '\0';
}

static char want_signature[256];
static uint64_t replay_after; /* replays run sequences [replay_after, seed) first; 0: none */

/* Replays seed with the steps kept: 1 when it fails as the original did (or crashes, when
 * that did), 0 otherwise. */
static int replay_fails(uint64_t seed, const unsigned char *keep, size_t n, int quiet) {
  char keep_arg[MAX_STEPS * 4 + 8], seed_arg[32], after_arg[32], line[4096], got[256];
  size_t i, used = 0;
  pid_t pid;
  int status, fds[2];
  FILE *from;
  keep_arg[0] = '\0';
  for (i = 0; i < n; i++)
    if (keep[i])
      used +=
          (size_t)snprintf(keep_arg + used, sizeof keep_arg - used, "%s%zu", used ? "," : "", i);
  if (!used) snprintf(keep_arg, sizeof keep_arg, "none");
  snprintf(seed_arg, sizeof seed_arg, "%llu", (unsigned long long)seed);
  snprintf(after_arg, sizeof after_arg, "%llu", (unsigned long long)replay_after);
  fflush(NULL);
  if (pipe(fds) != 0) return 0;
  pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    close(fds[1]);
    char *args[12];
    int k = 0;
    args[k++] = self_path;
    args[k++] = (char *)"--replay";
    args[k++] = seed_arg;
    args[k++] = (char *)"--keep";
    args[k++] = keep_arg;
    args[k++] = (char *)"--after";
    args[k++] = after_arg;
    if (no_fault) args[k++] = (char *)"--no-fault";
    if (via_cujit) args[k++] = (char *)"--read-through-cujit";
    args[k] = NULL;
    execv(self_path, args);
    _exit(3);
  }
  close(fds[1]);
  got[0] = '\0';
  if ((from = fdopen(fds[0], "r")) != NULL) {
    /* the failure is the text after "failed: " to the end */
    int in_failure = 0;
    size_t have = 0;
    char text[4096];
    text[0] = '\0';
    while (fgets(line, sizeof line, from)) {
      if (!quiet) fputs(line, stdout);
      if (strncmp(line, "failed: ", 8) == 0) in_failure = 1, have = 0;
      if (in_failure && have + strlen(line) < sizeof text) {
        memcpy(text + have, line + (have ? 0 : 8), strlen(line + (have ? 0 : 8)) + 1);
        have = strlen(text);
      }
    }
    fclose(from);
    signature(text, got, sizeof got);
  } else {
    close(fds[0]);
  }
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  if (WIFSIGNALED(status)) snprintf(got, sizeof got, "crashed with signal %d", WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (!want_signature[0]) {
    snprintf(want_signature, sizeof want_signature, "%s", got);
    return 1;
  }
  return strcmp(got, want_signature) == 0;
}

/* Shrinks the failing sequence (delta debugging: chunks of steps removed while it still
 * fails the same way) and prints it as C. A sequence that fails only after the ones run
 * before it in the process (what they left in cujit) is shrunk after them. */
static void shrink_and_print(uint64_t seed, uint64_t first) {
  step steps[MAX_STEPS];
  unsigned char keep[MAX_STEPS];
  size_t n = make_steps(seed, steps), chunk, i, j, left;
  memset(keep, 1, sizeof keep);
  want_signature[0] = '\0'; /* the first replay sets it */
  replay_after = 0;
  if (!replay_fails(seed, keep, n, 1)) {
    replay_after = first;
    want_signature[0] = '\0';
    if (seed == first || !replay_fails(seed, keep, n, 1)) {
      printf("seed %llu does not fail again when replayed (alone, or after seeds %llu on)\n",
             (unsigned long long)seed, (unsigned long long)first);
      return;
    }
    printf("seed %llu fails only after seeds %llu to %llu have run in the process; shrunk "
           "after them\n",
           (unsigned long long)seed, (unsigned long long)first, (unsigned long long)seed - 1);
  }
  for (chunk = n / 2; chunk >= 1; chunk /= 2) {
    for (i = 0; i < n; i += chunk) {
      unsigned char saved[MAX_STEPS];
      for (left = 0, j = i; j < i + chunk && j < n; j++) left += keep[j];
      if (!left) continue;
      memcpy(saved, keep, sizeof keep);
      for (j = i; j < i + chunk && j < n; j++) keep[j] = 0;
      if (!replay_fails(seed, keep, n, 1)) memcpy(keep, saved, sizeof keep);
    }
  }
  for (left = 0, i = 0; i < n; i++) left += keep[i];
  printf("the shortest failing form of seed %llu found: %zu of its %zu steps; as C "
         "(a0.. arrays, s0.. streams, host a byte buffer; rerun: %s --replay %llu --after %llu "
         "--keep ",
         (unsigned long long)seed, left, n, self_path, (unsigned long long)seed,
         (unsigned long long)replay_after);
  for (j = 0, i = 0; i < n; i++)
    if (keep[i]) printf("%s%zu", j++ ? "," : "", i);
  printf("):\n");
  fflush(stdout);
  replay_fails(seed, keep, n, 0); /* prints the program */
}

/* ---- setup ---- */

/* 1 when the run can go on: the driver is the checking fake (CPU) or a real one with a
 * device (GPU). */
static int start(void) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  if (cujit_device_get_count(&ndev) != CUJIT_OK || ndev < 1) {
    printf("%s: no usable CUDA device: %s\n", require_gpu ? "failed" : "SKIP", why());
    return 0;
  }
  gpu_mode = checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd) != 0;
  if (require_gpu && !gpu_mode) {
    printf("failed: --require-gpu, but the driver is the checking fake\n");
    return 0;
  }
  if (!gpu_mode) cd.set_abort(0);
  if (gpu_mode) via_cujit = 1;
  if (ndev > 2) ndev = 2;
  o.flags = 0;
  if (cujit_module_from_source(&mod, kSource, "memmodel.cu", &o) != CUJIT_OK ||
      cujit_module_get_function(mod, "inc", &k_inc) != CUJIT_OK ||
      cujit_module_get_function(mod, "checkdriver_fault_now", &k_fault) != CUJIT_OK) {
    printf("failed: compiling the test's kernels: %s\n", why());
    return 0;
  }
  cur_dev = 0;
  return cujit_device_set_current(0) == CUJIT_OK;
}

#ifndef MEMMODEL_SEQUENCES
#  define MEMMODEL_SEQUENCES 300 /* CI's run: a few seconds */
#endif
static uint64_t first_seed = 1;
static unsigned long n_sequences = MEMMODEL_SEQUENCES;

/* What a run of sequences did, as its last line tells the parent ("counts: ..."). */
typedef struct counts {
  unsigned long long sequences, steps, bytes, sharing, faults, fault_checks;
  int gpu; /* the driver was a real one */
} counts;

static void print_counts(unsigned long long sequences) {
  printf("counts: %llu %llu %llu %llu %llu %llu %d\n", sequences, n_steps_run, n_checks_bytes,
         n_checks_sharing, n_faults, n_checks_fault, gpu_mode);
  if (n_faults) {
    int k;
    printf("after a fault: 0 %s\n", cu_name(reset_after_fault));
    for (k = 0; k < N_PROBES && reset_after_fault == CUDA_SUCCESS; k++)
      printf("after a fault: %d %s\n", k + 1, probe[k][0] ? probe[k] : "not tried");
  }
}

/* The batch (--batch): the sequences without a device fault, in one process, as a program
 * runs; "seed N" before each, the failure or the counts at the end. 0, or 1 at the first
 * failure. */
static int run_batch(void) {
  unsigned long i, ran = 0;
  for (i = 0; i < n_sequences; i++) {
    uint64_t seed = first_seed + i;
    if (has_fault(seed)) continue; /* its own process */
    printf("seed %llu\n", (unsigned long long)seed);
    fflush(stdout);
    if (run_sequence(seed, NULL)) {
      printf("failed: %s\n", failure);
      return 1;
    }
    ran++;
  }
  print_counts(ran);
  return 0;
}

/* One sequence with a device fault, alone in this process (--alone): as run_batch. */
static int run_alone(uint64_t seed) {
  printf("seed %llu\n", (unsigned long long)seed);
  fflush(stdout);
  if (run_sequence(seed, NULL)) {
    printf("failed: %s\n", failure);
    return 1;
  }
  print_counts(1);
  return 0;
}

/* What the resets after faults returned (0) and what each probe after them gave (1 to
 * N_PROBES), each outcome with how often it was seen (the first few kinds of each). */
static struct {
  char name[128];
  unsigned long n;
} seen[N_PROBES + 1][4];

/* A child's line "after a fault: K OUTCOME". */
static void note_after_fault(const char *line) {
  char *end;
  long k = strtol(line, &end, 10);
  int i;
  if (k < 0 || k > N_PROBES || *end != ' ') return;
  for (i = 0; i < 4; i++)
    if (!seen[k][i].n || strcmp(seen[k][i].name, end + 1) == 0) {
      snprintf(seen[k][i].name, sizeof seen[k][i].name, "%s", end + 1);
      seen[k][i].n++;
      return;
    }
}

/* The outcomes seen after faults, one part for the reset and one for each probe:
 * "cuDevicePrimaryCtxReset: CUDA_SUCCESS (109); ...". */
static void said_after_faults(char *out, size_t size) {
  size_t used = 0;
  int k, i;
  out[0] = '\0';
  for (k = 0; k <= N_PROBES && used < size; k++) {
    if (!seen[k][0].n) continue;
    used += (size_t)snprintf(out + used, size - used, "%s%s:", used ? "; " : "",
                             k ? kProbe[k - 1] : "cuDevicePrimaryCtxReset");
    for (i = 0; i < 4 && seen[k][i].n && used < size; i++)
      used += (size_t)snprintf(out + used, size - used, "%s %s (%lu)", i ? "," : "",
                               seen[k][i].name, seen[k][i].n);
  }
}

/* Runs test_memmodel with `mode` and `arg` (--batch, or --alone SEED) in a child process,
 * adding its counts to *sum: 0 when it held, TEST_SKIP_CODE when it skipped (why in
 * `why`), else 1 with the seed it was in (0: before any) and why. */
static int run_child(const char *mode, const char *arg, counts *sum, char *why, size_t why_size,
                     uint64_t *seed) {
  char first_arg[32], count_arg[32], line[8192];
  int fds[2], status, done = 0;
  pid_t pid;
  FILE *from;
  counts c;
  snprintf(first_arg, sizeof first_arg, "%llu", (unsigned long long)first_seed);
  snprintf(count_arg, sizeof count_arg, "%lu", n_sequences);
  why[0] = '\0';
  *seed = 0;
  fflush(NULL);
  if (pipe(fds) != 0) {
    snprintf(why, why_size, "pipe: %s", strerror(errno));
    return 1;
  }
  pid = fork();
  if (pid == 0) {
    char *args[16];
    int n = 0;
    close(fds[0]);
    dup2(fds[1], 1);
    close(fds[1]);
    args[n++] = self_path;
    args[n++] = (char *)mode;
    if (arg) args[n++] = (char *)arg;
    args[n++] = (char *)"--first";
    args[n++] = first_arg;
    args[n++] = (char *)"--sequences";
    args[n++] = count_arg;
    if (require_gpu) args[n++] = (char *)"--require-gpu";
    if (via_cujit) args[n++] = (char *)"--read-through-cujit";
    if (no_fault) args[n++] = (char *)"--no-fault";
    args[n] = NULL;
    execv(self_path, args);
    _exit(3);
  }
  close(fds[1]);
  if (pid < 0 || !(from = fdopen(fds[0], "r"))) {
    snprintf(why, why_size, "starting a child: %s", strerror(errno));
    return 1;
  }
  while (fgets(line, sizeof line, from)) {
    if (strncmp(line, "seed ", 5) == 0) {
      *seed = strtoull(line + 5, NULL, 10);
    } else if (sscanf(line, "counts: %llu %llu %llu %llu %llu %llu %d", &c.sequences, &c.steps,
                      &c.bytes, &c.sharing, &c.faults, &c.fault_checks, &c.gpu) == 7) {
      done = 1;
    } else if (strncmp(line, "after a fault: ", 15) == 0) {
      note_after_fault(strtok(line + 15, "\n"));
    } else {
      if (strncmp(line, "SKIP: ", 6) != 0) fputs(line, stdout);
      if (strncmp(line, "failed: ", 8) == 0 && !why[0]) snprintf(why, why_size, "%s", line + 8);
      if (strncmp(line, "SKIP: ", 6) == 0 && !why[0]) snprintf(why, why_size, "%s", line + 6);
    }
  }
  fclose(from);
  if (waitpid(pid, &status, 0) != pid) {
    snprintf(why, why_size, "waitpid: %s", strerror(errno));
    return 1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_CODE) return TEST_SKIP_CODE;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && done) {
    sum->sequences += c.sequences;
    sum->steps += c.steps;
    sum->bytes += c.bytes;
    sum->sharing += c.sharing;
    sum->faults += c.faults;
    sum->fault_checks += c.fault_checks;
    sum->gpu |= c.gpu;
    return 0;
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    snprintf(why, why_size, "hung: no end in %d s", ALONE_LIMIT_S);
  else if (WIFSIGNALED(status))
    snprintf(why, why_size, "crashed with signal %d", WTERMSIG(status));
  else if (!why[0])
    snprintf(why, why_size, "exited with status %d and no failure",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  strtok(why, "\n");
  return 1;
}

/* Runs the batch, then each sequence with a device fault, each in a child process (this one
 * never touches the driver, so that a crash there is a failure like any other: the sequence
 * it was in is replayed and shrunk), and sums what they checked. */
static void sequences_keep_memory_apart(void **state) {
  char why[8192], arg[32], said[4096];
  counts sum;
  uint64_t seed;
  unsigned long i;
  int rc;
  struct timespec t0, t1;
  (void)state;
  memset(&sum, 0, sizeof sum);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = run_child("--batch", NULL, &sum, why, sizeof why, &seed);
  for (i = 0; i < n_sequences && rc == 0; i++)
    if (has_fault(first_seed + i)) {
      snprintf(arg, sizeof arg, "%llu", (unsigned long long)(first_seed + i));
      rc = run_child("--alone", arg, &sum, why, sizeof why, &seed);
    }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc == TEST_SKIP_CODE) {
    test_skip_part("%s", why[0] ? strtok(why, "\n") : "no device");
    skip();
  }
  if (rc != 0) {
    if (!seed) fail_msg("the run failed before its first sequence: %s", why);
    printf("sequence %llu failed: %s\n", (unsigned long long)seed, why);
    fflush(stdout);
    /* a sequence with a fault ran alone; one of the batch, after those before it */
    shrink_and_print(seed, has_fault(seed) ? seed : first_seed);
    fail_msg("sequence %llu failed: %s", (unsigned long long)seed, why);
  }
  said_after_faults(said, sizeof said);
  printf("memmodel (%s): %llu sequences (%llu of them ending in a device fault, each in a "
         "process of its own), %llu steps, %llu content checks, %llu sharing checks, %llu "
         "checks after faults in %.1f s\n",
         sum.gpu ? "GPU" : "checking fake driver", sum.sequences, sum.faults, sum.steps, sum.bytes,
         sum.sharing, sum.fault_checks,
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  if (sum.faults) printf("memmodel: after each fault, in its process: %s\n", said);
  fflush(stdout);
  /* a run that checked nothing has not passed */
  if (!sum.steps || !sum.bytes || !sum.sharing)
    fail_msg("nothing was checked (%llu steps, %llu content checks, %llu sharing checks)",
             sum.steps, sum.bytes, sum.sharing);
  if (sum.sequences != n_sequences)
    fail_msg("%llu of the %lu sequences ran", sum.sequences, n_sequences);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(sequences_keep_memory_apart)};
  unsigned char keep[MAX_STEPS];
  int i, replay = 0, batch = 0, alone = 0;
  uint64_t replay_seed = 0, alone_seed = 0;
  ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  self_path[len > 0 ? len : 0] = '\0';
  memset(keep, 1, sizeof keep);
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--sequences") == 0 && i + 1 < argc)
      n_sequences = strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
      first_seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--no-fault") == 0)
      no_fault = 1;
    else if (strcmp(argv[i], "--require-gpu") == 0)
      require_gpu = 1;
    else if (strcmp(argv[i], "--batch") == 0)
      batch = 1;
    else if (strcmp(argv[i], "--alone") == 0 && i + 1 < argc)
      alone = 1, alone_seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--read-through-cujit") == 0)
      via_cujit = 1;
    else if (strcmp(argv[i], "--after") == 0 && i + 1 < argc)
      replay_after = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc)
      replay = 1, replay_seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
      char *p = argv[++i];
      memset(keep, 0, sizeof keep);
      while (*p && strcmp(p, "none") != 0) {
        unsigned long k = strtoul(p, &p, 10);
        if (k < MAX_STEPS) keep[k] = 1;
        if (*p == ',')
          p++;
        else
          break;
      }
    } else {
      fprintf(stderr, "test_memmodel: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (!replay && !batch && !alone)
    return test_group_result(cmocka_run_group_tests(tests, NULL, NULL));
  if (alone || (replay && !replay_after)) alarm(ALONE_LIMIT_S); /* one sequence: a hang fails */
  if (!start()) return require_gpu || replay ? 1 : TEST_SKIP_CODE;
  if (batch) return run_batch();
  if (alone) return run_alone(alone_seed);
  if (replay) {
    int failed = 0;
    uint64_t k;
    for (k = replay_after; k && k < replay_seed && !failed; k++)
      if (!has_fault(k)) failed = run_sequence(k, NULL); /* as the batch ran them */
    if (failed) {
      printf("failed: an earlier sequence (%llu): %s\n", (unsigned long long)k - 1, failure);
      return 1;
    }
    printf("int main(void) {\n  /* seed %llu */\n", (unsigned long long)replay_seed);
    log_now = 1;
    failed = run_sequence(replay_seed, keep);
    log_now = 0;
    printf("}\n%s%s\n", failed ? "failed: " : "held", failed ? failure : "");
    return failed;
  }
  return 2;
}
