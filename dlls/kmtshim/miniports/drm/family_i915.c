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
 *                 context (its id goes to the UMD); each has a full PPGTT
 *                 (an address space) of its own
 *   GPU VA        with softpin, a full PPGTT and timeline fences (GETPARAM at
 *                 start), every object gets an address from the adapter's
 *                 allocator (drm_gpuva.c): 4 KiB granules on integrated
 *                 parts (execbuffer takes page-aligned, canonical offsets),
 *                 2 MiB on discrete ones (local memory needs 64 KiB, or 2 MiB
 *                 with compact page tables, and local and system objects
 *                 may not share a 2 MiB page table: i915_vma.c memory
 *                 coloring).  Addresses stay below 2^47 (canonical as they
 *                 are) and inside the context's GTT_SIZE.  Without those
 *                 features objects have no VA and submissions fail with
 *                 STATUS_NOT_SUPPORTED.
 *   submit        one EXECBUFFER2 on the context's GEM context, render
 *                 engine (contexts have no engine map: the legacy ring
 *                 map), every named object softpinned at its VA, the batch
 *                 (the object holding the stream's VA, or for a legacy
 *                 submission a copy in an object of our own, kept until its
 *                 context completed it: drm_batch.c) last, waits and
 *                 signals as timeline fences (the ring point among them)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>
#include <i915_drm.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"
#include "base/kmt_time.h"

/* GPU VA: from 2 MiB (never 0, aligned for every granule) to at most the
 * lower half of the 48-bit space, where addresses are canonical as they are. */
#define VA_BASE (2ull << 20)
#define VA_TOP (1ull << 47)
#define VA_ALIGN_INTEGRATED 4096ull
#define VA_ALIGN_DISCRETE (2ull << 20)
#define MI_BATCH_BUFFER_END (0x0au << 23)

struct i915_state {
    bool has_llc;
    bool discrete;
    struct drm_i915_gem_memory_class_instance local, system;
    struct kdrm_gpuva va;                /* while a->gpu_va */
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

static int getparam(struct kdrm_adapter *a, int param)
{
    int value = 0;
    struct drm_i915_getparam gp = { .param = param, .value = &value };

    return kdrm_ioctl(a->fd, DRM_IOCTL_I915_GETPARAM, &gp, "I915_GETPARAM") < 0 ? 0 : value;
}

/* The size of a context's address space where the kernel has what GPU VA
 * needs, else 0: softpin, a full PPGTT per context (HAS_ALIASING_PPGTT
 * answers INTEL_PPGTT: 2 is full) and timeline fences in EXECBUFFER2. */
static UINT64 vm_size(struct kdrm_adapter *a)
{
    struct drm_i915_gem_context_param p = { .ctx_id = 0, .param = I915_CONTEXT_PARAM_GTT_SIZE };

    if (!getparam(a, I915_PARAM_HAS_EXEC_SOFTPIN) || getparam(a, I915_PARAM_HAS_ALIASING_PPGTT) < 2 ||
        !getparam(a, I915_PARAM_HAS_EXEC_TIMELINE_FENCES))
        return 0;
    if (kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM, &p, "I915_GEM_CONTEXT_GETPARAM") < 0)
        return 0;
    return p.value < VA_TOP ? p.value : VA_TOP;
}

static void start_gpu_va(struct kdrm_adapter *a, struct i915_state *s)
{
    UINT64 top = vm_size(a);

    if (!top || kdrm_gpuva_init(&s->va, VA_BASE, top, s->discrete ? VA_ALIGN_DISCRETE : VA_ALIGN_INTEGRATED) < 0) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__,
                   "no softpin, full PPGTT or timeline fences: no GPU VA, submissions are not supported\n");
        return;
    }
    a->gpu_va = true;
    if (a->caps & KMT_DRM_CAP_FENCES)
        a->caps |= KMT_DRM_CAP_SUBMIT;
}

static int i915_start(struct kdrm_adapter *a)
{
    struct i915_state *s = calloc(1, sizeof(*s));

    if (!s)
        return -ENOMEM;
    s->has_llc = getparam(a, I915_PARAM_HAS_LLC) != 0;
    find_regions(a, s);
    start_gpu_va(a, s);
    a->family_data = s;
    return 0;
}

static void i915_stop(struct kdrm_adapter *a)
{
    if (a->gpu_va)
        kdrm_gpuva_fini(&state(a)->va);
    a->gpu_va = false;
    free(a->family_data);
    a->family_data = NULL;
}

/* The object's address, or none (and no object) where the space is full. */
static int give_va(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    int err;

    if (!a->gpu_va)
        return 0;
    if ((err = kdrm_gpuva_alloc(&state(a)->va, bo->handle, bo->size, 0, &bo->gpu_va)) < 0) {
        kdrm_gem_destroy(a, bo);
        bo->gpu_va = 0;
    }
    return err;
}

