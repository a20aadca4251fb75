/*
 * Conformance: OpenAdapterFromHdc with the DCs programs pass (an OpenGL
 * ICD, Moonlight): a window's DC, its window DC, a GetDCEx or BeginPaint
 * DC, a child window's and a CS_OWNDC window's DC, a window on each
 * monitor and one right of them all (the nearest monitor's); each opens
 * what the open by its display's GDI name opens.  And
 * the DCs of no display: metafile, enhanced-metafile, printer, deleted,
 * a destroyed window's own DC.  Headless Wine 8 creates no windows, so the
 * window rows run under Xvfb (window-dc-xvfb.sh) and skip in the headless
 * harness.  user32, gdi32 and winspool are loaded at run time
 * (test_proxy_user32 must start without them).
 */
#include <stdio.h>

#include "conformance_display_open.h"

static struct {
    ATOM (WINAPI *RegisterClassExW)(const WNDCLASSEXW *);
    BOOL (WINAPI *UnregisterClassW)(LPCWSTR, HINSTANCE);
    HWND (WINAPI *CreateWindowExW)(DWORD, LPCWSTR, LPCWSTR, DWORD, int, int, int, int, HWND, HMENU,
                                   HINSTANCE, LPVOID);
    BOOL (WINAPI *DestroyWindow)(HWND);
    BOOL (WINAPI *GetWindowRect)(HWND, RECT *);
    LRESULT (WINAPI *DefWindowProcW)(HWND, UINT, WPARAM, LPARAM);
    HDC (WINAPI *GetDC)(HWND);
    HDC (WINAPI *GetDCEx)(HWND, HRGN, DWORD);
    HDC (WINAPI *GetWindowDC)(HWND);
    int (WINAPI *ReleaseDC)(HWND, HDC);
    BOOL (WINAPI *InvalidateRect)(HWND, const RECT *, BOOL);
    HDC (WINAPI *BeginPaint)(HWND, PAINTSTRUCT *);
    BOOL (WINAPI *EndPaint)(HWND, const PAINTSTRUCT *);
    BOOL (WINAPI *EnumDisplayMonitors)(HDC, const RECT *, MONITORENUMPROC, LPARAM);
    BOOL (WINAPI *GetMonitorInfoW)(HMONITOR, MONITORINFO *);
    HDC (WINAPI *CreateDCW)(LPCWSTR, LPCWSTR, LPCWSTR, const DEVMODEW *);
    BOOL (WINAPI *DeleteDC)(HDC);
    HDC (WINAPI *CreateMetaFileW)(LPCWSTR);
    HMETAFILE (WINAPI *CloseMetaFile)(HDC);
    BOOL (WINAPI *DeleteMetaFile)(HMETAFILE);
    HDC (WINAPI *CreateEnhMetaFileW)(HDC, LPCWSTR, const RECT *, LPCWSTR);
    HENHMETAFILE (WINAPI *CloseEnhMetaFile)(HDC);
    BOOL (WINAPI *DeleteEnhMetaFile)(HENHMETAFILE);
    BOOL (WINAPI *GetDefaultPrinterW)(LPWSTR, LPDWORD);
} w;

#define LOAD(module, name) ((w.name = (void *)GetProcAddress(module, #name)) != NULL)

