/*
 * The gateway to the miniport (dxgkrnl/ddi.h): the rules it keeps for
 * every DDI call, and its one trace line per call, seen from the
 * recording miniport's log.
 */
#include <stdlib.h>
#include <string.h>

#include "contract_util.h"
#include "dxgkrnl/ddi.h"

static const char *captured;

static void capture_begin(const char *winedebug)
{
    setenv("WINEDEBUG", winedebug, 1);
    kmt_debug_reset();
    kmt_test_capture_begin();
}

static void capture_end(void)
{
    captured = kmt_test_capture_end();
    unsetenv("WINEDEBUG");
    kmt_debug_reset();
}

static void assert_captured(const char *what)
{
    ck_assert_msg(strstr(captured, what), "no \"%s\" in:\n%s", what, captured);
}

START_TEST(no_ddi_reaches_a_device_after_destroy_device)
{
    DXGKARG_CREATECONTEXT cc = { 0 };
    struct dxgk_device *device;
    D3DKMT_HANDLE h;
    unsigned from;

    rec_use("record");
    h = rec_device(NULL, NULL);
    ck_assert_ptr_nonnull(device = dxgk_device_acquire(h));
    device->ddi_destroyed = true;        /* as a core bug would leave it */
    from = record_log_count();
    capture_begin("-all,err+dxgk");
    ck_assert_status(dxgk_ddi_create_context(device, &cc), STATUS_INVALID_DEVICE_STATE);
    ck_assert_status(dxgk_ddi_open_allocations(device, NULL, 0, NULL, 0), STATUS_INVALID_DEVICE_STATE);
    dxgk_ddi_destroy_context(device, (HANDLE)1);
    dxgk_ddi_destroy_device(device);
    capture_end();
    ck_assert_uint_eq(record_log_count(), from);    /* the miniport saw none of them */
    assert_captured("DxgkDdiCreateContext after DxgkDdiDestroyDevice refused");
    assert_captured("DxgkDdiDestroyDevice after DxgkDdiDestroyDevice refused");
    device->ddi_destroyed = false;
    dxgk_device_release(device);
    ck_assert_status(rec_destroy_device(h), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 1);
    rec_finish();
}
END_TEST

START_TEST(no_ddi_reaches_an_adapter_after_remove_device)
{
    struct dxgk_adapter *adapter;
    DXGKARG_ESCAPE esc = { 0 };
    D3DKMT_HANDLE ha;
    unsigned from, value = 0;

    rec_use("record");
    rec_device(&ha, NULL);
    ck_assert_ptr_nonnull(adapter = dxgk_adapter_from_handle(ha));
    adapter->removed = true;
    from = record_log_count();
    capture_begin("-all,err+dxgk");
    ck_assert_status(dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_DRIVERCAPS, NULL, 0, &value,
                                                 sizeof(value)), STATUS_INVALID_DEVICE_STATE);
    ck_assert_status(dxgk_ddi_escape(adapter, &esc), STATUS_INVALID_DEVICE_STATE);
    dxgk_ddi_remove_device(adapter);
    capture_end();
    ck_assert_uint_eq(record_log_count(), from);
    assert_captured("DxgkDdiQueryAdapterInfo after DxgkDdiRemoveDevice refused");
    assert_captured("DxgkDdiRemoveDevice after DxgkDdiRemoveDevice refused");
    adapter->removed = false;
    dxgk_adapter_put(adapter);
    rec_finish();
}
END_TEST

START_TEST(every_ddi_call_traces_one_line)
{
    struct rec_objects o;
    D3DKMT_HANDLE device;
    unsigned from;
    void *data;

    rec_use("record");
    from = record_log_count();
    capture_begin("-all,trace+dxgk");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 2, true, &o);
    ck_assert_status(rec_lock2(device, o.handles[0], &data), STATUS_SUCCESS);
    ck_assert_status(rec_unlock2(device, o.handles[0]), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_resource(device, o.resource), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    capture_end();
    assert_captured("record: DxgkDdiCreateDevice(device 0x");
    assert_captured("record: DxgkDdiCreateAllocation(2 allocations, resource 1, hResource ");
    assert_captured("record: DxgkDdiOpenAllocation(2, Create) -> STATUS_SUCCESS");
    assert_captured("record: DxgkDdiLock(");
    assert_captured("record: DxgkDdiUnlock(");
    assert_captured("record: DxgkDdiCloseAllocation(2) -> STATUS_SUCCESS");
    assert_captured(", DestroyResource 1) -> STATUS_SUCCESS");
    assert_captured("record: DxgkDdiDestroyDevice(");
    /* one line per call: as many as the miniport logged, start-up included */
    ck_assert_uint_gt(record_log_count(), from + 8);
    ck_assert_uint_eq(kmt_test_count_lines(captured, "record: ", ") -> STATUS_"), record_log_count() - from);
    rec_finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ddi_gateway");
    TCase *rules = tcase_create("rules"), *trace = tcase_create("trace");

    tcase_add_test(rules, no_ddi_reaches_a_device_after_destroy_device);
    tcase_add_test(rules, no_ddi_reaches_an_adapter_after_remove_device);
    suite_add_tcase(s, rules);
    tcase_add_test(trace, every_ddi_call_traces_one_line);
    suite_add_tcase(s, trace);
    return kmt_test_run(s);
}
