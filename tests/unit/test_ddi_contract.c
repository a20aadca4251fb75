/*
 * The DDI contract as the miniport sees it: the exact arguments of every
 * DxgkDdi* call the core makes, their order, and the core's all-or-nothing
 * rollback when the miniport fails, recorded by the recording miniport.
 */
#include <stdlib.h>

#include "contract_util.h"

#define PAGE 4096u

static unsigned last_of(enum record_ddi ddi)
{
    unsigned i = record_log_find_last(ddi);

    ck_assert_msg(i != RECORD_NONE, "no %s in the log", record_ddi_name(ddi));
    return i;
}

/* ---- CreateAllocation ------------------------------------------------------- */

START_TEST(create_standalone_exact_args)
{
    D3DDDI_ALLOCATIONINFO info[3];
    unsigned char p0[5] = { 1, 2, 3, 4, 5 }, p2[300];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *call;
    D3DKMT_HANDLE device;
    unsigned live, from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    for (unsigned i = 0; i < sizeof(p2); i++)
        p2[i] = (unsigned char)(i * 7);
    memset(info, 0, sizeof(info));
    info[0].pPrivateDriverData = p0;
    info[0].PrivateDriverDataSize = sizeof(p0);
    info[2].pPrivateDriverData = p2;
    info[2].PrivateDriverDataSize = sizeof(p2);
    ca.hDevice = device;
    ca.NumAllocations = 3;
    ca.pAllocationInfo = info;
    live = KmtLiveObjectCount();
    from = record_log_count();
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);

    call = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    ck_assert_uint_eq(call->num, 3);
    ck_assert_uint_eq(call->flags, 0);              /* Flags.Resource clear: device-owned */
    ck_assert_ptr_null(call->resource_in);
    ck_assert_ptr_null(call->resource_out);
    ck_assert_uint_eq(call->priv_size, 0);
    ck_assert_ptr_null(call->priv);
    ck_assert_uint_eq(call->allocs[0].priv_size, sizeof(p0));
    ck_assert_mem_eq(call->allocs[0].priv, p0, sizeof(p0));
    ck_assert_uint_eq(call->allocs[1].priv_size, 0);
    ck_assert_ptr_null(call->allocs[1].priv);
    ck_assert_uint_eq(call->allocs[2].priv_size, sizeof(p2));
    ck_assert_mem_eq(call->allocs[2].priv, p2, sizeof(p2));
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_uint_eq(call->allocs[i].size_in, 0);
        ck_assert_ptr_null(call->allocs[i].sysmem);
        ck_assert_uint_eq(call->allocs[i].flags_in, 0);
        ck_assert_local_handle(info[i].hAllocation);
    }
    ck_assert_uint_eq(info[1].hAllocation, info[0].hAllocation + 0x40);
    ck_assert_uint_eq(info[2].hAllocation, info[1].hAllocation + 0x40);
    ck_assert_uint_eq(ca.hResource, 0);
    ck_assert_uint_eq(ca.hGlobalShare, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live + 3);
    rec_finish();
}
END_TEST

START_TEST(create_resource_exact_args)
{
    D3DDDI_ALLOCATIONINFO info[2];
    unsigned char res_data[37], runtime[4] = { 9, 9, 9, 9 }, a0[8] = { 0 }, a1[16];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *call, *open;
    D3DKMT_HANDLE device;
    unsigned from, c, o;

    rec_use("record");
    device = rec_device(NULL, NULL);
    for (unsigned i = 0; i < sizeof(res_data); i++)
        res_data[i] = (unsigned char)(0x80 + i);
    memset(a1, 0x5a, sizeof(a1));
    memset(info, 0, sizeof(info));
    info[0].pPrivateDriverData = a0;
    info[0].PrivateDriverDataSize = sizeof(a0);
    info[1].pPrivateDriverData = a1;
    info[1].PrivateDriverDataSize = sizeof(a1);
    ca.hDevice = device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = info;
    ca.pPrivateDriverData = res_data;
    ca.PrivateDriverDataSize = sizeof(res_data);
    ca.pPrivateRuntimeData = runtime;
    ca.PrivateRuntimeDataSize = sizeof(runtime);
    ca.Flags.CreateResource = 1;
    from = record_log_count();
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    ck_assert_local_handle(ca.hResource);
    ck_assert_uint_eq(info[0].hAllocation, ca.hResource + 0x40);
    ck_assert_uint_eq(info[1].hAllocation, ca.hResource + 0x80);

    c = record_log_find(RECORD_CREATE_ALLOCATION, from);
    call = rec_entry(c);
    ck_assert_uint_eq(call->num, 2);
    ck_assert_uint_eq(call->flags, 1);              /* Flags.Resource */
    ck_assert_ptr_null(call->resource_in);          /* a new resource */
    ck_assert_ptr_nonnull(call->resource_out);
    ck_assert_uint_eq(call->priv_size, sizeof(res_data));
    ck_assert_mem_eq(call->priv, res_data, sizeof(res_data));
    ck_assert_mem_eq(call->allocs[0].priv, a0, sizeof(a0));
    ck_assert_mem_eq(call->allocs[1].priv, a1, sizeof(a1));
    /* the runtime's data is the runtime's: it never reaches the KMD */
    ck_assert_uint_ne(call->priv_size, sizeof(runtime));

    /* Open(Create) sees the resource-level data, read-only */
    o = record_log_find(RECORD_OPEN_ALLOCATION, from);
    open = rec_entry(o);
    ck_assert_uint_eq(open->priv_size, sizeof(res_data));
    ck_assert_mem_eq(open->priv, res_data, sizeof(res_data));
    ck_assert_uint_eq(open->allocs[1].priv_size, sizeof(a1));
    ck_assert_mem_eq(open->allocs[1].priv, a1, sizeof(a1));
    rec_finish();
}
END_TEST

START_TEST(create_standard_allocation_args)
{
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *call;
    D3DKMT_HANDLE device;
    void *buf = aligned_alloc(PAGE, 0x10000), *data;
    unsigned from;

    ck_assert_ptr_nonnull(buf);
    rec_use("record");
    device = rec_device(NULL, NULL);
    std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
    std.ExistingHeapData.Size = 0x10000;
    info.pSystemMem = buf;
    ca.hDevice = device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ca.pStandardAllocation = &std;
    ca.Flags.ExistingSysMem = 1;
    ca.Flags.StandardAllocation = 1;
    from = record_log_count();
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    ck_assert_uint_eq(ca.hResource, 0);

    call = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    ck_assert_uint_eq(call->num, 1);
    ck_assert_uint_eq(call->flags, 0);
    ck_assert_ptr_null(call->priv);                 /* pStandardAllocation is not driver data */
    ck_assert_uint_eq(call->priv_size, 0);
    ck_assert_uint_eq(call->allocs[0].size_in, 0x10000);
    ck_assert_ptr_eq(call->allocs[0].sysmem, buf);
    ck_assert_uint_eq(call->allocs[0].flags_in, 1u << 4);   /* ExistingSysMem only */
    ck_assert_uint_eq(call->allocs[0].priv_size, 0);

    /* the caller's memory is the allocation: Lock never asks the miniport */
    from = record_log_count();
    ck_assert_status(rec_lock2(device, info.hAllocation, &data), STATUS_SUCCESS);
    ck_assert_ptr_eq(data, buf);
    ck_assert_status(rec_unlock2(device, info.hAllocation), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_find(RECORD_LOCK, from), RECORD_NONE);
    ck_assert_uint_eq(record_log_find(RECORD_UNLOCK, from), RECORD_NONE);
    rec_finish();
    free(buf);
}
END_TEST

START_TEST(create_existing_sysmem_args)
{
    D3DDDI_ALLOCATIONINFO info[2];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    unsigned char priv[8] = { 7, 6, 5, 4, 3, 2, 1, 0 };
    const struct record_call *call;
    char *buf = aligned_alloc(PAGE, 2 * PAGE);
    D3DKMT_HANDLE device;
    unsigned from;

    ck_assert_ptr_nonnull(buf);
    rec_use("record");
    device = rec_device(NULL, NULL);
    memset(info, 0, sizeof(info));
    for (unsigned i = 0; i < 2; i++) {
        info[i].pSystemMem = buf + i * PAGE;
        info[i].pPrivateDriverData = priv;
        info[i].PrivateDriverDataSize = sizeof(priv);
    }
    ca.hDevice = device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = info;
    ca.Flags.ExistingSysMem = 1;
    from = record_log_count();
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    call = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_uint_eq(call->allocs[i].size_in, 0);  /* the KMD sizes it from its data */
        ck_assert_ptr_eq(call->allocs[i].sysmem, buf + i * PAGE);
        ck_assert_uint_eq(call->allocs[i].flags_in, 1u << 4);
        ck_assert_mem_eq(call->allocs[i].priv, priv, sizeof(priv));
    }
    rec_finish();
    free(buf);
}
END_TEST

