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
 * GPU, so one device, kept the same way; fake_amdgpu_new_process() makes
 * the next initialize start a device of its own, as in another process
 * (both live on; the fake's VM is one for all of them).
 *
 * Objects: one record per GEM handle of the device's file, reference
 * counted.  amdgpu_bo_import of a dma-buf fd (PRIME_FD_TO_HANDLE on the
 * device's file) gives the record the handle already has, one reference
 * more, else a new one; amdgpu_bo_free closes the handle with the last.
 *
 * GPU VA (fake_amdgpu.h): amdgpu_va_range_alloc hands out first-fit ranges
 * of the low half of the VM; amdgpu_bo_va_op(_raw) maps them with the
 * kernel's rules (amdgpu_gem_va_ioctl, amdgpu_vm_bo_map): page-aligned
 * address, offset and size, within the object and the VM, never over
 * another mapping, known flags; an unmap names a mapping of that object.
 * Closing an object drops its mappings, as GEM close does.
 *
 * Submission: DRM_IOCTL_AMDGPU_CS (fake_drm.c hands it here) with the
 * rules of amdgpu_cs.c: a context of the caller's file, known chunk ids,
 * an IB, objects and syncobjs of the caller's file, a wait point that
 * already signalled (no WAIT_FOR_SUBMIT here).  The "GPU" then runs the IB
 * at once as PM4: type-3 NOP (PKT3_NOP_PAD, count 0x3fff, is its header
 * alone) and WRITE_DATA to memory, through the VA
 * mappings into the objects' bytes (a userptr object's are the caller's
 * pages).  An IB or a write outside every mapping, or in an object the BO
 * list lacks, is a VM fault: recorded, the rest of the IB skipped, and the
 * signal points signalled all the same: amdgpu's fence signals after a
 * fault (with an error a timeline point does not carry).
 *
 * Every function takes the fake's lock (fake_drm_lock): the miniport calls
 * them from several threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>
#include <amdgpu.h>
#include <amdgpu_drm.h>

#include "fake_drm.h"
#include "fake_amdgpu.h"
#define KDRM_AMDGPU_LIB_IMPL
#include "miniports/drm/drm_amdgpu_lib.h"

struct fake_amdgpu fake_amdgpu;

struct amdgpu_device {
    int fd;
    unsigned refs;
    struct amdgpu_device *next;         /* live devices */
};

struct amdgpu_bo {
    struct amdgpu_device *dev;
    unsigned file;                      /* the device's file, where its handle lives */
    uint32_t handle;
    unsigned refs;
    struct amdgpu_bo *next;             /* live records */
};

static struct amdgpu_device *the_device;     /* what initialize gives this "process" */
static struct amdgpu_device *devices;
static struct amdgpu_bo *bos;

static bool device_live(const struct amdgpu_device *dev)
{
    for (const struct amdgpu_device *d = devices; d; d = d->next)
        if (d == dev)
            return true;
    return false;
}

void fake_amdgpu_new_process(void)
{
    fake_drm_lock();
    the_device = NULL;
    fake_drm_unlock();
}

#define MAX_RANGES 256
#define MAX_MAPPINGS 256
#define PAGE 4096ull

struct amdgpu_va {
    uint64_t start, size;
    bool live;
};

static struct amdgpu_va ranges[MAX_RANGES];
static struct {
    bool live;
    uint32_t handle;
    uint64_t va, size, offset;
    uint32_t flags;
} maps[MAX_MAPPINGS];

/* A new device's books; what outlives a device (fake_amdgpu.h) and the
 * rules it broke are kept. */
static void books_reset(void)
{
    struct fake_amdgpu kept = { .total_submissions = fake_amdgpu.total_submissions,
                                .left_at_deinit = fake_amdgpu.left_at_deinit,
                                .range_freed_mapped = fake_amdgpu.range_freed_mapped,
                                .bo_freed_mapped = fake_amdgpu.bo_freed_mapped };

    fake_amdgpu = kept;
    memset(ranges, 0, sizeof(ranges));
    memset(maps, 0, sizeof(maps));
}

static int drop_mappings_of(uint32_t handle);

static int locked_amdgpu_device_initialize(int fd, uint32_t *major, uint32_t *minor, amdgpu_device_handle *out)
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
    if (!devices)
        books_reset();
    dev->next = devices;
    *out = the_device = devices = dev;
    return 0;
}

