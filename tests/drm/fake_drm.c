/*
 * The fake DRM kernel of fake_drm.h.  The rules each handler enforces are
 * the kernel's, from the uAPI headers' documentation (i915_drm.h, xe_drm.h):
 * they are what makes a wrong argument from the miniport fail here the way
 * it would fail on the hardware.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <i915_drm.h>
#include <amdgpu_drm.h>

#include "fake_drm.h"

struct fake_drm fake_drm = { .fd = -1 };
static uint8_t *memory;                 /* the whole memfd, the "kernel's" view */
/* Handles and dma-bufs naming each window (an object's own handle, the
 * handles PRIME gave other files, its dma-buf): it is reused only at 0. */
static unsigned memory_refs[FAKE_DRM_MAX_OBJECTS + 1];

/* The fds the fake answers on, and the open file behind each. */
#define MAX_FDS 16
static struct {
    int fd;
    unsigned file;                      /* 0: slot free */
    bool adopted;                       /* the program's own fd (fake_drm_device_path): never closed here */
} fds[MAX_FDS];
static unsigned files_opened;
static unsigned caller;                 /* the file of the ioctl being answered */
static void timelines_reset(void);
static void vmas_reset(void);
static void vmas_close(unsigned file, uint32_t handle);
static void vmas_drop_context(uint32_t ctx);
static void shared_files_reset(void);
/* Ioctls from several threads (the chaos test) are answered one at a time. */
static pthread_mutex_t answering = PTHREAD_MUTEX_INITIALIZER;

#define MEMFD_SIZE ((size_t)(FAKE_DRM_MAX_OBJECTS + 1) * FAKE_DRM_WINDOW)
#define GIB (1ull << 30)

/* ---- xe uAPI (Linux 6.8+ include/uapi/drm/xe_drm.h), declared here on purpose:
 * the fake must not share the miniport's declarations it is checking ---- */
struct fake_xe_device_query { uint64_t extensions; uint32_t query, size; uint64_t data, reserved[2]; };
struct fake_xe_mem_region {
    uint16_t mem_class, instance;
    uint32_t min_page_size;
    uint64_t total_size, used, cpu_visible_size, cpu_visible_used, reserved[6];
};
struct fake_xe_gem_create {
    uint64_t extensions, size;
    uint32_t placement, flags, vm_id, handle;
    uint16_t cpu_caching, pad[3];
    uint64_t reserved[2];
};
struct fake_xe_gem_mmap_offset { uint64_t extensions; uint32_t handle, flags; uint64_t offset, reserved[2]; };

#define FAKE_XE_DEVICE_QUERY DRM_IOWR(DRM_COMMAND_BASE + 0x00, struct fake_xe_device_query)
#define FAKE_XE_GEM_CREATE DRM_IOWR(DRM_COMMAND_BASE + 0x01, struct fake_xe_gem_create)
#define FAKE_XE_GEM_MMAP_OFFSET DRM_IOWR(DRM_COMMAND_BASE + 0x02, struct fake_xe_gem_mmap_offset)
#define FAKE_XE_QUERY_MEM_REGIONS 1
#define FAKE_XE_FLAG_DEFER_BACKING 1u
#define FAKE_XE_FLAG_SCANOUT 2u
#define FAKE_XE_FLAG_NEEDS_VISIBLE_VRAM 4u
#define FAKE_XE_CACHING_WB 1
#define FAKE_XE_CACHING_WC 2
#define FAKE_XE_SYSTEM_MASK 1u               /* instance 0 */
#define FAKE_XE_VRAM_MASK 2u                 /* instance 1 */

/* i915 placement bits in fake_drm_object.placement */
#define FAKE_I915_SYSTEM 1u
#define FAKE_I915_LOCAL 2u

static int remember_fd(int fd, unsigned file)
{
    for (unsigned i = 0; fd >= 0 && i < MAX_FDS; i++)
        if (!fds[i].file) {
            fds[i].fd = fd;
            fds[i].file = file;
            return fd;
        }
    if (fd >= 0)
        close(fd);
    return -1;
}

unsigned fake_drm_file_of(int fd)
{
    for (unsigned i = 0; fd >= 0 && i < MAX_FDS; i++)
        if (fds[i].file && fds[i].fd == fd)
            return fds[i].file;
    return 0;
}

int fake_drm_open(const struct fake_drm_config *config)
{
    fake_drm_close();
    memset(&fake_drm, 0, sizeof(fake_drm));
    memset(memory_refs, 0, sizeof(memory_refs));
    shared_files_reset();
    timelines_reset();
    vmas_reset();
    fake_drm.config = *config;
    if (!fake_drm.config.vram_min_page)
        fake_drm.config.vram_min_page = 65536;
    fake_drm.fd = remember_fd(memfd_create("fake-drm", MFD_CLOEXEC), ++files_opened);
    if (fake_drm.fd < 0 || ftruncate(fake_drm.fd, (off_t)MEMFD_SIZE))
        return -1;
    memory = mmap(NULL, MEMFD_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fake_drm.fd, 0);
    return memory == MAP_FAILED ? -1 : fake_drm.fd;
}

/* A second open(2) of the memfd: a new file on the same pages, so a
 * mapping through either reaches the same bytes. */
int fake_drm_open_file(void)
{
    char path[64];

    for (unsigned i = 0; i < MAX_FDS; i++)
        if (fds[i].file) {
            snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i].fd);
            return remember_fd(open(path, O_RDWR | O_CLOEXEC), ++files_opened);
        }
    return -1;
}

int fake_drm_dup(int fd)
{
    unsigned file = fake_drm_file_of(fd);

    return file ? remember_fd(fcntl(fd, F_DUPFD_CLOEXEC, 0), file) : -1;
}

void fake_drm_close_fd(int fd)
{
    for (unsigned i = 0; fd >= 0 && i < MAX_FDS; i++)
        if (fds[i].file && fds[i].fd == fd) {
            fds[i].file = 0;
            close(fd);
        }
    if (fd == fake_drm.fd)
        fake_drm.fd = -1;
}

void fake_drm_close(void)
{
    shared_files_reset();
    timelines_reset();
    vmas_reset();
    if (memory && memory != MAP_FAILED)
        munmap(memory, MEMFD_SIZE);
    memory = NULL;
    for (unsigned i = 0; i < MAX_FDS; i++)
        if (fds[i].file) {
            fds[i].file = 0;
            if (!fds[i].adopted)
                close(fds[i].fd);
            fds[i].adopted = false;
        }
    fake_drm.fd = -1;
}

int fake_drm_device_path(char *path, size_t size)
{
    return snprintf(path, size, "/proc/%d/fd/%d", (int)getpid(), fake_drm.fd) < (int)size ? 0 : -1;
}

static bool same_file(int fd, const struct stat *device)
{
    struct stat st;

    return !fstat(fd, &st) && st.st_dev == device->st_dev && st.st_ino == device->st_ino;
}

/* The file an ioctl's fd is: one of the fake's own, or one the program
 * opened by fake_drm_device_path (a new open file of the device, taken
 * on at its first ioctl and let go when its number names something else). */
static unsigned file_of_caller(int fd)
{
    struct stat device;
    unsigned i;

    if (fake_drm.fd < 0 || fstat(fake_drm.fd, &device))
        return fake_drm_file_of(fd);
    for (i = 0; i < MAX_FDS; i++)
        if (fds[i].file && fds[i].fd == fd) {
            if (!fds[i].adopted || same_file(fd, &device))
                return fds[i].file;
            fds[i].file = 0;             /* closed, and the number reused */
            fds[i].adopted = false;
        }
    if (fd < 0 || !same_file(fd, &device))
        return 0;
    for (i = 0; i < MAX_FDS; i++)
        if (!fds[i].file) {
            fds[i].fd = fd;
            fds[i].file = ++files_opened;
            fds[i].adopted = true;
            return fds[i].file;
        }
    return 0;
}

/* An object's window of the memfd (the one whose bytes it has, its
 * exporter's for a PRIME import): its fake mmap offset. */
static uint64_t window_of(uint32_t handle)
{
    uint32_t m = handle <= FAKE_DRM_MAX_OBJECTS && fake_drm.objects[handle].memory ? fake_drm.objects[handle].memory
                                                                                   : handle;
    return (uint64_t)m * FAKE_DRM_WINDOW;
}

uint8_t *fake_drm_bytes(uint32_t handle)
{
    return memory + window_of(handle);
}

void fake_drm_fail(unsigned long request, unsigned nth, int err)
{
    fake_drm.fail_nr = (unsigned)request;
    fake_drm.fail_nth = nth;
    fake_drm.fail_errno = (unsigned)err;
}

struct fake_drm_object *fake_drm_object(uint32_t handle)
{
    if (!handle || handle > FAKE_DRM_MAX_OBJECTS || !fake_drm.objects[handle].live)
        return NULL;
    return &fake_drm.objects[handle];
}

