/*
 * Steps on adapters and devices: EnumAdapters2/3, OpenAdapterFromLuid,
 * CloseAdapter, QueryAdapterInfo, QueryVideoMemoryInfo, CreateDevice,
 * DestroyDevice, GetDeviceState, Escape; KmtProcessShutdown.
 */
#include "config.h"

#include <string.h>

#include "fuzz_steps.h"

void step_enum_adapters(struct fuzz_prog *p)
{
    UINT n = fuzz_count(p, 8);
    D3DKMT_ADAPTERINFO *info = fuzz_ptr(p, (n > 8 ? 8 : n) * sizeof(*info), false);
    uint8_t how = fuzz_u8(&p->in) % 4;
    NTSTATUS s;
    UINT got;

    if (how == 3) {                     /* the legacy call: its own array of 16 */
        D3DKMT_ENUMADAPTERS *e = fuzz_ptr(p, sizeof(*e), false);

        if (D3DKMTEnumAdapters(e) || !fuzz_in_arena(e))
            return;
        for (UINT i = 0; i < e->NumAdapters && i < MAX_ENUM_ADAPTERS; i++)
            fuzz_pool_add(&p->pool, FK_ADAPTER, e->Adapters[i].hAdapter, 0);
        return;
    }
    if (how == 2) {
        KMT_ADAPTER_DESCRIPTION *d = fuzz_ptr(p, sizeof(*d), false);

        KmtQueryAdapterDescription(fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in), d);
        return;
    }
    if (how == 1) {
        D3DKMT_ENUMADAPTERS3 e = { .NumAdapters = n, .pAdapters = info };

        e.Filter.Value = fuzz_flags(p, 2);
        s = D3DKMTEnumAdapters3(&e);
        got = e.NumAdapters;
    } else {
        D3DKMT_ENUMADAPTERS2 e = { .NumAdapters = n, .pAdapters = info };

        s = D3DKMTEnumAdapters2(&e);
        got = e.NumAdapters;
    }
    /* each entry is an open adapter handle the program now owns */
    if (!s && fuzz_in_arena(info))
        for (UINT i = 0; i < got && i < n && i < 8; i++)
            fuzz_pool_add(&p->pool, FK_ADAPTER, info[i].hAdapter, 0);
}

void step_open_adapter(struct fuzz_prog *p)
{
    D3DKMT_OPENADAPTERFROMLUID o = { 0 };

    if (fuzz_nluids && fuzz_u8(&p->in) % 4) {
        o.AdapterLuid = fuzz_luids[fuzz_u8(&p->in) % fuzz_nluids];
    } else {
        o.AdapterLuid.LowPart = fuzz_u32(&p->in);
        o.AdapterLuid.HighPart = (LONG)fuzz_u32(&p->in);
    }
    if (!D3DKMTOpenAdapterFromLuid(&o))
        fuzz_pool_add(&p->pool, FK_ADAPTER, o.hAdapter, 0);
}

void step_close_adapter(struct fuzz_prog *p)
{
    D3DKMT_CLOSEADAPTER c = { fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in) };

    if (D3DKMTCloseAdapter(&c))
        return;
    fuzz_pool_expect_live(&p->pool, c.hAdapter, "CloseAdapter");
    fuzz_pool_kill(&p->pool, c.hAdapter);
}

void step_query_adapter_info(struct fuzz_prog *p)
{
    /* each type with the size it takes (0: the miniport's own) */
    static const struct { KMTQUERYADAPTERINFOTYPE type; UINT size; } types[] = {
        { KMTQAITYPE_UMDRIVERPRIVATE, 128 },
        { KMTQAITYPE_UMDRIVERNAME, sizeof(D3DKMT_UMDFILENAMEINFO) },
        { KMTQAITYPE_UMOPENGLINFO, sizeof(D3DKMT_OPENGLINFO) },
        { KMTQAITYPE_GETSEGMENTSIZE, sizeof(D3DKMT_SEGMENTSIZEINFO) },
        { KMTQAITYPE_ADAPTERADDRESS, sizeof(D3DKMT_ADAPTERADDRESS) },
        { KMTQAITYPE_CHECKDRIVERUPDATESTATUS, sizeof(BOOL) },
        { KMTQAITYPE_DRIVERVERSION, sizeof(D3DKMT_DRIVERVERSION) },
        { KMTQAITYPE_ADAPTERTYPE, sizeof(D3DKMT_ADAPTERTYPE) },
        { KMTQAITYPE_ADAPTERTYPE_RENDER, sizeof(D3DKMT_ADAPTERTYPE) },
        { KMTQAITYPE_WDDM_2_7_CAPS, sizeof(D3DKMT_WDDM_2_7_CAPS) },
        { KMTQAITYPE_NODEMETADATA, sizeof(D3DKMT_NODEMETADATA) },
        { KMTQAITYPE_PHYSICALADAPTERCOUNT, sizeof(UINT) },
        { KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, sizeof(D3DKMT_QUERY_DEVICE_IDS) },
        { KMTQAITYPE_ADAPTERREGISTRYINFO, sizeof(D3DKMT_ADAPTERREGISTRYINFO) },
        { KMTQAITYPE_WDDM_2_9_CAPS, sizeof(D3DKMT_WDDM_2_9_CAPS) },
        { KMTQAITYPE_NODEPERFDATA, sizeof(D3DKMT_NODE_PERFDATA) },
        { KMTQAITYPE_ADAPTERPERFDATA, sizeof(D3DKMT_ADAPTER_PERFDATA) },
        { KMTQAITYPE_ADAPTERPERFDATA_CAPS, sizeof(D3DKMT_ADAPTER_PERFDATACAPS) },
    };
    D3DKMT_QUERYADAPTERINFO q = { .hAdapter = fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in) };
    uint8_t t = fuzz_u8(&p->in);
    UINT natural = types[t % (sizeof(types) / sizeof(types[0]))].size;

    q.Type = t < 0xf0 ? types[t % (sizeof(types) / sizeof(types[0]))].type : (KMTQUERYADAPTERINFOTYPE)fuzz_u32(&p->in);
    q.PrivateDriverDataSize = fuzz_size(p, natural);
    q.pPrivateDriverData = fuzz_ptr(p, q.PrivateDriverDataSize, true);
    /* the in-fields (version, node and adapter index) mostly in range */
    if (fuzz_in_arena(q.pPrivateDriverData) && q.PrivateDriverDataSize >= 4 && fuzz_u8(&p->in) % 2)
        *(UINT *)q.pPrivateDriverData = fuzz_u8(&p->in) % 4;
    D3DKMTQueryAdapterInfo(&q);
}

