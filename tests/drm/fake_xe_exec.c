/*
 * The xe fake kernel's VMs, bindings, exec queues and exec (fake_drm.c
 * hands it the ioctls it lacks).  The xe uAPI is declared here again on
 * purpose (fake_xe_*): the fake must not share the miniport's declarations
 * it is checking.  Rules, from xe_drm.h and xe_vm.c (xe_vm_bind_ioctl,
 * vm_bind_ioctl_check_args):
 *   VM_CREATE     flags the fake knows (no LR or fault mode asked for here),
 *                 reserved MBZ; VM_DESTROY of the caller's VM, EBUSY while
 *                 an exec queue uses it
 *   VM_BIND       one op, MAP or UNMAP; page-aligned addr, range and
 *                 offset, range non-zero; the range within the VM (EINVAL);
 *                 the object the caller's (ENOENT), offset + range within
 *                 it, 64 KiB alignment where VRAM with a 64 KiB page is
 *                 among its placements; obj MBZ for UNMAP; a PAT index
 *                 of the platform's table that is not reserved, and for a
 *                 MAP of a WB object one with coherency (xe_pat.c tables,
 *                 xe_vm_bind_ioctl_validate_bo).  A MAP over an existing binding replaces that part
 *                 (the kernel's remap), and an UNMAP of nothing is
 *                 answered 0 with the syncs signalled (xe's ENODATA path):
 *                 both are counted, since the miniport should do neither.
 *                 Binds complete at once; their out-syncs are signalled
 *   EXEC_QUEUE_*  width 1, one placement, the render (or copy) class,
 *                 instance and GT 0; the caller's VM (ENOENT)
 *   EXEC          the caller's queue (ENOENT), num_batch_buffer equal to
 *                 its width, syncs of the caller's file, a wait point that
 *                 already signalled (EINVAL otherwise, as a point with no
 *                 fence), timeline values non-zero
 * The "GPU" then runs the batch at once through the VM's bindings: MI_NOOP,
 * MI_STORE_DATA_IMM (ppGTT, dword or qword) and MI_BATCH_BUFFER_END; a
 * batch or store outside every binding, or an unknown command, is a GPU
 * fault (recorded, the rest skipped); the signal points are signalled all
 * the same.  SYNCOBJ_TIMELINE_WAIT is answered at once: the points must
 * have signalled (EINVAL otherwise: nothing would signal them here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <xf86drm.h>

#include "fake_drm.h"
#include "fake_xe_exec.h"

struct fake_xe fake_xe;

struct fake_xe_engine_ci { uint16_t engine_class, engine_instance, gt_id, pad; };
struct fake_xe_engine { struct fake_xe_engine_ci instance; uint64_t reserved[3]; };
struct fake_xe_dquery { uint64_t extensions; uint32_t query, size; uint64_t data, reserved[2]; };
struct fake_xe_vm_create { uint64_t extensions; uint32_t flags, vm_id; uint64_t reserved[2]; };
struct fake_xe_vm_destroy { uint32_t vm_id, pad; uint64_t reserved[2]; };
struct fake_xe_bind_op {
    uint64_t extensions;
    uint32_t obj;
    uint16_t pat_index, pad;
    uint64_t obj_offset, range, addr;
    uint32_t op, flags, prefetch_mem_region_instance, pad2;
    uint64_t reserved[3];
};
struct fake_xe_vm_bind {
    uint64_t extensions;
    uint32_t vm_id, exec_queue_id, pad, num_binds;
    struct fake_xe_bind_op bind;
    uint32_t pad2, num_syncs;
    uint64_t syncs, reserved[2];
};
struct fake_xe_queue_create {
    uint64_t extensions;
    uint16_t width, num_placements;
    uint32_t vm_id, flags, exec_queue_id;
    uint64_t instances, reserved[2];
};
struct fake_xe_queue_destroy { uint32_t exec_queue_id, pad; uint64_t reserved[2]; };
struct fake_xe_sync { uint64_t extensions; uint32_t type, flags; uint64_t handle, timeline_value, reserved[2]; };
struct fake_xe_exec {
    uint64_t extensions;
    uint32_t exec_queue_id, num_syncs;
    uint64_t syncs, address;
    uint16_t num_batch_buffer, pad[3];
    uint64_t reserved[2];
};

#define FAKE_XE_DEVICE_QUERY DRM_IOWR(DRM_COMMAND_BASE + 0x00, struct fake_xe_dquery)
#define FAKE_XE_VM_CREATE DRM_IOWR(DRM_COMMAND_BASE + 0x03, struct fake_xe_vm_create)
#define FAKE_XE_VM_DESTROY DRM_IOW(DRM_COMMAND_BASE + 0x04, struct fake_xe_vm_destroy)
#define FAKE_XE_VM_BIND DRM_IOW(DRM_COMMAND_BASE + 0x05, struct fake_xe_vm_bind)
#define FAKE_XE_QUEUE_CREATE DRM_IOWR(DRM_COMMAND_BASE + 0x06, struct fake_xe_queue_create)
#define FAKE_XE_QUEUE_DESTROY DRM_IOW(DRM_COMMAND_BASE + 0x07, struct fake_xe_queue_destroy)
#define FAKE_XE_EXEC DRM_IOW(DRM_COMMAND_BASE + 0x09, struct fake_xe_exec)

#define QUERY_ENGINES 0
#define QUERY_CONFIG 2
#define VM_FLAGS_KNOWN 0x7u
#define OP_MAP 0
#define OP_UNMAP 1
#define SYNC_SYNCOBJ 0
#define SYNC_TIMELINE 1
#define SYNC_SIGNAL 1u
#define QUERY_GT_LIST 3
#define QUERY_ENGINE_CYCLES 6
#define CACHING_WB 1
#define PAGE 4096ull
#define VM_SIZE (1ull << FAKE_XE_VA_BITS)
#define VRAM_MASK 2u                     /* fake_drm.c's VRAM instance */
#define MAX_VMS 8
#define MAX_QUEUES 32
#define MAX_MAPPINGS 256
#define MAX_SYNCS 64

