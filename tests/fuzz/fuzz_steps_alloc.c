/*
 * Steps on memory: CreateAllocation(2) with 1..N allocations, resources,
 * standard allocations and private data of every size; DestroyAllocation(2)
 * with lists, resources and flags; Lock(2) and Unlock(2).
 */
#include "config.h"

#include <string.h>

#include "fuzz_steps.h"

#define LISTED_MAX 16                   /* entries filled from the input */

/* Sizes up to 64 MiB, or past any budget: a Lock with Discard zeroes the
 * whole allocation, and gigabytes of that would only make the run slow. */
static UINT64 bounded(UINT64 v)
{
    return v > (64u << 20) && v < (1ull << 40) ? v | 1ull << 40 : v;
}

static UINT64 alloc_size(struct fuzz_prog *p)
{
    switch (fuzz_u8(&p->in) % 8) {
    case 0: return 0;
    case 1: return bounded(fuzz_u64(&p->in));
    case 2: return 1 + fuzz_u8(&p->in);
    case 3: return 65536;
    default: return 4096;
    }
}

/* One allocation's in-fields; returns the bytes the harness may touch after a Lock. */
static UINT64 fill_info(struct fuzz_prog *p, const void **sysmem, void **data, UINT *data_size,
                        D3DDDI_VIDEO_PRESENT_SOURCE_ID *vidpn, void *flags, bool existing)
{
    UINT64 size = alloc_size(p);
    uint8_t how = fuzz_u8(&p->in);
    void *desc = fuzz_arena_alloc(64);
    UINT n = desc ? fuzz_target.alloc_desc(desc, 64, size, fuzz_u8(&p->in) % 4 ? 0 : fuzz_u32(&p->in)) : 0;

    *data = desc;
    *data_size = n;
    if (how % 8 == 0)
        *data_size = fuzz_size(p, n);
    else if (how % 8 == 1)
        *data = fuzz_ptr(p, *data_size, true);
    else if (how % 8 == 2 && desc && n)
        *data = (void *)fuzz_read_only_copy(desc, n);   /* static const input */
    if (existing || how % 16 == 2) {
        switch (fuzz_u8(&p->in) % 4) {
        case 0: *sysmem = fuzz_unreadable_page(); break;
        case 1: *sysmem = (const void *)(uintptr_t)0xdead0000u; break;
        default: *sysmem = size >= 64 && size <= FUZZ_BLOCK_MAX ? fuzz_arena_alloc(size) : NULL;
        }
    }
    *vidpn = fuzz_u8(&p->in) % 8 ? 0 : fuzz_u32(&p->in);
    FUZZ_SET_FLAGS(*(UINT *)flags, fuzz_flags(p, 4));
    return size >= 64 && size <= (1u << 30) ? (size < 256 ? size : 256) : 0;
}

static D3DKMT_CREATESTANDARDALLOCATION *standard(struct fuzz_prog *p)
{
    D3DKMT_CREATESTANDARDALLOCATION *s = fuzz_ptr(p, sizeof(*s), false);

    if (fuzz_in_arena(s)) {
        s->Type = fuzz_u8(&p->in) % 4 ? D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP : fuzz_u8(&p->in);
        s->ExistingHeapData.Size = fuzz_u8(&p->in) % 4 ? 4096u << (fuzz_u8(&p->in) % 4) : bounded(fuzz_u64(&p->in));
        memset(&s->Flags, fuzz_u8(&p->in) % 8 ? 0 : 0xff, sizeof(s->Flags));
    }
    return s;
}

