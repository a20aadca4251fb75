/*
 * DRM miniport, virtio_gpu family (QEMU/crosvm's paravirtual GPU).
 *
 * Buffers are VIRTGPU_RESOURCE_CREATE objects on the render node: a 2D
 * B8G8R8X8 resource of one page per row, which both the 2D host (the
 * kernel only accepts 2D targets there) and a virgl host take.  The guest
 * pages are the memory the CPU maps (VIRTGPU_MAP gives the fake offset);
 * the host keeps its own copy, so:
 *   after CPU writes   TRANSFER_TO_HOST of the whole resource (Unlock)
 *   before CPU access  VIRTGPU_WAIT (NOWAIT for DonotWait: EBUSY -> busy),
 *                      unless IgnoreSync
 *   before CPU reads   on a virgl host, TRANSFER_FROM_HOST and a wait for
 *                      it, unless the lock said Discard or WriteOnly (a 2D
 *                      host has no way back: ENOSYS, and nothing there
 *                      writes resources anyway)
 *
 * Execution, on a virgl host only (a 2D host answers EXECBUFFER with
 * ENOSYS: no contexts there).  Every D3D context submits through the fd's
 * own virgl context, which the kernel makes at the first 3D call, on its
 * one ring: VIRTGPU_CONTEXT_INIT with per-context rings (RING_IDX) needs
 * the host's CONTEXT_INIT feature, which QEMU 7.2's virgl device lacks.
 * A submission is one VIRTGPU_EXECBUFFER in the kernel's 64-byte form
 * (with syncobj arrays; libdrm 2.4.114 has only the older 40-byte one):
 * the virgl stream as it is, the GEM handles it names (the kernel fences
 * them, so VIRTGPU_WAIT at Lock waits for it), in-syncobjs, and out
 * timeline points (the adapter's ring point first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>
#include <virtgpu_drm.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"

#define VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM 2
#define PIPE_TEXTURE_2D 2
#define VIRGL_BIND_RENDER_TARGET (1u << 1)
#define VIRGL_BIND_SAMPLER_VIEW (1u << 3)

struct virtio_state {
    bool virgl;                          /* the host runs 3D commands */
};

/* The kernel's 64-byte execbuffer (Linux 6.4+). */
struct kdrm_virtgpu_execbuffer {
    UINT32 flags;
    UINT32 size;
    UINT64 command;                      /* a pointer to the stream */
    UINT64 bo_handles;
    UINT32 num_bo_handles;
    INT fence_fd;
    UINT32 ring_idx;
    UINT32 syncobj_stride;               /* sizeof(struct kdrm_sync_point) */
    UINT32 num_in_syncobjs;
    UINT32 num_out_syncobjs;
    UINT64 in_syncobjs;
    UINT64 out_syncobjs;
};
_Static_assert(sizeof(struct kdrm_virtgpu_execbuffer) == 64, "the kernel's layout");
_Static_assert(sizeof(struct kdrm_sync_point) == 16, "drm_virtgpu_execbuffer_syncobj");
#define KDRM_IOCTL_VIRTGPU_EXECBUFFER \
    DRM_IOWR(DRM_COMMAND_BASE + DRM_VIRTGPU_EXECBUFFER, struct kdrm_virtgpu_execbuffer)

static struct virtio_state *state(struct kdrm_adapter *a)
{
    return a->family_data;
}

static int virtio_start(struct kdrm_adapter *a)
{
    struct virtio_state *s = calloc(1, sizeof(*s));
    int value = 0;
    struct drm_virtgpu_getparam gp = { .param = VIRTGPU_PARAM_3D_FEATURES, .value = (uintptr_t)&value };

    if (!s)
        return -ENOMEM;
    /* no answer: treat the host as 2D, which only costs the read-back */
    if (!kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_GETPARAM, &gp, "VIRTGPU_GETPARAM"))
        s->virgl = value != 0;
    a->family_data = s;
    if (s->virgl && (a->caps & KMT_DRM_CAP_FENCES))
        a->caps |= KMT_DRM_CAP_SUBMIT;
    return 0;
}

static void virtio_stop(struct kdrm_adapter *a)
{
    free(a->family_data);
    a->family_data = NULL;
}

static int virtio_create(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct drm_virtgpu_resource_create args = {
        .target = PIPE_TEXTURE_2D,
        .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
        .bind = VIRGL_BIND_RENDER_TARGET | VIRGL_BIND_SAMPLER_VIEW,
        .width = a->page_size / 4,
        .height = (UINT32)(bo->size / a->page_size),
        .depth = 1,
        .array_size = 1,
        .size = (UINT32)bo->size,
        .stride = a->page_size,
    };
    int err;

    if (bo->size > UINT32_MAX)
        return -EFBIG;
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, &args, "VIRTGPU_RESOURCE_CREATE")) < 0)
        return err;
    /* The reply carries no size: the kernel made exactly bo->size (a page
     * multiple), which VIRTGPU_RESOURCE_INFO would confirm. */
    bo->handle = args.bo_handle;
    bo->resource_id = args.res_handle;
    bo->width = args.width;
    bo->height = args.height;
    return 0;
}

