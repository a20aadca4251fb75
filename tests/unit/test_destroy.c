/*
 * D3DKMTDestroyAllocation / D3DKMTDestroyAllocation2: every rule of the
 * D3DKMT_DESTROYALLOCATION page and of Windows' observed behaviour, all or
 * nothing on bad lists, and deferred destruction (users inside a DDI,
 * queued GPU work, SynchronousDestroy, AssumeNotInUse), checked against what
 * the recording miniport saw.
 */
#include "contract_util.h"
#include "dxgkrnl/dxgkrnl.h"       /* GPU references: the submission path's hooks */

#define ASSUME_NOT_IN_USE 1u
#define SYNCHRONOUS_DESTROY 2u

/* ---- helpers ----------------------------------------------------------------- */

static D3DKMT_HANDLE setup(void)
{
    rec_use("record");
    return rec_device(NULL, NULL);
}

/* Queued GPU work on an allocation, as a submission would hold it. */
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

static bool handle_alive(D3DKMT_HANDLE hdevice, D3DKMT_HANDLE h)
{
    struct dxgk_device *device = dxgk_device_acquire(hdevice);
    struct dxgk_allocation *alloc;

    if (!device)
        return false;
    alloc = dxgk_allocation_lookup(device, h);
    if (alloc)
        dxgk_allocation_put(alloc);
    dxgk_device_release(device);
    return alloc != NULL;
}

static void wait_handle_gone(D3DKMT_HANDLE device, D3DKMT_HANDLE h)
{
    for (unsigned i = 0; i < 5000 && handle_alive(device, h); i++)
        rec_sleep_ms(1);
    ck_assert_msg(!handle_alive(device, h), "handle %#x still alive", h);
}

static bool destroyed_in_miniport(HANDLE driver)
{
    return rec_find_with(RECORD_DESTROY_ALLOCATION, driver, 0) != RECORD_NONE;
}

/* The allocation is alive: lockable, and not destroyed in the miniport. */
static void assert_alive(D3DKMT_HANDLE device, const struct rec_objects *objs, unsigned i)
{
    void *data;

    ck_assert_status(rec_lock2(device, objs->handles[i], &data), STATUS_SUCCESS);
    ck_assert_status(rec_unlock2(device, objs->handles[i]), STATUS_SUCCESS);
    ck_assert(!destroyed_in_miniport(objs->driver[i]));
}

static void assert_gone(D3DKMT_HANDLE device, D3DKMT_HANDLE h)
{
    void *data;

    ck_assert_status(rec_lock2(device, h, &data), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_list(device, &h, 1), STATUS_INVALID_PARAMETER);
}

/* ---- Windows' table ------------------------------------------------------------- */

START_TEST(zero_count_without_resource_is_a_noop)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned from;

    rec_create_ok(device, 1, false, &objs);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, NULL, 0), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_list(device, objs.handles, 0), STATUS_SUCCESS);   /* list unread */
    ck_assert_status(rec_destroy2(device, 0, NULL, 0, 0), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &objs, 0);
    rec_finish();
}
END_TEST

START_TEST(count_one_with_null_list_is_invalid)
{
    D3DKMT_HANDLE device = setup();

    ck_assert_status(rec_destroy_list(device, NULL, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, 0, NULL, 1, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, 0, NULL, 5, SYNCHRONOUS_DESTROY), STATUS_INVALID_PARAMETER);
    rec_finish();
}
END_TEST

START_TEST(valid_list_then_again_is_invalid)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned n;

    rec_create_ok(device, 2, false, &objs);
    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_SUCCESS);
    n = record_log_count();
    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_list(device, &objs.handles[1], 1), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), n);
    ck_assert(destroyed_in_miniport(objs.driver[0]));
    ck_assert(destroyed_in_miniport(objs.driver[1]));
    rec_finish();
}
END_TEST

START_TEST(destroy2_valid_list_then_again_is_invalid)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 3, false, &objs);
    ck_assert_status(rec_destroy2(device, 0, objs.handles, 3, 0), STATUS_SUCCESS);
    ck_assert_status(rec_destroy2(device, 0, objs.handles, 3, 0), STATUS_INVALID_PARAMETER);
    for (unsigned i = 0; i < 3; i++)
        ck_assert(destroyed_in_miniport(objs.driver[i]));
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    rec_finish();
}
END_TEST

