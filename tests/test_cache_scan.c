/* test_cache_scan - the include scanner behind the cache key: which directives it sees
 * (however they are spelled), where it looks for headers (as NVRTC does), that it stays
 * linear in its input, and when it gives up and makes a compile bypass the cache. Only the
 * last group runs a compiler (NVRTC, no GPU needed): the toolkit's libraries. */
#include <sys/stat.h>

#include "cachetest.h" /* testutil.h, cache.h, compile_count */

static char *dir; /* holds inc/ (an include directory) and src/ */
static char inc[4200], src[4200];

static int setup(void **state) {
  (void)state;
  if (!(dir = test_tempdir("scan"))) return -1;
  snprintf(inc, sizeof inc, "%s/inc", dir);
  snprintf(src, sizeof src, "%s/src", dir);
  mkdir(inc, 0700);
  mkdir(src, 0700);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(dir);
  free(dir);
  return 0;
}

typedef struct scan_result {
  cj_deps *deps;
  char bypass[512];
} scan_result;

/* Scans `text` named `name` with the include directory inc/ and `opts` (may be NULL). */
static void scan(scan_result *res, const char *text, const char *name, const char *const *nv,
                 const cujit_header *headers) {
  const char *dirs[] = {inc, NULL};
  cujit_options o = {0};
  cj_request r;
  o.arch = "compute_80";
  o.include_dirs = dirs;
  o.nvrtc_options = nv;
  o.headers = headers;
  assert_ok(cj_request_init(&r, text, name, &o, NULL));
  assert_ok(cj_scan_request(&r, &res->deps, res->bypass, sizeof res->bypass));
  cj_request_free(&r);
}

/* 1 when the scan found `file` (relative to the test directory) present. */
static int found(const scan_result *res, const char *file) {
  char path[4400];
  const cj_dep *d;
  snprintf(path, sizeof path, "%s/%s", dir, file);
  d = cj_deplist_find(res->deps, path);
  return d && d->present;
}

static int probed(const scan_result *res, const char *file) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  return cj_deplist_find(res->deps, path) != NULL;
}

static void write_in(const char *sub, const char *name, const char *text) {
  char d[4400];
  snprintf(d, sizeof d, "%s/%s", dir, sub);
  assert_int_equal(test_write_file(d, name, text), 0);
}

static void every_spelling_of_a_directive(void **state) {
  static const char text[] = "#include \"a.h\"\n"
                             "  #  include  <b.h>\n"
                             "/* comment */ #include \"c.h\"\n"
                             "#include /* comment */ \"d.h\"\n"
                             "#\\\ninclude \"e.h\"\n"
                             "%:include \"f.h\"\n"
                             "/* a comment\n   over lines */ #include \"g.h\"\n"
                             "#include_next <h.h>\n"
                             "#if defined(X) && __has_include(<i.h>)\n#endif\n"
                             "#elif __has_include_next(\"j.h\")\n"
                             "#define HDR <k.h>\n#include HDR\n"
                             "#if 0\n#include \"l.h\"\n#endif\n"
                             "__global__ void k() {}\n";
  const char *names = "abcdefghijkl";
  scan_result res;
  char h[8];
  size_t i;
  (void)state;
  for (i = 0; names[i]; i++) {
    snprintf(h, sizeof h, "%c.h", names[i]);
    write_in("inc", h, "\n");
  }
  scan(&res, text, "k.cu", NULL, NULL);
  assert_string_equal(res.bypass, "");
  for (i = 0; names[i]; i++) {
    snprintf(h, sizeof h, "inc/%c.h", names[i]);
    if (!found(&res, h)) fail_msg("%s was not followed", h);
  }
  assert_int_equal(cj_deplist_count_present(res.deps), 12);
  cj_deplist_destroy(res.deps);
}

static void not_directives(void **state) {
  static const char text[] = "// #include \"n1.h\"\n"
                             "int x; #include \"n2.h\"\n"
                             "const char *s = \"#include <n3.h>\";\n"
                             "__global__ void k() {}\n";
  scan_result res;
  (void)state;
  write_in("inc", "n1.h", "\n");
  write_in("inc", "n2.h", "\n");
  write_in("inc", "n3.h", "\n");
  scan(&res, text, "k.cu", NULL, NULL);
  assert_int_equal(cj_deplist_count_present(res.deps), 0);
  cj_deplist_destroy(res.deps);
}