/* A new object, zero-filled as the kernel hands them out. */
int fake_drm_new_object(unsigned file, uint64_t size, uint32_t *handle)
{
    if (size > FAKE_DRM_WINDOW)
        return -ENOSPC;                  /* the fake's limit, not the kernel's */
    for (uint32_t h = 1; h <= FAKE_DRM_MAX_OBJECTS; h++) {
        if (fake_drm.objects[h].live || memory_refs[h])
            continue;
        memset(&fake_drm.objects[h], 0, sizeof(fake_drm.objects[h]));
        fake_drm.objects[h].live = true;
        fake_drm.objects[h].file = file;
        fake_drm.objects[h].size = size;
        fake_drm.objects[h].memory = h;
        memory_refs[h] = 1;
        /* zeroed by dropping its pages: cheaper than writing 4 MiB (under TSan above all) */
        if (fallocate(fake_drm.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)window_of(h), FAKE_DRM_WINDOW))
            memset(fake_drm_bytes(h), 0, FAKE_DRM_WINDOW);
        fake_drm.live_objects++;
        *handle = h;
        return 0;
    }
    return -ENOSPC;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

/* The caller's own object behind a handle: another file's is not found. */
static struct fake_drm_object *owned(unsigned file, uint32_t handle)
{
    struct fake_drm_object *o = fake_drm_object(handle);

    return o && o->file == file ? o : NULL;
}

int fake_drm_close_object(unsigned file, uint32_t handle)
{
    struct fake_drm_object *o = owned(file, handle);

    if (!o)
        return -EINVAL;
    o->live = false;
    fake_drm.live_objects--;
    memory_refs[o->memory]--;
    return 0;
}

int (*fake_drm_xe_exec)(unsigned file, unsigned long request, void *args);

static int gem_close(struct drm_gem_close *args)
{
    if (fake_drm.config.driver == FAKE_XE && fake_drm_xe_exec && !args->pad && owned(caller, args->handle))
        fake_drm_xe_exec(caller, DRM_IOCTL_GEM_CLOSE, args);     /* fake_xe_exec.c's books */
    if (fake_drm.config.driver == FAKE_I915 && !args->pad && owned(caller, args->handle))
        vmas_close(caller, args->handle);
    return args->pad ? -EINVAL : fake_drm_close_object(caller, args->handle);
}

static int context_new(uint32_t *id)
{
    for (uint32_t i = 1; i < 64; i++)
        if (!(fake_drm.contexts & (1ull << i))) {
            fake_drm.contexts |= 1ull << i;
            fake_drm.context_file[i] = caller;
            fake_drm.live_contexts++;
            *id = i;
            return 0;
        }
    return -ENOSPC;
}

static int context_free(uint32_t id)
{
    if (!id || id >= 64 || !(fake_drm.contexts & (1ull << id)) || fake_drm.context_file[id] != caller)
        return -ENOENT;
    fake_drm.contexts &= ~(1ull << id);
    fake_drm.live_contexts--;
    return 0;
}

/* ---- i915 --------------------------------------------------------------- */

/* A gen12 part by default: softpin, a full PPGTT per context
 * (HAS_ALIASING_PPGTT answers INTEL_PPGTT: 2 full, 1 aliasing) and timeline
 * fences where syncobjs have timelines; config.no_softpin is an old kernel. */
static int i915_getparam(struct drm_i915_getparam *gp)
{
    bool modern = !fake_drm.config.no_softpin;

    switch (gp->param) {
    case I915_PARAM_HAS_LLC: *gp->value = fake_drm.config.has_llc; return 0;
    case I915_PARAM_HAS_EXEC_SOFTPIN: *gp->value = modern; return 0;
    case I915_PARAM_HAS_ALIASING_PPGTT: *gp->value = modern ? 2 : 1; return 0;
    case I915_PARAM_HAS_EXEC_TIMELINE_FENCES: *gp->value = modern && fake_drm.config.timelines; return 0;
    case I915_PARAM_CS_TIMESTAMP_FREQUENCY:
        if (!fake_drm.config.timestamp_hz)
            break;
        *gp->value = (int)fake_drm.config.timestamp_hz;
        return 0;
    }
    return -EINVAL;
}

uint64_t fake_drm_gpu_ticks(void)
{
    unsigned bits = fake_drm.config.timestamp_bits;
    struct timespec ts;
    uint64_t ticks;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    /* floor(ns * hz / 1e9) by whole seconds and the rest: no 128-bit product */
    ticks = (uint64_t)ts.tv_sec * fake_drm.config.timestamp_hz +
            (uint64_t)ts.tv_nsec * fake_drm.config.timestamp_hz / 1000000000ull;
    ticks += fake_drm.config.timestamp_offset;
    return bits && bits < 64 ? ticks & ((1ull << bits) - 1) : ticks;
}

/* The one register i915 lets a program read that matters here: the render
 * ring's timestamp, 64 bits at once (RCS_TIMESTAMP | I915_REG_READ_8B_WA). */
static int i915_reg_read(struct drm_i915_reg_read *r)
{
    if (r->offset != (0x2358 | I915_REG_READ_8B_WA) || !fake_drm.config.timestamp_hz)
        return -EINVAL;
    r->val = fake_drm_gpu_ticks();
    return 0;
}

static bool i915_context_owned(uint64_t id)
{
    return !id || (id < 64 && (fake_drm.contexts & (1ull << id)) && fake_drm.context_file[id] == caller);
}

#define FAKE_I915_VM_SIZE (1ull << 48)

/* GTT_SIZE only: the size of the context's address space (48 bits). */
static int i915_context_getparam(struct drm_i915_gem_context_param *p)
{
    if (!i915_context_owned(p->ctx_id))
        return -ENOENT;
    if (p->param != I915_CONTEXT_PARAM_GTT_SIZE || p->size)
        return -EINVAL;
    p->value = FAKE_I915_VM_SIZE;
    return 0;
}

static void i915_region_list(struct drm_i915_memory_region_info *out, unsigned *n)
{
    *n = 0;
    /* intel_memory_region_avail (and mr->avail before 6.2): i915 keeps no
     * account of system memory, whose unallocated size is its probed size */
    out[(*n)++] = (struct drm_i915_memory_region_info){
        .region = { I915_MEMORY_CLASS_SYSTEM, 0 }, .probed_size = 8 * GIB, .unallocated_size = 8 * GIB };
    if (fake_drm.config.discrete) {
        struct drm_i915_memory_region_info local = {
            .region = { I915_MEMORY_CLASS_DEVICE, 0 }, .probed_size = 4 * GIB, .unallocated_size = 3 * GIB };
        local.probed_cpu_visible_size = 256u << 20;
        out[(*n)++] = local;
    }
}

static int i915_query(struct drm_i915_query *q)
{
    struct drm_i915_query_item *items = (void *)(uintptr_t)q->items_ptr;

    if (q->flags)
        return -EINVAL;
    for (uint32_t i = 0; i < q->num_items; i++) {
        struct drm_i915_memory_region_info regions[2];
        struct drm_i915_query_memory_regions *out;
        unsigned n;
        int32_t size;

        if (items[i].query_id != DRM_I915_QUERY_MEMORY_REGIONS || items[i].flags) {
            items[i].length = -EINVAL;
            continue;
        }
        i915_region_list(regions, &n);
        size = (int32_t)(sizeof(*out) + n * sizeof(regions[0]));
        if (!items[i].length) {
            items[i].length = size;      /* the first pass asks for the size */
            continue;
        }
        if (items[i].length < size) {
            items[i].length = -EINVAL;
            continue;
        }
        out = (void *)(uintptr_t)items[i].data_ptr;
        /* query_memregion_info: the caller's num_regions and rsvd are MBZ */
        if (out->num_regions || out->rsvd[0] || out->rsvd[1] || out->rsvd[2]) {
            items[i].length = -EINVAL;
            continue;
        }
        memset(out, 0, (size_t)size);
        out->num_regions = n;
        memcpy(out->regions, regions, n * sizeof(regions[0]));
        items[i].length = size;
    }
    return 0;
}

static int i915_gem_create(struct drm_i915_gem_create *args)
{
    int err;

    if (!args->size)
        return -EINVAL;
    args->size = round_up(args->size, 4096);
    if ((err = fake_drm_new_object(caller, args->size, &args->handle)) < 0)
        return err;
    fake_drm.objects[args->handle].placement = FAKE_I915_SYSTEM;
    return 0;
}

/* Placements: known regions, each once; NEEDS_CPU_ACCESS only with system
 * memory among them to spill to (the kernel's documented rule). */
