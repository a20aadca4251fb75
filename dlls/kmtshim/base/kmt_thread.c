/*
 * The library's own threads (kmt_thread.h).
 */
#define _GNU_SOURCE
#include <signal.h>

#include "kmt_thread.h"

int kmt_thread_create(pthread_t *thread, const char *name, void *(*start)(void *), void *arg)
{
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };
    sigset_t blocked, old;
    int err;

    sigfillset(&blocked);
    for (unsigned i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
        sigdelset(&blocked, faults[i]);
    /* a new thread inherits its creator's mask: block around the create */
    pthread_sigmask(SIG_BLOCK, &blocked, &old);
    err = pthread_create(thread, NULL, start, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!err)
        pthread_setname_np(*thread, name);   /* a name is only a help: its failure is not the call's */
    return err;
}