/* A text with no '#', no splice and no "%:" is not lexed at all, and a line with no comment,
 * literal or splice is skipped whole: what they find is what the lexer finds. */
static void quick_paths_find_the_same(void **state) {
  static const char *const texts[] =
      {"%:include \"p1.h\"\n__global__ void k() {}\n",   /* a digraph, no '#' */
       "int x;\n%\\\n:include \"p2.h\"\n",               /* a digraph joined by a splice */
       "int a = 1; int b = a * 2;\n#include \"p3.h\"\n", /* a plain line, then a directive */
       "__global__ void k(int *x) { x[0] = 1; }\n",      /* nothing at all */
       "int c = 3; /* open\n#include \"n4.h\"\n*/\n",    /* a comment's line over a directive */
       "const char *t = \"a\\\n#include <n5.h>\";\n",    /* a string continued by a splice */
       "int d = 1'000; char e = '#';\n"};                /* a separator; a quoted '#' */
  static const int want[] = {1, 1, 1, 0, 0, 0, 0};
  const char *names[] = {"p1.h", "p2.h", "p3.h", "n4.h", "n5.h"};
  scan_result res;
  char h[16];
  size_t i;
  (void)state;
  for (i = 0; i < CJ_COUNT(names); i++) write_in("inc", names[i], "\n");
  for (i = 0; i < CJ_COUNT(texts); i++) {
    scan(&res, texts[i], "k.cu", NULL, NULL);
    assert_string_equal(res.bypass, "");
    if ((size_t)cj_deplist_count_present(res.deps) != (size_t)want[i])
      fail_msg("text %zu found %zu headers, not %d", i, (size_t)cj_deplist_count_present(res.deps),
               want[i]);
    if (i < 3) {
      snprintf(h, sizeof h, "inc/p%zu.h", i + 1);
      if (!found(&res, h)) fail_msg("%s was not followed", h);
    }
    cj_deplist_destroy(res.deps);
  }
}

/* Quote includes look in the includer's directory first, then the include path; angle
 * includes only in the include path; in-memory headers come before both. */
static void search_order(void **state) {
  char name[4400];
  scan_result res;
  cujit_header mem[] = {{"m.h", "#include \"q.h\"\n"}, {NULL, NULL}};
  (void)state;
  write_in("src", "q.h", "#include \"r.h\"\n");
  write_in("inc", "q.h", "\n");
  write_in("inc", "r.h", "#include \"loop.h\"\n");
  write_in("inc", "loop.h", "#include \"r.h\"\n"); /* a cycle ends */
  write_in("inc", "s.h", "\n");
  snprintf(name, sizeof name, "%s/main.cu", src);
  scan(&res, "#include \"q.h\"\n#include <s.h>\n", name, NULL, NULL);
  assert_true(found(&res, "src/q.h"));
  assert_false(probed(&res, "inc/q.h")); /* never needed */
  assert_true(found(&res, "inc/r.h"));   /* src/r.h was tried first */
  assert_true(probed(&res, "src/r.h"));
  assert_true(found(&res, "inc/loop.h"));
  assert_true(found(&res, "inc/s.h"));
  assert_false(probed(&res, "src/s.h"));
  cj_deplist_destroy(res.deps);
  /* an in-memory header wins over files; its own includes are followed */
  scan(&res, "#include \"q.h\"\n#include \"m.h\"\n", name, NULL, mem);
  assert_true(found(&res, "src/q.h"));
  cj_deplist_destroy(res.deps);
  mem[0].name = "q.h";
  scan(&res, "#include \"q.h\"\n", name, NULL, mem);
  assert_false(probed(&res, "src/q.h"));
  cj_deplist_destroy(res.deps);
}

/* -I and --pre-include given as NVRTC options; -no-source-include. */
static void options_that_change_the_search(void **state) {
  char name[4400], idir[4400], pre[4400], more[4400];
  const char *nv[] = {idir, pre, "-no-source-include", NULL};
  scan_result res;
  (void)state;
  mkdir(strcat(strcpy(more, dir), "/more"), 0700);
  write_in("more", "t.h", "\n");
  write_in("more", "p.h", "\n");
  write_in("src", "u.h", "\n");
  write_in("inc", "u.h", "\n");
  snprintf(idir, sizeof idir, "-I%s/more", dir);
  snprintf(pre, sizeof pre, "--pre-include=%s/more/p.h", dir);
  snprintf(name, sizeof name, "%s/main.cu", src);
  scan(&res, "#include \"t.h\"\n#include \"u.h\"\n", name, nv, NULL);
  assert_true(found(&res, "more/t.h"));
  assert_true(found(&res, "more/p.h"));
  assert_true(found(&res, "inc/u.h"));
  assert_false(probed(&res, "src/u.h")); /* -no-source-include */
  cj_deplist_destroy(res.deps);
  snprintf(idir, sizeof idir, "--include-path=%s/more", dir);
  scan(&res, "#include <t.h>\n", name, nv, NULL);
  assert_true(found(&res, "more/t.h"));
  cj_deplist_destroy(res.deps);
}

