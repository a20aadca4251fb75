/*
 * DRM miniport: the end of a buffer object - its mappings, its GEM object
 * through the family, and the record.  The allocation's destroy calls it,
 * or the completion of the last submission naming a copy-backed object.
 */
#include <stdlib.h>

#include "drm_winsys.h"
#include "drm_bo.h"

void kdrm_bo_release(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    if (bo->cpu) {
        /* the core unmaps before destroying; keep the kernel's view clean anyway */
        a->family->unmap(a, bo, bo->cpu);
        atomic_fetch_sub(&a->mappings, 1);
    }
    if (bo->copy_map)
        a->family->unmap(a, bo, bo->copy_map);
    a->family->destroy(a, bo);
    atomic_fetch_sub(&a->buffers, 1);
    atomic_fetch_sub(&a->bytes, bo->size);
    bo->magic = 0;
    free(bo->shadow);
    free(bo);
}
