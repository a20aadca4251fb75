/*
 * D3DDDI types shared by user mode and kernel mode (Microsoft's d3dukmdt.h).
 *
 * Written for kmtshim from Microsoft's published documentation of each type.
 * Every struct a program hands to a thunk carries compile-time checks of its
 * x86_64 size and field offsets; they hold for gcc on Linux and for
 * mingw-w64 alike.
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

/* ---- allocation descriptions ------------------------------------------ */

typedef struct _D3DDDI_ALLOCATIONINFOFLAGS {
    UINT Primary : 1;
    UINT Stereo : 1;
    UINT Reserved : 30;
} D3DDDI_ALLOCATIONINFOFLAGS;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONINFOFLAGS, 4);

typedef struct _D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0 {
    UINT Primary : 1;
    UINT Stereo : 1;
    UINT OverridePriority : 1;
    UINT Reserved : 29;
} D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0;
KMT_CHECK_SIZE(D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0, 4);

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

typedef struct _D3DDDI_OPENALLOCATIONINFO {
    D3DKMT_HANDLE hAllocation;          /* out */
    const void *pPrivateDriverData;
    UINT PrivateDriverDataSize;
} D3DDDI_OPENALLOCATIONINFO;
KMT_CHECK_SIZE(D3DDDI_OPENALLOCATIONINFO, 0x18);
KMT_CHECK_OFFSET(D3DDDI_OPENALLOCATIONINFO, pPrivateDriverData, 0x08);
KMT_CHECK_OFFSET(D3DDDI_OPENALLOCATIONINFO, PrivateDriverDataSize, 0x10);

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

typedef struct _D3DDDICB_LOCK2FLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} D3DDDICB_LOCK2FLAGS;
KMT_CHECK_SIZE(D3DDDICB_LOCK2FLAGS, 4);

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

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_D3DUKMDT_H */
