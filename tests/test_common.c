/* test_common - the common layer's one way to do each thing: CJ_CHECK and CJ_TRY, growable
 * arrays, reading a whole file, handles that never alias, and the table of environment
 * variables, which the manual's table (docs/manual/environment.md) and the manual page's
 * ENVIRONMENT list must match and which every read of the environment in src/ must go
 * through.
 * `test_common --markdown` prints docs/manual/environment.md's rows of variables from the
 * table, and `test_common --man` the items of docs/cujit.1's ENVIRONMENT list. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "cujit_array.h"

#include "common/common.h"

/* ---- CJ_CHECK and CJ_TRY ---- */

static int evaluations;

static cujit_status counted(cujit_status st) {
  evaluations++;
  return st;
}

static int counted_int(int v) {
  evaluations++;
  return v;
}

static cujit_status positive(int x) {
  CJ_CHECK(counted_int(x) > 0, CUJIT_ERROR_INVALID_VALUE, "x is %d; pass a positive number",
           counted_int(x));
  return CUJIT_OK;
}

static cujit_status present(const void *p) {
  CJ_CHECK(p, CUJIT_ERROR_NOT_FOUND, "nothing there");
  return CUJIT_OK;
}

static cujit_status two_steps(cujit_status a, cujit_status b, int *reached) {
  *reached = 0;
  CJ_TRY(counted(a));
  *reached = 1;
  CJ_TRY(counted(b));
  *reached = 2;
  return CUJIT_OK;
}

/* Both macros as the only statement of an if and an else. */
static cujit_status unbraced(int which) {
  if (which == 1)
    CJ_CHECK(0, CUJIT_ERROR_FILE, "the first branch");
  else
    CJ_TRY(which == 2 ? cj_fail(CUJIT_ERROR_CACHE, "the second branch") : CUJIT_OK);
  return CUJIT_OK;
}

static void check_and_try(void **state) {
  int reached;
  (void)state;
  cj_fail(CUJIT_ERROR_DRIVER, "earlier detail");
  evaluations = 0;
  assert_ok(positive(3));
  assert_int_equal(evaluations, 1); /* the condition once, the detail's arguments never */
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_DRIVER); /* success leaves the detail */
  assert_string_equal(cujit_last_error(), "earlier detail");
  evaluations = 0;
  assert_status_detail(positive(-2), CUJIT_ERROR_INVALID_VALUE, "x is -2; pass a positive");
  assert_int_equal(evaluations, 2);
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_INVALID_VALUE);
  assert_ok(present(&reached));
  assert_status_detail(present(NULL), CUJIT_ERROR_NOT_FOUND, "nothing there");

  evaluations = 0;
  assert_ok(two_steps(CUJIT_OK, CUJIT_OK, &reached));
  assert_int_equal(reached, 2);
  assert_int_equal(evaluations, 2);
  evaluations = 0;
  assert_int_equal(two_steps(CUJIT_ERROR_COMPILE, CUJIT_OK, &reached), CUJIT_ERROR_COMPILE);
  assert_int_equal(reached, 0);
  assert_int_equal(evaluations, 1); /* evaluated once, and the rest skipped */
  assert_int_equal(two_steps(CUJIT_OK, CUJIT_ERROR_LAUNCH_FAILED, &reached),
                   CUJIT_ERROR_LAUNCH_FAILED);
  assert_int_equal(reached, 1);

  assert_status_detail(unbraced(1), CUJIT_ERROR_FILE, "the first branch");
  assert_status_detail(unbraced(2), CUJIT_ERROR_CACHE, "the second branch");
  assert_ok(unbraced(3));
}

/* ---- growable arrays ---- */

static void vec_grows(void **state) {
  int *v = NULL;
  size_t cap = 0, n, grows = 0, last_cap = 0, none = 0;
  (void)state;
  assert_int_equal(CJ_VEC_RESERVE(v, cap, none), 0); /* nothing needed: nothing done */
  assert_null(v);
  assert_int_equal(cap, 0);
  for (n = 0; n < 10000; n++) {
    assert_int_equal(CJ_VEC_RESERVE(v, cap, n + 1), 0);
    assert_true(cap >= n + 1);
    if (cap != last_cap) {
      if (last_cap) assert_true(cap >= 2 * last_cap);
      grows++;
      last_cap = cap;
    }
    v[n] = (int)n * 3;
  }
  assert_true(grows <= 12); /* 8 doubled up to 10000 */
  for (n = 0; n < 10000; n++)
    if (v[n] != (int)n * 3) fail_msg("element %zu is %d", n, v[n]);
  /* a size that overflows is refused, leaving the array as it was */
  assert_int_equal(CJ_VEC_RESERVE(v, cap, SIZE_MAX / 2), -1);
  assert_int_equal(cap, last_cap);
  assert_int_equal(v[9999], 9999 * 3);
  assert_int_equal(CJ_VEC_RESERVE(v, cap, cap), 0); /* already there */
  assert_int_equal(cap, last_cap);
  cj_free(v);
}

/* ---- whole files ---- */