START_TEST(destroy_v1_and_v2_without_flags_agree)
{
    struct rec_objects a, b;
    const struct record_call *d1, *d2;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 2, true, &a);
    rec_create_ok(device, 2, true, &b);
    ck_assert_status(rec_destroy_list(device, &a.handles[0], 1), STATUS_SUCCESS);
    ck_assert_status(rec_destroy2(device, 0, &b.handles[0], 1, 0), STATUS_SUCCESS);
    d1 = rec_entry(rec_find_with(RECORD_DESTROY_ALLOCATION, a.driver[0], 0));
    d2 = rec_entry(rec_find_with(RECORD_DESTROY_ALLOCATION, b.driver[0], 0));
    ck_assert_uint_eq(d1->num, d2->num);
    ck_assert_uint_eq(d1->flags, d2->flags);
    ck_assert_ptr_eq(d1->resource_in, a.driver_resource);
    ck_assert_ptr_eq(d2->resource_in, b.driver_resource);
    ck_assert_status(rec_destroy_resource(device, a.resource), STATUS_SUCCESS);
    ck_assert_status(rec_destroy2(device, b.resource, NULL, 0, 0), STATUS_SUCCESS);
    ck_assert_status(rec_destroy2(device, b.resource, NULL, 0, 0), STATUS_INVALID_PARAMETER);
    rec_finish();
}
END_TEST

START_TEST(resource_allocation_destroyed_alone_resource_survives)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 2, true, &objs);
    ck_assert_status(rec_destroy_list(device, &objs.handles[0], 1), STATUS_SUCCESS);
    assert_gone(device, objs.handles[0]);
    assert_alive(device, &objs, 1);
    ck_assert_uint_eq(record_live_objects().resources, 1);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    ck_assert_uint_eq(record_live_objects().resources, 0);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_INVALID_PARAMETER);
    assert_gone(device, objs.handles[1]);
    rec_finish();
}
END_TEST

START_TEST(resource_destroy_frees_every_allocation)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned live = KmtLiveObjectCount();

    rec_create_ok(device, 4, true, &objs);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert(destroyed_in_miniport(objs.driver[i]));
        assert_gone(device, objs.handles[i]);
    }
    ck_assert_status(rec_destroy_list(device, objs.handles, 4), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    ck_assert_uint_eq(record_live_objects().allocations, 0);
    rec_finish();
}
END_TEST

START_TEST(resource_with_a_count_is_invalid)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned from;

    rec_create_ok(device, 2, true, &objs);
    from = record_log_count();
    /* Windows checks the count: a resource destroy takes no list */
    ck_assert_status(rec_destroy2(device, objs.resource, objs.handles, 1, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, objs.resource, objs.handles, 2, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, objs.resource, NULL, 7, 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, objs.resource, NULL, D3DKMT_CREATEALLOCATION_MAX + 1, 0),
                     STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &objs, 0);
    assert_alive(device, &objs, 1);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(resource_with_count_0_ignores_the_list)
{
    struct rec_objects a, b;
    D3DKMT_HANDLE device = setup();
    D3DKMT_DESTROYALLOCATION da = { 0 };
    unsigned live = KmtLiveObjectCount();

    rec_create_ok(device, 2, true, &a);
    rec_create_ok(device, 1, true, &b);
    /* a stale list left in a reused descriptor, even one naming live
     * allocations of another resource, is not looked at */
    da.hDevice = device;
    da.hResource = a.resource;
    da.phAllocationList = b.handles;
    ck_assert_status(D3DKMTDestroyAllocation(&da), STATUS_SUCCESS);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert(destroyed_in_miniport(a.driver[i]));
        assert_gone(device, a.handles[i]);
    }
    assert_alive(device, &b, 0);
    ck_assert_status(D3DKMTDestroyAllocation(&da), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, b.resource, a.handles, 0, 0), STATUS_SUCCESS);
    ck_assert(destroyed_in_miniport(b.driver[0]));
    ck_assert_uint_eq(record_live_objects().resources, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    rec_finish();
}
END_TEST

START_TEST(list_of_two_resources_destroys_nothing)
{
    struct rec_objects a, b;
    D3DKMT_HANDLE device = setup(), list[2];
    unsigned from;

    rec_create_ok(device, 2, true, &a);
    rec_create_ok(device, 2, true, &b);
    list[0] = a.handles[0];
    list[1] = b.handles[1];
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, 2), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &a, 0);
    assert_alive(device, &b, 1);
    /* the same allocations, one resource at a time, are fine */
    ck_assert_status(rec_destroy_list(device, a.handles, 2), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_list(device, b.handles, 2), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(list_mixing_standalone_and_resource_destroys_nothing)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE device = setup(), list[3];
    unsigned from;

    rec_create_ok(device, 2, false, &s);
    rec_create_ok(device, 1, true, &r);
    list[0] = s.handles[0];
    list[1] = s.handles[1];
    list[2] = r.handles[0];
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, 3), STATUS_INVALID_PARAMETER);
    list[0] = r.handles[0];
    list[2] = s.handles[0];
    ck_assert_status(rec_destroy_list(device, list, 3), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &s, 0);
    assert_alive(device, &s, 1);
    assert_alive(device, &r, 0);
    rec_finish();
}
END_TEST

