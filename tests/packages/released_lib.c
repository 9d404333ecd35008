/* released_lib.c - the stand-in of a released libcujit (0.1.0's libcujit.so.0, 0.2.0's
 * libcujit.so.0.2) in the package tests' stand-in packages (standins.sh builds it with
 * that soname and -DRELEASED_NUMBER, -DRELEASED_STRING): a shared object that says its
 * version and does nothing else. What the package tests need of a released package is its
 * names and files, in their places; its library's work they do not run. */
unsigned cujit_version(void);
const char *cujit_version_string(void);

unsigned cujit_version(void) { return RELEASED_NUMBER; }
const char *cujit_version_string(void) { return RELEASED_STRING; }