void step_create_allocation(struct fuzz_prog *p)
{
    /* CreateResource, CreateShared, ExistingSysMem, NtSecuritySharing,
     * StandardAllocation, and the rest now and then */
    static const UINT useful = 0x1u | 0x2u | 0x20u | 0x40u | 0x10000u;
    D3DKMT_CREATEALLOCATION c = { 0 };
    bool v2 = fuzz_u8(&p->in) & 1;
    size_t stride = v2 ? sizeof(D3DDDI_ALLOCATIONINFO2) : sizeof(D3DDDI_ALLOCATIONINFO);
    UINT flags = fuzz_u8(&p->in) % 8 ? fuzz_u32(&p->in) & useful : fuzz_u32(&p->in) & ~0x3ff00000u;
    UINT64 touch[LISTED_MAX] = { 0 };
    D3DKMT_HANDLE in_resource;
    UINT n, room;
    NTSTATUS s;

    c.hDevice = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
    c.hResource = fuzz_u8(&p->in) % 4 ? 0 : fuzz_pool_handle(&p->pool, FK_RESOURCE, &p->in);
    memcpy(&c.Flags, &flags, sizeof(flags));
    n = fuzz_u8(&p->in) % 8 ? fuzz_count(p, 4) : 9u + fuzz_u8(&p->in) % 8;   /* past the thunk's batch */
    c.NumAllocations = n;
    room = n < D3DKMT_CREATEALLOCATION_MAX ? n : D3DKMT_CREATEALLOCATION_MAX;
    c.pAllocationInfo = fuzz_ptr(p, room * stride, false);
    if (fuzz_u8(&p->in) % 4 == 0) {
        c.PrivateRuntimeDataSize = fuzz_size(p, 16);
        c.pPrivateRuntimeData = fuzz_ptr(p, c.PrivateRuntimeDataSize, true);
        if (fuzz_in_arena(c.pPrivateRuntimeData) && fuzz_u8(&p->in) % 4 == 0)
            c.pPrivateRuntimeData = fuzz_read_only_copy(c.pPrivateRuntimeData, c.PrivateRuntimeDataSize);
    }
    if (c.Flags.StandardAllocation) {
        c.pStandardAllocation = standard(p);
        c.PrivateDriverDataSize = fuzz_u8(&p->in) % 8 ? 0 : fuzz_size(p, 16);
    } else if (fuzz_u8(&p->in) % 4 == 0) {
        c.PrivateDriverDataSize = fuzz_size(p, 16);
        c.pPrivateDriverData = fuzz_ptr(p, c.PrivateDriverDataSize, true);
    }
    for (UINT i = 0; fuzz_in_arena(c.pAllocationInfo) && i < room && i < LISTED_MAX; i++) {
        if (v2) {
            D3DDDI_ALLOCATIONINFO2 *a = &c.pAllocationInfo2[i];
            touch[i] = fill_info(p, &a->pSystemMem, &a->pPrivateDriverData, &a->PrivateDriverDataSize,
                                 &a->VidPnSourceId, &a->Flags, c.Flags.ExistingSysMem);
        } else {
            D3DDDI_ALLOCATIONINFO *a = &c.pAllocationInfo[i];
            touch[i] = fill_info(p, &a->pSystemMem, &a->pPrivateDriverData, &a->PrivateDriverDataSize,
                                 &a->VidPnSourceId, &a->Flags, c.Flags.ExistingSysMem);
        }
    }
    in_resource = c.hResource;
    s = v2 ? D3DKMTCreateAllocation2(&c) : D3DKMTCreateAllocation(&c);
    if (s) {
        /* all or nothing: a failed create writes no output */
        for (UINT i = 0; fuzz_in_arena(c.pAllocationInfo) && i < room; i++)
            if (v2 ? c.pAllocationInfo2[i].hAllocation : c.pAllocationInfo[i].hAllocation)
                fuzz_finding("CreateAllocation failed with %#x and wrote hAllocation[%u]", (unsigned)s, i);
        if (c.hResource != in_resource || c.hGlobalShare)
            fuzz_finding("CreateAllocation failed with %#x and wrote hResource or hGlobalShare", (unsigned)s);
        return;
    }
    if (!fuzz_in_arena(c.pAllocationInfo))
        return;
    if (c.Flags.CreateResource)
        fuzz_pool_add(&p->pool, FK_RESOURCE, c.hResource, c.hDevice);
    fuzz_share_add_global(p, c.hGlobalShare);
    for (UINT i = 0; i < room; i++) {
        D3DKMT_HANDLE h = v2 ? c.pAllocationInfo2[i].hAllocation : c.pAllocationInfo[i].hAllocation;
        struct fuzz_object *o = fuzz_pool_add(&p->pool, FK_ALLOCATION, h, c.hDevice);

        if (o) {
            o->resource = c.hResource;
            o->size = i < LISTED_MAX ? touch[i] : 0;
            o->gpu_va = v2 ? c.pAllocationInfo2[i].GpuVirtualAddress : 0;
        }
    }
}

/* A list of allocation handles, as long as `n` says (at most the documented maximum). */
static D3DKMT_HANDLE *handle_list(struct fuzz_prog *p, UINT n, enum fuzz_kind kind)
{
    UINT room = n < D3DKMT_CREATEALLOCATION_MAX ? n : D3DKMT_CREATEALLOCATION_MAX;
    D3DKMT_HANDLE *list = fuzz_ptr(p, room * sizeof(*list), false);

    for (UINT i = 0; fuzz_in_arena(list) && i < room && i < LISTED_MAX; i++)
        list[i] = fuzz_pool_handle(&p->pool, kind, &p->in);
    return list;
}

