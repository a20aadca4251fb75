/*
 * The DRM miniport's driver-private interfaces, as a WDDM vendor defines
 * them for its own user-mode driver: the allocation descriptor passed as
 * per-allocation private data, the adapter's UMDRIVERPRIVATE blob, and the
 * driver-private escapes.
 *
 * Layouts are fixed-size and versioned, without pointers: the same on x86_64
 * and i386 (both pinned below); every reserved field must be 0.
 */
#ifndef KMTSHIM_KMTDRM_H
#define KMTSHIM_KMTDRM_H

#include "kmt_wintypes.h"
#include "d3dkmthk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KMT_DRM_MAGIC 0x4d52444bu           /* "KDRM" */
#define KMT_DRM_VERSION 1u

/* ---- allocations ---------------------------------------------------------
 * Per-allocation private data of CreateAllocation (in/out).  In: Size and
 * Flags.  Out: what the driver made of it.  Standard existing-heap
 * allocations need no descriptor. */
#define KMT_DRM_ALLOCATION_DEVICE_LOCAL  0x1u   /* prefer VRAM where the GPU has it */
#define KMT_DRM_ALLOCATION_WRITECOMBINE  0x2u   /* CPU mapping write-combined where possible */
#define KMT_DRM_ALLOCATION_VALID_FLAGS   0x3u

/* How the buffer is backed (Backing, out). */
#define KMT_DRM_BACKING_BO           1u     /* a GEM buffer object of the driver */
#define KMT_DRM_BACKING_USERPTR      2u     /* a GEM object over the caller's pages */
#define KMT_DRM_BACKING_COPY         3u     /* a GEM object holding a copy of the caller's pages */

typedef struct _KMT_DRM_ALLOCATION_DESC {
    UINT Magic;                  /* KMT_DRM_MAGIC */
    UINT Version;                /* KMT_DRM_VERSION */
    UINT64 Size;                 /* in: bytes (rounded up to pages) */
    UINT Flags;                  /* in: KMT_DRM_ALLOCATION_* */
    UINT Backing;                /* out: KMT_DRM_BACKING_* */
    UINT64 AllocatedSize;        /* out */
    UINT GemHandle;              /* out: on the adapter's DRM fd in this process */
    UINT Reserved;
} KMT_DRM_ALLOCATION_DESC;
KMT_CHECK_SIZE(KMT_DRM_ALLOCATION_DESC, 0x28);
KMT_CHECK_OFFSET(KMT_DRM_ALLOCATION_DESC, Size, 0x08);
KMT_CHECK_OFFSET(KMT_DRM_ALLOCATION_DESC, Flags, 0x10);
KMT_CHECK_OFFSET(KMT_DRM_ALLOCATION_DESC, AllocatedSize, 0x18);
KMT_CHECK_OFFSET(KMT_DRM_ALLOCATION_DESC, GemHandle, 0x20);
KMT_CHECK_SIZE_I386(KMT_DRM_ALLOCATION_DESC, 0x28);
KMT_CHECK_OFFSET_I386(KMT_DRM_ALLOCATION_DESC, Size, 0x08);
KMT_CHECK_OFFSET_I386(KMT_DRM_ALLOCATION_DESC, Flags, 0x10);
KMT_CHECK_OFFSET_I386(KMT_DRM_ALLOCATION_DESC, AllocatedSize, 0x18);
KMT_CHECK_OFFSET_I386(KMT_DRM_ALLOCATION_DESC, GemHandle, 0x20);

/* ---- KMTQAITYPE_UMDRIVERPRIVATE ----------------------------------------------
 * Where a user-mode driver finds the kernel device behind the adapter. */
#define KMT_DRM_CAP_SYNCOBJ          0x1u
#define KMT_DRM_CAP_SYNCOBJ_TIMELINE 0x2u
#define KMT_DRM_CAP_PRIME_IMPORT     0x4u
#define KMT_DRM_CAP_PRIME_EXPORT     0x8u
#define KMT_DRM_CAP_DUMB_BUFFER      0x10u
#define KMT_DRM_CAP_USERPTR          0x20u  /* existing-sysmem allocations are zero-copy */
#define KMT_DRM_CAP_SYNCOBJ_EVENTFD  0x40u  /* DRM_IOCTL_SYNCOBJ_EVENTFD (Linux 6.6+) */
#define KMT_DRM_CAP_FENCES           0x80u  /* monitored fences are timeline syncobjs */
#define KMT_DRM_CAP_SUBMIT           0x100u /* D3DKMT submissions run on this adapter */

