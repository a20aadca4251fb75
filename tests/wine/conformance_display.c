/*
 * Conformance: VidPn source ownership (SetVidPnSourceOwner,
 * CheckVidPnExclusiveOwnership, CheckExclusiveOwnership), CheckOcclusion's
 * bad input, the process scheduling priority class, the vertical blank
 * (WaitForVerticalBlankEvent(2), GetScanLine, PollDisplayChildren) and
 * D3DKMTPresent's bad input and Blt, as a Windows program sees them.  The rows are the notes' "VidPn source ownership and
 * occlusion"; the harness gives the software adapter one source
 * (KMTSHIM_SOFT_SOURCES=1), a single-monitor system.
 */
#include "conformance.h"

#define EXCLUSIVE D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVE
#define EMULATED D3DKMT_VIDPNSOURCEOWNER_EMULATED
#define SHARED D3DKMT_VIDPNSOURCEOWNER_SHARED

static NTSTATUS set_owner(D3DKMT_HANDLE device, D3DKMT_VIDPNSOURCEOWNER_TYPE type, UINT source)
{
    D3DDDI_VIDEO_PRESENT_SOURCE_ID id = source;
    D3DKMT_SETVIDPNSOURCEOWNER s = { device, &type, &id, 1 };

    return kmt_api.SetVidPnSourceOwner(&s);
}

static NTSTATUS clear_owner(D3DKMT_HANDLE device)
{
    D3DKMT_SETVIDPNSOURCEOWNER s = { device, NULL, NULL, 0 };

    return kmt_api.SetVidPnSourceOwner(&s);
}

static NTSTATUS check(D3DKMT_HANDLE adapter, UINT source)
{
    D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP c = { adapter, source };

    return kmt_api.CheckVidPnExclusiveOwnership(&c);
}

/* The adapter has a source to own (the harness's one). */
static BOOL open_display(D3DKMT_HANDLE *adapter, D3DKMT_HANDLE *device)
{
    LUID luid;

    if (!(*adapter = kmt_open_soft_adapter(&luid))) {
        skip("no software adapter through %s\n", kmt_api_via);
        return FALSE;
    }
    if (check(*adapter, 0) == (NTSTATUS)STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE) {
        skip("the software adapter has no VidPn source (KMTSHIM_SOFT_SOURCES)\n");
        kmt_close_adapter(*adapter);
        return FALSE;
    }
    *device = kmt_create_device(*adapter);
    return *device != 0;
}