START_TEST(create2_passes_the_same_args)
{
    D3DDDI_ALLOCATIONINFO2 info[2];
    unsigned char d0[3] = { 0xa, 0xb, 0xc }, d1[6] = { 1, 1, 2, 3, 5, 8 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *call;
    D3DKMT_HANDLE device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    memset(info, 0, sizeof(info));
    info[0].pPrivateDriverData = d0;
    info[0].PrivateDriverDataSize = sizeof(d0);
    info[1].pPrivateDriverData = d1;
    info[1].PrivateDriverDataSize = sizeof(d1);
    info[1].GpuVirtualAddress = 0x1234;             /* out: overwritten */
    ca.hDevice = device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo2 = info;
    ca.Flags.CreateResource = 1;
    from = record_log_count();
    ck_assert_status(D3DKMTCreateAllocation2(&ca), STATUS_SUCCESS);
    call = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    ck_assert_uint_eq(call->num, 2);
    ck_assert_uint_eq(call->flags, 1);
    ck_assert_mem_eq(call->allocs[0].priv, d0, sizeof(d0));
    ck_assert_mem_eq(call->allocs[1].priv, d1, sizeof(d1));
    ck_assert_uint_eq(info[0].hAllocation, ca.hResource + 0x40);
    ck_assert_uint_eq(info[1].hAllocation, ca.hResource + 0x80);
    ck_assert_uint_eq(info[1].GpuVirtualAddress, 0);
    rec_finish();
}
END_TEST

START_TEST(create_private_data_is_in_out)
{
    struct record_config cfg;
    D3DDDI_ALLOCATIONINFO info[3];
    unsigned char data[3][4];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *call, *open;
    D3DKMT_HANDLE device;
    unsigned from;

    record_default_config(&cfg);
    cfg.stamp_private_data = true;
    rec_use_config("record", &cfg);
    device = rec_device(NULL, NULL);
    memset(info, 0, sizeof(info));
    for (unsigned i = 0; i < 3; i++) {
        memset(data[i], 0x11, sizeof(data[i]));
        info[i].pPrivateDriverData = data[i];
        info[i].PrivateDriverDataSize = sizeof(data[i]);
    }
    ca.hDevice = device;
    ca.NumAllocations = 3;
    ca.pAllocationInfo = info;
    from = record_log_count();
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    call = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    open = rec_entry(record_log_find(RECORD_OPEN_ALLOCATION, from));
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_uint_eq(call->allocs[i].priv[0], 0x11);       /* as the UMD gave it */
        ck_assert_uint_eq(data[i][0], 0xc0 + i);                /* the KMD's answer, back */
        ck_assert_uint_eq(data[i][1], 0x11);
        ck_assert_uint_eq(open->allocs[i].priv[0], 0xc0 + i);   /* Open sees the KMD's version */
    }
    rec_finish();
}
END_TEST

/* ---- OpenAllocation(Create) ---------------------------------------------------- */

START_TEST(open_create_follows_create)
{
    struct rec_objects objs;
    const struct record_call *create, *open;
    D3DKMT_HANDLE device;
    HANDLE drv_device;
    unsigned from, c, o;

    rec_use("record");
    device = rec_device(NULL, &drv_device);
    from = record_log_count();
    rec_create_ok(device, 3, true, &objs);
    c = record_log_find(RECORD_CREATE_ALLOCATION, from);
    o = record_log_find(RECORD_OPEN_ALLOCATION, from);
    ck_assert_uint_eq(o, c + 1);                     /* nothing in between */
    create = rec_entry(c);
    open = rec_entry(o);
    ck_assert_ptr_eq(open->device, drv_device);      /* the driver's device, not the core's */
    ck_assert_uint_eq(open->flags, 1);               /* Flags.Create */
    ck_assert_uint_eq(open->num, 3);
    for (unsigned i = 0; i < 3; i++) {
        /* the core's handles, resolvable during the call */
        ck_assert_uint_eq(open->allocs[i].core_handle, objs.handles[i]);
        ck_assert_ptr_eq(open->allocs[i].resolved, create->allocs[i].handle);
        ck_assert_ptr_nonnull(open->allocs[i].handle);
        ck_assert_ptr_ne(open->allocs[i].handle, create->allocs[i].handle);
    }
    ck_assert_uint_eq(record_log_count(), o + 1);    /* and nothing after */
    rec_finish();
}
END_TEST

START_TEST(get_handle_data_after_create)
{
    struct rec_objects objs, standalone;
    D3DKMT_HANDLE adapter, device;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 2, true, &objs);
    rec_create_ok(device, 1, false, &standalone);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_uint_eq(rec_resolve(adapter, objs.handles[i], DXGK_HANDLE_ALLOCATION),
                          (uintptr_t)objs.driver[i]);
        ck_assert_uint_eq(rec_resolve(adapter, objs.handles[i],
                                      DXGK_HANDLE_ALLOCATION | RECORD_RESOLVE_DEVICE_SPECIFIC),
                          (uintptr_t)objs.binding[i]);
    }
    ck_assert_uint_eq(rec_resolve(adapter, objs.resource, DXGK_HANDLE_RESOURCE),
                      (uintptr_t)objs.driver_resource);
    ck_assert_uint_eq(rec_resolve(adapter, standalone.handles[0], DXGK_HANDLE_ALLOCATION),
                      (uintptr_t)standalone.driver[0]);
    /* wrong type, garbage, zero, another object */
    ck_assert_uint_eq(rec_resolve(adapter, objs.resource, DXGK_HANDLE_ALLOCATION), 0);
    ck_assert_uint_eq(rec_resolve(adapter, objs.handles[0], DXGK_HANDLE_RESOURCE), 0);
    ck_assert_uint_eq(rec_resolve(adapter, device, DXGK_HANDLE_ALLOCATION), 0);
    ck_assert_uint_eq(rec_resolve(adapter, 0, DXGK_HANDLE_ALLOCATION), 0);
    ck_assert_uint_eq(rec_resolve(adapter, 0xdeadbe00, DXGK_HANDLE_ALLOCATION), 0);
    ck_assert_uint_eq(rec_resolve(adapter, objs.handles[0], 7), 0);
    /* destroyed: gone */
    ck_assert_status(rec_destroy_list(device, standalone.handles, 1), STATUS_SUCCESS);
    ck_assert_uint_eq(rec_resolve(adapter, standalone.handles[0], DXGK_HANDLE_ALLOCATION), 0);
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    ck_assert_uint_eq(rec_resolve(adapter, objs.resource, DXGK_HANDLE_RESOURCE), 0);
    ck_assert_uint_eq(rec_resolve(adapter, objs.handles[1], DXGK_HANDLE_ALLOCATION), 0);
    rec_finish();
}
END_TEST

/* ---- DestroyAllocation ------------------------------------------------------------ */

START_TEST(destroy_standalone_exact_args)
{
    struct rec_objects objs;
    const struct record_call *close, *destroy;
    D3DKMT_HANDLE device;
    HANDLE drv_device;
    unsigned from, c, d;

    rec_use("record");
    device = rec_device(NULL, &drv_device);
    rec_create_ok(device, 1, false, &objs);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, objs.handles, 1), STATUS_SUCCESS);
    c = record_log_find(RECORD_CLOSE_ALLOCATION, from);
    d = record_log_find(RECORD_DESTROY_ALLOCATION, from);
    ck_assert_uint_ne(c, RECORD_NONE);
    ck_assert_uint_ne(d, RECORD_NONE);
    ck_assert_uint_lt(c, d);
    close = rec_entry(c);
    destroy = rec_entry(d);
    ck_assert_ptr_eq(close->device, drv_device);
    ck_assert_uint_eq(close->num, 1);
    ck_assert_ptr_eq(close->allocs[0].handle, objs.binding[0]);     /* the binding, not the allocation */
    ck_assert_uint_eq(destroy->num, 1);
    ck_assert_ptr_eq(destroy->allocs[0].handle, objs.driver[0]);    /* the driver's, not 0x4000xxxx */
    ck_assert_ptr_null(destroy->resource_in);
    ck_assert_uint_eq(destroy->flags, 0);
    ck_assert_uint_eq(record_log_count(), d + 1);
    rec_finish();
}
END_TEST

START_TEST(destroy_list_is_one_ddi_call)
{
    struct rec_objects a, b;
    D3DKMT_HANDLE device, list[5];
    const struct record_call *close, *destroy;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 3, false, &a);
    rec_create_ok(device, 2, false, &b);      /* created by another call */
    list[0] = b.handles[0];
    list[1] = a.handles[2];
    list[2] = a.handles[0];
    list[3] = b.handles[1];
    list[4] = a.handles[1];
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, list, 5), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count(), from + 2);     /* one close, one destroy */
    close = rec_entry(from);
    destroy = rec_entry(from + 1);
    ck_assert_int_eq(close->ddi, RECORD_CLOSE_ALLOCATION);
    ck_assert_int_eq(destroy->ddi, RECORD_DESTROY_ALLOCATION);
    ck_assert_uint_eq(close->num, 5);
    ck_assert_uint_eq(destroy->num, 5);
    ck_assert_ptr_null(destroy->resource_in);
    ck_assert_uint_eq(destroy->flags, 0);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert(rec_call_lists(destroy, a.driver[i]));
        ck_assert(rec_call_lists(close, a.binding[i]));
    }
    for (unsigned i = 0; i < 2; i++) {
        ck_assert(rec_call_lists(destroy, b.driver[i]));
        ck_assert(rec_call_lists(close, b.binding[i]));
    }
    rec_finish();
}
END_TEST

/* Destroys a resource of three allocations with `destroy` and checks that
 * the miniport saw exactly one close and one DestroyResource call naming
 * every allocation. */
static void check_resource_destroy(NTSTATUS (*destroy_it)(D3DKMT_HANDLE device, D3DKMT_HANDLE resource))
{
    struct rec_objects objs;
    const struct record_call *close, *destroy;
    D3DKMT_HANDLE device;
    HANDLE drv_device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, &drv_device);
    rec_create_ok(device, 3, true, &objs);
    from = record_log_count();
    ck_assert_status(destroy_it(device, objs.resource), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count(), from + 2);
    close = rec_entry(from);
    destroy = rec_entry(from + 1);
    ck_assert_int_eq(close->ddi, RECORD_CLOSE_ALLOCATION);
    ck_assert_ptr_eq(close->device, drv_device);
    ck_assert_uint_eq(close->num, 3);                /* every binding in one call */
    ck_assert_int_eq(destroy->ddi, RECORD_DESTROY_ALLOCATION);
    ck_assert_uint_eq(destroy->num, 3);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert(rec_call_lists(close, objs.binding[i]));
        ck_assert(rec_call_lists(destroy, objs.driver[i]));
    }
    ck_assert_ptr_eq(destroy->resource_in, objs.driver_resource);
    ck_assert_uint_eq(destroy->flags, 1);            /* DestroyResource */
    ck_assert_uint_eq(record_live_objects().resources, 0);
    ck_assert_status(destroy_it(device, objs.resource), STATUS_INVALID_PARAMETER);
    rec_finish();
}

/* A list pointer a runtime left behind in a reused descriptor: with a
 * count of 0 it must not be read (this one would fault). */
#define STALE_LIST ((const D3DKMT_HANDLE *)(uintptr_t)0x7ffffff00000ull)

static NTSTATUS destroy_v1_stale_list(D3DKMT_HANDLE device, D3DKMT_HANDLE resource)
{
    D3DKMT_DESTROYALLOCATION da = { .hDevice = device, .hResource = resource, .phAllocationList = STALE_LIST };

    return D3DKMTDestroyAllocation(&da);
}

