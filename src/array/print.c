/* print.c - device arrays as NumPy prints them (text.c writes the text): the elements shown
 * are read from the device, all of them (at most 1000), or for a summarised array only its
 * corners, the first and last 3 of each dimension, through views of them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "array/array.h"

/* A view of a's corner `mask` (bit d: the last 3 of summarised dimension d, else the
 * first 3; other dimensions whole) into *view. */
static cujit_status corner(const cj_array *a, const int64_t *kept, unsigned mask,
                           cujit_array **view) {
  cujit_array *cur = NULL, *next = NULL;
  int d;
  for (d = 0; d < a->ndim; d++) {
    int64_t n = a->shape[d], start;
    cujit_status st;
    if (kept[d] == n) continue;
    start = mask >> d & 1 ? n - kept[d] / 2 : 0;
    st = cujit_array_slice(cur ? cur : cj_array_handle(a), d, start, start + kept[d] / 2, 1, &next);
    cujit_array_destroy(cur);
    if (st != CUJIT_OK) return st;
    cur = next;
  }
  *view = cur;
  return CUJIT_OK;
}

/* Corner `mask`'s elements (read from the device into tmp) into their places among the
 * kept elements. */
static void place(const cj_array *a, const int64_t *kept, unsigned mask, const char *tmp,
                  char *shown) {
  int64_t sub[CUJIT_ARRAY_MAX_DIMS], steps[CUJIT_ARRAY_MAX_DIMS], n = 1, k;
  size_t esize = cj_elem_of(a->type)->size;
  int d;
  for (d = 0; d < a->ndim; d++) {
    sub[d] = kept[d] == a->shape[d] ? a->shape[d] : kept[d] / 2;
    n *= sub[d];
  }
  cj_layout_contiguous(a->ndim, kept, steps);
  for (k = 0; k < n; k++) {
    int64_t rest = k, off = 0;
    for (d = a->ndim - 1; d >= 0; d--) {
      int64_t i = rest % sub[d];
      rest /= sub[d];
      if (kept[d] != a->shape[d] && (mask >> d & 1)) i += kept[d] / 2;
      off += i * steps[d];
    }
    memcpy(shown + (size_t)off * esize, tmp + (size_t)k * esize, esize);
  }
}

/* The corners of a summarised array, read into shown (of the kept shape). */
static cujit_status read_corners(const cj_array *a, const int64_t *kept, char *shown) {
  char tmp[6 * 6 * 6 * 6 * 16]; /* a corner: at most 6 elements a dimension */
  unsigned mask;
  int d;
  for (mask = 0; mask < 1u << a->ndim; mask++) {
    cujit_array *view = NULL;
    cujit_status st;
    int twice = 0;
    for (d = 0; d < a->ndim; d++) twice |= (mask >> d & 1) && kept[d] == a->shape[d];
    if (twice) continue; /* a dimension shown whole has one corner */
    CJ_TRY(corner(a, kept, mask, &view));
    st = cujit_array_read(view ? view : cj_array_handle(a), tmp,
                          cujit_array_nbytes(view ? view : cj_array_handle(a)));
    cujit_array_destroy(view);
    if (st != CUJIT_OK) return st;
    place(a, kept, mask, tmp, shown);
  }
  return CUJIT_OK;
}

/* The text of array `h` into b. */
static cujit_status array_text(const cujit_array *h, const char *fn, cj_buf *b) {
  int64_t kept[CUJIT_ARRAY_MAX_DIMS], n = 1;
  size_t bytes;
  char *shown;
  cj_array *a;
  cujit_status st;
  int d, summarised;
  CJ_TRY(cj_array_get(h, fn, "a", &a));
  summarised = cj_text_kept(a->ndim, a->shape, kept);
  for (d = 0; d < a->ndim; d++) n *= kept[d];
  bytes = (size_t)n * cj_elem_of(a->type)->size;
  if (!(shown = cj_malloc(bytes ? bytes : 1))) return cj_fail_oom("printing an array");
  if (!n)
    st = CUJIT_OK;
  else if (summarised)
    st = read_corners(a, kept, shown);
  else
    st = cujit_array_read(h, shown, bytes);
  if (st == CUJIT_OK) cj_text_array(b, a->type, a->ndim, a->shape, shown);
  cj_free(shown);
  return st;
}

cujit_status cujit_array_format(const cujit_array *a, char *buf, size_t size, size_t *length) {
  static const char fn[] = "cujit_array_format";
  cj_buf b = {0};
  cujit_status st;
  CJ_CHECK(buf || !size, CUJIT_ERROR_INVALID_VALUE, "%s: buf is NULL and size is %zu", fn, size);
  st = array_text(a, fn, &b);
  if (st == CUJIT_OK) st = cj_text_out(&b, buf, size, length);
  cj_buf_free(&b);
  return st;
}

cujit_status cujit_array_print(const cujit_array *a, FILE *stream) {
  static const char fn[] = "cujit_array_print";
  cj_buf b = {0};
  cujit_status st;
  CJ_CHECK(stream, CUJIT_ERROR_INVALID_VALUE,
           "%s: stream is NULL; pass stdout, or a FILE * open for writing", fn);
  st = array_text(a, fn, &b);
  if (st == CUJIT_OK) cj_buf_puts(&b, "\n");
  if (st == CUJIT_OK && b.oom) st = cj_fail_oom("printing an array");
  if (st == CUJIT_OK && fwrite(b.data, 1, b.len, stream) != b.len)
    st = cj_fail(CUJIT_ERROR_FILE, "%s: writing the array's text to the stream failed (%s)", fn,
                 strerror(errno));
  cj_buf_free(&b);
  return st;
}
