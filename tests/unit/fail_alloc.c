/*
 * Out-of-memory injection (see fail_alloc.h).  The linker's --wrap turns
 * each call of `f` in the program, libkmtcore included, into __wrap_f, and
 * __real_f is the C library's.  Each kind fails with what the C library
 * returns when out of memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fail_alloc.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
int __real_posix_memalign(void **p, size_t alignment, size_t size);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
int __real_memfd_create(const char *name, unsigned flags);
int __real_eventfd(unsigned initval, int flags);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
int __wrap_posix_memalign(void **p, size_t alignment, size_t size);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
int __wrap_memfd_create(const char *name, unsigned flags);
int __wrap_eventfd(unsigned initval, int flags);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

static _Thread_local unsigned fail_at, seen;
static _Thread_local bool starver;              /* the thread that starved the others */
static atomic_bool starving;
static atomic_uint starved;

void fail_alloc_starve_other_threads(bool on)
{
    starver = on;
    if (on)
        atomic_store(&starved, 0);
    atomic_store(&starving, on);
}

unsigned fail_alloc_starved(void)
{
    return atomic_load(&starved);
}

void fail_alloc_arm(unsigned nth)
{
    fail_at = nth;
    seen = 0;
}

bool fail_alloc_disarm(void)
{
    bool hit = fail_at && seen >= fail_at;

    fail_at = 0;
    return hit;
}

/* Counts the call; true when it is the one to fail. */
static bool fails(void)
{
    if (atomic_load_explicit(&starving, memory_order_relaxed) && !starver) {
        atomic_fetch_add(&starved, 1);
        return true;
    }
    return fail_at && ++seen == fail_at;
}

void *__wrap_malloc(size_t size)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strdup(s);
}

int __wrap_posix_memalign(void **p, size_t alignment, size_t size)
{
    return fails() ? ENOMEM : __real_posix_memalign(p, alignment, size);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    if (fails()) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return __real_mmap(addr, len, prot, flags, fd, offset);
}

int __wrap_memfd_create(const char *name, unsigned flags)
{
    if (fails()) {
        errno = EMFILE;
        return -1;
    }
    return __real_memfd_create(name, flags);
}

int __wrap_eventfd(unsigned initval, int flags)
{
    if (fails()) {
        errno = EMFILE;
        return -1;
    }
    return __real_eventfd(initval, flags);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    return fails() ? EAGAIN : __real_pthread_create(t, attr, fn, arg);
}
