/* nvrtc.c - finding and loading NVRTC at run time (see nvrtc.h). The library file is found
 * by looking at paths first, without loading anything, so that a cache key can name the
 * NVRTC it was made for while a cache hit leaves NVRTC unmapped.
 *
 * The NVRTC a key names must be the NVRTC that compiles under it. So a file is only ever
 * found by an absolute path (CUJIT_NVRTC must be one; a directory searched that is
 * relative is joined to the working directory when it is searched), it is opened once
 * and named by the build ID read from that descriptor, and the first compile loads that
 * absolute path and checks that the image the loader mapped carries that build ID in its
 * memory (else, for a file without one, that its device and inode are the file's). A
 * file replaced in between is refused, never compiled with. Loading the descriptor itself
 * (/proc/self/fd/N) would need no check, but would keep a descriptor open in every
 * process that computes a key, cache hits included, and would give the loaded library a
 * name of /proc's rather than its own. */
#define _GNU_SOURCE /* dladdr1, dlinfo, dl_iterate_phdr */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/nvrtc.h"

cj_nvrtc_api cj_nv;

static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

static pthread_once_t locate_once = PTHREAD_ONCE_INIT;
/* What take_file() found, "" until then: the identity, the path and its directory, one
 * after the other in found[], so that a process touches one page of it rather than three. */
static CJ_LARGE char found[3 * PATH_MAX + 64];
static const char *identity = "", *lib_path = "", *lib_dir = "";
static CJ_LARGE char loaded_dir[PATH_MAX]; /* set before `loaded` when found by the system's search */
static unsigned long long keyed_dev, keyed_ino; /* of a file without a build ID */
static int explicit_missing;    /* CUJIT_NVRTC names no file (or is refused) */
static int explicit_refused;    /* CUJIT_NVRTC is not an absolute path */
static int in_process;          /* the program had NVRTC already: its symbols are used */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cujit_status load_status = CUJIT_ERROR_NO_NVRTC;
static CJ_LARGE char load_detail[1536];
static int loaded;

static void note_looked(char *looked, size_t size, const char *what) {
  size_t n = strlen(looked);
  if (n + strlen(what) + 3 < size) snprintf(looked + n, size - n, "%s%s", n ? ", " : "", what);
}

