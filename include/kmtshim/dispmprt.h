/*
 * The display-miniport part of kmtshim's miniport interface that Windows
 * keeps in dispmprt.h (and a few d3dukmdt.h / d3dkmdt.h types it uses):
 * child status reports and the Miracast callback table.
 *
 * d3dkmddi.h includes this header; a miniport may also include it alone.
 * Names follow the DDK.  Enumeration values are the documented ones; the
 * callback table's layout is kmtshim's own (it never crosses into a Windows
 * program), the chunk structures keep the documented x86_64 layout.
 *
 * Miracast in short (see docs/miracast.md):
 *   DxgkDdiMiracastCreateContext, DxgkDdiMiracastDestroyContext and
 *   DxgkDdiMiracastIoControl form the Miracast class: the core calls one of
 *   them at a time per adapter (WDDM's level 2), while every other DDI keeps
 *   running.  After DestroyContext no IoControl reaches the miniport.  At
 *   DestroyContext the miniport reports the monitor's departure at once,
 *   through DxgkCbIndicateChildStatus with Type StatusMiracastConnection.
 */
#ifndef KMTSHIM_DISPMPRT_H
#define KMTSHIM_DISPMPRT_H

#include "kmt_wintypes.h"
#include "kmt_ntstatus.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses of the Miracast paths (ntstatus.h values). */
#ifndef STATUS_INVALID_DEVICE_STATE
# define STATUS_INVALID_DEVICE_STATE      ((NTSTATUS)0xC0000184L)
#endif
#ifndef STATUS_DEVICE_NOT_CONNECTED
# define STATUS_DEVICE_NOT_CONNECTED      ((NTSTATUS)0xC000009DL)
#endif

/* ---- child status (DxgkCbIndicateChildStatus) --------------------------- */

/* d3dkmdt.h's connector types, the ones a child status may carry.  The
 * aliases and D3DKMDT_VOT_INTERNAL (0x80000000) are left out so the type
 * stays a 4-byte int everywhere. */
typedef enum _D3DKMDT_VIDEO_OUTPUT_TECHNOLOGY {
    D3DKMDT_VOT_UNINITIALIZED = -2,
    D3DKMDT_VOT_OTHER = -1,
    D3DKMDT_VOT_HD15 = 0,
    D3DKMDT_VOT_SVIDEO = 1,
    D3DKMDT_VOT_COMPOSITE_VIDEO = 2,
    D3DKMDT_VOT_COMPONENT_VIDEO = 3,
    D3DKMDT_VOT_DVI = 4,
    D3DKMDT_VOT_HDMI = 5,
    D3DKMDT_VOT_LVDS = 6,
    D3DKMDT_VOT_D_JPN = 8,
    D3DKMDT_VOT_SDI = 9,
    D3DKMDT_VOT_DISPLAYPORT_EXTERNAL = 10,
    D3DKMDT_VOT_DISPLAYPORT_EMBEDDED = 11,
    D3DKMDT_VOT_UDI_EXTERNAL = 12,
    D3DKMDT_VOT_UDI_EMBEDDED = 13,
    D3DKMDT_VOT_SDTVDONGLE = 14,
    D3DKMDT_VOT_MIRACAST = 15,
    D3DKMDT_VOT_INDIRECT_WIRED = 16,
} D3DKMDT_VIDEO_OUTPUT_TECHNOLOGY;

typedef enum _DXGK_CHILD_STATUS_TYPE {
    StatusUninitialized = 0,
    StatusConnection = 1,
    StatusRotation = 2,
    StatusMiracastConnection = 3,        /* WDDM 1.3; some pages call it StatusMiracast */
} DXGK_CHILD_STATUS_TYPE;

typedef struct _DXGK_CHILD_STATUS {
    DXGK_CHILD_STATUS_TYPE Type;
    ULONG ChildUid;                      /* Miracast: the TargetId CreateContext returned */
    union {
        struct {
            BOOLEAN Connected;
        } HotPlug;
        struct {
            UCHAR Angle;
        } Rotation;
        struct {
            BOOLEAN Connected;           /* FALSE: the sink's monitor departed */
            D3DKMDT_VIDEO_OUTPUT_TECHNOLOGY MiracastMonitorType;
        } Miracast;
    };
} DXGK_CHILD_STATUS, *PDXGK_CHILD_STATUS;
KMT_CHECK_SIZE(DXGK_CHILD_STATUS, 16);
KMT_CHECK_OFFSET(DXGK_CHILD_STATUS, Miracast.MiracastMonitorType, 12);

