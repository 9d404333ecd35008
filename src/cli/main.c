/* cujit - command-line front end: compile ahead of time, show the setup, manage the cache.
 * Exit status: 0 success, 1 failure (compile error, unreadable file, ...), 2 bad usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* ---- compile ---- */

/* Room for the parsed lists: inputs, -I and -D values are at most argc each, +1 each for
 * the NULL terminators. Returns the block to free, or NULL. */
static const char **alloc_lists(int argc, compile_args *c) {
  const char **lists = calloc(3 * ((size_t)argc + 1), sizeof *lists);
  memset(c, 0, sizeof *c);
  if (!lists) return NULL;
  c->inputs = lists;
  c->includes = lists + argc + 1;
  c->defines = lists + 2 * ((size_t)argc + 1);
  return lists;
}

static int cmd_compile(int argc, char **argv) {
  compile_args c;
  const char **lists = alloc_lists(argc, &c);
  int rc;
  if (!lists) return cli_print(stderr, "cujit: out of memory\n"), 1;
  rc = cli_parse_compile(argc, argv, &c);
  if (rc != 0)
    cli_usage_error("%s", c.error);
  else if (c.n_inputs == 1)
    rc = cli_run_compile(&c, c.inputs[0]); /* c.nvrtc: NULL-terminated */
  else
    rc = cli_compile_many(&c, c.inputs, c.n_inputs);
  free(lists);
  return rc;
}

static int cmd_warm(int argc, char **argv) {
  compile_args c;
  const char **lists;
  char **files = NULL;
  size_t n = 0;
  int rc;
  if (argc >= 1 && strcmp(argv[0], "--bundle") == 0) return cli_warm_bundle(argc - 1, argv + 1);
  if (argc < 1 || argv[0][0] == '-')
    return cli_usage_error("%s", "warm needs a directory (or --bundle FILE)");
  if (!(lists = alloc_lists(argc, &c))) return cli_print(stderr, "cujit: out of memory\n"), 1;
  rc = cli_parse_options(argc - 1, argv + 1, &c, 0);
  if (rc != 0) {
    cli_usage_error("%s", c.error);
  } else if (c.flags & CUJIT_OPT_NO_CACHE) {
    rc = cli_usage_error("%s", "warm fills the cache; --no-cache makes no sense here");
  } else if ((rc = cli_find_sources(argv[0], &files, &n)) == 0) {
    c.cache_only = 1;
    rc = n ? cli_compile_many(&c, (const char *const *)files, n) : 0;
    if (!n) cli_print(stderr, "cujit: no .cu files under '%s'\n", argv[0]);
  }
  cli_free_sources(files, n);
  free(lists);
  return rc;
}

/* ---- info ---- */

static void print_archs(void) {
  int archs[64], maj = 0, min = 0;
  size_t n = 0, i;
  if (cujit_nvrtc_get_version(&maj, &min) != CUJIT_OK) {
    cli_print(stdout, "NVRTC: unavailable (%s)\n", cujit_last_error());
    return;
  }
  cli_print(stdout, "NVRTC %d.%d (%s), architectures:", maj, min,
            cujit_nvrtc_path()[0] ? cujit_nvrtc_path() : "found by the system's library search");
  if (cujit_nvrtc_get_archs(archs, CJ_CLI_COUNT(archs), &n) == CUJIT_OK)
    for (i = 0; i < n && i < CJ_CLI_COUNT(archs); i++) cli_print(stdout, " sm_%d", archs[i]);
  cli_print(stdout, "\n");
}

static void print_driver(void) {
  int version = 0, count = 0, d;
  if (cujit_driver_get_version(&version) != CUJIT_OK) {
    cli_print(stdout, "driver: %s\n", cujit_last_error());
    return;
  }
  cli_print(stdout, "driver: CUDA %d.%d\n", version / 1000, version % 1000 / 10);
  if (cujit_device_get_count(&count) != CUJIT_OK) return;
  for (d = 0; d < count; d++) {
    char name[256];
    int ma = 0, mi = 0;
    if (cujit_device_get_info(d, name, sizeof name, &ma, &mi) == CUJIT_OK)
      cli_print(stdout, "device %d: %s (sm_%d%d)\n", d, name, ma, mi);
  }
}

static int cmd_info(int argc, char **argv) {
  if (argc > 1) return cli_usage_error("info takes at most one file (got '%s' too)", argv[1]);
  if (argc == 1) return cli_info_file(argv[0]);
  cli_print(stdout, "cujit %s\n", cujit_version_string());
  if (cujit_log_env_ignored())
    cli_print(stdout,
              "log: off: CUJIT_LOG='%s' is not a log level (off, error, warn, info or debug) and "
              "was ignored\n",
              cujit_log_env_ignored());
  print_archs();
  print_driver();
  cli_print_cache_line();
  return 0;
}

int main(int argc, char **argv) {
  const char *cmd = argc > 1 ? argv[1] : NULL;
  /* the command reports every failure itself, whatever CUJIT_ERRORS says */
  cujit_error_set_handler(NULL, NULL);
  if (!cmd) {
    cli_help(stderr, NULL);
    return 2;
  }
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    if (cli_help(stdout, argc > 2 ? argv[2] : NULL) != 0)
      return cli_usage_error("no help for '%s': it is not a command", argv[2]);
    return 0;
  }
  /* 'cujit COMMAND ... --help' (before any '--'): that command's help, nothing run */
  if (cli_asks_help(argc - 2, argv + 2) && cli_help(stdout, cmd) == 0) return 0;
  if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
    cli_print(stdout, "cujit %s\n", cujit_version_string());
    return 0;
  }
  if (strcmp(cmd, "compile") == 0) return cmd_compile(argc - 2, argv + 2);
  if (strcmp(cmd, "warm") == 0) return cmd_warm(argc - 2, argv + 2);
  if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
  if (strcmp(cmd, "explain") == 0) return cli_explain(argc - 2, argv + 2);
  if (strcmp(cmd, "verify") == 0) return cli_verify(argc - 2, argv + 2);
  if (strcmp(cmd, "cache") == 0) return cli_cache(argc - 2, argv + 2);
  return cli_usage_error("unknown command '%s'", cmd);
}
