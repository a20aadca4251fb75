/*
 * Fuzz target: the DRM miniport (i915 family) over the fake kernel of
 * tests/drm/fake_drm.c; built again with FUZZ_MIXED as the "mixed" target,
 * where the soft adapter stands next to it, so handles of one adapter's
 * objects reach the other's calls.  The fake lists one PCI device whose render node is
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
#include "miniports/drm/kmtdrm.h"
#include "kmtshim/kmtsoft.h"

#ifdef FUZZ_MIXED
#define MINIPORTS "drm,soft"
#define NAME "mixed"
#else
#define MINIPORTS "drm"
#define NAME "drm"
#endif

static void setup(void)
{
    static char node[64];
    struct fake_drm_config c = { .driver = FAKE_I915, .has_llc = true, .timelines = true };
    struct fake_drm_pci_device dev = { 0, 3, 0, 0, node };
    int fd = fake_drm_open(&c);

    if (fd < 0) {
        fprintf(stderr, "fuzz: no fake DRM device\n");
        abort();
    }
    snprintf(node, sizeof(node), "/proc/self/fd/%d", fd);
    fake_drm_set_devices(&dev, 1, "i915");
    setenv("KMTSHIM_DRM_SYSFS", "/nonexistent", 1);
    setenv("KMTSHIM_MINIPORT", MINIPORTS, 1);
    unsetenv("KMTSHIM_DRM_FAULT");
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
    static const char *const calls[] = {
        "any", "open", "mmap", "I915_GEM_CREATE_EXT", "I915_GEM_CREATE", "I915_GEM_MMAP_OFFSET",
        "I915_GEM_USERPTR", "I915_GEM_WAIT", "I915_GEM_CONTEXT_CREATE_EXT", "SYNCOBJ_CREATE",
        "GET_CAP", "I915_QUERY", "I915_GEM_EXECBUFFER2", "I915_GEM_CONTEXT_GETPARAM", "SYNCOBJ_EVENTFD",
        "SYNCOBJ_TIMELINE_SIGNAL", "SYNCOBJ_QUERY", "submitted",
    };
    static const INT errs[] = { 0, ENOMEM, EINVAL, EFAULT, ENOSPC, EIO, -1 };
    const char *call = calls[fuzz_u8(in) % (sizeof(calls) / sizeof(calls[0]))];
    UINT nth = 1 + fuzz_u8(in) % 8;

    set_fault(adapter, call, nth, errs[fuzz_u8(in) % (sizeof(errs) / sizeof(errs[0]))]);
}

/* An armed fault that did not fire must not carry over into the next input. */
static void reset(D3DKMT_HANDLE adapter)
{
    set_fault(adapter, "", 0, 0);
}

static UINT alloc_desc(void *dst, size_t room, UINT64 size, UINT flags)
{
    KMT_DRM_ALLOCATION_DESC d = { .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION, .Size = size,
                                  .Flags = flags };
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
}

const struct fuzz_target fuzz_target = {
    .name = NAME,
    .setup = setup,
    .arm_fault = arm_fault,
    .reset = reset,
    .counts = counts,
    .alloc_desc = alloc_desc,
};
