/* test_c11 - cujit.h and cujit_array.h from C: built as C11 with -Wall -Wextra -Wpedantic
 * -Werror (no GNU extensions), it runs header_checks.h (every macro and inline constructor
 * of the headers, with the values they make, and every launch form: checked on a GPU,
 * refused elsewhere; the DLPack calls with DLPack's dlpack.h included after the headers)
 * plus what only C writes: zero-initialised structs as {0} and designated initialisers.
 * Ends with the line "N passed, N failed". test_cxx.cpp does the same from C++. */
#include <stdio.h>

#include "cujit_array.h"   /* and through it cujit.h */
#include <dlpack/dlpack.h> /* after the header, which names its structs first */

static int passed, failed;

static void hc_check(int ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    printf("FAILED: %s (%s)\n", what, cujit_last_error());
  }
}

#include "header_checks.h"

/* {0} leaves size 0: the first version of each struct, with its defaults; a designated
 * initialiser starting from the _INIT macro's size names every other field. */
static void zero_and_designated_structs(void) {
  cujit_options o = {0};
  cujit_options d = {.size = sizeof(cujit_options), .arch = "compute_75"};
  cujit_cache_stats s = {0};
  cujit_module *m = NULL;
  o.arch = "compute_75";
  hc_check(o.size == 0 && cujit_module_from_source(&m, hc_source, "zero.cu", &o) == CUJIT_OK,
           "cujit_options = {0}");
  cujit_module_destroy(m);
  m = NULL;
  hc_check(cujit_module_from_source(&m, hc_source, "designated.cu", &d) == CUJIT_OK &&
               strcmp(cujit_module_arch(m), "compute_75") == 0,
           "designated cujit_options");
  cujit_module_destroy(m);
  hc_check(cujit_cache_get_stats(&s) == CUJIT_OK && s.size == 0, "cujit_cache_stats = {0}");
  hc_check(cujit_module_from_source(&m, hc_source, "literal.cu",
                                    &(cujit_options){.arch = "compute_75"}) == CUJIT_OK,
           "a compound literal of options");
  cujit_module_destroy(m);
}

int main(void) {
  int devices = 0;
  int gpu = cujit_device_get_count(&devices) == CUJIT_OK && devices > 0;
  hc_run();
  zero_and_designated_structs();
  printf("C11 consumer (%s): %d passed, %d failed\n",
         gpu ? "launched on a GPU" : "no GPU: launches refused as expected", passed, failed);
  return failed ? 1 : 0;
}