typedef struct _KMT_DRM_UMD_PRIVATE {
    UINT Magic;                  /* KMT_DRM_MAGIC */
    UINT Version;
    char DriverName[32];         /* the kernel driver: "virtio_gpu", "amdgpu" ... */
    char Family[16];             /* the miniport's allocator for it: "virtio_gpu",
                                    "dumb", "amdgpu", "i915", "xe", "generic" */
    char RenderNode[64];         /* "/dev/dri/renderD128", "" if none */
    char PrimaryNode[64];        /* "/dev/dri/card0", "" if none */
    UINT Caps;                   /* KMT_DRM_CAP_* */
    UINT PageSize;
    INT DrmFd;                   /* the adapter's fd in this process (-1: none) */
    BOOL AllocatorAvailable;     /* FALSE: an unknown driver, allocations fail */
} KMT_DRM_UMD_PRIVATE;
KMT_CHECK_SIZE(KMT_DRM_UMD_PRIVATE, 0xc8);
KMT_CHECK_OFFSET(KMT_DRM_UMD_PRIVATE, DriverName, 0x08);
KMT_CHECK_OFFSET(KMT_DRM_UMD_PRIVATE, RenderNode, 0x38);
KMT_CHECK_OFFSET(KMT_DRM_UMD_PRIVATE, Caps, 0xb8);
KMT_CHECK_OFFSET(KMT_DRM_UMD_PRIVATE, AllocatorAvailable, 0xc4);
KMT_CHECK_SIZE_I386(KMT_DRM_UMD_PRIVATE, 0xc8);
KMT_CHECK_OFFSET_I386(KMT_DRM_UMD_PRIVATE, DriverName, 0x08);
KMT_CHECK_OFFSET_I386(KMT_DRM_UMD_PRIVATE, RenderNode, 0x38);
KMT_CHECK_OFFSET_I386(KMT_DRM_UMD_PRIVATE, Caps, 0xb8);
KMT_CHECK_OFFSET_I386(KMT_DRM_UMD_PRIVATE, AllocatorAvailable, 0xc4);

/* ---- contexts ------------------------------------------------------------------
 * Optional private data of CreateContext / CreateContextVirtual (in/out).
 * Contexts exist where the kernel driver runs command buffers (virtio_gpu on
 * a virgl host; i915, which runs submissions where it has softpin, a full
 * PPGTT and timeline fences, CanSubmit 0 elsewhere; xe; amdgpu); elsewhere
 * CreateContext fails with STATUS_NOT_SUPPORTED. */
typedef struct _KMT_DRM_CONTEXT_DESC {
    UINT Magic;                  /* KMT_DRM_MAGIC */
    UINT Version;                /* KMT_DRM_VERSION */
    UINT KernelContext;          /* out: i915 or amdgpu context id, xe exec queue
                                    id; 0 on virtio_gpu (the fd's own virgl context) */
    UINT CanSubmit;              /* out: 1 if D3DKMT submissions run on it */
} KMT_DRM_CONTEXT_DESC;
KMT_CHECK_SIZE(KMT_DRM_CONTEXT_DESC, 0x10);
KMT_CHECK_OFFSET(KMT_DRM_CONTEXT_DESC, CanSubmit, 0x0c);
KMT_CHECK_SIZE_I386(KMT_DRM_CONTEXT_DESC, 0x10);
KMT_CHECK_OFFSET_I386(KMT_DRM_CONTEXT_DESC, CanSubmit, 0x0c);

