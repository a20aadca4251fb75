/*
 * kmtshim's Miracast sessions: the user-mode side of a Miracast connected
 * session, driving a miniport's DxgkDdiMiracast* DDIs (kmtshim extension).
 *
 * On Windows the OS creates the kernel context (DxgkDdiMiracastCreateContext),
 * runs the Miracast user-mode driver's StartMiracastSession, lets that driver
 * talk to the miniport with MiracastIoControl, and at the end runs its
 * StopMiracastSession and destroys the kernel context.  Here the program
 * plays both parts: it starts and stops a session with the functions below
 * and hands the core its start and stop routines, which run at the points
 * where Windows runs the user-mode driver's.  The rules the core keeps
 * (docs/miracast.md):
 *
 *   - While the start routine runs, IoControl from its own thread reaches
 *     the miniport; other threads' IoControl waits until the start is over.
 *   - While the stop routine runs, IoControl from its own thread reaches the
 *     miniport; other threads' IoControl fails with STATUS_INVALID_DEVICE_STATE.
 *   - A stop routine that takes longer than StopTimeoutMs does not hold the
 *     kernel context: the core destroys it under the running routine, and
 *     from then on every IoControl fails with STATUS_DEVICE_NOT_CONNECTED
 *     without reaching the miniport.  No IoControl ever reaches the miniport
 *     after DxgkDdiMiracastDestroyContext.
 *   - The miniport reports the monitor's departure at destroy; the session's
 *     status shows it, and hStatusEvent is set at every status change.
 *
 * Session handles are D3DKMT handles of the process's table.  A handle not
 * naming a live session gives STATUS_INVALID_PARAMETER, as D3DKMT does.
 */
#ifndef KMTSHIM_KMTMIRACAST_H
#define KMTSHIM_KMTMIRACAST_H

#include "d3dkmthk.h"
#include "dispmprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The user-mode driver's StartMiracastSession: negotiate with the sink,
 * IoControl the miniport.  A failure status fails KmtMiracastStartSession
 * with it (the kernel context is destroyed). */
typedef NTSTATUS (APIENTRY *PKMT_MIRACAST_START_SESSION)(PVOID pContext, D3DKMT_HANDLE hSession);
/* The user-mode driver's StopMiracastSession: may be slow (see above). */
typedef void (APIENTRY *PKMT_MIRACAST_STOP_SESSION)(PVOID pContext, D3DKMT_HANDLE hSession);

#define KMT_MIRACAST_DEFAULT_STOP_TIMEOUT_MS 5000u
#define KMT_MIRACAST_MAX_STOP_TIMEOUT_MS 600000u
/* Largest IoControl input or output buffer. */
#define KMT_MIRACAST_MAX_IO_CONTROL_SIZE (1u << 20)

typedef struct _KMT_MIRACAST_SESSION_DESC {
    D3DKMT_HANDLE hAdapter;              /* in */
    UINT StopTimeoutMs;                  /* in: 0 = KMT_MIRACAST_DEFAULT_STOP_TIMEOUT_MS */
    HANDLE hStatusEvent;                 /* in, optional: an event (natively an eventfd) */
    PKMT_MIRACAST_START_SESSION pfnStartSession; /* in, optional */
    PKMT_MIRACAST_STOP_SESSION pfnStopSession;   /* in, optional */
    PVOID pContext;                      /* in: handed to both routines */
    D3DKMT_HANDLE hSession;              /* out */
    UINT TargetId;                       /* out: the miniport's Miracast target */
} KMT_MIRACAST_SESSION_DESC;
KMT_CHECK_SIZE(KMT_MIRACAST_SESSION_DESC, 0x30);
KMT_CHECK_OFFSET(KMT_MIRACAST_SESSION_DESC, hStatusEvent, 0x08);
KMT_CHECK_OFFSET(KMT_MIRACAST_SESSION_DESC, pContext, 0x20);
KMT_CHECK_OFFSET(KMT_MIRACAST_SESSION_DESC, hSession, 0x28);
KMT_CHECK_SIZE_I386(KMT_MIRACAST_SESSION_DESC, 0x20);
KMT_CHECK_OFFSET_I386(KMT_MIRACAST_SESSION_DESC, hStatusEvent, 0x08);
KMT_CHECK_OFFSET_I386(KMT_MIRACAST_SESSION_DESC, pContext, 0x14);
KMT_CHECK_OFFSET_I386(KMT_MIRACAST_SESSION_DESC, hSession, 0x18);

