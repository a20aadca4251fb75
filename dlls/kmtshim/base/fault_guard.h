/*
 * The SIGSEGV/SIGBUS handler that makes kmt_fault_copy safe
 * (fault_copy.h), and whether the calling thread may rely on it.
 *
 * Installed once, lazily (the first caller-memory copy that is not on the
 * live stack), so a program that installs its own handlers at start-up,
 * before its first D3DKMT call, is chained to rather than replaced.  A
 * fault whose PC is the copy's instruction resumes at its fixup; any
 * other fault goes to the handler that was there before, as the kernel
 * would have called it (its mask, SA_RESETHAND; SIG_DFL and, for a real
 * fault, SIG_IGN: the default action, with the fault re-raised).
 *
 * The copy is used only where a fault is sure to reach the handler, since
 * a fault the kernel cannot deliver kills the process where the kernel's
 * way would have returned an error:
 * - natively, not in Wine's unix half (kmt_fault_guard_forbid): there
 *   Wine's own handler must see every fault first;
 * - by a thread that had neither signal blocked and found the handler
 *   still installed at its first check (one pthread_sigmask and two
 *   sigaction calls per thread, then none).  A handler found replaced
 *   turns the copy off for the whole process;
 * - not inside a previous handler the guard forwarded to with one of the
 *   signals blocked (its sa_mask, or no SA_NODEFER).
 * A thread that blocks SIGSEGV or SIGBUS after its check (pthread_sigmask,
 * or another signal's handler whose sa_mask has them), or a program that
 * replaces the handler without chaining after some thread checked, is not
 * seen: a fault the kernel cannot deliver kills, and knowing would take a
 * system call per copy.
 *
 * Under ASan and TSan their handlers are the previous ones and get every
 * fault that is not the copy's.
 */
#ifndef KMTSHIM_FAULT_GUARD_H
#define KMTSHIM_FAULT_GUARD_H

#include <stdbool.h>

/* Whether the calling thread may use kmt_fault_copy now (installs the
 * handler on first use; false where it cannot be relied on). */
bool kmt_fault_guard_ready(void);
/* Never install the handler in this process (Wine's unix half); a handler
 * already installed stays but is no longer relied on. */
void kmt_fault_guard_forbid(void);

#endif /* KMTSHIM_FAULT_GUARD_H */
