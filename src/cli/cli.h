/* cli.h - pieces shared by the command-line tool's commands. */
#ifndef CUJIT_CLI_H
#define CUJIT_CLI_H

#include "cujit.h"

#define CJ_CLI_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Prints "cujit: <message>" and a hint to stderr; returns 2 (bad usage). fmt has one %s. */
int cli_usage_error(const char *fmt, const char *arg);
/* Prints the thread's last cujit error after "what"; returns 1. */
int cli_fail(const char *what);

/* args.c: what 'cujit compile' was asked to do. The lists point into argv; `includes` and
 * `defines` must have room for argc entries (and stay NULL-terminated if zeroed). */
typedef struct compile_args {
  const char *input, *output, *arch;
  int cubin;
  const char **includes, **defines, **nvrtc;
  size_t n_includes, n_defines, n_nvrtc;
  unsigned flags;
  char error[512]; /* the usage error, when parsing fails */
} compile_args;

/* Parses argv (the words after "compile"). Returns 0, or 2 with the reason in c->error. */
int cli_parse_compile(int argc, char **argv, compile_args *c);

/* cache.c */
int cli_cache(int argc, char **argv);
void cli_print_cache_line(void);

#endif
