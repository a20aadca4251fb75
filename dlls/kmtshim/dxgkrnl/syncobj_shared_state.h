/*
 * The state of a mutex, semaphore or legacy fence made with Flags.Shared:
 * one state for every process that opened it, in the object's shared page
 * (shared_fence.h), changed with compare-and-swap so that a GPU wait in
 * one process and a signal or wait in another never both win.
 *
 * A mutex's owner is the broker's holder word: the client id of the
 * process whose context took it, 0 when free.  When that process dies,
 * the broker marks the word abandoned and wakes it; an abandoned mutex is
 * free to the next waiter, as one whose owning context was destroyed.
 * A semaphore's count and a legacy fence's value are the page's value.
 *
 * The callers hold obj->lock, which orders this process's uses; a change
 * that may release another process's wait wakes its watcher
 * (dxgk_shared_fence_stored).
 */
#ifndef KMTSHIM_SYNCOBJ_SHARED_STATE_H
#define KMTSHIM_SYNCOBJ_SHARED_STATE_H

#include "sync.h"

/* A new page for a mutex, semaphore or fence being shared, holding the
 * initial count or value of `info`; *fd (the caller's) names it for the
 * broker. */
NTSTATUS dxgk_shared_state_create(struct dxgk_syncobj *obj, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                                  int *fd);
/* Registered with the broker: a mutex learns this process's id on
 * obj->broker_connection and, made with InitialState TRUE, becomes this
 * process's.  STATUS_DEVICE_REMOVED if that connection ended meanwhile. */
NTSTATUS dxgk_shared_state_registered(struct dxgk_syncobj *obj, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info);
/* Maps the page another process made (fd is not consumed); a mutex
 * learns its id as above (obj->broker_connection set first). */
NTSTATUS dxgk_shared_state_map(struct dxgk_syncobj *obj, int fd);

/* Whether a GPU wait for `value`, naming the object `uses` times, would
 * be satisfied now (a look, nothing taken). */
bool dxgk_shared_state_ready(struct dxgk_syncobj *obj, UINT64 value, UINT uses);
/* Takes one use (a mutex's ownership, one semaphore count); false if
 * another process took it first.  A legacy fence has nothing to take. */
bool dxgk_shared_state_take(struct dxgk_syncobj *obj);
/* Gives back what a take took, for a wait that could not take all. */
void dxgk_shared_state_untake(struct dxgk_syncobj *obj);
/* A signal: releases the mutex, adds one count up to MaxCount, raises
 * the fence to `value`. */
void dxgk_shared_state_signal(struct dxgk_syncobj *obj, UINT64 value);
/* This process's owning context is gone: the mutex is free again if this
 * process still owns it. */
void dxgk_shared_state_disown(struct dxgk_syncobj *obj);

#endif /* KMTSHIM_SYNCOBJ_SHARED_STATE_H */
