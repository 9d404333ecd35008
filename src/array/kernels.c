/* kernels.c - the kernels the array layer generates: each source text is compiled once per
 * process (through cujit's caches, so a second process compiles nothing) and its function
 * kept in a table; launches are grid-stride loops sized for the device. */
#include <pthread.h>
#include <string.h>
#include <xxhash.h>

#include "array.h"

typedef struct entry {
  uint64_t hash;
  char *source;
  cujit_module *module;
  cujit_function *fn;
} entry;

#define TABLE_SIZE 1024 /* distinct generated kernels a process may hold */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static entry table[TABLE_SIZE];

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
  size_t i = (size_t)h & (TABLE_SIZE - 1), probes;
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&table_lock);
  for (probes = 0; probes < TABLE_SIZE; probes++, i = (i + 1) & (TABLE_SIZE - 1)) {
    entry *e = &table[i];
    if (e->source && e->hash == h && strcmp(e->source, source) == 0) break;
    if (!e->source) {
      if ((st = compile(source, name, e)) == CUJIT_OK) e->hash = h;
      break;
    }
  }
  if (probes == TABLE_SIZE)
    st = cj_fail(CUJIT_ERROR_OUT_OF_MEMORY, "more than %d distinct generated kernels in one "
                 "process", TABLE_SIZE);
  if (st == CUJIT_OK) *fn = table[i].fn;
  pthread_mutex_unlock(&table_lock);
  return st;
}

/* Blocks of 256 threads, at most 32 per multiprocessor: a grid-stride loop covers the rest. */
static unsigned grid_for(int64_t n) {
  static int sms;
  int v = __atomic_load_n(&sms, __ATOMIC_RELAXED);
  int64_t blocks = (n + 255) / 256;
  if (!v) {
    CUcontext ctx;
    CUdevice dev;
    v = 132;
    if (cj_ctx_ensure(&ctx, &dev) == CUJIT_OK &&
        cj_cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS)
      v = 132;
    __atomic_store_n(&sms, v, __ATOMIC_RELAXED);
  }
  if (blocks > (int64_t)v * 32) blocks = (int64_t)v * 32;
  return blocks < 1 ? 1u : (unsigned)blocks;
}

cujit_status cj_array_launch(cujit_function *fn, int64_t n, CUstream stream,
                             const cujit_arg *args, size_t nargs) {
  cujit_launch_options o;
  if (n == 0) return CUJIT_OK;
  memset(&o, 0, sizeof o);
  o.stream = stream;
  return cujit_launch(fn, cujit_dim3(grid_for(n)), cujit_dim3(256), args, nargs, &o);
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
