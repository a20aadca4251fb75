/*
 * libdrm_amdgpu's functions the amdgpu family calls, answered over the fake
 * kernel's books (fake_drm.h).  Each one keeps the documented contract the
 * family relies on: heaps and flags checked as amdgpu_bo_alloc's kernel
 * ioctl checks them, a userptr needs page-aligned memory, cpu_map is
 * reference-counted per object, export hands out the GEM (KMS) handle,
 * errors are negative errnos.
 *
 * The device: libdrm_amdgpu keeps one amdgpu_device per GPU in the process.
 * The first amdgpu_device_initialize makes it on a dup of the fd it was
 * given; every later one, with any fd of the same GPU (another open of the
 * node: a UMD's, the program's), hands out that device again, reference
 * counted, and its objects live on the first fd's file.  The fake has one
 * GPU, so one device, kept the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <amdgpu.h>
#include <amdgpu_drm.h>

#include "fake_drm.h"

struct amdgpu_device {
    int fd;
    unsigned refs;
};

struct amdgpu_bo {
    struct amdgpu_device *dev;
    unsigned file;                      /* the device's file, where its handle lives */
    uint32_t handle;
};

static struct amdgpu_device *the_device;

int amdgpu_device_initialize(int fd, uint32_t *major, uint32_t *minor, amdgpu_device_handle *out)
{
    struct amdgpu_device *dev = the_device;

    if (!fake_drm_file_of(fd) || fake_drm.config.driver != FAKE_AMDGPU)
        return -EINVAL;
    *major = 3;
    *minor = 59;
    if (dev) {
        dev->refs++;
        *out = dev;
        return 0;
    }
    if (!(dev = calloc(1, sizeof(*dev))))
        return -ENOMEM;
    if ((dev->fd = fake_drm_dup(fd)) < 0) {
        free(dev);
        return -EMFILE;
    }
    dev->refs = 1;
    *out = the_device = dev;
    return 0;
}

int amdgpu_device_deinitialize(amdgpu_device_handle dev)
{
    if (!dev || dev != the_device || !dev->refs)
        return -EINVAL;
    if (--dev->refs)
        return 0;
    fake_drm_close_fd(dev->fd);
    free(dev);
    the_device = NULL;
    return 0;
}

int amdgpu_device_get_fd(amdgpu_device_handle dev)
{
    return dev->fd;
}

static int new_bo(struct amdgpu_device *dev, uint64_t size, amdgpu_bo_handle *out, struct fake_drm_object **o)
{
    struct amdgpu_bo *bo = calloc(1, sizeof(*bo));
    int err;

    if (!bo)
        return -ENOMEM;
    bo->file = fake_drm_file_of(dev->fd);
    if ((err = fake_drm_new_object(bo->file, (size + 4095) & ~4095ull, &bo->handle)) < 0) {
        free(bo);
        return err;
    }
    bo->dev = dev;
    *o = fake_drm_object(bo->handle);
    *out = bo;
    return 0;
}

int amdgpu_bo_alloc(amdgpu_device_handle dev, struct amdgpu_bo_alloc_request *req, amdgpu_bo_handle *out)
{
    const uint64_t known = AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED | AMDGPU_GEM_CREATE_NO_CPU_ACCESS |
                           AMDGPU_GEM_CREATE_CPU_GTT_USWC | AMDGPU_GEM_CREATE_VRAM_CLEARED;
    struct fake_drm_object *o;
    int err;

    if (!req->alloc_size || (req->phys_alignment & (req->phys_alignment - 1)) || (req->flags & ~known))
        return -EINVAL;
    if (req->preferred_heap != AMDGPU_GEM_DOMAIN_GTT &&
        (req->preferred_heap != AMDGPU_GEM_DOMAIN_VRAM || fake_drm.config.apu))
        return -EINVAL;                  /* the fake's parts: VRAM only on discrete ones */
    if ((err = new_bo(dev, req->alloc_size, out, &o)) < 0)
        return err;
    o->placement = req->preferred_heap;
    o->create_flags = (uint32_t)req->flags;
    return 0;
}