static int locked_amdgpu_device_deinitialize(amdgpu_device_handle dev)
{
    struct amdgpu_device **d = &devices;

    if (!dev || !device_live(dev) || !dev->refs)
        return -EINVAL;
    if (--dev->refs)
        return 0;
    while (*d != dev)
        d = &(*d)->next;
    *d = dev->next;
    if (!devices)
        fake_amdgpu.left_at_deinit += fake_amdgpu.va_ranges + fake_amdgpu.mappings;
    fake_drm_close_fd(dev->fd);
    free(dev);
    if (the_device == dev)
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
    bo->refs = 1;
    bo->next = bos;
    bos = bo;
    *o = fake_drm_object(bo->handle);
    *out = bo;
    return 0;
}

static int locked_amdgpu_bo_alloc(amdgpu_device_handle dev, struct amdgpu_bo_alloc_request *req, amdgpu_bo_handle *out)
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
static int locked_amdgpu_create_bo_from_user_mem(amdgpu_device_handle dev, void *cpu, uint64_t size, amdgpu_bo_handle *out)
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

static int locked_amdgpu_bo_export(amdgpu_bo_handle bo, enum amdgpu_bo_handle_type type, uint32_t *handle)
{
    if (type != amdgpu_bo_handle_type_kms && type != amdgpu_bo_handle_type_kms_noimport)
        return -EINVAL;                  /* flink and dma-buf are not faked */
    *handle = bo->handle;
    return 0;
}

/* The last reference closes the handle.  GEM close drops the object's
 * mappings (amdgpu_gem_object_close); the family unmaps first, which the
 * books check. */
int amdgpu_bo_free(amdgpu_bo_handle bo)
{
    struct amdgpu_bo **b = &bos;
    int err;

    if (!bo)
        return -EINVAL;
    fake_drm_lock();
    if (--bo->refs) {
        fake_drm_unlock();
        return 0;
    }
    while (*b != bo)
        b = &(*b)->next;
    *b = bo->next;
    if (drop_mappings_of(bo->handle))
        fake_amdgpu.bo_freed_mapped++;
    err = fake_drm_close_object(bo->file, bo->handle);
    fake_drm_unlock();
    free(bo);
    return err;
}

/* libdrm's dma-buf import: PRIME_FD_TO_HANDLE on the device's file, then
 * the record of that handle, or a new one (the other types are not faked). */
int amdgpu_bo_import(amdgpu_device_handle dev, enum amdgpu_bo_handle_type type, uint32_t shared_handle,
                     struct amdgpu_bo_import_result *out)
{
    struct drm_prime_handle args = { .fd = (int)shared_handle };
    struct amdgpu_bo *bo;
    unsigned file;

    if (type != amdgpu_bo_handle_type_dma_buf_fd)
        return -EINVAL;
    if (drmIoctl(dev->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
        return -errno;
    fake_drm_lock();
    file = fake_drm_file_of(dev->fd);
    for (bo = bos; bo; bo = bo->next)
        if (bo->dev == dev && bo->handle == args.handle)
            break;
    if (bo) {
        bo->refs++;
    } else if ((bo = calloc(1, sizeof(*bo)))) {
        *bo = (struct amdgpu_bo){ .dev = dev, .file = file, .handle = args.handle, .refs = 1, .next = bos };
        bos = bo;
    }
    if (bo) {
        out->buf_handle = bo;
        out->alloc_size = fake_drm_object(args.handle)->size;
    }
    fake_drm_unlock();
    if (!bo) {
        struct drm_gem_close close_args = { .handle = args.handle };

        drmIoctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &close_args);
        return -ENOMEM;
    }
    return 0;
}

static int locked_amdgpu_bo_cpu_map(amdgpu_bo_handle bo, void **cpu)
{
    struct fake_drm_object *o = fake_drm_object(bo->handle);

    if (!o || o->userptr)
        return -EINVAL;
    o->cpu_maps++;
    *cpu = fake_drm_bytes(bo->handle);
    return 0;
}

static int locked_amdgpu_bo_cpu_unmap(amdgpu_bo_handle bo)
{
    struct fake_drm_object *o = fake_drm_object(bo->handle);

    if (!o || !o->cpu_maps)
        return -EINVAL;
    o->cpu_maps--;
    return 0;
}

static int locked_amdgpu_bo_wait_for_idle(amdgpu_bo_handle bo, uint64_t timeout_ns, bool *busy)
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
    info->gpu_counter_freq = (uint32_t)(fake_drm.config.timestamp_hz / 1000);   /* kHz */
    return 0;
}

