/*
 * Conformance of kmtshim.dll itself, imported statically: the whole suite,
 * plus what is particular to the DLL: both export names, the stubs for
 * every other D3DKMT name of Windows' gdi32, and its private export.
 */
#include <stdio.h>
#include <string.h>

#include "conformance.h"

BOOL WINAPI KmtShimOwnsHandle(D3DKMT_HANDLE handle);

static HMODULE kmtshim;

/* The static imports (dllimport: the functions' real addresses). */
static void api_from_imports(void)
{
#define KMT_FUNC(name, type) kmt_api.name = D3DKMT##name;
#include "functions.h"
    kmt_api_via = "kmtshim.dll (static import)";
}

static void test_module(void)
{
    char path[MAX_PATH];

    ok(kmtshim != NULL, "kmtshim.dll is not loaded\n");
    ok(GetModuleFileNameA(kmtshim, path, sizeof(path)) > 0, "no file name\n");
    trace("kmtshim.dll: %s\n", path);
    /* the same functions GetProcAddress finds */
    {
        struct kmt_api found;

        kmt_api_from_module(&found, kmtshim, "kmtshim.dll");
        ok(!memcmp(&found, &kmt_api, sizeof(found)), "GetProcAddress and the imports disagree\n");
    }
}

/* NtGdiDdDDI<Name> is D3DKMT<Name>: one function, two names. */
static void test_aliases(void)
{
#define KMT_FUNC(name, type) do {                                                   \
        FARPROC d3dkmt = GetProcAddress(kmtshim, "D3DKMT" #name);                   \
        FARPROC nt = GetProcAddress(kmtshim, "NtGdiDdDDI" #name);                   \
        ok(d3dkmt != NULL && nt == d3dkmt, "NtGdiDdDDI" #name " %p, D3DKMT" #name " %p\n", \
           (void *)nt, (void *)d3dkmt);                                             \
    } while (0);
#include "functions.h"
}

/* Every other D3DKMT name of Windows' gdi32 answers STATUS_NOT_SUPPORTED
 * (twice: the message is printed once, the answer stays) and the process
 * goes on; NtGdiDdDDI aliases where Windows' win32u has one. */
static void test_stubs(void)
{
    static BYTE zeroes[4096];
    unsigned count = 0;

#define KMT_STUB(name, has_nt) do {                                                 \
        NTSTATUS (APIENTRY *fn)(void *) =                                           \
            (NTSTATUS (APIENTRY *)(void *))(void *)GetProcAddress(kmtshim, "D3DKMT" #name); \
        FARPROC nt = GetProcAddress(kmtshim, "NtGdiDdDDI" #name);                   \
        ok(fn != NULL, "D3DKMT" #name " is not exported\n");                        \
        if (fn) {                                                                   \
            memset(zeroes, 0, sizeof(zeroes));                                      \
            ok(fn(NULL) == (NTSTATUS)STATUS_NOT_SUPPORTED, "D3DKMT" #name "(NULL)\n");        \
            ok(fn(zeroes) == (NTSTATUS)STATUS_NOT_SUPPORTED, "D3DKMT" #name "(zeroes)\n");    \
        }                                                                           \
        if (has_nt)                                                                 \
            ok(nt != NULL && nt == (FARPROC)(void *)fn, "NtGdiDdDDI" #name " %p\n", (void *)nt); \
        else                                                                        \
            ok(nt == NULL, "NtGdiDdDDI" #name " exported\n");                       \
        count++;                                                                    \
    } while (0);
#include "stubs.h"
    ok(count > 150, "only %u stubs\n", count);
    ok(GetProcAddress(kmtshim, "D3DKMTNoSuchFunction") == NULL, "unknown names resolve\n");
}

/* KmtShimOwnsHandle: exactly the live handles of this process's kmtshim. */
static void test_owns_handle(void)
{
    D3DKMT_HANDLE adapter, device;

    ok(!KmtShimOwnsHandle(0), "0 is owned\n");
    ok(!KmtShimOwnsHandle(1), "1 (a Wine-style handle) is owned\n");
    if (!(adapter = kmt_open_soft_adapter(NULL)))
        return;
    device = kmt_create_device(adapter);
    ok(KmtShimOwnsHandle(adapter), "adapter %#x not owned\n", adapter);
    ok(KmtShimOwnsHandle(device), "device %#x not owned\n", device);
    ok(!KmtShimOwnsHandle(device + 0x40), "%#x owned\n", device + 0x40);
    ok(!KmtShimOwnsHandle(device | 2), "%#x owned\n", device | 2);
    kmt_destroy_device(device);
    ok(!KmtShimOwnsHandle(device), "destroyed device %#x still owned\n", device);
    kmt_close_adapter(adapter);
    ok(!KmtShimOwnsHandle(adapter), "closed adapter %#x still owned\n", adapter);
}

static const struct kmtw_test tests[] = {
    { "module", test_module },
    KMT_CONFORMANCE_TESTS,
    KMT_CONFORMANCE_SHARE_TESTS,
    { "aliases", test_aliases },
    { "stubs", test_stubs },
    { "owns_handle", test_owns_handle },
};

int main(int argc, char **argv)
{
    api_from_imports();
    kmtshim = GetModuleHandleA("kmtshim.dll");
    if (argc > 1 && !strcmp(argv[1], KMT_SHARE_CHILD_ARG))
        return kmtc_share_child(argc - 2, argv + 2);
    return kmtw_run("test_kmtshim", tests, ARRAY_SIZE(tests), argc, argv);
}