/* Whether the mapping holding p has a file behind it (its inode in
 * /proc/self/maps): shmem, memfd and private file mappings do. */
static bool file_backed(const void *p)
{
    unsigned long start, end, inode;
    char line[512];
    bool file = false;
    FILE *f = fopen("/proc/self/maps", "re");

    if (!f)
        return false;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &start, &end, &inode) == 3 && (uintptr_t)p >= start &&
            (uintptr_t)p < end) {
            file = inode != 0;
            break;
        }
    fclose(f);
    return file;
}

/* libdrm asks for ANONONLY | REGISTER | VALIDATE: the kernel pins the pages
 * at once and refuses memory with a file behind it with EPERM. */
int amdgpu_create_bo_from_user_mem(amdgpu_device_handle dev, void *cpu, uint64_t size, amdgpu_bo_handle *out)
{
    struct fake_drm_object *o;
    int err;

    if (((uintptr_t)cpu | size) & 4095 || !size)
        return -EINVAL;
    if (file_backed(cpu))
        return -EPERM;
    if ((err = new_bo(dev, size, out, &o)) < 0)
        return err;
    o->userptr = (uintptr_t)cpu;
    o->placement = AMDGPU_GEM_DOMAIN_CPU;
    return 0;
}

int amdgpu_bo_export(amdgpu_bo_handle bo, enum amdgpu_bo_handle_type type, uint32_t *handle)
{
    if (type != amdgpu_bo_handle_type_kms && type != amdgpu_bo_handle_type_kms_noimport)
        return -EINVAL;                  /* flink and dma-buf are not faked */
    *handle = bo->handle;
    return 0;
}

int amdgpu_bo_free(amdgpu_bo_handle bo)
{
    int err;

    if (!bo)
        return -EINVAL;
    err = fake_drm_close_object(bo->file, bo->handle);
    free(bo);
    return err;
}

int amdgpu_bo_cpu_map(amdgpu_bo_handle bo, void **cpu)
{
    struct fake_drm_object *o = fake_drm_object(bo->handle);

    if (!o || o->userptr)
        return -EINVAL;
    o->cpu_maps++;
    *cpu = fake_drm_bytes(bo->handle);
    return 0;
}

int amdgpu_bo_cpu_unmap(amdgpu_bo_handle bo)
{
    struct fake_drm_object *o = fake_drm_object(bo->handle);

    if (!o || !o->cpu_maps)
        return -EINVAL;
    o->cpu_maps--;
    return 0;
}

int amdgpu_bo_wait_for_idle(amdgpu_bo_handle bo, uint64_t timeout_ns, bool *busy)
{
    struct fake_drm_object *o = fake_drm_object(bo->handle);

    if (!o)
        return -ENOENT;
    fake_drm.last_wait_timeout = (int64_t)timeout_ns;
    if (o->busy && timeout_ns == AMDGPU_TIMEOUT_INFINITE)
        o->busy = false;                 /* an unbounded wait sees the GPU finish */
    *busy = o->busy;
    return 0;
}

int amdgpu_query_gpu_info(amdgpu_device_handle dev, struct amdgpu_gpu_info *info)
{
    memset(info, 0, sizeof(*info));
    info->ids_flags = fake_drm.config.apu ? AMDGPU_IDS_FLAGS_FUSION : 0;
    return 0;
}

int amdgpu_query_heap_info(amdgpu_device_handle dev, uint32_t heap, uint32_t flags, struct amdgpu_heap_info *info)
{
    const uint64_t gib = 1ull << 30;

    memset(info, 0, sizeof(*info));
    if (heap == AMDGPU_GEM_DOMAIN_VRAM) {
        bool visible = flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;

        info->heap_size = fake_drm.config.apu ? 512u << 20 : visible ? 256u << 20 : 8 * gib;
        info->heap_usage = visible ? 64u << 20 : 1 * gib;
    } else if (heap == AMDGPU_GEM_DOMAIN_GTT) {
        info->heap_size = 16 * gib;
        info->heap_usage = 2 * gib;
    } else {
        return -EINVAL;
    }
    info->max_allocation = info->heap_size;
    return 0;
}