/* The GNU build ID among the notes in buf[0, size), as hex into out. */
static int note_build_id(const unsigned char *buf, size_t size, char *out, size_t out_size) {
  size_t pos = 0, i, n, d;
  Elf64_Nhdr h;
  while (pos + sizeof h <= size) {
    memcpy(&h, buf + pos, sizeof h);
    pos += sizeof h;
    n = ((size_t)h.n_namesz + 3) / 4 * 4;
    d = ((size_t)h.n_descsz + 3) / 4 * 4;
    if (n > size - pos || d > size - pos - n) return 0;
    if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && memcmp(buf + pos, "GNU", 4) == 0 &&
        h.n_descsz > 0 && h.n_descsz * 2 < out_size) {
      for (i = 0; i < h.n_descsz; i++) {
        out[2 * i] = "0123456789abcdef"[buf[pos + n + i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[buf[pos + n + i] & 15];
      }
      out[2 * i] = '\0';
      return 1;
    }
    pos += n + d;
  }
  return 0;
}

/* The build ID in the note segment at [offset, offset + size) of the file, read apart
 * (rarely needed: see cj_elf_build_id). */
static int far_build_id(int fd, uint64_t offset, uint64_t size, char *out, size_t out_size) {
  unsigned char *note;
  int ok;
  if (size > 4096 || !(note = cj_malloc((size_t)size))) return 0;
  ok = pread(fd, note, (size_t)size, (off_t)offset) == (ssize_t)size &&
       note_build_id(note, (size_t)size, out, out_size);
  cj_free(note);
  return ok;
}

/* The build ID a linker wrote into an ELF file (readelf -n), which names one build of
 * NVRTC exactly and the same on every machine; 0 when the file has none. This runs in
 * every process that compiles or looks up the cache, so it reads as little as it can: the
 * file's first KiB, where the headers and a shared library's notes usually are (libnvrtc's
 * at 0x270), and a note segment elsewhere only when it is not there. A small buffer also
 * keeps the stack within the pages a process has touched already. */
int cj_elf_build_id(int fd, char *out, size_t out_size) {
  unsigned char head[1024];
  ssize_t got = pread(fd, head, sizeof head, 0);
  Elf64_Ehdr eh;
  Elf64_Phdr ph;
  size_t at;
  unsigned i;
  if (got < (ssize_t)sizeof eh) return 0;
  memcpy(&eh, head, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof ph || eh.e_phoff > ((uint64_t)1 << 40))
    return 0;
  for (i = 0; i < eh.e_phnum && i < 64; i++) {
    at = (size_t)eh.e_phoff + (size_t)i * sizeof ph;
    if (at + sizeof ph <= (size_t)got)
      memcpy(&ph, head + at, sizeof ph);
    else if (pread(fd, &ph, sizeof ph, (off_t)at) != (ssize_t)sizeof ph) /* a long table */
      return 0;
    if (ph.p_type != PT_NOTE) continue;
    if (ph.p_offset <= (uint64_t)got && ph.p_filesz <= (uint64_t)got - ph.p_offset) {
      if (note_build_id(head + ph.p_offset, (size_t)ph.p_filesz, out, out_size)) return 1;
    } else if (far_build_id(fd, ph.p_offset, ph.p_filesz, out, out_size)) {
      return 1;
    }
  }
  return 0;
}

const char *cj_lib_absolute(const char *path, char *buf, size_t size) {
  char cwd[PATH_MAX];
  if (path[0] == '/') return path;
  if (!getcwd(cwd, sizeof cwd) || cj_join(buf, size, cwd, "/", path, NULL) >= size) return NULL;
  return buf;
}

int cj_lib_identify(int fd, cj_lib_key *k) {
  struct stat st;
  memset(k, 0, sizeof *k);
  /* a build ID is read only from a regular file (a FIFO or a directory cannot be read at
   * an offset), so only without one is the file's kind asked for */
  if (cj_elf_build_id(fd, k->build_id, sizeof k->build_id)) return 1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  k->size = (long long)st.st_size;
  k->dev = (unsigned long long)st.st_dev;
  k->ino = (unsigned long long)st.st_ino;
  return 1;
}

/* Keeps the absolute `path` and its directory at `at`, after the identity in found[]. */
static void keep_path(char *at, const char *path) {
  char *const end = found + sizeof found;
  const char *base = strrchr(path, '/');
  lib_path = at;
  at += cj_join(at, (size_t)(end - at), path, NULL) + 1;
  memcpy(at, path, (size_t)(base - path));
  at[base - path] = '\0';
  lib_dir = base == path ? "/" : at;
}

/* Takes `path` when it is a regular file: its path (made absolute), directory and
 * identity. The path is kept as found otherwise (no realpath: resolving each component
 * costs a system call, and this runs in every process). */
static int take_file(const char *path) {
  char abs[PATH_MAX];
  size_t n;
  cj_lib_key k;
  int fd, ok;
  if (strlen(path) >= PATH_MAX || !(path = cj_lib_absolute(path, abs, sizeof abs)) ||
      (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
    return 0;
  ok = cj_lib_identify(fd, &k);
  close(fd);
  if (!ok) return 0;
  if (k.build_id[0]) { /* no printf */
    n = cj_join(found, PATH_MAX + 32, "nvrtc build ", k.build_id, NULL);
  } else { /* no build ID: its name and size, which differ between releases */
    n = (size_t)snprintf(found, PATH_MAX + 32, "%s %lld", strrchr(path, '/') + 1, k.size);
    keyed_dev = k.dev;
    keyed_ino = k.ino;
  }
  identity = found; /* the path and its directory follow it (found[] has room for all) */
  keep_path(found + n + 1, path);
  return 1;
}

/* ---- the image a dlopen mapped ---- */

typedef struct image_query {
  const struct link_map *map;
  char *out;
  size_t out_size;
  int found;
} image_query;

/* 1 when [vaddr, vaddr + size) lies in a segment the loader mapped from the file. */
static int mapped(const struct dl_phdr_info *info, ElfW(Addr) vaddr, ElfW(Xword) size) {
  int i;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *l = &info->dlpi_phdr[i];
    if (l->p_type == PT_LOAD && vaddr >= l->p_vaddr && size <= l->p_filesz &&
        vaddr - l->p_vaddr <= l->p_filesz - size)
      return 1;
  }
  return 0;
}

/* dl_iterate_phdr's callback: the build ID among the notes of the image q->map, read from
 * memory (what was mapped, whatever the file holds by now). */
static int image_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  image_query *q = data;
  int i;
  (void)size;
  if (info->dlpi_addr != q->map->l_addr || strcmp(info->dlpi_name, q->map->l_name) != 0)
    return 0;
  for (i = 0; i < info->dlpi_phnum && !q->found; i++) {
    const ElfW(Phdr) *n = &info->dlpi_phdr[i];
    if (n->p_type == PT_NOTE && mapped(info, n->p_vaddr, n->p_filesz))
      q->found = note_build_id((const unsigned char *)(info->dlpi_addr + n->p_vaddr),
                               (size_t)n->p_filesz, q->out, q->out_size);
  }
  return 1;
}

/* The build ID of the loaded image `map`, into out: 1, or 0 when it has none. */
static int map_build_id(const struct link_map *map, char *out, size_t out_size) {
  image_query q = {map, out, out_size, 0};
  out[0] = '\0';
  dl_iterate_phdr(image_build_id, &q);
  return q.found;
}

int cj_lib_loaded_is(void *lib, const cj_lib_key *k, char *why, size_t why_size) {
  struct link_map *map = NULL;
  char id[129];
  struct stat st;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0 || !map) {
    snprintf(why, why_size, "the loader does not say what it mapped");
    return 0;
  }
  if (map_build_id(map, id, sizeof id) || k->build_id[0]) {
    if (strcmp(id, k->build_id) == 0) return 1;
    snprintf(why, why_size, "it was named by build %s, but build %s was loaded",
             k->build_id[0] ? k->build_id : "(none)", id[0] ? id : "(none)");
    return 0;
  }
  if (stat(map->l_name, &st) == 0 && (unsigned long long)st.st_dev == k->dev &&
      (unsigned long long)st.st_ino == k->ino)
    return 1;
  snprintf(why, why_size, "the file at %.1024s was replaced after it was looked at",
           map->l_name);
  return 0;
}