static NTSTATUS destroy_v2_stale_list(D3DKMT_HANDLE device, D3DKMT_HANDLE resource)
{
    return rec_destroy2(device, resource, STALE_LIST, 0, 0);
}

START_TEST(destroy_resource_exact_args)
{
    check_resource_destroy(rec_destroy_resource);
}
END_TEST

START_TEST(destroy_resource_with_a_stale_list_is_the_same_call)
{
    check_resource_destroy(destroy_v1_stale_list);
}
END_TEST

START_TEST(destroy2_resource_with_a_stale_list_is_the_same_call)
{
    check_resource_destroy(destroy_v2_stale_list);
}
END_TEST

START_TEST(partial_destroy_keeps_the_resource)
{
    struct rec_objects objs;
    const struct record_call *destroy;
    D3DKMT_HANDLE device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 3, true, &objs);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, &objs.handles[1], 1), STATUS_SUCCESS);
    destroy = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(destroy->num, 1);
    ck_assert_ptr_eq(destroy->allocs[0].handle, objs.driver[1]);
    ck_assert_ptr_eq(destroy->resource_in, objs.driver_resource);   /* whose allocation it is */
    ck_assert_uint_eq(destroy->flags, 0);                          /* the resource stays */

    from = record_log_count();
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    destroy = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(destroy->num, 2);
    ck_assert(rec_call_lists(destroy, objs.driver[0]));
    ck_assert(rec_call_lists(destroy, objs.driver[2]));
    ck_assert(!rec_call_lists(destroy, objs.driver[1]));
    ck_assert_uint_eq(destroy->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(rewritten_hresource_is_kept)
{
    struct record_config cfg;
    struct rec_objects objs;
    const struct record_call *d1, *d2, *d3;
    D3DKMT_HANDLE adapter, device;
    unsigned from;

    record_default_config(&cfg);
    cfg.rewrite_resource = true;
    rec_use_config("record", &cfg);
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 3, true, &objs);

    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, &objs.handles[0], 1), STATUS_SUCCESS);
    d1 = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_ptr_eq(d1->resource_in, objs.driver_resource);
    ck_assert_ptr_nonnull(d1->resource_out);
    ck_assert_ptr_ne(d1->resource_out, d1->resource_in);

    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, &objs.handles[1], 1), STATUS_SUCCESS);
    d2 = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_ptr_eq(d2->resource_in, d1->resource_out);       /* the KMD's new value */
    ck_assert_ptr_ne(d2->resource_out, d2->resource_in);
    /* the core hands the current value to DxgkCbGetHandleData users too */
    ck_assert_uint_eq(rec_resolve(adapter, objs.resource, DXGK_HANDLE_RESOURCE),
                      (uintptr_t)d2->resource_out);

    from = record_log_count();
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    d3 = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_ptr_eq(d3->resource_in, d2->resource_out);
    ck_assert_uint_eq(d3->flags, 1);
    ck_assert_uint_eq(d3->num, 1);
    ck_assert_ptr_eq(d3->allocs[0].handle, objs.driver[2]);
    rec_finish();
}
END_TEST

/* DxgkCbGetHandleData reads a resource's hResource while partial destroys
 * on another thread rewrite it (ThreadSanitizer checks the two sides), and
 * always answers one of the KMD's values. */
struct resolve_race {
    D3DKMT_HANDLE adapter, device;
    struct rec_objects objs;
};

static void destroy_one_by_one(void *arg)
{
    struct resolve_race *r = arg;

    for (UINT i = 0; i + 1 < r->objs.count; i++)
        ck_assert_status(rec_destroy_list(r->device, &r->objs.handles[i], 1), STATUS_SUCCESS);
}

START_TEST(handle_data_read_while_hresource_rewritten)
{
    struct record_config cfg;
    struct resolve_race r;
    struct rec_thread t;
    unsigned reads = 0;

    record_default_config(&cfg);
    cfg.rewrite_resource = true;
    rec_use_config("record", &cfg);
    r.device = rec_device(&r.adapter, NULL);
    rec_create_ok(r.device, REC_MAX, true, &r.objs);
    rec_thread_start(&t, destroy_one_by_one, &r);
    while (!rec_thread_done(&t) || !reads) {
        ck_assert_uint_ne(rec_resolve(r.adapter, r.objs.resource, DXGK_HANDLE_RESOURCE), 0);
        reads++;
    }
    rec_thread_join(&t);
    ck_assert_status(rec_destroy_resource(r.device, r.objs.resource), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

START_TEST(empty_resource_destroyed_with_no_allocations)
{
    struct rec_objects objs;
    const struct record_call *destroy;
    D3DKMT_HANDLE device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 2, true, &objs);
    from = record_log_count();
    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION) , 1);
    destroy = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(destroy->num, 2);
    ck_assert_ptr_eq(destroy->resource_in, objs.driver_resource);
    ck_assert_uint_eq(destroy->flags, 0);

    from = record_log_count();
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_find(RECORD_CLOSE_ALLOCATION, from), RECORD_NONE);
    destroy = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_uint_eq(destroy->num, 0);
    ck_assert_ptr_eq(destroy->resource_in, objs.driver_resource);
    ck_assert_uint_eq(destroy->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(close_always_before_destroy)
{
    struct rec_objects s, r1, r2;
    D3DKMT_HANDLE device, device2;
    void *data;

    rec_use("record");
    device = rec_device(NULL, NULL);
    device2 = rec_device(NULL, NULL);
    rec_create_ok(device, 4, false, &s);
    rec_create_ok(device, 3, true, &r1);
    rec_create_ok(device2, 2, true, &r2);
    ck_assert_status(rec_lock2(device, s.handles[0], &data), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_list(device, s.handles, 2), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_list(device, &r1.handles[2], 1), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_resource(device, r1.resource), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_device(device2), STATUS_SUCCESS);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    rec_assert_close_before_destroy();
    ck_assert_uint_eq(record_log_count_ddi(RECORD_CLOSE_ALLOCATION),
                      record_log_count_ddi(RECORD_DESTROY_ALLOCATION));
    rec_finish();
}
END_TEST

START_TEST(destroy_device_is_the_last_call)
{
    struct rec_objects s, r;
    D3DKMT_HANDLE device;
    HANDLE drv_device;
    unsigned from, dd;

    rec_use("record");
    device = rec_device(NULL, &drv_device);
    rec_create_ok(device, 2, false, &s);
    rec_create_ok(device, 2, true, &r);
    from = record_log_count();
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    dd = record_log_find(RECORD_DESTROY_DEVICE, from);
    ck_assert_uint_ne(dd, RECORD_NONE);
    ck_assert_ptr_eq(rec_entry(dd)->device, drv_device);
    ck_assert_uint_eq(record_log_count(), dd + 1);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_uint_lt(rec_find_with(RECORD_DESTROY_ALLOCATION, s.driver[i], from), dd);
        ck_assert_uint_lt(rec_find_with(RECORD_DESTROY_ALLOCATION, r.driver[i], from), dd);
        ck_assert_uint_lt(rec_find_with(RECORD_CLOSE_ALLOCATION, s.binding[i], from), dd);
        ck_assert_uint_lt(rec_find_with(RECORD_CLOSE_ALLOCATION, r.binding[i], from), dd);
    }
    rec_finish();
}
END_TEST

/* ---- rollback ---------------------------------------------------------------------- */

static void assert_nothing_after(unsigned from, enum record_ddi ddi)
{
    unsigned i = record_log_find(ddi, from);

    ck_assert_msg(i == RECORD_NONE, "unexpected %s at %u", record_ddi_name(ddi), i);
}

