/*
 * DRM miniport: GEM_CLOSE as a family's destroy, for the families whose
 * objects are plain GEM handles.
 */
#include <string.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_fault.h"
#include "drm_trace.h"

void kdrm_gem_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    int err = kdrm_gem_close(a->fd, bo->handle);

    if (err < 0)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "GEM_CLOSE(%u) failed: %s\n", bo->handle, strerror(-err));
}
