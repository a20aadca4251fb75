/*
 * The gdi32 proxy, reached the way unmodified programs reach D3DKMT:
 * GetProcAddress(GetModuleHandle("gdi32"), "D3DKMT...").  The whole
 * conformance suite runs through it; then Wine's own functions and handles
 * must pass through unchanged (Wine's D3D stack depends on them), and every
 * other gdi32 export must be an import thunk into Wine's gdi32.
 */
#include <stdio.h>
#include <string.h>

#include "proxy_common.h"

typedef NTSTATUS (APIENTRY *d3dkmt_fn)(void *desc);

static HMODULE gdi32, orig, kmtshim;
static BOOL (WINAPI *owns_handle)(D3DKMT_HANDLE handle);

static d3dkmt_fn proxy_fn(const char *name)
{
    return (d3dkmt_fn)(void *)GetProcAddress(gdi32, name);
}

static d3dkmt_fn wine_fn(const char *name)
{
    return (d3dkmt_fn)(void *)GetProcAddress(orig, name);
}

static void test_setup(void)
{
    gdi32 = GetModuleHandleA("gdi32.dll");
    if (!proxy_in_place(gdi32))
        return;
    orig = GetModuleHandleA("gdi32_orig.dll");
    kmt_api_from_module(&kmt_api, gdi32, "the gdi32 proxy");
    kmt_api_lookup(&kmt_wine_api, orig);
    kmt_api_via = "the gdi32 proxy (GetProcAddress)";
    /* Wine's names resolve to the proxy's own code, not to Wine's */
    ok((void *)GetProcAddress(gdi32, "D3DKMTCreateDevice") != (void *)GetProcAddress(orig, "D3DKMTCreateDevice"),
       "D3DKMTCreateDevice is Wine's\n");
}

/* kmtshim is loaded by the proxy on first use. */
static void test_owner_query(void)
{
    ok(kmt_api.EnumAdapters2 != NULL, "no EnumAdapters2\n");
    kmtshim = GetModuleHandleA("kmtshim.dll");
    ok(kmtshim != NULL, "the proxy did not load kmtshim.dll\n");
    owns_handle = (BOOL (WINAPI *)(D3DKMT_HANDLE))(void *)GetProcAddress(kmtshim, "KmtShimOwnsHandle");
    ok(owns_handle != NULL, "no KmtShimOwnsHandle\n");
}