/* AMDGPU_INFO_TIMESTAMP only: the GPU's counter. */
int amdgpu_query_info(amdgpu_device_handle dev, unsigned info_id, unsigned size, void *value)
{
    uint64_t ticks;

    if (info_id != AMDGPU_INFO_TIMESTAMP || size != sizeof(ticks) || !fake_drm.config.timestamp_hz)
        return -EINVAL;
    ticks = fake_drm_gpu_ticks();
    memcpy(value, &ticks, sizeof(ticks));
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

/* ---- the library's calls, one at a time --------------------------------- */

#define LOCKED(call)                                                          \
    do {                                                                      \
        int ret_;                                                             \
        fake_drm_lock();                                                      \
        ret_ = call;                                                          \
        fake_drm_unlock();                                                    \
        return ret_;                                                          \
    } while (0)

void (*fake_amdgpu_after_initialize)(void);

int amdgpu_device_initialize(int fd, uint32_t *major, uint32_t *minor, amdgpu_device_handle *out)
{
    int ret;

    fake_drm_lock();
    ret = locked_amdgpu_device_initialize(fd, major, minor, out);
    fake_drm_unlock();
    if (!ret && fake_amdgpu_after_initialize)
        fake_amdgpu_after_initialize();
    return ret;
}

int amdgpu_device_deinitialize(amdgpu_device_handle dev)
{
    LOCKED(locked_amdgpu_device_deinitialize(dev));
}

int amdgpu_bo_alloc(amdgpu_device_handle dev, struct amdgpu_bo_alloc_request *req, amdgpu_bo_handle *out)
{
    LOCKED(locked_amdgpu_bo_alloc(dev, req, out));
}

int amdgpu_create_bo_from_user_mem(amdgpu_device_handle dev, void *cpu, uint64_t size, amdgpu_bo_handle *out)
{
    LOCKED(locked_amdgpu_create_bo_from_user_mem(dev, cpu, size, out));
}

int amdgpu_bo_export(amdgpu_bo_handle bo, enum amdgpu_bo_handle_type type, uint32_t *handle)
{
    LOCKED(locked_amdgpu_bo_export(bo, type, handle));
}

int amdgpu_bo_cpu_map(amdgpu_bo_handle bo, void **cpu)
{
    LOCKED(locked_amdgpu_bo_cpu_map(bo, cpu));
}

int amdgpu_bo_cpu_unmap(amdgpu_bo_handle bo)
{
    LOCKED(locked_amdgpu_bo_cpu_unmap(bo));
}

int amdgpu_bo_wait_for_idle(amdgpu_bo_handle bo, uint64_t timeout_ns, bool *busy)
{
    LOCKED(locked_amdgpu_bo_wait_for_idle(bo, timeout_ns, busy));
}

/* ---- GPU VA ------------------------------------------------------------- */

static bool overlaps(uint64_t a, uint64_t asize, uint64_t b, uint64_t bsize)
{
    return a < b + bsize && b < a + asize;
}

/* The live range overlapping [va, va + size), or NULL. */
static struct amdgpu_va *range_at(uint64_t va, uint64_t size)
{
    for (unsigned i = 0; i < MAX_RANGES; i++)
        if (ranges[i].live && overlaps(va, size, ranges[i].start, ranges[i].size))
            return &ranges[i];
    return NULL;
}

/* First fit from the bottom of the general range. */
static int range_alloc(uint64_t size, uint64_t alignment, uint64_t *va, amdgpu_va_handle *out)
{
    struct amdgpu_va *r = NULL, *hit;
    uint64_t at = FAKE_AMDGPU_VA_START;

    for (unsigned i = 0; i < MAX_RANGES && !r; i++)
        if (!ranges[i].live)
            r = &ranges[i];
    if (!r)
        return -ENOMEM;
    size = (size + PAGE - 1) & ~(PAGE - 1);
    for (;;) {
        at = (at + alignment - 1) & ~(alignment - 1);
        if (at + size > FAKE_AMDGPU_VA_END)
            return -ENOMEM;
        if (!(hit = range_at(at, size)))
            break;
        at = hit->start + hit->size;
    }
    *r = (struct amdgpu_va){ .start = at, .size = size, .live = true };
    fake_amdgpu.va_ranges++;
    *va = at;
    *out = r;
    return 0;
}

/* libdrm: flags choose the 32-bit or high part, which the fake lacks. */
int amdgpu_va_range_alloc(amdgpu_device_handle dev, enum amdgpu_gpu_va_range type, uint64_t size,
                          uint64_t alignment, uint64_t base_required, uint64_t *va, amdgpu_va_handle *out,
                          uint64_t flags)
{
    if (!device_live(dev) || type != amdgpu_gpu_va_range_general || !size || base_required || flags ||
        (alignment & (alignment - 1)))
        return -EINVAL;
    LOCKED(range_alloc(size, alignment < PAGE ? PAGE : alignment, va, out));
}

static int range_free(amdgpu_va_handle r)
{
    if (r < ranges || r >= ranges + MAX_RANGES || !r->live)
        return -EINVAL;
    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && overlaps(maps[i].va, maps[i].size, r->start, r->size))
            fake_amdgpu.range_freed_mapped++;
    r->live = false;
    fake_amdgpu.va_ranges--;
    return 0;
}

