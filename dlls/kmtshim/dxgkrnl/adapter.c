/*
 * Adapters: starting the miniport's devices, adapter handles, enumeration,
 * QueryAdapterInfo and QueryVideoMemoryInfo.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "vidsch.h"
#include "base/kmt_debug.h"
#include "ddi.h"
#include "umd_config.h"

/* ---- starting and stopping ------------------------------------------------ */

static void adapter_free(struct dxgk_adapter *adapter)
{
    pthread_mutex_destroy(&adapter->sched_init_lock);
    pthread_mutex_destroy(&adapter->fence_lock);
    pthread_mutex_destroy(&adapter->ctx_alloc_lock);
    pthread_mutex_destroy(&adapter->vidpn_lock);
    dxgk_flips_fini(adapter);
    dxgk_vblank_fini(adapter);
    dxgk_config_free_registry(adapter->registry);
    free(adapter);
}

static void adapter_release(struct kmt_object *obj)
{
    struct dxgk_adapter *adapter = (struct dxgk_adapter *)obj;

    /* The miniport's engine goes first: it may still raise interrupts
     * into the scheduler. */
    dxgk_ddi_stop_device(adapter);
    dxgk_sched_stop(adapter);
    dxgk_ddi_remove_device(adapter);
    adapter_free(adapter);
    dxgk_count_object(-1);
}

void dxgk_adapter_put(struct dxgk_adapter *adapter)
{
    kmt_object_put(&adapter->obj);
}

/* Stable across runs and processes: a hash of the driver and the device's
 * location, the way the DRM miniport's bus id or "soft0" names it. */
