/* test_cli - the command-line tool: exit codes and outputs. */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char *tmp;

/* Runs the CLI with `args` (a shell fragment) in the temp dir; captures stdout+stderr. */
static int cli(const char *args, const char *env, char *out, size_t size) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s 2>&1", tmp, env ? env : "", CUJIT_CLI_PATH,
           args);
  return test_capture(cmd, out, size);
}

static int setup(void **state) {
  (void)state;
  tmp = test_tempdir("cli");
  if (!tmp) return -1;
  test_write_file(tmp, "hdr.h", "#define FACTOR 31337\n");
  test_write_file(tmp, "ok.cu",
                  "#include \"hdr.h\"\n"
                  "__global__ void scale(float *x) { x[threadIdx.x] *= FACTOR + EXTRA; }\n");
  test_write_file(tmp, "bad.cu", "__global__ void k() {\n  int x = ;\n}\n");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  test_rmtree(tmp);
  free(tmp);
  return 0;
}

static char *slurp(const char *name) {
  static char buf[1 << 16];
  char path[4200];
  FILE *f;
  size_t n;
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  f = fopen(path, "rb");
  if (!f) return NULL;
  n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void help_and_version(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("--help", NULL, out, sizeof out), 0);
  assert_non_null(strstr(out, "usage: cujit"));
  assert_non_null(strstr(out, "compile FILE.cu"));
  assert_int_equal(cli("--version", NULL, out, sizeof out), 0);
  assert_non_null(strstr(out, CUJIT_VERSION_STRING));
  assert_int_equal(cli("", NULL, out, sizeof out), 2);
  assert_int_equal(cli("frobnicate", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "unknown command 'frobnicate'"));
}

/* --help lists every command; each command's help (after it, anywhere before '--', or
 * as 'help COMMAND') lists its options and exit statuses and runs nothing. */
static void help_of_each_command(void **state) {
  static const char *const commands[] = {"compile", "warm", "info", "cache", "explain", "verify"};
  char out[8192], args[128], line[64];
  size_t i;
  (void)state;
  assert_int_equal(cli("--help", NULL, out, sizeof out), 0);
  for (i = 0; i < sizeof commands / sizeof *commands; i++) {
    snprintf(line, sizeof line, "\n  %s ", commands[i]);
    if (!strstr(out, line)) fail_msg("cujit --help does not list '%s'", commands[i]);
  }
  for (i = 0; i < sizeof commands / sizeof *commands; i++) {
    snprintf(args, sizeof args, "%s --help", commands[i]);
    assert_int_equal(cli(args, NULL, out, sizeof out), 0);
    snprintf(line, sizeof line, "usage: cujit %s", commands[i]);
    if (!strstr(out, line) || !strstr(out, "\noptions:\n") || !strstr(out, "\nexit status:\n"))
      fail_msg("cujit %s --help printed:\n%s", commands[i], out);
  }
  assert_int_equal(cli("compile missing.cu -h", NULL, out, sizeof out), 0); /* not read */
  assert_non_null(strstr(out, "-I, --include-path DIR"));
  assert_int_equal(cli("help verify", NULL, out, sizeof out), 0);
  assert_non_null(strstr(out, "--sample N"));
  assert_int_equal(cli("cache --help", NULL, out, sizeof out), 0);
  assert_non_null(strstr(out, "--max-size N"));
  assert_int_equal(cli("help frobnicate", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "no help for 'frobnicate'"));
  /* after '--' it is NVRTC's: an option NVRTC does not know */
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch compute_80 -- --help", NULL, out,
                       sizeof out),
                   2);
}

static void compile_writes_ptx(void **state) {
  char out[8192], *ptx;
  (void)state;
  assert_int_equal(cli("compile ok.cu -D EXTRA=1 --arch compute_80", NULL, out, sizeof out), 0);
  ptx = slurp("ok.ptx");
  assert_non_null(ptx);
  assert_non_null(strstr(ptx, ".target sm_80"));
  assert_non_null(strstr(ptx, "scale"));
  assert_int_equal(cli("compile ok.cu -DEXTRA=2 --arch=compute_80 -o custom.ptx", NULL, out,
                       sizeof out),
                   0);
  assert_non_null(slurp("custom.ptx"));
  assert_int_equal(cli("compile ok.cu -DEXTRA=2 -o - -- -arch=compute_80", NULL, out, sizeof out),
                   0);
  assert_non_null(strstr(out, ".target sm_80"));
}

