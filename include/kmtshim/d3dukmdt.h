/*
 * D3DDDI types shared by user mode and kernel mode (Microsoft's d3dukmdt.h).
 *
 * Written for kmtshim from Microsoft's published documentation of each type.
 * Every struct a program hands to a thunk carries compile-time checks of its
 * size and field offsets on x86_64 and on i386; they hold for gcc on Linux
 * and for mingw-w64 alike.
 */
#ifndef KMTSHIM_D3DUKMDT_H
#define KMTSHIM_D3DUKMDT_H

#include "kmt_wintypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel-mode object handle as seen by user mode (32 bits on every ABI). */
typedef UINT D3DKMT_HANDLE;
typedef UINT64 D3DGPU_VIRTUAL_ADDRESS;
typedef UINT D3DDDI_VIDEO_PRESENT_SOURCE_ID;
typedef UINT D3DDDI_VIDEO_PRESENT_TARGET_ID;

#define D3DDDI_ID_UNINITIALIZED ((UINT)(~0u))
#define D3DDDI_ID_NOTAPPLICABLE ((UINT)0)
#define D3DDDI_ID_ALL ((UINT)(~0u))

/* ---- formats, rates, scan-out (used by d3dumddi.h and display modes) -- */

typedef enum _D3DDDIFORMAT {
    D3DDDIFMT_UNKNOWN = 0,
    D3DDDIFMT_A8R8G8B8 = 21,
    D3DDDIFMT_X8R8G8B8 = 22,
    D3DDDIFMT_R5G6B5 = 23,
    D3DDDIFMT_A8 = 28,
    D3DDDIFMT_L8 = 50,
    D3DDDIFMT_VERTEXDATA = 100,
    D3DDDIFMT_INDEX16 = 101,
    D3DDDIFMT_INDEX32 = 102,
    D3DDDIFMT_FORCE_UINT = 0x7fffffff
} D3DDDIFORMAT;

typedef enum _D3DDDI_ROTATION {
    D3DDDI_ROTATION_IDENTITY = 1,
    D3DDDI_ROTATION_90 = 2,
    D3DDDI_ROTATION_180 = 3,
    D3DDDI_ROTATION_270 = 4,
} D3DDDI_ROTATION;

typedef struct _D3DDDI_RATIONAL {
    UINT Numerator;
    UINT Denominator;
} D3DDDI_RATIONAL;
KMT_CHECK_SIZE(D3DDDI_RATIONAL, 8);
KMT_CHECK_SIZE_I386(D3DDDI_RATIONAL, 8);

typedef enum _D3DDDI_VIDEO_SIGNAL_SCANLINE_ORDERING {
    D3DDDI_VSSLO_UNINITIALIZED = 0,
    D3DDDI_VSSLO_PROGRESSIVE = 1,
    D3DDDI_VSSLO_INTERLACED_UPPERFIELDFIRST = 2,
    D3DDDI_VSSLO_INTERLACED_LOWERFIELDFIRST = 3,
    D3DDDI_VSSLO_OTHER = 255,
} D3DDDI_VIDEO_SIGNAL_SCANLINE_ORDERING;

/* ---- allocation descriptions ------------------------------------------ */

typedef struct _D3DDDI_ALLOCATIONINFOFLAGS {
    UINT Primary : 1;
    UINT Stereo : 1;
    UINT Reserved : 30;
} D3DDDI_ALLOCATIONINFOFLAGS;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONINFOFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_ALLOCATIONINFOFLAGS, 4);

typedef struct _D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0 {
    UINT Primary : 1;
    UINT Stereo : 1;
    UINT OverridePriority : 1;
    UINT Reserved : 29;
} D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0, 4);
KMT_CHECK_SIZE_I386(D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0, 4);

