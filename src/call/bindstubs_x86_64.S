/* bindstubs_x86_64.S - entry points for bound kernels on x86-64 (System V calling
 * convention), for signatures of scalars and pointers only (bind.c decides).
 *
 * A bound function pointer must carry which binding it calls. libffi's closures do that
 * with a trampoline, then classify every argument of every call (about 10 ns each), which
 * alone costs more than the 0.1 us a bound call may add to a launch. Here, instead, the
 * library's own code holds CJ_BIND_STUBS small entry points, 16 bytes apart; entry k puts
 * k in %r11d and jumps to a common routine that stores the argument registers beside the
 * caller's stack arguments and calls
 *     int cj_bind_dispatch(unsigned k, unsigned char *frame)
 * which knows, from the signature, where each argument lies in `frame`:
 *     frame + 0   .. 47    %rdi %rsi %rdx %rcx %r8 %r9
 *     frame + 48  .. 175   %xmm0 .. %xmm7, 16 bytes each
 *     frame + 192 + 8j     the j-th eightbyte the caller passed on the stack
 * No memory is made executable at run time: the entry points are ordinary code.
 *
 * The entry points are reached by indirect calls, so each begins with endbr64 (a no-op
 * where indirect branch tracking is off), and the file declares itself compatible with
 * IBT and shadow stacks (its calls and returns pair up): the linker keeps the library's
 * marking when the C code is built with -fcf-protection, whatever flags reach this file. */

#define CJ_BIND_STUBS 1024

	.text
	.p2align 4
	.globl	cj_bind_stubs
	.hidden	cj_bind_stubs
	.type	cj_bind_stubs, @function
cj_bind_stubs:
	.set	cj_stub_index, 0
	.rept	CJ_BIND_STUBS
	.p2align 4
	endbr64
	movl	$cj_stub_index, %r11d
	jmp	cj_bind_common
	.set	cj_stub_index, cj_stub_index + 1
	.endr
	.p2align 4
	.size	cj_bind_stubs, . - cj_bind_stubs
	/* bind.c computes entry k's address as cj_bind_stubs + 16 k, and uses the entry points
	 * only when the table ends where that expects (no entry point outgrew 16 bytes) */
	.globl	cj_bind_stubs_end
	.hidden	cj_bind_stubs_end
cj_bind_stubs_end:

	.p2align 4
	.type	cj_bind_common, @function
cj_bind_common:
	.cfi_startproc
	subq	$184, %rsp		/* entered with %rsp = 8 mod 16: now 16-aligned */
	.cfi_adjust_cfa_offset 184
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
	movaps	%xmm0, 48(%rsp)
	movaps	%xmm1, 64(%rsp)
	movaps	%xmm2, 80(%rsp)
	movaps	%xmm3, 96(%rsp)
	movaps	%xmm4, 112(%rsp)
	movaps	%xmm5, 128(%rsp)
	movaps	%xmm6, 144(%rsp)
	movaps	%xmm7, 160(%rsp)
	movl	%r11d, %edi
	movq	%rsp, %rsi
	call	cj_bind_dispatch@PLT
	addq	$184, %rsp
	.cfi_adjust_cfa_offset -184
	ret
	.cfi_endproc
	.size	cj_bind_common, . - cj_bind_common

	.section .note.GNU-stack, "", @progbits

	/* GNU property note: x86 features IBT and SHSTK (GNU_PROPERTY_X86_FEATURE_1_AND) */
	.section .note.gnu.property, "a"
	.p2align 3
	.long	4		/* name size */
	.long	16		/* descriptor size */
	.long	5		/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	0xc0000002	/* GNU_PROPERTY_X86_FEATURE_1_AND */
	.long	4
	.long	3		/* IBT | SHSTK */
	.p2align 3
