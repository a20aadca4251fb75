/*
 * DRM miniport, i915 family (Intel integrated and DG1/DG2 discrete GPUs).
 *
 *   create        GEM_CREATE (system memory); on a discrete GPU with
 *                 KMT_DRM_ALLOCATION_DEVICE_LOCAL, GEM_CREATE_EXT placed in
 *                 local memory with system memory to spill to, and
 *                 NEEDS_CPU_ACCESS since every allocation may be locked
 *   existing sysmem  GEM_USERPTR over the caller's pages (zero copy)
 *   map           GEM_MMAP_OFFSET: FIXED on discrete parts (the kernel
 *                 picks), WB on LLC parts, WC otherwise or when asked
 *                 (without PAT: WB with LLC, else the GTT aperture)
 *   lock waits    GEM_WAIT (timeout 0 with DonotWait: ETIME -> busy)
 *   memory        DRM_I915_QUERY_MEMORY_REGIONS: probed and unallocated
 *                 sizes of local memory; system memory's free is
 *                 MemAvailable (i915 reports its probed size there)
 *   contexts      GEM_CONTEXT_CREATE_EXT / GEM_CONTEXT_DESTROY, one per D3D
 *                 context (its id goes to the UMD); submission through
 *                 kmtshim (EXECBUFFER2 with timeline fences) is not written
 *                 yet: it faults with STATUS_NOT_SUPPORTED
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>
#include <i915_drm.h>

#include "drm_miniport.h"

struct i915_state {
    bool has_llc;
    bool discrete;
    struct drm_i915_gem_memory_class_instance local, system;
};

static struct i915_state *state(struct kdrm_adapter *a)
{
    return a->family_data;
}

static int query_regions(struct kdrm_adapter *a, struct drm_i915_query_memory_regions **out)
{
    struct drm_i915_query_item item = { .query_id = DRM_I915_QUERY_MEMORY_REGIONS };
    struct drm_i915_query q = { .num_items = 1, .items_ptr = (uintptr_t)&item };
    void *buf;
    int err;

    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_QUERY, &q, "I915_QUERY")) < 0)
        return err;
    if (item.length <= 0)
        return item.length < 0 ? item.length : -ENODATA;
    if (!(buf = calloc(1, (size_t)item.length)))
        return -ENOMEM;
    item.data_ptr = (uintptr_t)buf;
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_QUERY, &q, "I915_QUERY")) < 0 || item.length <= 0) {
        free(buf);
        return err < 0 ? err : -ENODATA;
    }
    *out = buf;
    return 0;
}

/* Local memory's unallocated size is what i915 has left (the probed size
 * again without CAP_PERFMON).  System memory's is always its probed size:
 * i915 keeps no account of it (intel_memory_region_avail), so what is free
 * there is what Linux has available. */
static int i915_memory(struct kdrm_adapter *a, struct kdrm_memory *m)
{
    struct drm_i915_query_memory_regions *r;
    int err;

    if ((err = query_regions(a, &r)) < 0)
        return err;
    memset(m, 0, sizeof(*m));
    for (UINT i = 0; i < r->num_regions; i++) {
        const struct drm_i915_memory_region_info *info = &r->regions[i];

        if (info->region.memory_class == I915_MEMORY_CLASS_DEVICE) {
            m->discrete = true;
            m->local_size += info->probed_size;
            m->local_free += info->unallocated_size;
            m->local_visible += info->probed_cpu_visible_size;
        }
    }
    free(r);
    if (m->discrete) {
        m->nonlocal_size = kdrm_system_share();
        m->nonlocal_free = kdrm_system_free();
    } else {
        m->local_size = kdrm_system_share();   /* integrated: UMA */
        m->local_free = kdrm_system_free();
    }
    return 0;
}

static void find_regions(struct kdrm_adapter *a, struct i915_state *s)
{
    struct drm_i915_query_memory_regions *r;

    if (query_regions(a, &r) < 0)
        return;
    for (UINT i = 0; i < r->num_regions; i++) {
        if (r->regions[i].region.memory_class == I915_MEMORY_CLASS_DEVICE && !s->discrete) {
            s->local = r->regions[i].region;
            s->discrete = true;
        } else if (r->regions[i].region.memory_class == I915_MEMORY_CLASS_SYSTEM) {
            s->system = r->regions[i].region;
        }
    }
    free(r);
}

static int i915_start(struct kdrm_adapter *a)
{
    struct i915_state *s = calloc(1, sizeof(*s));
    int llc = 0;
    struct drm_i915_getparam gp = { .param = I915_PARAM_HAS_LLC, .value = &llc };

    if (!s)
        return -ENOMEM;
    if (!kdrm_ioctl(a->fd, DRM_IOCTL_I915_GETPARAM, &gp, "I915_GETPARAM"))
        s->has_llc = llc != 0;
    find_regions(a, s);
    a->family_data = s;
    return 0;
}

