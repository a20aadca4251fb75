/*
 * The sync-object side of share.h where shared sync objects are not built
 * in: no sync object is NT-shareable and none opens from the broker.  Weak,
 * so syncobj_share.c's definitions replace these wherever it is linked.
 */
#include "share.h"

__attribute__((weak)) NTSTATUS dxgk_syncobj_share_id(D3DKMT_HANDLE h, uint64_t *broker_id)
{
    (void)h;
    (void)broker_id;
    return STATUS_INVALID_PARAMETER;
}

__attribute__((weak)) NTSTATUS dxgk_syncobj_open_object(D3DKMT_HANDLE hDevice, struct kmt_broker_object *obj,
                                                        D3DKMT_HANDLE *out)
{
    (void)hDevice;
    (void)obj;
    (void)out;
    return STATUS_NOT_SUPPORTED;
}
