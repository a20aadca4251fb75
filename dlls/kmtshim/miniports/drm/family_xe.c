/*
 * DRM miniport, xe family (Intel Lunar Lake, Battlemage and later; Tiger
 * Lake to Meteor Lake and DG2 where xe drives them).
 *
 * libdrm 2.4.114 has no xe_drm.h: the ioctls used here are declared below
 * from the kernel's uAPI (include/uapi/drm/xe_drm.h, Linux 6.8+).
 *   create        XE_GEM_CREATE placed in system memory (WB), or in VRAM
 *                 with system memory to spill to (WC, NEEDS_VISIBLE_VRAM)
 *                 for KMT_DRM_ALLOCATION_DEVICE_LOCAL on a discrete GPU
 *   map           XE_GEM_MMAP_OFFSET
 *   existing sysmem  copy-backed: xe has userptr only as a VM binding
 *   lock waits    none: xe has no per-object wait (fences are syncobjs and
 *                 user fences); the core's GPU references order Lock after
 *                 legacy submissions
 *   memory        XE_DEVICE_QUERY_MEM_REGIONS (used sizes need CAP_PERFMON;
 *                 without it the kernel says 0 and free reads as total)
 *   GPU VA        one VM per adapter (XE_VM_CREATE, no flags: no scratch
 *                 page, so a stray access faults; not LR, so exec can signal
 *                 syncobjs).  Every object gets a range of the adapter's
 *                 allocator (drm_gpuva.c: first fit in the low half of the VM's
 *                 VA_BITS, never below 2 MiB, aligned to the object's page:
 *                 64 KiB where VRAM needs it) bound with XE_VM_BIND MAP at
 *                 the platform's coherent write-back PAT index (pick_pat).
 *                 Binds run asynchronously on the VM's bind queue: each one
 *                 signals the next point of a bind timeline, waited for
 *                 before the object is handed out.  Destroy unbinds (waited
 *                 too), closes the object, then gives the range back
 *   contexts      an exec queue each (XE_EXEC_QUEUE_CREATE on the VM, the
 *                 first render engine of DEVICE_QUERY_ENGINES)
 *   submit        XE_EXEC: one batch at the command buffer's GPU VA, waits
 *                 and signals as timeline syncobjs (the ring point among
 *                 the signals).  No object list: VM-bound objects are
 *                 resident for every exec on the VM.  A batch outside every
 *                 object is refused (-EFAULT: a page fault); a legacy one
 *                 (CPU memory) is copied into a batch object of the family's
 *                 own, freed once its context completed it
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"
#include "base/kmt_time.h"

#define KXE_DEVICE_QUERY 0x00
#define KXE_GEM_CREATE 0x01
#define KXE_GEM_MMAP_OFFSET 0x02
#define KXE_VM_CREATE 0x03
#define KXE_VM_DESTROY 0x04
#define KXE_VM_BIND 0x05
#define KXE_EXEC_QUEUE_CREATE 0x06
#define KXE_EXEC_QUEUE_DESTROY 0x07
#define KXE_EXEC 0x09
#define KXE_QUERY_ENGINES 0
#define KXE_QUERY_MEM_REGIONS 1
#define KXE_QUERY_CONFIG 2
#define KXE_QUERY_GT_LIST 3
#define KXE_QUERY_ENGINE_CYCLES 6
#define KXE_CONFIG_REV_AND_DEVICE_ID 0
#define KXE_CONFIG_VA_BITS 3
#define KXE_GT_TYPE_MAIN 0
#define KXE_ENGINE_CLASS_RENDER 0
#define KXE_BIND_OP_MAP 0
#define KXE_BIND_OP_UNMAP 1
#define KXE_SYNC_TIMELINE_SYNCOBJ 1
#define KXE_SYNC_FLAG_SIGNAL 1u
/* The PAT index of a write-back, at least 1-way coherent entry, which the
 * kernel accepts for WB and WC objects alike (a WB object's index needs
 * coherency: xe_vm.c, xe_vm_bind_ioctl_validate_bo).  Each platform has a
 * table of its own (xe_pat.c, xe_pat_init_early), and Mesa picks the same
 * entries as its cached_coherent:
 *   Xe2, Xe3 (xe2_pat_table)          1: L3 WB, L4 UC, 1-way coherent
 *   Xe_LPG, Meteor/Arrow Lake (xelpg) 3: WB, 1-way (0 WB, 1 WT, 2 UC: none)
 *   Xe_HPC, Ponte Vecchio (xehpc)     3: WB (0 is UC, none)
 *   Xe_LP, Tiger Lake to DG2 (xelp)   0: WB (1 WC, 2 WT, 3 UC: none)
 * An UNMAP's index only has to be a table entry that is not reserved: 0. */
