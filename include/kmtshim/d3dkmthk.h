/*
 * The D3DKMT thunk interface (Microsoft's d3dkmthk.h): the structures a
 * program passes to gdi32's D3DKMT* / win32u's NtGdiDdDDI* functions, and the
 * prototypes of the functions kmtshim implements.
 *
 * Written for kmtshim from Microsoft's published documentation.  Layouts are
 * pinned for x86_64 by KMT_CHECK_SIZE / KMT_CHECK_OFFSET and hold for gcc on
 * Linux and for mingw-w64.  WCHAR is 16 bits on both.  The newer display
 * structures also pin their i386 layout (KMT_CHECK_SIZE_I386 /
 * KMT_CHECK_OFFSET_I386, checked by i686 mingw-w64 in abi-mingw.sh).
 */
#ifndef KMTSHIM_D3DKMTHK_H
#define KMTSHIM_D3DKMTHK_H

#include "kmt_wintypes.h"
#include "kmt_ntstatus.h"
#include "d3dukmdt.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MAX_PATH
# define MAX_PATH 260
#endif

#define MAX_ENUM_ADAPTERS 16
/* Most allocations one D3DKMTCreateAllocation / DestroyAllocation may name. */
#define D3DKMT_CREATEALLOCATION_MAX 1024

/* ---- adapters ---------------------------------------------------------- */

typedef struct _D3DKMT_ADAPTERINFO {
    D3DKMT_HANDLE hAdapter;
    LUID AdapterLuid;
    ULONG NumOfSources;
    BOOL bPrecisePresentRegionsPreferred;
} D3DKMT_ADAPTERINFO;
KMT_CHECK_SIZE(D3DKMT_ADAPTERINFO, 0x14);
KMT_CHECK_OFFSET(D3DKMT_ADAPTERINFO, AdapterLuid, 0x04);
KMT_CHECK_OFFSET(D3DKMT_ADAPTERINFO, NumOfSources, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_ADAPTERINFO, bPrecisePresentRegionsPreferred, 0x10);

typedef struct _D3DKMT_ENUMADAPTERS {
    ULONG NumAdapters;
    D3DKMT_ADAPTERINFO Adapters[MAX_ENUM_ADAPTERS];
} D3DKMT_ENUMADAPTERS;
KMT_CHECK_SIZE(D3DKMT_ENUMADAPTERS, 0x144);
KMT_CHECK_OFFSET(D3DKMT_ENUMADAPTERS, Adapters, 0x04);

typedef struct _D3DKMT_ENUMADAPTERS2 {
    ULONG NumAdapters;                  /* in: capacity; out: count */
    D3DKMT_ADAPTERINFO *pAdapters;      /* NULL: ask for the count */
} D3DKMT_ENUMADAPTERS2;
KMT_CHECK_SIZE(D3DKMT_ENUMADAPTERS2, 0x10);
KMT_CHECK_OFFSET(D3DKMT_ENUMADAPTERS2, pAdapters, 0x08);

typedef union _D3DKMT_ENUMADAPTERS_FILTER {
    struct {
        ULONGLONG IncludeComputeOnly : 1;
        ULONGLONG IncludeDisplayOnly : 1;
        ULONGLONG Reserved : 62;
    };
    ULONGLONG Value;
} D3DKMT_ENUMADAPTERS_FILTER;
KMT_CHECK_SIZE(D3DKMT_ENUMADAPTERS_FILTER, 8);

typedef struct _D3DKMT_ENUMADAPTERS3 {
    D3DKMT_ENUMADAPTERS_FILTER Filter;
    ULONG NumAdapters;
    D3DKMT_ADAPTERINFO *pAdapters;
} D3DKMT_ENUMADAPTERS3;
KMT_CHECK_SIZE(D3DKMT_ENUMADAPTERS3, 0x18);
KMT_CHECK_OFFSET(D3DKMT_ENUMADAPTERS3, NumAdapters, 0x08);
KMT_CHECK_OFFSET(D3DKMT_ENUMADAPTERS3, pAdapters, 0x10);

typedef struct _D3DKMT_OPENADAPTERFROMLUID {
    LUID AdapterLuid;
    D3DKMT_HANDLE hAdapter;             /* out */
} D3DKMT_OPENADAPTERFROMLUID;
KMT_CHECK_SIZE(D3DKMT_OPENADAPTERFROMLUID, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_OPENADAPTERFROMLUID, hAdapter, 0x08);

typedef struct _D3DKMT_CLOSEADAPTER {
    D3DKMT_HANDLE hAdapter;
} D3DKMT_CLOSEADAPTER;
KMT_CHECK_SIZE(D3DKMT_CLOSEADAPTER, 4);

/* ---- QueryAdapterInfo -------------------------------------------------- */

typedef enum _KMTQUERYADAPTERINFOTYPE {
    KMTQAITYPE_UMDRIVERPRIVATE = 0,
    KMTQAITYPE_UMDRIVERNAME = 1,
    KMTQAITYPE_UMOPENGLINFO = 2,
    KMTQAITYPE_GETSEGMENTSIZE = 3,
    KMTQAITYPE_ADAPTERGUID = 4,
    KMTQAITYPE_FLIPQUEUEINFO = 5,
    KMTQAITYPE_ADAPTERADDRESS = 6,
    KMTQAITYPE_SETWORKINGSETINFO = 7,
    KMTQAITYPE_ADAPTERREGISTRYINFO = 8,
    KMTQAITYPE_CURRENTDISPLAYMODE = 9,
    KMTQAITYPE_MODELIST = 10,
    KMTQAITYPE_CHECKDRIVERUPDATESTATUS = 11,
    KMTQAITYPE_VIRTUALADDRESSINFO = 12,
    KMTQAITYPE_DRIVERVERSION = 13,
    KMTQAITYPE_ADAPTERTYPE = 15,
    KMTQAITYPE_OUTPUTDUPLCONTEXTSCOUNT = 16,
    KMTQAITYPE_WDDM_1_2_CAPS = 17,
    KMTQAITYPE_UMD_DRIVER_VERSION = 18,
    KMTQAITYPE_DIRECTFLIP_SUPPORT = 19,
    KMTQAITYPE_MULTIPLANEOVERLAY_SUPPORT = 20,
    KMTQAITYPE_DLIST_DRIVER_NAME = 21,
    KMTQAITYPE_WDDM_1_3_CAPS = 22,
    KMTQAITYPE_MULTIPLANEOVERLAY_HUD_SUPPORT = 23,
    KMTQAITYPE_WDDM_2_0_CAPS = 24,
    KMTQAITYPE_NODEMETADATA = 25,         /* D3DKMT_NODEMETADATA */
    KMTQAITYPE_CPDRIVERNAME = 26,
    KMTQAITYPE_XBOX = 27,
    KMTQAITYPE_INDEPENDENTFLIP_SUPPORT = 28,
    KMTQAITYPE_MIRACASTCOMPANIONDRIVERNAME = 29,
    KMTQAITYPE_PHYSICALADAPTERCOUNT = 30,
    KMTQAITYPE_PHYSICALADAPTERDEVICEIDS = 31,
    KMTQAITYPE_DRIVERCAPS_EXT = 32,
    KMTQAITYPE_QUERY_MIRACAST_DRIVER_TYPE = 33,
    KMTQAITYPE_QUERY_GPUMMU_CAPS = 34,
    KMTQAITYPE_GETSEGMENTGROUPSIZE = 42,
    KMTQAITYPE_QUERYREGISTRY = 48,
    KMTQAITYPE_KMD_DRIVER_VERSION = 49,
    KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER = 54,
    KMTQAITYPE_ADAPTERTYPE_RENDER = 57,
    KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID = 60,
    KMTQAITYPE_NODEPERFDATA = 61,
    KMTQAITYPE_ADAPTERPERFDATA = 62,
    KMTQAITYPE_ADAPTERPERFDATA_CAPS = 63,
    KMTQAITYPE_DRIVER_DESCRIPTION = 65,
    KMTQAITYPE_PARAVIRTUALIZATION_RENDER = 68,
    KMTQAITYPE_SERVICENAME = 69,
    KMTQAITYPE_WDDM_2_7_CAPS = 70,
    KMTQAITYPE_DISPLAY_UMDRIVERNAME = 71,
    KMTQAITYPE_WDDM_2_9_CAPS = 75,
    KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT = 76,
    KMTQAITYPE_WDDM_3_0_CAPS = 77,
    KMTQAITYPE_WSAUMDIMAGENAME = 78,
    KMTQAITYPE_VGPUINTERFACEID = 79,
    KMTQAITYPE_WDDM_3_1_CAPS = 80,
} KMTQUERYADAPTERINFOTYPE;

typedef struct _D3DKMT_QUERYADAPTERINFO {
    D3DKMT_HANDLE hAdapter;
    KMTQUERYADAPTERINFOTYPE Type;
    void *pPrivateDriverData;           /* in/out, exactly the type's size */
    UINT PrivateDriverDataSize;
} D3DKMT_QUERYADAPTERINFO;
KMT_CHECK_SIZE(D3DKMT_QUERYADAPTERINFO, 0x18);
KMT_CHECK_OFFSET(D3DKMT_QUERYADAPTERINFO, Type, 0x04);
KMT_CHECK_OFFSET(D3DKMT_QUERYADAPTERINFO, pPrivateDriverData, 0x08);
KMT_CHECK_OFFSET(D3DKMT_QUERYADAPTERINFO, PrivateDriverDataSize, 0x10);

