/*
 * Sync objects shared across processes: CreateSynchronizationObject2 with
 * Flags.Shared registers the object with the session broker (kind
 * SYNCOBJ; the blob holds its type, flags, adapter LUID, initial state and
 * a semaphore's MaxCount; fds[0] is its state's page and, for a monitored
 * fence the miniport exports, fds[1] its driver fence), and
 * OpenSynchronizationObject,
 * OpenSyncObjectFromNtHandle(2) and OpenSyncObjectNtHandleFromName open it
 * in any process of the session.  Every local object of a shared one
 * holds one broker reference, dropped with its handle.
 *
 * Every shared sync object is one object across processes.  A monitored
 * fence: one value page, one driver fence where the miniport shares it,
 * waits woken from any process (shared_fence.h).  A mutex, semaphore or
 * legacy fence: one state in a page of the same kind, which GPU waits and
 * signals of every process change (syncobj_shared_state.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddi.h"
#include "share.h"
#include "shared_fence.h"
#include "syncobj_share.h"
#include "syncobj_shared_state.h"
#include "base/kmt_debug.h"

#define BLOB_MAGIC 0x4e59534bu           /* "KSYN" */

struct syncobj_blob {
    uint32_t magic;
    uint32_t type;                       /* D3DDDI_SYNCHRONIZATIONOBJECT_TYPE */
    uint32_t flags;                      /* the creator's D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS */
    uint32_t driver_fence;               /* fds[1] is the miniport's exported fence */
    LUID luid;                           /* the creator's adapter */
    uint64_t initial;                    /* mutex state, fence value, monitored fence value */
    uint32_t semaphore_max;
    uint32_t semaphore_initial;
};

/* Windows keeps its sharing flags with the object; the opener chooses the
 * rest (how its device waits, signals, survives a TDR). */
#define SHARING_FLAGS 0x3u               /* Shared, NtSecuritySharing */
#define KNOWN_FLAGS 0x5ffu

NTSTATUS dxgk_syncobj_register_shared(struct dxgk_syncobj *obj, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                                      int page_fd)
{
    struct syncobj_blob blob = {
        .magic = BLOB_MAGIC,
        .type = obj->type,
        .flags = info->Flags.Value,
        .luid = obj->adapter->luid,
    };
    struct kmt_broker_create c = {
        .kind = KMT_BROKER_SYNCOBJ,
        .global = !info->Flags.NtSecuritySharing,
        .blob = &blob,
        .blob_size = sizeof(blob),
        .holder_offset = -1,
    };
    int fds[2], driver_fd = -1;
    NTSTATUS status;

    switch (obj->type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX: blob.initial = info->SynchronizationMutex.InitialState != FALSE; break;
    case D3DDDI_SEMAPHORE:
        blob.semaphore_max = info->Semaphore.MaxCount;
        blob.semaphore_initial = info->Semaphore.InitialCount;
        break;
    case D3DDDI_FENCE:                 blob.initial = info->Fence.FenceValue; break;
    case D3DDDI_MONITORED_FENCE:       blob.initial = info->MonitoredFence.InitialFenceValue; break;
    default:                           break;   /* a CPU notification: its event stays here */
    }
    if (page_fd >= 0)
        fds[c.fd_count++] = page_fd;
    if (obj->type == D3DDDI_SYNCHRONIZATION_MUTEX)
        c.holder_offset = DXGK_SHARED_HOLDER_OFFSET;   /* the broker frees it for a dead owner */
    if (obj->type == D3DDDI_MONITORED_FENCE) {
        /* Without the driver fence the page alone is shared: the other
         * processes' CPU and scheduler waits still wake through it. */
        if (obj->monitored.driver_fence && dxgk_ddi_has_fence_sharing(obj->adapter)) {
            if ((status = dxgk_ddi_export_fence(obj->adapter, obj->monitored.driver_fence, &driver_fd))) {
                WARN_(dxgk, "the miniport exported no fence (%s): the value page alone is shared\n",
                      kmt_debugstr_status(status));
                driver_fd = -1;
            } else {
                fds[c.fd_count++] = driver_fd;
                blob.driver_fence = 1;
            }
        }
    }
    c.fds = fds;
    status = kmt_broker_create(&c, &obj->broker_id, &obj->global_handle);
    obj->broker_connection = kmt_broker_call_connection();
    if (driver_fd >= 0)
        close(driver_fd);                /* the broker holds its own copy */
    if (status)
        WARN_(dxgk, "the broker refused a shared sync object: %s\n", kmt_debugstr_status(status));
    return status;
}

