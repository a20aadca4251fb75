/*
 * The recording miniport: DriverEntry, its physical devices and adapters,
 * QueryAdapterInfo, devices and the escape.  Allocation DDIs live in
 * record_allocation.c, the log and steering in record_log.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_internal.h"

#ifdef KMT_RECORD_PLUGIN
# define RECORD_IS_PLUGIN 1
#else
# define RECORD_IS_PLUGIN 0
#endif

struct record_config rec_config;
static bool config_set;
static NTSTATUS second_initialize_status;

/* ---- configuration ------------------------------------------------------------ */

static void wide_copy(WCHAR *dst, const char *src, size_t max)
{
    size_t i = 0;

    for (; src[i] && i + 1 < max; i++)
        dst[i] = (unsigned char)src[i];
    dst[i] = 0;
}

void record_default_config(struct record_config *cfg)
{
    DXGK_SEGMENTDESCRIPTOR *seg;

    memset(cfg, 0, sizeof(*cfg));
    cfg->devices = 1;
    cfg->interface_version = KMT_MINIPORT_INTERFACE_VERSION;
    cfg->init_size = sizeof(DRIVER_INITIALIZATION_DATA);

    strcpy(cfg->desc.DriverName, "record");
    strcpy(cfg->desc.Description, "kmtshim recording miniport");
    cfg->desc.AdapterType.RenderSupported = 1;
    cfg->desc.DeviceIds.VendorID = 0xabcd;
    cfg->desc.DeviceIds.DeviceID = 0x1234;
    cfg->desc.DeviceIds.SubVendorID = 0xabcd;
    cfg->desc.DeviceIds.SubSystemID = 0x0001;
    cfg->desc.DeviceIds.RevisionID = 0x07;
    cfg->desc.Address.BusNumber = 3;
    cfg->desc.Address.DeviceNumber = 4;
    cfg->desc.Address.FunctionNumber = 5;
    cfg->desc.HasAddress = TRUE;
    wide_copy(cfg->desc.UmdFileName[KMTUMDVERSION_DX11], "record_umd11.dll", MAX_PATH);
    wide_copy(cfg->desc.UmdFileName[KMTUMDVERSION_DX12], "record_umd12.dll", MAX_PATH);
    wide_copy(cfg->desc.OpenGlIcdFileName, "record_icd.dll", MAX_PATH);
    cfg->desc.OpenGlVersion = 0x1100;
    cfg->desc.OpenGlFlags = 0x3;

    cfg->caps.WDDMVersion = KMT_DRIVERVERSION_WDDM_3_1;
    cfg->caps.Wddm27Caps.HwSchSupported = 1;
    cfg->caps.NodeCount = 2;
    cfg->caps.PhysicalAdapterCount = 1;

    cfg->segments.NbSegment = 2;
    seg = &cfg->segments.pSegmentDescriptor[0];
    seg->Size = 512u << 20;                 /* local video memory */
    seg->Flags.CpuVisible = 1;
    seg = &cfg->segments.pSegmentDescriptor[1];
    seg->Size = 2048ull << 20;              /* aperture over system memory */
    seg->Flags.Aperture = 1;

    for (UINT i = 0; i < 16; i++)
        cfg->umd_private[i] = (unsigned char)(0x10 + i);
    cfg->umd_private_size = 16;
    cfg->budget[0].Budget = 256ull << 20;
    cfg->budget[0].AvailableForReservation = 128ull << 20;
    cfg->budget[1].Budget = 1024ull << 20;
    cfg->budget[1].AvailableForReservation = 512ull << 20;
    cfg->allocation_size = 0x2000;
    cfg->lock_gpu_va = 0x100000000000ull;
}

static void ensure_config(void)
{
    if (!config_set) {
        record_default_config(&rec_config);
        config_set = true;
    }
}

void record_configure(const struct record_config *cfg)
{
    pthread_mutex_lock(&rec_lock);
    rec_config = *cfg;
    config_set = true;
    pthread_mutex_unlock(&rec_lock);
}

const struct record_config *record_current_config(void)
{
    pthread_mutex_lock(&rec_lock);
    ensure_config();
    pthread_mutex_unlock(&rec_lock);
    return &rec_config;
}

NTSTATUS record_second_initialize_status(void)
{
    return second_initialize_status;
}

/* ---- handle checks --------------------------------------------------------------- */

struct rec_adapter *rec_check_adapter(HANDLE h, const char *ddi)
{
    struct rec_obj *obj = rec_obj_find(h, REC_ADAPTER);