/* The CUDA toolkit's include directory on the include path: its headers are covered by
 * NVRTC's version, so they are neither recorded nor followed; a user header shadowing one
 * in an earlier directory still is. */
static void toolkit_headers_are_not_tracked(void **state) {
  char idir[4400];
  const char *nv[] = {idir, NULL};
  scan_result res;
  (void)state;
  snprintf(idir, sizeof idir, "-I%s", CUJIT_CUDA_INCLUDE_DIR);
  scan(&res, "#include <cuda_fp16.h>\n#include \"mine.h\"\n", "k.cu", nv, NULL);
  assert_int_equal(cj_deplist_count_present(res.deps), 0);
  assert_true(probed(&res, "inc/cuda_fp16.h")); /* a header put there later is noticed */
  cj_deplist_destroy(res.deps);
  write_in("inc", "mine.h", "#include <cuda_fp16.h>\n");
  scan(&res, "#include \"mine.h\"\n", "k.cu", nv, NULL);
  assert_int_equal(cj_deplist_count_present(res.deps), 1);
  assert_true(found(&res, "inc/mine.h"));
  cj_deplist_destroy(res.deps);
}

static void what_cannot_be_keyed(void **state) {
  const char *pch[] = {"-pch", NULL}, *use[] = {"--use-pch=x.pch", NULL};
  scan_result res;
  (void)state;
  scan(&res, "#include MISSING_HEADER\n", "m.cu", NULL, NULL);
  assert_non_null(strstr(res.bypass, "m.cu:1: #include MISSING_HEADER names a header through a "
                                     "macro"));
  cj_deplist_destroy(res.deps);
  scan(&res, "#define H(x) <x>\n#include H(a.h)\n", "m.cu", NULL, NULL);
  assert_non_null(strstr(res.bypass, "m.cu:2:"));
  cj_deplist_destroy(res.deps);
  scan(&res, "__global__ void k() {}\n", "m.cu", pch, NULL);
  assert_non_null(strstr(res.bypass, "NVRTC option '-pch' reads or writes files"));
  cj_deplist_destroy(res.deps);
  scan(&res, "__global__ void k() {}\n", "m.cu", use, NULL);
  assert_non_null(strstr(res.bypass, "'--use-pch=x.pch'"));
  cj_deplist_destroy(res.deps);
  /* a macro defined by a define option resolves */
  {
    const char *defs[] = {"CFG=\"cfg.h\"", NULL};
    const char *dirs[] = {inc, NULL};
    cujit_options o = {0};
    cj_request r;
    write_in("inc", "cfg.h", "\n");
    o.arch = "compute_80";
    o.include_dirs = dirs;
    o.defines = defs;
    assert_ok(cj_request_init(&r, "#include CFG\n", "m.cu", &o, NULL));
    assert_ok(cj_scan_request(&r, &res.deps, res.bypass, sizeof res.bypass));
    cj_request_free(&r);
    assert_string_equal(res.bypass, "");
    assert_true(found(&res, "inc/cfg.h"));
    cj_deplist_destroy(res.deps);
  }
}

/* A header that cannot be read is treated like a missing one; a FIFO does not hang. */
static void odd_files(void **state) {
  char fifo[4400];
  scan_result res;
  (void)state;
  snprintf(fifo, sizeof fifo, "%s/fifo.h", inc);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  mkdir(strcat(strcpy(fifo, inc), "/dir.h"), 0700);
  scan(&res, "#include \"fifo.h\"\n#include \"dir.h\"\n#include \"\"\n#include \"unterminated\n",
       "o.cu", NULL, NULL);
  assert_int_equal(cj_deplist_count_present(res.deps), 0);
  assert_true(probed(&res, "inc/fifo.h"));
  cj_deplist_destroy(res.deps);
}

