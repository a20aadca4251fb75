/*
 * End-to-end smoke test of the native API on the software adapter: the
 * lifecycle every other suite takes apart in detail.
 */
#include "test_util.h"

START_TEST(lifecycle_on_soft_adapter)
{
    D3DKMT_HANDLE adapter, device, allocs[2], resource;
    KMT_SOFT_ESCAPE stats;
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    D3DKMT_DESTROYALLOCATION da = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(kmt_test_create_allocations(device, 2, 8192, allocs, &resource), STATUS_SUCCESS);
    ck_assert_uint_eq(allocs[0], resource + 0x40);
    ck_assert_uint_eq(allocs[1], resource + 0x80);

    stats = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(stats.Stats.Allocations, 2);
    ck_assert_uint_eq(stats.Stats.BytesAllocated, 16384);

    lock.hDevice = device;
    lock.hAllocation = allocs[1];
    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(lock.pData);
    memset(lock.pData, 0xab, 8192);
    unlock.hDevice = device;
    unlock.hAllocation = allocs[1];
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);

    /* the memory is real: a fresh mapping reads back what was written */
    ck_assert_status(D3DKMTLock2(&lock), STATUS_SUCCESS);
    ck_assert_uint_eq(((unsigned char *)lock.pData)[8191], 0xab);
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);

    da.hDevice = device;
    da.hResource = resource;
    ck_assert_status(D3DKMTDestroyAllocation(&da), STATUS_SUCCESS);
    stats = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(stats.Stats.Allocations, 0);
    ck_assert_uint_eq(stats.Stats.BytesAllocated, 0);

    dd.hDevice = device;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("smoke");
    TCase *tc = tcase_create("lifecycle");

    tcase_add_test(tc, lifecycle_on_soft_adapter);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
