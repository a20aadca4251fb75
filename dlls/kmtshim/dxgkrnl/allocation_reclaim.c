/*
 * The end of allocations and resources: their GPU references, the release
 * callbacks of their last CPU reference, reclaim (the miniport frees them)
 * and the free of what is left.
 *
 * Reclaim waits for every user: a thread still inside a call on the
 * allocation holds a reference, and queued GPU work holds a GPU reference
 * (ignored with AssumeNotInUse).  The miniport sees DxgkDdiCloseAllocation
 * for the device binding, then DxgkDdiDestroyAllocation.  A resource is
 * reclaimed in one DxgkDdiDestroyAllocation carrying its remaining
 * allocations and Flags.DestroyResource.  allocation_destroy.c removes
 * the handles and hands the objects over.
 */
#include <stdlib.h>

#include "dxgkrnl.h"
#include "resource_share.h"
#include "ddi.h"

/* ---- SynchronousDestroy's wait ---------------------------------------------- */

void dxgk_reclaim_wait_init(struct dxgk_reclaim_wait *w, unsigned pending)
{
    pthread_mutex_init(&w->mutex, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->pending = pending;
}

void dxgk_reclaim_wait_add(struct dxgk_reclaim_wait *w)
{
    pthread_mutex_lock(&w->mutex);
    w->pending++;
    pthread_mutex_unlock(&w->mutex);
}

static void reclaim_wait_done(struct dxgk_reclaim_wait *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mutex);
    if (!--w->pending)
        pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mutex);
}

void dxgk_reclaim_wait(struct dxgk_reclaim_wait *w)
{
    pthread_mutex_lock(&w->mutex);
    while (w->pending)
        pthread_cond_wait(&w->cond, &w->mutex);
    pthread_mutex_unlock(&w->mutex);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
}

/* ---- freeing ------------------------------------------------------------------ */

void dxgk_allocation_free(struct dxgk_allocation *alloc)
{
    kmt_mutex_lock(&alloc->cpu_lock);
    if (alloc->gpu_refs) {
        alloc->free_pending = true;      /* dxgk_allocation_gpu_unref() frees it */
        kmt_mutex_unlock(&alloc->cpu_lock);
        return;
    }
    kmt_mutex_unlock(&alloc->cpu_lock);
    kmt_mutex_destroy(&alloc->cpu_lock);
    kmt_cond_destroy(&alloc->gpu_idle);
    free(alloc);                         /* and its private data, which trails it */
    dxgk_count_object(-1);
}

void dxgk_resource_free(struct dxgk_resource *res)
{
    if (res->share)
        dxgk_resource_share_free(res->share);   /* the broker reference goes last */
    kmt_mutex_destroy(&res->ddi_lock);
    free(res->runtime_data);
    free(res->driver_data);
    free(res);
    dxgk_count_object(-1);
}

static void account_free(struct dxgk_allocation *alloc)
{
    struct dxgk_adapter *adapter = alloc->device->adapter;

    if (alloc->sysmem)
        return;
    atomic_fetch_sub_explicit(&adapter->usage[alloc->segment_group], alloc->size, memory_order_relaxed);
    atomic_fetch_sub_explicit(&adapter->allocations[alloc->segment_group], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&adapter->allocs_destroyed, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&adapter->bytes_destroyed, alloc->size, memory_order_relaxed);
}

/* ---- reclaim -------------------------------------------------------------------- */

static bool resource_destroying(struct dxgk_resource *res)
{
    bool destroying;

    kmt_mutex_lock(&res->device->list_lock);
    destroying = res->destroying;
    kmt_mutex_unlock(&res->device->list_lock);
    return destroying;
}

void dxgk_reclaim_allocations(struct dxgk_allocation **allocs, UINT count)
{
    struct dxgk_device *device = allocs[0]->device;
    struct dxgk_resource *res = allocs[0]->resource;
    bool res_owns_them = false;
    HANDLE hres;

    for (UINT i = 0; i < count; i++)
        dxgk_allocation_unmap(allocs[i]);

    /* A resource being destroyed frees these with itself, in one DDI call.
     * Otherwise its DDI lock (taken before the list lock) keeps our
     * hResource read, call and write-back whole. */
    if (res && !resource_destroying(res)) {
        kmt_mutex_lock(&res->ddi_lock);
        kmt_mutex_lock(&device->list_lock);
        if (res->destroying) {           /* destroyed meanwhile */
            kmt_mutex_unlock(&device->list_lock);
            kmt_mutex_unlock(&res->ddi_lock);
            res_owns_them = true;
        }
    } else if (res) {
        res_owns_them = true;
    } else {
        kmt_mutex_lock(&device->list_lock);
    }
    if (res_owns_them) {
        for (UINT i = 0; i < count; i++)
            kmt_object_put(&res->obj);
        return;
    }
    hres = res ? res->driver_resource : NULL;
    kmt_mutex_unlock(&device->list_lock);

    dxgk_ddi_close_allocations(device, allocs, count);
    dxgk_ddi_destroy_allocations(device->adapter, allocs, count, res ? &hres : NULL, false);

    /* Off the device's lists only now that the miniport freed them: a
     * DestroyDevice waiting for its children must not reach
     * DxgkDdiDestroyDevice before these DxgkDdiDestroyAllocation calls. */
    kmt_mutex_lock(&device->list_lock);
    if (res)
        dxgk_resource_set_driver_handle(res, hres);
    for (UINT i = 0; i < count; i++)
        list_remove(&allocs[i]->entry);
    kmt_cond_broadcast(&device->children_gone);
    kmt_mutex_unlock(&device->list_lock);
    if (res)
        kmt_mutex_unlock(&res->ddi_lock);

    for (UINT i = 0; i < count; i++) {
        struct dxgk_reclaim_wait *w = allocs[i]->waiter;

        account_free(allocs[i]);
        dxgk_allocation_free(allocs[i]);
        reclaim_wait_done(w);
        if (res)
            kmt_object_put(&res->obj);
    }
    for (UINT i = 0; i < count; i++)
        dxgk_device_put(device);
}

