/*
 * Fuzz target: the software miniport.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kmtshim/kmtsoft.h"
#include "fuzz.h"

static void setup(void)
{
    setenv("KMTSHIM_MINIPORT", "soft", 1);
}

static UINT alloc_desc(void *dst, size_t room, UINT64 size, UINT flags)
{
    KMT_SOFT_ALLOCATION_DESC d = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, size, flags, 0 };

    if (room < sizeof(d))
        return 0;
    memcpy(dst, &d, sizeof(d));
    return sizeof(d);
}

const struct fuzz_target fuzz_target = {
    .name = "soft",
    .setup = setup,
    .alloc_desc = alloc_desc,
};