static LUID derive_luid(const char *driver, const char *location)
{
    uint64_t h = 0xcbf29ce484222325ull;
    LUID luid;

    for (const char *p = driver; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ ':') * 0x100000001b3ull;
    for (const char *p = location; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    luid.LowPart = (ULONG)h;
    luid.HighPart = (LONG)((h >> 32) & 0x7fffffff);
    if (!luid.LowPart && !luid.HighPart)
        luid.LowPart = 1;
    return luid;
}

static bool luid_in_use(LUID luid)
{
    struct dxgk_adapter *a;

    LIST_FOR_EACH_ENTRY(a, &dxgk_process.adapters, struct dxgk_adapter, entry)
        if (a->luid.LowPart == luid.LowPart && a->luid.HighPart == luid.HighPart)
            return true;
    return false;
}

static NTSTATUS start_one(struct dxgk_miniport *mp, const KMT_PHYSICAL_DEVICE *pdo)
{
    struct dxgk_adapter *adapter = calloc(1, sizeof(*adapter));
    DXGK_START_INFO start = { 0 };
    ULONG children = 0;
    NTSTATUS status;

    if (!adapter)
        return STATUS_NO_MEMORY;
    kmt_object_init(&adapter->obj, HMGR_TYPE_ADAPTER, adapter_release);
    pthread_mutex_init(&adapter->sched_init_lock, NULL);
    pthread_mutex_init(&adapter->fence_lock, NULL);
    pthread_mutex_init(&adapter->ctx_alloc_lock, NULL);
    pthread_mutex_init(&adapter->vidpn_lock, NULL);
    dxgk_vblank_init(adapter);
    dxgk_flips_init(adapter);
    list_init(&adapter->fences);
    list_init(&adapter->context_allocations);
    adapter->miniport = mp;
    adapter->ddi = &mp->ddi;
    adapter->pdo = *pdo;
    adapter->pdo.LocationId[sizeof(adapter->pdo.LocationId) - 1] = 0;
    adapter->luid = derive_luid(mp->name, adapter->pdo.LocationId);
    while (luid_in_use(adapter->luid))
        adapter->luid.LowPart++;

    if ((status = dxgk_ddi_add_device(adapter))) {
        adapter_free(adapter);
        return status;
    }
    dxgk_count_object(+1);
    dxgk_fill_interface(adapter, &adapter->iface);
    start.AdapterLuid = adapter->luid;
    start.AdapterGuid.Data1 = adapter->luid.LowPart;
    /* every monitor counts as connected until a poll or the miniport says
     * not; set before the start, as the miniport may report a change from
     * its own thread before the start has returned */
    for (UINT i = 0; i < DXGK_MAX_VIDPN_SOURCES; i++)
        atomic_init(&adapter->child_connected[i], true);
    status = dxgk_ddi_start_device(adapter, &start, &children);
    if (!status) {
        status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_DRIVERCAPS, NULL, 0,
                                        &adapter->caps, sizeof(adapter->caps));
    }
    if (!status)
        status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_QUERYSEGMENT, NULL, 0,
                                        &adapter->segments, sizeof(adapter->segments));
    if (!status)
        status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_ADAPTERDESC, NULL, 0,
                                        &adapter->desc, sizeof(adapter->desc));
    if (status) {
        WARN_(dxgk, "%s: starting %s failed: %s\n", mp->name, pdo->LocationId,
              kmt_debugstr_status(status));
        adapter_release(&adapter->obj);
        return status;
    }
    adapter->desc.DriverName[sizeof(adapter->desc.DriverName) - 1] = 0;
    adapter->desc.Description[sizeof(adapter->desc.Description) - 1] = 0;
    /* UMD and ICD names: the miniport's, unless configured (umd_config.c) */
    dxgk_config_apply(&adapter->desc, &(struct dxgk_config_match){ mp->name,
                      adapter->desc.DeviceIds.VendorID, adapter->desc.DeviceIds.DeviceID, adapter->luid },
                      &adapter->registry);
    if (!adapter->caps.PhysicalAdapterCount)
        adapter->caps.PhysicalAdapterCount = 1;
    /* a report that came during the start is kept: only the slots past the
     * children are cleared */
    for (UINT i = children; i < DXGK_MAX_VIDPN_SOURCES; i++)
        atomic_store(&adapter->child_connected[i], false);
    __atomic_store_n(&adapter->num_children, children, __ATOMIC_RELEASE);
    if ((status = dxgk_adapter_registry_info_init(adapter))) {
        WARN_(dxgk, "%s: %s: no registry strings: %s\n", mp->name, pdo->LocationId,
              kmt_debugstr_status(status));
        adapter_release(&adapter->obj);
        return status;
    }
    if (adapter->segments.NbSegment > KMT_MAX_SEGMENTS)
        adapter->segments.NbSegment = KMT_MAX_SEGMENTS;
    list_add_tail(&dxgk_process.adapters, &adapter->entry);
    TRACE_(dxgk, "adapter %08x:%08x: %s (%s)\n", (unsigned)adapter->luid.HighPart,
           (unsigned)adapter->luid.LowPart, adapter->desc.Description, mp->name);
    return STATUS_SUCCESS;
}

/* Called at init with dxgk_process.lock held.  A device that fails to
 * start is left out, unless memory ran out: that fails the whole start. */
NTSTATUS dxgk_start_adapters(struct dxgk_miniport *mp)
{
    KMT_PHYSICAL_DEVICE devices[KMT_MAX_PHYSICAL_DEVICES];
    UINT count = KMT_MAX_PHYSICAL_DEVICES, started = 0;
    NTSTATUS status;

    memset(devices, 0, sizeof(devices));
    status = dxgk_ddi_enum_physical_devices(mp, &count, devices);
    if (status)
        return status;
    if (count > KMT_MAX_PHYSICAL_DEVICES)
        count = KMT_MAX_PHYSICAL_DEVICES;
    for (UINT i = 0; i < count; i++) {
        status = start_one(mp, &devices[i]);
        if (dxgk_status_is_exhaustion(status))
            return status;
        if (!status)
            started++;
    }
    return started ? STATUS_SUCCESS : STATUS_OBJECT_NAME_NOT_FOUND;
}

/* Drops the started adapters.  dxgk_process.lock held, no handle open. */
void dxgk_release_adapters_locked(void)
{
    while (!list_empty(&dxgk_process.adapters)) {
        struct dxgk_adapter *adapter = LIST_ENTRY(dxgk_process.adapters.next, struct dxgk_adapter, entry);

        list_remove(&adapter->entry);
        dxgk_adapter_put(adapter);
    }
}