#define KXE_PAT_XE2_COHERENT 1
#define KXE_PAT_XELPG_COHERENT 3
#define KXE_PAT_XELP_COHERENT 0
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

struct kxe_engine_class_instance {
    uint16_t engine_class;
    uint16_t engine_instance;
    uint16_t gt_id;
    uint16_t pad;
};

struct kxe_engine {
    struct kxe_engine_class_instance instance;
    uint64_t reserved[3];
};

struct kxe_query_engines {
    uint32_t num_engines;
    uint32_t pad;
    struct kxe_engine engines[];
};

struct kxe_query_config {
    uint32_t num_params;
    uint32_t pad;
    uint64_t info[];
};

struct kxe_engine_cycles {
    struct kxe_engine_class_instance eci;    /* in */
    int32_t clockid;                         /* in: the CPU clock */
    uint32_t width;                          /* bits of engine_cycles */
    uint64_t engine_cycles;
    uint64_t cpu_timestamp;                  /* ns, just before the register read */
    uint64_t cpu_delta;                      /* ns the read took */
};

struct kxe_gt {
    uint16_t type;
    uint16_t tile_id;
    uint16_t gt_id;
    uint16_t pad[3];
    uint32_t reference_clock;
    uint64_t near_mem_regions;
    uint64_t far_mem_regions;
    uint16_t ip_ver_major;               /* 0: no GMD_ID, or a kernel that does not say */
    uint16_t ip_ver_minor;
    uint16_t ip_ver_rev;
    uint16_t pad2;
    uint64_t reserved[7];
};

struct kxe_query_gt_list {
    uint32_t num_gt;
    uint32_t pad;
    struct kxe_gt gt_list[];
};

struct kxe_vm_create {
    uint64_t extensions;
    uint32_t flags;
    uint32_t vm_id;
    uint64_t reserved[2];
};

struct kxe_vm_destroy {
    uint32_t vm_id;
    uint32_t pad;
    uint64_t reserved[2];
};

struct kxe_vm_bind_op {
    uint64_t extensions;
    uint32_t obj;
    uint16_t pat_index;
    uint16_t pad;
    uint64_t obj_offset;                 /* a union with userptr */
    uint64_t range;
    uint64_t addr;
    uint32_t op;
    uint32_t flags;
    uint32_t prefetch_mem_region_instance;
    uint32_t pad2;
    uint64_t reserved[3];
};

struct kxe_vm_bind {
    uint64_t extensions;
    uint32_t vm_id;
    uint32_t exec_queue_id;
    uint32_t pad;
    uint32_t num_binds;
    struct kxe_vm_bind_op bind;          /* a union with vector_of_binds */
    uint32_t pad2;
    uint32_t num_syncs;
    uint64_t syncs;
    uint64_t reserved[2];
};

struct kxe_exec_queue_create {
    uint64_t extensions;
    uint16_t width;
    uint16_t num_placements;
    uint32_t vm_id;
    uint32_t flags;
    uint32_t exec_queue_id;
    uint64_t instances;
    uint64_t reserved[2];
};

struct kxe_exec_queue_destroy {
    uint32_t exec_queue_id;
    uint32_t pad;
    uint64_t reserved[2];
};

struct kxe_sync {
    uint64_t extensions;
    uint32_t type;
    uint32_t flags;
    uint64_t handle;                     /* a union with a user fence's address */
    uint64_t timeline_value;
    uint64_t reserved[2];
};

struct kxe_exec {
    uint64_t extensions;
    uint32_t exec_queue_id;
    uint32_t num_syncs;
    uint64_t syncs;
    uint64_t address;
    uint16_t num_batch_buffer;
    uint16_t pad[3];
    uint64_t reserved[2];
};