static char *dir;

static char *path_in(const char *name) {
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  return p;
}

static void write_file(const char *name, const void *data, size_t len) {
  char *p = path_in(name);
  FILE *f = fopen(p, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  free(p);
}

/* cj_join: the parts in order; their whole length, and as much as fits, when they do not. */
static void join_bounds(void **state) {
  char out[8];
  (void)state;
  assert_int_equal(cj_join(out, sizeof out, "ab", "", "cd", NULL), 4);
  assert_string_equal(out, "abcd");
  assert_int_equal(cj_join(out, sizeof out, "abc", "defg", NULL), 7); /* exactly fits */
  assert_string_equal(out, "abcdefg");
  assert_int_equal(cj_join(out, sizeof out, "abcd", "efgh", "ij", NULL), 10);
  assert_string_equal(out, "abcdefg");
  assert_int_equal(cj_join(out, sizeof out, "0123456789", "x", NULL), 11);
  assert_string_equal(out, "0123456");
  assert_int_equal(cj_join(out, sizeof out, NULL), 0);
  assert_string_equal(out, "");
  assert_int_equal(cj_join(out, 1, "a", NULL), 1);
  assert_string_equal(out, "");
}

/* cj_buf_escaped: printable ASCII and valid UTF-8 as they are; controls (C0, DEL, C1 in
 * either form), bytes that are not UTF-8 (lone, cut short, overlong, surrogates, past
 * U+10FFFF) and the backslash escaped. */
static void escaped_text(void **state) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"plain -DX=1 'q'", "plain -DX=1 'q'"},
      {"\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"},
      {"a\nb\rc\td\x7f", "a\\x0ab\\x0dc\\x09d\\x7f"},
      {"back\\slash", "back\\\\slash"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"\xc2\x9b"
       "2J",
       "\\xc2\\x9b"
       "2J"}, /* C1 CSI as UTF-8 */
      {"\x9b"
       "2J",
       "\\x9b"
       "2J"},                                       /* C1 CSI as one byte */
      {"\xc0\xaf", "\\xc0\\xaf"},                   /* overlong '/' */
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},          /* overlong, three bytes */
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},          /* a surrogate */
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* past U+10FFFF */
      {"cut\xe2\x82", "cut\\xe2\\x82"},             /* cut short at the end */
      {"\xe9t\xe9", "\\xe9t\\xe9"},                 /* Latin-1 */
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof *cases; i++) {
    cj_buf b = {0};
    cj_buf_escaped(&b, cases[i].in, strlen(cases[i].in));
    assert_false(b.oom);
    if (strcmp(b.data ? b.data : "", cases[i].out) != 0)
      fail_msg("case %zu: '%s', want '%s'", i, b.data ? b.data : "", cases[i].out);
    cj_buf_free(&b);
  }
}

static void file_reads_regular_files(void **state) {
  static const char text[] = "line one\nline\0two\n";
  cj_file f;
  char *p = path_in("text.h"), *empty = path_in("empty.h");
  int d;
  (void)state;
  write_file("text.h", text, sizeof text - 1);
  write_file("empty.h", "", 0);
  assert_int_equal(cj_file_read(AT_FDCWD, p, 0, 1 << 20, &f), CJ_FILE_OK);
  assert_int_equal(f.len, sizeof text - 1);
  assert_memory_equal(f.data, text, sizeof text - 1);
  assert_int_equal(f.data[f.len], '\0');
  assert_int_equal(f.grew, 0);
  assert_true(S_ISREG(f.st.st_mode));
  assert_int_equal(f.st.st_size, sizeof text - 1);
  cj_free(f.data);
  /* relative to a directory, refusing links: the same file */
  d = open(dir, O_RDONLY | O_DIRECTORY);
  assert_true(d >= 0);
  assert_int_equal(cj_file_read(d, "text.h", CJ_FILE_NOFOLLOW | CJ_FILE_STAT_FIRST, 1 << 20, &f),
                   CJ_FILE_OK);
  assert_int_equal(f.len, sizeof text - 1);
  cj_free(f.data);
  /* exactly max bytes is fine, one more is too large */
  assert_int_equal(cj_file_read(d, "text.h", 0, sizeof text - 1, &f), CJ_FILE_OK);
  cj_free(f.data);
  assert_int_equal(cj_file_read(d, "text.h", 0, sizeof text - 2, &f), CJ_FILE_TOO_LARGE);
  assert_null(f.data);
  assert_int_equal(f.st.st_size, sizeof text - 1);
  close(d);
  /* an empty file is an empty string */
  assert_int_equal(cj_file_read(AT_FDCWD, empty, 0, 16, &f), CJ_FILE_OK);
  assert_int_equal(f.len, 0);
  assert_string_equal(f.data, "");
  cj_free(f.data);
  /* a file longer than its size says (as /proc's are) is read up to that size, and said so */
  assert_int_equal(cj_file_read(AT_FDCWD, "/proc/self/status", 0, 1 << 20, &f), CJ_FILE_OK);
  assert_int_equal(f.len, (size_t)f.st.st_size);
  assert_int_equal(f.grew, 1);
  cj_free(f.data);
  free(p);
  free(empty);
}

