/*
 * The user-mode display driver interface (Microsoft's d3dumddi.h), the part
 * kmtshim's UMD runtime and host implement: opening an adapter through a
 * UMD, the runtime's callback table (pfnAllocateCb, pfnDeallocateCb,
 * pfnRenderCb, ...), the device entry points a D3D9-style UMD exports
 * (CreateResource, OpenResource, DestroyResource, DestroyDevice, ...).
 *
 * Written for kmtshim from Microsoft's published documentation of each type.
 * These structs cross between a runtime and a UMD that may have been built
 * by another compiler, so their x86_64 and i386 layouts are pinned by
 * KMT_CHECK_SIZE / KMT_CHECK_OFFSET and their _I386 twins, and hold for gcc
 * on Linux and for mingw-w64 alike.
 *
 * Table slots kmtshim neither calls nor implements keep their DDK names but
 * have the placeholder type KMT_PFN_UNDECLARED: their size and every offset
 * after them are exact, and nothing can call them by accident.
 */
#ifndef KMTSHIM_D3DUMDDI_H
#define KMTSHIM_D3DUMDDI_H

#include "kmt_wintypes.h"
#include "d3dukmdt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- base types the SDK headers carry on Windows --------------------------- */

#if !defined(_WIN32)
# ifndef S_OK
#  define S_OK           ((HRESULT)0x00000000L)
#  define S_FALSE        ((HRESULT)0x00000001L)
#  define E_NOTIMPL      ((HRESULT)0x80004001L)
#  define E_FAIL         ((HRESULT)0x80004005L)
#  define E_OUTOFMEMORY  ((HRESULT)0x8007000EL)
#  define E_INVALIDARG   ((HRESULT)0x80070057L)
# endif
# ifndef SUCCEEDED
#  define SUCCEEDED(hr)  ((HRESULT)(hr) >= 0)
#  define FAILED(hr)     ((HRESULT)(hr) < 0)
# endif
#endif

#ifndef D3DCOLOR_DEFINED
typedef DWORD D3DCOLOR;                /* A8R8G8B8 */
# define D3DCOLOR_DEFINED
#endif

/* D3D errors: facility 0x876 (MAKE_D3DHRESULT). */
#define KMT_MAKE_D3DHRESULT(code)      ((HRESULT)(0x88760000u | (code)))
#ifndef D3DDDIERR_DEVICEREMOVED
# define D3DDDIERR_DEVICEREMOVED       KMT_MAKE_D3DHRESULT(2160)
#endif

/* A table slot kmtshim does not declare (see the top of this file). */
typedef void (APIENTRY *KMT_PFN_UNDECLARED)(void);

/* ---- interface versions (D3DDDIARG_OPENADAPTER.DriverVersion) -------------- */

#define D3D_UMD_INTERFACE_VERSION_VISTA        0x000C
#define D3D_UMD_INTERFACE_VERSION_WIN7         0x2003
#define D3D_UMD_INTERFACE_VERSION_WIN8         0x3004
#define D3D_UMD_INTERFACE_VERSION_WDDM1_3      0x4002
#define D3D_UMD_INTERFACE_VERSION_WDDM2_0      0x5002

/* ---- resource descriptions ---------------------------------------------------- */

typedef enum _D3DDDI_POOL {
    D3DDDIPOOL_SYSTEMMEM = 1,
    D3DDDIPOOL_VIDEOMEMORY = 2,
    D3DDDIPOOL_LOCALVIDMEM = 3,
    D3DDDIPOOL_NONLOCALVIDMEM = 4,
    D3DDDIPOOL_STAGINGMEM = 5,
} D3DDDI_POOL;

typedef enum _D3DDDIMULTISAMPLE_TYPE {
    D3DDDIMULTISAMPLE_NONE = 0,
    D3DDDIMULTISAMPLE_NONMASKABLE = 1,
    D3DDDIMULTISAMPLE_FORCE_UINT = 0x7fffffff
} D3DDDIMULTISAMPLE_TYPE;

typedef struct _D3DDDI_RESOURCEFLAGS {
    union {
        struct {
            UINT RenderTarget : 1;
            UINT ZBuffer : 1;
            UINT Dynamic : 1;
            UINT HintStatic : 1;
            UINT AutogenMipmap : 1;
            UINT DMap : 1;
            UINT WriteOnly : 1;
            UINT NotLockable : 1;
            UINT Points : 1;
            UINT RtPatches : 1;
            UINT NPatches : 1;
            UINT SharedResource : 1;     /* bit 11 */
            UINT DiscardRenderTarget : 1;
            UINT Video : 1;
            UINT CaptureBuffer : 1;
            UINT Primary : 1;
            UINT Texture : 1;
            UINT CubeMap : 1;
            UINT Volume : 1;
            UINT VertexBuffer : 1;       /* bit 19 */
            UINT IndexBuffer : 1;
            UINT DecodeRenderTarget : 1;
            UINT DecodeCompressedBuffer : 1;
            UINT VideoProcessRenderTarget : 1;
            UINT CpuOptimized : 1;
            UINT MightDrawFromLocked : 1;
            UINT Overlay : 1;
            UINT MatchGdiPrimary : 1;
            UINT InterlacedRefresh : 1;
            UINT TextApi : 1;
            UINT RestrictedContent : 1;
            UINT RestrictSharedAccess : 1;
        };
        UINT Value;
    };
} D3DDDI_RESOURCEFLAGS;
KMT_CHECK_SIZE(D3DDDI_RESOURCEFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_RESOURCEFLAGS, 4);

/* One surface (mip level, cube face, volume slice...) of a resource. */
typedef struct _D3DDDI_SURFACEINFO {
    UINT Width;                          /* pixels; bytes for linear resources */
    UINT Height;
    UINT Depth;
    const VOID *pSysMem;                 /* initial contents, or NULL */
    UINT SysMemPitch;
    UINT SysMemSlicePitch;
} D3DDDI_SURFACEINFO;
KMT_CHECK_SIZE(D3DDDI_SURFACEINFO, 0x20);
KMT_CHECK_OFFSET(D3DDDI_SURFACEINFO, pSysMem, 0x10);
KMT_CHECK_OFFSET(D3DDDI_SURFACEINFO, SysMemPitch, 0x18);
KMT_CHECK_OFFSET(D3DDDI_SURFACEINFO, SysMemSlicePitch, 0x1c);
KMT_CHECK_SIZE_I386(D3DDDI_SURFACEINFO, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_SURFACEINFO, pSysMem, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDI_SURFACEINFO, SysMemPitch, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDI_SURFACEINFO, SysMemSlicePitch, 0x14);