/* ---- submissions ---------------------------------------------------------------
 * On this miniport a command buffer is the kernel driver's native stream
 * (virgl commands on virtio_gpu; a batch of GPU commands on i915 and xe; PM4
 * on amdgpu), passed as it is.  On i915, xe and amdgpu allocations have GPU
 * virtual addresses (D3DDDI_ALLOCATIONINFO2.GpuVirtualAddress): Commands is
 * the stream's GPU VA, the whole stream inside one of them (i915: 8-byte
 * aligned, ending in MI_BATCH_BUFFER_END; amdgpu: dwords, GFX ring), and on
 * i915 and amdgpu the stream reaches only the objects BoHandles names (the
 * stream's own object is added); xe binds every allocation in the adapter's
 * VM and ignores BoHandles.  A lock waits for the kernel's fences on the
 * object where the driver has a per-object wait (i915, amdgpu); xe has none:
 * fence a submission before locking what it writes, as WDDM 2.0's flagless
 * Lock2 expects anyway.  On virtio_gpu there is no GPU virtual
 * address space: Commands is the stream's CPU address in the submitting
 * process (read when the scheduler hands it to the kernel: keep it unchanged
 * until the submission completed).  A bad
 * address faults the device with DMA_PAGE_FAULTED at it.  Its optional private data
 * is a KMT_DRM_SUBMIT: the GEM handles the stream names (the kernel fences
 * them) and kernel timeline points to wait for before and signal after,
 * named by the syncobj handles KMT_DRM_ESCAPE_QUERY_FENCE gives out. */
#define KMT_DRM_SUBMIT_MAX_BOS 64u
#define KMT_DRM_SUBMIT_MAX_SYNCS 8u

typedef struct _KMT_DRM_SYNC_POINT {
    UINT SyncobjHandle;          /* of a monitored fence (QUERY_FENCE) */
    UINT Reserved;
    UINT64 Point;
} KMT_DRM_SYNC_POINT;
KMT_CHECK_SIZE(KMT_DRM_SYNC_POINT, 0x10);
KMT_CHECK_OFFSET(KMT_DRM_SYNC_POINT, Point, 0x08);
KMT_CHECK_SIZE_I386(KMT_DRM_SYNC_POINT, 0x10);
KMT_CHECK_OFFSET_I386(KMT_DRM_SYNC_POINT, Point, 0x08);

typedef struct _KMT_DRM_SUBMIT {
    UINT Magic;                  /* KMT_DRM_MAGIC */
    UINT Version;                /* KMT_DRM_VERSION */
    UINT NumBoHandles;
    UINT NumWaits;               /* points that must be signalled or submitted already */
    UINT NumSignals;
    UINT Reserved;
    UINT BoHandles[KMT_DRM_SUBMIT_MAX_BOS];
    KMT_DRM_SYNC_POINT Waits[KMT_DRM_SUBMIT_MAX_SYNCS];
    KMT_DRM_SYNC_POINT Signals[KMT_DRM_SUBMIT_MAX_SYNCS];
} KMT_DRM_SUBMIT;
KMT_CHECK_SIZE(KMT_DRM_SUBMIT, 0x218);
KMT_CHECK_OFFSET(KMT_DRM_SUBMIT, BoHandles, 0x18);
KMT_CHECK_OFFSET(KMT_DRM_SUBMIT, Waits, 0x118);
KMT_CHECK_OFFSET(KMT_DRM_SUBMIT, Signals, 0x198);
KMT_CHECK_SIZE_I386(KMT_DRM_SUBMIT, 0x218);
KMT_CHECK_OFFSET_I386(KMT_DRM_SUBMIT, BoHandles, 0x18);
KMT_CHECK_OFFSET_I386(KMT_DRM_SUBMIT, Waits, 0x118);
KMT_CHECK_OFFSET_I386(KMT_DRM_SUBMIT, Signals, 0x198);

/* ---- escapes (D3DKMT_ESCAPE_DRIVERPRIVATE) ------------------------------------ */
typedef enum _KMT_DRM_ESCAPE_CODE {
    KMT_DRM_ESCAPE_GET_STATS = 1,        /* live objects of the adapter */
    KMT_DRM_ESCAPE_QUERY_ALLOCATION = 2, /* a D3DKMT allocation's GEM object */
    KMT_DRM_ESCAPE_SET_FAULT = 3,        /* test hook: arm/disarm a DRM call failure */
    KMT_DRM_ESCAPE_QUERY_FENCE = 4,      /* a monitored fence's timeline syncobj */
    KMT_DRM_ESCAPE_QUERY_CONTEXT = 5,    /* a context's progress (needs hDevice, hContext) */
} KMT_DRM_ESCAPE_CODE;

