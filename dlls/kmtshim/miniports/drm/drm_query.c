/*
 * DRM miniport: DxgkDdiQueryAdapterInfo.  What Windows reads from PnP (PCI
 * ids, bus address) comes from drmGetDevices2; segments and budgets from
 * drm_budget.c.
 */
#include <stdio.h>
#include <string.h>
#include <xf86drm.h>

#include "drm_winsys.h"
#include "drm_bo.h"

static NTSTATUS umd_private(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    KMT_DRM_UMD_PRIVATE p;

    if (q->OutputDataSize < sizeof(p))
        return STATUS_BUFFER_TOO_SMALL;
    memset(&p, 0, sizeof(p));
    p.Magic = KMT_DRM_MAGIC;
    p.Version = KMT_DRM_VERSION;
    snprintf(p.DriverName, sizeof(p.DriverName), "%s", a->phys.driver);
    snprintf(p.Family, sizeof(p.Family), "%s", a->family->name);
    snprintf(p.RenderNode, sizeof(p.RenderNode), "%s", a->phys.render_node);
    snprintf(p.PrimaryNode, sizeof(p.PrimaryNode), "%s", a->phys.card_node);
    p.Caps = a->caps;
    p.PageSize = a->page_size;
    p.DrmFd = a->fd;
    p.AllocatorAvailable = a->family->create != NULL;
    memcpy(q->pOutputData, &p, sizeof(p));
    return STATUS_SUCCESS;
}

static NTSTATUS driver_caps(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    DXGK_DRIVERCAPS *caps = q->pOutputData;

    if (q->OutputDataSize != sizeof(*caps))
        return STATUS_INVALID_PARAMETER;
    memset(caps, 0, sizeof(*caps));
    caps->WDDMVersion = KMT_DRIVERVERSION_WDDM_2_7;
    caps->NodeCount = 1;                 /* one engine: the kernel driver's queue */
    caps->PhysicalAdapterCount = 1;
    return STATUS_SUCCESS;
}

static void segment(DXGK_SEGMENTDESCRIPTOR *seg, UINT64 size, bool aperture, bool visible)
{
    seg->Size = size;
    seg->CommitLimit = size;
    seg->Flags.Aperture = aperture;
    seg->Flags.CpuVisible = visible;
    seg->Flags.CacheCoherent = aperture;
    seg->Flags.PopulatedFromSystemMemory = aperture;
    seg->Flags.LocalBudgetGroup = !aperture;
    seg->Flags.NonLocalBudgetGroup = aperture;
}

static NTSTATUS segments(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    DXGK_QUERYSEGMENTOUT *out = q->pOutputData;
    const struct kdrm_memory *m = &a->memory;

    if (q->OutputDataSize != sizeof(*out))
        return STATUS_INVALID_PARAMETER;
    memset(out, 0, sizeof(*out));
    if (m->discrete) {
        /* VRAM, then the system memory the GPU reaches through its GART */
        segment(&out->pSegmentDescriptor[0], m->local_size, false, m->local_visible >= m->local_size);
        segment(&out->pSegmentDescriptor[1], m->nonlocal_size, true, true);
        out->NbSegment = m->nonlocal_size ? 2 : 1;
    } else {
        /* UMA: one aperture segment of system memory, in the local group */
        segment(&out->pSegmentDescriptor[0], m->local_size, true, true);
        out->pSegmentDescriptor[0].Flags.LocalBudgetGroup = 1;
        out->pSegmentDescriptor[0].Flags.NonLocalBudgetGroup = 0;
        out->NbSegment = 1;
    }
    return STATUS_SUCCESS;
}

static NTSTATUS adapter_desc(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    KMT_ADAPTER_DESC *d = q->pOutputData;

    if (q->OutputDataSize != sizeof(*d))
        return STATUS_INVALID_PARAMETER;
    memset(d, 0, sizeof(*d));
    snprintf(d->DriverName, sizeof(d->DriverName), "%s", a->phys.driver);
    snprintf(d->Description, sizeof(d->Description), "%s", a->phys.description);
    d->AdapterType.RenderSupported = 1;
    d->AdapterType.Paravirtualized = !strcmp(a->phys.driver, "virtio_gpu");
    d->AdapterType.HybridIntegrated = 0;
    d->DeviceIds = a->phys.ids;
    d->Address = a->phys.address;
    d->HasAddress = a->phys.has_address;
    d->NumOfSources = a->kms.count;
    d->AdapterType.DisplaySupported = a->kms.count > 0;
    return STATUS_SUCCESS;
}

