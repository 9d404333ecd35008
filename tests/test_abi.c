/* test_abi - public structs that grow, without a device. A program built against an
 * older header is simulated with a local copy of a struct's first layout, one built
 * against a newer header with unknown fields at the end (zero or not); both go through
 * the public functions that read such structs (compile, generator and launch options)
 * and that write them (cache statistics, kernel attributes, cache entries). The rule
 * itself (common/sized.c) is checked on a struct with two versions, where fields past an
 * older caller's size must read as defaults and results must stop at its size. The driver
 * path is forced to a missing file, so this runs the same with and without a GPU. */
#include "testutil.h"
#include "cujit_array.h"
#include "module/function.h"
#include "launch/launch.h"

/* ---- the rule, on a struct with two versions and a later one ---- */

typedef struct thing_v1 { /* the first version, as an older program has it */
  size_t size;
  int a, b;
} thing_v1;

typedef struct thing { /* the library's version */
  size_t size;
  int a, b;
  double c; /* added later: 0 means the old behaviour */
} thing;

typedef struct thing_v3 { /* a newer program's */
  size_t size;
  int a, b;
  double c;
  uint64_t d;
} thing_v3;

#define THING_V1 CJ_SIZE_V1(thing, b)

static void first_version_size(void **state) {
  (void)state;
  assert_int_equal(THING_V1, sizeof(thing_v1));
  assert_int_equal(CJ_SIZE_V1(cujit_launch_options, cluster), sizeof(cujit_launch_options));
  assert_int_equal(CJ_LAUNCH_OPTIONS_V1, sizeof(cujit_launch_options));
  /* the hot path's test: 0 and this layout's size read in place, the rest are copied */
  assert_true(CJ_SIZED_CURRENT(0, THING_V1, THING_V1));
  assert_true(CJ_SIZED_CURRENT(sizeof(thing), THING_V1, sizeof(thing)));
  assert_false(CJ_SIZED_CURRENT(0, THING_V1, sizeof(thing)));
  assert_false(CJ_SIZED_CURRENT(sizeof(thing_v3), THING_V1, sizeof(thing)));
  assert_false(CJ_SIZED_CURRENT(4, THING_V1, sizeof(thing)));
}

static void older_caller_reads_defaults_past_its_size(void **state) {
  /* the old struct followed by bytes that must not be read as c */
  struct {
    thing_v1 old;
    unsigned char after[32];
  } mem;
  thing own;
  (void)state;
  memset(&mem, 0x7f, sizeof mem);
  mem.old.size = sizeof mem.old;
  mem.old.a = 3;
  mem.old.b = -4;
  memset(&own, 0xab, sizeof own);
  assert_ok(cj_sized_in("f", "cujit_thing", &mem, THING_V1, &own, sizeof own));
  assert_int_equal(own.size, sizeof own);
  assert_int_equal(own.a, 3);
  assert_int_equal(own.b, -4);
  assert_true(own.c == 0.0);
  /* size 0 (zero-initialised by an older program) stands for the first version */
  mem.old.size = 0;
  memset(&own, 0xab, sizeof own);
  assert_ok(cj_sized_in("f", "cujit_thing", &mem, THING_V1, &own, sizeof own));
  assert_int_equal(own.size, sizeof own);
  assert_int_equal(own.b, -4);
  assert_true(own.c == 0.0);
  /* NULL: every field at its default */
  memset(&own, 0xab, sizeof own);
  assert_ok(cj_sized_in("f", "cujit_thing", NULL, THING_V1, &own, sizeof own));
  assert_int_equal(own.size, sizeof own);
  assert_int_equal(own.a | own.b, 0);
  assert_true(own.c == 0.0);
}

static void newer_caller_works_while_new_fields_are_zero(void **state) {
  thing_v3 v3;
  thing own;
  (void)state;
  memset(&v3, 0, sizeof v3);
  v3.size = sizeof v3;
  v3.a = 1;
  v3.c = 2.5;
  assert_ok(cj_sized_in("f", "cujit_thing", &v3, THING_V1, &own, sizeof own));
  assert_int_equal(own.size, sizeof own);
  assert_int_equal(own.a, 1);
  assert_true(own.c == 2.5);
  v3.d = 1;
  assert_status_detail(cj_sized_in("f", "cujit_thing", &v3, THING_V1, &own, sizeof own),
                       CUJIT_ERROR_NOT_SUPPORTED, "f: cujit_thing sets fields that this libcujit");
  assert_non_null(strstr(cujit_last_error(), "link a newer libcujit, or leave the newer fields "
                                             "zero"));
}

