/* loader.h - the one way a library is loaded at run time: libcuda (driver.c), NVRTC
 * (libnvrtc.c), nvJitLink (libnvjitlink.c), hiredis (libhiredis.c) and libzstd (libzstd.c).
 * Each describes itself in a table (cj_dlib): the variable that names its file, the names it
 * is known by, whether it is found by path and named by its build without being loaded, the
 * entry points it must and may export, and the words its messages use. loader.c finds the
 * file, loads it once, checks that what the loader mapped is the file that was named, fills
 * the library's table of entry points, and says what went wrong and what to do in the same
 * words for every library (cj_dlib_open; libcuda's load goes on to cuInit in driver.c, which
 * words its own). Adding a library is a table and its entry points' struct. */
#ifndef CUJIT_DRIVER_LOADER_H
#define CUJIT_DRIVER_LOADER_H

#include <limits.h>

#include "common/common.h"

/* An entry point of a library: its name and where its pointer goes in the library's
 * table of entry points. */
typedef struct cj_dsym {
  const char *name;
  size_t at;    /* offsetof() of its slot in the table */
  int optional; /* newer releases only: may stay NULL, checked where it is used */
} cj_dsym;

/* What the loader keeps of one library (cj_dlib.state): static storage, zero-initialised,
 * written once by cj_dlib_open() and its siblings and read through them. */
typedef struct cj_dlib_state cj_dlib_state;

/* A library, as its table describes it. */
typedef struct cj_dlib {
  /* how messages name it and what they advise (cj_dlib_open) */
  const char *name;           /* "NVRTC" */
  const char *file;           /* the file a user would name: "libnvrtc.so" */
  const char *install;        /* what to install: "the CUDA toolkit's NVRTC" */
  const char *oldest;         /* the oldest release cujit can use: "NVRTC 12.0" */
  const char *without;        /* what works without it: "a link found in the cache needs no ..." */
  cujit_status status;        /* what a failed load returns */
  const char *env;            /* the variable naming its file: an absolute path */
  int warn_relative;          /* a relative value is also warned about, once: the
                                 compiles that need it fail later than the variable
                                 is read */
  const char *const *sonames; /* the names it is looked for by, newest first */
  size_t n_sonames;
  /* Found by path (the env's file, else each name in each directory of
   * cj_lib_search_dirs(), after `beside`'s), opened once and named by its identity
   * (`keyed_as` and its build ID, else its file name and size) without being loaded,
   * so that a cache key can name it while a cache hit leaves it unmapped; once loaded,
   * checked to be that very file. NULL: loaded by the system's search for its names (or
   * the env's file) only. */
  const char *keyed_as;
  const char *(*beside)(void); /* a directory looked in first (may be NULL) */
  const char *in_process;      /* an entry point that, found in the program already, says
                                  the program has the library: that one is used, named
                                  by the build ID of its image in memory. NULL: never */
  const char *const *versions; /* suffixes of versioned entry points ("13_0": the name
                                  __<name>_13_0), tried when the plain name is missing */
  size_t n_versions;
  const cj_dsym *syms;
  size_t n_syms;
  void *table; /* where the entry points go (cj_dsym.at is an offset into it) */
  /* Once the entry points are read: 1 when the library can be used, else 0 with the reason
   * in why (hiredis: the layout of its replies). NULL: nothing more to check. */
  int (*check)(char *why, size_t why_size);
  cj_dlib_state *state; /* CJ_DLIB_STATE() */
} cj_dlib;

/* A toolkit library (NVRTC, nvJitLink) is found by path and named in cache keys without
 * being loaded; what named it is kept, so that the image a later dlopen of that path maps
 * can be checked to be that very file. */
typedef struct cj_lib_key {
  char build_id[129]; /* hex; "" when the file has none */
  long long size;     /* the file's size, device and inode */
  unsigned long long dev, ino;
} cj_lib_key;

/* What was found of a library, before and after it is loaded: static storage of the
 * library's file, filled once by cj_dlib_locate() (through cj_dlib_found()). */
typedef struct cj_dlib_file {
  const char *identity; /* "" until found by path (or in the program) */
  const char *path;     /* absolute; "" when not found by path */
  const char *dir;      /* the path's directory; "" when not found by path */
  const char *env;      /* the variable's value, when set and absolute; else NULL */
  int env_refused;      /* the variable is set but not an absolute path: nothing loads */
  int env_missing;      /* a keyed library's variable names no file */
  int in_process;       /* the program has the library already (cj_dlib.in_process) */
  cj_lib_key keyed;     /* what named the file at `path` */
  /* the identity, the path and its directory, one after the other, so that a process
   * that names the library (every process that computes a key) touches one page */
  char text[3 * PATH_MAX + 64];
} cj_dlib_file;

