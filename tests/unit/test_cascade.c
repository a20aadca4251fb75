/*
 * D3DKMTDestroyDevice's cascade and the process teardown: dxgkrnl's order
 * (standalone allocations, then resources, then DxgkDdiDestroyDevice),
 * bindings closed before anything is destroyed, every handle of the device
 * dead afterwards, the adapter untouched, nothing leaked.
 */
#include "contract_util.h"
#include "dxgkrnl/dxgkrnl.h"       /* GPU references: the submission path's hooks */

static struct dxgk_allocation *gpu_ref(D3DKMT_HANDLE hdevice, D3DKMT_HANDLE h)
{
    struct dxgk_device *device = dxgk_device_acquire(hdevice);
    struct dxgk_allocation *alloc;

    ck_assert_ptr_nonnull(device);
    alloc = dxgk_allocation_lookup(device, h);
    ck_assert_ptr_nonnull(alloc);
    dxgk_allocation_gpu_ref(alloc);
    dxgk_allocation_put(alloc);
    dxgk_device_release(device);
    return alloc;
}

struct device_destroyer {
    D3DKMT_HANDLE device;
    NTSTATUS status;
};

static void destroy_device_thread(void *arg)
{
    struct device_destroyer *d = arg;

    d->status = rec_destroy_device(d->device);
}

/* Index of the last / first DestroyAllocation at or after `from` naming `h`. */
static unsigned destroy_of(HANDLE h, unsigned from)
{
    unsigned i = rec_find_with(RECORD_DESTROY_ALLOCATION, h, from);

    ck_assert_msg(i != RECORD_NONE, "allocation %p never destroyed", h);
    return i;
}

/* ---- order ----------------------------------------------------------------------- */

START_TEST(cascade_order)
{
    struct rec_objects s1, s2, r1, r2;
    D3DKMT_HANDLE device;
    HANDLE drv_device;
    unsigned from, dd, last_standalone = 0, first_resource = RECORD_NONE;

    rec_use("record");
    device = rec_device(NULL, &drv_device);
    rec_create_ok(device, 2, true, &r1);        /* created before the standalone ones */
    rec_create_ok(device, 2, false, &s1);
    rec_create_ok(device, 3, true, &r2);
    rec_create_ok(device, 1, false, &s2);
    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);

    for (unsigned i = 0; i < 2; i++)
        if (destroy_of(s1.driver[i], from) > last_standalone)
            last_standalone = destroy_of(s1.driver[i], from);
    if (destroy_of(s2.driver[0], from) > last_standalone)
        last_standalone = destroy_of(s2.driver[0], from);
    for (unsigned i = 0; i < 2; i++)
        if (destroy_of(r1.driver[i], from) < first_resource)
            first_resource = destroy_of(r1.driver[i], from);
    for (unsigned i = 0; i < 3; i++)
        if (destroy_of(r2.driver[i], from) < first_resource)
            first_resource = destroy_of(r2.driver[i], from);
    dd = record_log_find(RECORD_DESTROY_DEVICE, from);
    ck_assert_uint_lt(last_standalone, first_resource);
    ck_assert_uint_lt(first_resource, dd);
    ck_assert_ptr_eq(rec_entry(dd)->device, drv_device);
    ck_assert_uint_eq(record_log_count(), dd + 1);

    /* standalone: no hResource; each resource: one call, DestroyResource */
    ck_assert_ptr_null(rec_entry(destroy_of(s1.driver[0], from))->resource_in);
    ck_assert_ptr_eq(rec_entry(destroy_of(r1.driver[0], from))->resource_in, r1.driver_resource);
    ck_assert_uint_eq(rec_entry(destroy_of(r1.driver[0], from))->flags, 1);
    ck_assert_uint_eq(rec_entry(destroy_of(r2.driver[0], from))->num, 3);
    ck_assert_ptr_eq(rec_entry(destroy_of(r2.driver[2], from))->resource_in, r2.driver_resource);
    rec_assert_close_before_destroy();
    rec_finish();
}
END_TEST