/* Scans `text` and asserts that `name` in inc/ was followed (want) or not. */
static void expect(const scan_result *res, const char *name, int want) {
  char h[64];
  snprintf(h, sizeof h, "inc/%s", name);
  if (found(res, h) != want) fail_msg("%s was%s followed", h, want ? " not" : "");
}

static void write_all(const char *const *names) {
  for (; *names; names++) write_in("inc", *names, "\n");
}

/* Writes every header of `names` into inc/, scans `text`, and expects each followed
 * unless its name starts with 'n' (for "not a directive"). */
static void scan_names(const char *text, const char *const *names) {
  scan_result res;
  write_all(names);
  scan(&res, text, "k.cu", NULL, NULL);
  for (; *names; names++) expect(&res, *names, (*names)[0] != 'n');
  cj_deplist_destroy(res.deps);
}

/* Many headers, on disk and in memory, including each other: the queue of files to scan
 * grows while a file is scanned. (The in-memory names are as long as the queue's first
 * allocation, so that a scanner holding on to it would see it reused.) */
static void many_headers(void **state) {
  enum { N = 48, LONG = 640 };
  static char names[N][LONG + 1], texts[N][2 * LONG + 64];
  cujit_header mem[N + 1];
  char text[2 * LONG + 64], *source = malloc((size_t)N * (LONG + 16) + 64);
  size_t len = 0;
  scan_result res;
  int i;
  (void)state;
  assert_non_null(source);
  for (i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "m%d", i);
    memset(names[i] + strlen(names[i]), 'x', LONG - strlen(names[i]) - 2);
    memcpy(names[i] + LONG - 2, ".h", 3);
  }
  for (i = 0; i < N; i++) { /* d<i>.h includes two others and an in-memory header */
    snprintf(text, sizeof text, "#include \"d%d.h\"\n#include <d%d.h>\n#include \"%s\"\n",
             (i + 1) % N, (i * 7 + 3) % N, names[i]);
    snprintf(texts[0], sizeof texts[0], "d%d.h", i);
    write_in("inc", texts[0], text);
  }
  for (i = 0; i < N; i++) { /* m<i>x...x.h includes the next one and e<i>.h from the disk */
    snprintf(texts[i], sizeof texts[i], "#include \"%s\"\n#include \"e%d.h\"\n", names[(i + 1) % N],
             i);
    mem[i].name = names[i];
    mem[i].source = texts[i];
    snprintf(text, sizeof text, "e%d.h", i);
    write_in("inc", text, "#include \"d0.h\"\n");
    len += (size_t)sprintf(source + len, "#include \"%s\"\n", names[N - 1 - i]);
  }
  mem[N].name = mem[N].source = NULL;
  strcpy(source + len, "#include \"d0.h\"\n#include HDR\n#define HDR \"d1.h\"\n");
  scan(&res, source, "k.cu", NULL, mem);
  free(source);
  assert_string_equal(res.bypass, "");
  for (i = 0; i < N; i++) {
    snprintf(text, sizeof text, "d%d.h", i);
    expect(&res, text, 1);
    snprintf(text, sizeof text, "e%d.h", i);
    expect(&res, text, 1);
  }
  assert_int_equal(cj_deplist_count_present(res.deps), 2 * N);
  cj_deplist_destroy(res.deps);
}

/* A block comment before a '#' is a blank, even one over lines; after a token it is not. */
static void directives_after_comments(void **state) {
  static const char text[] = "int x; /* a\n b */ #include \"n1.h\"\n"
                             "/* c\n d */ #include \"g1.h\"\n"
                             "/* e */ /* f\n*/ %:include \"g2.h\"\n"
                             "/* g */ // h */ #include \"n2.h\"\n"
                             "#include \"g3\\\n.h\"\n"
                             "#if 0 && \\\n  __has_include(\"g4.h\")\n#endif\n"
                             "/*/ #include \"n3.h\" */\n"
                             "/\\\n* i *\\\n/ #include \"g5.h\"\n";
  static const char *const names[] = {"n1.h", "n2.h", "n3.h", "g1.h", "g2.h",
                                      "g3.h", "g4.h", "g5.h", NULL};
  (void)state;
  scan_names(text, names);
}

/* What is inside a literal is neither a comment nor a directive; a literal left open
 * ends with its line. */
