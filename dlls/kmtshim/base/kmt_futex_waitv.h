/*
 * futex_waitv(2) with a deadline in the C library's struct timespec.
 *
 * The system call reads a struct __kernel_timespec, whose two fields are
 * 64-bit on every ABI; a 32-bit program's timespec has 32-bit ones, and
 * passed as is its seconds and nanoseconds would be read as one garbage
 * number (a wait that never times out).  The deadline is absolute,
 * CLOCK_MONOTONIC.  Returns what syscall() returns (-1 and errno).
 */
#ifndef KMTSHIM_KMT_FUTEX_WAITV_H
#define KMTSHIM_KMT_FUTEX_WAITV_H

#include <linux/time_types.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_futex_waitv
# define SYS_futex_waitv 449
#endif

static inline long kmt_futex_waitv(void *waiters, unsigned count, const struct timespec *deadline)
{
    struct __kernel_timespec k;

    if (deadline) {
        k.tv_sec = deadline->tv_sec;
        k.tv_nsec = deadline->tv_nsec;
    }
    return syscall(SYS_futex_waitv, waiters, count, 0, deadline ? &k : NULL, CLOCK_MONOTONIC);
}

#endif /* KMTSHIM_KMT_FUTEX_WAITV_H */
