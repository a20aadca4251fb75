/*
 * DRM miniport, amdgpu family, through libdrm_amdgpu.
 *
 *   create        amdgpu_bo_alloc in GTT, or in VRAM (CPU_ACCESS_REQUIRED,
 *                 since every allocation may be locked) for
 *                 KMT_DRM_ALLOCATION_DEVICE_LOCAL; its KMS handle is the
 *                 GEM handle reported to the UMD
 *   existing sysmem  amdgpu_create_bo_from_user_mem (userptr, zero copy)
 *   map           amdgpu_bo_cpu_map (always read-write: libdrm_amdgpu maps
 *                 once per object and shares the mapping)
 *   lock waits    amdgpu_bo_wait_for_idle (timeout 0 with DonotWait)
 *   memory        amdgpu_query_heap_info for VRAM and GTT; APUs (FUSION)
 *                 are UMA
 *   contexts      AMDGPU_CTX (ALLOC_CTX / FREE_CTX, normal priority), one per
 *                 D3D context (its id goes to the UMD); submission through
 *                 kmtshim (CS with an IB at a GPU VA and timeline syncobj
 *                 chunks) is not written yet: it faults with
 *                 STATUS_NOT_SUPPORTED
 * The device's file: libdrm_amdgpu keeps one amdgpu_device per GPU in the
 * process, on a dup of the fd its first amdgpu_device_initialize was given.
 * A later initialize with any fd of the same GPU gets that device again,
 * and its objects live on that first file: where a UMD or the program
 * itself opened the GPU through libdrm_amdgpu before the adapter started
 * (or an adapter started again while such a user kept the old device),
 * the adapter's own open of the node is another file, whose GEM handle,
 * context and syncobj namespace the buffers are not in.  So the adapter
 * works on the device's fd (amdgpu_device_get_fd, valid until the
 * deinitialize) from start to stop: GEM handles, contexts, syncobjs, the
 * fd the UMD is told and the fdinfo usage are all one file.  When the
 * device is fresh, its fd is a dup of the adapter's: the same file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <xf86drm.h>
#include <amdgpu.h>
#include <amdgpu_drm.h>

#include "drm_miniport.h"

static amdgpu_device_handle dev_of(struct kdrm_adapter *a)
{
    return a->family_data;
}

/* The fd the adapter opened itself (the render node here). */
static int node_fd(const struct kdrm_adapter *a)
{
    return a->card_fd >= 0 ? a->card_fd : a->render_fd;
}

/* Whether two fds are one open file (kcmp: 0 when they are; true too when
 * it cannot tell: the answer only chooses what the trace says). */
static bool same_file(int fd1, int fd2)
{
#ifdef SYS_kcmp
    pid_t me = getpid();

    return syscall(SYS_kcmp, me, me, KCMP_FILE, fd1, fd2) <= 0;
#else
    return true;
#endif
}

static int amd_start(struct kdrm_adapter *a)
{
    amdgpu_device_handle dev;
    uint32_t major, minor;
    int err = kdrm_fault_check("amdgpu_device_initialize"), fd;

    if (err || (err = amdgpu_device_initialize(a->fd, &major, &minor, &dev)))
        return err < 0 ? err : -err;
    if ((fd = amdgpu_device_get_fd(dev)) < 0) {
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "libdrm_amdgpu's device has no fd (%d)\n", fd);
        amdgpu_device_deinitialize(dev);
        return -ENODEV;
    }
    if (!same_file(fd, a->fd))
        kdrm_trace(a, KMT_TRACE_TRACE, __func__,
                   "libdrm_amdgpu already had this GPU open on another file: buffers, contexts and "
                   "syncobjs go on its fd %d, not on the adapter's fd %d\n", fd, a->fd);
    a->family_data = dev;
    a->fd = fd;
    return 0;
}

/* The device's fd may close with it: the adapter's own fd comes back first. */
static void amd_stop(struct kdrm_adapter *a)
{
    a->fd = node_fd(a);
    amdgpu_device_deinitialize(dev_of(a));
    a->family_data = NULL;
}

static int adopt(struct kdrm_bo *bo, amdgpu_bo_handle h)
{
    uint32_t handle;
    int err = kdrm_fault_check("amdgpu_bo_export");

    if (err || (err = amdgpu_bo_export(h, amdgpu_bo_handle_type_kms, &handle))) {
        amdgpu_bo_free(h);
        return err < 0 ? err : -EIO;
    }
    bo->family_bo = h;
    bo->handle = handle;
    return 0;
}

