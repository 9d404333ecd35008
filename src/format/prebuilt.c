/* prebuilt.c - code built elsewhere as one of four kinds: PTX or a CUBIN (code.c), or a
 * container of them: nvcc's fatbin, read here, or cujit's bundle (bundle.c). Which kind
 * bytes are, what their headers say, their entries, and the variables they name. Every
 * read of the bytes goes through cj_get_le(), which checks the bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/bundle.h"
#include "format/prebuilt.h"

enum {
  FATBIN_HEADER = 16, /* magic, version, header size, size of the entries */
  FATBIN_ENTRY = 32,  /* the part of an entry's header that is read */
  ENTRY_PTX = 1,
  ENTRY_ELF = 2,
  ENTRY_FLAGS = 40,                  /* where an entry's flags lie, in headers long enough */
  ENTRY_COMPRESSED = 0x2000 | 0x8000 /* compressed payload (LZ4, zstd) */
};
#define FATBIN_MAGIC 0xBA55ED50u

/* ---- fatbin ---- */

typedef struct fatbin_entry {
  unsigned kind, arch;
  int compressed;
  const unsigned char *header; /* the entry, header and payload */
  size_t header_size;
  const unsigned char *payload;
  size_t size;
} fatbin_entry;

/* The bounds of a fatbin's entries ([*begin, *end)); 0 when the header does not fit. */
static int fatbin_bounds(const unsigned char *p, size_t size, size_t *begin, size_t *end) {
  uint64_t hsize, total;
  if (!cj_get_le(p, size, 6, 2, &hsize) || !cj_get_le(p, size, 8, 8, &total)) return 0;
  if (hsize < FATBIN_HEADER || hsize > size || total > size - hsize) return 0;
  *begin = (size_t)hsize;
  *end = (size_t)(hsize + total);
  return 1;
}

/* Reads the entry at *pos and moves past it: 1 when one was read, 0 at the end, -1 when it
 * runs past `end`. */
static int fatbin_next(const unsigned char *p, size_t end, size_t *pos, fatbin_entry *e) {
  uint64_t kind = 0, hsize = 0, psize = 0, arch = 0, flags = 0;
  if (*pos >= end) return 0;
  if (end - *pos < FATBIN_ENTRY) return -1;
  cj_get_le(p, end, *pos, 2, &kind);
  cj_get_le(p, end, *pos + 4, 4, &hsize);
  cj_get_le(p, end, *pos + 8, 8, &psize);
  cj_get_le(p, end, *pos + 28, 4, &arch);
  if (hsize < FATBIN_ENTRY || hsize > end - *pos || psize > end - *pos - hsize) return -1;
  if (hsize >= ENTRY_FLAGS + 8) cj_get_le(p, end, *pos + ENTRY_FLAGS, 8, &flags);
  e->compressed = (flags & ENTRY_COMPRESSED) != 0;
  e->header = p + *pos;
  e->header_size = (size_t)hsize;
  e->kind = (unsigned)kind;
  e->arch = (unsigned)arch;
  e->payload = p + *pos + hsize;
  e->size = (size_t)psize;
  *pos += (size_t)(hsize + psize);
  return 1;
}

/* Appends "sm_90" or "compute_90" to the list in arch, while it fits. */
static void arch_append(char *arch, size_t arch_size, const fatbin_entry *e) {
  char one[24];
  size_t have = strlen(arch);
  int n = snprintf(one, sizeof one, "%s%s_%u", have ? " " : "",
                   e->kind == ENTRY_ELF ? "sm" : "compute", e->arch);
  if (n > 0 && have + (size_t)n < arch_size) memcpy(arch + have, one, (size_t)n + 1);
}

/* Walks a fatbin's entries with bounds checked; with need_code, one must be PTX or a
 * CUBIN (what a device loads; a link also takes LTO-IR entries). */