/* The address is free once the object is closed.  An object given it next
 * is softpinned there, and where a context's VM still holds the old
 * object's VMA, busy, EXECBUFFER2 blocks until that work retires: the
 * first reservation pass (PIN_NONBLOCK) gives up on an active VMA, the
 * second evicts it and unbinding waits for it (eb_reserve,
 * i915_gem_evict_for_node, __i915_vma_unbind).  Allocations are freed
 * after their use; a legacy batch is kept until done (copy_batch). */
static void i915_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    kdrm_gem_destroy(a, bo);
    if (bo->gpu_va)
        kdrm_gpuva_free(&state(a)->va, bo->gpu_va);
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
    return give_va(a, bo);
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
    return give_va(a, bo);
}

static int i915_create_userptr(struct kdrm_adapter *a, struct kdrm_bo *bo, void *mem)
{
    struct drm_i915_gem_userptr args = { .user_ptr = (uintptr_t)mem, .user_size = bo->size };
    int err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_USERPTR, &args, "I915_GEM_USERPTR");

    if (err < 0)
        return err;
    bo->handle = args.handle;
    bo->backing = KMT_DRM_BACKING_USERPTR;
    return give_va(a, bo);
}

/* An imported object: an address of its own size, as create gives. */
static int i915_import(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    return a->gpu_va ? kdrm_gpuva_alloc(&state(a)->va, bo->handle, bo->size, 0, &bo->gpu_va) : 0;
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

/* The core drained the context before destroying it: its batches are done. */
static void i915_ctx_destroy(struct kdrm_adapter *a, struct kdrm_context *c)
{
    struct drm_i915_gem_context_destroy args = { .ctx_id = c->kernel_ctx };

    if (drmIoctl(a->fd, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &args))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "GEM_CONTEXT_DESTROY(%u) failed\n", c->kernel_ctx);
}

/* ---- submission ---------------------------------------------------------- */

/* One EXECBUFFER2 being put together: the objects (batch last, where the
 * kernel looks for it without I915_EXEC_BATCH_FIRST) and the timeline
 * fences.  A legacy stream arrives as drm_batch.c's copy. */
struct i915_exec {
    struct drm_i915_gem_exec_object2 *objects;
    UINT count;
    struct drm_i915_gem_exec_fence *fences;
    UINT64 *points;
    UINT nfences;
    struct kdrm_gpuva_range batch;
    UINT32 batch_start, batch_len;
};

static UINT64 round8(UINT64 v)
{
    return (v + 7) & ~7ull;
}

/* The object holding [cmd_va, cmd_va + size): outside every object the GPU
 * would fault, so the submission is refused as a page fault (EFAULT).  The
 * kernel wants batch_start_offset and batch_len in 8-byte units
 * (i915_gem_check_execbuffer); objects are whole pages, so rounding the
 * length up stays inside the object. */
static int find_batch(struct kdrm_adapter *a, const struct kdrm_job *job, struct i915_exec *x)
{
    UINT64 start;

    if (!kdrm_gpuva_find_address(&state(a)->va, job->cmd_va, &x->batch))
        return -EFAULT;
    start = job->cmd_va - x->batch.start;
    if (job->size > x->batch.size - start)
        return -EFAULT;
    if (!job->size || (start & 7) || start > UINT32_MAX || round8(job->size) > UINT32_MAX)
        return -EINVAL;
    x->batch_start = (UINT32)start;
    x->batch_len = (UINT32)round8(job->size);
    return 0;
}

/* Every object at its own address.  Each but the batch is marked written:
 * the stream's writes are not known here, and the kernel orders later
 * users of an object (other contexts, GEM_WAIT at Lock) by the fences it
 * adds for them; the batch may not be (a self-modifying batch is EINVAL,
 * eb_add_vma). */
static void add_object(struct i915_exec *x, const struct kdrm_gpuva_range *r, bool batch)
{
    struct drm_i915_gem_exec_object2 *o = &x->objects[x->count++];

    o->handle = r->handle;
    o->offset = r->start;
    o->flags = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS | (batch ? 0 : EXEC_OBJECT_WRITE);
}

/* A handle the miniport gave no address (the UMD's own object) cannot be
 * softpinned: refused. */
static int list_objects(struct kdrm_adapter *a, const struct kdrm_job *job, struct i915_exec *x)
{
    struct kdrm_gpuva_range r;

    for (UINT i = 0; i < job->nbos; i++) {
        if (job->bos[i] == x->batch.handle)
            continue;
        if (!kdrm_gpuva_find_handle(&state(a)->va, job->bos[i], &r))
            return -EINVAL;
        add_object(x, &r, false);
    }
    add_object(x, &x->batch, true);
    return 0;
}

