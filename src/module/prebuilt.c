/* prebuilt.c - PTX, CUBIN and fatbin bytes built elsewhere: which kind they are, what
 * their headers say, and the variables a CUBIN's ELF symbol table names. Every read of
 * the bytes goes through get_le(), which checks the bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/bundle.h"
#include "module/prebuilt.h"

enum {
  ELF_HEADER = 64,      /* a 64-bit ELF header */
  ELF_SECTION = 64,     /* a 64-bit section header */
  ELF_SYMBOL = 24,      /* a 64-bit symbol */
  EM_CUDA = 190,        /* e_machine of a CUBIN */
  SHT_SYMTAB = 2,
  STT_OBJECT = 1,
  STT_FUNC = 2,
  STO_CUDA_ENTRY = 0x10, /* st_other of a kernel (an entry function) */
  SHN_LORESERVE = 0xff00,
  FATBIN_HEADER = 16,   /* magic, version, header size, size of the entries */
  FATBIN_ENTRY = 32,    /* the part of an entry's header that is read */
  ENTRY_PTX = 1,
  ENTRY_ELF = 2,
  ENTRY_FLAGS = 40,     /* where an entry's flags lie, in headers long enough */
  ENTRY_COMPRESSED = 0x2000 | 0x8000 /* compressed payload (LZ4, zstd) */
};
#define FATBIN_MAGIC 0xBA55ED50u

/* Reads a little-endian unsigned integer of `width` bytes at `off`; 0 when it lies past
 * the end. */
static int get_le(const unsigned char *p, size_t size, uint64_t off, unsigned width,
                  uint64_t *v) {
  unsigned i;
  if (off > size || width > size - off) return 0;
  *v = 0;
  for (i = width; i > 0; i--) *v = (*v << 8) | p[off + i - 1];
  return 1;
}

/* ---- ELF (CUBIN) ---- */

typedef struct elf_section {
  uint64_t type, offset, size, link, entsize;
} elf_section;

/* The bounds of the section header table; 0 when it does not fit in the bytes. */
static int elf_table(const unsigned char *p, size_t size, uint64_t *off, uint64_t *n,
                     uint64_t *entsize) {
  if (!get_le(p, size, 0x28, 8, off) || !get_le(p, size, 0x3a, 2, entsize) ||
      !get_le(p, size, 0x3c, 2, n))
    return 0;
  if (*n == 0) return 1;
  return *entsize >= ELF_SECTION && *off <= size && *n <= (size - *off) / *entsize;
}

/* Section i, whose contents must lie inside the bytes; 0 otherwise. */
static int elf_section_at(const unsigned char *p, size_t size, uint64_t i, elf_section *s) {
  uint64_t off, n, entsize, at;
  if (!elf_table(p, size, &off, &n, &entsize) || i >= n) return 0;
  at = off + i * entsize;
  if (!get_le(p, size, at + 0x04, 4, &s->type) || !get_le(p, size, at + 0x18, 8, &s->offset) ||
      !get_le(p, size, at + 0x20, 8, &s->size) || !get_le(p, size, at + 0x28, 4, &s->link) ||
      !get_le(p, size, at + 0x38, 8, &s->entsize))
    return 0;
  return s->offset <= size && s->size <= size - s->offset;
}

#define WHY(...) (snprintf(why, why_size, __VA_ARGS__), 1)

/* Whether bytes are a CUBIN that can be read: 0 with its SM version in `arch` ("sm_90"),
 * else 1 with the reason in `why` ("is a 32-bit ELF file, ..."). */
static int elf_why(const unsigned char *p, size_t size, char *arch, size_t arch_size, char *why,
                   size_t why_size) {
  uint64_t machine = 0, flags = 0, off, n, entsize;
  unsigned sm;
  if (size < 4 || memcmp(p, "\177ELF", 4) != 0)
    return WHY("is not an ELF file (it does not start with 7f 45 4c 46)");
  if (size < ELF_HEADER)
    return WHY("is a truncated ELF file: %zu bytes, fewer than the %d of an ELF header", size,
               ELF_HEADER);
  if (p[4] != 2) return WHY("is a 32-bit ELF file, but a CUBIN is 64-bit ELF");
  if (p[5] != 1) return WHY("is a big-endian ELF file, but a CUBIN is little-endian");
  get_le(p, size, 0x12, 2, &machine);
  if (machine != EM_CUDA)
    return WHY("is an ELF file for machine %u (a host object or library?), not a CUBIN "
               "(machine %d, NVIDIA CUDA)", (unsigned)machine, EM_CUDA);
  if (!elf_table(p, size, &off, &n, &entsize))
    return WHY("is a truncated or damaged CUBIN: its section headers lie outside its %zu bytes",
               size);
  /* e_flags holds the SM version: bits 8-15 from ELF ABI version 8 on, bits 0-7 before */
  get_le(p, size, 0x30, 4, &flags);
  sm = p[8] >= 8 ? (unsigned)(flags >> 8) & 0xff : (unsigned)flags & 0xff;
  snprintf(arch, arch_size, "sm_%u", sm);
  return 0;
}

