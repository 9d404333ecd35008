/* loader.c - loading a library at run time by its table (see loader.h).
 *
 * A keyed library (NVRTC, nvJitLink) is found by looking at paths first, without loading
 * anything, so that a cache key can name the library it was made for while a cache hit
 * leaves it unmapped. The library a key names must be the library that compiles under it.
 * So a file is only ever found by an absolute path (the variable must give one; a
 * directory searched that is relative is joined to the working directory when it is
 * searched), it is opened once and named by the build ID read from that descriptor, and
 * the load opens that absolute path and checks that the image the loader mapped carries
 * that build ID in its memory (else, for a file without one, that its device and inode
 * are the file's). A file replaced in between is refused, never used. Loading the
 * descriptor itself (/proc/self/fd/N) would need no check, but would keep a descriptor
 * open in every process that computes a key, cache hits included, and would give the
 * loaded library a name of /proc's rather than its own.
 *
 * Any other library (libcuda, hiredis) is loaded by the system's search for its names,
 * or from the variable's absolute path. */
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
#include <time.h>
#include <unistd.h>

#include "dl/loader.h"

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

/* `path` when it is absolute; else the working directory joined with it, in buf (NULL when
 * that does not fit). A path found through a relative directory is made absolute when it
 * is found, so that the file keyed is the file loaded whatever the directory is later. */
static const char *lib_absolute(const char *path, char *buf, size_t size) {
  char cwd[PATH_MAX];
  if (path[0] == '/') return path;
  if (!getcwd(cwd, sizeof cwd) || cj_join(buf, size, cwd, "/", path, NULL) >= size) return NULL;
  return buf;
}

/* Reads what names the file open on fd into k, without loading it: its build ID, and only
 * without one its size, device and inode (a cache hit spends no system call on them). 1,
 * or 0 when it is not a regular file. */
