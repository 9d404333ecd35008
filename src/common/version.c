/* version.c - the library's version. */
#include "common/common.h"

unsigned cujit_version(void) { return CUJIT_VERSION_NUMBER; }
const char *cujit_version_string(void) { return CUJIT_VERSION_STRING; }
