/*
 * bench_wine.exe: the cost of a D3DKMT call under Wine, through kmtshim and
 * through Wine's builtin gdi32, in one process.
 *
 *   no-op:  a call both sides refuse at once with STATUS_INVALID_PARAMETER,
 *           so only the call path is measured:
 *             D3DKMTCreateDevice with hAdapter 0 (Wine 8: a syscall into
 *             win32u's Unix side; kmtshim: a unix call into kmtshim.so)
 *             D3DKMTCloseAdapter with hAdapter 0 (Wine 8 calls its Unix
 *             side directly, without a PE->Unix transition)
 *   pair:   D3DKMTCreateDevice + D3DKMTDestroyDevice on an adapter of the
 *           same side (kmtshim's software adapter; Wine's display adapter)
 *
 * Each is measured through kmtshim.dll directly and, when this process has
 * the gdi32 proxy (kmtshim-prefix --proxy-exe bench_wine.exe), through the
 * proxy too; Wine's numbers come from Wine's own gdi32 (gdi32_orig.dll
 * under the proxy).  Best of 5 runs, ns per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/d3dkmthk.h"

typedef NTSTATUS (APIENTRY *d3dkmt_fn)(void *desc);

struct side {
    const char *name;
    HMODULE module;
    d3dkmt_fn close, create, destroy;
    D3DKMT_HANDLE adapter;
};

typedef struct {
    WCHAR DeviceName[32];
    D3DKMT_HANDLE hAdapter;
    LUID AdapterLuid;
    UINT VidPnSourceId;
} open_gdi_desc;

static double ticks_per_ns;

static double now_ns(void)
{
    LARGE_INTEGER t;

    QueryPerformanceCounter(&t);
    return (double)t.QuadPart / ticks_per_ns;
}

static BOOL side_init(struct side *s, const char *name, HMODULE module)
{
    memset(s, 0, sizeof(*s));
    s->name = name;
    if (!(s->module = module))
        return FALSE;
    s->close = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTCloseAdapter");
    s->create = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTCreateDevice");
    s->destroy = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTDestroyDevice");
    return s->close && s->create && s->destroy;
}

/* kmtshim's software adapter (the first kmtshim enumerates). */
static D3DKMT_HANDLE kmtshim_adapter(HMODULE module)
{
    d3dkmt_fn enum2 = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTEnumAdapters2");
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_ENUMADAPTERS2 e = { 34, info };

    return enum2 && !enum2(&e) && e.NumAdapters ? info[0].hAdapter : 0;
}

/* Wine's adapter for the first display. */
static D3DKMT_HANDLE wine_adapter(HMODULE module)
{
    d3dkmt_fn open = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTOpenAdapterFromGdiDisplayName");
    open_gdi_desc d = { { 0 } };

    lstrcpyW(d.DeviceName, L"\\\\.\\DISPLAY1");
    return open && !open(&d) ? d.hAdapter : 0;
}

/* fn(desc) n times, best of 5 runs; desc is zeroed: hAdapter 0 */
static double bench_noop(d3dkmt_fn fn, unsigned n)
{
    BYTE desc[sizeof(D3DKMT_CREATEDEVICE)];
    double best = 1e30;

    for (int run = 0; run < 5; run++) {
        double t0 = now_ns(), t;
        for (unsigned i = 0; i < n; i++) {
            memset(desc, 0, sizeof(desc));
            if (fn(desc) != (NTSTATUS)STATUS_INVALID_PARAMETER)
                return -1;
        }
        t = (now_ns() - t0) / n;
        if (t < best)
            best = t;
    }
    return best;
}

static double bench_pair(const struct side *s, unsigned n)
{
    double best = 1e30;

    for (int run = 0; run < 5; run++) {
        double t0 = now_ns(), t;
        for (unsigned i = 0; i < n; i++) {
            D3DKMT_CREATEDEVICE cd = { 0 };
            D3DKMT_DESTROYDEVICE dd = { 0 };

            cd.hAdapter = s->adapter;
            if (s->create(&cd))
                return -1;
            dd.hDevice = cd.hDevice;
            if (s->destroy(&dd))
                return -1;
        }
        t = (now_ns() - t0) / n;
        if (t < best)
            best = t;
    }
    return best;
}

static void row(const struct side *s, unsigned noop_n, unsigned pair_n, BOOL noops)
{
    double pair = s->adapter ? bench_pair(s, pair_n) : -1;

    printf("%-36s", s->name);
    if (noops)
        printf(" %16.1f %16.1f", bench_noop(s->create, noop_n), bench_noop(s->close, noop_n));
    else
        printf(" %16s %16s", "-", "-");
    if (pair >= 0)
        printf(" %16.1f\n", pair);
    else
        printf(" %16s\n", s->adapter ? "failed" : "no adapter");
}

int main(int argc, char **argv)
{
    unsigned noop_n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000000, pair_n = noop_n / 5;
    HMODULE gdi32 = LoadLibraryA("gdi32.dll"), orig = GetModuleHandleA("gdi32_orig.dll");
    HMODULE kmtshim = LoadLibraryA("kmtshim.dll");
    BOOL proxy = orig && GetProcAddress(gdi32, "D3DKMTCreateAllocation");
    struct side kmt, wine, kmt_proxy, wine_proxy;
    LARGE_INTEGER freq;

    QueryPerformanceFrequency(&freq);
    ticks_per_ns = freq.QuadPart / 1e9;
    if (!side_init(&kmt, "kmtshim.dll", kmtshim)) {
        printf("kmtshim.dll not loadable (WINEDLLPATH?)\n");
        return 1;
    }
    side_init(&wine, proxy ? "Wine's gdi32 (gdi32_orig.dll)" : "Wine's gdi32", proxy ? orig : gdi32);
    kmt.adapter = kmtshim_adapter(kmtshim);
    wine.adapter = wine_adapter(wine.module);

    printf("ns per call, best of 5 runs: %u no-op calls, %u CreateDevice+DestroyDevice pairs\n", noop_n, pair_n);
    printf("%-36s %16s %16s %16s\n", "path", "CreateDevice(0)", "CloseAdapter(0)", "Create+Destroy");
    row(&kmt, noop_n, pair_n, TRUE);
    row(&wine, noop_n, pair_n, TRUE);
    if (proxy) {
        /* zero handles go to kmtshim, Wine's handles to Wine */
        side_init(&kmt_proxy, "gdi32 proxy -> kmtshim", gdi32);
        kmt_proxy.adapter = kmt.adapter;
        side_init(&wine_proxy, "gdi32 proxy -> Wine (pass-through)", gdi32);
        wine_proxy.adapter = wine.adapter;
        row(&kmt_proxy, noop_n, pair_n, TRUE);
        row(&wine_proxy, noop_n, pair_n, FALSE);
    } else {
        printf("(no gdi32 proxy in this process: run with kmtshim-prefix --proxy-exe bench_wine.exe for its rows)\n");
    }
    return 0;
}