static void create_fails_cleanly(bool resource)
{
    D3DDDI_ALLOCATIONINFO info[2];
    unsigned char data[2][8];
    D3DKMT_CREATEALLOCATION ca = { 0 };
    struct record_live before_live, after_live;
    D3DKMT_HANDLE device;
    unsigned live, from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    memset(info, 0, sizeof(info));
    memset(data, 0, sizeof(data));
    for (unsigned i = 0; i < 2; i++) {
        info[i].pPrivateDriverData = data[i];
        info[i].PrivateDriverDataSize = sizeof(data[i]);
    }
    ca.hDevice = device;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = resource;
    live = KmtLiveObjectCount();
    before_live = record_live_objects();
    from = record_log_count();
    record_fail_call(RECORD_CREATE_ALLOCATION, 1, STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    ck_assert_uint_eq(info[0].hAllocation, 0);
    ck_assert_uint_eq(info[1].hAllocation, 0);
    ck_assert_uint_eq(ca.hResource, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    ck_assert_uint_eq(record_log_count(), from + 1);          /* just the failed create */
    assert_nothing_after(from, RECORD_OPEN_ALLOCATION);
    assert_nothing_after(from, RECORD_DESTROY_ALLOCATION);
    after_live = record_live_objects();
    ck_assert_uint_eq(after_live.allocations, before_live.allocations);
    ck_assert_uint_eq(after_live.resources, before_live.resources);

    /* the failure was injected once: the same call works now */
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    ck_assert_local_handle(info[0].hAllocation);
    rec_finish();
}

START_TEST(create_failure_standalone_no_ddi_destroy)
{
    create_fails_cleanly(false);
}
END_TEST

START_TEST(create_failure_resource_no_ddi_destroy)
{
    create_fails_cleanly(true);
}
END_TEST

START_TEST(create_failure_of_the_nth_call)
{
    struct rec_objects a, b;
    D3DKMT_HANDLE device;
    unsigned live;

    rec_use("record");
    device = rec_device(NULL, NULL);
    record_fail_call(RECORD_CREATE_ALLOCATION, 3, STATUS_NO_MEMORY);
    rec_create_ok(device, 1, false, &a);
    rec_create_ok(device, 2, true, &b);
    live = KmtLiveObjectCount();
    ck_assert_status(rec_create(device, 2, true, &b), STATUS_NO_MEMORY);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    rec_finish();
}
END_TEST

static void open_fails_cleanly(bool resource)
{
    const struct record_call *create, *destroy;
    struct rec_objects objs;
    D3DKMT_HANDLE device;
    unsigned live, from, c, o, d;

    rec_use("record");
    device = rec_device(NULL, NULL);
    live = KmtLiveObjectCount();
    from = record_log_count();
    record_fail_call(RECORD_OPEN_ALLOCATION, 1, STATUS_NO_MEMORY);
    ck_assert_status(rec_create(device, 3, resource, &objs), STATUS_NO_MEMORY);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    c = record_log_find(RECORD_CREATE_ALLOCATION, from);
    o = record_log_find(RECORD_OPEN_ALLOCATION, from);
    d = record_log_find(RECORD_DESTROY_ALLOCATION, from);
    ck_assert_uint_eq(o, c + 1);
    ck_assert_uint_eq(d, o + 1);                      /* no close: nothing was bound */
    ck_assert_uint_eq(record_log_count(), d + 1);
    create = rec_entry(c);
    destroy = rec_entry(d);
    ck_assert_uint_eq(destroy->num, 3);               /* exactly what was created */
    for (unsigned i = 0; i < 3; i++)
        ck_assert_ptr_eq(destroy->allocs[i].handle, create->allocs[i].handle);
    if (resource) {
        ck_assert_ptr_eq(destroy->resource_in, create->resource_out);
        ck_assert_uint_eq(destroy->flags, 1);
    } else {
        ck_assert_ptr_null(destroy->resource_in);
        ck_assert_uint_eq(destroy->flags, 0);
    }
    ck_assert_uint_eq(record_live_objects().allocations, 0);
    ck_assert_uint_eq(record_live_objects().resources, 0);
    rec_finish();
}

START_TEST(open_failure_standalone_rollback)
{
    open_fails_cleanly(false);
}
END_TEST

START_TEST(open_failure_resource_rollback)
{
    open_fails_cleanly(true);
}
END_TEST

START_TEST(create_null_handle_rollback)
{
    D3DDDI_ALLOCATIONINFO info[3];
    unsigned char data[8] = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    const struct record_call *create, *destroy;
    D3DKMT_HANDLE device;
    unsigned live, from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    memset(info, 0, sizeof(info));
    for (unsigned i = 0; i < 3; i++) {
        info[i].pPrivateDriverData = data;
        info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = device;
    ca.NumAllocations = 3;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = 1;
    live = KmtLiveObjectCount();
    from = record_log_count();
    record_null_handle(RECORD_CREATE_ALLOCATION, 1, 1);
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_UNSUCCESSFUL);
    ck_assert_uint_eq(ca.hResource, 0);
    ck_assert_uint_eq(info[0].hAllocation, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    assert_nothing_after(from, RECORD_OPEN_ALLOCATION);
    create = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    destroy = rec_entry(record_log_find(RECORD_DESTROY_ALLOCATION, from));
    ck_assert_ptr_null(create->allocs[1].handle);
    ck_assert_uint_eq(destroy->num, 2);                /* the two the KMD did make */
    ck_assert(rec_call_lists(destroy, create->allocs[0].handle));
    ck_assert(rec_call_lists(destroy, create->allocs[2].handle));
    ck_assert(!rec_call_lists(destroy, NULL));
    ck_assert_ptr_eq(destroy->resource_in, create->resource_out);
    ck_assert_uint_eq(destroy->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(open_null_handle_rollback)
{
    const struct record_call *open, *close, *destroy, *create;
    struct rec_objects objs;
    D3DKMT_HANDLE device;
    unsigned live, from, cl, d;

    rec_use("record");
    device = rec_device(NULL, NULL);
    live = KmtLiveObjectCount();
    from = record_log_count();
    record_null_handle(RECORD_OPEN_ALLOCATION, 1, 1);
    ck_assert_status(rec_create(device, 3, false, &objs), STATUS_UNSUCCESSFUL);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    create = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    open = rec_entry(record_log_find(RECORD_OPEN_ALLOCATION, from));
    cl = record_log_find(RECORD_CLOSE_ALLOCATION, from);
    d = record_log_find(RECORD_DESTROY_ALLOCATION, from);
    ck_assert_uint_lt(cl, d);
    close = rec_entry(cl);
    destroy = rec_entry(d);
    ck_assert_ptr_null(open->allocs[1].handle);
    ck_assert_uint_eq(close->num, 2);                  /* the bindings that exist */
    ck_assert(rec_call_lists(close, open->allocs[0].handle));
    ck_assert(rec_call_lists(close, open->allocs[2].handle));
    ck_assert_uint_eq(destroy->num, 3);
    for (unsigned i = 0; i < 3; i++)
        ck_assert(rec_call_lists(destroy, create->allocs[i].handle));
    rec_finish();
}
END_TEST

START_TEST(resource_open_failure_keeps_existing_objects)
{
    struct rec_objects keep, failed;
    D3DKMT_HANDLE device;
    void *data;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 2, true, &keep);
    record_fail_call(RECORD_OPEN_ALLOCATION, 1, STATUS_NO_MEMORY);
    ck_assert_status(rec_create(device, 2, true, &failed), STATUS_NO_MEMORY);
    /* the earlier resource is untouched */
    ck_assert_status(rec_lock2(device, keep.handles[1], &data), STATUS_SUCCESS);
    ck_assert_status(rec_unlock2(device, keep.handles[1]), STATUS_SUCCESS);
    ck_assert_uint_eq(record_live_objects().allocations, 2);
    ck_assert_uint_eq(record_live_objects().resources, 1);
    ck_assert_status(rec_destroy_resource(device, keep.resource), STATUS_SUCCESS);
    rec_finish();
}
END_TEST

struct joiner {
    D3DKMT_HANDLE device, resource;
    D3DDDI_ALLOCATIONINFO info[2];
    NTSTATUS status;
};

static void join_resource(void *arg)
{
    struct joiner *j = arg;
    static unsigned char data[4];
    D3DKMT_CREATEALLOCATION ca = { 0 };

    for (unsigned i = 0; i < 2; i++) {
        j->info[i].pPrivateDriverData = data;
        j->info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = j->device;
    ca.hResource = j->resource;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = j->info;
    j->status = D3DKMTCreateAllocation(&ca);
}

START_TEST(join_of_a_resource_destroyed_meanwhile)
{
    struct rec_thread t;
    struct joiner j = { 0 };
    struct rec_objects r;
    const struct record_call *create, *rollback, *last;
    D3DKMT_HANDLE device;
    unsigned from, c, cl, d1, d2;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, true, &r);
    j.device = device;
    j.resource = r.resource;
    j.status = -1;
    from = record_log_count();
    record_block(RECORD_CREATE_ALLOCATION);
    rec_thread_start(&t, join_resource, &j);
    ck_assert(record_wait_blocked(5000));
    ck_assert_status(rec_destroy_resource(device, r.resource), STATUS_SUCCESS);
    /* the joining create still holds the resource: the KMD's copy stays */
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_ALLOCATION), 0);
    record_unblock();
    rec_thread_join(&t);
    ck_assert_status(j.status, STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(j.info[0].hAllocation, 0);

    c = record_log_find(RECORD_CREATE_ALLOCATION, from);
    cl = record_log_find(RECORD_CLOSE_ALLOCATION, from);
    d1 = record_log_find(RECORD_DESTROY_ALLOCATION, from);
    d2 = record_log_find(RECORD_DESTROY_ALLOCATION, d1 + 1);
    create = rec_entry(c);
    rollback = rec_entry(d1);
    last = rec_entry(d2);
    ck_assert_ptr_eq(create->resource_in, r.driver_resource);   /* joining: the KMD's resource */
    ck_assert_uint_eq(create->flags, 1);
    ck_assert_uint_lt(cl, d1);
    ck_assert_uint_eq(rollback->num, 2);                        /* the new ones go first, alone */
    ck_assert(rec_call_lists(rollback, create->allocs[0].handle));
    ck_assert(rec_call_lists(rollback, create->allocs[1].handle));
    ck_assert_ptr_eq(rollback->resource_in, r.driver_resource);
    ck_assert_uint_eq(rollback->flags, 0);
    ck_assert_uint_eq(last->num, 1);                            /* then the resource with its own */
    ck_assert_ptr_eq(last->allocs[0].handle, r.driver[0]);
    ck_assert_uint_eq(last->flags, 1);
    rec_finish();
}
END_TEST

START_TEST(join_of_a_live_resource)
{
    struct joiner j = { 0 };
    struct rec_objects r;
    const struct record_call *create, *destroy;
    D3DKMT_HANDLE device;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, true, &r);
    j.device = device;
    j.resource = r.resource;
    from = record_log_count();
    join_resource(&j);
    ck_assert_status(j.status, STATUS_SUCCESS);
    create = rec_entry(record_log_find(RECORD_CREATE_ALLOCATION, from));
    ck_assert_ptr_eq(create->resource_in, r.driver_resource);
    ck_assert_ptr_eq(create->resource_out, r.driver_resource);
    ck_assert_uint_eq(create->flags, 1);
    ck_assert_uint_eq(rec_resolve(kmt_test_open_adapter(), j.info[1].hAllocation, DXGK_HANDLE_ALLOCATION),
                      (uintptr_t)create->allocs[1].handle);
    ck_assert_status(rec_destroy_resource(device, r.resource), STATUS_SUCCESS);
    destroy = rec_entry(record_log_find_last(RECORD_DESTROY_ALLOCATION));
    ck_assert_uint_eq(destroy->num, 3);
    ck_assert_uint_eq(destroy->flags, 1);
    rec_finish();
}
END_TEST

/* ---- devices ---------------------------------------------------------------------- */

START_TEST(create_device_exact_args)
{
    const struct record_call *call;
    D3DKMT_CREATEDEVICE cd = { 0 };
    unsigned from;

    rec_use("record");
    cd.hAdapter = kmt_test_open_adapter();
    cd.Flags.LegacyMode = 1;
    from = record_log_count();
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ck_assert_local_handle(cd.hDevice);
    call = rec_entry(record_log_find(RECORD_CREATE_DEVICE, from));
    ck_assert_ptr_nonnull(call->core_device);         /* the core's handle, for callbacks */
    ck_assert_ptr_nonnull(call->device);
    ck_assert_ptr_ne(call->device, call->core_device);
    ck_assert_uint_eq(call->num, 1);                  /* pInfo given */
    ck_assert_uint_eq(call->flags, 0);                /* neither SystemDevice nor GdiDevice */
    ck_assert_ptr_null(cd.pCommandBuffer);
    ck_assert_ptr_null(cd.pAllocationList);
    rec_finish();
}
END_TEST

START_TEST(create_device_failure_and_null_handle)
{
    D3DKMT_CREATEDEVICE cd = { 0 };
    unsigned live;

    rec_use("record");
    cd.hAdapter = kmt_test_open_adapter();
    live = KmtLiveObjectCount();
    record_fail_call(RECORD_CREATE_DEVICE, 1, STATUS_NO_MEMORY);
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_NO_MEMORY);
    ck_assert_uint_eq(cd.hDevice, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);

    record_null_handle(RECORD_CREATE_DEVICE, 1, 0);
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_UNSUCCESSFUL);
    ck_assert_uint_eq(cd.hDevice, 0);
    ck_assert_uint_eq(KmtLiveObjectCount(), live);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 0);

    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ck_assert_local_handle(cd.hDevice);
    rec_finish();
}
END_TEST

