/*
 * DRM miniport, generic family: a driver the table does not know.
 *
 * Its adapter is still enumerated, with its PCI ids, bus address and
 * budget (system memory), and says what it is: the Description ends in
 * "no kmtshim allocator for this driver", KMT_DRM_UMD_PRIVATE has
 * AllocatorAvailable = FALSE, and CreateAllocation fails with
 * STATUS_NOT_SUPPORTED.  Allocating on an unknown driver would need its
 * own ioctls (render nodes refuse dumb buffers), and taking its card node
 * could steal DRM master from the display server.
 */
#include "drm_winsys.h"
#include "drm_bo.h"

const struct kdrm_family kdrm_family_generic = {
    .name = "generic",
    .destroy = kdrm_gem_destroy,
    .map = kdrm_dumb_map,
    .unmap = kdrm_unmap_plain,
};
