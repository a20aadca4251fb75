/*
 * The software adapter's private formats: what a UMD (or a test) puts in
 * D3DDDI_ALLOCATIONINFO.pPrivateDriverData and D3DKMT_ESCAPE data when it
 * talks to kmtshim's software miniport, the way a UMD talks to its own KMD.
 */
#ifndef KMTSHIM_KMTSOFT_H
#define KMTSHIM_KMTSOFT_H

#include "kmt_wintypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PCI ids the software adapter reports: those of Microsoft's Basic Render
 * Driver, so programs that skip software adapters recognise it. */
#define KMT_SOFT_VENDOR_ID 0x1414
#define KMT_SOFT_DEVICE_ID 0x008c

/* Per-allocation private driver data of a driver-private allocation.
 * Standard (existing-heap) allocations need none. */
#define KMT_SOFT_ALLOCATION_MAGIC 0x5446534bu   /* "KSFT" */
#define KMT_SOFT_ALLOCATION_VERSION 1u

typedef struct _KMT_SOFT_ALLOCATION_DESC {
    UINT Magic;
    UINT Version;
    UINT64 Size;                 /* bytes; rounded up to a 4 KiB page */
    UINT Flags;                  /* reserved, 0 */
    UINT Reserved;
} KMT_SOFT_ALLOCATION_DESC;
KMT_CHECK_SIZE(KMT_SOFT_ALLOCATION_DESC, 24);

/* KMTQAITYPE_UMDRIVERPRIVATE answer. */
typedef struct _KMT_SOFT_UMD_PRIVATE {
    UINT Magic;                  /* KMT_SOFT_ALLOCATION_MAGIC */
    UINT Version;
    UINT PageSize;
    UINT NodeCount;
    UINT64 MaxAllocationSize;
} KMT_SOFT_UMD_PRIVATE;
KMT_CHECK_SIZE(KMT_SOFT_UMD_PRIVATE, 24);

/* D3DKMT_ESCAPE (DRIVERPRIVATE) requests. */
enum kmt_soft_escape_code {
    KMT_SOFT_ESCAPE_GET_STATS = 1,   /* live objects of the adapter */
};

typedef struct _KMT_SOFT_ESCAPE {
    UINT Code;                   /* in */
    UINT Reserved;
    union {
        struct {
            UINT64 Devices;
            UINT64 Allocations;
            UINT64 Resources;
            UINT64 BytesAllocated;   /* memfd-backed bytes, sysmem excluded */
            UINT64 OpenBindings;
        } Stats;                 /* out */
        BYTE Data[64];
    };
} KMT_SOFT_ESCAPE;
KMT_CHECK_SIZE(KMT_SOFT_ESCAPE, 72);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_KMTSOFT_H */