/* Wine's adapters and devices: the proxy gives Wine's answers. */
static void test_wine_passthrough(void)
{
    d3dkmt_fn open_gdi = proxy_fn("D3DKMTOpenAdapterFromGdiDisplayName");
    d3dkmt_fn wine_open_gdi = wine_fn("D3DKMTOpenAdapterFromGdiDisplayName");
    d3dkmt_fn wine_create = wine_fn("D3DKMTCreateDevice"), wine_destroy = wine_fn("D3DKMTDestroyDevice");
    d3dkmt_fn wine_close = wine_fn("D3DKMTCloseAdapter"), wine_qvmi = wine_fn("D3DKMTQueryVideoMemoryInfo");
    d3dkmt_fn wine_escape = wine_fn("D3DKMTEscape");
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME p = { { 0 } }, w = { { 0 } };
    D3DKMT_CREATEDEVICE cd = { 0 }, wcd = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER c = { 0 };
    D3DKMT_OPENADAPTERFROMLUID o = { 0 };
    D3DKMT_QUERYVIDEOMEMORYINFO q = { 0 }, wq = { 0 };
    D3DKMT_ESCAPE esc = { 0 }, wesc = { 0 };
    BYTE data[16] = { 0 }, wdata[16] = { 0 };
    NTSTATUS sp, sw;
    LUID soft_luid;

    if (!owns_handle || !open_gdi || !wine_open_gdi) {
        ok(FALSE, "missing functions: %p %p %p\n", (void *)owns_handle, (void *)open_gdi, (void *)wine_open_gdi);
        return;
    }
    /* Wine's own adapter, opened by Wine: the proxy passes its handles on */
    lstrcpyW(p.DeviceName, L"\\\\.\\DISPLAY1");
    lstrcpyW(w.DeviceName, L"\\\\.\\DISPLAY1");
    sp = wine_open_gdi(&p);
    sw = wine_open_gdi(&w);
    if (sp || sw) {
        skip("Wine has no display adapter here (%#lx)\n", (unsigned long)sw);
        return;
    }
    ok(!memcmp(&p.AdapterLuid, &w.AdapterLuid, sizeof(LUID)), "LUIDs differ\n");
    ok(p.hAdapter && !owns_handle(p.hAdapter), "Wine's adapter %#x is kmtshim's\n", p.hAdapter);

    /* a device on Wine's adapter: routed to Wine */
    cd.hAdapter = p.hAdapter;
    wcd.hAdapter = w.hAdapter;
    sp = kmt_api.CreateDevice(&cd);
    sw = wine_create(&wcd);
    ok(!sp && !sw, "CreateDevice: proxy %#lx, Wine %#lx\n",
       (unsigned long)sp, (unsigned long)sw);
    ok(cd.hDevice && !owns_handle(cd.hDevice), "Wine's device %#x is kmtshim's\n", cd.hDevice);

    /* the other shared functions, on Wine's adapter */
    q.hAdapter = p.hAdapter;
    wq.hAdapter = w.hAdapter;
    sp = kmt_api.QueryVideoMemoryInfo(&q);
    sw = wine_qvmi(&wq);
    ok(sp == sw, "QueryVideoMemoryInfo: proxy %#lx, Wine %#lx\n", (unsigned long)sp, (unsigned long)sw);
    esc.hAdapter = p.hAdapter;
    esc.pPrivateDriverData = data;
    esc.PrivateDriverDataSize = sizeof(data);
    wesc = esc;
    wesc.hAdapter = w.hAdapter;
    wesc.pPrivateDriverData = wdata;
    sp = kmt_api.Escape(&esc);
    sw = wine_escape(&wesc);
    ok(sp == sw, "Escape: proxy %#lx, Wine %#lx\n", (unsigned long)sp, (unsigned long)sw);

    dd.hDevice = cd.hDevice;
    expect_status(kmt_api.DestroyDevice(&dd), STATUS_SUCCESS);
    sp = kmt_api.DestroyDevice(&dd);
    sw = wine_destroy(&dd);
    ok(sp == sw && sp != STATUS_SUCCESS, "DestroyDevice again: proxy %#lx, Wine %#lx\n",
       (unsigned long)sp, (unsigned long)sw);
    dd.hDevice = wcd.hDevice;
    expect_status(wine_destroy(&dd), STATUS_SUCCESS);

    /* OpenAdapterFromLuid: Wine's LUID gives a Wine handle, kmtshim's a kmtshim handle */
    o.AdapterLuid = p.AdapterLuid;
    expect_status(kmt_api.OpenAdapterFromLuid(&o), STATUS_SUCCESS);
    ok(o.hAdapter && !owns_handle(o.hAdapter), "Wine's LUID opened as kmtshim's %#x\n", o.hAdapter);
    c.hAdapter = o.hAdapter;
    expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
    if ((c.hAdapter = kmt_open_soft_adapter(&soft_luid))) {
        kmt_close_adapter(c.hAdapter);
        o.AdapterLuid = soft_luid;
        expect_status(kmt_api.OpenAdapterFromLuid(&o), STATUS_SUCCESS);
        ok(owns_handle(o.hAdapter), "kmtshim's LUID opened as Wine's %#x\n", o.hAdapter);
        kmt_close_adapter(o.hAdapter);
    }

    /* closing Wine's adapters through the proxy, twice */
    c.hAdapter = p.hAdapter;
    expect_status(kmt_api.CloseAdapter(&c), STATUS_SUCCESS);
    sp = kmt_api.CloseAdapter(&c);
    sw = wine_close(&c);
    ok(sp == sw && sp == (NTSTATUS)STATUS_INVALID_PARAMETER, "CloseAdapter again: proxy %#lx, Wine %#lx\n",
       (unsigned long)sp, (unsigned long)sw);
    c.hAdapter = w.hAdapter;
    expect_status(wine_close(&c), STATUS_SUCCESS);
}

/* `hwnd`'s DC (the screen's for NULL) opens kmtshim's adapter, and the
 * device created on it is kmtshim's. */
static void hdc_reaches_kmtshim(const char *what, d3dkmt_fn open_hdc, HWND hwnd, HDC (WINAPI *get_dc)(HWND),
                                int (WINAPI *release_dc)(HWND, HDC))
{
    D3DKMT_OPENADAPTERFROMHDC oh = { 0 };
    D3DKMT_HANDLE device;

    oh.hDc = get_dc(hwnd);
    expect_status(open_hdc(&oh), STATUS_SUCCESS);
    ok(owns_handle(oh.hAdapter), "%s opened as Wine's %#x\n", what, oh.hAdapter);
    device = kmt_create_device(oh.hAdapter);
    ok(device && owns_handle(device), "%s: device %#x is not kmtshim's\n", what, device);
    if (device)
        kmt_destroy_device(device);
    kmt_close_adapter(oh.hAdapter);
    release_dc(hwnd, oh.hDc);
}