    if (!obj) {
        rec_violation("%s: unknown adapter %p", ddi, h);
        return NULL;
    }
    if (obj->dead) {
        rec_violation("%s: adapter %p used after DxgkDdiRemoveDevice", ddi, h);
        return NULL;
    }
    return (struct rec_adapter *)obj;
}

struct rec_device *rec_check_device(HANDLE h, const char *ddi)
{
    struct rec_obj *obj = rec_obj_find(h, REC_DEVICE);

    if (!obj) {
        rec_violation("%s: unknown device %p", ddi, h);
        return NULL;
    }
    if (obj->dead) {
        rec_violation("%s: device %p used after DxgkDdiDestroyDevice", ddi, h);
        return NULL;
    }
    return (struct rec_device *)obj;
}

/* ---- physical devices and adapters ------------------------------------------------- */

static NTSTATUS APIENTRY rec_enum_physical_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices)
{
    struct record_call *call;
    UINT n;
    NTSTATUS status;

    rec_maybe_block(RECORD_ENUM_PHYSICAL_DEVICES);
    pthread_mutex_lock(&rec_lock);
    n = rec_config.devices < *count ? rec_config.devices : *count;
    if (!(status = rec_injected_failure(RECORD_ENUM_PHYSICAL_DEVICES))) {
        for (UINT i = 0; i < n; i++) {
            memset(&devices[i], 0, sizeof(devices[i]));
            snprintf(devices[i].LocationId, sizeof(devices[i].LocationId), "rec%u", i);
            snprintf(devices[i].Description, sizeof(devices[i].Description),
                     "kmtshim recording miniport %u", i);
            devices[i].Context = (PVOID)(uintptr_t)(i + 1);
        }
        *count = n;
    }
    call = rec_log_new(RECORD_ENUM_PHYSICAL_DEVICES);
    call->num = n;
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}

static NTSTATUS APIENTRY rec_add_device(const KMT_PHYSICAL_DEVICE *pdo, PVOID *ctx)
{
    struct record_call *call;
    struct rec_adapter *a = NULL;
    NTSTATUS status;

    rec_maybe_block(RECORD_ADD_DEVICE);
    pthread_mutex_lock(&rec_lock);
    status = rec_injected_failure(RECORD_ADD_DEVICE);
    if (!status && !(a = rec_obj_new(REC_ADAPTER, sizeof(*a))))
        status = STATUS_NO_MEMORY;
    if (!status) {
        a->index = (UINT)(uintptr_t)pdo->Context - 1;
        snprintf(a->location, sizeof(a->location), "%s", pdo->LocationId);
        *ctx = a;
    }
    call = rec_log_new(RECORD_ADD_DEVICE);
    call->adapter = a;
    call->status = status;
    snprintf(call->location, sizeof(call->location), "%s", pdo->LocationId);
    pthread_mutex_unlock(&rec_lock);
    return status;
}

static NTSTATUS APIENTRY rec_start_device(PVOID ctx, DXGK_START_INFO *start, DXGKRNL_INTERFACE *iface,
                                          ULONG *sources, ULONG *children)
{
    struct record_call *call;
    struct rec_adapter *a;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    rec_maybe_block(RECORD_START_DEVICE);
    pthread_mutex_lock(&rec_lock);
    if ((a = rec_check_adapter(ctx, __func__)) && !(status = rec_injected_failure(RECORD_START_DEVICE))) {
        if (!iface || iface->Size != sizeof(*iface) || !iface->DxgkCbGetHandleData)
            rec_violation("%s: bad DXGKRNL_INTERFACE", __func__);
        if (iface)
            a->k = *iface;
        a->started = true;
        *sources = rec_config.desc.NumOfSources;
        *children = 0;
    }
    call = rec_log_new(RECORD_START_DEVICE);
    call->adapter = ctx;
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}