static void bad_sizes_name_the_init_macro(void **state) {
  thing_v3 v3;
  thing own;
  (void)state;
  memset(&v3, 0, sizeof v3);
  v3.size = 3;
  assert_status_detail(cj_sized_in("f", "cujit_thing", &v3, THING_V1, &own, sizeof own),
                       CUJIT_ERROR_INVALID_VALUE,
                       "f: cujit_thing.size is 3, smaller than its "
                       "first version (16 bytes); initialise the struct with CUJIT_THING_INIT, "
                       "or zero it for the defaults");
  v3.size = THING_V1 - 1;
  assert_status_detail(cj_sized_in("f", "cujit_thing", &v3, THING_V1, &own, sizeof own),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_thing.size is 15, smaller");
  memset(&v3.size, 0xa5, sizeof v3.size); /* what an uninitialised struct may hold */
  assert_status_detail(cj_sized_in("f", "cujit_thing", &v3, THING_V1, &own, sizeof own),
                       CUJIT_ERROR_INVALID_VALUE,
                       "more than any version of it (at most 4096 "
                       "bytes): the struct was not initialised; initialise it with "
                       "CUJIT_THING_INIT");
  v3.size = CJ_SIZE_MAX + 1;
  assert_status_detail(cj_sized_out("g", "cujit_thing", &v3, THING_V1, &own, sizeof own),
                       CUJIT_ERROR_INVALID_VALUE, "g: cujit_thing.size is 4097, more than any");
  assert_int_equal(v3.a, 0); /* nothing written */
}

static void results_stop_at_the_callers_size(void **state) {
  struct {
    thing_v1 old;
    unsigned char guard[24];
  } mem;
  thing_v3 v3;
  thing own;
  unsigned char guard[sizeof mem.guard];
  size_t i;
  (void)state;
  own.size = sizeof own;
  own.a = 10;
  own.b = 20;
  own.c = 30.0;
  memset(guard, 0xee, sizeof guard);
  for (i = 0; i < 2; i++) { /* the first version's size, then 0 for it */
    memset(&mem, 0xee, sizeof mem);
    mem.old.size = i ? 0 : sizeof mem.old;
    assert_ok(cj_sized_out("f", "cujit_thing", &mem, THING_V1, &own, sizeof own));
    assert_int_equal(mem.old.size, i ? 0 : sizeof mem.old); /* the caller's size stays */
    assert_int_equal(mem.old.a, 10);
    assert_int_equal(mem.old.b, 20);
    assert_memory_equal(mem.guard, guard, sizeof guard);
  }
  /* a newer caller: its fields this library does not know are left as they are */
  memset(&v3, 0, sizeof v3);
  v3.size = sizeof v3;
  v3.d = 77;
  assert_ok(cj_sized_out("f", "cujit_thing", &v3, THING_V1, &own, sizeof own));
  assert_int_equal(v3.size, sizeof v3);
  assert_true(v3.a == 10 && v3.b == 20 && v3.c == 30.0);
  assert_int_equal(v3.d, 77);
}

/* ---- compile options ---- */

/* cujit_options as its first version laid it out. */
typedef struct options_v1 {
  size_t size;
  const char *arch;
  const char *const *include_dirs;
  const char *const *defines;
  const char *const *nvrtc_options;
  const cujit_header *headers;
  const char *const *name_expressions;
  unsigned flags;
} options_v1;

/* A newer header's: two more fields. */
typedef struct options_v3 {
  cujit_options known;
  uint64_t later[2];
} options_v3;

static const char kSrc[] = "#ifndef FROM_OPTIONS\n"
                           "#error the define did not arrive\n"
                           "#endif\n"
                           "extern \"C\" __global__ void k(int *x) { *x = FROM_OPTIONS; }\n";

static const char *const kDefines[] = {"FROM_OPTIONS=7", NULL};

static void init_macros_set_size_and_defaults(void **state) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_launch_options l = CUJIT_LAUNCH_OPTIONS_INIT;
  cujit_generator_options g = CUJIT_GENERATOR_OPTIONS_INIT;
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_function_attrs a = CUJIT_FUNCTION_ATTRS_INIT;
  (void)state;
  assert_int_equal(o.size, sizeof o);
  assert_true(!o.arch && !o.include_dirs && !o.defines && !o.nvrtc_options && !o.headers &&
              !o.name_expressions && !o.flags && o.time_limit_s == 0.0 && !o.cancel &&
              !o.cancel_user);
  assert_int_equal(l.size, sizeof l);
  assert_true(!l.shared_bytes && !l.stream && !l.elapsed_ms && !l.flags && !l.cluster.x &&
              !l.cluster.y && !l.cluster.z);
  assert_int_equal(g.size, sizeof g);
  assert_true(!g.name && !g.preamble && !g.loop_prep && !g.after_loop);
  assert_int_equal(s.size, sizeof s);
  assert_true(!s.hits && !s.memory_hits && !s.misses && !s.compiles && !s.evictions && !s.entries &&
              !s.bytes);
  assert_int_equal(a.size, sizeof a);
  assert_true(!a.num_regs && !a.static_shared_bytes && !a.max_threads_per_block && !a.local_bytes &&
              !a.const_bytes && !a.ptx_version && !a.binary_version && !a.num_params);
}