/* An unmodified program's display path through the proxy: a display name
 * or a DC, then CreateDevice and CreateAllocation, all answered by
 * kmtshim (the `first` rule); a name kmtshim maps to no source, Wine's. */
static void test_display_open_reaches_kmtshim(void)
{
    d3dkmt_fn open_gdi = proxy_fn("D3DKMTOpenAdapterFromGdiDisplayName");
    d3dkmt_fn open_hdc = proxy_fn("D3DKMTOpenAdapterFromHdc");
    d3dkmt_fn wine_open_gdi = wine_fn("D3DKMTOpenAdapterFromGdiDisplayName");
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o = { { 0 } }, wo = { { 0 } };
    D3DKMT_HANDLE device, allocation = 0;
    HMODULE user32 = LoadLibraryA("user32.dll");
    HDC (WINAPI *get_dc)(HWND) = user32 ? (void *)GetProcAddress(user32, "GetDC") : NULL;
    int (WINAPI *release_dc)(HWND, HDC) = user32 ? (void *)GetProcAddress(user32, "ReleaseDC") : NULL;
    HWND (WINAPI *create_window)(DWORD, LPCWSTR, LPCWSTR, DWORD, int, int, int, int, HWND, HMENU, HINSTANCE,
                                 LPVOID) = user32 ? (void *)GetProcAddress(user32, "CreateWindowExW") : NULL;
    BOOL (WINAPI *destroy_window)(HWND) = user32 ? (void *)GetProcAddress(user32, "DestroyWindow") : NULL;
    HWND hwnd;

    if (!owns_handle || !open_gdi || !open_hdc || !wine_open_gdi || !get_dc || !release_dc || !destroy_window) {
        ok(FALSE, "missing functions\n");
        return;
    }
    lstrcpyW(o.DeviceName, L"\\\\.\\DISPLAY1");
    expect_status(open_gdi(&o), STATUS_SUCCESS);
    ok(owns_handle(o.hAdapter), "\\\\.\\DISPLAY1 opened as Wine's %#x\n", o.hAdapter);
    ok(o.VidPnSourceId == 0, "VidPnSourceId %u\n", o.VidPnSourceId);
    device = kmt_create_device(o.hAdapter);
    ok(device && owns_handle(device), "device %#x is not kmtshim's\n", device);
    if (device) {
        expect_status(create_soft_allocation(device, 0x10000, &allocation), STATUS_SUCCESS);
        ok(allocation && owns_handle(allocation), "allocation %#x is not kmtshim's\n", allocation);
        kmt_destroy_device(device);
    }
    kmt_close_adapter(o.hAdapter);

    hdc_reaches_kmtshim("the screen DC", open_hdc, NULL, get_dc, release_dc);
    hwnd = create_window ? create_window(0, L"static", L"kmtshim", WS_POPUP | WS_VISIBLE, 0, 0, 64, 64, NULL,
                                         NULL, GetModuleHandleW(NULL), NULL) : NULL;
    if (hwnd) {
        hdc_reaches_kmtshim("a window's DC", open_hdc, hwnd, get_dc, release_dc);
        destroy_window(hwnd);
    } else {
        skip("no window here (error %lu: headless Wine)\n", GetLastError());
    }

    /* a name kmtshim refuses: Wine's answer, Wine's handle if any */
    memset(&o, 0, sizeof(o));
    lstrcpyW(o.DeviceName, L"\\\\.\\DISPLAY99");
    lstrcpyW(wo.DeviceName, L"\\\\.\\DISPLAY99");
    expect_status(open_gdi(&o), wine_open_gdi(&wo));
}

/* ---- every other export: an import thunk into Wine's gdi32 ------------------ */

static const IMAGE_EXPORT_DIRECTORY *export_dir(HMODULE module)
{
    const BYTE *base = (const BYTE *)module;
    const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + ((const IMAGE_DOS_HEADER *)base)->e_lfanew);
    DWORD rva = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT].VirtualAddress;

    return rva ? (const IMAGE_EXPORT_DIRECTORY *)(base + rva) : NULL;
}

/* The ordinal `name` has in `module`, 0 if none. */
static DWORD export_ordinal(HMODULE module, const char *name)
{
    const BYTE *base = (const BYTE *)module;
    const IMAGE_EXPORT_DIRECTORY *dir = export_dir(module);
    const DWORD *names = (const DWORD *)(base + dir->AddressOfNames);
    const WORD *ordinals = (const WORD *)(base + dir->AddressOfNameOrdinals);

    for (DWORD i = 0; i < dir->NumberOfNames; i++)
        if (!strcmp((const char *)base + names[i], name))
            return dir->Base + ordinals[i];
    return 0;
}