/* KMTQAITYPE_DRIVERVERSION answer. */
typedef enum _D3DKMT_DRIVERVERSION {
    KMT_DRIVERVERSION_WDDM_1_0 = 1000,
    KMT_DRIVERVERSION_WDDM_1_1_PRERELEASE = 1102,
    KMT_DRIVERVERSION_WDDM_1_1 = 1105,
    KMT_DRIVERVERSION_WDDM_1_2 = 1200,
    KMT_DRIVERVERSION_WDDM_1_3 = 1300,
    KMT_DRIVERVERSION_WDDM_2_0 = 2000,
    KMT_DRIVERVERSION_WDDM_2_1 = 2100,
    KMT_DRIVERVERSION_WDDM_2_2 = 2200,
    KMT_DRIVERVERSION_WDDM_2_3 = 2300,
    KMT_DRIVERVERSION_WDDM_2_4 = 2400,
    KMT_DRIVERVERSION_WDDM_2_5 = 2500,
    KMT_DRIVERVERSION_WDDM_2_6 = 2600,
    KMT_DRIVERVERSION_WDDM_2_7 = 2700,
    KMT_DRIVERVERSION_WDDM_2_8 = 2800,
    KMT_DRIVERVERSION_WDDM_2_9 = 2900,
    KMT_DRIVERVERSION_WDDM_3_0 = 3000,
    KMT_DRIVERVERSION_WDDM_3_1 = 3100,
    KMT_DRIVERVERSION_WDDM_3_2 = 3200,
} D3DKMT_DRIVERVERSION;
KMT_CHECK_SIZE(D3DKMT_DRIVERVERSION, 4);

/* KMTQAITYPE_ADAPTERTYPE answer. */
typedef struct _D3DKMT_ADAPTERTYPE {
    union {
        struct {
            UINT RenderSupported : 1;
            UINT DisplaySupported : 1;
            UINT SoftwareDevice : 1;
            UINT PostDevice : 1;
            UINT HybridDiscrete : 1;
            UINT HybridIntegrated : 1;
            UINT IndirectDisplayDevice : 1;
            UINT Paravirtualized : 1;
            UINT ACGSupported : 1;
            UINT SupportSetTimingsFromVidPn : 1;
            UINT Detachable : 1;
            UINT ComputeOnly : 1;
            UINT Prototype : 1;
            UINT RuntimePowerManagement : 1;
            UINT Reserved : 18;
        };
        UINT Value;
    };
} D3DKMT_ADAPTERTYPE;
KMT_CHECK_SIZE(D3DKMT_ADAPTERTYPE, 4);

/* KMTQAITYPE_UMDRIVERNAME */
typedef enum _KMTUMDVERSION {
    KMTUMDVERSION_DX9 = 0,
    KMTUMDVERSION_DX10 = 1,
    KMTUMDVERSION_DX11 = 2,
    KMTUMDVERSION_DX12 = 3,
    NUM_KMTUMDVERSIONS
} KMTUMDVERSION;

typedef struct _D3DKMT_UMDFILENAMEINFO {
    KMTUMDVERSION Version;              /* in */
    WCHAR UmdFileName[MAX_PATH];        /* out */
} D3DKMT_UMDFILENAMEINFO;
KMT_CHECK_SIZE(D3DKMT_UMDFILENAMEINFO, 0x20c);
KMT_CHECK_OFFSET(D3DKMT_UMDFILENAMEINFO, UmdFileName, 0x04);

/* KMTQAITYPE_UMOPENGLINFO */
typedef struct _D3DKMT_OPENGLINFO {
    WCHAR UmdOpenGlIcdFileName[MAX_PATH];
    ULONG Version;
    ULONG Flags;
} D3DKMT_OPENGLINFO;
KMT_CHECK_SIZE(D3DKMT_OPENGLINFO, 0x210);
KMT_CHECK_OFFSET(D3DKMT_OPENGLINFO, Version, 0x208);
KMT_CHECK_OFFSET(D3DKMT_OPENGLINFO, Flags, 0x20c);

/* KMTQAITYPE_QUERYREGISTRY: pPrivateDriverData is this structure followed by
 * room for the value; PrivateDriverDataSize covers both.  The Output union
 * is where the value starts, so the room is PrivateDriverDataSize minus
 * offsetof(Output...).  Where the WDK keeps it: d3dukmdt.h (WDDM 2.4). */
typedef enum _D3DDDI_QUERYREGISTRY_TYPE {
    D3DDDI_QUERYREGISTRY_SERVICEKEY = 0,      /* the driver's service (parameters) key */
    D3DDDI_QUERYREGISTRY_ADAPTERKEY = 1,      /* the adapter's software key */
    D3DDDI_QUERYREGISTRY_DRIVERSTOREPATH = 2, /* a path; ValueName ignored, ValueType 0 */
    D3DDDI_QUERYREGISTRY_DRIVERIMAGEPATH = 3, /* likewise */
    D3DDDI_QUERYREGISTRY_MAX
} D3DDDI_QUERYREGISTRY_TYPE;

typedef struct _D3DDDI_QUERYREGISTRY_FLAGS {
    union {
        struct {
            UINT TranslatePath : 1;   /* a path string comes back as the caller can open it */
            UINT MutableValue : 1;
            UINT Reserved : 30;
        };
        UINT Value;
    };
} D3DDDI_QUERYREGISTRY_FLAGS;
KMT_CHECK_SIZE(D3DDDI_QUERYREGISTRY_FLAGS, 4);
KMT_CHECK_SIZE_I386(D3DDDI_QUERYREGISTRY_FLAGS, 4);

typedef enum _D3DDDI_QUERYREGISTRY_STATUS {
    D3DDDI_QUERYREGISTRY_STATUS_SUCCESS = 0,         /* the Output fields are valid */
    D3DDDI_QUERYREGISTRY_STATUS_BUFFER_OVERFLOW = 1, /* only OutputValueSize is */
    D3DDDI_QUERYREGISTRY_STATUS_FAIL = 2,
    D3DDDI_QUERYREGISTRY_STATUS_MAX
} D3DDDI_QUERYREGISTRY_STATUS;

typedef struct _D3DDDI_QUERYREGISTRY_INFO {
    D3DDDI_QUERYREGISTRY_TYPE QueryType;        /* in */
    D3DDDI_QUERYREGISTRY_FLAGS QueryFlags;      /* in */
    WCHAR ValueName[MAX_PATH];                  /* in */
    ULONG ValueType;                            /* in: REG_SZ, REG_MULTI_SZ, REG_DWORD ... */
    ULONG PhysicalAdapterIndex;                 /* in */
    ULONG OutputValueSize;                      /* out: bytes of the value, also on overflow */
    D3DDDI_QUERYREGISTRY_STATUS Status;         /* out */
    union {
        DWORD OutputDword;
        UINT64 OutputQword;
        WCHAR OutputString[1];
        BYTE OutputBinary[1];
    };
} D3DDDI_QUERYREGISTRY_INFO;
KMT_CHECK_SIZE(D3DDDI_QUERYREGISTRY_INFO, 0x228);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, QueryFlags, 0x04);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, ValueName, 0x08);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, ValueType, 0x210);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, PhysicalAdapterIndex, 0x214);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, OutputValueSize, 0x218);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, Status, 0x21c);
KMT_CHECK_OFFSET(D3DDDI_QUERYREGISTRY_INFO, OutputQword, 0x220);
KMT_CHECK_SIZE_I386(D3DDDI_QUERYREGISTRY_INFO, 0x228);
KMT_CHECK_OFFSET_I386(D3DDDI_QUERYREGISTRY_INFO, ValueType, 0x210);
KMT_CHECK_OFFSET_I386(D3DDDI_QUERYREGISTRY_INFO, OutputValueSize, 0x218);
KMT_CHECK_OFFSET_I386(D3DDDI_QUERYREGISTRY_INFO, Status, 0x21c);
KMT_CHECK_OFFSET_I386(D3DDDI_QUERYREGISTRY_INFO, OutputQword, 0x220);

/* KMTQAITYPE_GETSEGMENTSIZE */
typedef struct _D3DKMT_SEGMENTSIZEINFO {
    ULONGLONG DedicatedVideoMemorySize;
    ULONGLONG DedicatedSystemMemorySize;
    ULONGLONG SharedSystemMemorySize;
} D3DKMT_SEGMENTSIZEINFO;
KMT_CHECK_SIZE(D3DKMT_SEGMENTSIZEINFO, 0x18);
KMT_CHECK_OFFSET(D3DKMT_SEGMENTSIZEINFO, DedicatedSystemMemorySize, 0x08);
KMT_CHECK_OFFSET(D3DKMT_SEGMENTSIZEINFO, SharedSystemMemorySize, 0x10);

/* KMTQAITYPE_ADAPTERADDRESS */
typedef struct _D3DKMT_ADAPTERADDRESS {
    UINT BusNumber;
    UINT DeviceNumber;
    UINT FunctionNumber;
} D3DKMT_ADAPTERADDRESS;
KMT_CHECK_SIZE(D3DKMT_ADAPTERADDRESS, 0x0c);

/* KMTQAITYPE_PHYSICALADAPTERDEVICEIDS */
typedef struct _D3DKMT_DEVICE_IDS {
    UINT VendorID;
    UINT DeviceID;
    UINT SubVendorID;
    UINT SubSystemID;
    UINT RevisionID;
    UINT BusType;
} D3DKMT_DEVICE_IDS;
KMT_CHECK_SIZE(D3DKMT_DEVICE_IDS, 0x18);

typedef struct _D3DKMT_QUERY_DEVICE_IDS {
    UINT PhysicalAdapterIndex;          /* in */
    D3DKMT_DEVICE_IDS DeviceIds;        /* out */
} D3DKMT_QUERY_DEVICE_IDS;
KMT_CHECK_SIZE(D3DKMT_QUERY_DEVICE_IDS, 0x1c);
KMT_CHECK_OFFSET(D3DKMT_QUERY_DEVICE_IDS, DeviceIds, 0x04);
KMT_CHECK_OFFSET(D3DKMT_QUERY_DEVICE_IDS, DeviceIds.BusType, 0x18);

/* KMTQAITYPE_WDDM_2_7_CAPS */
typedef struct _D3DKMT_WDDM_2_7_CAPS {
    union {
        struct {
            UINT HwSchSupported : 1;
            UINT HwSchEnabled : 1;
            UINT HwSchEnabledByDefault : 1;
            UINT IndependentVidPnVSyncControl : 1;
            UINT Reserved : 28;
        };
        UINT Value;
    };
} D3DKMT_WDDM_2_7_CAPS;
KMT_CHECK_SIZE(D3DKMT_WDDM_2_7_CAPS, 4);