#define MI_OP(dw) ((dw) >> 23)
#define MI_NOOP 0x00
#define MI_BATCH_BUFFER_END 0x0a
#define MI_STORE_DATA_IMM 0x20
#define SDI_GGTT (1u << 22)
#define MAX_BATCH_DWORDS (1u << 16)      /* the fake's run-away limit */

/* Each platform's PAT table as the kernel reads it (xe_pat.c,
 * xe_pat_index_get_coh_mode): 0 a reserved entry, 1 no coherency, 2 at
 * least 1-way.  Xe2 (xe2_pat_table): 16..19 reserved; Xe_LPG (Meteor
 * Lake, xelpg_pat_table): 0 WB, 1 WT, 2 UC, none coherent, 3 and 4 WB
 * coherent; Xe_LP (Tiger Lake to DG2, xelp_pat_table): 0 WB coherent,
 * then WC, WT, UC. */
static const uint8_t xe2_pat[] = { 1, 2, 2, 1, 2, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1,
                                   0, 0, 0, 0, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2 };
static const uint8_t xelpg_pat[] = { 1, 1, 1, 2, 2 };
static const uint8_t xelp_pat[] = { 2, 1, 1, 1 };

static uint8_t pat_coh(uint16_t index)
{
    switch (fake_drm.config.xe_ip) {
    case FAKE_XE_XELPG: return index < sizeof(xelpg_pat) ? xelpg_pat[index] : 0;
    case FAKE_XE_XELP: return index < sizeof(xelp_pat) ? xelp_pat[index] : 0;
    default: return index < sizeof(xe2_pat) ? xe2_pat[index] : 0;
    }
}