void step_destroy_allocation(struct fuzz_prog *p)
{
    D3DKMT_DESTROYALLOCATION2 d = { 0 };
    const D3DKMT_HANDLE *listed;
    NTSTATUS s;

    d.hDevice = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
    if (fuzz_u8(&p->in) % 3 == 0)
        d.hResource = fuzz_pool_handle(&p->pool, FK_RESOURCE, &p->in);
    d.AllocationCount = fuzz_count(p, 4);
    d.phAllocationList = d.hResource && fuzz_u8(&p->in) % 2 ? NULL
                         : handle_list(p, d.AllocationCount, FK_ALLOCATION);
    listed = d.phAllocationList;
    if (fuzz_in_arena(listed) && fuzz_u8(&p->in) % 4 == 0)     /* a static const list */
        d.phAllocationList = fuzz_read_only_copy(listed, (d.AllocationCount < D3DKMT_CREATEALLOCATION_MAX ?
                                                          d.AllocationCount : D3DKMT_CREATEALLOCATION_MAX) *
                                                         sizeof(D3DKMT_HANDLE));
    if (fuzz_u8(&p->in) & 1) {
        d.Flags.Value = fuzz_flags(p, 2);
        if (p->gpu_waited)
            d.Flags.SynchronousDestroy = 0;
        s = D3DKMTDestroyAllocation2(&d);
    } else {
        D3DKMT_DESTROYALLOCATION d1 = { d.hDevice, d.hResource, d.phAllocationList, d.AllocationCount };
        s = D3DKMTDestroyAllocation(&d1);
    }
    if (s)
        return;
    if (d.hResource)
        fuzz_pool_kill(&p->pool, d.hResource);
    else
        for (UINT i = 0; fuzz_in_arena(listed) && i < d.AllocationCount && i < LISTED_MAX; i++)
            fuzz_pool_kill(&p->pool, listed[i]);
}

void *fuzz_lock2(struct fuzz_prog *p, D3DKMT_LOCK2 *l)
{
    if (p->gpu_waited) {
        D3DKMT_LOCK l1 = { .hDevice = l->hDevice, .hAllocation = l->hAllocation };

        l1.Flags.DonotWait = 1;
        return D3DKMTLock(&l1) ? NULL : l1.pData;
    }
    return D3DKMTLock2(l) ? NULL : l->pData;
}

void step_lock(struct fuzz_prog *p)
{
    D3DKMT_HANDLE dev = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
    D3DKMT_HANDLE h = fuzz_pool_handle(&p->pool, FK_ALLOCATION, &p->in);
    struct fuzz_object *o = fuzz_pool_find(&p->pool, h);
    void *data = NULL;

    if (fuzz_u8(&p->in) & 1) {
        D3DKMT_LOCK2 l = { .hDevice = dev, .hAllocation = h };

        l.Flags.Value = fuzz_u8(&p->in) % 8 ? 0 : fuzz_u32(&p->in);
        data = fuzz_lock2(p, &l);
    } else {
        D3DKMT_LOCK l = { .hDevice = dev, .hAllocation = h };
        UINT pages = fuzz_u8(&p->in) % 4 ? 0 : fuzz_count(p, 4);

        l.Flags.Value = fuzz_flags(p, 11);
        l.NumPages = pages;
        l.pPages = fuzz_ptr(p, (pages < 4 ? pages : 4) * sizeof(UINT), true);
        if (pages > 4 && fuzz_in_arena(l.pPages))
            l.pPages = NULL;            /* no documented maximum: a count the block covers */
        if (p->gpu_waited)
            l.Flags.DonotWait = 1;
        if (!D3DKMTLock(&l))
            data = l.pData;
    }
    if (data)
        fuzz_pool_expect_live(&p->pool, h, "Lock");
    /* what a program does with a lock: write, as far as the allocation goes */
    if (data && o && !o->dead && o->device == dev && o->size)
        fuzz_bytes(&p->in, data, o->size < 16 ? o->size : 16);
}

void step_unlock(struct fuzz_prog *p)
{
    D3DKMT_HANDLE dev = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);

    if (fuzz_u8(&p->in) & 1) {
        D3DKMT_UNLOCK2 u = { dev, fuzz_pool_handle(&p->pool, FK_ALLOCATION, &p->in) };
        D3DKMTUnlock2(&u);
    } else {
        D3DKMT_UNLOCK u = { .hDevice = dev, .NumAllocations = fuzz_count(p, 4) };
        u.phAllocations = handle_list(p, u.NumAllocations, FK_ALLOCATION);
        D3DKMTUnlock(&u);
    }
}