static int i915_gem_create_ext(struct drm_i915_gem_create_ext *args)
{
    const struct i915_user_extension *ext = (void *)(uintptr_t)args->extensions;
    uint32_t placement = FAKE_I915_SYSTEM;
    uint64_t page = 4096;
    int err;

    if (!args->size || (args->flags & ~(uint32_t)I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS))
        return -EINVAL;
    for (; ext; ext = (void *)(uintptr_t)ext->next_extension) {
        const struct drm_i915_gem_create_ext_memory_regions *mr = (const void *)ext;
        const struct drm_i915_gem_memory_class_instance *r = (void *)(uintptr_t)mr->regions;

        if (ext->name != I915_GEM_CREATE_EXT_MEMORY_REGIONS || ext->flags || mr->pad || !mr->num_regions ||
            mr->num_regions > 2)
            return -EINVAL;
        placement = 0;
        for (uint32_t i = 0; i < mr->num_regions; i++) {
            uint32_t bit;

            if (r[i].memory_instance)
                return -EINVAL;
            if (r[i].memory_class == I915_MEMORY_CLASS_SYSTEM)
                bit = FAKE_I915_SYSTEM;
            else if (r[i].memory_class == I915_MEMORY_CLASS_DEVICE && fake_drm.config.discrete)
                bit = FAKE_I915_LOCAL;
            else
                return -EINVAL;
            if (placement & bit)
                return -EINVAL;
            placement |= bit;
        }
    }
    /* i915_gem_create_ext_ioctl: CPU access needs two placements or more,
     * system memory among them (to spill what the BAR cannot show) */
    if ((args->flags & I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS) &&
        (!(placement & FAKE_I915_SYSTEM) || placement == FAKE_I915_SYSTEM))
        return -EINVAL;
    if (placement & FAKE_I915_LOCAL)
        page = 65536;                    /* local memory's minimum page on DG2 */
    args->size = round_up(args->size, page);
    if ((err = fake_drm_new_object(caller, args->size, &args->handle)) < 0)
        return err;
    fake_drm.objects[args->handle].placement = placement;
    fake_drm.objects[args->handle].create_flags = args->flags;
    return 0;
}

static int i915_gem_userptr(struct drm_i915_gem_userptr *args)
{
    int err;

    if ((args->user_ptr | args->user_size) & 4095 || !args->user_size)
        return -EINVAL;
    if (args->flags & ~(uint32_t)(I915_USERPTR_READ_ONLY | I915_USERPTR_UNSYNCHRONIZED))
        return -EINVAL;
    if (fake_drm.config.userptr_refused)
        return -ENODEV;
    if ((err = fake_drm_new_object(caller, args->user_size, &args->handle)) < 0)
        return err;
    fake_drm.objects[args->handle].userptr = args->user_ptr;
    fake_drm.objects[args->handle].placement = FAKE_I915_SYSTEM;
    return 0;
}

/* i915_gem_mmap_offset_ioctl and __assign_mmap_offset (i915_gem_mman.c):
 * pad is never checked (old userspace left garbage there); a mode this
 * machine lacks is ENODEV: GTT without a mappable aperture (discrete
 * parts), WC and UC without PAT, anything but FIXED on a discrete part
 * (its objects are TTM's, which pick the mode), FIXED on an integrated
 * one; an unknown mode is EINVAL.  Userptr objects are never mapped
 * through the device (ENODEV). */
static int i915_mmap_offset(struct drm_i915_gem_mmap_offset *args)
{
    struct fake_drm_object *o = owned(caller, args->handle);

    if (args->extensions)
        return -EINVAL;
    switch (args->flags) {
    case I915_MMAP_OFFSET_GTT:
        if (fake_drm.config.discrete)
            return -ENODEV;
        break;
    case I915_MMAP_OFFSET_WC:
    case I915_MMAP_OFFSET_UC:
        if (fake_drm.config.no_pat)
            return -ENODEV;
        break;
    case I915_MMAP_OFFSET_WB:
    case I915_MMAP_OFFSET_FIXED:
        break;
    default:
        return -EINVAL;
    }
    if (!o)
        return -ENOENT;
    if (o->userptr || fake_drm.config.discrete != (args->flags == I915_MMAP_OFFSET_FIXED))
        return -ENODEV;
    o->mmap_flags = (uint32_t)args->flags;
    args->offset = window_of(args->handle);
    return 0;
}

static int i915_gem_wait(struct drm_i915_gem_wait *args)
{
    struct fake_drm_object *o = owned(caller, args->bo_handle);

    if (args->flags)
        return -EINVAL;
    if (!o)
        return -ENOENT;
    fake_drm.last_wait_timeout = args->timeout_ns;
    if (o->busy && args->timeout_ns >= 0)
        return -ETIME;
    o->busy = false;                     /* an unbounded wait sees the GPU finish */
    return 0;
}

/* i915_gem_context_create_ioctl: a GPU without logical (hardware) contexts,
 * gen5 and older, has none to give: ENODEV, before the arguments are read. */
static int i915_context_create(struct drm_i915_gem_context_create_ext *args)
{
    if (fake_drm.config.no_logical_contexts)
        return -ENODEV;
    if (args->flags || args->extensions)
        return -EINVAL;
    return context_new(&args->ctx_id);
}

static int i915_context_destroy(struct drm_i915_gem_context_destroy *args)
{
    int err = args->pad ? -EINVAL : context_free(args->ctx_id);

    if (!err)
        vmas_drop_context(args->ctx_id);
    return err;
}

/* ---- amdgpu: the one ioctl its family makes itself ----------------------- */

static int amdgpu_ctx(union drm_amdgpu_ctx *args)
{
    uint32_t id;
    int err;

    switch (args->in.op) {
    case AMDGPU_CTX_OP_ALLOC_CTX:
        /* amdgpu_ctx.c: garbage priorities are taken as NORMAL (old
         * userspace left the field unset); above NORMAL needs CAP_SYS_NICE
         * or DRM master, which a test process has neither of */
        if (args->in.priority == AMDGPU_CTX_PRIORITY_HIGH || args->in.priority == AMDGPU_CTX_PRIORITY_VERY_HIGH)
            return -EACCES;
        if ((err = context_new(&id)) < 0)
            return err;
        memset(&args->out, 0, sizeof(args->out));
        args->out.alloc.ctx_id = id;
        return 0;
    case AMDGPU_CTX_OP_FREE_CTX:
        return context_free(args->in.ctx_id) ? -EINVAL : 0;    /* amdgpu_ctx_free */
    }
    return -EINVAL;
}

/* ---- xe ----------------------------------------------------------------- */

static unsigned xe_regions(struct fake_xe_mem_region *out)
{
    unsigned n = 0;

    if (!fake_drm.config.no_system_region)
        out[n++] = (struct fake_xe_mem_region){ .mem_class = 0, .instance = 0, .min_page_size = 4096,
                                                .total_size = 8 * GIB, .used = 2 * GIB };
    if (fake_drm.config.discrete)
        out[n++] = (struct fake_xe_mem_region){ .mem_class = 1, .instance = 1,
                                                .min_page_size = fake_drm.config.vram_min_page,
                                                .total_size = 4 * GIB, .used = 1 * GIB,
                                                .cpu_visible_size = 256u << 20 };
    return n;
}

static int xe_device_query(struct fake_xe_device_query *q)
{
    struct fake_xe_mem_region regions[2];
    unsigned n;
    uint32_t size;
    uint32_t *out;

    if (q->query != FAKE_XE_QUERY_MEM_REGIONS && fake_drm_xe_exec)
        return fake_drm_xe_exec(caller, FAKE_XE_DEVICE_QUERY, q);   /* engines, config: fake_xe_exec.c */
    if (q->extensions || q->reserved[0] || q->reserved[1] || q->query != FAKE_XE_QUERY_MEM_REGIONS)
        return -EINVAL;
    n = xe_regions(regions);
    size = (uint32_t)(8 + n * sizeof(regions[0]));
    if (!q->size) {
        q->size = size;
        return 0;
    }
    if (q->size != size)                 /* xe_query.c: exactly the size it said */
        return -EINVAL;
    out = (void *)(uintptr_t)q->data;
    out[0] = n;
    out[1] = 0;
    memcpy(out + 2, regions, n * sizeof(regions[0]));
    return 0;
}

/* The kernel's checks: a non-empty placement of known regions, a size the
 * placements' page divides, WB or WC, WC for anything VRAM may hold, and
 * NEEDS_VISIBLE_VRAM only with VRAM in the placement. */
static int xe_gem_create(struct fake_xe_gem_create *args)
{
    uint32_t valid = FAKE_XE_SYSTEM_MASK | (fake_drm.config.discrete ? FAKE_XE_VRAM_MASK : 0);
    /* xe_gem_create_ioctl wants a PAGE_SIZE multiple; ___xe_bo_create_locked
     * 64 KiB more only with VRAM among the placements on parts whose VRAM
     * needs it (the region query's min_page_size) */
    uint64_t page = args->placement & FAKE_XE_VRAM_MASK ? fake_drm.config.vram_min_page : 4096;
    int err;

    if (args->extensions || args->vm_id || args->handle || args->pad[0] || args->pad[1] || args->pad[2] ||
        args->reserved[0] || args->reserved[1])
        return -EINVAL;
    if (!args->placement || (args->placement & ~valid))
        return -EINVAL;
    if (args->flags & ~(FAKE_XE_FLAG_DEFER_BACKING | FAKE_XE_FLAG_SCANOUT | FAKE_XE_FLAG_NEEDS_VISIBLE_VRAM))
        return -EINVAL;
    if ((args->flags & FAKE_XE_FLAG_NEEDS_VISIBLE_VRAM) && !(args->placement & FAKE_XE_VRAM_MASK))
        return -EINVAL;
    if (args->cpu_caching != FAKE_XE_CACHING_WB && args->cpu_caching != FAKE_XE_CACHING_WC)
        return -EINVAL;
    if ((args->placement & FAKE_XE_VRAM_MASK) && args->cpu_caching != FAKE_XE_CACHING_WC)
        return -EINVAL;
    if (!args->size || args->size % page)
        return -EINVAL;
    if ((err = fake_drm_new_object(caller, args->size, &args->handle)) < 0)
        return err;
    fake_drm.objects[args->handle].placement = args->placement;
    fake_drm.objects[args->handle].create_flags = args->flags;
    fake_drm.objects[args->handle].cpu_caching = args->cpu_caching;
    return 0;
}