static BOOL load_win32(void)
{
    HMODULE user32 = LoadLibraryA("user32.dll"), gdi32 = LoadLibraryA("gdi32.dll");
    HMODULE winspool = LoadLibraryA("winspool.drv");

    /* optional: a printer DC row where a printer is installed */
    w.GetDefaultPrinterW = winspool ? (void *)GetProcAddress(winspool, "GetDefaultPrinterW") : NULL;
    return user32 && gdi32 && LOAD(user32, RegisterClassExW) && LOAD(user32, UnregisterClassW) &&
           LOAD(user32, CreateWindowExW) && LOAD(user32, DestroyWindow) && LOAD(user32, GetWindowRect) &&
           LOAD(user32, DefWindowProcW) && LOAD(user32, GetDC) && LOAD(user32, GetDCEx) && LOAD(user32, GetWindowDC) &&
           LOAD(user32, ReleaseDC) && LOAD(user32, InvalidateRect) && LOAD(user32, BeginPaint) &&
           LOAD(user32, EndPaint) && LOAD(user32, EnumDisplayMonitors) && LOAD(user32, GetMonitorInfoW) &&
           LOAD(gdi32, CreateDCW) && LOAD(gdi32, DeleteDC) &&
           LOAD(gdi32, CreateMetaFileW) && LOAD(gdi32, CloseMetaFile) && LOAD(gdi32, DeleteMetaFile) &&
           LOAD(gdi32, CreateEnhMetaFileW) && LOAD(gdi32, CloseEnhMetaFile) && LOAD(gdi32, DeleteEnhMetaFile);
}

/* The soft adapter is there and the functions are loaded, or FALSE (skipped). */
static BOOL ready(void)
{
    LUID luid;

    if (!soft_adapter_here(&luid))
        return FALSE;
    if (!load_win32()) {
        ok(FALSE, "user32/gdi32 functions missing\n");
        return FALSE;
    }
    return TRUE;
}

struct display_open open_by_name(const WCHAR *name)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;
    struct display_open r = { 0 };

    memset(&o, 0, sizeof(o));
    lstrcpynW(o.DeviceName, name, 32);
    r.status = kmt_api.OpenAdapterFromGdiDisplayName(&o);
    if (!r.status) {
        r.luid = o.AdapterLuid;
        r.source = o.VidPnSourceId;
        kmt_close_adapter(o.hAdapter);
    }
    return r;
}

/* `hdc` opens what `want` (the open by its display's name) opened: the
 * status, the LUID, the source, and an adapter handle a device can be
 * created on. */
static void check_same_display(const char *what, HDC hdc, struct display_open want)
{
    D3DKMT_OPENADAPTERFROMHDC o = from_hdc(hdc);
    D3DKMT_HANDLE device;
    NTSTATUS status;

    ok(hdc != NULL, "%s: no DC\n", what);
    if (!hdc)
        return;
    status = kmt_api.OpenAdapterFromHdc(&o);
    ok(status == want.status, "%s: %#lx, the open by name %#lx\n", what, (unsigned long)status,
       (unsigned long)want.status);
    if (status)
        return;
    ok(is_local_handle(o.hAdapter), "%s: hAdapter %#x\n", what, o.hAdapter);
    ok(o.AdapterLuid.LowPart == want.luid.LowPart && o.AdapterLuid.HighPart == want.luid.HighPart,
       "%s: LUID %08lx:%08lx, by name %08lx:%08lx\n", what, (unsigned long)o.AdapterLuid.HighPart,
       (unsigned long)o.AdapterLuid.LowPart, (unsigned long)want.luid.HighPart,
       (unsigned long)want.luid.LowPart);
    ok(o.VidPnSourceId == want.source, "%s: VidPnSourceId %u, by name %u\n", what, o.VidPnSourceId,
       want.source);
    device = kmt_create_device(o.hAdapter);
    ok(device != 0, "%s: no device\n", what);
    if (device)
        kmt_destroy_device(device);
    kmt_close_adapter(o.hAdapter);
}

static const WCHAR class_name[] = L"kmtshim_window_dc", own_class_name[] = L"kmtshim_own_dc";

static BOOL register_classes(void)
{
    WNDCLASSEXW wc;

    memset(&wc, 0, sizeof(wc));
    wc.cbSize = sizeof(wc);
    wc.lpfnWndProc = w.DefWindowProcW;
    wc.hInstance = GetModuleHandleW(NULL);
    wc.lpszClassName = class_name;
    if (!w.RegisterClassExW(&wc))
        return FALSE;
    wc.style = CS_OWNDC;
    wc.lpszClassName = own_class_name;
    return w.RegisterClassExW(&wc) != 0;
}

