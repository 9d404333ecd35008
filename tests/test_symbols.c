/* test_symbols - finding kernels by the names users write: Itanium-mangled symbols matched
 * by plain and qualified names, the kernels and variables listed from PTX, parameter
 * layouts read from PTX (the fallback for drivers without cuKernelGetParamInfo), and the
 * index that holds all of it, read in one pass (what a cache entry keeps for lookups). */
#include "testutil.h"
#include "compile/symbols.h"

static void plain_names_match_mangled_symbols(void **state) {
  (void)state;
  assert_true(cj_symbol_matches("_Z13multiply_themPfS_S_", "multiply_them"));
  assert_true(cj_symbol_matches("plain", "plain"));         /* extern "C" */
  assert_true(cj_symbol_matches("_Z4overPi", "_Z4overPi")); /* a symbol as it is */
  assert_true(cj_symbol_matches("_ZN2ns1gEPf", "g"));
  assert_true(cj_symbol_matches("_ZN2ns1gEPf", "ns::g"));
  assert_true(cj_symbol_matches("_ZN2ns1gEPf", "::ns::g"));
  assert_true(cj_symbol_matches("_ZN2ns5inner1gEPi", "inner::g"));
  assert_true(cj_symbol_matches("_ZN2ns5inner1gEPi", "ns::inner::g"));
  assert_true(cj_symbol_matches("_Z5scaleIfEvPT_S0_", "scale")); /* a template instance */
  assert_true(cj_symbol_matches("_ZN2ns5scaleIiEEvPT_", "ns::scale"));
  assert_true(cj_symbol_matches("_ZL6hiddenv", "hidden")); /* internal linkage */
  assert_true(cj_symbol_matches("_ZN2ns3valE", "val"));    /* a variable */
  /* names inside template arguments are skipped by length, "E" in them included */
  assert_true(cj_symbol_matches("_Z3runI4EvalEvPT_", "run"));
  assert_true(cj_symbol_matches("_Z3runILi4EEvPf", "run"));
  assert_true(cj_symbol_matches("_Z3runIL6MyEnum1EEvv", "run")); /* enum literal */
}

static void near_misses_do_not_match(void **state) {
  (void)state;
  assert_false(cj_symbol_matches("_Z13multiply_themPfS_S_", "multiply"));
  assert_false(cj_symbol_matches("_Z13multiply_themPfS_S_", "multiply_the"));
  assert_false(cj_symbol_matches("_ZN2ns1gEPf", "other::g"));
  assert_false(cj_symbol_matches("_ZN2ns1gEPf", "a::ns::g")); /* more parts than the symbol */
  assert_false(cj_symbol_matches("_ZN2ns5inner1gEPi", "ns::g"));
  assert_false(
      cj_symbol_matches("_Z5scaleIfEvPT_S0_", "scale<float>")); /* needs a name expression */
  assert_false(cj_symbol_matches("plain", "plai"));
  assert_false(cj_symbol_matches("_Z", "x"));
  assert_false(cj_symbol_matches("_Z99short", "short")); /* length beyond the string */
  assert_false(cj_symbol_matches("_ZN3abc", "abc"));     /* unterminated nested name */
  assert_false(cj_symbol_matches("_Z3runIi", "run"));    /* unterminated template list */
}

static void find_prefers_exact_and_counts_overloads(void **state) {
  char *syms[] = {"_Z4overPi", "_Z4overPf", "over2", "_ZN1a4overEv"};
  size_t found[4] = {0}, n;
  (void)state;
  n = cj_symbol_find(syms, 4, "over", found, 4);
  assert_int_equal(n, 3);
  assert_int_equal(found[0], 0);
  assert_int_equal(found[1], 1);
  assert_int_equal(found[2], 3);
  n = cj_symbol_find(syms, 4, "_Z4overPf", found, 4);
  assert_int_equal(n, 1);
  assert_int_equal(found[0], 1);
  assert_int_equal(cj_symbol_find(syms, 4, "a::over", found, 4), 1);
  assert_int_equal(found[0], 3);
  assert_int_equal(cj_symbol_find(syms, 4, "missing", found, 4), 0);
  assert_int_equal(cj_symbol_find(syms, 4, "over", found, 1), 3); /* counts beyond cap */
}

static void readable_and_unqualified_forms(void **state) {
  char buf[64];
  (void)state;
  assert_string_equal(cj_symbol_readable("_ZN2ns5inner1gEPi", buf, sizeof buf), "ns::inner::g");
  assert_string_equal(cj_symbol_readable("_Z5scaleIfEvPT_S0_", buf, sizeof buf), "scale<...>");
  assert_string_equal(cj_symbol_readable("plain", buf, sizeof buf), "plain");
  assert_string_equal(cj_symbol_unqualified("_ZN2ns5inner1gEPi", buf, sizeof buf), "g");
  assert_string_equal(cj_symbol_unqualified("_Z13multiply_themPfS_S_", buf, sizeof buf),
                      "multiply_them");
  assert_string_equal(cj_symbol_unqualified("plain", buf, sizeof buf), "plain");
  assert_string_equal(cj_symbol_readable("_ZN2ns5inner1gEPi", buf, 5), "ns::"); /* truncated */
}

