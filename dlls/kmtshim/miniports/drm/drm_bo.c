/*
 * DRM miniport: a buffer object's record, and its end - its mappings, its
 * GEM object through the family, and the record.  The allocation's destroy
 * ends it, or the completion of the last submission naming a copy-backed
 * object.
 */
#include <stdlib.h>

#include "drm_winsys.h"
#include "drm_bo.h"

struct kdrm_bo *kdrm_bo_new(struct kdrm_adapter *a, UINT64 size, UINT flags)
{
    struct kdrm_bo *bo = malloc(sizeof(*bo));

    if (!bo)
        return NULL;
    *bo = (struct kdrm_bo){
        .magic = KDRM_BO_MAGIC,
        .adapter = a,
        .size = size,
        .flags = flags,
        .backing = KMT_DRM_BACKING_BO,
    };
    atomic_init(&bo->open_count, 0);
    return bo;
}

void kdrm_bo_release(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    if (bo->cpu) {
        /* the core unmaps before destroying; keep the kernel's view clean anyway */
        a->family->unmap(a, bo, bo->cpu);
        atomic_fetch_sub(&a->mappings, 1);
    }
    if (bo->copy_map)
        a->family->unmap(a, bo, bo->copy_map);
    if (bo->share)
        kdrm_share_release(a, bo);       /* another allocation may hold its handle */
    else
        a->family->destroy(a, bo);
    atomic_fetch_sub(&a->buffers, 1);
    atomic_fetch_sub(&a->bytes, bo->size);
    bo->magic = 0;
    free(bo->shadow);
    free(bo);
}
