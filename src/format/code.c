/* code.c - the two kinds of code a device loads, as bytes built elsewhere: a CUBIN (a
 * 64-bit little-endian ELF file for CUDA) and PTX text. Whether bytes are one of them and
 * for which target, and the kernels and variables each names. Every read of the bytes goes
 * through cj_get_le(), which checks the bounds; each function is a pure function of its
 * bytes. The containers that hold several of them (fatbins, bundles) are prebuilt.c's and
 * bundle.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/code.h"

enum {
  ELF_HEADER = 64,  /* a 64-bit ELF header */
  ELF_SECTION = 64, /* a 64-bit section header */
  ELF_SYMBOL = 24,  /* a 64-bit symbol */
  EM_CUDA = 190,    /* e_machine of a CUBIN */
  SHT_SYMTAB = 2,
  SHT_CUDA_INFO = 0x70000000, /* .nv.info and .nv.info.<kernel>: attributes for the driver */
  STT_OBJECT = 1,
  STT_FUNC = 2,
  STO_CUDA_ENTRY = 0x10, /* st_other of a kernel (an entry function) */
  SHN_LORESERVE = 0xff00
};

/* ---- ELF (CUBIN) ---- */

typedef struct elf_section {
  uint64_t name, type, offset, size, link, entsize;
} elf_section;

/* The bounds of the section header table; 0 when it does not fit in the bytes. */
static int elf_table(const unsigned char *p, size_t size, uint64_t *off, uint64_t *n,
                     uint64_t *entsize) {
  if (!cj_get_le(p, size, 0x28, 8, off) || !cj_get_le(p, size, 0x3a, 2, entsize) ||
      !cj_get_le(p, size, 0x3c, 2, n))
    return 0;
  if (*n == 0) return 1;
  return *entsize >= ELF_SECTION && *off <= size && *n <= (size - *off) / *entsize;
}

/* Section i, whose contents must lie inside the bytes; 0 otherwise. */
static int elf_section_at(const unsigned char *p, size_t size, uint64_t i, elf_section *s) {
  uint64_t off, n, entsize, at;
  if (!elf_table(p, size, &off, &n, &entsize) || i >= n) return 0;
  at = off + i * entsize;
  if (!cj_get_le(p, size, at, 4, &s->name) || !cj_get_le(p, size, at + 0x04, 4, &s->type) ||
      !cj_get_le(p, size, at + 0x18, 8, &s->offset) ||
      !cj_get_le(p, size, at + 0x20, 8, &s->size) || !cj_get_le(p, size, at + 0x28, 4, &s->link) ||
      !cj_get_le(p, size, at + 0x38, 8, &s->entsize))
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
  cj_get_le(p, size, 0x12, 2, &machine);
  if (machine != EM_CUDA)
    return WHY("is an ELF file for machine %u (a host object or library?), not a CUBIN "
               "(machine %d, NVIDIA CUDA)",
               (unsigned)machine, EM_CUDA);
  if (!elf_table(p, size, &off, &n, &entsize))
    return WHY("is a truncated or damaged CUBIN: its section headers lie outside its %zu bytes",
               size);
  /* e_flags holds the SM version: bits 8-15 from ELF ABI version 8 on, bits 0-7 before */
  cj_get_le(p, size, 0x30, 4, &flags);
  sm = p[8] >= 8 ? (unsigned)(flags >> 8) & 0xff : (unsigned)flags & 0xff;
  snprintf(arch, arch_size, "sm_%u", sm);
  return 0;
}

