/*
 * Fuzz target: the DRM miniport (i915 family) over the fake kernel of
 * tests/drm/fake_drm.c; built again with FUZZ_MIXED as the "mixed" target,
 * where the soft adapter stands next to it, so handles of one adapter's
 * objects reach the other's calls; with FUZZ_XE as "xe" (the xe family over
 * fake_xe_exec.c: a VM, bindings, exec queues, XE_EXEC) and with
 * FUZZ_AMDGPU as "amdgpu" (the amdgpu family over fake_amdgpu.c: VA ranges
 * and mappings, the CS ioctl).  The fake lists one PCI device whose render node is
 * the fake's own memfd (/proc/self/fd/N), so the miniport opens, enumerates
 * and allocates through its real code paths; a step may arm the failure of
 * the Nth DRM call (KMT_DRM_ESCAPE_SET_FAULT, docs/drm.md).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fake_drm.h"
#include "kmtshim/kmtdrm.h"
#include "kmtshim/kmtsoft.h"

#ifdef FUZZ_MIXED
#define MINIPORTS "drm,soft"
#define NAME "mixed"
#else
#define MINIPORTS "drm"
#endif

/* The fake device of the target's family, with timeline syncobjs on. */
#if defined(FUZZ_XE)
#include "fake_xe_exec.h"
#define NAME "xe"
#define DRIVER "xe"
static const struct fake_drm_config config = { .driver = FAKE_XE, .discrete = true, .timelines = true };
#elif defined(FUZZ_AMDGPU)
#include "fake_amdgpu.h"
#define NAME "amdgpu"
#define DRIVER "amdgpu"
static const struct fake_drm_config config = { .driver = FAKE_AMDGPU, .timelines = true };
#else
#ifndef NAME
#define NAME "drm"
#endif
#define DRIVER "i915"
static const struct fake_drm_config config = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
#endif

/* With KMT_FUZZ_VERBOSE, what reached the fake kernel's submission. */
static void report(void)
{
#if defined(FUZZ_XE)
    fprintf(stderr, "# fake xe: %u XE_EXEC, %u GPU faults\n", fake_xe.execs, fake_xe.faults);
#elif defined(FUZZ_AMDGPU)
    fprintf(stderr, "# fake amdgpu: %u AMDGPU_CS\n", fake_amdgpu.total_submissions);
#else
    fprintf(stderr, "# fake i915: %u EXECBUFFER2, %u hangs\n", fake_drm.execs, fake_drm.exec_hangs);
#endif
}

static void setup(void)
{
    static char node[64];
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, node };
    int fd;

#ifdef FUZZ_XE
    fake_xe_reset();
#endif
    fd = fake_drm_open(&config);

    if (fd < 0) {
        fprintf(stderr, "fuzz: no fake DRM device\n");
        abort();
    }
    snprintf(node, sizeof(node), "/proc/self/fd/%d", fd);
    fake_drm_set_devices(&dev, 1, DRIVER);
    setenv("KMTSHIM_DRM_SYSFS", "/nonexistent", 1);
    setenv("KMTSHIM_MINIPORT", MINIPORTS, 1);
    unsetenv("KMTSHIM_DRM_FAULT");
    if (getenv("KMT_FUZZ_VERBOSE"))
        atexit(report);
}

static NTSTATUS escape(D3DKMT_HANDLE adapter, KMT_DRM_ESCAPE *e)
{
    D3DKMT_ESCAPE d = { .hAdapter = adapter, .Type = D3DKMT_ESCAPE_DRIVERPRIVATE,
                        .pPrivateDriverData = e, .PrivateDriverDataSize = sizeof(*e) };

    return D3DKMTEscape(&d);
}

static NTSTATUS set_fault(D3DKMT_HANDLE adapter, const char *call, UINT nth, INT err)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_SET_FAULT };

    snprintf(e.Fault.Call, sizeof(e.Fault.Call), "%s", call);
    e.Fault.Nth = nth;
    e.Fault.Errno = err;
    return escape(adapter, &e);
}

static void arm_fault(D3DKMT_HANDLE adapter, struct fuzz_input *in)
{
#if defined(FUZZ_XE) || defined(FUZZ_AMDGPU)
    /* the calls every family makes, then the family's own */
    static const char *const calls[] = {
        "any", "open", "mmap", "SYNCOBJ_CREATE", "GET_CAP", "SYNCOBJ_EVENTFD", "SYNCOBJ_TIMELINE_SIGNAL",
        "SYNCOBJ_QUERY", "SYNCOBJ_RESET", "submitted",
#if defined(FUZZ_XE)
        "XE_DEVICE_QUERY", "XE_VM_CREATE", "XE_VM_BIND", "XE_VM_BIND_WAIT", "XE_GEM_CREATE",
        "XE_GEM_MMAP_OFFSET", "XE_EXEC_QUEUE_CREATE", "XE_EXEC",
#else
        "amdgpu_device_initialize", "amdgpu_va_range_alloc", "amdgpu_bo_va_op", "amdgpu_bo_export",
        "amdgpu_bo_alloc", "amdgpu_create_bo_from_user_mem", "amdgpu_bo_cpu_map", "amdgpu_bo_wait_for_idle",
        "AMDGPU_CTX", "AMDGPU_CS",
#endif
    };
#else
    static const char *const calls[] = {
        "any", "open", "mmap", "I915_GEM_CREATE_EXT", "I915_GEM_CREATE", "I915_GEM_MMAP_OFFSET",
        "I915_GEM_USERPTR", "I915_GEM_WAIT", "I915_GEM_CONTEXT_CREATE_EXT", "SYNCOBJ_CREATE",
        "GET_CAP", "I915_QUERY", "I915_GEM_EXECBUFFER2", "I915_GEM_CONTEXT_GETPARAM", "SYNCOBJ_EVENTFD",
        "SYNCOBJ_TIMELINE_SIGNAL", "SYNCOBJ_QUERY", "submitted",
    };
#endif
    static const INT errs[] = { 0, ENOMEM, EINVAL, EFAULT, ENOSPC, EIO, -1 };
    const char *call = calls[fuzz_u8(in) % (sizeof(calls) / sizeof(calls[0]))];
    UINT nth = 1 + fuzz_u8(in) % 8;

    set_fault(adapter, call, nth, errs[fuzz_u8(in) % (sizeof(errs) / sizeof(errs[0]))]);
}