typedef struct _D3DDDIARG_CREATERESOURCE {
    D3DDDIFORMAT Format;
    D3DDDI_POOL Pool;
    D3DDDIMULTISAMPLE_TYPE MultisampleType;
    UINT MultisampleQuality;
    const D3DDDI_SURFACEINFO *pSurfList; /* SurfCount surfaces, created as one group */
    UINT SurfCount;
    UINT MipLevels;
    UINT Fvf;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    D3DDDI_RATIONAL RefreshRate;
    HANDLE hResource;                    /* in: the runtime's handle; out: the UMD's */
    D3DDDI_RESOURCEFLAGS Flags;
    D3DDDI_ROTATION Rotation;
} D3DDDIARG_CREATERESOURCE;
KMT_CHECK_SIZE(D3DDDIARG_CREATERESOURCE, 0x40);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, pSurfList, 0x10);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, SurfCount, 0x18);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, MipLevels, 0x1c);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, Fvf, 0x20);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, VidPnSourceId, 0x24);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, RefreshRate, 0x28);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, hResource, 0x30);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, Flags, 0x38);
KMT_CHECK_OFFSET(D3DDDIARG_CREATERESOURCE, Rotation, 0x3c);
KMT_CHECK_SIZE_I386(D3DDDIARG_CREATERESOURCE, 0x38);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, pSurfList, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, SurfCount, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, MipLevels, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, Fvf, 0x1c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, VidPnSourceId, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, RefreshRate, 0x24);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, hResource, 0x2c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, Flags, 0x30);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATERESOURCE, Rotation, 0x34);

typedef struct _D3DDDI_OPENRESOURCEFLAGS {
    union {
        struct {
            UINT NtSecuritySharing : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} D3DDDI_OPENRESOURCEFLAGS;
KMT_CHECK_SIZE(D3DDDI_OPENRESOURCEFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_OPENRESOURCEFLAGS, 4);

typedef struct _D3DDDIARG_OPENRESOURCE {
    UINT NumAllocations;
    union {
        D3DDDI_OPENALLOCATIONINFO *pOpenAllocationInfo;
        D3DDDI_OPENALLOCATIONINFO2 *pOpenAllocationInfo2;
    };
    D3DKMT_HANDLE hKMResource;
    VOID *pPrivateDriverData;            /* the resource data the creator's pfnAllocateCb passed */
    UINT PrivateDriverDataSize;
    HANDLE hResource;                    /* in: the runtime's handle; out: the UMD's */
    D3DDDI_ROTATION Rotation;
    D3DDDI_OPENRESOURCEFLAGS Flags;
} D3DDDIARG_OPENRESOURCE;
KMT_CHECK_SIZE(D3DDDIARG_OPENRESOURCE, 0x38);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, pOpenAllocationInfo, 0x08);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, hKMResource, 0x10);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, pPrivateDriverData, 0x18);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, PrivateDriverDataSize, 0x20);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, hResource, 0x28);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, Rotation, 0x30);
KMT_CHECK_OFFSET(D3DDDIARG_OPENRESOURCE, Flags, 0x34);
KMT_CHECK_SIZE_I386(D3DDDIARG_OPENRESOURCE, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, pOpenAllocationInfo, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, hKMResource, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, pPrivateDriverData, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, PrivateDriverDataSize, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, hResource, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, Rotation, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENRESOURCE, Flags, 0x1c);

/* ---- CPU access and fills of resources -------------------------------------- */

typedef struct _D3DDDIRANGE {
    UINT Offset;
    UINT Size;
} D3DDDIRANGE;
KMT_CHECK_SIZE(D3DDDIRANGE, 8);
KMT_CHECK_SIZE_I386(D3DDDIRANGE, 8);

typedef struct _D3DDDIBOX {
    UINT Left;
    UINT Top;
    UINT Right;
    UINT Bottom;
    UINT Front;
    UINT Back;
} D3DDDIBOX;
KMT_CHECK_SIZE(D3DDDIBOX, 0x18);
KMT_CHECK_SIZE_I386(D3DDDIBOX, 0x18);

typedef struct _D3DDDI_LOCKFLAGS {
    union {
        struct {
            UINT ReadOnly : 1;
            UINT WriteOnly : 1;
            UINT NoOverwrite : 1;
            UINT Discard : 1;
            UINT RangeValid : 1;
            UINT AreaValid : 1;
            UINT BoxValid : 1;
            UINT NotifyOnly : 1;
            UINT MightDrawFromLocked : 1;
            UINT DoNotWait : 1;
            UINT Reserved : 22;
        };
        UINT Value;
    };
} D3DDDI_LOCKFLAGS;
KMT_CHECK_SIZE(D3DDDI_LOCKFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_LOCKFLAGS, 4);

typedef struct _D3DDDIARG_LOCK {
    HANDLE hResource;                    /* the UMD's handle */
    UINT SubResourceIndex;
    union {
        D3DDDIRANGE Range;
        RECT Area;
        D3DDDIBOX Box;
    };
    VOID *pSurfData;                     /* out */
    UINT Pitch;                          /* out */
    UINT SlicePitch;                     /* out */
    D3DDDI_LOCKFLAGS Flags;
} D3DDDIARG_LOCK;
KMT_CHECK_SIZE(D3DDDIARG_LOCK, 0x40);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, SubResourceIndex, 0x08);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, Range, 0x0c);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, Box, 0x0c);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, pSurfData, 0x28);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, Pitch, 0x30);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, SlicePitch, 0x34);
KMT_CHECK_OFFSET(D3DDDIARG_LOCK, Flags, 0x38);
KMT_CHECK_SIZE_I386(D3DDDIARG_LOCK, 0x30);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, SubResourceIndex, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, Range, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, Box, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, pSurfData, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, Pitch, 0x24);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, SlicePitch, 0x28);
KMT_CHECK_OFFSET_I386(D3DDDIARG_LOCK, Flags, 0x2c);

