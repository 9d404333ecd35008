/* cli.h - pieces shared by the command-line tool's commands. */
#ifndef CUJIT_CLI_H
#define CUJIT_CLI_H

#include "cujit.h"

#define CJ_CLI_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Prints "cujit: <message>" and a hint to stderr; returns 2 (bad usage). fmt has one %s. */
int cli_usage_error(const char *fmt, const char *arg);
/* Prints the thread's last cujit error after "what"; returns 1. */
int cli_fail(const char *what);

/* cache.c */
int cli_cache(int argc, char **argv);
void cli_print_cache_line(void);

#endif