/* Takes the broker object's fds and blob once opened (its reference now
 * belongs to the local object). */
static void take_object(struct kmt_broker_object *bo)
{
    for (unsigned i = 0; i < bo->fd_count; i++)
        close(bo->fds[i]);
    bo->fd_count = 0;
    free(bo->blob);
    bo->blob = NULL;
    bo->blob_size = 0;
    bo->id = 0;
}

static NTSTATUS read_blob(const struct kmt_broker_object *bo, struct syncobj_blob *blob)
{
    if (bo->kind != KMT_BROKER_SYNCOBJ || bo->blob_size != sizeof(*blob) || !bo->blob)
        return STATUS_OBJECT_TYPE_MISMATCH;
    memcpy(blob, bo->blob, sizeof(*blob));
    if (blob->magic != BLOB_MAGIC)
        return STATUS_OBJECT_TYPE_MISMATCH;
    switch (blob->type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX:
    case D3DDDI_SEMAPHORE:
    case D3DDDI_FENCE:
        return bo->fd_count >= 1 ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
    case D3DDDI_MONITORED_FENCE:
        return bo->fd_count >= 1u + !!blob->driver_fence ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
    default:
        return STATUS_INVALID_PARAMETER;     /* a CPU notification's event cannot travel */
    }
}

/* The adapter the object opens on: the device's (which must be the
 * creator's adapter), or this process's adapter with the creator's LUID. */
static NTSTATUS open_adapter(D3DKMT_HANDLE hDevice, LUID luid, struct dxgk_device **device,
                             struct dxgk_adapter **adapter)
{
    *device = NULL;
    if (hDevice) {
        if (!(*device = dxgk_device_acquire(hDevice)))
            return STATUS_INVALID_PARAMETER;
        *adapter = (*device)->adapter;
        if ((*adapter)->luid.LowPart != luid.LowPart || (*adapter)->luid.HighPart != luid.HighPart) {
            dxgk_device_release(*device);
            *device = NULL;
            return STATUS_INVALID_PARAMETER;
        }
        kmt_object_get(&(*adapter)->obj);
        return STATUS_SUCCESS;
    }
    return (*adapter = dxgk_adapter_from_luid(luid)) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS open_object(D3DKMT_HANDLE hDevice, const D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS *open_flags,
                            struct kmt_broker_object *bo, struct dxgk_syncobj_opened *out)
{
    D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags;
    struct dxgk_device *device;
    struct dxgk_adapter *adapter;
    struct dxgk_syncobj *obj;
    struct syncobj_blob blob;
    NTSTATUS status;