/* `jmp *disp32(%rip)` on x86_64, `jmp *abs32` on i386 (the same opcode,
 * ff 25): where the thunk's import slot points. */
static void *thunk_target(const void *code)
{
    const BYTE *p = code;
    INT32 disp;

    if (p[0] != 0xff || p[1] != 0x25)
        return NULL;
    memcpy(&disp, p + 2, sizeof(disp));
#ifdef _WIN64
    return *(void *const *)(p + 6 + disp);
#else
    return *(void *const *)(ULONG_PTR)(UINT32)disp;
#endif
}

static void test_import_thunks(void)
{
    const BYTE *base;
    const IMAGE_EXPORT_DIRECTORY *dir;
    const DWORD *names;
    unsigned thunks = 0, routed = 0, bad = 0;

    if (!orig)
        return;
    base = (const BYTE *)orig;
    dir = export_dir(orig);
    names = (const DWORD *)(base + dir->AddressOfNames);
    for (DWORD i = 0; i < dir->NumberOfNames; i++) {
        const char *name = (const char *)base + names[i];
        void *mine = (void *)GetProcAddress(gdi32, name), *wine = (void *)GetProcAddress(orig, name);
        DWORD ord = export_ordinal(orig, name);

        if (!mine) {
            ok(FALSE, "%s is missing from the proxy\n", name);
            bad++;
            continue;
        }
        if (export_ordinal(gdi32, name) != ord) {
            ok(FALSE, "%s: ordinal %lu, Wine's %lu\n", name, (unsigned long)export_ordinal(gdi32, name),
               (unsigned long)ord);
            bad++;
        }
        if (thunk_target(mine)) {
            if (thunk_target(mine) != wine) {
                ok(FALSE, "%s jumps to %p, Wine's is %p\n", name, thunk_target(mine), wine);
                bad++;
            }
            thunks++;
        } else {
            /* only the routed D3DKMT functions have code of their own */
            ok(!strncmp(name, "D3DKMT", 6), "%s is not an import thunk\n", name);
            routed++;
        }
    }
    ok(!bad, "%u bad exports\n", bad);
    ok(thunks + routed == dir->NumberOfNames && thunks > 400, "%u thunks, %u routed, %lu names\n", thunks,
       routed, (unsigned long)dir->NumberOfNames);
    trace("%u import thunks, %u routed D3DKMT functions\n", thunks, routed);
}

/* Plain GDI through the thunks. */
static void test_gdi_works(void)
{
    HGDIOBJ (WINAPI *stock)(int) = (HGDIOBJ (WINAPI *)(int))(void *)GetProcAddress(gdi32, "GetStockObject");
    HGDIOBJ (WINAPI *wine_stock)(int) = (HGDIOBJ (WINAPI *)(int))(void *)GetProcAddress(orig, "GetStockObject");
    HDC dc;

    if (!stock || !wine_stock)
        return;
    ok(stock(WHITE_BRUSH) != NULL && stock(WHITE_BRUSH) == wine_stock(WHITE_BRUSH), "GetStockObject\n");
    dc = CreateCompatibleDC(NULL);
    ok(dc != NULL, "CreateCompatibleDC failed\n");
    ok(DeleteDC(dc), "DeleteDC failed\n");
}

static const struct kmtw_test tests[] = {
    { "setup", test_setup },
    KMT_CONFORMANCE_TESTS,
    KMT_CONFORMANCE_SHARE_TESTS,
    { "owner_query", test_owner_query },
    { "wine_passthrough", test_wine_passthrough },
    { "display_open_reaches_kmtshim", test_display_open_reaches_kmtshim },
    { "import_thunks", test_import_thunks },
    { "gdi_works", test_gdi_works },
};

int main(int argc, char **argv)
{
    /* without the proxy only the setup check runs (and fails) */
    unsigned count = GetProcAddress(GetModuleHandleA("gdi32.dll"), "D3DKMTCreateAllocation") ? ARRAY_SIZE(tests) : 1;

    if (argc > 1 && !strcmp(argv[1], KMT_SHARE_CHILD_ARG)) {
        /* the other process of share_processes: the same way in */
        kmt_api_from_module(&kmt_api, GetModuleHandleA("gdi32.dll"), "the gdi32 proxy");
        kmt_api_via = "the gdi32 proxy (GetProcAddress)";
        return kmtc_share_child(argc - 2, argv + 2);
    }
    return kmtw_run("test_proxy", tests, count, argc, argv);
}