START_TEST(every_binding_closed_first)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE device;
    HANDLE drv_device;
    unsigned from, dd;

    rec_use("record");
    device = rec_device(NULL, &drv_device);
    rec_create_ok(device, 4, false, &s);
    rec_create_ok(device, 4, true, &r);
    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    dd = record_log_find(RECORD_DESTROY_DEVICE, from);
    for (unsigned i = 0; i < 4; i++) {
        unsigned cs = rec_find_with(RECORD_CLOSE_ALLOCATION, s.binding[i], from);
        unsigned cr = rec_find_with(RECORD_CLOSE_ALLOCATION, r.binding[i], from);

        ck_assert_uint_lt(cs, destroy_of(s.driver[i], from));
        ck_assert_uint_lt(cr, destroy_of(r.driver[i], from));
        ck_assert_ptr_eq(rec_entry(cs)->device, drv_device);
        ck_assert_uint_lt(cr, dd);
    }
    ck_assert_uint_eq(record_live_objects().bindings, 0);
    rec_finish();
}
END_TEST

START_TEST(partially_destroyed_resource_in_cascade)
{
    struct rec_objects r;
    const struct record_call *call;
    D3DKMT_HANDLE device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 3, true, &r);
    ck_assert_status(rec_destroy_list(device, &r.handles[1], 1), STATUS_SUCCESS);
    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    call = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(call->num, 2);
    ck_assert(rec_call_lists(call, r.driver[0]));
    ck_assert(rec_call_lists(call, r.driver[2]));
    ck_assert_uint_eq(call->flags, 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 2);
    rec_finish();
}
END_TEST

START_TEST(emptied_resource_in_cascade)
{
    struct rec_objects r;
    const struct record_call *call;
    D3DKMT_HANDLE device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 2, true, &r);
    ck_assert_status(rec_destroy_list(device, r.handles, 2), STATUS_SUCCESS);
    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    call = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(call->num, 0);
    ck_assert_ptr_eq(call->resource_in, r.driver_resource);
    ck_assert_uint_eq(call->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(shared_resource_in_cascade)
{
    struct rec_objects r;
    D3DKMT_HANDLE device;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_shared(device, 2, &r);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    ck_assert_uint_eq(rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0))->num, 2);
    rec_finish();
}
END_TEST

START_TEST(locked_allocations_unmapped_first)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE device;
    void *data;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, false, &s);
    rec_create_ok(device, 2, true, &r);
    ck_assert_status(rec_lock2(device, s.handles[0], &data), STATUS_SUCCESS);
    ck_assert_status(rec_lock2(device, r.handles[1], &data), STATUS_SUCCESS);
    ck_assert_status(rec_lock2(device, r.handles[1], &data), STATUS_SUCCESS);
    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    ck_assert_uint_lt(rec_find_with(RECORD_UNLOCK, s.driver[0], from), destroy_of(s.driver[0], from));
    ck_assert_uint_lt(rec_find_with(RECORD_UNLOCK, r.driver[1], from), destroy_of(r.driver[1], from));
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOCK), 2);
    ck_assert_uint_eq(record_live_objects().mappings, 0);
    rec_finish();
}
END_TEST

/* ---- afterwards -------------------------------------------------------------------- */

START_TEST(every_handle_dead_afterwards)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE adapter, device, other;
    D3DKMT_LOCK lock = { 0 };
    D3DKMT_UNLOCK unlock = { 0 };
    D3DKMT_ESCAPE esc = { 0 };
    RECORD_ESCAPE_DATA e = { 0 };
    void *data;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    other = rec_device(NULL, NULL);
    rec_create_ok(device, 2, false, &s);
    rec_create_ok(device, 2, true, &r);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);

    for (unsigned i = 0; i < 2; i++) {
        D3DKMT_HANDLE hs = s.handles[i], hr = r.handles[i];

        ck_assert_status(rec_destroy_list(device, &hs, 1), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy_list(other, &hs, 1), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy_list(other, &hr, 1), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_lock2(device, hs, &data), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_lock2(other, hr, &data), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_unlock2(device, hs), STATUS_INVALID_PARAMETER);
        lock.hDevice = device;
        lock.hAllocation = hr;
        ck_assert_status(D3DKMTLock(&lock), STATUS_INVALID_PARAMETER);
        unlock.hDevice = other;
        unlock.NumAllocations = 1;
        unlock.phAllocations = &hs;
        ck_assert_status(D3DKMTUnlock(&unlock), STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(rec_resolve(adapter, hs, DXGK_HANDLE_ALLOCATION), 0);
    }
    ck_assert_status(rec_destroy_resource(device, r.resource), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(other, r.resource), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(rec_resolve(adapter, r.resource, DXGK_HANDLE_RESOURCE), 0);
    ck_assert_status(rec_create(device, 1, false, &s), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_device(device), STATUS_INVALID_PARAMETER);
    e.Magic = RECORD_ESCAPE_MAGIC;
    e.Code = RECORD_ESCAPE_ECHO;
    esc.hAdapter = adapter;
    esc.hDevice = device;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = &e;
    esc.PrivateDriverDataSize = sizeof(e);
    ck_assert_status(D3DKMTEscape(&esc), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ESCAPE), 0);
    rec_finish();
}
END_TEST