typedef struct _D3DDDI_ALLOCATIONINFO {
    D3DKMT_HANDLE hAllocation;          /* out */
    const void *pSystemMem;             /* in: existing system memory or NULL */
    void *pPrivateDriverData;           /* in: goes to DxgkDdiCreateAllocation */
    UINT PrivateDriverDataSize;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    D3DDDI_ALLOCATIONINFOFLAGS Flags;
} D3DDDI_ALLOCATIONINFO;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONINFO, 0x28);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO, hAllocation, 0x00);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO, pSystemMem, 0x08);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO, pPrivateDriverData, 0x10);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO, PrivateDriverDataSize, 0x18);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO, VidPnSourceId, 0x1c);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO, Flags, 0x20);
KMT_CHECK_SIZE_I386(D3DDDI_ALLOCATIONINFO, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO, hAllocation, 0x00);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO, pSystemMem, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO, pPrivateDriverData, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO, PrivateDriverDataSize, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO, VidPnSourceId, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO, Flags, 0x14);

typedef struct _D3DDDI_ALLOCATIONINFO2 {
    D3DKMT_HANDLE hAllocation;          /* out */
    union {
        HANDLE hSection;                /* with ExistingSection */
        const void *pSystemMem;         /* with ExistingSysMem */
    };
    void *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0 Flags;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress; /* out */
    union {
        ULONG Priority;                 /* with Flags.OverridePriority */
        ULONG_PTR Unused;
    };
    ULONG_PTR Reserved[5];
} D3DDDI_ALLOCATIONINFO2;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONINFO2, 0x60);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, hAllocation, 0x00);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, pSystemMem, 0x08);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, hSection, 0x08);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, pPrivateDriverData, 0x10);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, PrivateDriverDataSize, 0x18);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, VidPnSourceId, 0x1c);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, Flags, 0x20);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, GpuVirtualAddress, 0x28);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, Priority, 0x30);
KMT_CHECK_OFFSET(D3DDDI_ALLOCATIONINFO2, Reserved, 0x38);
KMT_CHECK_SIZE_I386(D3DDDI_ALLOCATIONINFO2, 0x38);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, hAllocation, 0x00);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, pSystemMem, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, hSection, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, pPrivateDriverData, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, PrivateDriverDataSize, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, VidPnSourceId, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, Flags, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, GpuVirtualAddress, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, Priority, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDI_ALLOCATIONINFO2, Reserved, 0x24);

typedef struct _D3DDDI_OPENALLOCATIONINFO {
    D3DKMT_HANDLE hAllocation;          /* out */
    const void *pPrivateDriverData;
    UINT PrivateDriverDataSize;
} D3DDDI_OPENALLOCATIONINFO;
KMT_CHECK_SIZE(D3DDDI_OPENALLOCATIONINFO, 0x18);
KMT_CHECK_OFFSET(D3DDDI_OPENALLOCATIONINFO, pPrivateDriverData, 0x08);
KMT_CHECK_OFFSET(D3DDDI_OPENALLOCATIONINFO, PrivateDriverDataSize, 0x10);
KMT_CHECK_SIZE_I386(D3DDDI_OPENALLOCATIONINFO, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDI_OPENALLOCATIONINFO, pPrivateDriverData, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDI_OPENALLOCATIONINFO, PrivateDriverDataSize, 0x08);

typedef struct _D3DDDI_OPENALLOCATIONINFO2 {
    D3DKMT_HANDLE hAllocation;
    const void *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress;
    ULONG_PTR Reserved[6];
} D3DDDI_OPENALLOCATIONINFO2;
KMT_CHECK_SIZE(D3DDDI_OPENALLOCATIONINFO2, 0x50);
KMT_CHECK_OFFSET(D3DDDI_OPENALLOCATIONINFO2, GpuVirtualAddress, 0x18);
KMT_CHECK_OFFSET(D3DDDI_OPENALLOCATIONINFO2, Reserved, 0x20);
KMT_CHECK_SIZE_I386(D3DDDI_OPENALLOCATIONINFO2, 0x30);
KMT_CHECK_OFFSET_I386(D3DDDI_OPENALLOCATIONINFO2, GpuVirtualAddress, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDI_OPENALLOCATIONINFO2, Reserved, 0x18);