static void unregister_classes(void)
{
    w.UnregisterClassW(class_name, GetModuleHandleW(NULL));
    w.UnregisterClassW(own_class_name, GetModuleHandleW(NULL));
}

static HWND window(const WCHAR *cls, DWORD style, int x, int y, HWND parent)
{
    return w.CreateWindowExW(0, cls, L"kmtshim", style | WS_VISIBLE, x, y, KMTC_WINDOW_SIDE, KMTC_WINDOW_SIDE,
                             parent, NULL, GetModuleHandleW(NULL), NULL);
}

static BOOL CALLBACK add_monitor(HMONITOR monitor, HDC hdc, RECT *rect, LPARAM param)
{
    struct monitors *m = (struct monitors *)param;

    (void)hdc;
    (void)rect;
    if (m->count == KMTC_MAX_MONITORS)
        return FALSE;
    m->info[m->count].cbSize = sizeof(m->info[0]);
    if (w.GetMonitorInfoW(monitor, (MONITORINFO *)&m->info[m->count]))
        m->count++;
    return TRUE;
}

void windc_monitors(struct monitors *m)
{
    m->count = 0;
    ok(w.EnumDisplayMonitors(NULL, NULL, add_monitor, (LPARAM)m) && m->count, "no monitor listed\n");
    trace("%u monitor(s)\n", m->count);
}

void check_window_at(const char *what, int x, int y, struct display_open want)
{
    HWND hwnd = window(class_name, WS_POPUP, x, y, NULL);
    HDC hdc = hwnd ? w.GetDC(hwnd) : NULL;
    RECT r = { 0 };

    ok(hwnd != NULL, "%s: no window: error %lu\n", what, GetLastError());
    /* the rule is about where the window is: it must be where it was put */
    if (hwnd)
        ok(w.GetWindowRect(hwnd, &r) && r.left == x && r.top == y, "%s: window at (%ld,%ld), put at (%d,%d)\n",
           what, r.left, r.top, x, y);
    check_same_display(what, hdc, want);
    if (hdc)
        w.ReleaseDC(hwnd, hdc);
    if (hwnd)
        w.DestroyWindow(hwnd);
}

/* A window right of every monitor: its DC opens the nearest one's display. */
static void check_off_screen(const struct monitors *m)
{
    unsigned right = 0;

    if (!m->count)
        return;
    for (unsigned i = 1; i < m->count; i++)
        if (m->info[i].rcMonitor.right > m->info[right].rcMonitor.right)
            right = i;
    check_window_at("a window right of every monitor", m->info[right].rcMonitor.right + 200,
                    m->info[right].rcMonitor.top + 16, open_by_name(m->info[right].szDevice));
}

/* A window inside each of Wine's monitors: its DC opens that monitor's display. */
static void check_each_monitor(void)
{
    static struct monitors m;
    char what[96];

    windc_monitors(&m);
    for (unsigned i = 0; i < m.count; i++) {
        const RECT *r = &m.info[i].rcMonitor;

        snprintf(what, sizeof(what), "a window on %ls (%ld,%ld)", m.info[i].szDevice, r->left, r->top);
        check_window_at(what, r->left + 16, r->top + 16, open_by_name(m.info[i].szDevice));
    }
    check_off_screen(&m);
}

/* A released cache DC: GDI disables it until it hands it out again, so it
 * draws on no display. */
static void check_released(HWND hwnd)
{
    HDC hdc = w.GetDC(hwnd);

    ok(hdc != NULL, "no DC to release\n");
    if (!hdc)
        return;
    w.ReleaseDC(hwnd, hdc);
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(hdc));
}

BOOL windc_begin(void)
{
    HWND probe;

    if (!ready())
        return FALSE;
    if (!register_classes()) {
        ok(FALSE, "RegisterClassExW: error %lu\n", GetLastError());
        return FALSE;
    }
    if (!(probe = window(class_name, WS_POPUP, 0, 0, NULL))) {
        skip("no window here (error %lu: headless Wine)\n", GetLastError());
        unregister_classes();
        return FALSE;
    }
    w.DestroyWindow(probe);
    return TRUE;
}

