/* test_cxx - cujit.h and cujit_array.h from C++: built as C++17 and as C++20 with -Wall
 * -Wextra -Wpedantic -Werror, it runs header_checks.h (every macro and inline constructor
 * of the headers, with the values they make, and every launch form: checked on a GPU,
 * refused elsewhere; the DLPack calls with DLPack's dlpack.h included before the headers)
 * plus what only C++ writes: zero-initialised structs as {} and CUDA's own vector types.
 * Ends with the line "N passed, N failed". test_c11.c does the same from C. */
#include <cstdio>

#include <dlpack/dlpack.h> /* before the headers, which name its structs again */
#include <vector_types.h>  /* float4 */

#include "cujit.h"
#include "cujit_array.h"

static int passed, failed;

static void hc_check(int ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::printf("FAILED: %s (%s)\n", what, cujit_last_error());
  }
}

#include "header_checks.h"

/* {} leaves size 0: the first version of each struct, with its defaults. */
static void zero_initialised_structs() {
  cujit_options o = {};
  cujit_cache_stats s = {};
  cujit_generator_options g = {};
  cujit_module *m = nullptr;
  cujit_elementwise *k = nullptr;
  o.arch = "compute_75";
  hc_check(o.size == 0 && cujit_module_from_source(&m, hc_source, "zero.cu", &o) == CUJIT_OK,
           "cujit_options = {}");
  hc_check(s.size == 0 && cujit_cache_get_stats(&s) == CUJIT_OK && s.size == 0,
           "cujit_cache_stats = {}");
  hc_check(cujit_elementwise_create(&k, "float *x", "x[i] = 0", &g) == CUJIT_OK,
           "cujit_generator_options = {}");
  cujit_elementwise_destroy(k);
  cujit_module_destroy(m);
}

static void cuda_vector_types() {
  float4 v = {1.0f, 2.0f, 3.0f, 4.0f};
  hc_check(hc_is_value(CUJIT_VALUE(v), CUJIT_TYPE_BYTES, sizeof v, &v), "CUJIT_VALUE(float4)");
}

int main() {
  int devices = 0;
  bool gpu = cujit_device_get_count(&devices) == CUJIT_OK && devices > 0;
  hc_run();
  zero_initialised_structs();
  cuda_vector_types();
  std::printf("C++ consumer (%s, %s): ", __cplusplus >= 202002L ? "C++20" : "C++17",
              gpu ? "launched on a GPU" : "no GPU: launches refused as expected");
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