/* An imported buffer: its host resource (transfers name it) and the
 * layout create gives a resource of its size. */
static int virtio_import(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct drm_virtgpu_resource_info info = { .bo_handle = bo->handle };
    int err;

    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_RESOURCE_INFO, &info, "VIRTGPU_RESOURCE_INFO")) < 0)
        return err;
    if (info.size < bo->size)
        return -EINVAL;
    bo->resource_id = info.res_handle;
    bo->width = a->page_size / 4;
    bo->height = (UINT32)(bo->size / a->page_size);
    return 0;
}

static int virtio_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    if (!bo->has_offset) {
        struct drm_virtgpu_map args = { .handle = bo->handle };
        int err = kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_MAP, &args, "VIRTGPU_MAP");

        if (err < 0)
            return err;
        bo->mmap_offset = args.offset;
        bo->has_offset = true;
    }
    return kdrm_map_offset(a, bo, prot, ptr);
}

static struct drm_virtgpu_3d_box whole(const struct kdrm_bo *bo)
{
    struct drm_virtgpu_3d_box box = { .w = bo->width, .h = bo->height, .d = 1 };
    return box;
}

static int virtio_wait(struct kdrm_adapter *a, struct kdrm_bo *bo, bool nowait)
{
    struct drm_virtgpu_3d_wait w = { .handle = bo->handle, .flags = nowait ? VIRTGPU_WAIT_NOWAIT : 0 };

    return kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_WAIT, &w, "VIRTGPU_WAIT");
}

/* DonotWait is about work queued before the lock: it is checked before our
 * own read-back is queued, and that read-back is then always waited for. */
static int virtio_cpu_begin(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags)
{
    bool fetch = state(a)->virgl && !flags.Discard && !flags.WriteOnly;
    struct drm_virtgpu_3d_transfer_from_host t = { .bo_handle = bo->handle, .box = whole(bo) };
    int err;

    if (!flags.IgnoreSync && (err = virtio_wait(a, bo, flags.DonotWait)) < 0)
        return err;
    if (!fetch)
        return 0;
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_TRANSFER_FROM_HOST, &t, "VIRTGPU_TRANSFER_FROM_HOST")) < 0)
        return err;
    return virtio_wait(a, bo, false);
}

static void virtio_cpu_end(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags)
{
    struct drm_virtgpu_3d_transfer_to_host t = { .bo_handle = bo->handle, .box = whole(bo) };
    int err = kdrm_ioctl(a->fd, DRM_IOCTL_VIRTGPU_TRANSFER_TO_HOST, &t, "VIRTGPU_TRANSFER_TO_HOST");

    /* Unlock cannot fail; the host copy stays stale until the next unlock. */
    if (err < 0)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "TRANSFER_TO_HOST(resource %u) failed: %s\n",
                   bo->resource_id, strerror(-err));
}

static int virtio_ctx_create(struct kdrm_adapter *a, struct kdrm_context *c)
{
    c->kernel_ctx = 0;                   /* the fd's own context */
    return state(a)->virgl ? 0 : -EOPNOTSUPP;
}

static void virtio_ctx_destroy(struct kdrm_adapter *a, struct kdrm_context *c)
{
}

static int virtio_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job)
{
    struct kdrm_virtgpu_execbuffer args = {
        .size = job->size,
        .command = (uintptr_t)job->cmds,
        .bo_handles = (uintptr_t)job->bos,
        .num_bo_handles = job->nbos,
        .fence_fd = -1,
        .syncobj_stride = sizeof(struct kdrm_sync_point),
        .num_in_syncobjs = job->nwaits,
        .num_out_syncobjs = job->nsignals,
        .in_syncobjs = (uintptr_t)job->waits,
        .out_syncobjs = (uintptr_t)job->signals,
    };

    return kdrm_ioctl(a->fd, KDRM_IOCTL_VIRTGPU_EXECBUFFER, &args, "VIRTGPU_EXECBUFFER");
}

const struct kdrm_family kdrm_family_virtio_gpu = {
    .name = "virtio_gpu",
    .start = virtio_start,
    .stop = virtio_stop,
    .create = virtio_create,
    .import = virtio_import,
    .destroy = kdrm_gem_destroy,
    .map = virtio_map,
    .unmap = kdrm_unmap_plain,
    .cpu_begin = virtio_cpu_begin,
    .cpu_end = virtio_cpu_end,
    .ctx_create = virtio_ctx_create,
    .ctx_destroy = virtio_ctx_destroy,
    .submit = virtio_submit,
};
