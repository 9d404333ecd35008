/* kernels.c - the kernels the array layer generates: each source text is compiled once per
 * process (through cujit's caches, so a second process compiles nothing) and its function
 * kept in a table; launches are grid-stride loops sized for the device. */
#include <pthread.h>
#include <string.h>
#include <xxhash.h>

#include "array/array.h"
#include "launch/launch.h" /* the launch through a kernel's slot */

typedef struct entry {
  uint64_t hash;
  char *source; /* NULL: empty slot */
  cujit_module *module;
  cujit_function *fn;
} entry;

/* Open addressing, grown to keep it at most half full; entries are never removed. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table;
static size_t table_cap, table_used;

/* The slot of `source` (found, or the empty one where it goes). Lock held; cap > 0. */
static entry *slot_of(uint64_t h, const char *source) {
  size_t i = (size_t)h & (table_cap - 1);
  while (table[i].source && !(table[i].hash == h && strcmp(table[i].source, source) == 0))
    i = (i + 1) & (table_cap - 1);
  return &table[i];
}

static int grow(void) {
  size_t cap = table_cap ? 2 * table_cap : 256, i, old_cap = table_cap;
  entry *old = table, *v = cj_calloc(cap, sizeof *v);
  if (!v) return -1;
  table = v;
  table_cap = cap;
  for (i = 0; i < old_cap; i++)
    if (old[i].source) *slot_of(old[i].hash, old[i].source) = old[i];
  cj_free(old);
  return 0;
}

static cujit_function *find(uint64_t h, const char *source) {
  cujit_function *f = NULL;
  pthread_mutex_lock(&table_lock);
  if (table_cap) f = slot_of(h, source)->fn;
  pthread_mutex_unlock(&table_lock);
  return f;
}

/* Keeps a compiled kernel; when another thread kept the same one meanwhile, e is freed and
 * theirs returned. */
static cujit_function *keep(uint64_t h, entry *e) {
  entry *slot;
  cujit_function *f;
  pthread_mutex_lock(&table_lock);
  if (2 * (table_used + 1) > table_cap && grow() != 0) {
    pthread_mutex_unlock(&table_lock);
    return e->fn; /* not kept (out of memory): it still runs, and leaks its module */
  }
  slot = slot_of(h, e->source);
  if (!slot->source) {
    e->hash = h;
    *slot = *e;
    table_used++;
    e->source = NULL;
  }
  f = slot->fn;
  pthread_mutex_unlock(&table_lock);
  if (e->source) { /* lost the race */
    cujit_module_destroy(e->module);
    cj_free(e->source);
  }
  return f;
}

/* A compile error of generated code: NVRTC's log and the source it came from, numbered as
 * the log numbers it. */
static cujit_status with_source(const char *source) {
  cj_buf b = {0};
  const char *line = source;
  int n = 1, r = cujit_last_nvrtc_result();
  cujit_status st;
  cj_buf_printf(&b, "%s\nthe generated source:\n", cujit_last_error());
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    cj_buf_printf(&b, "%4d | %.*s\n", n++, (int)len, line);
    line += len + (end != NULL);
  }
  st = b.oom ? cj_fail_oom("describing a compile error")
             : cj_fail_nvrtc(CUJIT_ERROR_COMPILE, r, "%s", b.data);
  cj_buf_free(&b);
  return st;
}

static cujit_status compile(const char *source, const char *name, entry *e) {
  cujit_status st = cujit_module_from_source(&e->module, source, name, NULL);
  if (st == CUJIT_ERROR_COMPILE) return with_source(source);
  if (st != CUJIT_OK) return st;
  st = cujit_module_get_function(e->module, name, &e->fn);
  if (st == CUJIT_OK && (e->source = cj_strdup(source))) return CUJIT_OK;
  cujit_module_destroy(e->module);
  e->module = NULL;
  e->fn = NULL;
  return st != CUJIT_OK ? st : cj_fail_oom("keeping a generated kernel");
}