static struct { bool live; unsigned file; } vms[MAX_VMS + 1];
static struct { bool live; unsigned file; uint32_t vm; uint16_t width; } queues[MAX_QUEUES + 1];
static struct {
    bool live;
    uint32_t vm, handle;
    uint64_t va, size, offset;
} maps[MAX_MAPPINGS];

void fake_xe_reset(void)
{
    memset(&fake_xe, 0, sizeof(fake_xe));
    memset(vms, 0, sizeof(vms));
    memset(queues, 0, sizeof(queues));
    memset(maps, 0, sizeof(maps));
}

static bool vm_of(unsigned file, uint32_t id)
{
    return id && id <= MAX_VMS && vms[id].live && vms[id].file == file;
}

/* ---- DEVICE_QUERY: engines (render and copy on GT 0) and config ---------- */

struct fake_xe_engine_cycles {
    struct fake_xe_engine_ci eci;
    int32_t clockid;
    uint32_t width;
    uint64_t engine_cycles, cpu_timestamp, cpu_delta;
};

/* The kernel's order: the CPU clock, the register, the CPU clock again
 * (xe_query.c, query_engine_cycles); only CLOCK_MONOTONIC_RAW here. */
static int engine_cycles(struct fake_xe_dquery *q)
{
    struct fake_xe_engine_cycles *c = (void *)(uintptr_t)q->data;
    struct timespec t0, t1;

    if (!q->size) {
        q->size = sizeof(*c);
        return 0;
    }
    if (q->size != sizeof(*c) || !fake_drm.config.timestamp_hz)
        return -EINVAL;
    if (c->eci.engine_class > 1 || c->eci.engine_instance || c->eci.gt_id || c->clockid != CLOCK_MONOTONIC_RAW)
        return -EINVAL;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
    c->engine_cycles = fake_drm_gpu_ticks();
    clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
    c->width = fake_drm.config.timestamp_bits ? fake_drm.config.timestamp_bits : 64;
    c->cpu_timestamp = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
    c->cpu_delta = (uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec - c->cpu_timestamp;
    return 0;
}

static int reply(struct fake_xe_dquery *q, const void *data, uint32_t size)
{
    if (q->extensions || q->reserved[0] || q->reserved[1])
        return -EINVAL;
    if (!q->size) {
        q->size = size;
        return 0;
    }
    if (q->size != size)
        return -EINVAL;
    memcpy((void *)(uintptr_t)q->data, data, size);
    return 0;
}

static int device_query(struct fake_xe_dquery *q)
{
    struct { uint32_t n, pad; struct fake_xe_engine e[2]; } engines = {
        2, 0, { { { 0, 0, 0, 0 }, { 0 } }, { { 1, 0, 0, 0 }, { 0 } } } };
    /* a device id of the platform: Lunar Lake or Battlemage, Meteor Lake,
     * Tiger Lake or DG2; GMD_ID's IP version on the first two */
    static const uint16_t devid[3][2] = { { 0x6420, 0xe20b }, { 0x7d55, 0x7d55 }, { 0x9a49, 0x56a0 } };
    static const uint16_t ip_ver[3][2] = { { 20, 4 }, { 12, 70 }, { 0, 0 } };
    unsigned ip = fake_drm.config.xe_ip;
    struct { uint32_t n, pad; uint64_t info[5]; } config = {
        5, 0, { devid[ip][fake_drm.config.discrete], fake_drm.config.discrete, 4096, FAKE_XE_VA_BITS, 2 } };
    /* one main GT: type, tile, id, pad[3], reference clock, near and far
     * regions, ip_ver major/minor/rev, pad2, reserved[7] (96 bytes) */
    struct { uint32_t n, pad; uint16_t type, tile, id, pad1[3]; uint32_t clock;
             uint64_t near, far; uint16_t major, minor, rev, pad2; uint64_t reserved[7]; } gts = {
        .n = 1, .clock = (uint32_t)fake_drm.config.timestamp_hz, .near = 1,
        .major = fake_drm.config.xe_no_ip_ver ? 0 : ip_ver[ip][0],
        .minor = fake_drm.config.xe_no_ip_ver ? 0 : ip_ver[ip][1] };

    _Static_assert(sizeof(gts) == 8 + 96, "drm_xe_gt is 96 bytes");
    if (q->query == QUERY_ENGINES)
        return reply(q, &engines, sizeof(engines));
    if (q->query == QUERY_CONFIG) {
        if (fake_drm.config.xe_config_params)
            config.n = fake_drm.config.xe_config_params < 0 ? 0 : (uint32_t)fake_drm.config.xe_config_params;
        return reply(q, &config, 8 + config.n * sizeof(config.info[0]));
    }
    if (q->query == QUERY_GT_LIST)
        return reply(q, &gts, sizeof(gts));
    if (q->query == QUERY_ENGINE_CYCLES)
        return q->extensions || q->reserved[0] || q->reserved[1] ? -EINVAL : engine_cycles(q);
    return -EINVAL;
}

/* ---- VMs -------------------------------------------------------------------- */

static int vm_create(unsigned file, struct fake_xe_vm_create *a)
{
    if (a->extensions || a->reserved[0] || a->reserved[1] || (a->flags & ~VM_FLAGS_KNOWN) || a->vm_id)
        return -EINVAL;
    for (uint32_t i = 1; i <= MAX_VMS; i++)
        if (!vms[i].live) {
            vms[i].live = true;
            vms[i].file = file;
            fake_xe.vms++;
            a->vm_id = i;
            return 0;
        }
    return -ENOMEM;
}

static void drop_mapping(unsigned i)
{
    maps[i].live = false;
    fake_xe.mappings--;
}

static int vm_destroy(unsigned file, struct fake_xe_vm_destroy *a)
{
    if (a->pad || a->reserved[0] || a->reserved[1])
        return -EINVAL;
    if (!vm_of(file, a->vm_id))
        return -ENOENT;
    for (unsigned i = 1; i <= MAX_QUEUES; i++)
        if (queues[i].live && queues[i].vm == a->vm_id)
            return -EBUSY;
    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && maps[i].vm == a->vm_id) {
            fake_xe.vm_destroyed_bound++;
            drop_mapping(i);
        }
    vms[a->vm_id].live = false;
    fake_xe.vms--;
    return 0;
}

