/* test_gpu_launch_ex - cooperative launches (a grid that synchronises itself with
 * cooperative_groups) and thread-block clusters (each block reporting its rank in its
 * cluster), with In/Out buffers and timings; grids that break a rule are refused before
 * anything runs. Cluster launches need compute capability 9.0 (an H100); on older devices
 * the group checks that they are refused. */
#include "gputest.h"

/* Each round moves every value one block along (from the next block's threads), then the
 * whole grid waits: after R rounds a[i] holds a[(i + R * blockDim) % n] + R of the start.
 * Without a grid-wide barrier, blocks would read values other blocks have not written. */
static const char kSrc[] = "#include <cooperative_groups.h>\n"
                           "namespace cg = cooperative_groups;\n"
                           "__global__ void rotate(int *a, int *b, int n, int rounds) {\n"
                           "  cg::grid_group g = cg::this_grid();\n"
                           "  int i = (int)g.thread_rank();\n"
                           "  for (int k = 0; k < rounds; k++) {\n"
                           "    int *src = (k & 1) ? b : a, *dst = (k & 1) ? a : b;\n"
                           "    if (i < n) dst[i] = src[(i + (int)blockDim.x) % n] + 1;\n"
                           "    g.sync();\n"
                           "  }\n"
                           "}\n"
                           "__global__ void one(unsigned *out) { out[blockIdx.x] = 1; }\n";

static const char kClusterSrc[] =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "__device__ void report(unsigned *out) {\n"
    "  cg::cluster_group c = cg::this_cluster();\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = c.block_rank() + 100u * c.num_blocks();\n"
    "}\n"
    "__global__ void ranks(unsigned *out) { report(out); }\n"
    "__global__ void __cluster_dims__(2, 1, 1) fixed_ranks(unsigned *out) { report(out); }\n";

enum { ROUNDS = 6 };

static int device_cc(void) {
  int major = 0, minor = 0;
  assert_ok(cujit_device_get_info(0, NULL, 0, &major, &minor));
  return major * 10 + minor;
}

static void rotate_expect(const int *a, int n, int block) {
  int i;
  for (i = 0; i < n; i++)
    if (a[i] != (i + ROUNDS * block) % n + ROUNDS)
      fail_msg("a[%d] = %d, wanted %d: the grid did not synchronise", i, a[i],
               (i + ROUNDS * block) % n + ROUNDS);
}

/* The largest cooperative grid: the occupancy calculator's grid for its block size. */
static void coop_shape(cujit_function *f, int *grid, int *block) {
  assert_ok(cujit_function_suggest_block(f, 0, block, grid));
  assert_true(*grid > 1 && *block > 0);
}

static void cooperative_grid_synchronises(void **state) {
  cujit_function *f = gpu_function(mod, "rotate");
  cujit_launch_options o = {0};
  int grid, block, n, i, *a, *b;
  float ms = -1.0f;
  (void)state;
  coop_shape(f, &grid, &block);
  n = grid * block;
  a = malloc((size_t)n * sizeof *a);
  b = malloc((size_t)n * sizeof *b);
  for (i = 0; i < n; i++) a[i] = i;
  o.flags = CUJIT_LAUNCH_OPT_COOPERATIVE;
  o.elapsed_ms = &ms;
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(grid), CUJIT_DIM3(block), &o,
                            cujit_inout(a, (size_t)n * sizeof *a),
                            cujit_out(b, (size_t)n * sizeof *b), cujit_i32(n), cujit_i32(ROUNDS)));
  rotate_expect(a, n, block);
  assert_true(ms >= 0.0f);
  /* the same through cujit_call_ex, which must leave its direct path for these options */
  for (i = 0; i < n; i++) a[i] = i;
  o.elapsed_ms = NULL;
  assert_ok(cujit_call_ex(f, CUJIT_DIM3(grid), CUJIT_DIM3(block), &o,
                          CUJIT_INOUT_PTR(a, (size_t)n * sizeof *a),
                          CUJIT_OUT_PTR(b, (size_t)n * sizeof *b), n, ROUNDS));
  rotate_expect(a, n, block);
  assert_int_equal(gpu_pool_in_use(), 0);
  free(a);
  free(b);
}

static void cooperative_grid_too_large_is_refused(void **state) {
  cujit_function *f = gpu_function(mod, "rotate");
  cujit_launch_options o = {0};
  char want[96];
  int grid, block, n, *a;
  (void)state;
  coop_shape(f, &grid, &block);
  n = (grid + 1) * block;
  a = calloc((size_t)n, sizeof *a);
  a[0] = 12345;
  o.flags = CUJIT_LAUNCH_OPT_COOPERATIVE;
  snprintf(want, sizeof want, "the grid has %d blocks while at most %d fit", grid + 1, grid);
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(grid + 1), CUJIT_DIM3(block), &o,
                                       cujit_inout(a, (size_t)n * sizeof *a), cujit_ptr(0),
                                       cujit_i32(n), cujit_i32(ROUNDS)),
                       CUJIT_ERROR_LAUNCH_CONFIG, want);
  assert_non_null(strstr(cujit_last_error(), "cannot launch kernel 'rotate'"));
  assert_int_equal(a[0], 12345); /* nothing was copied or run */
  assert_int_equal(gpu_pool_in_use(), 0);
  free(a);
}

