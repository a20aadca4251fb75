/*
 * DRM miniport: a buffer object's record, and its end - its mappings, its
 * GEM object through the family (or its reference on a shared GEM handle,
 * drm_share.c), and the record.  The allocation's destroy ends it, or
 * the completion of the last submission naming a copy-backed object.
 */
#include <pthread.h>
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

/* Drops the allocation's reference on a shared GEM handle; the last one
 * destroys the object through the family. */
static void share_release(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct kdrm_gem_share *s = bo->share;

    pthread_mutex_lock(&a->share_lock);
    if (!--s->refs) {
        list_remove(&s->entry);
        a->family->destroy(a, bo);
        free(s);
    }
    pthread_mutex_unlock(&a->share_lock);
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
        share_release(a, bo);            /* another allocation may hold its handle */
    else
        a->family->destroy(a, bo);
    atomic_fetch_sub(&a->buffers, 1);
    atomic_fetch_sub(&a->bytes, bo->size);
    bo->magic = 0;
    free(bo->shadow);
    free(bo);
}
