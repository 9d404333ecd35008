/* signature.c - kernel signatures (placeholder until the signature layer lands). */
#include "function.h"

void cj_function_sig_free(cujit_function *fn) { (void)fn; }