_Static_assert(sizeof(struct kxe_mem_region) == 88, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_gem_create) == 56, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_engine) == 32, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_gt) == 96, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_vm_create) == 32, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_vm_destroy) == 24, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_vm_bind_op) == 80, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_vm_bind) == 136, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_exec_queue_create) == 48, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_exec_queue_destroy) == 24, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_sync) == 48, "xe uAPI layout");
_Static_assert(sizeof(struct kxe_exec) == 56, "xe uAPI layout");

#define KXE_IOCTL_DEVICE_QUERY DRM_IOWR(DRM_COMMAND_BASE + KXE_DEVICE_QUERY, struct kxe_device_query)
#define KXE_IOCTL_GEM_CREATE DRM_IOWR(DRM_COMMAND_BASE + KXE_GEM_CREATE, struct kxe_gem_create)
#define KXE_IOCTL_GEM_MMAP_OFFSET DRM_IOWR(DRM_COMMAND_BASE + KXE_GEM_MMAP_OFFSET, struct kxe_gem_mmap_offset)
#define KXE_IOCTL_VM_CREATE DRM_IOWR(DRM_COMMAND_BASE + KXE_VM_CREATE, struct kxe_vm_create)
#define KXE_IOCTL_VM_DESTROY DRM_IOW(DRM_COMMAND_BASE + KXE_VM_DESTROY, struct kxe_vm_destroy)
#define KXE_IOCTL_VM_BIND DRM_IOW(DRM_COMMAND_BASE + KXE_VM_BIND, struct kxe_vm_bind)
#define KXE_IOCTL_EXEC_QUEUE_CREATE DRM_IOWR(DRM_COMMAND_BASE + KXE_EXEC_QUEUE_CREATE, struct kxe_exec_queue_create)
#define KXE_IOCTL_EXEC_QUEUE_DESTROY DRM_IOW(DRM_COMMAND_BASE + KXE_EXEC_QUEUE_DESTROY, struct kxe_exec_queue_destroy)
#define KXE_IOCTL_EXEC DRM_IOW(DRM_COMMAND_BASE + KXE_EXEC, struct kxe_exec)

#define VA_START (2ull << 20)            /* nothing below: a small number is never a valid VA */
#define VA_CANONICAL_END (1ull << 47)    /* the low half: no sign extension to get wrong */
#define MAX_SYNCS (2 * KMT_DRM_SUBMIT_MAX_SYNCS + 1)

struct xe_state {
    uint32_t system_mask, vram_mask;       /* placement bits */
    /* Largest min_page_size of each class.  The kernel wants a size the page
     * divides, and 64 KiB only where VRAM is among the placements
     * (xe_bo.c, ___xe_bo_create_locked: XE_VRAM_FLAGS_NEED64K applies to
     * VRAM and stolen placements): system-only objects are not padded. */
    uint32_t system_page, vram_page;
    uint32_t vm;
    uint64_t va_end;                     /* from the VM's VA_BITS */
    uint16_t devid;                      /* the PCI device id (CONFIG) */
    uint16_t pat_index;                  /* write-back, coherent: for every MAP */
    bool has_render;
    struct kxe_engine_class_instance render;
    uint32_t reference_clock;            /* the main GT's timestamp Hz (GT_LIST) */
    struct kdrm_gpuva va;                /* the VM's address books */
    pthread_mutex_t bind_lock;           /* one bind at a time: its timeline point in order */
    uint32_t bind_timeline;
    uint64_t bind_point;
};

static struct xe_state *state(struct kdrm_adapter *a)
{
    return a->family_data;
}

/* A DEVICE_QUERY answer, in memory of its own.  Every answer read here is
 * a 32-bit count, 4 bytes of padding, then that many `elem`-byte entries:
 * the count must fit the size the kernel gave, so no reader goes past it. */
static int query(struct kdrm_adapter *a, uint32_t id, size_t elem, void **out)
{
    struct kxe_device_query q = { .query = id };
    void *buf;
    int err;

    if ((err = kdrm_ioctl(a->fd, KXE_IOCTL_DEVICE_QUERY, &q, "XE_DEVICE_QUERY")) < 0)
        return err;
    if (q.size < 8 || !(buf = calloc(1, q.size)))
        return q.size ? -ENOMEM : -ENODATA;
    q.data = (uintptr_t)buf;
    if ((err = kdrm_ioctl(a->fd, KXE_IOCTL_DEVICE_QUERY, &q, "XE_DEVICE_QUERY")) < 0) {
        free(buf);
        return err;
    }
    if (*(const uint32_t *)buf > (q.size - 8) / elem) {
        free(buf);
        return -EPROTO;
    }
    *out = buf;
    return 0;
}

