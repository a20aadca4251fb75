/*
 * The display-based opens under Wine: display names and DCs are Wine's.
 *
 * A DC of a display (OBJ_DC, TECHNOLOGY DT_RASDISPLAY) names the monitor
 * of its window (WindowFromDC: a window's, child window's, GetDCEx or
 * BeginPaint DC; the monitor it overlaps most, the nearest one for a window
 * on none; the primary one for a DC without a window), whose GDI name is
 * one of Wine's displays, \\.\DISPLAYn.  EnumDisplayDevicesW gives that
 * display's GPU as a PCI hardware id, made here into the GPU's device
 * interface path, which the core maps to its adapter with the rule of
 * KmtOpenAdapterFromDevicePath plus the default adapter (Wine's GPU list
 * describes this machine; a GPU kmtshim has no ids for, such as Wine's
 * null display's, is the default adapter).  The VidPn source is the
 * display's index among Wine's displays that map to the same adapter; an
 * adapter without that source fails the open, so that through the gdi32
 * proxy Wine answers instead.
 *
 * user32 and gdi32 are loaded when first needed: kmtshim.dll imports
 * neither (under the gdi32 proxy, gdi32.dll is the proxy, which loads
 * kmtshim.dll; only its non-D3DKMT exports are used here).
 */
#include "pe.h"
#include "kmtshim/kmtshim.h"

static struct {
    volatile LONG ready;
    BOOL (WINAPI *EnumDisplayDevicesW)(LPCWSTR, DWORD, DISPLAY_DEVICEW *, DWORD);
    HWND (WINAPI *WindowFromDC)(HDC);
    HMONITOR (WINAPI *MonitorFromWindow)(HWND, DWORD);
    HMONITOR (WINAPI *MonitorFromPoint)(POINT, DWORD);
    BOOL (WINAPI *GetMonitorInfoW)(HMONITOR, MONITORINFO *);
    DWORD (WINAPI *GetObjectType)(HGDIOBJ);
    int (WINAPI *GetDeviceCaps)(HDC, int);
} win;

#define RESOLVE(module, name) \
    ((win.name = (void *)GetProcAddress(module, #name)) != NULL)

static BOOL load_win32(void)
{
    HMODULE user32, gdi32;

    if (win.ready)
        return win.ready > 0;
    user32 = LoadLibraryW(L"user32.dll");
    gdi32 = user32 ? GetModuleHandleW(L"gdi32.dll") : NULL;
    if (!user32 || !gdi32 || !RESOLVE(user32, EnumDisplayDevicesW) || !RESOLVE(user32, WindowFromDC) ||
        !RESOLVE(user32, MonitorFromWindow) || !RESOLVE(user32, MonitorFromPoint) ||
        !RESOLVE(user32, GetMonitorInfoW) || !RESOLVE(gdi32, GetObjectType) ||
        !RESOLVE(gdi32, GetDeviceCaps)) {
        PE_ERR("user32/gdi32 unavailable: no display names\n");
        win.ready = -1;
        return FALSE;
    }
    win.ready = 1;
    return TRUE;
}

static const WCHAR display_guid[] = L"{5b45201d-f2f2-4f3b-85bb-30ff1f953599}";

/* \\?\ + the hardware id with '\' as '#' + #WINE# + the class GUID; a GPU
 * whose id is not PCI's gets ids no adapter has (the default adapter). */
static void gpu_path(const WCHAR *device_id, WCHAR path[KMT_DEVICE_PATH_MAX])
{
    const WCHAR *id = device_id;
    int n = 0;

    if (CompareStringOrdinal(id, 4, L"PCI\\", 4, TRUE) != CSTR_EQUAL ||
        lstrlenW(id) > KMT_DEVICE_PATH_MAX - 64)
        id = L"PCI\\VEN_0000&DEV_0000";
    lstrcpyW(path, L"\\\\?\\");
    n = lstrlenW(path);
    for (; *id; id++)
        path[n++] = *id == '\\' ? '#' : *id;
    path[n] = 0;
    lstrcatW(path, L"#WINE#");
    lstrcatW(path, display_guid);
}

static NTSTATUS open_path(const WCHAR *path, UINT flags, UINT source,
                          struct kmt_device_path_params *params)
{
    params->path = (uint64_t)(uintptr_t)path;
    params->flags = flags;
    params->source = source;
    params->adapter = 0;
    return kmt_unix_call(KMT_UNIX_OPEN_DEVICE_PATH, params);
}

/* Wine's display `name`: the kmtshim adapter of its GPU, opened, and the
 * source it is on that adapter. */
static NTSTATUS open_display(const WCHAR *name, D3DKMT_HANDLE *adapter, LUID *luid, UINT *source)
{
    WCHAR path[KMT_DEVICE_PATH_MAX];
    LUID seen[64];
    DISPLAY_DEVICEW dd;
    struct kmt_device_path_params params;
    DWORD i, index = 0;
    NTSTATUS status;

    if (!load_win32())
        return STATUS_INVALID_PARAMETER;
    /* every display before `name`, mapped to an adapter (no handle) */
    for (i = 0;; i++) {
        dd.cb = sizeof(dd);
        if (!win.EnumDisplayDevicesW(NULL, i, &dd, 0)) {
            PE_TRACE("not one of Wine's %lu displays\n", (unsigned long)i);
            return STATUS_INVALID_PARAMETER;
        }
        gpu_path(dd.DeviceID, path);
        if ((status = open_path(path, KMT_DEVICE_PATH_DEFAULT_ADAPTER | KMT_DEVICE_PATH_NO_HANDLE, 0,
                                &params)))
            return status;
        if (CompareStringOrdinal(dd.DeviceName, -1, name, -1, TRUE) == CSTR_EQUAL)
            break;
        if (i < 64)
            seen[i] = (LUID){ params.luid_low, params.luid_high };
    }
    for (DWORD j = 0; j < i && j < 64; j++)
        if (seen[j].LowPart == params.luid_low && seen[j].HighPart == params.luid_high)
            index++;
    status = open_path(path, KMT_DEVICE_PATH_DEFAULT_ADAPTER | KMT_DEVICE_PATH_NEED_SOURCE, index,
                       &params);
    PE_TRACE("Wine's display %lu (GPU %s) -> source %lu: %s\n", (unsigned long)i,
             dd.DeviceID[0] ? "listed" : "unnamed", (unsigned long)index, kmt_pe_debugstr_status(status));
    if (status)
        return status;
    *adapter = params.adapter;
    luid->LowPart = params.luid_low;
    luid->HighPart = params.luid_high;
    *source = index;
    return STATUS_SUCCESS;
}

NTSTATUS pe_OpenAdapterFromGdiDisplayName(D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME *desc)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME k;
    NTSTATUS status;
    int n = 0;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)))      /* the core answers bad descriptors */
        return kmt_call_desc(KMT_UNIX_OpenAdapterFromGdiDisplayName, desc);
    k = *desc;
    while (n < 32 && k.DeviceName[n])
        n++;
    if (n == 32 || !n)
        return STATUS_INVALID_PARAMETER;
    if ((status = open_display(k.DeviceName, &k.hAdapter, &k.AdapterLuid, &k.VidPnSourceId)))
        return status;
    desc->hAdapter = k.hAdapter;
    desc->AdapterLuid = k.AdapterLuid;
    desc->VidPnSourceId = k.VidPnSourceId;
    return STATUS_SUCCESS;
}

