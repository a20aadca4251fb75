/*
 * The DXGKRNL_INTERFACE callbacks a miniport gets in DxgkDdiStartDevice.
 */
#include <string.h>

#include "dxgkrnl.h"
#include "vidsch.h"
#include "sync.h"
#include "miracast.h"
#include "base/kmt_debug.h"

static void read_driver_allocation(const struct kmt_object *obj, void *out)
{
    *(HANDLE *)out = ((const struct dxgk_allocation *)obj)->driver_allocation;
}

static void read_device_allocation(const struct kmt_object *obj, void *out)
{
    *(HANDLE *)out = ((const struct dxgk_allocation *)obj)->device_allocation;
}

static void read_driver_resource(const struct kmt_object *obj, void *out)
{
    *(HANDLE *)out = dxgk_resource_driver_handle((const struct dxgk_resource *)obj);
}

/* Called from inside a DDI: objects are only peeked at (see hmgr_peek), so
 * a destroy racing with the call never runs its teardown on this thread. */
static PVOID APIENTRY cb_get_handle_data(const DXGKARGCB_GETHANDLEDATA *args)
{
    HANDLE result = NULL;

    if (!args)
        return NULL;
    if (args->Type == DXGK_HANDLE_ALLOCATION) {
        struct dxgk_allocation *alloc = dxgk_allocation_find_creating(args->hObject);

        if (alloc)
            return args->Flags.DeviceSpecific ? alloc->device_allocation : alloc->driver_allocation;
        hmgr_peek(&dxgk_process.handles, args->hObject, HMGR_TYPE_ALLOCATION,
                  args->Flags.DeviceSpecific ? read_device_allocation : read_driver_allocation, &result);
    } else if (args->Type == DXGK_HANDLE_RESOURCE) {
        hmgr_peek(&dxgk_process.handles, args->hObject, HMGR_TYPE_RESOURCE, read_driver_resource, &result);
    } else if (args->Type == DXGK_HANDLE_KMT_FENCE) {
        result = dxgk_syncobj_driver_fence(args->hObject);
    }
    return result;
}

static void APIENTRY cb_trace(HANDLE hAdapter, KMT_TRACE_LEVEL level, const char *function,
                              const char *message)
{
    struct dxgk_adapter *adapter = hAdapter;
    struct kmt_debug_channel *ch = &kmt_dbch_dxgk;
    enum kmt_debug_class cls = level > KMT_TRACE_TRACE ? KMT_DBG_TRACE : (enum kmt_debug_class)level;

    if (adapter && !strcmp(adapter->miniport->name, "soft"))
        ch = &kmt_dbch_softgpu;
    else if (adapter && !strcmp(adapter->miniport->name, "drm"))
        ch = &kmt_dbch_drm;
    if (kmt_debug_on(ch, cls))
        kmt_debug_log(ch, cls, function ? function : "?", "%s", message ? message : "");
}

void dxgk_fill_interface(struct dxgk_adapter *adapter, DXGKRNL_INTERFACE *iface)
{
    memset(iface, 0, sizeof(*iface));
    iface->Size = sizeof(*iface);
    iface->Version = KMT_MINIPORT_INTERFACE_VERSION;
    iface->DeviceHandle = adapter;
    iface->DxgkCbGetHandleData = cb_get_handle_data;
    iface->KmtCbTrace = cb_trace;
    dxgk_context_callbacks(iface);
    dxgk_sched_callbacks(iface);
    dxgk_miracast_callbacks(iface);
}
