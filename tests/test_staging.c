/* test_staging - the parts of pageable staging that need no device: how a transfer is
 * split between the lanes, the cases where staging steps aside (a device beyond the ones
 * cujit keeps lanes for, staging turned off) without touching the driver, and, on the
 * checking fake driver (tests/fakedriver), a staging thread that cannot make the device's
 * context current. The copies themselves, on every device present, are in test_gpu_inout. */
#include <stdlib.h>

#include "testutil.h"
#include "fakedriver/checkdriver.h"
#include "launch/launch.h"

/* Checks the shares of `bytes` over `nlanes` lanes: in order, each starting where the one
 * before ended and on a CJ_STAGING_ALIGN boundary, all of the same size but the last
 * non-empty one (no larger than the others), empty ones only at the end, the whole
 * transfer covered once. */
static void check_shares(size_t bytes, int nlanes) {
  size_t begin, end, at = 0, size = 0, fair = (bytes + (size_t)nlanes - 1) / (size_t)nlanes;
  int i, ended = 0;
  for (i = 0; i < nlanes; i++) {
    cj_staging_share(bytes, nlanes, i, &begin, &end);
    if (begin != at || end < begin || end > bytes)
      fail_msg("%zu bytes over %d lanes: lane %d has [%zu, %zu) after %zu", bytes, nlanes, i, begin,
               end, at);
    if (begin == end) {
      ended = 1;
      continue;
    }
    if (ended) fail_msg("%zu bytes over %d lanes: lane %d follows an empty one", bytes, nlanes, i);
    if (begin % CJ_STAGING_ALIGN)
      fail_msg("%zu bytes over %d lanes: lane %d starts at %zu", bytes, nlanes, i, begin);
    if (!size) size = end - begin;
    if (end - begin > size || (end != bytes && end - begin != size))
      fail_msg("%zu bytes over %d lanes: lane %d has %zu bytes, lane 0 %zu", bytes, nlanes, i,
               end - begin, size);
    at = end;
  }
  if (at != bytes) fail_msg("%zu bytes over %d lanes: only %zu covered", bytes, nlanes, at);
  /* the rounding never gives a lane more than its fair part and one alignment unit */
  if (size > fair + CJ_STAGING_ALIGN - 1)
    fail_msg("%zu bytes over %d lanes: shares of %zu bytes", bytes, nlanes, size);
}

static void shares_cover_a_transfer_once(void **state) {
  static const size_t sizes[] = {0,
                                 1,
                                 4095,
                                 (64u << 10) - 1,
                                 64u << 10,
                                 (64u << 10) + 1,
                                 1u << 20,
                                 (3u << 20) + 12,
                                 (9u << 20) + 12,
                                 (33u << 20) + 4,
                                 64u << 20,
                                 (16u << 16) + 1,
                                 ((size_t)1 << 30) + 7};
  size_t i, begin, end;
  int n;
  (void)state;
  for (i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (n = 1; n <= 16; n++) check_shares(sizes[i], n);
  /* large transfers use every lane */
  cj_staging_share(64u << 20, 8, 7, &begin, &end);
  assert_int_equal(begin, 56u << 20);
  assert_int_equal(end, 64u << 20);
  /* one lane takes it all */
  cj_staging_share((9u << 20) + 12, 1, 0, &begin, &end);
  assert_int_equal(begin, 0);
  assert_int_equal(end, (9u << 20) + 12);
}

/* A staging thread on which the driver refuses to make the device's context current fails
 * the transfer saying so (not with the error of a copy made without a context, which the
 * fake driver would flag), and tries again at the next transfer, which then works. */
static void a_lane_without_its_context_says_so(void **state) {
  enum { BYTES = 4 << 20 };
  static checkdriver_api cd;
  unsigned char *host = malloc(BYTES), back[16];
  CUcontext ctx;
  CUdevice dev;
  CUdeviceptr d;
  size_t i;
  (void)state;
  assert_non_null(host);
  setenv("CUJIT_STAGING_THREADS", "2", 1); /* the caller's lane and one thread's */
  assert_ok(cj_ctx_ensure(&ctx, &dev));
  assert_int_equal(checkdriver_open(getenv("CUJIT_LIBCUDA"), &cd), 0);
  assert_ok(cujit_mem_alloc(&d, BYTES));
  memset(host, 7, BYTES);
  /* the thread's, as it starts, and again at the transfer */
  cd.fail_next("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT, 2);
  assert_int_equal(cj_stage_htod(ctx, dev, d, host, BYTES, NULL), CUJIT_ERROR_DRIVER);
  if (!strstr(cujit_last_error(), "staging an In buffer failed: staging thread 1 of device 0 "
                                  "could not make the device's context current "
                                  "(cuCtxSetCurrent failed: CUDA_ERROR_INVALID_CONTEXT"))
    fail_msg("%s", cujit_last_error());
  assert_ok(cujit_synchronize());
  assert_ok(cj_stage_htod(ctx, dev, d, host, BYTES, NULL));
  assert_ok(cujit_synchronize());
  assert_int_equal(cd.peek(d + BYTES - sizeof back, back, sizeof back), 0);
  for (i = 0; i < sizeof back; i++) assert_int_equal(back[i], 7);
  assert_ok(cujit_mem_free(d));
  assert_int_equal(cd.violations(), 0);
  unsetenv("CUJIT_STAGING_THREADS");
  free(host);
}

/* A device ordinal outside the lanes' table, or staging turned off: NOT_SUPPORTED, with
 * no driver call and the thread's error detail left alone, so that the caller copies
 * directly. */
static void staging_steps_aside(void **state) {
  char host[64] = {0};
  CUdevice devs[] = {-1, CJ_DEVICE_SLOTS, CJ_DEVICE_SLOTS + 7, 0, 1};
  size_t i;
  (void)state;
  setenv("CUJIT_STAGING_THREADS", "0", 1);
  (void)cj_fail(CUJIT_ERROR_INVALID_VALUE, "an earlier failure");
  for (i = 0; i < sizeof devs / sizeof *devs; i++) {
    assert_int_equal(cj_stage_htod(NULL, devs[i], 0x1000, host, sizeof host, NULL),
                     CUJIT_ERROR_NOT_SUPPORTED);
    assert_int_equal(cj_stage_dtoh(NULL, devs[i], host, 0x1000, sizeof host, NULL),
                     CUJIT_ERROR_NOT_SUPPORTED);
  }
  assert_string_equal(cujit_last_error(), "an earlier failure");
  assert_int_equal(cujit_last_status(), CUJIT_ERROR_INVALID_VALUE);
  unsetenv("CUJIT_STAGING_THREADS");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shares_cover_a_transfer_once),
      cmocka_unit_test(a_lane_without_its_context_says_so), /* before staging is turned off */
      cmocka_unit_test(staging_steps_aside),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
