/*
 * The gdi32 proxy reached through a static import: this program imports
 * the D3DKMT functions from gdi32.dll at link time (an import library made
 * from functions.h), as a program built against Windows' gdi32.lib does.
 * Under stock Wine it would load and then abort on the first call of a
 * function Wine lacks; with the proxy the whole suite runs.
 */
#include "proxy_common.h"

static void test_imports_resolve_to_proxy(void)
{
    HMODULE gdi32 = GetModuleHandleA("gdi32.dll"), owner = NULL;

    if (!proxy_in_place(gdi32))
        return;
#define KMT_FUNC(name, type)                                                        \
    ok(GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |                  \
                          GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,             \
                          (const char *)(void *)D3DKMT##name, &owner) && owner == gdi32, \
       "D3DKMT" #name " resolved into %p, not the proxy %p\n", (void *)owner, (void *)gdi32);
#include "functions.h"
}

/* Handles the program got from kmtshim.dll itself, before the proxy ever
 * called kmtshim: the proxy's shared functions must still route them to
 * kmtshim.  (Runs first, in a fresh process.) */
static void test_direct_kmtshim_handles(void)
{
    HMODULE kmtshim = LoadLibraryA("kmtshim.dll");
    NTSTATUS (APIENTRY *enum2)(D3DKMT_ENUMADAPTERS2 *);
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_ENUMADAPTERS2 e = { 34, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_CLOSEADAPTER c = { 0 };

    ok(kmtshim != NULL, "LoadLibrary(kmtshim.dll) failed\n");
    if (!kmtshim)
        return;
    enum2 = (NTSTATUS (APIENTRY *)(D3DKMT_ENUMADAPTERS2 *))(void *)GetProcAddress(kmtshim, "D3DKMTEnumAdapters2");
    expect_status(enum2(&e), STATUS_SUCCESS);
    if (!e.NumAdapters)
        return;
    cd.hAdapter = info[0].hAdapter;
    expect_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);          /* through the proxy */
    ok(is_local_handle(cd.hDevice), "hDevice %#x\n", cd.hDevice);
    dd.hDevice = cd.hDevice;
    expect_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        c.hAdapter = info[i].hAdapter;
        expect_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    }
    FreeLibrary(kmtshim);
}

static const struct kmtw_test tests[] = {
    { "direct_kmtshim_handles", test_direct_kmtshim_handles },
    { "imports_resolve_to_proxy", test_imports_resolve_to_proxy },
    KMT_CONFORMANCE_TESTS,
};

int main(int argc, char **argv)
{
#define KMT_FUNC(name, type) kmt_api.name = D3DKMT##name;
#include "functions.h"
    kmt_api_via = "the gdi32 proxy (static import)";
    if (GetModuleHandleA("gdi32_orig.dll"))
        kmt_api_lookup(&kmt_wine_api, GetModuleHandleA("gdi32_orig.dll"));
    return kmtw_run("test_proxy_static", tests,
                    GetModuleHandleA("gdi32_orig.dll") ? ARRAY_SIZE(tests) : 1, argc, argv);
}