typedef struct _KMT_DRM_STATS {
    UINT64 Devices;
    UINT64 Buffers;              /* GEM objects alive */
    UINT64 BytesAllocated;
    UINT64 Bindings;             /* open device bindings */
    UINT64 Mappings;             /* CPU mappings alive (Lock without Unlock) */
    UINT64 FaultsFired;          /* injected failures delivered since SET_FAULT */
    UINT64 FaultCallsSeen;       /* calls that matched the armed name since SET_FAULT */
    INT RenderFd;                /* this process's fds (-1: not open) */
    INT CardFd;
    UINT64 Contexts;
    UINT64 Fences;               /* monitored fences backed by a timeline syncobj */
    UINT64 Syncobjs;             /* kernel syncobjs the miniport holds (fences, rings) */
    UINT64 Submissions;          /* handed to the kernel, not completed yet */
} KMT_DRM_STATS;
KMT_CHECK_SIZE(KMT_DRM_STATS, 0x60);
KMT_CHECK_OFFSET(KMT_DRM_STATS, RenderFd, 0x38);
KMT_CHECK_OFFSET(KMT_DRM_STATS, CardFd, 0x3c);
KMT_CHECK_OFFSET(KMT_DRM_STATS, Contexts, 0x40);
KMT_CHECK_OFFSET(KMT_DRM_STATS, Submissions, 0x58);
KMT_CHECK_SIZE_I386(KMT_DRM_STATS, 0x60);
KMT_CHECK_OFFSET_I386(KMT_DRM_STATS, RenderFd, 0x38);
KMT_CHECK_OFFSET_I386(KMT_DRM_STATS, CardFd, 0x3c);
KMT_CHECK_OFFSET_I386(KMT_DRM_STATS, Contexts, 0x40);
KMT_CHECK_OFFSET_I386(KMT_DRM_STATS, Submissions, 0x58);

typedef struct _KMT_DRM_ALLOCATION_INFO {
    D3DKMT_HANDLE hAllocation;   /* in */
    UINT GemHandle;              /* out */
    INT Fd;                      /* out: the fd the handle belongs to */
    UINT Backing;                /* out: KMT_DRM_BACKING_* */
    UINT64 Size;                 /* out */
    UINT ResourceId;             /* out: virtio_gpu resource id, else 0 */
    UINT Mapped;                 /* out: 1 while locked */
} KMT_DRM_ALLOCATION_INFO;
KMT_CHECK_SIZE(KMT_DRM_ALLOCATION_INFO, 0x20);
KMT_CHECK_OFFSET(KMT_DRM_ALLOCATION_INFO, Size, 0x10);
KMT_CHECK_OFFSET(KMT_DRM_ALLOCATION_INFO, Mapped, 0x1c);
KMT_CHECK_SIZE_I386(KMT_DRM_ALLOCATION_INFO, 0x20);
KMT_CHECK_OFFSET_I386(KMT_DRM_ALLOCATION_INFO, Size, 0x10);
KMT_CHECK_OFFSET_I386(KMT_DRM_ALLOCATION_INFO, Mapped, 0x1c);

/* QUERY_FENCE hands the syncobj out: from then on the miniport also watches
 * it for signals from elsewhere (a KMT_DRM_SUBMIT, the UMD's own ioctls). */
typedef struct _KMT_DRM_FENCE_INFO {
    D3DKMT_HANDLE hSyncObject;   /* in: a monitored fence of this adapter */
    UINT SyncobjHandle;          /* out: on Fd */
    INT Fd;                      /* out */
    UINT Reserved;
    UINT64 KernelValue;          /* out: SYNCOBJ_QUERY of the timeline */
} KMT_DRM_FENCE_INFO;
KMT_CHECK_SIZE(KMT_DRM_FENCE_INFO, 0x18);
KMT_CHECK_OFFSET(KMT_DRM_FENCE_INFO, KernelValue, 0x10);
KMT_CHECK_SIZE_I386(KMT_DRM_FENCE_INFO, 0x18);
KMT_CHECK_OFFSET_I386(KMT_DRM_FENCE_INFO, KernelValue, 0x10);