static void file_refuses_what_is_not_a_regular_file(void **state) {
  cj_file f;
  char *fifo = path_in("pipe.h"), *link = path_in("link.h"), *target = path_in("text.h"),
       *missing = path_in("missing.h");
  (void)state;
  write_file("text.h", "x", 1);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(symlink(target, link), 0);
  /* a FIFO is refused, never waited on */
  assert_int_equal(cj_file_read(AT_FDCWD, fifo, 0, 1 << 20, &f), CJ_FILE_NOT_REGULAR);
  assert_null(f.data);
  assert_string_equal(cj_file_kind(f.st.st_mode), "a FIFO (named pipe)");
  assert_int_equal(cj_file_read(AT_FDCWD, dir, 0, 1 << 20, &f), CJ_FILE_NOT_REGULAR);
  assert_string_equal(cj_file_kind(f.st.st_mode), "a directory");
  /* a device: with CJ_FILE_STAT_FIRST it is refused before it is opened */
  assert_int_equal(cj_file_read(AT_FDCWD, "/dev/null", CJ_FILE_STAT_FIRST, 16, &f),
                   CJ_FILE_NOT_REGULAR);
  assert_string_equal(cj_file_kind(f.st.st_mode), "a character device");
  /* a link is followed unless refused */
  assert_int_equal(cj_file_read(AT_FDCWD, link, 0, 16, &f), CJ_FILE_OK);
  assert_string_equal(f.data, "x");
  cj_free(f.data);
  assert_int_equal(cj_file_read(AT_FDCWD, link, CJ_FILE_NOFOLLOW, 16, &f), CJ_FILE_CANNOT_OPEN);
  assert_int_equal(f.err, ELOOP);
  assert_int_equal(cj_file_read(AT_FDCWD, missing, 0, 16, &f), CJ_FILE_CANNOT_OPEN);
  assert_int_equal(f.err, ENOENT);
  assert_null(f.data);
  free(fifo);
  free(link);
  free(target);
  free(missing);
}

/* ---- the environment ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char warnings[8192];

static void keep_warning(cujit_log_level level, const char *message, void *user) {
  size_t n;
  (void)user;
  if (level != CUJIT_LOG_WARN) return;
  pthread_mutex_lock(&log_mu);
  n = strlen(warnings);
  snprintf(warnings + n, sizeof warnings - n, "%s\n", message);
  pthread_mutex_unlock(&log_mu);
}

static int warned(const char *needle) {
  const char *p = warnings;
  int n = 0;
  while ((p = strstr(p, needle)) != NULL) {
    n++;
    p += strlen(needle);
  }
  return n;
}

static void env_table_is_sound(void **state) {
  size_t n, i, j;
  const cj_env_var *t = cj_env_table(&n);
  uint64_t u;
  (void)state;
  assert_true(n > 0);
  for (i = 0; i < n; i++) {
    const cj_env_var *v = &t[i];
    assert_non_null(v->name);
    assert_non_null(v->dflt);
    assert_non_null(v->meaning);
    assert_ptr_equal(cj_env_find(v->name), v);
    for (j = 0; j < i; j++)
      if (strcmp(t[j].name, v->name) == 0) fail_msg("%s is in the table twice", v->name);
    if (strchr(v->meaning, '|') || strchr(v->dflt, '|') || strchr(v->meaning, '\n'))
      fail_msg("%s: a '|' or a line break would break the manual's table", v->name);
    /* a tuning variable falls back on its default, which must be a value of its kind
     * (the count of staging threads is chosen by its user: its default is words), or no
     * limit at all */
    if (v->warn_bad && v->kind == CJ_ENV_SIZE && cj_parse_size(v->dflt, &u) != 0 &&
        strcmp(v->dflt, "unlimited") != 0)
      fail_msg("%s: the default '%s' is not a size", v->name, v->dflt);
    if (v->kind == CJ_ENV_SECONDS && (atof(v->dflt) <= 0 || v->max_seconds <= 0))
      fail_msg("%s: no default or limit in seconds", v->name);
    if (v->kind == CJ_ENV_LEVEL || v->kind == CJ_ENV_TEXT || v->kind == CJ_ENV_PATH)
      assert_int_equal(v->warn_bad, 0); /* nothing to fall back on: their users report */
  }
  assert_null(cj_env_find("CUJIT_NOT_A_VARIABLE"));
}

