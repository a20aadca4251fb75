/*
 * Synchronization objects: creation (D3DKMTCreateSynchronizationObject and
 * ...2), destruction, and the signal / GPU-wait primitives the scheduler and
 * the CPU signal path use.  See sync.h for the lifetime rules.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "share.h"
#include "shared_fence.h"
#include "sync.h"
#include "syncobj_share.h"
#include "syncobj_shared_state.h"
#include "vidsch.h"
#include "base/kmt_debug.h"
#include "ddi.h"

/* A shared mutex, semaphore or legacy fence: its state is in its page. */
static bool has_shared_state(const struct dxgk_syncobj *obj)
{
    return obj->shared_fence && obj->type != D3DDDI_MONITORED_FENCE;
}
#define DXGK_SHARED_STATE (-1)           /* a switch case for them */

/* ---- miniport-backed fences (KmtDdiCreateFence, 1.2) ------------------------ */

/* Tells the miniport the value the core just stored; obj->lock is held, so
 * the calls for one fence come one at a time and in the order of the
 * stores.  A signal cannot fail: a miniport error is only reported. */
static void driver_fence_signal(struct dxgk_syncobj *obj, UINT64 value)
{
    dxgk_ddi_signal_fence(obj->adapter, obj->monitored.driver_fence, value);
}

/* Stores a monitored fence's new value; true if it changed.  Without
 * AllowFenceRewind a lower value is ignored, and the store is a
 * compare-and-swap: the miniport may raise the value at any time (its
 * hardware signalled the fence) and must never be pulled back by a CPU
 * signal that lost the race. */
static bool fence_store(struct dxgk_syncobj *obj, UINT64 value, bool allow_rewind)
{
    UINT64 cur = dxgk_fence_value(obj);

    if (allow_rewind) {
        if (cur == value)
            return false;
        atomic_store_explicit(obj->monitored.value, value, memory_order_release);
        return true;
    }
    while (value > cur)
        if (atomic_compare_exchange_weak_explicit(obj->monitored.value, &cur, value, memory_order_acq_rel,
                                                  memory_order_acquire))
            return true;
    return false;
}

HANDLE dxgk_syncobj_driver_fence(D3DKMT_HANDLE h)
{
    struct dxgk_syncobj *obj = dxgk_syncobj_lookup(h, NULL);
    HANDLE fence = NULL;

    if (!obj)
        return NULL;
    if (obj->type == D3DDDI_MONITORED_FENCE)
        fence = obj->monitored.driver_fence;
    dxgk_syncobj_put(obj);
    return fence;
}

/* ---- lifetime ------------------------------------------------------------- */

static void syncobj_release(struct kmt_object *o)
{
    struct dxgk_syncobj *obj = (struct dxgk_syncobj *)o;
    struct dxgk_adapter *adapter = obj->adapter;

    if (obj->type == D3DDDI_MONITORED_FENCE) {
        /* first: the miniport stops writing the value before its slot goes */
        dxgk_ddi_destroy_fence(adapter, obj->monitored.driver_fence);
        dxgk_ddi_unmap_system_memory(adapter, obj->monitored.gpu_va);
        if (!obj->shared_fence)
            dxgk_fence_slot_free(obj->monitored.slot);
    }
    dxgk_shared_fence_free(obj->shared_fence);
    if (obj->broker_id && !dxgk_share_lost(obj->broker_connection))
        kmt_broker_release(obj->broker_id);  /* creation or opening failed late */
    pthread_mutex_destroy(&obj->lock);
    if (obj->device)
        dxgk_device_put(obj->device);
    dxgk_adapter_put(adapter);
    free(obj);
    dxgk_count_object(-1);
}

void dxgk_syncobj_put(struct dxgk_syncobj *obj)
{
    kmt_object_put(&obj->obj);
}

struct dxgk_syncobj *dxgk_syncobj_lookup(D3DKMT_HANDLE h, struct dxgk_adapter *adapter)
{
    struct dxgk_syncobj *obj =
        (struct dxgk_syncobj *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_SYNCOBJECT);

    if (obj && adapter && obj->adapter != adapter) {
        dxgk_syncobj_put(obj);
        return NULL;
    }
    return obj;
}

