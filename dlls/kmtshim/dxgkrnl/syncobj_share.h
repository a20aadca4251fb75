/*
 * Sync objects shared across processes (syncobj_share.c): what creation
 * and the Open* thunks call.
 */
#ifndef KMTSHIM_SYNCOBJ_SHARE_H
#define KMTSHIM_SYNCOBJ_SHARE_H

#include "share.h"
#include "sync.h"

/* A shared object whose broker connection ended (share.h) is gone for
 * this process: its CPU and GPU waits and signals fail with
 * STATUS_DEVICE_REMOVED, and a GPU wait already queued passes over it.
 * One load, no system call: it sees the end once some call of the
 * process noticed it.  _on: against `connection`, one load for many. */
static inline bool dxgk_syncobj_link_gone_on(const struct dxgk_syncobj *obj, uint64_t connection)
{
    return __atomic_load_n(&obj->broker_id, __ATOMIC_RELAXED) && obj->broker_connection != connection;
}

static inline bool dxgk_syncobj_link_gone(const struct dxgk_syncobj *obj)
{
    return dxgk_syncobj_link_gone_on(obj, kmt_broker_connection());
}

/* Registers a new object made with Flags.Shared with the broker: sets
 * obj->broker_id and, without NtSecuritySharing, obj->global_handle.
 * page_fd: the page of its state (shared_fence.h). */
NTSTATUS dxgk_syncobj_register_shared(struct dxgk_syncobj *obj, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                                      int page_fd);

/* What an opened object gives back (monitored fences). */
struct dxgk_syncobj_opened {
    D3DKMT_HANDLE handle;
    void *cpu_va;
    D3DGPU_VIRTUAL_ADDRESS gpu_va;
};

/* D3DKMTOpenSynchronizationObject. */
NTSTATUS dxgk_open_syncobj_global(D3DKMT_HANDLE global, D3DKMT_HANDLE *out);
/* D3DKMTOpenSyncObjectFromNtHandle (hDevice 0, flags NULL) and ...2. */
NTSTATUS dxgk_open_syncobj_nt(int nt_fd, D3DKMT_HANDLE hDevice, const D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS *flags,
                              struct dxgk_syncobj_opened *out);
/* D3DKMTOpenSyncObjectNtHandleFromName. */
NTSTATUS dxgk_open_syncobj_name(const void *object_attributes, UINT access, int *nt_fd);

#endif /* KMTSHIM_SYNCOBJ_SHARE_H */
