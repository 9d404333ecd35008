/* test_launch_ex - the rules of cooperative launches and thread-block clusters, checked
 * before a launch against a device and a kernel described here (no device needed), and
 * the launch options' defaults. */
#include "testutil.h"
#include "launch/launch.h"

static void zeroed_options_are_a_plain_launch(void **state) {
  cujit_launch_options o = {0};
  static const cujit_launch_options defaults;
  (void)state;
  assert_int_equal(CJ_OPTS_EX(&o), 0);
  assert_int_equal(CJ_OPTS_EX(&defaults), 0);
  assert_int_equal(o.flags, 0);
  assert_int_equal(o.cluster.x | o.cluster.y | o.cluster.z, 0);
  o.flags = CUJIT_LAUNCH_OPT_COOPERATIVE;
  assert_int_not_equal(CJ_OPTS_EX(&o), 0);
  o.flags = 0;
  o.cluster.z = 1; /* any cluster dimension asks for clusters */
  assert_int_not_equal(CJ_OPTS_EX(&o), 0);
  /* the new fields come after the old ones, so older initialisers keep their meaning */
  assert_true(offsetof(cujit_launch_options, flags) > offsetof(cujit_launch_options, elapsed_ms));
  assert_true(offsetof(cujit_launch_options, cluster) > offsetof(cujit_launch_options, flags));
}

static void cooperative_grid_must_fit(void **state) {
  (void)state;
  /* 132 multiprocessors, 2 blocks of 256 threads each: 264 blocks at once */
  assert_ok(cj_coop_check("k", 1, CUJIT_DIM3(264), CUJIT_DIM3(256), 0, 2, 132));
  assert_ok(cj_coop_check("k", 1, CUJIT_DIM3(11, 12, 2), CUJIT_DIM3(256), 0, 2, 132));
  assert_status_detail(cj_coop_check("sum", 1, CUJIT_DIM3(265), CUJIT_DIM3(256), 1024, 2, 132),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "cannot launch kernel 'sum': a cooperative launch needs all its blocks "
                       "resident at once, and the grid has 265 blocks while at most 264 fit on "
                       "this device (2 per multiprocessor x 132 multiprocessors, for blocks of "
                       "256 threads with 1024 bytes of dynamic shared memory)");
  assert_non_null(strstr(cujit_last_error(), "launch at most 264 blocks"));
  assert_non_null(strstr(cujit_last_error(), "nothing was launched"));
  /* a block too large to be resident at all */
  assert_status_detail(cj_coop_check("k", 1, CUJIT_DIM3(1), CUJIT_DIM3(1024), 0, 0, 132),
                       CUJIT_ERROR_LAUNCH_CONFIG, "the grid has 1 blocks while at most 0 fit");
  assert_status_detail(cj_coop_check("k", 0, CUJIT_DIM3(1), CUJIT_DIM3(32), 0, 2, 132),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "this device does not support cooperative launches");
}

static void clusters_need_sm90(void **state) {
  (void)state;
  assert_ok(cj_cluster_check("k", 90, CUJIT_DIM3(8), CUJIT_DIM3(2), 0));
  assert_ok(cj_cluster_check("k", 100, CUJIT_DIM3(8, 4, 2), CUJIT_DIM3(2, 2, 2), 0));
  assert_status_detail(cj_cluster_check("k", 80, CUJIT_DIM3(8), CUJIT_DIM3(2), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "thread-block clusters need a device of compute capability 9.0 or newer, "
                       "and this one is 8.0");
}

static void grid_must_be_whole_clusters(void **state) {
  (void)state;
  assert_status_detail(cj_cluster_check("k", 90, CUJIT_DIM3(5), CUJIT_DIM3(2), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.x = 5 is not a multiple of cluster.x = 2");
  assert_non_null(strstr(cujit_last_error(), "round grid.x up to 6"));
  assert_status_detail(cj_cluster_check("k", 90, CUJIT_DIM3(4, 3), CUJIT_DIM3(2, 2), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.y = 3 is not a multiple of cluster.y = 2");
  assert_status_detail(cj_cluster_check("k", 90, CUJIT_DIM3(4), (cujit_dim3){2, 0, 1}, 0),
                       CUJIT_ERROR_LAUNCH_CONFIG, "cluster.y is 0 while the cluster is 2 x 0 x 1");
}

static void cluster_size_is_limited(void **state) {
  (void)state;
  assert_ok(cj_cluster_check("k", 90, CUJIT_DIM3(16), CUJIT_DIM3(8), 0));
  assert_status_detail(cj_cluster_check("k", 90, CUJIT_DIM3(16), CUJIT_DIM3(16), 0),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "a cluster of 16 x 1 x 1 = 16 blocks exceeds the portable limit of 8 "
                       "blocks");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER"));
  assert_ok(cj_cluster_check("k", 90, CUJIT_DIM3(16), CUJIT_DIM3(16),
                             CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER));
  assert_status_detail(cj_cluster_check("k", 90, CUJIT_DIM3(4, 4, 2), CUJIT_DIM3(4, 4, 2),
                                        CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "a cluster of 4 x 4 x 2 = 32 blocks exceeds the limit of 16 blocks");
  assert_ok(cj_cluster_fit_check("k", CUJIT_DIM3(4), CUJIT_DIM3(128), 0, 8));
  assert_status_detail(cj_cluster_fit_check("k", CUJIT_DIM3(8), CUJIT_DIM3(1024), 65536, 2),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "a cluster of 8 blocks of 1024 threads with 65536 bytes of dynamic shared "
                       "memory does not fit on this device, which runs at most 2 such blocks "
                       "together");
}

static void cluster_must_match_the_kernels(void **state) {
  static const int none[3] = {0, 0, 0}, two[3] = {2, 1, 1};
  (void)state;
  assert_ok(cj_cluster_match("k", none, CUJIT_DIM3(4)));
  assert_ok(cj_cluster_match("k", two, CUJIT_DIM3(2)));
  assert_status_detail(cj_cluster_match("k", two, CUJIT_DIM3(4)), CUJIT_ERROR_LAUNCH_CONFIG,
                       "the kernel declares __cluster_dims__(2, 1, 1) but the options ask for "
                       "clusters of 4 x 1 x 1");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(zeroed_options_are_a_plain_launch),
      cmocka_unit_test(cooperative_grid_must_fit),
      cmocka_unit_test(clusters_need_sm90),
      cmocka_unit_test(grid_must_be_whole_clusters),
      cmocka_unit_test(cluster_size_is_limited),
      cmocka_unit_test(cluster_must_match_the_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