START_TEST(destroy_device_driver_failure_ignored)
{
    D3DKMT_HANDLE device;

    rec_use("record");
    device = rec_device(NULL, NULL);
    record_fail_call(RECORD_DESTROY_DEVICE, 1, STATUS_UNSUCCESSFUL);
    ck_assert_status(rec_destroy_device(device), STATUS_SUCCESS);
    ck_assert_int_eq(rec_entry(record_log_find_last(RECORD_DESTROY_DEVICE))->status,
                     STATUS_UNSUCCESSFUL);
    ck_assert_status(rec_destroy_device(device), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_DESTROY_DEVICE), 1);
    rec_finish();
}
END_TEST

/* ---- escape ------------------------------------------------------------------------ */

static NTSTATUS echo(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, unsigned char *buf, UINT size, UINT flags)
{
    D3DKMT_ESCAPE esc = { 0 };
    UINT header[2] = { RECORD_ESCAPE_MAGIC, RECORD_ESCAPE_ECHO };

    memcpy(buf, header, sizeof(header));
    for (UINT i = 8; i < size; i++)
        buf[i] = (unsigned char)i;
    esc.hAdapter = adapter;
    esc.hDevice = device;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.Flags.Value = flags;
    esc.pPrivateDriverData = buf;
    esc.PrivateDriverDataSize = size;
    return D3DKMTEscape(&esc);
}

START_TEST(escape_routed_to_the_adapter)
{
    unsigned char buf[1000];
    const struct record_call *call;
    D3DKMT_HANDLE adapter;
    unsigned from;

    rec_use("record");
    adapter = kmt_test_open_adapter();
    from = record_log_count();
    ck_assert_status(echo(adapter, 0, buf, sizeof(buf), 1 /* HardwareAccess */), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count(), from + 1);
    call = rec_entry(from);
    ck_assert_int_eq(call->ddi, RECORD_ESCAPE);
    ck_assert_ptr_null(call->device);
    ck_assert_uint_eq(call->priv_size, sizeof(buf));
    ck_assert_uint_eq(call->flags, 1);
    ck_assert_uint_eq(call->type, RECORD_ESCAPE_ECHO);
    for (UINT i = 8; i < sizeof(buf); i++) {
        ck_assert_uint_eq(call->priv[i], (unsigned char)i);       /* what the caller sent */
        ck_assert_uint_eq(buf[i], (unsigned char)~i);             /* what the KMD answered */
    }
    rec_finish();
}
END_TEST

START_TEST(escape_routed_with_the_device)
{
    unsigned char buf[16];
    D3DKMT_HANDLE adapter, device;
    HANDLE drv_device;

    rec_use("record");
    device = rec_device(&adapter, &drv_device);
    ck_assert_status(echo(adapter, device, buf, sizeof(buf), 0), STATUS_SUCCESS);
    ck_assert_ptr_eq(rec_entry(last_of(RECORD_ESCAPE))->device, drv_device);
    ck_assert_uint_eq(rec_entry(last_of(RECORD_ESCAPE))->priv_size, 16);
    rec_finish();
}
END_TEST

START_TEST(escape_failure_status_and_answer_returned)
{
    unsigned char buf[12];
    D3DKMT_HANDLE adapter;

    rec_use("record");
    adapter = kmt_test_open_adapter();
    record_fail_call(RECORD_ESCAPE, 1, STATUS_PRIVILEGED_INSTRUCTION);
    ck_assert_status(echo(adapter, 0, buf, sizeof(buf), 0), STATUS_PRIVILEGED_INSTRUCTION);
    ck_assert_uint_eq(buf[8], (unsigned char)~8);
    ck_assert_uint_eq(buf[11], (unsigned char)~11);
    rec_finish();
}
END_TEST

START_TEST(escape_device_of_another_adapter)
{
    struct record_config cfg;
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    unsigned char buf[16];
    unsigned from;

    record_default_config(&cfg);
    cfg.devices = 2;
    rec_use_config("record", &cfg);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 2);
    cd.hAdapter = info[0].hAdapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    from = record_log_count();
    ck_assert_status(echo(info[1].hAdapter, cd.hDevice, buf, sizeof(buf), 0), STATUS_INVALID_PARAMETER);
    ck_assert_status(echo(info[0].hAdapter, info[1].hAdapter, buf, sizeof(buf), 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count(), from);        /* never reached a miniport */
    ck_assert_status(rec_destroy_device(cd.hDevice), STATUS_SUCCESS);
    ck_assert_status(echo(info[0].hAdapter, cd.hDevice, buf, sizeof(buf), 0), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ESCAPE), 0);
    rec_finish();
}
END_TEST

/* ---- QueryAdapterInfo ---------------------------------------------------------------- */

static NTSTATUS qai(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };

    return D3DKMTQueryAdapterInfo(&q);
}

static void set_wide(WCHAR *dst, const char *src)
{
    size_t i = 0;

    for (; src[i]; i++)
        dst[i] = (unsigned char)src[i];
    dst[i] = 0;
}

START_TEST(qai_umdrivername_from_the_miniport)
{
    struct record_config cfg;
    D3DKMT_UMDFILENAMEINFO name;
    D3DKMT_HANDLE adapter;

    record_default_config(&cfg);
    set_wide(cfg.desc.UmdFileName[KMTUMDVERSION_DX9], "rec_d3d9.dll");
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();

    memset(&name, 0xff, sizeof(name));
    name.Version = KMTUMDVERSION_DX9;
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERNAME, &name, sizeof(name)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "rec_d3d9.dll"));
    name.Version = KMTUMDVERSION_DX11;
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERNAME, &name, sizeof(name)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "record_umd11.dll"));
    ck_assert_uint_eq(name.Version, KMTUMDVERSION_DX11);
    name.Version = KMTUMDVERSION_DX12;
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERNAME, &name, sizeof(name)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(name.UmdFileName, "record_umd12.dll"));
    /* a version the driver ships no UMD for, and one past the enum */
    name.Version = KMTUMDVERSION_DX10;
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERNAME, &name, sizeof(name)),
                     STATUS_OBJECT_NAME_NOT_FOUND);
    name.Version = NUM_KMTUMDVERSIONS;
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERNAME, &name, sizeof(name)), STATUS_INVALID_PARAMETER);
    name.Version = KMTUMDVERSION_DX11;
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERNAME, &name, sizeof(name) - 1),
                     STATUS_INVALID_PARAMETER);
    rec_finish();
}
END_TEST

START_TEST(qai_umopenglinfo_from_the_miniport)
{
    struct record_config cfg;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    record_default_config(&cfg);
    set_wide(cfg.desc.OpenGlIcdFileName, "C:\\Windows\\System32\\recgl64.dll");
    cfg.desc.OpenGlVersion = 0x4321;
    cfg.desc.OpenGlFlags = 0x9;
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();
    memset(&gl, 0xff, sizeof(gl));
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(gl.UmdOpenGlIcdFileName, "C:\\Windows\\System32\\recgl64.dll"));
    ck_assert_uint_eq(gl.Version, 0x4321);
    ck_assert_uint_eq(gl.Flags, 0x9);
    {
        unsigned char big[sizeof(gl) + 1] = { 0 };    /* one byte more than the type */
        ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, big, sizeof(big)), STATUS_INVALID_PARAMETER);
    }
    rec_finish();
}
END_TEST

START_TEST(qai_umopenglinfo_without_icd)
{
    struct record_config cfg;
    D3DKMT_OPENGLINFO gl;
    D3DKMT_HANDLE adapter;

    record_default_config(&cfg);
    memset(cfg.desc.OpenGlIcdFileName, 0, sizeof(cfg.desc.OpenGlIcdFileName));
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();
    ck_assert_status(qai(adapter, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)), STATUS_OBJECT_NAME_NOT_FOUND);
    rec_finish();
}
END_TEST

