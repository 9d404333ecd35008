/* cmd_explain.c - 'cujit explain FILE.cu [options]' and 'cujit verify [--sample N | --all]'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h" /* cj_parse_count */

static const char *const part_words[] = {"NVRTC",
                                         "arch",
                                         "name",
                                         "source",
                                         "header",
                                         "include dirs",
                                         "defines",
                                         "options",
                                         "in-memory headers",
                                         "name expressions",
                                         "toolkit"};

static const char *tier_words(cujit_cache_tier t) {
  switch (t) {
    case CUJIT_CACHE_TIER_MEMORY: return "this process's memory cache";
    case CUJIT_CACHE_TIER_DISK: return "the disk cache";
    case CUJIT_CACHE_TIER_REMOTE: return "the remote tier";
    case CUJIT_CACHE_TIER_COMPILE: return "a compile (NVRTC)";
    default: return "a compile that bypasses the cache";
  }
}

/* The differences, one line each, kept to be printed after the summary. */
typedef struct lines {
  char *text;
  size_t len;
  unsigned n;
} lines;

static int keep_difference(const cujit_cache_difference *d, void *user) {
  lines *l = user;
  size_t p = (size_t)d->part, room = strlen(d->detail) + 64;
  char *grown = realloc(l->text, l->len + room);
  if (!grown) return 1;
  l->text = grown;
  l->len += (size_t)snprintf(l->text + l->len, room, "%-9s %-18s %s\n", l->n++ ? "" : "differs",
                             p < CJ_CLI_COUNT(part_words) ? part_words[p] : "?", d->detail);
  return 0;
}

int cli_explain(int argc, char **argv) {
  compile_args c;
  cujit_options opts = CUJIT_OPTIONS_INIT;
  cujit_cache_explanation e = CUJIT_CACHE_EXPLANATION_INIT;
  const char **lists = calloc(3 * ((size_t)argc + 1), sizeof *lists);
  lines shown = {NULL, 0, 0};
  int rc;
  if (!lists) return cli_print(stderr, "cujit: out of memory\n"), 1;
  memset(&c, 0, sizeof c);
  c.inputs = lists;
  c.includes = lists + argc + 1;
  c.defines = lists + 2 * ((size_t)argc + 1);
  rc = cli_parse_compile(argc, argv, &c);
  if (rc == 0 && c.n_inputs != 1) {
    snprintf(c.error, sizeof c.error, "explain takes one .cu file (got %zu)", c.n_inputs);
    rc = 2;
  }
  if (rc != 0) {
    cli_usage_error("%s", c.error);
    free(lists);
    return 2;
  }
  opts.arch = c.arch;
  opts.include_dirs = c.includes;
  opts.defines = c.defines;
  opts.nvrtc_options = c.nvrtc;
  opts.flags = c.flags;
  if (cujit_cache_explain_file(c.inputs[0], &opts, &e, keep_difference, &shown) != CUJIT_OK) {
    free(lists);
    free(shown.text);
    cli_print(stderr, "cujit: %s\n", cujit_last_error());
    return cujit_last_status() == CUJIT_ERROR_INVALID_OPTION ? 2 : 1;
  }
  free(lists);
  if (e.key[0]) cli_print(stdout, "key       %s\n", e.key);
  cli_print(stdout, "result    %s: %s would serve it\n", e.hit ? "hit" : "miss",
            tier_words(e.tier));
  if (e.reason[0]) cli_print(stdout, "why       %s\n", e.reason);
  if (e.has_nearest)
    cli_print(stdout, "nearest   %s (%s, %s; %u difference%s, of %llu entries compared)\n",
              e.nearest_key, e.nearest_name,
              e.nearest_arch[0] ? e.nearest_arch : "NVRTC's default target", e.differences,
              e.differences == 1 ? "" : "s", (unsigned long long)e.entries);
  else if (!e.hit && e.tier != CUJIT_CACHE_TIER_UNCACHED)
    cli_print(stdout, "nearest   none: the disk cache holds no entry to compare with\n");
  if (shown.text) cli_print(stdout, "%s", shown.text);
  free(shown.text);
  return 0;
}

/* ---- verify ---- */

static int print_verdict(const cujit_cache_verified *v, void *user) {
  static const char *const words[] = {"match", "MISMATCH", "skipped"};
  (void)user;
  cli_print(stdout, "%-8s  %s  %-10s %s%s%s\n", words[v->verdict], v->key, v->arch, v->name,
            v->detail[0] ? ": " : "", v->detail);
  fflush(stdout);
  return 0;
}

int cli_verify(int argc, char **argv) {
  cujit_cache_verify_summary s = CUJIT_CACHE_VERIFY_SUMMARY_INIT;
  uint64_t sample = 10;
  int i;
  for (i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--all") == 0) {
      sample = 0;
    } else if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc) {
      if (cj_parse_count(argv[++i], UINT32_MAX, &sample) != 0 || sample == 0)
        return cli_usage_error("--sample needs a number of entries above 0 (got '%s')", argv[i]);
    } else {
      return cli_usage_error("verify takes --sample N or --all (got '%s')", argv[i]);
    }
  }
  if (cujit_cache_verify((size_t)sample, print_verdict, NULL, &s) != CUJIT_OK)
    return cli_fail("cannot verify the cache");
  cli_print(stdout,
            "%llu verified of %llu entries: %llu matched, %llu did not reproduce, %llu skipped\n",
            (unsigned long long)(s.matched + s.mismatched), (unsigned long long)s.entries,
            (unsigned long long)s.matched, (unsigned long long)s.mismatched,
            (unsigned long long)s.skipped);
  return s.mismatched ? 1 : 0;
}