void windc_end(void)
{
    unregister_classes();
}

void kmtc_window_dcs(void)
{
    struct display_open primary;
    HWND hwnd, child, own;
    PAINTSTRUCT ps;
    HDC hdc, own_dc;

    if (!windc_begin())
        return;
    if (!(hwnd = window(class_name, WS_OVERLAPPEDWINDOW, 0, 0, NULL))) {
        ok(FALSE, "no window: error %lu\n", GetLastError());
        windc_end();
        return;
    }
    primary = open_by_name(L"\\\\.\\DISPLAY1");
    ok(primary.status == STATUS_SUCCESS, "\\\\.\\DISPLAY1: %#lx\n", (unsigned long)primary.status);

    hdc = w.GetDC(hwnd);
    check_same_display("GetDC(hwnd)", hdc, primary);
    w.ReleaseDC(hwnd, hdc);
    hdc = w.GetWindowDC(hwnd);
    check_same_display("GetWindowDC(hwnd)", hdc, primary);
    w.ReleaseDC(hwnd, hdc);
    hdc = w.GetDCEx(hwnd, NULL, DCX_CACHE | DCX_CLIPSIBLINGS);
    check_same_display("GetDCEx(hwnd, DCX_CACHE)", hdc, primary);
    w.ReleaseDC(hwnd, hdc);
    w.InvalidateRect(hwnd, NULL, FALSE);
    hdc = w.BeginPaint(hwnd, &ps);
    check_same_display("BeginPaint's DC", hdc, primary);
    w.EndPaint(hwnd, &ps);

    child = window(class_name, WS_CHILD, 4, 4, hwnd);
    ok(child != NULL, "no child window: error %lu\n", GetLastError());
    hdc = child ? w.GetDC(child) : NULL;
    check_same_display("a child window's DC", hdc, primary);
    if (hdc)
        w.ReleaseDC(child, hdc);

    own = window(own_class_name, WS_POPUP, 0, 0, NULL);
    own_dc = own ? w.GetDC(own) : NULL;
    check_same_display("a CS_OWNDC window's DC", own_dc, primary);
    check_released(hwnd);
    check_each_monitor();

    /* an own DC goes with its window */
    if (own) {
        w.DestroyWindow(own);
        expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(own_dc));
    }
    if (child)
        w.DestroyWindow(child);
    w.DestroyWindow(hwnd);
    windc_end();
}

/* DCs that draw on no display: STATUS_INVALID_PARAMETER, as a memory DC. */
void kmtc_non_display_dcs(void)
{
    WCHAR printer[256];
    DWORD size = ARRAY_SIZE(printer);
    HDC hdc;

    if (!ready())
        return;
    hdc = w.CreateMetaFileW(NULL);
    ok(hdc != NULL, "no metafile DC\n");
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(hdc));
    w.DeleteMetaFile(w.CloseMetaFile(hdc));

    hdc = w.CreateEnhMetaFileW(NULL, NULL, NULL, NULL);
    ok(hdc != NULL, "no enhanced-metafile DC\n");
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(hdc));
    w.DeleteEnhMetaFile(w.CloseEnhMetaFile(hdc));

    /* a display DC, deleted */
    hdc = w.CreateDCW(L"DISPLAY", NULL, NULL, NULL);
    ok(hdc != NULL, "no display DC\n");
    w.DeleteDC(hdc);
    expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(hdc));

    if (w.GetDefaultPrinterW && w.GetDefaultPrinterW(printer, &size) &&
        (hdc = w.CreateDCW(L"WINSPOOL", printer, NULL, NULL))) {
        expect_refused(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC, from_hdc(hdc));
        w.DeleteDC(hdc);
    } else {
        skip("no printer here\n");
    }
}