void dxgk_stop_adapters(void)
{
    struct dxgk_adapter_handle *ah;

    for (;;) {
        D3DKMT_HANDLE h = 0;

        pthread_mutex_lock(&dxgk_process.lock);
        if (!list_empty(&dxgk_process.adapter_handles)) {
            ah = LIST_ENTRY(dxgk_process.adapter_handles.next, struct dxgk_adapter_handle, entry);
            h = ah->handle;
        }
        pthread_mutex_unlock(&dxgk_process.lock);
        if (!h)
            break;
        dxgk_close_adapter(h);
    }
    pthread_mutex_lock(&dxgk_process.lock);
    dxgk_release_adapters_locked();
    pthread_mutex_unlock(&dxgk_process.lock);
}

/* ---- adapter handles -------------------------------------------------------- */

static void adapter_handle_release(struct kmt_object *obj)
{
    struct dxgk_adapter_handle *ah = (struct dxgk_adapter_handle *)obj;

    dxgk_adapter_put(ah->adapter);
    free(ah);
    dxgk_count_object(-1);
}

/* An adapter handle's memory and reserved value, not yet visible. */
static struct dxgk_adapter_handle *adapter_handle_reserve(struct dxgk_adapter *adapter)
{
    struct dxgk_adapter_handle *ah = malloc(sizeof(*ah));

    if (!ah)
        return NULL;
    if (!(ah->handle = hmgr_alloc(&dxgk_process.handles))) {
        free(ah);
        return NULL;
    }
    ah->adapter = adapter;
    return ah;
}

/* Gives a reservation up: its value is handed out again next. */
static void adapter_handle_cancel(struct dxgk_adapter_handle *ah)
{
    hmgr_cancel(&dxgk_process.handles, ah->handle);
    free(ah);
}

static D3DKMT_HANDLE adapter_handle_publish(struct dxgk_adapter_handle *ah)
{
    kmt_object_init(&ah->obj, HMGR_TYPE_ADAPTER, adapter_handle_release);
    kmt_object_get(&ah->adapter->obj);
    dxgk_count_object(+1);
    pthread_mutex_lock(&dxgk_process.lock);
    list_add_tail(&dxgk_process.adapter_handles, &ah->entry);
    pthread_mutex_unlock(&dxgk_process.lock);
    hmgr_publish(&dxgk_process.handles, ah->handle, &ah->obj);
    return ah->handle;
}

NTSTATUS dxgk_open_adapter(struct dxgk_adapter *adapter, D3DKMT_HANDLE *out)
{
    struct dxgk_adapter_handle *ah = adapter_handle_reserve(adapter);

    if (!ah)
        return STATUS_NO_MEMORY;
    *out = adapter_handle_publish(ah);
    return STATUS_SUCCESS;
}

static void take_adapter(const struct kmt_object *obj, void *out)
{
    struct dxgk_adapter *adapter = ((const struct dxgk_adapter_handle *)obj)->adapter;

    kmt_object_get(&adapter->obj);
    *(struct dxgk_adapter **)out = adapter;
}

/* Under the handle's slot lock, which keeps the handle object (and its
 * reference on the adapter) alive: the adapter's reference is the only
 * one taken. */
struct dxgk_adapter *dxgk_adapter_from_handle(D3DKMT_HANDLE h)
{
    struct dxgk_adapter *adapter = NULL;

    hmgr_peek(&dxgk_process.handles, h, HMGR_TYPE_ADAPTER, take_adapter, &adapter);
    return adapter;
}

NTSTATUS dxgk_close_adapter(D3DKMT_HANDLE h)
{
    struct dxgk_adapter_handle *ah =
        (struct dxgk_adapter_handle *)hmgr_remove(&dxgk_process.handles, h, HMGR_TYPE_ADAPTER);

    if (!ah)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&dxgk_process.lock);
    list_remove(&ah->entry);
    pthread_mutex_unlock(&dxgk_process.lock);
    /* Devices hold the adapter, not this handle: they live on, as on
     * Windows.  The vblank waits that named the handle end. */
    dxgk_vblank_adapter_closed(ah->adapter, h);
    kmt_object_put(&ah->obj);
    return STATUS_SUCCESS;
}

