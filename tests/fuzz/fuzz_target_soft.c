/*
 * Fuzz target: the software miniport.  A step may make the Nth allocation
 * the library makes from then on fail (tests/unit/fail_alloc.c: heap,
 * mappings, memfds, eventfds, threads), as test_out_of_memory does call
 * by call: here in the middle of any sequence; or every allocation of the
 * library's own threads, until the program ends.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kmtshim/kmtsoft.h"
#include "fuzz.h"
#include "fail_alloc.h"

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

static void arm_fault(D3DKMT_HANDLE adapter, struct fuzz_input *in)
{
    uint8_t how = fuzz_u8(in);

    /* now and then the library's own threads (scheduler, engine) instead:
     * work that was accepted must not fail for memory later */
    if (how % 4 == 0)
        fail_alloc_starve_other_threads(true);
    else
        fail_alloc_arm(1 + how % 24);
}

static void disarm(void)
{
    fail_alloc_starve_other_threads(false);
    fail_alloc_disarm();
}

static void counts(D3DKMT_HANDLE adapter, struct fuzz_counts *c)
{
    KMT_SOFT_ESCAPE e = { .Code = KMT_SOFT_ESCAPE_GET_STATS };
    D3DKMT_ESCAPE d = { .hAdapter = adapter, .Type = D3DKMT_ESCAPE_DRIVERPRIVATE,
                        .pPrivateDriverData = &e, .PrivateDriverDataSize = sizeof(e) };

    if (D3DKMTEscape(&d))
        return;
    fuzz_count_add(c, "soft devices", e.Stats.Devices);
    fuzz_count_add(c, "soft allocations", e.Stats.Allocations);
    fuzz_count_add(c, "soft resources", e.Stats.Resources);
    fuzz_count_add(c, "soft bytes", e.Stats.BytesAllocated);
    fuzz_count_add(c, "soft bindings", e.Stats.OpenBindings);
    fuzz_count_add(c, "soft contexts", e.Stats.Contexts);
}

const struct fuzz_target fuzz_target = {
    .name = "soft",
    .setup = setup,
    .arm_fault = arm_fault,
    .disarm = disarm,
    .counts = counts,
    .alloc_desc = alloc_desc,
};
