/*
 * The miniport side of kmtshim's userland dxgkrnl (Microsoft's d3dkmddi.h and
 * dispmprt.h, as far as kmtshim implements them).
 *
 * A miniport is written against this header exactly as a WDDM kernel-mode
 * driver is written against the DDK: it fills a DRIVER_INITIALIZATION_DATA
 * with its DxgkDdi* entry points and hands it to DxgkInitialize(); the core
 * gives it a DXGKRNL_INTERFACE callback table in DxgkDdiStartDevice.
 *
 * Names follow the DDK.  Layouts are kmtshim's own (these structs never cross
 * into a Windows program), versioned by KMT_MINIPORT_INTERFACE_VERSION.
 * Where Linux has no PnP manager or registry, kmtshim adds a few documented
 * Kmt* extensions; they are marked as such.
 *
 * Threading: like WDDM's level-0 DDIs, every DDI may be called from several
 * threads at once.  The core never holds a global lock across a DDI call and
 * enforces the ordering contract: CreateAllocation -> OpenAllocation(Create)
 * -> CloseAllocation -> DestroyAllocation; never Destroy with a binding open.
 */
#ifndef KMTSHIM_D3DKMDDI_H
#define KMTSHIM_D3DKMDDI_H

#include "kmt_wintypes.h"
#include "kmt_ntstatus.h"
#include "d3dukmdt.h"
#include "d3dkmthk.h"
#include "dispmprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1.0: adapters, devices, allocations, lock, escape.
 * 1.1: contexts, context allocations, submission, interrupts, GPU VA of
 *      system memory (monitored fences).
 * 1.2: miniport-backed fences, Miracast.
 * 1.3: DxgkDdiResetEngine (timeout detection and recovery).
 * 1.4: display timing: DxgkDdiControlInterrupt (CRTC_VSYNC),
 *      DxgkDdiGetScanLine, DxgkDdiQueryChildStatus and
 *      DXGKQAITYPE_KMT_CURRENTDISPLAYMODE.
 * 1.5: DxgkDdiCalibrateGpuClock, DXGKQAITYPE_KMT_NODERUNNINGTIME.
 * 1.6: KmtDdiExportAllocation, KmtDdiImportAllocation, KmtDdiExportFence,
 *      KmtDdiImportFence (sharing across processes).
 * Any version may answer the optional query types DXGKQAITYPE_NODEPERFDATA,
 * _ADAPTERPERFDATA, _ADAPTERPERFDATA_CAPS and DXGKQAITYPE_KMT_REGISTRYINFO;
 * a miniport that refuses them reports zeros and its description.
 * New DDIs and callbacks take slots of the Reserved arrays, so older
 * miniports keep working unchanged. */
#define KMT_MINIPORT_INTERFACE_VERSION 0x00010006u
#define KMT_MINIPORT_INTERFACE_MAJOR(v) ((v) >> 16)

/* ---- PnP stand-in (kmtshim extension) ----------------------------------
 * Windows learns of devices from the PnP manager.  Here the miniport reports
 * the physical devices it drives; the core calls DxgkDdiAddDevice for each.
 * The core derives the adapter LUID from (driver name, LocationId), so the
 * LUID is stable across runs and processes for the same device. */
typedef struct _KMT_PHYSICAL_DEVICE {
    char LocationId[64];       /* stable id: PCI bus id, "soft0", ... */
    char Description[128];     /* human readable: "Intel UHD 620 (i915)" */
    PVOID Context;             /* miniport's, handed back to DxgkDdiAddDevice */
} KMT_PHYSICAL_DEVICE;

#define KMT_MAX_PHYSICAL_DEVICES 16

/* ---- device start -------------------------------------------------------- */

typedef struct _DXGK_START_INFO {
    UINT RequiredDmaQueueEntry;
    GUID AdapterGuid;
    LUID AdapterLuid;
} DXGK_START_INFO;

/* DxgkCbGetHandleData */
typedef enum _DXGK_HANDLE_TYPE {
    DXGK_HANDLE_ALLOCATION = 1,
    DXGK_HANDLE_RESOURCE = 2,
    /* kmtshim extension (1.2): a monitored fence's hDriverFence (NULL for
     * any other object; the miniport checks the fence is its own) */
    DXGK_HANDLE_KMT_FENCE = 0x1000,
} DXGK_HANDLE_TYPE;

