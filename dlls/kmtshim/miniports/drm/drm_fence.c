/*
 * DRM miniport: monitored fences as timeline syncobjs (KmtDdiCreateFence,
 * KmtDdiSignalFence, KmtDdiDestroyFence, KmtDdiExportFence,
 * KmtDdiImportFence).
 *
 * The core keeps the fence value in memory the program reads; the timeline
 * syncobj on the adapter's fd mirrors it, so the kernel (a submission's
 * in- and out-syncobjs, another API the UMD hands the syncobj to) sees the
 * same fence:
 *   create        SYNCOBJ_CREATE, TIMELINE_SIGNAL of the initial value
 *   signal        TIMELINE_SIGNAL of the new value.  A fence whose syncobj
 *                 was handed out may have points the kernel will signal
 *                 later (a submission's out-syncobj): a CPU signal below the
 *                 last submitted point is not added (a timeline cannot take
 *                 a point below one it has), the kernel gets there itself.
 *   rewind        (AllowFenceRewind: a lower value) SYNCOBJ_RESET, then
 *                 TIMELINE_SIGNAL of the lower value: the timeline restarts
 *                 there; kernel waits for higher points wait again, as on
 *                 Windows.  A registration the watcher had on a higher point
 *                 stays in the kernel until the timeline reaches it again or
 *                 the fence is destroyed.
 *   destroy       SYNCOBJ_DESTROY (it frees the kernel's registrations too)
 *   export        (KmtDdiExportFence) SYNCOBJ_HANDLE_TO_FD, a fd of the
 *                 timeline for another process
 *   import        (KmtDdiImportFence) SYNCOBJ_FD_TO_HANDLE, a fence of
 *                 create's contract over another process's timeline
 * Adapters without timeline syncobjs and SYNCOBJ_EVENTFD (vgem; kernels
 * before 6.6) get memory-only fences: CreateFence succeeds with NULL.
 *
 * A fence is watched (drm_watch.c) once KMT_DRM_ESCAPE_QUERY_FENCE or an
 * export handed its syncobj out, and an imported one from the start: before
 * that only this miniport signals it, and it knows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "drm_winsys.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"

static bool has_fences(const struct kdrm_adapter *a)
{
    return (a->caps & KMT_DRM_CAP_FENCES) != 0;
}

struct kdrm_fence *kdrm_fence_find(struct kdrm_adapter *a, const void *ptr, UINT32 syncobj)
{
    struct kdrm_fence *f;

    LIST_FOR_EACH_ENTRY(f, &a->exec.fences, struct kdrm_fence, entry)
        if (ptr ? (const void *)f == ptr : f->syncobj == syncobj)
            return f;
    return NULL;
}

NTSTATUS APIENTRY kdrm_create_fence(HANDLE hAdapter, KMTARG_CREATEFENCE *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_fence *f;
    int err;

    args->hDriverFence = NULL;
    if (!has_fences(a))
        return STATUS_SUCCESS;               /* memory only on this adapter */
    if (!(f = calloc(1, sizeof(*f))))
        return STATUS_NO_MEMORY;
    if ((err = kdrm_syncobj_create(a, &f->syncobj)) < 0 ||
        (args->InitialValue && (err = kdrm_syncobj_signal(a, f->syncobj, args->InitialValue)) < 0)) {
        if (f->syncobj)
            kdrm_syncobj_destroy(a, f->syncobj);
        free(f);
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "timeline syncobj failed: %s\n", strerror(-err));
        return kdrm_status_from_errno(err);
    }
    f->value = args->pValue;
    f->point = args->InitialValue;
    pthread_mutex_lock(&a->exec.lock);
    list_add_tail(&a->exec.fences, &f->entry);
    pthread_mutex_unlock(&a->exec.lock);
    atomic_fetch_add(&a->fences, 1);
    args->hDriverFence = f;
    return STATUS_SUCCESS;
}

void APIENTRY kdrm_destroy_fence(HANDLE hAdapter, HANDLE hDriverFence)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_fence *f = hDriverFence;

    /* off the list first: the watcher never looks at it again */
    pthread_mutex_lock(&a->exec.lock);
    list_remove(&f->entry);
    pthread_mutex_unlock(&a->exec.lock);
    kdrm_syncobj_destroy(a, f->syncobj);
    atomic_fetch_sub(&a->fences, 1);
    free(f);
}

/* A rewind is a lower value the core itself stored: if the watcher raised
 * the value since, or saw the kernel signal more and has yet to raise it
 * (it writes the copies back first), it is a signal that lost the race,
 * and nothing is rewound. */
static int rewind_fence(struct kdrm_adapter *a, struct kdrm_fence *f, UINT64 value)
{
    int err;

    if (f->seen || atomic_load_explicit(f->value, memory_order_acquire) != value)
        return 0;
    if ((err = kdrm_syncobj_reset(a, f->syncobj)) < 0)
        return err;
    f->point = 0;
    if (value && (err = kdrm_syncobj_signal(a, f->syncobj, value)) < 0)
        return err;
    f->point = value;
    if (f->exported && (!f->armed || f->armed > value + 1)) {
        f->armed = 0;                        /* the old registration waits higher up */
        kdrm_watch_arm_fence_locked(a, f);
    }
    return 0;
}

static int advance_fence(struct kdrm_adapter *a, struct kdrm_fence *f, UINT64 value)
{
    UINT64 submitted = 0;
    int err;

    if (f->exported && (err = kdrm_syncobj_query(a, f->syncobj, true, &submitted)) < 0)
        return err;
    if (submitted < value && (err = kdrm_syncobj_signal(a, f->syncobj, value)) < 0)
        return err;
    f->point = value;
    return 0;
}