START_TEST(duplicates_in_a_list_destroy_nothing)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup(), list[3];
    unsigned from;

    rec_create_ok(device, 2, false, &objs);
    list[0] = objs.handles[0];
    list[1] = objs.handles[1];
    list[2] = objs.handles[0];
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, 3), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, 0, list, 3, SYNCHRONOUS_DESTROY), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &objs, 0);
    assert_alive(device, &objs, 1);
    ck_assert_status(rec_destroy_list(device, list, 2), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(bad_last_entry_destroys_nothing)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup(), list[4];
    unsigned from;

    rec_create_ok(device, 3, false, &objs);
    memcpy(list, objs.handles, 3 * sizeof(D3DKMT_HANDLE));
    list[3] = 0xdeadbe00;
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, 4), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    for (unsigned i = 0; i < 3; i++)
        assert_alive(device, &objs, i);
    rec_finish();
}
END_TEST

START_TEST(shared_resource_allocations_stay_together)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned from;

    rec_create_shared(device, 2, &objs);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, &objs.handles[0], 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    ck_assert_uint_eq(rec_entry(record_log_find_last(RECORD_DESTROY_ALLOCATION))->num, 2);
    ck_assert_uint_eq(rec_entry(record_log_find_last(RECORD_DESTROY_ALLOCATION))->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(wrong_device_destroys_nothing)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE a = setup(), b = rec_device(NULL, NULL);
    unsigned from;

    rec_create_ok(a, 1, false, &s);
    rec_create_ok(a, 2, true, &r);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(b, s.handles, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_list(b, r.handles, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(b, r.resource), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(a, &s, 0);
    assert_alive(a, &r, 1);
    ck_assert_status(rec_destroy_list(a, s.handles, 1), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_resource(a, r.resource), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(garbage_in_the_list)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE adapter, device, other;
    D3DKMT_HANDLE bad[7];
    unsigned from;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    other = rec_device(NULL, NULL);
    rec_create_ok(device, 1, false, &s);
    rec_create_ok(device, 1, true, &r);
    bad[0] = 0;
    bad[1] = 0xdeadbeef;
    bad[2] = 0xffffffff;
    bad[3] = s.handles[0] | 2;       /* same slot, global instance bits */
    bad[4] = device;                  /* wrong types */
    bad[5] = adapter;
    bad[6] = r.resource;
    from = record_log_count();
    for (unsigned i = 0; i < 7; i++) {
        ck_assert_status(rec_destroy_list(device, &bad[i], 1), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy2(device, 0, &bad[i], 1, 0), STATUS_INVALID_PARAMETER);
    }
    ck_assert_status(rec_destroy_list(device, &other, 1), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &s, 0);
    rec_finish();
}
END_TEST

START_TEST(garbage_resource_handle)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE adapter, device;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 1, false, &s);
    rec_create_ok(device, 1, true, &r);
    ck_assert_status(rec_destroy_resource(device, 0xdeadbeef), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(device, s.handles[0]), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(device, r.handles[0]), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(device, device), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(device, adapter), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    assert_alive(device, &s, 0);
    assert_alive(device, &r, 0);
    rec_finish();
}
END_TEST

START_TEST(stale_resource_handle)
{
    struct rec_objects r, fresh;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 1, true, &r);
    ck_assert_status(rec_destroy_resource(device, r.resource), STATUS_SUCCESS);
    for (unsigned i = 0; i < 4; i++)
        rec_create_ok(device, 2, true, &fresh);
    ck_assert_status(rec_destroy_resource(device, r.resource), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_list(device, r.handles, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy_resource(device, fresh.resource), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(count_limits)
{
    static D3DDDI_ALLOCATIONINFO info[D3DKMT_CREATEALLOCATION_MAX];
    static D3DKMT_HANDLE list[D3DKMT_CREATEALLOCATION_MAX + 1];
    unsigned char data[4] = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *call;
    D3DKMT_HANDLE device = setup();
    unsigned from;

    for (unsigned i = 0; i < D3DKMT_CREATEALLOCATION_MAX; i++) {
        info[i].pPrivateDriverData = data;
        info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = device;
    ca.NumAllocations = D3DKMT_CREATEALLOCATION_MAX;
    ca.pAllocationInfo = info;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    for (unsigned i = 0; i < D3DKMT_CREATEALLOCATION_MAX; i++)
        list[i] = info[i].hAllocation;
    list[D3DKMT_CREATEALLOCATION_MAX] = info[0].hAllocation;
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, D3DKMT_CREATEALLOCATION_MAX + 1),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, 0, list, 0xffffffffu, 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);
    ck_assert_status(rec_destroy_list(device, list, D3DKMT_CREATEALLOCATION_MAX), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count(), from + 2);
    call = rec_entry(from + 1);
    ck_assert_int_eq(call->ddi, RECORD_DESTROY_ALLOCATION);
    ck_assert_uint_eq(call->num, D3DKMT_CREATEALLOCATION_MAX);
    ck_assert_uint_eq(rec_entry(from)->num, D3DKMT_CREATEALLOCATION_MAX);
    rec_finish();
}
END_TEST

START_TEST(reserved_flags_are_invalid)
{
    static const UINT bad[] = { 1u << 2, 1u << 3, 1u << 15, 1u << 30, 1u << 31,
                                (1u << 31) | ASSUME_NOT_IN_USE, 0xffffffffu };
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned from = record_log_count();

    rec_create_ok(device, 1, false, &objs);
    rec_create_ok(device, 1, true, &objs);
    from = record_log_count();
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_status(rec_destroy2(device, 0, objs.handles, 1, bad[i]), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy2(device, objs.resource, NULL, 0, bad[i]), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy2(device, 0, NULL, 0, bad[i]), STATUS_INVALID_PARAMETER);
    }
    ck_assert_uint_eq(record_log_count(), from);
    assert_alive(device, &objs, 0);
    /* the two caller flags are accepted */
    ck_assert_status(rec_destroy2(device, objs.resource, NULL, 0, ASSUME_NOT_IN_USE | SYNCHRONOUS_DESTROY),
                     STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(bad_device_handles)
{
    struct rec_objects objs;
    D3DKMT_HANDLE adapter, device;
    D3DKMT_HANDLE bad[4];

    rec_use("record");
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 1, true, &objs);
    bad[0] = 0;
    bad[1] = 0xdeadbeef;
    bad[2] = adapter;
    bad[3] = objs.resource;
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_status(rec_destroy_list(bad[i], objs.handles, 1), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy_resource(bad[i], objs.resource), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_destroy2(bad[i], 0, NULL, 0, 0), STATUS_INVALID_PARAMETER);
    }
    ck_assert_status(D3DKMTDestroyAllocation(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTDestroyAllocation2(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    assert_alive(device, &objs, 0);
    rec_finish();
}
END_TEST

START_TEST(destroyed_device_handle)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 1, false, &objs);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_list(device, objs.handles, 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(rec_destroy2(device, 0, NULL, 0, 0), STATUS_INVALID_PARAMETER);
    rec_finish();
}
END_TEST

START_TEST(list_of_one_resource_is_one_call)
{
    struct rec_objects objs;
    const struct record_call *call;
    D3DKMT_HANDLE device = setup(), list[2];
    unsigned from;

    rec_create_ok(device, 3, true, &objs);
    list[0] = objs.handles[2];
    list[1] = objs.handles[0];
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, 2), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    call = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(call->num, 2);
    ck_assert(rec_call_lists(call, objs.driver[0]));
    ck_assert(rec_call_lists(call, objs.driver[2]));
    ck_assert_ptr_eq(call->resource_in, objs.driver_resource);
    ck_assert_uint_eq(call->flags, 0);
    assert_alive(device, &objs, 1);
    rec_finish();
}
END_TEST

/* ---- racing destroys ---------------------------------------------------------------- */

struct racer {
    D3DKMT_HANDLE device;
    const D3DKMT_HANDLE *list;
    UINT count;
    NTSTATUS status;
};

static void *race_destroy(void *arg)
{
    struct racer *r = arg;

    r->status = rec_destroy_list(r->device, r->list, r->count);
    return NULL;
}

START_TEST(racing_destroys_one_wins)
{
    struct rec_objects objs;
    struct racer racers[8];
    pthread_t threads[8];
    D3DKMT_HANDLE device = setup();
    unsigned wins = 0;

    rec_create_ok(device, 4, false, &objs);
    for (unsigned i = 0; i < 8; i++) {
        racers[i] = (struct racer){ device, objs.handles, 4, -1 };
        ck_assert_int_eq(pthread_create(&threads[i], NULL, race_destroy, &racers[i]), 0);
    }
    for (unsigned i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
        if (racers[i].status == STATUS_SUCCESS)
            wins++;
        else
            ck_assert_int_eq(racers[i].status, STATUS_INVALID_PARAMETER);
    }
    ck_assert_uint_eq(wins, 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    ck_assert_uint_eq(rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0))->num, 4);
    rec_finish();
}
END_TEST

/* ---- a user inside a DDI ------------------------------------------------------------ */

struct lock_user {
    D3DKMT_HANDLE device, allocation;
    void *data;
    NTSTATUS status;
};

static void lock_user(void *arg)
{
    struct lock_user *u = arg;

    u->status = rec_lock2(u->device, u->allocation, &u->data);
}

struct destroyer {
    D3DKMT_HANDLE device, resource, allocation;
    UINT flags;
    NTSTATUS status;
    unsigned destroys_at_return;          /* DxgkDdiDestroyAllocation calls seen on return */
};

static void destroyer(void *arg)
{
    struct destroyer *d = arg;

    if (d->resource)
        d->status = rec_destroy2(d->device, d->resource, NULL, 0, d->flags);
    else
        d->status = rec_destroy2(d->device, 0, &d->allocation, 1, d->flags);
    d->destroys_at_return = record_log_count_ddi(RECORD_DESTROY_ALLOCATION);
}

/* Thread `user` stopped inside DxgkDdiLock on allocation i. */
static void block_a_user(struct rec_thread *t, struct lock_user *u, D3DKMT_HANDLE device,
                         D3DKMT_HANDLE allocation)
{
    *u = (struct lock_user){ device, allocation, NULL, -1 };
    record_block(RECORD_LOCK);
    rec_thread_start(t, lock_user, u);
    ck_assert_msg(record_wait_blocked(5000), "the lock never reached the miniport");
}

START_TEST(synchronous_destroy_waits_for_the_user)
{
    struct rec_thread user_t, destroy_t;
    struct lock_user user;
    struct destroyer d;
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned lock_at, destroy_at;

    rec_create_ok(device, 1, false, &objs);
    block_a_user(&user_t, &user, device, objs.handles[0]);
    d = (struct destroyer){ device, 0, objs.handles[0], SYNCHRONOUS_DESTROY, -1, 0 };
    rec_thread_start(&destroy_t, destroyer, &d);
    wait_handle_gone(device, objs.handles[0]);
    ck_assert_msg(!rec_thread_wait(&destroy_t, 200), "SynchronousDestroy returned with a user inside a DDI");
    ck_assert(!destroyed_in_miniport(objs.driver[0]));

    record_unblock();
    rec_thread_join(&user_t);
    ck_assert_status(user.status, STATUS_SUCCESS);    /* it was in flight: it completes */
    ck_assert(rec_thread_wait(&destroy_t, 5000));
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_uint_eq(d.destroys_at_return, 1);        /* reclaimed before it returned */
    lock_at = record_log_find(RECORD_LOCK, 0);
    destroy_at = rec_find_with(RECORD_DESTROY_ALLOCATION, objs.driver[0], 0);
    ck_assert_uint_lt(lock_at, destroy_at);
    /* the user's mapping was dropped before the memory went */
    ck_assert_uint_lt(record_log_find(RECORD_UNLOCK, lock_at), destroy_at);
    rec_finish();
}
END_TEST

START_TEST(plain_destroy_returns_while_the_user_runs)
{
    struct rec_thread user_t, destroy_t;
    struct lock_user user;
    struct destroyer d;
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 1, false, &objs);
    block_a_user(&user_t, &user, device, objs.handles[0]);
    d = (struct destroyer){ device, 0, objs.handles[0], 0, -1, 0 };
    rec_thread_start(&destroy_t, destroyer, &d);
    ck_assert_msg(rec_thread_wait(&destroy_t, 5000),
                  "DestroyAllocation without SynchronousDestroy waited for a user inside a DDI");
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_uint_eq(d.destroys_at_return, 0);
    assert_gone(device, objs.handles[0]);              /* the handle went at once */
    ck_assert(!destroyed_in_miniport(objs.driver[0])); /* the memory waits for the user */

    record_unblock();
    rec_thread_join(&user_t);
    ck_assert_status(user.status, STATUS_SUCCESS);
    ck_assert(destroyed_in_miniport(objs.driver[0]));  /* the last user reclaimed it */
    ck_assert_uint_lt(record_log_find(RECORD_LOCK, 0),
                      rec_find_with(RECORD_DESTROY_ALLOCATION, objs.driver[0], 0));
    rec_finish();
}
END_TEST

START_TEST(synchronous_resource_destroy_waits_for_the_user)
{
    struct rec_thread user_t, destroy_t;
    struct lock_user user;
    struct destroyer d;
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    const struct record_call *call;

    rec_create_ok(device, 3, true, &objs);
    block_a_user(&user_t, &user, device, objs.handles[1]);
    d = (struct destroyer){ device, objs.resource, 0, SYNCHRONOUS_DESTROY, -1, 0 };
    rec_thread_start(&destroy_t, destroyer, &d);
    wait_handle_gone(device, objs.handles[1]);
    ck_assert(!rec_thread_wait(&destroy_t, 200));
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    record_unblock();
    rec_thread_join(&user_t);
    ck_assert(rec_thread_wait(&destroy_t, 5000));
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_uint_eq(d.destroys_at_return, 1);
    /* still one call with the whole resource */
    call = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0));
    ck_assert_uint_eq(call->num, 3);
    ck_assert_uint_eq(call->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(plain_resource_destroy_returns_while_the_user_runs)
{
    struct rec_thread user_t, destroy_t;
    struct lock_user user;
    struct destroyer d;
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 2, true, &objs);
    block_a_user(&user_t, &user, device, objs.handles[0]);
    d = (struct destroyer){ device, objs.resource, 0, 0, -1, 0 };
    rec_thread_start(&destroy_t, destroyer, &d);
    ck_assert(rec_thread_wait(&destroy_t, 5000));
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_uint_eq(d.destroys_at_return, 0);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_INVALID_PARAMETER);
    record_unblock();
    rec_thread_join(&user_t);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    ck_assert_uint_eq(rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0))->num, 2);
    rec_finish();
}
END_TEST

