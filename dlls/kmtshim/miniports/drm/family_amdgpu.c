/*
 * DRM miniport, amdgpu family, through libdrm_amdgpu (loaded when the
 * first amdgpu adapter starts: drm_amdgpu_lib.h).
 *
 *   create        amdgpu_bo_alloc in GTT, or in VRAM (CPU_ACCESS_REQUIRED,
 *                 since every allocation may be locked) for
 *                 KMT_DRM_ALLOCATION_DEVICE_LOCAL; its KMS handle is the
 *                 GEM handle reported to the UMD
 *   existing sysmem  amdgpu_create_bo_from_user_mem (userptr, zero copy)
 *   import        amdgpu_bo_import of the dma-buf (libdrm_amdgpu owns the
 *                 file's handles), then a VA as create gives one
 *   GPU VA        every object, userptr ones too, gets a range of the
 *                 library's VA manager (amdgpu_va_range_alloc, general
 *                 range, 64 KiB-aligned for VRAM: the kernel needs page
 *                 alignment only, a larger one lets it use larger PTE
 *                 fragments) mapped readable, writeable and
 *                 executable into the fd's VM (amdgpu_bo_va_op_raw MAP): the
 *                 allocation's GpuVirtualAddress.  Destroy unmaps, frees the
 *                 range, then the object (Mesa's order: the range is free
 *                 for reuse only once nothing is mapped there)
 *   map           amdgpu_bo_cpu_map (always read-write: libdrm_amdgpu maps
 *                 once per object and shares the mapping)
 *   lock waits    amdgpu_bo_wait_for_idle (timeout 0 with DonotWait)
 *   memory        amdgpu_query_heap_info for VRAM and GTT; APUs (FUSION)
 *                 are UMA
 *   contexts      AMDGPU_CTX (ALLOC_CTX / FREE_CTX, normal priority), one per
 *                 D3D context (its id goes to the UMD)
 *   submit        one DRM_IOCTL_AMDGPU_CS on the context: an IB chunk (GFX
 *                 ring 0) at the command buffer's GPU VA, a BO_HANDLES chunk
 *                 (the objects the UMD named plus the one holding the IB),
 *                 timeline syncobj wait and signal chunks (the ring point
 *                 first).  The ioctl itself, not amdgpu_cs_submit_raw2: that
 *                 takes an amdgpu_context_handle, and the library can neither
 *                 wrap the raw context id the UMD is told nor hand its own
 *                 out; it is the same ioctl on the same fd.  A command
 *                 buffer outside every object is refused (-EFAULT: a page
 *                 fault).  A legacy one (CPU memory) is copied into an IB
 *                 object of the family's own (drm_batch.c), padded with
 *                 one-dword NOPs to 32 bytes, freed once its context
 *                 completed it (amdgpu would defer the unmap's page-table
 *                 clear behind the VM's submissions anyway; keeping it
 *                 keeps the range out of libdrm's VA manager meanwhile).
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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>
#include <xf86drm.h>
#include <amdgpu.h>
#include <amdgpu_drm.h>

#include "drm_amdgpu_lib.h"

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"
#include "base/kmt_time.h"

#define VRAM_VA_ALIGNMENT (64u * 1024u)  /* a PTE fragment hint: amdgpu_vm_bo_map needs pages only */
#define VA_FLAGS (AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE | AMDGPU_VM_PAGE_EXECUTABLE)
#define IB_MAX_DWORDS 0xfffffu           /* INDIRECT_BUFFER's 20-bit length */
#define IB_PAD_BYTES 32u                 /* AMDGPU_INFO_HW_IP_INFO's ib_size_alignment for GFX */
#define PKT3_NOP_PAD 0xffff1000u         /* PACKET3(NOP, 0x3fff): a NOP of its header alone */
#define CS_MAX_BOS 257u                  /* the allocation list (drm_submit.c) and the IB's object */

/* The syncobj chunk and the job's points are one layout: handed over as they are. */
_Static_assert(sizeof(struct drm_amdgpu_cs_chunk_syncobj) == sizeof(struct kdrm_sync_point) &&
               offsetof(struct drm_amdgpu_cs_chunk_syncobj, handle) == offsetof(struct kdrm_sync_point, handle) &&
               offsetof(struct drm_amdgpu_cs_chunk_syncobj, flags) == offsetof(struct kdrm_sync_point, flags) &&
               offsetof(struct drm_amdgpu_cs_chunk_syncobj, point) == offsetof(struct kdrm_sync_point, point),
               "drm_amdgpu_cs_chunk_syncobj");