/* ---- enumeration --------------------------------------------------------------- */

static bool adapter_listed(const struct dxgk_adapter *a, bool include_compute_only)
{
    return include_compute_only || !a->desc.AdapterType.ComputeOnly;
}

ULONG dxgk_adapters_snapshot(struct dxgk_adapter **out, bool include_compute_only)
{
    struct dxgk_adapter *a;
    ULONG n = 0;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(a, &dxgk_process.adapters, struct dxgk_adapter, entry) {
        if (!adapter_listed(a, include_compute_only) || n == DXGK_MAX_LISTED)
            continue;
        kmt_object_get(&a->obj);
        out[n++] = a;
    }
    pthread_mutex_unlock(&dxgk_process.lock);
    return n;
}

void dxgk_adapters_release(struct dxgk_adapter **list, ULONG n)
{
    for (ULONG i = 0; i < n; i++)
        dxgk_adapter_put(list[i]);
}

NTSTATUS dxgk_enum_adapters(D3DKMT_ADAPTERINFO *out, ULONG *count, ULONG capacity,
                            bool include_compute_only)
{
    struct dxgk_adapter *snapshot[DXGK_MAX_LISTED];
    struct dxgk_adapter_handle *reserved[DXGK_MAX_LISTED];
    D3DKMT_HANDLE opened[DXGK_MAX_LISTED];
    ULONG n = dxgk_adapters_snapshot(snapshot, include_compute_only), i;
    NTSTATUS status = STATUS_SUCCESS;

    if (!out) {
        *count = n;
        goto done;
    }
    if (capacity < n) {
        status = STATUS_BUFFER_TOO_SMALL;
        goto done;
    }
    /* All or nothing: every handle is reserved before any is published,
     * so a refusal gives each value back (in reverse) and writes nothing. */
    for (i = 0; i < n; i++) {
        if (!(reserved[i] = adapter_handle_reserve(snapshot[i]))) {
            while (i--)
                adapter_handle_cancel(reserved[i]);
            status = STATUS_NO_MEMORY;
            goto done;
        }
    }
    for (i = 0; i < n; i++)
        opened[i] = adapter_handle_publish(reserved[i]);
    for (i = 0; i < n; i++) {
        out[i].hAdapter = opened[i];
        out[i].AdapterLuid = snapshot[i]->luid;
        out[i].NumOfSources = snapshot[i]->num_sources;
        out[i].bPrecisePresentRegionsPreferred = FALSE;
    }
    *count = n;
done:
    dxgk_adapters_release(snapshot, n);
    return status;
}

struct dxgk_adapter *dxgk_adapter_from_luid(LUID luid)
{
    struct dxgk_adapter *a, *found = NULL;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(a, &dxgk_process.adapters, struct dxgk_adapter, entry) {
        if (a->luid.LowPart == luid.LowPart && a->luid.HighPart == luid.HighPart) {
            found = a;
            kmt_object_get(&a->obj);
            break;
        }
    }
    pthread_mutex_unlock(&dxgk_process.lock);
    return found;
}

NTSTATUS dxgk_open_adapter_from_luid(LUID luid, D3DKMT_HANDLE *out)
{
    struct dxgk_adapter *found = dxgk_adapter_from_luid(luid);
    NTSTATUS status;

    if (!found)
        return STATUS_INVALID_PARAMETER;
    status = dxgk_open_adapter(found, out);
    dxgk_adapter_put(found);
    return status;
}

/* ---- QueryAdapterInfo ------------------------------------------------------------ */