static void env_reads_and_warns(void **state) {
  uint64_t u;
  double s;
  int on, level;
  (void)state;
  warnings[0] = '\0';
  /* not in the table: never read */
  setenv("CUJIT_NOT_A_VARIABLE", "1", 1);
  assert_null(cj_env("CUJIT_NOT_A_VARIABLE"));
  assert_int_equal(cj_env_u64("CUJIT_NOT_A_VARIABLE", &u), CJ_ENV_UNSET);
  unsetenv("CUJIT_NOT_A_VARIABLE");

  /* a size: unset and empty are the default; a bad value is warned once per value */
  unsetenv("CUJIT_POOL_KEEP");
  assert_int_equal(cj_env_u64("CUJIT_POOL_KEEP", &u), CJ_ENV_UNSET);
  assert_int_equal(u, 0); /* no limit: its reader says what that means */
  setenv("CUJIT_POOL_KEEP", "", 1);
  assert_null(cj_env("CUJIT_POOL_KEEP"));
  assert_int_equal(cj_env_u64("CUJIT_POOL_KEEP", &u), CJ_ENV_UNSET);
  setenv("CUJIT_POOL_KEEP", "64M", 1);
  assert_string_equal(cj_env("CUJIT_POOL_KEEP"), "64M");
  assert_int_equal(cj_env_u64("CUJIT_POOL_KEEP", &u), CJ_ENV_SET);
  assert_int_equal(u, (uint64_t)64 << 20);
  setenv("CUJIT_POOL_KEEP", "lots", 1);
  assert_int_equal(cj_env_u64("CUJIT_POOL_KEEP", &u), CJ_ENV_BAD);
  assert_int_equal(u, 0);
  assert_int_equal(cj_env_u64("CUJIT_POOL_KEEP", &u), CJ_ENV_BAD);
  assert_int_equal(warned("CUJIT_POOL_KEEP='lots' is not a size (e.g. 256M); using the default "
                          "unlimited"),
                   1);
  setenv("CUJIT_POOL_KEEP", "heaps", 1);
  assert_int_equal(cj_env_u64("CUJIT_POOL_KEEP", &u), CJ_ENV_BAD);
  assert_int_equal(warned("CUJIT_POOL_KEEP='heaps'"), 1);
  unsetenv("CUJIT_POOL_KEEP");

  /* out of range: its own words */
  setenv("CUJIT_CACHE_MAX_SIZE", "0", 1);
  assert_int_equal(cj_env_u64("CUJIT_CACHE_MAX_SIZE", &u), CJ_ENV_BAD);
  assert_int_equal(u, (uint64_t)1 << 30);
  assert_int_equal(warned("CUJIT_CACHE_MAX_SIZE='0' is not more than 0 (to turn the disk cache "
                          "off, set CUJIT_CACHE=0); using the default 1G"),
                   1);
  unsetenv("CUJIT_CACHE_MAX_SIZE");

  /* a variable that chooses what runs is not warned about: its user fails */
  setenv("CUJIT_DEVICE", "1x", 1);
  assert_int_equal(cj_env_u64("CUJIT_DEVICE", &u), CJ_ENV_BAD);
  assert_int_equal(u, 0);
  assert_int_equal(warned("CUJIT_DEVICE"), 0);
  setenv("CUJIT_DEVICE", "3000000000", 1); /* more than an int */
  assert_int_equal(cj_env_u64("CUJIT_DEVICE", &u), CJ_ENV_BAD);
  setenv("CUJIT_DEVICE", "3", 1);
  assert_int_equal(cj_env_u64("CUJIT_DEVICE", &u), CJ_ENV_SET);
  assert_int_equal(u, 3);
  unsetenv("CUJIT_DEVICE");

  /* seconds */
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "0.25", 1);
  assert_int_equal(cj_env_seconds("CUJIT_CACHE_LOCK_TIMEOUT", &s), CJ_ENV_SET);
  assert_true(s == 0.25);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "-1", 1);
  assert_int_equal(cj_env_seconds("CUJIT_CACHE_LOCK_TIMEOUT", &s), CJ_ENV_BAD);
  assert_true(s == 60.0);
  assert_int_equal(warned("CUJIT_CACHE_LOCK_TIMEOUT='-1' is not a number of seconds; using the "
                          "default 60"),
                   1);
  setenv("CUJIT_CACHE_LOCK_TIMEOUT", "1e9", 1);
  assert_int_equal(cj_env_seconds("CUJIT_CACHE_LOCK_TIMEOUT", &s), CJ_ENV_BAD);
  unsetenv("CUJIT_CACHE_LOCK_TIMEOUT");
  assert_int_equal(cj_env_seconds("CUJIT_CACHE_LOCK_TIMEOUT", &s), CJ_ENV_UNSET);
  assert_true(s == 60.0);

  /* a flag */
  assert_int_equal(cj_env_flag("CUJIT_CACHE", &on), CJ_ENV_UNSET);
  assert_int_equal(on, 1);
  setenv("CUJIT_CACHE", "No", 1);
  assert_int_equal(cj_env_flag("CUJIT_CACHE", &on), CJ_ENV_SET);
  assert_int_equal(on, 0);
  setenv("CUJIT_CACHE", "maybe", 1);
  assert_int_equal(cj_env_flag("CUJIT_CACHE", &on), CJ_ENV_BAD);
  assert_int_equal(on, 1);
  assert_int_equal(warned("CUJIT_CACHE='maybe' is not on (1, on, yes, true) or off (0, off, no, "
                          "false); using the default on"),
                   1);
  unsetenv("CUJIT_CACHE");

  /* a level (read once by the log, so changing it here changes nothing else) */
  setenv("CUJIT_LOG", "Debug", 1);
  assert_int_equal(cj_env_level("CUJIT_LOG", &level), CJ_ENV_SET);
  assert_int_equal(level, CUJIT_LOG_DEBUG);
  setenv("CUJIT_LOG", "warning", 1);
  assert_int_equal(cj_env_level("CUJIT_LOG", &level), CJ_ENV_SET);
  assert_int_equal(level, CUJIT_LOG_WARN);
  setenv("CUJIT_LOG", "loud", 1);
  assert_int_equal(cj_env_level("CUJIT_LOG", &level), CJ_ENV_BAD);
  assert_int_equal(level, CUJIT_LOG_OFF);
  assert_int_equal(warned("CUJIT_LOG"), 0);
  unsetenv("CUJIT_LOG");
}