static void compile_options_of_every_layout(void **state) {
  options_v1 old;
  options_v3 newer;
  cujit_options zero = {0};
  cujit_module *m = NULL;
  (void)state;
  memset(&old, 0, sizeof old);
  old.size = sizeof old;
  old.arch = "compute_75";
  old.defines = kDefines;
  old.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, kSrc, "old.cu", (const cujit_options *)&old));
  assert_string_equal(cujit_module_arch(m), "compute_75");
  cujit_module_destroy(m);
  old.size = 0;
  assert_ok(cujit_module_from_source(&m, kSrc, "old0.cu", (const cujit_options *)&old));
  assert_string_equal(cujit_module_arch(m), "compute_75");
  cujit_module_destroy(m);
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.known.arch = "compute_80";
  newer.known.defines = kDefines;
  assert_ok(cujit_module_from_source(&m, kSrc, "new.cu", &newer.known));
  assert_string_equal(cujit_module_arch(m), "compute_80");
  cujit_module_destroy(m);
  newer.later[1] = 1;
  m = (cujit_module *)1;
  assert_status_detail(cujit_module_from_source(&m, kSrc, "new.cu", &newer.known),
                       CUJIT_ERROR_NOT_SUPPORTED,
                       "compiling: cujit_options sets fields that "
                       "this libcujit");
  assert_null(m);
  zero.arch = "compute_75";
  zero.defines = kDefines;
  assert_ok(cujit_module_from_source(&m, kSrc, "zero.cu", &zero));
  cujit_module_destroy(m);
}

static void compile_options_of_a_bad_size(void **state) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = (cujit_module *)1;
  (void)state;
  o.size = sizeof(size_t);
  assert_status_detail(cujit_module_from_source(&m, kSrc, "bad.cu", &o), CUJIT_ERROR_INVALID_VALUE,
                       "compiling: cujit_options.size is 8, smaller "
                       "than its first version");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_OPTIONS_INIT"));
  assert_null(m);
  memset(&o, 0xa5, sizeof o); /* uninitialised */
  assert_status_detail(cujit_module_from_source(&m, kSrc, "bad.cu", &o), CUJIT_ERROR_INVALID_VALUE,
                       "the struct was not initialised");
}

/* ---- generator options ---- */

typedef struct generator_options_v1 {
  size_t size;
  const char *name;
  const char *preamble;
  const char *loop_prep;
  const char *after_loop;
} generator_options_v1;

typedef struct generator_options_v3 {
  cujit_generator_options known;
  uint64_t later;
} generator_options_v3;

/* Creates one generator of each kind with `opts`; returns the first failure. */
static cujit_status create_each(const cujit_generator_options *opts, const char **which) {
  cujit_elementwise *e = NULL;
  cujit_reduction *r = NULL;
  cujit_scan *s = NULL;
  cujit_status st;
  *which = "cujit_elementwise_create";
  st = cujit_elementwise_create(&e, "float *x", "x[i] = 1", opts);
  cujit_elementwise_destroy(e);
  if (st != CUJIT_OK) return st;
  *which = "cujit_reduction_create";
  st = cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]", "const float *x", opts);
  cujit_reduction_destroy(r);
  if (st != CUJIT_OK) return st;
  *which = "cujit_scan_create";
  st = cujit_scan_create(&s, CUJIT_TYPE_F32, "a+b", "0", 0, opts);
  cujit_scan_destroy(s);
  return st;
}

static void generator_options_of_every_layout(void **state) {
  generator_options_v1 old;
  generator_options_v3 newer;
  const char *which = NULL;
  (void)state;
  memset(&old, 0, sizeof old);
  old.size = sizeof old;
  old.name = "from_old";
  old.preamble = "// kept";
  assert_ok(create_each((const cujit_generator_options *)&old, &which));
  old.name = "2bad"; /* read where the first version put it */
  assert_int_equal(create_each((const cujit_generator_options *)&old, &which),
                   CUJIT_ERROR_INVALID_VALUE);
  assert_non_null(strstr(cujit_last_error(), "2bad"));
  old.size = 0;
  old.name = "from_zero";
  assert_ok(create_each((const cujit_generator_options *)&old, &which));
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.known.name = "from_newer";
  assert_ok(create_each(&newer.known, &which));
  newer.later = 5;
  assert_status_detail(create_each(&newer.known, &which), CUJIT_ERROR_NOT_SUPPORTED,
                       "cujit_elementwise_create: cujit_generator_options sets fields");
}

