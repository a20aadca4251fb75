/*
 * DestroyAllocation / DestroyAllocation2, reclaim, and the device cascade.
 *
 * Destroying is two steps, as in dxgkrnl: the handles go first (under the
 * device's list lock, after the whole request was validated, so a call
 * either destroys everything it names or nothing), then the objects are
 * reclaimed: CPU mapping dropped, DxgkDdiCloseAllocation for the device
 * binding, then DxgkDdiDestroyAllocation.
 *
 * Reclaim waits for every user: a thread still inside a call on the
 * allocation holds a reference, and queued GPU work holds a GPU reference
 * (ignored with AssumeNotInUse).  Without SynchronousDestroy the call
 * returns once the handles are gone and the last user reclaims; with it, the
 * call returns only after the miniport freed the memory.
 *
 * A resource is reclaimed in one DxgkDdiDestroyAllocation carrying its
 * remaining allocations and Flags.DestroyResource.
 */
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "vidsch.h"
#include "sync.h"
#include "base/kmt_debug.h"

#define SMALL_BATCH 8
#define CASCADE_CHUNK 256

static void waiter_init(struct dxgk_reclaim_wait *w)
{
    pthread_mutex_init(&w->mutex, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->pending = 0;
}

static void waiter_add(struct dxgk_reclaim_wait *w)
{
    pthread_mutex_lock(&w->mutex);
    w->pending++;
    pthread_mutex_unlock(&w->mutex);
}

static void waiter_done(struct dxgk_reclaim_wait *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mutex);
    if (!--w->pending)
        pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mutex);
}

static void waiter_wait(struct dxgk_reclaim_wait *w)
{
    pthread_mutex_lock(&w->mutex);
    while (w->pending)
        pthread_cond_wait(&w->cond, &w->mutex);
    pthread_mutex_unlock(&w->mutex);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
}

static void account_free(struct dxgk_allocation *alloc)
{
    if (!alloc->sysmem)
        atomic_fetch_sub_explicit(&alloc->device->adapter->usage[alloc->segment_group],
                                  alloc->size, memory_order_relaxed);
}

/* ---- reclaim -------------------------------------------------------------- */

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
    HANDLE small_bound[SMALL_BATCH], small_drv[SMALL_BATCH];
    HANDLE *bound = small_bound, *drv = small_drv;
    UINT nbound = 0;
    bool res_owns_them = false;
    HANDLE hres;

    if (count > SMALL_BATCH) {
        bound = malloc(count * sizeof(HANDLE));
        drv = malloc(count * sizeof(HANDLE));
        if (!bound || !drv) {
            free(bound);
            free(drv);
            for (UINT i = 0; i < count; i++)
                dxgk_reclaim_allocations(&allocs[i], 1);
            return;
        }
    }

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
        goto out;
    }
    hres = res ? res->driver_resource : NULL;
    kmt_mutex_unlock(&device->list_lock);

    for (UINT i = 0; i < count; i++) {
        if (allocs[i]->opened)
            bound[nbound++] = allocs[i]->device_allocation;
        drv[i] = allocs[i]->driver_allocation;
    }
    dxgk_ddi_close_allocations(device, bound, nbound);
    dxgk_ddi_destroy_allocations(device->adapter, drv, count, res ? &hres : NULL, false);

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
        waiter_done(w);
        if (res)
            kmt_object_put(&res->obj);
    }
    for (UINT i = 0; i < count; i++)
        dxgk_device_put(device);
out:
    if (bound != small_bound)
        free(bound);
    if (drv != small_drv)
        free(drv);
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

/* Release callback: the last reference of a destroyed resource.  Every
 * allocation still on its list has been released. */