/* Release callback: the last CPU reference of a destroyed allocation. */
void dxgk_allocation_last_ref(struct kmt_object *obj)
{
    struct dxgk_allocation *alloc = (struct dxgk_allocation *)obj;

    kmt_mutex_lock(&alloc->cpu_lock);
    if (alloc->gpu_refs && !alloc->assume_not_in_use) {
        /* dxgk_allocation_gpu_unref() finishes when the GPU is done */
        alloc->reclaim_pending = true;
        kmt_mutex_unlock(&alloc->cpu_lock);
        return;
    }
    kmt_mutex_unlock(&alloc->cpu_lock);
    dxgk_reclaim_allocations(&alloc, 1);
}

/* The miniport frees a resource with its remaining allocations: in one
 * call, or without memory for the list, one allocation at a time and the
 * resource last. */
static void resource_ddi_destroy(struct dxgk_resource *res, UINT count)
{
    struct dxgk_device *device = res->device;
    struct dxgk_allocation **allocs = count ? malloc(count * sizeof(*allocs)) : NULL;
    struct dxgk_allocation *alloc;
    UINT i = 0;

    LIST_FOR_EACH_ENTRY(alloc, &res->allocations, struct dxgk_allocation, entry) {
        if (allocs) {
            allocs[i++] = alloc;
            continue;
        }
        dxgk_ddi_close_allocations(device, &alloc, 1);
        dxgk_ddi_destroy_allocations(device->adapter, &alloc, 1, &res->driver_resource, false);
    }
    if (allocs)
        dxgk_ddi_close_allocations(device, allocs, count);
    dxgk_ddi_destroy_allocations(device->adapter, allocs, allocs ? count : 0, &res->driver_resource, true);
    free(allocs);
}

/* Release callback: the last reference of a destroyed resource.  Every
 * allocation still on its list has been released into it; nobody else
 * reaches them now. */
void dxgk_resource_last_ref(struct kmt_object *obj)
{
    struct dxgk_resource *res = (struct dxgk_resource *)obj;
    struct dxgk_device *device = res->device;
    struct dxgk_allocation *alloc, *next;
    UINT count;

    kmt_mutex_lock(&device->list_lock);
    count = list_count(&res->allocations);
    kmt_mutex_unlock(&device->list_lock);
    resource_ddi_destroy(res, count);

    LIST_FOR_EACH_ENTRY_SAFE(alloc, next, &res->allocations, struct dxgk_allocation, entry) {
        struct dxgk_reclaim_wait *w = alloc->waiter;

        list_remove(&alloc->entry);
        account_free(alloc);
        dxgk_allocation_free(alloc);
        reclaim_wait_done(w);
        dxgk_device_put(device);
    }
    reclaim_wait_done(res->waiter);
    /* off the device's list only after the miniport freed it (see above) */
    kmt_mutex_lock(&device->list_lock);
    list_remove(&res->entry);
    kmt_cond_broadcast(&device->children_gone);
    kmt_mutex_unlock(&device->list_lock);
    dxgk_resource_free(res);
    dxgk_device_put(device);
}

/* ---- GPU references ---------------------------------------------------------- */

void dxgk_allocation_gpu_ref(struct dxgk_allocation *alloc)
{
    kmt_mutex_lock(&alloc->cpu_lock);
    alloc->gpu_refs++;
    kmt_mutex_unlock(&alloc->cpu_lock);
}

void dxgk_allocation_gpu_unref(struct dxgk_allocation *alloc)
{
    bool reclaim = false, free_it = false;

    kmt_mutex_lock(&alloc->cpu_lock);
    if (!--alloc->gpu_refs) {
        kmt_cond_broadcast(&alloc->gpu_idle);
        reclaim = alloc->reclaim_pending;
        alloc->reclaim_pending = false;
        free_it = alloc->free_pending;
    }
    kmt_mutex_unlock(&alloc->cpu_lock);
    if (reclaim)
        dxgk_reclaim_allocations(&alloc, 1);
    else if (free_it)
        dxgk_allocation_free(alloc);
}