static void generator_options_of_a_bad_size(void **state) {
  cujit_generator_options o = CUJIT_GENERATOR_OPTIONS_INIT;
  cujit_elementwise *e = (cujit_elementwise *)1;
  cujit_reduction *r = (cujit_reduction *)1;
  cujit_scan *s = (cujit_scan *)1;
  (void)state;
  o.size = 1;
  assert_status_detail(cujit_elementwise_create(&e, "float *x", "x[i] = 1", &o),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_elementwise_create: "
                       "cujit_generator_options.size is 1, smaller than its first version");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_GENERATOR_OPTIONS_INIT"));
  assert_null(e);
  assert_status_detail(cujit_reduction_create(&r, CUJIT_TYPE_F32, "0", "a+b", "x[i]",
                                              "const float *x", &o),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_reduction_create: "
                       "cujit_generator_options.size is 1");
  assert_null(r);
  assert_status_detail(cujit_scan_create(&s, CUJIT_TYPE_F32, "a+b", "0", 0, &o),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_scan_create: "
                       "cujit_generator_options.size is 1");
  assert_null(s);
}

/* ---- results: cache statistics and entries ---- */

typedef struct cache_stats_v1 {
  size_t size;
  uint64_t hits, memory_hits, misses, compiles, evictions, entries, bytes;
} cache_stats_v1;

static void cache_stats_of_every_layout(void **state) {
  struct {
    cache_stats_v1 old;
    unsigned char guard[16];
  } mem;
  struct {
    cujit_cache_stats known;
    uint64_t later[2];
  } newer;
  cujit_cache_stats now = CUJIT_CACHE_STATS_INIT;
  unsigned char guard[sizeof mem.guard];
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  (void)state;
  o.arch = "compute_75";
  o.defines = kDefines;
  assert_ok(cujit_module_from_source(&m, kSrc, "stats.cu", &o));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_get_stats(&now));
  assert_true(now.compiles >= 1);
  memset(&mem, 0xee, sizeof mem);
  memset(guard, 0xee, sizeof guard);
  mem.old.size = sizeof mem.old;
  assert_ok(cujit_cache_get_stats((cujit_cache_stats *)&mem.old));
  assert_int_equal(mem.old.size, sizeof mem.old);
  assert_int_equal(mem.old.compiles, now.compiles);
  assert_int_equal(mem.old.misses, now.misses);
  assert_int_equal(mem.old.bytes, now.bytes);
  assert_memory_equal(mem.guard, guard, sizeof guard);
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.later[0] = 7;
  newer.later[1] = 9;
  assert_ok(cujit_cache_get_stats(&newer.known));
  assert_int_equal(newer.known.compiles, now.compiles);
  assert_true(newer.later[0] == 7 && newer.later[1] == 9);
}

static void cache_stats_of_a_bad_size(void **state) {
  cujit_cache_stats s;
  (void)state;
  memset(&s, 0xa5, sizeof s); /* uninitialised */
  assert_status_detail(cujit_cache_get_stats(&s), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_cache_get_stats: cujit_cache_stats.size is");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_CACHE_STATS_INIT"));
  assert_int_equal(s.compiles, 0xa5a5a5a5a5a5a5a5ull); /* nothing written */
  s.size = 12;
  assert_status_detail(cujit_cache_get_disk_stats(&s), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_cache_get_disk_stats: cujit_cache_stats.size is 12, smaller");
  assert_int_equal(s.hits, 0xa5a5a5a5a5a5a5a5ull);
}

static int entry_size(const cujit_cache_entry *e, void *user) {
  *(size_t *)user = e->size;
  return 1;
}

static void cache_entries_carry_their_size(void **state) {
  cujit_options o = CUJIT_OPTIONS_INIT;
  cujit_module *m = NULL;
  size_t seen = 0;
  (void)state;
  o.arch = "compute_75";
  o.defines = kDefines;
  assert_ok(cujit_module_from_source(&m, kSrc, "entry.cu", &o));
  cujit_module_destroy(m);
  assert_ok(cujit_cache_list(entry_size, &seen));
  assert_int_equal(seen, sizeof(cujit_cache_entry));
}

/* ---- launch options and kernel attributes: refused before the kernel is touched ---- */