static void compile_writes_cubin(void **state) {
  char out[8192], *elf;
  (void)state;
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --cubin --arch sm_90", NULL, out, sizeof out), 0);
  elf = slurp("ok.cubin");
  assert_non_null(elf);
  assert_memory_equal(elf, "\177ELF", 4);
  /* a virtual arch has no CUBIN */
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --cubin --arch compute_90 -o x.cubin", NULL, out,
                       sizeof out),
                   2);
  assert_non_null(strstr(out, "--cubin needs a real architecture"));
}

static void include_dirs_from_cli(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(test_write_file(tmp, "inc.cu",
                                   "#include <sub.h>\n__global__ void k(int *x){x[0]=SUBVAL;}\n"),
                   0);
  assert_int_equal(system("true"), 0);
  {
    char d[4200];
    snprintf(d, sizeof d, "%s/incdir", tmp);
    mkdir(d, 0700);
    assert_int_equal(test_write_file(d, "sub.h", "#define SUBVAL 90210\n"), 0);
  }
  assert_int_equal(cli("compile inc.cu --arch compute_80 -o inc.ptx", NULL, out, sizeof out), 1);
  assert_int_equal(cli("compile inc.cu --arch compute_80 -I incdir -o inc.ptx", NULL, out,
                       sizeof out),
                   0);
  assert_non_null(strstr(slurp("inc.ptx"), "90210"));
}

static void compile_error_exits_1_with_log(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("compile bad.cu --arch compute_80", NULL, out, sizeof out), 1);
  assert_non_null(strstr(out, "bad.cu(2): error"));
  assert_int_equal(cli("compile missing.cu", NULL, out, sizeof out), 1);
  assert_non_null(strstr(out, "missing.cu"));
}

/* A FIFO, a directory or a file with a NUL byte is refused, never waited on or cut short.
 * `timeout` bounds the wait: a CLI that blocks fails the test instead of hanging it. */
static void odd_inputs_exit_1(void **state) {
  static const char nul[] = "__global__ void k(int *x) { *x = 1; }\n\0tail\n";
  char out[8192], path[4200];
  FILE *f;
  (void)state;
  snprintf(path, sizeof path, "%s/pipe.cu", tmp);
  assert_int_equal(mkfifo(path, 0600), 0);
  assert_int_equal(cli("compile pipe.cu --arch compute_80", "timeout 20", out, sizeof out), 1);
  assert_non_null(strstr(out, "'pipe.cu' is a FIFO (named pipe), not a regular file"));
  assert_int_equal(mkdir(strcat(strcpy(path, tmp), "/dir.cu"), 0700), 0);
  assert_int_equal(cli("compile dir.cu", "timeout 20", out, sizeof out), 1);
  assert_non_null(strstr(out, "'dir.cu' is a directory"));
  snprintf(path, sizeof path, "%s/nul.cu", tmp);
  f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(nul, 1, sizeof nul - 1, f);
  fclose(f);
  assert_int_equal(cli("compile nul.cu --arch compute_80", "timeout 20", out, sizeof out), 1);
  assert_non_null(strstr(out, "'nul.cu' holds a NUL byte at offset 38"));
}

/* Suffixed targets: 'a' from 90 on, 'f' from 100 on; others are bad usage. */
static void arch_suffixes(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch sm_80a", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "'a' suffix needs 90 or newer"));
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch compute_90f", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "'f' suffix needs 100 or newer"));
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch sm_90a -o a.ptx", NULL, out, sizeof out), 0);
  assert_non_null(strstr(slurp("a.ptx"), ".target sm_90a"));
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch compute_100f -o f.ptx", NULL, out,
                       sizeof out),
                   0);
  assert_non_null(strstr(slurp("f.ptx"), ".target sm_100f"));
}

/* --time-limit: a compile that runs longer fails (exit 1) and says so; a bad value is bad
 * usage. The kernel is cheap to parse and dear to optimise, so NVRTC checks the limit
 * long before it would finish. */