/* hAdapter is DXGKRNL_INTERFACE.DeviceHandle.  Accepted: StatusConnection
 * of a child 0 .. NumberOfChildren-1 (1.4: the core records whether its
 * monitor is connected) and StatusMiracastConnection of a live Miracast
 * target; other types answer STATUS_NOT_SUPPORTED, an unknown child
 * STATUS_INVALID_PARAMETER. */
typedef NTSTATUS (APIENTRY *DXGKCB_INDICATE_CHILD_STATUS)(HANDLE DeviceHandle,
                                                          PDXGK_CHILD_STATUS ChildStatus);

/* ---- Miracast encode chunks (d3dukmdt.h on Windows) ------------------------ */

typedef enum _DXGK_MIRACAST_CHUNK_TYPE {
    DXGK_MIRACAST_CHUNK_TYPE_UNKNOWN = 0,
    DXGK_MIRACAST_CHUNK_TYPE_COLOR_CONVERT_COMPLETE = 1,
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_COMPLETE = 2,
    DXGK_MIRACAST_CHUNK_TYPE_FRAME_START = 3,
    DXGK_MIRACAST_CHUNK_TYPE_FRAME_DROPPED = 4,
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_DRIVER_DEFINED_1 = 5,
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_DRIVER_DEFINED_2 = 6,
} DXGK_MIRACAST_CHUNK_TYPE;

typedef union _DXGK_MIRACAST_CHUNK_ID {
    struct {
        UINT64 FrameNumber : 40;
        UINT64 PartNumber : 24;
    };
    UINT64 Value;
} DXGK_MIRACAST_CHUNK_ID;
KMT_CHECK_SIZE(DXGK_MIRACAST_CHUNK_ID, 8);

typedef struct _DXGK_MIRACAST_CHUNK_INFO {
    DXGK_MIRACAST_CHUNK_TYPE ChunkType;
    DXGK_MIRACAST_CHUNK_ID ChunkId;
    UINT ProcessingTime;                 /* microseconds */
    UINT EncodeRate;                     /* kbit/s */
} DXGK_MIRACAST_CHUNK_INFO;
KMT_CHECK_SIZE(DXGK_MIRACAST_CHUNK_INFO, 24);
KMT_CHECK_OFFSET(DXGK_MIRACAST_CHUNK_INFO, ChunkId, 8);
KMT_CHECK_OFFSET(DXGK_MIRACAST_CHUNK_INFO, EncodeRate, 20);

/* ---- the Miracast callbacks (CreateContext's MiracastCallbacks) ------------- */

/* Logs an encode chunk (on Windows: an ETW event, nothing else).  Private
 * data is reserved: NULL and 0.  Valid from CreateContext's return until
 * DestroyContext is called. */
typedef NTSTATUS (APIENTRY *DXGKCB_MIRACAST_REPORT_CHUNK_INFO)(
    HANDLE MiracastHandle, DXGK_MIRACAST_CHUNK_INFO *pChunkInfo,
    PVOID pPrivateDriverData, UINT PrivateDataDriverSize);

/* DXGK_MIRACAST_DISPLAY_CALLBACKS in the DDK.  The core owns the table; it
 * stays valid until DestroyContext returns.  Monitor arrival and departure
 * go through DXGKRNL_INTERFACE.DxgkCbIndicateChildStatus, as on Windows. */
typedef struct _DXGK_MIRACAST_CALLBACKS {
    HANDLE MiracastHandle;               /* pass to the callbacks below */
    DXGKCB_MIRACAST_REPORT_CHUNK_INFO DxgkCbReportChunkInfo;
    /* The DDK's DxgkCbMiracastSendMessage (an asynchronous message to the
     * Miracast user-mode driver) has no counterpart: kmtshim's user-mode
     * side talks to the miniport only through IoControl. */
} DXGK_MIRACAST_CALLBACKS, DXGK_MIRACAST_DISPLAY_CALLBACKS;

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_DISPMPRT_H */
