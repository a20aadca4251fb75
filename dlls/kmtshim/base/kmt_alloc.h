/*
 * Zeroed allocations of small objects created and destroyed in quick
 * succession (a device).  glibc's calloc() bypasses the per-thread cache
 * that malloc() and free() share, so each calloc() goes through the arena
 * and each free() ends there once the cache is full; malloc() and memset()
 * take the block freed last from the cache.
 */
#ifndef KMTSHIM_BASE_KMT_ALLOC_H
#define KMTSHIM_BASE_KMT_ALLOC_H

#include <stdlib.h>
#include <string.h>

static inline void *kmt_zalloc(size_t size)
{
    void *p = malloc(size);

    /* hides where p came from: GCC would fold malloc + memset back into
     * calloc */
    __asm__("" : "+r"(p));
    if (p)
        memset(p, 0, size);
    return p;
}

#endif /* KMTSHIM_BASE_KMT_ALLOC_H */
