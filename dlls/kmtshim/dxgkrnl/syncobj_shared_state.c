/*
 * The one state of a shared mutex, semaphore or legacy fence, in its
 * shared page (syncobj_shared_state.h).
 */
#include "share.h"
#include "shared_fence.h"
#include "syncobj_shared_state.h"

static _Atomic uint32_t *holder(struct dxgk_syncobj *obj)
{
    return &obj->shared_fence->rw->holder;
}

static _Atomic uint64_t *value(struct dxgk_syncobj *obj)
{
    return &obj->shared_fence->rw->value;
}

NTSTATUS dxgk_shared_state_create(struct dxgk_syncobj *obj, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                                  int *fd)
{
    UINT64 initial = 0;
    NTSTATUS status;

    if (obj->type == D3DDDI_SEMAPHORE)
        initial = info->Semaphore.InitialCount;
    else if (obj->type == D3DDDI_FENCE)
        initial = info->Fence.FenceValue;
    if ((status = dxgk_shared_fence_create(initial, &obj->shared_fence, fd)))
        return status;
    obj->shared_fence->watch_holder = obj->type == D3DDDI_SYNCHRONIZATION_MUTEX;
    return STATUS_SUCCESS;
}

/* The id the holder word names this process by: obj->broker_connection's. */
static NTSTATUS learn_me(struct dxgk_syncobj *obj)
{
    if (obj->type != D3DDDI_SYNCHRONIZATION_MUTEX)
        return STATUS_SUCCESS;
    return dxgk_share_holder_id(obj->broker_connection, &obj->shared_me, "shared mutex");
}

NTSTATUS dxgk_shared_state_registered(struct dxgk_syncobj *obj, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info)
{
    NTSTATUS status;

    if ((status = learn_me(obj)))
        return status;
    if (obj->type == D3DDDI_SYNCHRONIZATION_MUTEX && info->SynchronizationMutex.InitialState)
        atomic_store(holder(obj), obj->shared_me);   /* nobody else has it yet */
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_shared_state_map(struct dxgk_syncobj *obj, int fd)
{
    NTSTATUS status;

    if ((status = dxgk_shared_fence_map(fd, &obj->shared_fence)))
        return status;
    obj->shared_fence->watch_holder = obj->type == D3DDDI_SYNCHRONIZATION_MUTEX;
    return learn_me(obj);                /* the caller frees the page on failure */
}

static bool mutex_free(uint32_t h)
{
    return !h || h == KMT_BROKER_HOLDER_ABANDONED;   /* an owner that died left it free */
}

bool dxgk_shared_state_ready(struct dxgk_syncobj *obj, UINT64 wanted, UINT uses)
{
    switch (obj->type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX: return mutex_free(atomic_load(holder(obj))) && uses == 1;
    case D3DDDI_SEMAPHORE:             return atomic_load(value(obj)) >= uses;
    case D3DDDI_FENCE:                 return atomic_load(value(obj)) >= wanted;
    default:                           return true;
    }
}

bool dxgk_shared_state_take(struct dxgk_syncobj *obj)
{
    uint32_t h;
    uint64_t c;

    switch (obj->type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX:
        h = atomic_load(holder(obj));
        while (mutex_free(h))
            if (atomic_compare_exchange_weak(holder(obj), &h, obj->shared_me))
                return true;
        return false;
    case D3DDDI_SEMAPHORE:
        c = atomic_load(value(obj));
        while (c)
            if (atomic_compare_exchange_weak(value(obj), &c, c - 1))
                return true;
        return false;
    default:
        return true;
    }
}

/* One more count, never above MaxCount: a signal that finds it full is
 * lost, as in one process. */
static bool semaphore_add(struct dxgk_syncobj *obj)
{
    uint64_t c = atomic_load(value(obj));

    while (c < obj->semaphore.max)
        if (atomic_compare_exchange_weak(value(obj), &c, c + 1))
            return true;
    return false;
}

static bool mutex_disown(struct dxgk_syncobj *obj)
{
    uint32_t me = obj->shared_me;

    return atomic_compare_exchange_strong(holder(obj), &me, 0);
}

void dxgk_shared_state_untake(struct dxgk_syncobj *obj)
{
    bool changed = false;

    if (obj->type == D3DDDI_SYNCHRONIZATION_MUTEX)
        changed = mutex_disown(obj);
    else if (obj->type == D3DDDI_SEMAPHORE)
        changed = semaphore_add(obj);
    if (changed)
        dxgk_shared_fence_stored(obj->shared_fence);   /* another process may have seen it taken */
}

void dxgk_shared_state_signal(struct dxgk_syncobj *obj, UINT64 v)
{
    bool changed = false;
    uint64_t cur;

    switch (obj->type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX:
        /* as in one process, a signal releases it whoever owns it */
        changed = atomic_exchange(holder(obj), 0) != 0;
        break;
    case D3DDDI_SEMAPHORE:
        changed = semaphore_add(obj);
        break;
    case D3DDDI_FENCE:
        cur = atomic_load(value(obj));
        while (v > cur && !changed)      /* only rises */
            changed = atomic_compare_exchange_weak(value(obj), &cur, v);
        break;
    default:
        break;
    }
    if (changed)
        dxgk_shared_fence_stored(obj->shared_fence);
}

void dxgk_shared_state_disown(struct dxgk_syncobj *obj)
{
    if (mutex_disown(obj))
        dxgk_shared_fence_stored(obj->shared_fence);
}