static cujit_status elf_check(const unsigned char *p, size_t size, const char *name, char *arch,
                              size_t arch_size) {
  char why[200];
  if (elf_why(p, size, arch, arch_size, why, sizeof why) != 0)
    return cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' %s; pass the bytes nvcc -cubin (or NVRTC) "
                   "wrote", name, why);
  return CUJIT_OK;
}

/* A symbol's name in string table `strtab`, or NULL when it does not end inside it. */
static const char *elf_name(const unsigned char *p, const elf_section *strtab, uint64_t at,
                            size_t *len) {
  const char *s;
  if (at >= strtab->size) return NULL;
  s = (const char *)p + strtab->offset + at;
  *len = strnlen(s, (size_t)(strtab->size - at));
  return *len < strtab->size - at ? s : NULL;
}

/* Adds the variables of symbol table `sec` (defined data objects with a usable name), and
 * with `kernels` its kernels too (defined functions marked as entries). */
static cujit_status elf_symbols(const unsigned char *p, size_t size, const elf_section *sec,
                                int kernels, cj_symtab *t) {
  elf_section strtab;
  uint64_t i, count, name, info, other, shndx;
  int kernel;
  size_t len;
  const char *s;
  if (sec->entsize < ELF_SYMBOL || !elf_section_at(p, size, sec->link, &strtab)) return CUJIT_OK;
  count = sec->size / sec->entsize;
  for (i = 0; i < count; i++) {
    uint64_t at = sec->offset + i * sec->entsize;
    if (!get_le(p, size, at, 4, &name) || !get_le(p, size, at + 4, 1, &info) ||
        !get_le(p, size, at + 5, 1, &other) || !get_le(p, size, at + 6, 2, &shndx))
      break;
    kernel = kernels && (info & 0xf) == STT_FUNC && (other & STO_CUDA_ENTRY);
    if (((info & 0xf) != STT_OBJECT && !kernel) || shndx == 0 || shndx >= SHN_LORESERVE)
      continue;
    s = elf_name(p, &strtab, name, &len);
    if (!s || len == 0 || s[0] == '.' || s[0] == '$') continue; /* the toolchain's own */
    CJ_TRY(cj_symtab_add(t, kernel, s, len));
  }
  return CUJIT_OK;
}

static cujit_status elf_globals(const unsigned char *p, size_t size, int kernels, cj_symtab *t,
                                int *known) {
  uint64_t off, n, entsize, i;
  elf_section sec;
  if (!elf_table(p, size, &off, &n, &entsize)) return CUJIT_OK;
  for (i = 0; i < n; i++) {
    if (!elf_section_at(p, size, i, &sec) || sec.type != SHT_SYMTAB) continue;
    CJ_TRY(elf_symbols(p, size, &sec, kernels, t));
    *known = 1;
    break; /* an ELF file has one symbol table: more headers naming it are not read again */
  }
  return CUJIT_OK;
}

/* ---- PTX ---- */

/* The length of `p` without the NULs that end it. */
static size_t text_length(const unsigned char *p, size_t size) {
  while (size > 0 && p[size - 1] == '\0') size--;
  return size;
}

/* Where the first line that starts with `directive` (after blanks) continues; NULL if
 * none does. The text need not end with a NUL. */
static const char *find_directive(const char *p, size_t n, const char *directive) {
  size_t dl = strlen(directive), i = 0;
  while (i < n) {
    const char *nl = memchr(p + i, '\n', n - i);
    size_t end = nl ? (size_t)(nl - p) : n;
    while (i < end && (p[i] == ' ' || p[i] == '\t')) i++;
    if (end - i > dl && memcmp(p + i, directive, dl) == 0 &&
        (p[i + dl] == ' ' || p[i + dl] == '\t'))
      return p + i + dl;
    i = end + 1;
  }
  return NULL;
}

/* "compute_90" from ".target sm_90" (or compute_90); "" when it is neither. */
static void ptx_arch(const char *after, const char *end, char *arch, size_t arch_size) {
  const char *p = after, *q;
  size_t skip;
  arch[0] = '\0';
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (end - p > 3 && memcmp(p, "sm_", 3) == 0) skip = 3;
  else if (end - p > 8 && memcmp(p, "compute_", 8) == 0) skip = 8;
  else return;
  for (q = p + skip; q < end && ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z')); q++) {
  }
  if (q > p + skip) snprintf(arch, arch_size, "compute_%.*s", (int)(q - p - skip), p + skip);
}

/* Why bytes are not PTX text (no NUL before the NULs that may end it, .version and .target
 * directives); NULL when they are. */