/* ---- queued GPU work -------------------------------------------------------------------- */

START_TEST(gpu_work_defers_the_reclaim)
{
    struct rec_objects objs;
    struct dxgk_allocation *alloc;
    D3DKMT_HANDLE device = setup();
    unsigned live, from;

    rec_create_ok(device, 2, false, &objs);
    live = KmtLiveObjectCount();
    alloc = gpu_ref(device, objs.handles[0]);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_SUCCESS);
    assert_gone(device, objs.handles[0]);
    ck_assert(!destroyed_in_miniport(objs.driver[0]));    /* the GPU may still use it */
    ck_assert(destroyed_in_miniport(objs.driver[1]));     /* the idle one went at once */
    ck_assert_uint_eq(rec_find_with(RECORD_CLOSE_ALLOCATION, objs.binding[0], from), RECORD_NONE);
    ck_assert_uint_eq(KmtLiveObjectCount(), live - 1);

    from = record_log_count();
    dxgk_allocation_gpu_unref(alloc);                     /* the work completes */
    ck_assert_uint_lt(rec_find_with(RECORD_CLOSE_ALLOCATION, objs.binding[0], from),
                      rec_find_with(RECORD_DESTROY_ALLOCATION, objs.driver[0], from));
    ck_assert_uint_eq(KmtLiveObjectCount(), live - 2);
    rec_finish();
}
END_TEST