typedef struct _D3DDDI_UNLOCKFLAGS {
    union {
        struct {
            UINT NotifyOnly : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} D3DDDI_UNLOCKFLAGS;
KMT_CHECK_SIZE(D3DDDI_UNLOCKFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_UNLOCKFLAGS, 4);

typedef struct _D3DDDIARG_UNLOCK {
    HANDLE hResource;
    UINT SubResourceIndex;
    D3DDDI_UNLOCKFLAGS Flags;
} D3DDDIARG_UNLOCK;
KMT_CHECK_SIZE(D3DDDIARG_UNLOCK, 0x10);
KMT_CHECK_OFFSET(D3DDDIARG_UNLOCK, Flags, 0x0c);
KMT_CHECK_SIZE_I386(D3DDDIARG_UNLOCK, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_UNLOCK, Flags, 0x08);

/* The flag bits kmtshim's UMDs use none of; only the size is pinned. */
typedef struct _D3DDDI_COLORFILLFLAGS {
    UINT Value;
} D3DDDI_COLORFILLFLAGS;
KMT_CHECK_SIZE(D3DDDI_COLORFILLFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_COLORFILLFLAGS, 4);

typedef struct _D3DDDIARG_COLORFILL {
    HANDLE hResource;
    UINT SubResourceIndex;
    RECT DstRect;
    D3DCOLOR Color;
    D3DDDI_COLORFILLFLAGS Flags;
} D3DDDIARG_COLORFILL;
KMT_CHECK_SIZE(D3DDDIARG_COLORFILL, 0x28);
KMT_CHECK_OFFSET(D3DDDIARG_COLORFILL, SubResourceIndex, 0x08);
KMT_CHECK_OFFSET(D3DDDIARG_COLORFILL, DstRect, 0x0c);
KMT_CHECK_OFFSET(D3DDDIARG_COLORFILL, Color, 0x1c);
KMT_CHECK_OFFSET(D3DDDIARG_COLORFILL, Flags, 0x20);
KMT_CHECK_SIZE_I386(D3DDDIARG_COLORFILL, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDIARG_COLORFILL, SubResourceIndex, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDIARG_COLORFILL, DstRect, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_COLORFILL, Color, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDIARG_COLORFILL, Flags, 0x1c);

/* ---- the runtime's callbacks: argument structures ------------------------------- */

typedef struct _D3DDDICB_ALLOCATE {
    const VOID *pPrivateDriverData;      /* resource-level, to DxgkDdiCreateAllocation */
    UINT PrivateDriverDataSize;
    HANDLE hResource;                    /* the runtime's resource handle, or NULL: device-owned */
    D3DKMT_HANDLE hKMResource;           /* out: the D3DKMT resource */
    UINT NumAllocations;
    union {
        D3DDDI_ALLOCATIONINFO *pAllocationInfo;   /* UMDs before WDDM 2.0 */
        D3DDDI_ALLOCATIONINFO2 *pAllocationInfo2; /* DriverVersion >= WDDM2_0 */
    };
} D3DDDICB_ALLOCATE;
KMT_CHECK_SIZE(D3DDDICB_ALLOCATE, 0x28);
KMT_CHECK_OFFSET(D3DDDICB_ALLOCATE, PrivateDriverDataSize, 0x08);
KMT_CHECK_OFFSET(D3DDDICB_ALLOCATE, hResource, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_ALLOCATE, hKMResource, 0x18);
KMT_CHECK_OFFSET(D3DDDICB_ALLOCATE, NumAllocations, 0x1c);
KMT_CHECK_OFFSET(D3DDDICB_ALLOCATE, pAllocationInfo, 0x20);
KMT_CHECK_SIZE_I386(D3DDDICB_ALLOCATE, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDICB_ALLOCATE, PrivateDriverDataSize, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDICB_ALLOCATE, hResource, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDICB_ALLOCATE, hKMResource, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDICB_ALLOCATE, NumAllocations, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDICB_ALLOCATE, pAllocationInfo, 0x14);

typedef struct _D3DDDICB_DEALLOCATE {
    HANDLE hResource;                    /* non-NULL: the resource and all of it */
    UINT NumAllocations;                 /* ...else these allocations */
    const D3DKMT_HANDLE *HandleList;
} D3DDDICB_DEALLOCATE;
KMT_CHECK_SIZE(D3DDDICB_DEALLOCATE, 0x18);
KMT_CHECK_OFFSET(D3DDDICB_DEALLOCATE, NumAllocations, 0x08);
KMT_CHECK_OFFSET(D3DDDICB_DEALLOCATE, HandleList, 0x10);
KMT_CHECK_SIZE_I386(D3DDDICB_DEALLOCATE, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDICB_DEALLOCATE, NumAllocations, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDICB_DEALLOCATE, HandleList, 0x08);

typedef struct _D3DDDICB_DEALLOCATE2 {
    HANDLE hResource;
    UINT NumAllocations;
    const D3DKMT_HANDLE *HandleList;
    D3DDDICB_DESTROYALLOCATION2FLAGS Flags;
} D3DDDICB_DEALLOCATE2;
KMT_CHECK_SIZE(D3DDDICB_DEALLOCATE2, 0x20);
KMT_CHECK_OFFSET(D3DDDICB_DEALLOCATE2, HandleList, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_DEALLOCATE2, Flags, 0x18);
KMT_CHECK_SIZE_I386(D3DDDICB_DEALLOCATE2, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDICB_DEALLOCATE2, HandleList, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDICB_DEALLOCATE2, Flags, 0x0c);

typedef struct _D3DDDICB_RENDERFLAGS {
    union {
        struct {
            UINT ResizeCommandBuffer : 1;
            UINT ResizeAllocationList : 1;
            UINT ResizePatchLocationList : 1;
            UINT NullRendering : 1;
            UINT Reserved : 28;
        };
        UINT Value;
    };
} D3DDDICB_RENDERFLAGS;
KMT_CHECK_SIZE(D3DDDICB_RENDERFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDICB_RENDERFLAGS, 4);

typedef enum _D3DDDI_MARKERLOGTYPE {
    D3DDDIMLT_NONE = 0,
    D3DDDIMLT_PROFILE = 1,
    D3DDDIMLT_FULL = 2,
} D3DDDI_MARKERLOGTYPE;

/* pfnRenderCb: submit the batch in the context's command buffer, whose
 * allocation list names every allocation the batch references. */
typedef struct _D3DDDICB_RENDER {
    UINT CommandLength;
    UINT CommandOffset;
    UINT NumAllocations;
    UINT NumPatchLocations;
    VOID *pNewCommandBuffer;             /* out: buffers for the next batch */
    UINT NewCommandBufferSize;           /* in/out */
    D3DDDI_ALLOCATIONLIST *pNewAllocationList;
    UINT NewAllocationListSize;
    D3DDDI_PATCHLOCATIONLIST *pNewPatchLocationList;
    UINT NewPatchLocationListSize;
    D3DDDICB_RENDERFLAGS Flags;
    HANDLE hContext;                     /* from pfnCreateContextCb */
    UINT BroadcastContextCount;
    HANDLE BroadcastContext[D3DDDI_MAX_BROADCAST_CONTEXT];
    ULONG QueuedBufferCount;             /* out */
    D3DGPU_VIRTUAL_ADDRESS NewCommandBuffer;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    D3DDDI_MARKERLOGTYPE MarkerLogType;
    UINT RenderCBSequence;
    union {
        struct {
            UINT FirstAPISequenceNumberHigh;
            UINT CompletedAPISequenceNumberLow0Size;
            UINT CompletedAPISequenceNumberLow1Size;
            UINT BegunAPISequenceNumberLow0Size;
            UINT BegunAPISequenceNumberLow1Size;
        };
        UINT BatchedMarkerDataCount;
    };
    union {
        struct {
            const UINT *pCompletedAPISequenceNumberLow0;
            const UINT *pCompletedAPISequenceNumberLow1;
            const UINT *pBegunAPISequenceNumberLow0;
            const UINT *pBegunAPISequenceNumberLow1;
        };
        const VOID *pBatchedMarkerData;
    };
} D3DDDICB_RENDER;
KMT_CHECK_SIZE(D3DDDICB_RENDER, 0x2a8);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, pNewCommandBuffer, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, NewCommandBufferSize, 0x18);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, pNewAllocationList, 0x20);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, NewAllocationListSize, 0x28);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, pNewPatchLocationList, 0x30);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, NewPatchLocationListSize, 0x38);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, Flags, 0x3c);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, hContext, 0x40);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, BroadcastContextCount, 0x48);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, BroadcastContext, 0x50);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, QueuedBufferCount, 0x250);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, NewCommandBuffer, 0x258);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, pPrivateDriverData, 0x260);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, PrivateDriverDataSize, 0x268);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, MarkerLogType, 0x26c);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, RenderCBSequence, 0x270);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, FirstAPISequenceNumberHigh, 0x274);
KMT_CHECK_OFFSET(D3DDDICB_RENDER, pCompletedAPISequenceNumberLow0, 0x288);
KMT_CHECK_SIZE_I386(D3DDDICB_RENDER, 0x178);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, pNewCommandBuffer, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, NewCommandBufferSize, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, pNewAllocationList, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, NewAllocationListSize, 0x1c);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, pNewPatchLocationList, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, NewPatchLocationListSize, 0x24);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, Flags, 0x28);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, hContext, 0x2c);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, BroadcastContextCount, 0x30);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, BroadcastContext, 0x34);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, QueuedBufferCount, 0x134);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, NewCommandBuffer, 0x138);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, pPrivateDriverData, 0x140);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, PrivateDriverDataSize, 0x144);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, MarkerLogType, 0x148);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, RenderCBSequence, 0x14c);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, FirstAPISequenceNumberHigh, 0x150);
KMT_CHECK_OFFSET_I386(D3DDDICB_RENDER, pCompletedAPISequenceNumberLow0, 0x164);