void dxgk_resource_last_ref(struct kmt_object *obj)
{
    struct dxgk_resource *res = (struct dxgk_resource *)obj;
    struct dxgk_device *device = res->device;
    struct dxgk_allocation *alloc, *next;
    HANDLE *bound = NULL, *drv = NULL;
    UINT count, nbound = 0, i = 0;
    bool one_by_one;

    /* Every allocation still listed was released into the resource; nobody
     * else reaches them now. */
    kmt_mutex_lock(&device->list_lock);
    count = list_count(&res->allocations);
    kmt_mutex_unlock(&device->list_lock);

    one_by_one = count && (!(bound = malloc(count * sizeof(HANDLE))) ||
                           !(drv = malloc(count * sizeof(HANDLE))));
    LIST_FOR_EACH_ENTRY(alloc, &res->allocations, struct dxgk_allocation, entry) {
        if (one_by_one) {
            /* out of memory for the batch: still keep close-before-destroy */
            HANDLE h = alloc->driver_allocation;
            if (alloc->opened)
                dxgk_ddi_close_allocations(device, &alloc->device_allocation, 1);
            dxgk_ddi_destroy_allocations(device->adapter, &h, 1, &res->driver_resource, false);
            continue;
        }
        if (alloc->opened)
            bound[nbound++] = alloc->device_allocation;
        drv[i++] = alloc->driver_allocation;
    }
    if (!one_by_one) {
        dxgk_ddi_close_allocations(device, bound, nbound);
        dxgk_ddi_destroy_allocations(device->adapter, drv, count, &res->driver_resource, true);
    } else {
        dxgk_ddi_destroy_allocations(device->adapter, NULL, 0, &res->driver_resource, true);
    }
    free(bound);
    free(drv);

    LIST_FOR_EACH_ENTRY_SAFE(alloc, next, &res->allocations, struct dxgk_allocation, entry) {
        struct dxgk_reclaim_wait *w = alloc->waiter;

        list_remove(&alloc->entry);
        account_free(alloc);
        dxgk_allocation_free(alloc);
        waiter_done(w);
        dxgk_device_put(device);
    }
    waiter_done(res->waiter);
    /* off the device's list only after the miniport freed it (see above) */
    kmt_mutex_lock(&device->list_lock);
    list_remove(&res->entry);
    kmt_cond_broadcast(&device->children_gone);
    kmt_mutex_unlock(&device->list_lock);
    dxgk_resource_free(res);
    dxgk_device_put(device);
}

/* Takes over one reference of each (destroyed) allocation.  Those nobody
 * else uses are reclaimed here in one batch; the others when their last user
 * leaves, with `w` told when. */
static void release_batch(struct dxgk_allocation **allocs, UINT count, struct dxgk_reclaim_wait *w)
{
    struct dxgk_allocation *small[SMALL_BATCH], **now = small;
    UINT n = 0;

    /* Without memory for a big batch, the first SMALL_BATCH go together and
     * the rest take the one-by-one path. */
    if (count > SMALL_BATCH && !(now = malloc(count * sizeof(*now))))
        now = small;
    for (UINT i = 0; i < count; i++) {
        struct dxgk_allocation *a = allocs[i];
        unsigned one = 1;
        bool idle;

        /* A busy cpu_lock means a user is inside a call on it (DxgkDdiLock
         * holds it): without a waiter, leave the reclaim to that user
         * instead of waiting for the DDI to return. */
        if (w)
            kmt_mutex_lock(&a->cpu_lock);
        else if (!kmt_mutex_trylock(&a->cpu_lock)) {
            dxgk_allocation_put(a);
            continue;
        }
        idle = !a->gpu_refs || a->assume_not_in_use;
        if (idle && (now != small || n < SMALL_BATCH) &&
            atomic_compare_exchange_strong(&a->obj.refcount, &one, 0)) {
            kmt_mutex_unlock(&a->cpu_lock);
            now[n++] = a;
            continue;
        }
        if (w) {
            a->waiter = w;
            waiter_add(w);
        }
        kmt_mutex_unlock(&a->cpu_lock);
        dxgk_allocation_put(a);
    }
    if (n)
        dxgk_reclaim_allocations(now, n);
    if (now != small)
        free(now);
}

/* ---- DestroyAllocation ---------------------------------------------------------- */

/* Removes the handles of a resource and of its live allocations; device
 * list lock held.  Returns the allocations' table references in `out`
 * (which has room for every allocation of the resource). */
static UINT unpublish_resource(struct dxgk_resource *res, struct dxgk_allocation **out, bool assume)
{
    struct dxgk_allocation *alloc;
    UINT n = 0;

    res->destroying = true;
    hmgr_remove(&dxgk_process.handles, res->handle, HMGR_TYPE_RESOURCE);
    if (res->global_handle) {
        hmgr_remove(&dxgk_process.global_handles, res->global_handle, HMGR_TYPE_RESOURCE);
        res->global_handle = 0;
        kmt_object_put(&res->obj);   /* the global table's reference; never the last */
    }
    LIST_FOR_EACH_ENTRY(alloc, &res->allocations, struct dxgk_allocation, entry) {
        if (alloc->destroyed)
            continue;
        hmgr_remove(&dxgk_process.handles, alloc->handle, HMGR_TYPE_ALLOCATION);
        alloc->destroyed = true;
        alloc->assume_not_in_use = assume;
        out[n++] = alloc;
    }
    return n;
}

