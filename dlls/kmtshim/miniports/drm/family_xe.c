/*
 * DRM miniport, xe family (Intel Lunar Lake, Battlemage and later).
 *
 * libdrm 2.4.114 has no xe_drm.h: the three ioctls used here are declared
 * below from the kernel's uAPI (include/uapi/drm/xe_drm.h, Linux 6.8+).
 *   create        XE_GEM_CREATE placed in system memory (WB), or in VRAM
 *                 with system memory to spill to (WC, NEEDS_VISIBLE_VRAM)
 *                 for KMT_DRM_ALLOCATION_DEVICE_LOCAL on a discrete GPU
 *   map           XE_GEM_MMAP_OFFSET
 *   existing sysmem  copy-backed: xe has userptr only as a VM binding
 *   lock waits    none: xe has no per-object wait (fences are syncobjs and
 *                 user fences), and nothing is queued until issue 5
 *   memory        XE_DEVICE_QUERY_MEM_REGIONS (used sizes need CAP_PERFMON;
 *                 without it the kernel says 0 and free reads as total)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "drm_miniport.h"

#define KXE_DEVICE_QUERY 0x00
#define KXE_GEM_CREATE 0x01
#define KXE_GEM_MMAP_OFFSET 0x02
#define KXE_QUERY_MEM_REGIONS 1
#define KXE_MEM_CLASS_SYSMEM 0
#define KXE_MEM_CLASS_VRAM 1
#define KXE_CREATE_NEEDS_VISIBLE_VRAM (1u << 2)
#define KXE_CPU_CACHING_WB 1
#define KXE_CPU_CACHING_WC 2

struct kxe_device_query {
    uint64_t extensions;
    uint32_t query;
    uint32_t size;
    uint64_t data;
    uint64_t reserved[2];
};

struct kxe_mem_region {
    uint16_t mem_class;
    uint16_t instance;
    uint32_t min_page_size;
    uint64_t total_size;
    uint64_t used;
    uint64_t cpu_visible_size;
    uint64_t cpu_visible_used;
    uint64_t reserved[6];
};

struct kxe_query_mem_regions {
    uint32_t num_mem_regions;
    uint32_t pad;
    struct kxe_mem_region mem_regions[];
};

struct kxe_gem_create {
    uint64_t extensions;
    uint64_t size;
    uint32_t placement;
    uint32_t flags;
    uint32_t vm_id;
    uint32_t handle;
    uint16_t cpu_caching;
    uint16_t pad[3];
    uint64_t reserved[2];
};

struct kxe_gem_mmap_offset {
    uint64_t extensions;
    uint32_t handle;
    uint32_t flags;
    uint64_t offset;
    uint64_t reserved[2];
};

_Static_assert(sizeof(struct kxe_mem_region) == 88, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_gem_create) == 56, "xe uAPI layout");

#define KXE_IOCTL_DEVICE_QUERY DRM_IOWR(DRM_COMMAND_BASE + KXE_DEVICE_QUERY, struct kxe_device_query)
#define KXE_IOCTL_GEM_CREATE DRM_IOWR(DRM_COMMAND_BASE + KXE_GEM_CREATE, struct kxe_gem_create)
#define KXE_IOCTL_GEM_MMAP_OFFSET DRM_IOWR(DRM_COMMAND_BASE + KXE_GEM_MMAP_OFFSET, struct kxe_gem_mmap_offset)

struct xe_state {
    uint32_t system_mask, vram_mask;       /* placement bits */
    /* Largest min_page_size of each class.  The kernel wants a size the page
     * divides, and 64 KiB only where VRAM is among the placements
     * (xe_bo.c, ___xe_bo_create_locked: XE_VRAM_FLAGS_NEED64K applies to
     * VRAM and stolen placements): system-only objects are not padded. */
    uint32_t system_page, vram_page;
};

static struct xe_state *state(struct kdrm_adapter *a)
{
    return a->family_data;
}

static int query_regions(struct kdrm_adapter *a, struct kxe_query_mem_regions **out)
{
    struct kxe_device_query q = { .query = KXE_QUERY_MEM_REGIONS };
    void *buf;
    int err;

    if ((err = kdrm_ioctl(a->fd, KXE_IOCTL_DEVICE_QUERY, &q, "XE_DEVICE_QUERY")) < 0)
        return err;
    if (q.size < sizeof(struct kxe_query_mem_regions) || !(buf = calloc(1, q.size)))
        return q.size ? -ENOMEM : -ENODATA;
    q.data = (uintptr_t)buf;
    if ((err = kdrm_ioctl(a->fd, KXE_IOCTL_DEVICE_QUERY, &q, "XE_DEVICE_QUERY")) < 0) {
        free(buf);
        return err;
    }
    *out = buf;
    return 0;
}