static int xe_mmap_offset(struct fake_xe_gem_mmap_offset *args)
{
    struct fake_drm_object *o = owned(caller, args->handle);

    if (args->extensions || args->flags || args->reserved[0] || args->reserved[1])
        return -EINVAL;
    if (!o)
        return -ENOENT;
    args->offset = window_of(args->handle);
    return 0;
}

/* ---- dumb buffers (every KMS driver has them on its primary node) ------- */

/* The kernel's drm_mode_create_dumb: pitch and size are 32-bit, and a
 * height * pitch that does not fit is EINVAL. */
static int mode_create_dumb(struct drm_mode_create_dumb *args)
{
    uint32_t cpp = (args->bpp + 7) / 8, pitch;
    int err;

    if (!args->width || !args->height || !args->bpp || args->flags || args->bpp > UINT32_MAX - 8)
        return -EINVAL;
    if (cpp > UINT32_MAX / args->width)
        return -EINVAL;
    pitch = cpp * args->width;
    if (args->height > UINT32_MAX / pitch || !round_up((uint64_t)args->height * pitch, 4096))
        return -EINVAL;
    if ((err = fake_drm_new_object(caller, round_up((uint64_t)args->height * pitch, 4096), &args->handle)) < 0)
        return err;
    args->pitch = pitch;
    args->size = fake_drm.objects[args->handle].size;
    return 0;
}

/* ---- SYNCOBJ_EVENTFD (Linux 6.6): the registration's fd ------------------ */

struct fake_syncobj_eventfd { uint32_t handle, flags; uint64_t point; int32_t fd; uint32_t pad; };
#define FAKE_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct fake_syncobj_eventfd)

/* ---- timeline syncobjs (config.timelines) --------------------------------- */

#define FAKE_MAX_SYNCOBJS 256
#define FAKE_MAX_REGISTRATIONS 256

/* A handle SYNCOBJ_FD_TO_HANDLE made names another handle's syncobj, its
 * root, which holds the value; a root lives while handles or syncobj
 * files name it (refs), its slot reused only after. */
static struct {
    bool live;
    unsigned file;
    uint64_t value;                                 /* roots only */
    uint32_t root;                                  /* itself, or the imported syncobj */
    unsigned refs;                                  /* roots: handles and files naming it */
} syncobjs[FAKE_MAX_SYNCOBJS + 1];                  /* by handle, 0 unused */

static uint32_t root_of(uint32_t handle)
{
    return syncobjs[handle].root ? syncobjs[handle].root : handle;
}

static uint64_t *value_of(uint32_t handle)
{
    return &syncobjs[root_of(handle)].value;
}

/* SYNCOBJ_EVENTFD registrations: the kernel holds the eventfd's file, so
 * the fake holds a duplicate of the number, closed once the point came. */
static struct {
    uint32_t handle;
    uint64_t point;
    int fd;                                         /* -1: free */
} registrations[FAKE_MAX_REGISTRATIONS];

static void timelines_reset(void)
{
    memset(syncobjs, 0, sizeof(syncobjs));
    for (unsigned i = 0; i < FAKE_MAX_REGISTRATIONS; i++) {
        if (registrations[i].fd > 0)
            close(registrations[i].fd);
        registrations[i].fd = -1;
    }
}

static bool syncobj_owned(uint32_t handle)
{
    return handle && handle <= FAKE_MAX_SYNCOBJS && syncobjs[handle].live && syncobjs[handle].file == caller;
}

/* Sets the eventfds whose point has come (or, `all`, every one on the
 * syncobj: it is being destroyed, and they go with it unset). */
static void registrations_fire(uint32_t handle, bool all)
{
    static const uint64_t one = 1;

    handle = root_of(handle);
    for (unsigned i = 0; i < FAKE_MAX_REGISTRATIONS; i++) {
        if (registrations[i].fd < 0 || registrations[i].handle != handle)
            continue;
        if (!all && registrations[i].point > *value_of(handle))
            continue;
        if (!all && write(registrations[i].fd, &one, sizeof(one)) != sizeof(one))
            fake_drm.eventfd_calls += 0;             /* a full eventfd stays set: nothing lost */
        close(registrations[i].fd);
        registrations[i].fd = -1;
    }
}

static int get_cap(struct drm_get_cap *args)
{
    if (!fake_drm.config.timelines)
        return -ENOTTY;
    args->value = args->capability == DRM_CAP_SYNCOBJ || args->capability == DRM_CAP_SYNCOBJ_TIMELINE;
    return 0;
}

static int syncobj_create(struct drm_syncobj_create *args)
{
    if (!fake_drm.config.timelines)
        return -ENOTTY;
    if (args->flags)
        return -EINVAL;
    for (uint32_t h = 1; h <= FAKE_MAX_SYNCOBJS; h++)
        if (!syncobjs[h].live && !syncobjs[h].refs) {
            syncobjs[h].live = true;
            syncobjs[h].file = caller;
            syncobjs[h].value = 0;
            syncobjs[h].root = h;
            syncobjs[h].refs = 1;
            fake_drm.live_syncobjs++;
            args->handle = h;
            return 0;
        }
    return -ENOMEM;
}

/* The last handle or file of a syncobj frees it, and its registrations. */
static void syncobj_unref(uint32_t root)
{
    if (--syncobjs[root].refs)
        return;
    registrations_fire(root, true);
}

static int syncobj_destroy(struct drm_syncobj_destroy *args)
{
    if (!fake_drm.config.timelines)
        return -ENOTTY;
    if (args->pad || !syncobj_owned(args->handle))
        return -EINVAL;
    syncobjs[args->handle].live = false;
    fake_drm.live_syncobjs--;
    syncobj_unref(root_of(args->handle));
    return 0;
}

/* TIMELINE_SIGNAL, RESET and QUERY, one handle at a time. */
static int syncobj_array(unsigned long request, uint64_t handles, uint64_t points, uint32_t count, uint32_t flags)
{
    const uint32_t *h = (const uint32_t *)(uintptr_t)handles;
    uint64_t *p = (uint64_t *)(uintptr_t)points;

    if (!fake_drm.config.timelines)
        return -ENOTTY;
    if (!count || (request != DRM_IOCTL_SYNCOBJ_QUERY && flags))
        return -EINVAL;
    for (uint32_t i = 0; i < count; i++)
        if (!syncobj_owned(h[i]))
            return -ENOENT;
    for (uint32_t i = 0; i < count; i++) {
        if (request == DRM_IOCTL_SYNCOBJ_QUERY) {
            p[i] = *value_of(h[i]);
            continue;
        }
        *value_of(h[i]) = request == DRM_IOCTL_SYNCOBJ_RESET ? 0 : p[i];
        registrations_fire(h[i], false);
    }
    return 0;
}

/* The kernel takes a reference to the eventfd behind the number at the
 * call: a closed number is EBADF, a number now naming another kind of file
 * EINVAL.  Without config.timelines the fake keeps no syncobjs: any handle
 * but 0 is taken. */