static const char kSource[] =
    "struct S { char c; double d; int i; };\n"
    "struct Big { float v[10]; };\n"
    "__global__ void f(char c, double2 d, float3 f3, int i, S s, Big b, short sh, float4 f4,\n"
    "                  int4 i4, unsigned long long u) {}\n"
    "namespace ns { __global__ void g(float *x) {} }\n"
    "template <typename T> __global__ void scale(T *x, T a) { x[0] *= a; }\n"
    "template __global__ void scale<float>(float *, float);\n"
    "template __global__ void scale<double>(double *, double);\n"
    "extern \"C\" __global__ void plain(void) {}\n"
    "__constant__ float coef[16];\n"
    "__device__ int counter;\n"
    "namespace ns { __device__ float val; }\n";

static cujit_module *compile_sample(void) {
  cujit_module *m = NULL;
  cujit_options o = {0};
  o.arch = "compute_75";
  o.flags = CUJIT_OPT_NO_CACHE;
  assert_ok(cujit_module_from_source(&m, kSource, "symbols.cu", &o));
  return m;
}

static void kernels_and_variables_listed_from_ptx(void **state) {
  cujit_module *m = compile_sample();
  cj_symtab t;
  size_t found[4], n;
  (void)state;
  assert_ok(cj_symtab_build(cujit_module_ptx(m, NULL), &t));
  assert_int_equal(t.n_kernels, 5);
  assert_int_equal(cj_symbol_find(t.kernels, t.n_kernels, "f", found, 4), 1);
  assert_int_equal(cj_symbol_find(t.kernels, t.n_kernels, "ns::g", found, 4), 1);
  assert_int_equal(cj_symbol_find(t.kernels, t.n_kernels, "plain", found, 4), 1);
  assert_string_equal(t.kernels[found[0]], "plain");
  n = cj_symbol_find(t.kernels, t.n_kernels, "scale", found, 4);
  assert_int_equal(n, 2); /* two instances: ambiguous by plain name */
  assert_int_equal(t.n_globals, 3);
  assert_int_equal(cj_symbol_find(t.globals, t.n_globals, "coef", found, 4), 1);
  assert_int_equal(cj_symbol_find(t.globals, t.n_globals, "counter", found, 4), 1);
  assert_int_equal(cj_symbol_find(t.globals, t.n_globals, "ns::val", found, 4), 1);
  cj_symtab_free(&t);
  cujit_module_destroy(m);
}

static void parameter_layout_from_ptx(void **state) {
  /* char, double2, float3, int, S{char,double,int}, Big{float[10]}, short, float4, int4, u64 */
  static const size_t want_off[] = {0, 16, 32, 44, 48, 72, 112, 128, 144, 160};
  static const size_t want_size[] = {1, 16, 12, 4, 24, 40, 2, 16, 16, 8};
  cujit_module *m = compile_sample();
  cj_symtab t;
  size_t found[1], n = 0, *off = NULL, *size = NULL, i;
  (void)state;
  assert_ok(cj_symtab_build(cujit_module_ptx(m, NULL), &t));
  assert_int_equal(cj_symbol_find(t.kernels, t.n_kernels, "f", found, 1), 1);
  assert_ok(cj_ptx_params(cujit_module_ptx(m, NULL), t.kernels[found[0]], &n, &off, &size));
  assert_int_equal(n, 10);
  for (i = 0; i < n; i++) {
    assert_int_equal(off[i], want_off[i]);
    assert_int_equal(size[i], want_size[i]);
  }
  cj_free(off);
  cj_free(size);
  assert_ok(cj_ptx_params(cujit_module_ptx(m, NULL), "plain", &n, &off, &size));
  assert_int_equal(n, 0);
  assert_null(off);
  assert_status_detail(cj_ptx_params(cujit_module_ptx(m, NULL), "nope", &n, &off, &size),
                       CUJIT_ERROR_NOT_FOUND, "no entry 'nope'");
  cj_symtab_free(&t);
  cujit_module_destroy(m);
}