/* ---- QueryAdapterInfo: registry strings, later caps, performance data ---- */

/* KMTQAITYPE_ADAPTERREGISTRYINFO(_RENDER): the adapter's
 * HardwareInformation strings. */
typedef struct _D3DKMT_ADAPTERREGISTRYINFO {
    WCHAR AdapterString[MAX_PATH];
    WCHAR BiosString[MAX_PATH];
    WCHAR DacType[MAX_PATH];
    WCHAR ChipType[MAX_PATH];
} D3DKMT_ADAPTERREGISTRYINFO;
KMT_CHECK_SIZE(D3DKMT_ADAPTERREGISTRYINFO, 0x820);
KMT_CHECK_OFFSET(D3DKMT_ADAPTERREGISTRYINFO, BiosString, 0x208);
KMT_CHECK_OFFSET(D3DKMT_ADAPTERREGISTRYINFO, DacType, 0x410);
KMT_CHECK_OFFSET(D3DKMT_ADAPTERREGISTRYINFO, ChipType, 0x618);

/* A driver's support state of a feature (the *SupportState fields). */
#define DXGK_FEATURE_SUPPORT_ALWAYS_OFF   0
#define DXGK_FEATURE_SUPPORT_EXPERIMENTAL 1
#define DXGK_FEATURE_SUPPORT_STABLE       2
#define DXGK_FEATURE_SUPPORT_ALWAYS_ON    3

/* KMTQAITYPE_WDDM_2_9_CAPS */
typedef struct _D3DKMT_WDDM_2_9_CAPS {
    union {
        struct {
            UINT HwSchSupportState : 2;      /* DXGK_FEATURE_SUPPORT_* */
            UINT HwSchEnabled : 1;
            UINT SelfRefreshMemorySupported : 1;
            UINT Reserved : 28;
        };
        UINT Value;
    };
} D3DKMT_WDDM_2_9_CAPS;
KMT_CHECK_SIZE(D3DKMT_WDDM_2_9_CAPS, 4);

/* KMTQAITYPE_WDDM_3_0_CAPS */
typedef struct _D3DKMT_WDDM_3_0_CAPS {
    union {
        struct {
            UINT HwFlipQueueSupportState : 2; /* DXGK_FEATURE_SUPPORT_* */
            UINT HwFlipQueueEnabled : 1;
            UINT DisplayableSupported : 1;
            UINT Reserved : 28;
        };
        UINT Value;
    };
} D3DKMT_WDDM_3_0_CAPS;
KMT_CHECK_SIZE(D3DKMT_WDDM_3_0_CAPS, 4);

/* KMTQAITYPE_DRIVERCAPS_EXT */
typedef struct _D3DKMT_DRIVERCAPS_EXT {
    union {
        struct {
            UINT VirtualModeSupport : 1;
            UINT Usb4MonitorSupport : 1;
            UINT Reserved : 30;
        };
        UINT Value;
    };
} D3DKMT_DRIVERCAPS_EXT;
KMT_CHECK_SIZE(D3DKMT_DRIVERCAPS_EXT, 4);

/* KMTQAITYPE_NODEPERFDATA: one engine, read at the call.  Hz, millivolts;
 * MaxTransitionLatency in 100 ns units. */
typedef struct _D3DKMT_NODE_PERFDATA {
    UINT32 NodeOrdinal;                 /* in */
    UINT32 PhysicalAdapterIndex;        /* in */
    ULONGLONG Frequency;
    ULONGLONG MaxFrequency;
    ULONGLONG MaxFrequencyOC;
    ULONG Voltage;
    ULONG VoltageMax;
    ULONG VoltageMaxOC;
    ULONGLONG MaxTransitionLatency;
    ULONGLONG Reserved;
} D3DKMT_NODE_PERFDATA;
KMT_CHECK_SIZE(D3DKMT_NODE_PERFDATA, 0x40);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, PhysicalAdapterIndex, 0x04);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, Frequency, 0x08);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, MaxFrequencyOC, 0x18);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, Voltage, 0x20);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, VoltageMaxOC, 0x28);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, MaxTransitionLatency, 0x30);
KMT_CHECK_OFFSET(D3DKMT_NODE_PERFDATA, Reserved, 0x38);

/* KMTQAITYPE_ADAPTERPERFDATA: the adapter, read at the call.  Hz, bytes,
 * Power in tenths of a percent of the adapter's limit, Temperature in
 * tenths of a degree Celsius. */
typedef struct _D3DKMT_ADAPTER_PERFDATA {
    UINT32 PhysicalAdapterIndex;        /* in */
    ULONGLONG MemoryFrequency;
    ULONGLONG MaxMemoryFrequency;
    ULONGLONG MaxMemoryFrequencyOC;
    ULONGLONG MemoryBandwidth;
    ULONGLONG PCIEBandwidth;
    ULONG FanRPM;
    ULONG Power;
    ULONG Temperature;
    UCHAR PowerStateOverride;
} D3DKMT_ADAPTER_PERFDATA;
KMT_CHECK_SIZE(D3DKMT_ADAPTER_PERFDATA, 0x40);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATA, MemoryFrequency, 0x08);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATA, PCIEBandwidth, 0x28);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATA, FanRPM, 0x30);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATA, Temperature, 0x38);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATA, PowerStateOverride, 0x3c);

/* KMTQAITYPE_ADAPTERPERFDATA_CAPS: the limits, which do not change. */
typedef struct _D3DKMT_ADAPTER_PERFDATACAPS {
    UINT32 PhysicalAdapterIndex;        /* in */
    ULONGLONG MaxMemoryBandwidth;       /* bytes in one second */
    ULONGLONG MaxPCIEBandwidth;
    ULONG MaxFanRPM;
    ULONG TemperatureMax;               /* tenths of a degree Celsius */
    ULONG TemperatureWarning;
} D3DKMT_ADAPTER_PERFDATACAPS;
KMT_CHECK_SIZE(D3DKMT_ADAPTER_PERFDATACAPS, 0x28);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATACAPS, MaxMemoryBandwidth, 0x08);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATACAPS, MaxFanRPM, 0x18);
KMT_CHECK_OFFSET(D3DKMT_ADAPTER_PERFDATACAPS, TemperatureWarning, 0x20);

/* ---- video memory budget ----------------------------------------------- */

typedef enum _D3DKMT_MEMORY_SEGMENT_GROUP {
    D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL = 0,
    D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL = 1,
} D3DKMT_MEMORY_SEGMENT_GROUP;

typedef struct _D3DKMT_QUERYVIDEOMEMORYINFO {
    HANDLE hProcess;                    /* NULL or (HANDLE)-1: the calling process;
                                           natively nothing else is a process handle
                                           (STATUS_INVALID_HANDLE); under Wine the PE
                                           half checks a real one (docs/wine.md) */
    D3DKMT_HANDLE hAdapter;
    D3DKMT_MEMORY_SEGMENT_GROUP MemorySegmentGroup;
    UINT64 Budget;                      /* out */
    UINT64 CurrentUsage;                /* out */
    UINT64 CurrentReservation;          /* out */
    UINT64 AvailableForReservation;     /* out */
    UINT PhysicalAdapterIndex;
} D3DKMT_QUERYVIDEOMEMORYINFO;
KMT_CHECK_SIZE(D3DKMT_QUERYVIDEOMEMORYINFO, 0x38);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, hAdapter, 0x08);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, MemorySegmentGroup, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, Budget, 0x10);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, CurrentUsage, 0x18);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, CurrentReservation, 0x20);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, AvailableForReservation, 0x28);
KMT_CHECK_OFFSET(D3DKMT_QUERYVIDEOMEMORYINFO, PhysicalAdapterIndex, 0x30);

/* ---- devices ----------------------------------------------------------- */

typedef struct _D3DKMT_CREATEDEVICEFLAGS {
    UINT LegacyMode : 1;
    UINT RequestVSync : 1;
    UINT DisableGpuTimeout : 1;
    UINT Reserved : 29;
} D3DKMT_CREATEDEVICEFLAGS;
KMT_CHECK_SIZE(D3DKMT_CREATEDEVICEFLAGS, 4);

typedef struct _D3DKMT_CREATEDEVICE {
    union {
        D3DKMT_HANDLE hAdapter;
        void *pAdapter;                 /* kernel-mode callers only */
    };
    D3DKMT_CREATEDEVICEFLAGS Flags;
    D3DKMT_HANDLE hDevice;              /* out */
    void *pCommandBuffer;               /* out, legacy: NULL on WDDM 2 */
    UINT CommandBufferSize;
    D3DDDI_ALLOCATIONLIST *pAllocationList;
    UINT AllocationListSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;
    UINT PatchLocationListSize;
} D3DKMT_CREATEDEVICE;
KMT_CHECK_SIZE(D3DKMT_CREATEDEVICE, 0x40);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, Flags, 0x08);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, hDevice, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, pCommandBuffer, 0x10);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, CommandBufferSize, 0x18);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, pAllocationList, 0x20);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, AllocationListSize, 0x28);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, pPatchLocationList, 0x30);
KMT_CHECK_OFFSET(D3DKMT_CREATEDEVICE, PatchLocationListSize, 0x38);

typedef struct _D3DKMT_DESTROYDEVICE {
    D3DKMT_HANDLE hDevice;
} D3DKMT_DESTROYDEVICE;
KMT_CHECK_SIZE(D3DKMT_DESTROYDEVICE, 4);

/* ---- allocations and resources ----------------------------------------- */

