/*
 * The native library's extras (kmtshim.h): no Windows counterpart.
 */
#include "config.h"
#include "kmtshim/kmtshim.h"
#include <stdio.h>

#include "thunk.h"

const char *KmtGetVersion(void)
{
    return PACKAGE_VERSION;
}

NTSTATUS KmtRegisterMiniport(const char *name, PKMT_MINIPORT_DRIVER_ENTRY entry)
{
    return dxgk_register_builtin(name, entry);
}

void KmtProcessShutdown(void)
{
    dxgk_process_shutdown();
}

NTSTATUS KmtQueryAdapterDescription(D3DKMT_HANDLE hAdapter, KMT_ADAPTER_DESCRIPTION *desc)
{
    struct dxgk_adapter *adapter;

    THUNK_ENTER();
    if (!kmt_user_ptr_ok(desc, sizeof(*desc)))
        return STATUS_INVALID_PARAMETER;
    if (!(adapter = dxgk_adapter_from_handle(hAdapter)))
        return STATUS_INVALID_PARAMETER;
    memset(desc, 0, sizeof(*desc));
    snprintf(desc->Miniport, sizeof(desc->Miniport), "%s", adapter->miniport->name);
    snprintf(desc->DriverName, sizeof(desc->DriverName), "%s", adapter->desc.DriverName);
    snprintf(desc->Description, sizeof(desc->Description), "%s", adapter->desc.Description);
    snprintf(desc->LocationId, sizeof(desc->LocationId), "%s", adapter->pdo.LocationId);
    dxgk_adapter_put(adapter);
    return STATUS_SUCCESS;
}

unsigned KmtLiveObjectCount(void)
{
    return atomic_load(&dxgk_process.live_objects);
}

BOOL KmtOwnsHandle(D3DKMT_HANDLE handle)
{
    struct kmt_object *obj;

    /* no THUNK_ENTER: asking must not bring the process up */
    if (!__atomic_load_n(&dxgk_process.initialized, __ATOMIC_ACQUIRE))
        return FALSE;
    if (!(obj = hmgr_lookup(&dxgk_process.handles, handle, HMGR_TYPE_ANY)))
        return FALSE;
    kmt_object_put(obj);
    return TRUE;
}