static int syncobj_eventfd(struct fake_syncobj_eventfd *args)
{
    char link[64], target[64];
    ssize_t n;

    fake_drm.eventfd_calls++;
    if (args->pad || !args->handle || (args->flags & ~(uint32_t)DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE))
        return -EINVAL;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", args->fd);
    if ((n = readlink(link, target, sizeof(target) - 1)) < 0)
        return -EBADF;
    target[n] = 0;
    if (strcmp(target, "anon_inode:[eventfd]"))
        return -EINVAL;
    fake_drm.last_eventfd = args->fd;
    if (!fake_drm.config.timelines)
        return 0;
    if (!syncobj_owned(args->handle))
        return -ENOENT;
    for (unsigned i = 0; i < FAKE_MAX_REGISTRATIONS; i++)
        if (registrations[i].fd < 0) {
            if ((registrations[i].fd = fcntl(args->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
                registrations[i].fd = -1;
                return -EMFILE;
            }
            registrations[i].handle = root_of(args->handle);
            registrations[i].point = args->point;
            registrations_fire(args->handle, false);     /* the point may be there already */
            return 0;
        }
    return -ENOMEM;
}

/* ---- amdgpu CS: what fake_amdgpu.c's handler needs of the books -------- */

int (*fake_drm_amdgpu_cs)(unsigned file, void *args);

void fake_drm_lock(void)
{
    pthread_mutex_lock(&answering);
}

void fake_drm_unlock(void)
{
    pthread_mutex_unlock(&answering);
}

int fake_drm_syncobj_value(unsigned file, uint32_t handle, uint64_t *value)
{
    if (!fake_drm.config.timelines || !handle || handle > FAKE_MAX_SYNCOBJS || !syncobjs[handle].live ||
        syncobjs[handle].file != file)
        return -ENOENT;
    *value = *value_of(handle);
    return 0;
}

void fake_drm_syncobj_reach(uint32_t handle, uint64_t point)
{
    if (*value_of(handle) < point)
        *value_of(handle) = point;
    registrations_fire(handle, false);
}

/* ---- end of amdgpu CS ---------------------------------------------------- */

/* ---- i915 EXECBUFFER2 ------------------------------------------------------
 * The checks of i915_gem_execbuffer.c (Linux 6.x), in its order, then the
 * batch "runs" at the call: MI_NOOP, MI_BATCH_BUFFER_END and
 * MI_STORE_DATA_IMM with a 48-bit PPGTT address (one dword, or a qword with
 * bit 21), resolved through the listed objects' softpinned offsets.  A store
 * at an address no listed object covers is lost: a context's unused PPGTT
 * entries point at the scratch page, which takes it without a fault.  Any
 * other command stops the batch (the GPU would hang and i915 reset the
 * context; the fence still signals, with an error syncobjs do not carry).
 * The signal points are then signalled.  Simplifications: objects must be
 * softpinned (the kernel would place the others) and relocations are
 * refused (as gen12+ parts after Tiger Lake do); FENCE_IN/OUT/SUBMIT/ARRAY,
 * SECURE and the BSD selectors are not modelled (EINVAL). */

#define FAKE_EXEC_MODELLED (I915_EXEC_RING_MASK | I915_EXEC_NO_RELOC | I915_EXEC_HANDLE_LUT | \
                            I915_EXEC_BATCH_FIRST | I915_EXEC_USE_EXTENSIONS)
#define FAKE_MI_OPCODE(dw) ((dw) >> 23)
#define FAKE_MI_NOOP 0x00u
#define FAKE_MI_BATCH_BUFFER_END 0x0au
#define FAKE_MI_STORE_DATA_IMM 0x20u
#define FAKE_MI_USE_GGTT (1u << 22)
#define FAKE_MI_STORE_QWORD (1u << 21)
#define FAKE_GTT_PAGE 4096ull

/* gen8_canonical_addr: bit 47 copied into the upper 16 bits. */
static uint64_t canonical(uint64_t a)
{
    return (uint64_t)(((int64_t)(a << 16)) >> 16);
}

struct fake_exec {
    const struct drm_i915_gem_exec_object2 *objects;
    uint32_t count;
    const struct drm_i915_gem_exec_fence *fences;
    const uint64_t *points;
    uint64_t nfences;
};

/* The timeline fences extension, the only one execbuffer has; the
 * extension walk (i915_user_extensions) wants known names and zero flags
 * and reserved words, and the chain appears once here. */
static int exec_extensions(const struct drm_i915_gem_execbuffer2 *args, struct fake_exec *x)
{
    const struct drm_i915_gem_execbuffer_ext_timeline_fences *t;

    if (!(args->flags & I915_EXEC_USE_EXTENSIONS))
        return 0;
    if (args->num_cliprects)
        return -EINVAL;                  /* the chain reuses cliprects_ptr */
    for (t = (const void *)(uintptr_t)args->cliprects_ptr; t; t = (const void *)(uintptr_t)t->base.next_extension) {
        if (t->base.name != DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES || t->base.flags || t->base.rsvd[0] ||
            t->base.rsvd[1] || t->base.rsvd[2] || x->fences)
            return -EINVAL;
        x->fences = (const void *)(uintptr_t)t->handles_ptr;
        x->points = (const void *)(uintptr_t)t->values_ptr;
        x->nfences = t->fence_count;
        if (x->nfences && (!x->fences || !x->points))
            return -EFAULT;
    }
    return 0;
}

/* add_timeline_fence_array: unknown flags EINVAL, unknown syncobj ENOENT,
 * a wait on a syncobj with no fence, or on a point the timeline has not
 * reached (dma_fence_chain_find_seqno), EINVAL; waiting for and signalling
 * one point in one entry EINVAL.  Here a timeline holds every point up to
 * its value, all signalled: the fake runs batches at the call. */
static int exec_fences(const struct fake_exec *x)
{
    for (uint64_t i = 0; i < x->nfences; i++) {
        uint32_t flags = x->fences[i].flags, h = x->fences[i].handle;

        if (flags & ~(uint32_t)(I915_EXEC_FENCE_WAIT | I915_EXEC_FENCE_SIGNAL))
            return -EINVAL;
        if (!syncobj_owned(h))
            return -ENOENT;
        if ((flags & I915_EXEC_FENCE_WAIT) && !(flags & I915_EXEC_FENCE_SIGNAL) &&
            (!*value_of(h) || x->points[i] > *value_of(h)))
            return -EINVAL;
        if ((flags & I915_EXEC_FENCE_WAIT) && (flags & I915_EXEC_FENCE_SIGNAL) && x->points[i])
            return -EINVAL;
    }
    return 0;
}

/* eb_validate_vma and the pinning: known flags, no GTT mapping with a full
 * PPGTT, alignments powers of two, pinned offsets page-aligned and
 * canonical, below 4 GiB without 48B (PIN_ZONE_4G), inside the address
 * space, local memory at 64 KiB (DG2's minimum alignment); a pinned range
 * overlapping another of the same call cannot be placed (ENOSPC, its slot
 * is taken by a pinned VMA).  Each handle once: the fake's rule, the
 * miniport never repeats one. */
static int exec_object(const struct fake_exec *x, uint32_t i)
{
    const struct drm_i915_gem_exec_object2 *e = &x->objects[i];
    const struct fake_drm_object *o = owned(caller, e->handle);
    uint64_t start = e->offset & ((1ull << 48) - 1);

    if (!o)
        return -ENOENT;
    if (e->relocation_count || (e->flags & (__EXEC_OBJECT_UNKNOWN_FLAGS | EXEC_OBJECT_NEEDS_GTT)) ||
        (e->alignment & (e->alignment - 1)) || !(e->flags & EXEC_OBJECT_PINNED))
        return -EINVAL;
    if (e->offset != canonical(e->offset & ~(FAKE_GTT_PAGE - 1)))
        return -EINVAL;
    if (start + o->size > FAKE_I915_VM_SIZE || (!(e->flags & EXEC_OBJECT_SUPPORTS_48B_ADDRESS) &&
                                                start + o->size > (1ull << 32)))
        return -EINVAL;
    if ((o->placement & FAKE_I915_LOCAL) && start % 65536)
        return -EINVAL;
    for (uint32_t j = 0; j < i; j++) {
        const struct fake_drm_object *p = owned(caller, x->objects[j].handle);
        uint64_t other = x->objects[j].offset & ((1ull << 48) - 1);

        if (x->objects[j].handle == e->handle)
            return -EINVAL;
        if (start < other + p->size && other < start + o->size)
            return -ENOSPC;
    }
    return 0;
}

/* The bytes behind a PPGTT address, if a listed object covers them (a
 * userptr object's are the caller's pages). */
static uint8_t *exec_resolve(const struct fake_exec *x, uint64_t addr, uint64_t bytes)
{
    addr &= (1ull << 48) - 1;
    for (uint32_t i = 0; i < x->count; i++) {
        const struct fake_drm_object *o = fake_drm_object(x->objects[i].handle);
        uint64_t start = x->objects[i].offset & ((1ull << 48) - 1);

        if (addr >= start && addr - start <= o->size - bytes) {
            uint8_t *base = o->userptr ? (uint8_t *)(uintptr_t)o->userptr : fake_drm_bytes(x->objects[i].handle);
            return base + (addr - start);
        }
    }
    return NULL;
}

/* One MI_STORE_DATA_IMM at dw[0]: its length in dwords, 0 if the fake
 * cannot run it. */
static uint32_t exec_store(const struct fake_exec *x, const uint32_t *dw, uint32_t left)
{
    bool qword = dw[0] & FAKE_MI_STORE_QWORD;
    uint32_t length = (dw[0] & 0x3ffu) + 2, bytes = qword ? 8 : 4;
    uint64_t addr;
    uint8_t *to;

    if ((dw[0] & FAKE_MI_USE_GGTT) || length != (qword ? 5u : 4u) || length > left)
        return 0;
    addr = dw[1] | (uint64_t)dw[2] << 32;
    if (addr % bytes)
        return 0;
    if (!(to = exec_resolve(x, addr, bytes)))
        fake_drm.exec_lost_writes++;
    else
        memmove(to, dw + 3, bytes);           /* a batch may store over its own dwords */
    return length;
}

static void exec_run(const struct fake_exec *x, const uint32_t *dw, uint32_t dwords)
{
    uint32_t i = 0, n;

    while (i < dwords) {
        switch (FAKE_MI_OPCODE(dw[i])) {
        case FAKE_MI_NOOP:
            if (dw[i]) {
                fake_drm.exec_hangs++;
                return;
            }
            i++;
            continue;
        case FAKE_MI_BATCH_BUFFER_END:
            return;
        case FAKE_MI_STORE_DATA_IMM:
            if ((n = exec_store(x, dw + i, dwords - i))) {
                i += n;
                continue;
            }
            break;
        }
        fake_drm.exec_hangs++;
        return;
    }
    fake_drm.exec_hangs++;               /* ran off the end without a batch end */
}

static void exec_signal(const struct fake_exec *x)
{
    for (uint64_t i = 0; i < x->nfences; i++) {
        uint32_t h = x->fences[i].handle;

        if (!(x->fences[i].flags & I915_EXEC_FENCE_SIGNAL))
            continue;
        *value_of(h) = x->points[i] ? x->points[i] : *value_of(h);
        registrations_fire(h, false);
    }
}

/* The VMAs of the contexts' VMs (a full PPGTT each): a pinned object stays
 * bound where it was put; GEM_CLOSE leaves a VMA its request keeps active
 * in place (__i915_vma_active holds the object), and the context's
 * destruction takes its VM away.  A softpin over another object's VMA
 * evicts it: where that VMA is still active the kernel waits for its
 * request (the second eb_reserve pass; i915_gem_evict_for_node,
 * __i915_vma_unbind), which the fake counts as a stall. */
#define FAKE_I915_VMAS 256
static struct fake_vma {
    bool live, active, closed;
    uint32_t ctx, handle;
    unsigned file;
    uint64_t start, end;
} vmas[FAKE_I915_VMAS];
static struct { uint32_t handle; uint64_t point; } held[256];
static unsigned nheld;

static void vmas_reset(void)
{
    memset(vmas, 0, sizeof(vmas));
    nheld = 0;
}

static void vmas_close(unsigned file, uint32_t handle)
{
    for (unsigned i = 0; i < FAKE_I915_VMAS; i++)
        if (vmas[i].live && vmas[i].file == file && vmas[i].handle == handle)
            vmas[i].closed = true;
}

static void vmas_drop_context(uint32_t ctx)
{
    for (unsigned i = 0; i < FAKE_I915_VMAS; i++)
        if (vmas[i].live && vmas[i].ctx == ctx)
            vmas[i].live = false;
}

/* Binds each listed object at its offset in the context's VM, evicting
 * what overlaps it; all of them active while requests are held. */
static void vmas_bind(const struct fake_exec *x, uint32_t ctx)
{
    for (uint32_t i = 0; i < x->count; i++) {
        uint64_t start = x->objects[i].offset & ((1ull << 48) - 1);
        uint64_t end = start + fake_drm_object(x->objects[i].handle)->size;
        struct fake_vma *same = NULL, *free_slot = NULL;
        bool stalled = false;

        for (unsigned j = 0; j < FAKE_I915_VMAS; j++) {
            struct fake_vma *v = &vmas[j];

            if (!v->live) {
                free_slot = free_slot ? free_slot : v;
                continue;
            }
            if (v->ctx != ctx || v->file != caller)
                continue;
            if (!v->closed && v->handle == x->objects[i].handle && v->start == start) {
                same = v;
                continue;
            }
            if (v->start < end && start < v->end) {
                stalled |= v->active;
                v->live = false;
                free_slot = free_slot ? free_slot : v;
            }
        }
        if (stalled)
            fake_drm.exec_stalls++;
        if (!same && free_slot) {
            *free_slot = (struct fake_vma){ true, false, false, ctx, x->objects[i].handle, caller, start, end };
            same = free_slot;
        }
        if (same)
            same->active = fake_drm.exec_hold;
    }
}

void fake_drm_i915_retire(void)
{
    fake_drm_lock();
    for (unsigned i = 0; i < nheld; i++)
        fake_drm_syncobj_reach(held[i].handle, held[i].point);
    nheld = 0;
    for (unsigned i = 0; i < FAKE_I915_VMAS; i++)
        vmas[i].active = false;
    fake_drm_unlock();
}

/* i915_gem_check_execbuffer, check_buffer_count and the batch checks of
 * eb_add_vma: a batch (the last object, or the first with BATCH_FIRST) is
 * not written by its own request, and [start, start + len) lies in it. */
static int i915_execbuffer(struct drm_i915_gem_execbuffer2 *args)
{
    struct fake_exec x = { (const void *)(uintptr_t)args->buffers_ptr, args->buffer_count, NULL, NULL, 0 };
    const struct drm_i915_gem_exec_object2 *batch;
    const struct fake_drm_object *o;
    uint64_t len;
    int err;

    if (!args->buffer_count || args->buffer_count > INT32_MAX)
        return -EINVAL;
    if (args->flags & ~(uint64_t)FAKE_EXEC_MODELLED)
        return -EINVAL;
    if (!(args->flags & I915_EXEC_USE_EXTENSIONS) && (args->num_cliprects || args->cliprects_ptr))
        return -EINVAL;
    if (args->DR1 || args->DR4 || ((args->batch_start_offset | args->batch_len) & 7))
        return -EINVAL;
    if ((err = exec_extensions(args, &x)) || (err = exec_fences(&x)))
        return err;
    if (!i915_context_owned(args->rsvd1))
        return -ENOENT;
    if ((args->flags & I915_EXEC_RING_MASK) > I915_EXEC_VEBOX)
        return -EINVAL;                  /* eb_select_legacy_ring: no such engine */
    for (uint32_t i = 0; i < x.count; i++)
        if ((err = exec_object(&x, i)))
            return err;
    batch = &x.objects[args->flags & I915_EXEC_BATCH_FIRST ? 0 : x.count - 1];
    o = fake_drm_object(batch->handle);
    if ((batch->flags & EXEC_OBJECT_WRITE) || args->batch_start_offset > o->size ||
        args->batch_len > o->size - args->batch_start_offset)
        return -EINVAL;
    len = args->batch_len ? args->batch_len : o->size - args->batch_start_offset;
    fake_drm.execs++;
    fake_drm.last_exec_ctx = (uint32_t)args->rsvd1;
    vmas_bind(&x, (uint32_t)args->rsvd1);
    exec_run(&x, (const uint32_t *)(exec_resolve(&x, batch->offset, o->size) + args->batch_start_offset),
             (uint32_t)(len / 4));
    if (fake_drm.exec_hold) {
        for (uint64_t i = 0; i < x.nfences; i++)
            if ((x.fences[i].flags & I915_EXEC_FENCE_SIGNAL) && nheld < 256)
                held[nheld++] = (typeof(held[0])){ x.fences[i].handle, x.points[i] };
    } else {
        exec_signal(&x);
    }
    return 0;
}

/* ---- fdinfo (drm-usage-stats.rst) ---------------------------------------- */

/* drm_print_memory_stats() (drm_file.c): bytes in KiB or MiB while the
 * value divides evenly, plain bytes otherwise. */
static size_t print_size(char *buf, size_t size, const char *key, uint64_t bytes)
{
    static const char *const units[] = { "", " KiB", " MiB" };
    unsigned u = 0;

    while (u < 2 && bytes && !(bytes % 1024)) {
        bytes /= 1024;
        u++;
    }
    return (size_t)snprintf(buf, size, "%s:\t%llu%s\n", key, (unsigned long long)bytes, units[u]);
}

/* Bytes of the live objects whose placement has `bits` (0: none of `other`). */
static uint64_t placed_bytes(uint32_t bits, uint32_t other)
{
    uint64_t sum = 0;

    for (uint32_t h = 1; h <= FAKE_DRM_MAX_OBJECTS; h++) {
        const struct fake_drm_object *o = &fake_drm.objects[h];

        if (o->live && (bits ? (o->placement & bits) != 0 : !(o->placement & other)))
            sum += o->size;
    }
    return sum;
}

/* What each driver prints, per kernel:
 *   xe (6.11+, xe_drm_client.c)  drm-total-<TTM placement> for system, gtt
 *       (system memory the GPU maps) and vram0, then per engine class
 *       drm-cycles-<class> and drm-total-cycles-<class>, the class's GPU
 *       timestamp: a clock, not bytes
 *   i915 (6.8+, i915_drm_client.c)  drm-total-<region> by the regions'
 *       uAPI names (system0, local0) and drm-engine-<class> in ns
 *   amdgpu (6.1-6.8, amdgpu_fdinfo.c)  its own drm-memory-vram, -gtt, -cpu in
 *       KiB (the gtt and cpu keys with a space before the tab) */
size_t fake_drm_fdinfo(char *buf, size_t size)
{
    size_t n = 0;

#define FDINFO_PUT(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
#define FDINFO_SIZE(key, bytes) (n += print_size(buf + n, n < size ? size - n : 0, key, bytes))
    switch (fake_drm.config.driver) {
    case FAKE_XE:
        FDINFO_PUT("drm-driver:\txe\ndrm-client-id:\t7\n");
        FDINFO_SIZE("drm-total-system", 0);
        FDINFO_SIZE("drm-total-gtt", placed_bytes(0, FAKE_XE_VRAM_MASK));
        if (fake_drm.config.discrete)
            FDINFO_SIZE("drm-total-vram0", placed_bytes(FAKE_XE_VRAM_MASK, 0));
        FDINFO_PUT("drm-cycles-rcs:\t1234567\ndrm-total-cycles-rcs:\t987654321012\n");
        FDINFO_PUT("drm-cycles-bcs:\t0\ndrm-total-cycles-bcs:\t987654321012\n");
        break;
    case FAKE_I915:
        FDINFO_PUT("drm-driver:\ti915\ndrm-client-id:\t7\n");
        FDINFO_SIZE("drm-total-system0", placed_bytes(0, FAKE_I915_LOCAL));
        if (fake_drm.config.discrete)
            FDINFO_SIZE("drm-total-local0", placed_bytes(FAKE_I915_LOCAL, 0));
        FDINFO_PUT("drm-engine-render:\t5000000 ns\n");
        break;
    case FAKE_AMDGPU:
        FDINFO_PUT("drm-driver:\tamdgpu\ndrm-client-id:\t7\n");
        FDINFO_PUT("drm-memory-vram:\t%llu KiB\n",
                   (unsigned long long)placed_bytes(AMDGPU_GEM_DOMAIN_VRAM, 0) / 1024);
        FDINFO_PUT("drm-memory-gtt: \t%llu KiB\n", (unsigned long long)placed_bytes(AMDGPU_GEM_DOMAIN_GTT, 0) / 1024);
        FDINFO_PUT("drm-memory-cpu: \t%llu KiB\n", (unsigned long long)placed_bytes(AMDGPU_GEM_DOMAIN_CPU, 0) / 1024);
        FDINFO_PUT("drm-engine-gfx:\t5000000 ns\n");
        break;
    }
#undef FDINFO_PUT
#undef FDINFO_SIZE
    return n < size ? n : size ? size - 1 : 0;
}

/* ---- PRIME and syncobj files ------------------------------------------- */

/* The files PRIME and SYNCOBJ_HANDLE_TO_FD hand out.  A dma-buf is a memfd
 * as large as its object (llseek(SEEK_END) gives the size, as a dma-buf's
 * does), one per object: every export of it gives a new fd of that file,
 * as the kernel's obj->dma_buf.  A syncobj's file is one memfd per root
 * syncobj, made at its first export (the kernel makes a file per export;
 * an import cannot tell them apart).  The fake keeps a fd of each (the
 * kernel's reference) until fake_drm_close, so an import finds it by
 * inode. */
#define FAKE_MAX_SHARED_FILES 256

static struct {
    int fd;                                         /* -1: free */
    bool syncobj;
    uint32_t target;                                /* the object's window, or the root syncobj */
    dev_t dev;
    ino_t ino;
} shared_files[FAKE_MAX_SHARED_FILES];

static void shared_files_reset(void)
{
    for (unsigned i = 0; i < FAKE_MAX_SHARED_FILES; i++) {
        if (shared_files[i].fd > 0)
            close(shared_files[i].fd);
        shared_files[i].fd = -1;
    }
}

static int shared_file_new(bool syncobj, uint32_t target, uint64_t size)
{
    struct stat st;

    for (unsigned i = 0; i < FAKE_MAX_SHARED_FILES; i++) {
        int fd;

        if (shared_files[i].fd >= 0)
            continue;
        if ((fd = memfd_create(syncobj ? "fake-syncobj" : "fake-dmabuf", MFD_CLOEXEC)) < 0)
            return -errno;
        if (ftruncate(fd, (off_t)size) || fstat(fd, &st)) {
            close(fd);
            return -ENOMEM;
        }
        shared_files[i].fd = fd;
        shared_files[i].syncobj = syncobj;
        shared_files[i].target = target;
        shared_files[i].dev = st.st_dev;
        shared_files[i].ino = st.st_ino;
        return (int)i;
    }
    return -ENFILE;
}

/* The shared file behind a caller's fd: -EBADF for no fd, -EINVAL for a
 * file of another kind (the kernel's answers). */
static int shared_file_of(int fd, bool syncobj)
{
    struct stat st;

    if (fd < 0 || fstat(fd, &st))
        return -EBADF;
    for (unsigned i = 0; i < FAKE_MAX_SHARED_FILES; i++)
        if (shared_files[i].fd >= 0 && shared_files[i].syncobj == syncobj && shared_files[i].dev == st.st_dev &&
            shared_files[i].ino == st.st_ino)
            return (int)i;
    return -EINVAL;
}

static int dup_out(int fd, bool cloexec)
{
    int out = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);

    return out < 0 ? -errno : out;
}

