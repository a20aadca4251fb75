/*
 * Memory a caller hands over by address (existing system memory for an
 * allocation) is probed before the library relies on it, as Windows probes
 * and locks such pages: a range that is not wholly readable is refused with
 * a status instead of crashing the process later.
 *
 * Without the fault guard (below) the kernel does the touching
 * (process_vm_readv on our own process fails where a page is unmapped or
 * PROT_NONE, which is how Wine keeps reserved, uncommitted memory), so no
 * signal is involved.  Where that call is refused (a seccomp filter), the
 * probe falls back to msync(), which catches unmapped pages only.
 *
 * Caller memory the library writes (a buffer the contract says the driver
 * answers in) is written the same way: without the guard, through the kernel
 * (process_vm_writev, or a pipe where that call is refused): a read-only,
 * PROT_NONE or unmapped page fails the copy instead of raising SIGSEGV,
 * and the call returns STATUS_ACCESS_VIOLATION, the status Windows' probe
 * for write gives.
 *
 * A range in the calling thread's live stack (live_stack.h) is known to be
 * readable and writable without asking: every function here copies it
 * with memcpy and makes no system call (the common case of a caller's
 * local answer structure).  Any other range, heap included, is copied
 * with the guarded copy (fault_copy.h) where the fault guard is ready for
 * the calling thread (fault_guard.h: natively, on x86, signals not
 * blocked): no system call either, and a page that cannot be touched
 * stops the copy through the SIGSEGV/SIGBUS handler with the same false.
 * Elsewhere (Wine's unix half, other architectures, a thread that blocks
 * those signals, a handler replaced by the program) it takes the kernel's
 * way on every call.  Nothing remembers that a page was writable, since a
 * later munmap or mprotect could make that wrong.
 */
#ifndef KMTSHIM_USER_MEMORY_H
#define KMTSHIM_USER_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/* Whether every byte of [p, p + len) can be read now. */
bool kmt_user_range_readable(const void *p, size_t len);
/* Copies len bytes of caller memory; false if some page could not be read
 * (dst then holds an unspecified prefix). */
bool kmt_user_copy_in(void *dst, const void *src, size_t len);

/* Whether every byte of [p, p + len) can be written now (it is rewritten
 * with its own contents, so a caller writing it meanwhile may lose that
 * write: the buffer is one it lent to the call). */
bool kmt_user_range_writable(void *p, size_t len);
/* Copies len bytes into caller memory; false if some page could not be
 * written (dst then holds an unspecified prefix of src). */
bool kmt_user_copy_out(void *dst, const void *src, size_t len);
/* Writes src back into caller memory at dst only where they differ: a
 * buffer the driver did not change is left alone, so read-only input
 * stays valid input.  False if a changed range could not be written. */
bool kmt_user_write_back(void *dst, const void *src, size_t len);

#endif /* KMTSHIM_USER_MEMORY_H */