const char *cj_lib_env(const char *var, int *refused) {
  const char *v = cj_env(var);
  *refused = 0;
  if (!v || v[0] == '/') return v;
  *refused = 1;
  cj_warn("%s is '%s', which is not an absolute path, and is not used: set it to the full "
          "path of the library file (a bare name would be looked for in the working "
          "directory); compiles that need it fail until then", var, v);
  return NULL;
}

void cj_lib_refusal(char *out, size_t size, const char *var, const char *file,
                    const char *without) {
  snprintf(out, size, "%s is '%.512s', which is not an absolute path, so it was not loaded; "
           "set it to the full path of %s (%s)", var, cj_env(var), file, without);
}

/* The NVRTC this process already has (a program that links NVRTC itself): that one is
 * used, rather than a second copy, named by the build ID of its image in memory. Its path
 * and directory are kept only when the loader was given an absolute one: a relative one
 * names another file once the working directory changes. */
static int take_loaded(void) {
  struct link_map *map = NULL;
  Dl_info info;
  char id[129];
  size_t n;
  void *sym = dlsym(RTLD_DEFAULT, "nvrtcVersion");
  if (!sym || !dladdr1(sym, &info, (void **)&map, RTLD_DL_LINKMAP) || !map || !map->l_name)
    return 0;
  if (map_build_id(map, id, sizeof id)) {
    n = cj_join(found, PATH_MAX + 32, "nvrtc build ", id, NULL);
    identity = found;
    if (map->l_name[0] == '/') keep_path(found + n + 1, map->l_name);
  } else if (map->l_name[0] != '/' || !take_file(map->l_name)) {
    return 0;
  }
  in_process = 1;
  return 1;
}

