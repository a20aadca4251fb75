/*
 * DRM miniport: the DRM calls and the fault hook they go through.
 *
 * Test hook (drm_fault.c): KMTSHIM_DRM_FAULT=<call>:<n>[:<errno>] makes the
 * n-th DRM call named <call> ("any" for every call) in this process fail
 * once with errno (ENOMEM by default); the KMT_DRM_ESCAPE_SET_FAULT escape
 * re-arms it at run time.  Calls that release (GEM_CLOSE, SYNCOBJ_DESTROY,
 * context destroys, munmap, amdgpu_bo_free) are never failed: nothing could
 * undo a failed release.  A negative errno stalls the call after it instead
 * (-errno ms); "submitted", a stall point and never a failure, is the moment
 * the kernel took a submission and the miniport has yet to record it;
 * "recorded", another, the submit DDI's last moment, once it recorded it.
 * KMTSHIM_DRM_SYSFS=<dir> (read when the miniport loads) looks PCI addresses
 * up under <dir> instead of /sys (drm_discovery.c).
 */
#ifndef KMTSHIM_DRM_FAULT_H
#define KMTSHIM_DRM_FAULT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <xf86drm.h>

#include "kmtshim/kmt_wintypes.h"

/* drm_fault.c: every DRM call of the miniport goes through these.  The
 * unarmed check and the ioctl wrappers are inline: they sit on every
 * create and destroy, where a call and return cost more than the check. */
extern atomic_bool kdrm_fault_armed;
int kdrm_fault_check_armed(const char *name, bool may_fail);

/* For library calls (libdrm_amdgpu): -errno to fail with, or 0 (after the
 * stall, when one was armed on it). */
static inline int kdrm_fault_check(const char *name)
{
    if (!atomic_load_explicit(&kdrm_fault_armed, memory_order_relaxed))
        return 0;
    return kdrm_fault_check_armed(name, true);
}

/* A stall point: never fails, stalls when armed. */
static inline void kdrm_fault_stall_point(const char *name)
{
    if (atomic_load_explicit(&kdrm_fault_armed, memory_order_relaxed))
        kdrm_fault_check_armed(name, false);
}

static inline int kdrm_ioctl(int fd, unsigned long request, void *arg, const char *name)
{
    int err = kdrm_fault_check(name);

    if (err)
        return err;
    return drmIoctl(fd, request, arg) ? -errno : 0;
}

static inline int kdrm_gem_close(int fd, UINT32 handle)   /* never injected */
{
    struct drm_gem_close args = { .handle = handle };

    return drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &args) ? -errno : 0;
}

int kdrm_open(const char *path, int flags);
void *kdrm_mmap(size_t size, int prot, int fd, UINT64 offset);
void kdrm_fault_arm(const char *call, unsigned nth, int err);
void kdrm_fault_arm_from_env(void);
void kdrm_fault_forget(void);
void kdrm_fault_counts(UINT64 *fired, UINT64 *seen);

#endif /* KMTSHIM_DRM_FAULT_H */
