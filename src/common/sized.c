/* sized.c - public structs that grow. Each starts with `size_t size`, the bytes of the
 * struct as the caller's header laid it out (its *_INIT macro sets it; 0, from a
 * zero-initialised struct, stands for the first version). The library reads and writes
 * only that much of the caller's struct, so that a program built against an older header
 * keeps working when fields are added at the end, and a program built against a newer
 * header works with an older library as long as it leaves the newer fields zero.
 *
 * Rules for adding a field: add it at the end, at an offset of at least the previous
 * version's size (never in its tail padding, which callers do not zero reliably), with
 * an alignment no larger than the struct's, make zero mean the old behaviour, and leave
 * the struct's CJ_SIZE_V1 as it is. */
#include <ctype.h>
#include <string.h>

#include "common/common.h"

/* The struct's name turned into its initialiser's: cujit_launch_options ->
 * CUJIT_LAUNCH_OPTIONS_INIT. */
static void init_name(const char *type, char *out, size_t size) {
  size_t i = 0;
  for (; type[i] && i + sizeof "_INIT" < size; i++) out[i] = (char)toupper((unsigned char)type[i]);
  memcpy(out + i, "_INIT", sizeof "_INIT");
}

/* The bytes a caller's struct holds: its size field, or v1 for 0. A size below the first
 * version's or beyond CJ_SIZE_MAX is an uninitialised struct or a positional initialiser
 * written for another layout. */
static cujit_status room(const char *fn, const char *type, size_t size, size_t v1, size_t *n) {
  char init[64];
  *n = size ? size : v1;
  if (*n >= v1 && *n <= CJ_SIZE_MAX) return CUJIT_OK;
  init_name(type, init, sizeof init);
  if (*n < v1)
    return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                   "%s: %s.size is %zu, smaller than its first "
                   "version (%zu bytes); initialise the struct with %s, or zero it for the "
                   "defaults",
                   fn, type, *n, v1, init);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE,
                 "%s: %s.size is %zu, more than any version of it "
                 "(at most %d bytes): the struct was not initialised; initialise it with %s, "
                 "or zero it for the defaults",
                 fn, type, *n, CJ_SIZE_MAX, init);
}

cujit_status cj_sized_in(const char *fn, const char *type, const void *user, size_t v1, void *own,
                         size_t own_size) {
  const unsigned char *u = user;
  size_t n = 0, i;
  memset(own, 0, own_size);
  memcpy(own, &own_size, sizeof own_size);
  if (!user) return CUJIT_OK;
  CJ_TRY(room(fn, type, *(const size_t *)user, v1, &n));
  for (i = own_size; i < n; i++)
    if (u[i])
      return cj_fail(CUJIT_ERROR_NOT_SUPPORTED,
                     "%s: %s sets fields that this libcujit (%s) "
                     "does not know: it is %zu bytes, of which this version knows %zu; link a "
                     "newer libcujit, or leave the newer fields zero",
                     fn, type, CUJIT_VERSION_STRING, n, own_size);
  n = n < own_size ? n : own_size;
  memcpy((unsigned char *)own + sizeof(size_t), u + sizeof(size_t), n - sizeof(size_t));
  return CUJIT_OK;
}

cujit_status cj_sized_out(const char *fn, const char *type, void *user, size_t v1, const void *own,
                          size_t own_size) {
  size_t n = 0;
  CJ_TRY(room(fn, type, *(const size_t *)user, v1, &n));
  n = n < own_size ? n : own_size;
  memcpy((unsigned char *)user + sizeof(size_t), (const unsigned char *)own + sizeof(size_t),
         n - sizeof(size_t));
  return CUJIT_OK;
}
