/*
 * broken_umd: a UMD that breaks the DestroyResource protocol on purpose, so
 * that the runtime's checker can be seen to catch it.
 *
 *   - a single-surface resource is deallocated at once, without flushing
 *     the batched commands that reference it   -> flush-before-deallocate
 *   - of a resource with several surfaces (one group) only the first
 *     surface is deallocated, through a handle list  -> atomic-group
 *   - ...and the rest of it is never released  -> leak-at-destroy-device
 *
 * It is otherwise the same driver as reference_umd (umd.c), and uses
 * D3DDDI_ALLOCATIONINFO (a Windows 7 UMD) where the reference uses
 * D3DDDI_ALLOCATIONINFO2, so both runtime paths get used.
 */
#include "../umd.h"

static HRESULT broken_destroy_resource(struct umd_device *dev, struct umd_resource *res)
{
    HRESULT hr;

    umd_unlink_resource(dev, res);
    if (res->count == 1)
        hr = umd_deallocate_resource(dev, res);          /* no pfnRenderCb first */
    else
        hr = umd_deallocate_list(dev, res->allocs, 1);   /* one surface of the group */
    umd_resource_free(res);
    return hr;
}

static const struct umd_policy broken_policy = {
    .driver_version = D3D_UMD_INTERFACE_VERSION_WIN7,
    .destroy_resource = broken_destroy_resource,
};

UMD_EXPORT HRESULT APIENTRY OpenAdapter(D3DDDIARG_OPENADAPTER *args);

UMD_EXPORT HRESULT APIENTRY OpenAdapter(D3DDDIARG_OPENADAPTER *args)
{
    return umd_open_adapter(args, &broken_policy);
}