int amdgpu_va_range_free(amdgpu_va_handle r)
{
    LOCKED(range_free(r));
}

static int drop_mappings_of(uint32_t handle)
{
    int n = 0;

    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && maps[i].handle == handle) {
            maps[i].live = false;
            fake_amdgpu.mappings--;
            n++;
        }
    return n;
}

static int map(struct fake_drm_object *o, uint32_t handle, uint64_t offset, uint64_t size, uint64_t va,
               uint64_t flags)
{
    unsigned free_slot = MAX_MAPPINGS;

    if ((va | offset | size) & (PAGE - 1) || !size || offset + size > o->size || offset + size < offset)
        return -EINVAL;
    if (va < FAKE_AMDGPU_VA_START || va + size > FAKE_AMDGPU_VA_END || va + size < va)
        return -EINVAL;
    for (unsigned i = 0; i < MAX_MAPPINGS; i++) {
        if (maps[i].live && overlaps(va, size, maps[i].va, maps[i].size))
            return -EINVAL;                            /* amdgpu_vm_bo_map: a conflict */
        if (!maps[i].live && free_slot == MAX_MAPPINGS)
            free_slot = i;
    }
    if (free_slot == MAX_MAPPINGS)
        return -ENOMEM;
    maps[free_slot].live = true;
    maps[free_slot].handle = handle;
    maps[free_slot].va = va;
    maps[free_slot].size = size;
    maps[free_slot].offset = offset;
    maps[free_slot].flags = (uint32_t)flags;
    fake_amdgpu.mappings++;
    fake_amdgpu.last_map_flags = (uint32_t)flags;
    return 0;
}

/* amdgpu_vm_bo_unmap: ENOENT when the object has no mapping there. */
static int unmap(uint32_t handle, uint64_t va)
{
    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && maps[i].handle == handle && maps[i].va == va) {
            maps[i].live = false;
            fake_amdgpu.mappings--;
            return 0;
        }
    return -ENOENT;
}