START_TEST(adapter_and_other_devices_untouched)
{
    struct rec_objects a, b;
    D3DKMT_HANDLE adapter, device, other, third;
    D3DKMT_DRIVERVERSION version;
    D3DKMT_QUERYADAPTERINFO q = { 0 };
    void *data;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    other = rec_device(NULL, NULL);
    rec_create_ok(device, 2, true, &a);
    rec_create_ok(other, 2, true, &b);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);

    ck_assert_status(rec_lock2(other, b.handles[1], &data), STATUS_SUCCESS);
    memset(data, 0x77, 64);
    ck_assert_status(rec_unlock2(other, b.handles[1]), STATUS_SUCCESS);
    ck_assert_uint_eq(record_live_objects().allocations, 2);
    ck_assert_uint_eq(record_live_objects().devices, 1);
    q.hAdapter = adapter;
    q.Type = KMTQAITYPE_DRIVERVERSION;
    q.pPrivateDriverData = &version;
    q.PrivateDriverDataSize = sizeof(version);
    ck_assert_status(D3DKMTQueryAdapterInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_STOP_DEVICE), 0);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_REMOVE_DEVICE), 0);
    third = rec_device(NULL, NULL);
    ck_assert_uint_ne(third, device);
    ck_assert_status(rec_destroy_resource(other, b.resource), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(soft_stats_back_to_zero)
{
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_QUERYVIDEOMEMORYINFO q = { 0 };
    D3DKMT_HANDLE adapter, device, allocs[3], resource, res_allocs[2];
    KMT_SOFT_ESCAPE stats;
    void *buf = aligned_alloc(4096, 0x4000), *data;

    ck_assert_ptr_nonnull(buf);
    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(&adapter);
    ck_assert_status(kmt_test_create_allocations(device, 3, 8192, allocs, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_test_create_allocations(device, 2, 4096, res_allocs, &resource), STATUS_SUCCESS);
    std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
    std.ExistingHeapData.Size = 0x4000;
    info.pSystemMem = buf;
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ca.pStandardAllocation = &std;
    ca.Flags.ExistingSysMem = 1;
    ca.Flags.StandardAllocation = 1;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    ck_assert_status(rec_lock2(device, allocs[1], &data), STATUS_SUCCESS);

    stats = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(stats.Stats.Devices, 1);
    ck_assert_uint_eq(stats.Stats.Allocations, 6);
    ck_assert_uint_eq(stats.Stats.Resources, 1);
    ck_assert_uint_eq(stats.Stats.BytesAllocated, 3 * 8192 + 2 * 4096);
    ck_assert_uint_eq(stats.Stats.OpenBindings, 6);

    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    stats = kmt_test_soft_stats(adapter);
    ck_assert_uint_eq(stats.Stats.Devices, 0);
    ck_assert_uint_eq(stats.Stats.Allocations, 0);
    ck_assert_uint_eq(stats.Stats.Resources, 0);
    ck_assert_uint_eq(stats.Stats.BytesAllocated, 0);
    ck_assert_uint_eq(stats.Stats.OpenBindings, 0);
    q.hAdapter = adapter;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.CurrentUsage, 0);
    kmt_test_shutdown_no_leaks();
    free(buf);
}
END_TEST

START_TEST(big_device)
{
    static D3DDDI_ALLOCATIONINFO info[100];
    unsigned char data[4] = { 1, 2, 3, 4 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_HANDLE device;
    unsigned live, from, dd, standalone = 0, resources = 0, closed = 0, calls = 0;

    rec_use("record");
    device = rec_device(NULL, NULL);
    live = KmtLiveObjectCount();                 /* adapter, adapter handle, device */
    for (unsigned i = 0; i < 100; i++) {
        info[i].pPrivateDriverData = data;
        info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = device;
    ca.pAllocationInfo = info;
    ca.NumAllocations = 100;
    for (unsigned i = 0; i < 10; i++)
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    ca.NumAllocations = 2;
    ca.Flags.CreateResource = 1;
    for (unsigned i = 0; i < 100; i++) {
        ca.hResource = 0;
        ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    }
    ck_assert_uint_eq(record_live_objects().allocations, 1200);
    ck_assert_uint_eq(record_live_objects().resources, 100);
    ck_assert_uint_eq(KmtLiveObjectCount(), live + 1200 + 100);

    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    dd = record_log_find(RECORD_DESTROY_DEVICE, from);
    ck_assert_uint_eq(record_log_count(), dd + 1);
    for (unsigned i = from; (i = record_log_find(RECORD_DESTROY_ALLOCATION, i)) != RECORD_NONE; i++) {
        const struct record_call *call = rec_entry(i);

        calls++;
        if (call->flags) {
            ck_assert_uint_eq(call->num, 2);
            resources++;
        } else {
            ck_assert_ptr_null(call->resource_in);
            ck_assert_uint_eq(resources, 0);     /* standalone ones all came first */
            standalone += call->num;
        }
    }
    for (unsigned i = from; (i = record_log_find(RECORD_CLOSE_ALLOCATION, i)) != RECORD_NONE; i++)
        closed += rec_entry(i)->num;
    ck_assert_uint_eq(standalone, 1000);
    ck_assert_uint_eq(resources, 100);
    ck_assert_uint_eq(closed, 1200);
    ck_assert_uint_lt(calls, 1000);              /* standalone ones batched, not one by one */
    ck_assert_uint_eq(record_live_objects().allocations, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live - 1);
    rec_finish();
}
END_TEST

/* ---- waiting for users --------------------------------------------------------------- */

static void destroyed_allocation_on_the_gpu(bool destroy_first)
{
    struct rec_thread t;
    struct device_destroyer d;
    struct rec_objects s, r;
    struct dxgk_allocation *alloc;
    D3DKMT_HANDLE device;
    unsigned from, dd;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 2, false, &s);
    rec_create_ok(device, 2, true, &r);
    alloc = gpu_ref(device, s.handles[1]);
    if (destroy_first)
        ck_assert_status(rec_destroy_list(device, &s.handles[1], 1), STATUS_SUCCESS);
    from = record_log_count();
    d = (struct device_destroyer){ device, -1 };
    rec_thread_start(&t, destroy_device_thread, &d);
    ck_assert(!rec_thread_wait(&t, 300));
    ck_assert_uint_eq(record_log_find(RECORD_DESTROY_DEVICE, from), RECORD_NONE);
    ck_assert_uint_eq(rec_find_with(RECORD_DESTROY_ALLOCATION, s.driver[1], from), RECORD_NONE);
    /* the rest of the cascade did not wait for it */
    ck_assert_uint_ne(rec_find_with(RECORD_DESTROY_ALLOCATION, s.driver[0], from), RECORD_NONE);
    ck_assert_uint_ne(rec_find_with(RECORD_DESTROY_ALLOCATION, r.driver[0], from), RECORD_NONE);

    dxgk_allocation_gpu_unref(alloc);
    ck_assert(rec_thread_wait(&t, 5000));
    rec_thread_join(&t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    dd = record_log_find(RECORD_DESTROY_DEVICE, from);
    ck_assert_uint_lt(destroy_of(s.driver[1], from), dd);
    ck_assert_uint_eq(record_log_count(), dd + 1);
    rec_finish();
}

START_TEST(destroyed_allocation_held_by_the_gpu_delays_destroy_device)
{
    destroyed_allocation_on_the_gpu(true);
}
END_TEST

START_TEST(live_allocation_held_by_the_gpu_delays_destroy_device)
{
    destroyed_allocation_on_the_gpu(false);
}
END_TEST

struct lock_user {
    D3DKMT_HANDLE device, allocation;
    NTSTATUS status;
};

static void lock_user(void *arg)
{
    struct lock_user *u = arg;
    void *data;

    u->status = rec_lock2(u->device, u->allocation, &data);
}

START_TEST(call_in_flight_delays_destroy_device)
{
    struct rec_thread user_t, destroy_t;
    struct lock_user u;
    struct device_destroyer d;
    struct rec_objects s, late;
    D3DKMT_HANDLE device;
    unsigned dd;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, false, &s);
    u = (struct lock_user){ device, s.handles[0], -1 };
    record_block(RECORD_LOCK);
    rec_thread_start(&user_t, lock_user, &u);
    ck_assert(record_wait_blocked(5000));
    d = (struct device_destroyer){ device, -1 };
    rec_thread_start(&destroy_t, destroy_device_thread, &d);
    /* the handle goes first: new calls fail while the old one runs */
    for (unsigned i = 0; i < 5000 && rec_create(device, 1, false, &late) == STATUS_SUCCESS; i++)
        rec_sleep_ms(1);
    ck_assert_status(rec_create(device, 1, false, &late), STATUS_INVALID_PARAMETER);
    ck_assert(!rec_thread_wait(&destroy_t, 200));
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 0);
    ck_assert(!rec_thread_done(&user_t));

    record_unblock();
    rec_thread_join(&user_t);
    ck_assert_status(u.status, STATUS_SUCCESS);
    ck_assert(rec_thread_wait(&destroy_t, 5000));
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    dd = record_log_find(RECORD_DESTROY_DEVICE, 0);
    ck_assert_uint_lt(record_log_find(RECORD_LOCK, 0), dd);
    ck_assert_uint_lt(rec_find_with(RECORD_UNLOCK, s.driver[0], 0), destroy_of(s.driver[0], 0));
    ck_assert_uint_lt(destroy_of(s.driver[0], 0), dd);
    rec_finish();
}
END_TEST

struct creator_in_flight {
    D3DKMT_HANDLE device;
    D3DDDI_ALLOCATIONINFO info[2];
    NTSTATUS status;
};

static void create_two(void *arg)
{
    struct creator_in_flight *c = arg;
    static unsigned char data[4];
    D3DKMT_CREATEALLOCATION ca = { 0 };

    for (unsigned i = 0; i < 2; i++) {
        c->info[i].pPrivateDriverData = data;
        c->info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = c->device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = c->info;
    c->status = D3DKMTCreateAllocation(&ca);
}

START_TEST(create_in_flight_finishes_before_destroy_device)
{
    struct rec_thread create_t, destroy_t;
    struct creator_in_flight c = { 0 };
    struct device_destroyer d;
    const struct record_call *create;
    D3DKMT_HANDLE device;
    unsigned dd;

    rec_use("record");
    device = rec_device(NULL, NULL);
    c.device = device;
    c.status = -1;
    record_block(RECORD_CREATE_ALLOCATION);
    rec_thread_start(&create_t, create_two, &c);
    ck_assert(record_wait_blocked(5000));
    d = (struct device_destroyer){ device, -1 };
    rec_thread_start(&destroy_t, destroy_device_thread, &d);
    for (unsigned i = 0; i < 5000 && rec_destroy2(device, 0, NULL, 0, 0) == STATUS_SUCCESS; i++)
        rec_sleep_ms(1);
    ck_assert_status(rec_destroy2(device, 0, NULL, 0, 0), STATUS_INVALID_PARAMETER);
    ck_assert(!rec_thread_wait(&destroy_t, 200));
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 0);

    record_unblock();
    rec_thread_join(&create_t);
    ck_assert_status(c.status, STATUS_SUCCESS);            /* it was in flight: it completes */
    ck_assert_local_handle(c.info[1].hAllocation);
    ck_assert(rec_thread_wait(&destroy_t, 5000));
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    create = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, 0));
    dd = record_log_find(RECORD_DESTROY_DEVICE, 0);
    ck_assert_uint_lt(destroy_of(create->allocs[0].handle, 0), dd);
    ck_assert_uint_lt(destroy_of(create->allocs[1].handle, 0), dd);
    rec_finish();
}
END_TEST