typedef struct _D3DKMT_CREATEALLOCATIONFLAGS {
    UINT CreateResource : 1;
    UINT CreateShared : 1;
    UINT NonSecure : 1;
    UINT CreateProtected : 1;
    UINT RestrictSharedAccess : 1;
    UINT ExistingSysMem : 1;
    UINT NtSecuritySharing : 1;
    UINT ReadOnly : 1;
    UINT CreateWriteCombined : 1;
    UINT CreateCached : 1;
    UINT SwapChainBackBuffer : 1;
    UINT CrossAdapter : 1;
    UINT OpenCrossAdapter : 1;
    UINT PartialSharedCreation : 1;
    UINT Zeroed : 1;                    /* out */
    UINT WriteWatch : 1;
    UINT StandardAllocation : 1;
    UINT ExistingSection : 1;
    UINT AllowNotZeroed : 1;
    UINT PhysicallyContiguous : 1;
    UINT NoKmdAccess : 1;
    UINT SharedDisplayable : 1;
    UINT Reserved : 10;
} D3DKMT_CREATEALLOCATIONFLAGS;
KMT_CHECK_SIZE(D3DKMT_CREATEALLOCATIONFLAGS, 4);

typedef enum _D3DKMT_STANDARDALLOCATIONTYPE {
    D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP = 1,
    D3DKMT_STANDARDALLOCATIONTYPE_INTERNALBACKINGSTORE = 2,
    D3DKMT_STANDARDALLOCATIONTYPE_MAX,
} D3DKMT_STANDARDALLOCATIONTYPE;

typedef struct _D3DKMT_STANDARDALLOCATION_EXISTINGHEAP {
    SIZE_T Size;                        /* page multiple */
} D3DKMT_STANDARDALLOCATION_EXISTINGHEAP;
KMT_CHECK_SIZE(D3DKMT_STANDARDALLOCATION_EXISTINGHEAP, 8);

typedef struct _D3DKMT_CREATESTANDARDALLOCATIONFLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} D3DKMT_CREATESTANDARDALLOCATIONFLAGS;
KMT_CHECK_SIZE(D3DKMT_CREATESTANDARDALLOCATIONFLAGS, 4);

typedef struct _D3DKMT_CREATESTANDARDALLOCATION {
    D3DKMT_STANDARDALLOCATIONTYPE Type;
    union {
        D3DKMT_STANDARDALLOCATION_EXISTINGHEAP ExistingHeapData;
    };
    D3DKMT_CREATESTANDARDALLOCATIONFLAGS Flags;
} D3DKMT_CREATESTANDARDALLOCATION;
KMT_CHECK_SIZE(D3DKMT_CREATESTANDARDALLOCATION, 0x18);
KMT_CHECK_OFFSET(D3DKMT_CREATESTANDARDALLOCATION, ExistingHeapData, 0x08);
KMT_CHECK_OFFSET(D3DKMT_CREATESTANDARDALLOCATION, Flags, 0x10);

typedef struct _D3DKMT_CREATEALLOCATION {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hResource;            /* in: 0 or resource; out with CreateResource */
    D3DKMT_HANDLE hGlobalShare;         /* out with CreateShared */
    const void *pPrivateRuntimeData;
    UINT PrivateRuntimeDataSize;
    union {
        D3DKMT_CREATESTANDARDALLOCATION *pStandardAllocation;
        const void *pPrivateDriverData; /* resource-level driver data */
    };
    UINT PrivateDriverDataSize;
    UINT NumAllocations;
    union {
        D3DDDI_ALLOCATIONINFO *pAllocationInfo;   /* D3DKMTCreateAllocation */
        D3DDDI_ALLOCATIONINFO2 *pAllocationInfo2; /* D3DKMTCreateAllocation2 */
    };
    D3DKMT_CREATEALLOCATIONFLAGS Flags;
    HANDLE hPrivateRuntimeResourceHandle;
} D3DKMT_CREATEALLOCATION;
KMT_CHECK_SIZE(D3DKMT_CREATEALLOCATION, 0x48);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, hResource, 0x04);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, hGlobalShare, 0x08);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, pPrivateRuntimeData, 0x10);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, PrivateRuntimeDataSize, 0x18);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, pStandardAllocation, 0x20);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, pPrivateDriverData, 0x20);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, PrivateDriverDataSize, 0x28);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, NumAllocations, 0x2c);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, pAllocationInfo, 0x30);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, pAllocationInfo2, 0x30);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, Flags, 0x38);
KMT_CHECK_OFFSET(D3DKMT_CREATEALLOCATION, hPrivateRuntimeResourceHandle, 0x40);

typedef struct _D3DKMT_DESTROYALLOCATION {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hResource;            /* non-zero: the resource and all of it */
    const D3DKMT_HANDLE *phAllocationList;
    UINT AllocationCount;
} D3DKMT_DESTROYALLOCATION;
KMT_CHECK_SIZE(D3DKMT_DESTROYALLOCATION, 0x18);
KMT_CHECK_OFFSET(D3DKMT_DESTROYALLOCATION, hResource, 0x04);
KMT_CHECK_OFFSET(D3DKMT_DESTROYALLOCATION, phAllocationList, 0x08);
KMT_CHECK_OFFSET(D3DKMT_DESTROYALLOCATION, AllocationCount, 0x10);

typedef struct _D3DKMT_DESTROYALLOCATION2 {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hResource;
    const D3DKMT_HANDLE *phAllocationList;
    UINT AllocationCount;
    D3DDDICB_DESTROYALLOCATION2FLAGS Flags;
} D3DKMT_DESTROYALLOCATION2;
KMT_CHECK_SIZE(D3DKMT_DESTROYALLOCATION2, 0x18);
KMT_CHECK_OFFSET(D3DKMT_DESTROYALLOCATION2, AllocationCount, 0x10);
KMT_CHECK_OFFSET(D3DKMT_DESTROYALLOCATION2, Flags, 0x14);

/* ---- CPU access -------------------------------------------------------- */

typedef struct _D3DKMT_LOCK {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hAllocation;
    UINT PrivateDriverData;
    UINT NumPages;
    const UINT *pPages;
    void *pData;                        /* out */
    D3DDDICB_LOCKFLAGS Flags;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress; /* out */
} D3DKMT_LOCK;
KMT_CHECK_SIZE(D3DKMT_LOCK, 0x30);
KMT_CHECK_OFFSET(D3DKMT_LOCK, hAllocation, 0x04);
KMT_CHECK_OFFSET(D3DKMT_LOCK, PrivateDriverData, 0x08);
KMT_CHECK_OFFSET(D3DKMT_LOCK, NumPages, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_LOCK, pPages, 0x10);
KMT_CHECK_OFFSET(D3DKMT_LOCK, pData, 0x18);
KMT_CHECK_OFFSET(D3DKMT_LOCK, Flags, 0x20);
KMT_CHECK_OFFSET(D3DKMT_LOCK, GpuVirtualAddress, 0x28);

typedef struct _D3DKMT_UNLOCK {
    D3DKMT_HANDLE hDevice;
    UINT NumAllocations;
    const D3DKMT_HANDLE *phAllocations;
} D3DKMT_UNLOCK;
KMT_CHECK_SIZE(D3DKMT_UNLOCK, 0x10);
KMT_CHECK_OFFSET(D3DKMT_UNLOCK, NumAllocations, 0x04);
KMT_CHECK_OFFSET(D3DKMT_UNLOCK, phAllocations, 0x08);

typedef struct _D3DKMT_LOCK2 {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hAllocation;
    D3DDDICB_LOCK2FLAGS Flags;
    void *pData;                        /* out */
} D3DKMT_LOCK2;
KMT_CHECK_SIZE(D3DKMT_LOCK2, 0x18);
KMT_CHECK_OFFSET(D3DKMT_LOCK2, Flags, 0x08);
KMT_CHECK_OFFSET(D3DKMT_LOCK2, pData, 0x10);

typedef struct _D3DKMT_UNLOCK2 {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hAllocation;
} D3DKMT_UNLOCK2;
KMT_CHECK_SIZE(D3DKMT_UNLOCK2, 8);

/* ---- escapes ----------------------------------------------------------- */

typedef enum _D3DKMT_ESCAPETYPE {
    D3DKMT_ESCAPE_DRIVERPRIVATE = 0,
    D3DKMT_ESCAPE_VIDMM = 1,
    D3DKMT_ESCAPE_TDRDBGCTRL = 2,
    D3DKMT_ESCAPE_VIDSCH = 3,
    D3DKMT_ESCAPE_DEVICE = 4,
    D3DKMT_ESCAPE_DMM = 5,
    D3DKMT_ESCAPE_DEBUG_SNAPSHOT = 6,
} D3DKMT_ESCAPETYPE;

typedef struct _D3DKMT_ESCAPE {
    D3DKMT_HANDLE hAdapter;
    D3DKMT_HANDLE hDevice;              /* optional */
    D3DKMT_ESCAPETYPE Type;
    D3DDDI_ESCAPEFLAGS Flags;
    void *pPrivateDriverData;           /* in/out */
    UINT PrivateDriverDataSize;
    D3DKMT_HANDLE hContext;             /* optional */
} D3DKMT_ESCAPE;
KMT_CHECK_SIZE(D3DKMT_ESCAPE, 0x20);
KMT_CHECK_OFFSET(D3DKMT_ESCAPE, Type, 0x08);
KMT_CHECK_OFFSET(D3DKMT_ESCAPE, Flags, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_ESCAPE, pPrivateDriverData, 0x10);
KMT_CHECK_OFFSET(D3DKMT_ESCAPE, PrivateDriverDataSize, 0x18);
KMT_CHECK_OFFSET(D3DKMT_ESCAPE, hContext, 0x1c);


/* ---- engines (KMTQAITYPE_NODEMETADATA) ----------------------------------- */