typedef enum _KMT_MIRACAST_SESSION_STATE {
    KMT_MIRACAST_SESSION_STARTING = 1,   /* kernel context made, start routine running */
    KMT_MIRACAST_SESSION_ACTIVE = 2,
    KMT_MIRACAST_SESSION_STOPPING = 3,   /* stop routine running, kernel context alive */
    KMT_MIRACAST_SESSION_DESTROYED = 4,  /* kernel context destroyed (or being destroyed) */
} KMT_MIRACAST_SESSION_STATE;

/* MIRACAST_STATUS (netdispumdddi.h): what the user-mode side reports. */
typedef enum _MIRACAST_STATUS {
    MIRACAST_STATUS_CRITICAL_ERROR = 0,
    MIRACAST_STATUS_MISSING_KEEPALIVE = 1,
    MIRACAST_STATUS_SINK_DISOCNNECT_REQUEST = 2,   /* sic, the DDK's spelling */
    MIRACAST_STATUS_INSUFFICIENT_BANDWIDTH = 3,
    MIRACAST_STATUS_SINK_FAILED_STANDARD_MODE_CHANGE = 4,
    MIRACAST_STATUS_COMPANION_DRIVER_DISCONNECT = 5,
} MIRACAST_STATUS;

typedef struct _KMT_MIRACAST_SESSION_STATUS {
    UINT State;                          /* KMT_MIRACAST_SESSION_STATE */
    UINT TargetId;
    BOOL MonitorConnected;               /* as the miniport last reported it */
    INT MonitorType;                     /* D3DKMDT_VIDEO_OUTPUT_TECHNOLOGY of the last arrival */
    UINT MonitorArrivals;                /* StatusMiracastConnection reports, Connected */
    UINT MonitorDepartures;              /* ... not Connected */
    BOOL DepartureReportedAtDestroy;     /* inside DxgkDdiMiracastDestroyContext */
    BOOL DestroyedDuringStop;            /* the stop routine outran StopTimeoutMs */
    BOOL ErrorReported;                  /* KmtMiracastReportSessionStatus was called */
    UINT ReportedMiracastStatus;         /* its MIRACAST_STATUS */
    NTSTATUS ReportedStatus;             /* and its diagnostic status */
    UINT LastChunkType;                  /* DXGK_MIRACAST_CHUNK_TYPE of the last chunk */
    UINT64 ChunksReported;               /* DxgkCbReportChunkInfo calls accepted */
    UINT64 LastChunkId;                  /* DXGK_MIRACAST_CHUNK_ID.Value */
    UINT64 IoControlsCompleted;          /* IoControls the miniport answered */
    UINT64 IoControlsRefused;            /* refused by the core (stopping / destroyed) */
} KMT_MIRACAST_SESSION_STATUS;
KMT_CHECK_SIZE(KMT_MIRACAST_SESSION_STATUS, 0x50);
KMT_CHECK_OFFSET(KMT_MIRACAST_SESSION_STATUS, ChunksReported, 0x30);
KMT_CHECK_OFFSET(KMT_MIRACAST_SESSION_STATUS, IoControlsRefused, 0x48);
KMT_CHECK_SIZE_I386(KMT_MIRACAST_SESSION_STATUS, 0x50);
KMT_CHECK_OFFSET_I386(KMT_MIRACAST_SESSION_STATUS, ChunksReported, 0x30);
KMT_CHECK_OFFSET_I386(KMT_MIRACAST_SESSION_STATUS, IoControlsRefused, 0x48);