struct amd_state {
    amdgpu_device_handle dev;
    pthread_mutex_t lock;                /* a leaf */
    struct list mapped;                  /* struct amd_bo.entry: every object with a VA */
};

/* kdrm_bo.family_bo */
struct amd_bo {
    amdgpu_bo_handle h;
    amdgpu_va_handle range;
    UINT64 va, span;
    UINT32 handle;
    struct list entry;                   /* amd_state.mapped */
};

static struct amd_state *state(struct kdrm_adapter *a)
{
    return a->family_data;
}

static amdgpu_device_handle dev_of(struct kdrm_adapter *a)
{
    return state(a)->dev;
}

void *kdrm_amdgpu_device(struct kdrm_adapter *a)
{
    return a->family_data ? dev_of(a) : NULL;
}

static amdgpu_bo_handle bo_of(const struct kdrm_bo *bo)
{
    return ((const struct amd_bo *)bo->family_bo)->h;
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

static int device_open(struct kdrm_adapter *a, amdgpu_device_handle *out)
{
    uint32_t major, minor;
    int err = kdrm_fault_check("amdgpu_device_initialize");

    if (err || (err = amdgpu_device_initialize(a->fd, &major, &minor, out)))
        return err < 0 ? err : -err;
    return 0;
}

/* libdrm_amdgpu keeps one device per GPU per process, on the file of the
 * first opener, and a fork() child inherits that list: there
 * amdgpu_device_initialize would hand back the parent's device, whose fd is
 * the parent's open file, so the child's buffers, contexts and VM mappings
 * would land among the parent's.  A child of a process that had one open
 * therefore does not start amdgpu adapters. */
static atomic_uint amd_devices;          /* libdrm_amdgpu devices we hold */
static bool amd_inherited;

void kdrm_amdgpu_forget(void)
{
    if (atomic_load(&amd_devices))
        amd_inherited = true;
    atomic_store(&amd_devices, 0);
}

static int amd_start(struct kdrm_adapter *a)
{
    static atomic_flag told = ATOMIC_FLAG_INIT;
    struct amd_state *s;
    const char *why;
    int err, fd;

    if (!kdrm_amdgpu_lib_load(&why)) {
        if (!atomic_flag_test_and_set(&told))
            kdrm_trace(a, KMT_TRACE_ERR, __func__, "amdgpu adapters not started: %s: install libdrm-amdgpu1 "
                       "(Debian, Ubuntu) or your system's " KDRM_AMDGPU_SONAME "\n", why);
        return -ELIBACC;
    }
    if (amd_inherited) {
        kdrm_trace(a, KMT_TRACE_ERR, __func__,
                   "not started: this process is a fork() child of one that had libdrm_amdgpu devices "
                   "open, and libdrm_amdgpu would give it the parent's (its buffers would go on the "
                   "parent's file)\n");
        return -EBUSY;
    }
    if (!(s = calloc(1, sizeof(*s))))
        return -ENOMEM;
    /* counted before libdrm_amdgpu is called (and uncounted only after it
     * let the device go): a fork() while it works on its device list, or
     * between its return and here, makes a child that must not start one */
    atomic_fetch_add(&amd_devices, 1);
    if ((err = device_open(a, &s->dev)) < 0) {
        atomic_fetch_sub(&amd_devices, 1);
        free(s);
        return err;
    }
    if ((fd = amdgpu_device_get_fd(s->dev)) < 0) {
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "libdrm_amdgpu's device has no fd (%d)\n", fd);
        amdgpu_device_deinitialize(s->dev);
        atomic_fetch_sub(&amd_devices, 1);
        free(s);
        return -ENODEV;
    }
    if (!same_file(fd, a->fd))
        kdrm_trace(a, KMT_TRACE_TRACE, __func__,
                   "libdrm_amdgpu already had this GPU open on another file: buffers, contexts and "
                   "syncobjs go on its fd %d, not on the adapter's fd %d\n", fd, a->fd);
    pthread_mutex_init(&s->lock, NULL);
    list_init(&s->mapped);
    a->family_data = s;
    a->fd = fd;
    a->gpu_va = true;                    /* every amdgpu VM takes mappings */
    if (a->caps & KMT_DRM_CAP_FENCES)
        a->caps |= KMT_DRM_CAP_SUBMIT;
    return 0;
}