/* The context's progress block lives in its context allocation. */
typedef struct _KMT_DRM_CONTEXT_INFO {
    UINT RingSyncobj;            /* out: the adapter's submission timeline (0: none) */
    INT Fd;                      /* out */
    UINT64 RingKernelValue;      /* out: SYNCOBJ_QUERY of the ring */
    UINT64 SubmittedPoint;       /* out: ring point of the context's last submission */
    UINT64 CompletedPoint;       /* out: ring point of its last completed one */
    UINT Submissions;            /* out: handed to the kernel */
    UINT Faults;                 /* out: refused by the kernel */
    UINT LastFenceId;            /* out: SubmissionFenceId of the last completed one */
    UINT KernelContext;          /* out: as KMT_DRM_CONTEXT_DESC */
} KMT_DRM_CONTEXT_INFO;
KMT_CHECK_SIZE(KMT_DRM_CONTEXT_INFO, 0x30);
KMT_CHECK_OFFSET(KMT_DRM_CONTEXT_INFO, RingKernelValue, 0x08);
KMT_CHECK_OFFSET(KMT_DRM_CONTEXT_INFO, CompletedPoint, 0x18);
KMT_CHECK_OFFSET(KMT_DRM_CONTEXT_INFO, Submissions, 0x20);
KMT_CHECK_OFFSET(KMT_DRM_CONTEXT_INFO, KernelContext, 0x2c);
KMT_CHECK_SIZE_I386(KMT_DRM_CONTEXT_INFO, 0x30);
KMT_CHECK_OFFSET_I386(KMT_DRM_CONTEXT_INFO, RingKernelValue, 0x08);
KMT_CHECK_OFFSET_I386(KMT_DRM_CONTEXT_INFO, CompletedPoint, 0x18);
KMT_CHECK_OFFSET_I386(KMT_DRM_CONTEXT_INFO, Submissions, 0x20);
KMT_CHECK_OFFSET_I386(KMT_DRM_CONTEXT_INFO, KernelContext, 0x2c);

typedef struct _KMT_DRM_FAULT {
    char Call[32];               /* a call name (see drm_fault.c) or "any"; "" disarms */
    UINT Nth;                    /* the Nth matching call from now fails, once */
    INT Errno;                   /* the errno it fails with (0: ENOMEM); negative: it
                                    succeeds, then the caller stalls -Errno ms (at most
                                    KMT_DRM_FAULT_MAX_STALL_MS), to widen a race window */
} KMT_DRM_FAULT;
KMT_CHECK_SIZE(KMT_DRM_FAULT, 0x28);
KMT_CHECK_OFFSET(KMT_DRM_FAULT, Nth, 0x20);
KMT_CHECK_OFFSET(KMT_DRM_FAULT, Errno, 0x24);
KMT_CHECK_SIZE_I386(KMT_DRM_FAULT, 0x28);
KMT_CHECK_OFFSET_I386(KMT_DRM_FAULT, Nth, 0x20);
KMT_CHECK_OFFSET_I386(KMT_DRM_FAULT, Errno, 0x24);

#define KMT_DRM_FAULT_MAX_STALL_MS 1000

typedef struct _KMT_DRM_ESCAPE {
    UINT Code;                   /* KMT_DRM_ESCAPE_CODE */
    UINT Reserved;
    union {
        KMT_DRM_STATS Stats;
        KMT_DRM_ALLOCATION_INFO Allocation;
        KMT_DRM_FAULT Fault;
        KMT_DRM_FENCE_INFO Fence;
        KMT_DRM_CONTEXT_INFO Context;
        BYTE Data[96];
    };
} KMT_DRM_ESCAPE;
KMT_CHECK_SIZE(KMT_DRM_ESCAPE, 0x68);
KMT_CHECK_OFFSET(KMT_DRM_ESCAPE, Stats, 0x08);
KMT_CHECK_OFFSET(KMT_DRM_ESCAPE, Data, 0x08);
KMT_CHECK_SIZE_I386(KMT_DRM_ESCAPE, 0x68);
KMT_CHECK_OFFSET_I386(KMT_DRM_ESCAPE, Stats, 0x08);
KMT_CHECK_OFFSET_I386(KMT_DRM_ESCAPE, Data, 0x08);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_KMTDRM_H */
