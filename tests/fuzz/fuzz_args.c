/*
 * How a step draws an argument from the input: pointers (NULL, garbage, or
 * a block of caller memory as large as the size that goes with it), sizes
 * and counts (0, natural, small, absurd), events and fence values.
 *
 * A valid pointer always covers the size it is passed with: the library
 * does not probe descriptor memory (only existing system memory, which the
 * allocation steps also point at an unreadable page), so a shorter block
 * would be the harness's overrun, not the library's.
 */
#include "config.h"

#include <limits.h>

#include "fuzz.h"

void *fuzz_ptr(struct fuzz_prog *p, size_t size, bool fill)
{
    static const uintptr_t garbage[] = {
        1, 0x1000, 0xffff, 0xdeadbeefdeadbeefull, 0x800000000000ull, UINTPTR_MAX - 7,
    };
    uint8_t how = fuzz_u8(&p->in);
    void *block;

    if (how % 16 == 0)
        return NULL;
    if (how % 16 == 1)
        return (void *)garbage[fuzz_u8(&p->in) % (sizeof(garbage) / sizeof(garbage[0]))];
    if (!(block = fuzz_arena_alloc(size ? size : 1)))
        return NULL;
    if (fill)
        fuzz_bytes(&p->in, block, size < 256 ? size : 256);
    return block;
}

UINT fuzz_size(struct fuzz_prog *p, UINT natural)
{
    switch (fuzz_u8(&p->in) % 8) {
    case 0: return 0;
    case 1: return 1 + fuzz_u8(&p->in) % 32;               /* too short */
    case 2: return natural + 1 + fuzz_u8(&p->in) % 64;
    case 3: return fuzz_u32(&p->in) % (FUZZ_BLOCK_MAX + 1);
    case 4: return fuzz_u8(&p->in) & 1 ? UINT_MAX : 0x80000000u;   /* absurd */
    default: return natural;
    }
}

UINT fuzz_count(struct fuzz_prog *p, UINT max)
{
    switch (fuzz_u8(&p->in) % 8) {
    case 0: return 0;
    case 1: return fuzz_u8(&p->in) & 1 ? UINT_MAX : max + 1;
    case 2: return max;
    default: return 1 + fuzz_u8(&p->in) % (max < 4 ? max : 4);
    }
}

HANDLE fuzz_event(struct fuzz_prog *p)
{
    switch (fuzz_u8(&p->in) % 4) {
    case 0: return NULL;
    case 1: return (HANDLE)(intptr_t)(fuzz_u8(&p->in) & 1 ? -1 : 1000000);   /* no such fd */
    default: return (HANDLE)(intptr_t)fuzz_eventfds[fuzz_u8(&p->in) & 1];
    }
}

UINT64 fuzz_fence_value(struct fuzz_prog *p)
{
    switch (fuzz_u8(&p->in) % 4) {
    case 0: return fuzz_u64(&p->in);
    case 1: return UINT64_MAX - (fuzz_u8(&p->in) & 1);
    default: return fuzz_u8(&p->in);
    }
}
