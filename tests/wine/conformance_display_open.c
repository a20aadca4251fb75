/*
 * Conformance: the display-based opens with Wine's own names and DCs.
 * Wine's displays (EnumDisplayDevicesW) and its GPU map to kmtshim's
 * adapters (docs/wine.md, "Display names and DCs"); the harness has only
 * the software adapter, with one source, so Wine's first display is its
 * source 0.  A refusal through the gdi32 proxy is Wine's to answer
 * (routing.txt's `first` rule): there the expected status is Wine's own.
 * user32 and gdi32 are loaded at run time (test_proxy_user32 must start
 * without them).
 */
#include "conformance_display_open.h"

static struct {
    BOOL (WINAPI *EnumDisplayDevicesW)(LPCWSTR, DWORD, DISPLAY_DEVICEW *, DWORD);
    HDC (WINAPI *GetDC)(HWND);
    int (WINAPI *ReleaseDC)(HWND, HDC);
    HDC (WINAPI *CreateDCW)(LPCWSTR, LPCWSTR, LPCWSTR, const DEVMODEW *);
    HDC (WINAPI *CreateCompatibleDC)(HDC);
    BOOL (WINAPI *DeleteDC)(HDC);
} w;

static BOOL load_win32(void)
{
    HMODULE user32 = LoadLibraryA("user32.dll"), gdi32 = LoadLibraryA("gdi32.dll");

    if (!user32 || !gdi32)
        return FALSE;
    w.EnumDisplayDevicesW = (void *)GetProcAddress(user32, "EnumDisplayDevicesW");
    w.GetDC = (void *)GetProcAddress(user32, "GetDC");
    w.ReleaseDC = (void *)GetProcAddress(user32, "ReleaseDC");
    w.CreateDCW = (void *)GetProcAddress(gdi32, "CreateDCW");
    w.CreateCompatibleDC = (void *)GetProcAddress(gdi32, "CreateCompatibleDC");
    w.DeleteDC = (void *)GetProcAddress(gdi32, "DeleteDC");
    return w.EnumDisplayDevicesW && w.GetDC && w.ReleaseDC && w.CreateDCW && w.CreateCompatibleDC && w.DeleteDC;
}

/* The soft adapter's LUID, or FALSE (skipped). */
static BOOL soft_luid(LUID *luid)
{
    if (!soft_adapter_here(luid))
        return FALSE;
    if (!load_win32()) {
        ok(FALSE, "user32/gdi32 functions missing\n");
        return FALSE;
    }
    return TRUE;
}

/* Wine's first display and the soft adapter's LUID, or FALSE (skipped). */
static BOOL first_display(DISPLAY_DEVICEW *dd, LUID *luid)
{
    if (!soft_luid(luid))
        return FALSE;
    dd->cb = sizeof(*dd);
    if (!w.EnumDisplayDevicesW(NULL, 0, dd, 0)) {
        skip("Wine lists no display\n");
        return FALSE;
    }
    return TRUE;
}

/* A successful open: a local handle of the soft adapter, usable, source 0.
 * (A macro: the descriptor's outputs are read after the call.) */
#define check_opened(what, call, desc, want, source) do {                       \
        NTSTATUS status_ = (call);                                              \
        opened(what, status_, (desc).hAdapter, (desc).AdapterLuid, want, source); \
    } while (0)

static void opened(const char *what, NTSTATUS status, D3DKMT_HANDLE h, LUID got, LUID want, UINT source)
{
    D3DKMT_HANDLE device;

    ok(status == STATUS_SUCCESS, "%s: %#lx\n", what, (unsigned long)status);
    if (status)
        return;
    ok(is_local_handle(h), "%s: hAdapter %#x\n", what, h);
    ok(got.LowPart == want.LowPart && got.HighPart == want.HighPart, "%s: LUID %08lx:%08lx\n", what,
       (unsigned long)got.HighPart, (unsigned long)got.LowPart);
    ok(source == 0, "%s: VidPnSourceId %u\n", what, source);
    if ((device = kmt_create_device(h)))
        kmt_destroy_device(device);
    kmt_close_adapter(h);
}

static D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME gdi_name(const WCHAR *name)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;

    memset(&o, 0, sizeof(o));
    lstrcpynW(o.DeviceName, name, 32);
    return o;
}

