/*
 * DRM miniport: a GPU virtual address allocator for families whose kernel
 * runs command buffers at addresses userspace chooses (i915 softpin).  One
 * per adapter, i.e. per process and fd: each process's contexts have
 * address spaces of their own.  Ranges are kept sorted by address in one
 * array; each carries the GEM handle it was given for, so a submission can
 * find an object by handle or by an address inside it.  First fit: a freed
 * range is reused by the next object that fits it.  A range starts at the
 * allocator's granule or at the larger alignment its object asks for (xe's
 * 64 KiB VRAM pages).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drm_bo.h"

int kdrm_gpuva_init(struct kdrm_gpuva *v, UINT64 base, UINT64 limit, UINT64 align)
{
    memset(v, 0, sizeof(*v));
    if (!align || (align & (align - 1)) || !base || base % align || limit <= base)
        return -EINVAL;
    v->base = base;
    v->limit = limit;
    v->align = align;
    return pthread_mutex_init(&v->lock, NULL) ? -ENOMEM : 0;
}

void kdrm_gpuva_fini(struct kdrm_gpuva *v)
{
    if (!v->align)
        return;
    free(v->ranges);
    pthread_mutex_destroy(&v->lock);
    memset(v, 0, sizeof(*v));
}

/* Index of the first range ending above `va`; lock held. */
static UINT first_after(const struct kdrm_gpuva *v, UINT64 va)
{
    UINT lo = 0, hi = v->count;

    while (lo < hi) {
        UINT mid = lo + (hi - lo) / 2;

        if (v->ranges[mid].start + v->ranges[mid].span <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool grow(struct kdrm_gpuva *v)
{
    UINT cap = v->capacity ? v->capacity * 2 : 64;
    struct kdrm_gpuva_range *r;

    if (v->count < v->capacity)
        return true;
    if (!(r = realloc(v->ranges, cap * sizeof(*r))))
        return false;
    v->ranges = r;
    v->capacity = cap;
    return true;
}

int kdrm_gpuva_alloc(struct kdrm_gpuva *v, UINT32 handle, UINT64 size, UINT64 align, UINT64 *va)
{
    UINT64 span, start;
    UINT i;
    int err = -ENOSPC;

    if (align < v->align)
        align = v->align;
    if (align & (align - 1))
        return -EINVAL;
    if (!size || size > v->limit - v->base)
        return -ENOSPC;
    span = (size + v->align - 1) & ~(v->align - 1);
    pthread_mutex_lock(&v->lock);
    start = v->base;
    for (i = 0; i <= v->count; i++) {
        UINT64 end = i < v->count ? v->ranges[i].start : v->limit;
        UINT64 at = (start + align - 1) & ~(align - 1);

        if (at >= start && end >= at && end - at >= span) {
            start = at;
            err = grow(v) ? 0 : -ENOMEM;
            break;
        }
        if (i < v->count)
            start = v->ranges[i].start + v->ranges[i].span;
    }
    if (!err) {
        memmove(v->ranges + i + 1, v->ranges + i, (v->count - i) * sizeof(*v->ranges));
        v->ranges[i] = (struct kdrm_gpuva_range){ .start = start, .span = span, .size = size, .handle = handle };
        v->count++;
        *va = start;
    }
    pthread_mutex_unlock(&v->lock);
    return err;
}

void kdrm_gpuva_free(struct kdrm_gpuva *v, UINT64 va)
{
    UINT i;

    pthread_mutex_lock(&v->lock);
    i = first_after(v, va);
    if (i < v->count && v->ranges[i].start == va) {
        memmove(v->ranges + i, v->ranges + i + 1, (v->count - i - 1) * sizeof(*v->ranges));
        v->count--;
    }
    pthread_mutex_unlock(&v->lock);
}

bool kdrm_gpuva_find_address(struct kdrm_gpuva *v, UINT64 va, struct kdrm_gpuva_range *out)
{
    bool found;
    UINT i;

    pthread_mutex_lock(&v->lock);
    i = first_after(v, va);
    found = i < v->count && v->ranges[i].start <= va && va - v->ranges[i].start < v->ranges[i].size;
    if (found)
        *out = v->ranges[i];
    pthread_mutex_unlock(&v->lock);
    return found;
}

bool kdrm_gpuva_find_handle(struct kdrm_gpuva *v, UINT32 handle, struct kdrm_gpuva_range *out)
{
    bool found = false;

    pthread_mutex_lock(&v->lock);
    for (UINT i = 0; i < v->count && !found; i++)
        if (v->ranges[i].handle == handle) {
            *out = v->ranges[i];
            found = true;
        }
    pthread_mutex_unlock(&v->lock);
    return found;
}
