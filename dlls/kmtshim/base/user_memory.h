/*
 * Memory a caller hands over by address (existing system memory for an
 * allocation) is probed before the library relies on it, as Windows probes
 * and locks such pages: a range that is not wholly readable is refused with
 * a status instead of crashing the process later.
 *
 * The kernel does the touching (process_vm_readv on our own process fails
 * where a page is unmapped or PROT_NONE, which is how Wine keeps reserved,
 * uncommitted memory), so no signal handler is involved.  Where that call
 * is refused (a seccomp filter), the probe falls back to msync(), which
 * catches unmapped pages only.  Write protection is not probed.
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

#endif /* KMTSHIM_USER_MEMORY_H */