static void unknown_flags_are_refused(void **state) {
  cujit_function *f = gpu_function(mod, "one");
  cujit_launch_options o = {0};
  unsigned out[1];
  (void)state;
  o.flags = 0x80;
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(1), CUJIT_DIM3(1), &o,
                                       cujit_out(out, sizeof out)),
                       CUJIT_ERROR_INVALID_VALUE, "flags has unknown bits 0x80");
}

static void clusters_on_older_devices_are_refused(void **state) {
  cujit_function *f = gpu_function(mod, "one");
  cujit_launch_options o = {0};
  unsigned out[4];
  (void)state;
  if (device_cc() >= 90) skip();
  o.cluster = CUJIT_DIM3(2);
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(4), CUJIT_DIM3(32), &o,
                                       cujit_out(out, sizeof out)),
                       CUJIT_ERROR_LAUNCH_CONFIG, "need a device of compute capability 9.0");
}

static cujit_module *cluster_module(void) {
  if (device_cc() < 90) {
    test_skip_part("thread-block clusters need compute capability 9.0");
    skip();
  }
  return gpu_module(kClusterSrc, "clusters.cu", NULL);
}

static void expect_ranks(const unsigned *out, unsigned n, unsigned size) {
  unsigned b;
  for (b = 0; b < n; b++)
    if (out[b] != b % size + 100u * size)
      fail_msg("block %u reported %u, wanted rank %u in a cluster of %u", b, out[b], b % size,
               size);
}

static void cluster_ranks_are_reported(void **state) {
  enum { GRID = 8 };
  cujit_module *m = cluster_module();
  cujit_function *f = gpu_function(m, "ranks");
  cujit_launch_options o = {0};
  unsigned out[GRID];
  float ms = -1.0f;
  (void)state;
  o.cluster = CUJIT_DIM3(2);
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(GRID), CUJIT_DIM3(64), &o, cujit_out(out, sizeof out)));
  expect_ranks(out, GRID, 2);
  o.cluster = CUJIT_DIM3(4);
  o.elapsed_ms = &ms;
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(GRID), CUJIT_DIM3(64), &o, cujit_out(out, sizeof out)));
  expect_ranks(out, GRID, 4);
  assert_true(ms >= 0.0f);
  /* without options each block is its own cluster */
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(GRID), CUJIT_DIM3(64), cujit_out(out, sizeof out)));
  expect_ranks(out, GRID, 1);
  cujit_module_destroy(m);
}

static void declared_clusters_launch_without_options(void **state) {
  enum { GRID = 6 };
  cujit_module *m = cluster_module();
  cujit_function *f = gpu_function(m, "fixed_ranks");
  cujit_launch_options o = {0};
  unsigned out[GRID];
  (void)state;
  assert_ok(CUJIT_LAUNCH(f, CUJIT_DIM3(GRID), CUJIT_DIM3(32), cujit_out(out, sizeof out)));
  expect_ranks(out, GRID, 2);
  o.cluster = CUJIT_DIM3(2); /* the same as declared */
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(GRID), CUJIT_DIM3(32), &o, cujit_out(out, sizeof out)));
  expect_ranks(out, GRID, 2);
  o.cluster = CUJIT_DIM3(4, 1, 1);
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(8), CUJIT_DIM3(32), &o,
                                       cujit_out(out, sizeof out)),
                       CUJIT_ERROR_LAUNCH_CONFIG,
                       "the kernel declares __cluster_dims__(2, 1, 1) but the options ask for "
                       "clusters of 4 x 1 x 1");
  cujit_module_destroy(m);
}

static void cluster_rules_are_checked_before_launch(void **state) {
  cujit_module *m = cluster_module();
  cujit_function *f = gpu_function(m, "ranks");
  cujit_launch_options o = {0};
  unsigned out[32] = {7};
  (void)state;
  o.cluster = CUJIT_DIM3(2);
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(5), CUJIT_DIM3(32), &o,
                                       cujit_out(out, 5 * sizeof *out)),
                       CUJIT_ERROR_LAUNCH_CONFIG, "grid.x = 5 is not a multiple of cluster.x = 2");
  assert_int_equal(out[0], 7);
  o.cluster = CUJIT_DIM3(16);
  assert_status_detail(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(32), CUJIT_DIM3(32), &o,
                                       cujit_out(out, sizeof out)),
                       CUJIT_ERROR_LAUNCH_CONFIG, "exceeds the portable limit of 8 blocks");
  /* allowed when asked for, where the device runs clusters of 16 (an H100 does) */
  o.flags = CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER;
  assert_ok(CUJIT_LAUNCH_EX(f, CUJIT_DIM3(32), CUJIT_DIM3(32), &o, cujit_out(out, sizeof out)));
  expect_ranks(out, 32, 16);
  assert_int_equal(gpu_pool_in_use(), 0);
  cujit_module_destroy(m);
}

GPU_GROUP_MAIN(kSrc, "launch_ex.cu", NULL, cmocka_unit_test(cooperative_grid_synchronises),
               cmocka_unit_test(cooperative_grid_too_large_is_refused),
               cmocka_unit_test(unknown_flags_are_refused),
               cmocka_unit_test(clusters_on_older_devices_are_refused),
               cmocka_unit_test(cluster_ranks_are_reported),
               cmocka_unit_test(declared_clusters_launch_without_options),
               cmocka_unit_test(cluster_rules_are_checked_before_launch))
