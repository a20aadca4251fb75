/*
 * kmtshim.dll: WaitForVerticalBlankEvent2 with its events.
 *
 * The objects are the program's event handles, which the Linux half cannot
 * wait on.  So the vertical blank is waited for on a thread-pool thread
 * (the Linux half's plain wait, as natively without events), which sets an
 * event of its own when that wait ends, and the calling thread waits for
 * that event or the program's, whichever comes first: STATUS_WAIT_0 (or
 * the vblank wait's failure) for the first, STATUS_WAIT_0 + 1 + i for
 * event i (Microsoft's D3DKMTWaitForVerticalBlankEvent2 page).  A wait
 * an event ended leaves the vblank wait running until its vblank, or
 * teardown, ends it: the last of the two threads frees their state.
 */
#include "pe.h"

struct vblank_wait {
    D3DKMT_WAITFORVERTICALBLANKEVENT2 desc; /* NumObjects 0: the vblank alone */
    HANDLE done;                         /* set when the vblank wait ended */
    NTSTATUS status;
    LONG refs;                           /* the caller and the pool thread */
};

static void put(struct vblank_wait *w)
{
    if (InterlockedDecrement(&w->refs))
        return;
    CloseHandle(w->done);
    HeapFree(GetProcessHeap(), 0, w);
}

static DWORD WINAPI wait_thread(void *arg)
{
    struct vblank_wait *w = arg;

    w->status = kmt_call_desc(KMT_UNIX_WaitForVerticalBlankEvent2, &w->desc);
    SetEvent(w->done);
    put(w);
    return 0;
}

/* The vblank and the events at once; STATUS_NO_MEMORY when no thread or
 * event can be had for it. */
static NTSTATUS wait_any(const D3DKMT_WAITFORVERTICALBLANKEVENT2 *k)
{
    HANDLE objects[1 + D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS];
    struct vblank_wait *w;
    NTSTATUS status;
    DWORD which;

    if (!(w = HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, sizeof(*w))))
        return STATUS_NO_MEMORY;
    w->desc = *k;
    w->desc.NumObjects = 0;
    w->refs = 2;
    if (!(w->done = CreateEventW(NULL, TRUE, FALSE, NULL))) {
        HeapFree(GetProcessHeap(), 0, w);
        return STATUS_NO_MEMORY;
    }
    if (!QueueUserWorkItem(wait_thread, w, WT_EXECUTELONGFUNCTION)) {
        CloseHandle(w->done);
        HeapFree(GetProcessHeap(), 0, w);
        return STATUS_NO_MEMORY;
    }
    objects[0] = w->done;
    for (UINT i = 0; i < k->NumObjects; i++)
        objects[1 + i] = k->ObjectHandleArray[i];
    which = WaitForMultipleObjects(1 + k->NumObjects, objects, FALSE, INFINITE);
    if (which == WAIT_OBJECT_0)
        status = w->status;
    else if (which > WAIT_OBJECT_0 && which <= WAIT_OBJECT_0 + k->NumObjects)
        status = STATUS_WAIT_0 + which;
    else
        status = STATUS_INVALID_HANDLE;  /* an event closed during the wait */
    PE_TRACE("wait ended by object %lu: %#lx\n", (unsigned long)which, (unsigned long)status);
    put(w);
    return status;
}

/* An object that is no event is STATUS_INVALID_HANDLE, as natively.  A
 * bad adapter, device or source ends the pool thread's wait at once with
 * its status, which the caller returns unless one of its events was
 * signalled already. */
NTSTATUS pe_WaitForVerticalBlankEvent2(const D3DKMT_WAITFORVERTICALBLANKEVENT2 *desc)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT2 k;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)))      /* the core answers bad descriptors */
        return kmt_call_desc(KMT_UNIX_WaitForVerticalBlankEvent2, desc);
    k = *desc;
    if (k.NumObjects > D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS)
        return STATUS_INVALID_PARAMETER;
    for (UINT i = 0; i < k.NumObjects; i++)
        if (!k.ObjectHandleArray[i] || !kmt_pe_is_event(k.ObjectHandleArray[i])) {
            PE_TRACE("ObjectHandleArray[%u] %p is no event\n", i, k.ObjectHandleArray[i]);
            return STATUS_INVALID_HANDLE;
        }
    if (!k.NumObjects)
        return kmt_call_desc(KMT_UNIX_WaitForVerticalBlankEvent2, &k);
    return wait_any(&k);
}