static char *read_text(const char *path) {
  cj_file f;
  if (cj_file_read(AT_FDCWD, path, 0, 16 << 20, &f) == CJ_FILE_OK) return f.data;
  fail_msg("cannot read %s: %s", path, strerror(f.err));
  return strdup("");
}

/* ---- the manual's table of variables (docs/manual/environment.md) ---- */

#define MANUAL_DIR CUJIT_SOURCE_DIR "/docs/manual"

/* Whether the Markdown heading `line` (from '#' to its line's end) has GitHub's anchor
 * `anchor`: its text with link targets dropped, lower case, characters other than
 * letters, digits, '_' and '-' dropped and spaces made hyphens. */
static int heading_has_anchor(const char *line, const char *anchor) {
  const char *p = line;
  size_t k = 0;
  while (*p == '#') p++;
  while (*p == ' ') p++;
  for (; *p && *p != '\n'; p++) {
    char c = *p;
    if (c == ']' && p[1] == '(') { /* a link: its text stays, its target goes */
      while (*p && *p != ')' && *p != '\n') p++;
      if (*p != ')') break;
      continue;
    }
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c == ' ')
      c = '-';
    else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      continue;
    if (anchor[k++] != c) return 0;
  }
  return anchor[k] == '\0';
}

/* The page of the manual whose heading has `anchor`, into page ("cache.md"); -1 when no
 * page has one: a link of the table's to a section that is not there. */