typedef struct _D3DDDICB_LOCK {
    D3DKMT_HANDLE hAllocation;
    UINT PrivateDriverData;
    UINT NumPages;
    const UINT *pPages;
    VOID *pData;                         /* out */
    D3DDDICB_LOCKFLAGS Flags;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress; /* out */
} D3DDDICB_LOCK;
KMT_CHECK_SIZE(D3DDDICB_LOCK, 0x30);
KMT_CHECK_OFFSET(D3DDDICB_LOCK, pPages, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_LOCK, pData, 0x18);
KMT_CHECK_OFFSET(D3DDDICB_LOCK, Flags, 0x20);
KMT_CHECK_OFFSET(D3DDDICB_LOCK, GpuVirtualAddress, 0x28);
KMT_CHECK_SIZE_I386(D3DDDICB_LOCK, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDICB_LOCK, pPages, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDICB_LOCK, pData, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDICB_LOCK, Flags, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDICB_LOCK, GpuVirtualAddress, 0x18);

typedef struct _D3DDDICB_UNLOCK {
    UINT NumAllocations;
    const D3DKMT_HANDLE *phAllocations;
} D3DDDICB_UNLOCK;
KMT_CHECK_SIZE(D3DDDICB_UNLOCK, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_UNLOCK, phAllocations, 0x08);
KMT_CHECK_SIZE_I386(D3DDDICB_UNLOCK, 8);
KMT_CHECK_OFFSET_I386(D3DDDICB_UNLOCK, phAllocations, 0x04);

typedef struct _D3DDDICB_CREATECONTEXT {
    UINT NodeOrdinal;
    UINT EngineAffinity;
    D3DDDI_CREATECONTEXTFLAGS Flags;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    HANDLE hContext;                     /* out */
    VOID *pCommandBuffer;                /* out: the first batch's buffers */
    UINT CommandBufferSize;
    D3DDDI_ALLOCATIONLIST *pAllocationList;
    UINT AllocationListSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;
    UINT PatchLocationListSize;
    D3DGPU_VIRTUAL_ADDRESS CommandBuffer;
} D3DDDICB_CREATECONTEXT;
KMT_CHECK_SIZE(D3DDDICB_CREATECONTEXT, 0x60);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, Flags, 0x08);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, pPrivateDriverData, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, PrivateDriverDataSize, 0x18);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, hContext, 0x20);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, pCommandBuffer, 0x28);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, CommandBufferSize, 0x30);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, pAllocationList, 0x38);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, AllocationListSize, 0x40);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, pPatchLocationList, 0x48);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, PatchLocationListSize, 0x50);
KMT_CHECK_OFFSET(D3DDDICB_CREATECONTEXT, CommandBuffer, 0x58);
KMT_CHECK_SIZE_I386(D3DDDICB_CREATECONTEXT, 0x38);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, Flags, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, pPrivateDriverData, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, PrivateDriverDataSize, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, hContext, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, pCommandBuffer, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, CommandBufferSize, 0x1c);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, pAllocationList, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, AllocationListSize, 0x24);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, pPatchLocationList, 0x28);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, PatchLocationListSize, 0x2c);
KMT_CHECK_OFFSET_I386(D3DDDICB_CREATECONTEXT, CommandBuffer, 0x30);

typedef struct _D3DDDICB_DESTROYCONTEXT {
    HANDLE hContext;
} D3DDDICB_DESTROYCONTEXT;
KMT_CHECK_SIZE(D3DDDICB_DESTROYCONTEXT, 8);
KMT_CHECK_SIZE_I386(D3DDDICB_DESTROYCONTEXT, 4);

typedef struct _D3DDDICB_ESCAPE {
    HANDLE hDevice;                      /* the runtime's device handle, or NULL */
    D3DDDI_ESCAPEFLAGS Flags;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    HANDLE hContext;
} D3DDDICB_ESCAPE;
KMT_CHECK_SIZE(D3DDDICB_ESCAPE, 0x28);
KMT_CHECK_OFFSET(D3DDDICB_ESCAPE, Flags, 0x08);
KMT_CHECK_OFFSET(D3DDDICB_ESCAPE, pPrivateDriverData, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_ESCAPE, PrivateDriverDataSize, 0x18);
KMT_CHECK_OFFSET(D3DDDICB_ESCAPE, hContext, 0x20);
KMT_CHECK_SIZE_I386(D3DDDICB_ESCAPE, 0x14);
KMT_CHECK_OFFSET_I386(D3DDDICB_ESCAPE, Flags, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDICB_ESCAPE, pPrivateDriverData, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDICB_ESCAPE, PrivateDriverDataSize, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDICB_ESCAPE, hContext, 0x10);

