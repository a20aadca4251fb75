/*
 * A copy that may touch memory which is not there, without asking the
 * kernel: the way the Linux kernel's copy_to_user and Windows'
 * ProbeForWrite inside __try work.
 *
 * The copy is one instruction (x86 `rep movsb`) whose address is known.
 * When it faults, the SIGSEGV/SIGBUS handler (fault_guard.h) moves the
 * thread to the instruction after it, where the count of bytes left is
 * the return value: the copy stops short instead of crashing.  Only the
 * guard's handler makes that safe, so callers ask kmt_fault_guard_ready()
 * first.  Other architectures have no such copy (KMT_HAVE_FAULT_COPY 0)
 * and keep the kernel's way.
 */
#ifndef KMTSHIM_FAULT_COPY_H
#define KMTSHIM_FAULT_COPY_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#define KMT_HAVE_FAULT_COPY 1
#else
#define KMT_HAVE_FAULT_COPY 0
#endif

/* Copies len bytes; the number of bytes NOT copied (0: all of them).  A
 * shortfall leaves dst holding a prefix of src. */
size_t kmt_fault_copy(void *dst, const void *src, size_t len);

/* Where a faulting instruction at pc resumes: the fixup of the copy's
 * instruction, or 0 when pc is not in the copy (async-signal-safe). */
uintptr_t kmt_fault_copy_fixup(uintptr_t pc);

#endif /* KMTSHIM_FAULT_COPY_H */