START_TEST(assume_not_in_use_reclaims_at_once)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    unsigned live;

    struct dxgk_allocation *alloc;

    rec_create_ok(device, 1, false, &objs);
    live = KmtLiveObjectCount();
    alloc = gpu_ref(device, objs.handles[0]);             /* still queued: the caller says it won't touch it */
    ck_assert_status(rec_destroy2(device, 0, objs.handles, 1, ASSUME_NOT_IN_USE), STATUS_SUCCESS);
    ck_assert(destroyed_in_miniport(objs.driver[0]));
    /* the memory is gone; the core's record lives while the queued work
     * still points at it, and goes with it */
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    dxgk_allocation_gpu_unref(alloc);
    ck_assert_uint_eq(KmtLiveObjectCount(), live - 1);
    rec_finish();
}
END_TEST

START_TEST(assume_not_in_use_resource)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    struct dxgk_allocation *a0, *a1;

    rec_create_ok(device, 2, true, &objs);
    a0 = gpu_ref(device, objs.handles[0]);
    a1 = gpu_ref(device, objs.handles[1]);
    ck_assert_status(rec_destroy2(device, objs.resource, NULL, 0, ASSUME_NOT_IN_USE), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    ck_assert_uint_eq(rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0))->flags, 1);
    dxgk_allocation_gpu_unref(a0);               /* the queued work retires */
    dxgk_allocation_gpu_unref(a1);
    rec_finish();
}
END_TEST