/* Creates the kernel context on desc->hAdapter and runs the start routine.
 * STATUS_NOT_SUPPORTED: the adapter's miniport has no Miracast DDIs; the
 * miniport's own failures (STATUS_RESOURCE_IN_USE: its sink is busy) and
 * the start routine's come back unchanged.  STATUS_INVALID_HANDLE: a bad
 * hStatusEvent. */
KMTAPI NTSTATUS APIENTRY KmtMiracastStartSession(KMT_MIRACAST_SESSION_DESC *desc);

/* Runs the stop routine, destroys the kernel context (or finds it destroyed
 * already) and closes the handle.  pFinalStatus (optional) receives the
 * status after the destroy.  STATUS_INVALID_DEVICE_STATE: the session is
 * starting or stopping (e.g. called from its own start or stop routine). */
KMTAPI NTSTATUS APIENTRY KmtMiracastStopSession(D3DKMT_HANDLE hSession,
                                                KMT_MIRACAST_SESSION_STATUS *pFinalStatus);

/* MiracastIoControl: a synchronous request to the miniport.  The buffers
 * are copied (at most KMT_MIRACAST_MAX_IO_CONTROL_SIZE each); a NULL
 * pointer goes with a 0 size.  pBytesReturned is optional. */
KMTAPI NTSTATUS APIENTRY KmtMiracastIoControl(D3DKMT_HANDLE hSession, const VOID *pInputBuffer,
                                              UINT InputBufferSize, VOID *pOutputBuffer,
                                              UINT OutputBufferSize, UINT *pBytesReturned);

KMTAPI NTSTATUS APIENTRY KmtMiracastQueryStatus(D3DKMT_HANDLE hSession,
                                                KMT_MIRACAST_SESSION_STATUS *pStatus);

/* ReportSessionStatus: the user-mode side reports a link problem.  The core
 * records it and sets hStatusEvent; tearing the session down (StopSession)
 * is the session owner's answer to it. */
KMTAPI NTSTATUS APIENTRY KmtMiracastReportSessionStatus(D3DKMT_HANDLE hSession,
                                                        MIRACAST_STATUS MiracastStatus,
                                                        NTSTATUS Status);

/* ---- the software adapter's virtual sink -------------------------------------
 * The soft miniport implements DxgkDdiMiracast* as a sink with one target
 * (KMT_SOFT_MIRACAST_TARGET_ID) and one session at a time.  Its IoControl
 * input starts with a KMT_SOFT_MIRACAST_HEADER; Size is the whole input. */
#define KMT_SOFT_MIRACAST_TARGET_ID 0x100u
#define KMT_SOFT_MIRACAST_MAX_ENCODE_US 200000u

enum kmt_soft_miracast_code {
    KMT_SOFT_MIRACAST_GET_SINK_INFO = 1, /* out: KMT_SOFT_MIRACAST_SINK_INFO */
    KMT_SOFT_MIRACAST_SET_MONITOR = 2,   /* in: KMT_SOFT_MIRACAST_SET_MONITOR_IN; the
                                            sink reports the arrival / departure */
    KMT_SOFT_MIRACAST_SEND_CHUNK = 3,    /* in: KMT_SOFT_MIRACAST_CHUNK_IN + data;
                                            out: KMT_SOFT_MIRACAST_CHUNK_OUT */
    KMT_SOFT_MIRACAST_GET_STATS = 4,     /* out: KMT_SOFT_MIRACAST_STATS */
};

typedef struct _KMT_SOFT_MIRACAST_HEADER {
    UINT Code;                           /* enum kmt_soft_miracast_code */
    UINT Size;                           /* bytes of the whole input */
} KMT_SOFT_MIRACAST_HEADER;
KMT_CHECK_SIZE(KMT_SOFT_MIRACAST_HEADER, 8);
KMT_CHECK_SIZE_I386(KMT_SOFT_MIRACAST_HEADER, 8);

