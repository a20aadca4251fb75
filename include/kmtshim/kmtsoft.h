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
KMT_CHECK_SIZE_I386(KMT_SOFT_ALLOCATION_DESC, 0x18);

/* KMTQAITYPE_UMDRIVERPRIVATE answer. */
typedef struct _KMT_SOFT_UMD_PRIVATE {
    UINT Magic;                  /* KMT_SOFT_ALLOCATION_MAGIC */
    UINT Version;
    UINT PageSize;
    UINT NodeCount;
    UINT64 MaxAllocationSize;
} KMT_SOFT_UMD_PRIVATE;
KMT_CHECK_SIZE(KMT_SOFT_UMD_PRIVATE, 24);
KMT_CHECK_SIZE_I386(KMT_SOFT_UMD_PRIVATE, 0x18);

/* D3DKMT_ESCAPE (DRIVERPRIVATE) requests. */
enum kmt_soft_escape_code {
    KMT_SOFT_ESCAPE_GET_STATS = 1,   /* live objects of the adapter */
    KMT_SOFT_ESCAPE_GET_MIRACAST_STATS = 2, /* Data: the sink's KMT_SOFT_MIRACAST_STATS
                                               (kmtmiracast.h), with or without a session */
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
            UINT64 Contexts;
            UINT64 CommandsExecuted;
        } Stats;                 /* out */
        BYTE Data[64];
    };
} KMT_SOFT_ESCAPE;
KMT_CHECK_SIZE(KMT_SOFT_ESCAPE, 72);
KMT_CHECK_SIZE_I386(KMT_SOFT_ESCAPE, 0x48);


/* ---- command buffers -------------------------------------------------------
 * The software engine executes a stream of commands, each starting with a
 * KMT_SOFT_CMD_HEADER whose Size covers the whole command (a multiple of 8).
 * Addresses are GPU virtual addresses: D3DDDI_ALLOCATIONINFO2.GpuVirtualAddress
 * of an allocation plus an offset, or a monitored fence's
 * FenceValueGPUVirtualAddress.  With D3DKMTRender (patching contexts) the
 * patch list writes those addresses into the command buffer.  An address
 * outside every mapping is a GPU page fault: the device goes to
 * D3DKMT_DEVICEEXECUTION_ERROR_DMAPAGEFAULT, a bad opcode or size to
 * ERROR_DMAFAULT. */
enum kmt_soft_opcode {
    KMT_SOFT_OP_NOP = 0,
    KMT_SOFT_OP_FILL = 1,          /* 32-bit pattern over Bytes (multiple of 4) */
    KMT_SOFT_OP_COPY = 2,          /* Bytes from SrcVa to DstVa (may overlap) */
    KMT_SOFT_OP_SIGNAL_FENCE = 3,  /* *(UINT64 *)FenceVa = Value, then interrupt */
    KMT_SOFT_OP_WAIT_FENCE = 4,    /* until *(UINT64 *)FenceVa >= Value (a hang after TdrDelay;
                                      with detection off, a DMA fault after 5 s) */
    KMT_SOFT_OP_DELAY = 5,         /* keep the engine busy for Microseconds (<= 1 s) */
    KMT_SOFT_OP_WRITE64 = 6,       /* *(UINT64 *)DstVa = Value */
};

typedef struct _KMT_SOFT_CMD_HEADER {
    UINT Opcode;
    UINT Size;
} KMT_SOFT_CMD_HEADER;
KMT_CHECK_SIZE(KMT_SOFT_CMD_HEADER, 8);
KMT_CHECK_SIZE_I386(KMT_SOFT_CMD_HEADER, 8);

typedef struct _KMT_SOFT_CMD_FILL {
    KMT_SOFT_CMD_HEADER Header;
    UINT64 DstVa;
    UINT64 Bytes;
    UINT Value;
    UINT Reserved;
} KMT_SOFT_CMD_FILL;
KMT_CHECK_SIZE(KMT_SOFT_CMD_FILL, 32);
KMT_CHECK_SIZE_I386(KMT_SOFT_CMD_FILL, 0x20);

typedef struct _KMT_SOFT_CMD_COPY {
    KMT_SOFT_CMD_HEADER Header;
    UINT64 DstVa;
    UINT64 SrcVa;
    UINT64 Bytes;
} KMT_SOFT_CMD_COPY;
KMT_CHECK_SIZE(KMT_SOFT_CMD_COPY, 32);
KMT_CHECK_SIZE_I386(KMT_SOFT_CMD_COPY, 0x20);

typedef struct _KMT_SOFT_CMD_FENCE {            /* KMT_SOFT_OP_SIGNAL_FENCE, _WAIT_FENCE, _WRITE64 */
    KMT_SOFT_CMD_HEADER Header;
    UINT64 Va;
    UINT64 Value;
} KMT_SOFT_CMD_FENCE;
KMT_CHECK_SIZE(KMT_SOFT_CMD_FENCE, 24);
KMT_CHECK_SIZE_I386(KMT_SOFT_CMD_FENCE, 0x18);

typedef struct _KMT_SOFT_CMD_DELAY {
    KMT_SOFT_CMD_HEADER Header;
    UINT Microseconds;
    UINT Reserved;
} KMT_SOFT_CMD_DELAY;
KMT_CHECK_SIZE(KMT_SOFT_CMD_DELAY, 16);
KMT_CHECK_SIZE_I386(KMT_SOFT_CMD_DELAY, 0x10);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_KMTSOFT_H */