static cujit_status fatbin_walk(const unsigned char *p, size_t size, const char *name, char *arch,
                                size_t arch_size, int need_code) {
  const char *todo = "pass the bytes nvcc -fatbin wrote";
  size_t pos, end;
  unsigned n = 0, usable = 0;
  fatbin_entry e;
  int r;
  CJ_CHECK(fatbin_bounds(p, size, &pos, &end), CUJIT_ERROR_INVALID_SOURCE,
           "'%s' is a truncated "
           "or damaged fatbin: its %zu bytes do not hold the header and the entries it "
           "announces; %s",
           name, size, todo);
  arch[0] = '\0';
  while ((r = fatbin_next(p, end, &pos, &e)) == 1) {
    n++;
    if (e.kind != ENTRY_PTX && e.kind != ENTRY_ELF) continue;
    usable++;
    arch_append(arch, arch_size, &e);
  }
  CJ_CHECK(r == 0, CUJIT_ERROR_INVALID_SOURCE,
           "'%s' is a truncated or damaged fatbin: entry %u "
           "runs past the end of its entries; %s",
           name, n + 1, todo);
  CJ_CHECK(n > 0, CUJIT_ERROR_INVALID_SOURCE, "'%s' is a fatbin with no entries; %s", name, todo);
  CJ_CHECK(usable > 0 || !need_code, CUJIT_ERROR_INVALID_SOURCE,
           "'%s' is a fatbin with no PTX "
           "or CUBIN entry (%u entr%s of other kinds); %s",
           name, n, n == 1 ? "y" : "ies", todo);
  return CUJIT_OK;
}

static cujit_status fatbin_check(const unsigned char *p, size_t size, const char *name, char *arch,
                                 size_t arch_size) {
  return fatbin_walk(p, size, name, arch, arch_size, 1);
}

cujit_status cj_prebuilt_check_fatbin(const void *data, size_t size, const char *name) {
  char arch[64];
  uint64_t magic = 0;
  CJ_CHECK(cj_get_le(data, size, 0, 4, &magic) && magic == FATBIN_MAGIC, CUJIT_ERROR_INVALID_SOURCE,
           "'%s' is not a fatbin (it does not start with the fatbin magic 0xba55ed50); pass the "
           "bytes nvcc -fatbin wrote, or give the part's kind",
           name);
  return fatbin_walk(data, size, name, arch, sizeof arch, 0);
}

/* ---- cujit bundles ---- */

static cujit_status bundle_fail(const char *name, const char *why) {
  return cj_fail(CUJIT_ERROR_INVALID_SOURCE,
                 "'%s' %s; make the bundle again (cujit compile "
                 "--arch sm_XX,sm_YY ...) and pass its bytes unchanged",
                 name, why);
}

/* Parses a bundle, failing with its reason; *parts freed with cj_free. */
static cujit_status bundle_parts(const unsigned char *p, size_t size, const char *name,
                                 cj_bundle_part **parts, size_t *n) {
  char why[256];
  int rc = cj_bundle_parse(p, size, parts, n, why, sizeof why);
  if (rc < 0) return cj_fail_oom("reading a bundle");
  return rc ? bundle_fail(name, why) : CUJIT_OK;
}

/* A bundle's CUBIN and PTX entries, listed in arch; cj_bundle_parse() checked each. */
static cujit_status bundle_check(const unsigned char *p, size_t size, const char *name, char *arch,
                                 size_t arch_size) {
  cj_bundle_part *parts;
  size_t n, i, usable = 0;
  CJ_TRY(bundle_parts(p, size, name, &parts, &n));
  arch[0] = '\0';
  for (i = 0; i < n; i++) {
    fatbin_entry e = {0};
    if (parts[i].kind != CJ_BE_CUBIN && parts[i].kind != CJ_BE_PTX) continue;
    e.kind = parts[i].kind == CJ_BE_CUBIN ? ENTRY_ELF : ENTRY_PTX;
    e.arch = (unsigned)strtoul(strchr(parts[i].arch, '_') + 1, NULL, 10);
    usable++;
    arch_append(arch, arch_size, &e);
  }
  cj_free(parts);
  CJ_CHECK(usable > 0, CUJIT_ERROR_INVALID_SOURCE,
           "'%s' is a cujit bundle with no CUBIN or "
           "PTX entry; make it with cujit compile --arch sm_XX,... or "
           "cujit_bundle_from_source()",
           name);
  return CUJIT_OK;
}