/* An armed fault that did not fire must not carry over into the next
 * input; nor the kernel's references to what the input exported (its
 * table of shared files would fill up over a run). */
static void reset(D3DKMT_HANDLE adapter)
{
    set_fault(adapter, "", 0, 0);
    fake_drm_forget_shared_files();
}

static UINT alloc_desc(void *dst, size_t room, UINT64 size, UINT flags)
{
    KMT_DRM_ALLOCATION_DESC d = { .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION, .Size = size,
                                  .Flags = flags };
#if defined(FUZZ_XE) || defined(FUZZ_AMDGPU)
    /* VRAM (64 KiB-aligned VAs) and write-combined objects: half of the
     * non-zero flags the input draws are the valid ones */
    if (flags & 0x100)
        d.Flags &= KMT_DRM_ALLOCATION_VALID_FLAGS;
#endif
#ifdef FUZZ_MIXED
    static unsigned turn;               /* the two adapters' descriptors in turn */
    KMT_SOFT_ALLOCATION_DESC soft = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, size, flags, 0 };

    if (turn++ % 2 && room >= sizeof(soft)) {
        memcpy(dst, &soft, sizeof(soft));
        return sizeof(soft);
    }
#endif
    if (room < sizeof(d))
        return 0;
    memcpy(dst, &d, sizeof(d));
    return sizeof(d);
}

static void counts(D3DKMT_HANDLE adapter, struct fuzz_counts *c)
{
    KMT_DRM_ESCAPE e = { .Code = KMT_DRM_ESCAPE_GET_STATS };

    if (!escape(adapter, &e)) {
        fuzz_count_add(c, "drm devices", e.Stats.Devices);
        fuzz_count_add(c, "drm buffers", e.Stats.Buffers);
        fuzz_count_add(c, "drm bytes", e.Stats.BytesAllocated);
        fuzz_count_add(c, "drm bindings", e.Stats.Bindings);
        fuzz_count_add(c, "drm mappings", e.Stats.Mappings);
        fuzz_count_add(c, "drm contexts", e.Stats.Contexts);
        fuzz_count_add(c, "drm fences", e.Stats.Fences);
        fuzz_count_add(c, "drm syncobjs", e.Stats.Syncobjs);
        fuzz_count_add(c, "drm submissions", e.Stats.Submissions);
    }
    fuzz_count_add(c, "kernel objects", fake_drm.live_objects);
    fuzz_count_add(c, "kernel contexts", fake_drm.live_contexts);
#if defined(FUZZ_XE) || defined(FUZZ_AMDGPU)
    fuzz_count_add(c, "kernel syncobjs", fake_drm.live_syncobjs);
#endif
#if defined(FUZZ_XE)
    /* live books, then the kernel's rules the miniport must never break
     * (each only grows, so any change is a finding) */
    fuzz_count_add(c, "xe VMs", fake_xe.vms);
    fuzz_count_add(c, "xe bindings", fake_xe.mappings);
    fuzz_count_add(c, "xe exec queues", fake_xe.queues);
    fuzz_count_add(c, "xe binds without an out-sync", fake_xe.binds_unsynced);
    fuzz_count_add(c, "xe MAPs over a binding", fake_xe.map_over_existing);
    fuzz_count_add(c, "xe UNMAPs of nothing", fake_xe.unmap_nothing);
    fuzz_count_add(c, "xe objects closed while bound", fake_xe.closed_while_bound);
    fuzz_count_add(c, "xe VMs destroyed bound", fake_xe.vm_destroyed_bound);
#elif defined(FUZZ_AMDGPU)
    fuzz_count_add(c, "amdgpu VA ranges", fake_amdgpu.va_ranges);
    fuzz_count_add(c, "amdgpu VA mappings", fake_amdgpu.mappings);
    fuzz_count_add(c, "amdgpu ranges freed mapped", fake_amdgpu.range_freed_mapped);
    fuzz_count_add(c, "amdgpu objects freed mapped", fake_amdgpu.bo_freed_mapped);
    fuzz_count_add(c, "amdgpu VAs left at device deinit", fake_amdgpu.left_at_deinit);
#endif
}

const struct fuzz_target fuzz_target = {
    .name = NAME,
#if defined(FUZZ_AMDGPU)
    .isa = FUZZ_ISA_PM4,
#elif !defined(FUZZ_MIXED)
    .isa = FUZZ_ISA_MI,                 /* i915 and xe (mixed keeps the soft engine's commands) */
#endif
    .setup = setup,
    .arm_fault = arm_fault,
    .reset = reset,
    .counts = counts,
    .kernel_fd = fake_drm_holds_fd,
    .alloc_desc = alloc_desc,
};