static void racing_destroy(void *arg)
{
    struct device_destroyer *d = arg;

    d->status = rec_destroy_device(d->device);
}

START_TEST(racing_destroy_device_one_wins)
{
    struct rec_thread t[6];
    struct device_destroyer d[6];
    struct rec_objects s;
    D3DKMT_HANDLE device;
    unsigned wins = 0;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 8, false, &s);
    for (unsigned i = 0; i < 6; i++) {
        d[i] = (struct device_destroyer){ device, -1 };
        rec_thread_start(&t[i], racing_destroy, &d[i]);
    }
    for (unsigned i = 0; i < 6; i++) {
        rec_thread_join(&t[i]);
        if (d[i].status == STATUS_SUCCESS)
            wins++;
        else
            ck_assert_int_eq(d[i].status, STATUS_INVALID_PARAMETER);
    }
    ck_assert_uint_eq(wins, 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 1);
    rec_finish();
}
END_TEST

struct creator {
    D3DKMT_HANDLE device;
    unsigned created, refused;
};

static void create_until_refused(void *arg)
{
    struct creator *c = arg;
    unsigned char data[4] = { 0 };
    D3DDDI_ALLOCATIONINFO info[2];
    D3DKMT_CREATEALLOCATION ca = { 0 };

    memset(info, 0, sizeof(info));
    for (unsigned i = 0; i < 2; i++) {
        info[i].pPrivateDriverData = data;
        info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = c->device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = info;
    for (unsigned i = 0; i < 2000; i++) {
        NTSTATUS status;

        ca.hResource = 0;
        ca.Flags.CreateResource = i & 1;
        status = D3DKMTCreateAllocation(&ca);

        if (status == STATUS_SUCCESS) {
            c->created++;
        } else {
            ck_assert_int_eq(status, STATUS_INVALID_PARAMETER);
            c->refused++;
            break;
        }
    }
}

START_TEST(creates_racing_destroy_device)
{
    struct rec_thread t[3];
    struct creator c[3];
    D3DKMT_HANDLE device;

    rec_use("record");
    device = rec_device(NULL, NULL);
    for (unsigned i = 0; i < 3; i++) {
        c[i] = (struct creator){ device, 0, 0 };
        rec_thread_start(&t[i], create_until_refused, &c[i]);
    }
    rec_sleep_ms(20);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    for (unsigned i = 0; i < 3; i++) {
        rec_thread_join(&t[i]);
        ck_assert_uint_le(c[i].refused, 1);
    }
    /* whatever was created went with the device */
    ck_assert_uint_eq(record_live_objects().allocations, 0);
    ck_assert_uint_eq(record_live_objects().devices, 0);
    rec_assert_close_before_destroy();
    rec_finish();
}
END_TEST

/* ---- adapters and the process ----------------------------------------------------------- */

START_TEST(devices_outlive_close_adapter)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CLOSEADAPTER ca = { 0 };
    struct rec_objects s;
    void *data;
    unsigned dd;

    rec_use("record");
    cd.hAdapter = kmt_test_open_adapter();
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ca.hAdapter = cd.hAdapter;
    ck_assert_status(D3DKMTCloseAdapter(&ca), STATUS_SUCCESS);
    ck_assert_status(D3DKMTCloseAdapter(&ca), STATUS_INVALID_PARAMETER);

    rec_create_ok(cd.hDevice, 2, true, &s);
    ck_assert_status(rec_lock2(cd.hDevice, s.handles[0], &data), STATUS_SUCCESS);
    ck_assert_status(rec_unlock2(cd.hDevice, s.handles[0]), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_device(cd.hDevice), STATUS_SUCCESS);
    dd = record_log_find(RECORD_DESTROY_DEVICE, 0);
    ck_assert_uint_ne(dd, RECORD_NONE);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_REMOVE_DEVICE), 0);
    KmtProcessShutdown();
    ck_assert_uint_gt(record_log_find(RECORD_REMOVE_DEVICE, 0), dd);
    rec_finish();
}
END_TEST