static int query_regions(struct kdrm_adapter *a, struct kxe_query_mem_regions **out)
{
    return query(a, KXE_QUERY_MEM_REGIONS, sizeof(struct kxe_mem_region), (void **)out);
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

/* Placement masks and page sizes from the region query; -ENODEV without
 * system memory (nowhere to put buffers). */
static int read_regions(struct kdrm_adapter *a, struct xe_state *s)
{
    struct kxe_query_mem_regions *r;
    int err;

    if ((err = query_regions(a, &r)) < 0)
        return err;
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
    return s->system_mask ? 0 : -ENODEV;
}

/* The end of the VA space the family hands out: the VM's size, at most
 * the canonical low half. */
static int read_va_bits(struct kdrm_adapter *a, struct xe_state *s)
{
    struct kxe_query_config *c;
    uint64_t bits;
    int err;

    if ((err = query(a, KXE_QUERY_CONFIG, sizeof(c->info[0]), (void **)&c)) < 0)
        return err;
    bits = c->num_params > KXE_CONFIG_VA_BITS ? c->info[KXE_CONFIG_VA_BITS] : 0;
    if (c->num_params > KXE_CONFIG_REV_AND_DEVICE_ID)               /* revision above bit 16 */
        s->devid = (uint16_t)c->info[KXE_CONFIG_REV_AND_DEVICE_ID];
    free(c);
    if (bits < 32)
        return -ENODEV;                  /* no VM worth the name */
    s->va_end = bits >= 48 ? VA_CANONICAL_END : 1ull << bits;
    return 0;
}

/* The coherent write-back PAT index of the platform.  The main GT's IP
 * version where GT_LIST gives it (GMD_ID platforms, Meteor Lake on, on
 * kernels that have the field), else the PCI device id: Meteor and Arrow
 * Lake 0x7dxx, Lunar Lake 0x64xx, Battlemage 0xe2xx, Panther Lake 0xb0xx,
 * Ponte Vecchio 0x0bxx; every other part xe drives is Xe_LP (Tiger Lake,
 * Rocket/Alder/Raptor Lake, DG1, DG2). */
static void pick_pat(struct kdrm_adapter *a, struct xe_state *s)
{
    struct kxe_query_gt_list *g;
    unsigned major = 0, minor = 0;

    if (query(a, KXE_QUERY_GT_LIST, sizeof(struct kxe_gt), (void **)&g) == 0) {
        for (uint32_t i = 0; i < g->num_gt && !major; i++)
            if (g->gt_list[i].type == KXE_GT_TYPE_MAIN) {
                s->reference_clock = g->gt_list[i].reference_clock;
                major = g->gt_list[i].ip_ver_major;
                minor = g->gt_list[i].ip_ver_minor;
            }
        free(g);
    }
    if (major >= 20)
        s->pat_index = KXE_PAT_XE2_COHERENT;
    else if (major == 12 && minor >= 70)
        s->pat_index = KXE_PAT_XELPG_COHERENT;
    else
        switch (s->devid >> 8) {
        case 0x64: case 0xe2: case 0xb0: s->pat_index = KXE_PAT_XE2_COHERENT; break;
        case 0x7d: case 0x0b: s->pat_index = KXE_PAT_XELPG_COHERENT; break;
        default: s->pat_index = KXE_PAT_XELP_COHERENT; break;
        }
}

/* The first render engine, if the device has one (media-only GTs do not). */
static int read_engines(struct kdrm_adapter *a, struct xe_state *s)
{
    struct kxe_query_engines *e;
    size_t room;
    int err;

    if ((err = query(a, KXE_QUERY_ENGINES, sizeof(struct kxe_engine), (void **)&e)) < 0)
        return err;
    room = (size_t)e->num_engines;
    for (size_t i = 0; i < room && !s->has_render; i++)
        if (e->engines[i].instance.engine_class == KXE_ENGINE_CLASS_RENDER) {
            s->render = e->engines[i].instance;
            s->render.pad = 0;
            s->has_render = true;
        }
    free(e);
    return 0;
}

static int vm_create(struct kdrm_adapter *a, struct xe_state *s)
{
    struct kxe_vm_create args = { .flags = 0 };
    int err = kdrm_ioctl(a->fd, KXE_IOCTL_VM_CREATE, &args, "XE_VM_CREATE");

    if (err < 0)
        return err;
    s->vm = args.vm_id;
    return 0;
}

static void vm_destroy(struct kdrm_adapter *a, struct xe_state *s)
{
    struct kxe_vm_destroy args = { .vm_id = s->vm };

    if (drmIoctl(a->fd, KXE_IOCTL_VM_DESTROY, &args))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "XE_VM_DESTROY(%u) failed: %d\n", s->vm, errno);
}