    if ((status = read_blob(bo, &blob)))
        return status;
    flags.Value = blob.flags;
    if (open_flags)
        flags.Value = (blob.flags & SHARING_FLAGS) | (open_flags->Value & ~SHARING_FLAGS);
    if ((status = open_adapter(hDevice, blob.luid, &device, &adapter)))
        return status;
    obj = dxgk_syncobj_alloc(adapter, blob.type, flags);
    dxgk_adapter_put(adapter);
    if (!obj) {
        status = STATUS_NO_MEMORY;
        goto out;
    }
    obj->v2 = true;
    obj->broker_connection = bo->connection;   /* the mutex's holder id is this one's */
    switch (blob.type) {
    case D3DDDI_SEMAPHORE:
        obj->semaphore.max = blob.semaphore_max;
        /* fall through */
    case D3DDDI_SYNCHRONIZATION_MUTEX:
    case D3DDDI_FENCE:
        status = dxgk_shared_state_map(obj, bo->fds[0]);   /* the state is the page's */
        break;
    case D3DDDI_MONITORED_FENCE: {
        struct dxgk_fence_init init = {
            .no_gpu_access = flags.NoGPUAccess,
            .shared = true,
            .page_fd = bo->fds[0],
            .driver_fd = blob.driver_fence ? bo->fds[1] : -1,
        };
        int unused = -1;

        if (device) {
            obj->device = device;
            kmt_object_get(&device->obj);
        }
        if (!(status = dxgk_syncobj_init_monitored(obj, &init, &unused)))
            obj->type = D3DDDI_MONITORED_FENCE;
        break;
    }
    }
    obj->broker_id = bo->id;             /* before the handle exists: its destroy drops it */
    if (!status)
        status = dxgk_syncobj_publish(obj, &out->handle);
    if (status) {
        obj->broker_id = 0;              /* the caller's still */
        dxgk_syncobj_abort(obj);
        goto out;
    }
    if (obj->type == D3DDDI_MONITORED_FENCE) {
        out->cpu_va = obj->monitored.cpu_va;
        out->gpu_va = obj->monitored.gpu_va;
    }
    take_object(bo);
    TRACE_(dxgk, "opened sync object %#x type %d\n", out->handle, obj->type);
out:
    if (device)
        dxgk_device_release(device);
    return status;
}

NTSTATUS dxgk_syncobj_open_object(D3DKMT_HANDLE hDevice, struct kmt_broker_object *obj, D3DKMT_HANDLE *out)
{
    struct dxgk_syncobj_opened opened = { 0 };
    NTSTATUS status = open_object(hDevice, NULL, obj, &opened);

    if (!status)
        *out = opened.handle;
    return status;
}

NTSTATUS dxgk_syncobj_share_id(D3DKMT_HANDLE h, uint64_t *broker_id, uint64_t *connection)
{
    struct dxgk_syncobj *obj = dxgk_syncobj_lookup(h, NULL);
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (!obj)
        return status;
    if (obj->v2 && obj->flags.Shared && obj->flags.NtSecuritySharing &&
        (*broker_id = __atomic_load_n(&obj->broker_id, __ATOMIC_ACQUIRE))) {
        /* destroyed meanwhile: the broker refuses the id */
        *connection = obj->broker_connection;
        status = dxgk_share_lost(obj->broker_connection) ? STATUS_DEVICE_REMOVED : STATUS_SUCCESS;
    }
    dxgk_syncobj_put(obj);
    return status;
}

/* Drops what an open that failed took. */
static void drop_objects(struct kmt_broker_object *objs, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        if (objs[i].id)
            kmt_broker_release(objs[i].id);
        kmt_broker_object_free(&objs[i]);
    }
}

NTSTATUS dxgk_open_syncobj_global(D3DKMT_HANDLE global, D3DKMT_HANDLE *out)
{
    struct kmt_broker_object bo = { 0 };
    NTSTATUS status;

    /* a global handle has low bits 2: anything else never reaches the broker */
    if ((global & 3) != 2)
        return STATUS_INVALID_PARAMETER;
    if ((status = kmt_broker_open_global(global, KMT_BROKER_SYNCOBJ, true, &bo)))
        return status;
    if ((status = dxgk_syncobj_open_object(0, &bo, out)))
        drop_objects(&bo, 1);
    return status;
}

NTSTATUS dxgk_open_syncobj_nt(int nt_fd, D3DKMT_HANDLE hDevice, const D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS *flags,
                              struct dxgk_syncobj_opened *out)
{
    struct kmt_broker_object objs[KMT_BROKER_MAX_NT_OBJECTS];
    unsigned count = 0;
    NTSTATUS status;

    if (flags && (flags->Value & ~KNOWN_FLAGS))
        return STATUS_INVALID_PARAMETER;
    if (nt_fd <= 0)
        return STATUS_INVALID_HANDLE;
    memset(objs, 0, sizeof(objs));
    status = kmt_broker_open_nt(nt_fd, KMT_BROKER_SYNCOBJ, true, objs, KMT_BROKER_MAX_NT_OBJECTS, &count);
    if (status)
        return status;
    if (!count) {
        status = STATUS_OBJECT_TYPE_MISMATCH;
    } else if (!(status = open_object(hDevice, flags, &objs[0], out))) {
        drop_objects(objs + 1, count - 1);   /* a sync object's share names it alone */
        return STATUS_SUCCESS;
    }
    drop_objects(objs, count);
    return status;
}

NTSTATUS dxgk_open_syncobj_name(const void *object_attributes, UINT access, int *nt_fd)
{
    char buffer[KMT_BROKER_MAX_NAME];
    const char *name;
    NTSTATUS status;

    if (!object_attributes)
        return STATUS_INVALID_PARAMETER;
    if ((status = dxgk_nt_name(object_attributes, buffer, sizeof(buffer), &name)))
        return status;
    if (!name)
        return STATUS_INVALID_PARAMETER;
    return kmt_broker_open_name(name, KMT_BROKER_SYNCOBJ, access, nt_fd);
}