typedef struct _D3DDDICB_QUERYADAPTERINFO {
    VOID *pPrivateDriverData;            /* out: the KMD's UMDRIVERPRIVATE data */
    UINT PrivateDriverDataSize;
} D3DDDICB_QUERYADAPTERINFO;
KMT_CHECK_SIZE(D3DDDICB_QUERYADAPTERINFO, 0x10);
KMT_CHECK_OFFSET(D3DDDICB_QUERYADAPTERINFO, PrivateDriverDataSize, 0x08);
KMT_CHECK_SIZE_I386(D3DDDICB_QUERYADAPTERINFO, 8);
KMT_CHECK_OFFSET_I386(D3DDDICB_QUERYADAPTERINFO, PrivateDriverDataSize, 0x04);

/* ---- the runtime's callbacks: the tables --------------------------------------------- */

typedef HRESULT (APIENTRY *PFND3DDDI_ALLOCATECB)(HANDLE hDevice, D3DDDICB_ALLOCATE *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_DEALLOCATECB)(HANDLE hDevice, const D3DDDICB_DEALLOCATE *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_DEALLOCATE2CB)(HANDLE hDevice, const D3DDDICB_DEALLOCATE2 *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_RENDERCB)(HANDLE hDevice, D3DDDICB_RENDER *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_LOCKCB)(HANDLE hDevice, D3DDDICB_LOCK *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_UNLOCKCB)(HANDLE hDevice, const D3DDDICB_UNLOCK *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_ESCAPECB)(HANDLE hAdapter, const D3DDDICB_ESCAPE *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_CREATECONTEXTCB)(HANDLE hDevice, D3DDDICB_CREATECONTEXT *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_DESTROYCONTEXTCB)(HANDLE hDevice, const D3DDDICB_DESTROYCONTEXT *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_QUERYADAPTERINFOCB)(HANDLE hAdapter, const D3DDDICB_QUERYADAPTERINFO *pData);

typedef struct _D3DDDI_DEVICECALLBACKS {
    PFND3DDDI_ALLOCATECB pfnAllocateCb;
    PFND3DDDI_DEALLOCATECB pfnDeallocateCb;
    KMT_PFN_UNDECLARED pfnSetPriorityCb;
    KMT_PFN_UNDECLARED pfnQueryResidencyCb;
    KMT_PFN_UNDECLARED pfnSetDisplayModeCb;
    KMT_PFN_UNDECLARED pfnPresentCb;
    PFND3DDDI_RENDERCB pfnRenderCb;
    PFND3DDDI_LOCKCB pfnLockCb;
    PFND3DDDI_UNLOCKCB pfnUnlockCb;
    PFND3DDDI_ESCAPECB pfnEscapeCb;
    KMT_PFN_UNDECLARED pfnCreateOverlayCb;
    KMT_PFN_UNDECLARED pfnUpdateOverlayCb;
    KMT_PFN_UNDECLARED pfnFlipOverlayCb;
    KMT_PFN_UNDECLARED pfnDestroyOverlayCb;
    PFND3DDDI_CREATECONTEXTCB pfnCreateContextCb;
    PFND3DDDI_DESTROYCONTEXTCB pfnDestroyContextCb;
    KMT_PFN_UNDECLARED pfnCreateSynchronizationObjectCb;
    KMT_PFN_UNDECLARED pfnDestroySynchronizationObjectCb;
    KMT_PFN_UNDECLARED pfnWaitForSynchronizationObjectCb;
    KMT_PFN_UNDECLARED pfnSignalSynchronizationObjectCb;
    KMT_PFN_UNDECLARED pfnSetAsyncCallbacksCb;
    KMT_PFN_UNDECLARED pfnSetDisplayPrivateDriverFormatCb;
    /* Windows 8 */
    KMT_PFN_UNDECLARED pfnOfferAllocationsCb;
    KMT_PFN_UNDECLARED pfnReclaimAllocationsCb;
    KMT_PFN_UNDECLARED pfnCreateSynchronizationObject2Cb;
    KMT_PFN_UNDECLARED pfnWaitForSynchronizationObject2Cb;
    KMT_PFN_UNDECLARED pfnSignalSynchronizationObject2Cb;
    KMT_PFN_UNDECLARED pfnPresentMultiPlaneOverlayCb;
    /* WDDM 1.3 */
    KMT_PFN_UNDECLARED pfnLogUMDMarkerCb;
    /* WDDM 2.0 */
    KMT_PFN_UNDECLARED pfnMakeResidentCb;
    KMT_PFN_UNDECLARED pfnEvictCb;
    KMT_PFN_UNDECLARED pfnWaitForSynchronizationObjectFromCpuCb;
    KMT_PFN_UNDECLARED pfnSignalSynchronizationObjectFromCpuCb;
    KMT_PFN_UNDECLARED pfnWaitForSynchronizationObjectFromGpuCb;
    KMT_PFN_UNDECLARED pfnSignalSynchronizationObjectFromGpuCb;
    KMT_PFN_UNDECLARED pfnCreatePagingQueueCb;
    KMT_PFN_UNDECLARED pfnDestroyPagingQueueCb;
    KMT_PFN_UNDECLARED pfnLock2Cb;
    KMT_PFN_UNDECLARED pfnUnlock2Cb;
    KMT_PFN_UNDECLARED pfnInvalidateCacheCb;
    KMT_PFN_UNDECLARED pfnReserveGpuVirtualAddressCb;
    KMT_PFN_UNDECLARED pfnMapGpuVirtualAddressCb;
    KMT_PFN_UNDECLARED pfnFreeGpuVirtualAddressCb;
    KMT_PFN_UNDECLARED pfnUpdateGpuVirtualAddressCb;
    KMT_PFN_UNDECLARED pfnCreateContextVirtualCb;
    KMT_PFN_UNDECLARED pfnSubmitCommandCb;
    PFND3DDDI_DEALLOCATE2CB pfnDeallocate2Cb;
    KMT_PFN_UNDECLARED pfnSignalSynchronizationObjectFromGpu2Cb;
    KMT_PFN_UNDECLARED pfnReclaimAllocations2Cb;
    KMT_PFN_UNDECLARED pfnGetResourcePresentPrivateDriverDataCb;
    /* WDDM 2.1 */
    KMT_PFN_UNDECLARED pfnUpdateAllocationPropertyCb;
    KMT_PFN_UNDECLARED pfnOfferAllocations2Cb;
    KMT_PFN_UNDECLARED pfnReclaimAllocations3Cb;
} D3DDDI_DEVICECALLBACKS;
KMT_CHECK_SIZE(D3DDDI_DEVICECALLBACKS, 53 * 8);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnDeallocateCb, 0x08);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnRenderCb, 0x30);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnLockCb, 0x38);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnUnlockCb, 0x40);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnEscapeCb, 0x48);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnCreateContextCb, 0x70);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnDestroyContextCb, 0x78);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnOfferAllocationsCb, 0xb0);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnLogUMDMarkerCb, 0xe0);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnSubmitCommandCb, 0x168);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnDeallocate2Cb, 0x170);
KMT_CHECK_OFFSET(D3DDDI_DEVICECALLBACKS, pfnReclaimAllocations3Cb, 0x1a0);
KMT_CHECK_SIZE_I386(D3DDDI_DEVICECALLBACKS, 53 * 4);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnDeallocateCb, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnRenderCb, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnLockCb, 0x1c);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnUnlockCb, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnEscapeCb, 0x24);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnCreateContextCb, 0x38);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnDestroyContextCb, 0x3c);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnOfferAllocationsCb, 0x58);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnLogUMDMarkerCb, 0x70);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnSubmitCommandCb, 0xb4);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnDeallocate2Cb, 0xb8);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICECALLBACKS, pfnReclaimAllocations3Cb, 0xd0);