START_TEST(qai_values_from_the_miniport)
{
    struct record_config cfg;
    D3DKMT_DRIVERVERSION version;
    D3DKMT_ADAPTERTYPE type;
    D3DKMT_WDDM_2_7_CAPS caps;
    D3DKMT_ADAPTERADDRESS addr;
    D3DKMT_SEGMENTSIZEINFO seg;
    D3DKMT_QUERY_DEVICE_IDS ids = { 0 };
    KMT_ADAPTER_DESCRIPTION desc;
    D3DKMT_HANDLE adapter;
    BOOL pending;
    UINT count;

    record_default_config(&cfg);
    cfg.caps.WDDMVersion = KMT_DRIVERVERSION_WDDM_2_9;
    cfg.caps.Wddm27Caps.Value = 0x5;
    cfg.caps.PhysicalAdapterCount = 2;
    cfg.desc.AdapterType.Value = 0;
    cfg.desc.AdapterType.RenderSupported = 1;
    cfg.desc.AdapterType.HybridDiscrete = 1;
    cfg.desc.DriverUpdatePending = TRUE;
    cfg.desc.DeviceIds.DeviceID = 0x4242;
    rec_use_config("record", &cfg);
    adapter = kmt_test_open_adapter();

    ck_assert_status(qai(adapter, KMTQAITYPE_DRIVERVERSION, &version, sizeof(version)), STATUS_SUCCESS);
    ck_assert_int_eq(version, KMT_DRIVERVERSION_WDDM_2_9);
    ck_assert_status(qai(adapter, KMTQAITYPE_ADAPTERTYPE, &type, sizeof(type)), STATUS_SUCCESS);
    ck_assert_uint_eq(type.Value, 0x11);
    ck_assert_status(qai(adapter, KMTQAITYPE_WDDM_2_7_CAPS, &caps, sizeof(caps)), STATUS_SUCCESS);
    ck_assert_uint_eq(caps.Value, 0x5);
    ck_assert_status(qai(adapter, KMTQAITYPE_PHYSICALADAPTERCOUNT, &count, sizeof(count)), STATUS_SUCCESS);
    ck_assert_uint_eq(count, 2);
    ids.PhysicalAdapterIndex = 1;
    ck_assert_status(qai(adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)), STATUS_SUCCESS);
    ck_assert_uint_eq(ids.DeviceIds.VendorID, 0xabcd);
    ck_assert_uint_eq(ids.DeviceIds.DeviceID, 0x4242);
    ck_assert_uint_eq(ids.DeviceIds.RevisionID, 0x07);
    ids.PhysicalAdapterIndex = 2;
    ck_assert_status(qai(adapter, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &ids, sizeof(ids)),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(qai(adapter, KMTQAITYPE_ADAPTERADDRESS, &addr, sizeof(addr)), STATUS_SUCCESS);
    ck_assert_uint_eq(addr.BusNumber, 3);
    ck_assert_uint_eq(addr.DeviceNumber, 4);
    ck_assert_uint_eq(addr.FunctionNumber, 5);
    ck_assert_status(qai(adapter, KMTQAITYPE_CHECKDRIVERUPDATESTATUS, &pending, sizeof(pending)),
                     STATUS_SUCCESS);
    ck_assert_int_eq(pending, TRUE);
    ck_assert_status(qai(adapter, KMTQAITYPE_GETSEGMENTSIZE, &seg, sizeof(seg)), STATUS_SUCCESS);
    ck_assert_uint_eq(seg.DedicatedVideoMemorySize, 512ull << 20);
    ck_assert_uint_eq(seg.SharedSystemMemorySize, 2048ull << 20);
    ck_assert_uint_eq(seg.DedicatedSystemMemorySize, 0);

    ck_assert_status(KmtQueryAdapterDescription(adapter, &desc), STATUS_SUCCESS);
    ck_assert_str_eq(desc.DriverName, "record");
    ck_assert_str_eq(desc.Description, "kmtshim recording miniport rec0");
    ck_assert_str_eq(desc.LocationId, "rec0");
    rec_finish();
}
END_TEST

START_TEST(qai_umdriverprivate_forwarded)
{
    unsigned char buf[32];
    const struct record_call *call;
    D3DKMT_HANDLE adapter;
    unsigned from;

    rec_use("record");
    adapter = kmt_test_open_adapter();
    memset(buf, 0, sizeof(buf));
    from = record_log_count();
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERPRIVATE, buf, sizeof(buf)), STATUS_SUCCESS);
    for (unsigned i = 0; i < 16; i++)
        ck_assert_uint_eq(buf[i], 0x10 + i);
    call = rec_entry(record_log_find(RECORD_QUERY_ADAPTER_INFO, from));
    ck_assert_uint_eq(call->type, DXGKQAITYPE_UMDRIVERPRIVATE);
    ck_assert_uint_eq(call->out_size, sizeof(buf));
    ck_assert_uint_eq(call->in_size, 0);
    /* the miniport's own answer to a short buffer comes back unchanged */
    ck_assert_status(qai(adapter, KMTQAITYPE_UMDRIVERPRIVATE, buf, 8), STATUS_BUFFER_TOO_SMALL);
    rec_finish();
}
END_TEST

/* A miniport without the registry strings or the performance types: the
 * description and the driver's name, and zeros.  The core asks with the
 * engine and physical adapter as KMT_PERFDATA_IN, after checking both. */
START_TEST(qai_registry_and_perfdata_defaults_without_the_miniports_answer)
{
    D3DKMT_ADAPTERREGISTRYINFO reg;
    D3DKMT_NODE_PERFDATA node;
    const struct record_call *call;
    D3DKMT_HANDLE adapter;
    unsigned from;

    rec_use("record");
    adapter = kmt_test_open_adapter();
    memset(&reg, 0xcc, sizeof(reg));
    ck_assert_status(qai(adapter, KMTQAITYPE_ADAPTERREGISTRYINFO, &reg, sizeof(reg)), STATUS_SUCCESS);
    ck_assert(rec_wide_equals(reg.AdapterString, "kmtshim recording miniport rec0"));
    ck_assert(rec_wide_equals(reg.ChipType, "record"));
    ck_assert(rec_wide_equals(reg.BiosString, "") && rec_wide_equals(reg.DacType, ""));

    memset(&node, 0xcc, sizeof(node));
    node.NodeOrdinal = 0;
    node.PhysicalAdapterIndex = 0;
    from = record_log_count();
    ck_assert_status(qai(adapter, KMTQAITYPE_NODEPERFDATA, &node, sizeof(node)), STATUS_SUCCESS);
    ck_assert(node.Frequency == 0 && node.MaxFrequency == 0 && node.Voltage == 0 && node.Reserved == 0);
    call = rec_entry(record_log_find(RECORD_QUERY_ADAPTER_INFO, from));
    ck_assert_uint_eq(call->type, DXGKQAITYPE_NODEPERFDATA);
    ck_assert_uint_eq(call->in_size, sizeof(KMT_PERFDATA_IN));
    ck_assert_uint_eq(call->out_size, sizeof(DXGK_NODE_PERFDATA));
    /* refused before the miniport is asked */
    from = record_log_count();
    node.NodeOrdinal = 99;
    ck_assert_status(qai(adapter, KMTQAITYPE_NODEPERFDATA, &node, sizeof(node)), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_find(RECORD_QUERY_ADAPTER_INFO, from), RECORD_NONE);
    rec_finish();
}
END_TEST

START_TEST(query_video_memory_from_the_miniport)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q = { 0 };
    struct rec_objects objs;
    const struct record_call *call;
    D3DKMT_HANDLE adapter, device;
    unsigned from;

    rec_use("record");
    device = rec_device(&adapter, NULL);
    rec_create_ok(device, 2, false, &objs);
    q.hAdapter = adapter;
    q.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    from = record_log_count();
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.Budget, 256ull << 20);
    ck_assert_uint_eq(q.AvailableForReservation, 128ull << 20);
    ck_assert_uint_eq(q.CurrentUsage, 2 * 0x2000);      /* the sizes the KMD reported */
    call = rec_entry(record_log_find(RECORD_QUERY_ADAPTER_INFO, from));
    ck_assert_uint_eq(call->type, DXGKQAITYPE_KMT_MEMORYUSAGE);
    ck_assert_uint_eq(call->in_size, sizeof(UINT));
    ck_assert_uint_eq(call->input, 0);

    q.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.Budget, 1024ull << 20);
    ck_assert_uint_eq(q.AvailableForReservation, 512ull << 20);
    ck_assert_uint_eq(q.CurrentUsage, 0);
    ck_assert_uint_eq(rec_entry(last_of(RECORD_QUERY_ADAPTER_INFO))->input, 1);

    ck_assert_status(rec_destroy_list(device, objs.handles, 2), STATUS_SUCCESS);
    q.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    ck_assert_status(D3DKMTQueryVideoMemoryInfo(&q), STATUS_SUCCESS);
    ck_assert_uint_eq(q.CurrentUsage, 0);
    rec_finish();
}
END_TEST

START_TEST(start_up_queries)
{
    rec_use("record");
    kmt_test_open_adapter();
    /* caps, segments, the description and the registry strings are read
     * once, at start */
    ck_assert_uint_ne(record_log_find(RECORD_START_DEVICE, 0), RECORD_NONE);
    for (unsigned i = 0, type = 0; type < 4; type++) {
        static const UINT expected[4] = { DXGKQAITYPE_DRIVERCAPS, DXGKQAITYPE_QUERYSEGMENT,
                                          DXGKQAITYPE_KMT_ADAPTERDESC, DXGKQAITYPE_KMT_REGISTRYINFO };
        static const UINT sizes[4] = { sizeof(DXGK_DRIVERCAPS), sizeof(DXGK_QUERYSEGMENTOUT),
                                       sizeof(KMT_ADAPTER_DESC), sizeof(D3DKMT_ADAPTERREGISTRYINFO) };
        i = record_log_find(RECORD_QUERY_ADAPTER_INFO, i);
        ck_assert_uint_ne(i, RECORD_NONE);
        ck_assert_uint_gt(i, record_log_find(RECORD_START_DEVICE, 0));
        ck_assert_uint_eq(rec_entry(i)->type, expected[type]);
        ck_assert_uint_eq(rec_entry(i)->out_size, sizes[type]);
        i++;
    }
    ck_assert_uint_eq(record_log_count_ddi(RECORD_QUERY_ADAPTER_INFO), 4);
    rec_finish();
}
END_TEST

/* ---- Lock / Unlock --------------------------------------------------------------------- */

START_TEST(lock_exact_args)
{
    struct rec_objects objs;
    const struct record_call *call;
    D3DKMT_LOCK lock = { 0 };
    UINT pages[2] = { 0, 1 };
    D3DKMT_HANDLE device;
    void *again;
    unsigned from;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, false, &objs);
    lock.hDevice = device;
    lock.hAllocation = objs.handles[0];
    lock.NumPages = 2;
    lock.pPages = pages;
    lock.Flags.WriteOnly = 1;
    lock.Flags.Discard = 1;
    lock.Flags.LockEntire = 1;
    from = record_log_count();
    ck_assert_status(D3DKMTLock(&lock), STATUS_SUCCESS);
    call = rec_entry(record_log_find(RECORD_LOCK, from));
    ck_assert_ptr_eq(call->allocs[0].handle, objs.driver[0]);
    ck_assert_uint_eq(call->flags, (1u << 1) | (1u << 4));   /* DXGK_LOCKFLAGS WriteOnly, Discard */
    ck_assert_uint_eq(call->num_pages, 2);
    ck_assert_uint_eq(call->pages[1], 1);
    ck_assert_ptr_eq(lock.pData, call->data);
    ck_assert_uint_eq(lock.GpuVirtualAddress, 0x100000000000ull);
    memset(lock.pData, 0x3c, 0x2000);

    /* nested: the mapping is reused */
    ck_assert_status(rec_lock2(device, objs.handles[0], &again), STATUS_SUCCESS);
    ck_assert_ptr_eq(again, lock.pData);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_LOCK), 1);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOCK), 0);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOCK), 1);
    call = rec_entry(last_of(RECORD_UNLOCK));
    ck_assert_ptr_eq(call->allocs[0].handle, objs.driver[0]);
    ck_assert_ptr_eq(call->data, lock.pData);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_INVALID_PARAMETER);
    rec_finish();
}
END_TEST

