/*
 * A process that loads user32 at run time, with the gdi32 proxy in place.
 * (A proxy made of plain export forwarders breaks exactly this: the loader
 * initialises user32 and gdi32 in a cycle.)  user32 must load and work,
 * and the D3DKMT functions still reach kmtshim afterwards.
 */
#include <string.h>

#include "proxy_common.h"

static void test_load_user32(void)
{
    HMODULE user32 = LoadLibraryA("user32.dll");
    LPSTR (WINAPI *upper)(LPSTR);
    int (WINAPI *metrics)(int);
    char text[] = "kmtshim";

    ok(user32 != NULL, "LoadLibrary(user32) failed: %lu\n", GetLastError());
    if (!user32)
        return;
    upper = (LPSTR (WINAPI *)(LPSTR))(void *)GetProcAddress(user32, "CharUpperA");
    metrics = (int (WINAPI *)(int))(void *)GetProcAddress(user32, "GetSystemMetrics");
    ok(upper && metrics, "user32 exports missing\n");
    if (upper) {
        upper(text);
        ok(!strcmp(text, "KMTSHIM"), "CharUpperA gave %s\n", text);
    }
    if (metrics)
        ok(metrics(SM_CXSCREEN) > 0, "GetSystemMetrics(SM_CXSCREEN) %d\n", metrics(SM_CXSCREEN));
}

static void test_setup(void)
{
    HMODULE gdi32 = GetModuleHandleA("gdi32.dll");

    if (!proxy_in_place(gdi32))
        return;
    kmt_api_from_module(&kmt_api, gdi32, "the gdi32 proxy");
    kmt_api_lookup(&kmt_wine_api, GetModuleHandleA("gdi32_orig.dll"));
    kmt_api_via = "the gdi32 proxy (user32 loaded at run time)";
}

static const struct kmtw_test tests[] = {
    { "load_user32", test_load_user32 },
    { "setup", test_setup },
    { "devices", kmtc_devices },
    { "create_resource", kmtc_create_resource },
    { "lock", kmtc_lock },
    { "null_descriptors", kmtc_null_descriptors },
};

int main(int argc, char **argv)
{
    /* gdi32 is not imported: it arrives with user32 */
    BOOL proxy = FALSE;
    HMODULE user32 = LoadLibraryA("user32.dll"), gdi32 = GetModuleHandleA("gdi32.dll");

    proxy = user32 && gdi32 && GetProcAddress(gdi32, "D3DKMTCreateAllocation");
    return kmtw_run("test_proxy_user32", tests, proxy ? ARRAY_SIZE(tests) : 2, argc, argv);
}