/* ---- devices --------------------------------------------------------------------------- */

typedef struct _D3DDDI_CREATEDEVICEFLAGS {
    union {
        struct {
            UINT AllowMultithreading : 1;
            UINT AllowFlipBatching : 1;
            UINT Reserved : 30;
        };
        UINT Value;
    };
} D3DDDI_CREATEDEVICEFLAGS;
KMT_CHECK_SIZE(D3DDDI_CREATEDEVICEFLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_CREATEDEVICEFLAGS, 4);

typedef HRESULT (APIENTRY *PFND3DDDI_LOCK)(HANDLE hDevice, D3DDDIARG_LOCK *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_UNLOCK)(HANDLE hDevice, const D3DDDIARG_UNLOCK *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_CREATERESOURCE)(HANDLE hDevice, D3DDDIARG_CREATERESOURCE *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_DESTROYRESOURCE)(HANDLE hDevice, HANDLE hResource);
typedef HRESULT (APIENTRY *PFND3DDDI_FLUSH)(HANDLE hDevice);
typedef HRESULT (APIENTRY *PFND3DDDI_COLORFILL)(HANDLE hDevice, const D3DDDIARG_COLORFILL *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_DESTROYDEVICE)(HANDLE hDevice);
typedef HRESULT (APIENTRY *PFND3DDDI_OPENRESOURCE)(HANDLE hDevice, D3DDDIARG_OPENRESOURCE *pData);