static void time_limit_from_cli(void **state) {
  char out[8192], ptx[4200];
  (void)state;
  assert_int_equal(test_write_file(tmp, "slow.cu",
                                   "template <int N> __global__ void slow(float *x) {\n"
                                   "  float a = x[0], b = x[1];\n"
                                   "#pragma unroll\n"
                                   "  for (int i = 0; i < N; i++) {\n"
                                   "    a = sinf(a * b + i) + cosf(b - a * i);\n"
                                   "    b = expf(a * 0.001f) * b + (float)i;\n"
                                   "  }\n"
                                   "  x[0] = a + b;\n"
                                   "}\n"
                                   "template __global__ void slow<60>(float *);\n"
                                   "template __global__ void slow<61>(float *);\n"),
                   0);
  assert_int_equal(cli("compile slow.cu --arch compute_75 --time-limit 0.05 -o slow.ptx", NULL, out,
                       sizeof out),
                   1);
  assert_non_null(strstr(out, "compiling 'slow.cu' was stopped: its time limit of 0.05 s"));
  snprintf(ptx, sizeof ptx, "%s/slow.ptx", tmp);
  assert_int_equal(access(ptx, F_OK), -1);
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch compute_80 --time-limit=0 -o t.ptx", NULL,
                       out, sizeof out),
                   0);
  assert_int_equal(cli("compile ok.cu --time-limit", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "--time-limit needs a number of seconds"));
  assert_int_equal(cli("compile ok.cu --time-limit -1", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "the time limit must be a number of seconds"));
  assert_non_null(strstr(out, "not '-1'"));
  assert_int_equal(cli("compile ok.cu --time-limit=1s", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "not '1s'"));
  assert_int_equal(cli("compile ok.cu --time-limit nan", NULL, out, sizeof out), 2);
}

static void bad_usage_exits_2(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("compile", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "needs a .cu file"));
  assert_int_equal(cli("compile ok.cu --bogus", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "unknown option '--bogus'"));
  assert_int_equal(cli("compile ok.cu -o", NULL, out, sizeof out), 2);
  assert_int_equal(cli("compile ok.cu bad.cu -o x.ptx", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "-o takes one input file"));
  assert_int_equal(cli("compile ok.cu -j 0", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "jobs must be 1 to 1024"));
  assert_int_equal(cli("compile ok.cu --cache-only --no-cache", NULL, out, sizeof out), 2);
  assert_int_equal(cli("warm", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "warm needs a directory"));
  assert_int_equal(cli("warm . extra", NULL, out, sizeof out), 2);
  assert_int_equal(cli("warm . --no-cache", NULL, out, sizeof out), 2);
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch sm_1", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "not supported"));
  assert_int_equal(cli("compile ok.cu -DEXTRA=1 --arch compute_80 -- -no-such-flag", NULL, out,
                       sizeof out),
                   2);
  assert_non_null(strstr(out, "-no-such-flag"));
  assert_int_equal(cli("info one two", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "info takes at most one file"));
  assert_int_equal(cli("compile ok.cu --bundle", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "--bundle needs its targets"));
  assert_int_equal(cli("compile ok.cu --cubin --arch sm_80,sm_90", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "a bundle (--arch with several targets"));
  assert_int_equal(cli("compile ok.cu --arch sm_80,,sm_90", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "--arch has an empty target"));
  assert_int_equal(cli("compile ok.cu --arch sm_80,sm_80", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "target 'sm_80' is given twice"));
  assert_int_equal(cli("warm --bundle", NULL, out, sizeof out), 2);
  assert_non_null(strstr(out, "warm --bundle takes one bundle file"));
}

/* Several files: each compiled in a child process, -j at a time; outputs named after
 * their inputs; a failure is counted and the others still compile. Not a terminal: no
 * progress line. */
static void compile_many_files(void **state) {
  char out[8192], *ptx;
  (void)state;
  test_write_file(tmp, "m1.cu", "__global__ void one(int *x) { x[0] = 101; }\n");
  test_write_file(tmp, "m2.cu", "__global__ void two(int *x) { x[0] = 202; }\n");
  assert_int_equal(cli("compile m1.cu m2.cu -j 2 --arch compute_80", NULL, out, sizeof out), 0);
  assert_string_equal(out, "");
  assert_non_null(ptx = slurp("m1.ptx"));
  assert_non_null(strstr(ptx, "101"));
  assert_non_null(ptx = slurp("m2.ptx"));
  assert_non_null(strstr(ptx, "202"));
  assert_int_equal(cli("compile m1.cu bad.cu m2.cu --arch compute_80", NULL, out, sizeof out), 1);
  assert_non_null(strstr(out, "1 of 3 files did not compile"));
  assert_null(strstr(out, "done,")); /* no progress line off a terminal */
}

