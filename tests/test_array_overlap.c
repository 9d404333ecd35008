/* test_array_overlap - how an operation's output meets an input (cj_layout_meet), which
 * decides whether the result goes through a temporary: apart, element for element (in
 * place), or overlapping in any other way (the same memory reversed, transposed, shifted,
 * in part, interleaved, or read as another element type). Pure layout: no device. */
#include "testutil.h"
#include "array/array.h"

/* An array of `type` at byte address `at` with this shape and strides (in elements). */
static cj_array view(int type, uint64_t at, int ndim, const int64_t *shape,
                     const int64_t *strides) {
  cj_array a;
  int d;
  memset(&a, 0, sizeof a);
  a.type = type;
  a.ndim = ndim;
  a.size = 1;
  a.data = (CUdeviceptr)at;
  for (d = 0; d < ndim; d++) {
    a.shape[d] = shape[d];
    a.strides[d] = strides[d];
    a.size *= shape[d];
  }
  a.contig = cj_layout_is_contiguous(ndim, shape, strides);
  return a;
}

#define BASE 0x100000u

static void same_array_is_in_place(void **state) {
  cj_array a = view(CUJIT_TYPE_F32, BASE, 2, (int64_t[]){3, 5}, (int64_t[]){5, 1});
  (void)state;
  assert_int_equal(cj_layout_meet(&a, &a), CJ_SAME);
}

static void reversed_transposed_shifted_overlap(void **state) {
  int64_t n = 1 << 20;
  cj_array a = view(CUJIT_TYPE_F32, BASE, 1, &n, (int64_t[]){1});
  cj_array rev = view(CUJIT_TYPE_F32, BASE + 4 * (n - 1), 1, &n, (int64_t[]){-1});
  cj_array m = view(CUJIT_TYPE_F32, BASE, 2, (int64_t[]){4, 4}, (int64_t[]){4, 1});
  cj_array t = view(CUJIT_TYPE_F32, BASE, 2, (int64_t[]){4, 4}, (int64_t[]){1, 4});
  int64_t k = n - 1;
  cj_array lo = view(CUJIT_TYPE_F32, BASE, 1, &k, (int64_t[]){1});
  cj_array hi = view(CUJIT_TYPE_F32, BASE + 4, 1, &k, (int64_t[]){1});
  (void)state;
  assert_int_equal(cj_layout_meet(&a, &rev), CJ_OVERLAP);
  assert_int_equal(cj_layout_meet(&rev, &a), CJ_OVERLAP);
  assert_int_equal(cj_layout_meet(&m, &t), CJ_OVERLAP);
  assert_int_equal(cj_layout_meet(&lo, &hi), CJ_OVERLAP);
  assert_int_equal(cj_layout_meet(&hi, &lo), CJ_OVERLAP);
}

static void apart_and_interleaved(void **state) {
  int64_t half = 8, every = 8;
  cj_array lo = view(CUJIT_TYPE_I32, BASE, 1, &half, (int64_t[]){1});
  cj_array hi = view(CUJIT_TYPE_I32, BASE + 4 * 8, 1, &half, (int64_t[]){1});
  cj_array even = view(CUJIT_TYPE_I32, BASE, 1, &every, (int64_t[]){2});
  cj_array odd = view(CUJIT_TYPE_I32, BASE + 4, 1, &every, (int64_t[]){2});
  int64_t zero = 0;
  cj_array empty = view(CUJIT_TYPE_I32, BASE, 1, &zero, (int64_t[]){1});
  (void)state;
  assert_int_equal(cj_layout_meet(&lo, &hi), CJ_APART);
  assert_int_equal(cj_layout_meet(&hi, &lo), CJ_APART);
  /* interleaved views share no element, but their spans overlap: counted as overlapping
   * (a temporary is never wrong, only slower) */
  assert_int_equal(cj_layout_meet(&even, &odd), CJ_OVERLAP);
  assert_int_equal(cj_layout_meet(&empty, &lo), CJ_APART);
  assert_int_equal(cj_layout_meet(&lo, &empty), CJ_APART);
}

static void other_element_size_overlaps(void **state) {
  int64_t n = 8;
  cj_array f = view(CUJIT_TYPE_F32, BASE, 1, &n, (int64_t[]){1});
  cj_array i = view(CUJIT_TYPE_I32, BASE, 1, &n, (int64_t[]){1});
  cj_array d = view(CUJIT_TYPE_F64, BASE, 1, &n, (int64_t[]){1});
  (void)state;
  assert_int_equal(cj_layout_meet(&f, &i), CJ_SAME); /* one element size: in place */
  assert_int_equal(cj_layout_meet(&f, &d), CJ_OVERLAP);
}

static void fewer_dimensions_same_elements(void **state) {
  int64_t n = 6;
  cj_array flat = view(CUJIT_TYPE_F64, BASE, 1, &n, (int64_t[]){1});
  cj_array row = view(CUJIT_TYPE_F64, BASE, 2, (int64_t[]){1, 6}, (int64_t[]){6, 1});
  cj_array square = view(CUJIT_TYPE_F64, BASE, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1});
  (void)state;
  assert_int_equal(cj_layout_meet(&flat, &row), CJ_SAME);
  assert_int_equal(cj_layout_meet(&row, &flat), CJ_SAME);
  assert_int_equal(cj_layout_meet(&flat, &square), CJ_OVERLAP);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_array_is_in_place),
      cmocka_unit_test(reversed_transposed_shifted_overlap),
      cmocka_unit_test(apart_and_interleaved),
      cmocka_unit_test(other_element_size_overlaps),
      cmocka_unit_test(fewer_dimensions_same_elements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