/* What the loader keeps of a library, declared beside its table:
 *   CJ_DLIB_STATE(nvrtc_state);  ...  .state = &nvrtc_state, */
struct cj_dlib_state {
  int stage;           /* how far it got (loader.c; atomic) */
  int busy;            /* a thread is taking it to the next stage (under the loader's lock) */
  cujit_status status; /* the load's, once tried */
  cj_dlib_file file;   /* what was found */
  char dir[PATH_MAX];  /* the loaded file's directory, when the system's search found it */
  char why[3072];      /* what went wrong and what to do; "" once loaded */
};
#define CJ_DLIB_STATE(name) static CJ_LARGE cj_dlib_state name

/* ---- one library, once (what the tables' users call) ---- */

/* Finds the library's file, once (cj_dlib_locate), without loading it; what was found. */
const cj_dlib_file *cj_dlib_found(const cj_dlib *d);
/* Loads the library, once: finds it, loads it (cj_dlib_load), fills its table, runs its
 * check. CUJIT_OK, or d->status with the reason in cj_dlib_why(), the same on every call;
 * the thread's error detail is left alone (the caller decides whether it failed). */
cujit_status cj_dlib_open(const cj_dlib *d);
/* Why cj_dlib_open() failed: what went wrong (what was tried, where it was looked for) and
 * what to do, in the same words for every library; "" once loaded or before it was tried.
 * Static storage. */
const char *cj_dlib_why(const cj_dlib *d);
/* 1 once the library is loaded (without loading it). */
int cj_dlib_is_open(const cj_dlib *d);
/* The directory of the library's file: where it was found by path, else, once the system's
 * search loaded it, where that file lies; "" when unknown. */
const char *cj_dlib_dir(const cj_dlib *d);

/* ---- the steps (what cj_dlib_open does, for driver.c's own messages) ---- */

/* Reads the library's variable and, for a keyed library, finds its file: f->identity,
 * path and dir, or the program's own copy. Touches no file for a library loaded by the
 * system's search. Call once (cj_dlib_found() does). */
void cj_dlib_locate(const cj_dlib *d, cj_dlib_file *f);

/* Whether the library named `name` (a soname or an absolute path) is loaded in the process
 * already (by the program or a library it uses), without loading it. */
int cj_dlib_mapped(const char *name);

/* Why cj_dlib_load() failed. */
typedef enum cj_dlib_rc {
  CJ_DLIB_LOADED = 0,
  CJ_DLIB_REFUSED,    /* the variable is not an absolute path: nothing was loaded */
  CJ_DLIB_NOT_LOADED, /* dlopen failed, or the variable names no file; why: dlerror()'s
                         text, or "it is not a file" */
  CJ_DLIB_NOT_KEYED,  /* the file loaded is not the file named; why says how */
  CJ_DLIB_LACKS,      /* a required entry point is missing; why: its name */
  CJ_DLIB_UNUSABLE    /* (cj_dlib_open only) the library's check refused it */
} cj_dlib_rc;

/* Loads the library f found (cj_dlib_locate() first): the program's own copy, the file
 * found by path, the variable's file, else the first of its names the system's search
 * finds; checks that a file found by path is what was loaded; fills `table` from d->syms.
 * On success *lib is the handle (RTLD_DEFAULT for the program's own copy); on failure
 * nothing stays loaded and `why` says what (see cj_dlib_rc). */
cj_dlib_rc cj_dlib_load(const cj_dlib *d, const cj_dlib_file *f, void *table, void **lib, char *why,
                        size_t why_size);

/* ---- what the tables and the toolkit's other files share ---- */

/* The build ID a linker wrote into the ELF file open on `fd` (readelf -n), as hex into
 * out: 1, or 0 when it has none (also for a file that is not 64-bit ELF). */
int cj_elf_build_id(int fd, char *out, size_t out_size);

/* The directories a toolkit library is looked for in, in order: LD_LIBRARY_PATH's, the
 * toolkit cujit was built with, then CUDA_PATH, CUDA_HOME and /usr/local/cuda (lib64,
 * then lib of each). Each is `len` bytes of `dir` followed by `sub`; the strings are the
 * environment's or static. Returns how many were written to v (at most cap). */
typedef struct search_dir {
  const char *dir;
  size_t len;
  const char *sub;
} search_dir;
size_t cj_lib_search_dirs(search_dir *v, size_t cap);

#endif