/* The device's fd may close with it: the adapter's own fd comes back first. */
static void amd_stop(struct kdrm_adapter *a)
{
    struct amd_state *s = state(a);

    a->fd = node_fd(a);
    a->gpu_va = false;
    amdgpu_device_deinitialize(s->dev);
    atomic_fetch_sub(&amd_devices, 1);
    pthread_mutex_destroy(&s->lock);
    free(s);
    a->family_data = NULL;
}

/* Reserves a range of the library's VA manager (locked inside) and maps
 * the object there. */
static int va_map(struct kdrm_adapter *a, struct amd_bo *ab, UINT64 alignment)
{
    struct amd_state *s = state(a);
    int err = kdrm_fault_check("amdgpu_va_range_alloc");

    if (err || (err = amdgpu_va_range_alloc(s->dev, amdgpu_gpu_va_range_general, ab->span, alignment, 0, &ab->va,
                                            &ab->range, 0)))
        return err < 0 ? err : -ENOMEM;
    if ((err = kdrm_fault_check("amdgpu_bo_va_op")) ||
        (err = amdgpu_bo_va_op_raw(s->dev, ab->h, 0, ab->span, ab->va, VA_FLAGS, AMDGPU_VA_OP_MAP))) {
        amdgpu_va_range_free(ab->range);
        return err < 0 ? err : -EIO;
    }
    pthread_mutex_lock(&s->lock);
    list_add_tail(&s->mapped, &ab->entry);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Unmapped before the range goes back: a later object may get it. */
static void va_unmap(struct kdrm_adapter *a, struct amd_bo *ab)
{
    struct amd_state *s = state(a);
    int err;

    pthread_mutex_lock(&s->lock);
    list_remove(&ab->entry);
    pthread_mutex_unlock(&s->lock);
    if ((err = amdgpu_bo_va_op_raw(s->dev, ab->h, 0, ab->span, ab->va, VA_FLAGS, AMDGPU_VA_OP_UNMAP)))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "unmap of %u at %#llx failed: %d\n", ab->handle,
                   (unsigned long long)ab->va, err);
    amdgpu_va_range_free(ab->range);
}

/* Exports the object's handle and gives it its VA; h is the caller's
 * still on failure. */
static int give_va(struct kdrm_adapter *a, struct kdrm_bo *bo, amdgpu_bo_handle h, UINT64 alignment)
{
    struct amd_bo *ab = calloc(1, sizeof(*ab));
    int err = ab ? kdrm_fault_check("amdgpu_bo_export") : -ENOMEM;

    if (!err && (err = amdgpu_bo_export(h, amdgpu_bo_handle_type_kms, &ab->handle)))
        err = err < 0 ? err : -EIO;
    if (!err) {
        ab->h = h;
        ab->span = (bo->size + a->page_size - 1) & ~(UINT64)(a->page_size - 1);
        err = va_map(a, ab, alignment);
    }
    if (err) {
        free(ab);
        return err;
    }
    bo->family_bo = ab;
    bo->handle = ab->handle;
    bo->gpu_va = ab->va;
    return 0;
}

/* give_va for a new object: frees it on failure. */
static int adopt(struct kdrm_adapter *a, struct kdrm_bo *bo, amdgpu_bo_handle h, UINT64 alignment)
{
    int err = give_va(a, bo, h, alignment);

    if (err)
        amdgpu_bo_free(h);
    return err;
}

static UINT64 va_alignment(struct kdrm_adapter *a, bool vram)
{
    return vram && VRAM_VA_ALIGNMENT > a->page_size ? VRAM_VA_ALIGNMENT : a->page_size;
}

/* libdrm_amdgpu keeps one record per GEM handle of its file and closes the
 * handle with the record's last reference, so a dma-buf comes in through
 * amdgpu_bo_import (a buffer the file has already gives that record, one
 * reference more), never through a PRIME_FD_TO_HANDLE of our own that a
 * GEM_CLOSE would undo.  The record waits in family_bo for import or
 * import_drop. */
static int amd_import_fd(struct kdrm_adapter *a, struct kdrm_bo *bo, int fd, UINT32 *handle)
{
    struct amdgpu_bo_import_result r;
    int err = kdrm_fault_check("amdgpu_bo_import");

    if (!err && (err = amdgpu_bo_import(dev_of(a), amdgpu_bo_handle_type_dma_buf_fd, (uint32_t)fd, &r)))
        err = err == -1 && errno ? -errno : err < 0 ? err : -EIO;   /* drmPrimeFDToHandle's -1 */
    if (err)
        return err;
    if ((err = amdgpu_bo_export(r.buf_handle, amdgpu_bo_handle_type_kms, handle))) {
        amdgpu_bo_free(r.buf_handle);
        return err < 0 ? err : -EIO;
    }
    bo->family_bo = r.buf_handle;
    return 0;
}