/* The index lists what the scans list, in the same order, with the same parameters. */
static void index_holds_what_the_scans_read(void **state) {
  cujit_module *m = compile_sample();
  const char *ptx = cujit_module_ptx(m, NULL);
  cj_ptx_index *x = cj_ptx_index_build(ptx);
  cj_symtab t, borrowed;
  size_t i, k, n;
  (void)state;
  assert_non_null(x);
  assert_ok(cj_symtab_build(ptx, &t));
  assert_int_equal(x->n_kernels, t.n_kernels);
  assert_int_equal(x->n_globals, t.n_globals);
  for (i = 0; i < t.n_globals; i++) assert_string_equal(x->globals[i], t.globals[i]);
  for (i = 0; i < t.n_kernels; i++) {
    const cj_ptx_kernel *kn = &x->kernels[i];
    cj_ptx_param *list = NULL;
    assert_string_equal(kn->name, t.kernels[i]);
    assert_ptr_equal(x->kernel_names[i], kn->name);
    assert_ptr_equal(cj_ptx_index_find(x, t.kernels[i]), kn);
    assert_true(kn->params_known);
    assert_ok(cj_ptx_param_list(ptx, t.kernels[i], &n, &list));
    assert_int_equal(kn->nparams, n);
    for (k = 0; k < n; k++) {
      assert_int_equal(kn->params[k].offset, list[k].offset);
      assert_int_equal(kn->params[k].size, list[k].size);
      assert_int_equal(kn->params[k].align, list[k].align);
      assert_int_equal(kn->params[k].array, list[k].array);
    }
    /* f takes structs and vectors (declared as bytes); the others scalars and pointers */
    assert_int_equal(cj_ptx_kernel_scalars_only(kn), strncmp(kn->name, "_Z1f", 4) != 0);
    cj_free(list);
  }
  assert_null(cj_ptx_index_find(x, "nope"));
  /* a symbol table can list them without copying, and freeing it frees none of them */
  cj_symtab_borrow(&borrowed, x);
  assert_int_equal(borrowed.n_kernels, t.n_kernels);
  assert_ptr_equal(borrowed.kernels, x->kernel_names);
  cj_symtab_free(&borrowed);
  assert_null(borrowed.kernels);
  assert_string_equal(x->kernels[0].name, t.kernels[0]);
  cj_symtab_free(&t);
  cj_free(x);
  cujit_module_destroy(m);
}

/* What the scans cannot read, the index records as unknown, and nothing more. */
static void index_of_odd_ptx(void **state) {
  cj_ptx_index *x;
  (void)state;
  assert_non_null(x = cj_ptx_index_build(""));
  assert_int_equal(x->n_kernels + x->n_globals, 0);
  cj_free(x);
  x = cj_ptx_index_build(".extern .global .u32 elsewhere;\n"
                         ".entry bad(\n.param .q32 bad_p0\n)\n"
                         ".entry bare\n"
                         ".visible .entry ok(\n.param .u32 ok_p0,\n.param .u16 ok_p1\n)\n"
                         ".const .align 4 .b8 table[64];\n"
                         ".entry open(\n.param .u32 open_p0,\n");
  assert_non_null(x);
  assert_int_equal(x->n_kernels, 4);
  assert_int_equal(x->n_globals, 1);
  assert_string_equal(x->globals[0], "table");
  assert_string_equal(x->kernels[0].name, "bad");
  assert_false(x->kernels[0].params_known);
  assert_int_equal(x->kernels[0].nparams, 0);
  assert_string_equal(x->kernels[1].name, "bare");
  assert_false(x->kernels[1].params_known);
  assert_true(x->kernels[2].params_known);
  assert_int_equal(x->kernels[2].nparams, 2);
  assert_int_equal(x->kernels[2].params[1].offset, 4);
  assert_int_equal(x->kernels[2].params[1].size, 2);
  assert_false(x->kernels[3].params_known); /* its list never ends */
  cj_free(x);
}

static void odd_ptx_text_is_harmless(void **state) {
  cj_symtab t;
  size_t n = 9, *off = NULL, *size = NULL;
  (void)state;
  assert_ok(cj_symtab_build("", &t));
  assert_int_equal(t.n_kernels + t.n_globals, 0);
  assert_ok(cj_symtab_build(".entry\n.global\n.visible .entry (\n.const .align\n", &t));
  assert_int_equal(t.n_kernels + t.n_globals, 0);
  cj_symtab_free(&t);
  assert_ok(
      cj_symtab_build(".extern .global .u32 elsewhere;\n.entry k(\n.param .u32 k_param_0\n)\n",
                      &t));
  assert_int_equal(t.n_globals, 0);
  assert_int_equal(t.n_kernels, 1);
  cj_symtab_free(&t);
  assert_int_equal(cj_ptx_params(".entry k(\n.param .q32 k_p0\n)\n", "k", &n, &off, &size),
                   CUJIT_ERROR_NOT_FOUND);
  assert_int_equal(cj_ptx_params(".entry k(\n.param .u32 k_p0,\n", "k", &n, &off, &size),
                   CUJIT_ERROR_NOT_FOUND);
  assert_int_equal(n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_names_match_mangled_symbols),
      cmocka_unit_test(near_misses_do_not_match),
      cmocka_unit_test(find_prefers_exact_and_counts_overloads),
      cmocka_unit_test(readable_and_unqualified_forms),
      cmocka_unit_test(kernels_and_variables_listed_from_ptx),
      cmocka_unit_test(parameter_layout_from_ptx),
      cmocka_unit_test(odd_ptx_text_is_harmless),
      cmocka_unit_test(index_holds_what_the_scans_read),
      cmocka_unit_test(index_of_odd_ptx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