/* warm compiles every .cu under a directory into the cache and writes no output. */
static void warm_fills_the_cache(void **state) {
  char out[8192], env[4300], dir[4200];
  (void)state;
  snprintf(dir, sizeof dir, "%s/w", tmp);
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(dir, sizeof dir, "%s/w/sub", tmp);
  assert_int_equal(mkdir(dir, 0700), 0);
  test_write_file(tmp, "w/warm_a.cu", "__global__ void wa(int *x) { x[0] = 1; }\n");
  test_write_file(tmp, "w/sub/b.cu", "__global__ void wb(int *x) { x[0] = 2; }\n");
  test_write_file(tmp, "w/sub/notes.txt", "not a kernel\n");
  snprintf(env, sizeof env, "CUJIT_CACHE_DIR='%s/warmcache'", tmp);
  assert_int_equal(cli("warm w --arch compute_80 -j 2", env, out, sizeof out), 0);
  assert_int_equal(cli("cache stats", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "compiles          2"));
  assert_null(slurp("warm_a.ptx"));
  assert_int_equal(cli("warm w --arch compute_80", env, out, sizeof out), 0); /* all hits */
  assert_int_equal(cli("cache stats", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "compiles          2"));
  /* several targets: each file for each of them (two more targets: four compiles more) */
  assert_int_equal(cli("warm w --arch compute_80,sm_80,sm_90", env, out, sizeof out), 0);
  assert_int_equal(cli("cache stats", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "compiles          6"));
  assert_int_equal(cli("warm nowhere", env, out, sizeof out), 1);
}

static void info_without_driver(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("info", "CUJIT_LIBCUDA=/nonexistent/libcuda.so.1", out, sizeof out), 0);
  assert_non_null(strstr(out, "cujit " CUJIT_VERSION_STRING));
  assert_non_null(strstr(out, "NVRTC "));
  assert_non_null(strstr(out, "sm_90"));
  assert_non_null(strstr(out, "driver: no CUDA driver found"));
  assert_null(strstr(out, "CUJIT_LOG"));
  /* a CUJIT_LOG that is not a level, which leaves the log off, is named (escaped) */
  assert_int_equal(cli("info", "CUJIT_LIBCUDA=/nonexistent/libcuda.so.1 CUJIT_LOG='debug\n'", out,
                       sizeof out),
                   0);
  assert_non_null(strstr(out, "log: off: CUJIT_LOG='debug\\x0a' is not a log level"));
  assert_int_equal(cli("info", "CUJIT_LIBCUDA=/nonexistent/libcuda.so.1 CUJIT_LOG='verbose%n'", out,
                       sizeof out),
                   0);
  assert_non_null(strstr(out, "CUJIT_LOG='verbose%n' is not a log level"));
}

static size_t count_of(const char *text, const char *what) {
  size_t n = 0;
  for (; (text = strstr(text, what)); text++) n++;
  return n;
}

/* Many files compile in children of the command, which read one environment: what is
 * wrong with it is said once, not once a child. */
static void many_files_warn_once(void **state) {
  char out[16384];
  (void)state;
  test_write_file(tmp, "two.cu", "__global__ void two(float *x) { x[0] = 2; }\n");
  test_write_file(tmp, "three.cu", "__global__ void three(float *x) { x[0] = 3; }\n");
  assert_int_equal(cli("compile two.cu three.cu bad.cu -j 3 --arch compute_80",
                       "CUJIT_LOG=warn CUJIT_ERRORS=bogus CUJIT_STAGING_MIN=lots", out, sizeof out),
                   1);
  if (count_of(out, "CUJIT_ERRORS='bogus' is not") != 1 ||
      count_of(out, "CUJIT_STAGING_MIN='lots' is not") != 1 || !strstr(out, "did not compile"))
    fail_msg("%s", out);
}

/* The command reports every failure itself: CUJIT_ERRORS=exit, which ends a program at its
 * first failing call, changes nothing (info asks a missing driver; compile fails). */
