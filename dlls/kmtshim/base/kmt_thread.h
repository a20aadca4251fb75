/*
 * The library's own threads (the scheduler, the soft engine, the DRM fence
 * watcher, the Miracast watchdog) start with every asynchronous signal
 * blocked.  A process-directed signal (SIGINT, SIGTERM, SIGCHLD, SIGALRM,
 * SIGPROF, a program's SIGUSR1...) then goes to one of the program's threads,
 * whose handlers expect to run there: under Wine, its handlers run only on
 * threads Wine made.  Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
 * SIGSYS) and SIGABRT stay deliverable to the thread that raised them.
 * Each is named "kmt-..." (top, gdb and /proc show it).
 */
#ifndef KMTSHIM_KMT_THREAD_H
#define KMTSHIM_KMT_THREAD_H

#include <pthread.h>

/* pthread_create() with default attributes, the new thread's signals
 * blocked as above and `name` (at most 15 characters) as its name; the
 * caller's mask is unchanged.  Returns 0 or an errno. */
int kmt_thread_create(pthread_t *thread, const char *name, void *(*start)(void *), void *arg);

#endif /* KMTSHIM_KMT_THREAD_H */