/* Exact payload size of each type kmtshim answers; 0 for "any non-zero size". */
static NTSTATUS qai_size(KMTQUERYADAPTERINFOTYPE type, UINT *size)
{
    switch (type) {
    case KMTQAITYPE_UMDRIVERPRIVATE:          *size = 0; break;
    case KMTQAITYPE_UMDRIVERNAME:             *size = sizeof(D3DKMT_UMDFILENAMEINFO); break;
    case KMTQAITYPE_UMOPENGLINFO:             *size = sizeof(D3DKMT_OPENGLINFO); break;
    case KMTQAITYPE_GETSEGMENTSIZE:           *size = sizeof(D3DKMT_SEGMENTSIZEINFO); break;
    case KMTQAITYPE_ADAPTERADDRESS:           *size = sizeof(D3DKMT_ADAPTERADDRESS); break;
    case KMTQAITYPE_CHECKDRIVERUPDATESTATUS:  *size = sizeof(BOOL); break;
    case KMTQAITYPE_DRIVERVERSION:            *size = sizeof(D3DKMT_DRIVERVERSION); break;
    case KMTQAITYPE_ADAPTERTYPE:
    case KMTQAITYPE_ADAPTERTYPE_RENDER:       *size = sizeof(D3DKMT_ADAPTERTYPE); break;
    case KMTQAITYPE_PHYSICALADAPTERCOUNT:     *size = sizeof(UINT); break;
    case KMTQAITYPE_PHYSICALADAPTERDEVICEIDS: *size = sizeof(D3DKMT_QUERY_DEVICE_IDS); break;
    case KMTQAITYPE_WDDM_2_7_CAPS:            *size = sizeof(D3DKMT_WDDM_2_7_CAPS); break;
    case KMTQAITYPE_NODEMETADATA:             *size = sizeof(D3DKMT_NODEMETADATA); break;
    case KMTQAITYPE_QUERYREGISTRY:            *size = 0; break;   /* at least the structure */
    case KMTQAITYPE_CURRENTDISPLAYMODE:       *size = sizeof(D3DKMT_CURRENTDISPLAYMODE); break;
    default:
        if (!(*size = dxgk_qai_ext_size(type)))
            return STATUS_NOT_SUPPORTED;
    }
    return STATUS_SUCCESS;
}