static int va_op(amdgpu_device_handle dev, amdgpu_bo_handle bo, uint64_t offset, uint64_t size, uint64_t va,
                 uint64_t flags, uint32_t ops)
{
    const uint64_t known = AMDGPU_VM_DELAY_UPDATE | AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE |
                           AMDGPU_VM_PAGE_EXECUTABLE | AMDGPU_VM_MTYPE_MASK;
    struct fake_drm_object *o;

    if (!device_live(dev) || !bo || (flags & ~known))
        return -EINVAL;
    if (!(o = fake_drm_object(bo->handle)) || o->file != bo->file)
        return -ENOENT;
    if (ops == AMDGPU_VA_OP_MAP)
        return map(o, bo->handle, offset, size, va, flags);
    if (ops == AMDGPU_VA_OP_UNMAP)
        return unmap(bo->handle, va);
    return -EINVAL;                      /* REPLACE and CLEAR are not faked */
}

int amdgpu_bo_va_op_raw(amdgpu_device_handle dev, amdgpu_bo_handle bo, uint64_t offset, uint64_t size,
                        uint64_t va, uint64_t flags, uint32_t ops)
{
    LOCKED(va_op(dev, bo, offset, size, va, flags, ops));
}

/* libdrm's: the size page-aligned, the flags always read, write, execute. */
int amdgpu_bo_va_op(amdgpu_bo_handle bo, uint64_t offset, uint64_t size, uint64_t va, uint64_t flags, uint32_t ops)
{
    (void)flags;
    size = (size + PAGE - 1) & ~(PAGE - 1);
    return amdgpu_bo_va_op_raw(bo ? bo->dev : NULL, bo, offset, size, va,
                               AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE | AMDGPU_VM_PAGE_EXECUTABLE, ops);
}

/* ---- DRM_IOCTL_AMDGPU_CS (with the fake's lock held) --------------------- */

#define MAX_CS_CHUNKS 16
#define MAX_CS_BOS 512
#define PKT3_NOP 0x10
#define PKT3_NOP_PAD 0xffff1000u         /* PACKET3(NOP, 0x3fff): count -1, the header alone */
#define PKT3_WRITE_DATA 0x37
#define WRITE_DATA_DST_MEM 5

struct cs {
    unsigned file;
    const struct drm_amdgpu_cs_chunk_ib *ib;
    uint32_t bos[MAX_CS_BOS];
    unsigned nbos;
    const struct drm_amdgpu_cs_chunk_syncobj *waits, *signals;
    unsigned nwaits, nsignals;
};

static bool in_list(const struct cs *cs, uint32_t handle)
{
    for (unsigned i = 0; i < cs->nbos; i++)
        if (cs->bos[i] == handle)
            return true;
    return false;
}

/* The CPU address of `bytes` at GPU address `va`, through a mapping with
 * `need` flags of an object in the BO list; NULL: a VM fault. */
static uint8_t *resolve(const struct cs *cs, uint64_t va, uint64_t bytes, uint32_t need)
{
    for (unsigned i = 0; i < MAX_MAPPINGS; i++) {
        struct fake_drm_object *o;
        uint64_t off;

        if (!maps[i].live || va < maps[i].va || va - maps[i].va >= maps[i].size)
            continue;
        off = va - maps[i].va;
        if (bytes > maps[i].size - off || (maps[i].flags & need) != need || !in_list(cs, maps[i].handle) ||
            !(o = fake_drm_object(maps[i].handle)))
            return NULL;
        off += maps[i].offset;
        return o->userptr ? (uint8_t *)(uintptr_t)o->userptr + off : fake_drm_bytes(maps[i].handle) + off;
    }
    return NULL;
}

static void fault(uint64_t va)
{
    fake_amdgpu.faults++;
    fake_amdgpu.fault_address = va;
}

/* WRITE_DATA: control, address low and high, then the dwords.  A
 * destination the fake lacks (registers, GDS) stops the CP at `at`. */
