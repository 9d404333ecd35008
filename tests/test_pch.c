/* test_pch.c - precompiled headers: a header prefix compiled twice in a process gets one,
 * later compiles use it, and the output is what a plain compile gives. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "cache/cache.h"

#define PREFIX "// shared prefix\n#include <cuda_fp16.h>\n\n"

static const char *const kSources[] = {
    PREFIX "__global__ void a(__half *x) { x[0] = __float2half(1.0f); }\n",
    PREFIX "__global__ void b(__half *x) { x[0] = __hadd(x[0], x[1]); }\n",
    PREFIX "__global__ void c(__half *x, float f) { x[threadIdx.x] = __float2half(f); }\n",
};

/* Compiles without the cache (with `dirs` as include directories); the PTX, owned by the
 * caller. */
static char *ptx_with(const char *src, const char **dirs) {
  cujit_options o = {0};
  cujit_module *m = NULL;
  char *ptx;
  o.arch = "compute_80";
  o.flags = CUJIT_OPT_NO_CACHE;
  o.include_dirs = dirs;
  assert_ok(cujit_module_from_source(&m, src, "pch.cu", &o));
  assert_string_equal(cujit_module_log(m), ""); /* NVRTC's messages about it stay out */
  ptx = strdup(cujit_module_ptx(m, NULL));
  cujit_module_destroy(m);
  return ptx;
}

static char *ptx_of(const char *src) { return ptx_with(src, NULL); }

static char *ptx_of_plain(const char *src) {
  const char *dirs[] = {"/nonexistent-include-dir", NULL};
  return ptx_with(src, dirs);
}

/* The PTX of `src` compiled plainly in a new process. The child inherits what this
 * process learned of prefixes (and CUJIT_PCH is read once), so it compiles with an include
 * directory of its own, which precompiled headers are never used with and which changes
 * nothing in the PTX. */
static char *plain_ptx(const char *src) {
  int fd[2], status = 0;
  size_t len = 0, cap = 1 << 16;
  char *out = malloc(cap);
  ssize_t n;
  pid_t pid;
  assert_int_equal(pipe(fd), 0);
  pid = fork();
  if (pid == 0) {
    char *p;
    close(fd[0]);
    p = ptx_of_plain(src);
    _exit(write(fd[1], p, strlen(p)) == (ssize_t)strlen(p) ? 0 : 1);
  }
  close(fd[1]);
  while ((n = read(fd[0], out + len, cap - len - 1)) > 0) {
    len += (size_t)n;
    if (len + 1 == cap) out = realloc(out, cap *= 2);
  }
  close(fd[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  out[len] = '\0';
  return out;
}

static void a_repeated_prefix_gets_one_header(void **state) {
  char *ptx[3], *plain;
  size_t i;
  (void)state;
  for (i = 0; i < 3; i++) {
    ptx[i] = ptx_of(kSources[i]);
    /* made at the second compile of the prefix, not at the first */
    assert_int_equal(cj_pch_created(), i == 0 ? 0 : 1);
  }
  plain = plain_ptx(kSources[2]); /* the third compile used the header */
  assert_string_equal(ptx[2], plain);
  free(plain);
  for (i = 0; i < 3; i++) free(ptx[i]);
}

static void sources_without_includes_never_get_one(void **state) {
  int before = cj_pch_created();
  char *p;
  int i;
  (void)state;
  for (i = 0; i < 3; i++) {
    p = ptx_of("__global__ void plain(int *x) { x[0] = 1; }\n");
    free(p);
  }
  assert_int_equal(cj_pch_created(), before);
}

/* A project header may be edited between compiles, which NVRTC's precompiled header would
 * not notice: quoted includes and the caller's include directories get none. */
static void project_headers_never_get_one(void **state) {
  static const char quoted[] = "#include \"defs.h\"\n__global__ void q%d(int *x) { x[0] = V + %d; }\n";
  static const char angled[] = "#include <cuda_fp16.h>\n__global__ void r%d(int *x) { x[0] = %d; }\n";
  const cujit_header headers[] = {{"defs.h", "#define V 3\n"}, {NULL, NULL}};
  const char *dirs[] = {"/nonexistent-include-dir", NULL};
  cujit_options o = {0};
  cujit_module *m;
  char src[256];
  int before = cj_pch_created(), i;
  (void)state;
  o.flags = CUJIT_OPT_NO_CACHE;
  o.headers = headers;
  for (i = 0; i < 3; i++) {
    snprintf(src, sizeof src, quoted, i, i);
    m = NULL;
    assert_ok(cujit_module_from_source(&m, src, "q.cu", &o));
    cujit_module_destroy(m);
  }
  o.headers = NULL;
  o.include_dirs = dirs;
  for (i = 0; i < 3; i++) {
    snprintf(src, sizeof src, angled, i, i);
    m = NULL;
    assert_ok(cujit_module_from_source(&m, src, "r.cu", &o));
    cujit_module_destroy(m);
  }
  assert_int_equal(cj_pch_created(), before);
}

/* The caller's own PCH options are theirs: cujit adds none. */
static void the_callers_pch_options_are_left_alone(void **state) {
  cj_request r;
  char args[600];
  uint64_t prefix;
  cujit_options o = {0};
  const char *opts[] = {"-pch", NULL};
  (void)state;
  o.nvrtc_options = opts;
  assert_ok(cj_request_init(&r, kSources[0], "pch.cu", &o, NULL));
  assert_int_equal(cj_pch_begin(&r, args, sizeof args, &prefix), 0);
  cj_request_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_repeated_prefix_gets_one_header),
      cmocka_unit_test(sources_without_includes_never_get_one),
      cmocka_unit_test(project_headers_never_get_one),
      cmocka_unit_test(the_callers_pch_options_are_left_alone),
  };
  unsetenv("CUJIT_PCH");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