static void errors_env_changes_nothing(void **state) {
  char out[8192];
  (void)state;
  assert_int_equal(cli("info", "CUJIT_LIBCUDA=/nonexistent/libcuda.so.1 CUJIT_ERRORS=exit", out,
                       sizeof out),
                   0);
  assert_non_null(strstr(out, "driver: no CUDA driver found"));
  assert_int_equal(cli("compile bad.cu --arch compute_80", "CUJIT_ERRORS=exit", out, sizeof out),
                   1);
  assert_non_null(strstr(out, "did not compile"));
  assert_null(strstr(out, "CUJIT_ERROR_COMPILE"));
}

/* A bundle's own strings (its name and options) reach the terminal escaped: a control
 * character or a byte that is not UTF-8 shows as \x1b, never as itself. */
static void info_escapes_a_bundles_strings(void **state) {
  static const char *const archs[] = {"compute_80"};
  static const char *const defines[] = {"TITLE=\x1b]0;owned\x07", "LATIN=\xe9t\xc3\xa9", NULL};
  cujit_options o = CUJIT_OPTIONS_INIT;
  char out[8192], path[4200];
  void *b = NULL;
  size_t size = 0;
  FILE *f;
  (void)state;
  o.defines = defines;
  assert_ok(cujit_bundle_from_source(&b, &size, "__global__ void k(int *x) { *x = 1; }\n",
                                     "two\nlines\x1b[2J.cu", &o, archs, 1));
  snprintf(path, sizeof path, "%s/odd.bundle", tmp);
  assert_non_null(f = fopen(path, "wb"));
  assert_int_equal(fwrite(b, 1, size, f), size);
  fclose(f);
  cujit_free(b);
  assert_int_equal(cli("info odd.bundle", NULL, out, sizeof out), 0);
  assert_non_null(strstr(out, "options      name 'two\\x0alines\\x1b[2J.cu' "
                              "-DTITLE=\\x1b]0;owned\\x07 -DLATIN=\\xe9t\xc3\xa9\n"));
  assert_null(strchr(out, '\x1b'));
  assert_null(strchr(out, '\x07'));
}

/* ---- another user's file and the terminal ---- */

/* A name with ESC (a colour, and a title set and rung with BEL), CR and a byte that is not
 * UTF-8, and a source whose bad line NVRTC quotes in its log, holding the same. */
#define HOSTILE_NAME "evil\x1b[31m\r\a\xff.cu"
#define HOSTILE_SHOWN "evil\\x1b[31m\\x0d\\x07\\xff.cu"
static const char kHostile[] = "__global__ void k(int *p) {\n"
                               "  p[0] = not_declared; /* \x1b]0;owned\x07\x1b[2J \x9b"
                               "2J \xff */\n"
                               "}\n";
static const char kHostileOk[] = "__global__ void k(int *p) { p[0] = 1; } /* \x1b[2J */\n";

/* Nothing in `out` that a terminal acts on: no control character but the newline and the
 * tab, and no byte that is not valid UTF-8 (escaped, they show as \x1b, \xff). `allowed`
 * ESC sequences (the command's own progress line) are skipped. */
static void assert_terminal_safe(const char *out, const char *allowed) {
  const unsigned char *p = (const unsigned char *)out;
  while (*p) {
    if (allowed && strncmp((const char *)p, allowed, strlen(allowed)) == 0) {
      p += strlen(allowed);
      continue;
    }
    if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || *p >= 0xf5 ||
        (*p >= 0x80 && *p < 0xc2))
      fail_msg("byte 0x%02x at offset %d reached the terminal raw:\n%s", *p,
               (int)(p - (const unsigned char *)out), out);
    p++;
  }
}

/* Every path from the command to the terminal escapes: compile's message and NVRTC's log,
 * warm's failures, explain's and verify's lines, cache list's names, info's name, and
 * the log (CUJIT_LOG=debug) the library writes to stderr. */