cujit_status cj_cubin_check(const unsigned char *p, size_t size, const char *name, char *arch,
                            size_t arch_size) {
  char why[200];
  if (elf_why(p, size, arch, arch_size, why, sizeof why) != 0)
    return cj_fail(CUJIT_ERROR_INVALID_SOURCE,
                   "'%s' %s; pass the bytes nvcc -cubin (or NVRTC) "
                   "wrote",
                   name, why);
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
    if (!cj_get_le(p, size, at, 4, &name) || !cj_get_le(p, size, at + 4, 1, &info) ||
        !cj_get_le(p, size, at + 5, 1, &other) || !cj_get_le(p, size, at + 6, 2, &shndx))
      break;
    kernel = kernels && (info & 0xf) == STT_FUNC && (other & STO_CUDA_ENTRY);
    if (((info & 0xf) != STT_OBJECT && !kernel) || shndx == 0 || shndx >= SHN_LORESERVE) continue;
    s = elf_name(p, &strtab, name, &len);
    if (!s || len == 0 || s[0] == '.' || s[0] == '$') continue; /* the toolchain's own */
    CJ_TRY(cj_symtab_add(t, kernel, s, len));
  }
  return CUJIT_OK;
}

cujit_status cj_cubin_globals(const unsigned char *p, size_t size, int kernels, cj_symtab *t,
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

/* ---- a kernel's parameters (CUBIN) ----
 *
 * ptxas describes each kernel for the driver in a section of its own, ".nv.info.<kernel>"
 * (type SHT_CUDA_INFO): a run of attributes, each a format byte, an attribute byte and a
 * value. Formats 1-3 (none, byte, half-word) take 2 bytes of value; format 4 (sized) takes
 * a 16-bit length and that many bytes. Each parameter has one EIATTR_KPARAM_INFO (0x17)
 * entry, or EIATTR_KPARAM_INFO_V2 (0x45) for a kernel whose parameters pass 4 KiB: a
 * 32-bit index (0), the 16-bit ordinal, the 16-bit offset, then a 32-bit word holding the
 * size in bits 18-31 (0x17) or 0-15 (0x45). A kernel without parameters has none. This is
 * what cuKernelGetParamInfo reports, read without asking it: the driver refuses an index
 * past the last parameter only with an error that compute-sanitizer reports. */

enum {
  NVI_FORMAT_SIZED = 4,
  NVI_KPARAM_INFO = 0x17,
  NVI_KPARAM_INFO_V2 = 0x45,
  NVI_KPARAM_BYTES = 12 /* index, ordinal, offset, flags and size */
};

/* The section named ".nv.info.<kernel>": 1 with it in *out, else 0. */
static int kernel_info_section(const unsigned char *p, size_t size, const char *kernel,
                               elf_section *out) {
  uint64_t off, n, entsize, shstrndx, i;
  elf_section names;
  size_t klen = strlen(kernel), len;
  const char *s;
  if (!elf_table(p, size, &off, &n, &entsize) || !cj_get_le(p, size, 0x3e, 2, &shstrndx) ||
      !elf_section_at(p, size, shstrndx, &names))
    return 0;
  for (i = 0; i < n; i++) {
    if (!elf_section_at(p, size, i, out) || out->type != SHT_CUDA_INFO) continue;
    s = elf_name(p, &names, out->name, &len);
    if (s && len == 9 + klen && memcmp(s, ".nv.info.", 9) == 0 && memcmp(s + 9, kernel, klen) == 0)
      return 1;
  }
  return 0;
}

/* Calls each KPARAM entry of section `sec` with its ordinal, offset and size (visit NULL:
 * only counts them). The count, or -1 when the attributes do not end where the section
 * does or an entry is malformed. */
static long kparam_walk(const unsigned char *p, size_t size, const elf_section *sec,
                        cj_kparam *params, size_t n) {
  uint64_t pos = sec->offset, end = sec->offset + sec->size, fmt, attr, len;
  uint64_t ord = 0, offset = 0, word = 0; /* read below, inside the entry's checked length */
  long count = 0;
  while (pos < end) {
    if (end - pos < 4 || !cj_get_le(p, size, pos, 1, &fmt) ||
        !cj_get_le(p, size, pos + 1, 1, &attr))
      return -1;
    len = 2;
    if (fmt == NVI_FORMAT_SIZED && !cj_get_le(p, size, pos + 2, 2, &len)) return -1;
    if (fmt < 1 || fmt > NVI_FORMAT_SIZED || (fmt == NVI_FORMAT_SIZED && len > end - pos - 4))
      return -1;
    if (fmt == NVI_FORMAT_SIZED && (attr == NVI_KPARAM_INFO || attr == NVI_KPARAM_INFO_V2)) {
      if (len < NVI_KPARAM_BYTES) return -1;
      cj_get_le(p, size, pos + 8, 2, &ord);
      cj_get_le(p, size, pos + 10, 2, &offset);
      cj_get_le(p, size, pos + 12, 4, &word);
      if (params) {
        uint32_t bytes =
            attr == NVI_KPARAM_INFO ? (uint32_t)(word >> 18) & 0x3fff : (uint32_t)word & 0xffff;
        /* every ordinal once, with a size */
        if (ord >= n || params[ord].size || !bytes) return -1;
        params[ord].offset = (uint32_t)offset;
        params[ord].size = bytes;
      }
      count++;
    }
    pos += 2 + (fmt == NVI_FORMAT_SIZED ? 2 + len : len);
  }
  return pos == end ? count : -1;
}

int cj_cubin_kparams(const void *cubin, size_t size, const char *kernel, size_t *n,
                     cj_kparam **params) {
  const unsigned char *p = cubin;
  elf_section sec;
  long count;
  *n = 0;
  *params = NULL;
  if (size < ELF_HEADER || memcmp(p, "\177ELF", 4) != 0 || !kernel ||
      !kernel_info_section(p, size, kernel, &sec) ||
      (count = kparam_walk(p, size, &sec, NULL, 0)) < 0)
    return 0;
  if (count == 0) return 1;
  if (!(*params = cj_calloc((size_t)count, sizeof **params))) return -1;
  if (kparam_walk(p, size, &sec, *params, (size_t)count) != count) {
    cj_free(*params);
    *params = NULL;
    return 0;
  }
  *n = (size_t)count;
  return 1;
}

int cj_cubin_kernel_attr(const void *cubin, size_t size, const char *kernel, unsigned attr,
                         const unsigned char **value, size_t *len) {
  const unsigned char *p = cubin;
  elf_section sec;
  uint64_t pos, end, fmt, at, n;
  if (size < ELF_HEADER || memcmp(p, "\177ELF", 4) != 0 || !kernel ||
      !kernel_info_section(p, size, kernel, &sec))
    return 0;
  for (pos = sec.offset, end = sec.offset + sec.size; pos < end;) {
    if (end - pos < 4 || !cj_get_le(p, size, pos, 1, &fmt) || !cj_get_le(p, size, pos + 1, 1, &at))
      return 0;
    n = 2;
    if (fmt == NVI_FORMAT_SIZED && !cj_get_le(p, size, pos + 2, 2, &n)) return 0;
    if (fmt < 1 || fmt > NVI_FORMAT_SIZED || (fmt == NVI_FORMAT_SIZED && n > end - pos - 4))
      return 0;
    if (fmt == NVI_FORMAT_SIZED && at == attr) {
      *value = p + pos + 4;
      *len = (size_t)n;
      return 1;
    }
    pos += 2 + (fmt == NVI_FORMAT_SIZED ? 2 + n : n);
  }
  return 0;
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
  if (end - p > 3 && memcmp(p, "sm_", 3) == 0)
    skip = 3;
  else if (end - p > 8 && memcmp(p, "compute_", 8) == 0)
    skip = 8;
  else
    return;
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
int cj_code_ptx_check(const unsigned char *p, size_t size, char *arch, size_t arch_size) {
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

/* The variables of PTX text (a PTX entry stored uncompressed). */
cujit_status cj_code_ptx_globals(const void *data, size_t size, cj_symtab *t, int *known) {
  char arch[32];
  char *text;
  cj_symtab ptx;
  size_t i;
  cujit_status st;
  if (!cj_code_ptx_check(data, size, arch, sizeof arch)) return CUJIT_OK;
  text = cj_memdup(data, text_length(data, size));
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

cujit_status cj_prebuilt_symbols(const void *cubin, size_t size, cj_symtab *t) {
  int known = 0;
  cujit_status st = cj_cubin_globals(cubin, size, 1, t, &known);
  if (st != CUJIT_OK) cj_symtab_free(t);
  return st;
}