typedef enum _DXGK_ENGINE_TYPE {
    DXGK_ENGINE_TYPE_OTHER = 0,
    DXGK_ENGINE_TYPE_3D = 1,
    DXGK_ENGINE_TYPE_VIDEO_DECODE = 2,
    DXGK_ENGINE_TYPE_VIDEO_ENCODE = 3,
    DXGK_ENGINE_TYPE_VIDEO_PROCESSING = 4,
    DXGK_ENGINE_TYPE_SCENE_ASSEMBLY = 5,
    DXGK_ENGINE_TYPE_COPY = 6,
    DXGK_ENGINE_TYPE_OVERLAY = 7,
    DXGK_ENGINE_TYPE_CRYPTO = 8,
    DXGK_ENGINE_TYPE_VIDEO_CODEC = 9,
    DXGK_ENGINE_TYPE_MAX
} DXGK_ENGINE_TYPE;

typedef struct _DXGK_NODEMETADATA_FLAGS {
    union {
        struct {
            UINT32 ContextSchedulingSupported : 1;
            UINT32 RingBufferFenceRelease : 1;
            UINT32 SupportTrackedWorkload : 1;
            UINT32 UserModeSubmission : 1;
            UINT32 SupportBuildTestCommandBuffer : 1;
            UINT32 Reserved : 11;
            UINT32 MaxInFlightHwQueueBuffers : 16;
        };
        UINT32 Value;
    };
} DXGK_NODEMETADATA_FLAGS;
KMT_CHECK_SIZE(DXGK_NODEMETADATA_FLAGS, 4);

#define DXGK_MAX_METADATA_NAME_LENGTH 32

/* Byte-packed, as Microsoft declares it; the field offsets are natural. */
#pragma pack(push, 1)
typedef struct _DXGK_NODEMETADATA {
    DXGK_ENGINE_TYPE EngineType;
    WCHAR FriendlyName[DXGK_MAX_METADATA_NAME_LENGTH];
    DXGK_NODEMETADATA_FLAGS Flags;
    BOOLEAN GpuMmuSupported;
    BOOLEAN IoMmuSupported;
} DXGK_NODEMETADATA;
#pragma pack(pop)
KMT_CHECK_OFFSET(DXGK_NODEMETADATA, FriendlyName, 0x04);
KMT_CHECK_OFFSET(DXGK_NODEMETADATA, Flags, 0x44);
KMT_CHECK_OFFSET(DXGK_NODEMETADATA, IoMmuSupported, 0x49);

typedef struct _D3DKMT_NODEMETADATA {
    UINT NodeOrdinalAndAdapterIndex;      /* in: node in bits 0-15, physical adapter in 16-31 */
    DXGK_NODEMETADATA NodeData;           /* out */
} D3DKMT_NODEMETADATA;
KMT_CHECK_SIZE(D3DKMT_NODEMETADATA, 0x50);
KMT_CHECK_OFFSET(D3DKMT_NODEMETADATA, NodeData, 0x04);

/* ---- contexts -------------------------------------------------------------- */

typedef enum _D3DKMT_CLIENTHINT {
    D3DKMT_CLIENTHINT_UNKNOWN = 0,
    D3DKMT_CLIENTHINT_OPENGL = 1,
    D3DKMT_CLIENTHINT_CDD = 2,
    D3DKMT_CLIENTHINT_OPENCL = 3,
    D3DKMT_CLIENTHINT_VULKAN = 4,
    D3DKMT_CLIENTHINT_CUDA = 5,
    D3DKMT_CLIENTHINT_RESERVED = 6,
    D3DKMT_CLIENTHINT_DX7 = 7,
    D3DKMT_CLIENTHINT_DX8 = 8,
    D3DKMT_CLIENTHINT_DX9 = 9,
    D3DKMT_CLIENTHINT_DX10 = 10,
    D3DKMT_CLIENTHINT_DX11 = 11,
    D3DKMT_CLIENTHINT_DX12 = 12,
    D3DKMT_CLIENTHINT_9ON12 = 13,
    D3DKMT_CLIENTHINT_11ON12 = 14,
    D3DKMT_CLIENTHINT_MFT_ENCODE = 15,
    D3DKMT_CLIENTHINT_GLON12 = 16,
    D3DKMT_CLIENTHINT_CLON12 = 17,
    D3DKMT_CLIENTHINT_DML_TENSORFLOW = 18,
    D3DKMT_CLIENTHINT_ONEAPI_LEVEL0 = 19,
    D3DKMT_CLIENTHINT_MAX
} D3DKMT_CLIENTHINT;

typedef struct _D3DKMT_CREATECONTEXT {
    D3DKMT_HANDLE hDevice;
    UINT NodeOrdinal;
    UINT EngineAffinity;
    D3DDDI_CREATECONTEXTFLAGS Flags;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    D3DKMT_CLIENTHINT ClientHint;
    D3DKMT_HANDLE hContext;               /* out */
    VOID *pCommandBuffer;                 /* out: the legacy (Render) buffers */
    UINT CommandBufferSize;
    D3DDDI_ALLOCATIONLIST *pAllocationList;
    UINT AllocationListSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;
    UINT PatchLocationListSize;
    D3DGPU_VIRTUAL_ADDRESS CommandBuffer; /* out */
} D3DKMT_CREATECONTEXT;
KMT_CHECK_SIZE(D3DKMT_CREATECONTEXT, 0x60);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, Flags, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, pPrivateDriverData, 0x10);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, ClientHint, 0x1c);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, hContext, 0x20);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, pCommandBuffer, 0x28);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, CommandBufferSize, 0x30);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, pAllocationList, 0x38);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, AllocationListSize, 0x40);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, pPatchLocationList, 0x48);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, PatchLocationListSize, 0x50);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXT, CommandBuffer, 0x58);

typedef struct _D3DKMT_CREATECONTEXTVIRTUAL {
    D3DKMT_HANDLE hDevice;
    UINT NodeOrdinal;
    UINT EngineAffinity;
    D3DDDI_CREATECONTEXTFLAGS Flags;
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
    D3DKMT_CLIENTHINT ClientHint;
    D3DKMT_HANDLE hContext;               /* out */
} D3DKMT_CREATECONTEXTVIRTUAL;
KMT_CHECK_SIZE(D3DKMT_CREATECONTEXTVIRTUAL, 0x28);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXTVIRTUAL, ClientHint, 0x1c);
KMT_CHECK_OFFSET(D3DKMT_CREATECONTEXTVIRTUAL, hContext, 0x20);

typedef struct _D3DKMT_DESTROYCONTEXT {
    D3DKMT_HANDLE hContext;
} D3DKMT_DESTROYCONTEXT;
KMT_CHECK_SIZE(D3DKMT_DESTROYCONTEXT, 4);

/* ---- device state ---------------------------------------------------------- */

typedef enum _D3DKMT_DEVICESTATE_TYPE {
    D3DKMT_DEVICESTATE_EXECUTION = 1,
    D3DKMT_DEVICESTATE_PRESENT = 2,
    D3DKMT_DEVICESTATE_RESET = 3,
    D3DKMT_DEVICESTATE_PRESENT_DWM = 4,
    D3DKMT_DEVICESTATE_PAGE_FAULT = 5,
    D3DKMT_DEVICESTATE_PRESENT_QUEUE = 6,
} D3DKMT_DEVICESTATE_TYPE;

typedef enum _D3DKMT_DEVICEEXECUTION_STATE {
    D3DKMT_DEVICEEXECUTION_ACTIVE = 1,
    D3DKMT_DEVICEEXECUTION_RESET = 2,
    D3DKMT_DEVICEEXECUTION_HUNG = 3,
    D3DKMT_DEVICEEXECUTION_STOPPED = 4,
    D3DKMT_DEVICEEXECUTION_ERROR_OUTOFMEMORY = 5,
    D3DKMT_DEVICEEXECUTION_ERROR_DMAFAULT = 6,
    D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT = 7,
} D3DKMT_DEVICEEXECUTION_STATE;

