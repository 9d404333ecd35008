/* test_cache_race - an entry replaced while it is being read: one process rewrites the
 * same entry over and over (unique temporary file, then rename) with two different images
 * while another reads it in a loop. Every read must be a hit on one of the two images,
 * whole, never a torn or mixed entry, and nothing may be left behind but the entry. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "cache/cache.h"

static cj_image *compile_image(const char *src) {
  cj_request r;
  cj_image *im = NULL;
  cujit_options o = {0};
  o.arch = "compute_80";
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cj_request_init(&r, src, "race.cu", &o, NULL));
  assert_ok(cj_cache_compile(&r, &im));
  cj_request_free(&r);
  return im;
}

static int files_in(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static void replaced_while_read(void **state) {
  cj_image *a = compile_image("__global__ void ka(int *x) { x[0] = 111111; }\n");
  cj_image *b = compile_image("__global__ void kb(int *x) { x[0] = 222222; }\n");
  char *root = test_tempdir("race");
  char shard[4200];
  cj_entry_path p;
  cj_key key;
  pid_t writer;
  int i, hits = 0, seen_a = 0, seen_b = 0;
  volatile long *writes =
      mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  (void)state;
  assert_true(writes != MAP_FAILED);
  *writes = 0;
  memset(&key, 0x5a, sizeof key);
  cj_root r = {.fd = open(root, O_RDONLY | O_DIRECTORY)};
  snprintf(r.path, sizeof r.path, "%s", root);
  assert_int_equal(cj_disk_entry_open(&r, &key, 1, &p), 0);
  assert_true(cj_disk_write(&p, &key, a, NULL, "race.cu", NULL) > 0);
  writer = fork();
  assert_true(writer >= 0);
  if (writer == 0) { /* rewrite until killed */
    for (i = 0;; i++) {
      cj_disk_write(&p, &key, i % 2 ? a : b, NULL, "race.cu", NULL);
      __atomic_add_fetch(writes, 1, __ATOMIC_RELAXED);
    }
  }
  /* read until the entry has been replaced 300 times under the reader (or 3 million reads) */
  for (i = 0; __atomic_load_n(writes, __ATOMIC_RELAXED) < 300 && i < 3000000; i++) {
    cj_image *got = NULL;
    int rc = cj_disk_read(&p, &key, NULL, &got);
    if (rc != CJ_DISK_HIT) {
      kill(writer, SIGKILL);
      fail_msg("read %d: result %d, not a hit", i, rc);
    }
    seen_a |= strcmp(got->ptx, a->ptx) == 0;
    seen_b |= strcmp(got->ptx, b->ptx) == 0;
    if (strcmp(got->ptx, a->ptx) != 0 && strcmp(got->ptx, b->ptx) != 0) {
      kill(writer, SIGKILL);
      fail_msg("read %d: the PTX is neither image's", i);
    }
    hits++;
    cj_image_unref(got);
  }
  kill(writer, SIGKILL);
  waitpid(writer, NULL, 0);
  printf("%d reads, all hits, while the entry was replaced %ld times\n", hits, *writes);
  assert_true(*writes >= 300);
  assert_true(seen_a && seen_b);
  /* the killed writer may leave its temporary file; never a torn entry */
  {
    cj_image *last = NULL;
    assert_int_equal(cj_disk_read(&p, &key, NULL, &last), CJ_DISK_HIT);
    cj_image_unref(last);
  }
  snprintf(shard, sizeof shard, "%s/%s", root, p.shard);
  assert_true(files_in(shard) >= 1 && files_in(shard) <= 2);
  cj_image_unref(b);
  cj_image_unref(a);
  munmap((void *)writes, sizeof(long));
  cj_disk_entry_close(&p);
  close(r.fd);
  test_rmtree(root);
  free(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(replaced_while_read)};
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
