/*
 * The fault-tolerant copy (see fault_copy.h) and its one-entry fixup
 * table.  It is written in assembly rather than C because the handler
 * must know exactly which instruction may fault and where to resume: a C
 * loop could be vectorised, split or inlined by the compiler, and a
 * per-thread "in copy" marker with siglongjmp would cost a sigsetjmp and
 * the signal mask per call.  `rep movsb` keeps its progress in the count
 * register at any fault, so resuming after it returns exactly the bytes
 * left.  The direction flag is clear at every call and in every signal
 * handler (both ABIs), so the copy runs forward.
 */
#include "fault_copy.h"

#if defined(__x86_64__)
__asm__(".pushsection .text\n"
        ".globl kmt_fault_copy\n"
        ".hidden kmt_fault_copy\n"
        ".type kmt_fault_copy, @function\n"
        ".p2align 4\n"
        "kmt_fault_copy:\n"
        ".cfi_startproc\n"
#ifdef __CET__
        "endbr64\n"
#endif
        "movq %rdx, %rcx\n"
        ".globl kmt_fault_copy_insn\n"
        ".hidden kmt_fault_copy_insn\n"
        "kmt_fault_copy_insn:\n"
        "rep movsb\n"
        ".globl kmt_fault_copy_resume\n"
        ".hidden kmt_fault_copy_resume\n"
        "kmt_fault_copy_resume:\n"
        "movq %rcx, %rax\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size kmt_fault_copy, .-kmt_fault_copy\n"
        ".popsection\n");
#elif defined(__i386__)
/* cdecl: dst, src, len on the stack above the return address */
__asm__(".pushsection .text\n"
        ".globl kmt_fault_copy\n"
        ".hidden kmt_fault_copy\n"
        ".type kmt_fault_copy, @function\n"
        ".p2align 4\n"
        "kmt_fault_copy:\n"
        ".cfi_startproc\n"
#ifdef __CET__
        "endbr32\n"
#endif
        "pushl %edi\n"
        ".cfi_adjust_cfa_offset 4\n"
        ".cfi_rel_offset %edi, 0\n"
        "pushl %esi\n"
        ".cfi_adjust_cfa_offset 4\n"
        ".cfi_rel_offset %esi, 0\n"
        "movl 12(%esp), %edi\n"
        "movl 16(%esp), %esi\n"
        "movl 20(%esp), %ecx\n"
        ".globl kmt_fault_copy_insn\n"
        ".hidden kmt_fault_copy_insn\n"
        "kmt_fault_copy_insn:\n"
        "rep movsb\n"
        ".globl kmt_fault_copy_resume\n"
        ".hidden kmt_fault_copy_resume\n"
        "kmt_fault_copy_resume:\n"
        "movl %ecx, %eax\n"
        "popl %esi\n"
        ".cfi_adjust_cfa_offset -4\n"
        ".cfi_restore %esi\n"
        "popl %edi\n"
        ".cfi_adjust_cfa_offset -4\n"
        ".cfi_restore %edi\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size kmt_fault_copy, .-kmt_fault_copy\n"
        ".popsection\n");
#endif

#if KMT_HAVE_FAULT_COPY
extern const char kmt_fault_copy_insn[] __attribute__((visibility("hidden")));
extern const char kmt_fault_copy_resume[] __attribute__((visibility("hidden")));

/* The fixup table: the instructions that touch caller memory and where
 * each resumes.  One entry today; a longer copy adds rows. */
static const struct {
    const char *insn, *resume;
} fixups[] = {
    { kmt_fault_copy_insn, kmt_fault_copy_resume },
};

uintptr_t kmt_fault_copy_fixup(uintptr_t pc)
{
    for (size_t i = 0; i < sizeof(fixups) / sizeof(fixups[0]); i++)
        if (pc == (uintptr_t)fixups[i].insn)
            return (uintptr_t)fixups[i].resume;
    return 0;
}
#else
size_t kmt_fault_copy(void *dst, const void *src, size_t len)
{
    (void)dst;
    (void)src;
    return len;                  /* never called: kmt_fault_guard_ready() is false */
}

uintptr_t kmt_fault_copy_fixup(uintptr_t pc)
{
    (void)pc;
    return 0;
}
#endif