/* Flags of D3DKMTDestroyAllocation2 and pfnDeallocate2Cb. */
typedef struct _D3DDDICB_DESTROYALLOCATION2FLAGS {
    union {
        struct {
            UINT AssumeNotInUse : 1;     /* don't wait for queued GPU work */
            UINT SynchronousDestroy : 1; /* return after memory is reclaimed */
            UINT Reserved : 29;
            UINT SystemUseOnly : 1;      /* must not be set by a UMD */
        };
        UINT Value;
    };
} D3DDDICB_DESTROYALLOCATION2FLAGS;
KMT_CHECK_SIZE(D3DDDICB_DESTROYALLOCATION2FLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDICB_DESTROYALLOCATION2FLAGS, 4);

/* CPU lock flags of D3DKMTLock / pfnLockCb. */
typedef struct _D3DDDICB_LOCKFLAGS {
    union {
        struct {
            UINT ReadOnly : 1;
            UINT WriteOnly : 1;
            UINT DonotWait : 1;
            UINT IgnoreSync : 1;
            UINT LockEntire : 1;
            UINT DonotEvict : 1;
            UINT AcquireAperture : 1;
            UINT Discard : 1;
            UINT NoExistingReference : 1;
            UINT UseAlternateVA : 1;
            UINT IgnoreReadSync : 1;
            UINT Reserved : 21;
        };
        UINT Value;
    };
} D3DDDICB_LOCKFLAGS;
KMT_CHECK_SIZE(D3DDDICB_LOCKFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDICB_LOCKFLAGS, 4);

typedef struct _D3DDDICB_LOCK2FLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} D3DDDICB_LOCK2FLAGS;
KMT_CHECK_SIZE(D3DDDICB_LOCK2FLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDICB_LOCK2FLAGS, 4);

/* ---- escapes ----------------------------------------------------------- */

typedef struct _D3DDDI_ESCAPEFLAGS {
    union {
        struct {
            UINT HardwareAccess : 1;
            UINT DeviceStatusQuery : 1;
            UINT ChangeFrameLatency : 1;
            UINT NoAdapterSynchronization : 1;
            UINT Reserved : 1;
            UINT VirtualMachineData : 1;
            UINT DriverKnownEscape : 1;
            UINT DriverCommonEscape : 1;
            UINT Reserved2 : 24;
        };
        UINT Value;
    };
} D3DDDI_ESCAPEFLAGS;
KMT_CHECK_SIZE(D3DDDI_ESCAPEFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_ESCAPEFLAGS, 4);


/* ---- contexts ------------------------------------------------------------ */

typedef struct _D3DDDI_CREATECONTEXTFLAGS {
    union {
        struct {
            UINT NullRendering : 1;
            UINT InitialData : 1;
            UINT DisableGpuTimeout : 1;     /* WDDM 2.0 */
            UINT SynchronizationOnly : 1;   /* WDDM 2.0 */
            UINT HwQueueSupported : 1;      /* WDDM 2.3 */
            UINT NoKmdAccess : 1;           /* WDDM 3.1 */
            UINT TestContext : 1;           /* WDDM 3.2 */
            UINT Reserved : 25;
        };
        UINT Value;
    };
} D3DDDI_CREATECONTEXTFLAGS;
KMT_CHECK_SIZE(D3DDDI_CREATECONTEXTFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_CREATECONTEXTFLAGS, 4);

/* ---- command submission (legacy patching model) ------------------------- */