typedef struct _KMT_SOFT_MIRACAST_SINK_INFO {
    UINT TargetId;
    UINT Width, Height, RefreshRate;     /* the sink's native mode */
    UINT MaxChunkSize;                   /* bytes of data per SEND_CHUNK */
    BOOL MonitorConnected;
} KMT_SOFT_MIRACAST_SINK_INFO;
KMT_CHECK_SIZE(KMT_SOFT_MIRACAST_SINK_INFO, 24);
KMT_CHECK_SIZE_I386(KMT_SOFT_MIRACAST_SINK_INFO, 0x18);

typedef struct _KMT_SOFT_MIRACAST_SET_MONITOR_IN {
    KMT_SOFT_MIRACAST_HEADER Header;
    BOOL Connected;
    INT MonitorType;                     /* D3DKMDT_VIDEO_OUTPUT_TECHNOLOGY */
} KMT_SOFT_MIRACAST_SET_MONITOR_IN;
KMT_CHECK_SIZE(KMT_SOFT_MIRACAST_SET_MONITOR_IN, 16);
KMT_CHECK_SIZE_I386(KMT_SOFT_MIRACAST_SET_MONITOR_IN, 0x10);

/* A piece of an encoded frame.  The sink "encodes" for EncodeMicroseconds
 * (<= KMT_SOFT_MIRACAST_MAX_ENCODE_US), checksums the data (FNV-1a, 32-bit)
 * and logs the chunk with DxgkCbReportChunkInfo: ENCODE_COMPLETE, or
 * FRAME_DROPPED when no monitor is connected. */
typedef struct _KMT_SOFT_MIRACAST_CHUNK_IN {
    KMT_SOFT_MIRACAST_HEADER Header;
    UINT64 FrameNumber;                  /* < 2^40 */
    UINT PartNumber;                     /* < 2^24 */
    UINT EncodeMicroseconds;
    UINT DataSize;                       /* bytes following this struct */
    UINT Reserved;
} KMT_SOFT_MIRACAST_CHUNK_IN;
KMT_CHECK_SIZE(KMT_SOFT_MIRACAST_CHUNK_IN, 32);
KMT_CHECK_SIZE_I386(KMT_SOFT_MIRACAST_CHUNK_IN, 0x20);

typedef struct _KMT_SOFT_MIRACAST_CHUNK_OUT {
    UINT64 ChunkId;                      /* DXGK_MIRACAST_CHUNK_ID.Value */
    UINT Checksum;                       /* FNV-1a of the data */
    BOOL Dropped;                        /* no monitor: the chunk went nowhere */
} KMT_SOFT_MIRACAST_CHUNK_OUT;
KMT_CHECK_SIZE(KMT_SOFT_MIRACAST_CHUNK_OUT, 16);
KMT_CHECK_SIZE_I386(KMT_SOFT_MIRACAST_CHUNK_OUT, 0x10);

/* The sink's counters over the adapter's life (also through the adapter
 * escape KMT_SOFT_ESCAPE_GET_MIRACAST_STATS, which needs no session). */
typedef struct _KMT_SOFT_MIRACAST_STATS {
    UINT64 ContextsCreated;
    UINT64 ContextsDestroyed;
    UINT64 IoControls;                   /* handled for the live context */
    UINT64 StaleIoControls;              /* for a destroyed or unknown context: a core bug */
    UINT64 Overlaps;                     /* Miracast-class DDIs found running at once: a core bug */
    UINT64 Chunks;
    UINT64 BytesReceived;
    UINT64 DroppedChunks;
} KMT_SOFT_MIRACAST_STATS;
KMT_CHECK_SIZE(KMT_SOFT_MIRACAST_STATS, 64);
KMT_CHECK_SIZE_I386(KMT_SOFT_MIRACAST_STATS, 0x40);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_KMTMIRACAST_H */