static NTSTATUS destroy_resource(struct dxgk_device *device, D3DKMT_HANDLE hResource,
                                 D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    struct dxgk_allocation **allocs;
    struct dxgk_resource *res;
    struct dxgk_reclaim_wait w;
    UINT n, cap;

    res = (struct dxgk_resource *)hmgr_lookup(&dxgk_process.handles, hResource, HMGR_TYPE_RESOURCE);
    if (!res)
        return STATUS_INVALID_PARAMETER;
    kmt_mutex_lock(&device->list_lock);
    if (res->device != device || res->destroying) {
        kmt_mutex_unlock(&device->list_lock);
        kmt_object_put(&res->obj);
        return STATUS_INVALID_PARAMETER;
    }
    cap = list_count(&res->allocations);
    if (!(allocs = malloc((cap ? cap : 1) * sizeof(*allocs)))) {
        kmt_mutex_unlock(&device->list_lock);
        kmt_object_put(&res->obj);
        return STATUS_NO_MEMORY;
    }
    n = unpublish_resource(res, allocs, flags.AssumeNotInUse);
    if (flags.SynchronousDestroy) {
        waiter_init(&w);
        w.pending = 1;
        res->waiter = &w;
    }
    kmt_mutex_unlock(&device->list_lock);

    for (UINT i = 0; i < n; i++)
        dxgk_allocation_put(allocs[i]);   /* each reclaims into the resource */
    free(allocs);
    kmt_object_put(&res->obj);            /* the table's */
    kmt_object_put(&res->obj);            /* our lookup's: the last one reclaims */
    if (flags.SynchronousDestroy)
        waiter_wait(&w);
    return STATUS_SUCCESS;
}

static NTSTATUS destroy_list(struct dxgk_device *device, const D3DKMT_HANDLE *list, UINT count,
                             D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    struct dxgk_allocation *small[SMALL_BATCH], **allocs = small;
    struct dxgk_resource *owner = NULL;
    struct dxgk_reclaim_wait w;
    NTSTATUS status = STATUS_SUCCESS;
    UINT i, found = 0, marked = 0;

    if (count > SMALL_BATCH && !(allocs = malloc(count * sizeof(*allocs))))
        return STATUS_NO_MEMORY;

    kmt_mutex_lock(&device->list_lock);
    /* Validate everything before touching anything. */
    for (i = 0; i < count; i++) {
        /* not dxgk_allocation_lookup(): no put may happen under this lock */
        struct dxgk_allocation *a = (struct dxgk_allocation *)
            hmgr_lookup(&dxgk_process.handles, list[i], HMGR_TYPE_ALLOCATION);

        if (!a) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        allocs[found++] = a;
        if (a->device != device || a->destroy_mark || a->destroyed) { /* or listed twice */
            status = STATUS_INVALID_PARAMETER;
            break;
        }
        a->destroy_mark = true;     /* only ours: the device matched */
        marked = found;
        if (i == 0)
            owner = a->resource;
        if (a->resource != owner || (owner && owner->shared)) {
            status = STATUS_INVALID_PARAMETER;
            break;
        }
    }
    for (i = 0; i < marked; i++)
        allocs[i]->destroy_mark = false;
    if (status) {
        kmt_mutex_unlock(&device->list_lock);
        for (i = 0; i < found; i++)
            dxgk_allocation_put(allocs[i]);
        goto out;
    }
    for (i = 0; i < count; i++) {
        hmgr_remove(&dxgk_process.handles, allocs[i]->handle, HMGR_TYPE_ALLOCATION);
        allocs[i]->destroyed = true;
        allocs[i]->assume_not_in_use = flags.AssumeNotInUse;
    }
    kmt_mutex_unlock(&device->list_lock);

    /* We hold the lookup and the table reference of each: drop one. */
    for (i = 0; i < count; i++)
        kmt_object_put(&allocs[i]->obj);
    if (flags.SynchronousDestroy)
        waiter_init(&w);
    release_batch(allocs, count, flags.SynchronousDestroy ? &w : NULL);
    if (flags.SynchronousDestroy)
        waiter_wait(&w);
out:
    if (allocs != small)
        free(allocs);
    return status;
}

