/*
 * Descriptors a 32-bit program cannot read: a reserved page, a
 * PAGE_NOACCESS page, garbage.  Every function whose Windows side reads the
 * descriptor before the core (the PE half's wrappers, the proxy's routing)
 * answers what the core answers for a bad descriptor, and the process goes
 * on.  i386 only: on x86_64 the Windows side and the core check bounds
 * only (dlls/kmtshim/wine/desc_probe.h), as for a caller's other memory.
 */
#include "conformance.h"

#ifndef _WIN64
/* Each function a wrapper reads first (functions.h: the PE half's
 * KMT_FUNC_PE and KMT_FUNC_EVENT lines, the Linux half's KMT_FUNC_UNIX and
 * NT lines), and calls the proxy routes by a handle or LUID inside the
 * descriptor. */
static void unreadable_at(void *desc, const char *what)
{
#define KMT_FUNC(name, type)
#define KMT_FUNC_CUSTOM(name, type)
#define KMT_FUNC_PE(name, type)                                                        \
    ok(kmt_api.name(desc) == (NTSTATUS)STATUS_INVALID_PARAMETER, "D3DKMT" #name "(%s) through %s\n", \
       what, kmt_api_via);
#define KMT_FUNC_UNIX KMT_FUNC_PE
#define KMT_FUNC_NT_IN KMT_FUNC_PE
#define KMT_FUNC_NT_OUT KMT_FUNC_PE
#include "functions.h"
    expect_status(kmt_api.CreateDevice(desc), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.CloseAdapter(desc), STATUS_INVALID_PARAMETER);
    expect_status(kmt_api.OpenAdapterFromLuid(desc), STATUS_INVALID_PARAMETER);
}
#endif

void kmtc_unreadable_descriptors(void)
{
#ifdef _WIN64
    skip("x86_64: descriptors are checked by bounds only\n");
#else
    BYTE *pages = VirtualAlloc(NULL, 0x20000, MEM_RESERVE, PAGE_NOACCESS);

    ok(pages != NULL, "VirtualAlloc reserve\n");
    if (!pages)
        return;
    ok(VirtualAlloc(pages + 0x10000, 0x1000, MEM_COMMIT, PAGE_NOACCESS) != NULL, "commit NOACCESS\n");
    unreadable_at(pages, "a reserved page");
    unreadable_at(pages + 0x10000, "a PAGE_NOACCESS page");
    /* the last bytes of a readable page, running into the reserved one */
    ok(VirtualAlloc(pages + 0x11000, 0x1000, MEM_COMMIT, PAGE_READWRITE) != NULL, "commit RW\n");
    unreadable_at(pages + 0x12000 - 4, "a descriptor running into a reserved page");
    VirtualFree(pages, 0, MEM_RELEASE);
    unreadable_at(pages, "a released range");
#endif
}