void step_query_video_memory(struct fuzz_prog *p)
{
    D3DKMT_QUERYVIDEOMEMORYINFO q = { .hAdapter = fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in) };

    q.hProcess = fuzz_u8(&p->in) % 8 ? NULL : (HANDLE)(intptr_t)fuzz_u32(&p->in);
    q.MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)(fuzz_u8(&p->in) % 3);
    q.PhysicalAdapterIndex = fuzz_u8(&p->in) % 8 ? 0 : fuzz_u32(&p->in);
    D3DKMTQueryVideoMemoryInfo(&q);
}

void step_create_device(struct fuzz_prog *p)
{
    D3DKMT_CREATEDEVICE c = { .hAdapter = fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in) };
    UINT flags = fuzz_flags(p, 3);

    memcpy(&c.Flags, &flags, sizeof(flags));
    if (D3DKMTCreateDevice(&c))
        return;
    fuzz_pool_expect_live(&p->pool, c.hAdapter, "CreateDevice");
    fuzz_pool_add(&p->pool, FK_DEVICE, c.hDevice, c.hDevice);
}

void step_destroy_device(struct fuzz_prog *p)
{
    D3DKMT_DESTROYDEVICE d = { fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in) };

    if (D3DKMTDestroyDevice(&d))
        return;
    fuzz_pool_expect_live(&p->pool, d.hDevice, "DestroyDevice");
    fuzz_pool_kill(&p->pool, d.hDevice);
}

void step_get_device_state(struct fuzz_prog *p)
{
    D3DKMT_GETDEVICESTATE g = { .hDevice = fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in) };
    uint8_t t = fuzz_u8(&p->in);

    g.StateType = (D3DKMT_DEVICESTATE_TYPE)(t < 0xf0 ? t % 8 : fuzz_u32(&p->in));
    D3DKMTGetDeviceState(&g);
}

void step_escape(struct fuzz_prog *p)
{
    D3DKMT_ESCAPE e = { 0 };
    struct fuzz_object *a = fuzz_pool_pick_live(&p->pool, FK_ADAPTER, &p->in);
    bool fault = fuzz_u8(&p->in) % 2;

    if (fuzz_target.arm_fault && a && fault) {
        fuzz_target.arm_fault(a->handle, &p->in);
        return;
    }
    e.hAdapter = fuzz_pool_handle(&p->pool, FK_ADAPTER, &p->in);
    e.hDevice = fuzz_u8(&p->in) % 2 ? 0 : fuzz_pool_handle(&p->pool, FK_DEVICE, &p->in);
    e.hContext = fuzz_u8(&p->in) % 2 ? 0 : fuzz_pool_handle(&p->pool, FK_CONTEXT, &p->in);
    e.Type = (D3DKMT_ESCAPETYPE)(fuzz_u8(&p->in) % 4 ? D3DKMT_ESCAPE_DRIVERPRIVATE : fuzz_u8(&p->in) % 8);
    e.Flags.Value = fuzz_flags(p, 2);
    e.PrivateDriverDataSize = fuzz_size(p, 72);
    e.pPrivateDriverData = fuzz_ptr(p, e.PrivateDriverDataSize, true);
    /* a driver-private request the miniports understand, half the time */
    if (fuzz_in_arena(e.pPrivateDriverData) && e.PrivateDriverDataSize >= 12 && fuzz_u8(&p->in) % 2) {
        UINT *request = e.pPrivateDriverData;

        request[0] = 1 + fuzz_u8(&p->in) % 5;
        /* the queries name an object after Code and Reserved: one of the program's */
        request[2] = fuzz_pool_handle(&p->pool, fuzz_u8(&p->in) % 2 ? FK_ALLOCATION : FK_SYNC, &p->in);
    }
    D3DKMTEscape(&e);
}

/* Process exit in the middle of a program: everything goes, and the next
 * call starts the process afresh (kmtshim.h); later calls with the old
 * handles must fail cleanly. */
void step_shutdown(struct fuzz_prog *p)
{
    if (fuzz_u8(&p->in) % 16)       /* rarely: it ends everything the program built */
        return;
    KmtProcessShutdown();
    for (unsigned i = 0; i < p->pool.count; i++)
        p->pool.objects[i].dead = true;
    p->restarted = true;
    p->gpu_waited = false;          /* no context is left to be blocked */
}