/* ---- creation ---------------------------------------------------------------- */

#define KNOWN_FLAGS 0x5ffu   /* bits 0-8 and 10; bit 9 (Unused) and 11-31 reserved */

static NTSTATUS validate_info(const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info, bool v1,
                              struct dxgk_adapter *adapter)
{
    const D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS f = info->Flags;

    if (v1 && info->Type != D3DDDI_SYNCHRONIZATION_MUTEX && info->Type != D3DDDI_SEMAPHORE)
        return STATUS_INVALID_PARAMETER;     /* Windows: v1 FENCE -> INVALID_PARAMETER */
    if (info->Type == D3DDDI_NATIVE_FENCE)
        return STATUS_NOT_SUPPORTED;
    if (info->Type < D3DDDI_SYNCHRONIZATION_MUTEX || info->Type > D3DDDI_PERIODIC_MONITORED_FENCE)
        return STATUS_INVALID_PARAMETER;
    if (f.Value & ~KNOWN_FLAGS)
        return STATUS_INVALID_PARAMETER;
    if (f.NtSecuritySharing && !f.Shared)
        return STATUS_INVALID_PARAMETER;
    if (f.NoSignal && f.NoWait)
        return STATUS_INVALID_PARAMETER;
    if (f.SignalByKmd && info->Type != D3DDDI_CPU_NOTIFICATION)
        return STATUS_INVALID_PARAMETER;
    if ((f.TopOfPipeline || f.NoGPUAccess) && info->Type != D3DDDI_MONITORED_FENCE &&
        info->Type != D3DDDI_PERIODIC_MONITORED_FENCE)
        return STATUS_INVALID_PARAMETER;
    if (f.CrossAdapter)
        return STATUS_NOT_SUPPORTED;         /* one adapter per object here */

    switch (info->Type) {
    case D3DDDI_SEMAPHORE:
        if (info->Semaphore.InitialCount > info->Semaphore.MaxCount)
            return STATUS_INVALID_PARAMETER;
        break;
    case D3DDDI_CPU_NOTIFICATION:
        return dxgk_event_validate(info->CPUNotification.Event);  /* NULL: INVALID_HANDLE */
    case D3DDDI_MONITORED_FENCE:
        if (info->MonitoredFence.EngineAffinity > 1)
            return STATUS_INVALID_PARAMETER; /* one physical adapter */
        break;
    case D3DDDI_PERIODIC_MONITORED_FENCE:
        /* tied to a display target's vsync: render-only adapters have none */
        if (info->PeriodicMonitoredFence.VidPnTargetId >= adapter->num_sources)
            return STATUS_INVALID_PARAMETER;
        return STATUS_NOT_SUPPORTED;
    default:
        break;
    }
    return STATUS_SUCCESS;
}

/* The value's memory: a slot of the process's fence pool, or for a shared
 * fence a page of its own (a new one, or the one `page_fd` names). */
static NTSTATUS monitored_memory(struct dxgk_syncobj *obj, const struct dxgk_fence_init *init,
                                 int *new_page_fd)
{
    NTSTATUS status;

    if (!init->shared) {
        status = dxgk_fence_slot_alloc(&obj->monitored.value, &obj->monitored.cpu_va, &obj->monitored.slot);
        if (!status)
            atomic_store(obj->monitored.value, init->initial);
        return status;
    }
    if (init->page_fd >= 0)
        status = dxgk_shared_fence_map(init->page_fd, &obj->shared_fence);
    else
        status = dxgk_shared_fence_create(init->initial, &obj->shared_fence, new_page_fd);
    if (status)
        return status;
    obj->monitored.value = &obj->shared_fence->rw->value;
    obj->monitored.cpu_va = (void *)obj->shared_fence->ro;
    return STATUS_SUCCESS;
}

static void monitored_memory_free(struct dxgk_syncobj *obj)
{
    if (obj->shared_fence)
        dxgk_shared_fence_free(obj->shared_fence);
    else
        dxgk_fence_slot_free(obj->monitored.slot);
    obj->shared_fence = NULL;
}

/* The miniport's fence over the value: imported from another process's
 * (driver_fd) where the miniport can, else a new one. */