static int xe_memory(struct kdrm_adapter *a, struct kdrm_memory *m)
{
    struct kxe_query_mem_regions *r;
    uint64_t sys_total = 0, sys_used = 0;
    int err;

    if ((err = query_regions(a, &r)) < 0)
        return err;
    memset(m, 0, sizeof(*m));
    for (UINT i = 0; i < r->num_mem_regions; i++) {
        const struct kxe_mem_region *g = &r->mem_regions[i];

        if (g->mem_class == KXE_MEM_CLASS_VRAM) {
            m->discrete = true;
            m->local_size += g->total_size;
            m->local_free += g->total_size - (g->used < g->total_size ? g->used : g->total_size);
            m->local_visible += g->cpu_visible_size;
        } else {
            sys_total += g->total_size;
            sys_used += g->used;
        }
    }
    free(r);
    if (m->discrete) {
        m->nonlocal_size = kdrm_system_share();
        m->nonlocal_free = sys_total > sys_used ? sys_total - sys_used : 0;
    } else {
        m->local_size = kdrm_system_share();
        m->local_free = sys_total > sys_used ? sys_total - sys_used : 0;
    }
    return 0;
}

static int xe_start(struct kdrm_adapter *a)
{
    struct kxe_query_mem_regions *r;
    struct xe_state *s;
    int err;

    if ((err = query_regions(a, &r)) < 0)
        return err;
    if (!(s = calloc(1, sizeof(*s)))) {
        free(r);
        return -ENOMEM;
    }
    s->system_page = s->vram_page = a->page_size;
    for (UINT i = 0; i < r->num_mem_regions && i < 32; i++) {
        const struct kxe_mem_region *g = &r->mem_regions[i];
        uint32_t *page = g->mem_class == KXE_MEM_CLASS_VRAM ? &s->vram_page : &s->system_page;

        if (g->instance >= 32)
            continue;
        if (g->mem_class == KXE_MEM_CLASS_VRAM)
            s->vram_mask |= 1u << g->instance;
        else
            s->system_mask |= 1u << g->instance;
        if (g->min_page_size > *page)
            *page = g->min_page_size;
    }
    free(r);
    if (!s->system_mask) {               /* nowhere to put buffers; a failed start is not stopped */
        free(s);
        return -ENODEV;
    }
    a->family_data = s;
    return 0;
}

static void xe_stop(struct kdrm_adapter *a)
{
    free(a->family_data);
    a->family_data = NULL;
}

static int xe_create(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct xe_state *s = state(a);
    bool vram = s->vram_mask && (bo->flags & KMT_DRM_ALLOCATION_DEVICE_LOCAL);
    uint64_t page = vram && s->vram_page > s->system_page ? s->vram_page : s->system_page;
    struct kxe_gem_create args = {
        .size = (bo->size + page - 1) & ~(page - 1),
        .placement = s->system_mask | (vram ? s->vram_mask : 0),
        .flags = vram ? KXE_CREATE_NEEDS_VISIBLE_VRAM : 0,
        /* VRAM placements must be WC; so is an explicit request */
        .cpu_caching = vram || (bo->flags & KMT_DRM_ALLOCATION_WRITECOMBINE) ? KXE_CPU_CACHING_WC
                                                                            : KXE_CPU_CACHING_WB,
    };
    int err = kdrm_ioctl(a->fd, KXE_IOCTL_GEM_CREATE, &args, "XE_GEM_CREATE");

    if (err < 0)
        return err;
    bo->handle = args.handle;
    bo->size = args.size;
    return 0;
}

static int xe_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    if (!bo->has_offset) {
        struct kxe_gem_mmap_offset args = { .handle = bo->handle };
        int err = kdrm_ioctl(a->fd, KXE_IOCTL_GEM_MMAP_OFFSET, &args, "XE_GEM_MMAP_OFFSET");

        if (err < 0)
            return err;
        bo->mmap_offset = args.offset;
        bo->has_offset = true;
    }
    return kdrm_map_offset(a, bo, prot, ptr);
}

const struct kdrm_family kdrm_family_xe = {
    .name = "xe",
    .start = xe_start,
    .stop = xe_stop,
    .create = xe_create,
    .destroy = kdrm_gem_destroy,
    .map = xe_map,
    .unmap = kdrm_unmap_plain,
    .memory = xe_memory,
};