typedef struct _D3DKMT_DEVICERESET_STATE {
    union {
        struct {
            UINT DesktopSwitched : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} D3DKMT_DEVICERESET_STATE;
KMT_CHECK_SIZE(D3DKMT_DEVICERESET_STATE, 4);

typedef struct _D3DKMT_PRESENT_STATS {
    UINT PresentCount;
    UINT PresentRefreshCount;
    UINT SyncRefreshCount;
    LARGE_INTEGER SyncQPCTime;
    LARGE_INTEGER SyncGPUTime;
} D3DKMT_PRESENT_STATS;
KMT_CHECK_SIZE(D3DKMT_PRESENT_STATS, 0x20);

typedef struct _D3DKMT_DEVICEPRESENT_STATE {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId; /* in */
    D3DKMT_PRESENT_STATS PresentStats;
} D3DKMT_DEVICEPRESENT_STATE;
KMT_CHECK_SIZE(D3DKMT_DEVICEPRESENT_STATE, 0x28);

typedef struct _D3DKMT_PRESENT_STATS_DWM {
    UINT PresentCount;
    UINT PresentRefreshCount;
    LARGE_INTEGER PresentQPCTime;
    UINT SyncRefreshCount;
    LARGE_INTEGER SyncQPCTime;
    UINT CustomPresentDuration;
} D3DKMT_PRESENT_STATS_DWM;
KMT_CHECK_SIZE(D3DKMT_PRESENT_STATS_DWM, 0x28);

typedef struct _D3DKMT_DEVICEPRESENT_STATE_DWM {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId; /* in */
    D3DKMT_PRESENT_STATS_DWM PresentStatsDWM;
} D3DKMT_DEVICEPRESENT_STATE_DWM;
KMT_CHECK_SIZE(D3DKMT_DEVICEPRESENT_STATE_DWM, 0x30);

typedef struct _D3DKMT_DEVICEPAGEFAULT_STATE {
    UINT64 FaultedPrimitiveAPISequenceNumber;
    UINT FaultedPipelineStage;            /* DXGK_RENDER_PIPELINE_STAGE */
    UINT FaultedBindTableEntry;
    UINT PageFaultFlags;                  /* DXGK_PAGE_FAULT_FLAGS */
    UINT FaultErrorCode;                  /* DXGK_FAULT_ERROR_CODE */
    D3DGPU_VIRTUAL_ADDRESS FaultedVirtualAddress;
} D3DKMT_DEVICEPAGEFAULT_STATE;
KMT_CHECK_SIZE(D3DKMT_DEVICEPAGEFAULT_STATE, 0x20);
KMT_CHECK_OFFSET(D3DKMT_DEVICEPAGEFAULT_STATE, FaultedVirtualAddress, 0x18);

typedef struct _D3DKMT_DEVICEPRESENT_QUEUE_STATE {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId; /* in */
    BOOLEAN bQueuedPresentLimitReached;
} D3DKMT_DEVICEPRESENT_QUEUE_STATE;
KMT_CHECK_SIZE(D3DKMT_DEVICEPRESENT_QUEUE_STATE, 8);

typedef struct _D3DKMT_GETDEVICESTATE {
    D3DKMT_HANDLE hDevice;
    D3DKMT_DEVICESTATE_TYPE StateType;
    union {
        D3DKMT_DEVICEEXECUTION_STATE ExecutionState;
        D3DKMT_DEVICEPRESENT_STATE PresentState;
        D3DKMT_DEVICERESET_STATE ResetState;
        D3DKMT_DEVICEPRESENT_STATE_DWM PresentStateDWM;
        D3DKMT_DEVICEPAGEFAULT_STATE PageFaultState;
        D3DKMT_DEVICEPRESENT_QUEUE_STATE PresentQueueState;
    };
} D3DKMT_GETDEVICESTATE;
KMT_CHECK_SIZE(D3DKMT_GETDEVICESTATE, 0x38);
KMT_CHECK_OFFSET(D3DKMT_GETDEVICESTATE, ExecutionState, 0x08);
KMT_CHECK_OFFSET(D3DKMT_GETDEVICESTATE, PageFaultState, 0x08);

/* ---- submission ------------------------------------------------------------- */

typedef struct _D3DKMT_SUBMITCOMMANDFLAGS {
    UINT NullRendering : 1;
    UINT PresentRedirected : 1;
    UINT NoKmdAccess : 1;                 /* WDDM 3.1 */
    UINT Reserved : 29;
} D3DKMT_SUBMITCOMMANDFLAGS;
KMT_CHECK_SIZE(D3DKMT_SUBMITCOMMANDFLAGS, 4);

typedef struct _D3DKMT_SUBMITCOMMAND {
    D3DGPU_VIRTUAL_ADDRESS Commands;      /* GPU VA of the command buffer */
    UINT CommandLength;
    D3DKMT_SUBMITCOMMANDFLAGS Flags;
    ULONGLONG PresentHistoryToken;        /* reserved */
    UINT BroadcastContextCount;           /* >= 1: the contexts to run it on */
    D3DKMT_HANDLE BroadcastContext[D3DDDI_MAX_BROADCAST_CONTEXT];
    VOID *pPrivateDriverData;             /* UMD -> KMD */
    UINT PrivateDriverDataSize;
    UINT NumPrimaries;
    D3DKMT_HANDLE WrittenPrimaries[D3DDDI_MAX_WRITTEN_PRIMARIES];
    UINT NumHistoryBuffers;               /* reserved */
    D3DKMT_HANDLE *HistoryBufferArray;    /* reserved */
} D3DKMT_SUBMITCOMMAND;
KMT_CHECK_SIZE(D3DKMT_SUBMITCOMMAND, 0x180);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, CommandLength, 0x08);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, Flags, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, PresentHistoryToken, 0x10);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, BroadcastContextCount, 0x18);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, BroadcastContext, 0x1c);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, pPrivateDriverData, 0x120);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, PrivateDriverDataSize, 0x128);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, NumPrimaries, 0x12c);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, WrittenPrimaries, 0x130);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, NumHistoryBuffers, 0x170);
KMT_CHECK_OFFSET(D3DKMT_SUBMITCOMMAND, HistoryBufferArray, 0x178);

typedef struct _D3DKMT_RENDERFLAGS {
    UINT ResizeCommandBuffer : 1;
    UINT ResizeAllocationList : 1;
    UINT ResizePatchLocationList : 1;
    UINT NullRendering : 1;
    UINT PresentRedirected : 1;
    UINT RenderKm : 1;
    UINT RenderKmReadback : 1;
    UINT Reserved : 25;
} D3DKMT_RENDERFLAGS;
KMT_CHECK_SIZE(D3DKMT_RENDERFLAGS, 4);

typedef struct _D3DKMT_RENDER {
    union {
        D3DKMT_HANDLE hDevice;            /* kernel-mode callers */
        D3DKMT_HANDLE hContext;
    };
    UINT CommandOffset;                   /* into the context's command buffer */
    UINT CommandLength;
    UINT AllocationCount;                 /* entries used in the allocation list */
    UINT PatchLocationCount;
    VOID *pNewCommandBuffer;              /* out */
    UINT NewCommandBufferSize;            /* in/out */
    D3DDDI_ALLOCATIONLIST *pNewAllocationList; /* out */
    UINT NewAllocationListSize;           /* in/out */
    D3DDDI_PATCHLOCATIONLIST *pNewPatchLocationList; /* out */
    UINT NewPatchLocationListSize;        /* in/out */
    D3DKMT_RENDERFLAGS Flags;
    ULONGLONG PresentHistoryToken;
    ULONG BroadcastContextCount;
    D3DKMT_HANDLE BroadcastContext[D3DDDI_MAX_BROADCAST_CONTEXT];
    ULONG QueuedBufferCount;              /* out */
    D3DGPU_VIRTUAL_ADDRESS NewCommandBuffer; /* out */
    VOID *pPrivateDriverData;
    UINT PrivateDriverDataSize;
} D3DKMT_RENDER;
KMT_CHECK_SIZE(D3DKMT_RENDER, 0x170);
KMT_CHECK_OFFSET(D3DKMT_RENDER, PatchLocationCount, 0x10);
KMT_CHECK_OFFSET(D3DKMT_RENDER, pNewCommandBuffer, 0x18);
KMT_CHECK_OFFSET(D3DKMT_RENDER, NewCommandBufferSize, 0x20);
KMT_CHECK_OFFSET(D3DKMT_RENDER, pNewAllocationList, 0x28);
KMT_CHECK_OFFSET(D3DKMT_RENDER, NewAllocationListSize, 0x30);
KMT_CHECK_OFFSET(D3DKMT_RENDER, pNewPatchLocationList, 0x38);
KMT_CHECK_OFFSET(D3DKMT_RENDER, NewPatchLocationListSize, 0x40);
KMT_CHECK_OFFSET(D3DKMT_RENDER, Flags, 0x44);
KMT_CHECK_OFFSET(D3DKMT_RENDER, PresentHistoryToken, 0x48);
KMT_CHECK_OFFSET(D3DKMT_RENDER, BroadcastContextCount, 0x50);
KMT_CHECK_OFFSET(D3DKMT_RENDER, BroadcastContext, 0x54);
KMT_CHECK_OFFSET(D3DKMT_RENDER, QueuedBufferCount, 0x154);
KMT_CHECK_OFFSET(D3DKMT_RENDER, NewCommandBuffer, 0x158);
KMT_CHECK_OFFSET(D3DKMT_RENDER, pPrivateDriverData, 0x160);
KMT_CHECK_OFFSET(D3DKMT_RENDER, PrivateDriverDataSize, 0x168);

/* ---- synchronization objects -------------------------------------------------- */

typedef struct _D3DKMT_CREATESYNCHRONIZATIONOBJECT {
    D3DKMT_HANDLE hDevice;
    D3DDDI_SYNCHRONIZATIONOBJECTINFO Info;
    D3DKMT_HANDLE hSyncObject;            /* out */
} D3DKMT_CREATESYNCHRONIZATIONOBJECT;
KMT_CHECK_SIZE(D3DKMT_CREATESYNCHRONIZATIONOBJECT, 0x4c);
KMT_CHECK_OFFSET(D3DKMT_CREATESYNCHRONIZATIONOBJECT, Info, 0x04);
KMT_CHECK_OFFSET(D3DKMT_CREATESYNCHRONIZATIONOBJECT, hSyncObject, 0x48);

typedef struct _D3DKMT_CREATESYNCHRONIZATIONOBJECT2 {
    D3DKMT_HANDLE hDevice;
    D3DDDI_SYNCHRONIZATIONOBJECTINFO2 Info;
    D3DKMT_HANDLE hSyncObject;            /* out */
} D3DKMT_CREATESYNCHRONIZATIONOBJECT2;
KMT_CHECK_SIZE(D3DKMT_CREATESYNCHRONIZATIONOBJECT2, 0x60);
KMT_CHECK_OFFSET(D3DKMT_CREATESYNCHRONIZATIONOBJECT2, Info, 0x08);
KMT_CHECK_OFFSET(D3DKMT_CREATESYNCHRONIZATIONOBJECT2, hSyncObject, 0x58);

typedef struct _D3DKMT_DESTROYSYNCHRONIZATIONOBJECT {
    D3DKMT_HANDLE hSyncObject;
} D3DKMT_DESTROYSYNCHRONIZATIONOBJECT;
KMT_CHECK_SIZE(D3DKMT_DESTROYSYNCHRONIZATIONOBJECT, 4);

typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECT {
    D3DKMT_HANDLE hContext;
    UINT ObjectCount;
    D3DKMT_HANDLE ObjectHandleArray[D3DDDI_MAX_OBJECT_SIGNALED];
    D3DDDICB_SIGNALFLAGS Flags;
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECT;
KMT_CHECK_SIZE(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT, 0x8c);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT, Flags, 0x88);

typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 {
    D3DKMT_HANDLE hContext;
    UINT ObjectCount;
    D3DKMT_HANDLE ObjectHandleArray[D3DDDI_MAX_OBJECT_SIGNALED];
    D3DDDICB_SIGNALFLAGS Flags;
    ULONG BroadcastContextCount;
    D3DKMT_HANDLE BroadcastContext[D3DDDI_MAX_BROADCAST_CONTEXT];
    union {
        struct {
            UINT64 FenceValue;
        } Fence;
        HANDLE CpuEventHandle;            /* with Flags.EnqueueCpuEvent */
        UINT64 Reserved[8];
    };
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2;
KMT_CHECK_SIZE(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2, 0x1d0);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2, Flags, 0x88);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2, BroadcastContextCount, 0x8c);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2, BroadcastContext, 0x90);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2, Fence.FenceValue, 0x190);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2, CpuEventHandle, 0x190);

typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECT {
    D3DKMT_HANDLE hContext;
    UINT ObjectCount;
    D3DKMT_HANDLE ObjectHandleArray[D3DDDI_MAX_OBJECT_WAITED_ON];
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECT;
KMT_CHECK_SIZE(D3DKMT_WAITFORSYNCHRONIZATIONOBJECT, 0x88);

typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 {
    D3DKMT_HANDLE hContext;
    UINT ObjectCount;
    D3DKMT_HANDLE ObjectHandleArray[D3DDDI_MAX_OBJECT_WAITED_ON];
    union {
        struct {
            UINT64 FenceValue;
        } Fence;
        UINT64 Reserved[8];
    };
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2;
KMT_CHECK_SIZE(D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2, 0xc8);
KMT_CHECK_OFFSET(D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2, Fence.FenceValue, 0x88);

typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU {
    D3DKMT_HANDLE hDevice;
    UINT ObjectCount;
    const D3DKMT_HANDLE *ObjectHandleArray;
    const UINT64 *FenceValueArray;
    D3DDDICB_SIGNALFLAGS Flags;
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU;
KMT_CHECK_SIZE(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU, 0x20);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU, ObjectHandleArray, 0x08);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU, FenceValueArray, 0x10);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU, Flags, 0x18);

typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU {
    D3DKMT_HANDLE hDevice;
    UINT ObjectCount;
    const D3DKMT_HANDLE *ObjectHandleArray;
    const UINT64 *FenceValueArray;
    HANDLE hAsyncEvent;                   /* NULL: block; else return, signal it later */
    D3DDDI_WAITFORSYNCHRONIZATIONOBJECTFROMCPU_FLAGS Flags;
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU;
KMT_CHECK_SIZE(D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU, 0x28);
KMT_CHECK_OFFSET(D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU, FenceValueArray, 0x10);
KMT_CHECK_OFFSET(D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU, hAsyncEvent, 0x18);
KMT_CHECK_OFFSET(D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU, Flags, 0x20);

typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU {
    D3DKMT_HANDLE hContext;
    UINT ObjectCount;
    const D3DKMT_HANDLE *ObjectHandleArray;
    union {
        const UINT64 *MonitoredFenceValueArray;
        UINT64 Reserved[8];
    };
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU;
KMT_CHECK_SIZE(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU, 0x50);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU, MonitoredFenceValueArray, 0x10);

typedef struct _D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 {
    UINT ObjectCount;
    const D3DKMT_HANDLE *ObjectHandleArray;
    D3DDDICB_SIGNALFLAGS Flags;
    ULONG BroadcastContextCount;
    const D3DKMT_HANDLE *BroadcastContextArray;
    union {
        UINT64 FenceValue;
        HANDLE CpuEventHandle;
        const UINT64 *MonitoredFenceValueArray;
        UINT64 Reserved[8];
    };
} D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2;
KMT_CHECK_SIZE(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2, 0x60);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2, ObjectHandleArray, 0x08);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2, Flags, 0x10);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2, BroadcastContextCount, 0x14);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2, BroadcastContextArray, 0x18);
KMT_CHECK_OFFSET(D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2, FenceValue, 0x20);

typedef struct _D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU {
    D3DKMT_HANDLE hContext;
    UINT ObjectCount;
    const D3DKMT_HANDLE *ObjectHandleArray;
    union {
        const UINT64 *MonitoredFenceValueArray;
        UINT64 FenceValue;                /* legacy FENCE objects */
        UINT64 Reserved[8];
    };
} D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU;
KMT_CHECK_SIZE(D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU, 0x50);
KMT_CHECK_OFFSET(D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU, MonitoredFenceValueArray, 0x10);

/* ---- display: VidPn source ownership, occlusion, queued limits --------- */

typedef enum _D3DKMT_VIDPNSOURCEOWNER_TYPE {
    D3DKMT_VIDPNSOURCEOWNER_UNOWNED = 0,        /* release (GDI owns it) */
    D3DKMT_VIDPNSOURCEOWNER_SHARED = 1,
    D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE = 2,
    D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVEGDI = 3,   /* legacy devices only */
    D3DKMT_VIDPNSOURCEOWNER_EMULATED = 4,
} D3DKMT_VIDPNSOURCEOWNER_TYPE;

typedef struct _D3DKMT_VIDPNSOURCEOWNER_FLAGS {
    union {
        struct {
            UINT AllowOutputDuplication : 1;
            UINT DisableDWMVirtualMode : 1;
            UINT UseNtHandles : 1;
            UINT Reserved : 29;
        };
        UINT Value;
    };
} D3DKMT_VIDPNSOURCEOWNER_FLAGS;
KMT_CHECK_SIZE(D3DKMT_VIDPNSOURCEOWNER_FLAGS, 4);

/* VidPnSourceCount entries in each array; count 0 (arrays NULL) releases
 * every source the device owns. */
typedef struct _D3DKMT_SETVIDPNSOURCEOWNER {
    D3DKMT_HANDLE hDevice;
    const D3DKMT_VIDPNSOURCEOWNER_TYPE *pType;
    const D3DDDI_VIDEO_PRESENT_SOURCE_ID *pVidPnSourceId;
    UINT VidPnSourceCount;
} D3DKMT_SETVIDPNSOURCEOWNER;
KMT_CHECK_SIZE(D3DKMT_SETVIDPNSOURCEOWNER, 0x20);
KMT_CHECK_OFFSET(D3DKMT_SETVIDPNSOURCEOWNER, pType, 0x08);
KMT_CHECK_OFFSET(D3DKMT_SETVIDPNSOURCEOWNER, pVidPnSourceId, 0x10);
KMT_CHECK_OFFSET(D3DKMT_SETVIDPNSOURCEOWNER, VidPnSourceCount, 0x18);
KMT_CHECK_SIZE_I386(D3DKMT_SETVIDPNSOURCEOWNER, 0x10);
KMT_CHECK_OFFSET_I386(D3DKMT_SETVIDPNSOURCEOWNER, pType, 0x04);
KMT_CHECK_OFFSET_I386(D3DKMT_SETVIDPNSOURCEOWNER, pVidPnSourceId, 0x08);
KMT_CHECK_OFFSET_I386(D3DKMT_SETVIDPNSOURCEOWNER, VidPnSourceCount, 0x0c);

typedef struct _D3DKMT_SETVIDPNSOURCEOWNER1 {
    D3DKMT_SETVIDPNSOURCEOWNER Version0;
    D3DKMT_VIDPNSOURCEOWNER_FLAGS Flags;
} D3DKMT_SETVIDPNSOURCEOWNER1;
KMT_CHECK_SIZE(D3DKMT_SETVIDPNSOURCEOWNER1, 0x28);
KMT_CHECK_OFFSET(D3DKMT_SETVIDPNSOURCEOWNER1, Flags, 0x20);
KMT_CHECK_SIZE_I386(D3DKMT_SETVIDPNSOURCEOWNER1, 0x14);
KMT_CHECK_OFFSET_I386(D3DKMT_SETVIDPNSOURCEOWNER1, Flags, 0x10);

/* With Flags.UseNtHandles, one NT handle per source (a D3DKMT_PTR_TYPE
 * array: pointer-sized). */
typedef struct _D3DKMT_SETVIDPNSOURCEOWNER2 {
    D3DKMT_SETVIDPNSOURCEOWNER1 Version1;
    const HANDLE *pVidPnSourceNtHandles;
} D3DKMT_SETVIDPNSOURCEOWNER2;
KMT_CHECK_SIZE(D3DKMT_SETVIDPNSOURCEOWNER2, 0x30);
KMT_CHECK_OFFSET(D3DKMT_SETVIDPNSOURCEOWNER2, pVidPnSourceNtHandles, 0x28);
KMT_CHECK_SIZE_I386(D3DKMT_SETVIDPNSOURCEOWNER2, 0x18);
KMT_CHECK_OFFSET_I386(D3DKMT_SETVIDPNSOURCEOWNER2, pVidPnSourceNtHandles, 0x14);

typedef struct _D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP {
    D3DKMT_HANDLE hAdapter;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
} D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP;
KMT_CHECK_SIZE(D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP, 8);
KMT_CHECK_OFFSET(D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP, VidPnSourceId, 4);

typedef struct _D3DKMT_CHECKOCCLUSION {
    HWND hWindow;
} D3DKMT_CHECKOCCLUSION;
KMT_CHECK_SIZE(D3DKMT_CHECKOCCLUSION, 8);
KMT_CHECK_SIZE_I386(D3DKMT_CHECKOCCLUSION, 4);

typedef struct _D3DKMT_GETOVERLAYSTATE {
    D3DKMT_HANDLE hDevice;
    D3DKMT_HANDLE hOverlay;
    BOOLEAN OverlayEnabled;             /* out */
} D3DKMT_GETOVERLAYSTATE;
KMT_CHECK_SIZE(D3DKMT_GETOVERLAYSTATE, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_GETOVERLAYSTATE, OverlayEnabled, 0x08);
KMT_CHECK_SIZE_I386(D3DKMT_GETOVERLAYSTATE, 0x0c);

typedef enum _D3DKMT_QUEUEDLIMIT_TYPE {
    D3DKMT_SET_QUEUEDLIMIT_PRESENT = 1,
    D3DKMT_GET_QUEUEDLIMIT_PRESENT = 2,
} D3DKMT_QUEUEDLIMIT_TYPE;

/* The present limit: 0 sets the adapter's default (3); GET writes the
 * device's limit into QueuedPresentLimit. */