/* The entry points a D3D9-style UMD fills in CreateDevice. */
typedef struct _D3DDDI_DEVICEFUNCS {
    KMT_PFN_UNDECLARED pfnSetRenderState;
    KMT_PFN_UNDECLARED pfnUpdateWInfo;
    KMT_PFN_UNDECLARED pfnValidateDevice;
    KMT_PFN_UNDECLARED pfnSetTextureStageState;
    KMT_PFN_UNDECLARED pfnSetTexture;
    KMT_PFN_UNDECLARED pfnSetPixelShader;
    KMT_PFN_UNDECLARED pfnSetPixelShaderConst;
    KMT_PFN_UNDECLARED pfnSetStreamSourceUm;
    KMT_PFN_UNDECLARED pfnSetIndices;
    KMT_PFN_UNDECLARED pfnSetIndicesUm;
    KMT_PFN_UNDECLARED pfnDrawPrimitive;
    KMT_PFN_UNDECLARED pfnDrawIndexedPrimitive;
    KMT_PFN_UNDECLARED pfnDrawRectPatch;
    KMT_PFN_UNDECLARED pfnDrawTriPatch;
    KMT_PFN_UNDECLARED pfnDrawPrimitive2;
    KMT_PFN_UNDECLARED pfnDrawIndexedPrimitive2;
    KMT_PFN_UNDECLARED pfnVolBlt;
    KMT_PFN_UNDECLARED pfnBufBlt;
    KMT_PFN_UNDECLARED pfnTexBlt;
    KMT_PFN_UNDECLARED pfnStateSet;
    KMT_PFN_UNDECLARED pfnSetPriority;
    KMT_PFN_UNDECLARED pfnClear;
    KMT_PFN_UNDECLARED pfnUpdatePalette;
    KMT_PFN_UNDECLARED pfnSetPalette;
    KMT_PFN_UNDECLARED pfnSetVertexShaderConst;
    KMT_PFN_UNDECLARED pfnMultiplyTransform;
    KMT_PFN_UNDECLARED pfnSetTransform;
    KMT_PFN_UNDECLARED pfnSetViewport;
    KMT_PFN_UNDECLARED pfnSetZRange;
    KMT_PFN_UNDECLARED pfnSetMaterial;
    KMT_PFN_UNDECLARED pfnSetLight;
    KMT_PFN_UNDECLARED pfnCreateLight;
    KMT_PFN_UNDECLARED pfnDestroyLight;
    KMT_PFN_UNDECLARED pfnSetClipPlane;
    KMT_PFN_UNDECLARED pfnGetInfo;
    PFND3DDDI_LOCK pfnLock;
    PFND3DDDI_UNLOCK pfnUnlock;
    PFND3DDDI_CREATERESOURCE pfnCreateResource;
    PFND3DDDI_DESTROYRESOURCE pfnDestroyResource;
    KMT_PFN_UNDECLARED pfnSetDisplayMode;
    KMT_PFN_UNDECLARED pfnPresent;
    PFND3DDDI_FLUSH pfnFlush;
    KMT_PFN_UNDECLARED pfnCreateVertexShaderFunc;
    KMT_PFN_UNDECLARED pfnDeleteVertexShaderFunc;
    KMT_PFN_UNDECLARED pfnSetVertexShaderFunc;
    KMT_PFN_UNDECLARED pfnCreateVertexShaderDecl;
    KMT_PFN_UNDECLARED pfnDeleteVertexShaderDecl;
    KMT_PFN_UNDECLARED pfnSetVertexShaderDecl;
    KMT_PFN_UNDECLARED pfnSetVertexShaderConstI;
    KMT_PFN_UNDECLARED pfnSetVertexShaderConstB;
    KMT_PFN_UNDECLARED pfnSetScissorRect;
    KMT_PFN_UNDECLARED pfnSetStreamSource;
    KMT_PFN_UNDECLARED pfnSetStreamSourceFreq;
    KMT_PFN_UNDECLARED pfnSetConvolutionKernelMono;
    KMT_PFN_UNDECLARED pfnComposeRects;
    KMT_PFN_UNDECLARED pfnBlt;
    PFND3DDDI_COLORFILL pfnColorFill;
    KMT_PFN_UNDECLARED pfnDepthFill;
    KMT_PFN_UNDECLARED pfnCreateQuery;
    KMT_PFN_UNDECLARED pfnDestroyQuery;
    KMT_PFN_UNDECLARED pfnIssueQuery;
    KMT_PFN_UNDECLARED pfnGetQueryData;
    KMT_PFN_UNDECLARED pfnSetRenderTarget;
    KMT_PFN_UNDECLARED pfnSetDepthStencil;
    KMT_PFN_UNDECLARED pfnGenerateMipSubLevels;
    KMT_PFN_UNDECLARED pfnSetPixelShaderConstI;
    KMT_PFN_UNDECLARED pfnSetPixelShaderConstB;
    KMT_PFN_UNDECLARED pfnCreatePixelShader;
    KMT_PFN_UNDECLARED pfnDeletePixelShader;
    KMT_PFN_UNDECLARED pfnCreateDecodeDevice;
    KMT_PFN_UNDECLARED pfnDestroyDecodeDevice;
    KMT_PFN_UNDECLARED pfnSetDecodeRenderTarget;
    KMT_PFN_UNDECLARED pfnDecodeBeginFrame;
    KMT_PFN_UNDECLARED pfnDecodeEndFrame;
    KMT_PFN_UNDECLARED pfnDecodeExecute;
    KMT_PFN_UNDECLARED pfnDecodeExtensionExecute;
    KMT_PFN_UNDECLARED pfnCreateVideoProcessDevice;
    KMT_PFN_UNDECLARED pfnDestroyVideoProcessDevice;
    KMT_PFN_UNDECLARED pfnVideoProcessBeginFrame;
    KMT_PFN_UNDECLARED pfnVideoProcessEndFrame;
    KMT_PFN_UNDECLARED pfnSetVideoProcessRenderTarget;
    KMT_PFN_UNDECLARED pfnVideoProcessBlt;
    KMT_PFN_UNDECLARED pfnCreateExtensionDevice;
    KMT_PFN_UNDECLARED pfnDestroyExtensionDevice;
    KMT_PFN_UNDECLARED pfnExtensionExecute;
    KMT_PFN_UNDECLARED pfnCreateOverlay;
    KMT_PFN_UNDECLARED pfnUpdateOverlay;
    KMT_PFN_UNDECLARED pfnFlipOverlay;
    KMT_PFN_UNDECLARED pfnGetOverlayColorControls;
    KMT_PFN_UNDECLARED pfnSetOverlayColorControls;
    KMT_PFN_UNDECLARED pfnDestroyOverlay;
    PFND3DDDI_DESTROYDEVICE pfnDestroyDevice;
    KMT_PFN_UNDECLARED pfnQueryResourceResidency;
    PFND3DDDI_OPENRESOURCE pfnOpenResource;
    KMT_PFN_UNDECLARED pfnGetCaptureAllocationHandle;
    KMT_PFN_UNDECLARED pfnCaptureToSysMem;
    KMT_PFN_UNDECLARED pfnLockAsync;
    KMT_PFN_UNDECLARED pfnUnlockAsync;
    KMT_PFN_UNDECLARED pfnRename;
    KMT_PFN_UNDECLARED pfnCreateVideoProcessor;
    KMT_PFN_UNDECLARED pfnSetVideoProcessBltState;
    KMT_PFN_UNDECLARED pfnGetVideoProcessBltStatePrivate;
    KMT_PFN_UNDECLARED pfnSetVideoProcessStreamState;
    KMT_PFN_UNDECLARED pfnGetVideoProcessStreamStatePrivate;
    KMT_PFN_UNDECLARED pfnVideoProcessBltHD;
    KMT_PFN_UNDECLARED pfnDestroyVideoProcessor;
    KMT_PFN_UNDECLARED pfnCreateAuthenticatedChannel;
    KMT_PFN_UNDECLARED pfnAuthenticatedChannelKeyExchange;
    KMT_PFN_UNDECLARED pfnQueryAuthenticatedChannel;
    KMT_PFN_UNDECLARED pfnConfigureAuthenticatedChannel;
    KMT_PFN_UNDECLARED pfnDestroyAuthenticatedChannel;
    KMT_PFN_UNDECLARED pfnCreateCryptoSession;
    KMT_PFN_UNDECLARED pfnCryptoSessionKeyExchange;
    KMT_PFN_UNDECLARED pfnDestroyCryptoSession;
    KMT_PFN_UNDECLARED pfnEncryptionBlt;
    KMT_PFN_UNDECLARED pfnGetPitch;
    KMT_PFN_UNDECLARED pfnStartSessionKeyRefresh;
    KMT_PFN_UNDECLARED pfnFinishSessionKeyRefresh;
    KMT_PFN_UNDECLARED pfnGetEncryptionBltKey;
    KMT_PFN_UNDECLARED pfnDecryptionBlt;
    KMT_PFN_UNDECLARED pfnResolveSharedResource;
    /* Windows 8 */
    KMT_PFN_UNDECLARED pfnVolBlt1;
    KMT_PFN_UNDECLARED pfnBufBlt1;
    KMT_PFN_UNDECLARED pfnTexBlt1;
    KMT_PFN_UNDECLARED pfnDiscard;
    KMT_PFN_UNDECLARED pfnOfferResources;
    KMT_PFN_UNDECLARED pfnReclaimResources;
    KMT_PFN_UNDECLARED pfnCheckDirectFlipSupport;
    KMT_PFN_UNDECLARED pfnCreateResource2;
    KMT_PFN_UNDECLARED pfnCheckMultiPlaneOverlaySupport;
    KMT_PFN_UNDECLARED pfnPresentMultiPlaneOverlay;
    /* WDDM 1.3 */
    KMT_PFN_UNDECLARED pfnReserved1;
    KMT_PFN_UNDECLARED pfnFlush1;
    KMT_PFN_UNDECLARED pfnCheckCounterInfo;
    KMT_PFN_UNDECLARED pfnCheckCounter;
    KMT_PFN_UNDECLARED pfnUpdateSubresourceUP;
    KMT_PFN_UNDECLARED pfnPresent1;
    KMT_PFN_UNDECLARED pfnCheckPresentDurationSupport;
    KMT_PFN_UNDECLARED pfnSetMarker;
    KMT_PFN_UNDECLARED pfnSetMarkerMode;
    /* WDDM 2.0 and later */
    KMT_PFN_UNDECLARED pfnTrimResidencySet;
    KMT_PFN_UNDECLARED pfnAcquireResource;
    KMT_PFN_UNDECLARED pfnReleaseResource;
} D3DDDI_DEVICEFUNCS;
KMT_CHECK_SIZE(D3DDDI_DEVICEFUNCS, 143 * 8);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnGetInfo, 0x110);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnLock, 0x118);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnUnlock, 0x120);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnCreateResource, 0x128);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnDestroyResource, 0x130);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnFlush, 0x148);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnBlt, 0x1b8);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnColorFill, 0x1c0);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnDestroyDevice, 0x2d8);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnOpenResource, 0x2e8);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnResolveSharedResource, 0x3c0);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnVolBlt1, 0x3c8);
KMT_CHECK_OFFSET(D3DDDI_DEVICEFUNCS, pfnReleaseResource, 0x470);
KMT_CHECK_SIZE_I386(D3DDDI_DEVICEFUNCS, 143 * 4);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnGetInfo, 0x88);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnLock, 0x8c);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnUnlock, 0x90);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnCreateResource, 0x94);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnDestroyResource, 0x98);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnFlush, 0xa4);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnBlt, 0xdc);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnColorFill, 0xe0);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnDestroyDevice, 0x16c);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnOpenResource, 0x174);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnResolveSharedResource, 0x1e0);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnVolBlt1, 0x1e4);
KMT_CHECK_OFFSET_I386(D3DDDI_DEVICEFUNCS, pfnReleaseResource, 0x238);