NTSTATUS APIENTRY kdrm_signal_fence(HANDLE hAdapter, HANDLE hDriverFence, UINT64 value)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_fence *f = hDriverFence;
    int err = 0;

    pthread_mutex_lock(&a->exec.lock);
    if (value > f->point)
        err = advance_fence(a, f, value);
    else if (value < f->point)
        err = rewind_fence(a, f, value);
    pthread_mutex_unlock(&a->exec.lock);
    if (err < 0)
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "syncobj %u to %#llx: %s\n", f->syncobj,
                   (unsigned long long)value, strerror(-err));
    return kdrm_status_from_errno(err);
}

/* KMT_DRM_ESCAPE_QUERY_FENCE.  The core says which driver fence a handle
 * has; whether it is one of ours (another adapter's, another miniport's,
 * or one destroyed meanwhile) the list says, without dereferencing it. */
NTSTATUS kdrm_fence_export(struct kdrm_adapter *a, D3DKMT_HANDLE h, KMT_DRM_FENCE_INFO *info)
{
    DXGKARGCB_GETHANDLEDATA q = { .hObject = h, .Type = DXGK_HANDLE_KMT_FENCE };
    void *ptr = a->dxgkrnl.DxgkCbGetHandleData(&q);
    struct kdrm_fence *f;
    NTSTATUS status = STATUS_INVALID_PARAMETER;
    int err;

    memset(info, 0, sizeof(*info));
    info->hSyncObject = h;
    if (!ptr)
        return status;
    pthread_mutex_lock(&a->exec.lock);
    if ((f = kdrm_fence_find(a, ptr, 0))) {
        if ((err = kdrm_watch_start_locked(a)) < 0 ||
            (err = kdrm_syncobj_query(a, f->syncobj, false, &info->KernelValue)) < 0) {
            status = kdrm_status_from_errno(err);
        } else {
            f->exported = true;
            kdrm_watch_arm_fence_locked(a, f);
            info->SyncobjHandle = f->syncobj;
            info->Fd = a->fd;
            status = STATUS_SUCCESS;
        }
    }
    pthread_mutex_unlock(&a->exec.lock);
    return status;
}

/* A bad descriptor is the caller's: the kernel's EBADF. */
static NTSTATUS share_status(int err)
{
    return err == -EBADF ? STATUS_INVALID_PARAMETER : kdrm_status_from_errno(err);
}

/* Another process's view of the fence: SYNCOBJ_HANDLE_TO_FD, watched from
 * now on (the other process may signal it). */
NTSTATUS APIENTRY kdrm_export_fence(HANDLE hAdapter, HANDLE hDriverFence, int *pFd)
{
    struct kdrm_adapter *a = hAdapter;
    struct drm_syncobj_handle args = { .fd = -1 };
    struct kdrm_fence *f;
    int err = -EINVAL;

    *pFd = -1;
    if (!hDriverFence)
        return STATUS_NOT_SUPPORTED;     /* a memory-only fence (no timelines here) */
    pthread_mutex_lock(&a->exec.lock);
    /* from now on another process may signal it: the watcher looks at it */
    if ((f = kdrm_fence_find(a, hDriverFence, 0)) && !(err = kdrm_watch_start_locked(a))) {
        args.handle = f->syncobj;
        if (!(err = kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &args, "SYNCOBJ_HANDLE_TO_FD"))) {
            f->exported = true;
            kdrm_watch_arm_fence_locked(a, f);
        }
    }
    pthread_mutex_unlock(&a->exec.lock);
    if (err < 0)
        return share_status(err);
    *pFd = args.fd;
    return STATUS_SUCCESS;
}

/* Raises the core's value to the timeline's (never lowers it). */
static void mirror(_Atomic UINT64 *value, UINT64 to)
{
    UINT64 cur = atomic_load_explicit(value, memory_order_acquire);

    while (to > cur && !atomic_compare_exchange_weak_explicit(value, &cur, to, memory_order_acq_rel,
                                                              memory_order_acquire))
        ;
}

NTSTATUS APIENTRY kdrm_import_fence(HANDLE hAdapter, KMTARG_IMPORTFENCE *p)
{
    struct kdrm_adapter *a = hAdapter;
    struct drm_syncobj_handle args = { .fd = p->Fd };
    struct kdrm_fence *f;
    UINT64 now = 0;
    int err;

    p->hDriverFence = NULL;
    if (!(a->caps & KMT_DRM_CAP_FENCES))
        return STATUS_NOT_SUPPORTED;
    if (p->Fd < 0 || !p->pValue)
        return STATUS_INVALID_PARAMETER;
    if (!(f = calloc(1, sizeof(*f))))
        return STATUS_NO_MEMORY;
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &args, "SYNCOBJ_FD_TO_HANDLE")) < 0) {
        free(f);
        return share_status(err);
    }
    atomic_fetch_add(&a->syncobjs, 1);
    f->syncobj = args.handle;
    f->value = p->pValue;
    f->exported = true;
    pthread_mutex_lock(&a->exec.lock);
    if ((err = kdrm_syncobj_query(a, f->syncobj, false, &now)) < 0 || (err = kdrm_watch_start_locked(a)) < 0) {
        pthread_mutex_unlock(&a->exec.lock);
        kdrm_syncobj_destroy(a, f->syncobj);
        free(f);
        return share_status(err);
    }
    f->point = now;
    mirror(f->value, now);
    list_add_tail(&a->exec.fences, &f->entry);
    kdrm_watch_arm_fence_locked(a, f);
    pthread_mutex_unlock(&a->exec.lock);
    atomic_fetch_add(&a->fences, 1);
    p->hDriverFence = f;
    return STATUS_SUCCESS;
}