/* ---- code entries of a fatbin or bundle ---- */

/* Splits "sm_90a" or "compute_100f" into its number and suffix; 0 when it is neither. */
static int arch_parse(const char *s, cj_code *c) {
  const char *digits = strncmp(s, "sm_", 3) == 0        ? s + 3
                       : strncmp(s, "compute_", 8) == 0 ? s + 8
                                                        : NULL;
  char *end;
  unsigned long v;
  if (!digits) return 0;
  v = strtoul(digits, &end, 10);
  if (end == digits || v > 10000) return 0;
  c->arch = (unsigned)v;
  c->suffix = *end == 'a' || *end == 'f' ? *end : 0;
  return 1;
}

static cujit_status codes_of_bundle(const unsigned char *p, size_t size, cj_code **out, size_t *n) {
  cj_bundle_part *parts;
  size_t count, i;
  cj_code *c;
  CJ_TRY(bundle_parts(p, size, "bundle", &parts, &count));
  if (!(c = cj_calloc(count ? count : 1, sizeof *c))) {
    cj_free(parts);
    return cj_fail_oom("reading a bundle");
  }
  for (i = 0, *n = 0; i < count; i++) {
    cj_code *x = &c[*n];
    if (parts[i].kind != CJ_BE_CUBIN && parts[i].kind != CJ_BE_PTX) continue;
    if (!arch_parse(parts[i].arch, x)) continue;
    x->kind = parts[i].kind == CJ_BE_CUBIN ? CJ_PREBUILT_CUBIN : CJ_PREBUILT_PTX;
    x->data = parts[i].data;
    x->size = parts[i].size;
    ++*n;
  }
  cj_free(parts);
  *out = c;
  return CUJIT_OK;
}

static cujit_status codes_of_fatbin(const unsigned char *p, size_t size, cj_code **out, size_t *n) {
  size_t pos, end, cap = 0;
  fatbin_entry e;
  cj_code *c = NULL;
  CJ_CHECK(fatbin_bounds(p, size, &pos, &end), CUJIT_ERROR_INVALID_SOURCE,
           "the fatbin's "
           "header is damaged");
  *n = 0;
  while (fatbin_next(p, end, &pos, &e) == 1) {
    if (e.kind != ENTRY_PTX && e.kind != ENTRY_ELF) continue;
    if (*n == cap) {
      cj_code *grown = cj_realloc(c, (cap = cap ? 2 * cap : 8) * sizeof *c);
      if (!grown) {
        cj_free(c);
        return cj_fail_oom("reading a fatbin");
      }
      c = grown;
    }
    memset(&c[*n], 0, sizeof *c);
    c[*n].kind = e.kind == ENTRY_ELF ? CJ_PREBUILT_CUBIN : CJ_PREBUILT_PTX;
    c[*n].arch = e.arch;
    c[*n].data = e.payload;
    c[*n].size = e.size;
    c[*n].compressed = e.compressed;
    c[*n].entry = e.header;
    c[*n].entry_size = e.header_size + e.size;
    ++*n;
  }
  *out = c;
  return CUJIT_OK;
}

cujit_status cj_prebuilt_codes(const void *data, size_t size, cj_prebuilt_kind kind,
                               cj_code **codes, size_t *n) {
  *codes = NULL;
  *n = 0;
  if (kind == CJ_PREBUILT_BUNDLE) return codes_of_bundle(data, size, codes, n);
  if (kind == CJ_PREBUILT_FATBIN) return codes_of_fatbin(data, size, codes, n);
  return cj_fail(CUJIT_ERROR_INVALID_VALUE, "only a fatbin or a bundle holds several entries");
}

void cj_code_name(const cj_code *c, char *out, size_t size) {
  snprintf(out, size, "%s_%u%s", c->kind == CJ_PREBUILT_CUBIN ? "sm" : "compute", c->arch,
           c->suffix == 'a'   ? "a"
           : c->suffix == 'f' ? "f"
                              : "");
}

