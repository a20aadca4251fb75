/*
 * DRM miniport, dumb-buffer family: vgem, vkms and drivers like them.
 *
 * Dumb buffers exist only on the card (primary) node: the render node
 * refuses MODE_CREATE_DUMB with EACCES.  A buffer of N bytes is made as
 * N / page rows of one page each (width = page / 4 at 32 bpp), so every
 * size the core asks for is exact.  There is no GPU behind these drivers:
 * the CPU is the only writer this miniport knows of, so a lock never
 * waits (implicit fences another importer adds are not looked at; a
 * dma-buf poll would cost an fd per allocation).
 */
#include <errno.h>
#include <string.h>
#include <xf86drm.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_fault.h"

int kdrm_dumb_create(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct drm_mode_create_dumb args = {
        .width = a->page_size / 4,
        .height = (UINT32)(bo->size / a->page_size),
        .bpp = 32,
    };
    int err;

    /* the kernel computes pitch * height in 32 bits: EINVAL past 4 GiB */
    if (bo->size > UINT32_MAX)
        return -EFBIG;
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_MODE_CREATE_DUMB, &args, "MODE_CREATE_DUMB")) < 0)
        return err;
    bo->handle = args.handle;
    bo->width = args.width;
    bo->height = args.height;
    if (args.size < bo->size) {          /* a driver that pads less than asked */
        kdrm_gem_close(a->fd, args.handle);
        return -EINVAL;
    }
    bo->size = args.size;
    return 0;
}

/* An imported buffer: the layout create gives a buffer of its size. */
int kdrm_dumb_import(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    if (bo->size > UINT32_MAX)
        return -EFBIG;
    bo->width = a->page_size / 4;
    bo->height = (UINT32)(bo->size / a->page_size);
    return 0;
}

int kdrm_dumb_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    if (!bo->has_offset) {
        struct drm_mode_map_dumb args = { .handle = bo->handle };
        int err = kdrm_ioctl(a->fd, DRM_IOCTL_MODE_MAP_DUMB, &args, "MODE_MAP_DUMB");

        if (err < 0)
            return err;
        bo->mmap_offset = args.offset;
        bo->has_offset = true;
    }
    return kdrm_map_offset(a, bo, prot, ptr);
}

const struct kdrm_family kdrm_family_dumb = {
    .name = "dumb",
    .card_node = true,
    .create = kdrm_dumb_create,
    .import = kdrm_dumb_import,
    .destroy = kdrm_gem_destroy,
    .map = kdrm_dumb_map,
    .unmap = kdrm_unmap_plain,
};