/* ---- syncs ------------------------------------------------------------------ */

/* xe_sync_entry_parse: known type and flags, reserved MBZ, the caller's
 * syncobj (ENOENT), a non-zero timeline value; a wait's point signalled. */
static int check_sync(unsigned file, const struct fake_xe_sync *s)
{
    uint64_t value;

    if (s->extensions || s->reserved[0] || s->reserved[1] || (s->flags & ~SYNC_SIGNAL) ||
        (s->type != SYNC_SYNCOBJ && s->type != SYNC_TIMELINE))
        return -EINVAL;
    if (s->handle >> 32 || fake_drm_syncobj_value(file, (uint32_t)s->handle, &value) < 0)
        return -ENOENT;
    if (s->type == SYNC_TIMELINE && !s->timeline_value)
        return -EINVAL;
    if (!(s->flags & SYNC_SIGNAL) && value < (s->type == SYNC_TIMELINE ? s->timeline_value : 1))
        return -EINVAL;
    return 0;
}

static int check_syncs(unsigned file, const struct fake_xe_sync *s, uint32_t n, unsigned *signals)
{
    int err;

    if (n > MAX_SYNCS)
        return -EINVAL;
    *signals = 0;
    for (uint32_t i = 0; i < n; i++) {
        if ((err = check_sync(file, &s[i])) < 0)
            return err;
        *signals += (s[i].flags & SYNC_SIGNAL) != 0;
    }
    return 0;
}