/* drm_prime_handle_to_fd_ioctl: flags other than CLOEXEC and RDWR EINVAL,
 * another file's handle ENOENT; userptr objects are not exported. */
static int prime_handle_to_fd(struct drm_prime_handle *args)
{
    struct fake_drm_object *o = owned(caller, args->handle);
    int i, fd;

    if (args->flags & ~(uint32_t)(DRM_CLOEXEC | DRM_RDWR))
        return -EINVAL;
    if (!o)
        return -ENOENT;
    if (o->userptr)
        return -EINVAL;
    for (i = 0; i < FAKE_MAX_SHARED_FILES; i++)
        if (shared_files[i].fd >= 0 && !shared_files[i].syncobj && shared_files[i].target == o->memory)
            break;
    if (i == FAKE_MAX_SHARED_FILES) {
        if ((i = shared_file_new(false, o->memory, o->size)) < 0)
            return i;
        memory_refs[o->memory]++;        /* the dma-buf holds the object */
        fake_drm.dmabufs++;
    }
    if ((fd = dup_out(shared_files[i].fd, args->flags & DRM_CLOEXEC)) < 0)
        return fd;
    fake_drm.prime_exports++;
    args->fd = fd;
    return 0;
}

/* drm_gem_prime_fd_to_handle: a buffer the file has gets its handle again
 * (no new reference); otherwise a new handle on the same memory. */