static size_t wcslen16(const WCHAR *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

static void segment_sizes(const struct dxgk_adapter *adapter, D3DKMT_SEGMENTSIZEINFO *info)
{
    memset(info, 0, sizeof(*info));
    for (UINT i = 0; i < adapter->segments.NbSegment; i++) {
        const DXGK_SEGMENTDESCRIPTOR *seg = &adapter->segments.pSegmentDescriptor[i];

        if (seg->Flags.Aperture)
            info->SharedSystemMemorySize += seg->Size;
        else if (seg->Flags.PopulatedFromSystemMemory || seg->Flags.ReservedSysMem)
            info->DedicatedSystemMemorySize += seg->Size;
        else
            info->DedicatedVideoMemorySize += seg->Size;
    }
}

/* KMTQAITYPE_QUERYREGISTRY, as the Vulkan and OpenCL loaders use it: a
 * first call with the bare structure learns the size (BUFFER_OVERFLOW and
 * OutputValueSize), a second with sizeof(structure) + that size gets the
 * value.  A value that is not there, or a path kmtshim has none of, is
 * STATUS_SUCCESS with Status FAIL, as the documentation gives it; input
 * the documentation does not give a status for (a type or flag Windows
 * does not define, an adapter index past the adapter's count, a name with
 * no NUL, a ValueType other than the stored value's) is
 * STATUS_INVALID_PARAMETER, which the Vulkan loader takes as "try REG_SZ"
 * after REG_MULTI_SZ.  On a failure nothing is written back. */
static NTSTATUS query_registry(const struct dxgk_adapter *adapter, D3DDDI_QUERYREGISTRY_INFO *info, UINT size)
{
    const struct dxgk_reg_value *value;
    UINT room;

    if (size < sizeof(*info))
        return STATUS_INVALID_PARAMETER;
    room = size - (UINT)offsetof(D3DDDI_QUERYREGISTRY_INFO, OutputBinary);
    if ((unsigned)info->QueryType >= D3DDDI_QUERYREGISTRY_MAX || info->QueryFlags.Reserved ||
        info->PhysicalAdapterIndex >= adapter->caps.PhysicalAdapterCount)
        return STATUS_INVALID_PARAMETER;
    if (info->QueryType == D3DDDI_QUERYREGISTRY_DRIVERSTOREPATH ||
        info->QueryType == D3DDDI_QUERYREGISTRY_DRIVERIMAGEPATH) {
        if (info->ValueType)
            return STATUS_INVALID_PARAMETER;
        /* no driver store on Linux: the path is not there */
        info->OutputValueSize = 0;
        info->Status = D3DDDI_QUERYREGISTRY_STATUS_FAIL;
        return STATUS_SUCCESS;
    }
    if (wcslen16(info->ValueName, MAX_PATH) == MAX_PATH)   /* the path types ignore the name */
        return STATUS_INVALID_PARAMETER;
    if (!(value = dxgk_config_find_registry(adapter->registry, info->QueryType, info->ValueName))) {
        info->OutputValueSize = 0;
        info->Status = D3DDDI_QUERYREGISTRY_STATUS_FAIL;
        return STATUS_SUCCESS;
    }
    if (info->ValueType != value->type)
        return STATUS_INVALID_PARAMETER;
    /* TranslatePath: the configured string is already the path the
     * program opens (a Windows path under Wine, a Linux one natively),
     * so it comes back as written. */
    info->OutputValueSize = value->size;
    if (value->size > room) {
        info->Status = D3DDDI_QUERYREGISTRY_STATUS_BUFFER_OVERFLOW;
        return STATUS_SUCCESS;
    }
    memcpy(info->OutputBinary, value->data, value->size);
    info->Status = D3DDDI_QUERYREGISTRY_STATUS_SUCCESS;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_query_adapter_info(D3DKMT_HANDLE h, KMTQUERYADAPTERINFOTYPE type,
                                 void *data, UINT size)
{
    struct dxgk_adapter *adapter = dxgk_adapter_from_handle(h);
    NTSTATUS status = STATUS_SUCCESS;
    UINT need = 0;

    if (!adapter)
        return STATUS_INVALID_PARAMETER;
    if (!data || !size || size > DXGK_MAX_PRIVATE_DATA) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    if ((status = qai_size(type, &need)))
        goto out;
    if (need && size != need) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }

    switch (type) {
    case KMTQAITYPE_UMDRIVERPRIVATE:
        status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_UMDRIVERPRIVATE, NULL, 0, data, size);
        break;
    case KMTQAITYPE_UMDRIVERNAME: {
        D3DKMT_UMDFILENAMEINFO *info = data;
        if ((unsigned)info->Version >= NUM_KMTUMDVERSIONS) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        if (!wcslen16(adapter->desc.UmdFileName[info->Version], MAX_PATH)) {
            status = STATUS_OBJECT_NAME_NOT_FOUND;
            break;
        }
        memcpy(info->UmdFileName, adapter->desc.UmdFileName[info->Version], sizeof(info->UmdFileName));
        info->UmdFileName[MAX_PATH - 1] = 0;
        break;
    }
    case KMTQAITYPE_UMOPENGLINFO: {
        D3DKMT_OPENGLINFO *info = data;
        if (!wcslen16(adapter->desc.OpenGlIcdFileName, MAX_PATH)) {
            status = STATUS_OBJECT_NAME_NOT_FOUND;
            break;
        }
        memcpy(info->UmdOpenGlIcdFileName, adapter->desc.OpenGlIcdFileName,
               sizeof(info->UmdOpenGlIcdFileName));
        info->UmdOpenGlIcdFileName[MAX_PATH - 1] = 0;
        info->Version = adapter->desc.OpenGlVersion;
        info->Flags = adapter->desc.OpenGlFlags;
        break;
    }
    case KMTQAITYPE_GETSEGMENTSIZE:
        segment_sizes(adapter, data);
        break;
    case KMTQAITYPE_ADAPTERADDRESS:
        if (!adapter->desc.HasAddress)
            status = STATUS_NOT_SUPPORTED;
        else
            memcpy(data, &adapter->desc.Address, sizeof(adapter->desc.Address));
        break;
    case KMTQAITYPE_CHECKDRIVERUPDATESTATUS:
        *(BOOL *)data = adapter->desc.DriverUpdatePending ? TRUE : FALSE;
        break;
    case KMTQAITYPE_DRIVERVERSION:
        *(D3DKMT_DRIVERVERSION *)data = adapter->caps.WDDMVersion;
        break;
    case KMTQAITYPE_ADAPTERTYPE:
    case KMTQAITYPE_ADAPTERTYPE_RENDER:
        *(D3DKMT_ADAPTERTYPE *)data = adapter->desc.AdapterType;
        break;
    case KMTQAITYPE_PHYSICALADAPTERCOUNT:
        *(UINT *)data = adapter->caps.PhysicalAdapterCount;
        break;
    case KMTQAITYPE_PHYSICALADAPTERDEVICEIDS: {
        D3DKMT_QUERY_DEVICE_IDS *ids = data;
        if (ids->PhysicalAdapterIndex >= adapter->caps.PhysicalAdapterCount) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        ids->DeviceIds = adapter->desc.DeviceIds;
        break;
    }
    case KMTQAITYPE_WDDM_2_7_CAPS:
        *(D3DKMT_WDDM_2_7_CAPS *)data = adapter->caps.Wddm27Caps;
        break;
    case KMTQAITYPE_NODEMETADATA: {
        D3DKMT_NODEMETADATA *meta = data;
        UINT node = meta->NodeOrdinalAndAdapterIndex & 0xffff;
        UINT physical = meta->NodeOrdinalAndAdapterIndex >> 16;
        DXGK_NODEMETADATA out;

        if (node >= adapter->caps.NodeCount || physical >= adapter->caps.PhysicalAdapterCount) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        memset(&out, 0, sizeof(out));
        status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_NODEMETADATA, &node, sizeof(node),
                                        &out, sizeof(out));
        if (!status)
            meta->NodeData = out;
        break;
    }
    case KMTQAITYPE_QUERYREGISTRY:
        status = query_registry(adapter, data, size);
        break;
    case KMTQAITYPE_CURRENTDISPLAYMODE:
        status = dxgk_current_display_mode(adapter, data);
        break;
    default:
        status = dxgk_qai_ext(adapter, type, data);
        break;
    }