/* The variables of the first entry that can be read: a CUBIN, or PTX stored as text
 * (compressed entries cannot be read). */
static cujit_status container_globals(const unsigned char *p, size_t size, cj_prebuilt_kind kind,
                                      cj_symtab *t, int *known) {
  cj_code *c;
  size_t n, i;
  cujit_status st = CUJIT_OK;
  if ((st = cj_prebuilt_codes(p, size, kind, &c, &n)) != CUJIT_OK)
    return st == CUJIT_ERROR_OUT_OF_MEMORY ? st : CUJIT_OK; /* unreadable: nothing known */
  for (i = 0; i < n && !*known && st == CUJIT_OK; i++) {
    if (c[i].compressed) continue;
    if (c[i].kind == CJ_PREBUILT_CUBIN && c[i].size >= 4 && memcmp(c[i].data, "\177ELF", 4) == 0)
      st = cj_cubin_globals(c[i].data, c[i].size, 0, t, known);
    else if (c[i].kind == CJ_PREBUILT_PTX)
      st = cj_code_ptx_globals(c[i].data, c[i].size, t, known);
  }
  cj_free(c);
  return st;
}

/* ---- kinds ---- */

cujit_status cj_prebuilt_inspect(const void *data, size_t size, const char *name,
                                 cj_prebuilt_kind *kind, char *arch, size_t arch_size) {
  const unsigned char *p = data;
  uint64_t magic = 0;
  *kind = CJ_PREBUILT_NONE;
  arch[0] = '\0';
  if (size >= 4 && memcmp(p, "\177ELF", 4) == 0) {
    *kind = CJ_PREBUILT_CUBIN;
    return cj_cubin_check(p, size, name, arch, arch_size);
  }
  if (cj_get_le(p, size, 0, 4, &magic) && magic == FATBIN_MAGIC) {
    *kind = CJ_PREBUILT_FATBIN;
    return fatbin_check(p, size, name, arch, arch_size);
  }
  if (cj_bundle_is(p, size)) {
    *kind = CJ_PREBUILT_BUNDLE;
    return bundle_check(p, size, name, arch, arch_size);
  }
  if (cj_code_ptx_check(p, size, arch, arch_size)) {
    *kind = CJ_PREBUILT_PTX;
    return CUJIT_OK;
  }
  return cj_fail(CUJIT_ERROR_INVALID_SOURCE,
                 "'%s' (%zu bytes) is neither PTX, a CUBIN, a "
                 "fatbin nor a cujit bundle: expected PTX text with .version and .target "
                 "directives, the ELF magic of a CUBIN (7f 45 4c 46), the fatbin magic (50 ed "
                 "55 ba) or the bundle magic (\"CUJITBN\" 1a); pass what nvcc -ptx, -cubin or "
                 "-fatbin or cujit compile --arch wrote (CUDA C source goes to "
                 "cujit_module_from_source)",
                 name, size);
}

cujit_status cj_prebuilt_globals_of(const void *data, size_t size, cj_prebuilt_kind kind,
                                    cj_symtab *t, int *known) {
  memset(t, 0, sizeof *t);
  *known = 0;
  if (kind == CJ_PREBUILT_CUBIN) return cj_cubin_globals(data, size, 0, t, known);
  if (kind == CJ_PREBUILT_FATBIN || kind == CJ_PREBUILT_BUNDLE)
    return container_globals(data, size, kind, t, known);
  return CUJIT_OK;
}

cujit_status cj_prebuilt_globals(const cj_image *im, cj_symtab *t, int *known) {
  cujit_status st =
      im->fatbin ? cj_prebuilt_globals_of(im->fatbin, im->fatbin_size,
                                          (cj_prebuilt_kind)im->prebuilt, t, known)
                 : cj_prebuilt_globals_of(im->cubin, im->cubin_size, CJ_PREBUILT_CUBIN, t, known);
  if (st != CUJIT_OK) cj_symtab_free(t);
  return st;
}