static int prime_fd_to_handle(struct drm_prime_handle *args)
{
    int i = shared_file_of(args->fd, false);
    uint32_t m, h;

    if (i < 0)
        return i;
    m = shared_files[i].target;
    fake_drm.prime_imports++;
    for (h = 1; h <= FAKE_DRM_MAX_OBJECTS; h++)
        if (fake_drm.objects[h].live && fake_drm.objects[h].file == caller && fake_drm.objects[h].memory == m) {
            args->handle = h;
            return 0;
        }
    for (h = 1; h <= FAKE_DRM_MAX_OBJECTS; h++) {
        struct fake_drm_object *o = &fake_drm.objects[h];

        if (o->live || memory_refs[h])
            continue;
        *o = fake_drm.objects[m];        /* the exporter's size and placement */
        o->live = true;
        o->file = caller;
        o->memory = m;
        o->mmap_flags = 0;
        o->cpu_maps = 0;
        memory_refs[m]++;
        fake_drm.live_objects++;
        args->handle = h;
        return 0;
    }
    return -ENOSPC;
}

/* drm_syncobj_handle_to_fd: a fd of the syncobj's file; flags other than
 * EXPORT_SYNC_FILE EINVAL (the fake has no sync files: EINVAL too). */
static int syncobj_handle_to_fd(struct drm_syncobj_handle *args)
{
    uint32_t root;
    int i, fd;

    if (!fake_drm.config.timelines)
        return -ENOTTY;
    if (args->flags || args->pad)
        return -EINVAL;
    if (!syncobj_owned(args->handle))
        return -ENOENT;
    root = root_of(args->handle);
    for (i = 0; i < FAKE_MAX_SHARED_FILES; i++)
        if (shared_files[i].fd >= 0 && shared_files[i].syncobj && shared_files[i].target == root)
            break;
    if (i == FAKE_MAX_SHARED_FILES) {
        if ((i = shared_file_new(true, root, 0)) < 0)
            return i;
        syncobjs[root].refs++;           /* the file holds the timeline */
    }
    if ((fd = dup_out(shared_files[i].fd, true)) < 0)
        return fd;
    args->fd = fd;
    return 0;
}

/* drm_syncobj_fd_to_handle: always a new handle on the caller's file. */
static int syncobj_fd_to_handle(struct drm_syncobj_handle *args)
{
    int i;

    if (!fake_drm.config.timelines)
        return -ENOTTY;
    if (args->flags || args->pad)
        return -EINVAL;
    if ((i = shared_file_of(args->fd, true)) < 0)
        return i;
    for (uint32_t h = 1; h <= FAKE_MAX_SYNCOBJS; h++)
        if (!syncobjs[h].live && !syncobjs[h].refs) {
            syncobjs[h].live = true;
            syncobjs[h].file = caller;
            syncobjs[h].value = 0;
            syncobjs[h].root = shared_files[i].target;
            syncobjs[shared_files[i].target].refs++;
            fake_drm.live_syncobjs++;
            args->handle = h;
            return 0;
        }
    return -ENOMEM;
}

/* ---- dispatch ----------------------------------------------------------- */