void kmtc_vidpn_ownership(void)
{
    D3DKMT_HANDLE adapter, device;

    if (!open_display(&adapter, &device))
        return;
    ok(kmt_api.CheckExclusiveOwnership() == FALSE, "CheckExclusiveOwnership: owned before any owner\n");
    expect_status(set_owner(device, D3DKMT_VIDPNSOURCEOWNER_UNOWNED, 0), STATUS_SUCCESS);
    expect_status(set_owner(device, SHARED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    expect_status(set_owner(device, D3DKMT_VIDPNSOURCEOWNER_EXCLUSIVEGDI, 0), STATUS_INVALID_PARAMETER);
    expect_status(set_owner(device, (D3DKMT_VIDPNSOURCEOWNER_TYPE)(EMULATED + 1), 0), STATUS_INVALID_PARAMETER);
    expect_status(check(adapter, 0), STATUS_SUCCESS);

    /* EXCLUSIVE: the source is occluded, and stays so when asked again */
    expect_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    expect_status(check(adapter, 0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    ok(kmt_api.CheckExclusiveOwnership() == TRUE, "CheckExclusiveOwnership: not owned under EXCLUSIVE\n");
    expect_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    expect_status(set_owner(device, SHARED, 0), STATUS_INVALID_PARAMETER);
    expect_status(set_owner(device, EMULATED, 0), STATUS_INVALID_PARAMETER);
    expect_status(check(adapter, 0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    expect_status(clear_owner(device), STATUS_SUCCESS);
    expect_status(check(adapter, 0), STATUS_SUCCESS);
    ok(kmt_api.CheckExclusiveOwnership() == FALSE, "CheckExclusiveOwnership: owned after clearing\n");

    /* EMULATED: owned, not occluded */
    expect_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
    expect_status(check(adapter, 0), STATUS_SUCCESS);
    expect_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
    expect_status(set_owner(device, SHARED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    expect_status(set_owner(device, EXCLUSIVE, 0), STATUS_INVALID_PARAMETER);
    expect_status(clear_owner(device), STATUS_SUCCESS);

    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

void kmtc_vidpn_two_devices(void)
{
    D3DKMT_HANDLE adapter, device, other;

    if (!open_display(&adapter, &device))
        return;
    other = kmt_create_device(adapter);
    expect_status(set_owner(device, EXCLUSIVE, 0), STATUS_SUCCESS);
    expect_status(set_owner(other, EXCLUSIVE, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    expect_status(set_owner(other, EMULATED, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    /* clearing from the non-owner changes nothing */
    expect_status(clear_owner(other), STATUS_SUCCESS);
    expect_status(check(adapter, 0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    expect_status(clear_owner(device), STATUS_SUCCESS);

    expect_status(set_owner(device, EMULATED, 0), STATUS_SUCCESS);
    expect_status(set_owner(other, EXCLUSIVE, 0), STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
    /* destroying the owner releases the source */
    kmt_destroy_device(device);
    expect_status(set_owner(other, EXCLUSIVE, 0), STATUS_SUCCESS);
    expect_status(check(adapter, 0), STATUS_GRAPHICS_PRESENT_OCCLUDED);
    kmt_destroy_device(other);
    expect_status(check(adapter, 0), STATUS_SUCCESS);
    ok(kmt_api.CheckExclusiveOwnership() == FALSE, "CheckExclusiveOwnership: owned after the owner went\n");
    kmt_close_adapter(adapter);
}

void kmtc_vidpn_bad_input(void)
{
    D3DKMT_SETVIDPNSOURCEOWNER zero_set = { 0 };
    D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP zero_check = { 0 };
    D3DKMT_CHECKOCCLUSION zero_occlusion = { 0 };
    D3DKMT_HANDLE adapter, device;

    expect_status(kmt_api.SetVidPnSourceOwner(&zero_set), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CheckVidPnExclusiveOwnership(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CheckVidPnExclusiveOwnership(&zero_check), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CheckOcclusion(NULL), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CheckOcclusion(&zero_occlusion), STATUS_INVALID_PARAMETER);
    if (!open_display(&adapter, &device))
        return;
    /* past the adapter's one source */
    expect_status(set_owner(device, EXCLUSIVE, 1), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    expect_status(check(adapter, 1), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    expect_status(check(adapter, 0), STATUS_SUCCESS);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

void kmtc_priority_class(void)
{
    D3DKMT_SCHEDULINGPRIORITYCLASS c = (D3DKMT_SCHEDULINGPRIORITYCLASS)0x55;

    expect_status(kmt_api.GetProcessSchedulingPriorityClass(GetCurrentProcess(), &c), STATUS_SUCCESS);
    ok(c == D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL, "class %d, expected NORMAL\n", (int)c);
    expect_status(kmt_api.SetProcessSchedulingPriorityClass(GetCurrentProcess(),
                                                            D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH),
                  STATUS_SUCCESS);
    expect_status(kmt_api.GetProcessSchedulingPriorityClass(NULL, &c), STATUS_SUCCESS);
    ok(c == D3DKMT_SCHEDULINGPRIORITYCLASS_HIGH, "class %d, expected HIGH\n", (int)c);
    expect_status(kmt_api.SetProcessSchedulingPriorityClass(GetCurrentProcess(),
                                                            (D3DKMT_SCHEDULINGPRIORITYCLASS)6),
                  STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.GetProcessSchedulingPriorityClass(GetCurrentProcess(), NULL),
                  STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.SetProcessSchedulingPriorityClass(GetCurrentProcess(),
                                                            D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL),
                  STATUS_SUCCESS);
    expect_status(kmt_api.GetProcessSchedulingPriorityClass(GetCurrentProcess(), &c), STATUS_SUCCESS);
    ok(c == D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL, "class %d, expected NORMAL\n", (int)c);
}

/* ---- vertical blank, scan line, children ------------------------------------- */

static NTSTATUS wait_vblank(D3DKMT_HANDLE adapter, D3DKMT_HANDLE device, UINT source)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { adapter, device, source };

    return kmt_api.WaitForVerticalBlankEvent(&w);
}

static NTSTATUS scan_line(D3DKMT_HANDLE adapter, UINT source, D3DKMT_GETSCANLINE *sl)
{
    memset(sl, 0xcc, sizeof(*sl));
    sl->hAdapter = adapter;
    sl->VidPnSourceId = source;
    return kmt_api.GetScanLine(sl);
}

void kmtc_vblank(void)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT2 w2;
    D3DKMT_POLLDISPLAYCHILDREN poll;
    D3DKMT_HANDLE adapter, device;
    D3DKMT_GETSCANLINE sl;
    HANDLE event, set;
    LARGE_INTEGER freq, start, end;
    double ms;

    if (!open_display(&adapter, &device))
        return;
    /* ten waits cross ten blanks of a 60 Hz output: at least nine frames,
     * 150 ms.  Timed with the performance counter: Wine's GetTickCount
     * moves in steps, which can eat the margin below that. */
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&start);
    for (unsigned i = 0; i < 10; i++)
        expect_status(wait_vblank(adapter, i % 2 ? device : 0, 0), STATUS_SUCCESS);
    QueryPerformanceCounter(&end);
    ms = (double)(end.QuadPart - start.QuadPart) * 1000.0 / (double)freq.QuadPart;
    ok(ms >= 140.0, "ten blanks took %.1f ms\n", ms);

    memset(&w2, 0, sizeof(w2));
    w2.hAdapter = adapter;
    w2.hDevice = device;
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_WAIT_0);
    event = CreateEventA(NULL, FALSE, FALSE, NULL);
    w2.NumObjects = 1;
    w2.ObjectHandleArray[0] = event;
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_WAIT_0);
    /* a signalled event ends the wait: STATUS_WAIT_1 + its index */
    set = CreateEventA(NULL, TRUE, TRUE, NULL);
    w2.NumObjects = 2;
    w2.ObjectHandleArray[1] = set;
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_WAIT_0 + 2);
    ok(WaitForSingleObject(set, 0) == WAIT_OBJECT_0, "the manual-reset event was reset\n");
    SetEvent(event);
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_WAIT_0 + 1);
    ok(WaitForSingleObject(event, 0) == WAIT_TIMEOUT, "the auto-reset event stayed set\n");
    CloseHandle(set);
    CloseHandle(event);

    expect_status(scan_line(adapter, 0, &sl), STATUS_SUCCESS);
    ok(sl.ScanLine < 1125, "scan line %u\n", sl.ScanLine);
    ok(sl.InVerticalBlank == (sl.ScanLine >= 1080), "line %u, InVerticalBlank %u\n", sl.ScanLine,
       sl.InVerticalBlank);

    memset(&poll, 0, sizeof(poll));
    poll.hAdapter = adapter;
    expect_status(kmt_api.PollDisplayChildren(&poll), STATUS_SUCCESS);
    poll.NonDestructiveOnly = 1;
    poll.SynchronousPolling = 1;
    expect_status(kmt_api.PollDisplayChildren(&poll), STATUS_SUCCESS);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

void kmtc_vblank_bad_input(void)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT zero_wait = { 0 };
    D3DKMT_WAITFORVERTICALBLANKEVENT2 w2;
    D3DKMT_GETSCANLINE zero_sl = { 0 }, sl;
    D3DKMT_POLLDISPLAYCHILDREN poll = { 0 };
    D3DKMT_HANDLE adapter, device;

    expect_status(kmt_api.WaitForVerticalBlankEvent(&zero_wait), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.GetScanLine(&zero_sl), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.PollDisplayChildren(&poll), STATUS_INVALID_PARAMETER);
    if (!open_display(&adapter, &device))
        return;
    /* past the adapter's one source */
    expect_status(wait_vblank(adapter, 0, 1), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    expect_status(scan_line(adapter, 1, &sl), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    ok(sl.ScanLine == 0xccccccccu, "ScanLine written on failure: %u\n", sl.ScanLine);
    /* a device handle given as the adapter, an adapter as the device */
    expect_status(wait_vblank(device, 0, 0), STATUS_INVALID_PARAMETER);
    expect_status(wait_vblank(adapter, adapter, 0), STATUS_INVALID_PARAMETER);

    memset(&w2, 0, sizeof(w2));
    w2.hAdapter = adapter;
    w2.NumObjects = D3DKMT_MAX_WAITFORVERTICALBLANK_OBJECTS + 1;
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_INVALID_PARAMETER);
    w2.NumObjects = 1;                   /* a NULL event */
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_INVALID_HANDLE);
    w2.ObjectHandleArray[0] = (HANDLE)(ULONG_PTR)0xdead0;
    expect_status(kmt_api.WaitForVerticalBlankEvent2(&w2), STATUS_INVALID_HANDLE);

    poll.hAdapter = adapter;
    ((UINT *)&poll)[1] = 1u << 5;        /* a Reserved bit */
    expect_status(kmt_api.PollDisplayChildren(&poll), STATUS_INVALID_PARAMETER);
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}

/* Fills (value != -1) or checks one byte of each pixel row of the Blt. */
static BOOL pixels(D3DKMT_HANDLE device, D3DKMT_HANDLE alloc, int value, int check)
{
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { device, alloc };
    unsigned char *p;
    BOOL same = TRUE;

    lock.hDevice = device;
    lock.hAllocation = alloc;
    expect_status(kmt_api.Lock2(&lock), STATUS_SUCCESS);
    if (!(p = lock.pData))
        return FALSE;
    for (unsigned row = 0; row < 2; row++)
        for (unsigned x = 0; x < 8 * 4; x++) {
            if (value >= 0)
                p[row * 1920 * 4 + x] = (unsigned char)value;
            else
                same &= p[row * 1920 * 4 + x] == check;
        }
    expect_status(kmt_api.Unlock2(&unlock), STATUS_SUCCESS);
    return same;
}

/* D3DKMTPresent: bad input, and a Blt whose bytes a Lock then sees (the
 * software adapter's surfaces have the rows of its 1920-pixel mode). */
void kmtc_present(void)
{
    D3DKMT_HANDLE adapter, device, src, dst;
    D3DKMT_PRESENT p;

    expect_status(kmt_api.Present(NULL), STATUS_INVALID_PARAMETER);
    memset(&p, 0, sizeof(p));
    expect_status(kmt_api.Present(&p), STATUS_INVALID_PARAMETER);
    if (!open_display(&adapter, &device))
        return;
    src = kmt_create_soft_allocation(device, 16384, NULL);
    dst = kmt_create_soft_allocation(device, 16384, NULL);
    memset(&p, 0, sizeof(p));
    p.hDevice = device;
    p.hSource = src;
    p.hDestination = dst;
    expect_status(kmt_api.Present(&p), STATUS_INVALID_PARAMETER);       /* neither Blt nor Flip */
    p.Flags.Blt = 1;
    p.Flags.SrcRectValid = p.Flags.DstRectValid = 1;
    SetRect(&p.SrcRect, 0, 0, 8, 2);
    SetRect(&p.DstRect, 0, 0, 8, 2);
    p.VidPnSourceId = 1;
    expect_status(kmt_api.Present(&p), STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    p.VidPnSourceId = 0;
    p.hDestination = device;
    expect_status(kmt_api.Present(&p), STATUS_INVALID_PARAMETER);
    p.hDestination = dst;
    pixels(device, src, 0x3c, 0);
    pixels(device, dst, 0x00, 0);
    expect_status(kmt_api.Present(&p), STATUS_SUCCESS);
    ok(pixels(device, dst, -1, 0x3c), "the Blt's bytes did not arrive\n");
    kmt_destroy_device(device);
    kmt_close_adapter(adapter);
}
