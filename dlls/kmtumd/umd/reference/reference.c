/*
 * reference_umd: the UMD that keeps the DestroyResource protocol of
 * d3dumddi.h (PFND3DDDI_DESTROYRESOURCE):
 *
 *   1. batched commands that reference the resource are flushed with
 *      pfnRenderCb first;
 *   2. the deallocation is deferred past DestroyResource's return (allowed):
 *      the resource waits on a list, released at the next Flush, when the
 *      list grows past REFERENCE_MAX_DEFERRED, or at DestroyDevice;
 *   3. it is released with one pfnDeallocateCb naming the resource
 *      (NumAllocations 0), so a group of surfaces created by one
 *      CreateResource goes away as a group -- shared and opened resources
 *      the same way, once.
 */
#include "../umd.h"

#define REFERENCE_MAX_DEFERRED 8

/* Releases every deferred resource, oldest first. */
static HRESULT drain_deferred(struct umd_device *dev)
{
    HRESULT result = S_OK;

    while (dev->deferred) {
        struct umd_resource **last = &dev->deferred, *res;
        HRESULT hr;

        while ((*last)->next)
            last = &(*last)->next;
        res = *last;
        *last = NULL;
        dev->deferred_count--;
        if (FAILED(hr = umd_deallocate_resource(dev, res)) && SUCCEEDED(result))
            result = hr;
        umd_resource_free(res);
    }
    return result;
}

static HRESULT reference_destroy_resource(struct umd_device *dev, struct umd_resource *res)
{
    HRESULT hr;

    /* nothing may reference it once its memory goes: submit those commands now */
    if (umd_batch_references(dev, res) && FAILED(hr = umd_flush_batch(dev)))
        return hr;
    umd_unlink_resource(dev, res);
    res->next = dev->deferred;
    dev->deferred = res;
    if (++dev->deferred_count > REFERENCE_MAX_DEFERRED)
        return drain_deferred(dev);
    return S_OK;
}

static const struct umd_policy reference_policy = {
    .driver_version = D3D_UMD_INTERFACE_VERSION_WDDM2_0,   /* D3DDDI_ALLOCATIONINFO2 */
    .destroy_resource = reference_destroy_resource,
    .after_flush = drain_deferred,
};

UMD_EXPORT HRESULT APIENTRY OpenAdapter(D3DDDIARG_OPENADAPTER *args);

UMD_EXPORT HRESULT APIENTRY OpenAdapter(D3DDDIARG_OPENADAPTER *args)
{
    return umd_open_adapter(args, &reference_policy);
}