void kmtc_display_names(void)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;
    DISPLAY_DEVICEW dd = { sizeof(dd) };
    WCHAR lower[32];
    LUID luid;

    if (!first_display(&dd, &luid))
        return;
    trace("Wine's first display: %ls, GPU %ls (%ls)\n", dd.DeviceName, dd.DeviceID, dd.DeviceString);
    o = gdi_name(dd.DeviceName);
    check_opened("first display", kmt_api.OpenAdapterFromGdiDisplayName(&o), o, luid, o.VidPnSourceId);
    lstrcpynW(lower, dd.DeviceName, 32);
    for (WCHAR *c = lower; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c += 'a' - 'A';
    o = gdi_name(lower);
    check_opened("first display, lower case", kmt_api.OpenAdapterFromGdiDisplayName(&o), o, luid,
                 o.VidPnSourceId);

    expect_status(kmt_api.OpenAdapterFromGdiDisplayName(NULL), STATUS_INVALID_PARAMETER);
    expect_refused(OpenAdapterFromGdiDisplayName, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME, gdi_name(L""));
    expect_refused(OpenAdapterFromGdiDisplayName, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME,
                   gdi_name(L"\\\\.\\DISPLAY0"));
    expect_refused(OpenAdapterFromGdiDisplayName, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME,
                   gdi_name(L"\\\\.\\DISPLAY99"));
    expect_refused(OpenAdapterFromGdiDisplayName, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME, gdi_name(L"DISPLAY1"));
    memset(&o, 0, sizeof(o));
    for (int i = 0; i < 32; i++)
        o.DeviceName[i] = 'A';
    expect_refused(OpenAdapterFromGdiDisplayName, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME, o);
}

static void check_hdc(const char *what, HDC hdc, LUID luid)
{
    D3DKMT_OPENADAPTERFROMHDC o = from_hdc(hdc);

    ok(hdc != NULL, "%s: no DC\n", what);
    if (hdc)
        check_opened(what, kmt_api.OpenAdapterFromHdc(&o), o, luid, o.VidPnSourceId);
}

void kmtc_display_dcs(void)
{
    HDC screen, display, memory;
    LUID luid;

    if (!soft_luid(&luid))
        return;
    display = w.CreateDCW(L"DISPLAY", NULL, NULL, NULL);
    check_hdc("CreateDCW(DISPLAY)", display, luid);
    screen = w.GetDC(NULL);
    check_hdc("GetDC(NULL)", screen, luid);

    memory = w.CreateCompatibleDC(NULL);
    ok(memory != NULL, "no memory DC\n");
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(memory));
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(NULL));
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc((HDC)(ULONG_PTR)0x2a01dead));
    expect_status(kmt_api.OpenAdapterFromHdc(NULL), STATUS_INVALID_PARAMETER);

    w.DeleteDC(memory);
    w.ReleaseDC(NULL, screen);
    w.DeleteDC(display);
}

static D3DKMT_OPENADAPTERFROMDEVICENAME from_path(const WCHAR *path)
{
    D3DKMT_OPENADAPTERFROMDEVICENAME o;

    memset(&o, 0, sizeof(o));
    o.pDeviceName = path;
    return o;
}

void kmtc_display_device_names(void)
{
    static const WCHAR guid[] = L"{5b45201d-f2f2-4f3b-85bb-30ff1f953599}";
    DISPLAY_DEVICEW dd = { sizeof(dd) }, monitor = { sizeof(monitor) };
    WCHAR path[300];
    D3DKMT_OPENADAPTERFROMDEVICENAME o;
    LUID luid;
    int n;

    if (!first_display(&dd, &luid))
        return;
    /* Wine's GPU as a device interface path: its PCI hardware id, '\' as '#' */
    lstrcpyW(path, L"\\\\?\\");
    n = lstrlenW(path);
    for (const WCHAR *p = dd.DeviceID; *p && n < 200; p++)
        path[n++] = *p == '\\' ? '#' : *p;
    path[n] = 0;
    lstrcatW(path, L"#0#");
    lstrcatW(path, guid);
    trace("Wine's GPU as a path: %ls\n", path);
    if (CompareStringOrdinal(dd.DeviceID, 4, L"PCI\\", 4, TRUE) == CSTR_EQUAL) {
        o = from_path(path);
        check_opened("Wine's GPU path", kmt_api.OpenAdapterFromDeviceName(&o), o, luid, 0);
    } else {
        skip("Wine's GPU id %ls is not PCI's\n", dd.DeviceID);
    }
    /* the interface name Wine gives a display's monitor: another class */
    if (w.EnumDisplayDevicesW(dd.DeviceName, 0, &monitor, EDD_GET_DEVICE_INTERFACE_NAME) && monitor.DeviceID[0]) {
        trace("monitor interface: %ls\n", monitor.DeviceID);
        expect_refused(OpenAdapterFromDeviceName, D3DKMT_OPENADAPTERFROMDEVICENAME, from_path(monitor.DeviceID));
    }
    expect_status(kmt_api.OpenAdapterFromDeviceName(NULL), STATUS_INVALID_PARAMETER);
    expect_refused(OpenAdapterFromDeviceName, D3DKMT_OPENADAPTERFROMDEVICENAME, from_path(NULL));
    expect_refused(OpenAdapterFromDeviceName, D3DKMT_OPENADAPTERFROMDEVICENAME, from_path(L""));
    expect_refused(OpenAdapterFromDeviceName, D3DKMT_OPENADAPTERFROMDEVICENAME, from_path(L"\\\\.\\DISPLAY1"));
    expect_refused(OpenAdapterFromDeviceName, D3DKMT_OPENADAPTERFROMDEVICENAME,
                   from_path(L"\\\\?\\PCI#VEN_1414&DEV_008C#0#{e6f07b5f-ee97-4a90-b076-33f57bf4eaa7}"));
}
