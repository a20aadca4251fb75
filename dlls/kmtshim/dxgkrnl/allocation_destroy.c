/*
 * DestroyAllocation / DestroyAllocation2 and the device cascade.
 *
 * Destroying is two steps, as in dxgkrnl: the handles go first (here,
 * under the device's list lock, after the whole request was validated, so
 * a call either destroys everything it names or nothing), then the objects
 * are reclaimed (allocation_reclaim.c) when their last user leaves.
 * Without SynchronousDestroy the call returns once the handles are gone;
 * with it, only after the miniport freed the memory.
 */
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "vidsch.h"
#include "sync.h"

#define SMALL_BATCH 8
#define CASCADE_CHUNK 256

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
            dxgk_reclaim_wait_add(w);
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
        dxgk_reclaim_wait_init(&w, 1);
        res->waiter = &w;
    }
    kmt_mutex_unlock(&device->list_lock);

    for (UINT i = 0; i < n; i++)
        dxgk_allocation_put(allocs[i]);   /* each reclaims into the resource */
    free(allocs);
    kmt_object_put(&res->obj);            /* the table's */
    kmt_object_put(&res->obj);            /* our lookup's: the last one reclaims */
    if (flags.SynchronousDestroy)
        dxgk_reclaim_wait(&w);
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
        dxgk_reclaim_wait_init(&w, 0);
    release_batch(allocs, count, flags.SynchronousDestroy ? &w : NULL);
    if (flags.SynchronousDestroy)
        dxgk_reclaim_wait(&w);
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
        /* Windows checks the count, not the list: with a count of 0 the
         * list is never read, so a stale pointer a runtime left in a reused
         * descriptor changes nothing; a count names allocations, which a
         * resource destroy does not take. */
        status = count ? STATUS_INVALID_PARAMETER : destroy_resource(device, hResource, flags);
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
    bool childless;
    UINT n;

    /* A device without children has nothing to cascade; none can appear:
     * the caller holds the device's rwlock exclusively, `destroyed` set. */
    kmt_mutex_lock(&device->list_lock);
    childless = list_empty(&device->syncobjs) && list_empty(&device->allocations) &&
                list_empty(&device->resources) && list_empty(&device->contexts);
    kmt_mutex_unlock(&device->list_lock);
    if (childless)
        return;

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
