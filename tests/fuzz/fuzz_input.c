/*
 * The fuzzer's raw material: the input read as a byte stream, and the
 * caller memory the calls point into.
 */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"

uint8_t fuzz_u8(struct fuzz_input *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

uint32_t fuzz_u32(struct fuzz_input *in)
{
    uint32_t v = 0;

    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

uint64_t fuzz_u64(struct fuzz_input *in)
{
    return fuzz_u32(in) | (uint64_t)fuzz_u32(in) << 32;
}

bool fuzz_done(const struct fuzz_input *in)
{
    return in->pos >= in->size;
}

void fuzz_bytes(struct fuzz_input *in, void *dst, size_t n)
{
    size_t have = in->size - in->pos < n ? in->size - in->pos : n;

    memcpy(dst, in->data + in->pos, have);
    memset((uint8_t *)dst + have, 0, n - have);
    in->pos += have;
}

/* One mapping for the whole run: memory the library keeps a pointer to
 * (existing system memory of an allocation) stays valid after the input
 * that handed it over, however its objects ended. */
#define ARENA_SIZE (8u << 20)

static uint8_t *arena;
static size_t arena_used;

static bool arena_map(void)
{
    void *p;

    if (arena)
        return true;
    /* the arena, then one PROT_NONE page */
    p = mmap(NULL, ARENA_SIZE + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    mprotect((uint8_t *)p + ARENA_SIZE, 4096, PROT_NONE);
    arena = p;
    return true;
}

void *fuzz_arena_alloc(size_t n)
{
    uint8_t *p;

    if (!arena_map() || n > FUZZ_BLOCK_MAX || ARENA_SIZE - arena_used < n + 64)
        return NULL;
    /* page-aligned blocks for page-sized requests (existing heaps) */
    arena_used = (arena_used + (n >= 4096 ? 4095 : 15)) & ~(size_t)(n >= 4096 ? 4095 : 15);
    if (ARENA_SIZE - arena_used < n)
        return NULL;
    p = arena + arena_used;
    memset(p, 0, n);
    arena_used += n;
    return p;
}

/* Read-only blocks: a mapping of their own, protected block by block. */
#define RO_SIZE (1u << 20)

static uint8_t *ro_area;
static size_t ro_used;

const void *fuzz_read_only_copy(const void *src, size_t n)
{
    size_t pages = (n + 4095) & ~(size_t)4095;
    uint8_t *p;

    if (!ro_area) {
        void *m = mmap(NULL, RO_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        ro_area = m;
    }
    if (!n || n > FUZZ_BLOCK_MAX || RO_SIZE - ro_used < pages)
        return NULL;
    p = ro_area + ro_used;
    memcpy(p, src, n);
    /* the block ends at its page's end, so a write past it faults too */
    if (mprotect(p, pages, PROT_READ))
        return NULL;
    ro_used += pages;
    return p;
}

void fuzz_arena_reset(void)
{
    arena_used = 0;
    if (ro_used)
        mprotect(ro_area, ro_used, PROT_READ | PROT_WRITE);
    ro_used = 0;
}

void *fuzz_unreadable_page(void)
{
    return arena_map() ? arena + ARENA_SIZE : NULL;
}

bool fuzz_in_arena(const void *p)
{
    return arena && (const uint8_t *)p >= arena && (const uint8_t *)p < arena + ARENA_SIZE;
}
