/* test_timer - timers of the work on a stream without a device: their arguments are
 * checked before the driver is needed, a handle that is no live timer is refused, and
 * starting one needs the driver (CUJIT_ERROR_NO_DRIVER, saying so). The driver path is
 * forced to a missing file, so this runs the same on machines with and without a GPU;
 * test_gpu_timer times real work. */
#include "testutil.h"

static void arguments(void **state) {
  cujit_timer *t = (cujit_timer *)&t; /* not a timer */
  double ms = 5;
  (void)state;
  assert_status_detail(cujit_timer_start(NULL, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_timer_start: timer is NULL");
  assert_status_detail(cujit_timer_start(&t, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_timer_start: *timer is not a live timer");
  assert_ptr_equal(t, (cujit_timer *)&t); /* left as it was */
  assert_status_detail(cujit_timer_stop(t, NULL), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_timer_stop: ms is NULL");
  assert_status_detail(cujit_timer_stop(t, &ms), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_timer_stop: the timer is not a live timer");
  assert_true(ms == 0);
  ms = 5;
  assert_status_detail(cujit_timer_stop(NULL, &ms), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_timer_stop: the timer is not a live timer");
  assert_true(ms == 0);
  cujit_timer_destroy(NULL); /* nothing */
  cujit_timer_destroy(t);    /* not a timer: nothing freed, said in the detail */
  assert_non_null(strstr(cujit_last_error(), "cujit_timer_destroy: not a live timer"));
}

static void needs_the_driver(void **state) {
  cujit_timer *t = NULL;
  (void)state;
  assert_status_detail(cujit_timer_start(&t, NULL), CUJIT_ERROR_NO_DRIVER, "libcuda");
  assert_null(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(arguments),
      cmocka_unit_test(needs_the_driver),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