out:
    dxgk_adapter_put(adapter);
    return status;
}

/* ---- QueryVideoMemoryInfo --------------------------------------------------------- */

NTSTATUS dxgk_query_video_memory_info(D3DKMT_QUERYVIDEOMEMORYINFO *info)
{
    struct dxgk_adapter *adapter;
    KMT_MEMORY_BUDGET budget = { 0 };
    UINT group = (UINT)info->MemorySegmentGroup;
    NTSTATUS status;

    /* Windows checks the process before the adapter.  The native API knows
     * only the calling process (NULL, or the pseudo-handle -1). */
    if (info->hProcess && info->hProcess != (HANDLE)(intptr_t)-1)
        return STATUS_INVALID_HANDLE;
    if (!(adapter = dxgk_adapter_from_handle(info->hAdapter)))
        return STATUS_INVALID_PARAMETER;
    if (group > D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL ||
        info->PhysicalAdapterIndex >= adapter->caps.PhysicalAdapterCount) {
        status = STATUS_INVALID_PARAMETER;
        goto out;
    }
    status = dxgk_ddi_query_adapter_info(adapter, DXGKQAITYPE_KMT_MEMORYUSAGE, &group, sizeof(group),
                                    &budget, sizeof(budget));
    if (status)
        goto out;
    if (budget.AvailableForReservation > budget.Budget)
        budget.AvailableForReservation = budget.Budget;
    info->Budget = budget.Budget;
    info->AvailableForReservation = budget.AvailableForReservation;
    info->CurrentUsage = atomic_load_explicit(&adapter->usage[group], memory_order_relaxed);
    info->CurrentReservation = 0;
out:
    dxgk_adapter_put(adapter);
    return status;
}
