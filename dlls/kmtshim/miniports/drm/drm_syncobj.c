/*
 * DRM miniport: the kernel's sync objects.  libdrm 2.4.114 has the timeline
 * ioctls but not SYNCOBJ_EVENTFD (Linux 6.6), declared here from the
 * kernel's uAPI.  Every call goes through drm_fault.c with its name;
 * SYNCOBJ_DESTROY, a release, is never failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <xf86drm.h>

#include "base/fd_registry.h"
#include "drm_winsys.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"

struct kdrm_syncobj_eventfd {
    UINT32 handle;
    UINT32 flags;                        /* 0: the point signalled; WAIT_AVAILABLE: it exists */
    UINT64 point;
    INT fd;
    UINT32 pad;
};
#define KDRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct kdrm_syncobj_eventfd)

int kdrm_syncobj_create(struct kdrm_adapter *a, UINT32 *handle)
{
    struct drm_syncobj_create args = { .flags = 0 };
    int err = kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_CREATE, &args, "SYNCOBJ_CREATE");

    if (err < 0)
        return err;
    *handle = args.handle;
    atomic_fetch_add(&a->syncobjs, 1);
    return 0;
}

void kdrm_syncobj_destroy(struct kdrm_adapter *a, UINT32 handle)
{
    struct drm_syncobj_destroy args = { .handle = handle };

    if (drmIoctl(a->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &args))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "SYNCOBJ_DESTROY(%u) failed: %d\n", handle, errno);
    else
        atomic_fetch_sub(&a->syncobjs, 1);
}

int kdrm_syncobj_signal(struct kdrm_adapter *a, UINT32 handle, UINT64 point)
{
    struct drm_syncobj_timeline_array args = {
        .handles = (uintptr_t)&handle,
        .points = (uintptr_t)&point,
        .count_handles = 1,
    };

    return kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &args, "SYNCOBJ_TIMELINE_SIGNAL");
}

int kdrm_syncobj_reset(struct kdrm_adapter *a, UINT32 handle)
{
    struct drm_syncobj_array args = { .handles = (uintptr_t)&handle, .count_handles = 1 };

    return kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_RESET, &args, "SYNCOBJ_RESET");
}

int kdrm_syncobj_query(struct kdrm_adapter *a, UINT32 handle, bool last_submitted, UINT64 *point)
{
    struct drm_syncobj_timeline_array args = {
        .handles = (uintptr_t)&handle,
        .points = (uintptr_t)point,
        .count_handles = 1,
        .flags = last_submitted ? DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED : 0,
    };

    return kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_QUERY, &args, "SYNCOBJ_QUERY");
}

int kdrm_syncobj_eventfd(struct kdrm_adapter *a, UINT32 handle, UINT64 point, int evfd)
{
    struct kdrm_syncobj_eventfd args = { .handle = handle, .point = point, .fd = evfd };

    return kdrm_ioctl(a->fd, KDRM_IOCTL_SYNCOBJ_EVENTFD, &args, "SYNCOBJ_EVENTFD");
}

/* A registration on a fresh syncobj stays pending; freeing the syncobj
 * frees it.  Older kernels answer ENOTTY (unknown ioctl) or EINVAL. */
bool kdrm_syncobj_probe_eventfd(struct kdrm_adapter *a)
{
    UINT32 handle;
    int evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    bool ok;

    if (evfd < 0)
        return false;
    kmt_fd_track(evfd);
    if (kdrm_syncobj_create(a, &handle) < 0) {
        kmt_fd_close(evfd);
        return false;
    }
    ok = kdrm_syncobj_eventfd(a, handle, 1, evfd) == 0;
    kdrm_syncobj_destroy(a, handle);
    kmt_fd_close(evfd);
    return ok;
}