typedef struct _D3DDDIARG_CREATEDEVICE {
    HANDLE hDevice;                      /* in: the runtime's handle; out: the UMD's */
    UINT Interface;                      /* 9 for a D3D9 runtime */
    UINT Version;
    const D3DDDI_DEVICECALLBACKS *pCallbacks;
    VOID *pCommandBuffer;                /* obsolete: contexts own the buffers */
    UINT CommandBufferSize;
    D3DDDI_ALLOCATIONLIST *pAllocationList;
    UINT AllocationListSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;
    UINT PatchLocationListSize;
    D3DDDI_DEVICEFUNCS *pDeviceFuncs;    /* out: the UMD fills it */
    D3DDDI_CREATEDEVICEFLAGS Flags;
    D3DGPU_VIRTUAL_ADDRESS CommandBuffer;
} D3DDDIARG_CREATEDEVICE;
KMT_CHECK_SIZE(D3DDDIARG_CREATEDEVICE, 0x60);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, Interface, 0x08);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, Version, 0x0c);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, pCallbacks, 0x10);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, pCommandBuffer, 0x18);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, pAllocationList, 0x28);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, pPatchLocationList, 0x38);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, pDeviceFuncs, 0x48);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, Flags, 0x50);
KMT_CHECK_OFFSET(D3DDDIARG_CREATEDEVICE, CommandBuffer, 0x58);
KMT_CHECK_SIZE_I386(D3DDDIARG_CREATEDEVICE, 0x38);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, Interface, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, Version, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, pCallbacks, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, pCommandBuffer, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, pAllocationList, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, pPatchLocationList, 0x20);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, pDeviceFuncs, 0x28);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, Flags, 0x2c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_CREATEDEVICE, CommandBuffer, 0x30);

/* ---- adapters ---------------------------------------------------------------------- */

/* Capability query types; kmtshim's UMDs answer none of them. */
typedef UINT D3DDDICAPS_TYPE;

typedef struct _D3DDDIARG_GETCAPS {
    D3DDDICAPS_TYPE Type;
    VOID *pInfo;
    VOID *pData;
    UINT DataSize;
} D3DDDIARG_GETCAPS;
KMT_CHECK_SIZE(D3DDDIARG_GETCAPS, 0x20);
KMT_CHECK_OFFSET(D3DDDIARG_GETCAPS, pInfo, 0x08);
KMT_CHECK_OFFSET(D3DDDIARG_GETCAPS, pData, 0x10);
KMT_CHECK_OFFSET(D3DDDIARG_GETCAPS, DataSize, 0x18);
KMT_CHECK_SIZE_I386(D3DDDIARG_GETCAPS, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDIARG_GETCAPS, pInfo, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDIARG_GETCAPS, pData, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_GETCAPS, DataSize, 0x0c);

typedef struct _D3DDDI_ADAPTERCALLBACKS {
    PFND3DDDI_QUERYADAPTERINFOCB pfnQueryAdapterInfoCb;
    KMT_PFN_UNDECLARED pfnGetMultisampleMethodListCb;
    KMT_PFN_UNDECLARED pfnQueryAdapterInfoCb2;
} D3DDDI_ADAPTERCALLBACKS;
KMT_CHECK_SIZE(D3DDDI_ADAPTERCALLBACKS, 0x18);
KMT_CHECK_SIZE_I386(D3DDDI_ADAPTERCALLBACKS, 0x0c);

typedef HRESULT (APIENTRY *PFND3DDDI_GETCAPS)(HANDLE hAdapter, const D3DDDIARG_GETCAPS *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_CREATEDEVICE)(HANDLE hAdapter, D3DDDIARG_CREATEDEVICE *pData);
typedef HRESULT (APIENTRY *PFND3DDDI_CLOSEADAPTER)(HANDLE hAdapter);

typedef struct _D3DDDI_ADAPTERFUNCS {
    PFND3DDDI_GETCAPS pfnGetCaps;
    PFND3DDDI_CREATEDEVICE pfnCreateDevice;
    PFND3DDDI_CLOSEADAPTER pfnCloseAdapter;
} D3DDDI_ADAPTERFUNCS;
KMT_CHECK_SIZE(D3DDDI_ADAPTERFUNCS, 0x18);
KMT_CHECK_SIZE_I386(D3DDDI_ADAPTERFUNCS, 0x0c);

typedef struct _D3DDDIARG_OPENADAPTER {
    HANDLE hAdapter;                     /* in: the runtime's handle; out: the UMD's */
    UINT Interface;
    UINT Version;
    const D3DDDI_ADAPTERCALLBACKS *pAdapterCallbacks;
    D3DDDI_ADAPTERFUNCS *pAdapterFuncs;  /* out: the UMD fills it */
    UINT DriverVersion;                  /* out: D3D_UMD_INTERFACE_VERSION_* */
} D3DDDIARG_OPENADAPTER;
KMT_CHECK_SIZE(D3DDDIARG_OPENADAPTER, 0x28);
KMT_CHECK_OFFSET(D3DDDIARG_OPENADAPTER, Interface, 0x08);
KMT_CHECK_OFFSET(D3DDDIARG_OPENADAPTER, Version, 0x0c);
KMT_CHECK_OFFSET(D3DDDIARG_OPENADAPTER, pAdapterCallbacks, 0x10);
KMT_CHECK_OFFSET(D3DDDIARG_OPENADAPTER, pAdapterFuncs, 0x18);
KMT_CHECK_OFFSET(D3DDDIARG_OPENADAPTER, DriverVersion, 0x20);
KMT_CHECK_SIZE_I386(D3DDDIARG_OPENADAPTER, 0x18);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENADAPTER, Interface, 0x04);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENADAPTER, Version, 0x08);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENADAPTER, pAdapterCallbacks, 0x0c);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENADAPTER, pAdapterFuncs, 0x10);
KMT_CHECK_OFFSET_I386(D3DDDIARG_OPENADAPTER, DriverVersion, 0x14);

/* The UMD's one export, "OpenAdapter". */
typedef HRESULT (APIENTRY *PFND3DDDI_OPENADAPTER)(D3DDDIARG_OPENADAPTER *pOpenData);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_D3DUMDDI_H */