static int manual_page_of(const char *anchor, char *page, size_t size) {
  DIR *d = opendir(MANUAL_DIR);
  struct dirent *e;
  char path[4096];
  int found = -1;
  if (!d) fail_msg("cannot open " MANUAL_DIR ": %s", strerror(errno));
  while (found != 0 && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    char *text, *line;
    if (len < 4 || strcmp(e->d_name + len - 3, ".md") != 0) continue;
    snprintf(path, sizeof path, MANUAL_DIR "/%s", e->d_name);
    text = read_text(path);
    for (line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
      if (*line == '#' && heading_has_anchor(line, anchor)) {
        snprintf(page, size, "%s", e->d_name);
        found = 0;
        break;
      }
    free(text);
  }
  closedir(d);
  return found;
}

/* A link [text](#anchor) in the table names a section of the manual: the page it is on,
 * for a link from another page. */
static void link_page(const char *target, char *page, size_t size) {
  char anchor[256];
  size_t len = strcspn(target + 1, ")");
  snprintf(anchor, sizeof anchor, "%.*s", (int)len, target + 1);
  if (manual_page_of(anchor, page, size) != 0)
    fail_msg("src/common/env.c's table links #%s, a heading no page of docs/manual has", anchor);
}

/* The manual's Markdown for a table text: as it is, but a link to a section of the manual
 * leads to the page that holds it. */
static void markdown_text(const char *text, char *out, size_t size) {
  const char *link;
  char page[256];
  size_t used = 0;
  while ((link = strstr(text, "](#")) != NULL) {
    link_page(link + 2, page, sizeof page);
    used += (size_t)snprintf(out + used, used < size ? size - used : 0, "%.*s](%s",
                             (int)(link - text), text, page);
    text = link + 2;
  }
  snprintf(out + used, used < size ? size - used : 0, "%s", text);
}

/* docs/manual/environment.md's row for a variable. */
static void markdown_row(const cj_env_var *v, char *out, size_t size) {
  char meaning[1024];
  markdown_text(v->meaning, meaning, sizeof meaning);
  snprintf(out, size, "| `%s` | %s | %s |", v->name, v->dflt, meaning);
}

static int print_markdown_rows(void) {
  size_t n, i;
  const cj_env_var *t = cj_env_table(&n);
  char row[2048];
  for (i = 0; i < n; i++) {
    markdown_row(&t[i], row, sizeof row);
    printf("%s\n", row);
  }
  return 0;
}

/* docs/manual/environment.md lists every variable of the table, as the table says, in its
 * order, and nothing else. */
static void environment_page_lists_the_table(void **state) {
  size_t n, i = 0;
  const cj_env_var *t = cj_env_table(&n);
  char *text = read_text(MANUAL_DIR "/environment.md"), *line, *next, row[2048];
  (void)state;
  for (line = text; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    if (strncmp(line, "| `", 3) != 0) continue;
    if (i == n)
      fail_msg("docs/manual/environment.md lists a variable the table does not have:\n%s", line);
    markdown_row(&t[i], row, sizeof row);
    if (strcmp(line, row) != 0)
      fail_msg("docs/manual/environment.md's row %zu differs from src/common/env.c's table; "
               "it should be\n%s\n(scripts/sync-env-docs writes every row)",
               i + 1, row);
    i++;
  }
  if (i != n) fail_msg("docs/manual/environment.md lists %zu variables; the table has %zu", i, n);
  free(text);
}

/* ---- the manual page's ENVIRONMENT list is the table too ---- */

typedef struct text_out {
  char *p;
  size_t left;
} text_out;

static void put(text_out *o, const char *s, size_t n) {
  if (n >= o->left) fail_msg("a manual page item is longer than the room for it");
  memcpy(o->p, s, n);
  o->p += n;
  o->left -= n;
  *o->p = '\0';
}

/* The table's words as roff text: `code` in single quotes, never hyphenated, its hyphens
 * minus signs, broken only after '/', '?' or '&'; a link [text](#anchor) to a section of
 * the manual as that section's name and its page; backslashes escaped. */
static void roff_text(text_out *o, const char *md) {
  const char *close, *target;
  int code = 0;
  for (; *md; md++) {
    if (*md == '`') {
      put(o, code ? "\\(cq" : "\\%\\(oq", code ? 4 : 6); /* \\%: not hyphenated */
      code = !code;
    } else if (*md == '\\') {
      put(o, "\\e", 2);
    } else if (code && *md == '-') {
      put(o, "\\-", 2);
    } else if (code && strchr("/?&", *md)) { /* a long path or URL may break after these */
      put(o, md, 1);
      put(o, "\\:", 2);
    } else if (!code && *md == '[' && (close = strstr(md, "](#")) != NULL &&
               (target = strchr(close, ')')) != NULL) {
      char page[256];
      link_page(close + 2, page, sizeof page);
      put(o, "\\(lq", 4);
      put(o, md + 1, (size_t)(close - md - 1));
      put(o, "\\(rq in docs/manual/", 20);
      put(o, page, strlen(page));
      md = target;
    } else {
      put(o, md, 1);
    }
  }
}

/* The manual page's item for a variable: its name, default and meaning. */
static void man_item(const cj_env_var *v, text_out *o) {
  put(o, ".It Ev ", 7);
  put(o, v->name, strlen(v->name));
  put(o, "\nDefault: ", 10);
  roff_text(o, v->dflt);
  put(o, ".\n", 2);
  if (*v->meaning >= 'a' && *v->meaning <= 'z') { /* a sentence here, a table cell there */
    char first = (char)(*v->meaning - 'a' + 'A');
    put(o, &first, 1);
    roff_text(o, v->meaning + 1);
  } else {
    roff_text(o, v->meaning);
  }
  put(o, ".\n", 2);
}

static int print_man_items(void) {
  size_t n, i;
  const cj_env_var *t = cj_env_table(&n);
  char item[2048];
  for (i = 0; i < n; i++) {
    text_out o = {item, sizeof item};
    man_item(&t[i], &o);
    fputs(item, stdout);
  }
  return 0;
}

/* docs/cujit.1's ENVIRONMENT section lists every variable of the table, as the table
 * says, in its order, and nothing else. */
static void manual_lists_the_table(void **state) {
  size_t n, i;
  const cj_env_var *t = cj_env_table(&n);
  char *page = read_text(CUJIT_SOURCE_DIR "/docs/cujit.1"), *at, *end, item[2048];
  (void)state;
  at = strstr(page, "\n.Sh ENVIRONMENT\n");
  end = at ? strstr(at + 1, "\n.Sh ") : NULL;
  at = at ? strstr(at, "\n.It Ev ") : NULL;
  if (!at || !end || at > end) {
    free(page);
    fail_msg("docs/cujit.1 has no ENVIRONMENT section with a list of '.It Ev' items");
    return;
  }
  at++;
  for (i = 0; i < n; i++) {
    text_out o = {item, sizeof item};
    man_item(&t[i], &o);
    if (strncmp(at, item, strlen(item)) != 0)
      fail_msg("docs/cujit.1's ENVIRONMENT item %zu differs from src/common/env.c's table; "
               "it should be\n%s(scripts/sync-env-docs writes every item)",
               i + 1, item);
    at += strlen(item);
  }
  if (strncmp(at, ".El\n", 4) != 0)
    fail_msg("docs/cujit.1's ENVIRONMENT list goes on after the table's %zu variables:\n%.200s", n,
             at);
  free(page);
}

/* ---- every read of the environment goes through the table ---- */

typedef struct literal_seen {
  unsigned char *used; /* per table entry: its name appears as a string literal */
} literal_seen;

/* Checks one source file: no getenv outside env.c, and every cj_env*("NAME" a table entry. */
static void check_source(const char *path, const char *rel, literal_seen *seen) {
  size_t n, i;
  const cj_env_var *t = cj_env_table(&n);
  char *text = read_text(path), *p, quoted[96];
  if (strcmp(rel, "common/env.c") != 0) {
    if ((p = strstr(text, "getenv(")) != NULL)
      fail_msg("src/%s reads the environment with getenv; use cj_env and a table entry", rel);
    for (i = 0; i < n; i++) {
      snprintf(quoted, sizeof quoted, "\"%s\"", t[i].name);
      if (strstr(text, quoted)) seen->used[i] = 1;
    }
  }
  for (p = strstr(text, "cj_env"); p; p = strstr(p + 1, "cj_env")) {
    char *q = p + 6, *name_end;
    while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')) q++;
    if (strncmp(q, "(\"", 2) != 0) continue;
    q += 2;
    if (!(name_end = strchr(q, '"'))) continue;
    *name_end = '\0';
    if (!cj_env_find(q))
      fail_msg("src/%s reads %s, which is not in src/common/env.c's table", rel, q);
    *name_end = '"';
  }
  free(text);
}

static void walk(const char *path, const char *rel, literal_seen *seen) {
  DIR *d = opendir(path);
  struct dirent *e;
  char sub[4096], subrel[4096];
  struct stat st;
  assert_non_null(d);
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    snprintf(subrel, sizeof subrel, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
    assert_int_equal(stat(sub, &st), 0);
    if (S_ISDIR(st.st_mode))
      walk(sub, subrel, seen);
    else if (len > 2 &&
             (strcmp(e->d_name + len - 2, ".c") == 0 || strcmp(e->d_name + len - 2, ".h") == 0))
      check_source(sub, subrel, seen);
  }
  closedir(d);
}

static void sources_read_the_environment_through_the_table(void **state) {
  size_t n, i;
  const cj_env_var *t = cj_env_table(&n);
  literal_seen seen;
  (void)state;
  seen.used = calloc(n, 1);
  walk(CUJIT_SOURCE_DIR "/src", "", &seen);
  for (i = 0; i < n; i++)
    if (!seen.used[i]) fail_msg("%s is in the table but nothing in src/ reads it", t[i].name);
  free(seen.used);
}

static int make_dir(void **state) {
  (void)state;
  dir = test_tempdir("common");
  return dir ? 0 : -1;
}

static int remove_dir(void **state) {
  char cmd[4200];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  free(dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* ---- handles that never alias ---- */

/* A removed handle stays refused while its slot holds newer objects, removing it again
 * changes nothing, another kind's handle is not this table's, and a slot whose
 * generations are spent is retired rather than giving an old handle again. */
static void handles_are_never_given_twice(void **state) {
  cj_handles t = CJ_HANDLES_INIT(CJ_HANDLE_TAG(0x11));
  cj_handles other = CJ_HANDLES_INIT(CJ_HANDLE_TAG(0x12));
  const uintptr_t slot_mask = ((uintptr_t)1 << CJ_HANDLE_SLOT_BITS) - 1;
  int x, y, z;
  uintptr_t hx, hy, hz, ho;
  (void)state;
  assert_true((hx = cj_handle_add(&t, &x)) != 0);
  assert_true(hx >> 63); /* never an address a program may dereference */
  assert_ptr_equal(cj_handle_get(&t, hx), &x);
  assert_ptr_equal(cj_handle_remove(&t, hx), &x);
  assert_null(cj_handle_get(&t, hx));
  assert_true((hy = cj_handle_add(&t, &y)) != 0); /* the same slot, a new generation */
  assert_true(hy != hx && (hy & slot_mask) == (hx & slot_mask));
  assert_null(cj_handle_remove(&t, hx)); /* removed twice: nothing happens to y */
  assert_ptr_equal(cj_handle_get(&t, hy), &y);
  assert_null(cj_handle_get(&t, 0));
  assert_null(cj_handle_get(&t, hy + 1)); /* a slot never used */
  assert_true((ho = cj_handle_add(&other, &z)) != 0);
  assert_null(cj_handle_get(&t, ho));
  assert_null(cj_handle_get(&other, hy));
  /* y's slot at its last generation: once removed it is retired, and z gets a new slot */
  assert_ptr_equal(cj_handle_remove(&t, hy), &y);
  t.slots[0].gen = UINT32_MAX;
  assert_true((hy = cj_handle_add(&t, &y)) != 0);
  assert_true((hy & slot_mask) == 0 && (uint32_t)(hy >> CJ_HANDLE_SLOT_BITS) == UINT32_MAX);
  assert_ptr_equal(cj_handle_remove(&t, hy), &y);
  assert_true((hz = cj_handle_add(&t, &z)) != 0);
  assert_true((hz & slot_mask) == 1);
  assert_null(cj_handle_get(&t, hx));
  assert_null(cj_handle_get(&t, hy));
  assert_null(cj_handle_get(&t, hy & ~((uintptr_t)UINT32_MAX << CJ_HANDLE_SLOT_BITS)));
  assert_ptr_equal(cj_handle_get(&t, hz), &z);
  cj_free(t.slots);
  cj_free(other.slots);
}

/* ---- the scalar-type table ---- */

/* Every cujit_type has an entry that agrees with the public size, with itself (alignment,
 * names) and with the spelling lookup, so that no layer finds a hole in it. */
static void scalar_table_is_sound(void **state) {
  int t, n = 0;
  (void)state;
  for (t = CUJIT_TYPE_BYTES; t <= CUJIT_TYPE_C128; t++) {
    const cj_scalar *s = cj_scalar_of(t);
    size_t i;
    if (!s) fail_msg("cujit_type %d has no entry", t);
    assert_non_null(s->name);
    assert_non_null(s->words);
    assert_int_equal(s->size, cujit_type_size((cujit_type)t));
    assert_true(s->align >= 1 && (s->size == 0 || s->size % s->align == 0));
    if (s->c_name) assert_int_equal(cj_scalar_by_spelling(s->c_name), t);
    for (i = 0; i < 6 && s->also[i]; i++)
      if (cj_scalar_by_spelling(s->also[i]) != t)
        fail_msg("'%s' is listed for %s but spells type %d", s->also[i], s->name,
                 cj_scalar_by_spelling(s->also[i]));
    n++;
  }
  assert_int_equal(n, CUJIT_TYPE_C128 + 1);
  assert_null(cj_scalar_of(CUJIT_TYPE_C128 + 1));
  assert_null(cj_scalar_of(-1));
  assert_int_equal(cj_scalar_by_spelling("no such type"), -1);
  assert_int_equal(cj_scalar_of(CUJIT_TYPE_BF16)->size, 2); /* the one the launch table lacked */
}

/* Each number type is of one kind, as its entry says; bytes and pointers are none. */
static void scalar_kinds_are_asked_once(void **state) {
  int t;
  (void)state;
  for (t = CUJIT_TYPE_BYTES; t <= CUJIT_TYPE_C128; t++) {
    int number = t != CUJIT_TYPE_BYTES && t != CUJIT_TYPE_PTR;
    int half = t == CUJIT_TYPE_F16 || t == CUJIT_TYPE_BF16;
    int real = half || t == CUJIT_TYPE_F32 || t == CUJIT_TYPE_F64;
    int complex = t == CUJIT_TYPE_C64 || t == CUJIT_TYPE_C128;
    assert_int_equal(cj_scalar_is_int(t), number && !real && !complex);
    assert_int_equal(cj_scalar_is_float(t), real);
    assert_int_equal(cj_scalar_is_half(t), half);
    assert_int_equal(cj_scalar_is_complex(t), complex);
  }
  assert_false(cj_scalar_is_int(-1) || cj_scalar_is_float(-1) || cj_scalar_is_complex(-1));
  assert_false(cj_scalar_is_half(CUJIT_TYPE_C128 + 1));
}

/* A kernel's or an operand's name is a C identifier: ASCII letters, digits and '_', not
 * starting with a digit (bytes of UTF-8 letters are not letters). */
static void identifiers_are_c_names(void **state) {
  static const char *const good[] = {"a", "_", "x1", "_k2_", "Scale_by_2", "cj_t"};
  static const char *const bad[] = {"", "2bad", "a-b", "a b", "\xc3\xa9t\xc3\xa9", "a.b", "x\n"};
  size_t i;
  (void)state;
  for (i = 0; i < CJ_COUNT(good); i++)
    if (!cj_is_identifier(good[i])) fail_msg("'%s' was refused", good[i]);
  for (i = 0; i < CJ_COUNT(bad); i++)
    if (cj_is_identifier(bad[i])) fail_msg("'%s' was taken", bad[i]);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(check_and_try),
      cmocka_unit_test(vec_grows),
      cmocka_unit_test(join_bounds),
      cmocka_unit_test(escaped_text),
      cmocka_unit_test_setup_teardown(file_reads_regular_files, make_dir, remove_dir),
      cmocka_unit_test_setup_teardown(file_refuses_what_is_not_a_regular_file, make_dir,
                                      remove_dir),
      cmocka_unit_test(env_table_is_sound),
      cmocka_unit_test(env_reads_and_warns),
      cmocka_unit_test(environment_page_lists_the_table),
      cmocka_unit_test(manual_lists_the_table),
      cmocka_unit_test(sources_read_the_environment_through_the_table),
      cmocka_unit_test(scalar_table_is_sound),
      cmocka_unit_test(scalar_kinds_are_asked_once),
      cmocka_unit_test(identifiers_are_c_names),
      cmocka_unit_test(handles_are_never_given_twice),
  };
  if (argc == 2 && strcmp(argv[1], "--markdown") == 0) return print_markdown_rows();
  if (argc == 2 && strcmp(argv[1], "--man") == 0) return print_man_items();
  cujit_log_set_callback(keep_warning, NULL);
  cujit_log_set_level(CUJIT_LOG_WARN);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