static size_t add_dir(search_dir *v, size_t n, size_t cap, const char *dir, size_t len,
                      const char *sub) {
  if (!dir || !len || n == cap || len + strlen(sub) + 20 >= PATH_MAX) return n;
  v[n].dir = dir;
  v[n].len = len;
  v[n].sub = sub;
  return n + 1;
}

static size_t add_toolkit(search_dir *v, size_t n, size_t cap, const char *root) {
  if (!root) return n;
  n = add_dir(v, n, cap, root, strlen(root), "/lib64");
  return add_dir(v, n, cap, root, strlen(root), "/lib");
}

size_t cj_lib_search_dirs(search_dir *v, size_t cap) {
  const char *p = cj_env("LD_LIBRARY_PATH"), *end;
  size_t n = 0;
  while (p && *p) {
    end = strchr(p, ':');
    n = add_dir(v, n, cap, p, end ? (size_t)(end - p) : strlen(p), "");
    p = end ? end + 1 : NULL;
  }
#ifdef CUJIT_CUDA_LIB_DIR
  n = add_dir(v, n, cap, CUJIT_CUDA_LIB_DIR, strlen(CUJIT_CUDA_LIB_DIR), "");
#endif
  n = add_toolkit(v, n, cap, cj_env("CUDA_PATH"));
  n = add_toolkit(v, n, cap, cj_env("CUDA_HOME"));
  return add_toolkit(v, n, cap, "/usr/local/cuda");
}

/* Looks for each name in every directory before the next name, so that the newest NVRTC
 * found anywhere wins and the usual case (the first name, in the first directory that has
 * NVRTC) costs one failed open per directory before it. */
static void search(void) {
  search_dir v[64];
  char path[PATH_MAX];
  size_t n = cj_lib_search_dirs(v, CJ_COUNT(v)), d, i;
  for (i = 0; i < CJ_COUNT(sonames); i++)
    for (d = 0; d < n; d++) { /* add_dir() left room for the rest */
      memcpy(path, v[d].dir, v[d].len);
      cj_join(path + v[d].len, sizeof path - v[d].len, v[d].sub, "/", sonames[i], NULL);
      if (take_file(path)) return;
    }
}

static void locate(void) {
  const char *v = cj_lib_env("CUJIT_NVRTC", &explicit_refused);
  if (v || explicit_refused) { /* the user's choice is final: a wrong one is an error */
    explicit_missing = !v || !take_file(v);
    return;
  }
  if (!take_loaded()) search();
}

/* After loading through the system's search: the library's directory, from a symbol. */
static void locate_loaded(void *sym) {
  Dl_info info;
  char real[PATH_MAX], *slash;
  if (lib_path[0] || !dladdr(sym, &info) || !info.dli_fname) return;
  if (!realpath(info.dli_fname, real) || !(slash = strrchr(real, '/'))) return;
  *slash = '\0';
  snprintf(loaded_dir, sizeof loaded_dir, "%s", real);
}

static void *open_library(void) {
  void *lib;
  size_t i;
  if (lib_path[0]) return dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (explicit_missing) return NULL;
  for (i = 0; i < CJ_COUNT(sonames); i++)
    if ((lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL)) != NULL) return lib;
  return NULL;
}

/* Resolves the table from `lib` (the program's own scope when it had NVRTC already, so
 * that what it links or wraps is what cujit calls). */
