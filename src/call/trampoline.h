/* trampoline.h - entry points of bound function pointers that read their arguments
 * without libffi (trampoline.c), where the calling convention is known: x86-64 with the
 * System V convention (Linux). Private; not installed. */
#ifndef CUJIT_TRAMPOLINE_H
#define CUJIT_TRAMPOLINE_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__ELF__) && !defined(__ILP32__) && !defined(_WIN32) && \
    defined(__GNUC__)
/* Entry points the library holds (0: none on this system). */
#  define CJ_TRAMP_SLOTS 1024
#else
#  define CJ_TRAMP_SLOTS 0
#endif

/* What an entry point calls: obj->entry(obj, frame), whose int becomes the call's result.
 * `frame` holds the caller's arguments: each where cj_tramp_place() said it would be. */
typedef struct cj_tramp_obj cj_tramp_obj;
struct cj_tramp_obj {
  int (*entry)(cj_tramp_obj *self, char *frame);
};

/* The arguments' classes in the calling convention: an integer or pointer of at most 8
 * bytes, or a float or double. (Nothing else can be placed.) */
typedef enum cj_tramp_class { CJ_TRAMP_INT, CJ_TRAMP_FLOAT } cj_tramp_class;

/* A walk over a C function's parameters, left to right; start it zeroed. */
typedef struct cj_tramp_walk {
  unsigned ints, floats, stack; /* registers and stack slots taken so far */
} cj_tramp_walk;

/* Where in the frame the next parameter, of class c, lies: an offset from the frame's
 * start, at which its value's bytes begin (little-endian: a narrower value is the low
 * bytes of its register or slot). */
uint32_t cj_tramp_place(cj_tramp_walk *w, cj_tramp_class c);

/* A function pointer that calls obj->entry (obj must outlive it, or be retired), or NULL
 * when every entry point has been handed out, or this system has none. Entry points are
 * never handed out twice. Thread-safe. */
void *cj_tramp_take(cj_tramp_obj *obj);
/* Aims `code` (from cj_tramp_take) at `stale` (static) for the life of the process. */
void cj_tramp_retire(void *code, cj_tramp_obj *stale);
/* 1 when `code` is one of the entry points. */
int cj_tramp_owns(const void *code);

#endif