static void family_free(struct kdrm_adapter *a)
{
    free(a->family_data);
    a->family_data = NULL;
}

static int create_local(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct drm_i915_gem_memory_class_instance regions[2] = { state(a)->local, state(a)->system };
    struct drm_i915_gem_create_ext_memory_regions ext = {
        .base = { .name = I915_GEM_CREATE_EXT_MEMORY_REGIONS },
        .num_regions = 2,
        .regions = (uintptr_t)regions,
    };
    struct drm_i915_gem_create_ext args = {
        .size = bo->size,
        .flags = I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS,
        .extensions = (uintptr_t)&ext,
    };
    int err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_CREATE_EXT, &args, "I915_GEM_CREATE_EXT");

    if (err < 0)
        return err;
    bo->handle = args.handle;
    bo->size = args.size;
    return 0;
}

static int i915_create(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct drm_i915_gem_create args = { .size = bo->size };
    int err;

    if (state(a)->discrete && (bo->flags & KMT_DRM_ALLOCATION_DEVICE_LOCAL))
        return create_local(a, bo);
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_CREATE, &args, "I915_GEM_CREATE")) < 0)
        return err;
    bo->handle = args.handle;
    bo->size = args.size;
    return 0;
}

static int i915_create_userptr(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem)
{
    struct drm_i915_gem_userptr args = { .user_ptr = (uintptr_t)mem, .user_size = bo->size };
    int err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_USERPTR, &args, "I915_GEM_USERPTR");

    if (err < 0)
        return err;
    bo->handle = args.handle;
    bo->backing = KMT_DRM_BACKING_USERPTR;
    return 0;
}

static int mmap_offset(struct kdrm_adapter *a, struct drm_i915_gem_mmap_offset *args, UINT64 mode)
{
    args->flags = mode;
    return kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_MMAP_OFFSET, args, "I915_GEM_MMAP_OFFSET");
}

/* WC needs the CPU's PAT: without it (nopat, Xen PV) i915 answers ENODEV
 * (i915_gem_mmap_offset_ioctl).  Its own dumb-buffer mapping then uses the
 * GTT aperture (i915_gem_dumb_mmap_offset); an LLC part maps write-back,
 * coherent there. */
static int i915_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    if (!bo->has_offset) {
        struct drm_i915_gem_mmap_offset args = { .handle = bo->handle };
        bool llc = state(a)->has_llc;
        int err;

        if (state(a)->discrete)
            err = mmap_offset(a, &args, I915_MMAP_OFFSET_FIXED);
        else if (llc && !(bo->flags & KMT_DRM_ALLOCATION_WRITECOMBINE))
            err = mmap_offset(a, &args, I915_MMAP_OFFSET_WB);
        else if ((err = mmap_offset(a, &args, I915_MMAP_OFFSET_WC)) == -ENODEV)
            err = mmap_offset(a, &args, llc ? I915_MMAP_OFFSET_WB : I915_MMAP_OFFSET_GTT);
        if (err < 0)
            return err;
        bo->mmap_offset = args.offset;
        bo->has_offset = true;
    }
    return kdrm_map_offset(a, bo, prot, ptr);
}

static int i915_cpu_begin(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags)
{
    struct drm_i915_gem_wait w = { .bo_handle = bo->handle, .timeout_ns = flags.DonotWait ? 0 : -1 };

    if (flags.IgnoreSync)
        return 0;
    return kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_WAIT, &w, "I915_GEM_WAIT");
}

/* ENODEV is i915's answer for a GPU without hardware contexts (gen5 and
 * older: i915_gem_context_create_ioctl), not a lost device. */
static int i915_ctx_create(struct kdrm_adapter *a, struct kdrm_context *c)
{
    struct drm_i915_gem_context_create_ext args = { .flags = 0 };
    int err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, &args, "I915_GEM_CONTEXT_CREATE_EXT");

    if (err < 0)
        return err == -ENODEV ? -EOPNOTSUPP : err;
    c->kernel_ctx = args.ctx_id;
    return 0;
}

static void i915_ctx_destroy(struct kdrm_adapter *a, struct kdrm_context *c)
{
    struct drm_i915_gem_context_destroy args = { .ctx_id = c->kernel_ctx };

    if (drmIoctl(a->fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &args))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "GEM_CONTEXT_DESTROY(%u) failed\n", c->kernel_ctx);
}

const struct kdrm_family kdrm_family_i915 = {
    .name = "i915",
    .has_userptr = true,
    .start = i915_start,
    .stop = family_free,
    .create = i915_create,
    .create_userptr = i915_create_userptr,
    .destroy = kdrm_gem_destroy,
    .map = i915_map,
    .unmap = kdrm_unmap_plain,
    .cpu_begin = i915_cpu_begin,
    .memory = i915_memory,
    .ctx_create = i915_ctx_create,
    .ctx_destroy = i915_ctx_destroy,
};