static int lib_identify(int fd, cj_lib_key *k) {
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
  if (info->dlpi_addr != q->map->l_addr || strcmp(info->dlpi_name, q->map->l_name) != 0) return 0;
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

/* After a dlopen of the file k was read from: 1 when the image `lib` mapped is that file
 * (the build ID in its memory, else the device and inode of the path it was loaded by);
 * else 0 with the reason in why. */
static int loaded_is(void *lib, const cj_lib_key *k, char *why, size_t why_size) {
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
  snprintf(why, why_size, "the file at %.1024s was replaced after it was looked at", map->l_name);
  return 0;
}

/* ---- finding a keyed library's file ---- */

/* Keeps the absolute `path` and its directory at `at`, after the identity in f->text. */
static void keep_path(cj_dlib_file *f, char *at, const char *path) {
  char *const end = f->text + sizeof f->text;
  const char *base = strrchr(path, '/');
  f->path = at;
  at += cj_join(at, (size_t)(end - at), path, NULL) + 1;
  memcpy(at, path, (size_t)(base - path));
  at[base - path] = '\0';
  f->dir = base == path ? "/" : at;
}

/* Takes `path` when it is a regular file: its path (made absolute), directory and
 * identity. The path is kept as found otherwise (no realpath: resolving each component
 * costs a system call, and this runs in every process). */
static int take_file(const cj_dlib *d, cj_dlib_file *f, const char *path) {
  char abs[PATH_MAX];
  size_t n;
  int fd, ok;
  if (strlen(path) >= PATH_MAX || !(path = lib_absolute(path, abs, sizeof abs)) ||
      (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
    return 0;
  ok = lib_identify(fd, &f->keyed);
  close(fd);
  if (!ok) return 0;
  if (f->keyed.build_id[0]) /* no printf */
    n = cj_join(f->text, PATH_MAX + 32, d->keyed_as, f->keyed.build_id, NULL);
  else /* no build ID: its name and size, which differ between releases */
    n = (size_t)snprintf(f->text, PATH_MAX + 32, "%s %lld", strrchr(path, '/') + 1, f->keyed.size);
  f->identity = f->text; /* the path and its directory follow it (text has room for all) */
  keep_path(f, f->text + n + 1, path);
  return 1;
}

/* The library this process already has (a program that links NVRTC itself): that one is
 * used, rather than a second copy, named by the build ID of its image in memory. Its path
 * and directory are kept only when the loader was given an absolute one: a relative one
 * names another file once the working directory changes. */
static int take_loaded(const cj_dlib *d, cj_dlib_file *f) {
  struct link_map *map = NULL;
  Dl_info info;
  char id[129];
  size_t n;
  void *sym = dlsym(RTLD_DEFAULT, d->in_process);
  if (!sym || !dladdr1(sym, &info, (void **)&map, RTLD_DL_LINKMAP) || !map || !map->l_name)
    return 0;
  if (map_build_id(map, id, sizeof id)) {
    n = cj_join(f->text, PATH_MAX + 32, d->keyed_as, id, NULL);
    f->identity = f->text;
    if (map->l_name[0] == '/') keep_path(f, f->text + n + 1, map->l_name);
  } else if (map->l_name[0] != '/' || !take_file(d, f, map->l_name)) {
    return 0;
  }
  f->in_process = 1;
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

/* The directories a keyed library is looked for in: `beside`'s, then the toolkit's. */
static size_t dirs_of(const cj_dlib *d, search_dir *v, size_t cap) {
  const char *b = d->beside ? d->beside() : "";
  size_t n = 0;
  if (b[0]) {
    v[0].dir = b;
    v[0].len = strlen(b);
    v[0].sub = "";
    n = 1;
  }
  return n + cj_lib_search_dirs(v + n, cap - n);
}

/* Looks for each name in every directory before the next name, so that the newest release
 * found anywhere wins and the usual case (the first name, in the first directory that has
 * it) costs one failed open per directory before it. */
static void search(const cj_dlib *d, cj_dlib_file *f) {
  search_dir v[64];
  char path[PATH_MAX];
  size_t n = dirs_of(d, v, CJ_COUNT(v)), k, i;
  for (i = 0; i < d->n_sonames; i++)
    for (k = 0; k < n; k++) {
      if (v[k].len >= sizeof path) continue;
      memcpy(path, v[k].dir, v[k].len);
      if (cj_join(path + v[k].len, sizeof path - v[k].len, v[k].sub, "/", d->sonames[i], NULL) >=
          sizeof path - v[k].len)
        continue;
      if (take_file(d, f, path)) return;
    }
}

/* The variable's value when it is an absolute path: a bare name would be looked for in
 * the working directory by cujit and by the system's search by the loader, two different
 * files. A relative value is refused (and, for a library the compiles need later, warned
 * about once now, naming the variable). */
static void read_env(const cj_dlib *d, cj_dlib_file *f) {
  const char *v = cj_env(d->env);
  if (!v || v[0] == '/') {
    f->env = v;
    return;
  }
  f->env_refused = 1;
  if (d->warn_relative)
    cj_warn("%s is '%s', which is not an absolute path, and is not used: set it to the full "
            "path of the library file (a bare name would be looked for in the working "
            "directory); compiles that need it fail until then",
            d->env, v);
}

void cj_dlib_locate(const cj_dlib *d, cj_dlib_file *f) {
  f->identity = f->path = f->dir = "";
  read_env(d, f);
  if (!d->keyed_as) return;       /* loaded by the system's search or the variable's path */
  if (f->env || f->env_refused) { /* the user's choice is final: a wrong one is an error */
    f->env_missing = !f->env || !take_file(d, f, f->env);
    return;
  }
  if (!d->in_process || !take_loaded(d, f)) search(d, f);
}

/* ---- loading ---- */

int cj_dlib_mapped(const char *name) {
  void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return 0;
  dlclose(h); /* the reference just taken */
  return 1;
}

static void *open_library(const cj_dlib *d, const cj_dlib_file *f) {
  void *lib;
  size_t i;
  if (f->path[0]) return dlopen(f->path, RTLD_NOW | RTLD_LOCAL);
  if (f->env_missing) return NULL;
  if (f->env) return dlopen(f->env, RTLD_NOW | RTLD_LOCAL);
  for (i = 0; i < d->n_sonames; i++)
    if ((lib = dlopen(d->sonames[i], RTLD_NOW | RTLD_LOCAL)) != NULL) return lib;
  return NULL;
}

/* The entry point `name`, by its plain name or a versioned one. */
static void *entry(const cj_dlib *d, void *lib, const char *name) {
  char versioned[96];
  void *p = dlsym(lib, name);
  size_t i;
  for (i = 0; !p && i < d->n_versions; i++) {
    snprintf(versioned, sizeof versioned, "__%s_%s", name, d->versions[i]);
    p = dlsym(lib, versioned);
  }
  return p;
}

/* Fills the table from `lib` (the program's own scope for its own copy, so that what it
 * links or wraps is what cujit calls); the first required entry point missing, or NULL. */
static const char *resolve(const cj_dlib *d, void *lib, void *table) {
  size_t i;
  void *p;
  for (i = 0; i < d->n_syms; i++) {
    p = entry(d, lib, d->syms[i].name);
    if (!p && !d->syms[i].optional) return d->syms[i].name;
    memcpy((char *)table + d->syms[i].at, &p, sizeof p);
  }
  return NULL;
}

/* Held while a library is loaded and its entry points read: a fork() waits for it (see
 * common/forklock.c), so that no child starts with a library half loaded, its
 * constructors half run, by a thread the child does not have. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_load, load_lock)

static cj_dlib_rc load_locked(const cj_dlib *d, const cj_dlib_file *f, void *table, void **lib,
                              char *why, size_t why_size) {
  const char *err;
  void *h;
  if (f->env_refused) return CJ_DLIB_REFUSED;
  if (f->in_process) {
    h = RTLD_DEFAULT;
  } else if (!(h = open_library(d, f))) {
    err = f->env_missing ? "it is not a file" : dlerror();
    snprintf(why, why_size, "%s", err ? err : "");
    return CJ_DLIB_NOT_LOADED;
  } else if (f->path[0] && !loaded_is(h, &f->keyed, why, why_size)) {
    /* the key is made when a process first looks, the library is loaded at its first
     * use: a file replaced between the two must not work under the old one's key */
    dlclose(h);
    return CJ_DLIB_NOT_KEYED;
  }
  if ((err = resolve(d, h, table)) != NULL) {
    snprintf(why, why_size, "%s", err);
    if (!f->in_process) dlclose(h);
    return CJ_DLIB_LACKS;
  }
  *lib = h;
  return CJ_DLIB_LOADED;
}

cj_dlib_rc cj_dlib_load(const cj_dlib *d, const cj_dlib_file *f, void *table, void **lib, char *why,
                        size_t why_size) {
  cj_dlib_rc rc;
  *lib = NULL;
  why[0] = '\0';
  pthread_mutex_lock(&load_lock);
  rc = load_locked(d, f, table, lib, why, why_size);
  pthread_mutex_unlock(&load_lock);
  return rc;
}

/* ---- one library, once ----
 *
 * Each library goes through two stages, each taken once by one thread: LOCATED (its
 * variable read, its file found) and TRIED (loaded, or the reason why not kept). A thread
 * that finds a stage being taken waits for it. The lock is not held while a stage is taken,
 * so that finding one library may find another (nvJitLink is looked for beside NVRTC); a
 * fork waits for the stages in flight, so that a child never finds one half taken. */

enum { NONE, LOCATED, TRIED };

static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stage_done = PTHREAD_COND_INITIALIZER;
static int stages_taken; /* stages being taken now (under stage_lock) */

static void stages_fork_prepare(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5; /* a stage stuck past that (a dlopen that never returns) is not waited */
  pthread_mutex_lock(&stage_lock);
  while (stages_taken && pthread_cond_timedwait(&stage_done, &stage_lock, &until) == 0) {
  }
}

static void stages_fork_parent(void) { pthread_mutex_unlock(&stage_lock); }

static void stages_fork_child(void) {
  pthread_cond_init(&stage_done, NULL);
  pthread_mutex_unlock(&stage_lock);
}

__attribute__((constructor)) static void stages_fork_hooks(void) {
  cj_fork_hooks(stages_fork_prepare, stages_fork_parent, stages_fork_child);
}

/* Takes d to stage `to` with step(d), unless it is there already or another thread takes it. */
static void reach(const cj_dlib *d, int to, void (*step)(const cj_dlib *d)) {
  cj_dlib_state *s = d->state;
  if (CJ_LIKELY(__atomic_load_n(&s->stage, __ATOMIC_ACQUIRE) >= to)) return;
  pthread_mutex_lock(&stage_lock);
  while (s->busy) pthread_cond_wait(&stage_done, &stage_lock);
  if (s->stage >= to) {
    pthread_mutex_unlock(&stage_lock);
    return;
  }
  s->busy = 1;
  stages_taken++;
  pthread_mutex_unlock(&stage_lock);
  step(d);
  pthread_mutex_lock(&stage_lock);
  __atomic_store_n(&s->stage, to, __ATOMIC_RELEASE);
  s->busy = 0;
  stages_taken--;
  pthread_cond_broadcast(&stage_done);
  pthread_mutex_unlock(&stage_lock);
}

static void locate_step(const cj_dlib *d) { cj_dlib_locate(d, &d->state->file); }

const cj_dlib_file *cj_dlib_found(const cj_dlib *d) {
  reach(d, LOCATED, locate_step);
  return &d->state->file;
}

/* ---- messages: what went wrong, and what to do ---- */

/* What was looked at for a library that was not loaded: the variable's file or the file
 * found by path; else the names it is known by, in the directories searched (a keyed
 * library's) and the system's library path. Written only when a library was not loaded: a
 * process that loads it touches none of this. */
static void looked_for(const cj_dlib *d, char *out, size_t size) {
  const cj_dlib_file *f = &d->state->file;
  search_dir v[64];
  char path[PATH_MAX];
  size_t n = 0, k, used;
  if (f->env || f->path[0]) {
    snprintf(out, size, "looked only at %s", f->env ? f->env : f->path);
    return;
  }
  used = (size_t)snprintf(out, size, "looked for");
  for (k = 0; k < d->n_sonames && used < size; k++)
    used += (size_t)snprintf(out + used, size - used, "%s%s",
                             k == 0                 ? " "
                             : k + 1 < d->n_sonames ? ", "
                                                    : " or ",
                             d->sonames[k]);
  if (d->keyed_as) n = dirs_of(d, v, CJ_COUNT(v));
  for (k = 0; k < n && used < size; k++) {
    snprintf(path, sizeof path, "%.*s%s", (int)v[k].len, v[k].dir, v[k].sub);
    used += (size_t)snprintf(out + used, size - used, "%s%s", k ? ", " : " in ", path);
  }
  if (used < size)
    snprintf(out + used, size - used, "%s the system's library path", n ? " and" : " in");
}

/* Where the library that was loaded, or was to be, lies, for a message. */
static const char *where(const cj_dlib *d, const char *loaded) {
  const cj_dlib_file *f = &d->state->file;
  if (f->path[0]) return f->path;
  if (f->env) return f->env;
  return loaded[0] ? loaded : "the file the system's library search found";
}

/* The state's message for a load that ended with rc (why: cj_dlib_load's detail, or the
 * check's; loaded: the file mapped, when known). Every message names what was tried and
 * says what to do. Out of line: the message is as long as it comes. */
static CJ_NOINLINE void say(const cj_dlib *d, cj_dlib_rc rc, const char *why, const char *loaded) {
  cj_dlib_state *s = d->state;
  char looked[1024], todo[512];
  snprintf(todo, sizeof todo, "%s, or set %s to the absolute path of %s (%s)", d->install, d->env,
           d->file, d->without);
  switch (rc) {
    case CJ_DLIB_REFUSED: /* a bare name would be looked for in the working directory */
      snprintf(s->why, sizeof s->why,
               "%s is '%.512s', which is not an absolute path, so it was not loaded; set it to "
               "the full path of %s (%s)",
               d->env, cj_env(d->env), d->file, d->without);
      break;
    case CJ_DLIB_NOT_LOADED:
      looked_for(d, looked, sizeof looked);
      snprintf(s->why, sizeof s->why, "%s (%s) could not be loaded%s%s: %.600s; %.900s. Install %s",
               d->name, d->file, s->file.env ? " from " : "", s->file.env ? d->env : "",
               why[0] ? why : "not found", looked, todo);
      break;
    case CJ_DLIB_NOT_KEYED: /* named when a process first looks, loaded at its first use */
      snprintf(s->why, sizeof s->why,
               "the %s loaded from %.600s is not the file this process named in its cache keys: "
               "%.700s. cujit does not use it; run the program again to use the %s there now",
               d->name, s->file.path, why, d->name);
      break;
    case CJ_DLIB_LACKS:
      snprintf(s->why, sizeof s->why,
               "%s in %.700s lacks %s: it is too old for cujit (%s or newer is needed); install %s",
               d->name, where(d, loaded), why, d->oldest, todo);
      break;
    default: /* CJ_DLIB_UNUSABLE */
      snprintf(s->why, sizeof s->why, "%s in %.700s cannot be used: %.700s; install %s", d->name,
               where(d, loaded), why, todo);
      break;
  }
}

/* When the system's search chose the file: its path (resolved) into path, its directory
 * into the state. */
static void note_loaded(const cj_dlib *d, char *path, size_t size) {
  cj_dlib_state *s = d->state;
  Dl_info info;
  char *slash;
  void *first;
  path[0] = '\0';
  if (s->file.path[0] || s->file.in_process) return;
  memcpy(&first, (const char *)d->table + d->syms[0].at, sizeof first);
  if (!first || !dladdr(first, &info) || !info.dli_fname) return;
  if (!realpath(info.dli_fname, s->dir)) {
    snprintf(path, size, "%s", info.dli_fname);
    s->dir[0] = '\0';
    return;
  }
  snprintf(path, size, "%s", s->dir);
  if ((slash = strrchr(s->dir, '/')) != NULL) *slash = '\0';
}

static void load_step(const cj_dlib *d) {
  cj_dlib_state *s = d->state;
  char why[PATH_MAX + 512], loaded[PATH_MAX];
  void *lib;
  cj_dlib_rc rc = cj_dlib_load(d, &s->file, d->table, &lib, why, sizeof why);
  loaded[0] = '\0';
  if (rc == CJ_DLIB_LOADED) note_loaded(d, loaded, sizeof loaded);
  if (rc == CJ_DLIB_LOADED && d->check && !d->check(why, sizeof why)) {
    say(d, CJ_DLIB_UNUSABLE, why, loaded);
    if (!s->file.in_process) dlclose(lib);
    s->dir[0] = '\0';
    s->status = d->status;
    return;
  }
  if (rc != CJ_DLIB_LOADED) {
    say(d, rc, why, loaded);
    s->status = d->status;
  }
}

cujit_status cj_dlib_open(const cj_dlib *d) {
  reach(d, LOCATED, locate_step);
  reach(d, TRIED, load_step);
  return d->state->status;
}

const char *cj_dlib_why(const cj_dlib *d) {
  return __atomic_load_n(&d->state->stage, __ATOMIC_ACQUIRE) >= TRIED ? d->state->why : "";
}

int cj_dlib_is_open(const cj_dlib *d) {
  return __atomic_load_n(&d->state->stage, __ATOMIC_ACQUIRE) >= TRIED &&
         d->state->status == CUJIT_OK;
}

const char *cj_dlib_dir(const cj_dlib *d) {
  const cj_dlib_file *f = cj_dlib_found(d);
  if (f->dir[0]) return f->dir;
  return cj_dlib_is_open(d) ? d->state->dir : "";
}