typedef struct _DXGKCB_GETHANDLEDATAFLAGS {
    union {
        struct {
            UINT DeviceSpecific : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGKCB_GETHANDLEDATAFLAGS;

typedef struct _DXGKARGCB_GETHANDLEDATA {
    D3DKMT_HANDLE hObject;
    DXGK_HANDLE_TYPE Type;
    DXGKCB_GETHANDLEDATAFLAGS Flags;
} DXGKARGCB_GETHANDLEDATA;

typedef PVOID (APIENTRY *DXGKCB_GETHANDLEDATA)(const DXGKARGCB_GETHANDLEDATA *args);

/* Trace levels of KmtCbTrace (kmtshim extension). */
typedef enum _KMT_TRACE_LEVEL {
    KMT_TRACE_ERR = 0,
    KMT_TRACE_WARN = 1,
    KMT_TRACE_FIXME = 2,
    KMT_TRACE_TRACE = 3,
} KMT_TRACE_LEVEL;

typedef void (APIENTRY *KMTCB_TRACE)(HANDLE hAdapter, KMT_TRACE_LEVEL level,
                                     const char *function, const char *message);


/* ---- context allocations (DxgkCbCreate/DestroyContextAllocation) --------- */

typedef struct _DXGK_CREATECONTEXTALLOCATIONFLAGS {
    union {
        struct {
            UINT SharedAcrossContexts : 1;
            UINT MapGpuVirtualAddress : 1;
            UINT Reserved : 30;
        };
        UINT Value;
    };
} DXGK_CREATECONTEXTALLOCATIONFLAGS;

typedef struct _DXGKARGCB_CREATECONTEXTALLOCATION {
    DXGK_CREATECONTEXTALLOCATIONFLAGS ContextAllocationFlags;
    HANDLE hAdapter;                    /* DXGKRNL_INTERFACE.DeviceHandle */
    HANDLE hDevice;                     /* the core's device (DXGKARG_CREATEDEVICE.hDevice in) */
    HANDLE hContext;                    /* the core's context; NULL when SharedAcrossContexts */
    HANDLE hDriverAllocation;           /* the driver's cookie */
    SIZE_T Size;
    UINT Alignment;
    UINT SupportedSegmentSet;
    UINT EvictionSegmentSet;
    UINT PreferredSegment;
    UINT HintedBank;
    UINT Flags;                         /* DXGK_ALLOCATIONINFOFLAGS value */
    HANDLE hAllocation;                 /* out: for DxgkCbDestroyContextAllocation */
    UINT PhysicalAdapterIndex;
    /* kmtshim extension: VidMm's paging is not re-created, so the driver
     * gets the memory's CPU address (and its GPU VA with MapGpuVirtualAddress). */
    VOID *pKmtCpuAddress;               /* out */
    D3DGPU_VIRTUAL_ADDRESS KmtGpuVirtualAddress; /* out */
} DXGKARGCB_CREATECONTEXTALLOCATION;

typedef NTSTATUS (APIENTRY *DXGKCB_CREATECONTEXTALLOCATION)(DXGKARGCB_CREATECONTEXTALLOCATION *args);
typedef NTSTATUS (APIENTRY *DXGKCB_DESTROYCONTEXTALLOCATION)(HANDLE hAdapter, HANDLE hAllocation);

/* ---- interrupts (DxgkCbNotifyInterrupt) ------------------------------------ */

typedef enum _DXGK_INTERRUPT_TYPE {
    DXGK_INTERRUPT_DMA_COMPLETED = 1,
    DXGK_INTERRUPT_DMA_PREEMPTED = 2,
    DXGK_INTERRUPT_CRTC_VSYNC = 3,
    DXGK_INTERRUPT_DMA_FAULTED = 4,
    DXGK_INTERRUPT_DMA_PAGE_FAULTED = 9,
    DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED = 11,
} DXGK_INTERRUPT_TYPE;

typedef struct _DXGKARGCB_NOTIFY_INTERRUPT_DATA {
    DXGK_INTERRUPT_TYPE InterruptType;
    union {
        struct {
            UINT SubmissionFenceId;
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } DmaCompleted;
        struct {
            UINT FaultedFenceId;
            NTSTATUS Status;
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } DmaFaulted;
        struct {
            UINT FaultedFenceId;
            UINT NodeOrdinal;
            UINT EngineOrdinal;
            UINT Reserved;
            D3DGPU_VIRTUAL_ADDRESS FaultedVirtualAddress;
        } DmaPageFaulted;
        struct {
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } MonitoredFenceSignaled;
        /* DXGK_INTERRUPT_CRTC_VSYNC (1.4), WDDM's layout: raised at the
         * start of each vertical blank of the target while the core has the
         * interrupt enabled (DxgkDdiControlInterrupt).  kmtshim's VidPN
         * paths are the identity: target N is scanned out from source N.
         * PhysicalAddress is the primary being scanned out (0 if unknown);
         * PhysicalAdapterMask counts only with ValidPhysicalAdapterMask in
         * Flags (bit 0, DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS). */
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;
            PHYSICAL_ADDRESS PhysicalAddress;
            UINT PhysicalAdapterMask;
        } CrtcVsync;
        struct {
            UINT Reserved[16];
        } Reserved;
    };
    UINT Flags;
} DXGKARGCB_NOTIFY_INTERRUPT_DATA;
KMT_CHECK_OFFSET(DXGKARGCB_NOTIFY_INTERRUPT_DATA, CrtcVsync.VidPnTargetId, 8);
KMT_CHECK_OFFSET(DXGKARGCB_NOTIFY_INTERRUPT_DATA, CrtcVsync.PhysicalAddress, 16);
KMT_CHECK_OFFSET(DXGKARGCB_NOTIFY_INTERRUPT_DATA, CrtcVsync.PhysicalAdapterMask, 24);

#define DXGK_NOTIFY_INTERRUPT_VALID_PHYSICAL_ADAPTER_MASK 0x1u

typedef void (APIENTRY *DXGKCB_NOTIFY_INTERRUPT)(HANDLE hAdapter,
                                                 const DXGKARGCB_NOTIFY_INTERRUPT_DATA *args);

typedef struct _DXGKRNL_INTERFACE {
    ULONG Size;
    ULONG Version;
    HANDLE DeviceHandle;                /* pass as hAdapter to callbacks */
    DXGKCB_GETHANDLEDATA DxgkCbGetHandleData;
    KMTCB_TRACE KmtCbTrace;             /* extension: core's +channel tracing */
    /* 1.1 */
    DXGKCB_CREATECONTEXTALLOCATION DxgkCbCreateContextAllocation;
    DXGKCB_DESTROYCONTEXTALLOCATION DxgkCbDestroyContextAllocation;
    DXGKCB_NOTIFY_INTERRUPT DxgkCbNotifyInterrupt;
    /* 1.2 */
    DXGKCB_INDICATE_CHILD_STATUS DxgkCbIndicateChildStatus; /* Miracast targets (dispmprt.h) */
    PVOID Reserved[12];
} DXGKRNL_INTERFACE;

/* ---- QueryAdapterInfo ----------------------------------------------------
 * The DDK's DXGKQAITYPE values where the DDK has one; the Kmt values stand
 * for what Windows reads from the registry / PnP (INF data, PCI config). */
typedef enum _DXGK_QUERYADAPTERINFOTYPE {
    DXGKQAITYPE_UMDRIVERPRIVATE = 0,
    DXGKQAITYPE_DRIVERCAPS = 1,
    DXGKQAITYPE_QUERYSEGMENT = 2,
    DXGKQAITYPE_NODEPERFDATA = 24,         /* in: KMT_PERFDATA_IN; out: DXGK_NODE_PERFDATA */
    DXGKQAITYPE_ADAPTERPERFDATA = 25,      /* in: KMT_PERFDATA_IN; out: DXGK_ADAPTER_PERFDATA */
    DXGKQAITYPE_ADAPTERPERFDATA_CAPS = 26, /* in: KMT_PERFDATA_IN; out: DXGK_ADAPTER_PERFDATACAPS */
    /* kmtshim extensions */
    DXGKQAITYPE_KMT_ADAPTERDESC = 0x1000,  /* out: KMT_ADAPTER_DESC */
    DXGKQAITYPE_KMT_MEMORYUSAGE = 0x1001,  /* in: UINT group; out: KMT_MEMORY_BUDGET */
    DXGKQAITYPE_KMT_NODEMETADATA = 0x1002, /* in: UINT node; out: DXGK_NODEMETADATA */
    /* 1.4: in: D3DDDI_VIDEO_PRESENT_SOURCE_ID; out: KMT_CURRENT_DISPLAY_MODE */
    DXGKQAITYPE_KMT_CURRENTDISPLAYMODE = 0x1003,
    DXGKQAITYPE_KMT_REGISTRYINFO = 0x1006, /* out: D3DKMT_ADAPTERREGISTRYINFO */
    /* in: UINT node; out: UINT64, nanoseconds the node's engines ran work
     * of this process (QueryStatistics' RunningTime); optional */
    DXGKQAITYPE_KMT_NODERUNNINGTIME = 0x1004,
} DXGK_QUERYADAPTERINFOTYPE;

typedef struct _DXGK_QUERYADAPTERINFOFLAGS {
    union {
        struct {
            UINT VirtualMachineData : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_QUERYADAPTERINFOFLAGS;

typedef struct _DXGKARG_QUERYADAPTERINFO {
    DXGK_QUERYADAPTERINFOTYPE Type;
    VOID *pInputData;
    UINT InputDataSize;
    VOID *pOutputData;
    UINT OutputDataSize;
    DXGK_QUERYADAPTERINFOFLAGS Flags;
    HANDLE hKmdProcessHandle;
} DXGKARG_QUERYADAPTERINFO;

/* DXGKQAITYPE_DRIVERCAPS (the part kmtshim uses). */
typedef struct _DXGK_DRIVERCAPS {
    D3DKMT_DRIVERVERSION WDDMVersion;
    D3DKMT_WDDM_2_7_CAPS Wddm27Caps;
    UINT MaxAllocationListSlotId;
    UINT NodeCount;                     /* engines: contexts' NodeOrdinal < this */
    UINT PhysicalAdapterCount;
} DXGK_DRIVERCAPS;

/* DXGKQAITYPE_QUERYSEGMENT: one memory segment. */
typedef struct _DXGK_SEGMENTFLAGS {
    union {
        struct {
            UINT Aperture : 1;
            UINT Agp : 1;
            UINT CpuVisible : 1;
            UINT UseBanking : 1;
            UINT CacheCoherent : 1;
            UINT PitchAlignment : 1;
            UINT PopulatedFromSystemMemory : 1;
            UINT PreservedDuringStandby : 1;
            UINT PreservedDuringHibernate : 1;
            UINT PartiallyPreservedDuringHibernate : 1;
            UINT DirectFlip : 1;
            UINT Use64KBPages : 1;
            UINT ReservedSysMem : 1;
            UINT SupportsCpuHostAperture : 1;
            UINT SupportsCachedCpuHostAperture : 1;
            UINT ApplicationTarget : 1;
            UINT VprSupported : 1;
            UINT VprPreservedDuringStandby : 1;
            UINT EncryptedPagingSupported : 1;
            UINT LocalBudgetGroup : 1;
            UINT NonLocalBudgetGroup : 1;
            UINT PopulatedByReservedDDRByFirmware : 1;
            UINT Reserved : 10;
        };
        UINT Value;
    };
} DXGK_SEGMENTFLAGS;

typedef struct _DXGK_SEGMENTDESCRIPTOR {
    PHYSICAL_ADDRESS BaseAddress;
    PHYSICAL_ADDRESS CpuTranslatedAddress;
    SIZE_T Size;
    UINT NbOfBanks;
    SIZE_T CommitLimit;
    DXGK_SEGMENTFLAGS Flags;
} DXGK_SEGMENTDESCRIPTOR;

#define KMT_MAX_SEGMENTS 8

typedef struct _DXGK_QUERYSEGMENTOUT {
    UINT NbSegment;
    DXGK_SEGMENTDESCRIPTOR pSegmentDescriptor[KMT_MAX_SEGMENTS];
    UINT PagingBufferSegmentId;
    UINT PagingBufferSize;
    UINT PagingBufferPrivateDataSize;
} DXGK_QUERYSEGMENTOUT;

/* DXGKQAITYPE_KMT_ADAPTERDESC: what Windows reads from PnP and the INF. */
typedef struct _KMT_ADAPTER_DESC {
    char DriverName[32];                /* "soft", "virtio_gpu", ... */
    char Description[128];
    D3DKMT_ADAPTERTYPE AdapterType;
    D3DKMT_DEVICE_IDS DeviceIds;
    D3DKMT_ADAPTERADDRESS Address;
    BOOL HasAddress;
    BOOL DriverUpdatePending;           /* CHECKDRIVERUPDATESTATUS */
    WCHAR UmdFileName[NUM_KMTUMDVERSIONS][MAX_PATH]; /* "" where none */
    WCHAR OpenGlIcdFileName[MAX_PATH];
    ULONG OpenGlVersion;
    ULONG OpenGlFlags;
    UINT NumOfSources;                  /* video present sources (0: render only) */
} KMT_ADAPTER_DESC;

/* DXGKQAITYPE_KMT_CURRENTDISPLAYMODE (1.4): the mode a video present
 * source scans out now, what Windows keeps in the VidPN's source and target
 * mode sets.  The core derives KMTQAITYPE_CURRENTDISPLAYMODE from it and
 * checks DxgkDdiGetScanLine against it.  Answers:
 *   STATUS_SUCCESS                                   the source is lit;
 *   STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE     no such source;
 *   STATUS_GRAPHICS_SOURCE_NOT_IN_TOPOLOGY           the source is dark
 *                                                    (no mode, no vblank).
 * Lines count from the first active line (0); the vertical blank is
 * [VerticalBlankStart, ScanLineTotal). */
typedef struct _KMT_CURRENT_DISPLAY_MODE {
    UINT Width;                         /* active pixels per line */
    UINT Height;                        /* active lines */
    UINT RefreshRateNumerator;          /* refresh in Hz as a rational: */
    UINT RefreshRateDenominator;        /* 60 Hz CEA-861 1080p: 60/1 */
    UINT ScanLineTotal;                 /* lines per frame, blank included (vtotal) */
    UINT VerticalBlankStart;            /* first line of the vertical blank (Height when progressive) */
    UINT HorizontalTotal;               /* pixels per line, blank included (htotal) */
    UINT Interlaced;                    /* 0: progressive */
    UINT64 PixelRate;                   /* pixels per second (148500000 for 1080p60) */
} KMT_CURRENT_DISPLAY_MODE;
KMT_CHECK_SIZE(KMT_CURRENT_DISPLAY_MODE, 40);
KMT_CHECK_OFFSET(KMT_CURRENT_DISPLAY_MODE, PixelRate, 32);

/* The performance queries' input: which engine of which physical adapter
 * (NodeOrdinal is 0 for the adapter-wide ones).  The core has checked both
 * against the adapter's counts.  A miniport without a value leaves it 0. */
typedef struct _KMT_PERFDATA_IN {
    UINT NodeOrdinal;
    UINT PhysicalAdapterIndex;
} KMT_PERFDATA_IN;

/* DXGKQAITYPE_NODEPERFDATA */
typedef struct _DXGK_NODE_PERFDATA {
    ULONGLONG Frequency;                /* Hz */
    ULONGLONG MaxFrequency;
    ULONGLONG MaxFrequencyOC;
    ULONG Voltage;                      /* millivolts */
    ULONG VoltageMax;
    ULONG VoltageMaxOC;
    ULONGLONG MaxTransitionLatency;     /* 100 ns units */
} DXGK_NODE_PERFDATA;

/* DXGKQAITYPE_ADAPTERPERFDATA */
typedef struct _DXGK_ADAPTER_PERFDATA {
    ULONGLONG MemoryFrequency;          /* Hz */
    ULONGLONG MaxMemoryFrequency;
    ULONGLONG MaxMemoryFrequencyOC;
    ULONGLONG MemoryBandwidth;          /* bytes */
    ULONGLONG PCIEBandwidth;
    ULONG FanRPM;
    ULONG Power;                        /* tenths of a percent */
    ULONG Temperature;                  /* tenths of a degree Celsius */
    UCHAR PowerStateOverride;
} DXGK_ADAPTER_PERFDATA;

/* DXGKQAITYPE_ADAPTERPERFDATA_CAPS */
typedef struct _DXGK_ADAPTER_PERFDATACAPS {
    ULONGLONG MaxMemoryBandwidth;
    ULONGLONG MaxPCIEBandwidth;
    ULONG MaxFanRPM;
    ULONG TemperatureMax;
    ULONG TemperatureWarning;
} DXGK_ADAPTER_PERFDATACAPS;

/* DXGKQAITYPE_KMT_MEMORYUSAGE: the budget the miniport can honestly give. */
typedef struct _KMT_MEMORY_BUDGET {
    UINT64 Budget;
    UINT64 AvailableForReservation;
} KMT_MEMORY_BUDGET;

/* ---- devices ------------------------------------------------------------- */

typedef struct _DXGK_CREATEDEVICEFLAGS {
    union {
        struct {
            UINT SystemDevice : 1;
            UINT GdiDevice : 1;
            UINT Reserved : 30;
        };
        UINT Value;
    };
} DXGK_CREATEDEVICEFLAGS;

typedef struct _DXGK_DEVICEINFO {
    VOID *pDmaBufferPrivateData;
    UINT DmaBufferPrivateDataSize;
    UINT DmaBufferSize;
    UINT DmaBufferSegmentSet;
    UINT AllocationListSize;
    UINT PatchLocationListSize;
    UINT Flags;
} DXGK_DEVICEINFO;

typedef struct _DXGKARG_CREATEDEVICE {
    HANDLE hDevice;                     /* in: core's device handle; out: driver's */
    DXGK_CREATEDEVICEFLAGS Flags;
    DXGK_DEVICEINFO *pInfo;             /* out */
} DXGKARG_CREATEDEVICE;

/* ---- allocations --------------------------------------------------------- */

typedef struct _DXGK_ALLOCATIONINFOFLAGS {
    union {
        struct {
            UINT CpuVisible : 1;
            UINT PermanentSysMem : 1;
            UINT Cached : 1;
            UINT Protected : 1;
            UINT ExistingSysMem : 1;
            UINT ExistingKernelSysMem : 1;
            UINT FromEndOfSegment : 1;
            UINT Swizzled : 1;
            UINT Overlay : 1;
            UINT Capture : 1;
            UINT UseAlternateVA : 1;
            UINT SynchronousPaging : 1;
            UINT LinkMirrored : 1;
            UINT LinkInstanced : 1;
            UINT HistoryBuffer : 1;
            UINT AccessedPhysically : 1;
            UINT ExplicitResidencyNotification : 1;
            UINT HardwareProtected : 1;
            UINT CpuVisibleOnDemand : 1;
            UINT Reserved : 13;
        };
        UINT Value;
    };
} DXGK_ALLOCATIONINFOFLAGS;

typedef struct _DXGK_ALLOCATIONINFO {
    VOID *pPrivateDriverData;           /* in/out: the UMD's per-allocation data */
    UINT PrivateDriverDataSize;
    UINT Alignment;                     /* out */
    SIZE_T Size;                        /* in: kmtshim fills it for standard
                                           and existing-sysmem allocations;
                                           out: the driver's size */
    SIZE_T PitchAlignedSize;
    UINT SupportedReadSegmentSet;       /* out */
    UINT SupportedWriteSegmentSet;      /* out */
    UINT EvictionSegmentSet;
    UINT PhysicalAdapterIndex;
    HANDLE hAllocation;                 /* out: the driver's handle */
    DXGK_ALLOCATIONINFOFLAGS Flags;     /* out (ExistingSysMem: in) */
    UINT AllocationPriority;
    /* kmtshim extension: Windows' VidMm owns existing system memory; here the
     * miniport is told where it lives (NULL otherwise). */
    const VOID *pKmtSystemMem;
    /* kmtshim extension (1.1): the GPU VA the driver gave the allocation, 0
     * if none; returned in D3DDDI_ALLOCATIONINFO2.GpuVirtualAddress. */
    D3DGPU_VIRTUAL_ADDRESS KmtGpuVirtualAddress;
} DXGK_ALLOCATIONINFO;

typedef struct _DXGK_CREATEALLOCATIONFLAGS {
    union {
        struct {
            UINT Resource : 1;          /* the allocations belong to a resource */
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_CREATEALLOCATIONFLAGS;

typedef struct _DXGKARG_CREATEALLOCATION {
    const VOID *pPrivateDriverData;     /* resource-level UMD data */
    UINT PrivateDriverDataSize;
    UINT NumAllocations;
    DXGK_ALLOCATIONINFO *pAllocationInfo;
    HANDLE hResource;                   /* in/out: the driver's resource handle */
    DXGK_CREATEALLOCATIONFLAGS Flags;
} DXGKARG_CREATEALLOCATION;

typedef struct _DXGK_DESTROYALLOCATIONFLAGS {
    union {
        struct {
            UINT DestroyResource : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_DESTROYALLOCATIONFLAGS;

typedef struct _DXGKARG_DESTROYALLOCATION {
    UINT NumAllocations;
    const HANDLE *pAllocationList;      /* the driver's allocation handles */
    HANDLE hResource;                   /* in/out */
    DXGK_DESTROYALLOCATIONFLAGS Flags;
} DXGKARG_DESTROYALLOCATION;

typedef struct _DXGK_OPENALLOCATIONINFO {
    D3DKMT_HANDLE hAllocation;          /* core's handle: use DxgkCbGetHandleData */
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    HANDLE hDeviceSpecificAllocation;   /* out, non-NULL */
} DXGK_OPENALLOCATIONINFO;

typedef struct _DXGK_OPENALLOCATIONFLAGS {
    union {
        struct {
            UINT Create : 1;            /* first open, part of creation */
            UINT ReadOnly : 1;
            UINT Reserved : 30;
        };
        UINT Value;
    };
} DXGK_OPENALLOCATIONFLAGS;

typedef struct _DXGKARG_OPENALLOCATION {
    UINT NumAllocations;
    DXGK_OPENALLOCATIONINFO *pOpenAllocation;
    VOID *pPrivateDriverData;           /* resource-level, read-only here */
    UINT PrivateDriverSize;
    DXGK_OPENALLOCATIONFLAGS Flags;
} DXGKARG_OPENALLOCATION;

typedef struct _DXGKARG_CLOSEALLOCATION {
    UINT NumAllocations;
    const HANDLE *pOpenHandleList;      /* hDeviceSpecificAllocation values */
} DXGKARG_CLOSEALLOCATION;

/* ---- CPU mapping ----------------------------------------------------------- */

typedef struct _DXGK_LOCKFLAGS {
    union {
        struct {
            UINT ReadOnly : 1;
            UINT WriteOnly : 1;
            UINT DonotWait : 1;
            UINT IgnoreSync : 1;
            UINT Discard : 1;
            UINT Reserved : 27;
        };
        UINT Value;
    };
} DXGK_LOCKFLAGS;

typedef struct _DXGKARG_LOCK {
    HANDLE hAllocation;                 /* the driver's allocation handle */
    UINT NumPages;
    const UINT *pPages;
    VOID *pData;                        /* out: CPU address */
    DXGK_LOCKFLAGS Flags;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress; /* out, 0 if none */
} DXGKARG_LOCK;

typedef struct _DXGKARG_UNLOCK {
    HANDLE hAllocation;
    VOID *pData;                        /* what DxgkDdiLock returned */
} DXGKARG_UNLOCK;


/* ---- contexts -------------------------------------------------------------- */

typedef struct _DXGK_CREATECONTEXTFLAGS {
    union {
        struct {
            UINT SystemContext : 1;
            UINT GdiContext : 1;
            UINT VirtualAddressing : 1;   /* D3DKMTCreateContextVirtual */
            UINT SystemProtectedContext : 1;
            UINT HwQueueSupported : 1;
            UINT TestContext : 1;
            UINT Reserved : 26;
        };
        UINT Value;
    };
} DXGK_CREATECONTEXTFLAGS;

typedef struct _DXGK_CONTEXTINFO_CAPS {
    union {
        struct {
            UINT NoPatchingRequired : 1;
            UINT DriverManagesResidency : 1;
            UINT UseIoMmu : 1;
            UINT Reserved : 29;
        };
        UINT Value;
    };
} DXGK_CONTEXTINFO_CAPS;

typedef struct _DXGK_CONTEXTINFO {
    UINT DmaBufferSize;
    UINT DmaBufferSegmentSet;
    UINT DmaBufferPrivateDataSize;
    UINT AllocationListSize;
    UINT PatchLocationListSize;
    UINT Reserved;
    DXGK_CONTEXTINFO_CAPS Caps;
    ULONG PagingCompanionNodeId;
} DXGK_CONTEXTINFO;

typedef struct _DXGKARG_CREATECONTEXT {
    HANDLE hContext;                    /* in: the core's context; out: the driver's */
    UINT NodeOrdinal;
    UINT EngineAffinity;
    DXGK_CREATECONTEXTFLAGS Flags;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    DXGK_CONTEXTINFO ContextInfo;       /* out */
} DXGKARG_CREATECONTEXT;

/* ---- submission --------------------------------------------------------------
 * The core's scheduler (VidSch) calls these from one thread per adapter:
 * like WDDM's level-1 GPU-scheduler class, never two at once.  They must
 * not block: queue the work, report it later with DxgkCbNotifyInterrupt
 * (DMA_COMPLETED with the SubmissionFenceId; fence ids rise per node). */

typedef struct _DXGK_SUBMITCOMMANDFLAGS {
    union {
        struct {
            UINT Paging : 1;
            UINT Present : 1;
            UINT RedirectedPresent : 1;
            UINT NullRendering : 1;
            UINT Flip : 1;
            UINT FlipWithNoWait : 1;
            UINT ContextSwitch : 1;
            UINT Resubmission : 1;
            UINT VirtualMachineData : 1;
            UINT Reserved : 23;
        };
        UINT Value;
    };
} DXGK_SUBMITCOMMANDFLAGS;

/* WDDM 2 (GPU virtual addressing): D3DKMTSubmitCommand. */
typedef struct _DXGKARG_SUBMITCOMMANDVIRTUAL {
    HANDLE hContext;                    /* the driver's context */
    D3DGPU_VIRTUAL_ADDRESS DmaBufferVirtualAddress;
    UINT DmaBufferSize;
    VOID *pDmaBufferPrivateData;
    UINT DmaBufferPrivateDataSize;
    UINT DmaBufferUmdPrivateDataSize;
    UINT SubmissionFenceId;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT FlipInterval;
    DXGK_SUBMITCOMMANDFLAGS Flags;
    UINT EngineOrdinal;
    UINT NodeOrdinal;
} DXGKARG_SUBMITCOMMANDVIRTUAL;

/* The kernel's allocation list handed to DxgkDdiRender / SubmitCommand. */
typedef struct _DXGK_ALLOCATIONLIST {
    HANDLE hDeviceSpecificAllocation;
    union {
        struct {
            UINT WriteOperation : 1;
            UINT SegmentId : 5;
            UINT Reserved : 26;
        };
        UINT Value;
    };
    PHYSICAL_ADDRESS PhysicalAddress;
    /* kmtshim extension: the allocation's GPU VA, what patching writes */
    D3DGPU_VIRTUAL_ADDRESS KmtGpuVirtualAddress;
} DXGK_ALLOCATIONLIST;

/* WDDM 1 (patching): D3DKMTRender turns the UMD's command buffer into a
 * DMA buffer with DxgkDdiRender, then it is submitted with DxgkDdiSubmitCommand. */
typedef struct _DXGKARG_RENDER {
    const VOID *pCommand;
    UINT CommandLength;
    VOID *pDmaBuffer;                   /* in/out: advanced past what was written */
    UINT DmaSize;
    VOID *pDmaBufferPrivateData;
    UINT DmaBufferPrivateDataSize;
    DXGK_ALLOCATIONLIST *pAllocationList;
    UINT AllocationListSize;
    const D3DDDI_PATCHLOCATIONLIST *pPatchLocationListIn;
    UINT PatchLocationListInSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationListOut;
    UINT PatchLocationListOutSize;
    UINT MultipassOffset;
    UINT DmaBufferSegmentId;
    PHYSICAL_ADDRESS DmaBufferPhysicalAddress;
} DXGKARG_RENDER;

typedef struct _DXGKARG_SUBMITCOMMAND {
    HANDLE hContext;                    /* the driver's context */
    UINT DmaBufferSegmentId;
    PHYSICAL_ADDRESS DmaBufferPhysicalAddress;
    UINT DmaBufferSize;
    UINT DmaBufferSubmissionStartOffset;
    UINT DmaBufferSubmissionEndOffset;
    VOID *pDmaBufferPrivateData;
    UINT DmaBufferPrivateDataSize;
    UINT DmaBufferPrivateDataSubmissionStartOffset;
    UINT DmaBufferPrivateDataSubmissionEndOffset;
    UINT SubmissionFenceId;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT FlipInterval;
    DXGK_SUBMITCOMMANDFLAGS Flags;
    UINT EngineOrdinal;
    D3DGPU_VIRTUAL_ADDRESS DmaBufferVirtualAddress;
    UINT NodeOrdinal;
    /* kmtshim extension: the DMA buffer's CPU address (the core owns it
     * until DMA_COMPLETED) and the patched allocation list. */
    VOID *pKmtDmaBuffer;
    const DXGK_ALLOCATIONLIST *pKmtAllocationList;
    UINT KmtAllocationListSize;
} DXGKARG_SUBMITCOMMAND;

/* ---- escape ---------------------------------------------------------------- */

typedef struct _DXGKARG_ESCAPE {
    HANDLE hDevice;                     /* driver's device handle or NULL */
    D3DDDI_ESCAPEFLAGS Flags;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    HANDLE hContext;
} DXGKARG_ESCAPE;

/* ---- the DDI table ----------------------------------------------------------- */

typedef NTSTATUS (APIENTRY *KMTDDI_ENUM_PHYSICAL_DEVICES)(
    PVOID DriverContext, UINT *NumDevices, KMT_PHYSICAL_DEVICE *Devices);
typedef NTSTATUS (APIENTRY *DXGKDDI_ADD_DEVICE)(
    const KMT_PHYSICAL_DEVICE *PhysicalDeviceObject, PVOID *MiniportDeviceContext);
typedef NTSTATUS (APIENTRY *DXGKDDI_START_DEVICE)(
    PVOID MiniportDeviceContext, DXGK_START_INFO *DxgkStartInfo,
    DXGKRNL_INTERFACE *DxgkInterface, ULONG *NumberOfVideoPresentSources,
    ULONG *NumberOfChildren);
typedef NTSTATUS (APIENTRY *DXGKDDI_STOP_DEVICE)(PVOID MiniportDeviceContext);
typedef NTSTATUS (APIENTRY *DXGKDDI_REMOVE_DEVICE)(PVOID MiniportDeviceContext);
typedef void (APIENTRY *DXGKDDI_UNLOAD)(void);

typedef NTSTATUS (APIENTRY *DXGKDDI_QUERYADAPTERINFO)(
    HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *pQueryAdapterInfo);
typedef NTSTATUS (APIENTRY *DXGKDDI_CREATEDEVICE)(
    HANDLE hAdapter, DXGKARG_CREATEDEVICE *pCreateDevice);
typedef NTSTATUS (APIENTRY *DXGKDDI_DESTROYDEVICE)(HANDLE hDevice);
typedef NTSTATUS (APIENTRY *DXGKDDI_CREATEALLOCATION)(
    HANDLE hAdapter, DXGKARG_CREATEALLOCATION *pCreateAllocation);
typedef NTSTATUS (APIENTRY *DXGKDDI_DESTROYALLOCATION)(
    HANDLE hAdapter, const DXGKARG_DESTROYALLOCATION *pDestroyAllocation);
typedef NTSTATUS (APIENTRY *DXGKDDI_OPENALLOCATIONINFO)(
    HANDLE hDevice, const DXGKARG_OPENALLOCATION *pOpenAllocation);
typedef NTSTATUS (APIENTRY *DXGKDDI_CLOSEALLOCATION)(
    HANDLE hDevice, const DXGKARG_CLOSEALLOCATION *pCloseAllocation);
typedef NTSTATUS (APIENTRY *DXGKDDI_LOCK)(HANDLE hAdapter, DXGKARG_LOCK *pLock);
typedef NTSTATUS (APIENTRY *DXGKDDI_UNLOCK)(HANDLE hAdapter, const DXGKARG_UNLOCK *pUnlock);
typedef NTSTATUS (APIENTRY *DXGKDDI_ESCAPE)(HANDLE hAdapter, const DXGKARG_ESCAPE *pEscape);
typedef NTSTATUS (APIENTRY *DXGKDDI_CREATECONTEXT)(HANDLE hDevice, DXGKARG_CREATECONTEXT *pCreateContext);
typedef NTSTATUS (APIENTRY *DXGKDDI_DESTROYCONTEXT)(HANDLE hContext);
typedef NTSTATUS (APIENTRY *DXGKDDI_RENDER)(HANDLE hContext, DXGKARG_RENDER *pRender);
typedef NTSTATUS (APIENTRY *DXGKDDI_SUBMITCOMMAND)(HANDLE hAdapter, const DXGKARG_SUBMITCOMMAND *pSubmitCommand);
typedef NTSTATUS (APIENTRY *DXGKDDI_SUBMITCOMMANDVIRTUAL)(HANDLE hAdapter,
                                                          const DXGKARG_SUBMITCOMMANDVIRTUAL *pSubmitCommand);
/* kmtshim extension: give CPU memory the core owns (monitored fence values,
 * context allocations) a GPU VA, as VidMm maps them on Windows.  Optional:
 * without it such memory has no GPU VA (0). */
typedef NTSTATUS (APIENTRY *KMTDDI_MAPSYSTEMMEMORY)(HANDLE hAdapter, VOID *pCpuAddress, SIZE_T Size,
                                                    D3DGPU_VIRTUAL_ADDRESS *pGpuVirtualAddress);
typedef NTSTATUS (APIENTRY *KMTDDI_UNMAPSYSTEMMEMORY)(HANDLE hAdapter, D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress);

/* kmtshim extension (1.2): monitored fences backed by the miniport's own
 * fence object (a DRM timeline syncobj).  The core keeps the fence value in
 * memory the program reads; the miniport mirrors it: CPU signals reach it
 * through KmtDdiSignalFence, and when its hardware signals the fence it
 * writes *pValue and raises DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED.
 * Optional (all three or none): without them fences live in memory only.
 *   CreateFence   may succeed with hDriverFence NULL: this adapter has no
 *                 fence object of its own, the fence lives in memory only.
 *   SignalFence   gets every value the core stores: CPU signals, scheduled
 *                 (GPU) signals, rewinds (AllowFenceRewind: a lower Value;
 *                 the miniport documents what a rewind means for it) and
 *                 UINT64_MAX when the device faults.  Calls for one fence
 *                 never overlap and come in the order of the stores; it must
 *                 not raise interrupts itself.
 *   the miniport  only ever raises *pValue (an atomic compare-and-swap to a
 *                 higher value), then raises MONITORED_FENCE_SIGNALED with
 *                 none of its locks held.
 *   DestroyFence  after it returns the miniport never touches pValue. */
typedef struct _KMTARG_CREATEFENCE {
    _Atomic UINT64 *pValue;             /* in: the fence value the core keeps */
    UINT64 InitialValue;                /* in */
    HANDLE hDriverFence;                /* out */
} KMTARG_CREATEFENCE;

typedef NTSTATUS (APIENTRY *KMTDDI_CREATEFENCE)(HANDLE hAdapter, KMTARG_CREATEFENCE *pCreateFence);
typedef void (APIENTRY *KMTDDI_DESTROYFENCE)(HANDLE hAdapter, HANDLE hDriverFence);
typedef NTSTATUS (APIENTRY *KMTDDI_SIGNALFENCE)(HANDLE hAdapter, HANDLE hDriverFence, UINT64 Value);

/* Miracast (dispmprt.h, 1.2): the three form one class the core serializes;
 * see include/kmtshim/dispmprt.h for the types. */
struct _DXGK_MIRACAST_CALLBACKS;
typedef NTSTATUS (APIENTRY *DXGKDDI_MIRACAST_CREATE_CONTEXT)(
    PVOID DriverContext, struct _DXGK_MIRACAST_CALLBACKS *MiracastCallbacks,
    PVOID *MiracastContext, UINT *MiracastTargetId);
typedef void (APIENTRY *DXGKDDI_MIRACAST_DESTROY_CONTEXT)(PVOID DriverContext, PVOID MiracastContext);
typedef NTSTATUS (APIENTRY *DXGKDDI_MIRACAST_HANDLE_IO_CONTROL)(
    PVOID DriverContext, PVOID MiracastContext, ULONG InputBufferSize, VOID *pInputBuffer,
    ULONG OutputBufferSize, VOID *pOutputBuffer, ULONG *BytesReturned);

/* DxgkDdiResetEngine: the scheduler saw the node's oldest packet run past
 * TdrDelay.  The driver stops the engine, empties its queue for the node
 * and returns, ready for new packets, with the fence id of the packet it
 * aborted mid-execution; the scheduler resubmits what it dropped unstarted. */
typedef struct _DXGKARG_RESETENGINE {
    UINT NodeOrdinal;                   /* in */
    UINT EngineOrdinal;                 /* in: the physical adapter of a linked adapter */
    UINT LastAbortedFenceId;            /* out */
} DXGKARG_RESETENGINE;
KMT_CHECK_SIZE(DXGKARG_RESETENGINE, 12);
KMT_CHECK_OFFSET(DXGKARG_RESETENGINE, EngineOrdinal, 4);
KMT_CHECK_OFFSET(DXGKARG_RESETENGINE, LastAbortedFenceId, 8);

typedef NTSTATUS (APIENTRY *DXGKDDI_RESETENGINE)(HANDLE hAdapter, DXGKARG_RESETENGINE *pResetEngine);

/* ---- display timing (1.4, all optional) ----------------------------------------
 * DxgkDdiControlInterrupt: the core enables DXGK_INTERRUPT_CRTC_VSYNC while
 *   at least one thread waits for a vertical blank of the adapter and
 *   disables it when the last waiter leaves; calls never overlap for one
 *   adapter and alternate (enable, disable, ...).  While enabled the
 *   miniport raises DxgkCbNotifyInterrupt(CRTC_VSYNC) once per vertical
 *   blank of each lit source, from any thread, with none of its locks held;
 *   after the disable returns it raises none.  Other types: return
 *   STATUS_NOT_IMPLEMENTED.  Without the DDI a vblank wait fails with
 *   STATUS_NOT_SUPPORTED.
 * DxgkDdiGetScanLine: where the target's scan-out is now.  Fails with
 *   STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_TARGET for an unknown target and
 *   STATUS_GRAPHICS_TARGET_NOT_IN_TOPOLOGY for a dark one.  Without the DDI
 *   D3DKMTGetScanLine fails with STATUS_NOT_SUPPORTED.
 * DxgkDdiQueryChildStatus: the core asks StatusConnection of child
 *   ChildUid, 0 .. NumberOfChildren-1 from DxgkDdiStartDevice (child N is
 *   the monitor connector of target N); the miniport fills
 *   HotPlug.Connected.  NonDestructiveOnly: no probing that disturbs the
 *   output (no load detection that flickers).  An unknown ChildUid answers
 *   STATUS_INVALID_PARAMETER.  Without the DDI every child counts as
 *   connected.  A miniport may also report a change unasked, through
 *   DxgkCbIndicateChildStatus(StatusConnection). */
typedef struct _DXGKARG_GETSCANLINE {
    D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;  /* in */
    BOOLEAN InVerticalBlank;                       /* out */
    UINT ScanLine;                                 /* out: 0 .. ScanLineTotal-1 */
} DXGKARG_GETSCANLINE;
KMT_CHECK_SIZE(DXGKARG_GETSCANLINE, 12);
KMT_CHECK_OFFSET(DXGKARG_GETSCANLINE, InVerticalBlank, 4);
KMT_CHECK_OFFSET(DXGKARG_GETSCANLINE, ScanLine, 8);

typedef NTSTATUS (APIENTRY *DXGKDDI_CONTROLINTERRUPT)(HANDLE hAdapter, DXGK_INTERRUPT_TYPE InterruptType,
                                                      BOOLEAN EnableInterrupt);
typedef NTSTATUS (APIENTRY *DXGKDDI_GETSCANLINE)(HANDLE hAdapter, DXGKARG_GETSCANLINE *pGetScanLine);
typedef NTSTATUS (APIENTRY *DXGKDDI_QUERYCHILDSTATUS)(PVOID MiniportDeviceContext, DXGK_CHILD_STATUS *ChildStatus,
                                                      BOOLEAN NonDestructiveOnly);

/* DxgkDdiCalibrateGpuClock: the GPU's timestamp counter and the CPU's
 * QueryPerformanceCounter clock (see DXGK_GPUCLOCKDATA), read as close
 * together as the driver can.  STATUS_NOT_SUPPORTED where the GPU has no
 * timestamp the driver can read. */
typedef struct _DXGKARG_CALIBRATEGPUCLOCK {
    UINT64 GpuFrequency;                /* out: ticks per second */
    UINT64 GpuClockCounter;             /* out */
    UINT64 CpuClockCounter;             /* out */
} DXGKARG_CALIBRATEGPUCLOCK;
KMT_CHECK_SIZE(DXGKARG_CALIBRATEGPUCLOCK, 24);

typedef NTSTATUS (APIENTRY *DXGKDDI_CALIBRATEGPUCLOCK)(HANDLE hAdapter, UINT32 NodeOrdinal,
                                                       UINT32 EngineOrdinal,
                                                       DXGKARG_CALIBRATEGPUCLOCK *pClockCalibration);

/* ---- sharing across processes (kmtshim extension, 1.6, all optional) ----
 * On Windows VidMm owns the memory of a shared allocation and dxgkrnl owns
 * a shared fence, so a second process only needs DxgkDdiOpenAllocation.
 * Here the memory and the fence objects are the miniport's, so the core
 * carries them to the other process as file descriptors (memfds, dma-bufs,
 * DRM syncobj fds) through the session broker, and asks the miniport there
 * to turn the descriptor back into an object of its own.
 *   ExportAllocation  a new fd the caller owns (O_CLOEXEC) that names the
 *                     allocation's memory; STATUS_NOT_SUPPORTED for memory
 *                     the miniport cannot hand out (a program's own
 *                     ExistingSysMem pages).
 *   ImportAllocation  an allocation of this adapter over the exported
 *                     memory, as DxgkDdiCreateAllocation would have made it
 *                     from the same private driver data, with a GPU VA of
 *                     its own where a created one gets one; the miniport
 *                     keeps what it needs (it may dup Fd; the caller
 *                     closes Fd).
 *                     Destroyed with DxgkDdiDestroyAllocation like any
 *                     other; the memory lives until every process's
 *                     allocation over it is gone.  Then DxgkDdiOpenAllocation
 *                     binds it to the opening device.
 *   ExportFence       a new fd naming the driver fence of KmtDdiCreateFence
 *                     (a DRM timeline syncobj fd); STATUS_NOT_SUPPORTED
 *                     where it has none.
 *   ImportFence       KmtDdiCreateFence over an exported fence: the same
 *                     contract (pValue mirrors it, KmtDdiSignalFence,
 *                     KmtDdiDestroyFence), the GPU object shared.
 * Without Export/ImportAllocation an allocation of the adapter can still
 * be shared inside its process; opening it in another one fails with
 * STATUS_NOT_SUPPORTED.  Without Export/ImportFence a shared fence is the
 * core's shared memory alone (the soft miniport's case). */
typedef struct _KMTARG_IMPORTALLOCATION {
    int Fd;                             /* in: from KmtDdiExportAllocation, any process */
    UINT64 Size;                        /* in: the allocation's size in bytes */
    const VOID *pPrivateDriverData;     /* in: the allocation's, as created */
    UINT PrivateDriverDataSize;         /* in */
    HANDLE hAllocation;                 /* out: the driver's allocation handle */
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress; /* out: in this process's GPU VA space, as
                                               * DXGK_ALLOCATIONINFO's KmtGpuVirtualAddress; 0: none */
} KMTARG_IMPORTALLOCATION;

typedef struct _KMTARG_IMPORTFENCE {
    int Fd;                             /* in: from KmtDdiExportFence, any process */
    _Atomic UINT64 *pValue;             /* in: as KMTARG_CREATEFENCE */
    HANDLE hDriverFence;                /* out */
} KMTARG_IMPORTFENCE;

typedef NTSTATUS (APIENTRY *KMTDDI_EXPORTALLOCATION)(HANDLE hAdapter, HANDLE hAllocation, int *pFd);
typedef NTSTATUS (APIENTRY *KMTDDI_IMPORTALLOCATION)(HANDLE hAdapter, KMTARG_IMPORTALLOCATION *pImport);
typedef NTSTATUS (APIENTRY *KMTDDI_EXPORTFENCE)(HANDLE hAdapter, HANDLE hDriverFence, int *pFd);
typedef NTSTATUS (APIENTRY *KMTDDI_IMPORTFENCE)(HANDLE hAdapter, KMTARG_IMPORTFENCE *pImport);

typedef struct _DRIVER_INITIALIZATION_DATA {
    ULONG Version;                      /* KMT_MINIPORT_INTERFACE_VERSION */
    ULONG Size;                         /* sizeof(DRIVER_INITIALIZATION_DATA) */
    const char *DriverName;             /* short, unique: "soft", "drm" */
    PVOID DriverContext;                /* handed to KmtDdiEnumPhysicalDevices */

    KMTDDI_ENUM_PHYSICAL_DEVICES KmtDdiEnumPhysicalDevices; /* extension */
    DXGKDDI_ADD_DEVICE DxgkDdiAddDevice;
    DXGKDDI_START_DEVICE DxgkDdiStartDevice;
    DXGKDDI_STOP_DEVICE DxgkDdiStopDevice;
    DXGKDDI_REMOVE_DEVICE DxgkDdiRemoveDevice;
    DXGKDDI_UNLOAD DxgkDdiUnload;

    DXGKDDI_QUERYADAPTERINFO DxgkDdiQueryAdapterInfo;
    DXGKDDI_CREATEDEVICE DxgkDdiCreateDevice;
    DXGKDDI_DESTROYDEVICE DxgkDdiDestroyDevice;
    DXGKDDI_CREATEALLOCATION DxgkDdiCreateAllocation;
    DXGKDDI_DESTROYALLOCATION DxgkDdiDestroyAllocation;
    DXGKDDI_OPENALLOCATIONINFO DxgkDdiOpenAllocation;
    DXGKDDI_CLOSEALLOCATION DxgkDdiCloseAllocation;
    DXGKDDI_LOCK DxgkDdiLock;
    DXGKDDI_UNLOCK DxgkDdiUnlock;
    DXGKDDI_ESCAPE DxgkDdiEscape;

    /* 1.1: execution (all optional: without them, contexts are refused) */
    DXGKDDI_CREATECONTEXT DxgkDdiCreateContext;
    DXGKDDI_DESTROYCONTEXT DxgkDdiDestroyContext;
    DXGKDDI_RENDER DxgkDdiRender;
    DXGKDDI_SUBMITCOMMAND DxgkDdiSubmitCommand;
    DXGKDDI_SUBMITCOMMANDVIRTUAL DxgkDdiSubmitCommandVirtual;
    KMTDDI_MAPSYSTEMMEMORY KmtDdiMapSystemMemory;
    KMTDDI_UNMAPSYSTEMMEMORY KmtDdiUnmapSystemMemory;

    /* 1.2: miniport-backed fences, Miracast (all optional) */
    KMTDDI_CREATEFENCE KmtDdiCreateFence;
    KMTDDI_DESTROYFENCE KmtDdiDestroyFence;
    KMTDDI_SIGNALFENCE KmtDdiSignalFence;
    DXGKDDI_MIRACAST_CREATE_CONTEXT DxgkDdiMiracastCreateContext;
    DXGKDDI_MIRACAST_DESTROY_CONTEXT DxgkDdiMiracastDestroyContext;
    DXGKDDI_MIRACAST_HANDLE_IO_CONTROL DxgkDdiMiracastIoControl;

    /* 1.3: timeout detection and recovery (optional: without it a hang
     * leaves the device HUNG and its work in flight) */
    DXGKDDI_RESETENGINE DxgkDdiResetEngine;

    /* 1.4: display timing (all optional; see "display timing" above) */
    DXGKDDI_CONTROLINTERRUPT DxgkDdiControlInterrupt;
    DXGKDDI_GETSCANLINE DxgkDdiGetScanLine;
    DXGKDDI_QUERYCHILDSTATUS DxgkDdiQueryChildStatus;

    /* 1.5: GPU clock calibration (optional: without it the query is
     * STATUS_NOT_SUPPORTED) */
    DXGKDDI_CALIBRATEGPUCLOCK DxgkDdiCalibrateGpuClock;

    /* 1.6: sharing across processes (optional; see above) */
    KMTDDI_EXPORTALLOCATION KmtDdiExportAllocation;
    KMTDDI_IMPORTALLOCATION KmtDdiImportAllocation;
    KMTDDI_EXPORTFENCE KmtDdiExportFence;
    KMTDDI_IMPORTFENCE KmtDdiImportFence;

    PVOID Reserved[10];                 /* later DDIs */
} DRIVER_INITIALIZATION_DATA;

/* ---- loading a miniport --------------------------------------------------
 * A miniport plugin is a shared object exporting KMT_MINIPORT_ENTRY_NAME with
 * the PKMT_MINIPORT_DRIVER_ENTRY signature.  Like a WDDM DriverEntry, it
 * fills a DRIVER_INITIALIZATION_DATA and calls Dxgkrnl->DxgkInitialize. */
typedef struct _KMT_DRIVER_OBJECT KMT_DRIVER_OBJECT;

typedef struct _KMT_DXGKRNL_EXPORTS {
    ULONG Size;
    ULONG Version;                      /* KMT_MINIPORT_INTERFACE_VERSION of the core */
    NTSTATUS (APIENTRY *DxgkInitialize)(KMT_DRIVER_OBJECT *DriverObject,
                                        const DRIVER_INITIALIZATION_DATA *InitData);
} KMT_DXGKRNL_EXPORTS;

typedef NTSTATUS (APIENTRY *PKMT_MINIPORT_DRIVER_ENTRY)(
    KMT_DRIVER_OBJECT *DriverObject, const KMT_DXGKRNL_EXPORTS *Dxgkrnl);

#define KMT_MINIPORT_ENTRY_NAME "KmtMiniportDriverEntry"

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_D3DKMDDI_H */