static NTSTATUS APIENTRY rec_stop_device(PVOID ctx)
{
    struct record_call *call;
    struct rec_adapter *a;

    rec_maybe_block(RECORD_STOP_DEVICE);
    pthread_mutex_lock(&rec_lock);
    if ((a = rec_check_adapter(ctx, __func__))) {
        if (!a->started)
            rec_violation("%s: adapter %p was not started", __func__, ctx);
        a->started = false;
    }
    call = rec_log_new(RECORD_STOP_DEVICE);
    call->adapter = ctx;
    pthread_mutex_unlock(&rec_lock);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY rec_remove_device(PVOID ctx)
{
    struct record_call *call;
    struct rec_adapter *a;

    rec_maybe_block(RECORD_REMOVE_DEVICE);
    pthread_mutex_lock(&rec_lock);
    if ((a = rec_check_adapter(ctx, __func__))) {
        if (a->started)
            rec_violation("%s: adapter %p removed while started", __func__, ctx);
        if (rec_adapter_live_children(a))
            rec_violation("%s: adapter %p removed with objects alive", __func__, ctx);
        a->o.dead = true;
    }
    call = rec_log_new(RECORD_REMOVE_DEVICE);
    call->adapter = ctx;
    pthread_mutex_unlock(&rec_lock);
    return STATUS_SUCCESS;
}

static void APIENTRY rec_unload(void)
{
    struct record_live live;

    rec_maybe_block(RECORD_UNLOAD);
    pthread_mutex_lock(&rec_lock);
    live = rec_count_live();
    if (live.adapters || live.devices || live.allocations || live.resources || live.bindings)
        rec_violation("DxgkDdiUnload with %u adapters, %u devices, %u allocations, %u resources, "
                      "%u bindings alive", live.adapters, live.devices, live.allocations,
                      live.resources, live.bindings);
    rec_free_all();
    rec_log_new(RECORD_UNLOAD);
    pthread_mutex_unlock(&rec_lock);
}

/* ---- QueryAdapterInfo ---------------------------------------------------------------- */

static NTSTATUS copy_exact(const DXGKARG_QUERYADAPTERINFO *q, const void *src, UINT size)
{
    if (q->OutputDataSize != size || !q->pOutputData)
        return STATUS_INVALID_PARAMETER;
    memcpy(q->pOutputData, src, size);
    return STATUS_SUCCESS;
}

static NTSTATUS answer_query(struct rec_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    switch (q->Type) {
    case DXGKQAITYPE_UMDRIVERPRIVATE:
        if (q->OutputDataSize < rec_config.umd_private_size)
            return STATUS_BUFFER_TOO_SMALL;
        memcpy(q->pOutputData, rec_config.umd_private, rec_config.umd_private_size);
        return STATUS_SUCCESS;
    case DXGKQAITYPE_DRIVERCAPS:
        return copy_exact(q, &rec_config.caps, sizeof(rec_config.caps));
    case DXGKQAITYPE_QUERYSEGMENT:
        return copy_exact(q, &rec_config.segments, sizeof(rec_config.segments));
    case DXGKQAITYPE_KMT_ADAPTERDESC: {
        KMT_ADAPTER_DESC desc = rec_config.desc;
        size_t len = strnlen(desc.Description, sizeof(desc.Description) - 1);

        /* tell the adapters apart: "... rec1" */
        snprintf(desc.Description + len, sizeof(desc.Description) - len, " %s", a->location);
        return copy_exact(q, &desc, sizeof(desc));
    }
    case DXGKQAITYPE_KMT_MEMORYUSAGE: {
        UINT group;

        if (q->InputDataSize != sizeof(UINT) || !q->pInputData)
            return STATUS_INVALID_PARAMETER;
        group = *(const UINT *)q->pInputData;
        if (group > 1)
            return STATUS_INVALID_PARAMETER;
        return copy_exact(q, &rec_config.budget[group], sizeof(rec_config.budget[group]));
    }
    default:
        return STATUS_NOT_SUPPORTED;
    }
}

static NTSTATUS APIENTRY rec_query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q)
{
    struct record_call *call;
    struct rec_adapter *a;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    rec_maybe_block(RECORD_QUERY_ADAPTER_INFO);
    pthread_mutex_lock(&rec_lock);
    if ((a = rec_check_adapter(hAdapter, __func__)) &&
        !(status = rec_injected_failure(RECORD_QUERY_ADAPTER_INFO)))
        status = answer_query(a, q);
    call = rec_log_new(RECORD_QUERY_ADAPTER_INFO);
    call->adapter = hAdapter;
    call->status = status;
    call->type = q->Type;
    call->in_size = q->InputDataSize;
    call->out_size = q->OutputDataSize;
    call->flags = q->Flags.Value;
    if (q->pInputData && q->InputDataSize >= sizeof(UINT))
        memcpy(&call->input, q->pInputData, sizeof(UINT));
    pthread_mutex_unlock(&rec_lock);
    return status;
}

/* ---- devices ------------------------------------------------------------------------ */

