/* nvrtc.c - the bare NVRTC baseline: what a program does without cujit; and a record of
 * what cujit itself gives NVRTC, so that a baseline can compile exactly that.
 *
 * The record works by this program defining nvrtcCreateProgram, nvrtcAddNameExpression and
 * nvrtcCompileProgram: libcujit's calls to them (and the baseline's own) come here first,
 * and each forwards to NVRTC's function of that name. They only copy anything while a
 * record has been asked for (bench_nvrtc_record_start), in a child process that times
 * nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- the record ---- */

typedef nvrtcResult create_fn(nvrtcProgram *, const char *, const char *, int, const char *const *,
                              const char *const *);
typedef nvrtcResult add_name_fn(nvrtcProgram, const char *);
typedef nvrtcResult compile_fn(nvrtcProgram, int, const char *const *);

static struct {
  int on;               /* recording the next program */
  nvrtcProgram program; /* the one recorded; NULL before it is created */
  char *source, *name, *name_expr;
  char **headers, **include_names; /* in-memory headers given with the source */
  int n_headers, name_exprs, compiled;
  char **options;
  int n_options;
} rec;

static create_fn *next_create;
static add_name_fn *next_add_name;
static compile_fn *next_compile;

static void *next_symbol(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "cujit-bench: NVRTC's %s not found: %s\n", name, dlerror());
    abort();
  }
  return f;
}

/* Resolved before main, so that no timed call pays for the lookup (no CUDA call here). */
__attribute__((constructor)) static void resolve_nvrtc(void) {
  next_create = (create_fn *)next_symbol("nvrtcCreateProgram");
  next_add_name = (add_name_fn *)next_symbol("nvrtcAddNameExpression");
  next_compile = (compile_fn *)next_symbol("nvrtcCompileProgram");
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                               int num_headers, const char *const *headers,
                               const char *const *include_names) {
  nvrtcResult r = next_create(prog, src, name, num_headers, headers, include_names);
  int i;
  if (rec.on && !rec.program && r == NVRTC_SUCCESS) {
    rec.program = *prog;
    rec.source = strdup(src);
    rec.name = strdup(name ? name : "");
    rec.headers = calloc((size_t)num_headers + 1, sizeof *rec.headers);
    rec.include_names = calloc((size_t)num_headers + 1, sizeof *rec.include_names);
    for (i = 0; rec.headers && rec.include_names && i < num_headers; i++) {
      rec.headers[i] = strdup(headers[i]);
      rec.include_names[i] = strdup(include_names[i]);
    }
    rec.n_headers = num_headers;
  }
  return r;
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char *name_expression) {
  if (rec.on && prog == rec.program && !rec.compiled && rec.name_exprs++ == 0)
    rec.name_expr = strdup(name_expression);
  return next_add_name(prog, name_expression);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int num_options, const char *const *options) {
  int i;
  if (rec.on && prog == rec.program && !rec.compiled) {
    rec.compiled = 1;
    rec.options = calloc((size_t)num_options + 1, sizeof *rec.options);
    for (i = 0; rec.options && i < num_options; i++) rec.options[i] = strdup(options[i]);
    rec.n_options = rec.options ? num_options : 0;
  }
  return next_compile(prog, num_options, options);
}

void bench_nvrtc_record_start(void) { rec.on = 1; }

/* The file: strings, each as its length on a line then its bytes and a newline: the
 * option count then the options, the name expression (empty: none), the program name, the
 * header count then each header's include name and text, and the source. */
static void put_string(FILE *f, const char *v) { fprintf(f, "%zu\n%s\n", strlen(v), v); }