static void state_free(struct xe_state *s)
{
    kdrm_gpuva_fini(&s->va);
    pthread_mutex_destroy(&s->bind_lock);
    free(s);
}

/* The queries, then the VM and the bind timeline; a failed start keeps
 * nothing (it is not stopped). */
static int xe_start(struct kdrm_adapter *a)
{
    struct xe_state *s = calloc(1, sizeof(*s));
    int err;

    if (!s)
        return -ENOMEM;
    pthread_mutex_init(&s->bind_lock, NULL);
    if (!(err = read_regions(a, s)) && !(err = read_va_bits(a, s)))
        pick_pat(a, s);
    if (err < 0 || (err = read_engines(a, s)) < 0 ||
        (err = kdrm_gpuva_init(&s->va, VA_START, s->va_end, s->system_page)) < 0 || (err = vm_create(a, s)) < 0) {
        state_free(s);
        return err;
    }
    if ((err = kdrm_syncobj_create(a, &s->bind_timeline)) < 0) {
        vm_destroy(a, s);
        state_free(s);
        return err;
    }
    a->family_data = s;
    a->gpu_va = true;                    /* every object is bound in the VM */
    if ((a->caps & KMT_DRM_CAP_FENCES) && s->has_render)
        a->caps |= KMT_DRM_CAP_SUBMIT;
    return 0;
}

/* The contexts are gone (nothing runs), their batches too: the VM goes. */
static void xe_stop(struct kdrm_adapter *a)
{
    struct xe_state *s = state(a);

    kdrm_syncobj_destroy(a, s->bind_timeline);
    vm_destroy(a, s);
    state_free(s);
    a->family_data = NULL;
    a->gpu_va = false;
}

/* ---- binds ------------------------------------------------------------------ */

/* One MAP or UNMAP that signals the next bind point, and the wait for it;
 * *taken: the kernel took the bind (even if the wait then failed).  A
 * release (UNMAP) is never failed by the fault hook: nothing could undo it. */
static int bind(struct kdrm_adapter *a, uint32_t op, uint32_t handle, uint64_t va, uint64_t span, bool *taken)
{
    struct xe_state *s = state(a);
    struct kxe_sync sync = { .type = KXE_SYNC_TIMELINE_SYNCOBJ, .flags = KXE_SYNC_FLAG_SIGNAL,
                             .handle = s->bind_timeline };
    struct kxe_vm_bind args = { .vm_id = s->vm, .num_binds = 1, .num_syncs = 1, .syncs = (uintptr_t)&sync };
    struct drm_syncobj_timeline_wait wait = { .handles = (uintptr_t)&s->bind_timeline,
                                              .points = (uintptr_t)&sync.timeline_value,
                                              .timeout_nsec = INT64_MAX, .count_handles = 1 };
    bool release = op == KXE_BIND_OP_UNMAP;
    int err;

    args.bind.op = op;
    args.bind.obj = release ? 0 : handle;                  /* MBZ for UNMAP */
    args.bind.pat_index = release ? 0 : s->pat_index;
    args.bind.range = span;
    args.bind.addr = va;
    pthread_mutex_lock(&s->bind_lock);
    sync.timeline_value = ++s->bind_point;
    if (release)
        err = drmIoctl(a->fd, KXE_IOCTL_VM_BIND, &args) ? -errno : 0;
    else
        err = kdrm_ioctl(a->fd, KXE_IOCTL_VM_BIND, &args, "XE_VM_BIND");
    *taken = !err;
    if (!err && release)
        err = drmIoctl(a->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &wait) ? -errno : 0;
    else if (!err)
        err = kdrm_ioctl(a->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &wait, "XE_VM_BIND_WAIT");
    pthread_mutex_unlock(&s->bind_lock);
    return err;
}