static bool write_data(const struct cs *cs, const uint32_t *body, unsigned n, uint64_t at)
{
    uint64_t va;
    uint8_t *dst;

    if (n < 4 || ((body[0] >> 8) & 0xf) != WRITE_DATA_DST_MEM) {
        fault(at);
        return false;
    }
    va = body[1] | (uint64_t)body[2] << 32;
    if ((va & 3) || !(dst = resolve(cs, va, (uint64_t)(n - 3) * 4, AMDGPU_VM_PAGE_WRITEABLE))) {
        fault(va);
        return false;
    }
    memmove(dst, body + 3, (size_t)(n - 3) * 4);  /* an IB may write over its own packet */
    return true;
}

/* One type-3 packet of `count` body dwords at GPU address `at`; false when
 * the CP stops there (the fault recorded). */
static bool run_packet(const struct cs *cs, const uint32_t *p, unsigned count, uint64_t at)
{
    uint32_t op = (p[0] >> 8) & 0xff;

    if (op == PKT3_NOP)
        return true;
    if (op == PKT3_WRITE_DATA)
        return write_data(cs, p + 1, count, at);
    fault(at);
    return false;
}

/* Runs the IB's PM4 packets until its end or the first fault. */
static void run_ib(const struct cs *cs)
{
    uint64_t va = cs->ib->va_start;
    unsigned ndw = cs->ib->ib_bytes / 4, i = 0;
    const uint32_t *dw = (const uint32_t *)resolve(cs, va, cs->ib->ib_bytes, AMDGPU_VM_PAGE_EXECUTABLE);

    if (!dw) {
        fault(va);
        return;
    }
    fake_amdgpu.last_ib_va = va;
    fake_amdgpu.last_ib_bytes = cs->ib->ib_bytes;
    while (i < ndw) {
        uint32_t header = dw[i], count = ((header >> 16) & 0x3fff) + 1;

        /* type-2 filler, and the one-dword NOP the kernel pads its own IBs
         * and rings with (gfx_v9_0.c and later: funcs->nop), as Mesa does */
        if (header >> 30 == 2 || header == PKT3_NOP_PAD) {
            i++;
            continue;
        }
        if (header >> 30 != 3 || i + 1 + count > ndw) {
            fault(va + i * 4ull);
            return;
        }
        if (!run_packet(cs, dw + i, count, va + i * 4ull))
            return;
        i += 1 + count;
    }
}

static int take_ib(struct cs *cs, const struct drm_amdgpu_cs_chunk *c)
{
    const struct drm_amdgpu_cs_chunk_ib *ib = (const void *)(uintptr_t)c->chunk_data;

    if (c->length_dw * 4ull < sizeof(*ib) || cs->ib)
        return -EINVAL;                  /* one IB: more are not faked */
    /* amdgpu_ctx_get_entity: the fake has one GFX ring */
    if (ib->ip_type != AMDGPU_HW_IP_GFX || ib->ip_instance || ib->ring)
        return -EINVAL;
    cs->ib = ib;
    return 0;
}

/* amdgpu_bo_list_create: each handle must be the caller's (ENOENT). */
static int take_bos(struct cs *cs, const struct drm_amdgpu_cs_chunk *c)
{
    const struct drm_amdgpu_bo_list_in *in = (const void *)(uintptr_t)c->chunk_data;
    const struct drm_amdgpu_bo_list_entry *e;

    if (c->length_dw * 4ull < sizeof(*in) || cs->nbos || in->bo_number > MAX_CS_BOS ||
        in->bo_info_size != sizeof(*e))
        return -EINVAL;
    e = (const void *)(uintptr_t)in->bo_info_ptr;
    for (uint32_t i = 0; i < in->bo_number; i++) {
        struct fake_drm_object *o = fake_drm_object(e[i].bo_handle);

        if (!o || o->file != cs->file)
            return -ENOENT;
        cs->bos[cs->nbos++] = e[i].bo_handle;
    }
    return 0;
}

