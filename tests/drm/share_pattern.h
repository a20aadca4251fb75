/*
 * The pattern the two processes of test_drm_share_lane write and check:
 * every dword different, and a different one per seed.
 */
#ifndef KMTSHIM_SHARE_PATTERN_H
#define KMTSHIM_SHARE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline void share_pattern_fill(void *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size / 4; i++)
        ((uint32_t *)p)[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

static inline bool share_pattern_holds(const void *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size / 4; i++)
        if (((const uint32_t *)p)[i] != ((uint32_t)(i * 2654435761u) ^ seed))
            return false;
    return true;
}

#endif