static void unbind(struct kdrm_adapter *a, UINT32 handle, uint64_t va, uint64_t span)
{
    bool taken;
    int err = bind(a, KXE_BIND_OP_UNMAP, 0, va, span, &taken);

    if (err < 0)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "unbind of %u at %#llx failed: %s\n", handle,
                   (unsigned long long)va, strerror(-err));
}

/* A range for the new object and its binding there.  A wait that failed
 * after the bind was taken unbinds (the bind queue runs in order). */
static int bind_new(struct kdrm_adapter *a, struct kdrm_bo *bo, uint64_t align)
{
    struct xe_state *s = state(a);
    uint64_t va;
    bool taken;
    int err;

    if ((err = kdrm_gpuva_alloc(&s->va, bo->handle, bo->size, align, &va)) < 0)
        return err;
    if ((err = bind(a, KXE_BIND_OP_MAP, bo->handle, va, bo->size, &taken)) < 0) {
        if (taken)
            unbind(a, bo->handle, va, bo->size);
        kdrm_gpuva_free(&s->va, va);
        return err;
    }
    bo->gpu_va = va;
    return 0;
}

/* ---- objects ---------------------------------------------------------------- */

static int gem_create(struct kdrm_adapter *a, struct kdrm_bo *bo, bool vram, uint64_t page)
{
    struct xe_state *s = state(a);
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

/* The object, bound at a VA aligned to its page (the kernel's 64 KiB rule
 * for VRAM binds, xe_vm.c); closed again if the bind fails. */
static bool wants_vram(struct kdrm_adapter *a, const struct kdrm_bo *bo)
{
    return state(a)->vram_mask && (bo->flags & KMT_DRM_ALLOCATION_DEVICE_LOCAL);
}

static uint64_t page_of(struct kdrm_adapter *a, bool vram)
{
    struct xe_state *s = state(a);

    return vram && s->vram_page > s->system_page ? s->vram_page : s->system_page;
}

static int xe_create(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    bool vram = wants_vram(a, bo);
    uint64_t page = page_of(a, vram);
    int err;

    if ((err = gem_create(a, bo, vram, page)) < 0)
        return err;
    if ((err = bind_new(a, bo, page)) < 0) {
        kdrm_gem_close(a->fd, bo->handle);
        bo->handle = 0;
    }
    return err;
}

/* An imported object, bound as xe_create binds one of its placement. */
static int xe_import(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    return bind_new(a, bo, page_of(a, wants_vram(a, bo)));
}

/* Unbound (waited for) before the close, and the range free only after. */
static void xe_destroy(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    unbind(a, bo->handle, bo->gpu_va, bo->size);
    kdrm_gem_destroy(a, bo);
    kdrm_gpuva_free(&state(a)->va, bo->gpu_va);
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

/* ---- contexts --------------------------------------------------------------- */

static int xe_ctx_create(struct kdrm_adapter *a, struct kdrm_context *c)
{
    struct xe_state *s = state(a);
    struct kxe_exec_queue_create args = { .width = 1, .num_placements = 1, .vm_id = s->vm,
                                          .instances = (uintptr_t)&s->render };
    int err;

    if (!s->has_render)
        return -EOPNOTSUPP;
    if ((err = kdrm_ioctl(a->fd, KXE_IOCTL_EXEC_QUEUE_CREATE, &args, "XE_EXEC_QUEUE_CREATE")) < 0)
        return err;
    c->kernel_ctx = args.exec_queue_id;
    return 0;
}

static void xe_ctx_destroy(struct kdrm_adapter *a, struct kdrm_context *c)
{
    struct kxe_exec_queue_destroy args = { .exec_queue_id = c->kernel_ctx };

    if (drmIoctl(a->fd, KXE_IOCTL_EXEC_QUEUE_DESTROY, &args))
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "XE_EXEC_QUEUE_DESTROY(%u) failed: %d\n", c->kernel_ctx, errno);
}

/* ---- submission --------------------------------------------------------------- */

/* Whether [va, va + size) lies in one bound object. */
static bool batch_bound(struct xe_state *s, uint64_t va, UINT size)
{
    struct kdrm_gpuva_range r;

    return kdrm_gpuva_find_address(&s->va, va, &r) && size <= r.size - (va - r.start);
}

static struct kxe_sync timeline_sync(const struct kdrm_sync_point *p, bool signal)
{
    return (struct kxe_sync){ .type = KXE_SYNC_TIMELINE_SYNCOBJ, .flags = signal ? KXE_SYNC_FLAG_SIGNAL : 0,
                              .handle = p->handle, .timeline_value = p->point };
}

/* One XE_EXEC of the batch at cmd_va.  No object list: what the VM binds
 * is resident for every exec on it. */
static int exec(struct kdrm_adapter *a, const struct kdrm_context *c, const struct kdrm_job *job)
{
    struct kxe_sync syncs[MAX_SYNCS];
    struct kxe_exec args = { .exec_queue_id = c->kernel_ctx, .address = job->cmd_va, .num_batch_buffer = 1,
                             .syncs = (uintptr_t)syncs };
    UINT n = 0;

    if (!batch_bound(state(a), job->cmd_va, job->size))
        return -EFAULT;
    if (job->nwaits + job->nsignals > MAX_SYNCS)
        return -EINVAL;
    for (UINT i = 0; i < job->nwaits; i++)
        syncs[n++] = timeline_sync(&job->waits[i], false);
    for (UINT i = 0; i < job->nsignals; i++)
        syncs[n++] = timeline_sync(&job->signals[i], true);
    args.num_syncs = n;
    return kdrm_ioctl(a->fd, KXE_IOCTL_EXEC, &args, "XE_EXEC");
}

/* Batches are whole dwords at a dword-aligned address. */
static bool batch_shape_ok(const struct kdrm_job *job)
{
    return job->size && !(job->size % 4) && !(job->cmd_va % 4);
}

/* A legacy stream arrives as drm_batch.c's copy: write-back system memory
 * (kdrm_family.batch all zero). */
static int xe_submit(struct kdrm_adapter *a, struct kdrm_context *c, const struct kdrm_job *job)
{
    if (!batch_shape_ok(job))
        return -EINVAL;
    return exec(a, c, job);
}

/* DEVICE_QUERY_ENGINE_CYCLES of the render engine: the kernel reads the
 * CPU clock (CLOCK_MONOTONIC_RAW, QueryPerformanceCounter's) around the
 * register itself. */
static int xe_gpu_clock(struct kdrm_adapter *a, struct kdrm_gpu_clock *out)
{
    struct xe_state *s = state(a);
    struct kxe_engine_cycles c = { .clockid = CLOCK_MONOTONIC_RAW };
    struct kxe_device_query q = { .query = KXE_QUERY_ENGINE_CYCLES, .size = sizeof(c), .data = (uintptr_t)&c };
    int err;

    if (!s->has_render || !s->reference_clock)
        return -EOPNOTSUPP;
    c.eci = s->render;
    if ((err = kdrm_ioctl(a->fd, KXE_IOCTL_DEVICE_QUERY, &q, "XE_DEVICE_QUERY")) < 0)
        return err;
    out->cpu_qpc = (c.cpu_timestamp + c.cpu_delta / 2) / (1000000000ull / KMT_QPC_FREQUENCY);
    out->gpu = c.engine_cycles;
    out->width = c.width;                /* drm_clock.c extends it across the wrap */
    out->frequency = s->reference_clock;
    return 0;
}

const struct kdrm_family kdrm_family_xe = {
    .name = "xe",
    .start = xe_start,
    .stop = xe_stop,
    .create = xe_create,
    .import = xe_import,
    .destroy = xe_destroy,
    .map = xe_map,
    .unmap = kdrm_unmap_plain,
    .memory = xe_memory,
    .gpu_clock = xe_gpu_clock,
    .ctx_create = xe_ctx_create,
    .ctx_destroy = xe_ctx_destroy,
    .submit = xe_submit,
};