/* A locked address is writable whatever the flags, so a nested write lock
 * of a ReadOnly mapping may write: the last unlock has the miniport push
 * the memory back (a WriteOnly lock and unlock, nothing fetched, no wait).
 * A nest of ReadOnly locks pushes nothing. */
START_TEST(write_under_a_read_only_lock_is_pushed)
{
    D3DDDICB_LOCKFLAGS ro = { .Value = 0 };
    const struct record_call *call;
    struct rec_objects objs;
    D3DKMT_LOCK lock = { 0 };
    D3DKMT_HANDLE device;
    unsigned first, unlock, push;
    void *again;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, false, &objs);
    ro.ReadOnly = 1;
    lock.hDevice = device;
    lock.hAllocation = objs.handles[0];
    lock.Flags = ro;
    for (int writes = 0; writes < 2; writes++) {
        unsigned from = record_log_count();

        ck_assert_status(D3DKMTLock(&lock), STATUS_SUCCESS);
        first = record_log_find(RECORD_LOCK, from);
        ck_assert_uint_eq(rec_entry(first)->flags, 1u);          /* ReadOnly */
        if (writes) {
            ck_assert_status(rec_lock2(device, objs.handles[0], &again), STATUS_SUCCESS);
        } else {
            ck_assert_status(D3DKMTLock(&lock), STATUS_SUCCESS);
            again = lock.pData;
        }
        ck_assert_ptr_eq(again, lock.pData);
        ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
        ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
        unlock = record_log_find(RECORD_UNLOCK, from);
        ck_assert_uint_ne(unlock, RECORD_NONE);
        push = record_log_find(RECORD_LOCK, first + 1);
        if (!writes) {
            ck_assert_uint_eq(push, RECORD_NONE);
            continue;
        }
        ck_assert_uint_gt(push, unlock);
        call = rec_entry(push);
        ck_assert_ptr_eq(call->allocs[0].handle, objs.driver[0]);
        ck_assert_uint_eq(call->flags, (1u << 1) | (1u << 3));   /* WriteOnly, IgnoreSync */
        ck_assert_uint_gt(last_of(RECORD_UNLOCK), push);
        ck_assert_ptr_eq(rec_entry(last_of(RECORD_UNLOCK))->data, call->data);
    }
    /* the next plain lock is a plain lock again: no push after it */
    first = record_log_count();
    ck_assert_status(rec_lock2(device, objs.handles[0], &again), STATUS_SUCCESS);
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_SUCCESS);
    ck_assert_uint_eq(record_log_find(RECORD_LOCK, record_log_find(RECORD_LOCK, first) + 1), RECORD_NONE);
    rec_finish();
}
END_TEST

START_TEST(lock_failure_from_the_miniport)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device;
    void *data = NULL;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 1, false, &objs);
    record_fail_call(RECORD_LOCK, 1, STATUS_NO_MEMORY);
    ck_assert_status(rec_lock2(device, objs.handles[0], &data), STATUS_NO_MEMORY);
    ck_assert_ptr_null(data);
    /* nothing was locked: nothing to unlock */
    ck_assert_status(rec_unlock2(device, objs.handles[0]), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOCK), 0);
    ck_assert_status(rec_lock2(device, objs.handles[0], &data), STATUS_SUCCESS);
    ck_assert_ptr_nonnull(data);
    rec_finish();
}
END_TEST

START_TEST(destroy_of_a_locked_allocation_unlocks_first)
{
    struct rec_objects objs;
    D3DKMT_HANDLE device;
    void *data;
    unsigned from, u, c, d;

    rec_use("record");
    device = rec_device(NULL, NULL);
    rec_create_ok(device, 2, true, &objs);
    ck_assert_status(rec_lock2(device, objs.handles[1], &data), STATUS_SUCCESS);
    ck_assert_status(rec_lock2(device, objs.handles[1], &data), STATUS_SUCCESS);
    from = record_log_count();
    ck_assert_status(rec_destroy_resource(device, objs.resource), STATUS_SUCCESS);
    u = record_log_find(RECORD_UNLOCK, from);
    c = record_log_find(RECORD_CLOSE_ALLOCATION, from);
    d = record_log_find(RECORD_DESTROY_ALLOCATION, from);
    ck_assert_uint_ne(u, RECORD_NONE);
    ck_assert_uint_lt(u, c);
    ck_assert_uint_lt(c, d);
    ck_assert_ptr_eq(rec_entry(u)->allocs[0].handle, objs.driver[1]);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOCK), 1);   /* once, whatever the nesting */
    rec_finish();
}
END_TEST

/* ---- the recorder itself: it must flag what the core must never do ------------------- */

static DRIVER_INITIALIZATION_DATA direct_ddi;
static HANDLE direct_handles[8];          /* "core handle" i -> driver allocation */

static NTSTATUS APIENTRY capture_init(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *data)
{
    direct_ddi = *data;
    return STATUS_SUCCESS;
}

static PVOID APIENTRY direct_get_handle_data(const DXGKARGCB_GETHANDLEDATA *args)
{
    return args->hObject < 8 ? direct_handles[args->hObject] : NULL;
}

struct direct {
    PVOID adapter;
    HANDLE device;
    HANDLE resource;
    HANDLE alloc[2];
    HANDLE binding[2];
};

/* The recording miniport driven without the core, the way a broken core would. */
static void direct_start(struct direct *d)
{
    KMT_DXGKRNL_EXPORTS exports = { sizeof(exports), KMT_MINIPORT_INTERFACE_VERSION, capture_init };
    KMT_PHYSICAL_DEVICE pdo[KMT_MAX_PHYSICAL_DEVICES];
    DXGKRNL_INTERFACE iface = { 0 };
    DXGK_START_INFO start = { 0 };
    DXGK_DEVICEINFO info;
    DXGKARG_CREATEDEVICE cd = { 0 };
    ULONG sources, children;
    UINT n = KMT_MAX_PHYSICAL_DEVICES;

    memset(d, 0, sizeof(*d));
    iface.Size = sizeof(iface);
    iface.Version = KMT_MINIPORT_INTERFACE_VERSION;
    iface.DxgkCbGetHandleData = direct_get_handle_data;
    ck_assert_status(RecordMiniportDriverEntry(NULL, &exports), STATUS_SUCCESS);
    ck_assert_status(direct_ddi.KmtDdiEnumPhysicalDevices(NULL, &n, pdo), STATUS_SUCCESS);
    ck_assert_status(direct_ddi.DxgkDdiAddDevice(&pdo[0], &d->adapter), STATUS_SUCCESS);
    ck_assert_status(direct_ddi.DxgkDdiStartDevice(d->adapter, &start, &iface, &sources, &children),
                     STATUS_SUCCESS);
    cd.hDevice = (HANDLE)0x1000;
    cd.pInfo = &info;
    ck_assert_status(direct_ddi.DxgkDdiCreateDevice(d->adapter, &cd), STATUS_SUCCESS);
    d->device = cd.hDevice;
}

/* Create `count` allocations (a resource if asked) and Open(Create) them. */
static void direct_create(struct direct *d, UINT count, bool resource)
{
    DXGK_ALLOCATIONINFO info[2];
    DXGK_OPENALLOCATIONINFO open[2];
    DXGKARG_CREATEALLOCATION ca = { 0 };
    DXGKARG_OPENALLOCATION oa = { 0 };

    memset(info, 0, sizeof(info));
    memset(open, 0, sizeof(open));
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    ca.Flags.Resource = resource;
    ck_assert_status(direct_ddi.DxgkDdiCreateAllocation(d->adapter, &ca), STATUS_SUCCESS);
    d->resource = ca.hResource;
    for (UINT i = 0; i < count; i++) {
        d->alloc[i] = direct_handles[i] = info[i].hAllocation;
        open[i].hAllocation = i;
    }
    oa.NumAllocations = count;
    oa.pOpenAllocation = open;
    oa.Flags.Create = 1;
    ck_assert_status(direct_ddi.DxgkDdiOpenAllocation(d->device, &oa), STATUS_SUCCESS);
    for (UINT i = 0; i < count; i++)
        d->binding[i] = open[i].hDeviceSpecificAllocation;
}

static void direct_close(struct direct *d, UINT count)
{
    DXGKARG_CLOSEALLOCATION args = { count, d->binding };

    direct_ddi.DxgkDdiCloseAllocation(d->device, &args);
}

static void direct_destroy(struct direct *d, UINT count, bool destroy_resource)
{
    DXGKARG_DESTROYALLOCATION args = { 0 };

    args.NumAllocations = count;
    args.pAllocationList = d->alloc;
    args.hResource = d->resource;
    args.Flags.DestroyResource = destroy_resource;
    direct_ddi.DxgkDdiDestroyAllocation(d->adapter, &args);
}

static void direct_stop(struct direct *d)
{
    direct_ddi.DxgkDdiStopDevice(d->adapter);
    direct_ddi.DxgkDdiRemoveDevice(d->adapter);
    direct_ddi.DxgkDdiUnload();
}

static void assert_flagged(const char *what)
{
    for (unsigned i = 0; record_violation(i); i++)
        if (strstr(record_violation(i), what))
            return;
    record_log_dump();
    ck_abort_msg("the recorder did not flag \"%s\"", what);
}

START_TEST(recorder_accepts_the_contract)
{
    struct direct d;

    direct_start(&d);
    direct_create(&d, 2, true);
    direct_close(&d, 2);
    direct_destroy(&d, 2, true);
    ck_assert_status(direct_ddi.DxgkDdiDestroyDevice(d.device), STATUS_SUCCESS);
    direct_stop(&d);
    rec_assert_no_violations();
}
END_TEST