static void signal_syncs(const struct fake_xe_sync *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (s[i].flags & SYNC_SIGNAL)
            fake_drm_syncobj_reach((uint32_t)s[i].handle, s[i].type == SYNC_TIMELINE ? s[i].timeline_value : 1);
}

/* ---- VM_BIND ------------------------------------------------------------------ */

static bool overlaps(uint64_t a, uint64_t asize, uint64_t b, uint64_t bsize)
{
    return a < b + bsize && b < a + asize;
}

static int check_op(const struct fake_xe_bind_op *op)
{
    if (op->extensions || op->pad || op->pad2 || op->reserved[0] || op->reserved[1] || op->reserved[2] ||
        op->flags || op->prefetch_mem_region_instance)
        return -EINVAL;
    if (op->op != OP_MAP && op->op != OP_UNMAP)
        return -EINVAL;                  /* userptr, unmap-all, prefetch: not faked */
    if (op->op == OP_UNMAP && op->obj)
        return -EINVAL;
    if ((op->obj_offset | op->addr | op->range) & (PAGE - 1) || !op->range)
        return -EINVAL;
    if (op->range > VM_SIZE || op->addr > VM_SIZE - op->range)
        return -EINVAL;
    return pat_coh(op->pat_index) ? 0 : -EINVAL;       /* beyond the table, or reserved */
}

static int map(unsigned file, uint32_t vm, const struct fake_xe_bind_op *op)
{
    struct fake_drm_object *o = fake_drm_object(op->obj);
    unsigned free_slot = MAX_MAPPINGS;

    if (!o || o->file != file)
        return -ENOENT;
    if (op->range > o->size || op->obj_offset > o->size - op->range)
        return -EINVAL;
    if ((o->placement & VRAM_MASK) && fake_drm.config.vram_min_page >= 65536 &&
        ((op->obj_offset | op->addr | op->range) & 65535))
        return -EINVAL;
    if (o->cpu_caching == CACHING_WB && pat_coh(op->pat_index) == 1)
        return -EINVAL;                  /* a WB object needs a coherent index */
    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (!maps[i].live && free_slot == MAX_MAPPINGS)
            free_slot = i;
    if (free_slot == MAX_MAPPINGS)
        return -ENOMEM;
    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && maps[i].vm == vm && overlaps(op->addr, op->range, maps[i].va, maps[i].size)) {
            fake_xe.map_over_existing++;
            drop_mapping(i);             /* the fake replaces it whole */
        }
    maps[free_slot].live = true;
    maps[free_slot].vm = vm;
    maps[free_slot].handle = op->obj;
    maps[free_slot].va = op->addr;
    maps[free_slot].size = op->range;
    maps[free_slot].offset = op->obj_offset;
    fake_xe.mappings++;
    fake_xe.last_pat_index = op->pat_index;
    return 0;
}

static void unmap(uint32_t vm, const struct fake_xe_bind_op *op)
{
    bool any = false;

    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && maps[i].vm == vm && overlaps(op->addr, op->range, maps[i].va, maps[i].size)) {
            drop_mapping(i);
            any = true;
        }
    if (!any)
        fake_xe.unmap_nothing++;
}

static int vm_bind(unsigned file, struct fake_xe_vm_bind *a)
{
    const struct fake_xe_sync *syncs = (const void *)(uintptr_t)a->syncs;
    unsigned signals;
    int err;

    if (a->extensions || a->pad || a->pad2 || a->reserved[0] || a->reserved[1] || a->num_binds != 1)
        return -EINVAL;                  /* vectors of binds are not faked */
    if (a->exec_queue_id)
        return -ENOENT;                  /* bind queues are not faked */
    if ((err = check_op(&a->bind)) < 0)
        return err;
    if (!vm_of(file, a->vm_id))
        return -EINVAL;                  /* xe_vm_lookup failing */
    if ((err = check_syncs(file, syncs, a->num_syncs, &signals)) < 0)
        return err;
    if (a->bind.op == OP_MAP && (err = map(file, a->vm_id, &a->bind)) < 0)
        return err;
    if (a->bind.op == OP_UNMAP)
        unmap(a->vm_id, &a->bind);
    if (!signals)
        fake_xe.binds_unsynced++;
    signal_syncs(syncs, a->num_syncs);
    return 0;
}