typedef struct _D3DDDI_ALLOCATIONLIST {
    D3DKMT_HANDLE hAllocation;
    union {
        struct {
            UINT WriteOperation : 1;
            UINT DoNotRetireInstance : 1;
            UINT OfferPriority : 3;         /* WDDM 1.3 */
            UINT Reserved : 27;
        };
        UINT Value;
    };
} D3DDDI_ALLOCATIONLIST;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONLIST, 8);
KMT_CHECK_SIZE_I386(D3DDDI_ALLOCATIONLIST, 8);

typedef struct _D3DDDI_PATCHLOCATIONLIST {
    UINT AllocationIndex;
    union {
        struct {
            UINT SlotId : 24;
            UINT Reserved : 8;
        };
        UINT Value;
    };
    UINT DriverId;
    UINT AllocationOffset;
    UINT PatchOffset;
    UINT SplitOffset;
} D3DDDI_PATCHLOCATIONLIST;
KMT_CHECK_SIZE(D3DDDI_PATCHLOCATIONLIST, 0x18);
KMT_CHECK_OFFSET(D3DDDI_PATCHLOCATIONLIST, DriverId, 0x08);
KMT_CHECK_OFFSET(D3DDDI_PATCHLOCATIONLIST, SplitOffset, 0x14);
KMT_CHECK_SIZE_I386(D3DDDI_PATCHLOCATIONLIST, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_PATCHLOCATIONLIST, DriverId, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDI_PATCHLOCATIONLIST, SplitOffset, 0x14);

/* ---- synchronization objects --------------------------------------------- */

#define D3DDDI_MAX_OBJECT_WAITED_ON 32
#define D3DDDI_MAX_OBJECT_SIGNALED 32
#define D3DDDI_MAX_BROADCAST_CONTEXT 64
#define D3DDDI_MAX_WRITTEN_PRIMARIES 16

typedef enum _D3DDDI_SYNCHRONIZATIONOBJECT_TYPE {
    D3DDDI_SYNCHRONIZATION_MUTEX = 1,
    D3DDDI_SEMAPHORE = 2,
    D3DDDI_FENCE = 3,
    D3DDDI_CPU_NOTIFICATION = 4,
    D3DDDI_MONITORED_FENCE = 5,           /* WDDM 2.0 */
    D3DDDI_PERIODIC_MONITORED_FENCE = 6,  /* WDDM 2.0 */
    D3DDDI_NATIVE_FENCE = 7,              /* WDDM 3.1 */
    D3DDDI_SYNCHRONIZATION_TYPE_LIMIT
} D3DDDI_SYNCHRONIZATIONOBJECT_TYPE;

typedef struct _D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS {
    union {
        struct {
            UINT Shared : 1;
            UINT NtSecuritySharing : 1;   /* requires Shared */
            UINT CrossAdapter : 1;
            UINT TopOfPipeline : 1;
            UINT NoSignal : 1;            /* waits only: signals get STATUS_ACCESS_DENIED */
            UINT NoWait : 1;              /* signals only: waits get STATUS_ACCESS_DENIED */
            UINT NoSignalMaxValueOnTdr : 1;
            UINT NoGPUAccess : 1;
            UINT SignalByKmd : 1;         /* WDDM 3.0 */
            UINT Unused : 1;
            UINT UnwaitCpuWaitersOnlyOnDestroy : 1; /* WDDM 3.2 */
            UINT Reserved : 20;
            UINT D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0 : 1;
        };
        UINT Value;
    };
} D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS;
KMT_CHECK_SIZE(D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS, 4);

/* D3DKMTCreateSynchronizationObject (v1): mutexes and semaphores only. */
typedef struct _D3DDDI_SYNCHRONIZATIONOBJECTINFO {
    D3DDDI_SYNCHRONIZATIONOBJECT_TYPE Type;
    union {
        struct {
            BOOL InitialState;            /* TRUE: created owned */
        } SynchronizationMutex;
        struct {
            UINT MaxCount;
            UINT InitialCount;
        } Semaphore;
        struct {
            UINT Reserved[16];
        } Reserved;
    };
} D3DDDI_SYNCHRONIZATIONOBJECTINFO;
KMT_CHECK_SIZE(D3DDDI_SYNCHRONIZATIONOBJECTINFO, 0x44);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO, Semaphore.InitialCount, 0x08);
KMT_CHECK_SIZE_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO, 0x44);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO, Semaphore.InitialCount, 0x08);