START_TEST(recorder_flags_destroy_with_open_binding)
{
    struct direct d;

    direct_start(&d);
    direct_create(&d, 1, false);
    direct_destroy(&d, 1, false);
    assert_flagged("open bindings");
}
END_TEST

START_TEST(recorder_flags_double_destroy)
{
    struct direct d;

    direct_start(&d);
    direct_create(&d, 1, false);
    direct_close(&d, 1);
    direct_destroy(&d, 1, false);
    ck_assert_uint_eq(record_violation_count(), 0);
    direct_destroy(&d, 1, false);
    assert_flagged("destroyed twice");
    direct_close(&d, 1);
    assert_flagged("closed twice");
}
END_TEST

START_TEST(recorder_flags_use_after_destroy_device)
{
    struct direct d;
    DXGK_OPENALLOCATIONINFO open = { 0 };
    DXGKARG_OPENALLOCATION oa = { .NumAllocations = 1, .pOpenAllocation = &open };

    direct_start(&d);
    direct_create(&d, 1, false);
    ck_assert_status(direct_ddi.DxgkDdiDestroyDevice(d.device), STATUS_SUCCESS);
    assert_flagged("destroyed with 1 allocations and 1 bindings alive");
    direct_ddi.DxgkDdiOpenAllocation(d.device, &oa);
    assert_flagged("used after DxgkDdiDestroyDevice");
    ck_assert_uint_ge(record_violation_count(), 2);
}
END_TEST

START_TEST(recorder_flags_unknown_handles)
{
    struct direct d;
    HANDLE bogus = (HANDLE)&d;
    DXGKARG_DESTROYALLOCATION da = { .NumAllocations = 1, .pAllocationList = &bogus };
    DXGKARG_CLOSEALLOCATION cl = { 1, &bogus };
    DXGKARG_LOCK lock = { 0 };

    direct_start(&d);
    direct_ddi.DxgkDdiDestroyAllocation(d.adapter, &da);
    assert_flagged("unknown allocation");
    direct_ddi.DxgkDdiCloseAllocation(d.device, &cl);
    assert_flagged("unknown binding");
    lock.hAllocation = bogus;
    ck_assert_status(direct_ddi.DxgkDdiLock(d.adapter, &lock), STATUS_INVALID_PARAMETER);
    direct_ddi.DxgkDdiDestroyDevice(bogus);
    assert_flagged("unknown device");
}
END_TEST

START_TEST(recorder_flags_destroy_resource_with_allocations_left)
{
    struct direct d;

    direct_start(&d);
    direct_create(&d, 2, true);
    direct_close(&d, 2);
    direct_destroy(&d, 1, true);
    assert_flagged("destroyed with 1 allocations left");
}
END_TEST

START_TEST(recorder_flags_locked_destroy_and_stray_unlock)
{
    struct direct d;
    DXGKARG_LOCK lock = { 0 };
    DXGKARG_UNLOCK unlock = { 0 };

    direct_start(&d);
    direct_create(&d, 1, false);
    lock.hAllocation = d.alloc[0];
    ck_assert_status(direct_ddi.DxgkDdiLock(d.adapter, &lock), STATUS_SUCCESS);
    direct_close(&d, 1);
    direct_destroy(&d, 1, false);
    assert_flagged("destroyed while locked");

    direct_create(&d, 1, false);
    unlock.hAllocation = d.alloc[0];
    direct_ddi.DxgkDdiUnlock(d.adapter, &unlock);
    assert_flagged("was not locked");
}
END_TEST

START_TEST(recorder_flags_unload_with_objects_alive)
{
    struct direct d;

    direct_start(&d);
    direct_create(&d, 1, true);
    direct_ddi.DxgkDdiStopDevice(d.adapter);
    ck_assert_uint_eq(record_violation_count(), 0);       /* stopping is fine */
    direct_ddi.DxgkDdiRemoveDevice(d.adapter);
    assert_flagged("removed with objects alive");
    direct_ddi.DxgkDdiUnload();
    assert_flagged("DxgkDdiUnload with");
}
END_TEST

/* The software miniport's DxgkDdiLock: Discard clears the allocation even
 * when the lock also says ReadOnly (it clears through its mapping, which
 * must then be writable); the caller reads zeros, and nothing crashes. */
START_TEST(soft_lock_read_only_discard)
{
    D3DDDICB_LOCKFLAGS flags = { .Value = 0 };
    D3DKMT_LOCK lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    D3DKMT_HANDLE device, alloc;
    unsigned char *p;
    void *data;

    kmt_test_use_miniport("soft");
    device = kmt_test_create_device(NULL);
    ck_assert_status(kmt_test_create_allocations(device, 1, 2 * PAGE, &alloc, NULL), STATUS_SUCCESS);
    ck_assert_status(rec_lock2(device, alloc, &data), STATUS_SUCCESS);
    memset(data, 0xa5, 2 * PAGE);
    ck_assert_status(rec_unlock2(device, alloc), STATUS_SUCCESS);
    flags.ReadOnly = 1;
    flags.Discard = 1;
    lock.hDevice = device;
    lock.hAllocation = alloc;
    lock.Flags = flags;
    ck_assert_status(D3DKMTLock(&lock), STATUS_SUCCESS);
    p = lock.pData;
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p[0], 0);
    ck_assert_uint_eq(p[2 * PAGE - 1], 0);
    unlock.hDevice = device;
    unlock.hAllocation = alloc;
    ck_assert_status(D3DKMTUnlock2(&unlock), STATUS_SUCCESS);
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ddi_contract");
    TCase *create = tcase_create("create");
    TCase *destroy = tcase_create("destroy");
    TCase *rollback = tcase_create("rollback");
    TCase *device = tcase_create("device");
    TCase *escape = tcase_create("escape");
    TCase *query = tcase_create("query");
    TCase *lock = tcase_create("lock");
    TCase *recorder = tcase_create("recorder");

    tcase_add_test(create, create_standalone_exact_args);
    tcase_add_test(create, create_resource_exact_args);
    tcase_add_test(create, create_standard_allocation_args);
    tcase_add_test(create, create_existing_sysmem_args);
    tcase_add_test(create, create2_passes_the_same_args);
    tcase_add_test(create, create_private_data_is_in_out);
    tcase_add_test(create, open_create_follows_create);
    tcase_add_test(create, get_handle_data_after_create);
    suite_add_tcase(s, create);

    tcase_add_test(destroy, destroy_standalone_exact_args);
    tcase_add_test(destroy, destroy_list_is_one_ddi_call);
    tcase_add_test(destroy, destroy_resource_exact_args);
    tcase_add_test(destroy, destroy_resource_with_a_stale_list_is_the_same_call);
    tcase_add_test(destroy, destroy2_resource_with_a_stale_list_is_the_same_call);
    tcase_add_test(destroy, partial_destroy_keeps_the_resource);
    tcase_add_test(destroy, rewritten_hresource_is_kept);
    tcase_add_test(destroy, handle_data_read_while_hresource_rewritten);
    tcase_add_test(destroy, empty_resource_destroyed_with_no_allocations);
    tcase_add_test(destroy, close_always_before_destroy);
    tcase_add_test(destroy, destroy_device_is_the_last_call);
    suite_add_tcase(s, destroy);

    tcase_add_test(rollback, create_failure_standalone_no_ddi_destroy);
    tcase_add_test(rollback, create_failure_resource_no_ddi_destroy);
    tcase_add_test(rollback, create_failure_of_the_nth_call);
    tcase_add_test(rollback, open_failure_standalone_rollback);
    tcase_add_test(rollback, open_failure_resource_rollback);
    tcase_add_test(rollback, create_null_handle_rollback);
    tcase_add_test(rollback, open_null_handle_rollback);
    tcase_add_test(rollback, resource_open_failure_keeps_existing_objects);
    tcase_add_test(rollback, join_of_a_resource_destroyed_meanwhile);
    tcase_add_test(rollback, join_of_a_live_resource);
    suite_add_tcase(s, rollback);

    tcase_add_test(device, create_device_exact_args);
    tcase_add_test(device, create_device_failure_and_null_handle);
    tcase_add_test(device, destroy_device_driver_failure_ignored);
    suite_add_tcase(s, device);

    tcase_add_test(escape, escape_routed_to_the_adapter);
    tcase_add_test(escape, escape_routed_with_the_device);
    tcase_add_test(escape, escape_failure_status_and_answer_returned);
    tcase_add_test(escape, escape_device_of_another_adapter);
    suite_add_tcase(s, escape);

    tcase_add_test(query, qai_umdrivername_from_the_miniport);
    tcase_add_test(query, qai_umopenglinfo_from_the_miniport);
    tcase_add_test(query, qai_umopenglinfo_without_icd);
    tcase_add_test(query, qai_values_from_the_miniport);
    tcase_add_test(query, qai_umdriverprivate_forwarded);
    tcase_add_test(query, query_video_memory_from_the_miniport);
    tcase_add_test(query, start_up_queries);
    tcase_add_test(query, qai_registry_and_perfdata_defaults_without_the_miniports_answer);
    suite_add_tcase(s, query);

    tcase_add_test(lock, lock_exact_args);
    tcase_add_test(lock, lock_failure_from_the_miniport);
    tcase_add_test(lock, write_under_a_read_only_lock_is_pushed);
    tcase_add_test(lock, destroy_of_a_locked_allocation_unlocks_first);
    tcase_add_test(lock, soft_lock_read_only_discard);
    suite_add_tcase(s, lock);

    tcase_add_test(recorder, recorder_accepts_the_contract);
    tcase_add_test(recorder, recorder_flags_destroy_with_open_binding);
    tcase_add_test(recorder, recorder_flags_double_destroy);
    tcase_add_test(recorder, recorder_flags_use_after_destroy_device);
    tcase_add_test(recorder, recorder_flags_unknown_handles);
    tcase_add_test(recorder, recorder_flags_destroy_resource_with_allocations_left);
    tcase_add_test(recorder, recorder_flags_locked_destroy_and_stray_unlock);
    tcase_add_test(recorder, recorder_flags_unload_with_objects_alive);
    suite_add_tcase(s, recorder);
    return kmt_test_run(s);
}