/* ---- exec queues -------------------------------------------------------------- */

static int queue_create(unsigned file, struct fake_xe_queue_create *a)
{
    const struct fake_xe_engine_ci *ci = (const void *)(uintptr_t)a->instances;

    if (a->extensions || a->flags || a->reserved[0] || a->reserved[1] || a->exec_queue_id)
        return -EINVAL;
    if (a->width != 1 || a->num_placements != 1 || !ci)
        return -EINVAL;                  /* parallel and virtual queues are not faked */
    if (ci->engine_class > 1 || ci->engine_instance || ci->gt_id || ci->pad)
        return -EINVAL;                  /* the fake's engines: render and copy on GT 0 */
    if (!vm_of(file, a->vm_id))
        return -ENOENT;
    for (uint32_t i = 1; i <= MAX_QUEUES; i++)
        if (!queues[i].live) {
            queues[i].live = true;
            queues[i].file = file;
            queues[i].vm = a->vm_id;
            queues[i].width = a->width;
            fake_xe.queues++;
            fake_xe.last_engine_class = ci->engine_class;
            a->exec_queue_id = i;
            return 0;
        }
    return -ENOMEM;
}

static bool queue_of(unsigned file, uint32_t id)
{
    return id && id <= MAX_QUEUES && queues[id].live && queues[id].file == file;
}

static int queue_destroy(unsigned file, struct fake_xe_queue_destroy *a)
{
    if (a->pad || a->reserved[0] || a->reserved[1])
        return -EINVAL;
    if (!queue_of(file, a->exec_queue_id))
        return -ENOENT;
    queues[a->exec_queue_id].live = false;
    fake_xe.queues--;
    return 0;
}

/* ---- exec: the batch through the VM's bindings ------------------------------- */

/* The object bytes behind [va, va + bytes) in one binding of `vm`, or NULL. */
static uint8_t *resolve(uint32_t vm, uint64_t va, uint64_t bytes)
{
    for (unsigned i = 0; i < MAX_MAPPINGS; i++) {
        uint64_t off;

        if (!maps[i].live || maps[i].vm != vm || va < maps[i].va || va - maps[i].va >= maps[i].size)
            continue;
        off = va - maps[i].va;
        if (bytes > maps[i].size - off || !fake_drm_object(maps[i].handle))
            return NULL;
        return fake_drm_bytes(maps[i].handle) + maps[i].offset + off;
    }
    return NULL;
}

static void gpu_fault(uint64_t va)
{
    fake_xe.faults++;
    fake_xe.fault_address = va;
}

/* MI_STORE_DATA_IMM at `at`: header, address low and high, one or two
 * dwords; false when the GPU stops (the fault recorded). */
static bool store_data(uint32_t vm, const uint32_t *dw, unsigned len, uint64_t at)
{
    uint64_t dst;
    uint8_t *p;

    if ((dw[0] & SDI_GGTT) || len < 4 || len > 5) {
        gpu_fault(at);
        return false;
    }
    dst = dw[1] | (uint64_t)dw[2] << 32;
    if ((dst & 3) || !(p = resolve(vm, dst, (len - 3) * 4ull))) {
        gpu_fault(dst);
        return false;
    }
    memmove(p, dw + 3, (len - 3) * 4u);  /* a batch may store over its own dwords */
    return true;
}