static void names_and_logs_reach_the_terminal_escaped(void **state) {
  char out[16384], env[4400], dir[4200];
  (void)state;
  snprintf(dir, sizeof dir, "%s/hostile", tmp);
  assert_int_equal(mkdir(dir, 0700), 0);
  assert_int_equal(test_write_file(dir, HOSTILE_NAME, kHostile), 0);
  assert_int_equal(test_write_file(tmp, HOSTILE_NAME, kHostileOk), 0);
  snprintf(env, sizeof env, "CUJIT_CACHE_DIR='%s/hostilecache' CUJIT_LIBCUDA=/nonexistent/x.so",
           tmp);
  /* compile: the message, NVRTC's log and its quote of the bad line */
  assert_int_equal(cli("compile hostile/evil* --arch compute_80", env, out, sizeof out), 1);
  assert_non_null(strstr(out, HOSTILE_SHOWN "(2): error"));
  assert_non_null(strstr(out, "\\x1b]0;owned\\x07\\x1b[2J"));
  assert_terminal_safe(out, NULL);
  /* with the log on, at its most verbose */
  snprintf(env, sizeof env,
           "CUJIT_CACHE_DIR='%s/hostilecache' CUJIT_LIBCUDA=/nonexistent/x.so CUJIT_LOG=debug",
           tmp);
  assert_int_equal(cli("compile hostile/evil* --arch compute_80", env, out, sizeof out), 1);
  assert_non_null(strstr(out, "cujit: debug: "));
  assert_terminal_safe(out, NULL);
  /* warm: each file's failure */
  assert_int_equal(cli("warm hostile --arch compute_80", env, out, sizeof out), 1);
  assert_non_null(strstr(out, HOSTILE_SHOWN));
  assert_terminal_safe(out, NULL);
  /* a file that compiles, then explain, verify, the cache's list and info */
  snprintf(env, sizeof env, "CUJIT_CACHE_DIR='%s/hostilecache' CUJIT_LIBCUDA=/nonexistent/x.so",
           tmp);
  assert_int_equal(cli("compile evil* --arch compute_80 -o good.ptx", env, out, sizeof out), 0);
  assert_int_equal(cli("explain evil* --arch compute_80", env, out, sizeof out), 0);
  assert_terminal_safe(out, NULL);
  assert_int_equal(cli("explain evil* --arch compute_80 -DX=1", env, out, sizeof out), 0);
  assert_non_null(strstr(out, HOSTILE_SHOWN));
  assert_terminal_safe(out, NULL);
  assert_int_equal(cli("verify --all", env, out, sizeof out), 0);
  assert_non_null(strstr(out, HOSTILE_SHOWN));
  assert_terminal_safe(out, NULL);
  assert_int_equal(cli("cache list", env, out, sizeof out), 0);
  assert_non_null(strstr(out, HOSTILE_SHOWN));
  assert_terminal_safe(out, NULL);
  assert_int_equal(cli("info good.ptx", env, out, sizeof out), 0);
  assert_terminal_safe(out, NULL);
  assert_int_equal(cli("info evil*", env, out, sizeof out), 1); /* CUDA C is no image */
  assert_non_null(strstr(out, HOSTILE_SHOWN));
  assert_terminal_safe(out, NULL);
  /* a usage error quoting an argument */
  assert_int_equal(cli("compile --\"$(printf '\\033[2J')\"", env, out, sizeof out), 2);
  assert_terminal_safe(out, NULL);
}

/* On a terminal, compiling many files draws a progress line with the command's own
 * controls (CR, ESC [K) and nothing else raw: a failing file's name and log are escaped. */
static void progress_line_is_the_only_control(void **state) {
  char out[16384], cmd[9000], *p, *q;
  (void)state;
  if (access("/usr/bin/script", X_OK) != 0) {
    test_skip_part("script(1) is not installed (util-linux): no terminal to run the command on");
    skip();
  }
  snprintf(cmd, sizeof cmd,
           "cd '%s' && script -qec \"'%s' compile ok.cu hostile/evil* --arch compute_80 "
           "-DEXTRA=1 -j 1\" /dev/null",
           tmp, CUJIT_CLI_PATH);
  assert_int_equal(test_capture(cmd, out, sizeof out), 1);
  for (p = q = out; *p; p++) /* the terminal ends each line with CR LF */
    if (!(p[0] == '\r' && p[1] == '\n')) *q++ = *p;
  *q = '\0';
  assert_non_null(strstr(out, "\r\x1b[Kcujit: 2/2 done, 1 failed"));
  assert_non_null(strstr(out, HOSTILE_SHOWN "(2): error"));
  assert_terminal_safe(out, "\r\x1b[K");
}

/* Nothing in the command writes to a stream but output.c, which escapes: a call added
 * elsewhere that prints would bypass it. */
