/*
 * Chaos (tests/unit/chaos.h) over the DRM miniport, end to end on the fake
 * kernel (fake_drm.c): the fake i915 device, with timeline syncobjs, is
 * listed with a render node that opens the fake again, so the miniport
 * discovers, opens and drives it through its ioctls as it would a GPU:
 * GEM objects, GEM contexts, monitored fences as timeline syncobjs with
 * eventfd registrations (QUERY_FENCE arms the watcher).  The engine's
 * streams lie in no allocation's GPU VA: they page-fault the device, as a
 * refused submission does.  One
 * thread now and then arms a failure or a stall of a few milliseconds of
 * one of the miniport's next kernel calls (KMT_DRM_ESCAPE_SET_FAULT); the
 * calls that reach the kernel may then fail with what the miniport makes
 * of ENOMEM or ENOSPC.  At the end the miniport holds nothing and the fake
 * kernel has no object, context or syncobj left.
 */
#include "config.h"

#include <errno.h>

#include "chaos.h"
#include "drm_test.h"
#include "fake_drm.h"

static UINT drm_desc(void *desc)
{
    KMT_DRM_ALLOCATION_DESC d = drm_test_desc(CHAOS_ALLOC_SIZE, 0);

    memcpy(desc, &d, sizeof(d));
    return sizeof(d);
}

static void drm_inject(D3DKMT_HANDLE adapter, unsigned random)
{
    static const int errs[4] = { ENOMEM, ENOSPC, -2, -5 };

    /* one of the next 8 calls, of any name, fails, or stalls for a few ms
     * (which widens a race window and then goes through) */
    drm_test_set_fault(adapter, "any", 1 + random % 8, errs[(random >> 8) % 4]);
}

/* The miniport's own lookups of core handles, racing their destruction. */
static UINT drm_escape(void *data, D3DKMT_HANDLE allocation, D3DKMT_HANDLE syncobj, unsigned random)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_GET_STATS };

    if (random % 3 == 1) {
        e.Code = KMT_DRM_ESCAPE_QUERY_ALLOCATION;
        e.Allocation.hAllocation = allocation;
    } else if (random % 3 == 2) {
        e.Code = KMT_DRM_ESCAPE_QUERY_FENCE;
        e.Fence.hSyncObject = syncobj;
    }
    _Static_assert(sizeof(e) <= CHAOS_ESCAPE_MAX, "fits the engine's buffer");
    memcpy(data, &e, sizeof(e));
    return sizeof(e);
}

static void drm_check_empty(D3DKMT_HANDLE adapter)
{
    KMT_DRM_STATS st;

    drm_test_set_fault(adapter, "", 0, 0);
    drm_test_assert_no_buffers(adapter);
    st = drm_test_stats(adapter);
    ck_assert_uint_eq(st.Devices, 0);
    ck_assert_uint_eq(st.Contexts, 0);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
}

START_TEST(chaos_drm_i915_with_faults)
{
    static const struct chaos_backend drm = {
        .name = "drm (fake i915)",
        .default_ops = 20000,            /* its stalls make each op dearer: ~5 s like the soft case */
        .alloc_desc = drm_desc,
        .inject = drm_inject,
        .escape = drm_escape,
        .fault_status = { STATUS_NO_MEMORY, STATUS_GRAPHICS_NO_VIDEO_MEMORY },
        .share = true,
        .check_empty = drm_check_empty,
    };
    const struct fake_drm_config c = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, NULL };
    char path[64];

    ck_assert_int_ge(fake_drm_open(&c), 0);
    ck_assert_int_eq(fake_drm_device_path(path, sizeof(path)), 0);
    dev.render_node = path;
    fake_drm_set_devices(&dev, 1, "i915");
    kmt_test_use_miniport("drm");
    chaos_run(&drm);
    ck_assert_uint_eq(fake_drm.live_objects, 0);
    ck_assert_uint_eq(fake_drm.live_contexts, 0);
    ck_assert_uint_eq(fake_drm.live_syncobjs, 0);
    fake_drm_set_devices(NULL, 0, NULL);
    fake_drm_close();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("drm_chaos");
    TCase *tc = tcase_create("chaos");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, chaos_drm_i915_with_faults);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
