/* proc.c - child processes, scratch files and what /proc says about this process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

static int overridden(const char *var, char *const env[]) {
  size_t i, len = strcspn(var, "=");
  for (i = 0; env && env[i]; i++)
    if (strncmp(env[i], var, len) == 0 && env[i][len] == '=') return 1;
  return 0;
}

/* The inherited environment minus what `env` overrides, plus `env`. */
static char **child_env(char *const env[]) {
  size_t n = 0, m = 0, i, k = 0;
  char **out;
  while (environ[n]) n++;
  while (env && env[m]) m++;
  out = calloc(n + m + 1, sizeof *out);
  if (!out) return NULL;
  for (i = 0; i < n; i++)
    if (!overridden(environ[i], env)) out[k++] = environ[i];
  for (i = 0; i < m; i++) out[k++] = env[i];
  return out;
}

/* Starts `path` (found in PATH when `search`) with argv and the environment `env` adds. */
static pid_t spawn(const char *path, int search, char *const argv[], char *const env[],
                   int stdin_fd, int stdout_fd) {
  posix_spawn_file_actions_t fa;
  char **envp = child_env(env), **args;
  size_t n = 0;
  pid_t pid = -1;
  int rc;
  while (argv[n]) n++;
  args = calloc(n + 1, sizeof *args);
  if (!envp || !args) goto done;
  memcpy(args, argv, n * sizeof *args);
  args[0] = (char *)path;
  posix_spawn_file_actions_init(&fa);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1);
  rc = search ? posix_spawnp(&pid, path, &fa, NULL, args, envp)
              : posix_spawn(&pid, path, &fa, NULL, args, envp);
  if (rc != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
done:
  free(envp);
  free(args);
  return pid;
}

pid_t bench_spawn(char *const argv[], char *const env[], int stdin_fd, int stdout_fd) {
  return spawn(bench_cfg.self, 0, argv, env, stdin_fd, stdout_fd);
}

int bench_wait(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `path` to completion and reads what it printed. */
static int run_reading(const char *path, int search, char *const argv[], char *const env[],
                       char *out, size_t size) {
  int fds[2];
  size_t got = 0;
  ssize_t n;
  pid_t pid;
  out[0] = '\0';
  if (pipe2(fds, O_CLOEXEC) != 0) return -1; /* children inherit only fd 0-2 */
  pid = spawn(path, search, argv, env, -1, fds[1]);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return -1;
  }
  while (got + 1 < size && (n = read(fds[0], out + got, size - 1 - got)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    got += (size_t)n;
  }
  out[got] = '\0';
  close(fds[0]);
  return bench_wait(pid);
}

int bench_run_child(char *const argv[], char *const env[], char *out, size_t size) {
  return run_reading(bench_cfg.self, 0, argv, env, out, size);
}

int bench_run_program(char *const argv[], char *const env[], char *out, size_t size) {
  return run_reading(argv[0], strchr(argv[0], '/') == NULL, argv, env, out, size);
}

void bench_sibling(const char *name, char *out, size_t size) {
  const char *slash = strrchr(bench_cfg.self, '/');
  int dir = slash ? (int)(slash - bench_cfg.self) : 1;
  snprintf(out, size, "%.*s/%s", dir, slash ? bench_cfg.self : ".", name);
}

int bench_source_file(const char *name, char *out, size_t size) {
  snprintf(out, size, "%s/%s", BENCH_SOURCE_DIR, name);
  return access(out, R_OK) == 0 ? 0 : -1;
}

int bench_mkdir(const char *tag, char *out, size_t size) {
  static unsigned counter;
  snprintf(out, size, "%s/%s-%u", bench_cfg.scratch, tag, counter++);
  return mkdir(out, 0700);
}

int bench_write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  int ok;
  if (!f) return -1;
  ok = fwrite(data, 1, size, f) == size;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

void *bench_read_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  char *buf = NULL;
  ssize_t n;
  size_t got = 0;
  if (fd < 0) return NULL;
  if (fstat(fd, &st) != 0 || !(buf = malloc((size_t)st.st_size + 1))) goto fail;
  while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
    got += (size_t)n;
  if (got != (size_t)st.st_size) goto fail;
  close(fd);
  *size = got;
  return buf;
fail:
  free(buf);
  close(fd);
  return NULL;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

void bench_rmtree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

size_t bench_rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (!f) return 0;
  if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
  fclose(f);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

int bench_mapped(const char *needle) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (!f) return 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
  fclose(f);
  return found;
}