static NTSTATUS APIENTRY rec_create_device(HANDLE hAdapter, DXGKARG_CREATEDEVICE *args)
{
    struct record_call *call;
    struct rec_adapter *a;
    struct rec_device *d = NULL;
    HANDLE core = args->hDevice;
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    rec_maybe_block(RECORD_CREATE_DEVICE);
    pthread_mutex_lock(&rec_lock);
    if ((a = rec_check_adapter(hAdapter, __func__)) &&
        !(status = rec_injected_failure(RECORD_CREATE_DEVICE))) {
        if (rec_injected_null(RECORD_CREATE_DEVICE) == RECORD_NONE) {
            if (!(d = rec_obj_new(REC_DEVICE, sizeof(*d))))
                status = STATUS_NO_MEMORY;
            else {
                d->adapter = a;
                d->core_device = core;
            }
        }
        if (!status) {
            args->hDevice = d;
            if (args->pInfo)
                memset(args->pInfo, 0, sizeof(*args->pInfo));
        }
    }
    call = rec_log_new(RECORD_CREATE_DEVICE);
    call->adapter = hAdapter;
    call->status = status;
    call->core_device = core;
    call->device = d;
    call->flags = args->Flags.Value;
    call->num = args->pInfo != NULL;    /* the core must give us somewhere to write */
    pthread_mutex_unlock(&rec_lock);
    return status;
}

static NTSTATUS APIENTRY rec_destroy_device(HANDLE hDevice)
{
    struct record_call *call;
    struct rec_device *d;
    NTSTATUS status = STATUS_SUCCESS;
    unsigned allocations, bindings;

    rec_maybe_block(RECORD_DESTROY_DEVICE);
    pthread_mutex_lock(&rec_lock);
    if ((d = rec_check_device(hDevice, __func__))) {
        rec_device_live_children(d, &allocations, &bindings);
        if (allocations || bindings)
            rec_violation("%s: device %p destroyed with %u allocations and %u bindings alive",
                          __func__, hDevice, allocations, bindings);
        d->o.dead = true;
        status = rec_injected_failure(RECORD_DESTROY_DEVICE);   /* after the fact: the core ignores it */
    }
    call = rec_log_new(RECORD_DESTROY_DEVICE);
    call->adapter = d ? d->adapter : NULL;
    call->device = hDevice;
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}

/* ---- escape ------------------------------------------------------------------------ */

static void escape_info(RECORD_ESCAPE_DATA *e)
{
    struct record_live live = record_live_objects();

    memset(&e->Info, 0, sizeof(e->Info));
    e->Info.IsPlugin = RECORD_IS_PLUGIN;
    e->Info.Violations = record_violation_count();
    e->Info.Devices = live.devices;
    e->Info.Allocations = live.allocations;
    e->Info.Resources = live.resources;
    e->Info.Bindings = live.bindings;
}

static NTSTATUS escape_entry(RECORD_ESCAPE_DATA *e)
{
    const struct record_call *c = record_log_get(e->Index);

    if (!c)
        return STATUS_INVALID_PARAMETER;
    memset(&e->Entry, 0, sizeof(e->Entry));
    e->Entry.Ddi = c->ddi;
    e->Entry.Status = c->status;
    e->Entry.Num = c->num;
    e->Entry.Flags = c->flags;
    e->Entry.Device = (UINT64)(uintptr_t)c->device;
    e->Entry.ResourceIn = (UINT64)(uintptr_t)c->resource_in;
    e->Entry.ResourceOut = (UINT64)(uintptr_t)c->resource_out;
    for (UINT i = 0; c->allocs && i < c->num && i < 8; i++)
        e->Entry.Handles[i] = (UINT64)(uintptr_t)c->allocs[i].handle;
    return STATUS_SUCCESS;
}

/* Introspection escapes: answered without a log entry.  rec_lock not held
 * (RESOLVE calls back into the core). */
static bool introspect(struct rec_adapter *a, RECORD_ESCAPE_DATA *e, NTSTATUS *status)
{
    DXGKARGCB_GETHANDLEDATA q = { 0 };
    DXGKCB_GETHANDLEDATA cb;

    switch (e->Code) {
    case RECORD_ESCAPE_INFO:
        escape_info(e);
        e->Info.LogCount = record_log_count();
        *status = STATUS_SUCCESS;
        return true;
    case RECORD_ESCAPE_ENTRY:
        *status = escape_entry(e);
        return true;
    case RECORD_ESCAPE_RESOLVE:
        pthread_mutex_lock(&rec_lock);
        cb = a->k.DxgkCbGetHandleData;
        pthread_mutex_unlock(&rec_lock);
        q.hObject = e->Index;
        q.Type = (DXGK_HANDLE_TYPE)(e->Arg & 0xff);
        q.Flags.DeviceSpecific = !!(e->Arg & RECORD_RESOLVE_DEVICE_SPECIFIC);
        e->Result = (UINT64)(uintptr_t)cb(&q);
        *status = STATUS_SUCCESS;
        return true;
    default:
        return false;
    }
}

