/*
 * sysmem_miniport: the smallest useful kmtshim miniport, as a plugin.
 *
 * A starting point for bringing up your own kernel-side logic in userland:
 * one adapter, allocations in ordinary memory, CPU locks, nothing else
 * (no contexts: CreateContext answers STATUS_NOT_SUPPORTED).  Build it as a
 * shared object and select it with
 *
 *     KMTSHIM_MINIPORT=/path/to/sysmem_miniport.so kmtinfo
 *
 * Allocations take the software adapter's documented descriptor
 * (KMT_SOFT_ALLOCATION_DESC, kmtsoft.h), so programs written for that
 * adapter run here unchanged.  docs/bringup.md walks through this file.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/d3dkmddi.h"
#include "kmtshim/kmtsoft.h"

#define PAGE 4096u
#define BUDGET (256ull << 20)           /* what we let programs allocate */

struct sysmem_adapter {
    DXGKRNL_INTERFACE dxgkrnl;          /* the core's callbacks, from StartDevice */
    atomic_ullong bytes;
};

struct sysmem_allocation {
    void *memory;
    UINT64 size;
    bool caller_memory;                 /* ExistingSysMem: the program's pages */
};

static void trace(struct sysmem_adapter *a, KMT_TRACE_LEVEL level, const char *fmt, ...)
{
    char msg[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* shows up on the core's dxgk channel: WINEDEBUG=+dxgk */
    a->dxgkrnl.KmtCbTrace(a->dxgkrnl.DeviceHandle, level, "sysmem", msg);
}

/* ---- PnP: one device, started once ------------------------------------- */

static NTSTATUS APIENTRY enum_devices(PVOID ctx, UINT *count, KMT_PHYSICAL_DEVICE *devices)
{
    if (*count < 1)
        return STATUS_BUFFER_TOO_SMALL;
    memset(devices, 0, sizeof(*devices));
    strcpy(devices[0].LocationId, "sysmem0");   /* the LUID derives from this */
    strcpy(devices[0].Description, "sysmem sample miniport");
    *count = 1;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY add_device(const KMT_PHYSICAL_DEVICE *pdo, PVOID *ctx)
{
    return (*ctx = calloc(1, sizeof(struct sysmem_adapter))) ? STATUS_SUCCESS : STATUS_NO_MEMORY;
}

static NTSTATUS APIENTRY start_device(PVOID ctx, DXGK_START_INFO *info, DXGKRNL_INTERFACE *iface,
                                      ULONG *sources, ULONG *children)
{
    struct sysmem_adapter *a = ctx;

    a->dxgkrnl = *iface;
    *sources = 0;
    *children = 0;
    trace(a, KMT_TRACE_TRACE, "started, core interface %#x", (unsigned)iface->Version);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY remove_device(PVOID ctx)
{
    free(ctx);
    return STATUS_SUCCESS;
}

/* ---- what the adapter is ------------------------------------------------ */

static NTSTATUS APIENTRY query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q)
{
    struct sysmem_adapter *a = hAdapter;

    switch (q->Type) {
    case DXGKQAITYPE_DRIVERCAPS: {
        DXGK_DRIVERCAPS *caps = q->pOutputData;
        if (q->OutputDataSize != sizeof(*caps))
            return STATUS_INVALID_PARAMETER;
        memset(caps, 0, sizeof(*caps));
        caps->WDDMVersion = KMT_DRIVERVERSION_WDDM_2_0;
        caps->NodeCount = 1;
        caps->PhysicalAdapterCount = 1;
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_QUERYSEGMENT: {
        DXGK_QUERYSEGMENTOUT *out = q->pOutputData;
        if (q->OutputDataSize != sizeof(*out))
            return STATUS_INVALID_PARAMETER;
        memset(out, 0, sizeof(*out));
        out->NbSegment = 1;
        out->pSegmentDescriptor[0].Size = BUDGET;
        out->pSegmentDescriptor[0].Flags.Aperture = 1;
        out->pSegmentDescriptor[0].Flags.CpuVisible = 1;
        out->pSegmentDescriptor[0].Flags.PopulatedFromSystemMemory = 1;
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_KMT_ADAPTERDESC: {
        KMT_ADAPTER_DESC *d = q->pOutputData;
        if (q->OutputDataSize != sizeof(*d))
            return STATUS_INVALID_PARAMETER;
        memset(d, 0, sizeof(*d));
        strcpy(d->DriverName, "sysmem");
        strcpy(d->Description, "sysmem sample miniport");
        d->AdapterType.RenderSupported = 1;
        d->AdapterType.SoftwareDevice = 1;
        return STATUS_SUCCESS;
    }
    case DXGKQAITYPE_KMT_MEMORYUSAGE: {
        KMT_MEMORY_BUDGET *b = q->pOutputData;
        if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(*b))
            return STATUS_INVALID_PARAMETER;
        b->Budget = *(const UINT *)q->pInputData == 0 ? BUDGET : 0;
        b->AvailableForReservation = b->Budget / 2;
        return STATUS_SUCCESS;
    }
    default:
        (void)a;
        return STATUS_NOT_SUPPORTED;
    }
}

/* ---- devices: nothing per device here, but the handle must be ours ------- */

static NTSTATUS APIENTRY create_device(HANDLE hAdapter, DXGKARG_CREATEDEVICE *args)
{
    /* any non-NULL value other than the core's own handle will do */
    args->hDevice = hAdapter;
    if (args->pInfo)
        memset(args->pInfo, 0, sizeof(*args->pInfo));
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY destroy_device(HANDLE hDevice)
{
    return STATUS_SUCCESS;
}

/* ---- allocations ------------------------------------------------------- */

static void free_one(struct sysmem_adapter *a, struct sysmem_allocation *s)
{
    if (!s->caller_memory) {
        atomic_fetch_sub(&a->bytes, s->size);
        free(s->memory);
    }
    free(s);
}

static NTSTATUS create_one(struct sysmem_adapter *a, DXGK_ALLOCATIONINFO *info)
{
    const KMT_SOFT_ALLOCATION_DESC *desc = info->pPrivateDriverData;
    struct sysmem_allocation *s;
    UINT64 size = info->Size;           /* the core sets it for standard allocations */

    if (!size) {
        if (!desc || info->PrivateDriverDataSize < sizeof(*desc) ||
            desc->Magic != KMT_SOFT_ALLOCATION_MAGIC || !desc->Size)
            return STATUS_INVALID_PARAMETER;
        size = (desc->Size + PAGE - 1) & ~(UINT64)(PAGE - 1);
    }
    if (!(s = calloc(1, sizeof(*s))))
        return STATUS_NO_MEMORY;
    s->size = size;
    if (info->Flags.ExistingSysMem) {
        s->memory = (void *)info->pKmtSystemMem;
        s->caller_memory = true;
    } else if (!(s->memory = aligned_alloc(PAGE, size))) {
        free(s);
        return STATUS_GRAPHICS_NO_VIDEO_MEMORY;
    } else {
        memset(s->memory, 0, size);
        atomic_fetch_add(&a->bytes, size);
    }
    info->Size = size;
    info->Alignment = PAGE;
    info->SupportedReadSegmentSet = info->SupportedWriteSegmentSet = 1;
    info->Flags.CpuVisible = 1;
    info->hAllocation = s;              /* our handle: the core hands it back */
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY create_allocation(HANDLE hAdapter, DXGKARG_CREATEALLOCATION *args)
{
    struct sysmem_adapter *a = hAdapter;
    NTSTATUS status = STATUS_SUCCESS;
    UINT i;

    for (i = 0; i < args->NumAllocations && !status; i++)
        status = create_one(a, &args->pAllocationInfo[i]);
    if (status) {
        /* all or nothing: undo what this call made */
        for (UINT j = 0; j + 1 < i; j++)
            free_one(a, args->pAllocationInfo[j].hAllocation);
        return status;
    }
    if (args->Flags.Resource && !args->hResource)
        args->hResource = a;            /* resources need no state here: any non-NULL value */
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY destroy_allocation(HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *args)
{
    for (UINT i = 0; i < args->NumAllocations; i++)
        free_one(hAdapter, args->pAllocationList[i]);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY open_allocation(HANDLE hDevice, const DXGKARG_OPENALLOCATION *args)
{
    struct sysmem_adapter *a = hDevice;  /* our device handle is the adapter */

    for (UINT i = 0; i < args->NumAllocations; i++) {
        DXGK_OPENALLOCATIONINFO *o = &args->pOpenAllocation[i];
        DXGKARGCB_GETHANDLEDATA q = { .hObject = o->hAllocation, .Type = DXGK_HANDLE_ALLOCATION };

        /* the core's handle leads back to our own allocation */
        if (!(o->hDeviceSpecificAllocation = a->dxgkrnl.DxgkCbGetHandleData(&q)))
            return STATUS_INVALID_PARAMETER;
    }
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY close_allocation(HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *args)
{
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY lock(HANDLE hAdapter, DXGKARG_LOCK *args)
{
    args->pData = ((struct sysmem_allocation *)args->hAllocation)->memory;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY unlock(HANDLE hAdapter, const DXGKARG_UNLOCK *args)
{
    return STATUS_SUCCESS;
}

/* ---- the entry point the core looks up ------------------------------------ */

__attribute__((visibility("default")))
NTSTATUS APIENTRY KmtMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl);

__attribute__((visibility("default")))
NTSTATUS APIENTRY KmtMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    DRIVER_INITIALIZATION_DATA init = {
        .Version = KMT_MINIPORT_INTERFACE_VERSION,   /* the version we were built against */
        .Size = sizeof(DRIVER_INITIALIZATION_DATA),
        .DriverName = "sysmem",
        .KmtDdiEnumPhysicalDevices = enum_devices,
        .DxgkDdiAddDevice = add_device,
        .DxgkDdiStartDevice = start_device,
        .DxgkDdiRemoveDevice = remove_device,
        .DxgkDdiQueryAdapterInfo = query_adapter_info,
        .DxgkDdiCreateDevice = create_device,
        .DxgkDdiDestroyDevice = destroy_device,
        .DxgkDdiCreateAllocation = create_allocation,
        .DxgkDdiDestroyAllocation = destroy_allocation,
        .DxgkDdiOpenAllocation = open_allocation,
        .DxgkDdiCloseAllocation = close_allocation,
        .DxgkDdiLock = lock,
        .DxgkDdiUnlock = unlock,
    };

    if (KMT_MINIPORT_INTERFACE_MAJOR(dxgkrnl->Version) != KMT_MINIPORT_INTERFACE_MAJOR(init.Version))
        return STATUS_REVISION_MISMATCH;
    return dxgkrnl->DxgkInitialize(driver, &init);
}
