/*
 * kmtshim: the D3DKMT thunks on Linux.
 *
 * Include this to use libkmtshim natively: it brings the D3DKMT interface
 * (d3dkmthk.h) and the few Linux-side extras below, which have no Windows
 * counterpart.  Windows programs under Wine use the same functions through
 * kmtshim.dll or the gdi32 proxy and need none of the extras.
 */
#ifndef KMTSHIM_KMTSHIM_H
#define KMTSHIM_KMTSHIM_H

#include "d3dkmthk.h"
#include "d3dkmddi.h"
#include "kmtmiracast.h"                /* Miracast sessions */

#ifdef __cplusplus
extern "C" {
#endif

#define KMTSHIM_VERSION_MAJOR 0
#define KMTSHIM_VERSION_MINOR 1

/* "0.1.0" */
KMTAPI const char *KmtGetVersion(void);

/* Makes a miniport linked into the program selectable by name through
 * KMTSHIM_MINIPORT (e.g. a vendor bring-up miniport, or a test miniport).
 * Takes effect at the next start of the process's dxgkrnl: call it before
 * the first D3DKMT call, or after KmtProcessShutdown(). */
KMTAPI NTSTATUS KmtRegisterMiniport(const char *name, PKMT_MINIPORT_DRIVER_ENTRY entry);

/* Tears down everything the process created (devices with their whole
 * cascade, adapter handles), stops the adapters and unloads the miniports,
 * as Windows does at process exit.  The next D3DKMT call starts afresh.
 * No other thread may be inside a D3DKMT call meanwhile. */
KMTAPI void KmtProcessShutdown(void);

/* Where an adapter comes from: which miniport, what device. */
typedef struct _KMT_ADAPTER_DESCRIPTION {
    char Miniport[32];          /* "soft", "drm", or the DriverName a plugin gave */
    char DriverName[32];        /* the kernel or software driver behind it */
    char Description[128];
    char LocationId[64];        /* bus id, or "soft0" */
} KMT_ADAPTER_DESCRIPTION;
KMT_CHECK_SIZE(KMT_ADAPTER_DESCRIPTION, 0x100);
KMT_CHECK_OFFSET(KMT_ADAPTER_DESCRIPTION, DriverName, 0x20);
KMT_CHECK_OFFSET(KMT_ADAPTER_DESCRIPTION, Description, 0x40);
KMT_CHECK_OFFSET(KMT_ADAPTER_DESCRIPTION, LocationId, 0xc0);
KMT_CHECK_SIZE_I386(KMT_ADAPTER_DESCRIPTION, 0x100);
KMT_CHECK_OFFSET_I386(KMT_ADAPTER_DESCRIPTION, DriverName, 0x20);
KMT_CHECK_OFFSET_I386(KMT_ADAPTER_DESCRIPTION, Description, 0x40);
KMT_CHECK_OFFSET_I386(KMT_ADAPTER_DESCRIPTION, LocationId, 0xc0);

KMTAPI NTSTATUS KmtQueryAdapterDescription(D3DKMT_HANDLE hAdapter, KMT_ADAPTER_DESCRIPTION *desc);

/* Events.  Sync-object calls take Win32 event handles (CPU notifications,
 * hAsyncEvent of WaitForSynchronizationObjectFromCpu, EnqueueCpuEvent).
 * Natively an event is an eventfd: pass (HANDLE)(intptr_t)fd; kmtshim
 * writes 1 to it when the event is set.  A host with real events (the Wine
 * half) installs its own operations; NULL restores the eventfd ones. */
typedef NTSTATUS (APIENTRY *PKMT_EVENT_VALIDATE)(HANDLE event);  /* STATUS_INVALID_HANDLE if bad */
typedef void (APIENTRY *PKMT_EVENT_SET)(HANDLE event);
KMTAPI void KmtSetEventCallbacks(PKMT_EVENT_VALIDATE validate, PKMT_EVENT_SET set);

/* D3DKMTWaitForSynchronizationObjectFromCpu with a timeout (Windows has
 * none: it waits forever or, with hAsyncEvent, not at all).  Returns
 * STATUS_TIMEOUT when the time ran out; timeout_ms < 0 waits forever. */
KMTAPI NTSTATUS KmtWaitForSynchronizationObjectFromCpuTimeout(
    const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU *desc, int timeout_ms);

/* Core objects alive in the process (adapters, handles' objects, devices,
 * resources, allocations): 0 after KmtProcessShutdown() means nothing leaked. */
KMTAPI unsigned KmtLiveObjectCount(void);

/* Is `handle` a live handle of this process's kmtshim, of any object type
 * (adapter, device, allocation, context, sync object, ...)?  An exact
 * lookup in the handle table: 0, a closed handle, a stale one whose slot
 * was reused and a value with another handle's instance bits (a global
 * share handle, a handle some other D3DKMT implementation made) are FALSE.
 * Never starts the process's dxgkrnl: before the first D3DKMT call and
 * after KmtProcessShutdown() it is FALSE for every value.  Another thread
 * may close the handle right after a TRUE.  A host that also reaches
 * another D3DKMT implementation (the Wine half's gdi32 proxy) routes a call
 * by it. */
KMTAPI BOOL KmtOwnsHandle(D3DKMT_HANDLE handle);

/* Device interface paths.  Every adapter has one in Windows' format for a
 * display adapter (GUID_DEVINTERFACE_DISPLAY_ADAPTER), from its PCI ids and
 * its location:
 *   \\?\PCI#VEN_1414&DEV_008C&SUBSYS_00000000&REV_00#SOFT0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}
 * D3DKMTOpenAdapterFromDeviceName takes it.  `chars` counts WCHARs,
 * KMT_DEVICE_PATH_MAX is always enough; STATUS_BUFFER_TOO_SMALL if not. */
#define KMT_DEVICE_PATH_MAX 256
KMTAPI NTSTATUS KmtQueryAdapterDeviceName(D3DKMT_HANDLE hAdapter, WCHAR *name, UINT chars);

/* The adapter a device interface path names (docs/architecture.md, "Display
 * names"): the adapters whose vendor and device ids the path gives, the one
 * with the path's instance among them, else the first in EnumAdapters2's
 * order; STATUS_INVALID_PARAMETER for a malformed path, one of another
 * interface class, or one naming no adapter, unless
 * KMT_DEVICE_PATH_DEFAULT_ADAPTER (then the first adapter EnumAdapters2
 * lists).  KMT_DEVICE_PATH_NEED_SOURCE: the adapter must have VidPn source
 * `source` (else STATUS_INVALID_PARAMETER).  KMT_DEVICE_PATH_NO_HANDLE:
 * only the LUID, no handle is opened (hAdapter may be NULL).  D3DKMT's
 * opens use it with flags 0; the Wine half maps Wine's displays with it. */
#define KMT_DEVICE_PATH_DEFAULT_ADAPTER 0x1u
#define KMT_DEVICE_PATH_NEED_SOURCE     0x2u
#define KMT_DEVICE_PATH_NO_HANDLE       0x4u
KMTAPI NTSTATUS KmtOpenAdapterFromDevicePath(const WCHAR *path, UINT flags, UINT source,
                                             D3DKMT_HANDLE *hAdapter, LUID *luid);

#ifdef __cplusplus
}
#endif

#endif /* KMTSHIM_KMTSHIM_H */
