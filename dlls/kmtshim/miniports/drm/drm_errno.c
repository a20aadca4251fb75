/*
 * DRM miniport: the NTSTATUS a DDI returns for a DRM call's errno.
 */
#include <errno.h>

#include "drm_trace.h"

NTSTATUS kdrm_status_from_errno(int err)
{
    switch (err < 0 ? -err : err) {
    case 0:
        return STATUS_SUCCESS;
    case ENOMEM:
        return STATUS_NO_MEMORY;
    case ENOSPC:
    case E2BIG:
    case EFBIG:
        return STATUS_GRAPHICS_NO_VIDEO_MEMORY;
    case EBUSY:
    case EAGAIN:
    case ETIME:
    case ETIMEDOUT:
        return STATUS_GRAPHICS_ALLOCATION_BUSY;
    case EINVAL:
    case ENOENT:
    case EFAULT:                          /* a caller's pages the kernel could not read */
        return STATUS_INVALID_PARAMETER;
    case ENOSYS:
    case EOPNOTSUPP:
    case ENOTTY:
        return STATUS_NOT_SUPPORTED;
    case ENODEV:
    case EIO:
    case ECANCELED:
        /* unplugged, a wedged GPU, or a context the kernel gave up after a
         * GPU reset (i915 bans with EIO; amdgpu's guilty or pre-reset
         * contexts and xe's banned queues answer ECANCELED) */
        return STATUS_DEVICE_REMOVED;
    default:
        return STATUS_UNSUCCESSFUL;
    }
}