static int resolve(void *lib) {
#define CJ_NVRTC_REQ_(fn)                                                                 \
  if (!(*(void **)&cj_nv.fn = dlsym(lib, #fn))) {                                          \
    snprintf(load_detail, sizeof load_detail, "NVRTC in %.1024s lacks %s; it is too old for "   \
             "cujit (NVRTC 12.0 or newer is needed)", lib_path[0] ? lib_path : "?", #fn);   \
    return 0;                                                                               \
  }
#define CJ_NVRTC_OPT_(fn) *(void **)&cj_nv.fn = dlsym(lib, #fn);
  CJ_NVRTC_REQUIRED(CJ_NVRTC_REQ_)
  CJ_NVRTC_OPTIONAL(CJ_NVRTC_OPT_)
#undef CJ_NVRTC_REQ_
#undef CJ_NVRTC_OPT_
  return 1;
}

/* Where NVRTC was looked for, for the error when it was not found (written only then: a
 * process that finds it touches none of this). */
static void describe_search(char *looked, size_t size) {
  search_dir v[64];
  char path[PATH_MAX];
  const char *explicit_path = cj_env("CUJIT_NVRTC");
  size_t n, d;
  looked[0] = '\0';
  if (explicit_path) {
    note_looked(looked, size, explicit_path);
    return;
  }
  n = cj_lib_search_dirs(v, CJ_COUNT(v));
  for (d = 0; d < n; d++) {
    snprintf(path, sizeof path, "%.*s%s", (int)v[d].len, v[d].dir, v[d].sub);
    note_looked(looked, size, path);
  }
  note_looked(looked, size, "the system's library path");
}

/* The library just loaded from lib_path is the file its identity was read from: a file
 * replaced between the two (the key is made when a process first looks, the library is
 * loaded at its first compile) must not compile entries under the old one's key. */
static int is_keyed(void *lib) {
  cj_lib_key k;
  char why[700];
  memset(&k, 0, sizeof k);
  if (strncmp(identity, "nvrtc build ", 12) == 0)
    cj_join(k.build_id, sizeof k.build_id, identity + 12, NULL);
  k.dev = keyed_dev;
  k.ino = keyed_ino;
  if (cj_lib_loaded_is(lib, &k, why, sizeof why)) return 1;
  snprintf(load_detail, sizeof load_detail, "the NVRTC loaded from %.600s is not the file "
           "this process named in its cache keys: %.700s. cujit does not compile with it; run "
           "the program again to use the NVRTC there now", lib_path, why);
  return 0;
}

static void load(void) {
  const char *why;
  char looked[1024];
  void *lib;
  pthread_once(&locate_once, locate);
  if (explicit_refused) {
    cj_lib_refusal(load_detail, sizeof load_detail, "CUJIT_NVRTC", "libnvrtc.so", "kernels "
                   "found in the cache and prebuilt PTX, CUBIN and fatbins need no NVRTC");
    return;
  }
  if (!(lib = in_process ? RTLD_DEFAULT : open_library())) {
    why = explicit_missing ? "it is not a file" : dlerror();
    describe_search(looked, sizeof looked);
    snprintf(load_detail, sizeof load_detail,
             "NVRTC (libnvrtc.so) could not be loaded%s: %s; looked in %s. Install the CUDA "
             "toolkit's NVRTC, or set CUJIT_NVRTC to the path of libnvrtc.so (kernels found "
             "in the cache and prebuilt PTX, CUBIN and fatbins need no NVRTC)",
             cj_env("CUJIT_NVRTC") ? " from CUJIT_NVRTC" : "",
             why ? why : "not found", looked);
    return;
  }
  if (in_process) {
    if (!resolve(lib)) return;
  } else if ((lib_path[0] && !is_keyed(lib)) || !resolve(lib)) {
    dlclose(lib);
    return;
  } else {
    locate_loaded(*(void **)&cj_nv.nvrtcVersion);
  }
  __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
  load_status = CUJIT_OK;
}

cujit_status cj_nvrtc_load(void) {
  pthread_once(&load_once, load);
  if (CJ_UNLIKELY(load_status != CUJIT_OK)) return cj_fail(load_status, "%s", load_detail);
  return CUJIT_OK;
}

int cj_nvrtc_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

const char *cj_nvrtc_identity(void) {
  pthread_once(&locate_once, locate);
  return identity;
}

const char *cujit_nvrtc_path(void) {
  pthread_once(&locate_once, locate);
  return lib_path;
}

const char *cj_nvrtc_dir(void) {
  pthread_once(&locate_once, locate);
  if (lib_dir[0]) return lib_dir;
  return cj_nvrtc_loaded() ? loaded_dir : "";
}