START_TEST(process_shutdown_destroys_every_device)
{
    struct rec_objects s1, r1, s2, r2;
    D3DKMT_HANDLE d1, d2;
    HANDLE drv1, drv2;
    void *data;
    unsigned from, x1, x2, stop, remove, unload;

    rec_use("record");
    d1 = rec_device(NULL, &drv1);
    d2 = rec_device(NULL, &drv2);
    rec_create_ok(d1, 3, false, &s1);
    rec_create_ok(d1, 2, true, &r1);
    rec_create_ok(d2, 1, false, &s2);
    rec_create_ok(d2, 3, true, &r2);
    ck_assert_status(rec_lock2(d2, r2.handles[2], &data), STATUS_SUCCESS);
    from = record_log_count();
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);

    x1 = x2 = RECORD_NONE;
    for (unsigned i = from; (i = record_log_find(RECORD_DESTROY_DEVICE, i)) != RECORD_NONE; i++) {
        if (rec_entry(i)->device == drv1)
            x1 = i;
        if (rec_entry(i)->device == drv2)
            x2 = i;
    }
    ck_assert_uint_ne(x1, RECORD_NONE);
    ck_assert_uint_ne(x2, RECORD_NONE);
    for (unsigned i = 0; i < 3; i++)
        ck_assert_uint_lt(destroy_of(s1.driver[i], from), x1);
    ck_assert_uint_lt(destroy_of(r1.driver[0], from), x1);
    ck_assert_uint_lt(destroy_of(s2.driver[0], from), x2);
    ck_assert_uint_lt(destroy_of(r2.driver[2], from), x2);
    ck_assert_uint_lt(destroy_of(s1.driver[0], from), destroy_of(r1.driver[0], from));
    ck_assert_uint_lt(destroy_of(s2.driver[0], from), destroy_of(r2.driver[0], from));
    ck_assert_uint_lt(rec_find_with(RECORD_UNLOCK, r2.driver[2], from), destroy_of(r2.driver[2], from));

    /* then the adapter goes, then the driver */
    stop = record_log_find(RECORD_STOP_DEVICE, from);
    remove = record_log_find(RECORD_REMOVE_DEVICE, from);
    unload = record_log_find(RECORD_UNLOAD, from);
    ck_assert_uint_gt(stop, x1 > x2 ? x1 : x2);
    ck_assert_uint_lt(stop, remove);
    ck_assert_uint_lt(remove, unload);
    ck_assert_uint_eq(record_log_count(), unload + 1);
    rec_assert_close_before_destroy();
    rec_finish();
}
END_TEST