/* A kernel handle that is never loaded: the calls below must fail before they use it. */
static cujit_function *unloaded_function(void) {
  static char name[] = "k";
  static cujit_function fn;
  fn.name = name;
  return &fn;
}

static void launch_options_of_a_bad_size(void **state) {
  struct {
    cujit_launch_options known;
    uint32_t later[2];
  } newer;
  cujit_launch_options o = CUJIT_LAUNCH_OPTIONS_INIT;
  (void)state;
  o.size = 12;
  assert_status_detail(CUJIT_LAUNCH_EX(unloaded_function(), CUJIT_DIM3(1), CUJIT_DIM3(1), &o,
                                       cujit_ptr(0)),
                       CUJIT_ERROR_INVALID_VALUE,
                       "cujit_launch: cujit_launch_options.size is "
                       "12, smaller than its first version");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_LAUNCH_OPTIONS_INIT"));
  memset(&newer, 0, sizeof newer);
  newer.known.size = sizeof newer;
  newer.later[1] = 1;
  assert_status_detail(cujit_launch(unloaded_function(), CUJIT_DIM3(1), CUJIT_DIM3(1), NULL, 0,
                                    &newer.known),
                       CUJIT_ERROR_NOT_SUPPORTED,
                       "cujit_launch: cujit_launch_options sets "
                       "fields that this libcujit");
  /* only a NULL kernel is reported before the options */
  assert_status_detail(cujit_launch(NULL, CUJIT_DIM3(1), CUJIT_DIM3(1), NULL, 0, &o),
                       CUJIT_ERROR_INVALID_VALUE, "cujit_launch: fn is NULL");
}

static void function_attrs_of_a_bad_size(void **state) {
  cujit_function_attrs a;
  (void)state;
  memset(&a, 0x5a, sizeof a);
  a.size = 2;
  assert_status_detail(cujit_function_get_attrs(unloaded_function(), &a), CUJIT_ERROR_INVALID_VALUE,
                       "cujit_function_get_attrs: "
                       "cujit_function_attrs.size is 2, smaller than its first version");
  assert_non_null(strstr(cujit_last_error(), "CUJIT_FUNCTION_ATTRS_INIT"));
  assert_int_equal(a.num_regs, 0x5a5a5a5a);
}

/* ---- kernel arguments: a reserved word instead of a size ---- */

static void arguments_end_with_a_zero_reserved_word(void **state) {
  static const float big[8] = {0};
  const cujit_arg args[] = {cujit_i8(-1),         cujit_u8(1),
                            cujit_i16(-1),        cujit_u16(1),
                            cujit_i32(-1),        cujit_u32(1),
                            cujit_i64(-1),        cujit_u64(1),
                            cujit_f32(1.0f),      cujit_f64(1.0),
                            cujit_ptr(16),        cujit_ptr_offset(16, 8),
                            cujit_value(big, 4),  cujit_value(big, sizeof big),
                            CUJIT_VALUE(big),     cujit_in(big, sizeof big),
                            cujit_out(NULL, 0),   cujit_inout((void *)big, 4),
                            cujit_texture(3),     cujit_surface(4),
                            cujit_array_arg(NULL)};
  size_t i;
  (void)state;
  assert_int_equal(offsetof(cujit_arg, reserved) + sizeof(uint64_t), sizeof(cujit_arg));
  for (i = 0; i < CJ_COUNT(args); i++)
    if (args[i].reserved != 0)
      fail_msg("argument %zu: reserved is %llu", i, (unsigned long long)args[i].reserved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(first_version_size),
      cmocka_unit_test(older_caller_reads_defaults_past_its_size),
      cmocka_unit_test(newer_caller_works_while_new_fields_are_zero),
      cmocka_unit_test(bad_sizes_name_the_init_macro),
      cmocka_unit_test(results_stop_at_the_callers_size),
      cmocka_unit_test(init_macros_set_size_and_defaults),
      cmocka_unit_test(compile_options_of_every_layout),
      cmocka_unit_test(compile_options_of_a_bad_size),
      cmocka_unit_test(generator_options_of_every_layout),
      cmocka_unit_test(generator_options_of_a_bad_size),
      cmocka_unit_test(cache_stats_of_every_layout),
      cmocka_unit_test(cache_stats_of_a_bad_size),
      cmocka_unit_test(cache_entries_carry_their_size),
      cmocka_unit_test(launch_options_of_a_bad_size),
      cmocka_unit_test(function_attrs_of_a_bad_size),
      cmocka_unit_test(arguments_end_with_a_zero_reserved_word),
  };
  setenv("CUJIT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