typedef struct _D3DDDI_SYNCHRONIZATIONOBJECTINFO2 {
    D3DDDI_SYNCHRONIZATIONOBJECT_TYPE Type;
    D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS Flags;
    union {
        struct {
            BOOL InitialState;
        } SynchronizationMutex;
        struct {
            UINT MaxCount;
            UINT InitialCount;
        } Semaphore;
        struct {
            UINT64 FenceValue;
        } Fence;
        struct {
            HANDLE Event;                 /* a Win32 event (an eventfd natively) */
        } CPUNotification;
        struct {
            UINT64 InitialFenceValue;
            VOID *FenceValueCPUVirtualAddress;            /* out, read-only */
            D3DGPU_VIRTUAL_ADDRESS FenceValueGPUVirtualAddress; /* out */
            UINT EngineAffinity;
            UINT Padding;
        } MonitoredFence;
        struct {
            D3DKMT_HANDLE hAdapter;
            D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;
            UINT64 Time;
            VOID *FenceValueCPUVirtualAddress;
            D3DGPU_VIRTUAL_ADDRESS FenceValueGPUVirtualAddress;
            UINT EngineAffinity;
            UINT Padding;
        } PeriodicMonitoredFence;
        struct {
            UINT64 Reserved[8];
        } Reserved;
    };
    D3DKMT_HANDLE SharedHandle;           /* out with Flags.Shared */
} D3DDDI_SYNCHRONIZATIONOBJECTINFO2;
KMT_CHECK_SIZE(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, 0x50);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, Flags, 0x04);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, Fence.FenceValue, 0x08);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, CPUNotification.Event, 0x08);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, MonitoredFence.FenceValueCPUVirtualAddress, 0x10);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, MonitoredFence.FenceValueGPUVirtualAddress, 0x18);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, MonitoredFence.EngineAffinity, 0x20);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, PeriodicMonitoredFence.Time, 0x10);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, PeriodicMonitoredFence.FenceValueCPUVirtualAddress, 0x18);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, PeriodicMonitoredFence.EngineAffinity, 0x28);
KMT_CHECK_OFFSET(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, SharedHandle, 0x48);
KMT_CHECK_SIZE_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, 0x50);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, Flags, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, Fence.FenceValue, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, CPUNotification.Event, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, MonitoredFence.FenceValueCPUVirtualAddress, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, MonitoredFence.FenceValueGPUVirtualAddress, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, MonitoredFence.EngineAffinity, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, PeriodicMonitoredFence.Time, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, PeriodicMonitoredFence.FenceValueCPUVirtualAddress, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, PeriodicMonitoredFence.EngineAffinity, 0x28);
KMT_CHECK_OFFSET_I386(D3DDDI_SYNCHRONIZATIONOBJECTINFO2, SharedHandle, 0x48);

typedef struct _D3DDDICB_SIGNALFLAGS {
    union {
        struct {
            UINT SignalAtSubmission : 1;
            UINT EnqueueCpuEvent : 1;     /* ObjectCount must be 0 */
            UINT AllowFenceRewind : 1;    /* WDDM 2.0 */
            UINT Reserved : 28;
            UINT DXGK_SIGNAL_FLAG_INTERNAL0 : 1;
        };
        UINT Value;
    };
} D3DDDICB_SIGNALFLAGS;
KMT_CHECK_SIZE(D3DDDICB_SIGNALFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDICB_SIGNALFLAGS, 4);

typedef struct _D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS {
    union {
        struct {
            UINT WaitAny : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS;
KMT_CHECK_SIZE(D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS, 4);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_D3DUKMDT_H */
