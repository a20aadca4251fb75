/*
 * Software miniport: DriverEntry, the one physical device, adapter queries,
 * devices.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "soft.h"
#include "base/kmt_spare.h"
#include "base/kmt_time.h"
#include "miniports/builtin.h"

static NTSTATUS APIENTRY soft_enum_physical_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices)
{
    if (*count < 1)
        return STATUS_BUFFER_TOO_SMALL;
    memset(&devices[0], 0, sizeof(devices[0]));
    strcpy(devices[0].LocationId, "soft0");
    strcpy(devices[0].Description, "kmtshim Basic Render Driver (software)");
    *count = 1;
    return STATUS_SUCCESS;
}

/* Half of RAM, as Windows shares with an integrated or software adapter. */
static UINT64 system_memory_budget(void)
{
    struct sysinfo si;

    if (sysinfo(&si))
        return 256ull << 20;
    return (UINT64)si.totalram * si.mem_unit / 2;
}

/* A segment descriptor's sizes are SIZE_T: in a 32-bit build, half of a
 * large RAM is described as the most a SIZE_T holds, in whole pages,
 * rather than wrapped. */
static SIZE_T segment_size(UINT64 bytes)
{
    const UINT64 most = (UINT64)SIZE_MAX & ~(UINT64)0xfff;

    return (SIZE_T)(bytes > most ? most : bytes);
}