/* The display a DC draws on; FALSE for a memory, printer, metafile or
 * garbage DC. */
static BOOL dc_display_name(HDC hdc, WCHAR name[CCHDEVICENAME])
{
    MONITORINFOEXW mi;
    HMONITOR monitor;
    HWND hwnd;

    if (!hdc || !load_win32() || win.GetObjectType(hdc) != OBJ_DC ||
        win.GetDeviceCaps(hdc, TECHNOLOGY) != DT_RASDISPLAY)
        return FALSE;
    if ((hwnd = win.WindowFromDC(hdc)))
        monitor = win.MonitorFromWindow(hwnd, MONITOR_DEFAULTTONEAREST);
    else
        monitor = win.MonitorFromPoint((POINT){ 0, 0 }, MONITOR_DEFAULTTOPRIMARY);
    mi.cbSize = sizeof(mi);
    if (!monitor || !win.GetMonitorInfoW(monitor, (MONITORINFO *)&mi))
        return FALSE;
    lstrcpynW(name, mi.szDevice, CCHDEVICENAME);
    return TRUE;
}

NTSTATUS pe_OpenAdapterFromHdc(D3DKMT_OPENADAPTERFROMHDC *desc)
{
    D3DKMT_OPENADAPTERFROMHDC k;
    WCHAR name[CCHDEVICENAME];
    NTSTATUS status;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)))
        return kmt_call_desc(KMT_UNIX_OpenAdapterFromHdc, desc);
    k = *desc;
    if (!dc_display_name(k.hDc, name)) {
        PE_TRACE("hDc %p is not a display's DC\n", (void *)k.hDc);
        return STATUS_INVALID_PARAMETER;
    }
    if ((status = open_display(name, &k.hAdapter, &k.AdapterLuid, &k.VidPnSourceId)))
        return status;
    desc->hAdapter = k.hAdapter;
    desc->AdapterLuid = k.AdapterLuid;
    desc->VidPnSourceId = k.VidPnSourceId;
    return STATUS_SUCCESS;
}

/* A path from Wine (SetupAPI, EDD_GET_DEVICE_INTERFACE_NAME) names one of
 * Wine's GPUs: the default adapter where kmtshim has none with its ids. */
NTSTATUS pe_OpenAdapterFromDeviceName(D3DKMT_OPENADAPTERFROMDEVICENAME *desc)
{
    struct kmt_device_path_params params;
    NTSTATUS status;

    if (!kmt_win_desc_ok(desc, sizeof(*desc)))
        return kmt_call_desc(KMT_UNIX_OpenAdapterFromDeviceName, desc);
    if ((status = open_path(desc->pDeviceName, KMT_DEVICE_PATH_DEFAULT_ADAPTER, 0, &params)))
        return status;
    desc->hAdapter = params.adapter;
    desc->AdapterLuid.LowPart = params.luid_low;
    desc->AdapterLuid.HighPart = params.luid_high;
    return STATUS_SUCCESS;
}
