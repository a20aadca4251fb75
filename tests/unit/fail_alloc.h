/*
 * Out-of-memory injection for the unit tests.  A program linked with
 * $(KMT_FAIL_ALLOC_LDFLAGS) routes every way the library takes memory or a
 * kernel resource (malloc, calloc, realloc, strdup, posix_memalign, mmap,
 * memfd_create, eventfd, pthread_create) through fail_alloc.c.  Armed on
 * one thread, the Nth such call on that thread fails the way the real one
 * does when the system is out of memory; other threads, and every call
 * while disarmed, go straight through.
 */
#ifndef KMTSHIM_FAIL_ALLOC_H
#define KMTSHIM_FAIL_ALLOC_H

#include <stdbool.h>

/* Fails the nth (1-based) allocation this thread makes from now on. */
void fail_alloc_arm(unsigned nth);
/* Stops injecting; true if the armed failure happened. */
bool fail_alloc_disarm(void);
/* While on, every allocation of every other thread (the library's
 * scheduler and engine threads) fails; the count of those failures is
 * kept until the next start. */
void fail_alloc_starve_other_threads(bool on);
unsigned fail_alloc_starved(void);

#endif