static const char *ptx_why(const unsigned char *p, size_t size) {
  const char *text = (const char *)p;
  size_t n = text_length(p, size);
  if (n == 0) return "is empty";
  if (memchr(p, '\0', n)) return "is not PTX text (it holds a NUL byte)";
  if (!find_directive(text, n, ".version")) return "is not PTX text (it has no .version line)";
  if (!find_directive(text, n, ".target")) return "is not PTX text (it has no .target line)";
  return NULL;
}

/* 1 when the bytes are PTX text, with its target in `arch`. */
static int ptx_check(const unsigned char *p, size_t size, char *arch, size_t arch_size) {
  size_t n = text_length(p, size);
  if (ptx_why(p, size)) return 0;
  ptx_arch(find_directive((const char *)p, n, ".target"), (const char *)p + n, arch, arch_size);
  return 1;
}

int cj_prebuilt_code_why(cj_prebuilt_kind kind, const void *data, size_t size, char *why,
                         size_t why_size) {
  char arch[32];
  const char *bad;
  if (kind == CJ_PREBUILT_CUBIN) return elf_why(data, size, arch, sizeof arch, why, why_size);
  if (kind == CJ_PREBUILT_PTX && (bad = ptx_why(data, size)) != NULL) return WHY("%s", bad);
  return 0;
}

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
  if (!get_le(p, size, 6, 2, &hsize) || !get_le(p, size, 8, 8, &total)) return 0;
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
  get_le(p, end, *pos, 2, &kind);
  get_le(p, end, *pos + 4, 4, &hsize);
  get_le(p, end, *pos + 8, 8, &psize);
  get_le(p, end, *pos + 28, 4, &arch);
  if (hsize < FATBIN_ENTRY || hsize > end - *pos || psize > end - *pos - hsize) return -1;
  if (hsize >= ENTRY_FLAGS + 8) get_le(p, end, *pos + ENTRY_FLAGS, 8, &flags);
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
static cujit_status fatbin_walk(const unsigned char *p, size_t size, const char *name,
                                char *arch, size_t arch_size, int need_code) {
  const char *todo = "pass the bytes nvcc -fatbin wrote";
  size_t pos, end;
  unsigned n = 0, usable = 0;
  fatbin_entry e;
  int r;
  CJ_CHECK(fatbin_bounds(p, size, &pos, &end), CUJIT_ERROR_INVALID_SOURCE, "'%s' is a truncated "
           "or damaged fatbin: its %zu bytes do not hold the header and the entries it "
           "announces; %s", name, size, todo);
  arch[0] = '\0';
  while ((r = fatbin_next(p, end, &pos, &e)) == 1) {
    n++;
    if (e.kind != ENTRY_PTX && e.kind != ENTRY_ELF) continue;
    usable++;
    arch_append(arch, arch_size, &e);
  }
  CJ_CHECK(r == 0, CUJIT_ERROR_INVALID_SOURCE, "'%s' is a truncated or damaged fatbin: entry %u "
           "runs past the end of its entries; %s", name, n + 1, todo);
  CJ_CHECK(n > 0, CUJIT_ERROR_INVALID_SOURCE, "'%s' is a fatbin with no entries; %s", name, todo);
  CJ_CHECK(usable > 0 || !need_code, CUJIT_ERROR_INVALID_SOURCE, "'%s' is a fatbin with no PTX "
           "or CUBIN entry (%u entr%s of other kinds); %s", name, n, n == 1 ? "y" : "ies", todo);
  return CUJIT_OK;
}

static cujit_status fatbin_check(const unsigned char *p, size_t size, const char *name,
                                 char *arch, size_t arch_size) {
  return fatbin_walk(p, size, name, arch, arch_size, 1);
}

cujit_status cj_prebuilt_check_fatbin(const void *data, size_t size, const char *name) {
  char arch[64];
  uint64_t magic = 0;
  CJ_CHECK(get_le(data, size, 0, 4, &magic) && magic == FATBIN_MAGIC, CUJIT_ERROR_INVALID_SOURCE,
           "'%s' is not a fatbin (it does not start with the fatbin magic 0xba55ed50); pass the "
           "bytes nvcc -fatbin wrote, or give the part's kind", name);
  return fatbin_walk(data, size, name, arch, sizeof arch, 0);
}

/* ---- cujit bundles ---- */

static cujit_status bundle_fail(const char *name, const char *why) {
  return cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' %s; make the bundle again (cujit compile "
                 "--arch sm_XX,sm_YY ...) and pass its bytes unchanged", name, why);
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
static cujit_status bundle_check(const unsigned char *p, size_t size, const char *name,
                                 char *arch, size_t arch_size) {
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
  CJ_CHECK(usable > 0, CUJIT_ERROR_INVALID_SOURCE, "'%s' is a cujit bundle with no CUBIN or "
           "PTX entry; make it with cujit compile --arch sm_XX,... or "
           "cujit_bundle_from_source()", name);
  return CUJIT_OK;
}