typedef struct _D3DKMT_SETQUEUEDLIMIT {
    D3DKMT_HANDLE hDevice;
    D3DKMT_QUEUEDLIMIT_TYPE Type;
    union {
        UINT QueuedPresentLimit;        /* in, or out for GET */
        struct {
            D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
            UINT QueuedPendingFlipLimit;
        };
    };
} D3DKMT_SETQUEUEDLIMIT;
KMT_CHECK_SIZE(D3DKMT_SETQUEUEDLIMIT, 0x10);
KMT_CHECK_OFFSET(D3DKMT_SETQUEUEDLIMIT, QueuedPresentLimit, 0x08);
KMT_CHECK_OFFSET(D3DKMT_SETQUEUEDLIMIT, QueuedPendingFlipLimit, 0x0c);
KMT_CHECK_SIZE_I386(D3DKMT_SETQUEUEDLIMIT, 0x10);

/* ---- display: vertical blank, scan line, monitor children ------------------ */

#define D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS 8

typedef struct _D3DKMT_WAITFORVERTICALBLANKEVENT {
    D3DKMT_HANDLE hAdapter;
    D3DKMT_HANDLE hDevice;              /* optional (0) */
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
} D3DKMT_WAITFORVERTICALBLANKEVENT;
KMT_CHECK_SIZE(D3DKMT_WAITFORVERTICALBLANKEVENT, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_WAITFORVERTICALBLANKEVENT, VidPnSourceId, 0x08);

/* Returns STATUS_WAIT_0 for the vertical blank, STATUS_WAIT_0 + 1 + i when
 * event ObjectHandleArray[i] ended the wait first. */
typedef struct _D3DKMT_WAITFORVERTICALBLANKEVENT2 {
    D3DKMT_HANDLE hAdapter;
    D3DKMT_HANDLE hDevice;              /* optional (0) */
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT NumObjects;
    HANDLE ObjectHandleArray[D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS]; /* events */
} D3DKMT_WAITFORVERTICALBLANKEVENT2;
KMT_CHECK_SIZE(D3DKMT_WAITFORVERTICALBLANKEVENT2, 0x50);
KMT_CHECK_OFFSET(D3DKMT_WAITFORVERTICALBLANKEVENT2, NumObjects, 0x0c);
KMT_CHECK_OFFSET(D3DKMT_WAITFORVERTICALBLANKEVENT2, ObjectHandleArray, 0x10);
KMT_CHECK_SIZE_I386(D3DKMT_WAITFORVERTICALBLANKEVENT2, 0x30);

typedef struct _D3DKMT_GETSCANLINE {
    D3DKMT_HANDLE hAdapter;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    BOOLEAN InVerticalBlank;            /* out */
    UINT ScanLine;                      /* out */
} D3DKMT_GETSCANLINE;
KMT_CHECK_SIZE(D3DKMT_GETSCANLINE, 0x10);
KMT_CHECK_OFFSET(D3DKMT_GETSCANLINE, InVerticalBlank, 0x08);
KMT_CHECK_OFFSET(D3DKMT_GETSCANLINE, ScanLine, 0x0c);

typedef struct _D3DKMT_POLLDISPLAYCHILDREN {
    D3DKMT_HANDLE hAdapter;
    UINT NonDestructiveOnly : 1;
    UINT SynchronousPolling : 1;
    UINT DisableModeReset : 1;
    UINT PollAllAdapters : 1;
    UINT PollInterruptible : 1;
    UINT Reserved : 27;
} D3DKMT_POLLDISPLAYCHILDREN;
KMT_CHECK_SIZE(D3DKMT_POLLDISPLAYCHILDREN, 8);

/* KMTQAITYPE_CURRENTDISPLAYMODE */
typedef struct _D3DKMDT_DISPLAYMODE_FLAGS {
    UINT ValidatedAgainstMonitorCaps : 1;
    UINT RoundedFakeMode : 1;
    UINT Reserved : 30;
} D3DKMDT_DISPLAYMODE_FLAGS;
KMT_CHECK_SIZE(D3DKMDT_DISPLAYMODE_FLAGS, 4);

typedef struct _D3DKMT_DISPLAYMODE {
    UINT Width;
    UINT Height;
    D3DDDIFORMAT Format;
    UINT IntegerRefreshRate;
    D3DDDI_RATIONAL RefreshRate;
    D3DDDI_VIDEO_SIGNAL_SCANLINE_ORDERING ScanLineOrdering;
    D3DDDI_ROTATION DisplayOrientation;
    UINT DisplayFixedOutput;
    D3DKMDT_DISPLAYMODE_FLAGS Flags;
} D3DKMT_DISPLAYMODE;
KMT_CHECK_SIZE(D3DKMT_DISPLAYMODE, 0x28);
KMT_CHECK_OFFSET(D3DKMT_DISPLAYMODE, RefreshRate, 0x10);
KMT_CHECK_OFFSET(D3DKMT_DISPLAYMODE, Flags, 0x24);

typedef struct _D3DKMT_CURRENTDISPLAYMODE {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId; /* in */
    D3DKMT_DISPLAYMODE DisplayMode;               /* out */
} D3DKMT_CURRENTDISPLAYMODE;
KMT_CHECK_SIZE(D3DKMT_CURRENTDISPLAYMODE, 0x2c);
KMT_CHECK_OFFSET(D3DKMT_CURRENTDISPLAYMODE, DisplayMode, 0x04);

/* ---- process scheduling priority ---------------------------------------- */

typedef enum _D3DKMT_SCHEDULINGPRIORITYCLASS {
    D3DKMT_SCHEDULINGPRIORITYCLASS_IDLE = 0,
    D3DKMT_SCHEDULINGPRIORITYCLASS_BELOW_NORMAL = 1,
    D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL = 2,
    D3DKMT_SCHEDULINGPRIORITYCLASS_ABOVE_NORMAL = 3,
    D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH = 4,
    D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME = 5,
} D3DKMT_SCHEDULINGPRIORITYCLASS;

/* ---- the thunks -------------------------------------------------------- */

#ifndef KMTAPI
# if defined(_WIN32)
#  define KMTAPI __declspec(dllimport)
# else
#  define KMTAPI __attribute__((visibility("default")))
# endif
#endif

KMTAPI NTSTATUS APIENTRY D3DKMTEnumAdapters(D3DKMT_ENUMADAPTERS *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTEnumAdapters2(D3DKMT_ENUMADAPTERS2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTEnumAdapters3(D3DKMT_ENUMADAPTERS3 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTOpenAdapterFromLuid(D3DKMT_OPENADAPTERFROMLUID *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCloseAdapter(const D3DKMT_CLOSEADAPTER *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTQueryAdapterInfo(const D3DKMT_QUERYADAPTERINFO *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTQueryVideoMemoryInfo(D3DKMT_QUERYVIDEOMEMORYINFO *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateDevice(D3DKMT_CREATEDEVICE *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTDestroyDevice(const D3DKMT_DESTROYDEVICE *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateAllocation(D3DKMT_CREATEALLOCATION *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateAllocation2(D3DKMT_CREATEALLOCATION *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTDestroyAllocation(const D3DKMT_DESTROYALLOCATION *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTDestroyAllocation2(const D3DKMT_DESTROYALLOCATION2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTLock(D3DKMT_LOCK *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTUnlock(const D3DKMT_UNLOCK *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTLock2(D3DKMT_LOCK2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTUnlock2(const D3DKMT_UNLOCK2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTEscape(const D3DKMT_ESCAPE *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateContext(D3DKMT_CREATECONTEXT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateContextVirtual(D3DKMT_CREATECONTEXTVIRTUAL *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTDestroyContext(const D3DKMT_DESTROYCONTEXT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTGetDeviceState(D3DKMT_GETDEVICESTATE *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSubmitCommand(const D3DKMT_SUBMITCOMMAND *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTRender(D3DKMT_RENDER *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateSynchronizationObject(D3DKMT_CREATESYNCHRONIZATIONOBJECT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCreateSynchronizationObject2(D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTDestroySynchronizationObject(const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSignalSynchronizationObject(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSignalSynchronizationObject2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObject(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObject2(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSignalSynchronizationObjectFromCpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObjectFromCpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSignalSynchronizationObjectFromGpu(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSignalSynchronizationObjectFromGpu2(const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTWaitForSynchronizationObjectFromGpu(const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSetVidPnSourceOwner(const D3DKMT_SETVIDPNSOURCEOWNER *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSetVidPnSourceOwner1(const D3DKMT_SETVIDPNSOURCEOWNER1 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSetVidPnSourceOwner2(const D3DKMT_SETVIDPNSOURCEOWNER2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCheckVidPnExclusiveOwnership(const D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTCheckOcclusion(const D3DKMT_CHECKOCCLUSION *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTGetOverlayState(D3DKMT_GETOVERLAYSTATE *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTSetQueuedLimit(D3DKMT_SETQUEUEDLIMIT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTWaitForVerticalBlankEvent(const D3DKMT_WAITFORVERTICALBLANKEVENT *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTWaitForVerticalBlankEvent2(const D3DKMT_WAITFORVERTICALBLANKEVENT2 *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTGetScanLine(D3DKMT_GETSCANLINE *desc);
KMTAPI NTSTATUS APIENTRY D3DKMTPollDisplayChildren(const D3DKMT_POLLDISPLAYCHILDREN *desc);
/* Not an NTSTATUS: TRUE while a VidPn source has an exclusive owner. */
KMTAPI BOOLEAN APIENTRY D3DKMTCheckExclusiveOwnership(void);
KMTAPI NTSTATUS APIENTRY D3DKMTSetProcessSchedulingPriorityClass(HANDLE process,
                                                                D3DKMT_SCHEDULINGPRIORITYCLASS priority);
KMTAPI NTSTATUS APIENTRY D3DKMTGetProcessSchedulingPriorityClass(HANDLE process,
                                                                D3DKMT_SCHEDULINGPRIORITYCLASS *priority);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_D3DKMTHK_H */