static void amd_import_drop(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    (void)a;
    amdgpu_bo_free(bo->family_bo);
    bo->family_bo = NULL;
}

/* A new imported object: its VA, as create gives one of its placement's
 * alignment. */
static int amd_import(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    bool vram = a->memory.discrete && (bo->flags & KMT_DRM_ALLOCATION_DEVICE_LOCAL);

    return give_va(a, bo, bo->family_bo, va_alignment(a, vram));
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
    return adopt(a, bo, h, va_alignment(a, vram));
}

static int amd_create_userptr(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem)
{
    amdgpu_bo_handle h;
    int err = kdrm_fault_check("amdgpu_create_bo_from_user_mem");

    if (err || (err = amdgpu_create_bo_from_user_mem(dev_of(a), mem, bo->size, &h)))
        return err;
    if ((err = adopt(a, bo, h, a->page_size)) < 0)
        return err;
    bo->backing = KMT_DRM_BACKING_USERPTR;
    return 0;
}

static void amd_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    struct amd_bo *ab = bo->family_bo;
    int err;

    va_unmap(a, ab);
    if ((err = amdgpu_bo_free(ab->h)))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "amdgpu_bo_free(%u) failed: %d\n", bo->handle, err);
    free(ab);
}

static int amd_map(struct kdrm_adapter *a, struct kdrm_bo *bo, int prot, void **ptr)
{
    int err = kdrm_fault_check("amdgpu_bo_cpu_map");

    if (err || (err = amdgpu_bo_cpu_map(bo_of(bo), ptr)))
        return err;
    return 0;
}

static void amd_unmap(struct kdrm_adapter *a, struct kdrm_bo *bo, void *ptr)
{
    amdgpu_bo_cpu_unmap(bo_of(bo));
}

static int amd_cpu_begin(struct kdrm_adapter *a, struct kdrm_bo *bo, DXGK_LOCKFLAGS flags)
{
    bool busy = false;
    int err;

    if (flags.IgnoreSync)
        return 0;
    if ((err = kdrm_fault_check("amdgpu_bo_wait_for_idle")) ||
        (err = amdgpu_bo_wait_for_idle(bo_of(bo), flags.DonotWait ? 0 : AMDGPU_TIMEOUT_INFINITE, &busy)))
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

/* The GEM handle of the object whose mapping holds [va, va + size), or -EFAULT. */
static int ib_holder(struct kdrm_adapter *a, UINT64 va, UINT size, UINT32 *handle)
{
    struct amd_state *s = state(a);
    struct amd_bo *ab;
    int err = -EFAULT;

    pthread_mutex_lock(&s->lock);
    LIST_FOR_EACH_ENTRY(ab, &s->mapped, struct amd_bo, entry)
        if (va >= ab->va && va - ab->va < ab->span) {
            if (size <= ab->span - (va - ab->va)) {
                *handle = ab->handle;
                err = 0;
            }
            break;
        }
    pthread_mutex_unlock(&s->lock);
    return err;
}

/* The job's objects, each once, and the IB's. */
static UINT bo_list(const struct kdrm_job *job, UINT32 holder, struct drm_amdgpu_bo_list_entry *list)
{
    UINT n = 0;
    bool has_holder = false;

    for (UINT i = 0; i < job->nbos && n < CS_MAX_BOS - 1; i++) {
        list[n++] = (struct drm_amdgpu_bo_list_entry){ .bo_handle = job->bos[i] };
        has_holder |= job->bos[i] == holder;
    }
    if (!has_holder)
        list[n++] = (struct drm_amdgpu_bo_list_entry){ .bo_handle = holder };
    return n;
}

static struct drm_amdgpu_cs_chunk chunk(UINT32 id, const void *data, size_t size)
{
    return (struct drm_amdgpu_cs_chunk){ .chunk_id = id, .length_dw = (UINT32)(size / 4),
                                         .chunk_data = (uintptr_t)data };
}

/* One CS ioctl: the IB at cmd_va on GFX ring 0, the objects, the waits and the signals. */
static int cs_ioctl(struct kdrm_adapter *a, const struct kdrm_context *c, const struct kdrm_job *job)
{
    struct drm_amdgpu_bo_list_entry list[CS_MAX_BOS];
    struct drm_amdgpu_cs_chunk_ib ib = { .va_start = job->cmd_va, .ib_bytes = job->size, .ip_type = AMDGPU_HW_IP_GFX };
    struct drm_amdgpu_bo_list_in bos = { .operation = ~0u, .list_handle = ~0u,
                                         .bo_info_size = sizeof(list[0]), .bo_info_ptr = (uintptr_t)list };
    struct drm_amdgpu_cs_chunk chunks[4];
    UINT64 chunk_ptrs[4];
    union drm_amdgpu_cs cs;
    UINT32 holder;
    UINT n = 0;
    int err;

    if ((err = ib_holder(a, job->cmd_va, job->size, &holder)) < 0)
        return err;
    bos.bo_number = bo_list(job, holder, list);
    chunks[n++] = chunk(AMDGPU_CHUNK_ID_IB, &ib, sizeof(ib));
    chunks[n++] = chunk(AMDGPU_CHUNK_ID_BO_HANDLES, &bos, sizeof(bos));
    if (job->nwaits)
        chunks[n++] = chunk(AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT, job->waits, job->nwaits * sizeof(job->waits[0]));
    chunks[n++] = chunk(AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL, job->signals,
                        job->nsignals * sizeof(job->signals[0]));
    for (UINT i = 0; i < n; i++)
        chunk_ptrs[i] = (uintptr_t)&chunks[i];
    memset(&cs, 0, sizeof(cs));
    cs.in.ctx_id = c->kernel_ctx;
    cs.in.num_chunks = n;
    cs.in.chunks = (uintptr_t)chunk_ptrs;
    return kdrm_ioctl(a->fd, DRM_IOCTL_AMDGPU_CS, &cs, "AMDGPU_CS");
}

/* PM4 IBs are whole dwords at a dword-aligned address (the kernel checks
 * neither: a length past 20 bits runs into the INDIRECT_BUFFER packet's
 * other fields, an unaligned address hits a BUG_ON or WARN in emit_ib). */
static bool ib_shape_ok(const struct kdrm_job *job)
{
    return job->size && !(job->size % 4) && job->size / 4 <= IB_MAX_DWORDS && !(job->cmd_va % 4);
}

/* A legacy stream arrives as drm_batch.c's copy (kdrm_family.batch). */
static int amd_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job)
{
    if (!ib_shape_ok(job))
        return -EINVAL;
    return cs_ioctl(a, c, job);
}

