/* prebuilt.h - code built elsewhere in any of its four kinds (prebuilt.c; PTX and CUBIN
 * alone are code.h's): telling the kinds apart by their bytes, reading what a fatbin's or
 * bundle's headers say, and listing the variables a binary names. Needs no device. The
 * bytes come from outside, so every read is bounds-checked. */
#ifndef CUJIT_PREBUILT_H
#define CUJIT_PREBUILT_H

#include "format/code.h"

/* ---- prebuilt.c: the four kinds ---- */

/* What `data` holds and the architecture it was built for, written to `arch`: "compute_90"
 * for PTX, "sm_90" for a CUBIN, the entries of a fatbin or bundle ("sm_80 compute_80 sm_90").
 * `name` is used in messages. Returns CUJIT_OK, or CUJIT_ERROR_INVALID_SOURCE saying what
 * is wrong (truncated or damaged headers, or bytes of none of the three kinds). */
cujit_status cj_prebuilt_inspect(const void *data, size_t size, const char *name,
                                 cj_prebuilt_kind *kind, char *arch, size_t arch_size);

/* The CUBIN and PTX entries of a fatbin or bundle that passed cj_prebuilt_inspect(), in
 * their order, into *codes (freed with cj_free). Fails as the inspection would, or when
 * out of memory. */
cujit_status cj_prebuilt_codes(const void *data, size_t size, cj_prebuilt_kind kind,
                               cj_code **codes, size_t *n);
/* "sm_90", "compute_100f": what an entry is built for. */
void cj_code_name(const cj_code *c, char *out, size_t size);

/* The variables of a CUBIN, fatbin or bundle image (its ELF symbol table, or a fatbin's first
 * readable ELF or PTX entry) into t->globals. *known is 0 when nothing could be read (a
 * fatbin whose entries are all compressed). Fails only when out of memory. */
cujit_status cj_prebuilt_globals(const cj_image *im, cj_symtab *t, int *known);

/* The same for bytes that passed cj_prebuilt_inspect() as `kind` (for the fuzzer). */
cujit_status cj_prebuilt_globals_of(const void *data, size_t size, cj_prebuilt_kind kind,
                                    cj_symtab *t, int *known);

/* Checks that bytes are a whole fatbin (header and entries in bounds), of any entry kinds
 * (a link's fatbin may hold only LTO-IR). CUJIT_ERROR_INVALID_SOURCE saying what is wrong. */
cujit_status cj_prebuilt_check_fatbin(const void *data, size_t size, const char *name);

#endif