static NTSTATUS node_metadata(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    DXGK_NODEMETADATA *meta = q->pOutputData;
    char name[48];

    if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(*meta) ||
        *(const UINT *)q->pInputData != 0)
        return STATUS_INVALID_PARAMETER;
    memset(meta, 0, sizeof(*meta));
    meta->EngineType = DXGK_ENGINE_TYPE_3D;
    snprintf(name, sizeof(name), "%.31s 3D", a->phys.driver);
    for (unsigned i = 0; name[i] && i < sizeof(meta->FriendlyName) / sizeof(meta->FriendlyName[0]) - 1; i++)
        meta->FriendlyName[i] = (WCHAR)name[i];
    /* No GpuMmu: the program reserves and maps no GPU VAs of its own.  Where
     * the adapter has GPU VA (kdrm_adapter.gpu_va: i915 with softpin, xe,
     * amdgpu) each allocation gets its address from the kernel driver's VM
     * at create; elsewhere allocations report 0. */
    meta->GpuMmuSupported = FALSE;
    return STATUS_SUCCESS;
}

static NTSTATUS memory_usage(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(KMT_MEMORY_BUDGET))
        return STATUS_INVALID_PARAMETER;
    return kdrm_memory_budget(a, *(const UINT *)q->pInputData, q->pOutputData);
}

static void wide(WCHAR *out, const char *s)
{
    for (size_t i = 0; i < MAX_PATH - 1 && (*out = (WCHAR)(unsigned char)*s); i++)
        out++, s++;
    *out = 0;
}

/* The HardwareInformation strings as GPU vendors' INFs write them: the
 * product, the video BIOS version (amdgpu reports it), "Integrated
 * RAMDAC" for a PCI GPU (whose display engine is on the chip) and the
 * chip as driver and device id. */
static NTSTATUS registry_info(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    D3DKMT_ADAPTERREGISTRYINFO *info = q->pOutputData;
    char chip[64];

    if (q->OutputDataSize != sizeof(*info))
        return STATUS_INVALID_PARAMETER;
    memset(info, 0, sizeof(*info));
    wide(info->AdapterString, a->phys.description);
    wide(info->BiosString, a->perf.vbios);
    wide(info->DacType, a->phys.bustype == DRM_BUS_PCI ? "Integrated RAMDAC" : "");
    snprintf(chip, sizeof(chip), "%s (0x%04X)", a->phys.driver, a->phys.ids.DeviceID);
    wide(info->ChipType, chip);
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY kdrm_query_adapter_info(HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *q)
{
    struct kdrm_adapter *a = hAdapter;

    switch (q->Type) {
    case DXGKQAITYPE_UMDRIVERPRIVATE:
        return umd_private(a, q);
    case DXGKQAITYPE_DRIVERCAPS:
        return driver_caps(a, q);
    case DXGKQAITYPE_QUERYSEGMENT:
        return segments(a, q);
    case DXGKQAITYPE_KMT_ADAPTERDESC:
        return adapter_desc(a, q);
    case DXGKQAITYPE_KMT_MEMORYUSAGE:
        return memory_usage(a, q);
    case DXGKQAITYPE_KMT_NODEMETADATA:
        return node_metadata(a, q);
    case DXGKQAITYPE_KMT_CURRENTDISPLAYMODE:
        return kdrm_kms_current_mode(a, q);
    case DXGKQAITYPE_KMT_REGISTRYINFO:
        return registry_info(a, q);
    case DXGKQAITYPE_NODEPERFDATA:
    case DXGKQAITYPE_ADAPTERPERFDATA:
    case DXGKQAITYPE_ADAPTERPERFDATA_CAPS:
        return kdrm_perf_query(a, q);
    case DXGKQAITYPE_KMT_NODERUNNINGTIME:
        return kdrm_node_running_time(a, q);
    default:
        return STATUS_NOT_SUPPORTED;
    }
}