cujit_status cj_array_kernel(const char *source, const char *name, cujit_function **fn) {
  uint64_t h = XXH3_64bits(source, strlen(source));
  entry e;
  if ((*fn = find(h, source)) != NULL) return CUJIT_OK;
  /* compiled outside the lock: other kernels' launches do not wait for NVRTC */
  memset(&e, 0, sizeof e);
  CJ_TRY(compile(source, name, &e));
  *fn = keep(h, &e);
  return CUJIT_OK;
}

int64_t cj_array_sms(void) {
  const cj_limits *lim;
  CUcontext ctx;
  CUdevice dev;
  if (cj_ctx_ensure(&ctx, &dev) != CUJIT_OK || cj_device_limits(dev, &lim) != CUJIT_OK ||
      lim->sms <= 0)
    return 132; /* not known: large */
  return lim->sms;
}

/* Blocks of 256 threads for `work` threads' worth of items, at most 32 per multiprocessor
 * of the kernel's device: a grid-stride loop covers the rest. */
static unsigned grid_for(const cj_fslot *slot, int64_t work) {
  int64_t blocks = (work + 255) / 256;
  int64_t sms = slot->lim && slot->lim->sms > 0 ? slot->lim->sms : 132; /* not known: large */
  if (blocks > sms * 32) blocks = sms * 32;
  return blocks < 1 ? 1u : (unsigned)blocks;
}

cujit_status cj_array_launch_blocks(cujit_function *fn, int64_t blocks, unsigned threads,
                                    CUstream stream, void **params, size_t nparams) {
  cujit_launch_options o;
  cj_fslot *slot;
  cujit_dim3 grid = CUJIT_DIM3((unsigned)blocks), block = CUJIT_DIM3(threads);
  cujit_status st;
  if (blocks <= 0) return CUJIT_OK;
  CJ_CHECK(nparams == fn->nparams, CUJIT_ERROR_INVALID_ARGS,
           "kernel '%s' takes %zu arguments, %zu given", fn->name, fn->nparams, nparams);
  if (CJ_UNLIKELY((st = cj_function_slot(fn, &slot, 0)) != CUJIT_OK)) return st;
  memset(&o, 0, sizeof o);
  o.stream = stream;
  /* the grid and the block are within every device's limits and no dynamic shared memory
   * is asked for; only the kernel's own limit on threads per block may be lower */
  if (CJ_UNLIKELY(slot->max_threads < (int)threads) &&
      (st = cj_launch_checked(fn, slot, grid, block, &o)) != CUJIT_OK)
    return st;
  return cj_launch_kernel(fn, slot, grid, block, params, &o);
}

cujit_status cj_array_launch_params(cujit_function *fn, int64_t work, CUstream stream,
                                    void **params, size_t nparams) {
  cj_fslot *slot;
  cujit_status st;
  if (work == 0) return CUJIT_OK;
  if (CJ_UNLIKELY((st = cj_function_slot(fn, &slot, 0)) != CUJIT_OK)) return st;
  return cj_array_launch_blocks(fn, grid_for(slot, work), 256, stream, params, nparams);
}

cujit_status cj_array_launch(cujit_function *fn, int64_t n, CUstream stream, const cujit_arg *args,
                             size_t nargs) {
  cujit_launch_options o;
  cj_fslot *slot;
  if (n == 0) return CUJIT_OK;
  CJ_TRY(cj_function_slot(fn, &slot, 0));
  memset(&o, 0, sizeof o);
  o.stream = stream;
  return cujit_launch(fn, CUJIT_DIM3(grid_for(slot, n)), CUJIT_DIM3(256), args, nargs, &o);
}

void cj_array_includes(cj_buf *b, const int *types, size_t n) {
  const char *done[4] = {NULL, NULL, NULL, NULL};
  size_t i, k;
  for (i = 0; i < n; i++) {
    const char *h = cj_elem_of(types[i])->header;
    for (k = 0; k < CJ_COUNT(done) && h; k++) {
      if (done[k] && strcmp(done[k], h) == 0) break;
      if (!done[k]) {
        done[k] = h;
        cj_buf_printf(b, "#include <%s>\n", h);
        break;
      }
    }
  }
}