NTSTATUS dxgk_destroy_allocation(D3DKMT_HANDLE hDevice, D3DKMT_HANDLE hResource,
                                 const D3DKMT_HANDLE *list, UINT count,
                                 D3DDDICB_DESTROYALLOCATION2FLAGS flags)
{
    struct dxgk_device *device;
    NTSTATUS status;

    /* Only AssumeNotInUse and SynchronousDestroy are for callers. */
    if (flags.Value & ~3u)
        return STATUS_INVALID_PARAMETER;
    if (!hResource && count > D3DKMT_CREATEALLOCATION_MAX)
        return STATUS_INVALID_PARAMETER;
    if (!(device = dxgk_device_acquire(hDevice)))
        return STATUS_INVALID_PARAMETER;

    if (hResource) {
        /* The list must be NULL; AllocationCount is ignored (seed page). */
        status = list ? STATUS_INVALID_PARAMETER : destroy_resource(device, hResource, flags);
    } else if (!count) {
        status = STATUS_SUCCESS;     /* Windows: nothing to do */
    } else if (!list) {
        status = STATUS_INVALID_PARAMETER;
    } else {
        status = destroy_list(device, list, count, flags);
    }
    dxgk_device_release(device);
    return status;
}

/* ---- DestroyDevice cascade ------------------------------------------------------- */

void dxgk_device_destroy_children(struct dxgk_device *device)
{
    struct dxgk_allocation *chunk[CASCADE_CHUNK], *alloc;
    struct dxgk_resource *res;
    UINT n;

    /* First the device stops executing: queued work that never reached the
     * miniport is dropped, work in flight runs to completion. */
    dxgk_device_terminate_execution(device);

    /* Then dxgkrnl's order: device sync objects, standalone allocations,
     * resources, contexts (paging queues are not re-created). */
    dxgk_device_destroy_syncobjs(device);
    do {
        n = 0;
        kmt_mutex_lock(&device->list_lock);
        LIST_FOR_EACH_ENTRY(alloc, &device->allocations, struct dxgk_allocation, entry) {
            if (alloc->destroyed)
                continue;
            hmgr_remove(&dxgk_process.handles, alloc->handle, HMGR_TYPE_ALLOCATION);
            alloc->destroyed = true;
            chunk[n++] = alloc;
            if (n == CASCADE_CHUNK)
                break;
        }
        kmt_mutex_unlock(&device->list_lock);
        release_batch(chunk, n, NULL);
    } while (n == CASCADE_CHUNK);

    for (;;) {
        struct dxgk_allocation **allocs = NULL;
        UINT cap;

        res = NULL;
        kmt_mutex_lock(&device->list_lock);
        LIST_FOR_EACH_ENTRY(res, &device->resources, struct dxgk_resource, entry)
            if (!res->destroying)
                break;
        if (&res->entry == &device->resources) {
            kmt_mutex_unlock(&device->list_lock);
            break;
        }
        cap = list_count(&res->allocations);
        allocs = malloc((cap ? cap : 1) * sizeof(*allocs));
        if (!allocs) {
            /* keep the lock order; try again after others freed memory */
            kmt_mutex_unlock(&device->list_lock);
            continue;
        }
        kmt_object_get(&res->obj);
        n = unpublish_resource(res, allocs, false);
        kmt_mutex_unlock(&device->list_lock);
        for (UINT i = 0; i < n; i++)
            dxgk_allocation_put(allocs[i]);
        free(allocs);
        kmt_object_put(&res->obj);   /* the table's */
        kmt_object_put(&res->obj);   /* ours */
    }

    /* Objects destroyed earlier may still wait for their last user or the
     * GPU; DxgkDdiDestroyDevice must come after all of them. */
    kmt_mutex_lock(&device->list_lock);
    while (!list_empty(&device->allocations) || !list_empty(&device->resources))
        kmt_cond_wait(&device->children_gone, &device->list_lock);
    kmt_mutex_unlock(&device->list_lock);

    dxgk_device_destroy_contexts(device);
}
