/* cmd_cache.c - the 'cujit cache' command and the cache line of 'cujit info'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h" /* cj_parse_size */

static const char cache_usage[] =
    "cache needs one of: dir, stats, list, clear, prune [--max-size N] (got '%s')";

/* "12.3 MiB" */
static const char *human(uint64_t bytes, char *buf, size_t size) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  size_t u = 0;
  while (v >= 1024 && u + 1 < CJ_CLI_COUNT(units)) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
  else
    snprintf(buf, size, "%.1f %s", v, units[u]);
  return buf;
}

static int cmd_dir(void) {
  const char *dir = cujit_cache_dir();
  if (!dir) return cli_fail("no disk cache");
  cli_print(stdout, "%s\n", dir);
  return 0;
}

/* The remote tier's URL without its user and password. */
static void print_url(const char *url) {
  const char *host = strstr(url, "://"), *end, *p;
  if (!host) {
    cli_print(stdout, "remote            %s\n", url);
    return;
  }
  host += 3;
  end = host + strcspn(host, "/?");
  for (p = host; p < end; p++)
    if (*p == '@') host = p + 1;
  cli_print(stdout, "remote            %.*s%s\n", (int)(strstr(url, "://") + 3 - url), url, host);
}

/* The remote tier's lines, when one is set (or was used by the processes counted). */
static void print_remote(const cujit_cache_stats *s) {
  char url[512];
  cujit_status st = cujit_cache_get_remote(url, sizeof url);
  if (st == CUJIT_OK && !url[0] && !s->remote_hits && !s->remote_misses && !s->remote_errors)
    return;
  if (st != CUJIT_OK)
    cli_print(stdout, "remote            unusable: %s\n", cujit_last_error());
  else if (!url[0])
    cli_print(stdout, "remote            none set now\n");
  else
    print_url(url);
  cli_print(stdout, "remote hits       %llu\n", (unsigned long long)s->remote_hits);
  cli_print(stdout, "remote misses     %llu (%llu of them bad values, replaced)\n",
            (unsigned long long)s->remote_misses, (unsigned long long)s->remote_invalid);
  cli_print(stdout, "remote errors     %llu\n", (unsigned long long)s->remote_errors);
  cli_print(stdout, "remote time       %.3f s\n", (double)s->remote_time_us / 1e6);
}

static int cmd_stats(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  char a[32], b[32];
  uint64_t lookups;
  if (cujit_cache_get_disk_stats(&s) != CUJIT_OK)
    return cli_fail("cannot read the cache's statistics");
  lookups = s.hits + s.misses;
  cli_print(stdout, "cache directory   %s\n", cujit_cache_dir());
  cli_print(stdout, "entries           %llu\n", (unsigned long long)s.entries);
  cli_print(stdout, "size              %s (limit %s)\n", human(s.bytes, a, sizeof a),
            human(cujit_cache_max_size(), b, sizeof b));
  cli_print(stdout, "hits              %llu\n", (unsigned long long)s.hits);
  cli_print(stdout, "misses            %llu\n", (unsigned long long)s.misses);
  if (lookups)
    cli_print(stdout, "hit rate          %.1f %%\n", 100.0 * (double)s.hits / (double)lookups);
  else
    cli_print(stdout, "hit rate          -\n");
  cli_print(stdout, "compiles          %llu\n", (unsigned long long)s.compiles);
  cli_print(stdout, "evictions         %llu\n", (unsigned long long)s.evictions);
  print_remote(&s);
  return 0;
}

static int print_entry(const cujit_cache_entry *e, void *user) {
  char when[32], size[32];
  time_t t = (time_t)e->last_use;
  struct tm tm;
  int *count = user;
  if (!localtime_r(&t, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
    strcpy(when, "?");
  if (!(*count)++)
    cli_print(stdout, "%-19s  %12s  %-12s  %-32s  %s\n", "last use", "size", "arch", "key", "name");
  cli_print(stdout, "%-19s  %12s  %-12s  %-32s  %s\n", when, human(e->bytes, size, sizeof size),
            e->arch, e->key, e->name);
  return 0;
}

static int cmd_list(void) {
  int count = 0;
  if (cujit_cache_list(print_entry, &count) != CUJIT_OK) return cli_fail("cannot list the cache");
  if (!count) cli_print(stdout, "the cache is empty\n");
  return 0;
}

/* Entries and bytes now, for reporting what clear and prune removed (counted by walking
 * the directory: the statistics file is not needed for this). */
static int disk_now(cujit_cache_stats *s) {
  if (!cujit_cache_dir()) return cli_fail("no disk cache");
  if (cujit_cache_get_stats(s) == CUJIT_OK) return 0;
  return cli_fail("cannot read the cache");
}

/* Other processes may add entries meanwhile: what is gone is never counted below zero. */
static uint64_t gone(uint64_t before, uint64_t after) {
  return before > after ? before - after : 0;
}

static void report(const cujit_cache_stats *before, const cujit_cache_stats *after) {
  char a[32], b[32];
  cli_print(stdout, "removed %llu entries (%s); the cache holds %llu entries (%s)\n",
            (unsigned long long)gone(before->entries, after->entries),
            human(gone(before->bytes, after->bytes), a, sizeof a),
            (unsigned long long)after->entries, human(after->bytes, b, sizeof b));
}

static int cmd_clear(void) {
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  if (disk_now(&before)) return 1;
  if (cujit_cache_clear() != CUJIT_OK) return cli_fail("cannot clear the cache");
  if (disk_now(&after)) return 1;
  report(&before, &after);
  return 0;
}

static int cmd_prune(int argc, char **argv) {
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  uint64_t max = 0;
  const char *v = NULL;
  if (argc == 2 && strcmp(argv[0], "--max-size") == 0)
    v = argv[1];
  else if (argc == 1 && strncmp(argv[0], "--max-size=", 11) == 0)
    v = argv[0] + 11;
  else if (argc)
    return cli_usage_error("prune takes only --max-size N (got '%s')", argv[0]);
  if (v && (cj_parse_size(v, &max) != 0 || max == 0))
    return cli_usage_error("--max-size needs a size above 0, like 500M or 2G (got '%s')", v);
  if (disk_now(&before)) return 1;
  if (cujit_cache_prune(max) != CUJIT_OK) return cli_fail("cannot prune the cache");
  if (disk_now(&after)) return 1;
  report(&before, &after);
  return 0;
}

int cli_cache(int argc, char **argv) {
  const char *sub = argc > 0 ? argv[0] : "";
  if (argc > 1 && strcmp(sub, "prune") != 0)
    return cli_usage_error("cache %s takes no arguments", sub);
  if (strcmp(sub, "dir") == 0) return cmd_dir();
  if (strcmp(sub, "stats") == 0) return cmd_stats();
  if (strcmp(sub, "list") == 0) return cmd_list();
  if (strcmp(sub, "clear") == 0) return cmd_clear();
  if (strcmp(sub, "prune") == 0) return cmd_prune(argc - 1, argv + 1);
  return cli_usage_error(cache_usage, sub);
}

void cli_print_cache_line(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  char a[32], b[32];
  if (!cujit_cache_dir() || cujit_cache_get_stats(&s) != CUJIT_OK) {
    cli_print(stdout, "cache: none (%s)\n", cujit_last_error());
    return;
  }
  cli_print(stdout, "cache: %s (%llu entries, %s of %s)\n", cujit_cache_dir(),
            (unsigned long long)s.entries, human(s.bytes, a, sizeof a),
            human(cujit_cache_max_size(), b, sizeof b));
}