static int amd_create(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    bool vram = a->memory.discrete && (bo->flags & KMT_DRM_ALLOCATION_DEVICE_LOCAL);
    struct amdgpu_bo_alloc_request req = {
        .alloc_size = bo->size,
        .phys_alignment = a->page_size,
        .preferred_heap = vram ? AMDGPU_GEM_DOMAIN_VRAM : AMDGPU_GEM_DOMAIN_GTT,
        .flags = vram ? AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED
                      : (bo->flags & KMT_DRM_ALLOCATION_WRITECOMBINE) ? AMDGPU_GEM_CREATE_CPU_GTT_USWC : 0,
    };
    amdgpu_bo_handle h;
    int err = kdrm_fault_check("amdgpu_bo_alloc");

    if (err || (err = amdgpu_bo_alloc(dev_of(a), &req, &h)))
        return err;
    return adopt(bo, h);
}

static int amd_create_userptr(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem)
{
    amdgpu_bo_handle h;
    int err = kdrm_fault_check("amdgpu_create_bo_from_user_mem");

    if (err || (err = amdgpu_create_bo_from_user_mem(dev_of(a), mem, bo->size, &h)))
        return err;
    if ((err = adopt(bo, h)) < 0)
        return err;
    bo->backing = KMT_DRM_BACKING_USERPTR;
    return 0;
}

static void amd_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    int err = amdgpu_bo_free(bo->family_bo);

    if (err)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "amdgpu_bo_free(%u) failed: %d\n", bo->handle, err);
}

static int amd_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    int err = kdrm_fault_check("amdgpu_bo_cpu_map");

    if (err || (err = amdgpu_bo_cpu_map(bo->family_bo, ptr)))
        return err;
    return 0;
}

static void amd_unmap(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr)
{
    amdgpu_bo_cpu_unmap(bo->family_bo);
}

static int amd_cpu_begin(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags)
{
    bool busy = false;
    int err;

    if (flags.IgnoreSync)
        return 0;
    if ((err = kdrm_fault_check("amdgpu_bo_wait_for_idle")) ||
        (err = amdgpu_bo_wait_for_idle(bo->family_bo, flags.DonotWait ? 0 : AMDGPU_TIMEOUT_INFINITE, &busy)))
        return err;
    return busy ? -EBUSY : 0;
}

static UINT64 heap_free(const struct amdgpu_heap_info *h)
{
    return h->heap_usage < h->heap_size ? h->heap_size - h->heap_usage : 0;
}

static int amd_memory(struct kdrm_adapter *a, struct kdrm_memory *m)
{
    struct amdgpu_heap_info vram, visible, gtt;
    struct amdgpu_gpu_info info;
    int err;

    if ((err = amdgpu_query_gpu_info(dev_of(a), &info)) ||
        (err = amdgpu_query_heap_info(dev_of(a), AMDGPU_GEM_DOMAIN_VRAM, 0, &vram)) ||
        (err = amdgpu_query_heap_info(dev_of(a), AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
                                      &visible)) ||
        (err = amdgpu_query_heap_info(dev_of(a), AMDGPU_GEM_DOMAIN_GTT, 0, &gtt)))
        return err < 0 ? err : -EIO;
    memset(m, 0, sizeof(*m));
    if (info.ids_flags & AMDGPU_IDS_FLAGS_FUSION) {
        m->local_size = kdrm_system_share();       /* APU: UMA */
        m->local_free = heap_free(&gtt);
        return 0;
    }
    m->discrete = true;
    m->local_size = vram.heap_size;
    m->local_free = heap_free(&vram);
    m->local_visible = visible.heap_size;
    m->nonlocal_size = gtt.heap_size;
    m->nonlocal_free = heap_free(&gtt);
    return 0;
}

static int amd_ctx_create(struct kdrm_adapter *a, struct kdrm_context *c)
{
    union drm_amdgpu_ctx args;
    int err;

    memset(&args, 0, sizeof(args));
    args.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
    args.in.priority = AMDGPU_CTX_PRIORITY_NORMAL;
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_AMDGPU_CTX, &args, "AMDGPU_CTX")) < 0)
        return err;
    c->kernel_ctx = args.out.alloc.ctx_id;
    return 0;
}

static void amd_ctx_destroy(struct kdrm_adapter *a, struct kdrm_context *c)
{
    union drm_amdgpu_ctx args;

    memset(&args, 0, sizeof(args));
    args.in.op = AMDGPU_CTX_OP_FREE_CTX;
    args.in.ctx_id = c->kernel_ctx;
    if (drmIoctl(a->fd, DRM_IOCTL_AMDGPU_CTX, &args))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "AMDGPU_CTX free(%u) failed\n", c->kernel_ctx);
}

const struct kdrm_family kdrm_family_amdgpu = {
    .name = "amdgpu",
    .has_userptr = true,
    .start = amd_start,
    .stop = amd_stop,
    .create = amd_create,
    .create_userptr = amd_create_userptr,
    .destroy = amd_destroy,
    .map = amd_map,
    .unmap = amd_unmap,
    .cpu_begin = amd_cpu_begin,
    .memory = amd_memory,
    .ctx_create = amd_ctx_create,
    .ctx_destroy = amd_ctx_destroy,
};