/* Runs from `va` until MI_BATCH_BUFFER_END or a fault. */
static void run_batch(uint32_t vm, uint64_t va)
{
    for (unsigned n = 0; n < MAX_BATCH_DWORDS;) {
        uint64_t at = va + n * 4ull;
        const uint32_t *dw = (const uint32_t *)resolve(vm, at, 4);
        unsigned len;

        if (!dw) {
            gpu_fault(at);
            return;
        }
        if (MI_OP(dw[0]) == MI_BATCH_BUFFER_END && !(dw[0] & 0x7fffff))
            return;
        if (dw[0] == MI_NOOP) {
            n++;
            continue;
        }
        len = (dw[0] & 0x3ff) + 2;
        if (MI_OP(dw[0]) != MI_STORE_DATA_IMM || !(dw = (const uint32_t *)resolve(vm, at, len * 4ull)) ||
            !store_data(vm, dw, len, at)) {
            if (!fake_xe.faults || fake_xe.fault_address != at)
                gpu_fault(at);
            return;
        }
        n += len;
    }
    gpu_fault(va);                       /* ran away */
}

static int exec(unsigned file, struct fake_xe_exec *a)
{
    const struct fake_xe_sync *syncs = (const void *)(uintptr_t)a->syncs;
    unsigned signals;
    int err;

    if (a->extensions || a->pad[0] || a->pad[1] || a->pad[2] || a->reserved[0] || a->reserved[1])
        return -EINVAL;
    if (!queue_of(file, a->exec_queue_id))
        return -ENOENT;
    if (a->num_batch_buffer != queues[a->exec_queue_id].width)
        return -EINVAL;
    if ((err = check_syncs(file, syncs, a->num_syncs, &signals)) < 0)
        return err;
    fake_xe.execs++;
    fake_xe.last_batch = a->address;
    fake_xe.last_num_syncs = a->num_syncs;
    run_batch(queues[a->exec_queue_id].vm, a->address);
    signal_syncs(syncs, a->num_syncs);
    return 0;
}

/* ---- SYNCOBJ_TIMELINE_WAIT, GEM_CLOSE ------------------------------------------ */

static int timeline_wait(unsigned file, struct drm_syncobj_timeline_wait *w)
{
    const uint32_t *h = (const void *)(uintptr_t)w->handles;
    const uint64_t *p = (const void *)(uintptr_t)w->points;
    uint64_t value;

    if (!w->count_handles || w->pad)
        return -EINVAL;
    for (uint32_t i = 0; i < w->count_handles; i++) {
        if (fake_drm_syncobj_value(file, h[i], &value) < 0)
            return -ENOENT;
        if (value < p[i])
            return -EINVAL;              /* nothing here would ever signal it */
    }
    fake_xe.bind_waits++;
    return 0;
}

/* GEM_CLOSE: the kernel keeps a bound object alive through its binding;
 * the miniport unbinds first, which the books check. */
static void gem_closing(uint32_t handle)
{
    for (unsigned i = 0; i < MAX_MAPPINGS; i++)
        if (maps[i].live && maps[i].handle == handle) {
            fake_xe.closed_while_bound++;
            return;
        }
}

static int xe_exec_ioctl(unsigned file, unsigned long request, void *arg)
{
    switch (request) {
    case FAKE_XE_DEVICE_QUERY: return device_query(arg);
    case FAKE_XE_VM_CREATE: return vm_create(file, arg);
    case FAKE_XE_VM_DESTROY: return vm_destroy(file, arg);
    case FAKE_XE_VM_BIND: return vm_bind(file, arg);
    case FAKE_XE_QUEUE_CREATE: return queue_create(file, arg);
    case FAKE_XE_QUEUE_DESTROY: return queue_destroy(file, arg);
    case FAKE_XE_EXEC: return exec(file, arg);
    case DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT: return timeline_wait(file, arg);
    case DRM_IOCTL_GEM_CLOSE:
        gem_closing(((struct drm_gem_close *)arg)->handle);
        return 0;
    }
    return -ENOTTY;
}

__attribute__((constructor)) static void hand_xe_exec_to_the_fake(void)
{
    fake_drm_xe_exec = xe_exec_ioctl;
}