static NTSTATUS monitored_driver_fence(struct dxgk_syncobj *obj, const struct dxgk_fence_init *init)
{
    struct dxgk_adapter *adapter = obj->adapter;
    NTSTATUS status;

    if (init->driver_fd >= 0 && dxgk_ddi_has_fence_sharing(adapter)) {
        KMTARG_IMPORTFENCE args = { .Fd = init->driver_fd, .pValue = obj->monitored.value };

        if ((status = dxgk_ddi_import_fence(adapter, &args)))
            return status;
        obj->monitored.driver_fence = args.hDriverFence;
        return STATUS_SUCCESS;
    }
    if (dxgk_ddi_has_fences(adapter)) {
        KMTARG_CREATEFENCE args = {
            .pValue = obj->monitored.value,
            .InitialValue = dxgk_fence_value(obj),
        };

        if ((status = dxgk_ddi_create_fence(adapter, &args)))
            return status;
        obj->monitored.driver_fence = args.hDriverFence;   /* NULL: memory only */
    }
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_syncobj_init_monitored(struct dxgk_syncobj *obj, const struct dxgk_fence_init *init,
                                     int *new_page_fd)
{
    struct dxgk_adapter *adapter = obj->adapter;
    NTSTATUS status;

    if ((status = monitored_memory(obj, init, new_page_fd)))
        return status;
    if (!init->no_gpu_access && dxgk_ddi_has_system_memory_mapping(adapter)) {
        status = dxgk_ddi_map_system_memory(adapter, (void *)obj->monitored.value, sizeof(UINT64),
                                            &obj->monitored.gpu_va);
        if (status) {
            monitored_memory_free(obj);
            return status;
        }
    }
    if ((status = monitored_driver_fence(obj, init))) {
        dxgk_ddi_unmap_system_memory(adapter, obj->monitored.gpu_va);
        obj->monitored.gpu_va = 0;
        monitored_memory_free(obj);
        return status;
    }
    return STATUS_SUCCESS;
}

struct dxgk_syncobj *dxgk_syncobj_alloc(struct dxgk_adapter *adapter, D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type,
                                        D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags)
{
    struct dxgk_syncobj *obj = calloc(1, sizeof(*obj));

    if (!obj)
        return NULL;
    kmt_object_init(&obj->obj, HMGR_TYPE_SYNCOBJECT, syncobj_release);
    pthread_mutex_init(&obj->lock, NULL);
    list_init(&obj->waiters);
    list_init(&obj->entry);
    list_init(&obj->fence_entry);
    /* a monitored fence becomes one once its value has memory */
    obj->type = type == D3DDDI_MONITORED_FENCE ? D3DDDI_FENCE : type;
    obj->flags = flags;
    obj->adapter = adapter;
    kmt_object_get(&adapter->obj);
    dxgk_count_object(+1);
    return obj;
}

void dxgk_syncobj_abort(struct dxgk_syncobj *obj)
{
    syncobj_release(&obj->obj);
}

NTSTATUS dxgk_syncobj_publish(struct dxgk_syncobj *obj, D3DKMT_HANDLE *out)
{
    D3DKMT_HANDLE h;
    NTSTATUS status;

    if (!(h = hmgr_alloc(&dxgk_process.handles)))
        return STATUS_NO_MEMORY;
    if (obj->shared_fence && (status = dxgk_shared_fence_watch(obj->shared_fence, obj))) {
        hmgr_cancel(&dxgk_process.handles, h);
        return status;
    }
    obj->handle = h;
    if (obj->device) {
        kmt_mutex_lock(&obj->device->list_lock);
        list_add_tail(&obj->device->syncobjs, &obj->entry);
        kmt_mutex_unlock(&obj->device->list_lock);
    } else {
        pthread_mutex_lock(&dxgk_process.lock);
        list_add_tail(&dxgk_process.syncobjs, &obj->entry);
        pthread_mutex_unlock(&dxgk_process.lock);
    }
    if (obj->type == D3DDDI_MONITORED_FENCE) {
        pthread_mutex_lock(&obj->adapter->fence_lock);
        list_add_tail(&obj->adapter->fences, &obj->fence_entry);
        pthread_mutex_unlock(&obj->adapter->fence_lock);
    }
    hmgr_publish(&dxgk_process.handles, h, &obj->obj);
    *out = h;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_create_syncobj(D3DKMT_HANDLE hDevice, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                             bool v1, D3DKMT_HANDLE *out, D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info_out)
{
    struct dxgk_device *device = dxgk_device_acquire(hDevice);
    struct dxgk_syncobj *obj;
    int page_fd = -1;
    D3DKMT_HANDLE h;
    NTSTATUS status;

    if (!device)
        return STATUS_INVALID_PARAMETER;
    if ((status = validate_info(info, v1, device->adapter)))
        goto out;
    if (!(obj = dxgk_syncobj_alloc(device->adapter, info->Type, info->Flags))) {
        status = STATUS_NO_MEMORY;
        goto out;
    }
    obj->v2 = !v1;

    switch (info->Type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX:
        obj->mutex.owned = info->SynchronizationMutex.InitialState != FALSE;
        break;
    case D3DDDI_SEMAPHORE:
        obj->semaphore.count = info->Semaphore.InitialCount;
        obj->semaphore.max = info->Semaphore.MaxCount;
        break;
    case D3DDDI_FENCE:
        obj->fence.value = info->Fence.FenceValue;
        break;
    case D3DDDI_CPU_NOTIFICATION:
        obj->cpu.event = info->CPUNotification.Event;
        break;
    case D3DDDI_MONITORED_FENCE: {
        struct dxgk_fence_init init = {
            .initial = info->MonitoredFence.InitialFenceValue,
            .no_gpu_access = info->Flags.NoGPUAccess,
            .shared = info->Flags.Shared,
            .page_fd = -1,
            .driver_fd = -1,
        };

        obj->device = device;
        kmt_object_get(&device->obj);
        if (!(status = dxgk_syncobj_init_monitored(obj, &init, &page_fd)))
            obj->type = D3DDDI_MONITORED_FENCE;
        break;
    }
    default:
        status = STATUS_INVALID_PARAMETER;
        break;
    }
    /* a shared mutex, semaphore or legacy fence: one state for every process */
    if (!status && info->Flags.Shared && info->Type != D3DDDI_MONITORED_FENCE &&
        info->Type != D3DDDI_CPU_NOTIFICATION)
        status = dxgk_shared_state_create(obj, info, &page_fd);
    if (!status && info->Flags.Shared)
        status = dxgk_syncobj_register_shared(obj, info, page_fd);
    if (!status && has_shared_state(obj))
        status = dxgk_shared_state_registered(obj, info);
    if (page_fd >= 0)
        close(page_fd);                  /* the broker and our mapping keep the page */
    if (!status)
        status = dxgk_syncobj_publish(obj, &h);
    if (status) {
        dxgk_syncobj_abort(obj);
        goto out;
    }

    *out = h;
    if (info_out) {
        info_out->SharedHandle = obj->global_handle;
        if (obj->type == D3DDDI_MONITORED_FENCE) {
            info_out->MonitoredFence.FenceValueCPUVirtualAddress = obj->monitored.cpu_va;
            info_out->MonitoredFence.FenceValueGPUVirtualAddress = obj->monitored.gpu_va;
        }
    }
    TRACE_(dxgk, "sync object %#x type %d global %#x\n", h, obj->type, obj->global_handle);
out:
    dxgk_device_release(device);
    return status;
}

/* ---- destruction ---------------------------------------------------------------- */

/* The object's handle is gone: unlink it, release its CPU waiters (they
 * return STATUS_ABANDONED) and let the scheduler re-check GPU waits on it. */
static void syncobj_retire(struct dxgk_syncobj *obj)
{
    uint64_t broker_id;

    /* This process's reference goes with the handle: the broker frees the
     * object (and its global handle dies) after the last one. */
    if ((broker_id = __atomic_exchange_n(&obj->broker_id, 0, __ATOMIC_ACQ_REL)) &&
        !dxgk_share_lost(obj->broker_connection))   /* else it went with its connection */
        kmt_broker_release(broker_id);
    if (obj->shared_fence)
        dxgk_shared_fence_unwatch(obj->shared_fence);
    if (obj->device) {
        kmt_mutex_lock(&obj->device->list_lock);
        list_remove(&obj->entry);
        kmt_mutex_unlock(&obj->device->list_lock);
    } else {
        pthread_mutex_lock(&dxgk_process.lock);
        list_remove(&obj->entry);
        pthread_mutex_unlock(&dxgk_process.lock);
    }
    if (obj->type == D3DDDI_MONITORED_FENCE) {
        pthread_mutex_lock(&obj->adapter->fence_lock);
        list_remove(&obj->fence_entry);
        pthread_mutex_unlock(&obj->adapter->fence_lock);
    }
    pthread_mutex_lock(&obj->lock);
    obj->destroyed = true;
    if (has_shared_state(obj) && obj->type == D3DDDI_SYNCHRONIZATION_MUTEX && obj->mutex.owner) {
        /* no context here can signal it any more: the other processes get it */
        obj->mutex.owner = NULL;
        dxgk_shared_state_disown(obj);
    }
    dxgk_wake_waiters_locked(obj, true);
    pthread_mutex_unlock(&obj->lock);
    dxgk_reap_async_waits();
    dxgk_sched_kick(obj->adapter);
}

NTSTATUS dxgk_destroy_syncobj(D3DKMT_HANDLE h)
{
    struct dxgk_syncobj *obj =
        (struct dxgk_syncobj *)hmgr_remove(&dxgk_process.handles, h, HMGR_TYPE_SYNCOBJECT);

    if (!obj)
        return STATUS_INVALID_PARAMETER;
    TRACE_(dxgk, "sync object %#x\n", h);
    syncobj_retire(obj);
    dxgk_syncobj_put(obj);
    return STATUS_SUCCESS;
}

void dxgk_device_destroy_syncobjs(struct dxgk_device *device)
{
    for (;;) {
        struct dxgk_syncobj *obj = NULL;

        kmt_mutex_lock(&device->list_lock);
        if (!list_empty(&device->syncobjs)) {
            obj = LIST_ENTRY(device->syncobjs.next, struct dxgk_syncobj, entry);
            kmt_object_get(&obj->obj);
        }
        kmt_mutex_unlock(&device->list_lock);
        if (!obj)
            break;
        if (hmgr_remove(&dxgk_process.handles, obj->handle, HMGR_TYPE_SYNCOBJECT)) {
            syncobj_retire(obj);
            dxgk_syncobj_put(obj);        /* the table's */
        } else {
            /* a DestroySynchronizationObject call won the race; it unlinks */
            while (true) {
                bool linked;
                kmt_mutex_lock(&device->list_lock);
                linked = obj->entry.next != &obj->entry;
                kmt_mutex_unlock(&device->list_lock);
                if (!linked)
                    break;
                sched_yield();
            }
        }
        dxgk_syncobj_put(obj);
    }
}

void dxgk_process_destroy_syncobjs(void)
{
    for (;;) {
        struct dxgk_syncobj *obj = NULL;
        D3DKMT_HANDLE h = 0;

        pthread_mutex_lock(&dxgk_process.lock);
        if (!list_empty(&dxgk_process.syncobjs)) {
            obj = LIST_ENTRY(dxgk_process.syncobjs.next, struct dxgk_syncobj, entry);
            h = obj->handle;
        }
        pthread_mutex_unlock(&dxgk_process.lock);
        if (!obj)
            break;
        if (dxgk_destroy_syncobj(h))
            sched_yield();                 /* a concurrent destroy is unlinking it */
    }
}

/* ---- signal and GPU wait --------------------------------------------------------- */

void dxgk_syncobj_signal(struct dxgk_syncobj *obj, UINT64 value, bool allow_rewind)
{
    pthread_mutex_lock(&obj->lock);
    if (obj->type == D3DDDI_SYNCHRONIZATION_MUTEX)
        obj->mutex.owner = NULL;
    switch (has_shared_state(obj) ? DXGK_SHARED_STATE : (int)obj->type) {
    case DXGK_SHARED_STATE:
        /* Link ended: a GPU wait passed over the object and took nothing,
         * so the signal gives the other processes nothing (it would free
         * another's hold, add a count never taken); it only frees a hold
         * of this process's. */
        if (!dxgk_syncobj_link_gone(obj))
            dxgk_shared_state_signal(obj, value);
        else if (obj->type == D3DDDI_SYNCHRONIZATION_MUTEX)
            dxgk_shared_state_disown(obj);
        break;
    case D3DDDI_SYNCHRONIZATION_MUTEX:
        obj->mutex.owned = false;
        break;
    case D3DDDI_SEMAPHORE:
        if (obj->semaphore.count < obj->semaphore.max)
            obj->semaphore.count++;
        break;
    case D3DDDI_FENCE:
        if (value > obj->fence.value)        /* only rises, as a monitored fence */
            obj->fence.value = value;
        break;
    case D3DDDI_CPU_NOTIFICATION:
        if (!obj->destroyed)
            dxgk_event_set(obj->cpu.event);
        break;
    case D3DDDI_MONITORED_FENCE:
        /* Monotonic unless rewinding is allowed: a lower value is ignored. */
        if (fence_store(obj, value, allow_rewind)) {
            driver_fence_signal(obj, value);
            if (obj->shared_fence)
                dxgk_shared_fence_stored(obj->shared_fence);
        }
        dxgk_wake_waiters_locked(obj, false);
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&obj->lock);
    dxgk_reap_async_waits();
    dxgk_sched_kick(obj->adapter);
}

/* Takes what a satisfied GPU wait takes, nothing of the objects that are
 * gone.  Another process may take a shared object between the look and
 * the take: then what was taken is given back and the wait stays
 * blocked. */
static bool take_all(struct dxgk_syncobj **objs, const bool *gone, UINT count, struct dxgk_context *ctx)
{
    UINT i;

    for (i = 0; i < count; i++) {
        struct dxgk_syncobj *o = objs[i];

        if (gone[i])
            continue;
        if (has_shared_state(o) && !dxgk_shared_state_take(o))
            break;
        if (o->type == D3DDDI_SYNCHRONIZATION_MUTEX) {
            o->mutex.owned = true;
            o->mutex.owner = ctx;
        } else if (o->type == D3DDDI_SEMAPHORE && !has_shared_state(o)) {
            o->semaphore.count--;
        }
    }
    if (i == count)
        return true;
    while (i-- > 0) {
        struct dxgk_syncobj *o = objs[i];

        if (gone[i])
            continue;
        if (has_shared_state(o))
            dxgk_shared_state_untake(o);
        if (o->type == D3DDDI_SYNCHRONIZATION_MUTEX) {
            o->mutex.owned = false;
            o->mutex.owner = NULL;
        } else if (o->type == D3DDDI_SEMAPHORE && !has_shared_state(o)) {
            o->semaphore.count++;
        }
    }
    return false;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* Locks every distinct object in address order (the lock order between
 * sync objects), evaluates, and acquires all or nothing. */
bool dxgk_syncobj_try_wait(struct dxgk_syncobj **objs, const UINT64 *values, UINT count,
                           struct dxgk_context *ctx)
{
    struct dxgk_syncobj *sorted[D3DDDI_MAX_OBJECT_WAITED_ON];
    bool gone[D3DDDI_MAX_OBJECT_WAITED_ON];
    uint64_t connection;
    UINT n = 0;
    bool ok = true;

    memcpy(sorted, objs, count * sizeof(*objs));
    qsort(sorted, count, sizeof(*sorted), cmp_ptr);
    for (UINT i = 0; i < count; i++)
        if (!i || sorted[i] != sorted[i - 1])
            sorted[n++] = sorted[i];
    for (UINT i = 0; i < n; i++)
        pthread_mutex_lock(&sorted[i]->lock);

    /* Destroyed, or shared and its broker link ended: abandoned, never
     * blocks forever.  Judged once, on one reading of the connection: the
     * take, its undo and the marks below go by the same judgement. */
    connection = kmt_broker_connection();
    for (UINT i = 0; i < count; i++)
        gone[i] = objs[i]->destroyed || dxgk_syncobj_link_gone_on(objs[i], connection);
    for (UINT i = 0; i < count && ok; i++) {
        struct dxgk_syncobj *o = objs[i];
        UINT uses = 0;

        if (gone[i])
            continue;
        for (UINT j = 0; j < count; j++)
            uses += objs[j] == o;
        switch (has_shared_state(o) ? DXGK_SHARED_STATE : (int)o->type) {
        case DXGK_SHARED_STATE:            ok = dxgk_shared_state_ready(o, values[i], uses); break;
        case D3DDDI_SYNCHRONIZATION_MUTEX: ok = !o->mutex.owned && uses == 1; break;
        case D3DDDI_SEMAPHORE:             ok = o->semaphore.count >= uses; break;
        case D3DDDI_FENCE:                 ok = o->fence.value >= values[i]; break;
        case D3DDDI_MONITORED_FENCE:       ok = dxgk_fence_value(o) >= values[i]; break;
        default:                           ok = true; break;
        }
    }
    if (ok)
        ok = take_all(objs, gone, count, ctx);
    for (UINT i = n; i-- > 0;)
        pthread_mutex_unlock(&sorted[i]->lock);
    /* Another process may signal it.  A link that ends from here on is
     * the watcher's to find (it looks at a marked object's link): one
     * judged alive and not marked would never be looked at again. */
    if (!ok)
        for (UINT i = 0; i < count; i++)
            if (objs[i]->shared_fence && !gone[i])
                dxgk_shared_fence_gpu_blocked(objs[i]->shared_fence);
    return ok;
}

void dxgk_fences_changed(struct dxgk_adapter *adapter)
{
    struct dxgk_syncobj *obj;

    pthread_mutex_lock(&adapter->fence_lock);
    LIST_FOR_EACH_ENTRY(obj, &adapter->fences, struct dxgk_syncobj, fence_entry) {
        pthread_mutex_lock(&obj->lock);
        if (!list_empty(&obj->waiters))
            dxgk_wake_waiters_locked(obj, false);
        pthread_mutex_unlock(&obj->lock);
        if (obj->shared_fence)
            dxgk_shared_fence_changed(obj->shared_fence);
    }
    pthread_mutex_unlock(&adapter->fence_lock);
    dxgk_reap_async_waits();
    dxgk_sched_kick(adapter);
}

void dxgk_device_fences_to_max(struct dxgk_device *device)
{
    struct dxgk_syncobj *obj;

    kmt_mutex_lock(&device->list_lock);
    LIST_FOR_EACH_ENTRY(obj, &device->syncobjs, struct dxgk_syncobj, entry) {
        if (obj->flags.NoSignalMaxValueOnTdr)
            continue;
        pthread_mutex_lock(&obj->lock);
        if (fence_store(obj, UINT64_MAX, false)) {
            driver_fence_signal(obj, UINT64_MAX);
            if (obj->shared_fence)
                dxgk_shared_fence_stored(obj->shared_fence);
        }
        dxgk_wake_waiters_locked(obj, false);
        pthread_mutex_unlock(&obj->lock);
    }
    kmt_mutex_unlock(&device->list_lock);
    dxgk_reap_async_waits();
    dxgk_sched_kick(device->adapter);
}

void dxgk_syncobj_context_gone(struct dxgk_context *ctx)
{
    struct dxgk_syncobj *obj;
    bool released = false;

    pthread_mutex_lock(&dxgk_process.lock);
    LIST_FOR_EACH_ENTRY(obj, &dxgk_process.syncobjs, struct dxgk_syncobj, entry) {
        if (obj->type != D3DDDI_SYNCHRONIZATION_MUTEX)
            continue;
        pthread_mutex_lock(&obj->lock);
        if (obj->mutex.owner == ctx) {
            obj->mutex.owner = NULL;
            obj->mutex.owned = false;       /* abandoned by its owner */
            if (has_shared_state(obj))
                dxgk_shared_state_disown(obj);
            released = true;
        }
        pthread_mutex_unlock(&obj->lock);
    }
    pthread_mutex_unlock(&dxgk_process.lock);
    if (released)
        dxgk_sched_kick(ctx->device->adapter);
}
