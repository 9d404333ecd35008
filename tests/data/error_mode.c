/* The error mode's example in docs/manual/errors.md: a program that stops at its first
 * failing call, a compile error. The docs' check (tests/check_programs.sh) runs it and
 * compares what it prints with the output the page shows. */
#include <cujit.h>

static const char source[] = "__global__ void k(float *p) {\n"
                             "  p[0] = x;\n"
                             "}\n";

int main(void) {
  cujit_module *mod = NULL;
  cujit_error_set_handler(cujit_error_exit, NULL);
  cujit_module_from_source(&mod, source, "k.cu", NULL); /* no check needed */
  cujit_module_destroy(mod);
  return 0;
}
