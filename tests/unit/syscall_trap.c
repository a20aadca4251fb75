/*
 * Trapping a thread's system calls with seccomp (see syscall_trap.h).
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "syscall_trap.h"

#define MAX_TRAPPED 32

static volatile sig_atomic_t trapped;

static void on_sigsys(int sig, siginfo_t *info, void *context)
{
    ucontext_t *uc = context;

    (void)sig;
    (void)info;
    trapped++;
    uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

int kmt_test_trap_syscalls(const int *nrs, unsigned count)
{
    struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
    struct sock_filter code[2 + 2 * MAX_TRAPPED];
    struct sock_fprog prog = { .filter = code };
    unsigned n = 0;

    if (count > MAX_TRAPPED)
        return EINVAL;
    code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (unsigned i = 0; i < count; i++) {
        code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
        code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    }
    code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    prog.len = (unsigned short)n;
    /* for this thread only: no SECCOMP_FILTER_FLAG_TSYNC */
    if (sigaction(SIGSYS, &sa, NULL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
        return errno;
    return 0;
}

unsigned kmt_test_trapped_syscalls(void)
{
    return (unsigned)trapped;
}
#endif
