/*
 * Counting the system calls one thread makes, for tests that a path makes
 * none (x86_64 only): a seccomp filter on the calling thread alone traps
 * the listed calls; the SIGSYS handler counts each and makes it fail with
 * ENOSYS, so the code under test sees a filtered call, not a crash.
 */
#ifndef KMTSHIM_TEST_SYSCALL_TRAP_H
#define KMTSHIM_TEST_SYSCALL_TRAP_H

/* Installs the SIGSYS handler and the calling thread's filter for the
 * count system call numbers in nrs; 0, or the errno of the refusal. */
int kmt_test_trap_syscalls(const int *nrs, unsigned count);
/* How many trapped calls the process made so far. */
unsigned kmt_test_trapped_syscalls(void);

#endif