/* AMDGPU_INFO_TIMESTAMP, the GPU's free-running counter, at the rate the
 * device info gives in kHz (gpu_counter_freq, as Mesa's radv reads it). */
static int amd_gpu_clock(struct kdrm_adapter *a, struct kdrm_gpu_clock *out)
{
    struct amdgpu_gpu_info info;
    uint64_t before, ticks = 0;
    int err;

    if ((err = amdgpu_query_gpu_info(dev_of(a), &info)))
        return err < 0 ? err : -EIO;
    if (!info.gpu_counter_freq)
        return -EOPNOTSUPP;
    before = kmt_qpc_now();
    if ((err = amdgpu_query_info(dev_of(a), AMDGPU_INFO_TIMESTAMP, sizeof(ticks), &ticks)))
        return err < 0 ? err : -EIO;
    out->cpu_qpc = before + (kmt_qpc_now() - before) / 2;
    out->gpu = ticks;
    out->frequency = (uint64_t)info.gpu_counter_freq * 1000;
    return 0;
}

const struct kdrm_family kdrm_family_amdgpu = {
    .name = "amdgpu",
    .has_userptr = true,
    .start = amd_start,
    .stop = amd_stop,
    .create = amd_create,
    .create_userptr = amd_create_userptr,
    .import = amd_import,
    .import_fd = amd_import_fd,
    .import_drop = amd_import_drop,
    .destroy = amd_destroy,
    .map = amd_map,
    .unmap = amd_unmap,
    .cpu_begin = amd_cpu_begin,
    .memory = amd_memory,
    .gpu_clock = amd_gpu_clock,
    .ctx_create = amd_ctx_create,
    .ctx_destroy = amd_ctx_destroy,
    .submit = amd_submit,
    /* write-combined GTT, padded with one-dword NOPs to the GFX ring's IB
     * size alignment as Mesa pads its own */
    .batch = { .flags = KMT_DRM_ALLOCATION_WRITECOMBINE, .pad_to = IB_PAD_BYTES, .pad = PKT3_NOP_PAD },
};
