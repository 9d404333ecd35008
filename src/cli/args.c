/* args.c - parsing the arguments of 'cujit compile' (kept apart so it can be fuzzed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Records a usage error in c->error; returns 2 (bad usage). fmt has one %s. */
static int bad(compile_args *c, const char *fmt, const char *arg) {
  snprintf(c->error, sizeof c->error, fmt, arg);
  return 2;
}

/* The value of "-X VALUE", "-XVALUE", "--long VALUE" or "--long=VALUE"; NULL if none. */
static const char *option_value(int argc, char **argv, int *i, const char *shrt, const char *lng) {
  const char *a = argv[*i];
  size_t n;
  if (shrt && strncmp(a, shrt, strlen(shrt)) == 0) {
    if (a[strlen(shrt)]) return a + strlen(shrt);
    return *i + 1 < argc ? argv[++*i] : NULL;
  }
  n = strlen(lng);
  if (strncmp(a, lng, n) == 0 && a[n] == '=') return a + n + 1;
  if (strcmp(a, lng) == 0) return *i + 1 < argc ? argv[++*i] : NULL;
  return NULL;
}

static int is_option(const char *a, const char *shrt, const char *lng) {
  size_t n = strlen(lng);
  if (shrt && strncmp(a, shrt, strlen(shrt)) == 0) return 1;
  return strncmp(a, lng, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

static int parse_jobs(compile_args *c, const char *opt, const char *v) {
  char *end;
  long n;
  if (!v) return bad(c, "%s needs a number of jobs", opt);
  n = strtol(v, &end, 10);
  if (*end || end == v || n < 1 || n > 1024) return bad(c, "jobs must be 1 to 1024, not '%s'", v);
  c->jobs = (int)n;
  return 0;
}

/* Seconds a compile may take: a decimal number, 0 for no limit. */
static int parse_time_limit(compile_args *c, const char *opt, const char *v) {
  char *end;
  double s;
  if (!v) return bad(c, "%s needs a number of seconds (e.g. 30, 0.5; 0 for no limit)", opt);
  s = strtod(v, &end);
  if (*end || end == v || !isfinite(s) || s < 0)
    return bad(c,
               "the time limit must be a number of seconds (e.g. 30, 0.5; 0 for no "
               "limit), not '%s'",
               v);
  c->time_limit_s = s;
  return 0;
}

int cli_parse_options(int argc, char **argv, compile_args *c, int need_input) {
  int i;
  const char *v;
  for (i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      c->nvrtc = (const char **)argv + i + 1;
      c->n_nvrtc = (size_t)(argc - i - 1);
      break;
    } else if (strcmp(a, "--ptx") == 0) {
      c->cubin = 0;
      c->kind_given = 1;
    } else if (strcmp(a, "--cubin") == 0) {
      c->cubin = 1;
      c->kind_given = 1;
    } else if (strcmp(a, "--bundle") == 0) {
      c->bundle = 1;
    } else if (strcmp(a, "--no-cache") == 0) {
      c->flags |= CUJIT_OPT_NO_CACHE;
    } else if (strcmp(a, "--cache-only") == 0) {
      c->cache_only = 1;
    } else if (is_option(a, "-j", "--jobs")) {
      if (parse_jobs(c, a, option_value(argc, argv, &i, "-j", "--jobs")) != 0) return 2;
    } else if (is_option(a, NULL, "--time-limit")) {
      if (parse_time_limit(c, a, option_value(argc, argv, &i, NULL, "--time-limit")) != 0) return 2;
    } else if (is_option(a, "-o", "--output")) {
      if (!(v = option_value(argc, argv, &i, "-o", "--output")))
        return bad(c, "%s needs a file name", a);
      c->output = v;
    } else if (is_option(a, NULL, "--arch")) {
      if (!(v = option_value(argc, argv, &i, NULL, "--arch")))
        return bad(c, "%s needs an architecture (sm_90, compute_90)", a);
      c->arch = v;
    } else if (is_option(a, "-I", "--include-path")) {
      if (!(v = option_value(argc, argv, &i, "-I", "--include-path")))
        return bad(c, "%s needs a directory", a);
      c->includes[c->n_includes++] = v;
    } else if (is_option(a, "-D", "--define")) {
      if (!(v = option_value(argc, argv, &i, "-D", "--define")))
        return bad(c, "%s needs NAME or NAME=VALUE", a);
      c->defines[c->n_defines++] = v;
    } else if (a[0] == '-' && a[1]) {
      return bad(c, "unknown option '%s' (NVRTC options go after '--')", a);
    } else if (!need_input) {
      return bad(c, "unexpected argument '%s' (one directory, then options)", a);
    } else {
      c->inputs[c->n_inputs++] = a;
    }
  }
  if (need_input && !c->n_inputs) return bad(c, "%s", "compile needs a .cu file");
  if (c->output && c->n_inputs > 1)
    return bad(c,
               "%s takes one input file; with several, each output is named after its "
               "input (or use --cache-only)",
               "-o");
  if (c->flags & CUJIT_OPT_NO_CACHE && c->cache_only)
    return bad(c, "%s", "--cache-only and --no-cache together would do nothing");
  if (c->arch && strchr(c->arch, ',')) c->bundle = 1;
  if (c->bundle && !c->arch)
    return bad(c, "%s needs its targets: --arch sm_80,sm_90,...", "--bundle");
  if (c->bundle && c->kind_given)
    return bad(c,
               "%s writes one target's code; a bundle (--arch with several targets, or "
               "--bundle) holds CUBINs and PTX",
               c->cubin ? "--cubin" : "--ptx");
  return 0;
}

int cli_parse_compile(int argc, char **argv, compile_args *c) {
  return cli_parse_options(argc, argv, c, 1);
}