/* ---- code entries of a fatbin or bundle ---- */

/* Splits "sm_90a" or "compute_100f" into its number and suffix; 0 when it is neither. */
static int arch_parse(const char *s, cj_code *c) {
  const char *digits = strncmp(s, "sm_", 3) == 0         ? s + 3
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

static cujit_status codes_of_bundle(const unsigned char *p, size_t size, cj_code **out,
                                    size_t *n) {
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

static cujit_status codes_of_fatbin(const unsigned char *p, size_t size, cj_code **out,
                                    size_t *n) {
  size_t pos, end, cap = 0;
  fatbin_entry e;
  cj_code *c = NULL;
  CJ_CHECK(fatbin_bounds(p, size, &pos, &end), CUJIT_ERROR_INVALID_SOURCE, "the fatbin's "
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
           c->suffix == 'a' ? "a" : c->suffix == 'f' ? "f" : "");
}

/* The variables of the first entry that can be read: a CUBIN, or PTX stored as text
 * (compressed entries cannot be read). */
static cujit_status ptx_globals(const cj_code *c, cj_symtab *t, int *known) {
  char arch[32];
  char *text;
  cj_symtab ptx;
  size_t i;
  cujit_status st;
  if (!ptx_check(c->data, c->size, arch, sizeof arch)) return CUJIT_OK;
  text = cj_memdup(c->data, text_length(c->data, c->size));
  st = text ? cj_symtab_build(text, &ptx) : cj_fail_oom("reading a fatbin");
  cj_free(text);
  CJ_TRY(st);
  for (i = 0; i < ptx.n_globals && st == CUJIT_OK; i++)
    st = cj_symtab_add(t, 0, ptx.globals[i], strlen(ptx.globals[i]));
  cj_symtab_free(&ptx);
  CJ_TRY(st);
  *known = 1;
  return CUJIT_OK;
}

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
      st = elf_globals(c[i].data, c[i].size, 0, t, known);
    else if (c[i].kind == CJ_PREBUILT_PTX)
      st = ptx_globals(&c[i], t, known);
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
    return elf_check(p, size, name, arch, arch_size);
  }
  if (get_le(p, size, 0, 4, &magic) && magic == FATBIN_MAGIC) {
    *kind = CJ_PREBUILT_FATBIN;
    return fatbin_check(p, size, name, arch, arch_size);
  }
  if (cj_bundle_is(p, size)) {
    *kind = CJ_PREBUILT_BUNDLE;
    return bundle_check(p, size, name, arch, arch_size);
  }
  if (ptx_check(p, size, arch, arch_size)) {
    *kind = CJ_PREBUILT_PTX;
    return CUJIT_OK;
  }
  return cj_fail(CUJIT_ERROR_INVALID_SOURCE, "'%s' (%zu bytes) is neither PTX, a CUBIN, a "
                 "fatbin nor a cujit bundle: expected PTX text with .version and .target "
                 "directives, the ELF magic of a CUBIN (7f 45 4c 46), the fatbin magic (50 ed "
                 "55 ba) or the bundle magic (\"CUJITBN\" 1a); pass what nvcc -ptx, -cubin or "
                 "-fatbin or cujit compile --arch wrote (CUDA C source goes to "
                 "cujit_module_from_source)", name, size);
}

cujit_status cj_prebuilt_globals_of(const void *data, size_t size, cj_prebuilt_kind kind,
                                    cj_symtab *t, int *known) {
  memset(t, 0, sizeof *t);
  *known = 0;
  if (kind == CJ_PREBUILT_CUBIN) return elf_globals(data, size, 0, t, known);
  if (kind == CJ_PREBUILT_FATBIN || kind == CJ_PREBUILT_BUNDLE)
    return container_globals(data, size, kind, t, known);
  return CUJIT_OK;
}

cujit_status cj_prebuilt_globals(const cj_image *im, cj_symtab *t, int *known) {
  cujit_status st = im->fatbin
                        ? cj_prebuilt_globals_of(im->fatbin, im->fatbin_size,
                                                 (cj_prebuilt_kind)im->prebuilt, t, known)
                        : cj_prebuilt_globals_of(im->cubin, im->cubin_size, CJ_PREBUILT_CUBIN,
                                                 t, known);
  if (st != CUJIT_OK) cj_symtab_free(t);
  return st;
}

cujit_status cj_prebuilt_symbols(const void *cubin, size_t size, cj_symtab *t) {
  int known = 0;
  cujit_status st = elf_globals(cubin, size, 1, t, &known);
  if (st != CUJIT_OK) cj_symtab_free(t);
  return st;
}