START_TEST(gpu_work_defers_a_resource)
{
    struct rec_objects objs;
    struct dxgk_allocation *alloc;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 3, true, &objs);
    alloc = gpu_ref(device, objs.handles[2]);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    dxgk_allocation_gpu_unref(alloc);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 1);
    ck_assert_uint_eq(rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0))->num, 3);
    ck_assert_uint_eq(rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, 0))->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(synchronous_destroy_waits_for_the_gpu)
{
    struct rec_thread destroy_t;
    struct destroyer d;
    struct rec_objects objs;
    struct dxgk_allocation *alloc;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 1, false, &objs);
    alloc = gpu_ref(device, objs.handles[0]);
    d = (struct destroyer){ device, 0, objs.handles[0], SYNCHRONOUS_DESTROY, -1, 0 };
    rec_thread_start(&destroy_t, destroyer, &d);
    wait_handle_gone(device, objs.handles[0]);
    ck_assert(!rec_thread_wait(&destroy_t, 200));
    ck_assert(!destroyed_in_miniport(objs.driver[0]));
    dxgk_allocation_gpu_unref(alloc);
    ck_assert(rec_thread_wait(&destroy_t, 5000));
    rec_thread_join(&destroy_t);
    ck_assert_status(d.status, STATUS_SUCCESS);
    ck_assert_uint_eq(d.destroys_at_return, 1);
    rec_finish();
}
END_TEST