static void literals(void **state) {
  static const char text[] = "const char *s = \"/*\"; char c = '\"';\n"
                             "#include \"s1.h\"\n"
                             "const char *t = \"*/ #include <n1.h>\";\n"
                             "const char *u = \"a\\\" /*\", *w = \"\\\\\"; /* \" */\n"
                             "#include \"s2.h\"\n"
                             "const char *v = \"open\n"
                             "#include \"s3.h\"\n"
                             "#if 0\ndon't /*\n#endif\n*/\n"
                             "#include \"s4.h\"\n";
  static const char *const names[] = {"n1.h", "s1.h", "s2.h", "s3.h", "s4.h", NULL};
  (void)state;
  scan_names(text, names);
}

/* A raw string ends only at its delimiter; its lines hold no directive. */
static void raw_strings(void **state) {
  static const char text[] = "const char *a = R\"(\n#include \"n1.h\"\n)\";\n"
                             "#include \"r1.h\"\n"
                             "const char *b = u8R\"d(a)\" /* \"\n#include \"n2.h\"\n)d\";\n"
                             "#include \"r2.h\"\n"
                             "const char *c = R\"x(\")x\" /* a comment\n#include \"n3.h\" */;\n"
                             "#include \"r3.h\"\n"
                             "const char *d = LR\"(\\\n)\";\n"
                             "#include \"r4.h\"\n";
  static const char *const names[] = {"n1.h", "n2.h", "n3.h", "r1.h", "r2.h", "r3.h", "r4.h", NULL};
  (void)state;
  scan_names(text, names);
}

/* 1'000 is a number, not a character literal that hides what follows. */
static void digit_separators(void **state) {
  static const char text[] = "int a = 1'2, b = '\"'; /*\n#include \"n1.h\"\n*/\n"
                             "double d = 0x1'0p+1'0; char e = '\"'; /*\n#include \"n2.h\"\n*/\n"
                             "#include \"s1.h\"\n";
  static const char *const names[] = {"n1.h", "n2.h", "s1.h", NULL};
  (void)state;
  scan_names(text, names);
}

/* A source of `n` bytes made of `piece` repeated, then `tail`. */
static char *repeat(const char *piece, size_t n, const char *tail) {
  size_t k = strlen(piece), t = strlen(tail), i;
  char *s = malloc(n + t + 1);
  assert_non_null(s);
  for (i = 0; i + k <= n; i += k) memcpy(s + i, piece, k);
  memcpy(s + i, tail, t + 1);
  return s;
}

/* Scans `text` and asserts that it examined at most a few times its bytes. */
static void scan_linear(scan_result *res, const char *text) {
  uint64_t before = cj_scan_bytes_examined(), used;
  scan(res, text, "k.cu", NULL, NULL);
  used = cj_scan_bytes_examined() - before;
  if (used > 4 * (uint64_t)strlen(text))
    fail_msg("%llu bytes examined for a source of %zu", (unsigned long long)used, strlen(text));
}

/* Sources made to make a scan that goes back over its input slow: the scan stays linear. */
static void pathological_sources(void **state) {
  static const char *const pieces[][2] = {
      {"/* never closed\n", "* /\n#include \"n1.h\"\n"},
      {"/* closed at the end /* again\n", "*/ #include \"p1.h\"\n"},
      {"/* */ /* x */ */ \" /* \n", "#include \"p2.h\"\n"},
      {"x \\\n", "\n#include \"p3.h\"\n"},
      {"#if __has_include(<", "\n#include \"p4.h\"\n"},
      {"#if __has_include(\"", "\n#include \"p5.h\"\n"},
      {"R\"delimiter(", ")delimiteR\"\n#include \"n2.h\"\n"},
      {"R\"0123456789abcdef()0123456789abcdeX", ")0123456789abcdef\"\n#include \"p6.h\"\n"},
      {"#define A \"a.h\" \\\n", "\n#include \"p7.h\"\n"},
  };
  static const char *const names[] = {"n1.h", "n2.h", "p1.h", "p2.h", "p3.h",
                                      "p4.h", "p5.h", "p6.h", "p7.h", NULL};
  scan_result res;
  size_t i;
  char *text, want[8];
  (void)state;
  write_all(names);
  for (i = 0; i < CJ_COUNT(pieces); i++) {
    text = repeat(pieces[i][0], (size_t)2 << 20, pieces[i][1]);
    scan_linear(&res, text);
    free(text);
    memcpy(want, strstr(pieces[i][1], "#include \"") + 10, 4);
    want[4] = '\0';
    expect(&res, want, want[0] == 'p');
    cj_deplist_destroy(res.deps);
  }
}