START_TEST(process_restarts_after_shutdown)
{
    D3DKMT_HANDLE adapter, device, device2;
    struct rec_objects s;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 1, false, &s);
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    /* the next call starts afresh: new adapter, old handles meaningless */
    device2 = rec_device(NULL, NULL);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 2);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOAD), 1);
    ck_assert_status(rec_destroy_list(device2, s.handles, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_device(device2), STATUS_SUCCESS);
    KmtProcessShutdown();
    KmtProcessShutdown();                         /* twice is harmless */
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOAD), 2);
    rec_finish();
}
END_TEST

START_TEST(destroy_device_bad_handles)
{
    D3DKMT_HANDLE adapter, device;
    struct rec_objects s;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 1, true, &s);
    ck_assert_status(rec_destroy_device(0), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_device(0xdeadbeef), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_device(adapter), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_device(s.resource), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_device(s.handles[0]), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyDevice(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 0);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    rec_finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cascade");
    TCase *order = tcase_create("order");
    TCase *after = tcase_create("after");
    TCase *waits = tcase_create("waits");
    TCase *process = tcase_create("process");

    tcase_add_test(order, cascade_order);
    tcase_add_test(order, every_binding_closed_first);
    tcase_add_test(order, partially_destroyed_resource_in_cascade);
    tcase_add_test(order, emptied_resource_in_cascade);
    tcase_add_test(order, shared_resource_in_cascade);
    tcase_add_test(order, locked_allocations_unmapped_first);
    suite_add_tcase(s, order);

    tcase_add_test(after, every_handle_dead_afterwards);
    tcase_add_test(after, adapter_and_other_devices_untouched);
    tcase_add_test(after, soft_stats_back_to_zero);
    tcase_add_test(after, big_device);
    tcase_add_test(after, destroy_device_bad_handles);
    tcase_set_timeout(after, 60);
    suite_add_tcase(s, after);

    tcase_add_test(waits, destroyed_allocation_held_by_the_gpu_delays_destroy_device);
    tcase_add_test(waits, live_allocation_held_by_the_gpu_delays_destroy_device);
    tcase_add_test(waits, call_in_flight_delays_destroy_device);
    tcase_add_test(waits, create_in_flight_finishes_before_destroy_device);
    tcase_add_test(waits, racing_destroy_device_one_wins);
    tcase_add_test(waits, creates_racing_destroy_device);
    tcase_set_timeout(waits, 30);
    suite_add_tcase(s, waits);

    tcase_add_test(process, devices_outlive_close_adapter);
    tcase_add_test(process, process_shutdown_destroys_every_device);
    tcase_add_test(process, process_restarts_after_shutdown);
    suite_add_tcase(s, process);
    return kmt_test_run(s);
}