static int take_syncs(const struct drm_amdgpu_cs_chunk *c, const struct drm_amdgpu_cs_chunk_syncobj **out,
                      unsigned *n)
{
    if (*out)
        return -EINVAL;                  /* p->post_deps: one signal chunk */
    *out = (const void *)(uintptr_t)c->chunk_data;
    *n = c->length_dw * 4 / sizeof(**out);
    return 0;
}

static int take_chunk(struct cs *cs, const struct drm_amdgpu_cs_chunk *c)
{
    switch (c->chunk_id) {
    case AMDGPU_CHUNK_ID_IB: return take_ib(cs, c);
    case AMDGPU_CHUNK_ID_BO_HANDLES: return take_bos(cs, c);
    case AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT: return take_syncs(c, &cs->waits, &cs->nwaits);
    case AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL: return take_syncs(c, &cs->signals, &cs->nsignals);
    }
    return -EINVAL;                      /* unknown, or not faked */
}

/* drm_syncobj_find_fence: no syncobj is ENOENT, a point with no fence yet
 * EINVAL without WAIT_FOR_SUBMIT.  Signals: drm_syncobj_find, EINVAL. */
static int check_syncs(const struct cs *cs)
{
    uint64_t value;

    for (unsigned i = 0; i < cs->nwaits; i++) {
        if (cs->waits[i].flags || fake_drm_syncobj_value(cs->file, cs->waits[i].handle, &value) < 0)
            return cs->waits[i].flags ? -EINVAL : -ENOENT;
        if (cs->waits[i].point > value)
            return -EINVAL;
    }
    for (unsigned i = 0; i < cs->nsignals; i++)
        if (fake_drm_syncobj_value(cs->file, cs->signals[i].handle, &value) < 0)
            return -EINVAL;
    return 0;
}

static int parse(struct cs *cs, const union drm_amdgpu_cs *args)
{
    const uint64_t *chunks = (const uint64_t *)(uintptr_t)args->in.chunks;
    uint32_t ctx = args->in.ctx_id;
    int err;

    if (!ctx || ctx >= 64 || !(fake_drm.contexts & (1ull << ctx)) || fake_drm.context_file[ctx] != cs->file)
        return -EINVAL;                  /* amdgpu_cs_parser_init */
    if (!args->in.num_chunks || args->in.num_chunks > MAX_CS_CHUNKS || args->in.bo_list_handle)
        return -EINVAL;                  /* BO list objects are not faked */
    for (uint32_t i = 0; i < args->in.num_chunks; i++)
        if ((err = take_chunk(cs, (const struct drm_amdgpu_cs_chunk *)(uintptr_t)chunks[i])) < 0)
            return err;
    return cs->ib ? check_syncs(cs) : -EINVAL;     /* no gang without an IB */
}

static int amdgpu_cs(unsigned file, void *arg)
{
    union drm_amdgpu_cs *args = arg;
    struct cs cs = { .file = file };
    int err;

    if ((err = parse(&cs, args)) < 0)
        return err;
    fake_amdgpu.submissions++;
    fake_amdgpu.total_submissions++;
    fake_amdgpu.last_bo_count = cs.nbos;
    run_ib(&cs);
    for (unsigned i = 0; i < cs.nsignals; i++)
        fake_drm_syncobj_reach(cs.signals[i].handle, cs.signals[i].point);
    memset(&args->out, 0, sizeof(args->out));
    args->out.handle = fake_amdgpu.submissions;
    return 0;
}

__attribute__((constructor)) static void hand_cs_to_the_fake(void)
{
    fake_drm_amdgpu_cs = amdgpu_cs;
}

/* The miniport loads libdrm_amdgpu at run time (drm_amdgpu_lib.h): here
 * it gets these functions instead, before main. */
__attribute__((constructor)) static void provide_fake(void)
{
#define FAKE_AMDGPU_PROVIDE(f) kdrm_p_##f = f;
    KDRM_AMDGPU_FUNCS(FAKE_AMDGPU_PROVIDE)
#undef FAKE_AMDGPU_PROVIDE
    kdrm_amdgpu_lib_provided();
}