static void only_output_c_prints(void **state) {
  static const char *const files[] = {"main.c",        "help.c",       "args.c",
                                      "cmd_compile.c", "cmd_bundle.c", "cmd_cache.c",
                                      "cmd_explain.c"};
  static const char *const calls[] = {"printf(",  "fputs(", "fputc(",  "puts(",
                                      "putchar(", "putc(",  "fwrite(", "perror("};
  size_t i, j;
  (void)state;
  for (i = 0; i < sizeof files / sizeof *files; i++) {
    char path[4200], *text;
    FILE *f;
    long n;
    snprintf(path, sizeof path, "%s/src/cli/%s", CUJIT_SOURCE_DIR, files[i]);
    assert_non_null(f = fopen(path, "rb"));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    assert_non_null(text = calloc(1, (size_t)n + 1));
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    for (j = 0; j < sizeof calls / sizeof *calls; j++) {
      const char *at = text;
      while ((at = strstr(at, calls[j])) != NULL) {
        char before = at > text ? at[-1] : ' ';
        if (!(before == '_' || (before >= 'a' && before <= 'z')))
          fail_msg("src/cli/%s calls %s: print through cli_print() (output.c) instead", files[i],
                   calls[j]);
        at++;
      }
    }
    free(text);
  }
}

static void explain_and_verify(void **state) {
  char out[8192], env[4300];
  (void)state;
  snprintf(env, sizeof env, "CUJIT_CACHE_DIR='%s/excache' CUJIT_LIBCUDA=/nonexistent/x.so", tmp);
  assert_int_equal(cli("explain ok.cu --arch compute_80 -DEXTRA=1", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "result    miss: a compile (NVRTC) would serve it"));
  assert_non_null(strstr(out, "nearest   none"));
  assert_int_equal(cli("compile ok.cu --arch compute_80 -DEXTRA=1 --cache-only", env, out,
                       sizeof out),
                   0);
  assert_int_equal(cli("explain ok.cu --arch compute_80 -DEXTRA=1", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "result    hit: the disk cache would serve it"));
  assert_int_equal(cli("explain ok.cu --arch compute_80 -DEXTRA=2", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "result    miss"));
  assert_non_null(strstr(out, "defines"));
  assert_non_null(strstr(out, "define 'EXTRA=2' is given now"));
  assert_int_equal(cli("verify --all", env, out, sizeof out), 0);
  assert_non_null(strstr(out, "match "));
  assert_non_null(strstr(out, "1 verified of 1 entries: 1 matched"));
  test_write_file(tmp, "hdr.h", "#define FACTOR 4\n");
  assert_int_equal(cli("verify --sample 3", env, out, sizeof out), 0); /* skipped, not failed */
  assert_non_null(strstr(out, "skipped"));
  assert_non_null(strstr(out, "header 'hdr.h' changed"));
  test_write_file(tmp, "hdr.h", "#define FACTOR 31337\n");
  assert_int_equal(cli("explain", env, out, sizeof out), 2);
  assert_int_equal(cli("explain ok.cu bad.cu", env, out, sizeof out), 2);
  assert_non_null(strstr(out, "explain takes one .cu file"));
  assert_int_equal(cli("explain missing.cu", env, out, sizeof out), 1);
  assert_int_equal(cli("verify --sample 0", env, out, sizeof out), 2);
  assert_int_equal(cli("verify --bogus", env, out, sizeof out), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(help_and_version),
      cmocka_unit_test(help_of_each_command),
      cmocka_unit_test(compile_writes_ptx),
      cmocka_unit_test(compile_writes_cubin),
      cmocka_unit_test(include_dirs_from_cli),
      cmocka_unit_test(compile_error_exits_1_with_log),
      cmocka_unit_test(odd_inputs_exit_1),
      cmocka_unit_test(arch_suffixes),
      cmocka_unit_test(time_limit_from_cli),
      cmocka_unit_test(bad_usage_exits_2),
      cmocka_unit_test(compile_many_files),
      cmocka_unit_test(warm_fills_the_cache),
      cmocka_unit_test(info_without_driver),
      cmocka_unit_test(info_escapes_a_bundles_strings),
      cmocka_unit_test(explain_and_verify),
      cmocka_unit_test(errors_env_changes_nothing),
      cmocka_unit_test(many_files_warn_once),
      cmocka_unit_test(names_and_logs_reach_the_terminal_escaped),
      cmocka_unit_test(progress_line_is_the_only_control),
      cmocka_unit_test(only_output_c_prints),
  };
  return test_group_result(cmocka_run_group_tests(tests, setup, teardown));
}