static void add_fences(const struct kdrm_sync_point *p, UINT n, UINT32 flags, struct i915_exec *x)
{
    for (UINT i = 0; i < n; i++) {
        x->fences[x->nfences] = (struct drm_i915_gem_exec_fence){ .handle = p[i].handle, .flags = flags };
        x->points[x->nfences++] = p[i].point;
    }
}

static int execbuffer(struct kdrm_adapter *a, struct kdrm_context *c, struct i915_exec *x)
{
    struct drm_i915_gem_execbuffer_ext_timeline_fences ext = {
        .base = { .name = DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES },
        .fence_count = x->nfences,
        .handles_ptr = (uintptr_t)x->fences,
        .values_ptr = (uintptr_t)x->points,
    };
    struct drm_i915_gem_execbuffer2 eb = {
        .buffers_ptr = (uintptr_t)x->objects,
        .buffer_count = x->count,
        .batch_start_offset = x->batch_start,
        .batch_len = x->batch_len,
        /* the extension chain travels in cliprects_ptr */
        .flags = I915_EXEC_RENDER | I915_EXEC_NO_RELOC | I915_EXEC_USE_EXTENSIONS,
        .cliprects_ptr = (uintptr_t)&ext,
        .rsvd1 = c->kernel_ctx,
    };

    return kdrm_ioctl(a->fd, DRM_IOCTL_I915_GEM_EXECBUFFER2, &eb, "I915_GEM_EXECBUFFER2");
}

static void exec_free(struct i915_exec *x)
{
    free(x->objects);
    free(x->fences);
    free(x->points);
}

static int i915_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job)
{
    struct i915_exec x = { 0 };
    UINT nfences = job->nwaits + job->nsignals;
    int err;

    if (!a->gpu_va)
        return -ENOSYS;
    x.objects = calloc(job->nbos + 1, sizeof(*x.objects));
    x.fences = calloc(nfences, sizeof(*x.fences));
    x.points = calloc(nfences, sizeof(*x.points));
    if (!x.objects || !x.fences || !x.points)
        err = -ENOMEM;
    else if (!(err = find_batch(a, job, &x)) &&
             !(err = list_objects(a, job, &x))) {
        add_fences(job->waits, job->nwaits, I915_EXEC_FENCE_WAIT, &x);
        add_fences(job->signals, job->nsignals, I915_EXEC_FENCE_SIGNAL, &x);
        err = execbuffer(a, c, &x);
    }
    exec_free(&x);
    return err;
}

/* The render ring's timestamp register, as Mesa's anv and iris read it
 * (I915_REG_READ of RCS_TIMESTAMP, 64 bits at once), at the command
 * streamer's timestamp frequency.  It counts 36 bits (Mesa's
 * TIMESTAMP_BITS); drm_clock.c extends it across the wrap. */
#define RCS_TIMESTAMP 0x2358
#define RCS_TIMESTAMP_BITS 36

static int i915_gpu_clock(struct kdrm_adapter *a, struct kdrm_gpu_clock *out)
{
    struct drm_i915_reg_read reg = { .offset = RCS_TIMESTAMP | I915_REG_READ_8B_WA };
    int freq = getparam(a, I915_PARAM_CS_TIMESTAMP_FREQUENCY);
    uint64_t before;
    int err;

    if (freq <= 0)
        return -EOPNOTSUPP;              /* before Linux 4.16 */
    before = kmt_qpc_now();
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_I915_REG_READ, &reg, "I915_REG_READ")) < 0)
        return err;
    out->cpu_qpc = before + (kmt_qpc_now() - before) / 2;
    out->gpu = reg.val;
    out->width = RCS_TIMESTAMP_BITS;
    out->frequency = (uint64_t)freq;
    return 0;
}

const struct kdrm_family kdrm_family_i915 = {
    .name = "i915",
    .has_userptr = true,
    .start = i915_start,
    .stop = i915_stop,
    .create = i915_create,
    .import = i915_import,
    .create_userptr = i915_create_userptr,
    .destroy = i915_destroy,
    .map = i915_map,
    .unmap = kdrm_unmap_plain,
    .cpu_begin = i915_cpu_begin,
    .memory = i915_memory,
    .gpu_clock = i915_gpu_clock,
    .ctx_create = i915_ctx_create,
    .ctx_destroy = i915_ctx_destroy,
    .submit = i915_submit,
    /* Render's DMA buffer carries no batch end: one after it, MI_NOOP up
     * to the 8-byte length the kernel wants */
    .batch = { .end = MI_BATCH_BUFFER_END, .pad_to = 8, .pad = 0 },
};