/* Kernels using the toolkit's libraries (CUB, cuda::std, cuRAND, which include hundreds
 * of headers) compile with its include directories given explicitly, and are cached: a
 * second compile is a hit, from memory and from the disk (which scans again). */
static void toolkit_libraries(void **state) {
  static const char *const kernels[][2] = {
      {"cub.cu", "#include <cub/block/block_reduce.cuh>\n"
                 "__global__ void block_sum(const int *in, int *out) {\n"
                 "  using reduce = cub::BlockReduce<int, 128>;\n"
                 "  __shared__ typename reduce::TempStorage temp;\n"
                 "  int s = reduce(temp).Sum(in[threadIdx.x]);\n"
                 "  if (threadIdx.x == 0) *out = s;\n"
                 "}\n"},
      {"std.cu", "#include <cuda/std/limits>\n#include <cuda/std/type_traits>\n"
                 "#include <cuda/std/utility>\n"
                 "__global__ void top(float *x) {\n"
                 "  static_assert(cuda::std::is_same_v<float, decltype(x[0] + 1.0f)>, \"\");\n"
                 "  auto p = cuda::std::make_pair(cuda::std::numeric_limits<float>::max(), 1);\n"
                 "  x[threadIdx.x] = p.first;\n"
                 "}\n"},
      {"rand.cu", "#include <curand_kernel.h>\n"
                  "__global__ void noise(float *x, unsigned long long seed) {\n"
                  "  curandStatePhilox4_32_10_t st;\n"
                  "  curand_init(seed, threadIdx.x, 0, &st);\n"
                  "  x[threadIdx.x] = curand_uniform(&st);\n"
                  "}\n"},
  };
  const char *dirs[3] = {NULL, NULL, NULL};
  char cccl[4200];
  struct stat st;
  cujit_options o = ptx_options();
  size_t i, n = 0;
  (void)state;
  snprintf(cccl, sizeof cccl, "%s/cccl", CUJIT_CUDA_INCLUDE_DIR);
  if (stat(cccl, &st) == 0) dirs[n++] = cccl; /* CUDA 13 keeps CUB and libcu++ there */
  dirs[n] = CUJIT_CUDA_INCLUDE_DIR;
  o.include_dirs = dirs;
  log_capture(CUJIT_LOG_INFO); /* a bypass says why at this level */
  for (i = 0; i < CJ_COUNT(kernels); i++) {
    if (compile_count(kernels[i][1], kernels[i][0], &o) != 1)
      fail_msg("%s: not compiled once:\n%s", kernels[i][0], log_text);
    if (compile_count(kernels[i][1], kernels[i][0], &o) != 0)
      fail_msg("%s: no hit in memory:\n%s", kernels[i][0], log_text);
    cj_memcache_clear();
    if (compile_count(kernels[i][1], kernels[i][0], &o) != 0)
      fail_msg("%s: no hit on the disk:\n%s", kernels[i][0], log_text);
  }
  assert_not_logged("without the cache");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_spelling_of_a_directive, setup, teardown),
      cmocka_unit_test_setup_teardown(not_directives, setup, teardown),
      cmocka_unit_test_setup_teardown(quick_paths_find_the_same, setup, teardown),
      cmocka_unit_test_setup_teardown(search_order, setup, teardown),
      cmocka_unit_test_setup_teardown(options_that_change_the_search, setup, teardown),
      cmocka_unit_test_setup_teardown(toolkit_headers_are_not_tracked, setup, teardown),
      cmocka_unit_test_setup_teardown(what_cannot_be_keyed, setup, teardown),
      cmocka_unit_test_setup_teardown(odd_files, setup, teardown),
      cmocka_unit_test_setup_teardown(many_headers, setup, teardown),
      cmocka_unit_test_setup_teardown(directives_after_comments, setup, teardown),
      cmocka_unit_test_setup_teardown(literals, setup, teardown),
      cmocka_unit_test_setup_teardown(raw_strings, setup, teardown),
      cmocka_unit_test_setup_teardown(digit_separators, setup, teardown),
      cmocka_unit_test_setup_teardown(pathological_sources, setup, teardown),
      CACHE_TEST(toolkit_libraries),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
