/* cli.h - pieces shared by the command-line tool's commands. */
#ifndef CUJIT_CLI_H
#define CUJIT_CLI_H

#include <stdio.h>

#include "cujit.h"

#define CJ_CLI_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* output.c: prints as fprintf does, with control characters and bytes that are not UTF-8
 * escaped (\x1b; a newline, a tab and a CR before a newline pass): everything the command
 * prints goes through it, so that a name or a log from outside never acts on the
 * terminal. */
void cli_print(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes the command's own terminal controls (the progress line's "\r\033[K") as they are. */
void cli_raw(FILE *f, const char *controls);
/* output.c: prints "cujit: <message>" and a hint to stderr; returns 2 (bad usage). fmt
 * has one %s. */
int cli_usage_error(const char *fmt, const char *arg);
/* Prints the thread's last cujit error after "what"; returns 1. */
int cli_fail(const char *what);

/* help.c: prints the help of `command` (NULL: of cujit and all its commands); 0, or -1
 * when no command has that name. */
int cli_help(FILE *f, const char *command);
/* 1 when -h or --help is among the arguments (before any "--"). */
int cli_asks_help(int argc, char **argv);

/* args.c: what 'cujit compile' (and 'cujit warm') was asked to do. The lists point into
 * argv; `inputs`, `includes` and `defines` must have room for argc entries (and stay
 * NULL-terminated if zeroed). */
typedef struct compile_args {
  const char **inputs;
  size_t n_inputs;
  const char *output, *arch;
  int cubin;
  int kind_given;      /* --ptx or --cubin was given */
  int bundle;          /* write a bundle: --bundle, or --arch with several targets */
  int cache_only;      /* compile into the cache, write no output file */
  int jobs;            /* files compiled at once (0: one per processor) */
  double time_limit_s; /* seconds each compile may take (0: no limit) */
  const char **includes, **defines, **nvrtc;
  size_t n_includes, n_defines, n_nvrtc;
  unsigned flags;
  char error[512]; /* the usage error, when parsing fails */
} compile_args;

/* Parses argv (the words after "compile"). Returns 0, or 2 with the reason in c->error.
 * `need_input`: at least one input file is required (compile) or none is allowed (the
 * options of warm, whose directory is parsed by the caller). */
int cli_parse_compile(int argc, char **argv, compile_args *c);
int cli_parse_options(int argc, char **argv, compile_args *c, int need_input);

/* cmd_compile.c: compiles several files, `jobs` at once in child processes, with progress on a
 * terminal. Returns 0 when all compiled, else 1 (each failure printed). */
int cli_compile_many(const compile_args *c, const char *const *files, size_t n);
/* Every .cu file under `dir` (sorted), into a list freed with cli_free_sources(). 0, or 1
 * after printing why. */
int cli_find_sources(const char *dir, char ***files, size_t *n);
void cli_free_sources(char **files, size_t n);
/* cmd_compile.c: compiles one file as 'cujit compile' does; 0, 1 or 2. */
int cli_run_compile(const compile_args *c, const char *input);

/* cmd_explain.c: 'cujit explain' and 'cujit verify'; exit status as main's (verify: 1 when an
 * entry did not reproduce). */
int cli_explain(int argc, char **argv);
int cli_verify(int argc, char **argv);

/* output.c: writes the bytes to `path` ("-" for stdout); 0, or 1 after printing why. */
int cli_write_output(const char *path, const void *data, size_t size);
/* FILE's base name with its extension replaced by ext (malloc'd), or NULL. */
char *cli_default_output(const char *input, const char *ext);

/* cmd_bundle.c: 'cujit compile --arch A,B,...' for one file (0, 1 or 2); 'cujit info FILE';
 * 'cujit warm --bundle FILE'. */
int cli_run_bundle(const compile_args *c, const char *input);
int cli_info_file(const char *path);
int cli_warm_bundle(int argc, char **argv);

/* cmd_cache.c: 'cujit cache', and the cache line of 'cujit info'. */
int cli_cache(int argc, char **argv);
void cli_print_cache_line(void);

#endif