static NTSTATUS APIENTRY rec_escape(HANDLE hAdapter, const DXGKARG_ESCAPE *args)
{
    RECORD_ESCAPE_DATA *e = args->pPrivateDriverData;
    unsigned char *bytes = args->pPrivateDriverData;
    struct record_call *call;
    struct rec_adapter *a;
    NTSTATUS status = STATUS_INVALID_PARAMETER;
    UINT code = 0;

    rec_maybe_block(RECORD_ESCAPE);
    pthread_mutex_lock(&rec_lock);
    a = rec_check_adapter(hAdapter, __func__);
    if (args->hDevice)
        rec_check_device(args->hDevice, __func__);
    pthread_mutex_unlock(&rec_lock);
    if (!a)
        return STATUS_INVALID_PARAMETER;

    if (args->PrivateDriverDataSize >= 8 && e->Magic == RECORD_ESCAPE_MAGIC) {
        code = e->Code;
        if (args->PrivateDriverDataSize >= sizeof(*e) && introspect(a, e, &status))
            return status;
    }

    pthread_mutex_lock(&rec_lock);
    call = rec_log_new(RECORD_ESCAPE);
    call->adapter = hAdapter;
    call->device = args->hDevice;
    call->flags = args->Flags.Value;
    call->priv_size = args->PrivateDriverDataSize;
    call->priv = rec_dup(args->pPrivateDriverData, args->PrivateDriverDataSize);
    call->type = code;
    if (code == RECORD_ESCAPE_ECHO) {
        for (UINT i = 8; i < args->PrivateDriverDataSize; i++)
            bytes[i] = (unsigned char)~bytes[i];
        /* an injected failure still answers: the data travels back either way */
        status = rec_injected_failure(RECORD_ESCAPE);
    }
    call->status = status;
    pthread_mutex_unlock(&rec_lock);
    return status;
}

/* ---- DriverEntry ------------------------------------------------------------------- */

#ifdef KMT_RECORD_PLUGIN
/* The plugin's only configuration: the environment. */
static void plugin_config(void)
{
    const char *devices = getenv("KMT_RECORD_DEVICES");

    if (devices && *devices && atoi(devices) >= 0 && atoi(devices) <= KMT_MAX_PHYSICAL_DEVICES)
        rec_config.devices = (UINT)atoi(devices);
}
#endif

NTSTATUS APIENTRY RecordMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    DRIVER_INITIALIZATION_DATA init = {
        .DriverName = "record",
        .KmtDdiEnumPhysicalDevices = rec_enum_physical_devices,
        .DxgkDdiAddDevice = rec_add_device,
        .DxgkDdiStartDevice = rec_start_device,
        .DxgkDdiStopDevice = rec_stop_device,
        .DxgkDdiRemoveDevice = rec_remove_device,
        .DxgkDdiUnload = rec_unload,
        .DxgkDdiQueryAdapterInfo = rec_query_adapter_info,
        .DxgkDdiCreateDevice = rec_create_device,
        .DxgkDdiDestroyDevice = rec_destroy_device,
        .DxgkDdiCreateAllocation = rec_create_allocation,
        .DxgkDdiDestroyAllocation = rec_destroy_allocation,
        .DxgkDdiOpenAllocation = rec_open_allocation,
        .DxgkDdiCloseAllocation = rec_close_allocation,
        .DxgkDdiLock = rec_lock_allocation,
        .DxgkDdiUnlock = rec_unlock_allocation,
        .DxgkDdiEscape = rec_escape,
    };
    struct record_config cfg;
    NTSTATUS status;

    pthread_mutex_lock(&rec_lock);
    ensure_config();
#ifdef KMT_RECORD_PLUGIN
    plugin_config();
#endif
    cfg = rec_config;
    pthread_mutex_unlock(&rec_lock);

    if (!dxgkrnl || dxgkrnl->Size < sizeof(*dxgkrnl) || !dxgkrnl->DxgkInitialize)
        return STATUS_INVALID_PARAMETER;
    if (cfg.skip_initialize)
        return STATUS_SUCCESS;
    init.Version = cfg.interface_version;
    init.Size = cfg.init_size;
    if (cfg.omit_create_allocation)
        init.DxgkDdiCreateAllocation = NULL;
    status = dxgkrnl->DxgkInitialize(driver, &init);
    if (!status && cfg.initialize_twice)
        second_initialize_status = dxgkrnl->DxgkInitialize(driver, &init);
    return status;
}

#ifdef KMT_RECORD_PLUGIN
__attribute__((visibility("default")))
NTSTATUS APIENTRY KmtMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl);

NTSTATUS APIENTRY KmtMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    return RecordMiniportDriverEntry(driver, dxgkrnl);
}
#endif