int bench_nvrtc_record_write(const char *path) {
  FILE *f;
  char count[16];
  int i, ok;
  if (!rec.compiled || !rec.source || !rec.headers || !rec.include_names || rec.name_exprs > 1)
    return -1;
  if (!(f = fopen(path, "w"))) return -1;
  snprintf(count, sizeof count, "%d", rec.n_options);
  put_string(f, count);
  for (i = 0; i < rec.n_options; i++) put_string(f, rec.options[i] ? rec.options[i] : "");
  put_string(f, rec.name_expr ? rec.name_expr : "");
  put_string(f, rec.name);
  snprintf(count, sizeof count, "%d", rec.n_headers);
  put_string(f, count);
  for (i = 0; i < rec.n_headers; i++) {
    put_string(f, rec.include_names[i] ? rec.include_names[i] : "");
    put_string(f, rec.headers[i] ? rec.headers[i] : "");
  }
  put_string(f, rec.source);
  ok = !ferror(f);
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* The next string of a record (NUL-terminated in place), or NULL past its end. */
static char *get_string(char **p, const char *end) {
  char *s, *nl = memchr(*p, '\n', (size_t)(end - *p));
  unsigned long long len;
  if (!nl || sscanf(*p, "%llu", &len) != 1 || len >= (unsigned long long)(end - nl)) return NULL;
  s = nl + 1;
  if (s[len] != '\n') return NULL;
  s[len] = '\0';
  *p = s + len + 1;
  return s;
}

static void *compile_cubin(const char *source, const char *name, int n_headers,
                           const char *const *headers, const char *const *include_names,
                           const char *const *argv, int argc, const char *name_expr, size_t *size);

double bench_nvrtc_replay(const char *path) {
  size_t size = 0;
  char *text = bench_read_file(path, &size), *p = text, *end = text + size, *v, *expr, *name;
  char **argv = NULL, **headers = NULL, **names = NULL, *source;
  void *cubin = NULL;
  int argc, n_headers, i;
  double ms = NAN;
  uint64_t t0;
  if (!text) return NAN;
  if (!(v = get_string(&p, end)) || (argc = atoi(v)) < 0 || argc > 256 ||
      !(argv = calloc((size_t)argc + 1, sizeof *argv)))
    goto done;
  for (i = 0; i < argc; i++)
    if (!(argv[i] = get_string(&p, end))) goto done;
  if (!(expr = get_string(&p, end)) || !(name = get_string(&p, end)) ||
      !(v = get_string(&p, end)) || (n_headers = atoi(v)) < 0 || n_headers > 4096 ||
      !(headers = calloc((size_t)n_headers + 1, sizeof *headers)) ||
      !(names = calloc((size_t)n_headers + 1, sizeof *names)))
    goto done;
  for (i = 0; i < n_headers; i++)
    if (!(names[i] = get_string(&p, end)) || !(headers[i] = get_string(&p, end))) goto done;
  if (!(source = get_string(&p, end))) goto done;
  t0 = bench_now_ns();
  cubin = compile_cubin(source, name, n_headers, (const char *const *)headers,
                        (const char *const *)names, (const char *const *)argv, argc,
                        expr[0] ? expr : NULL, &size);
  if (cubin) ms = (double)(bench_now_ns() - t0) / 1e6;
done:
  free(cubin);
  free(argv);
  free(headers);
  free(names);
  free(text);
  return ms;
}

/* The program's log (malloc'ed, maybe empty); cujit reads it on every compile too. */
static char *program_log(nvrtcProgram p) {
  size_t size = 0;
  char *log;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS) size = 0;
  log = malloc(size + 1);
  if (!log) return NULL;
  log[0] = '\0';
  if (size && nvrtcGetProgramLog(p, log) != NVRTC_SUCCESS) log[0] = '\0';
  log[size] = '\0';
  return log;
}

static void *take_cubin(nvrtcProgram p, size_t *size) {
  size_t ptx_size = 0;
  char *cubin = NULL, *ptx = NULL;
  if (nvrtcGetPTXSize(p, &ptx_size) == NVRTC_SUCCESS && (ptx = malloc(ptx_size)))
    nvrtcGetPTX(p, ptx);
  if (nvrtcGetCUBINSize(p, size) == NVRTC_SUCCESS && *size && (cubin = malloc(*size)))
    nvrtcGetCUBIN(p, cubin);
  free(ptx);
  return cubin;
}

void *bench_nvrtc_cubin(const char *source, const char *name, const char *const *argv, int argc,
                        const char *name_expr, size_t *size) {
  return compile_cubin(source, name, 0, NULL, NULL, argv, argc, name_expr, size);
}

int bench_write_cubin(const char *source, const char *name, const char *path) {
  char arch[48];
  const char *argv[] = {arch, "-no-cache"};
  size_t size;
  void *cubin;
  int rc;
  snprintf(arch, sizeof arch, "-arch=%s", bench_cfg.cc_arch);
  cubin = bench_nvrtc_cubin(source, name, argv, 2, NULL, &size);
  if (!cubin) return -1;
  rc = bench_write_file(path, cubin, size);
  free(cubin);
  return rc;
}

static void *compile_cubin(const char *source, const char *name, int n_headers,
                           const char *const *headers, const char *const *include_names,
                           const char *const *argv, int argc, const char *name_expr, size_t *size) {
  nvrtcProgram p;
  nvrtcResult r;
  const char *lowered = NULL;
  char *log, *cubin = NULL;
  *size = 0;
  if (nvrtcCreateProgram(&p, source, name, n_headers, headers, include_names) != NVRTC_SUCCESS)
    return NULL;
  if (name_expr) nvrtcAddNameExpression(p, name_expr);
  r = nvrtcCompileProgram(p, argc, argv);
  log = program_log(p);
  if (r != NVRTC_SUCCESS)
    fprintf(stderr, "cujit-bench: bare NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log ? log : "");
  else if (name_expr && nvrtcGetLoweredName(p, name_expr, &lowered) != NVRTC_SUCCESS)
    fprintf(stderr, "cujit-bench: bare NVRTC: no lowered name for %s\n", name_expr);
  else
    cubin = take_cubin(p, size);
  free(log);
  nvrtcDestroyProgram(&p);
  return cubin;
}