static int answer(unsigned long request, void *arg)
{
    if (request == DRM_IOCTL_GEM_CLOSE)
        return gem_close(arg);
    if (request == DRM_IOCTL_MODE_CREATE_DUMB)
        return mode_create_dumb(arg);
    if (request == FAKE_SYNCOBJ_EVENTFD)
        return syncobj_eventfd(arg);
    if (request == DRM_IOCTL_GET_CAP)
        return get_cap(arg);
    if (request == DRM_IOCTL_PRIME_HANDLE_TO_FD)
        return prime_handle_to_fd(arg);
    if (request == DRM_IOCTL_PRIME_FD_TO_HANDLE)
        return prime_fd_to_handle(arg);
    if (request == DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD)
        return syncobj_handle_to_fd(arg);
    if (request == DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE)
        return syncobj_fd_to_handle(arg);
    if (request == DRM_IOCTL_SYNCOBJ_CREATE)
        return syncobj_create(arg);
    if (request == DRM_IOCTL_SYNCOBJ_DESTROY)
        return syncobj_destroy(arg);
    if (request == DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL || request == DRM_IOCTL_SYNCOBJ_QUERY) {
        struct drm_syncobj_timeline_array *t = arg;
        return syncobj_array(request, t->handles, t->points, t->count_handles, t->flags);
    }
    if (request == DRM_IOCTL_SYNCOBJ_RESET) {
        struct drm_syncobj_array *r = arg;
        return syncobj_array(request, r->handles, 0, r->count_handles, r->pad);
    }
    if (fake_drm.config.driver == FAKE_I915) {
        switch (request) {
        case DRM_IOCTL_I915_GETPARAM: return i915_getparam(arg);
        case DRM_IOCTL_I915_REG_READ: return i915_reg_read(arg);
        case DRM_IOCTL_I915_QUERY: return i915_query(arg);
        case DRM_IOCTL_I915_GEM_CREATE: return i915_gem_create(arg);
        case DRM_IOCTL_I915_GEM_CREATE_EXT: return i915_gem_create_ext(arg);
        case DRM_IOCTL_I915_GEM_USERPTR: return i915_gem_userptr(arg);
        case DRM_IOCTL_I915_GEM_MMAP_OFFSET: return i915_mmap_offset(arg);
        case DRM_IOCTL_I915_GEM_WAIT: return i915_gem_wait(arg);
        case DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT: return i915_context_create(arg);
        case DRM_IOCTL_I915_GEM_CONTEXT_DESTROY: return i915_context_destroy(arg);
        case DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM: return i915_context_getparam(arg);
        case DRM_IOCTL_I915_GEM_EXECBUFFER2:
        case DRM_IOCTL_I915_GEM_EXECBUFFER2_WR: return i915_execbuffer(arg);
        }
    } else if (fake_drm.config.driver == FAKE_AMDGPU) {
        if (request == DRM_IOCTL_AMDGPU_CTX)
            return amdgpu_ctx(arg);
        if (request == DRM_IOCTL_AMDGPU_CS && fake_drm_amdgpu_cs)
            return fake_drm_amdgpu_cs(caller, arg);         /* fake_amdgpu.c, where linked in */
    } else {
        switch (request) {
        case FAKE_XE_DEVICE_QUERY: return xe_device_query(arg);
        case FAKE_XE_GEM_CREATE: return xe_gem_create(arg);
        case FAKE_XE_GEM_MMAP_OFFSET: return xe_mmap_offset(arg);
        }
        if (fake_drm_xe_exec)
            return fake_drm_xe_exec(caller, request, arg);  /* VMs, queues, exec: fake_xe_exec.c */
    }
    return -ENOTTY;                      /* what a driver says to an ioctl it lacks */
}

bool (*fake_drm_kms)(int fd, unsigned long request, void *arg, int *ret);

/* Replaces libdrm's for the whole test program; with
 * FAKE_DRM_EXPORT_IOCTL, for libdrm's own calls too (drmModeGetResources...)
 * where the program exports it (test_drm_kms). */
#ifdef FAKE_DRM_EXPORT_IOCTL
__attribute__((visibility("default")))
#endif
int drmIoctl(int fd, unsigned long request, void *arg)
{
    unsigned file;
    int ret;

    if (fake_drm_kms && fake_drm_kms(fd, request, arg, &ret)) {
        if (ret < 0) {
            errno = -ret;
            return -1;
        }
        return 0;
    }
    pthread_mutex_lock(&answering);
    if (!(file = file_of_caller(fd))) {
        pthread_mutex_unlock(&answering);
        do
            ret = ioctl(fd, request, arg);
        while (ret == -1 && (errno == EINTR || errno == EAGAIN));
        return ret;
    }
    caller = file;
    fake_drm.calls++;
    if (fake_drm.fail_nth && (unsigned)request == fake_drm.fail_nr && !--fake_drm.fail_nth)
        ret = -(int)fake_drm.fail_errno;
    else
        ret = answer(request, arg);
    pthread_mutex_unlock(&answering);
    if (ret < 0) {
        errno = -ret;
        return -1;
    }
    return 0;
}

/* ---- enumeration: libdrm's drmGetDevices2 and drmGetVersion ------------- */

#define MAX_FAKE_DEVICES 8

static struct {
    unsigned count;                     /* 0: libdrm answers */
    char driver[32];
    drmDevice devices[MAX_FAKE_DEVICES];
    drmPciBusInfo bus[MAX_FAKE_DEVICES];
    drmPciDeviceInfo info[MAX_FAKE_DEVICES];
    char *nodes[MAX_FAKE_DEVICES][DRM_NODE_MAX];
    char render[MAX_FAKE_DEVICES][64];
    char card[MAX_FAKE_DEVICES][80];
} listed;

void fake_drm_set_devices(const struct fake_drm_pci_device *devices, unsigned n, const char *driver)
{
    memset(&listed, 0, sizeof(listed));
    if (n > MAX_FAKE_DEVICES)
        n = MAX_FAKE_DEVICES;
    snprintf(listed.driver, sizeof(listed.driver), "%s", driver ? driver : "fakegpu");
    for (unsigned i = 0; i < n; i++) {
        drmDevice *d = &listed.devices[i];

        listed.bus[i] = (drmPciBusInfo){ .domain = devices[i].domain, .bus = devices[i].bus,
                                         .dev = devices[i].dev, .func = devices[i].func };
        listed.info[i] = (drmPciDeviceInfo){ .vendor_id = 0x1002, .device_id = 0x744c };
        snprintf(listed.render[i], sizeof(listed.render[i]), "%s", devices[i].render_node);
        listed.nodes[i][DRM_NODE_RENDER] = listed.render[i];
        d->nodes = listed.nodes[i];
        d->available_nodes = 1 << DRM_NODE_RENDER;
        if (devices[i].card_node) {
            snprintf(listed.card[i], sizeof(listed.card[i]), "%s", devices[i].card_node);
            listed.nodes[i][DRM_NODE_PRIMARY] = listed.card[i];
            d->available_nodes |= 1 << DRM_NODE_PRIMARY;
        }
        d->bustype = DRM_BUS_PCI;
        d->businfo.pci = &listed.bus[i];
        d->deviceinfo.pci = &listed.info[i];
    }
    listed.count = n;
}

int drmGetDevices2(uint32_t flags, drmDevicePtr devices[], int max)
{
    int (*real)(uint32_t, drmDevicePtr[], int);
    int n = (int)listed.count;

    if (!listed.count) {
        real = (int (*)(uint32_t, drmDevicePtr[], int))dlsym(RTLD_NEXT, "drmGetDevices2");
        return real ? real(flags, devices, max) : -ENODEV;
    }
    if (!devices)
        return n;
    for (int i = 0; i < n && i < max; i++)
        devices[i] = &listed.devices[i];
    return n < max ? n : max;
}

void drmFreeDevices(drmDevicePtr devices[], int count)
{
    void (*real)(drmDevicePtr[], int);

    if (count > 0 && devices[0] >= listed.devices && devices[0] < listed.devices + MAX_FAKE_DEVICES)
        return;                          /* the fake's own: nothing was allocated */
    real = (void (*)(drmDevicePtr[], int))dlsym(RTLD_NEXT, "drmFreeDevices");
    if (real)
        real(devices, count);
}

/* Allocated the way libdrm's drmFreeVersion frees it (one block per field). */
drmVersionPtr drmGetVersion(int fd)
{
    drmVersionPtr (*real)(int);
    drmVersionPtr v;

    if (!listed.count) {
        real = (drmVersionPtr (*)(int))dlsym(RTLD_NEXT, "drmGetVersion");
        return real ? real(fd) : NULL;
    }
    if (!(v = calloc(1, sizeof(*v))))
        return NULL;
    v->version_major = 1;
    v->name = strdup(listed.driver);
    v->name_len = (int)strlen(listed.driver);
    v->date = strdup("20240101");
    v->date_len = 8;
    v->desc = strdup("fake PCI GPU");
    v->desc_len = 12;
    if (!v->name || !v->date || !v->desc) {
        drmFreeVersion(v);
        return NULL;
    }
    return v;
}

/* Whether a handle of any file still names the timeline `root`. */
static bool timeline_named(uint32_t root)
{
    for (uint32_t h = 1; h <= FAKE_MAX_SYNCOBJS; h++)
        if (syncobjs[h].live && root_of(h) == root)
            return true;
    return false;
}

void fake_drm_forget_shared_files(void)
{
    fake_drm_lock();
    /* a syncobj file holds its timeline, and the timeline its
     * registrations: a file of a timeline no handle names goes */
    for (unsigned i = 0; i < FAKE_MAX_SHARED_FILES; i++)
        if (shared_files[i].fd >= 0 && shared_files[i].syncobj && !timeline_named(shared_files[i].target)) {
            if (syncobjs[shared_files[i].target].refs)
                syncobj_unref(shared_files[i].target);
            close(shared_files[i].fd);
            shared_files[i].fd = -1;
        }
    if (!fake_drm.live_objects)
        shared_files_reset();
    fake_drm_unlock();
}

bool fake_drm_holds_fd(int fd)
{
    if (fd < 0)
        return false;
    for (unsigned i = 0; i < FAKE_MAX_SHARED_FILES; i++)
        if (shared_files[i].fd == fd)
            return true;
    for (unsigned i = 0; i < FAKE_MAX_REGISTRATIONS; i++)
        if (registrations[i].fd == fd)
            return true;
    return false;
}