static NTSTATUS APIENTRY soft_add_device(const KMT_PHYSICAL_DEVICE *pdo, PVOID *ctx)
{
    struct soft_adapter *a = calloc(1, sizeof(*a));

    if (!a)
        return STATUS_NO_MEMORY;
    a->budget = system_memory_budget();
    soft_va_init(&a->va);
    soft_miracast_init(a);
    soft_display_init(a);
    *ctx = a;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY soft_start_device(PVOID ctx, DXGK_START_INFO *start, DXGKRNL_INTERFACE *iface,
                                           ULONG *sources, ULONG *children)
{
    struct soft_adapter *a = ctx;

    a->dxgkrnl = *iface;
    *sources = a->display.sources;
    *children = a->display.sources;     /* one monitor per output */
    /* 1.0 cores lack the execution callbacks: then the engine stays off */
    if (iface->Version < KMT_MINIPORT_INTERFACE_VERSION || !iface->DxgkCbNotifyInterrupt)
        return STATUS_SUCCESS;
    return soft_engine_start(a);
}

static NTSTATUS APIENTRY soft_stop_device(PVOID ctx)
{
    soft_display_stop(ctx);
    soft_engine_stop(ctx);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY soft_remove_device(PVOID ctx)
{
    struct soft_adapter *a = ctx;

    if (atomic_load(&a->allocations) || atomic_load(&a->devices))
        soft_trace(a, KMT_TRACE_ERR, __func__, "removed with %llu devices, %llu allocations alive\n",
                   (unsigned long long)atomic_load(&a->devices),
                   (unsigned long long)atomic_load(&a->allocations));
    soft_va_destroy(&a->va);
    soft_miracast_fini(a);
    soft_display_fini(a);
    free(a);
    return STATUS_SUCCESS;
}

static void soft_wide(WCHAR *out, const char *s)
{
    while ((*out++ = (WCHAR)(unsigned char)*s++))
        ;
}

/* The HardwareInformation strings: no video BIOS and no DAC (nothing here
 * drives a connector), a chip type saying what does the work. */
static NTSTATUS soft_registry_info(const DXGKARG_QUERYADAPTERINFO *q)
{
    D3DKMT_ADAPTERREGISTRYINFO *info = q->pOutputData;

    if (q->OutputDataSize != sizeof(*info))
        return STATUS_INVALID_PARAMETER;
    memset(info, 0, sizeof(*info));
    soft_wide(info->AdapterString, "kmtshim Basic Render Driver (software)");
    soft_wide(info->ChipType, "kmtshim software renderer");
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY soft_query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q)
{
    struct soft_adapter *a = hAdapter;

    switch (q->Type) {
    case DXGKQAITYPE_UMDRIVERPRIVATE: {
        KMT_SOFT_UMD_PRIVATE p = {
            .Magic = KMT_SOFT_ALLOCATION_MAGIC,
            .Version = KMT_SOFT_ALLOCATION_VERSION,
            .PageSize = SOFT_PAGE_SIZE,
            .NodeCount = 1,
            .MaxAllocationSize = a->budget,
        };
        if (q->OutputDataSize < sizeof(p))
            return STATUS_BUFFER_TOO_SMALL;
        memcpy(q->pOutputData, &p, sizeof(p));
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_DRIVERCAPS: {
        DXGK_DRIVERCAPS *caps = q->pOutputData;
        if (q->OutputDataSize != sizeof(*caps))
            return STATUS_INVALID_PARAMETER;
        memset(caps, 0, sizeof(*caps));
        caps->WDDMVersion = KMT_DRIVERVERSION_WDDM_2_7;
        caps->NodeCount = 1;
        caps->PhysicalAdapterCount = 1;
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_QUERYSEGMENT: {
        DXGK_QUERYSEGMENTOUT *out = q->pOutputData;
        if (q->OutputDataSize != sizeof(*out))
            return STATUS_INVALID_PARAMETER;
        memset(out, 0, sizeof(*out));
        /* One segment: system memory the CPU and the "GPU" share (UMA). */
        out->NbSegment = 1;
        out->pSegmentDescriptor[0].Size = segment_size(a->budget);
        out->pSegmentDescriptor[0].CommitLimit = segment_size(a->budget);
        out->pSegmentDescriptor[0].Flags.Aperture = 1;
        out->pSegmentDescriptor[0].Flags.CpuVisible = 1;
        out->pSegmentDescriptor[0].Flags.CacheCoherent = 1;
        out->pSegmentDescriptor[0].Flags.PopulatedFromSystemMemory = 1;
        out->pSegmentDescriptor[0].Flags.LocalBudgetGroup = 1;
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_KMT_ADAPTERDESC: {
        KMT_ADAPTER_DESC *d = q->pOutputData;
        if (q->OutputDataSize != sizeof(*d))
            return STATUS_INVALID_PARAMETER;
        memset(d, 0, sizeof(*d));
        strcpy(d->DriverName, "soft");
        strcpy(d->Description, "kmtshim Basic Render Driver (software)");
        d->AdapterType.RenderSupported = 1;
        d->AdapterType.SoftwareDevice = 1;
        d->DeviceIds.VendorID = KMT_SOFT_VENDOR_ID;
        d->DeviceIds.DeviceID = KMT_SOFT_DEVICE_ID;
        d->NumOfSources = a->display.sources;
        /* No user-mode driver ships for the software adapter: names stay empty. */
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_KMT_NODEMETADATA: {
        DXGK_NODEMETADATA *meta = q->pOutputData;
        static const char name[] = "soft 3D";
        if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(*meta) ||
            *(const UINT *)q->pInputData != 0)
            return STATUS_INVALID_PARAMETER;
        memset(meta, 0, sizeof(*meta));
        meta->EngineType = DXGK_ENGINE_TYPE_3D;
        for (unsigned i = 0; i < sizeof(name); i++)
            meta->FriendlyName[i] = (WCHAR)name[i];
        meta->GpuMmuSupported = TRUE;      /* it has a GPU VA space */
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_KMT_NODERUNNINGTIME:
        if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(UINT64) ||
            *(const UINT *)q->pInputData != 0)
            return STATUS_INVALID_PARAMETER;
        *(UINT64 *)q->pOutputData = soft_engine_busy_ns(a, 0);
        return STATUS_SUCCESS;
    case DXGKQAITYPE_KMT_MEMORYUSAGE: {
        KMT_MEMORY_BUDGET *b = q->pOutputData;
        UINT group;
        if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(*b))
            return STATUS_INVALID_PARAMETER;
        group = *(const UINT *)q->pInputData;
        /* UMA: everything is local; there is no non-local memory. */
        b->Budget = group == 0 ? a->budget : 0;
        b->AvailableForReservation = b->Budget / 2;
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_KMT_CURRENTDISPLAYMODE:
        return soft_display_mode(a, q);
    case DXGKQAITYPE_KMT_REGISTRYINFO:
        return soft_registry_info(q);
    /* DXGKQAITYPE_NODEPERFDATA, _ADAPTERPERFDATA(_CAPS): no clocks, fans
     * or sensors of its own; the core answers zeros */
    default:
        return STATUS_NOT_SUPPORTED;
    }
}

static NTSTATUS APIENTRY soft_create_device(HANDLE hAdapter, DXGKARG_CREATEDEVICE *args)
{
    struct soft_adapter *a = hAdapter;
    struct soft_device *d = kmt_spare_zalloc(KMT_SPARE_SOFT_DEVICE, sizeof(*d));

    if (!d)
        return STATUS_NO_MEMORY;
    d->adapter = a;
    d->core_device = args->hDevice;
    if (args->pInfo)
        memset(args->pInfo, 0, sizeof(*args->pInfo));
    args->hDevice = d;
    atomic_fetch_add(&a->devices, 1);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY soft_destroy_device(HANDLE hDevice)
{
    struct soft_device *d = hDevice;

    atomic_fetch_sub(&d->adapter->devices, 1);
    kmt_spare_free(KMT_SPARE_SOFT_DEVICE, d, sizeof(*d));
    return STATUS_SUCCESS;
}

/* The "GPU" clock is CLOCK_MONOTONIC in nanoseconds: the clock the engine
 * and the core time everything by. */
static NTSTATUS APIENTRY soft_calibrate_gpu_clock(HANDLE hAdapter, UINT32 node, UINT32 engine,
                                                  DXGKARG_CALIBRATEGPUCLOCK *args)
{
    (void)hAdapter;
    if (node != 0 || engine != 0)
        return STATUS_INVALID_PARAMETER;
    args->GpuFrequency = 1000000000ull;
    args->GpuClockCounter = kmt_now_ns();
    args->CpuClockCounter = kmt_qpc_now();
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY KmtSoftMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    DRIVER_INITIALIZATION_DATA init = {
        .Version = KMT_MINIPORT_INTERFACE_VERSION,
        .Size = sizeof(DRIVER_INITIALIZATION_DATA),
        .DriverName = "soft",
        .KmtDdiEnumPhysicalDevices = soft_enum_physical_devices,
        .DxgkDdiAddDevice = soft_add_device,
        .DxgkDdiStartDevice = soft_start_device,
        .DxgkDdiStopDevice = soft_stop_device,
        .DxgkDdiRemoveDevice = soft_remove_device,
        .DxgkDdiQueryAdapterInfo = soft_query_adapter_info,
        .DxgkDdiCreateDevice = soft_create_device,
        .DxgkDdiDestroyDevice = soft_destroy_device,
        .DxgkDdiCreateAllocation = soft_create_allocation,
        .DxgkDdiDestroyAllocation = soft_destroy_allocation,
        .DxgkDdiOpenAllocation = soft_open_allocation,
        .DxgkDdiCloseAllocation = soft_close_allocation,
        .DxgkDdiLock = soft_lock,
        .DxgkDdiUnlock = soft_unlock,
        .DxgkDdiEscape = soft_escape,
        .DxgkDdiCreateContext = soft_create_context,
        .DxgkDdiDestroyContext = soft_destroy_context,
        .DxgkDdiRender = soft_render,
        .DxgkDdiSubmitCommand = soft_submit_command,
        .DxgkDdiSubmitCommandVirtual = soft_submit_command_virtual,
        .DxgkDdiResetEngine = soft_reset_engine,
        .DxgkDdiCalibrateGpuClock = soft_calibrate_gpu_clock,
        .KmtDdiMapSystemMemory = soft_map_system_memory,
        .KmtDdiExportAllocation = soft_export_allocation,
        .KmtDdiImportAllocation = soft_import_allocation,
        .KmtDdiUnmapSystemMemory = soft_unmap_system_memory,
        .DxgkDdiMiracastCreateContext = soft_miracast_create_context,
        .DxgkDdiMiracastDestroyContext = soft_miracast_destroy_context,
        .DxgkDdiMiracastIoControl = soft_miracast_io_control,
        .DxgkDdiControlInterrupt = soft_control_interrupt,
        .DxgkDdiGetScanLine = soft_get_scan_line,
        .DxgkDdiQueryChildStatus = soft_query_child_status,
    };
    return dxgkrnl->DxgkInitialize(driver, &init);
}