START_TEST(synchronous_assume_not_in_use_does_not_wait_for_the_gpu)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();

    struct dxgk_allocation *alloc;

    rec_create_ok(device, 1, false, &objs);
    alloc = gpu_ref(device, objs.handles[0]);
    ck_assert_status(rec_destroy2(device, 0, objs.handles, 1, ASSUME_NOT_IN_USE | SYNCHRONOUS_DESTROY),
                     STATUS_SUCCESS);
    ck_assert(destroyed_in_miniport(objs.driver[0]));
    dxgk_allocation_gpu_unref(alloc);            /* the queued work retires */
    rec_finish();
}
END_TEST

/* ---- Lock against queued GPU work ---------------------------------------------------------- */

static NTSTATUS lock_flags(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation, UINT flags, void **data)
{
    D3DKMT_LOCK lock = { 0 };
    NTSTATUS status;

    lock.hDevice = device;
    lock.hAllocation = allocation;
    lock.Flags.Value = flags;
    status = D3DKMTLock(&lock);
    *data = lock.pData;
    return status;
}

START_TEST(lock_donotwait_on_a_busy_allocation)
{
    struct rec_objects objs;
    struct dxgk_allocation *alloc;
    D3DKMT_HANDLE device = setup();
    void *data = NULL;
    unsigned from;

    rec_create_ok(device, 1, false, &objs);
    alloc = gpu_ref(device, objs.handles[0]);
    from = record_log_count();
    ck_assert_status(lock_flags(device, objs.handles[0], 1u << 2 /* DonotWait */, &data),
                     STATUS_GRAPHICS_ALLOCATION_BUSY);
    ck_assert_ptr_null(data);
    ck_assert_uint_eq(record_log_count(), from);          /* the miniport was not asked */
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_INVALID_PARAMETER);

    /* IgnoreSync: the caller takes the hazard */
    ck_assert_status(lock_flags(device, objs.handles[0], (1u << 2) | (1u << 3), &data), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(data);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);

    dxgk_allocation_gpu_unref(alloc);
    ck_assert_status(lock_flags(device, objs.handles[0], 1u << 2, &data), STATUS_SUCCESS);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

static void waiting_lock(void *arg)
{
    struct lock_user *u = arg;

    u->status = lock_flags(u->device, u->allocation, 0, &u->data);
}

