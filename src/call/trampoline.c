/* trampoline.c - entry points for bound function pointers that read their arguments with
 * no work per argument, where the calling convention is known (trampoline.h says where).
 *
 * libffi's closures classify every argument at every call (some 110 instructions each on
 * x86-64, more than the rest of a bound call). Here the classification is done once, when
 * a kernel is bound (cj_tramp_place), and a call only stores the argument registers:
 *
 *  - the library's own text holds CJ_TRAMP_SLOTS entry points of 16 bytes each (no code
 *    is written at run time, so nothing needs memory that is writable and executable);
 *    entry point k loads slot k's object into r10, a register no argument uses, and jumps
 *    to cj_tramp_enter;
 *  - cj_tramp_enter stores the six integer argument registers and the low eight bytes of
 *    the eight vector ones below the return address, so that with the caller's stack
 *    arguments above it they form one frame, and calls obj->entry(obj, frame), whose int
 *    is returned as it is.
 *
 * The frame on x86-64 (System V): integer register k (rdi rsi rdx rcx r8 r9) at 8k, vector
 * register k (xmm0-7) at 48 + 8k, the k-th eight bytes of stack arguments at 128 + 8k. */
#include "call/trampoline.h"

#include "common/common.h"

#if CJ_TRAMP_SLOTS

enum { INT_REGS = 6, FLOAT_REGS = 8, FLOAT_AT = 48, STACK_AT = 128, SLOT_BYTES = 16 };

/* Slot k's object, read by entry point k at every call. */
CJ_HIDDEN __attribute__((used)) cj_tramp_obj *cj_tramp_objs[CJ_TRAMP_SLOTS];
extern const char cj_tramp_code[] CJ_HIDDEN; /* the first entry point */
extern const char cj_tramp_end[] CJ_HIDDEN;  /* past the last */
static unsigned next_slot;

/* The entry points are 4 + 7 + 5 bytes (endbr64, the load, the jump), aligned to 16; a
 * jump the assembler makes shorter is padded to the same size. cj_tramp_take checks it. */
_Static_assert(CJ_TRAMP_SLOTS == 1024, "the .rept below makes 1024 entry points");
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".type cj_tramp_enter, @function\n"
        "cj_tramp_enter:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  subq $112, %rsp\n"
        "  movq %rdi, 0(%rsp)\n"
        "  movq %rsi, 8(%rsp)\n"
        "  movq %rdx, 16(%rsp)\n"
        "  movq %rcx, 24(%rsp)\n"
        "  movq %r8, 32(%rsp)\n"
        "  movq %r9, 40(%rsp)\n"
        "  movsd %xmm0, 48(%rsp)\n"
        "  movsd %xmm1, 56(%rsp)\n"
        "  movsd %xmm2, 64(%rsp)\n"
        "  movsd %xmm3, 72(%rsp)\n"
        "  movsd %xmm4, 80(%rsp)\n"
        "  movsd %xmm5, 88(%rsp)\n"
        "  movsd %xmm6, 96(%rsp)\n"
        "  movsd %xmm7, 104(%rsp)\n"
        "  movq %r10, %rdi\n"
        "  movq %rsp, %rsi\n"
        "  call *(%r10)\n"
        "  leave\n"
        ".cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size cj_tramp_enter, .-cj_tramp_enter\n"
        ".p2align 4\n"
        ".globl cj_tramp_code\n"
        ".hidden cj_tramp_code\n"
        ".type cj_tramp_code, @function\n"
        "cj_tramp_code:\n"
        ".cfi_startproc\n" /* no frame: the return address is at the stack pointer */
        ".set .Lcj_tramp_k, 0\n"
        ".rept 1024\n"
        "  .byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64: called indirectly */
        "  movq cj_tramp_objs + 8 * .Lcj_tramp_k(%rip), %r10\n"
        "  jmp cj_tramp_enter\n"
        "  .p2align 4, 0xcc\n"
        "  .set .Lcj_tramp_k, .Lcj_tramp_k + 1\n"
        ".endr\n"
        ".cfi_endproc\n"
        ".globl cj_tramp_end\n"
        ".hidden cj_tramp_end\n"
        "cj_tramp_end:\n"
        ".size cj_tramp_code, .-cj_tramp_code\n"
        ".popsection\n");

uint32_t cj_tramp_place(cj_tramp_walk *w, cj_tramp_class c) {
  if (c == CJ_TRAMP_INT && w->ints < INT_REGS) return 8 * w->ints++;
  if (c == CJ_TRAMP_FLOAT && w->floats < FLOAT_REGS) return FLOAT_AT + 8 * w->floats++;
  return STACK_AT + 8 * w->stack++; /* beyond the registers: eight bytes each, in order */
}

void *cj_tramp_take(cj_tramp_obj *obj) {
  unsigned k;
  if (cj_tramp_end - cj_tramp_code != (long)CJ_TRAMP_SLOTS * SLOT_BYTES) return NULL;
  k = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
  if (k >= CJ_TRAMP_SLOTS) { /* all taken: keep the count from wrapping */
    __atomic_store_n(&next_slot, CJ_TRAMP_SLOTS, __ATOMIC_RELAXED);
    return NULL;
  }
  __atomic_store_n(&cj_tramp_objs[k], obj, __ATOMIC_RELEASE);
  return (void *)(cj_tramp_code + (size_t)k * SLOT_BYTES);
}

int cj_tramp_owns(const void *code) {
  const char *p = code;
  return p >= cj_tramp_code && p < cj_tramp_end && (p - cj_tramp_code) % SLOT_BYTES == 0;
}

void cj_tramp_retire(void *code, cj_tramp_obj *stale) {
  if (!cj_tramp_owns(code)) return;
  __atomic_store_n(&cj_tramp_objs[((const char *)code - cj_tramp_code) / SLOT_BYTES], stale,
                   __ATOMIC_RELEASE);
}

#else /* no entry points here: bind.c uses libffi's closures */

uint32_t cj_tramp_place(cj_tramp_walk *w, cj_tramp_class c) {
  (void)w, (void)c;
  return 0;
}
void *cj_tramp_take(cj_tramp_obj *obj) {
  (void)obj;
  return NULL;
}
void cj_tramp_retire(void *code, cj_tramp_obj *stale) { (void)code, (void)stale; }
int cj_tramp_owns(const void *code) {
  (void)code;
  return 0;
}

#endif
