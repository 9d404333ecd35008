/* handle.c - tables of handles that never alias (see common.h). Freed slots are reused
 * last-freed first, so that the table stays as small as the most objects ever alive at
 * once; each reuse changes the slot's generation, which is what makes the old handles
 * fail. */
#include "common/common.h"

#define MAX_SLOTS ((size_t)1 << CJ_HANDLE_SLOT_BITS)

static uintptr_t handle_of(const cj_handles *t, size_t slot) {
  return t->tag | (uintptr_t)t->slots[slot].gen << CJ_HANDLE_SLOT_BITS | (uintptr_t)slot;
}

uintptr_t cj_handle_add(cj_handles *t, void *obj) {
  size_t slot;
  if (t->free_top) {
    slot = t->free_top - 1;
    t->free_top = t->slots[slot].next;
  } else {
    if (t->n == MAX_SLOTS || CJ_VEC_RESERVE(t->slots, t->cap, t->n + 1) != 0) return 0;
    slot = t->n++;
    t->slots[slot].gen = 0;
  }
  t->slots[slot].obj = obj;
  t->slots[slot].next = 0;
  return handle_of(t, slot);
}

void *cj_handle_remove(cj_handles *t, uintptr_t h) {
  size_t slot = h & (MAX_SLOTS - 1);
  void *obj = cj_handle_get(t, h);
  if (!obj) return NULL;
  t->slots[slot].obj = NULL;
  /* a slot whose generations are spent is retired: its handles are never made again */
  if (++t->slots[slot].gen == 0) return obj;
  t->slots[slot].next = t->free_top;
  t->free_top = (uint32_t)(slot + 1);
  return obj;
}