START_TEST(lock_waits_for_the_gpu)
{
    struct rec_thread t;
    struct lock_user u;
    struct rec_objects objs;
    struct dxgk_allocation *alloc;
    D3DKMT_HANDLE device = setup();

    rec_create_ok(device, 1, false, &objs);
    alloc = gpu_ref(device, objs.handles[0]);
    u = (struct lock_user){ device, objs.handles[0], NULL, -1 };
    rec_thread_start(&t, waiting_lock, &u);
    ck_assert(!rec_thread_wait(&t, 200));
    ck_assert_uint_eq(record_log_count_ddi(RECORD_LOCK), 0);
    dxgk_allocation_gpu_unref(alloc);
    ck_assert(rec_thread_wait(&t, 5000));
    rec_thread_join(&t);
    ck_assert_status(u.status, STATUS_SUCCESS);
    ck_assert_ptr_nonnull(u.data);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_LOCK), 1);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(every_call_rejects_a_destroyed_allocation)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device = setup();
    D3DKMT_UNLOCK unlock = { 0 };
    void *data;

    rec_create_ok(device, 2, false, &objs);
    ck_assert_status(rec_lock2(device, objs.handles[1], &data), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_SUCCESS);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_status(lock_flags(device, objs.handles[i], 0, &data), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_lock2(device, objs.handles[i], &data), STATUS_INVALID_PARAMETER);
        ck_assert_status(rec_unlock2(device, objs.handles[i]), STATUS_INVALID_PARAMETER);
        unlock.hDevice = device;
        unlock.NumAllocations = 1;
        unlock.phAllocations = &objs.handles[i];
        ck_assert_status(D3DKMTUnlock(&unlock), STATUS_INVALID_PARAMETER);
    }
    ck_assert_uint_eq(record_live_objects().mappings, 0);
    rec_finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("destroy");
    TCase *rules = tcase_create("rules");
    TCase *bad = tcase_create("bad_input");
    TCase *deferred = tcase_create("deferred");

    tcase_add_test(rules, zero_count_without_resource_is_a_noop);
    tcase_add_test(rules, count_one_with_null_list_is_invalid);
    tcase_add_test(rules, valid_list_then_again_is_invalid);
    tcase_add_test(rules, destroy2_valid_list_then_again_is_invalid);
    tcase_add_test(rules, destroy_v1_and_v2_without_flags_agree);
    tcase_add_test(rules, resource_allocation_destroyed_alone_resource_survives);
    tcase_add_test(rules, resource_destroy_frees_every_allocation);
    tcase_add_test(rules, resource_with_a_count_is_invalid);
    tcase_add_test(rules, resource_with_count_0_ignores_the_list);
    tcase_add_test(rules, list_of_one_resource_is_one_call);
    tcase_add_test(rules, shared_resource_allocations_stay_together);
    tcase_add_test(rules, racing_destroys_one_wins);
    suite_add_tcase(s, rules);

    tcase_add_test(bad, list_of_two_resources_destroys_nothing);
    tcase_add_test(bad, list_mixing_standalone_and_resource_destroys_nothing);
    tcase_add_test(bad, duplicates_in_a_list_destroy_nothing);
    tcase_add_test(bad, bad_last_entry_destroys_nothing);
    tcase_add_test(bad, wrong_device_destroys_nothing);
    tcase_add_test(bad, garbage_in_the_list);
    tcase_add_test(bad, garbage_resource_handle);
    tcase_add_test(bad, stale_resource_handle);
    tcase_add_test(bad, count_limits);
    tcase_add_test(bad, reserved_flags_are_invalid);
    tcase_add_test(bad, bad_device_handles);
    tcase_add_test(bad, destroyed_device_handle);
    tcase_set_timeout(bad, 30);
    suite_add_tcase(s, bad);

    tcase_add_test(deferred, synchronous_destroy_waits_for_the_user);
    tcase_add_test(deferred, plain_destroy_returns_while_the_user_runs);
    tcase_add_test(deferred, synchronous_resource_destroy_waits_for_the_user);
    tcase_add_test(deferred, plain_resource_destroy_returns_while_the_user_runs);
    tcase_add_test(deferred, gpu_work_defers_the_reclaim);
    tcase_add_test(deferred, assume_not_in_use_reclaims_at_once);
    tcase_add_test(deferred, assume_not_in_use_resource);
    tcase_add_test(deferred, gpu_work_defers_a_resource);
    tcase_add_test(deferred, synchronous_destroy_waits_for_the_gpu);
    tcase_add_test(deferred, synchronous_assume_not_in_use_does_not_wait_for_the_gpu);
    tcase_add_test(deferred, lock_donotwait_on_a_busy_allocation);
    tcase_add_test(deferred, lock_waits_for_the_gpu);
    tcase_add_test(deferred, every_call_rejects_a_destroyed_allocation);
    tcase_set_timeout(deferred, 30);
    suite_add_tcase(s, deferred);
    return kmt_test_run(s);
}
