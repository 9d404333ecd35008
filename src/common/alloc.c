/* alloc.c - the library's allocation functions, with an optional failure hook for tests. */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

#ifdef CUJIT_FAULT_INJECTION
/* Test hook: the n-th allocation from now fails (1 = the next one); 0 turns it off.
 * Exported for the fault-injection tests only; not part of the API. */
static long fail_countdown;
void cujit_test_fail_alloc_after(long n) { __atomic_store_n(&fail_countdown, n, __ATOMIC_SEQ_CST); }
long cujit_test_alloc_countdown(void) { return __atomic_load_n(&fail_countdown, __ATOMIC_SEQ_CST); }
static int should_fail(void) {
  long left = __atomic_load_n(&fail_countdown, __ATOMIC_SEQ_CST);
  if (left <= 0) return 0;
  return __atomic_sub_fetch(&fail_countdown, 1, __ATOMIC_SEQ_CST) == 0;
}
#else
#  define should_fail() 0
#endif

void *cj_malloc(size_t n) { return should_fail() ? NULL : malloc(n ? n : 1); }

void *cj_calloc(size_t count, size_t size) {
  return should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *cj_realloc(void *p, size_t n) { return should_fail() ? NULL : realloc(p, n ? n : 1); }

void cj_free(void *p) { free(p); }

char *cj_memdup(const void *p, size_t n) {
  char *d = cj_malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, p, n);
  d[n] = '\0';
  return d;
}

char *cj_strdup(const char *s) { return s ? cj_memdup(s, strlen(s)) : NULL; }

int cj_strv_dup(const char *const *in, char ***out, size_t *count) {
  size_t n = 0, i;
  char **v;
  *out = NULL;
  *count = 0;
  if (!in) return 0;
  while (in[n]) n++;
  if (!n) return 0;
  v = cj_calloc(n, sizeof *v);
  if (!v) return -1;
  for (i = 0; i < n; i++) {
    v[i] = cj_strdup(in[i]);
    if (!v[i]) {
      cj_strv_free(v, i);
      return -1;
    }
  }
  *out = v;
  *count = n;
  return 0;
}

void cj_strv_free(char **v, size_t count) {
  size_t i;
  if (!v) return;
  for (i = 0; i < count; i++) cj_free(v[i]);
  cj_free(v);
}

int cj_vec_reserve(void *arrp, size_t *cap, size_t need, size_t elem) {
  void *old, *p;
  size_t c;
  if (need <= *cap) return 0;
  c = *cap < 8 ? 8 : *cap;
  while (c < need) c = c > SIZE_MAX / 2 ? need : 2 * c;
  if (elem && c > SIZE_MAX / elem) return -1;
  memcpy(&old, arrp, sizeof old); /* arrp is a T **: its pointer is copied, not aliased */
  if (!(p = cj_realloc(old, c * elem))) return -1;
  memcpy(arrp, &p, sizeof p);
  *cap = c;
  return 0;
}
