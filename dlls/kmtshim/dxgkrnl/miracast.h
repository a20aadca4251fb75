/*
 * Miracast sessions: the core's side of DxgkDdiMiracast* (docs/miracast.md).
 *
 * Per adapter, one struct dxgk_miracast made on first use:
 *     class_lock   held across every Miracast-class DDI (CreateContext,
 *                  DestroyContext, IoControl): one at a time per adapter,
 *                  WDDM's level 2.  No other core lock is held across them,
 *                  so every other DDI keeps running.
 *     state_lock   the sessions' states and status; never held across a DDI,
 *                  so the miniport's callbacks (which take it) may come from
 *                  inside a Miracast DDI.
 * Lock order: class_lock > state_lock.
 *
 * A session walks STARTING -> ACTIVE -> STOPPING -> DESTROYED (a failed start
 * goes from STARTING to DESTROYED).  DESTROYED is set before the core waits
 * for class_lock to call DxgkDdiMiracastDestroyContext, and IoControl checks
 * the state again once it holds class_lock: every IoControl either returns
 * from the miniport before DestroyContext is called or never reaches it.
 */
#ifndef KMTSHIM_MIRACAST_H
#define KMTSHIM_MIRACAST_H

#include "kmtshim/kmtmiracast.h"
#include "dxgkrnl.h"

/* The session calls behind the Kmt* thunks; buffers are kernel-side copies. */
NTSTATUS dxgk_miracast_start_session(const KMT_MIRACAST_SESSION_DESC *desc,
                                     D3DKMT_HANDLE *session, UINT *target_id);
NTSTATUS dxgk_miracast_stop_session(D3DKMT_HANDLE h, KMT_MIRACAST_SESSION_STATUS *final_status);
NTSTATUS dxgk_miracast_io_control(D3DKMT_HANDLE h, void *in, UINT in_size, void *out,
                                  UINT out_size, UINT *returned);
NTSTATUS dxgk_miracast_query_status(D3DKMT_HANDLE h, KMT_MIRACAST_SESSION_STATUS *status);
NTSTATUS dxgk_miracast_report_status(D3DKMT_HANDLE h, MIRACAST_STATUS miracast_status,
                                     NTSTATUS status);

/* DxgkCbIndicateChildStatus for DXGKRNL_INTERFACE. */
void dxgk_miracast_callbacks(DXGKRNL_INTERFACE *iface);

/* Process exit: destroys every session's kernel context (without running
 * stop routines) and frees the adapters' Miracast state. */
void dxgk_miracast_process_shutdown(void);

#endif /* KMTSHIM_MIRACAST_H */
